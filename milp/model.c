/* model.c: the solver-neutral model of milp.h (variables, rows, a start),
   its checks before a backend reads it, and its LP-format writer. The
   backends (cbc.c, glpk.c) read the model through backend.h; the dispatcher
   that picks one is solve.c. */
#include "backend.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

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


/* ---- checks the backends share ---- */

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
