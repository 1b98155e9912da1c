/* optimal_remat.c: the `optimal-remat` planner: Checkmate's integer program
   for rematerialisation at a memory budget (Jain et al., "Checkmate:
   Breaking the Memory Wall with Optimal Tensor Rematerialization", MLSys
   2020), solved through milp/milp.h; docs/bounds.md ("optimal-remat")
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
   stage needs it resident (the least S the R allows).

   method=lp-round (auto above max_vars) is Checkmate's approximation: the
   LP relaxation (the program's own, or the coarse one of orm_build_coarse)
   solved by CLP gives a lower bound (lp_bound); its S and R are rounded,
   the least R derived for each S (orc_r_from_s), plans over the budget
   repaired (orc_repair), and the cheapest that fits, or the start, kept. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../sim/builder.h"
#include "../sim/simulate.h"
#include "../sim/bound.h"
#include "../milp/milp.h"
#include "lib/arena.h"
#include "planner.h"

static const param_def optimal_remat_params[] = {
    {"max_ops", PT_INT, "1000", "profiles with more ops that need recomputation are refused "
     "(SW_EUNSUPPORTED): the program has about T^2 variables", NULL, 1, 1e6},
    {"max_vars", PT_INT, "40000", "above this many R and S variables the exact program is not "
     "solved (CBC would not finish its first relaxation in minutes): method=auto rounds the "
     "LP relaxation instead, method=exact returns the start's plan with the gap to the lower "
     "bound of docs/bounds.md", NULL, 1, 1e9},
    {"method", PT_CHOICE, "auto", "exact: CBC's branch and bound on the integer program; "
     "lp-round: Checkmate's two-phase rounding (solve the LP relaxation, a lower bound; round "
     "its S and R, recompute what each stage then lacks, repair plans over the budget; keep "
     "the cheapest plan that fits); auto: "
     "exact up to max_vars, lp-round above", "auto|exact|lp-round", 1, 0},
    {"lp", PT_CHOICE, "auto", "lp-round's relaxation: full (the program's own), coarse (R and "
     "S only, memory at each stage's start and run, storages under cap/10^4 bytes free: "
     "far smaller, also a valid bound), or auto (full up to max_vars)", "auto|full|coarse", 1, 0},
    {"lp_method", PT_CHOICE, "dual", "how CLP solves the relaxation (lp-round)",
     "auto|dual|primal|barrier", 1, 0},
    {"rounds", PT_INT, "16", "lp-round: randomized roundings of S tried besides the "
     "thresholds (drawn from --seed)", NULL, 0, 1e6},
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
    {"solver", PT_CHOICE, "cbc", "the solver: COIN-OR CBC (CLP for the relaxation), or GLPK "
     "(slower on these programs; docs/bounds.md)", "cbc|glpk", 1, 0},
    {"solver_log", PT_BOOL, "false", "print the solver's own log on stdout", NULL, 1, 0},
    {"allocator", PT_CHOICE, "best-fit", "address allocator placing the plan",
     "first-fit|best-fit", 1, 0},
    {"alignment", PT_SIZE, "1", "placement alignment in bytes", NULL, 1, 1e9},
    PARAM_END};

#define OR_DEFAULT_TIME_S 60.0 /* solve limit when no --time-budget is given */
#define OR_US 1e6              /* objective unit: microseconds (well scaled for the solver) */
#define OR_HOWLEN 64           /* a rounding's name */
#define OR_HOLD_PASSES 3       /* orc_improve's passes over the re-runs */

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
    /* the LP relaxation (lp-round), kept across the solves at smaller caps */
    double *lpS;        /* T x ns: its S values, or NULL before the first solve */
    double *lpR;        /* T x T: its R values (0 where R has no variable) */
    double lp_obj;      /* its objective: recompute time (us), a lower bound at lp_cap */
    int64_t lp_cap;     /* the byte cap it was solved for */
    double lp_s;        /* seconds spent in the LP solves */
    int lp_solves;      /* LP solves (the first at the budget, then smaller caps) */
    int lp_vars, lp_rows;
    const char *lp_solver;
    int lp_coarse;      /* 1: the relaxation solved is the coarse one */
    int lp_bounded;     /* 1: lp_bound is set */
    double lp_bound;    /* the first relaxation's objective (us): a bound at the budget */
} orc;

typedef struct or_eval {
    int64_t peak;       /* most bytes of tracked storages resident at once */
    int32_t over;       /* the first stage where they exceed c->cap, or -1 */
    int32_t reruns;     /* re-runs */
    double recompute_s; /* their time */
} or_eval;

#define ALLOC(p, n) ((p) = sw_calloc((size_t)(n) + 1, sizeof *(p)))

static void orc_free(orc *c)
{
    void *ptrs[] = {c->st, c->sid, c->pp, c->N, c->M, c->acc_off, c->acc_c, c->acc_mk, c->nout,
                    c->elig, c->H, c->RH, c->time, c->R, c->S, c->need, c->res, c->last,
                    c->list, c->lpS, c->lpR};
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
    r->over = -1;
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
            if (cur > c->cap && r->over < 0)
                r->over = t;
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
                input_row(q->m, k < t ? Rv[k] : -1, p < t ? Rv[p] : -1, Sv[x], ridx, rval);
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

/* ---- lp-round: Checkmate's two-phase rounding ---- */

/* R from c->S (Checkmate's second phase): from the last stage back, every
   storage stage t reads (op t's inputs, a re-run's) or hands on to the next
   stage (S[t+1]) and does not hold at its start is remade by re-running its
   producer, whose inputs are then needed in turn; where the producer may not
   be re-run in stage t, the storage is held at the stage's start instead
   (S[t] = 1, which the stage before must then provide). This is the least R
   for S; orc_settle then drops what S kept and nothing needs. */
static void orc_r_from_s(orc *c)
{
    int32_t T = c->T, ns = c->ns;
    memset(c->R, 0, (size_t)Tsq(c));
    for (int32_t t = T - 1; t >= 0; t--) {
        uint8_t *Rt = c->R + (size_t)t * (size_t)T;
        uint8_t *St = c->S + (size_t)t * (size_t)ns;
        const uint8_t *Sn = t + 1 < T ? c->S + (size_t)(t + 1) * (size_t)ns : NULL;
        memset(c->need, 0, (size_t)ns);
        for (int32_t a = c->acc_off[t]; a < c->acc_off[t + 1]; a++)
            if (!c->acc_mk[a] && !St[c->acc_c[a]])
                c->need[c->acc_c[a]] = 1;
        for (int32_t x = 0; Sn && x < ns; x++)
            if (Sn[x] && !St[x] && c->pp[x] < t)
                c->need[x] = 1;
        for (int32_t k = t - 1; k >= 0; k--) {
            int any = 0;
            for (int32_t a = c->acc_off[k]; a < c->acc_off[k + 1] && !any; a++)
                any = c->acc_mk[a] && c->need[c->acc_c[a]];
            if (!any)
                continue;
            if (can_rerun(c, t, k)) {
                Rt[k] = 1;
                for (int32_t a = c->acc_off[k]; a < c->acc_off[k + 1]; a++)
                    if (c->acc_mk[a])
                        c->need[c->acc_c[a]] = 0;
                for (int32_t a = c->acc_off[k]; a < c->acc_off[k + 1]; a++)
                    if (!c->acc_mk[a] && !St[c->acc_c[a]])
                        c->need[c->acc_c[a]] = 1;
            } else {
                for (int32_t a = c->acc_off[k]; a < c->acc_off[k + 1]; a++)
                    if (c->acc_mk[a] && c->need[c->acc_c[a]]) {
                        St[c->acc_c[a]] = 1;
                        c->need[c->acc_c[a]] = 0;
                    }
            }
        }
    }
}

/* Fill the gaps of c->S that would be remade only to be held: from the last
   stage back, a storage held at the next stage's start and not read by
   this stage's op is held at this one's too (S grows instead of R). */
static void orc_hold(orc *c)
{
    int32_t T = c->T, ns = c->ns;
    for (int32_t t = T - 2; t >= 0; t--) {
        uint8_t *St = c->S + (size_t)t * (size_t)ns;
        const uint8_t *Sn = St + ns;
        for (int32_t x = 0; x < ns; x++) {
            if (!Sn[x] || St[x] || c->pp[x] >= t)
                continue;
            int reads = 0;
            for (int32_t a = c->acc_off[t]; a < c->acc_off[t + 1] && !reads; a++)
                reads = c->acc_c[a] == x;
            if (!reads)
                St[x] = 1;
        }
    }
}

/* What remaking x in stage t would cost, with St held: its producer's
   time and, recursively, that of each input not held (c->list marks the
   producers counted, with stamp); 1e30 where some producer may not be
   re-run in t. */
static double remake_cost(orc *c, int32_t t, int32_t x, const uint8_t *St, int32_t stamp)
{
    int32_t p = c->pp[x];
    if (c->list[p] == stamp)
        return 0;
    c->list[p] = stamp;
    if (!can_rerun(c, t, p))
        return 1e30;
    double sum = c->time[p];
    for (int32_t a = c->acc_off[p]; a < c->acc_off[p + 1] && sum < 1e29; a++)
        if (!c->acc_mk[a] && !St[c->acc_c[a]])
            sum += remake_cost(c, t, c->acc_c[a], St, stamp);
    return sum;
}

/* The plan of c->S (through orc_r_from_s), repaired until it fits c->cap:
   at the first stage that overflows, of the storages held at its start the
   one with the least (S* + 0.05) x remaking time (its producer's and, in
   turn, that of inputs not held) per byte and per stage until its next use
   (DTR's heuristic, weighted by the relaxation) is dropped, eight times
   dearer if the stage uses it (nu: scratch, per storage): an unused one until the next stage that reads it,
   which remakes it; a used one at this stage only, which remakes it before
   its use. Then R is derived again. Returns 0 with *ev
   (c->R, c->S settled) when it fits, -1 when nothing can be dropped or
   after max_iter drops. */
static int orc_repair(orc *c, const double *lpS, int32_t *nu, or_eval *ev, int32_t max_iter)
{
    int32_t T = c->T, ns = c->ns;
    for (int32_t it = 0;; it++) {
        orc_r_from_s(c);
        if (orc_settle(c) || orc_replay(c, NULL, ev))
            return -1;
        if (ev->peak <= c->cap)
            return 0;
        if (it >= max_iter || ev->over < 0)
            return -1;
        int32_t t = ev->over;
        uint8_t *St = c->S + (size_t)t * (size_t)ns;
        /* c->last as a mark: the storages stage t touches */
        const uint8_t *Rt = c->R + (size_t)t * (size_t)T;
        for (int32_t x = 0; x < ns; x++)
            c->last[x] = 0;
        for (int32_t k = 0; k <= t; k++)
            if (k == t || Rt[k])
                for (int32_t a = c->acc_off[k]; a < c->acc_off[k + 1]; a++)
                    c->last[c->acc_c[a]] = 1;
        /* the next stage (>= t) that touches each held storage; c->need marks
           those still unfound */
        int32_t left = 0;
        for (int32_t x = 0; x < ns; x++) {
            c->need[x] = St[x] != 0;
            nu[x] = T;
            left += St[x] != 0;
        }
        for (int32_t v = t; v < T && left > 0; v++) {
            const uint8_t *Rv = c->R + (size_t)v * (size_t)T;
            for (int32_t k = 0; k <= v; k++) {
                if (k < v && !Rv[k])
                    continue;
                for (int32_t a = c->acc_off[k]; a < c->acc_off[k + 1]; a++) {
                    int32_t x = c->acc_c[a];
                    if (c->need[x]) {
                        c->need[x] = 0;
                        nu[x] = v;
                        left--;
                    }
                }
            }
        }
        int32_t dropped = -1;
        for (int32_t k = 0; k < T; k++)
            c->list[k] = -1;
        int32_t stamp = 0;
        for (;;) {
            int32_t best = -1;
            double bs = 0;
            for (int32_t x = 0; x < ns; x++) {
                if (!St[x] || c->last[x] == 2)
                    continue;
                double cost = remake_cost(c, t, x, St, stamp++);
                if (cost >= 1e29)
                    continue;
                double v = lpS ? SW_MAX(lpS[(size_t)t * (size_t)ns + (size_t)x], 0.0) : 1;
                double sc = (v + 0.05) * (cost + 1e-9) /
                            ((double)c->M[x] * (double)(nu[x] - t + 1)) * (c->last[x] ? 8 : 1);
                if (best < 0 || sc < bs) {
                    best = x;
                    bs = sc;
                }
            }
            if (best < 0)
                break;
            int used = c->last[best] == 1;
            c->last[best] = 2; /* tried */
            int32_t u = used ? t : nu[best];
            if (u >= T || !can_rerun(c, u, c->pp[best]))
                continue;
            for (int32_t v = t; v <= u; v++)
                c->S[(size_t)v * (size_t)ns + (size_t)best] = 0;
            dropped = best;
            break;
        }
        if (dropped < 0)
            return -1;
    }
}

/* Hold instead of re-run where the bytes allow: for each re-run of the
   settled plan in c->R, of the dearest ops first, its outputs are held from
   where they last were up to the stage that re-ran them, and R derived
   again; kept where the plan still fits c->cap and costs less (passes
   while something is kept, OR_HOLD_PASSES at most). *ev is the
   plan's figures, in and out. Returns the changes kept, or -1 when out of
   memory. */
static int orc_improve(orc *c, or_eval *ev)
{
    int32_t T = c->T, ns = c->ns;
    size_t n = (size_t)T * (size_t)ns;
    uint8_t *S1 = sw_malloc(n + 1), *R1 = sw_malloc((size_t)Tsq(c) + 1);
    int32_t *ord = sw_malloc(((size_t)T + 1) * sizeof *ord);
    if (!S1 || !R1 || !ord) {
        sw_free(S1), sw_free(R1), sw_free(ord);
        return -1;
    }
    /* ops by time, dearest first (insertion sort: ties keep the order) */
    for (int32_t i = 0; i < T; i++) {
        int32_t j = i;
        while (j > 0 && c->time[ord[j - 1]] < c->time[i]) {
            ord[j] = ord[j - 1];
            j--;
        }
        ord[j] = i;
    }
    int kept = 0, before = -1;
    for (int pass = 0; pass < OR_HOLD_PASSES && kept > before; pass++) {
    before = kept;
    for (int32_t i = 0; i < T; i++) {
        int32_t k = ord[i];
        if (!c->elig[k])
            continue;
        for (int32_t t = k + 1; t < T; t++) {
            if (!c->R[(size_t)t * (size_t)T + (size_t)k])
                continue;
            memcpy(S1, c->S, n);
            memcpy(R1, c->R, (size_t)Tsq(c));
            for (int32_t a = c->acc_off[k]; a < c->acc_off[k + 1]; a++) {
                if (!c->acc_mk[a])
                    continue;
                int32_t x = c->acc_c[a], u = t;
                while (u - 1 > k && !c->S[(size_t)(u - 1) * (size_t)ns + (size_t)x] &&
                       !c->R[(size_t)(u - 1) * (size_t)T + (size_t)k])
                    u--;
                for (int32_t w = u; w <= t && w <= c->N[x]; w++)
                    c->S[(size_t)w * (size_t)ns + (size_t)x] = 1;
            }
            orc_r_from_s(c);
            or_eval e2;
            if (!orc_settle(c) && !orc_replay(c, NULL, &e2) && e2.peak <= c->cap &&
                e2.recompute_s < ev->recompute_s) {
                *ev = e2;
                kept++;
            } else {
                memcpy(c->S, S1, n);
                memcpy(c->R, R1, (size_t)Tsq(c));
            }
        }
    }
    }
    sw_free(S1), sw_free(R1), sw_free(ord);
    return kept;
}

/* splitmix64: the roundings' random numbers, from the seed alone. */
static uint64_t or_rand(uint64_t *z)
{
    uint64_t x = (*z += 0x9e3779b97f4a7c15ULL);
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
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
static int orm_build_coarse(orc *c, orm *q, int64_t tiny)
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
static int or_lp(orc *c, const planner_opts *o, double deadline, milp_status *st, sw_err *err)
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

#define OR_THRESHOLDS 11 /* deterministic thresholds tried per relaxation */

/* Round c->lpS into plans (thresholds, then `rounds` random draws S = 1 with
   probability S*); the cheapest that fits c->cap goes to bestR / *best.
   Returns the candidates that fit; *won = 1 and *how naming the rounding
   where one beats *best (or is the first, without have). */
static int or_round(orc *c, const planner_opts *o, uint8_t *bestR, or_eval *best, int have,
                    char *how, size_t howlen, int *tried, int *won, double *rbest, char *rhow,
                    uint8_t *rbestR)
{
    static const double thr[OR_THRESHOLDS] = {0.01, 0.05, 0.1, 0.2, 0.3, 0.4,
                                              0.5,  0.6,  0.7, 0.8, 0.9};
    int32_t rounds = (int32_t)params_int(&o->params, "rounds");
    uint64_t z = (uint64_t)o->seed * 0x2545f4914f6cdd1dULL + 17;
    size_t n = (size_t)c->T * (size_t)c->ns;
    int fits = 0;
    uint8_t *S0 = sw_malloc(n + 1); /* the rounding, for its second repair */
    int32_t *nu = sw_malloc(((size_t)c->ns + 1) * sizeof *nu); /* orc_repair's scratch */
    if (!S0 || !nu) {
        sw_free(S0);
        sw_free(nu);
        return 0;
    }
    for (int32_t i = 0; i < 2 * OR_THRESHOLDS + rounds; i++) {
        if (i >= OR_THRESHOLDS && i < 2 * OR_THRESHOLDS) {
            /* R >= threshold, the least S it needs */
            double u = thr[i - OR_THRESHOLDS];
            for (size_t j = 0; j < (size_t)Tsq(c); j++)
                c->R[j] = c->lpR[j] > 1e-6 && c->lpR[j] >= u;
            if (orc_settle(c))
                continue;
        } else {
            for (size_t j = 0; j < n; j++) {
                double v = c->lpS[j];
                double u = i < OR_THRESHOLDS ? thr[i]
                                             : (double)(or_rand(&z) >> 11) *
                                                   (1.0 / 9007199254740992.0);
                c->S[j] = v > 1 - 1e-6 || (v > 1e-6 && (i < OR_THRESHOLDS ? v >= u : v > u));
            }
        }
        memcpy(S0, c->S, n);
        for (int hold = 0; hold < 2; hold++) {
            if (hold) {
                memcpy(c->S, S0, n);
                orc_hold(c);
            }
            or_eval ev;
            (*tried)++;
            int bad = orc_repair(c, c->lpS, nu, &ev, 4 * c->ns);
            if (bad)
                continue;
            fits++;
            char h[OR_HOWLEN];
            if (i < OR_THRESHOLDS)
                snprintf(h, sizeof h, "rounding S >= %.2f%s", thr[i], hold ? ", held" : "");
            else if (i < 2 * OR_THRESHOLDS)
                snprintf(h, sizeof h, "rounding R >= %.2f%s", thr[i - OR_THRESHOLDS],
                         hold ? ", held" : "");
            else
                snprintf(h, sizeof h, "random rounding of S %d of %d%s",
                         i - 2 * OR_THRESHOLDS + 1, rounds, hold ? ", held" : "");
            if (*rbest < 0 || ev.recompute_s < *rbest) {
                *rbest = ev.recompute_s;
                snprintf(rhow, OR_HOWLEN, "%s", h);
                memcpy(rbestR, c->R, (size_t)Tsq(c));
            }
            if (!have || ev.recompute_s < best->recompute_s) {
                *best = ev;
                have = 1;
                *won = 1;
                memcpy(bestR, c->R, (size_t)Tsq(c));
                snprintf(how, howlen, "%s", h);
            }
        }
    }
    sw_free(S0);
    sw_free(nu);
    return fits;
}

/* ---- the planner ---- */

/* Record c->R (settled) into a plan placed in the budget. */
static int or_build(orc *c, const planner_opts *o, const char *fit_name, plan **out, sw_err *err)
{
    const graph_profile *g = c->g;
    plan_builder *b = arena_builder(g, o, fit_name);
    if (!b)
        return sw_fail(err, SW_ENOMEM, "out of memory");
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
    return rc;
}

/* A start from planner pl's plan at budget: 0 and *e filled if it reads
   as stages and fits the program's accounting (c->cap). */
static int start_from(orc *c, const graph_profile *g, const planner_opts *o, int64_t budget,
                      const planner *pl, const char *const *kv, or_eval *e, plan **keep)
{
    *keep = NULL;
    planner_opts po;
    sw_err ignore;
    if (planner_opts_derive(&po, pl, o, budget, kv, &ignore))
        return -1;
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
    int lp;             /* 1: lp-round (the fields below valid) */
    milp_status lp_status; /* the first relaxation's */
    int tried, fits;    /* roundings tried, that fit the cap */
    int lp_retries;     /* relaxations solved again for less memory */
    char how_buf[2 * OR_HOWLEN]; /* the winning rounding, or the start, and holds */
    int from_start;     /* 1: the plan is the start's (before holds) */
    double round_best;  /* the cheapest rounding's recompute time (s), -1: none fits */
    char round_how[OR_HOWLEN]; /* and which it was */
} or_solve_out;

#define OR_LP_RETRIES 4 /* relaxations at 90%, 81% ... of the cap when no rounding fits */

/* lp-round at c->cap: the relaxation (solved once, kept), its roundings, and
   Checkmate's retry at a smaller cap when none fits; the cheapest of them
   and the start (have: bestR, so->best) ends in c->R (settled). */
static int or_lpround(orc *c, const graph_profile *g, const planner_opts *o, double deadline,
                      or_solve_out *so, uint8_t *bestR, int have, sw_err *err)
{
    char h1[32], h2[32];
    so->lp = 1;
    so->lp_status = MILP_OPTIMAL;
    so->round_best = -1;
    int64_t cap = c->cap;
    int rc;
    if (!c->lpS) {
        milp_status st = MILP_NOSOLUTION;
        if ((rc = or_lp(c, o, deadline, &st, err)))
            return rc;
        so->lp_status = st;
        if (st == MILP_INFEASIBLE) {
            int64_t budget = c->cap + c->persist + g->max_workspace;
            return sw_fail(err, SW_ENOFIT, "does not fit: no rematerialisation of the profile's "
                           "order fits %s (%lld bytes; %s of it for the persistent storages and "
                           "the largest workspace): the linear relaxation is infeasible",
                           sw_fmt_bytes(budget, h1, sizeof h1), (long long)budget,
                           sw_fmt_bytes(c->persist + g->max_workspace, h2, sizeof h2));
        }
        if (st == MILP_OPTIMAL && !c->lp_bounded) {
            c->lp_bounded = 1;
            c->lp_bound = c->lp_obj;
        }
    }
    uint8_t *rbestR = sw_malloc((size_t)Tsq(c) + 1); /* the cheapest rounding's R */
    if (!rbestR)
        return sw_fail(err, SW_ENOMEM, "out of memory");
    for (int retry = 0; c->lpS; retry++) {
        int won = 0;
        so->fits += or_round(c, o, bestR, &so->best, have, so->how_buf, sizeof so->how_buf,
                             &so->tried, &won, &so->round_best, so->round_how, rbestR);
        if (won) {
            so->how = so->how_buf;
            have = 1;
        }
        if (so->fits || retry >= OR_LP_RETRIES || sw_now() > deadline)
            break;
        /* nothing fits: the relaxation again for less memory (Checkmate) */
        milp_status st = MILP_NOSOLUTION;
        c->cap = c->lp_cap - c->lp_cap / 10;
        rc = or_lp(c, o, deadline, &st, err);
        c->cap = cap;
        if (rc) {
            sw_free(rbestR);
            return rc;
        }
        so->lp_retries++;
        if (st != MILP_OPTIMAL)
            break;
    }
    if (!have)
        sw_free(rbestR);
    if (!have && c->lpS)
        return sw_fail(err, SW_ENOFIT, "does not fit: no rounding of the LP relaxation fits "
                       "%s, and neither dtr nor sublinear has a plan (the relaxation is feasible: "
                       "method=exact says whether the program is)",
                       sw_fmt_bytes(c->cap + c->persist + g->max_workspace, h1, sizeof h1));
    if (!have)
        return sw_fail(err, SW_EEXCEEDED, "exceeded: the time limit ended the LP relaxation's "
                       "solve, and there is no start");
    /* the cheapest rounding, improved by holds: the best plan if cheaper */
    or_eval ev;
    if (so->round_best >= 0) {
        memcpy(c->R, rbestR, (size_t)Tsq(c));
        int kept = orc_settle(c) || orc_replay(c, NULL, &ev) ? 0 : orc_improve(c, &ev);
        if (kept < 0) {
            sw_free(rbestR);
            return sw_fail(err, SW_ENOMEM, "out of memory");
        }
        if (kept > 0) {
            so->round_best = ev.recompute_s;
            size_t l = strlen(so->round_how);
            snprintf(so->round_how + l, OR_HOWLEN - l, ", %d held", kept);
            if (ev.recompute_s < so->best.recompute_s) {
                so->best = ev;
                memcpy(bestR, c->R, (size_t)Tsq(c));
                snprintf(so->how_buf, sizeof so->how_buf, "%s", so->round_how);
                so->how = so->how_buf;
            }
        }
    }
    sw_free(rbestR);
    memcpy(c->R, bestR, (size_t)Tsq(c));
    orc_settle(c);
    so->from_start = so->how != so->how_buf;
    if (so->from_start && !orc_replay(c, NULL, &ev)) {
        int kept = orc_improve(c, &ev);
        if (kept < 0)
            return sw_fail(err, SW_ENOMEM, "out of memory");
        if (kept > 0 && ev.recompute_s < so->best.recompute_s) {
            char h[OR_HOWLEN];
            snprintf(h, sizeof h, "%s", so->how ? so->how : "?");
            snprintf(so->how_buf, sizeof so->how_buf, "%s, %d re-run%s held instead", h, kept,
                     kept == 1 ? "" : "s");
            so->how = so->how_buf;
            so->best = ev;
        } else {
            memcpy(c->R, bestR, (size_t)Tsq(c));
            orc_settle(c);
        }
    }
    return 0;
}

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
        static const char *const sub_kv[] = {"mode=budget", NULL};
        const planner *cand[2] = {&planner_dtr, &planner_sublinear};
        const char *const *kvs[2] = {NULL, sub_kv};
        int64_t budget = c->cap + c->persist + g->max_workspace;
        for (int i = 0; i < 2; i++) {
            plan *hp = NULL;
            if (!start_from(c, g, o, budget, cand[i], kvs[i], &ev, &hp) &&
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
    const char *method = params_str(ps, "method");
    if (!strcmp(method, "lp-round") ||
        (!strcmp(method, "auto") && size > params_int(ps, "max_vars"))) {
        so->how = start_name;
        rc = or_lpround(c, g, o, deadline, so, bestR, have, err);
        goto done;
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
    mo.backend = milp_backend_find(params_str(ps, "solver")) == MILP_GLPK ? MILP_GLPK
                                                                         : MILP_CBC;
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
    /* lp-round: the start's own plan (as its planner placed it) where the
       rounding is dearer than it; the accounting's replay of it can be */
    int own = 0;
    if (!rc && first.lp && first.start) {
        double rec = 0;
        for (int32_t t = 0; t < first.start->n_tasks; t++)
            if (first.start->tasks[t].kind == TASK_RERUN)
                rec += g->ops[first.start->tasks[t].op].time_s;
        if (rec < so.best.recompute_s) {
            plan_free(*out);
            *out = NULL;
            rc = SW_ENOFIT;
            own = 1;
        }
    }
    if (rc == SW_ENOFIT && first.start) {
        *out = first.start;
        first.start = NULL;
        fallback = 1;
        plan_free(so.start);
        so = first;
        so.start = NULL;
        so.how = first.start_name;
        so.from_start = 1;
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
        if (c.lp_bounded)
            lb = SW_MAX(lb, total + c.lp_bound / OR_US);
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
    if (first.lp)
        status = !c.lp_bounded               ? "the relaxation stopped by the limit (the start "
                                               "stands)"
                 : obj - bound <= 1e-9 * obj ? "optimal"
                 : !so.from_start            ? "rounded from the relaxation"
                                             : "the start beats the roundings";
    else if (first.size > 0 && !first.solved)
        status = "not solved (the program is larger than max_vars): the start's plan";
    else if (so.solved && so.mr.status != MILP_OPTIMAL)
        status = so.mr.status == MILP_NOSOLUTION ? "stopped by the limit before the solver's "
                                                   "first plan (the start stands)"
                                                 : "stopped by the limit";
    else if (fallback)
        status = "the allocator fragments the solver's plans: the start's own plan";
    else if (attempt > 0)
        status = "lowered memory"; /* optimal for a smaller byte cap only (fragmentation) */
    /* "optimal" only where the simulator agrees with the program's model */
    char simst[128];
    sim_result sr;
    sw_err es;
    if (!strcmp(status, "optimal") && obj > 0 && !sim_plan(*out, NULL, NULL, &sr, &es) &&
        fabs(sr.iteration_time_s - obj) > 1e-6 * obj) {
        snprintf(simst, sizeof simst, "optimal in the recomputation model; simulated %.3g%% %s "
                 "the objective", 100 * fabs(sr.iteration_time_s - obj) / obj,
                 sr.iteration_time_s > obj ? "above" : "below");
        status = simst;
    }
    sw_buf b;
    sw_buf_init(&b);
    sw_buf_printf(&b, "optimal-remat: %s, objective %.12g s, bound %.12g s, gap %.4f%%; "
                  "recompute %.6f s in %d reruns; peak %lld bytes of tensors",
                  status, obj, bound, 100 * gap, so.best.recompute_s, so.best.reruns,
                  (long long)(so.best.peak + c.persist));
    if (first.lp) {
        sw_buf_printf(&b, "; method lp-round: ");
        if (c.lp_bounded)
            sw_buf_printf(&b, "lp_bound %.12g s, ", total + c.lp_bound / OR_US);
        sw_buf_printf(&b, "%s relaxation, %s %s, %d variables, %d rows, %d solve%s in %.2f s",
                      c.lp_coarse ? "coarse" : "full", c.lp_solver ? c.lp_solver : "clp",
                      params_str(ps, "lp_method"),
                      c.lp_vars, c.lp_rows, c.lp_solves, c.lp_solves == 1 ? "" : "s", c.lp_s);
        if (first.lp_retries + so.lp_retries)
            sw_buf_printf(&b, " (%d again for less memory: no rounding fit)",
                          first.lp_retries + (attempt ? so.lp_retries : 0));
        sw_buf_printf(&b, "; %d of %d roundings fit", so.fits, so.tried);
        if (so.round_best >= 0)
            sw_buf_printf(&b, ", the cheapest (%s) %.12g s", so.round_how,
                          total + so.round_best);
        sw_buf_printf(&b, "; plan from %s", so.how);
    } else if (so.solved)
        sw_buf_printf(&b, "; method exact, %s: %d variables, %d rows, %ld nodes; plan from %s",
                      so.mr.solver, so.vars, so.rows, so.mr.nodes, so.how);
    else if (first.size > 0)
        sw_buf_printf(&b, "; method exact, %lld R and S variables, max_vars=%lld; plan from %s",
                      (long long)first.size, (long long)params_int(ps, "max_vars"), so.how);
    else
        sw_buf_printf(&b, "; no solve needed (%s fits)", so.how);
    if (fallback && own)
        sw_buf_printf(&b, " (%s's own plan: cheaper than its replay as stages)",
                      first.start_name);
    else if (fallback)
        sw_buf_printf(&b, " (placed by %s itself)", first.start_name);
    else if (attempt > 0)
        sw_buf_printf(&b, "; the allocator fragmented %d plan%s: planned again for %lld bytes of "
                      "tensors (memory lowered from %lld: the plan is the optimum at the "
                      "lowered memory only, not proven at the requested budget; the bound "
                      "holds at the budget)", attempt, attempt > 1 ? "s" : "",
                      (long long)(c.cap + c.persist), (long long)(cap0 + c.persist));
    if (!strcmp(params_str(ps, "recompute"), "forward"))
        sw_buf_printf(&b, "; forward ops only (recompute=forward)");
    if (b.oom || plan_set_notes(*out, b.data) || plan_set_solver(*out, status, obj, bound, gap)) {
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
                                       "--time-budget (incumbent and proven gap if stopped); "
                                       "above max_vars, the rounding of its LP relaxation "
                                       "(lp_bound and gap)",
                                       optimal_remat_params, plan_optimal_remat,
                                       PLANNER_SIZE_LIMIT};
