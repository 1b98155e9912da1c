/* cbc.c: the COIN-OR backend of milp.h: CBC for the integer program, CLP
   for its relaxation (Cbc_C_Interface.h, Clp_C_Interface.h; the only file
   that includes them). Reached through the dispatcher's table (solve.c). */
#include "backend.h"

#include <float.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include <Cbc_C_Interface.h>
#include <Clp_C_Interface.h>

/* CBC's infinity is DBL_MAX. */
static double cbc_inf(double v) { return v >= MILP_INF ? DBL_MAX : v <= -MILP_INF ? -DBL_MAX : v; }

/* The model in the backends' form: columns (CSC), infinities as DBL_MAX. */
typedef struct milp_csc {
    CoinBigIndex *cstart; /* nvar + 1 column offsets */
    int *cidx;            /* row of each nonzero */
    double *cval;         /* its coefficient */
    double *lb, *ub;      /* column bounds */
    double *rlo, *rhi;    /* row bounds */
} milp_csc;

static void csc_free(milp_csc *c)
{
    sw_free(c->cstart);
    sw_free(c->cidx);
    sw_free(c->cval);
    sw_free(c->lb);
    sw_free(c->ub);
    sw_free(c->rlo);
    sw_free(c->rhi);
}

/* Fill c from m (checked: indices in range). 0, SW_ENOMEM or SW_EINVAL. */
static int csc_build(const milp *m, milp_csc *c, sw_err *err)
{
    memset(c, 0, sizeof *c);
    int rc = milp_check(m, err);
    if (rc)
        return rc;
    int n = m->nvar;
    c->cstart = sw_calloc((size_t)n + 1, sizeof *c->cstart);
    c->cidx = sw_malloc((size_t)(m->nnz ? m->nnz : 1) * sizeof *c->cidx);
    c->cval = sw_malloc((size_t)(m->nnz ? m->nnz : 1) * sizeof *c->cval);
    c->lb = sw_malloc((size_t)(n ? n : 1) * sizeof *c->lb);
    c->ub = sw_malloc((size_t)(n ? n : 1) * sizeof *c->ub);
    c->rlo = sw_malloc((size_t)(m->nrow ? m->nrow : 1) * sizeof *c->rlo);
    c->rhi = sw_malloc((size_t)(m->nrow ? m->nrow : 1) * sizeof *c->rhi);
    CoinBigIndex *fill = sw_calloc((size_t)n + 1, sizeof *fill);
    if (!c->cstart || !c->cidx || !c->cval || !c->lb || !c->ub || !c->rlo || !c->rhi || !fill) {
        sw_free(fill);
        csc_free(c);
        return sw_fail(err, SW_ENOMEM, "out of memory solving the integer program");
    }
    for (int k = 0; k < m->nnz; k++)
        c->cstart[m->ridx[k] + 1]++;
    for (int j = 0; j < n; j++)
        c->cstart[j + 1] += c->cstart[j];
    for (int row = 0; row < m->nrow; row++)
        for (int k = m->rstart[row]; k < m->rstart[row + 1]; k++) {
            int j = m->ridx[k];
            CoinBigIndex at = c->cstart[j] + fill[j]++;
            c->cidx[at] = row;
            c->cval[at] = m->rval[k];
        }
    for (int j = 0; j < n; j++) {
        c->lb[j] = cbc_inf(m->lb[j]);
        c->ub[j] = cbc_inf(m->ub[j]);
    }
    for (int row = 0; row < m->nrow; row++) {
        c->rlo[row] = cbc_inf(m->rlo[row]);
        c->rhi[row] = cbc_inf(m->rhi[row]);
    }
    sw_free(fill);
    return 0;
}

/* CBC and CLP as Debian builds them keep their assert()s: on some programs
   (e.g. an optimal-swap model of `model random --ops 8 --seed 11` at 0.8x,
   ClpNonLinearCost::checkInfeasibilities) a failed assertion calls abort()
   inside the solve. A solve runs under this guard: SIGABRT raised on the
   solving thread jumps back to it, and the solve ends with an error instead
   of killing the process (the solver's state is then abandoned, not freed).
   SIGABRT anywhere else keeps its default action. */
static _Thread_local sigjmp_buf *abort_jump;
static pthread_once_t abort_once = PTHREAD_ONCE_INIT;

static void on_abort(int sig)
{
    sigjmp_buf *j = abort_jump;
    if (j) {
        abort_jump = NULL;
        siglongjmp(*j, 1);
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

static void abort_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_abort;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGABRT, &sa, NULL);
}

/* Cbc_solve(cbc) into *st; -1 if the solver aborted. */
static int guarded_cbc_solve(Cbc_Model *cbc, int *st)
{
    sigjmp_buf jb;
    pthread_once(&abort_once, abort_install);
    if (sigsetjmp(jb, 1))
        return -1;
    abort_jump = &jb;
    *st = Cbc_solve(cbc);
    abort_jump = NULL;
    return 0;
}

/* Clp_initialSolveWithOptions(clp, how); -1 if the solver aborted. */
static int guarded_clp_solve(Clp_Simplex *clp, Clp_Solve *how)
{
    sigjmp_buf jb;
    pthread_once(&abort_once, abort_install);
    if (sigsetjmp(jb, 1))
        return -1;
    abort_jump = &jb;
    Clp_initialSolveWithOptions(clp, how);
    abort_jump = NULL;
    return 0;
}

#define SOLVER_ABORTED                                                                             \
    "the solver aborted on an internal assertion (a CBC/CLP bug on this program; another model "   \
    "or node limit may avoid it)"

static int cbc_solve_lp(milp *m, const milp_opts *o, milp_lp_method method, milp_result *r,
                        sw_err *err)
{
    memset(r, 0, sizeof *r);
    static char clp_name[64];
    snprintf(clp_name, sizeof clp_name, "clp %s", Clp_Version());
    r->solver = clp_name;
    r->bound = -MILP_INF;
    milp_csc c;
    int rc = csc_build(m, &c, err);
    if (rc)
        return rc;
    int n = m->nvar;
    sw_free(m->x);
    m->x = sw_malloc((size_t)(n ? n : 1) * sizeof *m->x);
    Clp_Simplex *clp = m->x ? Clp_newModel() : NULL;
    Clp_Solve *how = clp ? ClpSolve_new() : NULL;
    if (!how) {
        rc = sw_fail(err, SW_ENOMEM, "out of memory creating the solver");
        goto done;
    }
    Clp_loadProblem(clp, n, m->nrow, c.cstart, c.cidx, c.cval, c.lb, c.ub, m->cost, c.rlo, c.rhi);
    Clp_setObjSense(clp, 1);
    Clp_setLogLevel(clp, o && o->log ? 1 : 0);
    if (o && o->time_limit_s > 0)
        Clp_setMaximumSeconds(clp, o->time_limit_s);
    /* ClpSolve::SolveType: 0 dual, 1 primal, 3 barrier, 5 automatic */
    static const int type[] = {5, 0, 1, 3};
    int meth = method >= MILP_LP_AUTO && method <= MILP_LP_BARRIER ? (int)method : 0;
    ClpSolve_setSolveType(how, type[meth], -1);
    ClpSolve_setPresolveType(how, 0, -1);
    double t0 = sw_now();
    if (guarded_clp_solve(clp, how)) {
        clp = NULL; /* abandoned: its state is not safe to free */
        rc = sw_fail(err, SW_EUNSUPPORTED, SOLVER_ABORTED);
        goto done;
    }
    r->solve_s = sw_now() - t0;
    int st = Clp_status(clp); /* 0 optimal, 1 primal infeasible, 2 dual infeasible, 3 limit */
    if (st == 0 && Clp_isProvenOptimal(clp)) {
        memcpy(m->x, Clp_getColSolution(clp), (size_t)n * sizeof *m->x);
        r->x = m->x;
        r->status = MILP_OPTIMAL;
        r->objective = Clp_getObjValue(clp);
        r->bound = r->objective;
    } else if (st == 1) {
        r->status = MILP_INFEASIBLE;
    } else if (st == 3) {
        r->status = MILP_NOSOLUTION;
    } else {
        rc = sw_fail(err, SW_EUNSUPPORTED, "the LP solver gave up (status %d: %s)", st,
                     st == 2 ? "unbounded" : "numerical difficulties");
    }
done:
    if (how)
        ClpSolve_delete(how);
    if (clp)
        Clp_deleteModel(clp);
    csc_free(&c);
    return rc;
}

static int cbc_solve(milp *m, const milp_opts *o, milp_result *r, sw_err *err)
{
    memset(r, 0, sizeof *r);
    static char solver_name[64];
    snprintf(solver_name, sizeof solver_name, "cbc %s", Cbc_getVersion());
    r->solver = solver_name;
    milp_csc c;
    int rc = csc_build(m, &c, err);
    if (rc)
        return rc;
    int n = m->nvar;
    sw_free(m->x);
    m->x = sw_malloc((size_t)(n ? n : 1) * sizeof *m->x);
    Cbc_Model *cbc = NULL;
    if (!m->x) {
        rc = sw_fail(err, SW_ENOMEM, "out of memory solving the integer program");
        goto done;
    }
    cbc = Cbc_newModel();
    if (!cbc) {
        rc = sw_fail(err, SW_ENOMEM, "out of memory creating the solver");
        goto done;
    }
    Cbc_loadProblem(cbc, n, m->nrow, c.cstart, c.cidx, c.cval, c.lb, c.ub, m->cost, c.rlo, c.rhi);
    for (int j = 0; j < n; j++)
        if (m->integer[j])
            Cbc_setInteger(cbc, j);
    Cbc_setObjSense(cbc, 1);
    Cbc_setLogLevel(cbc, o && o->log ? 1 : 0);
    Cbc_setParameter(cbc, "threads", "0"); /* no worker threads: sequential, repeatable */
    if (o && o->time_limit_s > 0) {
        Cbc_setParameter(cbc, "timeMode", "elapsed");
        Cbc_setMaximumSeconds(cbc, o->time_limit_s);
        /* CBC 2.10's preprocessing crashes in CglPreProcess::postProcess when
           the time limit strikes before it is undone (seen on the optimal
           planners' programs): off where a limit may strike */
        Cbc_setParameter(cbc, "preprocess", "off");
    }
    if (o && o->max_nodes > 0)
        Cbc_setMaximumNodes(cbc, o->max_nodes > 2000000000L ? 2000000000 : (int)o->max_nodes);
    Cbc_setAllowableFractionGap(cbc, o && o->rel_gap > 0 ? o->rel_gap : 1e-9);
    Cbc_setAllowableGap(cbc, 1e-12);
    if (m->start)
        Cbc_setInitialSolution(cbc, m->start);
    double t0 = sw_now();
    int st = 0;
    if (guarded_cbc_solve(cbc, &st)) {
        cbc = NULL; /* abandoned: its state is not safe to free */
        rc = sw_fail(err, SW_EUNSUPPORTED, SOLVER_ABORTED);
        goto done;
    }
    r->solve_s = sw_now() - t0;
    r->nodes = Cbc_getNodeCount(cbc);
    if (st == 2 || Cbc_isAbandoned(cbc)) {
        rc = sw_fail(err, SW_EUNSUPPORTED, "the solver gave up (numerical difficulties)");
        goto done;
    }
    const double *best = Cbc_bestSolution(cbc);
    if (!best && Cbc_getNumIntegers(cbc) == 0 && Cbc_isProvenOptimal(cbc))
        best = Cbc_getColSolution(cbc); /* a pure LP has no "integer solution" */
    r->bound = Cbc_getBestPossibleObjValue(cbc);
    int from_start = 0;
    if (!best && m->start && milp_start_feasible(m)) {
        /* CBC keeps a start it accepted as the cutoff but may not return it:
           when the search finds nothing better it says "infeasible" */
        best = m->start;
        from_start = 1;
    }
    if (Cbc_isProvenInfeasible(cbc) && !best) {
        r->status = MILP_INFEASIBLE;
    } else if (!best) {
        r->status = MILP_NOSOLUTION;
    } else {
        memcpy(m->x, best, (size_t)n * sizeof *m->x);
        r->x = m->x;
        r->objective = Cbc_getObjValue(cbc);
        r->status = Cbc_isProvenOptimal(cbc) ? MILP_OPTIMAL : MILP_FEASIBLE;
        if (from_start) {
            r->objective = 0;
            for (int j = 0; j < n; j++)
                r->objective += m->cost[j] * best[j];
            /* nothing better than the start exists: it is optimal */
            r->status = Cbc_isProvenInfeasible(cbc) || Cbc_isProvenOptimal(cbc) ? MILP_OPTIMAL
                                                                                : MILP_FEASIBLE;
        }
        /* proven optimal: the bound is the objective (CBC reports the root
           LP's when preprocessing proves nothing beats a start's cutoff) */
        if (r->status == MILP_OPTIMAL && (r->bound > r->objective || !(o && o->rel_gap > 0)))
            r->bound = r->objective;
        if (r->bound > r->objective)
            r->bound = r->objective;
        double d = fabs(r->objective) > 1e-12 ? fabs(r->objective) : 1e-12;
        r->gap = r->status == MILP_OPTIMAL ? 0 : (r->objective - r->bound) / d;
        if (r->gap < 0)
            r->gap = 0;
    }
done:
    if (cbc)
        Cbc_deleteModel(cbc);
    csc_free(&c);
    return rc;
}

const milp_backend_ops milp_backend_cbc = {
    .name = "cbc",
    .solve = cbc_solve,
    .solve_lp = cbc_solve_lp,
};
