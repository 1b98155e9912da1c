/* milp_impl.h: the model behind milp.h, shared by its backends (milp.c:
   COIN-OR CBC and CLP; milp_glpk.c: GLPK). Not for the planners. */
#ifndef MILP_IMPL_H
#define MILP_IMPL_H

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

/* The GLPK backend (milp_glpk.c): milp_solve and milp_solve_lp for
   o->backend == MILP_GLPK. */
int milp_glpk_solve(milp *m, const milp_opts *o, milp_result *r, sw_err *err);
int milp_glpk_solve_lp(milp *m, const milp_opts *o, milp_lp_method method, milp_result *r,
                       sw_err *err);

#endif
