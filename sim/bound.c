/* bound.c: lower bounds on the iteration time of any plan under a budget.

   Three facts hold for every plan the verifier accepts and the simulator
   times (docs/bounds.md writes each argument out):
   - every op runs at least once on the one compute stream: T >= compute;
   - while op o runs, every storage that is live then (made before or by o,
     used by o or later, or persistent and used at all) is either resident
     or off the GPU, and at most budget bytes are resident, so at least
     live(o) + workspace(o) - budget bytes are off the GPU at o; each of them
     is used again, so it comes back by PCIe (at most the fastest
     host-to-device rate) or is recomputed (a re-run of its producer);
   - a storage made by op p and used by op u is live at every op o with
     p ->* o ->* u in the dependency DAG, whatever the schedule.
   Bounds never count held_until (a planner may free such a storage early)
   nor copy latencies (they only add). */
#include "bound.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../profiles/device.h"

/* The smallest T with T >= compute + (excess - s) * rho and T >= s / rate
   for some 0 <= s <= excess: the excess split between PCIe (hidden behind
   compute at best) and recomputation (added to the compute stream). */
static double split_bound(double compute, double excess, double rho, double rate)
{
    if (excess <= 0 || excess / rate <= compute)
        return compute;
    if (!isfinite(rho))
        return excess / rate;
    return (compute + excess * rho) / (1 + rate * rho);
}

/* Reachability: descendants-or-self (D) and ancestors-or-self (A) of each op,
   w words a row, and the compute time of each set (cD, cA). */
typedef struct reach {
    uint64_t *D, *A;
    double *cD, *cA;
    size_t w;
} reach;

static void reach_free(reach *x)
{
    sw_free(x->D);
    sw_free(x->A);
    sw_free(x->cD);
    sw_free(x->cA);
    memset(x, 0, sizeof *x);
}

static int has_bit(const uint64_t *row, int32_t o) { return (int)((row[o / 64] >> (o % 64)) & 1); }

/* cD and cA: the compute time of each op's descendants and ancestors
   (or self), by byte-wide lookup tables (the sum of the op times of each
   8-op group's 256 subsets). Returns 0 or SW_ENOMEM. */
static int reach_times(const graph_profile *g, reach *r)
{
    int32_t n = g->n_ops;
    size_t w = r->w, nb = w * 8;
    double *tb = sw_calloc(nb * 256 + 1, sizeof *tb);
    if (!tb)
        return SW_ENOMEM;
    for (size_t q = 0; q < nb; q++)
        for (int v = 1; v < 256; v++) {
            int low = __builtin_ctz((unsigned)v);
            size_t o = q * 8 + (size_t)low;
            tb[q * 256 + (size_t)v] = tb[q * 256 + (size_t)(v & (v - 1))] +
                                      (o < (size_t)n ? g->ops[o].time_s : 0);
        }
    for (int32_t o = 0; o < n; o++)
        for (int side = 0; side < 2; side++) {
            const uint64_t *row = (side ? r->A : r->D) + (size_t)o * w;
            double t = 0;
            for (size_t x = 0; x < w; x++)
                for (uint64_t m = row[x], q = x * 8; m; m >>= 8, q++)
                    t += tb[q * 256 + (m & 255)];
            (side ? r->cA : r->cD)[o] = t;
        }
    sw_free(tb);
    return 0;
}

/* Returns 0 or SW_ENOMEM. */
static int reach_build(const graph_profile *g, reach *r)
{
    int32_t n = g->n_ops;
    size_t w = ((size_t)n + 63) / 64;
    memset(r, 0, sizeof *r);
    r->w = w;
    r->D = sw_calloc((size_t)n * w + 1, sizeof *r->D);
    r->A = sw_calloc((size_t)n * w + 1, sizeof *r->A);
    r->cD = sw_calloc((size_t)n + 1, sizeof *r->cD);
    r->cA = sw_calloc((size_t)n + 1, sizeof *r->cA);
    if (!r->D || !r->A || !r->cD || !r->cA) {
        reach_free(r);
        return SW_ENOMEM;
    }
    for (int32_t k = n - 1; k >= 0; k--) {
        int32_t o = g->order[k];
        uint64_t *d = r->D + (size_t)o * w;
        d[o / 64] |= 1ull << (o % 64);
        for (int32_t j = g->succ_off[o]; j < g->succ_off[o + 1]; j++) {
            const uint64_t *ds = r->D + (size_t)g->succ[j] * w;
            for (size_t x = 0; x < w; x++)
                d[x] |= ds[x];
        }
    }
    for (int32_t k = 0; k < n; k++) {
        int32_t o = g->order[k];
        uint64_t *a = r->A + (size_t)o * w;
        a[o / 64] |= 1ull << (o % 64);
        for (int32_t j = g->pred_off[o]; j < g->pred_off[o + 1]; j++) {
            const uint64_t *ap = r->A + (size_t)g->pred[j] * w;
            for (size_t x = 0; x < w; x++)
                a[x] |= ap[x];
        }
    }
    return 0;
}

/* Per op: bytes live at it in every schedule (reachability), without the
   persistent storages and the workspace. Returns 0 or SW_ENOMEM. */
static int dag_live(const graph_profile *g, const reach *rc, const int32_t *s_off,
                    const int32_t *s_ops, int64_t *live)
{
    size_t w = rc->w;
    uint64_t *acc = sw_malloc(w * sizeof *acc + 1);
    if (!acc)
        return SW_ENOMEM;
    for (int32_t s = 0; s < g->n_tensors; s++) {
        if (s_off[s] == s_off[s + 1] || g->tensors[s].persistent)
            continue;
        memset(acc, 0, w * sizeof *acc);
        for (int32_t j = s_off[s]; j < s_off[s + 1]; j++) {
            const uint64_t *au = rc->A + (size_t)s_ops[j] * w;
            for (size_t x = 0; x < w; x++)
                acc[x] |= au[x];
        }
        int32_t p = g->tensors[s].producer;
        const uint64_t *dp = p >= 0 ? rc->D + (size_t)p * w : NULL;
        int64_t b = g->bytes[s];
        for (size_t x = 0; x < w; x++) {
            uint64_t m = dp ? acc[x] & dp[x] : acc[x];
            while (m) {
                int bit = __builtin_ctzll(m);
                m &= m - 1;
                live[x * 64 + (size_t)bit] += b;
            }
        }
    }
    sw_free(acc);
    return 0;
}

/* ---- The two-window bound (docs/bounds.md, "Bytes that leave and come back") ----

   At the start of an op k, at most the budget is resident, so at least
   excess(k) bytes of the storages live at k and not touched by k are off the
   GPU. Each came back (before its next use u after k) by a swap-in or by a
   re-run of its producer p. A swapped-in storage made by p in the iteration
   was copied out after p and before k (the swap-in needs a current host copy);
   its copy out lies in [end of p, start of k], its copy in in [start of k,
   start of u]. These windows hold the compute of the ops that can run in
   them plus the extra time (idle compute stream, re-runs) on either side of
   k's start: Z1 before, Z2 after; every re-run that restores one of them is in
   Z2. The iteration lasts at least compute + Z1 + Z2. */

#define WIN_CUTS 64      /* cuts (ops) evaluated, the largest excesses */
#define WIN_ANY_CUTS 4   /* of which the bound with re-runs is solved on the best */
#define WIN_GRID 16      /* pieces of the grid of Z2 for the bound with re-runs (cut twice) */
#define WIN_LAST_ROWS 8  /* mutators m of wrap candidates given a row "after m" (the latest) */

typedef struct wcand {
    double b;            /* bytes */
    double base1;        /* the copy-out window's compute, at most (INFINITY: unconstrained);
                            with wrap, plus the previous iteration's extra time W */
    double base2;        /* the copy-in window's compute, at most (INFINITY: unconstrained) */
    double rho;          /* re-run seconds per byte restored (INFINITY: cannot be re-run) */
    int32_t s;           /* the storage */
    int wrap;            /* a persistent storage mutated in the iteration but not before k:
                            its copy-out window starts in the previous iteration */
} wcand;

typedef struct wkey {
    double key;
    int32_t i;
} wkey;

static int wkey_cmp(const void *a, const void *b)
{
    const wkey *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->i - y->i;
}

/* What the cuts need: a schedule-free one (rc != NULL) or a fixed order
   (pos, pre: the prefix sums of op times in the order). */
typedef struct wctx {
    const graph_profile *g;
    const reach *rc;
    const int32_t *pos;
    const double *pre;
    const int32_t *s_off, *s_ops;
    const uint8_t *s_flag;
    const double *made;  /* per op: non-persistent bytes it creates */
    int32_t *mark;       /* per storage: k + 1 when k touches it */
    wcand *c;            /* candidates of the cut */
    wkey *k1, *k1w, *k2, *kr; /* scratch: sort keys (k1w: the copy-out keys of wrap ones) */
    int32_t n1, n1w;     /* entries in k1 and k1w */
    double W;            /* the previous iteration's extra time the wrap windows get
                            (INFINITY: they are left unconstrained) */
    int tied_ok;         /* the cut's wrap candidates' mutators all run after k */
    int tied;            /* W is the Z2 w_z1 is given (every wrap candidate's mutators
                            run after k: that extra time is part of the previous
                            iteration's Z2) */
    int depth;           /* times w_grid cuts the pieces again */
    double grid_best;    /* the least Z2 + Z1 w_grid has met at a point (a value reached) */
    double floor_s, floor_a; /* the extra time the cuts so far force (swap only, any):
                            a fixed point that cannot pass it is not sought */
    int32_t *rank;       /* per candidate: its rank by rho (1..), 0 if never re-run */
    double *fb, *fc, *rb, *rr; /* Fenwick trees (bytes, cost) and bytes, rho by rank */
    /* the rows "after m" (schedule-free only): the bytes that must leave
       between m's end in the previous iteration and k's start, and the
       compute that stretch can hold at most, besides W and Z1 */
    int32_t n_last;
    double last_b[WIN_LAST_ROWS], last_base[WIN_LAST_ROWS];
    int32_t *seen;       /* per op: k + 1 once listed as a mutator of a wrap candidate */
    wkey *mut;           /* scratch: the mutators listed */
    double *beta, *adj;  /* per op: wrap bytes it mutates (shared), its value in the closure */
    double d2h, h2d, budget;
} wctx;

/* ops a, b ordered: is a before b (DAG: an ancestor of b; order: earlier) */
static int w_before(const wctx *x, int32_t a, int32_t b)
{
    if (x->rc)
        return a != b && has_bit(x->rc->A + (size_t)b * x->rc->w, a);
    return x->pos[a] < x->pos[b];
}

/* compute that can run between the end of p and the start of k, at most */
static double w_between_pk(const wctx *x, int32_t p, int32_t k)
{
    if (x->rc)
        return SW_MAX(0, x->g->total_compute_s - x->rc->cA[p] - x->rc->cD[k]);
    return x->pre[x->pos[k]] - x->pre[x->pos[p] + 1];
}

/* compute that can run after the end of m (in its iteration) plus compute
   that can run before the start of k (in the next one) */
static double w_wrap_mk(const wctx *x, int32_t m, int32_t k)
{
    if (x->rc)
        return SW_MAX(0, x->g->total_compute_s - x->rc->cA[m]) +
               SW_MAX(0, x->g->total_compute_s - x->rc->cD[k]);
    int32_t n = x->g->n_ops;
    return (x->pre[n] - x->pre[x->pos[m] + 1]) + x->pre[x->pos[k]];
}

/* compute that can run between the start of k and the start of u (u after k) */
static double w_between_ku(const wctx *x, int32_t k, int32_t u)
{
    if (x->rc)
        return SW_MAX(0, x->g->total_compute_s - (x->rc->cA[k] - x->g->ops[k].time_s) -
                             x->rc->cD[u]);
    return x->pre[x->pos[u]] - x->pre[x->pos[k]];
}

/* The candidates of cut k (live at k, not touched by k) into x->c; their
   count. *excess: the bytes of them off the GPU at k's start, at least. */
static int32_t w_cands(wctx *x, int32_t k, double *excess, double *total)
{
    const graph_profile *g = x->g;
    double live = (double)g->ops[k].workspace_bytes, tot = 0;
    for (int32_t j = g->acc_off[k]; j < g->acc_off[k + 1]; j++) {
        x->mark[g->acc[j]] = k + 1;
        live += (double)g->bytes[g->acc[j]];
    }
    int32_t m = 0;
    for (int32_t s = 0; s < g->n_tensors; s++) {
        if (x->s_off[s] == x->s_off[s + 1] || x->mark[s] == k + 1)
            continue;
        const graph_tensor *t = &g->tensors[s];
        int32_t p = t->persistent ? -1 : t->producer;
        if (p >= 0 && !w_before(x, p, k))
            continue; /* not made before k in every schedule (of the order) */
        double base2 = INFINITY, base1 = p >= 0 ? w_between_pk(x, p, k) : INFINITY;
        double wrap1 = INFINITY;
        int mutated = 0, after = 0;
        for (int32_t j = x->s_off[s]; j < x->s_off[s + 1]; j++) {
            int32_t u = x->s_ops[j];
            int before = 0;
            if (w_before(x, k, u)) {
                after = 1;
                base2 = SW_MIN(base2, w_between_ku(x, k, u));
            } else if ((x->s_flag[j] & GA_MUTATE) && w_before(x, u, k)) {
                mutated = before = 1;
                /* a copy that brings s back holds the version u made: it
                   was copied out after u ended */
                base1 = SW_MIN(base1, w_between_pk(x, u, k));
            }
            if ((x->s_flag[j] & GA_MUTATE) && !before && t->persistent)
                wrap1 = SW_MIN(wrap1, w_wrap_mk(x, u, k)); /* u of the previous iteration */
        }
        if (!t->persistent && !after)
            continue; /* not live at k */
        wcand *c = &x->c[m++];
        c->s = s;
        c->b = (double)g->bytes[s];
        c->wrap = t->persistent && !mutated && isfinite(wrap1);
        c->base1 = c->wrap ? wrap1 : base1;
        c->base2 = base2;
        c->rho = INFINITY;
        if (p >= 0 && !mutated && t->kind != GK_INPUT && !g->ops[p].n_mut && x->made[p] > 0)
            c->rho = g->ops[p].time_s / x->made[p];
        tot += c->b;
    }
    *total = tot;
    *excess = live + tot - x->budget;
    return m;
}

static void fen_clear(wctx *x, int32_t m)
{
    memset(x->fb, 0, ((size_t)m + 1) * sizeof *x->fb);
    memset(x->fc, 0, ((size_t)m + 1) * sizeof *x->fc);
}

/* Fenwick tree over ranks 1..m: insert rank r */
static void fen_add(wctx *x, int32_t m, int32_t r)
{
    double b = x->rb[r], cst = x->rb[r] * x->rr[r];
    for (int32_t i = r; i <= m; i += i & -i) {
        x->fb[i] += b;
        x->fc[i] += cst;
    }
}

/* Bytes re-run within z seconds among the inserted ranks, cheapest first
   (a fractional knapsack: an upper bound on what re-runs restore in z). */
static double fen_take(const wctx *x, int32_t m, double z)
{
    int32_t at = 0, step = 1;
    double cost = 0, bytes = 0;
    while (step * 2 <= m)
        step *= 2;
    for (; step; step /= 2)
        if (at + step <= m && cost + x->fc[at + step] <= z) {
            at += step;
            cost += x->fc[at];
            bytes += x->fb[at];
        }
    if (at < m && x->rr[at + 1] > 0)
        bytes += SW_MIN(x->rb[at + 1], (z - cost) / x->rr[at + 1]);
    return bytes;
}

/* Z1 needed for a given Z2 = z: the copy-out windows, with re-runs of z
   seconds restoring bytes of the prefix instead (any < 0: no re-runs) */
static double w_z1(wctx *x, int32_t nr, double slack, double z, int any)
{
    double need = 0, bA = 0, W = x->tied ? z : x->W;
    int32_t n1 = x->n1, n1w = isfinite(W) ? x->n1w : 0;
    if (any)
        fen_clear(x, nr);
    for (int32_t i = 0, iw = 0; i < n1 || iw < n1w;) {
        /* the two lists merged by the window's length (wrap ones: + W) */
        double ka = i < n1 ? x->k1[i].key : INFINITY;
        double kb = iw < n1w ? x->k1w[iw].key + W : INFINITY;
        int32_t ci = ka <= kb ? x->k1[i++].i : x->k1w[iw++].i;
        double base = SW_MIN(ka, kb);
        const wcand *c = &x->c[ci];
        bA += c->b;
        if (any && x->rank[ci])
            fen_add(x, nr, x->rank[ci]);
        double top = (bA - slack) / x->d2h - base; /* this row's need with no re-runs */
        if (top <= need)
            continue; /* re-runs only lower it */
        double k = any ? fen_take(x, nr, z) : 0;
        need = SW_MAX(need, (bA - slack - k) / x->d2h - base);
    }
    if (n1w) /* the rows "after m": every ranked candidate is in the tree now */
        for (int32_t r = 0; r < x->n_last; r++) {
            double top = (x->last_b[r] - slack) / x->d2h - x->last_base[r] - W;
            if (top <= need)
                continue;
            double k = any ? fen_take(x, nr, z) : 0;
            need = SW_MAX(need, (x->last_b[r] - slack - k) / x->d2h - x->last_base[r] - W);
        }
    return need;
}

/* The rows "after m" of cut k (schedule-free; docs/bounds.md): for a
   mutator m of wrap candidates, the copies out of every candidate with a
   copy-out window, but the wrap ones whose mutators all precede m, lie in
   [end of m in the previous iteration, S_k]. That stretch holds W, Z1, the
   compute before k (at most C - c(desc*(k))) and the ops R that ran after m
   in the previous iteration; R is closed under descendants, and a wrap
   candidate an op of R mutates must leave in the stretch too. So
   b(base) + b(wrap of R) - slack <= d2h (W + Z1 + compute before k + c(R))
   + re-runs, and the plan picks R: the row takes the most that
   d2h c(R) - b(wrap of R) can be, bounded from above by giving each op v
   not an ancestor of m the value d2h t_v - beta_v (beta_v: v's share of
   the wrap bytes it mutates, split among each storage's mutators), and
   moving a negative value to one of v's predecessors that is not an
   ancestor of m (when that one is in R, v is). The WIN_LAST_ROWS mutators
   with the most compute before them get a row. */
static void w_last_rows(wctx *x, int32_t k, int32_t m)
{
    const graph_profile *g = x->g;
    const reach *rc = x->rc;
    x->n_last = 0;
    if (!rc)
        return; /* under an order the prefix rows hold these exactly */
    int32_t nm = 0, n = g->n_ops;
    double nonwrap = 0;
    for (int32_t i = 0; i < m; i++) {
        const wcand *c = &x->c[i];
        if (!c->wrap) {
            if (isfinite(c->base1))
                nonwrap += c->b;
            continue;
        }
        for (int32_t j = x->s_off[c->s]; j < x->s_off[c->s + 1]; j++)
            if ((x->s_flag[j] & GA_MUTATE) && x->seen[x->s_ops[j]] != k + 1) {
                x->seen[x->s_ops[j]] = k + 1;
                x->mut[nm++] = (wkey){-rc->cA[x->s_ops[j]], x->s_ops[j]};
            }
    }
    qsort(x->mut, (size_t)nm, sizeof *x->mut, wkey_cmp);
    nm = SW_MIN(nm, WIN_LAST_ROWS);
    double before_k = SW_MAX(0, g->total_compute_s - rc->cD[k]);
    for (int32_t r = 0; r < nm; r++) {
        int32_t mu = x->mut[r].i;
        const uint64_t *am = rc->A + (size_t)mu * rc->w;
        double b = nonwrap, ub = 0;
        for (int32_t v = 0; v < n; v++)
            x->beta[v] = 0;
        for (int32_t i = 0; i < m; i++) {
            const wcand *c = &x->c[i];
            if (!c->wrap)
                continue;
            int by_m = 0, nmut = 0;
            for (int32_t j = x->s_off[c->s]; j < x->s_off[c->s + 1]; j++)
                if (x->s_flag[j] & GA_MUTATE) {
                    nmut++;
                    by_m |= x->s_ops[j] == mu;
                }
            if (by_m) {
                b += c->b;
                continue;
            }
            for (int32_t j = x->s_off[c->s]; j < x->s_off[c->s + 1]; j++)
                if (x->s_flag[j] & GA_MUTATE)
                    x->beta[x->s_ops[j]] += c->b / nmut;
        }
        for (int32_t v = 0; v < n; v++)
            x->adj[v] = x->d2h * g->ops[v].time_s - x->beta[v];
        for (int32_t q = n - 1; q >= 0; q--) {
            int32_t v = g->order[q];
            if (has_bit(am, v))
                continue; /* m or an ancestor of m: before m in every schedule */
            if (x->adj[v] >= 0) {
                ub += x->adj[v];
                continue;
            }
            for (int32_t j = g->pred_off[v]; j < g->pred_off[v + 1]; j++)
                if (!has_bit(am, g->pred[j])) {
                    x->adj[g->pred[j]] += x->adj[v]; /* in R whenever that one is */
                    break;
                }
        }
        x->last_b[x->n_last] = b;
        x->last_base[x->n_last++] = before_k + ub / x->d2h;
    }
}

/* Least Z2 the copy-in windows allow (re-runs restoring bytes instead when
   any); a lower bound on it */
static double w_z2min(wctx *x, int32_t n2, int32_t nr, double slack, int any)
{
    double z = 0, bB = 0;
    if (any)
        fen_clear(x, nr);
    for (int32_t j = 0; j < n2; j++) {
        const wcand *c = &x->c[x->k2[j].i];
        bB += c->b;
        if (any && x->rank[x->k2[j].i])
            fen_add(x, nr, x->rank[x->k2[j].i]);
        double R = bB - slack - x->h2d * c->base2; /* bytes beyond the window's capacity */
        if (R <= 0)
            continue;
        if (!any) {
            z = SW_MAX(z, R / x->h2d);
            continue;
        }
        if (x->h2d * z + fen_take(x, nr, z) >= R)
            continue;
        double lo = z, hi = R / x->h2d; /* h2d * lo + K(lo) < R <= h2d * hi + K(hi) */
        for (int it = 0; it < 60 && hi - lo > 1e-12 * hi; it++) {
            double mid = 0.5 * (lo + hi);
            if (x->h2d * mid + fen_take(x, nr, mid) >= R)
                hi = mid;
            else
                lo = mid;
        }
        z = lo; /* the root is above lo */
    }
    return z;
}

static double w_grid(wctx *x, int32_t nr, double slack, double a, double fa,
                     double b, double fb, int depth);

/* The cut's extra time Z1 + Z2 at the current x->W, at least: without
   re-runs (any == 0: a2 is the least Z2), or with them (z0: the least Z2,
   cost_all: the re-run time of every recomputable candidate), Z2 sought
   up to zmax only: a value above zmax says the least Z1 + Z2 is above it. */
static double w_eval(wctx *x, int any, int32_t nr, double slack, double a2, double z0,
                     double cost_all, double zmax)
{
    double zs = SW_MAX(0, w_z1(x, 0, slack, a2, 0)) + a2; /* (z: the W when tied) */
    if (!any)
        return zs;
    if (z0 > zmax)
        return INFINITY; /* every Z2 allowed is above zmax */
    if (!(cost_all > 0)) /* re-runs restore everything recomputable in no time */
        return SW_MIN(zs, z0 + SW_MAX(0, w_z1(x, nr, slack, z0, 1)));
    /* Z1(z) never rises with z, so on [a, b] Z2 + Z1 >= a + Z1(b); beyond
       cost_all more re-run time restores nothing more, and beyond zmax
       Z2 alone is above it */
    double hi = SW_MIN(z0 + cost_all, zmax), fhi = hi + SW_MAX(0, w_z1(x, nr, slack, hi, 1));
    double f0 = z0 + SW_MAX(0, w_z1(x, nr, slack, z0, 1));
    double v = SW_MIN(zs, SW_MIN(fhi, w_grid(x, nr, slack, z0, f0, hi, fhi, x->depth)));
    return hi < z0 + cost_all && v > zmax ? INFINITY : v;
}

/* The least X = T - C the cut allows, at least. The copy-out window of a
   wrap candidate starts in the previous iteration and holds that
   iteration's extra time W <= X_prev; h(W) (w_eval) never rises with W and
   falls by at most what W rises, so every steady state has a mean X at
   least the fixed point X = h(X) (docs/bounds.md). Bisection from
   [0, top] (top: at least the fixed point; the swap-only one bounds the
   one with re-runs), keeping the lower end: lo < h(lo) means lo is below
   the fixed point. */
static double w_fix(wctx *x, int any, int32_t nr, double slack, double a2, double z0,
                    double cost_all, double top)
{
    x->W = INFINITY;
    x->depth = 2;
    double h_inf = w_eval(x, any, nr, slack, a2, z0, cost_all, INFINITY); /* h's least value */
    if (!x->n1w)
        return h_inf;
    if (x->tied_ok) {
        x->tied = 1;
        /* W is the previous iteration's Z2: the least mean Z1 + Z2 is the
           least Z2 + Z1(Z2, W = Z2) (docs/bounds.md); Z1 falls by at most
           what W rises, so without re-runs the least Z2 gives it */
        x->depth = 2;
        x->grid_best = INFINITY;
        double v = w_eval(x, any, nr, slack, a2, z0, cost_all, INFINITY);
        x->tied = 0;
        x->W = INFINITY;
        return SW_MAX(v, h_inf);
    }
    double lo = h_inf, hi = top; /* the fixed point is at least h's least value */
    x->W = 0;
    x->depth = 0;
    x->grid_best = INFINITY;
    double h0 = w_eval(x, any, nr, slack, a2, z0, cost_all, INFINITY);
    if (!any)
        hi = h0; /* h(0) */
    else /* a point's value at W = 0 is at least h(0), itself at least the fixed point */
        hi = SW_MIN(hi, x->grid_best);
    if (hi <= SW_MAX(h_inf, any ? x->floor_a : x->floor_s) + 1e-4 * x->g->total_compute_s) {
        x->W = INFINITY;
        return h_inf; /* the wrap windows cannot raise this cut, or the bound, by
                         a 10,000th of the compute */
    }
    x->depth = 0;
    if (any && cost_all > 0) {
        /* with re-runs each value solves a grid over Z2: few of them. From lo
           <= X*, X* >= (lo + h(lo)) / 2 (h falls by at most what W rises),
           and h(lo) is at least the grid's bound over Z2 in [z0, hi] or,
           for a larger Z2, hi itself; the gap to X* at least halves */
        for (int it = 0; it < 8; it++) {
            x->W = lo;
            double next = 0.5 * (lo + SW_MIN(hi, w_eval(x, 1, nr, slack, a2, z0, cost_all, hi)));
            if (!(next > lo * (1 + 1e-9)))
                break;
            lo = next;
        }
        x->W = INFINITY;
        return SW_MAX(lo, h_inf);
    }
    for (int it = 0; it < 30 && hi - lo > 1e-7 * hi; it++) {
        double mid = 0.5 * (lo + hi);
        x->W = mid;
        if (mid < w_eval(x, any, nr, slack, a2, z0, cost_all, mid))
            lo = mid;
        else
            hi = mid;
    }
    x->W = INFINITY;
    return SW_MAX(lo, h_inf);
}

/* The extra time Z1 + Z2 cut k forces, at least: without re-runs (*zs) and
   with them (*za, when za != NULL). *z1s, *z2s: the two parts without
   re-runs, the wrap windows left unconstrained (for the pairs of cuts). */
static void w_cut(wctx *x, int32_t k, double *zs, double *za, double *z1s, double *z2s)
{
    double excess, total;
    int32_t m = w_cands(x, k, &excess, &total);
    *zs = 0;
    if (za)
        *za = 0;
    if (z1s)
        *z1s = *z2s = 0;
    if (excess <= 0)
        return;
    double slack = total - excess; /* bytes of the candidates that may stay resident */
    int32_t n1 = 0, n1w = 0, n2 = 0, nr = 0;
    for (int32_t i = 0; i < m; i++) {
        if (x->c[i].wrap)
            x->k1w[n1w++] = (wkey){x->c[i].base1, i};
        else if (isfinite(x->c[i].base1))
            x->k1[n1++] = (wkey){x->c[i].base1, i};
        if (isfinite(x->c[i].base2))
            x->k2[n2++] = (wkey){x->c[i].base2, i};
        if (isfinite(x->c[i].rho))
            x->kr[nr++] = (wkey){x->c[i].rho, i};
        x->rank[i] = 0;
    }
    qsort(x->k1, (size_t)n1, sizeof *x->k1, wkey_cmp);
    qsort(x->k1w, (size_t)n1w, sizeof *x->k1w, wkey_cmp);
    qsort(x->k2, (size_t)n2, sizeof *x->k2, wkey_cmp);
    x->n1 = n1;
    x->n1w = n1w;
    if (n1w)
        w_last_rows(x, k, m);
    else
        x->n_last = 0;
    x->tied_ok = 1; /* every wrap candidate's mutators after k in every schedule */
    for (int32_t i = 0; i < m && x->tied_ok; i++)
        if (x->c[i].wrap)
            for (int32_t j = x->s_off[x->c[i].s]; j < x->s_off[x->c[i].s + 1]; j++)
                if ((x->s_flag[j] & GA_MUTATE) && !w_before(x, k, x->s_ops[j])) {
                    x->tied_ok = 0;
                    break;
                }
    x->W = INFINITY;
    double a2 = w_z2min(x, n2, 0, slack, 0);
    if (z1s) {
        *z1s = SW_MAX(0, w_z1(x, 0, slack, 0, 0));
        *z2s = a2;
    }
    *zs = w_fix(x, 0, 0, slack, a2, 0, 0, INFINITY);
    if (!za || *zs <= 0)
        return;

    qsort(x->kr, (size_t)nr, sizeof *x->kr, wkey_cmp);
    double cost_all = 0;
    for (int32_t r = 0; r < nr; r++) {
        const wcand *c = &x->c[x->kr[r].i];
        x->rank[x->kr[r].i] = r + 1;
        x->rb[r + 1] = c->b;
        x->rr[r + 1] = c->rho;
        cost_all += c->b * c->rho;
    }
    double z0 = w_z2min(x, n2, nr, slack, 1);
    *za = SW_MIN(*zs, w_fix(x, 1, nr, slack, a2, z0, cost_all, *zs));
}

/* A lower bound on min Z2 + Z1(Z2) over [a, b] (fa, fb: the values at the
   ends): WIN_GRID pieces, each at least its left end + Z1 at its right end;
   the pieces whose bound is below the least value seen are cut again
   (depth times). */
static double w_grid(wctx *x, int32_t nr, double slack, double a, double fa,
                     double b, double fb, int depth)
{
    double z[WIN_GRID + 1], f[WIN_GRID + 1], best = SW_MIN(fa, fb), lb = best;
    z[0] = a;
    f[0] = fa;
    z[WIN_GRID] = b;
    f[WIN_GRID] = fb;
    for (int i = 1; i < WIN_GRID; i++) {
        z[i] = a + (b - a) * i / WIN_GRID;
        f[i] = z[i] + SW_MAX(0, w_z1(x, nr, slack, z[i], 1));
        best = SW_MIN(best, f[i]);
    }
    x->grid_best = SW_MIN(x->grid_best, best);
    for (int i = 0; i < WIN_GRID; i++) {
        double piece = z[i] + (f[i + 1] - z[i + 1]); /* left end + Z1 at the right end */
        if (piece < best && depth > 0)
            piece = w_grid(x, nr, slack, z[i], f[i], z[i + 1], f[i + 1], depth - 1);
        lb = SW_MIN(lb, piece);
    }
    return lb;
}

static int wkey_desc(const void *a, const void *b) { return -wkey_cmp(a, b); }

/* The two-window bounds over the cuts: the WIN_CUTS ops with the largest
   excess (live - budget, from live_at), the bound with re-runs on the
   WIN_ANY_CUTS of them where the swap-only one is largest. */
static void w_bounds(wctx *x, const int64_t *live_at, double *swap_s, double *any_s,
                     int32_t *cut_op)
{
    const graph_profile *g = x->g;
    int32_t n = g->n_ops, nk = 0;
    wkey *ks = sw_malloc(((size_t)n + 1) * sizeof *ks);
    *swap_s = *any_s = g->total_compute_s;
    *cut_op = -1;
    if (!ks)
        return; /* (the caller's bounds stand) */
    for (int32_t o = 0; o < n; o++)
        if ((double)live_at[o] > x->budget)
            ks[nk++] = (wkey){(double)(live_at[o] - (int64_t)x->budget), o};
    qsort(ks, (size_t)nk, sizeof *ks, wkey_desc);
    nk = SW_MIN(nk, WIN_CUTS);
    double z1[WIN_CUTS], z2[WIN_CUTS];
    int32_t op[WIN_CUTS];
    for (int32_t i = 0; i < nk; i++) {
        double zs;
        x->floor_s = *swap_s - g->total_compute_s;
        w_cut(x, ks[i].i, &zs, NULL, &z1[i], &z2[i]);
        op[i] = ks[i].i;
        ks[i].key = zs;
        if (g->total_compute_s + zs > *swap_s)
            *swap_s = g->total_compute_s + zs;
    }
    /* two cuts, k1 before k2 in every schedule (of the order): the copy-out
       rows of k1 need Z1 before S_k1, the copy-in rows of k2 Z2 after S_k2,
       and the two stretches do not overlap */
    for (int32_t i = 0; i < nk; i++)
        for (int32_t j = 0; j < nk; j++)
            if (z1[i] + z2[j] > 0 && w_before(x, op[i], op[j]) &&
                g->total_compute_s + z1[i] + z2[j] > *swap_s)
                *swap_s = g->total_compute_s + z1[i] + z2[j];
    qsort(ks, (size_t)nk, sizeof *ks, wkey_desc);
    for (int32_t i = 0; i < SW_MIN(nk, WIN_ANY_CUTS) && ks[i].key > 0; i++) {
        double zs, za;
        x->floor_s = 0;
        x->floor_a = *any_s - g->total_compute_s;
        w_cut(x, ks[i].i, &zs, &za, NULL, NULL);
        if (g->total_compute_s + za > *any_s) {
            *any_s = g->total_compute_s + za;
            *cut_op = ks[i].i;
        }
    }
    if (*cut_op < 0 && nk > 0 && ks[0].key > 0)
        *cut_op = ks[0].i;
    sw_free(ks);
}

/* The window bounds of r (schedule-free where rc, else for order), given
   the live bytes at each op. Returns 0 or SW_ENOMEM. */
static int window_bounds(const graph_profile *g, reach *rc, const int32_t *order,
                         const int32_t *s_off, const int32_t *s_ops, const uint8_t *s_flag,
                         const int64_t *live_at, bound_result *r)
{
    int32_t n = g->n_ops, nt = g->n_tensors;
    size_t m1 = (size_t)nt + 1;
    wctx x = {.g = g, .rc = rc, .s_off = s_off, .s_ops = s_ops, .s_flag = s_flag,
              .d2h = r->d2h_rate, .h2d = r->h2d_rate, .budget = (double)r->budget_bytes};
    int32_t *pos = order ? sw_malloc(((size_t)n + 1) * sizeof *pos) : NULL;
    double *pre = order ? sw_malloc(((size_t)n + 1) * sizeof *pre) : NULL;
    double *made = sw_calloc((size_t)n + 1, sizeof *made);
    x.mark = sw_calloc(m1, sizeof *x.mark);
    x.c = sw_malloc(m1 * sizeof *x.c);
    x.k1 = sw_malloc(m1 * sizeof *x.k1);
    x.k1w = sw_malloc(m1 * sizeof *x.k1w);
    x.k2 = sw_malloc(m1 * sizeof *x.k2);
    x.kr = sw_malloc(m1 * sizeof *x.kr);
    x.rank = sw_malloc(m1 * sizeof *x.rank);
    x.fb = sw_malloc(m1 * sizeof *x.fb);
    x.fc = sw_malloc(m1 * sizeof *x.fc);
    x.rb = sw_malloc(m1 * sizeof *x.rb);
    x.rr = sw_malloc(m1 * sizeof *x.rr);
    x.seen = sw_calloc((size_t)n + 1, sizeof *x.seen);
    x.mut = sw_malloc(((size_t)n + 1) * sizeof *x.mut);
    x.beta = sw_malloc(((size_t)n + 1) * sizeof *x.beta);
    x.adj = sw_malloc(((size_t)n + 1) * sizeof *x.adj);
    int rc_ = 0, excess = 0;
    if (order) {
        r->order_window_swap_s = r->order_window_any_s = g->total_compute_s;
        r->order_window_op = -1;
    } else {
        r->window_swap_s = r->window_any_s = g->total_compute_s;
        r->window_op = -1;
    }
    for (int32_t o = 0; o < n; o++)
        excess |= live_at[o] > r->budget_bytes;
    if (!excess)
        goto done; /* no op has more live than the budget: the windows add nothing */
    if ((rc && reach_times(g, rc)) || (order && (!pos || !pre)) || !made || !x.mark || !x.c || !x.k1 || !x.k1w || !x.k2 || !x.kr ||
        !x.rank || !x.fb || !x.fc || !x.rb || !x.rr || !x.seen || !x.mut || !x.beta || !x.adj) {
        rc_ = SW_ENOMEM;
        goto done;
    }
    for (int32_t o = 0; o < n; o++)
        for (int32_t j = g->acc_off[o]; j < g->acc_off[o + 1]; j++)
            if ((g->acc_flag[j] & GA_CREATE) && !g->tensors[g->acc[j]].persistent)
                made[o] += (double)g->bytes[g->acc[j]];
    x.made = made;
    if (order) {
        pre[0] = 0;
        for (int32_t k = 0; k < n; k++) {
            pos[order[k]] = k;
            pre[k + 1] = pre[k] + g->ops[order[k]].time_s;
        }
        x.pos = pos;
        x.pre = pre;
        w_bounds(&x, live_at, &r->order_window_swap_s, &r->order_window_any_s,
                 &r->order_window_op);
    } else {
        w_bounds(&x, live_at, &r->window_swap_s, &r->window_any_s, &r->window_op);
    }
done:
    sw_free(pos);
    sw_free(pre);
    sw_free(made);
    sw_free(x.mark);
    sw_free(x.c);
    sw_free(x.k1);
    sw_free(x.k1w);
    sw_free(x.k2);
    sw_free(x.kr);
    sw_free(x.rank);
    sw_free(x.fb);
    sw_free(x.fc);
    sw_free(x.rb);
    sw_free(x.rr);
    sw_free(x.seen);
    sw_free(x.mut);
    sw_free(x.beta);
    sw_free(x.adj);
    return rc_;
}

/* The bounds for plans that keep order (r->has_order and the order_ fields). */
static int order_bounds(const graph_profile *g, const int32_t *order, const int32_t *s_off,
                        const int32_t *s_ops, const uint8_t *s_flag, bound_result *r)
{
    int32_t n = g->n_ops, nt = g->n_tensors;
    int32_t *pos = sw_malloc(((size_t)n + 1) * sizeof *pos);
    int64_t *diff = sw_calloc((size_t)n + 2, sizeof *diff);
    int64_t *live_at = sw_calloc((size_t)n + 1, sizeof *live_at);
    int rc = 0;
    if (!pos || !diff || !live_at) {
        rc = SW_ENOMEM;
        goto done;
    }
    r->has_order = 1;
    for (int32_t k = 0; k < n; k++)
        pos[order[k]] = k;
    for (int32_t s = 0; s < nt; s++) {
        if (s_off[s] == s_off[s + 1] || g->tensors[s].persistent)
            continue;
        int32_t lo = n, hi = -1;
        for (int32_t j = s_off[s]; j < s_off[s + 1]; j++) {
            lo = SW_MIN(lo, pos[s_ops[j]]);
            hi = SW_MAX(hi, pos[s_ops[j]]);
        }
        if (g->tensors[s].producer < 0)
            lo = 0;
        diff[lo] += g->bytes[s];
        diff[hi + 1] -= g->bytes[s];
    }
    int64_t run = 0;
    for (int32_t k = 0; k < n; k++) {
        run += diff[k];
        int64_t v = run + r->persistent_bytes + g->ops[order[k]].workspace_bytes;
        live_at[order[k]] = v;
        if (r->order_live_op < 0 || v > r->order_live_bytes) {
            r->order_live_bytes = v;
            r->order_live_op = order[k];
        }
    }
    r->order_excess_bytes = SW_MAX(0, r->order_live_bytes - r->budget_bytes);
    r->order_swap_s = SW_MAX(r->compute_s, (double)r->order_excess_bytes / r->h2d_rate);
    r->order_any_s = split_bound(r->compute_s, (double)r->order_excess_bytes,
                                 r->recompute_s_per_byte, r->h2d_rate);
    rc = window_bounds(g, NULL, order, s_off, s_ops, s_flag, live_at, r);
    r->order_swap_s = SW_MAX(r->order_swap_s, r->order_window_swap_s);
    r->order_any_s = SW_MAX(r->order_any_s, r->order_window_any_s);
done:
    sw_free(pos);
    sw_free(diff);
    sw_free(live_at);
    return rc;
}

int bound_compute(const graph_profile *g, int64_t budget, const int32_t *order, bound_result *r,
                  sw_err *err)
{
    memset(r, 0, sizeof *r);
    r->budget_bytes = budget;
    r->compute_s = g->total_compute_s;
    r->resident_op = r->live_op = r->order_live_op = r->window_op = r->order_window_op = -1;
    double h2d_a, d2h_a, h2d_b, d2h_b;
    dev_rates(&g->device, &h2d_a, &d2h_a, &h2d_b, &d2h_b);
    r->h2d_rate = SW_MAX(h2d_a, h2d_b);
    r->d2h_rate = SW_MAX(d2h_a, d2h_b);
    int32_t n = g->n_ops, nt = g->n_tensors;
    if (order) {
        int32_t bad_op = -1, bad_pred = -1;
        int topo = graph_is_topological(g, order, &bad_op, &bad_pred);
        if (topo < 0)
            return sw_fail(err, SW_ENOMEM, "out of memory");
        if (!topo) {
            if (bad_op >= 0 && bad_op < n && bad_pred >= 0 && bad_pred < n)
                return sw_fail(err, SW_EINVAL, "the order runs op '%s' before its predecessor "
                               "'%s'", g->ops[bad_op].name, g->ops[bad_pred].name);
            return sw_fail(err, SW_EINVAL, "the order is not a topological order of the %d ops",
                           n);
        }
    }
    /* accessors of each storage (CSR, with the access flags), and what each op
       needs resident */
    int32_t *s_off = sw_calloc((size_t)nt + 1, sizeof *s_off);
    int32_t *s_ops = sw_malloc(((size_t)g->acc_off[n] + 1) * sizeof *s_ops);
    uint8_t *s_flag = sw_malloc((size_t)g->acc_off[n] + 1);
    int64_t *live = sw_calloc((size_t)n + 1, sizeof *live);
    int32_t *first = sw_malloc(((size_t)nt + 1) * sizeof *first);
    reach rch;
    memset(&rch, 0, sizeof rch);
    int rc = 0;
    if (!s_off || !s_ops || !s_flag || !live || !first) {
        rc = sw_fail(err, SW_ENOMEM, "out of memory");
        goto done;
    }
    for (int32_t j = 0; j < g->acc_off[n]; j++)
        s_off[g->acc[j] + 1]++;
    for (int32_t s = 0; s < nt; s++)
        s_off[s + 1] += s_off[s];
    for (int32_t s = 0; s < nt; s++)
        first[s] = s_off[s];
    double rho = INFINITY;
    for (int32_t o = 0; o < n; o++) {
        int64_t need = g->ops[o].workspace_bytes, made = 0;
        for (int32_t j = g->acc_off[o]; j < g->acc_off[o + 1]; j++) {
            int32_t s = g->acc[j];
            s_flag[first[s]] = g->acc_flag[j];
            s_ops[first[s]++] = o;
            need += g->bytes[s];
            if ((g->acc_flag[j] & GA_CREATE) && !g->tensors[s].persistent)
                made += g->bytes[s];
        }
        if (need > r->resident_bytes || r->resident_op < 0) {
            r->resident_bytes = need;
            r->resident_op = o;
        }
        if (made > 0 && g->ops[o].time_s / (double)made < rho)
            rho = g->ops[o].time_s / (double)made;
    }
    r->recompute_s_per_byte = rho;
    if (n > 0 && r->resident_bytes > budget) {
        const graph_op *op = &g->ops[r->resident_op];
        rc = sw_fail(err, SW_ENOFIT, "no plan fits: op %d '%s' needs %lld bytes resident while "
                     "it runs (its storages and %lld bytes of workspace), over the budget of "
                     "%lld bytes", r->resident_op, op->name, (long long)r->resident_bytes,
                     (long long)op->workspace_bytes, (long long)budget);
        goto done;
    }
    for (int32_t s = 0; s < nt; s++)
        if (s_off[s] < s_off[s + 1] && g->tensors[s].persistent)
            r->persistent_bytes += g->bytes[s];
    /* live in every schedule */
    r->exact_dag = n <= BOUND_MAX_DAG_OPS;
    if (r->exact_dag) {
        if (reach_build(g, &rch) || dag_live(g, &rch, s_off, s_ops, live)) {
            rc = sw_fail(err, SW_ENOMEM, "out of memory");
            goto done;
        }
    } else {
        for (int32_t o = 0; o < n; o++)
            for (int32_t j = g->acc_off[o]; j < g->acc_off[o + 1]; j++)
                if (!g->tensors[g->acc[j]].persistent)
                    live[o] += g->bytes[g->acc[j]];
    }
    for (int32_t o = 0; o < n; o++) {
        live[o] += r->persistent_bytes + g->ops[o].workspace_bytes;
        if (r->live_op < 0 || live[o] > r->live_bytes) {
            r->live_bytes = live[o];
            r->live_op = o;
        }
    }
    r->excess_bytes = SW_MAX(0, r->live_bytes - budget);
    r->swap_s = SW_MAX(r->compute_s, (double)r->excess_bytes / r->h2d_rate);
    r->any_s = split_bound(r->compute_s, (double)r->excess_bytes, rho, r->h2d_rate);
    r->window_swap_s = r->window_any_s = r->compute_s;
    if (r->exact_dag && window_bounds(g, &rch, NULL, s_off, s_ops, s_flag, live, r)) {
        rc = sw_fail(err, SW_ENOMEM, "out of memory");
        goto done;
    }
    r->swap_s = SW_MAX(r->swap_s, r->window_swap_s);
    r->any_s = SW_MAX(r->any_s, r->window_any_s);
    /* live under a given order: made at or before the position, used at or
       after it (persistent storages the iteration uses: throughout) */
    if (order && order_bounds(g, order, s_off, s_ops, s_flag, r))
        rc = sw_fail(err, SW_ENOMEM, "out of memory");
done:
    reach_free(&rch);
    sw_free(s_off);
    sw_free(s_ops);
    sw_free(s_flag);
    sw_free(live);
    sw_free(first);
    return rc;
}

double bound_for(const bound_result *r, int reruns, int same_order)
{
    if (same_order && r->has_order)
        return reruns ? r->order_any_s : r->order_swap_s;
    return reruns ? r->any_s : r->swap_s;
}
