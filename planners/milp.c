/* milp.c: the solver-neutral model of milp.h, its LP-format writer, and the
   COIN-OR backends: CBC for the integer program, CLP for its relaxation
   (Cbc_C_Interface.h, Clp_C_Interface.h; the only file that includes them).
   GLPK's backend is milp_glpk.c. */
#include "milp_impl.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <Cbc_C_Interface.h>
#include <Clp_C_Interface.h>

milp *milp_new(void)
{
    milp *m = sw_calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->rstart = sw_calloc(1, sizeof *m->rstart);
    if (!m->rstart) {
        sw_free(m);
        return NULL;
    }
    m->caprow = 0;
    return m;
}

void milp_free(milp *m)
{
    if (!m)
        return;
    sw_free(m->lb);
    sw_free(m->ub);
    sw_free(m->cost);
    sw_free(m->integer);
    sw_free(m->rlo);
    sw_free(m->rhi);
    sw_free(m->rstart);
    sw_free(m->ridx);
    sw_free(m->rval);
    sw_free(m->start);
    sw_free(m->x);
    sw_free(m);
}

/* Grow *p (elements of size sz) to hold at least need; 0 or -1. */
static int grow(void **p, int *cap, int need, size_t sz)
{
    if (need <= *cap)
        return 0;
    int c = *cap ? *cap : 64;
    while (c < need)
        c *= 2;
    void *q = sw_realloc(*p, (size_t)c * sz);
    if (!q)
        return -1;
    *p = q;
    *cap = c;
    return 0;
}

int milp_var(milp *m, double lb, double ub, double cost, int integer)
{
    int i = m->nvar;
    if (m->oom)
        return i;
    if (m->nvar == m->capvar) {
        int c = m->capvar;
        int c1 = c, c2 = c, c3 = c, c4 = c;
        if (grow((void **)&m->lb, &c1, i + 1, sizeof *m->lb) ||
            grow((void **)&m->ub, &c2, i + 1, sizeof *m->ub) ||
            grow((void **)&m->cost, &c3, i + 1, sizeof *m->cost) ||
            grow((void **)&m->integer, &c4, i + 1, sizeof *m->integer)) {
            m->oom = 1;
            return i;
        }
        m->capvar = c1;
    }
    m->lb[i] = lb;
    m->ub[i] = ub;
    m->cost[i] = cost;
    m->integer[i] = (char)(integer != 0);
    m->nvar++;
    return i;
}

void milp_row(milp *m, double lo, double hi, int nz, const int *idx, const double *val)
{
    if (m->oom)
        return;
    int r = m->nrow;
    if (r + 1 >= m->caprow) {
        int c1 = m->caprow, c2 = m->caprow, c3 = m->caprow;
        if (grow((void **)&m->rlo, &c1, r + 2, sizeof *m->rlo) ||
            grow((void **)&m->rhi, &c2, r + 2, sizeof *m->rhi) ||
            grow((void **)&m->rstart, &c3, r + 2, sizeof *m->rstart)) {
            m->oom = 1;
            return;
        }
        m->caprow = c1;
    }
    int c1 = m->capnz, c2 = m->capnz;
    if (grow((void **)&m->ridx, &c1, m->nnz + nz, sizeof *m->ridx) ||
        grow((void **)&m->rval, &c2, m->nnz + nz, sizeof *m->rval)) {
        m->oom = 1;
        return;
    }
    m->capnz = c1;
    for (int k = 0; k < nz; k++) {
        m->ridx[m->nnz + k] = idx[k];
        m->rval[m->nnz + k] = val[k];
    }
    m->nnz += nz;
    m->rlo[r] = lo;
    m->rhi[r] = hi;
    m->rstart[r + 1] = m->nnz;
    m->nrow++;
}

void milp_row2(milp *m, double lo, double hi, int i, double a, int j, double b)
{
    int idx[2] = {i, j};
    double val[2] = {a, b};
    milp_row(m, lo, hi, 2, idx, val);
}

void milp_row3(milp *m, double lo, double hi, int i, double a, int j, double b, int k, double c)
{
    int idx[3] = {i, j, k};
    double val[3] = {a, b, c};
    milp_row(m, lo, hi, 3, idx, val);
}

void milp_start(milp *m, const double *x)
{
    if (m->oom)
        return;
    sw_free(m->start);
    m->start = sw_malloc((size_t)(m->nvar ? m->nvar : 1) * sizeof *m->start);
    if (!m->start) {
        m->oom = 1;
        return;
    }
    memcpy(m->start, x, (size_t)m->nvar * sizeof *x);
}

int milp_vars(const milp *m) { return m->nvar; }
int milp_rows(const milp *m) { return m->nrow; }

int milp_check(const milp *m, sw_err *err)
{
    if (m->oom)
        return sw_fail(err, SW_ENOMEM, "out of memory building the integer program");
    for (int k = 0; k < m->nnz; k++) {
        if (m->ridx[k] < 0 || m->ridx[k] >= m->nvar)
            return sw_fail(err, SW_EINVAL, "integer program: a row names variable %d of %d",
                           m->ridx[k], m->nvar);
        if (isnan(m->rval[k]))
            return sw_fail(err, SW_EINVAL, "integer program: a coefficient of row-major "
                           "nonzero %d is NaN", k);
    }
    for (int j = 0; j < m->nvar; j++)
        if (isnan(m->lb[j]) || isnan(m->ub[j]) || isnan(m->cost[j]))
            return sw_fail(err, SW_EINVAL, "integer program: variable %d has a NaN bound or "
                           "cost", j);
    for (int r = 0; r < m->nrow; r++)
        if (isnan(m->rlo[r]) || isnan(m->rhi[r]))
            return sw_fail(err, SW_EINVAL, "integer program: row %d has a NaN bound", r);
    return 0;
}

static const char *const backend_names[] = {"cbc", "glpk"};

int milp_backend_find(const char *name)
{
    for (int b = 0; b < (int)(sizeof backend_names / sizeof backend_names[0]); b++)
        if (name && strcmp(name, backend_names[b]) == 0)
            return b;
    return -1;
}

const char *milp_backend_name(milp_backend b)
{
    return b == MILP_GLPK ? backend_names[1] : backend_names[0];
}

/* ---- LP format ---- */

static void lp_term(FILE *f, double a, int j, int first)
{
    if (a < 0)
        fprintf(f, " - %.17g x%d", -a, j);
    else
        fprintf(f, "%s%.17g x%d", first ? " " : " + ", a, j);
}

int milp_write_lp(const milp *m, const char *path, sw_err *err)
{
    if (m->oom)
        return sw_fail(err, SW_ENOMEM, "out of memory");
    FILE *f = fopen(path, "w");
    if (!f)
        return sw_fail(err, SW_EIO, "%s: cannot write", path);
    fprintf(f, "Minimize\n obj:");
    int first = 1;
    for (int j = 0; j < m->nvar; j++)
        if (m->cost[j] != 0) {
            lp_term(f, m->cost[j], j, first);
            first = 0;
        }
    if (first)
        fprintf(f, " 0 x0");
    fprintf(f, "\nSubject To\n");
    for (int r = 0; r < m->nrow; r++) {
        int lo = m->rlo[r] > -MILP_INF, hi = m->rhi[r] < MILP_INF;
        for (int side = 0; side < 2; side++) {
            if ((side == 0 && !lo) || (side == 1 && !hi))
                continue;
            if (side == 1 && lo && m->rlo[r] == m->rhi[r])
                continue;
            fprintf(f, " r%d%s:", r, side ? "u" : "l");
            for (int k = m->rstart[r]; k < m->rstart[r + 1]; k++)
                lp_term(f, m->rval[k], m->ridx[k], k == m->rstart[r]);
            if (lo && hi && m->rlo[r] == m->rhi[r])
                fprintf(f, " = %.17g\n", m->rlo[r]);
            else
                fprintf(f, " %s %.17g\n", side ? "<=" : ">=", side ? m->rhi[r] : m->rlo[r]);
        }
    }
    fprintf(f, "Bounds\n");
    for (int j = 0; j < m->nvar; j++) {
        if (m->lb[j] <= -MILP_INF && m->ub[j] >= MILP_INF)
            fprintf(f, " x%d free\n", j);
        else if (m->ub[j] >= MILP_INF)
            fprintf(f, " x%d >= %.17g\n", j, m->lb[j]);
        else if (m->lb[j] <= -MILP_INF)
            fprintf(f, " -inf <= x%d <= %.17g\n", j, m->ub[j]);
        else
            fprintf(f, " %.17g <= x%d <= %.17g\n", m->lb[j], j, m->ub[j]);
    }
    fprintf(f, "General\n");
    for (int j = 0; j < m->nvar; j++)
        if (m->integer[j])
            fprintf(f, " x%d\n", j);
    fprintf(f, "End\n");
    if (fclose(f))
        return sw_fail(err, SW_EIO, "%s: cannot write", path);
    return 0;
}

/* ---- the CBC backend ---- */

int milp_start_feasible(const milp *m)
{
    const double tol = 1e-6;
    const double *x = m->start;
    for (int j = 0; j < m->nvar; j++) {
        if (x[j] < m->lb[j] - tol || x[j] > m->ub[j] + tol)
            return 0;
        if (m->integer[j] && fabs(x[j] - round(x[j])) > tol)
            return 0;
    }
    for (int r = 0; r < m->nrow; r++) {
        double v = 0;
        for (int k = m->rstart[r]; k < m->rstart[r + 1]; k++)
            v += m->rval[k] * x[m->ridx[k]];
        if (v < m->rlo[r] - tol || v > m->rhi[r] + tol)
            return 0;
    }
    return 1;
}

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

int milp_solve_lp(milp *m, const milp_opts *o, milp_lp_method method, milp_result *r,
                  sw_err *err)
{
    if (o && o->backend == MILP_GLPK)
        return milp_glpk_solve_lp(m, o, method, r, err);
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
    Clp_initialSolveWithOptions(clp, how);
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

int milp_solve(milp *m, const milp_opts *o, milp_result *r, sw_err *err)
{
    if (o && o->backend == MILP_GLPK)
        return milp_glpk_solve(m, o, r, err);
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
    int st = Cbc_solve(cbc);
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
