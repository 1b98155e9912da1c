/* orm_model.c: optimal-remat's integer program (Checkmate's R, S, FREE
   and U), the coarse relaxation for the bound, and the LP relaxation
   solved for lp-round. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "orm.h"

/* ---- the integer program ---- */

static int var(orm *q, double lb, double ub, double cost, int integer, double start)
{
    int v = milp_var(q->m, lb, ub, cost, integer);
    if (q->x0) {
        if (SW_GROW(q->x0, q->cap0, (size_t)v + 1))
            q->oom = 1;
        else
            q->x0[v] = start;
    }
    return v;
}

/* The row that op k of stage t may run only with its input present: with
   rk, R[t][k]'s column (k computed before the stage's own op t), R[t][k] <=
   R[t][p] + S[t][x]; without (k = t, which always runs), 1 <= R[t][p] +
   S[t][x]. rp: R[t][p]'s column (p, the input's maker, computed earlier in
   the stage), sv: S[t][x]'s (x kept from the last stage); -1 where there is
   none. ridx and rval hold 3 entries. */
static void input_row(milp *m, int rk, int rp, int sv, int *ridx, double *rval)
{
    int nz = 0;
    double sg = rk >= 0 ? -1 : 1;
    if (rk >= 0) {
        ridx[nz] = rk;
        rval[nz++] = 1;
    }
    if (rp >= 0) {
        ridx[nz] = rp;
        rval[nz++] = sg;
    }
    if (sv >= 0) {
        ridx[nz] = sv;
        rval[nz++] = sg;
    }
    if (rk >= 0)
        milp_row(m, -MILP_INF, 0, nz, ridx, rval);
    else
        milp_row(m, 1, MILP_INF, nz, ridx, rval);
}

/* Count the R and S variables the program would have. */
int64_t orm_size(const orc *c)
{
    int64_t n = 0;
    for (int32_t k = 0; k < c->T; k++)
        if (c->elig[k])
            n += c->RH[k] - k;
    for (int32_t x = 0; x < c->ns; x++)
        n += c->N[x] - c->pp[x];
    return n;
}

/* orm_build's scratch and the stage it is at (t: its computations C, nC
   of them; the storages it touches with their touches in order, phead ..
   pnext; the FREE variables after each computation, fhead .. fc). */
typedef struct orm_stage {
    int32_t t, nC, ntouched;
    const int32_t *Rv, *Sv, *Svn;   /* stage t's variables, stage t + 1's S (NULL: none) */
    const uint8_t *Rs, *Ss, *Ssn;   /* the start's values (NULL: no start) */
    int32_t *C, *phead, *ptail, *pnext, *pidx, *touched;
    int32_t *fhead, *fnext, *fvar, *fc;
    double *fval;
    int *ridx;
    double *rval;
} orm_stage;

/* Stage s->t's FREE variables and their rows. */
static void orm_stage_frees(orm *q, orm_stage *s)
{
    int32_t t = s->t;
    const int32_t *Rv = s->Rv;
    int32_t *C = s->C, *pidx = s->pidx, *pnext = s->pnext, *fhead = s->fhead, *fnext = s->fnext;
    int32_t *fvar = s->fvar, *fc = s->fc;
    double *fval = s->fval;
    int32_t ntouched = s->ntouched, *touched = s->touched, *phead = s->phead;
    int32_t *ptail = s->ptail;
    const int32_t *Svn = s->Svn;
    const uint8_t *Rs = s->Rs, *Ssn = s->Ssn;
    /* FREE[t][x][k]: after the k-th touch, if no later one in the stage and
       the next stage does not keep it */
    int32_t nf = 0;
    for (int32_t j = 0; j < ntouched; j++) {
        int32_t x = touched[j];
        int32_t sn = Svn ? Svn[x] : -1;
        double snv = Ssn ? Ssn[x] : 0;
        int32_t lastp = ptail[x];
        for (int32_t e = phead[x]; e >= 0; e = pnext[e]) {
            int32_t i = pidx[e], k = C[i];
            if (e != lastp && C[pidx[lastp]] == t)
                continue; /* op t touches it later: never freed before */
            double v = Rs ? (k < t ? Rs[k] : 1) * (1 - snv) : 0;
            for (int32_t f = pnext[e]; f >= 0 && Rs; f = pnext[f])
                v *= 1 - (double)Rs[C[pidx[f]]];
            int fv = var(q, 0, 1, 0, 0, v);
            if (k < t)
                milp_row2(q->m, -MILP_INF, 0, fv, 1, Rv[k], -1);
            for (int32_t f = pnext[e]; f >= 0; f = pnext[f])
                milp_row2(q->m, -MILP_INF, 1, fv, 1, Rv[C[pidx[f]]], 1);
            if (sn >= 0)
                milp_row2(q->m, -MILP_INF, 1, fv, 1, sn, 1);
            fvar[nf] = fv;
            fval[nf] = v;
            fc[nf] = x;
            fnext[nf] = fhead[i];
            fhead[i] = nf++;
        }
    }
}

/* Stage s->t's memory rows, one per computation, and its U variables. */
static void orm_stage_memory(orc *c, orm *q, orm_stage *s, double capU)
{
    int32_t t = s->t;
    const int32_t *Rv = s->Rv;
    int32_t *C = s->C, *fhead = s->fhead, *fnext = s->fnext;
    int32_t *fvar = s->fvar, *fc = s->fc;
    double *fval = s->fval;
    int32_t nC = s->nC, ns = c->ns;
    const int32_t *Sv = s->Sv;
    const uint8_t *Rs = s->Rs, *Ss = s->Ss;
    int *ridx = s->ridx;
    double *rval = s->rval;
    /* memory after each computation: U_i = U_(i-1) - FREED_(i-1) + NEW_i <= cap */
    int prevU = -1;
    double u = 0;
    for (int32_t i = 0; i < nC; i++) {
        int32_t k = C[i];
        int nz = 0;
        double cst = 0, newv = 0;
        if (i == 0) {
            for (int32_t x = 0; x < ns; x++)
                if (Sv[x] >= 0) {
                    ridx[nz] = Sv[x];
                    rval[nz++] = -(double)c->M[x] / q->unit;
                    u += Ss ? Ss[x] * (double)c->M[x] / q->unit : 0;
                }
        } else {
            ridx[nz] = prevU;
            rval[nz++] = -1;
            for (int32_t f = fhead[i - 1]; f >= 0; f = fnext[f]) {
                ridx[nz] = fvar[f];
                rval[nz++] = (double)c->M[fc[f]] / q->unit;
                u -= fval[f] * (double)c->M[fc[f]] / q->unit;
            }
        }
        int rk = -1; /* the entry of R[t][k] in the row (one per variable) */
        for (int32_t a = c->acc_off[k]; a < c->acc_off[k + 1]; a++) {
            if (!c->acc_mk[a])
                continue;
            int32_t x = c->acc_c[a];
            double mu = (double)c->M[x] / q->unit;
            if (k == t) {
                cst += mu;
                newv += mu;
            } else if (c->nout[k] > 1 && Sv[x] >= 0) {
                /* several outputs: only those not resident are placed */
                double av = Rs ? SW_MAX(0.0, (double)Rs[k] - (Ss ? Ss[x] : 0)) : 0;
                int A = var(q, 0, 1, 0, 0, av);
                milp_row3(q->m, 0, MILP_INF, A, 1, Rv[k], -1, Sv[x], 1);
                ridx[nz] = A;
                rval[nz++] = -mu;
                newv += av * mu;
            } else {
                if (rk < 0) {
                    rk = nz;
                    ridx[nz] = Rv[k];
                    rval[nz++] = 0;
                }
                rval[rk] -= mu;
                newv += (Rs ? Rs[k] : 0) * mu;
            }
        }
        u += newv;
        int U = var(q, 0, capU, 0, 0, SW_MAX(u, 0.0));
        ridx[nz] = U;
        rval[nz++] = 1;
        milp_row(q->m, cst, cst, nz, ridx, rval);
        prevU = U;
    }
}

/* Build the program; with_start: values from c->R and c->S (settled) for
   the start. */
int orm_build(orc *c, orm *q, int with_start)
{
    int32_t T = c->T, ns = c->ns;
    const uint8_t *R0 = with_start ? c->R : NULL, *S0 = with_start ? c->S : NULL;
    q->m = milp_new();
    q->Rv = sw_malloc((size_t)Tsq(c) * sizeof *q->Rv + 1);
    q->Sv = sw_malloc(((size_t)T * (size_t)ns + 1) * sizeof *q->Sv);
    int32_t na = c->acc_off[T];
    /* per stage scratch */
    int32_t *C = sw_malloc(((size_t)T + 1) * sizeof *C);
    int32_t *phead = sw_malloc(((size_t)ns + 1) * sizeof *phead);
    int32_t *ptail = sw_malloc(((size_t)ns + 1) * sizeof *ptail);
    int32_t *stamp = sw_malloc(((size_t)ns + 1) * sizeof *stamp);
    int32_t *pnext = sw_malloc(((size_t)na + 1) * sizeof *pnext);
    int32_t *pidx = sw_malloc(((size_t)na + 1) * sizeof *pidx);   /* index in C */
    int32_t *pc = sw_malloc(((size_t)na + 1) * sizeof *pc);       /* storage */
    int32_t *touched = sw_malloc(((size_t)ns + 1) * sizeof *touched);
    int32_t *fhead = sw_malloc(((size_t)T + 1) * sizeof *fhead);  /* per index: FREE list */
    int32_t *fnext = sw_malloc(((size_t)na + 1) * sizeof *fnext);
    int32_t *fvar = sw_malloc(((size_t)na + 1) * sizeof *fvar);
    double *fval = sw_malloc(((size_t)na + 1) * sizeof *fval);   /* start value */
    int32_t *fc = sw_malloc(((size_t)na + 1) * sizeof *fc);
    size_t rcap = (size_t)ns + (size_t)na + 8;
    int *ridx = sw_malloc(rcap * sizeof *ridx);
    double *rval = sw_malloc(rcap * sizeof *rval);
    int rc = 0;
    if (!q->m || !q->Rv || !q->Sv || !C || !phead || !ptail || !stamp || !pnext || !pidx || !pc ||
        !touched || !fhead || !fnext || !fvar || !fval || !fc || !ridx || !rval) {
        rc = SW_ENOMEM;
        goto done;
    }
    if (with_start) {
        q->cap0 = 1024;
        q->x0 = sw_malloc(q->cap0 * sizeof *q->x0);
        if (!q->x0) {
            rc = SW_ENOMEM;
            goto done;
        }
    }
    double capU = (double)c->cap / q->unit;
    /* variables R and S */
    for (int32_t t = 0; t < T; t++)
        for (int32_t k = 0; k < T; k++) {
            size_t i = (size_t)t * (size_t)T + (size_t)k;
            q->Rv[i] = can_rerun(c, t, k) ? var(q, 0, 1, c->time[k] * OR_US, 1, R0 ? R0[i] : 0)
                                          : -1;
        }
    for (int32_t t = 0; t < T; t++)
        for (int32_t x = 0; x < ns; x++) {
            size_t i = (size_t)t * (size_t)ns + (size_t)x;
            q->Sv[i] = c->pp[x] < t && t <= c->N[x] ? var(q, 0, 1, 0, 1, S0 ? S0[i] : 0) : -1;
        }
    for (int32_t x = 0; x < ns; x++)
        stamp[x] = -1;
    for (int32_t t = 0; t < T && !q->oom; t++) {
        const int32_t *Rv = q->Rv + (size_t)t * (size_t)T;
        const int32_t *Sv = q->Sv + (size_t)t * (size_t)ns;
        const int32_t *Svn = t + 1 < T ? q->Sv + (size_t)(t + 1) * (size_t)ns : NULL;
        const uint8_t *Rs = R0 ? R0 + (size_t)t * (size_t)T : NULL;
        const uint8_t *Ss = S0 ? S0 + (size_t)t * (size_t)ns : NULL;
        const uint8_t *Ssn = S0 && t + 1 < T ? S0 + (size_t)(t + 1) * (size_t)ns : NULL;
        int32_t nC = 0;
        for (int32_t k = 0; k < t; k++)
            if (Rv[k] >= 0)
                C[nC++] = k;
        C[nC++] = t;
        /* the computations touching each storage, in stage order */
        int32_t np = 0, ntouched = 0;
        for (int32_t i = 0; i < nC; i++) {
            int32_t k = C[i];
            fhead[i] = -1;
            for (int32_t a = c->acc_off[k]; a < c->acc_off[k + 1]; a++) {
                int32_t x = c->acc_c[a];
                if (stamp[x] != t) {
                    stamp[x] = t;
                    phead[x] = -1;
                    touched[ntouched++] = x;
                }
                pidx[np] = i;
                pc[np] = x;
                pnext[np] = -1;
                if (phead[x] < 0)
                    phead[x] = np;
                else
                    pnext[ptail[x]] = np;
                ptail[x] = np;
                np++;
            }
        }
        /* dependencies: an input is resident at the stage's start or remade in it */
        for (int32_t i = 0; i < nC; i++) {
            int32_t k = C[i];
            for (int32_t a = c->acc_off[k]; a < c->acc_off[k + 1]; a++) {
                if (c->acc_mk[a])
                    continue;
                int32_t x = c->acc_c[a], p = c->pp[x];
                input_row(q->m, k < t ? Rv[k] : -1, p < t ? Rv[p] : -1, Sv[x], ridx, rval);
            }
        }
        orm_stage s = {t, nC, ntouched, Rv, Sv, Svn, Rs, Ss, Ssn, C, phead, ptail, pnext, pidx,
                       touched, fhead, fnext, fvar, fc, fval, ridx, rval};
        orm_stage_frees(q, &s);
        orm_stage_memory(c, q, &s, capU);
    }
    /* carried residency: S[t+1][x] <= S[t][x] + R[t][producer] */
    for (int32_t x = 0; x < ns; x++) {
        int32_t p = c->pp[x];
        for (int32_t t = p + 1; t + 1 <= c->N[x] && t + 1 < T; t++) {
            int32_t a = q->Sv[(size_t)(t + 1) * (size_t)ns + (size_t)x];
            int32_t b = q->Sv[(size_t)t * (size_t)ns + (size_t)x];
            int32_t r = q->Rv[(size_t)t * (size_t)T + (size_t)p];
            if (r >= 0)
                milp_row3(q->m, -MILP_INF, 0, a, 1, b, -1, r, -1);
            else
                milp_row2(q->m, -MILP_INF, 0, a, 1, b, -1);
        }
    }
    if (q->oom)
        rc = SW_ENOMEM;
    else if (q->x0)
        milp_start(q->m, q->x0);

done:
    sw_free(C), sw_free(phead), sw_free(ptail), sw_free(stamp), sw_free(pnext), sw_free(pidx);
    sw_free(pc), sw_free(touched), sw_free(fhead), sw_free(fnext), sw_free(fvar), sw_free(fval);
    sw_free(fc), sw_free(ridx), sw_free(rval);
    return rc;
}

void orm_free(orm *q)
{
    milp_free(q->m);
    sw_free(q->Rv);
    sw_free(q->Sv);
    sw_free(q->x0);
}

/* The coarse relaxation (lp=coarse), a smaller program for the bound: R and
   S only, no FREE and no U. Memory is counted at two points of each stage,
   where the integer program's accounting must hold too: its start (the
   storages held, sum S[t][c] M_c) and op t's run (op t's storages, those
   made before it and held into the next stage, S[t+1][c], and those held
   at the start that nothing in the stage can touch, S[t][c]: the program
   frees a storage only after a computation that touches it). Storages
   under `tiny` bytes cost nothing here (always available, no variable), so
   ops that make only such storages are never re-run in it. Every integer
   solution of the full program is a solution of this one with the same
   cost: its optimum, and its relaxation's, are lower bounds. */
int orm_build_coarse(orc *c, orm *q, int64_t tiny)
{
    int32_t T = c->T, ns = c->ns;
    q->m = milp_new();
    q->Rv = sw_malloc((size_t)Tsq(c) * sizeof *q->Rv + 1);
    q->Sv = sw_malloc(((size_t)T * (size_t)ns + 1) * sizeof *q->Sv);
    int32_t *touch = sw_malloc(((size_t)ns + 1) * sizeof *touch);
    uint8_t *bigout = sw_calloc((size_t)T + 1, 1);
    int *ridx = sw_malloc(((size_t)ns + 8) * sizeof *ridx);
    double *rval = sw_malloc(((size_t)ns + 8) * sizeof *rval);
    int rc = 0;
    if (!q->m || !q->Rv || !q->Sv || !touch || !bigout || !ridx || !rval) {
        rc = SW_ENOMEM;
        goto done;
    }
    double capU = (double)c->cap / q->unit;
    for (int32_t k = 0; k < T; k++)
        for (int32_t a = c->acc_off[k]; a < c->acc_off[k + 1]; a++)
            if (c->acc_mk[a] && c->M[c->acc_c[a]] >= tiny)
                bigout[k] = 1;
    for (int32_t t = 0; t < T; t++)
        for (int32_t k = 0; k < T; k++) {
            size_t i = (size_t)t * (size_t)T + (size_t)k;
            q->Rv[i] = can_rerun(c, t, k) && bigout[k]
                           ? milp_var(q->m, 0, 1, c->time[k] * OR_US, 1) : -1;
        }
    for (int32_t t = 0; t < T; t++)
        for (int32_t x = 0; x < ns; x++)
            q->Sv[(size_t)t * (size_t)ns + (size_t)x] =
                c->M[x] >= tiny && c->pp[x] < t && t <= c->N[x] ? milp_var(q->m, 0, 1, 0, 1)
                                                                : -1;
    for (int32_t x = 0; x < ns; x++)
        touch[x] = -1;
    for (int32_t t = 0; t < T; t++) {
        const int32_t *Rv = q->Rv + (size_t)t * (size_t)T;
        const int32_t *Sv = q->Sv + (size_t)t * (size_t)ns;
        const int32_t *Svn = t + 1 < T ? q->Sv + (size_t)(t + 1) * (size_t)ns : NULL;
        /* dependencies, and what the stage can touch */
        for (int32_t k = 0; k <= t; k++) {
            if (k < t && Rv[k] < 0)
                continue;
            for (int32_t a = c->acc_off[k]; a < c->acc_off[k + 1]; a++) {
                int32_t x = c->acc_c[a], p = c->pp[x];
                touch[x] = t;
                if (c->acc_mk[a] || c->M[x] < tiny)
                    continue;
                input_row(q->m, k < t ? Rv[k] : -1, p < t ? Rv[p] : -1, Sv[x], ridx, rval);
            }
        }
        /* the stage's start */
        int nz = 0;
        for (int32_t x = 0; x < ns; x++)
            if (Sv[x] >= 0) {
                ridx[nz] = Sv[x];
                rval[nz++] = (double)c->M[x] / q->unit;
            }
        if (nz)
            milp_row(q->m, -MILP_INF, capU, nz, ridx, rval);
        /* op t's run */
        double cst = 0;
        for (int32_t a = c->acc_off[t]; a < c->acc_off[t + 1]; a++) {
            int dup = 0; /* each storage once, as the program counts it */
            for (int32_t b = c->acc_off[t]; b < a && !dup; b++)
                dup = c->acc_c[b] == c->acc_c[a];
            if (!dup && c->M[c->acc_c[a]] >= tiny)
                cst += (double)c->M[c->acc_c[a]] / q->unit;
        }
        nz = 0;
        for (int32_t x = 0; x < ns; x++) {
            if (c->pp[x] >= t || c->M[x] < tiny)
                continue;
            int on_t = 0;
            for (int32_t a = c->acc_off[t]; a < c->acc_off[t + 1] && !on_t; a++)
                on_t = c->acc_c[a] == x;
            if (on_t)
                continue;
            int32_t v = touch[x] == t ? (Svn ? Svn[x] : -1) : Sv[x];
            if (v >= 0) {
                ridx[nz] = v;
                rval[nz++] = (double)c->M[x] / q->unit;
            }
        }
        if (nz)
            milp_row(q->m, -MILP_INF, capU - cst, nz, ridx, rval);
    }
    /* carried residency */
    for (int32_t x = 0; x < ns; x++) {
        int32_t p = c->pp[x];
        for (int32_t t = p + 1; t + 1 <= c->N[x] && t + 1 < T; t++) {
            int32_t a = q->Sv[(size_t)(t + 1) * (size_t)ns + (size_t)x];
            int32_t b = q->Sv[(size_t)t * (size_t)ns + (size_t)x];
            int32_t r = q->Rv[(size_t)t * (size_t)T + (size_t)p];
            if (a < 0)
                continue;
            if (r >= 0)
                milp_row3(q->m, -MILP_INF, 0, a, 1, b, -1, r, -1);
            else
                milp_row2(q->m, -MILP_INF, 0, a, 1, b, -1);
        }
    }
done:
    sw_free(touch);
    sw_free(bigout);
    sw_free(ridx);
    sw_free(rval);
    return rc;
}

/* Solve the LP relaxation at byte cap c->cap into c->lpS (-1 where S has no
   variable) and c->lp_obj. Returns 0 with *st the solver's status, or an
   error. */
int or_lp(orc *c, const planner_opts *o, double deadline, milp_status *st, sw_err *err)
{
    static const milp_lp_method meth[] = {MILP_LP_AUTO, MILP_LP_DUAL, MILP_LP_PRIMAL,
                                          MILP_LP_BARRIER};
    static const char *const names[] = {"auto", "dual", "primal", "barrier"};
    const char *want = params_str(&o->params, "lp_method");
    milp_lp_method lm = MILP_LP_DUAL;
    for (size_t i = 0; i < SW_ARRAY_LEN(names); i++)
        if (!strcmp(want, names[i]))
            lm = meth[i];
    orm q;
    memset(&q, 0, sizeof q);
    q.unit = SW_MAX(1.0, (double)c->cap / 1e4);
    int rc = 0;
    const char *form = params_str(&o->params, "lp");
    c->lp_coarse = !strcmp(form, "coarse") ||
                   (!strcmp(form, "auto") && orm_size(c) > params_int(&o->params, "max_vars"));
    if (c->lp_coarse ? orm_build_coarse(c, &q, (int64_t)q.unit) : orm_build(c, &q, 0)) {
        rc = sw_fail(err, SW_ENOMEM, "out of memory building the linear program");
        goto done;
    }
    milp_opts mo;
    memset(&mo, 0, sizeof mo);
    mo.time_limit_s = SW_MAX(deadline - sw_now(), 0.5);
    mo.log = params_bool(&o->params, "solver_log");
    mo.backend = milp_backend_find(params_str(&o->params, "solver")) == MILP_GLPK ? MILP_GLPK
                                                                                 : MILP_CBC;
    milp_result r;
    rc = milp_solve_lp(q.m, &mo, lm, &r, err);
    if (rc)
        goto done;
    c->lp_s += r.solve_s;
    c->lp_solves++;
    c->lp_vars = milp_vars(q.m);
    c->lp_rows = milp_rows(q.m);
    c->lp_solver = r.solver;
    *st = r.status;
    if (r.status != MILP_OPTIMAL)
        goto done;
    size_t n = (size_t)c->T * (size_t)c->ns;
    if ((!c->lpS && !(c->lpS = sw_malloc((n + 1) * sizeof *c->lpS))) ||
        (!c->lpR && !(c->lpR = sw_malloc(((size_t)Tsq(c) + 1) * sizeof *c->lpR)))) {
        rc = sw_fail(err, SW_ENOMEM, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        int32_t t = (int32_t)(i / (size_t)c->ns), x = (int32_t)(i % (size_t)c->ns);
        c->lpS[i] = q.Sv[i] >= 0                          ? SW_MIN(SW_MAX(r.x[q.Sv[i]], 0.0), 1.0)
                    : c->pp[x] < t && t <= c->N[x] ? 1 /* tiny (coarse): kept */
                                                          : -1;
    }
    for (size_t i = 0; i < (size_t)Tsq(c); i++)
        c->lpR[i] = q.Rv[i] >= 0 ? SW_MIN(SW_MAX(r.x[q.Rv[i]], 0.0), 1.0) : 0;
    c->lp_obj = SW_MAX(r.objective, 0.0);
    c->lp_cap = c->cap;
done:
    orm_free(&q);
    return rc;
}
