/* optimal_remat.c: the `optimal-remat` planner: Checkmate's integer program
   for rematerialisation at a memory budget (Jain et al., "Checkmate:
   Breaking the Memory Wall with Optimal Tensor Rematerialization", MLSys
   2020), solved through planners/milp.h; docs/bounds.md ("optimal-remat")
   gives the formulation and its limits.

   Stage t (0 <= t < T, T the ops of the profile's order) runs op t and may
   first re-run earlier ops, in the order's order. Binary R[t][k]: op k is
   computed in stage t (R[t][t] = 1); binary S[t][c]: storage c is resident
   when stage t begins; continuous FREE[t][c][k] (c is freed right after op
   k of stage t) and U (the bytes resident after each computation). The
   objective is the compute time of every run and re-run, which is the plan's
   simulated iteration time: a plan that only recomputes never waits for
   anything but its own compute stream. The plan replays the solution's R
   through the plan builder: the re-runs of each stage, then its op, each
   storage dropped right after its last use in the stage unless the next
   stage needs it resident (the least S the R allows). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../sim/builder.h"
#include "bound.h"
#include "milp.h"
#include "planner.h"

static const param_def optimal_remat_params[] = {
    {"max_ops", PT_INT, "1000", "profiles with more ops that need recomputation are refused "
     "(SW_EUNSUPPORTED): the program has about T^2 variables", NULL, 1, 1e6},
    {"max_vars", PT_INT, "40000", "above this many R and S variables the program is not "
     "solved (CBC would not finish its first relaxation in minutes): the plan is the start's, "
     "with the gap to the lower bound of docs/bounds.md", NULL, 1, 1e9},
    {"recompute", PT_CHOICE, "all", "ops that may be re-run: all (Checkmate's program), or "
     "forward ops only (a smaller program; its optimum is optimal only among such plans)",
     "all|forward", 1, 0},
    {"start", PT_CHOICE, "heuristics", "the solver's initial solution: the cheaper of the dtr "
     "and sublinear (mode=budget) plans that fit the program's accounting, or none",
     "heuristics|none", 1, 0},
    {"max_nodes", PT_INT, "0", "branch-and-bound node limit (0: none); unlike --time-budget "
     "it makes a stopped solve repeatable", NULL, 0, 2e9},
    {"rel_gap", PT_FLOAT, "0", "stop once the relative gap on the recompute time is at most "
     "this (0: prove optimality)", NULL, 0, 1},
    {"solver_log", PT_BOOL, "false", "print the solver's own log on stdout", NULL, 1, 0},
    {"allocator", PT_CHOICE, "best-fit", "address allocator placing the plan",
     "first-fit|best-fit", 1, 0},
    {"alignment", PT_SIZE, "1", "placement alignment in bytes", NULL, 1, 1e9},
    PARAM_END};

#define OR_DEFAULT_TIME_S 60.0 /* solve limit when no --time-budget is given */
#define OR_US 1e6              /* objective unit: microseconds (well scaled for the solver) */

/* The profile as the program sees it: positions in g->order, and the
   tracked storages (non-persistent roots some op accesses), compactly
   numbered. */
typedef struct orc {
    const graph_profile *g;
    int32_t T;          /* ops (stages) */
    int32_t ns;         /* tracked storages */
    int32_t *st;        /* per tracked storage: its storage id */
    int32_t *sid;       /* per tensor: its tracked index, -1 */
    int32_t *pp;        /* per tracked storage: position of its producer */
    int32_t *N;         /* per tracked storage: the last stage it could be needed in */
    int64_t *M;         /* per tracked storage: bytes */
    int32_t *acc_off;   /* per position: CSR offsets into acc_c/acc_mk (tracked accesses) */
    int32_t *acc_c;     /* tracked storage accessed */
    uint8_t *acc_mk;    /* 1: the op creates it; 0: reads or mutates it */
    int32_t *nout;      /* per position: tracked storages the op creates */
    uint8_t *elig;      /* per position: the op may be re-run */
    int32_t *H;         /* per position: the last stage a re-run reads its inputs' versions */
    int32_t *RH;        /* per position: the last stage a re-run can be of use (<= H) */
    double *time;       /* per position: the op's compute time (s) */
    int64_t persist;    /* persistent bytes, resident throughout */
    int64_t cap;        /* bytes the tracked storages may occupy: arena - persistent */
    /* a solution and its replay */
    uint8_t *R;         /* T x T: R[t * T + k], k < t: op k re-run in stage t */
    uint8_t *S;         /* T x ns: S[t * ns + c]: c resident when stage t begins */
    uint8_t *need;      /* per tracked storage (scratch) */
    uint8_t *res;       /* per tracked storage (scratch) */
    int32_t *last;      /* per tracked storage (scratch) */
    int32_t *list;      /* per position (scratch) */
} orc;

typedef struct or_eval {
    int64_t peak;       /* most bytes of tracked storages resident at once */
    int32_t reruns;     /* re-runs */
    double recompute_s; /* their time */
} or_eval;

#define ALLOC(p, n) ((p) = sw_calloc((size_t)(n) + 1, sizeof *(p)))

static void orc_free(orc *c)
{
    void *ptrs[] = {c->st, c->sid, c->pp, c->N, c->M, c->acc_off, c->acc_c, c->acc_mk, c->nout,
                    c->elig, c->H, c->RH, c->time, c->R, c->S, c->need, c->res, c->last,
                    c->list};
    for (size_t i = 0; i < SW_ARRAY_LEN(ptrs); i++)
        sw_free(ptrs[i]);
}

/* What the profile says once. Returns 0, SW_ENOMEM, or SW_EUNSUPPORTED (a
   non-persistent storage no op makes: it would come in by a copy). */
static int orc_setup(orc *c, const graph_profile *g, int forward_only, sw_err *err)
{
    int32_t T = g->n_ops, nt = g->n_tensors, na = g->acc_off[T];
    c->g = g;
    c->T = T;
    int32_t *pos = NULL, *moff = NULL, *mpos = NULL, *fill = NULL;
    if (!ALLOC(c->sid, nt) || !ALLOC(c->st, nt) || !ALLOC(c->pp, nt) || !ALLOC(c->N, nt) ||
        !ALLOC(c->M, nt) || !ALLOC(c->acc_off, T + 1) || !ALLOC(c->acc_c, na) ||
        !ALLOC(c->acc_mk, na) || !ALLOC(c->nout, T) || !ALLOC(c->elig, T) || !ALLOC(c->H, T) ||
        !ALLOC(c->RH, T) || !ALLOC(c->time, T) || !ALLOC(c->need, nt) || !ALLOC(c->res, nt) ||
        !ALLOC(c->last, nt) || !ALLOC(c->list, T) || !ALLOC(pos, T) || !ALLOC(moff, nt + 1) ||
        !ALLOC(mpos, na) || !ALLOC(fill, nt + 1))
        goto oom;
    for (int32_t i = 0; i < T; i++)
        pos[g->order[i]] = i;
    c->persist = 0;
    c->ns = 0;
    for (int32_t s = 0; s < nt; s++) {
        c->sid[s] = -1;
        if (g->tensors[s].storage == s && g->tensors[s].persistent)
            c->persist += g->tensors[s].bytes;
    }
    /* tracked storages, in the order their producers run */
    for (int32_t i = 0; i < T; i++) {
        int32_t o = g->order[i];
        c->time[i] = g->ops[o].time_s;
        for (int32_t k = g->acc_off[o]; k < g->acc_off[o + 1]; k++) {
            int32_t s = g->acc[k];
            if (g->tensors[s].persistent || c->sid[s] >= 0)
                continue;
            if (!(g->acc_flag[k] & GA_CREATE)) {
                int rc = sw_fail(err, SW_EUNSUPPORTED, "optimal-remat: op %d '%s' reads tensor "
                                 "%d '%s', which is neither persistent nor made by an op (it "
                                 "would come in by a copy; rematerialisation plans copy nothing)",
                                 o, g->ops[o].name, s, g->tensors[s].name);
                sw_free(pos), sw_free(moff), sw_free(mpos), sw_free(fill);
                return rc;
            }
            c->sid[s] = c->ns;
            c->st[c->ns] = s;
            c->pp[c->ns] = i;
            c->M[c->ns] = g->tensors[s].bytes;
            c->ns++;
        }
    }
    /* tracked accesses per position */
    int32_t n = 0;
    for (int32_t i = 0; i < T; i++) {
        int32_t o = g->order[i];
        c->acc_off[i] = n;
        for (int32_t k = g->acc_off[o]; k < g->acc_off[o + 1]; k++) {
            int32_t x = c->sid[g->acc[k]];
            if (x < 0)
                continue;
            c->acc_c[n] = x;
            c->acc_mk[n] = (g->acc_flag[k] & GA_CREATE) != 0;
            c->nout[i] += c->acc_mk[n];
            n++;
        }
    }
    c->acc_off[T] = n;
    /* mutation positions per storage (every storage: persistent inputs too) */
    for (int32_t i = 0; i < T; i++) {
        int32_t o = g->order[i];
        for (int32_t k = g->acc_off[o]; k < g->acc_off[o + 1]; k++)
            if (g->acc_flag[k] & GA_MUTATE)
                moff[g->acc[k]]++;
    }
    if (graph_counts_to_offsets(moff, nt))
        goto oom;
    for (int32_t i = 0; i < T; i++) {
        int32_t o = g->order[i];
        for (int32_t k = g->acc_off[o]; k < g->acc_off[o + 1]; k++)
            if (g->acc_flag[k] & GA_MUTATE) {
                int32_t s = g->acc[k];
                mpos[moff[s] + fill[s]++] = i;
            }
    }
    /* which ops may be re-run, and until when */
    for (int32_t i = 0; i < T; i++) {
        int32_t o = g->order[i];
        int ok = g->ops[o].n_mut == 0 && c->nout[i] > 0 &&
                 (!forward_only || g->ops[o].phase == GP_FORWARD);
        c->H[i] = T - 1;
        for (int32_t k = g->acc_off[o]; k < g->acc_off[o + 1] && ok; k++) {
            int32_t s = g->acc[k];
            if (g->acc_flag[k] & GA_CREATE) {
                if (g->n_mutations[s] || g->tensors[s].kind == GK_INPUT)
                    ok = 0;
                continue;
            }
            /* a re-run must read the version the run read: before the next mutation */
            for (int32_t m = moff[s]; m < moff[s + 1]; m++)
                if (mpos[m] > i) {
                    c->H[i] = SW_MIN(c->H[i], mpos[m]);
                    break;
                }
        }
        c->elig[i] = (uint8_t)ok;
        if (!ok)
            c->H[i] = i;
    }
    /* the last stage each storage can be needed in, and each re-run be of
       use in, from the end back */
    for (int32_t x = 0; x < c->ns; x++)
        c->N[x] = c->pp[x];
    for (int32_t i = T - 1; i >= 0; i--) {
        int32_t rh = i;
        for (int32_t a = c->acc_off[i]; a < c->acc_off[i + 1]; a++)
            if (c->acc_mk[a])
                rh = SW_MAX(rh, c->N[c->acc_c[a]]);
        c->RH[i] = c->elig[i] ? SW_MIN(rh, c->H[i]) : i;
        for (int32_t a = c->acc_off[i]; a < c->acc_off[i + 1]; a++)
            if (!c->acc_mk[a])
                c->N[c->acc_c[a]] = SW_MAX(c->N[c->acc_c[a]], c->RH[i]);
    }
    sw_free(pos), sw_free(moff), sw_free(mpos), sw_free(fill);
    return 0;
oom:
    sw_free(pos), sw_free(moff), sw_free(mpos), sw_free(fill);
    return sw_fail(err, SW_ENOMEM, "out of memory");
}

static int64_t Tsq(const orc *c) { return (int64_t)c->T * c->T; }

/* May op k be re-run in stage t? */
static int can_rerun(const orc *c, int32_t t, int32_t k)
{
    return k < t && c->elig[k] && t <= c->RH[k];
}

/* From c->R (re-runs per stage): drop the useless re-runs (no output needed
   later in the stage or by the next), and the least residency S the rest
   needs, from the last stage back. Returns 0, or -1 if R re-runs an op it
   may not (then R is no solution). */
static int orc_settle(orc *c)
{
    int32_t T = c->T, ns = c->ns;
    memset(c->need, 0, (size_t)ns);
    for (int32_t t = T - 1; t >= 0; t--) {
        uint8_t *Rt = c->R + (size_t)t * (size_t)T;
        for (int32_t k = t; k >= 0; k--) {
            if (k < t) {
                if (!Rt[k])
                    continue;
                if (k >= t || !c->elig[k] || t > c->H[k])
                    return -1;
                int useful = 0;
                for (int32_t a = c->acc_off[k]; a < c->acc_off[k + 1] && !useful; a++)
                    useful = c->acc_mk[a] && c->need[c->acc_c[a]];
                if (!useful) {
                    Rt[k] = 0;
                    continue;
                }
            }
            for (int32_t a = c->acc_off[k]; a < c->acc_off[k + 1]; a++)
                if (c->acc_mk[a])
                    c->need[c->acc_c[a]] = 0;
            for (int32_t a = c->acc_off[k]; a < c->acc_off[k + 1]; a++)
                if (!c->acc_mk[a])
                    c->need[c->acc_c[a]] = 1;
        }
        memcpy(c->S + (size_t)t * (size_t)ns, c->need, (size_t)ns);
    }
    for (int32_t x = 0; x < ns; x++)
        if (c->need[x])
            return -1; /* needed before anything made it */
    return 0;
}

/* Replay the settled R and S: the bytes resident after each computation
   (placements at its start, drops right after a storage's last use in the
   stage unless the next stage needs it), recording the tasks through b if
   not NULL. Returns 0, or -1 if an input would not be resident (a bug). */
static int orc_replay(orc *c, plan_builder *b, or_eval *r)
{
    int32_t T = c->T, ns = c->ns;
    const graph_profile *g = c->g;
    memset(c->res, 0, (size_t)ns);
    memset(r, 0, sizeof *r);
    int64_t cur = 0;
    for (int32_t t = 0; t < T; t++) {
        const uint8_t *Rt = c->R + (size_t)t * (size_t)T;
        const uint8_t *Sn = t + 1 < T ? c->S + (size_t)(t + 1) * (size_t)ns : NULL;
        int32_t nC = 0;
        for (int32_t k = 0; k < t; k++)
            if (Rt[k])
                c->list[nC++] = k;
        c->list[nC++] = t;
        for (int32_t i = 0; i < nC; i++) {
            int32_t k = c->list[i];
            for (int32_t a = c->acc_off[k]; a < c->acc_off[k + 1]; a++)
                c->last[c->acc_c[a]] = k;
        }
        for (int32_t i = 0; i < nC; i++) {
            int32_t k = c->list[i];
            for (int32_t a = c->acc_off[k]; a < c->acc_off[k + 1]; a++)
                if (!c->acc_mk[a] && !c->res[c->acc_c[a]])
                    return -1;
            if (b) {
                if (k < t)
                    pb_rerun(b, g->order[k]);
                else
                    pb_run(b, g->order[k]);
            }
            if (k < t) {
                r->reruns++;
                r->recompute_s += c->time[k];
            }
            for (int32_t a = c->acc_off[k]; a < c->acc_off[k + 1]; a++) {
                int32_t x = c->acc_c[a];
                if (c->acc_mk[a] && !c->res[x]) {
                    c->res[x] = 1;
                    cur += c->M[x];
                }
            }
            r->peak = SW_MAX(r->peak, cur);
            for (int32_t a = c->acc_off[k]; a < c->acc_off[k + 1]; a++) {
                int32_t x = c->acc_c[a];
                if (c->last[x] == k && c->res[x] && !(Sn && Sn[x])) {
                    c->res[x] = 0;
                    cur -= c->M[x];
                    if (b)
                        pb_drop(b, c->st[x]);
                }
            }
        }
        /* resident but not needed next and not used here: gone at the stage's end */
        for (int32_t x = 0; x < ns; x++)
            if (c->res[x] && !(Sn && Sn[x])) {
                c->res[x] = 0;
                cur -= c->M[x];
                if (b)
                    pb_drop(b, c->st[x]);
            }
    }
    return 0;
}

/* R from a plan's tasks: the re-runs recorded before each run form its
   stage. Returns 0, or -1 if the plan does not read as stages. */
static int orc_from_plan(orc *c, const plan *p)
{
    int32_t T = c->T;
    const graph_profile *g = c->g;
    memset(c->R, 0, (size_t)Tsq(c));
    int32_t n = 0; /* pending re-runs in c->list */
    int32_t t = 0;
    for (int32_t i = 0; i < p->n_tasks; i++) {
        const plan_task *x = &p->tasks[i];
        if (x->kind == TASK_RERUN) {
            if (n >= T)
                return -1;
            c->list[n++] = x->op;
        } else if (x->kind == TASK_RUN) {
            if (t >= T || g->order[t] != x->op)
                return -1;
            for (int32_t j = 0; j < n; j++) {
                int32_t k = -1;
                for (int32_t q = 0; q < t && k < 0; q++)
                    if (g->order[q] == c->list[j])
                        k = q;
                if (k < 0 || !c->elig[k] || t > c->H[k])
                    return -1;
                if (t <= c->RH[k])
                    c->R[(size_t)t * (size_t)T + (size_t)k] = 1;
            }
            n = 0;
            t++;
        } else if (x->kind == TASK_SWAP_IN || x->kind == TASK_SWAP_OUT) {
            if (!c->g->tensors[x->tensor].persistent)
                return -1;
        }
    }
    return t == T ? 0 : -1;
}

/* ---- the integer program ---- */

typedef struct orm {
    milp *m;
    int32_t *Rv;   /* T x T: variable of R[t][k], -1 */
    int32_t *Sv;   /* T x ns: variable of S[t][c], -1 */
    double *x0;    /* the start's value per variable, or NULL (no start) */
    size_t cap0;
    double unit;   /* bytes per memory unit in the rows */
    int oom;
} orm;

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

/* Count the R and S variables the program would have. */
static int64_t orm_size(const orc *c)
{
    int64_t n = 0;
    for (int32_t k = 0; k < c->T; k++)
        if (c->elig[k])
            n += c->RH[k] - k;
    for (int32_t x = 0; x < c->ns; x++)
        n += c->N[x] - c->pp[x];
    return n;
}

/* Build the program; with_start: values from c->R and c->S (settled) for
   the start. */
static int orm_build(orc *c, orm *q, int with_start)
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
                int32_t rp = p < t ? Rv[p] : -1, sv = Sv[x];
                double sg = k < t ? -1 : 1; /* R[t][k] <= R[t][p] + S, or 1 <= ... */
                int nz = 0;
                if (k < t) {
                    ridx[nz] = Rv[k];
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
                if (k < t)
                    milp_row(q->m, -MILP_INF, 0, nz, ridx, rval);
                else
                    milp_row(q->m, 1, MILP_INF, nz, ridx, rval);
            }
        }
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

static void orm_free(orm *q)
{
    milp_free(q->m);
    sw_free(q->Rv);
    sw_free(q->Sv);
    sw_free(q->x0);
}

/* ---- the planner ---- */

/* Record c->R (settled) into a plan placed in the budget. */
static int or_build(orc *c, const planner_opts *o, const char *fit_name, plan **out, sw_err *err)
{
    const graph_profile *g = c->g;
    mem_fit fit = MEM_BEST_FIT;
    mem_fit_parse(fit_name, &fit);
    mem_model *m = mem_address_new(o->memory_budget - g->max_workspace, fit,
                                   params_size(&o->params, "alignment"));
    if (!m)
        return sw_fail(err, SW_ENOMEM, "out of memory");
    plan_builder *b = pb_new(g, m, o->memory_budget, g->max_workspace);
    if (!b) {
        mem_destroy(m);
        return sw_fail(err, SW_ENOMEM, "out of memory");
    }
    for (int32_t s = 0; s < g->n_tensors; s++)
        if (g->tensors[s].storage == s && g->tensors[s].persistent)
            pb_resident(b, s);
    or_eval r;
    int rc = orc_replay(c, b, &r);
    if (rc)
        rc = sw_fail(err, SW_EINVAL, "optimal-remat: the solution reads a storage that is not "
                     "resident (a bug)");
    else
        rc = pb_finish(b, out, err);
    pb_free(b);
    mem_destroy(m);
    return rc;
}

/* A start from planner pl's plan at budget: 0 and *e filled if it reads
   as stages and fits the program's accounting (c->cap). */
static int start_from(orc *c, const graph_profile *g, const planner_opts *o, int64_t budget,
                      const planner *pl, const char *const *kv, int nkv, or_eval *e,
                      plan **keep)
{
    *keep = NULL;
    planner_opts po;
    if (planner_opts_init(&po, pl))
        return -1;
    po.memory_budget = budget;
    po.seed = o->seed;
    sw_err ignore;
    for (int i = 0; i + 1 < nkv; i += 2)
        params_set(&po.params, kv[i], kv[i + 1], &ignore);
    plan *p = NULL;
    int rc = planner_run(pl, g, &po, &p, &ignore);
    planner_opts_free(&po);
    if (rc)
        return -1;
    rc = orc_from_plan(c, p);
    int r1 = rc ? 0 : orc_settle(c), r2 = rc || r1 ? 0 : orc_replay(c, NULL, e);
    if (rc || r1 || r2 || e->peak > c->cap) {
        plan_free(p);
        return -1;
    }
    *keep = p;
    return 0;
}

/* One solve at c->cap: the solution in c->R (settled) and *best. */
typedef struct or_solve_out {
    or_eval best;       /* the plan's figures */
    const char *how;    /* where it came from */
    int solved;         /* 1: the solver ran (mr, vars, rows valid) */
    milp_result mr;     /* its result (x not kept) */
    int vars, rows;
    int64_t size;       /* R and S variables (0: no program needed) */
    plan *start;        /* the heuristic plan the start came from (owned), or NULL */
    const char *start_name;
} or_solve_out;

static int or_solve(orc *c, const graph_profile *g, const planner_opts *o, double deadline,
                    or_solve_out *so, sw_err *err)
{
    const param_set *ps = &o->params;
    char h1[32], h2[32];
    memset(so, 0, sizeof *so);
    or_eval ev;
    memset(c->R, 0, (size_t)Tsq(c));
    if (orc_settle(c) || orc_replay(c, NULL, &ev))
        return sw_fail(err, SW_EINVAL, "optimal-remat: the profile's order does not replay "
                       "(a bug)");
    if (ev.peak <= c->cap) { /* nothing re-run: optimal at once */
        so->best = ev;
        so->how = "nothing re-run";
        return 0;
    }
    if (c->T > params_int(ps, "max_ops"))
        return sw_fail(err, SW_EUNSUPPORTED, "optimal-remat: %d ops need recomputation within "
                       "the budget, more than max_ops=%lld the integer program is built for (it "
                       "grows as the square of the ops)", c->T,
                       (long long)params_int(ps, "max_ops"));
    int64_t size = orm_size(c);
    so->size = size;
    uint8_t *bestR = NULL;
    orm q;
    memset(&q, 0, sizeof q);
    int have = 0, rc = 0;
    if (!ALLOC(bestR, Tsq(c))) {
        rc = sw_fail(err, SW_ENOMEM, "out of memory");
        goto done;
    }
    /* the start: the cheaper heuristic plan that fits the accounting */
    const char *start_name = NULL;
    if (!strcmp(params_str(ps, "start"), "heuristics")) {
        static const char *const sub_kv[] = {"mode", "budget"};
        const planner *cand[2] = {&planner_dtr, &planner_sublinear};
        const char *const *kvs[2] = {NULL, sub_kv};
        int nkvs[2] = {0, 2};
        int64_t budget = c->cap + c->persist + g->max_workspace;
        for (int i = 0; i < 2; i++) {
            plan *hp = NULL;
            if (!start_from(c, g, o, budget, cand[i], kvs[i], nkvs[i], &ev, &hp) &&
                (!have || ev.recompute_s < so->best.recompute_s)) {
                so->best = ev;
                have = 1;
                memcpy(bestR, c->R, (size_t)Tsq(c));
                start_name = cand[i]->name;
                plan_free(so->start);
                so->start = hp;
                so->start_name = start_name;
            } else {
                plan_free(hp);
            }
        }
    }
    if (have) {
        memcpy(c->R, bestR, (size_t)Tsq(c));
        orc_settle(c);
    }
    if (size > params_int(ps, "max_vars")) {
        if (have)
            so->how = start_name;
        else
            rc = sw_fail(err, SW_EUNSUPPORTED, "optimal-remat: the integer program would have "
                         "%lld R and S variables, more than max_vars=%lld, and neither dtr nor "
                         "sublinear has a plan to start from", (long long)size,
                         (long long)params_int(ps, "max_vars"));
        goto done;
    }
    /* memory in units of about cap / 10^4 bytes: the solver's tolerances
       (1e-7 absolute) stay below a byte */
    q.unit = SW_MAX(1.0, (double)c->cap / 1e4);
    if (orm_build(c, &q, have)) {
        rc = sw_fail(err, SW_ENOMEM, "out of memory building the integer program");
        goto done;
    }
    milp_opts mo;
    memset(&mo, 0, sizeof mo);
    mo.time_limit_s = SW_MAX(deadline - sw_now(), 0.5);
    mo.max_nodes = params_int(ps, "max_nodes");
    mo.rel_gap = params_float(ps, "rel_gap");
    mo.log = params_bool(ps, "solver_log");
    milp_result *mr = &so->mr;
    rc = milp_solve(q.m, &mo, mr, err);
    if (rc)
        goto done;
    so->solved = 1;
    so->vars = milp_vars(q.m);
    so->rows = milp_rows(q.m);
    if (mr->status == MILP_INFEASIBLE) {
        int64_t budget = c->cap + c->persist + g->max_workspace;
        rc = sw_fail(err, SW_ENOFIT, "does not fit: no rematerialisation of the profile's order "
                     "fits %s (%lld bytes; %s of it for the persistent storages and the largest "
                     "workspace): the integer program is infeasible",
                     sw_fmt_bytes(budget, h1, sizeof h1), (long long)budget,
                     sw_fmt_bytes(c->persist + g->max_workspace, h2, sizeof h2));
        goto done;
    }
    if (mr->x) {
        memset(c->R, 0, (size_t)Tsq(c));
        for (int32_t t = 0; t < c->T; t++)
            for (int32_t k = 0; k < t; k++) {
                int32_t v = q.Rv[(size_t)t * (size_t)c->T + (size_t)k];
                if (v >= 0 && mr->x[v] > 0.5)
                    c->R[(size_t)t * (size_t)c->T + (size_t)k] = 1;
            }
        /* checked, not trusted: a solve stopped by its limit can return an
           iterate that breaks rows (CBC 2.10, coin-or/Cbc#353) */
        int bad = orc_settle(c) || orc_replay(c, NULL, &ev) || ev.peak > c->cap;
        if (bad && !have) {
            rc = sw_fail(err, SW_EEXCEEDED, "exceeded: the solve stopped (%.3g s) with a "
                         "solution that breaks the program's rows, and there is no start",
                         mo.time_limit_s);
            goto done;
        }
        if (!bad && (!have || ev.recompute_s <= so->best.recompute_s)) {
            so->best = ev;
            so->how = "the solver";
        } else {
            memcpy(c->R, bestR, (size_t)Tsq(c));
            orc_settle(c);
            so->how = start_name;
        }
        have = 1;
    } else if (have) {
        so->how = start_name; /* the limit came first; the start stands */
    }
    mr->x = NULL;
    if (!have)
        rc = sw_fail(err, SW_EEXCEEDED, "exceeded: the time limit (%.3g s) ended the solve "
                     "before any plan was found (proven bound: recompute >= %.6f s)",
                     mo.time_limit_s, SW_MAX(mr->bound, 0.0) / OR_US);
done:
    orm_free(&q);
    sw_free(bestR);
    return rc;
}

#define OR_ATTEMPTS 6 /* solves at ever smaller byte caps when fragmentation defeats placement */

static int plan_optimal_remat(const graph_profile *g, const planner_opts *o, plan **out,
                              sw_err *err)
{
    const param_set *ps = &o->params;
    double t0 = sw_now();
    double deadline = t0 + (o->time_budget_s > 0 ? o->time_budget_s : OR_DEFAULT_TIME_S);
    int64_t arena = o->memory_budget - g->max_workspace;
    if (arena <= 0)
        return sw_fail(err, SW_ENOFIT, "does not fit: the budget does not cover the largest op "
                       "workspace (%lld bytes)", (long long)g->max_workspace);
    orc c;
    memset(&c, 0, sizeof c);
    or_solve_out so, first; /* the last solve, the first */
    memset(&so, 0, sizeof so);
    memset(&first, 0, sizeof first);
    char h1[32], h2[32];
    int rc = orc_setup(&c, g, !strcmp(params_str(ps, "recompute"), "forward"), err);
    if (rc)
        goto done;
    int64_t cap0 = arena - c.persist;
    c.cap = cap0;
    /* what every plan needs: each op's storages, the persistent ones, the workspace */
    for (int32_t t = 0; t < c.T; t++) {
        int64_t need = 0;
        for (int32_t a = c.acc_off[t]; a < c.acc_off[t + 1]; a++)
            need += c.M[c.acc_c[a]];
        if (need > c.cap) {
            int32_t op = g->order[t];
            need += c.persist + g->max_workspace;
            rc = sw_fail(err, SW_ENOFIT, "does not fit: op %d '%s' needs %s (%lld bytes) "
                         "resident with the persistent storages and the largest workspace, "
                         "budget %s (%lld bytes)", op, g->ops[op].name,
                         sw_fmt_bytes(need, h1, sizeof h1), (long long)need,
                         sw_fmt_bytes(o->memory_budget, h2, sizeof h2),
                         (long long)o->memory_budget);
            goto done;
        }
    }
    if (!ALLOC(c.R, Tsq(&c)) || !ALLOC(c.S, (int64_t)c.T * c.ns)) {
        rc = sw_fail(err, SW_ENOMEM, "out of memory");
        goto done;
    }
    /* solve; where the allocator cannot place the plan though its bytes fit,
       solve again for a smaller byte cap (the first solve's bound stays the
       bound: it holds for the budget); failing that, the heuristic plan the
       first start came from, as its planner placed it */
    const char *alloc = params_str(ps, "allocator");
    sw_err e2;
    e2.msg[0] = 0;
    int attempt, fallback = 0;
    for (attempt = 0; attempt < OR_ATTEMPTS; attempt++) {
        sw_err e4;
        rc = or_solve(&c, g, o, deadline, &so, attempt ? &e4 : err);
        if (rc && attempt) { /* a smaller cap has no plan: the first one fragments */
            rc = SW_ENOFIT;
            break;
        }
        if (rc)
            goto done;
        if (!attempt) {
            first = so;
            so.start = NULL; /* first owns it */
        } else {
            plan_free(so.start);
            so.start = NULL;
        }
        rc = or_build(&c, o, alloc, out, &e2);
        if (rc == SW_ENOFIT) {
            const char *other = strcmp(alloc, "first-fit") ? "first-fit" : "best-fit";
            sw_err e3;
            rc = or_build(&c, o, other, out, &e3);
            if (rc && rc != SW_ENOFIT && err)
                *err = e3;
        } else if (rc && err) {
            *err = e2;
        }
        if (rc != SW_ENOFIT)
            break;
        int64_t shrink = SW_MAX(cap0 / 100, 1) << attempt; /* 1%, 2%, 4% ... of the cap */
        c.cap = SW_MIN(c.cap, so.best.peak) - shrink;
        if (c.cap <= 0 || sw_now() > deadline)
            break;
    }
    if (rc == SW_ENOFIT && first.start) {
        *out = first.start;
        first.start = NULL;
        fallback = 1;
        plan_free(so.start);
        so = first;
        so.start = NULL;
        so.how = first.start_name;
        so.best.reruns = 0;
        so.best.recompute_s = 0;
        for (int32_t t = 0; t < (*out)->n_tasks; t++)
            if ((*out)->tasks[t].kind == TASK_RERUN) {
                so.best.reruns++;
                so.best.recompute_s += g->ops[(*out)->tasks[t].op].time_s;
            }
        rc = 0;
    } else if (rc == SW_ENOFIT) {
        const char *why = e2.msg;
        if (!strncmp(why, "does not fit: ", 14))
            why += 14;
        int64_t need = first.best.peak + c.persist + g->max_workspace;
        rc = sw_fail(err, SW_ENOFIT, "does not fit: the optimal rematerialisation needs %s "
                     "(%lld bytes) and the budget is %s, but the %s allocator fragments memory "
                     "(%s)", sw_fmt_bytes(need, h1, sizeof h1), (long long)need,
                     sw_fmt_bytes(o->memory_budget, h2, sizeof h2), alloc, why);
    }
    if (rc)
        goto done;
    /* the account: status, objective, bound, gap (on the iteration time) */
    double total = g->total_compute_s, obj = total + so.best.recompute_s;
    double bound = obj, gap = 0;
    const char *status = "optimal";
    if (first.size > 0) {
        /* the solver's bound, or docs/bounds.md's (any plan at this budget) */
        double lb = first.solved ? total + SW_MAX(first.mr.bound, 0.0) / OR_US : total;
        bound_result br;
        sw_err e5;
        if (!bound_compute(g, o->memory_budget, g->order, &br, &e5))
            lb = SW_MAX(lb, bound_for(&br, 1, 1));
        bound = SW_MIN(lb, obj);
        gap = obj > 0 ? (obj - bound) / obj : 0;
    } else if (attempt > 0) {
        bound = total; /* the first plan re-ran nothing: the bound is the compute */
        gap = obj > 0 ? (obj - bound) / obj : 0;
    }
    if (first.size > 0 && !first.solved)
        status = "not solved (the program is larger than max_vars): the start's plan";
    else if (so.solved && so.mr.status != MILP_OPTIMAL)
        status = so.mr.status == MILP_NOSOLUTION ? "stopped by the limit before the solver's "
                                                   "first plan (the start stands)"
                                                 : "stopped by the limit";
    else if (fallback)
        status = "the allocator fragments the solver's plans: the start's own plan";
    else if (attempt > 0)
        status = "optimal for a smaller byte cap (fragmentation)";
    sw_buf b;
    sw_buf_init(&b);
    sw_buf_printf(&b, "optimal-remat: %s, objective %.12g s, bound %.12g s, gap %.4f%%; "
                  "recompute %.6f s in %d reruns; peak %lld bytes of tensors",
                  status, obj, bound, 100 * gap, so.best.recompute_s, so.best.reruns,
                  (long long)(so.best.peak + c.persist));
    if (so.solved)
        sw_buf_printf(&b, "; %s: %d variables, %d rows, %ld nodes; plan from %s",
                      so.mr.solver, so.vars, so.rows, so.mr.nodes, so.how);
    else if (first.size > 0)
        sw_buf_printf(&b, "; %lld R and S variables, max_vars=%lld; plan from %s",
                      (long long)first.size, (long long)params_int(ps, "max_vars"), so.how);
    else
        sw_buf_printf(&b, "; no solve needed (%s fits)", so.how);
    if (fallback)
        sw_buf_printf(&b, " (placed by %s itself)", first.start_name);
    else if (attempt > 0)
        sw_buf_printf(&b, "; the allocator fragmented %d plan%s: planned again for %lld bytes of "
                      "tensors", attempt, attempt > 1 ? "s" : "", (long long)(c.cap + c.persist));
    if (!strcmp(params_str(ps, "recompute"), "forward"))
        sw_buf_printf(&b, "; forward ops only (recompute=forward)");
    if (b.oom || plan_set_notes(*out, b.data)) {
        plan_free(*out);
        *out = NULL;
        rc = sw_fail(err, SW_ENOMEM, "out of memory");
    }
    sw_buf_free(&b);
done:
    plan_free(first.start);
    plan_free(so.start);
    orc_free(&c);
    return rc;
}

const planner planner_optimal_remat = {1, "optimal-remat", "Checkmate's integer program "
                                       "(Jain et al. 2020): the least recomputation of the "
                                       "profile's order within the budget, solved by CBC under "
                                       "--time-budget (incumbent and proven gap if stopped)",
                                       optimal_remat_params, plan_optimal_remat,
                                       PLANNER_SIZE_LIMIT};
