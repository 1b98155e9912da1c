/* milp.h: a small mixed-integer program interface for the optimal planners:
   build a model (bounded variables, ranged rows), solve it under a time
   limit, read the incumbent and the proven bound. Solver-neutral: the model
   is held here and handed to a backend at solve time, chosen per solve
   (milp_opts.backend): COIN-OR CBC and CLP (cbc.c, the default) or GLPK
   (glpk.c), through the dispatcher's table (solve.c). */
#ifndef MILP_H
#define MILP_H

#include "../common/sw.h"

/* "No bound" for variables and rows. */
#define MILP_INF 1e30

typedef struct milp milp;

typedef enum milp_status {
    MILP_OPTIMAL,    /* proven optimal (within the relative gap asked for) */
    MILP_FEASIBLE,   /* stopped by the time or node limit with an incumbent */
    MILP_INFEASIBLE, /* proven infeasible */
    MILP_NOSOLUTION  /* stopped by a limit before any feasible solution */
} milp_status;

/* The solver a solve hands the model to. */
typedef enum milp_backend {
    MILP_CBC,  /* COIN-OR CBC (integer programs) and CLP (relaxations): the default */
    MILP_GLPK  /* GLPK's branch and cut (glp_intopt) and simplex or interior point */
} milp_backend;

typedef struct milp_opts {
    double time_limit_s; /* wall-clock limit of the solve; <= 0: none */
    long max_nodes;      /* branch-and-bound node limit; <= 0: none (a node
                            limit, unlike time, makes a stopped solve repeatable) */
    double rel_gap;      /* stop when (incumbent - bound) / |incumbent| <= this; 0: exact */
    int log;             /* 1: the solver's own log on stdout */
    milp_backend backend;/* MILP_CBC (0, also for a NULL milp_opts) or MILP_GLPK */
} milp_opts;

/* The backend named "cbc" or "glpk", or -1 for another name. */
int milp_backend_find(const char *name);
const char *milp_backend_name(milp_backend b);

/* How milp_solve_lp solves the relaxation (CLP with its presolve; GLPK
   with its LP presolver, or glp_interior for the barrier). */
typedef enum milp_lp_method {
    MILP_LP_AUTO,    /* CLP's choice (dual simplex, or barrier on large sparse programs);
                        GLPK: dual simplex, primal where the dual fails */
    MILP_LP_DUAL,    /* dual simplex (GLPK: primal where the dual fails) */
    MILP_LP_PRIMAL,  /* primal simplex */
    MILP_LP_BARRIER  /* interior point; CLP then crosses over to a basic solution,
                        GLPK keeps the interior one */
} milp_lp_method;

typedef struct milp_result {
    milp_status status;
    double objective; /* the incumbent's objective (OPTIMAL, FEASIBLE) */
    double bound;     /* the proven lower bound on the optimum (minimisation) */
    double gap;       /* (objective - bound) / max(|objective|, 1e-12); 0 when optimal */
    double solve_s;   /* wall-clock seconds in the solver */
    long nodes;       /* branch-and-bound nodes explored */
    const double *x;  /* the incumbent, milp_vars() values (owned by the model; valid until
                         the next solve or milp_free), NULL without one */
    const char *solver; /* "cbc 2.10.8", "clp 1.17.7", "glpk 5.0" */
} milp_result;

/* A new empty minimisation model, or NULL when out of memory. */
milp *milp_new(void);
void milp_free(milp *m);

/* Add a variable lb <= x <= ub (MILP_INF: unbounded) with objective
   coefficient cost; integer: 1 for an integer variable (0/1 with bounds
   [0, 1]). Returns its index (0, 1, ...). Out of memory is sticky: the index
   is still returned and milp_solve fails with SW_ENOMEM. */
int milp_var(milp *m, double lb, double ub, double cost, int integer);

/* Add a row lo <= sum val[k] x[idx[k]] <= hi (MILP_INF / -MILP_INF for one
   side). Indices must name variables already added (checked at solve). */
void milp_row(milp *m, double lo, double hi, int nz, const int *idx, const double *val);

/* Convenience rows with up to four terms. */
void milp_row2(milp *m, double lo, double hi, int i, double a, int j, double b);
void milp_row3(milp *m, double lo, double hi, int i, double a, int j, double b, int k,
               double c);

/* An initial solution (milp_vars() values) the solver starts from; it is
   used only if feasible. The values are copied. */
void milp_start(milp *m, const double *x);

int milp_vars(const milp *m);
int milp_rows(const milp *m);

/* Solve. Returns 0 with r filled (any status), or SW_ENOMEM, or SW_EINVAL
   (a row names an unknown variable), or SW_EUNSUPPORTED (the solver failed). */
int milp_solve(milp *m, const milp_opts *o, milp_result *r, sw_err *err);

/* Solve the linear relaxation: every integer variable may take any value
   within its bounds. Its optimum is a lower bound on the program's. Returns 0
   with r filled: MILP_OPTIMAL (x, objective = bound: the relaxation's
   optimum, nodes 0), MILP_INFEASIBLE (so is the program), or
   MILP_NOSOLUTION (the time limit came first: no bound, bound = -MILP_INF);
   errors as milp_solve. o's node limit and gap do not apply. */
int milp_solve_lp(milp *m, const milp_opts *o, milp_lp_method method, milp_result *r,
                  sw_err *err);

/* Write the model in CPLEX LP format (for another solver or a bug report). */
int milp_write_lp(const milp *m, const char *path, sw_err *err);

#endif
