/* backend.h: the model behind milp.h and the method table of a backend,
   private to milp/ (model.c holds the model; cbc.c: COIN-OR CBC and CLP,
   glpk.c: GLPK; solve.c picks one). Not for the planners. */
#ifndef MILP_BACKEND_H
#define MILP_BACKEND_H

#include "milp.h"

struct milp {
    int nvar, capvar;   /* variables added, allocated */
    double *lb, *ub;    /* per variable bounds */
    double *cost;       /* per variable objective coefficient */
    char *integer;      /* per variable: 1 integer */
    int nrow, caprow;   /* rows added, allocated */
    double *rlo, *rhi;  /* per row range */
    int *rstart;        /* nrow + 1 offsets into ridx/rval */
    int nnz, capnz;     /* nonzeros added, allocated */
    int *ridx;          /* nonzero column indices (row-major) */
    double *rval;       /* nonzero coefficients */
    double *start;      /* nvar values of an initial solution, or NULL */
    double *x;          /* the last solve's incumbent (nvar), or NULL */
    int oom;            /* an addition failed for lack of memory */
};

/* Is m's start within the bounds, integral where asked, and within every
   row (absolute tolerance 1e-6)? */
int milp_start_feasible(const milp *m);

/* Check m before a backend reads it: 0, SW_ENOMEM (an addition failed) or
   SW_EINVAL (a row names an unknown variable, or a value is NaN). */
int milp_check(const milp *m, sw_err *err);

/* A solver backend (SQLite VFS style: one static const table per backend,
   reached only through the dispatcher, solve.c). Each method has milp.h's
   milp_solve / milp_solve_lp contract; o may be NULL (the defaults). */
typedef struct milp_backend_ops {
    const char *name; /* what milp_backend_find takes: "cbc", "glpk" */
    int (*solve)(milp *m, const milp_opts *o, milp_result *r, sw_err *err);
    int (*solve_lp)(milp *m, const milp_opts *o, milp_lp_method method, milp_result *r,
                    sw_err *err);
} milp_backend_ops;

/* The cache of solves (cache.c; SWAPSIM_MILP_CACHE): its directory where a
   solve with options o may be cached, else NULL; a stored result for the
   same program (1, into *r, m's incumbent replaced) or 0; store a result.
   lp_method: -1 for an integer program, else milp_lp_method. */
const char *milp_cache_dir(const milp_opts *o);
int milp_cache_get(milp *m, const milp_opts *o, const char *backend, int lp_method,
                   milp_result *r);
void milp_cache_put(const milp *m, const milp_opts *o, const char *backend, int lp_method,
                    const milp_result *r);

/* The backends (cbc.c, glpk.c), listed in solve.c's table in milp_backend
   order. */
extern const milp_backend_ops milp_backend_cbc;
extern const milp_backend_ops milp_backend_glpk;

#endif
