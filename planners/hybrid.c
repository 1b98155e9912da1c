/* hybrid.c: the `hybrid` planner: per storage, keep, swap or recompute,
   decided on the schedule from what each adds to the critical path.

   The runtime walks the schedule as SwapAdvisor's swap planner does:
   before an op, its missing inputs come back (copied in, or remade by
   re-running their producer); its outputs get room by evicting resident
   storages; after it, the inputs of the next ops are prefetched, in order,
   into free memory. Eviction (Belady's rule, refined by cost) looks at
   every resident, unlocked storage and estimates, on running clocks of the
   compute stream and the two copy streams (op times from the profile,
   copies at the device's one-way rates plus the per-copy latency), what
   swapping it or dropping it for a re-run adds to the critical path
   (docs/planners.md, "hybrid", has the rules). The victim is the one with
   the least cost per byte; near ties go to the farthest next use.

   A keep is what eviction never chooses. Persistent storages start
   resident in order of first use while they fit half the arena; dry runs
   repeat the iteration until the set resident at its end repeats, and the
   steady state is recorded. Decisions count bytes; if the allocator cannot
   place the plan (fragmentation) the byte limit is lowered and refined.

   search=true (the default) plans a few variants (the profile's and the
   framework's schedule; link weights 0.25 and 0; swapping alone) and, with
   portfolio=true, also runs `sublinear` (mode=budget) and `swapadvisor`,
   and the runtime again on the schedule the GA found;
   every candidate is simulated and the fastest kept, tried in a fixed
   order, so the result does not depend on the thread count. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../sim/simulate.h"
#include "lib/arena.h"
#include "lib/swap_util.h"

#define HY_NEVER INT32_MAX
/* Eviction costs per byte within this fraction of each other tie; the
   farthest next use then wins (Belady). */
#define HY_TIE 0.05

static const param_def hybrid_params[] = {
    {"search", PT_BOOL, "true", "plan every variant (both schedules; link weights 0.25 and 0; "
     "swapping alone), simulate each and keep the fastest (false: one plan with the options "
     "below)", NULL, 1, 0},
    {"schedule", PT_CHOICE, "profile", "without search: the profile's operator order, or a "
     "dataflow engine's (ops issued as they become ready, FIFO)", "profile|framework", 1, 0},
    {"mode", PT_CHOICE, "hybrid", "without search: what eviction may choose: swap or recompute "
     "by cost; swap only; recompute where possible (swap the rest)",
     "hybrid|swap|recompute", 1, 0},
    {"recompute_weight", PT_FLOAT, "1", "without search: factor on a re-run's time when it is "
     "compared with a swap's stall", NULL, 0, 1e6},
    {"link_weight", PT_FLOAT, "0.25", "without search: fraction of a copy's time charged even "
     "when it is hidden (the link it occupies)", NULL, 0, 1e6},
    {"portfolio", PT_BOOL, "true", "with search, also try `sublinear` (mode=budget) and "
     "`swapadvisor` (the GA over schedule and pool, with the time budget and the two options "
     "below, and first_allocation=fitting), then the runtime on the GA's schedule, and keep "
     "the fastest plan of all", NULL, 1, 0},
    {"generations", PT_INT, "0", "portfolio: the GA's generations (0: only the time budget)",
     NULL, 0, 1e9},
    {"population", PT_INT, "32", "portfolio: the GA's individuals per generation", NULL, 2, 1e5},
    {"time_budget", PT_SECONDS, "20s", "portfolio: the GA's search time when --time-budget is "
     "not given", NULL, 1, 0},
    ARENA_OFFLINE_PARAM,
    {"alignment", PT_SIZE, "1", "placement alignment in bytes", NULL, 1, 1e9},
    PARAM_END};

enum { HY_HYBRID, HY_SWAP, HY_RECOMPUTE };

typedef struct hy {
    const graph_profile *g;
    plan_builder *b;          /* NULL: a dry run */
    int32_t no, nt;
    int32_t *order, *pos;     /* the schedule; each op's position in it */
    int32_t *death;           /* per storage: position after which nothing needs it;
                                 HY_NEVER for persistent, unused storages and views */
    int32_t *dth_off, *dth;   /* storages dying at each position (CSR) */
    int32_t *use_off, *use_pos; /* per storage: positions accessing it (CSR, ascending) */
    int32_t *nxt;             /* per storage: index of its next use in use_pos (advances) */
    int32_t *mut_off, *muts;  /* per storage: positions mutating it (CSR, ascending) */
    double *t_at;             /* compute time before position i (n_ops + 1) */
    uint8_t *rc_ok;           /* per storage: its producer could re-run it (static part) */
    uint8_t *rc_ud;           /* per storage: ... at any position until its death */
    uint8_t *res, *hv, *dropped; /* per storage: resident; host copy current; dropped for
                                 re-running */
    int32_t *lock;            /* per storage: holds (an op or re-run needs it now) */
    int32_t *dep;             /* per storage: dropped storages whose re-run reads it */
    int32_t *rlist, *ridx;    /* resident storages (unordered) and each one's index */
    int32_t n_res;
    double *ready;            /* per storage: estimated time its last use or copy ends */
    int64_t used, limit, peak;
    double now, d2h_t, h2d_t; /* estimated clocks: compute, copy-out and copy-in streams */
    double h2d_bw, d2h_bw, lat;
    double horizon;           /* prefetch look-ahead: twice the longest copy in */
    int mode;
    double rw;                /* recompute weight */
    double link;              /* a copy also costs this fraction of its time even when
                                 hidden: the link it occupies delays the copies after it
                                 (and per-copy latency makes tiny copies dear per byte) */
    int32_t n_in, n_out, n_drop, n_rerun; /* tasks recorded (or counted in a dry run) */
    int32_t depth;            /* nesting of ensure (a guard) */
} hy;

static int64_t sz(const hy *h, int32_t s) { return h->g->tensors[s].bytes; }
static double dmax(double a, double b) { return a > b ? a : b; }

#define ALLOC(p, n) ((p) = sw_calloc((size_t)(n) + 1, sizeof *(p)))

static void hy_free(hy *h)
{
    void *p[] = {h->order, h->pos, h->death, h->dth_off, h->dth, h->use_off, h->use_pos,
                 h->nxt, h->mut_off, h->muts, h->t_at, h->rc_ok, h->rc_ud, h->res, h->hv, h->dropped,
                 h->lock, h->dep, h->rlist, h->ridx, h->ready};
    for (size_t i = 0; i < SW_ARRAY_LEN(p); i++)
        sw_free(p[i]);
    memset(h, 0, sizeof *h);
}

static int has_mutation_between(const hy *h, int32_t s, int32_t lo, int64_t hi)
{
    for (int32_t k = h->mut_off[s]; k < h->mut_off[s + 1]; k++)
        if (h->muts[k] > lo && h->muts[k] < hi)
            return 1;
    return 0;
}

/* Set up for schedule order (NULL: the profile's). */
static int hy_init(hy *h, const graph_profile *g, const int32_t *order)
{
    memset(h, 0, sizeof *h);
    h->g = g;
    int32_t no = g->n_ops, nt = g->n_tensors, nacc = g->acc_off[no];
    h->no = no;
    h->nt = nt;
    if (!ALLOC(h->order, no) || !ALLOC(h->pos, no) || !ALLOC(h->death, nt) ||
        !ALLOC(h->dth_off, no + 1) || !ALLOC(h->dth, nt) || !ALLOC(h->use_off, nt + 1) ||
        !ALLOC(h->use_pos, nacc) || !ALLOC(h->nxt, nt) || !ALLOC(h->mut_off, nt + 1) ||
        !ALLOC(h->t_at, no + 1) || !ALLOC(h->rc_ok, nt) || !ALLOC(h->rc_ud, nt) || !ALLOC(h->res, nt) ||
        !ALLOC(h->hv, nt) || !ALLOC(h->dropped, nt) || !ALLOC(h->lock, nt) ||
        !ALLOC(h->dep, nt) || !ALLOC(h->rlist, nt) || !ALLOC(h->ridx, nt) ||
        !ALLOC(h->ready, nt))
        return SW_ENOMEM;
    memcpy(h->order, order ? order : g->order, (size_t)no * sizeof *h->order);
    if (graph_lifetimes(g, h->order, h->pos, h->death, NULL, h->use_off, h->use_pos))
        return SW_EINVAL;
    for (int32_t s = 0; s < nt; s++) {
        const graph_tensor *x = &g->tensors[s];
        if (x->storage != s || x->persistent || h->death[s] < 0) {
            h->death[s] = HY_NEVER;
            continue;
        }
        h->dth_off[h->death[s]]++;
    }
    if (graph_counts_to_offsets(h->dth_off, no))
        return SW_EINVAL;
    {
        int32_t *fill = sw_malloc(((size_t)no + 1) * sizeof *fill);
        if (!fill)
            return SW_ENOMEM;
        memcpy(fill, h->dth_off, ((size_t)no + 1) * sizeof *fill);
        for (int32_t s = 0; s < nt; s++)
            if (h->death[s] != HY_NEVER)
                h->dth[fill[h->death[s]]++] = s;
        sw_free(fill);
    }
    /* mutation positions */
    for (int32_t o = 0; o < no; o++)
        for (int32_t k = g->acc_off[o]; k < g->acc_off[o + 1]; k++)
            if (g->acc_flag[k] & GA_MUTATE)
                h->mut_off[g->acc[k]]++;
    if (graph_counts_to_offsets(h->mut_off, nt) || !ALLOC(h->muts, h->mut_off[nt]))
        return SW_ENOMEM;
    memset(h->nxt, 0, ((size_t)nt + 1) * sizeof *h->nxt);
    for (int32_t i = 0; i < no; i++) {
        int32_t o = h->order[i];
        for (int32_t k = g->acc_off[o]; k < g->acc_off[o + 1]; k++)
            if (g->acc_flag[k] & GA_MUTATE) {
                int32_t s = g->acc[k];
                h->muts[h->mut_off[s] + h->nxt[s]++] = i;
            }
    }
    for (int32_t i = 0; i < no; i++)
        h->t_at[i + 1] = h->t_at[i] + g->ops[h->order[i]].time_s;
    /* which storages a re-run of their producer could remake at all */
    for (int32_t s = 0; s < nt; s++) {
        const graph_tensor *x = &g->tensors[s];
        if (x->storage != s || x->producer < 0 || x->persistent || x->kind == GK_INPUT ||
            g->n_mutations[s] || x->bytes <= 0)
            continue;
        int32_t p = x->producer, ok = g->ops[p].n_mut == 0;
        for (int32_t k = g->acc_off[p]; k < g->acc_off[p + 1] && ok; k++) {
            int32_t c = g->acc[k];
            if ((g->acc_flag[k] & GA_MUTATE) ||
                ((g->acc_flag[k] & GA_CREATE) &&
                 (g->n_mutations[c] || g->tensors[c].persistent || g->tensors[c].kind == GK_INPUT)))
                ok = 0;
        }
        h->rc_ok[s] = (uint8_t)ok;
        /* remakeable until its death: inputs and other outputs live as
           long, inputs not mutated before then */
        int32_t d = h->death[s];
        for (int32_t k = g->acc_off[p]; k < g->acc_off[p + 1] && ok; k++) {
            int32_t y = g->acc[k];
            if (!g->tensors[y].persistent && h->death[y] < d)
                ok = 0;
            else if (!(g->acc_flag[k] & GA_CREATE) && has_mutation_between(h, y, h->pos[p], d))
                ok = 0;
        }
        h->rc_ud[s] = (uint8_t)ok;
    }
    h->h2d_bw = g->device.h2d_bw;
    h->d2h_bw = g->device.d2h_bw;
    h->lat = g->device.copy_latency_s;
    int64_t big = 0;
    for (int32_t s = 0; s < nt; s++)
        if (g->tensors[s].storage == s && g->tensors[s].bytes > big)
            big = g->tensors[s].bytes;
    h->horizon = 2 * (h->lat + (double)big / h->h2d_bw);
    return 0;
}

/* Time at position i, counting positions past the end as the next iteration's. */
static double t_of(const hy *h, int64_t i)
{
    if (i <= h->no)
        return h->t_at[i];
    return h->t_at[h->no] + h->t_at[i - h->no];
}

/* Next use of s after position i: a position (> i), past n_ops for a
   persistent storage's first use in the next iteration, or HY_NEVER. */
static int64_t next_use(hy *h, int32_t s, int32_t i)
{
    int32_t a = h->use_off[s], e = h->use_off[s + 1];
    while (a + h->nxt[s] < e && h->use_pos[a + h->nxt[s]] <= i)
        h->nxt[s]++;
    if (a + h->nxt[s] < e)
        return h->use_pos[a + h->nxt[s]];
    if (h->g->tensors[s].persistent && e > a)
        return (int64_t)h->no + h->use_pos[a];
    return HY_NEVER;
}

static void set_res(hy *h, int32_t s)
{
    h->res[s] = 1;
    h->used += sz(h, s);
    if (h->used > h->peak)
        h->peak = h->used;
    h->ridx[s] = h->n_res;
    h->rlist[h->n_res++] = s;
}

static void clear_res(hy *h, int32_t s)
{
    h->res[s] = 0;
    h->used -= sz(h, s);
    int32_t k = h->ridx[s], last = h->rlist[--h->n_res];
    h->rlist[k] = last;
    h->ridx[last] = k;
}

/* Could s be dropped now and remade by re-running its producer before its
   next use nu? *cost receives the re-runs' time (its producer's, and those
   of dropped inputs it needs remade first). An input may itself be dropped
   only if it can be remade at any time until its death (ud); a storage some
   dropped one needs (dep) is dropped only under the same condition, so
   every re-run the plan relies on stays possible. */
static int can_recompute(const hy *h, int32_t s, int64_t nu, int depth, double *cost)
{
    if (!h->rc_ok[s] || nu >= h->no || depth > 4 || (h->dep[s] && !h->rc_ud[s]))
        return 0;
    const graph_profile *g = h->g;
    int32_t p = g->tensors[s].producer;
    double c = g->ops[p].time_s;
    for (int32_t k = g->acc_off[p]; k < g->acc_off[p + 1]; k++) {
        int32_t x = g->acc[k];
        if (g->acc_flag[k] & GA_CREATE) {
            if (h->death[x] < nu)
                return 0;
            continue;
        }
        if (!g->tensors[x].persistent && h->death[x] < nu)
            return 0;
        if (has_mutation_between(h, x, h->pos[p], nu))
            return 0;
        if (h->res[x] || h->hv[x])
            continue;
        double cx;
        if (!h->dropped[x] || !h->rc_ud[x] || !can_recompute(h, x, nu, depth + 1, &cx))
            return 0;
        c += cx;
    }
    *cost = c;
    return 1;
}

/* Estimated cost (seconds added to the critical path) of evicting s at
   position i, and how (*rec: 1 recompute, 0 swap). */
static double evict_cost(hy *h, int32_t s, int32_t i, int64_t *nu_out, int *rec)
{
    int64_t nu = next_use(h, s, i);
    *nu_out = nu;
    double b = (double)sz(h, s);
    double out_end, drop_end = dmax(h->now, h->d2h_t);
    int dirty = !h->hv[s] && (nu != HY_NEVER || h->g->tensors[s].persistent || h->dep[s]);
    if (dirty)
        out_end = dmax(h->d2h_t, h->ready[s]) + h->lat + b / h->d2h_bw;
    else
        out_end = drop_end;
    double swap = dmax(0, out_end - h->now);
    if (dirty)
        swap += h->link * (h->lat + b / h->d2h_bw);
    if (nu != HY_NEVER) {
        double t_nu = h->now + t_of(h, nu) - t_of(h, i);
        double in_t = h->lat + b / h->h2d_bw;
        double in_end = dmax(out_end, h->h2d_t) + in_t;
        swap += dmax(0, in_end - t_nu) + h->link * in_t;
    }
    *rec = 0;
    double rt;
    if (h->mode == HY_SWAP || nu == HY_NEVER || !can_recompute(h, s, nu, 0, &rt))
        return swap;
    double rc = dmax(0, drop_end - h->now) + h->rw * rt;
    if (h->mode == HY_RECOMPUTE || rc < swap) {
        *rec = 1;
        return rc;
    }
    return swap;
}

static void rec_swap_in(hy *h, int32_t s)
{
    double start = dmax(h->h2d_t, h->ready[s]);
    h->h2d_t = start + h->lat + (double)sz(h, s) / h->h2d_bw;
    h->ready[s] = h->h2d_t;
    set_res(h, s);
    h->n_in++;
    if (h->b)
        pb_swap_in(h->b, s);
}

/* Evict s; rec: drop it for a re-run. */
static void evict(hy *h, int32_t s, int rec, int64_t nu)
{
    const graph_profile *g = h->g;
    clear_res(h, s);
    double end;
    if (rec) {
        h->dropped[s] = 1;
        int32_t p = g->tensors[s].producer;
        for (int32_t k = g->acc_off[p]; k < g->acc_off[p + 1]; k++)
            if (!(g->acc_flag[k] & GA_CREATE))
                h->dep[g->acc[k]]++;
        end = dmax(h->now, h->d2h_t);
        h->n_drop++;
        if (h->b)
            pb_drop(h->b, s);
    } else if (!h->hv[s] && (nu != HY_NEVER || g->tensors[s].persistent || h->dep[s])) {
        end = dmax(h->d2h_t, h->ready[s]) + h->lat + (double)sz(h, s) / h->d2h_bw;
        h->hv[s] = 1;
        h->n_out++;
        if (h->b)
            pb_swap_out(h->b, s);
    } else {
        end = dmax(h->now, h->d2h_t);
        h->n_drop++;
        if (h->b)
            pb_drop(h->b, s);
    }
    h->d2h_t = end;
    if (end > h->now)
        h->now = end; /* the memory is free only then */
}

static int make_room(hy *h, int64_t need, int32_t i)
{
    while (h->used + need > h->limit) {
        int32_t best = -1, best_rec = 0;
        int64_t best_nu = 0;
        double best_c = 0, best_t = 0;
        for (int32_t k = 0; k < h->n_res; k++) {
            int32_t s = h->rlist[k];
            if (h->lock[s] || sz(h, s) <= 0)
                continue;
            int64_t nu;
            int rec;
            double c = evict_cost(h, s, i, &nu, &rec) / (double)sz(h, s);
            double t = nu == HY_NEVER ? INFINITY : t_of(h, nu);
            /* least cost per byte; a tie (HY_TIE) goes to the farthest
               next use, then the lower id */
            double tol = HY_TIE * dmax(c, best_c);
            if (best < 0 || c < best_c - tol ||
                (c <= best_c + tol && (t > best_t || (t == best_t && s < best)))) {
                best = s;
                best_c = c;
                best_t = t;
                best_rec = rec;
                best_nu = nu;
            }
        }
        if (best < 0)
            return SW_ENOFIT;
        evict(h, best, best_rec, best_nu);
    }
    return 0;
}

static void lock_op(hy *h, int32_t o, int d)
{
    const graph_profile *g = h->g;
    for (int32_t k = g->acc_off[o]; k < g->acc_off[o + 1]; k++)
        if (!(g->acc_flag[k] & GA_CREATE))
            h->lock[g->acc[k]] += d;
}

static int ensure(hy *h, int32_t s, int32_t i);

/* Re-run op p (before position i) to remake its dropped outputs. */
static int rerun(hy *h, int32_t p, int32_t i)
{
    const graph_profile *g = h->g;
    lock_op(h, p, 1);
    int rc = 0;
    for (int32_t k = g->acc_off[p]; k < g->acc_off[p + 1] && !rc; k++)
        if (!(g->acc_flag[k] & GA_CREATE))
            rc = ensure(h, g->acc[k], i);
    int64_t need = 0;
    for (int32_t k = g->acc_off[p]; k < g->acc_off[p + 1]; k++)
        if ((g->acc_flag[k] & GA_CREATE) && !h->res[g->acc[k]])
            need += sz(h, g->acc[k]);
    if (!rc)
        rc = make_room(h, need, i);
    if (!rc) {
        double start = h->now;
        for (int32_t k = g->acc_off[p]; k < g->acc_off[p + 1]; k++)
            if (!(g->acc_flag[k] & GA_CREATE))
                start = dmax(start, h->ready[g->acc[k]]);
        h->now = start + g->ops[p].time_s;
        for (int32_t k = g->acc_off[p]; k < g->acc_off[p + 1]; k++) {
            int32_t c = g->acc[k];
            if (g->acc_flag[k] & GA_CREATE) {
                if (!h->res[c]) {
                    set_res(h, c);
                    h->hv[c] = 0;
                }
                if (h->dropped[c]) {
                    h->dropped[c] = 0;
                    for (int32_t j = g->acc_off[p]; j < g->acc_off[p + 1]; j++)
                        if (!(g->acc_flag[j] & GA_CREATE))
                            h->dep[g->acc[j]]--;
                }
            }
            h->ready[c] = h->now;
        }
        h->n_rerun++;
        if (h->b)
            pb_rerun(h->b, p);
    }
    lock_op(h, p, -1);
    return rc;
}

/* Make s resident before position i: copy it in or re-run its producer. */
static int ensure(hy *h, int32_t s, int32_t i)
{
    if (h->res[s])
        return 0;
    if (h->dropped[s]) {
        if (++h->depth > 4096)
            return SW_ENOFIT;
        int rc = rerun(h, h->g->tensors[s].producer, i);
        h->depth--;
        return rc;
    }
    int rc = make_room(h, sz(h, s), i);
    if (rc)
        return rc;
    rec_swap_in(h, s);
    if (h->ready[s] > h->now)
        h->now = h->ready[s]; /* on demand: compute waits */
    return 0;
}

/* Prefetch the copied-out inputs of the ops after position i, in order,
   while they fit in free memory (leaving room for the next op's outputs):
   each no earlier than its copy needs to
   be hidden (twice the copy time, plus the next op, ahead of its use), so
   that prefetched storages do not crowd out ones needed sooner. */
static void prefetch(hy *h, int32_t i)
{
    const graph_profile *g = h->g;
    if (i + 1 >= h->no)
        return;
    double t0 = t_of(h, i + 1), slack = g->ops[h->order[i + 1]].time_s;
    /* room the next op's outputs will need: a prefetch for a later op
       that takes it would only be evicted again */
    int64_t keep = 0;
    int32_t nx = h->order[i + 1];
    for (int32_t k = g->acc_off[nx]; k < g->acc_off[nx + 1]; k++)
        if (g->acc_flag[k] & GA_CREATE)
            keep += sz(h, g->acc[k]);
    for (int32_t j = i + 1; j < h->no; j++) {
        double gap = t_of(h, j) - t0;
        if (gap > h->horizon + slack)
            return;
        int32_t o = h->order[j];
        for (int32_t k = g->acc_off[o]; k < g->acc_off[o + 1]; k++) {
            int32_t s = g->acc[k];
            if ((g->acc_flag[k] & GA_CREATE) || h->res[s] || h->dropped[s] || !h->hv[s])
                continue;
            double copy = h->lat + (double)sz(h, s) / h->h2d_bw;
            if (gap > 2 * copy + slack)
                continue;
            if (h->used + sz(h, s) + (j > i + 1 ? keep : 0) > h->limit)
                return;
            rec_swap_in(h, s);
        }
    }
}

/* One iteration from the resident persistent set r (updated to the set at
   its end). */
static int iterate(hy *h, plan_builder *b, uint8_t *r, int64_t limit, int32_t *bad_op)
{
    const graph_profile *g = h->g;
    h->b = b;
    h->limit = limit;
    h->used = h->peak = 0;
    h->n_res = 0;
    h->now = h->d2h_t = h->h2d_t = 0;
    h->n_in = h->n_out = h->n_drop = h->n_rerun = 0;
    h->depth = 0;
    if (b)
        pb_reset(b);
    for (int32_t s = 0; s < h->nt; s++) {
        const graph_tensor *x = &g->tensors[s];
        h->res[s] = h->dropped[s] = 0;
        h->lock[s] = h->dep[s] = h->nxt[s] = 0;
        h->ready[s] = 0;
        h->hv[s] = x->storage == s && x->producer < 0;
        if (x->storage == s && x->persistent && r[s]) {
            if (g->n_mutations[s])
                h->hv[s] = 0;
            set_res(h, s);
            if (b)
                pb_resident(b, s);
        }
    }
    for (int32_t i = 0; i < h->no; i++) {
        int32_t o = h->order[i];
        int rc = 0;
        lock_op(h, o, 1);
        for (int32_t k = g->acc_off[o]; k < g->acc_off[o + 1] && !rc; k++)
            if (!(g->acc_flag[k] & GA_CREATE))
                rc = ensure(h, g->acc[k], i);
        int64_t need = 0;
        for (int32_t k = g->acc_off[o]; k < g->acc_off[o + 1]; k++)
            if (g->acc_flag[k] & GA_CREATE)
                need += sz(h, g->acc[k]);
        if (!rc)
            rc = make_room(h, need, i);
        if (rc) {
            *bad_op = o;
            return rc;
        }
        double start = h->now;
        for (int32_t k = g->acc_off[o]; k < g->acc_off[o + 1]; k++)
            if (!(g->acc_flag[k] & GA_CREATE))
                start = dmax(start, h->ready[g->acc[k]]);
        h->now = start + g->ops[o].time_s;
        for (int32_t k = g->acc_off[o]; k < g->acc_off[o + 1]; k++) {
            int32_t s = g->acc[k];
            if (g->acc_flag[k] & GA_CREATE) {
                set_res(h, s);
                h->hv[s] = 0;
            } else if (g->acc_flag[k] & GA_MUTATE) {
                h->hv[s] = 0;
            }
            h->ready[s] = h->now;
        }
        if (b)
            pb_run(b, o);
        lock_op(h, o, -1);
        for (int32_t k = h->dth_off[i]; k < h->dth_off[i + 1]; k++) {
            int32_t s = h->dth[k];
            if (h->res[s])
                clear_res(h, s); /* the builder frees it at its death */
            if (h->dropped[s]) { /* never needed again: nothing to re-run */
                h->dropped[s] = 0;
                int32_t p = g->tensors[s].producer;
                for (int32_t j = g->acc_off[p]; j < g->acc_off[p + 1]; j++)
                    if (!(g->acc_flag[j] & GA_CREATE))
                        h->dep[g->acc[j]]--;
            }
        }
        prefetch(h, i);
    }
    for (int32_t s = 0; s < h->nt; s++)
        if (g->tensors[s].storage == s && g->tensors[s].persistent)
            r[s] = h->res[s];
    return 0;
}

/* One plan for schedule order and the options given. */
static int plan_one(const graph_profile *g, const int32_t *order, int mode, double rw,
                    double link, const planner_opts *o, plan **out, char *note, size_t note_n,
                    sw_err *err)
{
    *out = NULL;
    int64_t budget = o->memory_budget;
    int64_t cap = budget - g->max_workspace;
    hy h;
    int rc = hy_init(&h, g, order);
    uint8_t *r = sw_calloc((size_t)g->n_tensors + 1, 1);
    uint8_t *r2 = sw_calloc((size_t)g->n_tensors + 1, 1);
    plan_builder *b = arena_builder(g, o, NULL);
    if (rc == SW_EINVAL) {
        rc = sw_fail(err, SW_EINVAL, "the schedule is not a permutation of the ops");
        goto done;
    }
    if (rc || !r || !r2 || !b) {
        rc = sw_fail(err, SW_ENOMEM, "out of memory");
        goto done;
    }
    h.mode = mode;
    h.rw = rw;
    h.link = link;
    /* byte limits: down from the whole arena in steps of 8% until the
       allocator places the plan, then two halvings of the step back up */
    double margin = 1.0, ok_margin = 0, step = 0.08;
    int refine = 0;
    while (margin > 0.15 && refine <= 2) {
        plan *p = NULL;
        int32_t bad = -1;
        int64_t limit = (int64_t)((double)cap * margin);
        memset(r, 0, (size_t)g->n_tensors);
        int64_t used = 0;
        for (int32_t i = 0; i < g->n_ops; i++) {
            int32_t op = h.order[i];
            for (int32_t k = g->acc_off[op]; k < g->acc_off[op + 1]; k++) {
                int32_t s = g->acc[k];
                if (g->tensors[s].persistent && !r[s] && used + g->tensors[s].bytes <= limit / 2) {
                    r[s] = 1;
                    used += g->tensors[s].bytes;
                }
            }
        }
        for (int k = 0; k < 6; k++) {
            memcpy(r2, r, (size_t)g->n_tensors);
            if ((rc = iterate(&h, NULL, r, limit, &bad)) != 0)
                break;
            if (!memcmp(r, r2, (size_t)g->n_tensors))
                break;
        }
        if (!rc)
            rc = iterate(&h, b, r, limit, &bad);
        if (rc) {
            if (*out)
                break; /* a larger limit was placed: keep it */
            int64_t need = 0;
            for (int32_t k = g->acc_off[bad]; k < g->acc_off[bad + 1]; k++)
                need += g->tensors[g->acc[k]].bytes;
            char h1[32], h2[32];
            if (margin < 1.0)
                rc = sw_fail(err, SW_ENOFIT, "does not fit: the allocator cannot place the plan "
                             "(it fragments memory) at byte limits down to %.0f%% of the "
                             "budget, and at %.0f%% op %d '%s' alone needs %s (its inputs and "
                             "outputs), more than the %s left", 100 * (margin + step),
                             100 * margin, bad, g->ops[bad].name,
                             sw_fmt_bytes(need, h1, sizeof h1), sw_fmt_bytes(limit, h2, sizeof h2));
            else
                rc = sw_fail(err, SW_ENOFIT, "does not fit: op %d '%s' alone needs %s (its "
                             "inputs and outputs), the budget leaves %s for tensors", bad,
                             g->ops[bad].name, sw_fmt_bytes(need, h1, sizeof h1),
                             sw_fmt_bytes(limit, h2, sizeof h2));
            goto done;
        }
        sw_err e2;
        pb_end_iteration(b);
        rc = pb_finish(b, &p, &e2);
        if (rc && rc != SW_ENOFIT) {
            *err = e2;
            goto done;
        }
        if (!rc) {
            plan_free(*out);
            *out = p;
            ok_margin = margin;
            snprintf(note, note_n, "byte limit %.0f%% of the arena; %d swap-ins, %d swap-outs, "
                     "%d drops, %d re-runs before the end-of-iteration restore", 100 * margin,
                     h.n_in, h.n_out, h.n_drop, h.n_rerun);
        }
        if (ok_margin == 0) {
            margin -= step; /* the allocator fragments: leave more room */
            continue;
        }
        if (margin == 1.0)
            break;
        step /= 2;
        margin = ok_margin + step;
        refine++;
    }
    rc = 0;
    if (!*out)
        rc = sw_fail(err, SW_ENOFIT, "does not fit: the allocator cannot place the plan even "
                     "at %.0f%% of the budget", 100 * (margin + step));
done:
    pb_free(b);
    sw_free(r);
    sw_free(r2);
    hy_free(&h);
    return rc;
}

static const char *const mode_names[] = {"hybrid", "swap", "recompute"};

/* Run planner pl for g with o's budget, seed, threads and time, and the
   options kv (NULL-terminated "key=value"). */
static int run_other(const planner *pl, const graph_profile *g, const planner_opts *o,
                     const char *const *kv, plan **out, sw_err *err)
{
    planner_opts o2;
    int rc = planner_opts_derive(&o2, pl, o, o->memory_budget, kv, err);
    if (rc)
        return rc;
    o2.threads = o->threads;
    o2.time_budget_s = o->time_budget_s > 0 ? o->time_budget_s
                                            : params_seconds(&o->params, "time_budget");
    o2.stop = o->stop; /* an interrupt ends the GA early with its best plan */
    o2.stop_ud = o->stop_ud;
    rc = planner_run(pl, g, &o2, out, err);
    planner_opts_free(&o2);
    return rc;
}

enum { C_OWN, C_SUBLINEAR, C_SWAPADVISOR };

/* A candidate: hybrid's own runtime (C_OWN) on a schedule (sched: 0 the
   profile's, 1 the framework's, 2 the GA's) in a mode with its weights, or
   a planner it runs (C_SUBLINEAR, C_SWAPADVISOR). */
typedef struct hy_var {
    int src, sched, mode;
    double rw, link;
} hy_var;

/* The candidates o's options ask for, in the order they are tried (ties
   keep the first), in var (room for 20); returns how many. */
static int hy_candidates(const param_set *ps, hy_var *var)
{
    int nv = 0;
    if (params_bool(ps, "search")) {
        const double lw[] = {0.25, 0};
        for (int sc = 0; sc < 2; sc++) {
            for (int k = 0; k < 2; k++) {
                var[nv].src = C_OWN, var[nv].sched = sc, var[nv].mode = HY_HYBRID;
                var[nv].rw = 1, var[nv++].link = lw[k];
            }
            var[nv].src = C_OWN, var[nv].sched = sc, var[nv].mode = HY_SWAP;
            var[nv].rw = 1, var[nv++].link = 0;
        }
        if (params_bool(ps, "portfolio")) {
            var[nv++].src = C_SUBLINEAR;
            var[nv++].src = C_SWAPADVISOR;
            /* the runtime again on the GA's schedule (when it found one) */
            for (int k = 0; k < 2; k++) {
                var[nv].src = C_OWN, var[nv].sched = 2, var[nv].mode = HY_HYBRID;
                var[nv].rw = 1, var[nv++].link = lw[k];
            }
        }
    } else {
        const char *md = params_str(ps, "mode");
        var[0].src = C_OWN;
        var[0].sched = !strcmp(params_str(ps, "schedule"), "framework");
        var[0].mode = !strcmp(md, "swap") ? HY_SWAP : !strcmp(md, "recompute") ? HY_RECOMPUTE
                                                                                : HY_HYBRID;
        var[0].rw = params_float(ps, "recompute_weight");
        var[0].link = params_float(ps, "link_weight");
        nv = 1;
    }
    return nv;
}

/* The winner's notes: the portfolio member whose plan won ("hybrid: member
   M;", read by `run --json` as portfolio_member): hybrid's own runtime, or a
   planner it runs (its comparisons must say which), then the candidate and
   what its planner noted. */
static int hy_note(const hy_var *var, int best_v, int nv, int n_fit, const char *best_note,
                   plan *best)
{
    char note[512];
    const char *member = var[best_v].src == C_SUBLINEAR     ? "sublinear"
                         : var[best_v].src == C_SWAPADVISOR ? "swapadvisor"
                         : var[best_v].sched == 2           ? "runtime-on-ga-schedule"
                                                            : "runtime";
    if (var[best_v].src == C_OWN)
        snprintf(note, sizeof note, "hybrid: member %s; candidate %d of %d (%d fit): own (%s "
                 "schedule, %s, recompute weight %g, link weight %g): %.240s", member,
                 best_v + 1, nv, n_fit,
                 var[best_v].sched == 2 ? "the GA's" : var[best_v].sched ? "framework" : "profile",
                 mode_names[var[best_v].mode],
                 var[best_v].rw, var[best_v].link, best_note);
    else
        snprintf(note, sizeof note, "hybrid: member %s; candidate %d of %d (%d fit): %s; %.240s",
                 member, best_v + 1, nv, n_fit, member, best->notes ? best->notes : "");
    return plan_set_notes(best, note);
}

static int plan_hybrid(const graph_profile *g, const planner_opts *o, plan **out, sw_err *err)
{
    const param_set *ps = &o->params;
    *out = NULL;
    if (o->memory_budget - g->max_workspace <= 0)
        return sw_fail(err, SW_ENOFIT, "does not fit: the budget does not cover the largest op "
                       "workspace");
    int32_t *fw = swu_framework_order(g);
    int32_t *gas = sw_malloc(((size_t)g->n_ops + 1) * sizeof *gas);
    int have_gas = 0; /* gas holds the GA's schedule */
    if (!fw || !gas) {
        sw_free(fw);
        sw_free(gas);
        return sw_fail(err, SW_ENOMEM, "out of memory");
    }
    hy_var var[20];
    int nv = hy_candidates(ps, var);
    char gen[64], pop[64];
    snprintf(gen, sizeof gen, "generations=%lld", (long long)params_int(ps, "generations"));
    snprintf(pop, sizeof pop, "population=%lld", (long long)params_int(ps, "population"));
    const char *const kv_sub[] = {"mode=budget", NULL};
    /* size-class mappings steered to ones that fit: at the tight budgets
       hybrid is for, most of the paper's random ones cannot (swapadvisor's
       first_allocation) */
    const char *const kv_sa[] = {gen, pop, "first_allocation=fitting", NULL};
    plan *best = NULL;
    double best_t = 0;
    int best_v = -1, rc = 0, n_fit = 0;
    char note[512], best_note[256] = "";
    sw_err first_err = {0};
    for (int v = 0; v < nv; v++) {
        plan *p = NULL;
        sw_err e = {0};
        note[0] = 0;
        if (best && o->stop && o->stop(o->stop_ud, v)) /* interrupted: keep the best so far */
            break;
        if (var[v].src == C_OWN && var[v].sched == 2 && !have_gas)
            continue;
        if (var[v].src == C_OWN)
            rc = plan_one(g, var[v].sched == 2 ? gas : var[v].sched ? fw : NULL, var[v].mode,
                          var[v].rw, var[v].link, o, &p, note, sizeof note, &e);
        else
            rc = run_other(var[v].src == C_SUBLINEAR ? &planner_sublinear : &planner_swapadvisor,
                           g, o, var[v].src == C_SUBLINEAR ? kv_sub : kv_sa, &p, &e);
        if (rc && (rc == SW_ENOFIT || var[v].src != C_OWN) && rc != SW_ENOMEM) {
            if (!first_err.code && var[v].src == C_OWN)
                first_err = e; /* the others may refuse for their own reasons */
            continue;
        }
        if (rc) {
            *err = e;
            goto done;
        }
        if (var[v].src == C_SWAPADVISOR) { /* its compute stream runs the schedule */
            int32_t n = 0;
            for (int32_t k = 0; k < p->n_tasks && n < g->n_ops; k++)
                if (p->tasks[k].kind == TASK_RUN)
                    gas[n++] = p->tasks[k].op;
            have_gas = n == g->n_ops;
        }
        sim_result sr;
        double t = INFINITY;
        if (nv > 1) {
            if ((rc = sim_plan(p, NULL, NULL, &sr, &e)) != 0 && rc != SW_EDEADLOCK) {
                plan_free(p);
                *err = e;
                goto done;
            }
            if (!rc)
                t = sr.iteration_time_s;
        }
        n_fit++;
        if (!best || t < best_t) {
            plan_free(best);
            best = p;
            best_t = t;
            best_v = v;
            snprintf(best_note, sizeof best_note, "%.250s", note);
        } else {
            plan_free(p);
        }
    }
    rc = 0;
    if (!best) {
        rc = SW_ENOFIT;
        if (first_err.code)
            *err = first_err;
        else
            sw_fail(err, SW_ENOFIT, "does not fit: no candidate fits the budget");
        goto done;
    }
    if (hy_note(var, best_v, nv, n_fit, best_note, best)) {
        rc = sw_fail(err, SW_ENOMEM, "out of memory");
        goto done;
    }
    *out = best;
    best = NULL;
done:
    plan_free(best);
    sw_free(fw);
    sw_free(gas);
    return rc;
}

const planner planner_hybrid = {1, "hybrid", "swapping and recomputation combined: per storage, "
                                "keep, swap or recompute by what each adds to the critical path "
                                "(Belady eviction refined by cost); the fastest of its variants, "
                                "Chen's checkpointing and SwapAdvisor's GA",
                                hybrid_params, plan_hybrid, 0};
