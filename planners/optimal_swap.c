/* optimal_swap.c: the `optimal-swap` planner: the best swapping plan for the
   profile's schedule, as a mixed-integer program (milp/milp.h) over
   stages, one stage per op of the schedule (docs/bounds.md, "optimal-swap").

   In stage j op j runs while the host-to-device stream copies what later
   ops need and then the device-to-host stream copies out (or drops) what
   they do not; the plan's extra edges make every stage start when the
   previous one has finished, so stage j lasts exactly
       max(time of op j, sum over its swap-ins (latency + bytes / h2d rate)
                       + sum over its swap-outs (latency + bytes / d2h rate))
   in the simulator, and the simulated iteration time equals the program's
   objective, the sum of the stage lengths. Every storage may leave the GPU
   once in each gap between two of its accesses (persistent storages also
   in the gap around the iteration's end): copied out (or dropped, where
   the host copy is current) in one stage of the gap, brought back in a
   later one; memory is counted per stage as the simulator and the verifier
   count it, against the budget less the largest workspace. The decisions
   are placed by an offline packing of the residencies into one address
   range (fragmentation is the packer's: when it overflows the range, the
   program is solved again with less memory, and the notes say so). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_rng.h>

#include "../sim/builder.h"
#include "../sim/simulate.h"
#include "../milp/milp.h"
#include "planner.h"
#include "swap_util.h"
#include "lib/schedule.h"

static const param_def osw_params[] = {
    {"max_ops", PT_INT, "60", "refuse profiles with more ops than this (the program grows with "
     "ops x storages x gap lengths)", NULL, 1, 1e6},
    {"gap", PT_FLOAT, "0", "relative optimality gap at which the solver may stop (0: prove the "
     "optimum)", NULL, 0, 1},
    {"time_limit", PT_SECONDS, "120s", "solver time limit when no --time-budget is given", NULL,
     0, 1e9},
    {"max_nodes", PT_INT, "0", "branch-and-bound node limit (0: none); unlike a time limit, a "
     "node limit stops the solve at the same incumbent every run", NULL, 0, 1e12},
    {"model", PT_CHOICE, "auto", "span: copies may span ops, op and copy times continuous "
     "(event model); stage: no copy spans a stage (the older model); auto: solve both, each "
     "with half the time, and keep the plan that simulates faster", "auto|span|stage", 1, 0},
    {"solver", PT_CHOICE, "cbc", "the integer-program solver: COIN-OR CBC, or GLPK (slower on "
     "these programs; docs/bounds.md)", "cbc|glpk", 1, 0},
    {"schedules", PT_INT, "1", "solve for this many distinct schedules, each with an equal share "
     "of the time, and keep the plan that simulates fastest: the profile's order, then the "
     "framework's (a dataflow engine, first-in first-out), then random topological orders (each "
     "step a uniformly drawn ready op) from --seed; the bound reported is the least over them", NULL, 1, 64},
    PARAM_END};

/* One possible round trip of a storage: out in one stage of the gap between
   two accesses, back in in a later one. Stages are schedule positions,
   unwrapped: a gap around the iteration's end has hi >= n. */
typedef struct osw_win {
    int32_t s;      /* the storage */
    int32_t lo, hi; /* the accesses around the gap (schedule positions) */
    int32_t gap;    /* the gap's index among the storage's gaps (its accesses' order) */
    int wrap;       /* 1: the gap around the iteration's end */
    int v_w;        /* var: the round trip is taken (continuous, = sum of outs = sum of ins) */
    int v_oc;       /* vars: copy out in stage lo+1+i, i < hi-lo-2 */
    int v_od;       /* vars: drop in stage od_lo+i, i <= od_hi-od_lo; -1: no drop allowed */
    int32_t od_lo, od_hi;
    int v_in;       /* vars: swap in in stage lo+2+i, i < hi-lo-2 */
    int v_r;        /* vars: off the GPU during stage lo+2+i, i < hi-lo-3 (continuous) */
    /* span model (op indices, unwrapped: a wrap window's hop >= ops) */
    int32_t lop, hop;      /* the ops of the accesses around the gap */
    int v_eo, v_ei;        /* vars: the d2h and h2d stream cursors after this window's copies */
    int32_t out_op, in_op; /* the solution: out done before op out_op starts, in starts after
                              op in_op - 1 ends (unwrapped), -1: not taken */
    /* the solution */
    int32_t out_at, in_at; /* unwrapped stages, -1: not taken */
    int drop;              /* the out is a drop */
} osw_win;

/* Decision sets the span model excludes, one by one, when their packing
   overflows, before it solves again with less memory. */
#define OSW_CUTS 2 /* (the time rule below assumes at most 2) */

/* Perturbed orders the packing tries beside the three plain ones. */
#define OSW_PACK_TRIES 40

/* A residency to place: one storage, one or two stage intervals
   (inclusive), one offset. */
typedef struct osw_item {
    int32_t s;
    int64_t bytes;
    int32_t a0, b0, a1, b1; /* intervals [a0,b0] and [a1,b1] (a1 < 0: none) */
    int64_t off;
    int lead;               /* span model: brought back by a trip around the iteration's end
                               whose in starts before the end: the storage's first placement */
    int32_t key;            /* a rotation's order: -1 across the cut, else start after it */
} osw_item;

typedef struct osw {
    const graph_profile *g;
    int32_t n;             /* stages: 2 per op (copies alone, then the op with copies) */
    int32_t n_ops;         /* ops */
    int32_t *order, *pos;  /* the schedule, each op's position */
    int32_t *uoff, *upos;  /* per storage: its distinct access positions (CSR) */
    uint8_t *udirty;       /* per access: creates or mutates the storage */
    int32_t *death;        /* per storage: graph_lifetimes death */
    osw_win *win;
    int32_t n_win;
    size_t cap_win;
    int32_t *win_off;      /* per storage: its windows (CSR over win, in gap order) */
    double tau;            /* the time unit of the program (s) */
    double rate_h, rate_d, lat; /* alone copy rates (B/s), latency (s) */
    int64_t cap;           /* arena bytes the decisions must fit */
    /* placement */
    osw_item *item;
    int32_t n_item;
    size_t cap_item;
    int32_t *qoff, *qitem, *qcur; /* per storage: the items its placements take, in order */
    int32_t n_q;
    /* span model */
    int span;              /* 1: the span model (copies may span ops), 0: the stage model */
    int v_s;               /* vars: op i of the schedule starts at v_s + i (s / tau) */
    int v_p;               /* var: the iteration time (s / tau), the objective */
    int32_t *ord_in, *ord_out; /* the windows in h2d and d2h stream order */
} osw;

static void osw_free(osw *x)
{
    sw_free(x->order);
    sw_free(x->pos);
    sw_free(x->uoff);
    sw_free(x->upos);
    sw_free(x->udirty);
    sw_free(x->death);
    sw_free(x->win);
    sw_free(x->win_off);
    sw_free(x->item);
    sw_free(x->qoff);
    sw_free(x->qitem);
    sw_free(x->qcur);
    sw_free(x->ord_in);
    sw_free(x->ord_out);
}

static int is_storage(const graph_profile *g, int32_t s) { return g->tensors[s].storage == s; }

/* The op running in stage st, or -1 in a copy-only stage (the even ones:
   stage 2i precedes op i of the schedule, stage 2i + 1 runs it). */
static int32_t stage_op(const osw *x, int32_t st) { return st % 2 ? x->order[st / 2] : -1; }

/* A persistent storage the iteration accesses: live throughout. */
static int osw_persistent(const osw *x, int32_t s)
{
    return x->g->tensors[s].persistent && x->uoff[s + 1] > x->uoff[s];
}

/* Accesses of every storage in schedule positions, deduplicated, with
   whether each creates or mutates it. */
static int osw_accesses(osw *x, sw_err *err)
{
    const graph_profile *g = x->g;
    int32_t nt = g->n_tensors, n = x->n_ops;
    size_t na = (size_t)g->acc_off[g->n_ops];
    x->uoff = sw_calloc((size_t)nt + 2, sizeof *x->uoff);
    x->upos = sw_malloc((na + 1) * sizeof *x->upos);
    x->udirty = sw_calloc(na + 1, 1);
    x->death = sw_malloc(((size_t)nt + 1) * sizeof *x->death);
    if (!x->uoff || !x->upos || !x->udirty || !x->death)
        return sw_fail(err, SW_ENOMEM, "out of memory");
    if (graph_lifetimes(g, x->order, x->pos, x->death, NULL, NULL, NULL))
        return sw_fail(err, SW_EINVAL, "the profile's order is not a permutation of its ops");
    for (int32_t s = 0; s < nt; s++) /* positions to stages */
        x->death[s] = x->death[s] >= 0 ? 2 * x->death[s] + 1 : -1;
    for (int32_t i = 0; i < n; i++) {
        int32_t o = x->order[i];
        for (int32_t k = g->acc_off[o]; k < g->acc_off[o + 1]; k++)
            x->uoff[g->acc[k] + 1]++;
    }
    for (int32_t s = 0; s < nt; s++)
        x->uoff[s + 1] += x->uoff[s];
    int32_t *fill = sw_calloc((size_t)nt + 1, sizeof *fill);
    if (!fill)
        return sw_fail(err, SW_ENOMEM, "out of memory");
    for (int32_t i = 0; i < n; i++) {
        int32_t o = x->order[i];
        for (int32_t k = g->acc_off[o]; k < g->acc_off[o + 1]; k++) {
            int32_t s = g->acc[k];
            int32_t at = x->uoff[s] + fill[s];
            uint8_t d = (g->acc_flag[k] & (GA_CREATE | GA_MUTATE)) != 0;
            if (fill[s] > 0 && x->upos[at - 1] == 2 * i + 1) { /* the same op again */
                x->udirty[at - 1] |= d;
                continue;
            }
            x->upos[at] = 2 * i + 1; /* the op's stage */
            x->udirty[at] = d;
            fill[s]++;
        }
    }
    /* compact: distinct accesses only */
    int32_t w = 0;
    for (int32_t s = 0; s < nt; s++) {
        int32_t from = x->uoff[s];
        x->uoff[s] = w;
        for (int32_t k = 0; k < fill[s]; k++, w++) {
            x->upos[w] = x->upos[from + k];
            x->udirty[w] = x->udirty[from + k];
        }
    }
    x->uoff[nt] = w;
    sw_free(fill);
    return 0;
}

/* ---- the program ---- */

typedef struct term_list {
    int *idx;
    double *val;
    size_t n, cap, cap2;
} term_list;

static int tl_add(term_list *t, int i, double v)
{
    if (SW_GROW(t->idx, t->cap, t->n + 1) || SW_GROW(t->val, t->cap2, t->n + 1))
        return -1;
    t->idx[t->n] = i;
    t->val[t->n++] = v;
    return 0;
}

static void tl_free(term_list *t, int32_t n)
{
    if (!t)
        return;
    for (int32_t i = 0; i < n; i++) {
        sw_free(t[i].idx);
        sw_free(t[i].val);
    }
    sw_free(t);
}

static int add_window(osw *x, int32_t s, int32_t lo, int32_t hi, int32_t gap, int wrap)
{
    if (hi - lo < 3)
        return 0; /* no stage to copy out in before one to copy in */
    if (SW_GROW(x->win, x->cap_win, (size_t)x->n_win + 1))
        return -1;
    osw_win *w = &x->win[x->n_win++];
    memset(w, 0, sizeof *w);
    w->s = s;
    w->lo = lo;
    w->hi = hi;
    w->gap = gap;
    w->wrap = wrap;
    w->v_od = -1;
    w->out_at = w->in_at = -1;
    return 0;
}

/* The windows of every storage with bytes. */
static int osw_windows(osw *x, sw_err *err)
{
    const graph_profile *g = x->g;
    int32_t nt = g->n_tensors, n = x->n;
    x->win_off = sw_calloc((size_t)nt + 1, sizeof *x->win_off);
    if (!x->win_off)
        return sw_fail(err, SW_ENOMEM, "out of memory");
    for (int32_t s = 0; s < nt; s++) {
        x->win_off[s] = x->n_win;
        int32_t u0 = x->uoff[s], m = x->uoff[s + 1] - u0;
        if (!is_storage(g, s) || m == 0)
            continue;
        const graph_tensor *t = &g->tensors[s];
        if (!t->persistent && t->producer < 0)
            return sw_fail(err, SW_EUNSUPPORTED, "optimal-swap: tensor %d '%s' exists before "
                           "the iteration but is not persistent (not modelled)", s, t->name);
        if (t->persistent && t->producer >= 0)
            return sw_fail(err, SW_EUNSUPPORTED, "optimal-swap: persistent tensor %d '%s' is "
                           "made by an op (not modelled)", s, t->name);
        if (g->bytes[s] <= 0)
            continue;
        for (int32_t k = 0; k + 1 < m; k++)
            if (add_window(x, s, x->upos[u0 + k], x->upos[u0 + k + 1], k, 0))
                return sw_fail(err, SW_ENOMEM, "out of memory");
        if (t->persistent && add_window(x, s, x->upos[u0 + m - 1], x->upos[u0] + n, m - 1, 1))
            return sw_fail(err, SW_ENOMEM, "out of memory");
    }
    x->win_off[nt] = x->n_win;
    return 0;
}

/* The window of storage s in gap k, or NULL. */
static osw_win *win_at(osw *x, int32_t s, int32_t k)
{
    for (int32_t i = x->win_off[s]; i < x->win_off[s + 1]; i++)
        if (x->win[i].gap == k)
            return &x->win[i];
    return NULL;
}

/* A round trip is taken (w->v_w) exactly when one copy-out or drop, and one
   copy-in, of window w is: two rows over its len stage variables. idx and
   val hold at least 2 * len + drop stages + 1 entries. */
static void trip_rows(milp *m, const osw_win *w, int32_t len, int *idx, double *val)
{
    int nz = 0;
    for (int32_t k = 0; k < len; k++) {
        idx[nz] = w->v_oc + k;
        val[nz++] = 1;
    }
    if (w->v_od >= 0)
        for (int32_t a = w->od_lo; a <= w->od_hi; a++) {
            idx[nz] = w->v_od + (a - w->od_lo);
            val[nz++] = 1;
        }
    idx[nz] = w->v_w;
    val[nz++] = -1;
    milp_row(m, 0, 0, nz, idx, val);
    nz = 0;
    for (int32_t k = 0; k < len; k++) {
        idx[nz] = w->v_in + k;
        val[nz++] = 1;
    }
    idx[nz] = w->v_w;
    val[nz++] = -1;
    milp_row(m, 0, 0, nz, idx, val);
}

/* Where a drop is allowed (the host copy may be current): the stages of
   the window's out range that can be drops, and the row that says when. */
static int drop_rows(osw *x, milp *m, osw_win *w)
{
    const graph_profile *g = x->g;
    int32_t s = w->s, u0 = x->uoff[s], ms = x->uoff[s + 1] - u0, n = x->n;
    int persistent = g->tensors[s].persistent;
    int clean = persistent && g->n_mutations[s] == 0;
    int32_t a_lo = w->lo + 1, a_hi = w->hi - 2;
    /* the last dirtying access at or before the gap's lower access */
    int32_t q = -1;
    for (int32_t k = 0; k <= w->gap; k++)
        if (x->udirty[u0 + k])
            q = k;
    int idx[256];
    double val[256];
    int nz = 0;
    w->v_od = -1;
    if (clean) {
        w->od_lo = a_lo;
        w->od_hi = a_hi;
    } else if (w->wrap) {
        /* out before the end (a <= n-1): current after an earlier trip past
           the last dirtying access; out after the start: stale (resident
           at the start and mutated) */
        w->od_lo = a_lo;
        w->od_hi = SW_MIN(a_hi, n - 1);
        for (int32_t k = q < 0 ? 0 : q; k < ms - 1 && nz < 250; k++) {
            osw_win *p = win_at(x, s, k);
            if (p) {
                idx[nz] = p->v_w;
                val[nz++] = -1;
            }
        }
        if (!nz)
            w->od_lo = 1, w->od_hi = 0;
    } else {
        w->od_lo = a_lo;
        w->od_hi = a_hi;
        for (int32_t k = q < 0 ? 0 : q; k < w->gap && nz < 250; k++) {
            osw_win *p = win_at(x, s, k);
            if (p) {
                idx[nz] = p->v_w;
                val[nz++] = -1;
            }
        }
        osw_win *wr = persistent ? win_at(x, s, ms - 1) : NULL;
        if (q < 0 && wr && wr != w) {
            /* current at the start unless resident there: the trip around
               the end was taken, and not both ways before the end */
            idx[nz] = wr->v_w;
            val[nz++] = -1;
            for (int32_t b = wr->lo + 2; b <= SW_MIN(wr->hi - 1, n - 1) && nz < 255; b++) {
                idx[nz] = wr->v_in + (b - wr->lo - 2);
                val[nz++] = 1;
            }
        }
        if (!nz)
            w->od_lo = 1, w->od_hi = 0;
    }
    if (w->od_lo > w->od_hi)
        return 0;
    w->v_od = milp_vars(m);
    for (int32_t a = w->od_lo; a <= w->od_hi; a++) {
        int v = milp_var(m, 0, 1, 0, 1);
        if (!clean && nz < 255) {
            idx[nz] = v;
            val[nz++] = 1;
        }
    }
    if (!clean)
        milp_row(m, -MILP_INF, 0, nz, idx, val);
    return 0;
}

static int osw_build(osw *x, milp *m, int64_t cap, sw_err *err)
{
    const graph_profile *g = x->g;
    int32_t n = x->n, nt = g->n_tensors;
    double L = x->lat / x->tau;
    term_list *tt = sw_calloc((size_t)n, sizeof *tt), *mm = sw_calloc((size_t)n, sizeof *mm);
    double *live = sw_calloc((size_t)n, sizeof *live);
    int rc = 0;
    if (!tt || !mm || !live) {
        rc = sw_fail(err, SW_ENOMEM, "out of memory");
        goto done;
    }
    /* stage lengths: the objective */
    for (int32_t j = 0; j < n; j++)
        milp_var(m, stage_op(x, j) >= 0 ? g->ops[stage_op(x, j)].time_s / x->tau : 0, MILP_INF,
                 1, 0);
    /* live bytes per stage */
    for (int32_t s = 0; s < nt; s++) {
        if (!is_storage(g, s) || x->uoff[s + 1] == x->uoff[s])
            continue;
        double b = (double)g->bytes[s] / (double)cap;
        if (osw_persistent(x, s)) {
            for (int32_t j = 0; j < n; j++)
                live[j] += b;
        } else {
            int32_t d = x->death[s] >= 0 ? x->death[s] : x->upos[x->uoff[s + 1] - 1];
            for (int32_t j = x->upos[x->uoff[s]]; j <= d && j < n; j++)
                live[j] += b;
        }
    }
    /* windows: variables and flow rows; the first pass makes every w
       variable, which the drop rows of later windows refer to */
    for (int32_t i = 0; i < x->n_win; i++) {
        osw_win *w = &x->win[i];
        int32_t len = w->hi - w->lo - 2;
        w->v_w = milp_var(m, 0, 1, 0, 0);
        w->v_oc = milp_vars(m);
        for (int32_t k = 0; k < len; k++)
            milp_var(m, 0, 1, 0, 1);
        w->v_in = milp_vars(m);
        for (int32_t k = 0; k < len; k++)
            milp_var(m, 0, 1, 0, 1);
        w->v_r = milp_vars(m);
        for (int32_t k = 0; k + 1 < len; k++)
            milp_var(m, 0, 1, 0, 0);
    }
    for (int32_t i = 0; i < x->n_win; i++) {
        osw_win *w = &x->win[i];
        int32_t s = w->s, len = w->hi - w->lo - 2;
        const graph_tensor *t = &g->tensors[s];
        int clean = t->persistent && g->n_mutations[s] == 0;
        if (clean) /* never copied: every out is a drop */
            for (int32_t k = 0; k < len; k++)
                milp_row(m, 0, 0, 1, (int[]){w->v_oc + k}, (double[]){1});
        drop_rows(x, m, w);
        /* sum of outs = sum of ins = w */
        int *idx = sw_malloc((size_t)(2 * len + 2) * sizeof *idx);
        double *val = sw_malloc((size_t)(2 * len + 2) * sizeof *val);
        if (!idx || !val) {
            sw_free(idx);
            sw_free(val);
            rc = sw_fail(err, SW_ENOMEM, "out of memory");
            goto done;
        }
        trip_rows(m, w, len, idx, val);
        int nz;
        /* off during stage t: r_t = r_{t-1} + out_{t-1} - in_t, r = 0 before
           the first out stage and after the last in stage */
        for (int32_t st = w->lo + 2; st <= w->hi - 1; st++) {
            nz = 0;
            int32_t a = st - 1;
            if (st <= w->hi - 2) {
                idx[nz] = w->v_r + (st - w->lo - 2);
                val[nz++] = 1;
            }
            if (st - 1 >= w->lo + 2) {
                idx[nz] = w->v_r + (st - 1 - w->lo - 2);
                val[nz++] = -1;
            }
            idx[nz] = w->v_oc + (a - w->lo - 1);
            val[nz++] = -1;
            if (w->v_od >= 0 && a >= w->od_lo && a <= w->od_hi) {
                idx[nz] = w->v_od + (a - w->od_lo);
                val[nz++] = -1;
            }
            idx[nz] = w->v_in + (st - w->lo - 2);
            val[nz++] = 1;
            milp_row(m, 0, 0, nz, idx, val);
        }
        sw_free(idx);
        sw_free(val);
        /* stage time and memory terms */
        double bh = L + (double)g->bytes[s] / x->rate_h / x->tau;
        double bd = L + (double)g->bytes[s] / x->rate_d / x->tau;
        double bm = (double)g->bytes[s] / (double)cap;
        int bad = 0;
        for (int32_t k = 0; k < len; k++) {
            bad |= tl_add(&tt[(w->lo + 2 + k) % n], w->v_in + k, -bh);
            bad |= tl_add(&tt[(w->lo + 1 + k) % n], w->v_oc + k, -bd);
            if (k + 1 < len)
                bad |= tl_add(&mm[(w->lo + 2 + k) % n], w->v_r + k, -bm);
        }
        if (bad) {
            rc = sw_fail(err, SW_ENOMEM, "out of memory");
            goto done;
        }
    }
    for (int32_t j = 0; j < n; j++) {
        if (tl_add(&tt[j], j, 1)) {
            rc = sw_fail(err, SW_ENOMEM, "out of memory");
            goto done;
        }
        milp_row(m, 0, MILP_INF, (int)tt[j].n, tt[j].idx, tt[j].val);
        if (live[j] > 1 + 1e-12) {
            if (!mm[j].n) {
                char h1[32], h2[32];
                int32_t op = x->order[j / 2];
                rc = sw_fail(err, SW_ENOFIT, "does not fit: %s op %d '%s' (position %d of the "
                             "schedule) %s are live and none can leave the GPU; the arena "
                             "holds %s", j % 2 ? "at" : "before", op, g->ops[op].name, j / 2,
                             sw_fmt_bytes((int64_t)(live[j] * (double)cap), h1, sizeof h1),
                             sw_fmt_bytes(cap, h2, sizeof h2));
                goto done;
            }
            /* (the solver's feasibility tolerance may leave a stage a few
               bytes over: the packing finds that and the program is solved
               again with those bytes less) */
            milp_row(m, -MILP_INF, 1 - live[j], (int)mm[j].n, mm[j].idx, mm[j].val);
        }
    }
done:
    tl_free(tt, n);
    tl_free(mm, n);
    sw_free(live);
    return rc;
}

/* ---- the span model ---- */

/* A binary variable, fixed to fix's value where fix is given (the timing
   of decisions already taken: a linear program). */
static int bvar(milp *m, const double *fix)
{
    int i = milp_vars(m);
    if (fix) {
        double v = fix[i] > 0.5 ? 1 : 0;
        return milp_var(m, v, v, 0, 1);
    }
    return milp_var(m, 0, 1, 0, 1);
}

/* Op position i's time (s / tau), possibly past an iteration's end or
   before its start: the op's duration. */
static double op_tau(const osw *x, int32_t i)
{
    int32_t n = x->n_ops;
    i = ((i % n) + n) % n;
    return x->g->ops[x->order[i]].time_s / x->tau;
}

/* Append c times the start of op position i (unwrapped: S_(i mod n) plus
   P per iteration away) to a row; returns the new length. */
static int t_start(const osw *x, int32_t i, double c, int *idx, double *val, int nz)
{
    int32_t n = x->n_ops, k = 0;
    while (i >= n) {
        i -= n;
        k++;
    }
    while (i < 0) {
        i += n;
        k--;
    }
    idx[nz] = x->v_s + i;
    val[nz++] = c;
    if (k) {
        idx[nz] = x->v_p;
        val[nz++] = c * k;
    }
    return nz;
}

/* The span model's drops: where the host copy may be current, each end op
   of the window may be reached by a drop; the row that says when (earlier
   trips since the last write, or, before any write, the trip around the
   iteration's end that leaves the storage off the GPU at the start). */
static int drop_rows_span(osw *x, milp *m, osw_win *w, const double *fix, int *idx, double *val)
{
    const graph_profile *g = x->g;
    int32_t s = w->s, u0 = x->uoff[s], ms = x->uoff[s + 1] - u0;
    int persistent = g->tensors[s].persistent;
    int clean = persistent && g->n_mutations[s] == 0;
    int32_t q = -1;
    for (int32_t k = 0; k <= w->gap; k++)
        if (x->udirty[u0 + k])
            q = k;
    int nz = 0;
    w->v_od = -1;
    w->od_lo = w->lop + 1;
    w->od_hi = w->hop - 1;
    if (!clean) {
        int32_t upto = w->wrap ? ms - 1 : w->gap;
        for (int32_t k = q < 0 ? 0 : q; k < upto; k++) {
            osw_win *p = win_at(x, s, k);
            if (p && p != w) {
                idx[nz] = p->v_w;
                val[nz++] = -1;
            }
        }
        osw_win *wr = persistent ? win_at(x, s, ms - 1) : NULL;
        if (!w->wrap && q < 0 && wr && wr != w) {
            idx[nz] = wr->v_w;
            val[nz++] = -1;
        }
        if (!nz) {
            w->od_lo = 1, w->od_hi = 0;
            return 0;
        }
    }
    w->v_od = milp_vars(m);
    for (int32_t b = w->od_lo; b <= w->od_hi; b++) {
        int v = bvar(m, fix);
        if (!clean) {
            idx[nz] = v;
            val[nz++] = 1;
        }
    }
    if (!clean)
        milp_row(m, -MILP_INF, 0, nz, idx, val);
    return 0;
}

/* The d2h (outs) order: by the op after which the out is issued; the h2d
   (ins) order: by the op that needs the storage back (in the iteration the
   in is issued), ties by storage and gap. */
static int span_before(const osw *x, const osw_win *a, const osw_win *b, int in)
{
    int32_t ka = in ? a->hop - (a->wrap ? x->n_ops : 0) : a->lop;
    int32_t kb = in ? b->hop - (b->wrap ? x->n_ops : 0) : b->lop;
    if (ka != kb)
        return ka < kb;
    if (a->s != b->s)
        return a->s < b->s;
    return a->gap < b->gap;
}

static int span_orders(osw *x)
{
    sw_free(x->ord_in);
    sw_free(x->ord_out);
    x->ord_in = sw_malloc(((size_t)x->n_win + 1) * sizeof *x->ord_in);
    x->ord_out = sw_malloc(((size_t)x->n_win + 1) * sizeof *x->ord_out);
    if (!x->ord_in || !x->ord_out)
        return -1;
    for (int32_t i = 0; i < x->n_win; i++) {
        x->win[i].lop = (x->win[i].lo - 1) / 2;
        x->win[i].hop = (x->win[i].hi - 1) / 2;
    }
    for (int in = 0; in < 2; in++) {
        int32_t *o = in ? x->ord_in : x->ord_out;
        for (int32_t i = 0; i < x->n_win; i++) { /* insertion sort: a total order */
            int32_t j = i;
            while (j > 0 && span_before(x, &x->win[i], &x->win[o[j - 1]], in)) {
                o[j] = o[j - 1];
                j--;
            }
            o[j] = i;
        }
    }
    return 0;
}

/* The span model (docs/bounds.md, "optimal-swap"): op starts S_i and the
   iteration time P continuous; per window an out that ends before op b
   starts (b binary, a drop or a copy) and an in that starts after op a - 1
   ends (a binary), the storage off the GPU in the half-stages between;
   each copy stream runs its copies in a fixed order, its cursor (the end
   of the stream's last copy so far) a continuous variable; big-M rows tie
   the cursors to the chosen ops. fix: the binaries fixed to these values
   (NULL: free). */
static int osw_build_span(osw *x, milp *m, int64_t cap, const double *fix, sw_err *err)
{
    const graph_profile *g = x->g;
    int32_t n = x->n, no = x->n_ops, nt = g->n_tensors;
    double L = x->lat / x->tau;
    term_list *mm = sw_calloc((size_t)n, sizeof *mm);
    double *live = sw_calloc((size_t)n, sizeof *live);
    size_t cap_nz = 4 * (size_t)no + 64;
    int *idx = sw_malloc(cap_nz * sizeof *idx);
    double *val = sw_malloc(cap_nz * sizeof *val);
    int rc = 0;
    if (!mm || !live || !idx || !val || span_orders(x)) {
        rc = sw_fail(err, SW_ENOMEM, "out of memory");
        goto done;
    }
    /* op starts (op 0 at time 0) and the iteration time */
    x->v_s = milp_vars(m);
    for (int32_t i = 0; i < no; i++)
        milp_var(m, 0, i ? MILP_INF : 0, 0, 0);
    x->v_p = milp_var(m, 0, MILP_INF, 1, 0);
    for (int32_t i = 1; i < no; i++)
        milp_row2(m, op_tau(x, i - 1), MILP_INF, x->v_s + i, 1, x->v_s + i - 1, -1);
    milp_row2(m, op_tau(x, no - 1), MILP_INF, x->v_p, 1, x->v_s + no - 1, -1);
    /* big M: above any time difference of a plan worth having (every op,
       every possible copy, one after another) */
    double ub = 0;
    for (int32_t i = 0; i < no; i++)
        ub += op_tau(x, i);
    for (int32_t i = 0; i < x->n_win; i++) {
        double b = (double)g->bytes[x->win[i].s] / x->tau;
        ub += 2 * L + b / x->rate_h + b / x->rate_d;
    }
    double M = 3 * ub + 1;
    /* live bytes per half-stage */
    for (int32_t s = 0; s < nt; s++) {
        if (!is_storage(g, s) || x->uoff[s + 1] == x->uoff[s])
            continue;
        double b = (double)g->bytes[s] / (double)cap;
        if (osw_persistent(x, s)) {
            for (int32_t j = 0; j < n; j++)
                live[j] += b;
        } else {
            int32_t d = x->death[s] >= 0 ? x->death[s] : x->upos[x->uoff[s + 1] - 1];
            for (int32_t j = x->upos[x->uoff[s]]; j <= d && j < n; j++)
                live[j] += b;
        }
    }
    /* windows: variables */
    for (int32_t i = 0; i < x->n_win; i++) {
        osw_win *w = &x->win[i];
        const graph_tensor *t = &g->tensors[w->s];
        int clean = t->persistent && g->n_mutations[w->s] == 0;
        int32_t len = w->hop - w->lop - 1;
        w->v_w = milp_var(m, 0, 1, 0, 0);
        w->v_oc = milp_vars(m);
        for (int32_t k = 0; k < len; k++)
            if (clean) /* never copied: every out is a drop */
                milp_var(m, 0, 0, 0, 1);
            else
                bvar(m, fix);
        w->v_in = milp_vars(m);
        for (int32_t k = 0; k < len; k++)
            bvar(m, fix);
        w->v_r = milp_vars(m);
        for (int32_t k = 0; k < len; k++)
            milp_var(m, 0, 1, 0, 0);
        w->v_eo = milp_var(m, -MILP_INF, MILP_INF, 0, 0);
        w->v_ei = milp_var(m, -MILP_INF, MILP_INF, 0, 0);
    }
    /* windows: flow and memory */
    for (int32_t i = 0; i < x->n_win; i++) {
        osw_win *w = &x->win[i];
        int32_t len = w->hop - w->lop - 1;
        if ((size_t)(3 * len + 16) > cap_nz) {
            rc = sw_fail(err, SW_EINVAL, "optimal-swap: internal: row too long");
            goto done;
        }
        drop_rows_span(x, m, w, fix, idx, val);
        trip_rows(m, w, len, idx, val);
        int nz;
        /* off while op i runs (R_i, i = lop+1+k): R_i = R_(i-1) + out_i - in_i,
           in_i for i >= lop+2 (at index i-lop-2); R_(hop-1) = in_hop; off in
           the half-stage before op i: R_(i-1) - in_i >= 0 */
        for (int32_t k = 0; k < len; k++) {
            int32_t b = w->lop + 1 + k;
            nz = 0;
            idx[nz] = w->v_r + k;
            val[nz++] = 1;
            if (k > 0) {
                idx[nz] = w->v_r + k - 1;
                val[nz++] = -1;
                idx[nz] = w->v_in + k - 1;
                val[nz++] = 1;
            }
            idx[nz] = w->v_oc + k;
            val[nz++] = -1;
            if (w->v_od >= 0 && b >= w->od_lo && b <= w->od_hi) {
                idx[nz] = w->v_od + (b - w->od_lo);
                val[nz++] = -1;
            }
            milp_row(m, 0, 0, nz, idx, val);
            if (k > 0)
                milp_row2(m, 0, MILP_INF, w->v_r + k - 1, 1, w->v_in + k - 1, -1);
        }
        milp_row2(m, 0, 0, w->v_r + len - 1, 1, w->v_in + len - 1, -1);
        double bm = (double)g->bytes[w->s] / (double)cap;
        int bad = 0;
        for (int32_t k = 0; k < len; k++) {
            int32_t op = w->lop + 1 + k;
            bad |= tl_add(&mm[(2 * op + 1) % n], w->v_r + k, -bm);
            if (k > 0) { /* the half-stage before op: R_(op-1) - in_op */
                bad |= tl_add(&mm[(2 * op) % n], w->v_r + k - 1, -bm);
                bad |= tl_add(&mm[(2 * op) % n], w->v_in + k - 1, bm);
            }
        }
        if (bad) {
            rc = sw_fail(err, SW_ENOMEM, "out of memory");
            goto done;
        }
    }
    /* the streams */
    for (int in = 0; in < 2; in++) {
        const int32_t *ord = in ? x->ord_in : x->ord_out;
        for (int32_t k = 0; k < x->n_win; k++) {
            osw_win *w = &x->win[ord[k]], *pw = &x->win[ord[k ? k - 1 : x->n_win - 1]];
            int32_t len = w->hop - w->lop - 1;
            double bytes = (double)g->bytes[w->s] / x->tau;
            double d = L + bytes / (in ? x->rate_h : x->rate_d);
            int v_e = in ? w->v_ei : w->v_eo, v_pe = in ? pw->v_ei : pw->v_eo;
            int v_x = in ? w->v_in : w->v_oc; /* the copies (drops take no time) */
            int nz = 0;
            /* after the stream's previous copy (of the previous iteration for
               the first one, one iteration time earlier) */
            if (x->n_win > 1) {
                idx[nz] = v_e;
                val[nz++] = 1;
                idx[nz] = v_pe;
                val[nz++] = -1;
            }
            if (!k) {
                idx[nz] = x->v_p;
                val[nz++] = 1;
            }
            for (int32_t j = 0; j < len; j++) {
                idx[nz] = v_x + j;
                val[nz++] = -d;
            }
            milp_row(m, 0, MILP_INF, nz, idx, val);
            if (!in) {
                /* an out starts after op lop ends, and has ended before op b
                   starts (b: its end op, binary) */
                nz = 0;
                idx[nz] = v_e;
                val[nz++] = 1;
                for (int32_t j = 0; j < len; j++) {
                    idx[nz] = v_x + j;
                    val[nz++] = -d;
                }
                nz = t_start(x, w->lop, -1, idx, val, nz);
                milp_row(m, op_tau(x, w->lop), MILP_INF, nz, idx, val);
                for (int32_t b = w->lop + 1; b <= w->hop - 1; b++) {
                    nz = 0;
                    idx[nz] = v_e;
                    val[nz++] = 1;
                    nz = t_start(x, b, -1, idx, val, nz);
                    for (int32_t b2 = w->lop + 1; b2 <= b; b2++) {
                        idx[nz] = w->v_oc + (b2 - w->lop - 1);
                        val[nz++] = M;
                        if (w->v_od >= 0 && b2 >= w->od_lo && b2 <= w->od_hi) {
                            idx[nz] = w->v_od + (b2 - w->od_lo);
                            val[nz++] = M;
                        }
                    }
                    milp_row(m, -MILP_INF, M, nz, idx, val);
                }
            } else {
                /* an in has ended before op hop starts (times of the
                   iteration it is issued in: one earlier for a wrap window),
                   and starts after op a - 1 ends (a: its start op, binary) */
                int32_t sh = w->wrap ? 1 : 0;
                nz = 0;
                idx[nz] = v_e;
                val[nz++] = 1;
                nz = t_start(x, w->hop - sh * no, -1, idx, val, nz);
                milp_row(m, -MILP_INF, 0, nz, idx, val);
                for (int32_t a = w->lop + 2; a <= w->hop; a++) {
                    nz = 0;
                    idx[nz] = v_e;
                    val[nz++] = 1;
                    for (int32_t j = 0; j < len; j++) {
                        idx[nz] = v_x + j;
                        val[nz++] = -d;
                    }
                    nz = t_start(x, a - 1 - sh * no, -1, idx, val, nz);
                    for (int32_t a2 = a; a2 <= w->hop; a2++) {
                        idx[nz] = w->v_in + (a2 - w->lop - 2);
                        val[nz++] = -M;
                    }
                    milp_row(m, op_tau(x, a - 1) - M, MILP_INF, nz, idx, val);
                }
            }
        }
    }
    /* memory per half-stage */
    for (int32_t j = 0; j < n; j++) {
        if (live[j] > 1 + 1e-12) {
            if (!mm[j].n) {
                char h1[32], h2[32];
                int32_t op = x->order[j / 2];
                rc = sw_fail(err, SW_ENOFIT, "does not fit: %s op %d '%s' (position %d of the "
                             "schedule) %s are live and none can leave the GPU; the arena "
                             "holds %s", j % 2 ? "at" : "before", op, g->ops[op].name, j / 2,
                             sw_fmt_bytes((int64_t)(live[j] * (double)cap), h1, sizeof h1),
                             sw_fmt_bytes(cap, h2, sizeof h2));
                goto done;
            }
            milp_row(m, -MILP_INF, 1 - live[j], (int)mm[j].n, mm[j].idx, mm[j].val);
        }
    }
done:
    tl_free(mm, n);
    sw_free(live);
    sw_free(idx);
    sw_free(val);
    return rc;
}

/* Exclude the decisions of incumbent v (the span model's binaries) from
   the program: sum of those at 1 - sum of the others <= ones - 1. */
static void osw_nogood(const osw *x, milp *m, const double *v)
{
    int n = milp_vars(m), nz = 0;
    int *idx = sw_malloc(((size_t)n + 1) * sizeof *idx);
    double *val = sw_malloc(((size_t)n + 1) * sizeof *val);
    if (!idx || !val) {
        sw_free(idx);
        sw_free(val);
        milp_row(m, 0, 0, 1, (int[]){-1}, (double[]){1}); /* reported by the solve */
        return;
    }
    double ones = 0;
    for (int32_t i = 0; i < x->n_win; i++) {
        const osw_win *w = &x->win[i];
        int32_t len = w->hop - w->lop - 1;
        for (int part = 0; part < 3; part++) {
            int v0 = part == 0 ? w->v_oc : part == 1 ? w->v_in : w->v_od;
            int32_t cnt = part < 2 ? len : w->v_od >= 0 ? w->od_hi - w->od_lo + 1 : 0;
            for (int32_t k = 0; k < cnt; k++) {
                int on = v[v0 + k] > 0.5;
                idx[nz] = v0 + k;
                val[nz++] = on ? 1 : -1;
                ones += on;
            }
        }
    }
    milp_row(m, -MILP_INF, ones - 1, nz, idx, val);
    sw_free(idx);
    sw_free(val);
}

/* One gap's decisions in the incumbent v, for both models: a trip taken
   (v_w) leaves at lo + 1 + k where its out binary k is set, or at the
   drop's position, and comes back at lo + 2 + k where its in binary k is
   set (len binaries each; positions are ops in the span model, half-stages
   in the stage model). *out and *in are -1 where none is set; returns 1 for
   a drop. */
static int osw_pick(const osw_win *w, const double *v, int32_t lo, int32_t len, int32_t *out,
                    int32_t *in)
{
    int drop = 0;
    *out = *in = -1;
    if (v[w->v_w] < 0.5)
        return 0;
    for (int32_t k = 0; k < len; k++) {
        if (v[w->v_oc + k] > 0.5)
            *out = lo + 1 + k;
        if (v[w->v_in + k] > 0.5)
            *in = lo + 2 + k;
    }
    if (w->v_od >= 0)
        for (int32_t a = w->od_lo; a <= w->od_hi; a++)
            if (v[w->v_od + (a - w->od_lo)] > 0.5) {
                *out = a;
                drop = 1;
            }
    return drop;
}

/* Read the span model's decisions: out_op/in_op, and the half-stages
   out_at = 2 out_op (resident until op out_op starts), in_at = 2 in_op
   (resident from the end of op in_op - 1) that the packing works in. */
static void osw_read_span(osw *x, const double *v)
{
    for (int32_t i = 0; i < x->n_win; i++) {
        osw_win *w = &x->win[i];
        w->out_at = w->in_at = -1;
        w->drop = osw_pick(w, v, w->lop, w->hop - w->lop - 1, &w->out_op, &w->in_op);
        if (w->out_op < 0 || w->in_op < 0) {
            w->out_op = w->in_op = -1;
            w->drop = 0;
            continue;
        }
        w->out_at = 2 * w->out_op;
        w->in_at = 2 * w->in_op;
    }
}

/* Read the stage model's decisions (half-stages) from the incumbent. */
static void osw_read(osw *x, const double *v)
{
    for (int32_t i = 0; i < x->n_win; i++) {
        osw_win *w = &x->win[i];
        w->drop = osw_pick(w, v, w->lo, w->hi - w->lo - 2, &w->out_at, &w->in_at);
    }
}

/* The iteration time the decisions give in the stage model (s). */
static double osw_time(const osw *x, double *stage)
{
    const graph_profile *g = x->g;
    int32_t n = x->n;
    for (int32_t j = 0; j < n; j++)
        stage[j] = 0;
    for (int32_t i = 0; i < x->n_win; i++) {
        const osw_win *w = &x->win[i];
        if (w->out_at < 0)
            continue;
        double b = (double)g->bytes[w->s];
        stage[w->in_at % n] += x->lat + b / x->rate_h;
        if (!w->drop)
            stage[w->out_at % n] += x->lat + b / x->rate_d;
    }
    double total = 0;
    for (int32_t j = 0; j < n; j++) {
        double op = stage_op(x, j) >= 0 ? g->ops[stage_op(x, j)].time_s : 0;
        stage[j] = SW_MAX(stage[j], op);
        total += stage[j];
    }
    return total;
}

/* ---- placement: an offline packing into one address range ---- */

static int add_item(osw *x, int32_t s, int32_t a0, int32_t b0, int32_t a1, int32_t b1)
{
    if (SW_GROW(x->item, x->cap_item, (size_t)x->n_item + 1))
        return -1;
    osw_item *it = &x->item[x->n_item++];
    it->s = s;
    it->bytes = x->g->bytes[s];
    it->a0 = a0;
    it->b0 = b0;
    it->a1 = a1;
    it->b1 = b1;
    it->off = 0;
    it->lead = 0;
    return 0;
}

static int iv_overlap(int32_t a, int32_t b, int32_t c, int32_t d)
{
    return a >= 0 && c >= 0 && a <= d && c <= b;
}

static int items_conflict(const osw_item *p, const osw_item *q)
{
    return iv_overlap(p->a0, p->b0, q->a0, q->b0) || iv_overlap(p->a0, p->b0, q->a1, q->b1) ||
           iv_overlap(p->a1, p->b1, q->a0, q->b0) || iv_overlap(p->a1, p->b1, q->a1, q->b1);
}

static int32_t item_len(const osw_item *p)
{
    return p->b0 - p->a0 + 1 + (p->a1 >= 0 ? p->b1 - p->a1 + 1 : 0);
}

/* Ties last: storage, then start (a total order: the packing is repeatable). */
static int item_tie(const osw_item *p, const osw_item *q)
{
    if (p->s != q->s)
        return p->s < q->s ? -1 : 1;
    return p->a0 < q->a0 ? -1 : p->a0 > q->a0;
}

/* Largest first, then longest. */
static int item_cmp_size(const void *a, const void *b)
{
    const osw_item *p = a, *q = b;
    if (p->bytes != q->bytes)
        return p->bytes > q->bytes ? -1 : 1;
    if (item_len(p) != item_len(q))
        return item_len(p) > item_len(q) ? -1 : 1;
    return item_tie(p, q);
}

/* Longest first, then largest. */
static int item_cmp_len(const void *a, const void *b)
{
    const osw_item *p = a, *q = b;
    if (item_len(p) != item_len(q))
        return item_len(p) > item_len(q) ? -1 : 1;
    if (p->bytes != q->bytes)
        return p->bytes > q->bytes ? -1 : 1;
    return item_tie(p, q);
}

/* Earliest start first, then largest (an allocator's order in time). */
static int item_cmp_start(const void *a, const void *b)
{
    const osw_item *p = a, *q = b;
    int32_t sp = p->a1 >= 0 ? 0 : p->a0, sq = q->a1 >= 0 ? 0 : q->a0;
    if (sp != sq)
        return sp < sq ? -1 : 1;
    if (p->bytes != q->bytes)
        return p->bytes > q->bytes ? -1 : 1;
    return item_tie(p, q);
}

/* A rotation of the cycle: the items across its cut first (largest
   first), then by start after the cut (first fit in that order colours an
   interval graph optimally). */
static int item_cmp_key(const void *a, const void *b)
{
    const osw_item *p = a, *q = b;
    if (p->key != q->key)
        return p->key < q->key ? -1 : 1;
    if (p->bytes != q->bytes)
        return p->bytes > q->bytes ? -1 : 1;
    return item_tie(p, q);
}

/* Most byte-stages first. */
static int item_cmp_area(const void *a, const void *b)
{
    const osw_item *p = a, *q = b;
    double ap = (double)p->bytes * item_len(p), aq = (double)q->bytes * item_len(q);
    if (ap != aq)
        return ap > aq ? -1 : 1;
    return item_tie(p, q);
}

typedef struct span {
    int64_t lo, hi;
} span;

static int span_cmp(const void *a, const void *b)
{
    const span *p = a, *q = b;
    return p->lo < q->lo ? -1 : p->lo > q->lo;
}

/* Residencies of the decisions (stage intervals), then their offsets:
   largest first, each at the lowest offset free over its intervals.
   Returns the highest byte used. Fills the per-storage placement queues in
   the order the builder places them. */
static int osw_pack(osw *x, int64_t *high, sw_err *err)
{
    const graph_profile *g = x->g;
    int32_t n = x->n, nt = g->n_tensors;
    x->n_item = 0;
    /* per storage, its residencies in stage order */
    for (int32_t s = 0; s < nt; s++) {
        if (!is_storage(g, s) || x->uoff[s + 1] == x->uoff[s])
            continue;
        int bad = 0;
        if (!osw_persistent(x, s)) {
            int32_t start = x->upos[x->uoff[s]];
            int32_t d = x->death[s] >= 0 ? x->death[s] : x->upos[x->uoff[s + 1] - 1];
            for (int32_t i = x->win_off[s]; i < x->win_off[s + 1]; i++) {
                const osw_win *w = &x->win[i];
                if (w->out_at < 0)
                    continue;
                bad |= add_item(x, s, start, w->out_at, -1, -1);
                start = w->in_at;
            }
            bad |= add_item(x, s, start, d, -1, -1);
        } else {
            /* on the cycle: the trips sorted by out stage (windows are in gap
               order, the wrap one last) */
            int32_t outs[512], ins[512], k = 0, lead = 0;
            for (int32_t i = x->win_off[s]; i < x->win_off[s + 1] && k < 512; i++)
                if (x->win[i].out_at >= 0) {
                    outs[k] = x->win[i].out_at;
                    ins[k++] = x->win[i].in_at;
                    lead = x->span && x->win[i].wrap && x->win[i].in_at < n;
                }
            if (k == 0) {
                bad |= add_item(x, s, 0, n - 1, -1, -1);
            } else {
                /* residencies: [ins[i], outs[i+1]] and the one around the end,
                   [ins[k-1], outs[0] + n] unwrapped, taken back into [0, n) */
                for (int32_t i = 0; i < k; i++) {
                    int32_t a = ins[i], e = i + 1 < k ? outs[i + 1] : outs[0] + n;
                    int32_t a2 = a % n, e2 = e - (a - a2);
                    if (e2 <= n - 1)
                        bad |= add_item(x, s, a2, e2, -1, -1);
                    else
                        bad |= add_item(x, s, 0, e2 - n, a2, n - 1);
                    if (!bad && lead && i == k - 1)
                        x->item[x->n_item - 1].lead = 1;
                }
            }
        }
        if (bad)
            return sw_fail(err, SW_ENOMEM, "out of memory");
    }
    /* pack in four orders, each with the lowest and with the tightest gap, and
       perturbed size orders; keep the lowest */
    osw_item *sorted = sw_malloc(((size_t)x->n_item + 1) * sizeof *sorted);
    osw_item *best = sw_malloc(((size_t)x->n_item + 1) * sizeof *best);
    span *sp = sw_malloc(((size_t)x->n_item + 1) * sizeof *sp);
    if (!sorted || !sp || !best) {
        sw_free(sorted);
        sw_free(best);
        sw_free(sp);
        return sw_fail(err, SW_ENOMEM, "out of memory");
    }
    int (*const cmps[4])(const void *, const void *) = {item_cmp_size, item_cmp_area,
                                                        item_cmp_len, item_cmp_start};
    int64_t best_hw = -1;
    uint64_t rng = 0x9e3779b97f4a7c15ULL; /* fixed: the packing is repeatable */
    int base = 8 + 2 * OSW_PACK_TRIES;
    for (int c = 0; c < base + (x->span ? 2 * n : 0); c++) {
        int bestfit = c % 2; /* 0: the lowest gap; 1: the tightest gap */
        memcpy(sorted, x->item, (size_t)x->n_item * sizeof *sorted);
        if (c >= base) { /* span model: each rotation of the cycle */
            int32_t t0 = (c - base) / 2;
            for (int32_t i = 0; i < x->n_item; i++) {
                osw_item *it = &sorted[i];
                int across = (it->a0 <= t0 && t0 <= it->b0) ||
                             (it->a1 >= 0 && it->a1 <= t0 && t0 <= it->b1);
                int32_t st = it->a1 >= 0 ? it->a1 : it->a0;
                it->key = across ? -1 : (st - t0 + n) % n;
            }
            qsort(sorted, (size_t)x->n_item, sizeof *sorted, item_cmp_key);
        } else {
            qsort(sorted, (size_t)x->n_item, sizeof *sorted, cmps[c < 8 ? c / 2 : 0]);
        }
        if (c >= 8 && c < base) /* perturbed: swap random neighbours of the size order */
            for (int32_t i = 0; i + 1 < x->n_item; i++) {
                rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
                if ((rng >> 33) % 3 == 0) {
                    osw_item t = sorted[i];
                    sorted[i] = sorted[i + 1];
                    sorted[i + 1] = t;
                }
            }
        int64_t hw = 0;
        for (int32_t i = 0; i < x->n_item; i++) {
            osw_item *it = &sorted[i];
            int32_t ns = 0;
            for (int32_t j = 0; j < i; j++)
                if (sorted[j].bytes > 0 && items_conflict(it, &sorted[j]))
                    sp[ns++] = (span){sorted[j].off, sorted[j].off + sorted[j].bytes};
            qsort(sp, (size_t)ns, sizeof *sp, span_cmp);
            int64_t at = 0, pick = -1, pick_len = 0;
            for (int32_t j = 0; j <= ns; j++) {
                int64_t end = j < ns ? sp[j].lo : INT64_MAX;
                if (end - at >= it->bytes) {
                    if (!bestfit) {
                        pick = at;
                        break;
                    }
                    if (pick < 0 || (j < ns && (pick_len == INT64_MAX || end - at < pick_len))) {
                        pick = at;
                        pick_len = j < ns ? end - at : INT64_MAX;
                    }
                }
                if (j < ns && sp[j].hi > at)
                    at = sp[j].hi;
            }
            it->off = pick;
            hw = SW_MAX(hw, pick + it->bytes);
        }
        if (best_hw < 0 || hw < best_hw) {
            best_hw = hw;
            memcpy(best, sorted, (size_t)x->n_item * sizeof *best);
        }
    }
    int64_t hw = best_hw;
    sw_free(sorted);
    sorted = best;
    /* offsets back in residency order */
    for (int32_t i = 0; i < x->n_item; i++)
        for (int32_t j = 0; j < x->n_item; j++)
            if (sorted[j].s == x->item[i].s && sorted[j].a0 == x->item[i].a0 &&
                sorted[j].b0 == x->item[i].b0) {
                x->item[i].off = sorted[j].off;
                break;
            }
    sw_free(sorted);
    sw_free(sp);
    *high = hw;
    return 0;
}

/* The memory model the builder places through: the packing's offsets, in
   the order the builder asks (per storage, its residencies by start; the
   one kept around the iteration's end first, as the resident set, and again
   when it is brought home). */
typedef struct oracle {
    mem_model base;
    osw *x;
    int64_t capacity;
} oracle;

/* the item of storage s the next placement takes */
static osw_item *oracle_next(oracle *o, int32_t s)
{
    osw *x = o->x;
    if (s < 0 || s >= x->g->n_tensors || x->qcur[s] >= x->qoff[s + 1])
        return NULL;
    return &x->item[x->qitem[x->qcur[s]++]];
}

static int oracle_alloc(mem_model *m, int32_t tensor, int64_t bytes, plan_place *out)
{
    osw_item *it = oracle_next((oracle *)m, tensor);
    if (!it || it->bytes != bytes)
        return SW_ENOFIT;
    out->tensor = tensor;
    out->cls = out->obj = -1;
    out->offset = it->off;
    return 0;
}

static int oracle_alloc_at(mem_model *m, int32_t tensor, int64_t bytes, const plan_place *want)
{
    osw_item *it = oracle_next((oracle *)m, tensor);
    return it && it->bytes == bytes && it->off == want->offset ? 0 : SW_ENOFIT;
}

static void oracle_release(mem_model *m, const plan_place *pl, int64_t bytes)
{
    (void)m;
    (void)pl;
    (void)bytes;
}

static void oracle_reset(mem_model *m)
{
    osw *x = ((oracle *)m)->x;
    for (int32_t s = 0; s < x->g->n_tensors; s++)
        x->qcur[s] = x->qoff[s];
}

static void oracle_stats(const mem_model *m, mem_stats *st)
{
    memset(st, 0, sizeof *st);
    st->capacity = ((const oracle *)m)->capacity;
    st->high_water = st->capacity;
}

static int oracle_describe(const mem_model *m, plan *p)
{
    sw_free(p->classes);
    p->classes = NULL;
    p->n_classes = 0;
    p->mem_kind = MEM_ADDRESS;
    p->capacity = ((const oracle *)m)->capacity;
    snprintf(p->policy, sizeof p->policy, "offline");
    return 0;
}

static void oracle_destroy(mem_model *m) { (void)m; }

static const mem_methods oracle_methods = {1, "offline", oracle_alloc, oracle_alloc_at,
                                           oracle_release, oracle_reset, oracle_stats,
                                           oracle_describe, oracle_destroy};

/* Per storage, the items in the order the builder places them: the one
   around the iteration's end first (the resident set) and last (brought
   home), the others by start. */
static int osw_queues(osw *x, const uint8_t *resident)
{
    int32_t nt = x->g->n_tensors;
    sw_free(x->qoff);
    sw_free(x->qitem);
    sw_free(x->qcur);
    x->qoff = sw_calloc((size_t)nt + 1, sizeof *x->qoff);
    x->qitem = sw_malloc(((size_t)x->n_item * 2 + 1) * sizeof *x->qitem);
    x->qcur = sw_calloc((size_t)nt + 1, sizeof *x->qcur);
    if (!x->qoff || !x->qitem || !x->qcur)
        return -1;
    int32_t q = 0, i = 0;
    for (int32_t s = 0; s < nt; s++) {
        x->qoff[s] = q;
        int32_t from = i;
        while (i < x->n_item && x->item[i].s == s)
            i++;
        int32_t wrap = -1;
        for (int32_t k = from; k < i; k++)
            if (x->item[k].a1 >= 0 || (resident[s] && x->item[k].a0 == 0))
                wrap = k;
        if (resident[s] && wrap >= 0)
            x->qitem[q++] = wrap;
        /* the rest by start stage (the wrap item's placement is its second
           interval's start) */
        int32_t done_upto = -2;
        for (;;) {
            int32_t best = -1, bs = 0;
            for (int32_t k = from; k < i; k++) {
                /* (off the GPU at the start, a residency around the end is
                   the one a trip around the end brings back: placed first) */
                int32_t st = x->item[k].lead ? -1 : x->item[k].a1 >= 0 ? x->item[k].a1
                                                                       : x->item[k].a0;
                if (k == wrap && x->item[k].a1 < 0)
                    continue; /* resident from the start to a swap-out: placed once */
                if (st > done_upto && (best < 0 || st < bs)) {
                    best = k;
                    bs = st;
                }
            }
            if (best < 0)
                break;
            x->qitem[q++] = best;
            done_upto = bs;
        }
    }
    x->qoff[nt] = q;
    x->n_q = q;
    return 0;
}

/* ---- recording ---- */

/* Record the decisions through the builder; stage[e] receives each task's
   stage. */
static int osw_record(osw *x, plan_builder *b, const uint8_t *resident, int32_t *stage,
                      int32_t *n_ev)
{
    const graph_profile *g = x->g;
    int32_t n = x->n, e = 0;
    for (int32_t s = 0; s < g->n_tensors; s++)
        if (resident[s])
            pb_resident(b, s);
    for (int32_t j = 0; j < n; j++) {
        for (int32_t i = 0; i < x->n_win; i++)
            if (x->win[i].in_at >= 0 && x->win[i].in_at % n == j) {
                pb_swap_in(b, x->win[i].s);
                stage[e++] = j;
            }
        if (stage_op(x, j) >= 0) {
            pb_run(b, stage_op(x, j));
            stage[e++] = j;
        }
        for (int32_t i = 0; i < x->n_win; i++)
            if (x->win[i].out_at >= 0 && x->win[i].out_at % n == j) {
                if (x->win[i].drop)
                    pb_drop(b, x->win[i].s);
                else
                    pb_swap_out(b, x->win[i].s);
                stage[e++] = j;
            }
    }
    *n_ev = e;
    return 0;
}

/* The plan p with the stage edges added: the first task of each stream in
   a stage waits for the last task of every other stream in the stages
   before (in the previous iteration, if none in this one), and the stage's
   first copy out waits for its last copy in. Returns the new plan or NULL. */
static plan *add_stage_edges(plan *p, const int32_t *stage)
{
    plan *q = plan_new(p->prof, 0);
    if (!q)
        return NULL;
    q->mem_kind = p->mem_kind;
    q->budget = p->budget;
    q->capacity = p->capacity;
    q->workspace_reserve = p->workspace_reserve;
    memcpy(q->policy, p->policy, sizeof q->policy);
    if (p->n_resident) {
        q->resident = sw_malloc((size_t)p->n_resident * sizeof *q->resident);
        if (!q->resident) {
            plan_free(q);
            return NULL;
        }
        memcpy(q->resident, p->resident, (size_t)p->n_resident * sizeof *q->resident);
        q->n_resident = p->n_resident;
    }
    int32_t last_of[STREAM__COUNT], before[STREAM__COUNT], last_all[STREAM__COUNT];
    int32_t cur_stage = -1;
    for (int st = 0; st < STREAM__COUNT; st++)
        last_of[st] = before[st] = last_all[st] = -1;
    for (int32_t t = 0; t < p->n_tasks; t++)
        last_all[plan_task_stream(p->tasks[t].kind)] = t;
    int32_t prev_stage[STREAM__COUNT] = {-1, -1, -1};
    int32_t last_h2d_here = -1;
    for (int32_t t = 0; t < p->n_tasks; t++) {
        const plan_task *x = &p->tasks[t];
        int st = plan_task_stream(x->kind);
        if (stage[t] != cur_stage) {
            for (int k = 0; k < STREAM__COUNT; k++)
                before[k] = last_of[k];
            cur_stage = stage[t];
            last_h2d_here = -1;
        }
        int32_t d[8], pd[8];
        int nd = 0, npd = 0;
        for (uint32_t k = 0; k < x->n_dep; k++)
            d[nd++] = plan_task_deps(p, x)[k];
        for (uint32_t k = 0; k < x->n_pdep; k++)
            pd[npd++] = plan_task_pdeps(p, x)[k];
        if (prev_stage[st] != stage[t]) { /* first of its stream in this stage */
            for (int o = 0; o < STREAM__COUNT; o++) {
                if (o == st)
                    continue;
                if (before[o] >= 0)
                    d[nd++] = before[o];
                else if (last_all[o] >= 0)
                    pd[npd++] = last_all[o];
            }
            if (st == STREAM_D2H && last_h2d_here >= 0)
                d[nd++] = last_h2d_here;
        }
        if (st == STREAM_H2D)
            last_h2d_here = t;
        prev_stage[st] = stage[t];
        last_of[st] = t;
        /* dedupe */
        int32_t dd[8], dpd[8];
        int nd2 = 0, npd2 = 0;
        for (int i = 0; i < nd; i++) {
            int dup = 0;
            for (int k = 0; k < nd2; k++)
                dup |= dd[k] == d[i];
            if (!dup)
                dd[nd2++] = d[i];
        }
        for (int i = 0; i < npd; i++) {
            int dup = 0;
            for (int k = 0; k < npd2; k++)
                dup |= dpd[k] == pd[i];
            if (!dup)
                dpd[npd2++] = pd[i];
        }
        if (plan_add_task(q, x->kind, x->op, x->tensor, plan_task_places(p, x), (int)x->n_place,
                          plan_task_frees(p, x), (int)x->n_free, dd, nd2, dpd, npd2) < 0) {
            plan_free(q);
            return NULL;
        }
    }
    return q;
}

/* Record the span model's decisions through the builder: before op i of
   the schedule the ins placed there (in the h2d order, each no earlier
   than its start op and than the in before it), op i, then the outs and
   drops issued after it (in the d2h order). Fills each window's in and
   out task and each op position's run task; extra edges then say when
   each copy may start and must end: e_to[k] waits for e_from[k] (of the
   previous iteration where e_prev[k]). */
static int osw_record_span(osw *x, plan_builder *b, const uint8_t *resident, int32_t *t_in,
                           int32_t *t_out, int32_t *t_run, int32_t *n_ev)
{
    const graph_profile *g = x->g;
    int32_t no = x->n_ops, e = 0;
    int32_t *at = sw_malloc(((size_t)x->n_win + 1) * sizeof *at);
    if (!at)
        return -1;
    int32_t p = 0;
    for (int32_t k = 0; k < x->n_win; k++) {
        const osw_win *w = &x->win[x->ord_in[k]];
        at[k] = -1;
        if (w->in_op < 0)
            continue;
        int32_t a = w->in_op - (w->wrap ? no : 0);
        p = SW_MAX(p, SW_MAX(a, 0));
        at[k] = p;
    }
    for (int32_t s = 0; s < g->n_tensors; s++)
        if (resident[s])
            pb_resident(b, s);
    int32_t kin = 0, kout = 0;
    for (int32_t i = 0; i < no; i++) {
        for (; kin < x->n_win && (at[kin] < 0 || at[kin] == i); kin++)
            if (at[kin] >= 0) {
                pb_swap_in(b, x->win[x->ord_in[kin]].s);
                t_in[x->ord_in[kin]] = e++;
            }
        pb_run(b, x->order[i]);
        t_run[i] = e++;
        for (; kout < x->n_win && x->win[x->ord_out[kout]].lop == i; kout++) {
            const osw_win *w = &x->win[x->ord_out[kout]];
            if (w->out_op < 0)
                continue;
            if (w->drop)
                pb_drop(b, w->s);
            else
                pb_swap_out(b, w->s);
            t_out[x->ord_out[kout]] = e++;
        }
    }
    sw_free(at);
    *n_ev = e;
    return 0;
}

/* The plan p with extra edges: task to[k] waits for from[k] (of the
   previous iteration where prev[k]). Returns the new plan or NULL. */
static plan *add_edges(plan *p, const int32_t *to, const int32_t *from, const uint8_t *prev,
                       int32_t ne)
{
    plan *q = plan_new(p->prof, 0);
    int32_t *d = sw_malloc(((size_t)ne + 64) * sizeof *d);
    int32_t *pd = sw_malloc(((size_t)ne + 64) * sizeof *pd);
    if (!q || !d || !pd)
        goto fail;
    q->mem_kind = p->mem_kind;
    q->budget = p->budget;
    q->capacity = p->capacity;
    q->workspace_reserve = p->workspace_reserve;
    memcpy(q->policy, p->policy, sizeof q->policy);
    if (p->n_resident) {
        q->resident = sw_malloc((size_t)p->n_resident * sizeof *q->resident);
        if (!q->resident)
            goto fail;
        memcpy(q->resident, p->resident, (size_t)p->n_resident * sizeof *q->resident);
        q->n_resident = p->n_resident;
    }
    for (int32_t t = 0; t < p->n_tasks; t++) {
        const plan_task *x = &p->tasks[t];
        int nd = 0, npd = 0;
        for (uint32_t k = 0; k < x->n_dep; k++)
            d[nd++] = plan_task_deps(p, x)[k];
        for (uint32_t k = 0; k < x->n_pdep; k++)
            pd[npd++] = plan_task_pdeps(p, x)[k];
        int base_d = nd, base_pd = npd;
        for (int32_t k = 0; k < ne; k++) {
            if (to[k] != t || plan_task_stream(p->tasks[from[k]].kind) == plan_task_stream(x->kind))
                continue; /* (same stream: implied by its order) */
            int32_t *l = prev[k] ? pd : d;
            int *nl = prev[k] ? &npd : &nd;
            int dup = 0;
            for (int i = 0; i < *nl; i++)
                dup |= l[i] == from[k];
            if (!dup && *nl < ne + 64 - 1)
                l[(*nl)++] = from[k];
        }
        (void)base_d;
        (void)base_pd;
        if (plan_add_task(q, x->kind, x->op, x->tensor, plan_task_places(p, x), (int)x->n_place,
                          plan_task_frees(p, x), (int)x->n_free, d, nd, pd, npd) < 0)
            goto fail;
    }
    sw_free(d);
    sw_free(pd);
    return q;
fail:
    sw_free(d);
    sw_free(pd);
    plan_free(q);
    return NULL;
}

/* The span model's edges: an in waits for the end of the op before its
   start op; the op an out (or drop) must end before waits for it. */
static plan *span_edges(const osw *x, plan *p, const int32_t *t_in, const int32_t *t_out,
                        const int32_t *t_run)
{
    int32_t no = x->n_ops, ne = 0;
    int32_t *to = sw_malloc((2 * (size_t)x->n_win + 1) * sizeof *to);
    int32_t *from = sw_malloc((2 * (size_t)x->n_win + 1) * sizeof *from);
    uint8_t *prev = sw_malloc(2 * (size_t)x->n_win + 1);
    plan *q = NULL;
    if (to && from && prev) {
        for (int32_t i = 0; i < x->n_win; i++) {
            const osw_win *w = &x->win[i];
            if (w->in_op < 0)
                continue;
            int32_t ga = w->in_op - 1 - (w->wrap ? no : 0);
            to[ne] = t_in[i];
            from[ne] = t_run[ga >= 0 ? ga : ga + no];
            prev[ne++] = ga < 0;
            int32_t b = w->out_op;
            to[ne] = t_run[b < no ? b : b - no];
            from[ne] = t_out[i];
            prev[ne++] = b >= no;
        }
        q = add_edges(p, to, from, prev, ne);
    }
    sw_free(to);
    sw_free(from);
    sw_free(prev);
    return q;
}

static const char *status_name(milp_status s)
{
    return s == MILP_OPTIMAL ? "optimal" : s == MILP_FEASIBLE ? "stopped" : s == MILP_INFEASIBLE
           ? "infeasible" : "no solution";
}

/* optimal-swap in one model (use_span: 1, stage: 0) with a fraction of the time limit */
static int plan_model(const graph_profile *g, const planner_opts *o, const int32_t *order,
                      int use_span, double fraction, plan **out, sw_err *err)
{
    const param_set *ps = &o->params;
    int32_t n = g->n_ops;
    *out = NULL;
    if (n > params_int(ps, "max_ops"))
        return sw_fail(err, SW_EUNSUPPORTED, "optimal-swap: %d ops exceed max_ops=%lld (the "
                       "integer program grows with ops x storages; raise max_ops to try)", n,
                       (long long)params_int(ps, "max_ops"));
    int64_t cap = o->memory_budget - g->max_workspace;
    if (cap <= 0)
        return sw_fail(err, SW_ENOFIT, "does not fit: the budget does not cover the largest op "
                       "workspace");
    osw x;
    memset(&x, 0, sizeof x);
    x.g = g;
    x.n = 2 * n;
    x.n_ops = n;
    x.order = sw_malloc(((size_t)n + 1) * sizeof *x.order);
    x.pos = sw_malloc(((size_t)n + 1) * sizeof *x.pos);
    int32_t nt = g->n_tensors;
    uint8_t *resident = sw_calloc((size_t)nt + 1, 1);
    double *stage_t = sw_malloc((2 * (size_t)n + 1) * sizeof *stage_t);
    milp *m = NULL;
    plan_builder *b = NULL;
    int32_t *stage = NULL, *t_task = NULL;
    double *fixed = NULL;
    oracle orc;
    memset(&orc, 0, sizeof orc);
    orc.base.methods = &oracle_methods;
    orc.x = &x;
    int rc = 0;
    if (!x.order || !x.pos || !resident || !stage_t) {
        rc = sw_fail(err, SW_ENOMEM, "out of memory");
        goto done;
    }
    memcpy(x.order, order, (size_t)n * sizeof *x.order);
    double lat = g->device.copy_latency_s, rh_b, rd_b;
    dev_rates(&g->device, &x.rate_h, &x.rate_d, &rh_b, &rd_b);
    x.lat = lat;
    x.tau = g->total_compute_s > 0 ? g->total_compute_s / n : 1e-3;
    x.span = use_span;
    if ((rc = osw_accesses(&x, err)) || (rc = osw_windows(&x, err)))
        goto done;
    /* solve, and again with less memory while the packing overflows */
    double tl = fraction * (o->time_budget_s > 0 ? o->time_budget_s
                                                 : params_seconds(ps, "time_limit"));
    milp_backend be = milp_backend_find(params_str(ps, "solver")) == MILP_GLPK ? MILP_GLPK
                                                                               : MILP_CBC;
    milp_opts mo = {tl, (long)params_int(ps, "max_nodes"), params_float(ps, "gap"), 0, be};
    milp_result r;
    int64_t limit = cap, high = 0;
    int shrinks = 0, tries = 0, cuts = 0, rebuild = 1;
    double first_bound = 0;
    for (;;) {
        if (rebuild) {
            milp_free(m);
            m = milp_new();
            if (!m) {
                rc = sw_fail(err, SW_ENOMEM, "out of memory");
                goto done;
            }
            x.cap = limit;
            if ((rc = x.span ? osw_build_span(&x, m, limit, NULL, err)
                             : osw_build(&x, m, limit, err)))
                goto done;
            rebuild = 0;
        }
        /* the time limit is for all the solves together, split by a fixed
           rule (never by the time measured, so that a plan does not depend
           on the machine's load): 3/4 to the first memory limit, then 1/8,
           1/16, ...; the span model's solve gets 3/4 of a limit's share,
           each solve after a no-good row 1/8 */
        double share = shrinks ? tl / (double)(4 << SW_MIN(shrinks, 20)) : 0.75 * tl;
        mo.time_limit_s = x.span ? share * (cuts ? 0.125 : 0.75) : share;
        if ((rc = milp_solve(m, &mo, &r, err)))
            goto done;
        if (r.status == MILP_INFEASIBLE && cuts) {
            /* every decision set left over packs badly: less memory */
            cuts = 0;
            goto shrink;
        }
        if (r.status == MILP_INFEASIBLE && !shrinks) {
            char h1[32], h2[32];
            rc = sw_fail(err, SW_ENOFIT, "does not fit: no swapping plan of the profile's "
                         "schedule keeps within the requested %s (%s for tensors after the "
                         "largest workspace; optimal-swap's %s model, proven by %s)",
                         sw_fmt_bytes(o->memory_budget, h1, sizeof h1),
                         sw_fmt_bytes(limit, h2, sizeof h2), x.span ? "span" : "stage", r.solver);
            goto done;
        }
        if (r.status == MILP_INFEASIBLE) {
            /* infeasible only at a lowered limit: nothing is proven at the
               budget asked for (another planner may find a plan there) */
            char h1[32], h2[32], h3[32];
            rc = sw_fail(err, SW_ENOFIT, "does not fit: optimal-swap found no plan that packs "
                         "(not proven: a plan within the requested %s may exist); its decisions "
                         "for %s of tensors overflowed the arena in the offline packing, so it "
                         "lowered the memory %d time%s to %s, where %s finds no plan of the "
                         "profile's schedule in the %s model", sw_fmt_bytes(o->memory_budget, h1,
                         sizeof h1), sw_fmt_bytes(cap, h2, sizeof h2), shrinks,
                         shrinks == 1 ? "" : "s", sw_fmt_bytes(limit, h3, sizeof h3), r.solver,
                         x.span ? "span" : "stage");
            goto done;
        }
        if (r.status == MILP_NOSOLUTION && cuts) {
            cuts = 0; /* nothing else found in its time: less memory */
            goto shrink;
        }
        if (r.status == MILP_NOSOLUTION) {
            char h1[32];
            rc = sw_fail(err, SW_ENOFIT, "does not fit: optimal-swap found no plan within the "
                         "solver's limits (%.3g s, %ld nodes%s%s); nothing is proven; give it "
                         "more --time-budget", r.solve_s, r.nodes, shrinks ? ", at memory "
                         "lowered for the packing to " : "", shrinks ? sw_fmt_bytes(limit, h1,
                         sizeof h1) : "");
            goto done;
        }
        if (!tries)
            first_bound = r.bound * x.tau;
        if (x.span) {
            sw_free(fixed);
            fixed = sw_malloc(((size_t)milp_vars(m) + 1) * sizeof *fixed);
            if (!fixed) {
                rc = sw_fail(err, SW_ENOMEM, "out of memory");
                goto done;
            }
            memcpy(fixed, r.x, (size_t)milp_vars(m) * sizeof *fixed);
            osw_read_span(&x, r.x);
        } else {
            osw_read(&x, r.x);
        }
        if ((rc = osw_pack(&x, &high, err)))
            goto done;
        if (high <= cap)
            break;
        if (x.span && cuts < OSW_CUTS) {
            /* the span model first excludes the decisions that do not pack
               (a no-good row over the binaries) and solves again with the
               same memory: another optimum, or the next best, may pack */
            tries++;
            cuts++;
            osw_nogood(&x, m, r.x);
            continue;
        }
    shrink:
        tries++;
        if (++shrinks > 8) {
            char h1[32], h2[32];
            rc = sw_fail(err, SW_ENOFIT, "does not fit: optimal-swap's offline packing of the "
                         "optimal decisions overflows the arena (%lld > %lld bytes) after 8 "
                         "tries with less memory (down to %s); not proven: a plan within the "
                         "requested %s may exist", (long long)high, (long long)cap,
                         sw_fmt_bytes(limit, h1, sizeof h1), sw_fmt_bytes(o->memory_budget,
                         h2, sizeof h2));
            goto done;
        }
        rebuild = 1;
        cuts = 0;
        /* (the span model steps down by 2%: its overflows come from
           circular conflicts, which a little less memory often undoes) */
        limit -= x.span ? limit / 50 : SW_MAX(high - cap, limit / 100);
    }
    /* the resident set: persistent storages accessed and not away over the end */
    for (int32_t s = 0; s < nt; s++)
        resident[s] = is_storage(g, s) && osw_persistent(&x, s);
    for (int32_t i = 0; i < x.n_win; i++) {
        const osw_win *w = &x.win[i];
        if (w->wrap && w->out_at >= 0 && (x.span || (w->out_at < x.n && w->in_at >= x.n)))
            resident[w->s] = 0; /* (span: the in is issued in the next iteration) */
    }
    if (osw_queues(&x, resident)) {
        rc = sw_fail(err, SW_ENOMEM, "out of memory");
        goto done;
    }
    orc.capacity = SW_MAX(high, 1);
    b = pb_new(g, &orc.base, o->memory_budget, g->max_workspace);
    stage = sw_malloc(((size_t)n + 2 * (size_t)x.n_win + 1) * sizeof *stage);
    t_task = sw_malloc((2 * (size_t)x.n_win + (size_t)n + 1) * sizeof *t_task);
    if (!b || !stage || !t_task) {
        rc = sw_fail(err, SW_ENOMEM, "out of memory");
        goto done;
    }
    int32_t n_ev = 0;
    if (x.span) {
        if (osw_record_span(&x, b, resident, t_task, t_task + x.n_win, t_task + 2 * x.n_win,
                            &n_ev)) {
            rc = sw_fail(err, SW_ENOMEM, "out of memory");
            goto done;
        }
    } else {
        osw_record(&x, b, resident, stage, &n_ev);
    }
    plan *p = NULL;
    if ((rc = pb_finish(b, &p, err)))
        goto done;
    if (p->n_tasks != n_ev) {
        plan_free(p);
        rc = sw_fail(err, SW_EINVAL, "optimal-swap: the builder added tasks (%d recorded, %d in "
                     "the plan)", n_ev, p->n_tasks);
        goto done;
    }
    plan *q = x.span ? span_edges(&x, p, t_task, t_task + x.n_win, t_task + 2 * x.n_win)
                     : add_stage_edges(p, stage);
    plan_free(p);
    if (!q) {
        rc = sw_fail(err, SW_ENOMEM, "out of memory");
        goto done;
    }
    double model = 0;
    if (x.span) {
        /* the iteration time of the decisions taken: the program again with
           every binary fixed (a linear program), whose optimum is the
           schedule's exact time where the solver's incumbent is not tight */
        milp *m2 = milp_new();
        milp_result r2;
        milp_opts mo2 = {0, 0, 0, 0, be};
        model = r.objective * x.tau;
        if (!m2) {
            rc = sw_fail(err, SW_ENOMEM, "out of memory");
            plan_free(q);
            goto done;
        }
        if (!osw_build_span(&x, m2, limit, fixed, err) && !milp_solve(m2, &mo2, &r2, err) &&
            r2.status == MILP_OPTIMAL)
            model = SW_MIN(model, r2.objective * x.tau);
        milp_free(m2);
    } else {
        model = osw_time(&x, stage_t);
    }
    int32_t trips = 0, drops = 0;
    for (int32_t i = 0; i < x.n_win; i++)
        if (x.win[i].out_at >= 0) {
            trips++;
            drops += x.win[i].drop;
        }
    double bound = SW_MIN(first_bound, model);
    double gap = model > 0 ? (model - bound) / model : 0;
    if (r.status == MILP_OPTIMAL && !shrinks)
        gap = SW_MAX(0.0, SW_MIN(gap, r.gap));
    char note[768], low[256] = "", h1[32], h2[32];
    if (shrinks) /* what was lowered, and what the solve proves (not the budget's optimum) */
        snprintf(low, sizeof low, "; memory lowered for the packing: %s of tensors lowered to "
                 "%s in %d step%s, the solve's %s at the lowered memory only, not at the "
                 "requested budget (the best bound is the first solve's, at the budget)",
                 sw_fmt_bytes(cap, h1, sizeof h1), sw_fmt_bytes(limit, h2, sizeof h2), shrinks,
                 shrinks == 1 ? "" : "s", r.status == MILP_OPTIMAL ? "optimum" : "incumbent");
    snprintf(note, sizeof note, "optimal-swap: %s (%s); objective %.9g s, best bound %.9g s, "
             "gap %.4g%%; %d vars, %d rows; %d round trips (%d drops) in the %s model (%d "
             "stages)%s", shrinks ? "lowered memory" : status_name(r.status), r.solver, model,
             bound, 100 * gap,
             milp_vars(m), milp_rows(m), trips, drops, x.span ? "span" : "stage", 2 * n, low);
    if (plan_set_notes(q, note) ||
        plan_set_solver(q, shrinks ? "lowered memory" : status_name(r.status), model, bound, gap)) {
        plan_free(q);
        rc = sw_fail(err, SW_ENOMEM, "out of memory");
        goto done;
    }
    *out = q;
done:
    milp_free(m);
    pb_free(b);
    sw_free(stage);
    sw_free(t_task);
    sw_free(fixed);
    sw_free(stage_t);
    sw_free(resident);
    osw_free(&x);
    return rc;
}

/* "optimal" only where the simulator agrees with the solver's model: a
   plan whose simulated time t is not its objective (PCIe contention, which
   both models count at one-way rates: docs/bounds.md) is optimal in the
   model only, and its status and notes say so and by how much. 0, or
   SW_ENOMEM (p unchanged). */
static int osw_label_sim(plan *p, double t)
{
    const char *st = p->solver_status, *n = p->notes ? p->notes : "";
    double obj = p->solver_objective_s;
    if (!st || strcmp(st, "optimal") || !(obj > 0) || fabs(t - obj) <= 1e-6 * obj)
        return 0;
    char status[128];
    snprintf(status, sizeof status, "optimal in the %s model; simulated %.3g%% %s the objective",
             strstr(n, "in the span model") ? "span" : "stage", 100 * fabs(t - obj) / obj,
             t > obj ? "above" : "below");
    const char *rest = !strncmp(n, "optimal-swap: optimal", 21) ? n + 21 : "";
    size_t len = strlen(status) + strlen(rest) + 32;
    char *note = sw_malloc(len);
    if (!note)
        return SW_ENOMEM;
    snprintf(note, len, "optimal-swap: %s%s", status, rest);
    int rc = plan_set_notes(p, note);
    sw_free(note);
    if (!rc)
        rc = plan_set_solver(p, status, obj, p->solver_bound_s, p->solver_gap);
    return rc;
}

/* One schedule with `fraction` of the time. model=auto: both models, half
   of it each (a fixed split, so the plan does not depend on the machine's
   load); the plan that simulates faster, its notes saying what the other
   model gave */
static int plan_schedule(const graph_profile *g, const planner_opts *o, const int32_t *order,
                         double fraction, plan **out, sw_err *err)
{
    const char *model = params_str(&o->params, "model");
    if (strcmp(model, "auto")) {
        int rc = plan_model(g, o, order, strcmp(model, "stage") != 0, fraction, out, err);
        sim_result r;
        sw_err es;
        if (!rc && !sim_plan(*out, NULL, NULL, &r, &es) && osw_label_sim(*out, r.iteration_time_s)) {
            plan_free(*out);
            *out = NULL;
            rc = sw_fail(err, SW_ENOMEM, "out of memory");
        }
        return rc;
    }
    *out = NULL;
    plan *p[2] = {NULL, NULL};
    sw_err e[2];
    double t[2] = {HUGE_VAL, HUGE_VAL};
    int rc[2];
    for (int k = 0; k < 2; k++) { /* 0: span, 1: stage */
        rc[k] = plan_model(g, o, order, k == 0, 0.5 * fraction, &p[k], &e[k]);
        if (rc[k] == SW_ENOMEM || rc[k] == SW_EUNSUPPORTED) {
            plan_free(p[0]);
            *err = e[k];
            return rc[k];
        }
        sim_result r;
        sw_err es;
        if (!rc[k] && sim_plan(p[k], NULL, NULL, &r, &es) == 0)
            t[k] = r.iteration_time_s;
    }
    if (!p[0] && !p[1]) {
        *err = e[0];
        return rc[0];
    }
    int pick = t[1] < t[0] ? 1 : 0; /* ties: the span model's */
    if (!p[pick])
        pick = 1 - pick;
    char note[768], other[96];
    if (p[1 - pick])
        snprintf(other, sizeof other, "%.9g s", t[1 - pick]);
    else
        snprintf(other, sizeof other, "no plan");
    snprintf(note, sizeof note, "%s; model=auto: the %s model's plan (%.9g s simulated), the %s "
             "model's %s", p[pick]->notes ? p[pick]->notes : "", pick ? "stage" : "span", t[pick],
             pick ? "span" : "stage", other);
    plan_free(p[1 - pick]);
    if (plan_set_notes(p[pick], note) || osw_label_sim(p[pick], t[pick])) {
        plan_free(p[pick]);
        return sw_fail(err, SW_ENOMEM, "out of memory");
    }
    *out = p[pick];
    return 0;
}

/* schedules=N: up to N distinct schedules (the profile's order, the
   framework's, then uniform random topological orders from the seed;
   duplicates are skipped, at most 8N draws), rows of n ops in *orders;
   the number found, or -1 out of memory. names[k]: 'p', 'f' or 'r'. */
static int osw_schedules(const graph_profile *g, const planner_opts *o, int want,
                         int32_t **orders, char *names)
{
    int32_t n = g->n_ops;
    size_t row = (size_t)n * sizeof(int32_t);
    int32_t *a = sw_malloc((size_t)want * row + 1), *fw = NULL;
    int k = 0;
    if (!a)
        return -1;
    memcpy(a, g->order, row);
    names[k++] = 'p';
    if (k < want) {
        if (!(fw = swu_framework_order(g))) {
            sw_free(a);
            return -1;
        }
        if (memcmp(fw, a, row)) {
            memcpy(a + (size_t)k * (size_t)n, fw, row);
            names[k++] = 'f';
        }
        sw_free(fw);
    }
    if (k < want) {
        gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
        sa_sched_scratch *sc = r ? sa_sched_scratch_new(g) : NULL;
        if (!sc) {
            if (r)
                gsl_rng_free(r);
            sw_free(a);
            return -1;
        }
        gsl_rng_set(r, (unsigned long)o->seed);
        for (int d = 0; d < 8 * want && k < want; d++) {
            int32_t *c = a + (size_t)k * (size_t)n;
            sa_schedule_mutate(g, sc, g->order, 1.0, r, c);
            int dup = 0;
            for (int j = 0; j < k && !dup; j++)
                dup = !memcmp(c, a + (size_t)j * (size_t)n, row);
            if (!dup)
                names[k++] = 'r';
        }
        sa_sched_scratch_free(sc);
        gsl_rng_free(r);
    }
    *orders = a;
    return k;
}

/* schedules=1: the profile's schedule; more: each distinct schedule with
   an equal share of the time (a fixed split), the plan that simulates
   fastest kept; its bound the least over the schedules (a schedule
   without a plan counts with the compute time, a bound of every plan) */
static int plan_optimal_swap(const graph_profile *g, const planner_opts *o, plan **out,
                             sw_err *err)
{
    int want = (int)params_int(&o->params, "schedules");
    if (want <= 1)
        return plan_schedule(g, o, g->order, 1.0, out, err);
    *out = NULL;
    int32_t *orders = NULL;
    char names[65];
    int k = osw_schedules(g, o, want, &orders, names);
    if (k < 0)
        return sw_fail(err, SW_ENOMEM, "out of memory");
    plan *best = NULL;
    double best_t = HUGE_VAL, bound = HUGE_VAL;
    int best_k = -1, all_optimal = 1, rc = 0;
    sw_err first;
    first.code = 0;
    first.msg[0] = 0;
    char list[1024];
    size_t used = 0;
    list[0] = 0;
    for (int j = 0; j < k && !rc; j++) {
        plan *p = NULL;
        sw_err e;
        int r = plan_schedule(g, o, orders + (size_t)j * (size_t)g->n_ops, 1.0 / k, &p, &e);
        if (r == SW_ENOMEM || r == SW_EUNSUPPORTED) {
            *err = e;
            rc = r;
            break;
        }
        sim_result sr;
        sw_err es;
        double t = HUGE_VAL;
        if (!r && sim_plan(p, NULL, NULL, &sr, &es) == 0)
            t = sr.iteration_time_s;
        const char *nm = names[j] == 'p' ? "profile" : names[j] == 'f' ? "framework" : "random";
        if (p && t < HUGE_VAL) {
            bound = SW_MIN(bound, p->solver_bound_s);
            all_optimal &= p->solver_status && !strcmp(p->solver_status, "optimal");
            if (used < sizeof list)
                used += (size_t)snprintf(list + used, sizeof list - used, "%s%d %s %.9g s",
                                         j ? ", " : "", j + 1, nm, t);
        } else {
            bound = SW_MIN(bound, g->total_compute_s);
            all_optimal = 0;
            if (!first.code)
                first = r ? e : es;
            if (used < sizeof list)
                used += (size_t)snprintf(list + used, sizeof list - used, "%s%d %s no plan",
                                         j ? ", " : "", j + 1, nm);
        }
        if (p && t < best_t) { /* ties: the earlier schedule */
            plan_free(best);
            best = p;
            best_t = t;
            best_k = j;
        } else {
            plan_free(p);
        }
    }
    sw_free(orders);
    if (rc)
        goto fail;
    if (!best) {
        rc = sw_fail(err, first.code ? first.code : SW_ENOFIT, "none of %d distinct schedules "
                     "(schedules=%d) has a plan; the first: %s", k, want,
                     first.code ? first.msg : "its plan does not simulate");
        goto fail;
    }
    double obj = best->solver_objective_s;
    bound = SW_MIN(bound, obj);
    double gap = obj > 0 ? (obj - bound) / obj : 0;
    /* optimal: every solve proved its optimum, or the plan meets the set's
       bound (which holds at the real budget) */
    int lowered = best->solver_status && !strcmp(best->solver_status, "lowered memory");
    const char *st = all_optimal || gap <= 1e-9 ? "optimal" : lowered ? "lowered memory"
                                                                       : "stopped";
    const char *bn = best->notes ? best->notes : "";
    if (!strncmp(bn, "optimal-swap: ", 14))
        bn += 14;
    char note[2048];
    snprintf(note, sizeof note, "optimal-swap: %s over %d distinct schedules (schedules=%d, "
             "each with 1/%d of the time); objective %.9g s, best bound %.9g s, gap %.4g%%; the "
             "plan of schedule %d (%.9g s simulated); simulated: %s%s; that schedule's solve: %s",
             st, k, want, k, obj, bound, 100 * gap, best_k + 1, best_t, list,
             used >= sizeof list ? "..." : "", bn);
    if (plan_set_notes(best, note) || plan_set_solver(best, st, obj, bound, gap) ||
        osw_label_sim(best, best_t)) {
        plan_free(best);
        return sw_fail(err, SW_ENOMEM, "out of memory");
    }
    *out = best;
    return 0;
fail:
    plan_free(best);
    return rc;
}

const planner planner_optimal_swap = {1, "optimal-swap", "the optimal swapping plan for the "
                                      "profile's schedule (or the best over a small set of "
                                      "schedules, schedules=N) as a mixed-integer program solved "
                                      "by CBC, in two models (copies spanning ops, or one stage "
                                      "per op; by default both, the faster plan kept); refuses "
                                      "above max_ops", osw_params, plan_optimal_swap,
                                      PLANNER_SIZE_LIMIT};
