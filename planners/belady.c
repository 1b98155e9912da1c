/* belady.c: the `belady` planner: offline swapping on the profile's order
   (or the fused one) with the textbook policy and nothing searched but a
   few switches and scalars.

   - Eviction is Belady's (MIN): when an op's outputs do not fit the byte
     limit, the resident storage the op does not touch whose next use is
     farthest away leaves (a persistent one whose next use is in the next
     iteration counts that far: parameters and optimizer states the step
     alone reads go first).
   - Each victim's copy out is issued right after its last use before that
     point (not at the point itself), so the copy overlaps the ops in
     between and its memory is free by then; a storage whose host copy is
     current is dropped instead.
   - Each victim comes back just in time: its copy in is issued before the
     latest op that leaves at least `lead` x its copy time (latency + bytes
     at the host-to-device rate) of the profile's compute before its next
     use, and no earlier than the op after its eviction. A victim next used
     in the next iteration comes back at the iteration's end
     (pb_end_iteration), so every iteration starts alike. The copies in
     issued before the same op go in the order they are due: the link
     takes them in issue order, so one due later would hold up one due
     sooner.
   - The fused order (order=fused) moves each update op up to right after
     the last op it depends on: the optimizer run from gradient hooks.

   Decisions count bytes in a dry run (memory a copy out frees is counted
   as freed only at the eviction point); a second pass records the same
   swaps on the plan builder, whose address arena places them (offline by
   default: every residency at once, sim/builder.c). The search
   (search=true, the default) plans both orders, both victim rules, three
   cold rules and lead = 1, 1.5, 2 and 3 at three byte limits, with size
   weight 0 and, at lead 1 only, 0.5 and 1; places each offline and best
   fit, simulates each plan and keeps the fastest, in that order (ties:
   the first). The size weight
   divides a victim's byte-seconds by its bytes to that power: 0 is
   Belady weighed by size; 1 counts the byte-seconds freed per byte the
   copies move (what the victim costs the link), which keeps the largest
   storages where their return would crowd the link and the memory. If a plan cannot be placed, its byte limit is lowered by 2%
   of the arena at a time (at most 12 times). No recomputation. Not a
   published planner: the classical offline policy with an early copy out
   and a just-in-time prefetch, the plan the windows of docs/bounds.md
   picture (docs/planners.md). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../sim/simulate.h"
#include "lib/arena.h"
#include "lib/swap_util.h"

static const param_def belady_params[] = {
    {"search", PT_BOOL, "true", "plan both orders, both victim rules, the three cold rules, "
     "lead = 1, 1.5, 2 and 3 at byte limits of 100%, 96% and 92% with size weight 0, and lead 1 "
     "with size weights 0.5 and 1, each placed offline and best fit, simulate each and keep the "
     "fastest (false: one plan, as the options below say)",
     NULL, 1, 0},
    {"lead", PT_FLOAT, "1.5", "without search: a copy in is issued this many times its copy "
     "time (of the profile's compute) before the next use", NULL, 0, 1e6},
    {"victims", PT_CHOICE, "farthest", "without search: the victim rule: the most byte-seconds "
     "freed (farthest); or, first, those whose copy out can end before the memory is needed "
     "(on-time)", "farthest|on-time", 1, 0},
    {"size_weight", PT_FLOAT, "0", "without search: the victim score, byte-seconds freed, is "
     "divided by the victim's bytes to this power: 0 the most byte-seconds (Belady weighed by "
     "size), 1 byte-seconds freed per byte moved (the copy's cost), 0.5 between", NULL, 0, 4},
    {"cold", PT_CHOICE, "false", "without search: persistent storages kept on the host "
     "between uses (copied in for them, out after the last): none (false); those a run "
     "evicts before any use in the iteration (true); those and the ones a run copies out "
     "while their host copy is stale (dirty)", "false|true|dirty", 1, 0},
    {"order", PT_CHOICE, "profile", "without search: the schedule: the profile's, or the "
     "optimizer step fused into the backward pass (fused: each update op right after the last "
     "op it depends on, as an optimizer run from gradient hooks)", "profile|fused", 1, 0},
    ARENA_OFFLINE_PARAM,
    {"alignment", PT_SIZE, "1", "placement alignment in bytes", NULL, 1, 1e9},
    PARAM_END};

#define BL_NONE (-2)  /* no copy in: restored at the iteration's end */
#define BL_COLD_ROUNDS 8 /* cold mode: runs adding the storages evicted before any use */
#define BL_MARGINS 13 /* byte limits tried: 100%, 98%, ..., 76% of the arena */

typedef struct bl_ret {
    double due;  /* the use's start (profile time) */
    int32_t e;   /* the event */
} bl_ret;

typedef struct bl {
    const graph_profile *g;
    swu u;
    int32_t no, nt;
    int32_t *use_off, *use_pos; /* per storage: positions touching it (CSR, ascending) */
    double *t_at;               /* compute before position i (no + 1) */
    uint8_t *r;                 /* per storage: resident at the iteration's start */
    int32_t *last_acc, *last_ret; /* per storage: last position touching it, last copy in */
    int32_t *pend;              /* per storage: its latest event */
    uint8_t *cold;              /* per storage: persistent, kept on the host between uses */
    uint8_t *dirty_out;         /* per storage: persistent, copied out (its host copy stale)
                                   by the last run */
    double *wgt;                /* per storage: its bytes to the power -size_weight */
    int32_t *ev_use, *ev_at;    /* events: the use the copy in serves, the eviction point */
    int32_t *edf_at;            /* per use (CSR index): the copy in's position from the
                                   link schedule of the previous run, -1 */
    bl_ret *rets;               /* scratch: copies in, for the link schedule */
    int32_t *ret_head, *ev_next;  /* copies in due before each position (lists) */
    int32_t *ev_s, *ev_out, *ev_in; /* events: storage, copy out after, copy in before */
    int32_t n_ev, cap_ev;
    int32_t *o_off, *o_ev, *i_off, *i_ev; /* CSR by position for the recording pass */
    int32_t *o_fill, *i_fill;
    int alone;                  /* decide failed: an op alone exceeds the limit */
    double d2h_free;            /* decide: when the device-to-host link frees, estimated */
} bl;

static void bl_free(bl *d)
{
    void *p[] = {d->use_off, d->use_pos, d->t_at, d->r, d->last_acc, d->last_ret, d->ret_head, d->pend, d->cold, d->dirty_out, d->wgt, d->ev_use, d->ev_at, d->edf_at, d->rets,
                 d->ev_next, d->ev_s, d->ev_out, d->ev_in, d->o_off, d->o_ev, d->i_off, d->i_ev,
                 d->o_fill, d->i_fill};
    for (size_t i = 0; i < SW_ARRAY_LEN(p); i++)
        sw_free(p[i]);
    swu_free(&d->u);
}

static int bl_init(bl *d, const graph_profile *g, const int32_t *order)
{
    memset(d, 0, sizeof *d);
    d->g = g;
    int32_t no = d->no = g->n_ops, nt = d->nt = g->n_tensors;
    int rc = swu_init(&d->u, g, order);
    int32_t n_acc = g->acc_off[no];
    d->cap_ev = n_acc + 2 * nt + 2; /* an event per use gap, a first copy in and a cold
                                       copy out per storage; more by grow_events */
    d->use_off = sw_calloc((size_t)nt + 2, sizeof *d->use_off);
    d->use_pos = sw_malloc(((size_t)n_acc + 1) * sizeof *d->use_pos);
    d->t_at = sw_malloc(((size_t)no + 1) * sizeof *d->t_at);
    d->r = sw_calloc((size_t)nt + 1, 1);
    d->last_acc = sw_malloc(((size_t)nt + 1) * sizeof *d->last_acc);
    d->last_ret = sw_malloc(((size_t)nt + 1) * sizeof *d->last_ret);
    d->ret_head = sw_malloc(((size_t)no + 1) * sizeof *d->ret_head);
    d->pend = sw_malloc(((size_t)nt + 1) * sizeof *d->pend);
    d->cold = sw_calloc((size_t)nt + 1, 1);
    d->dirty_out = sw_calloc((size_t)nt + 1, 1);
    d->wgt = sw_malloc(((size_t)nt + 1) * sizeof *d->wgt);
    d->ev_use = sw_malloc((size_t)d->cap_ev * sizeof *d->ev_use);
    d->ev_at = sw_malloc((size_t)d->cap_ev * sizeof *d->ev_at);
    d->edf_at = sw_malloc(((size_t)n_acc + 1) * sizeof *d->edf_at);
    d->rets = sw_malloc((size_t)d->cap_ev * sizeof *d->rets);
    d->ev_next = sw_malloc((size_t)d->cap_ev * sizeof *d->ev_next);
    d->ev_s = sw_malloc((size_t)d->cap_ev * sizeof *d->ev_s);
    d->ev_out = sw_malloc((size_t)d->cap_ev * sizeof *d->ev_out);
    d->ev_in = sw_malloc((size_t)d->cap_ev * sizeof *d->ev_in);
    d->o_off = sw_calloc((size_t)no + 3, sizeof *d->o_off);
    d->i_off = sw_calloc((size_t)no + 3, sizeof *d->i_off);
    d->o_ev = sw_malloc((size_t)d->cap_ev * sizeof *d->o_ev);
    d->i_ev = sw_malloc((size_t)d->cap_ev * sizeof *d->i_ev);
    d->o_fill = sw_malloc(((size_t)no + 3) * sizeof *d->o_fill);
    d->i_fill = sw_malloc(((size_t)no + 3) * sizeof *d->i_fill);
    if (rc || !d->use_off || !d->use_pos || !d->t_at || !d->r || !d->last_acc || !d->last_ret ||
        !d->ret_head || !d->pend || !d->cold || !d->dirty_out || !d->wgt || !d->ev_use ||
        !d->ev_at ||
        !d->edf_at || !d->rets || !d->ev_next || !d->ev_s || !d->ev_out || !d->ev_in || !d->o_off ||
        !d->i_off || !d->o_ev || !d->i_ev || !d->o_fill || !d->i_fill)
        return SW_ENOMEM;
    for (int32_t s = 0; s < nt; s++)
        d->wgt[s] = 1;
    d->t_at[0] = 0;
    for (int32_t i = 0; i < no; i++) {
        int32_t o = d->u.order[i];
        d->t_at[i + 1] = d->t_at[i] + g->ops[o].time_s;
        for (int32_t k = g->acc_off[o]; k < g->acc_off[o + 1]; k++)
            d->use_off[g->acc[k]]++;
    }
    graph_counts_to_offsets(d->use_off, nt);
    int32_t *fill = sw_malloc(((size_t)nt + 1) * sizeof *fill);
    if (!fill)
        return SW_ENOMEM;
    memcpy(fill, d->use_off, (size_t)nt * sizeof *fill);
    for (int32_t i = 0; i < no; i++) {
        int32_t o = d->u.order[i];
        for (int32_t k = g->acc_off[o]; k < g->acc_off[o + 1]; k++)
            d->use_pos[fill[g->acc[k]]++] = i;
    }
    sw_free(fill);
    return 0;
}

/* The victim score's weight per storage: its bytes to the power -w. */
static void set_size_weight(bl *d, double w)
{
    for (int32_t s = 0; s < d->nt; s++)
        d->wgt[s] = w > 0 ? pow((double)SW_MAX(d->g->tensors[s].bytes, 1), -w) : 1;
}

/* The first position after i touching s; past no for a persistent storage
   (its first use in the next iteration, + no); INT32_MAX if none. */
static int64_t next_use(const bl *d, int32_t s, int32_t i)
{
    int32_t a = d->use_off[s], e = d->use_off[s + 1], lo = a, hi = e;
    while (lo < hi) {
        int32_t m = lo + (hi - lo) / 2;
        if (d->use_pos[m] <= i)
            lo = m + 1;
        else
            hi = m;
    }
    if (lo < e)
        return d->use_pos[lo];
    if (d->g->tensors[s].persistent)
        return e > a ? (int64_t)d->no + d->use_pos[a] : 2 * (int64_t)d->no;
    return INT32_MAX;
}

/* Seconds a copy of s takes: in (host to device) or out. */
static double copy_s(const bl *d, int32_t s, int in)
{
    const dev_spec *dv = &d->g->device;
    return dv->copy_latency_s + (double)d->g->tensors[s].bytes / (in ? dv->h2d_bw : dv->d2h_bw);
}

/* The last position p in [lo, hi] with t_at[p] <= x; lo when there is none. */
static int32_t last_at_or_before(const bl *d, int32_t lo, int32_t hi, double x)
{
    if (d->t_at[lo] > x)
        return lo;
    while (lo < hi) {
        int32_t m = lo + (hi - lo + 1) / 2;
        if (d->t_at[m] <= x)
            lo = m;
        else
            hi = m - 1;
    }
    return lo;
}

/* The position before which a copy in of s evicted at i and next used at
   u (< no) is issued: the latest p in (i, u] with at least lead x its copy
   time of compute between p and u, else i + 1. */
static int32_t in_pos(const bl *d, int32_t s, int32_t i, int32_t u, double lead)
{
    double need = lead * copy_s(d, s, 1);
    return last_at_or_before(d, i + 1, u, d->t_at[u] - need);
}

/* The CSR index of s's use at position u (u is one). */
static int32_t use_index(const bl *d, int32_t s, int32_t u)
{
    int32_t lo = d->use_off[s], hi = d->use_off[s + 1] - 1;
    while (lo < hi) {
        int32_t m = lo + (hi - lo) / 2;
        if (d->use_pos[m] < u)
            lo = m + 1;
        else
            hi = m;
    }
    return lo;
}

/* Where the copy in of s, evicted at i and next used at u, is issued: the
   previous run's link schedule if it placed it after i, else in_pos. */
static int32_t ret_pos(const bl *d, int32_t s, int32_t i, int32_t u, double lead)
{
    int32_t p = d->edf_at[use_index(d, s, u)];
    return p > i && p <= u ? p : in_pos(d, s, i, u, lead);
}

static int ret_cmp(const void *a, const void *b)
{
    const bl_ret *x = a, *y = b;
    if (x->due != y->due)
        return x->due > y->due ? -1 : 1;
    return x->e - y->e;
}

/* The link schedule of the run's copies in: latest due first, each as late
   as its use and the copies after it on the host-to-device link allow
   (lead x its copy time), into edf_at. */
static void edf(bl *d, double lead)
{
    int32_t n = 0;
    for (int32_t e = 0; e < d->n_ev; e++)
        if (d->ev_in[e] >= 0)
            d->rets[n++] = (bl_ret){d->t_at[d->ev_use[e]], e};
    qsort(d->rets, (size_t)n, sizeof *d->rets, ret_cmp);
    double cursor = INFINITY;
    for (int32_t k = 0; k < n; k++) {
        int32_t e = d->rets[k].e, s = d->ev_s[e], u = d->ev_use[e];
        double start = SW_MIN(d->rets[k].due, cursor) - lead * copy_s(d, s, 1);
        cursor = start;
        d->edf_at[use_index(d, s, u)] = SW_MAX(last_at_or_before(d, 0, u, start), d->ev_at[e] + 1);
    }
}

/* Room for twice the events: a storage that came back and is evicted again
   before its use takes another (rare; the arrays start at one per use gap). */
static int grow_events(bl *d)
{
    size_t cap = 2 * (size_t)d->cap_ev;
    if (cap > INT32_MAX)
        return SW_ENOMEM;
    int32_t **a[] = {&d->ev_next, &d->ev_s, &d->ev_out, &d->ev_in, &d->ev_use, &d->ev_at,
                     &d->o_ev, &d->i_ev};
    for (size_t k = 0; k < SW_ARRAY_LEN(a); k++) {
        int32_t *p = sw_realloc(*a[k], cap * sizeof **a[k]);
        if (!p)
            return SW_ENOMEM;
        *a[k] = p;
    }
    bl_ret *r = sw_realloc(d->rets, cap * sizeof *r);
    if (!r)
        return SW_ENOMEM;
    d->rets = r;
    d->cap_ev = (int32_t)cap;
    return 0;
}

static int add_event(bl *d, int32_t s, int32_t out, int32_t in, int32_t use, int32_t at)
{
    if (d->n_ev >= d->cap_ev && grow_events(d))
        return SW_ENOMEM;
    int32_t e = d->n_ev++;
    d->ev_s[e] = s;
    d->ev_out[e] = out;
    d->ev_in[e] = in;
    d->ev_use[e] = use;
    d->ev_at[e] = at;
    d->ev_next[e] = -1;
    d->pend[s] = e;
    if (in >= 0) {
        d->ev_next[e] = d->ret_head[in];
        d->ret_head[in] = e;
    }
    return 0;
}

/* The victim at position i, deficit bytes short (comment in decide), -1
   if none; *far: its next use. */
static int32_t victim(const bl *d, int32_t i, double deficit, int on_time, int64_t *far)
{
    const swu *u = &d->u;
    int32_t v = -1;
    for (int pass = 0; pass < 2 && v < 0; pass++) {
        double best = -1, best_late = INFINITY;
        for (int32_t s = u->head; s >= 0; s = u->next[s]) {
            if (u->lock[s] || (d->last_ret[s] == i) != pass)
                continue;
            int64_t nu = next_use(d, s, i);
            double gap = nu >= 2 * (int64_t)d->no ? 2 * d->t_at[d->no]
                         : nu >= d->no ? d->t_at[d->no] + d->t_at[nu - d->no] - d->t_at[i]
                                       : d->t_at[nu] - d->t_at[i];
            double score = SW_MIN((double)d->g->tensors[s].bytes, deficit) * gap * d->wgt[s];
            double late = 0;
            if (on_time && !swu_on_host(u, s)) {
                int32_t at = SW_MAX(d->last_acc[s], d->last_ret[s]) + 1;
                late = SW_MAX(0, SW_MAX(d->d2h_free, d->t_at[at]) + copy_s(d, s, 0) - d->t_at[i]);
            }
            if (late < best_late ||
                (late == best_late && (score > best || (score == best && s < v)))) {
                best_late = late;
                best = score;
                *far = nu;
                v = s;
            }
        }
    }
    return v;
}

/* The dry run: decide every eviction under limit bytes. SW_ENOFIT naming
   the op when one alone does not fit. */
static int decide(bl *d, int64_t limit, double lead, int on_time, sw_err *err)
{
    const graph_profile *g = d->g;
    swu *u = &d->u;
    d->n_ev = 0;
    d->alone = 0;
    memset(d->dirty_out, 0, (size_t)d->nt);
    d->d2h_free = 0;
    for (int32_t i = 0; i < d->no; i++)
        d->ret_head[i] = -1;
    for (int32_t s = 0; s < d->nt; s++)
        d->last_acc[s] = d->last_ret[s] = -1;
    /* resident at the start: every persistent storage but the cold ones
       (d->cold: they live on the host) if they fit the limit, else those
       first used first while they fit half of it; the others come in just
       in time for their first use */
    int64_t all = 0, half = 0;
    for (int32_t s = 0; s < d->nt; s++) {
        d->r[s] = g->tensors[s].storage == s && g->tensors[s].persistent && !d->cold[s];
        all += d->r[s] ? g->tensors[s].bytes : 0;
    }
    if (all > limit) {
        for (int32_t s = 0; s < d->nt; s++)
            d->r[s] &= d->use_off[s] == d->use_off[s + 1];
        for (int32_t i = 0; i < d->no; i++) {
            int32_t o = u->order[i];
            for (int32_t k = g->acc_off[o]; k < g->acc_off[o + 1]; k++) {
                int32_t s = g->acc[k];
                if (g->tensors[s].persistent && !d->cold[s] && d->use_pos[d->use_off[s]] == i &&
                    half + g->tensors[s].bytes <= limit / 2) {
                    d->r[s] = 1;
                    half += g->tensors[s].bytes;
                }
            }
        }
    }
    for (int32_t s = 0; s < d->nt; s++)
        if (g->tensors[s].storage == s && g->tensors[s].persistent && !d->r[s] &&
            d->use_off[s] < d->use_off[s + 1] &&
            add_event(d, s, -1, ret_pos(d, s, -1, d->use_pos[d->use_off[s]], lead),
                      d->use_pos[d->use_off[s]], -1))
            return sw_fail(err, SW_ENOMEM, "out of memory");
    swu_begin(u, NULL, d->r, limit);
    for (int32_t i = 0; i < d->no; i++) {
        int32_t o = u->order[i];
        /* events pushed at i come out newest first: take them in the order made */
        int32_t rev = -1;
        for (int32_t e = d->ret_head[i]; e >= 0;) {
            int32_t nx = d->ev_next[e];
            d->ev_next[e] = rev;
            rev = e;
            e = nx;
        }
        d->ret_head[i] = rev;
        for (int32_t e = rev; e >= 0; e = d->ev_next[e])
            if (!u->res[d->ev_s[e]]) {
                swu_swap_in(u, d->ev_s[e]);
                d->last_ret[d->ev_s[e]] = i;
            }
        swu_lock_op(u, o, 1);
        int64_t need = swu_created_bytes(u, i);
        for (int32_t k = g->acc_off[o]; k < g->acc_off[o + 1]; k++) {
            int32_t s = g->acc[k];
            if (!(g->acc_flag[k] & GA_CREATE) && !u->res[s]) {
                swu_swap_in(u, s); /* never planned so: a safety net, brought in on demand */
                d->last_ret[s] = i;
            }
        }
        while (u->used + need > limit) {
            /* Belady's rule weighed by size: the most byte-seconds freed (the
               bytes still missing, at most, times the compute until the next
               use), divided by the victim's bytes to the power size_weight
               (d->wgt). With on_time, first the victims whose copy out (after
               its last use, queued on an estimated device-to-host clock)
               ends before op i starts, if any; else the one ending first.
               A storage that came back before this op is a victim only when
               nothing else is left (pass 1): its copy in is then put off. */
            int64_t far = -1;
            int32_t v = victim(d, i, (double)(u->used + need - limit), on_time, &far);
            if (v >= 0 && d->last_ret[v] == i) {
                /* put its copy in off: to just in time for its next use */
                int32_t e = d->pend[v], p = in_pos(d, v, i, (int32_t)far, lead);
                d->ev_at[e] = i;
                d->ev_in[e] = p;
                d->ev_next[e] = d->ret_head[p];
                d->ret_head[p] = e;
                d->last_ret[v] = -1;
                swu_evict(u, v); /* a drop: its host copy is current */
                continue;
            }
            if (v < 0) {
                char h1[32], h2[32];
                int64_t alone = need;
                d->alone = 1;
                for (int32_t k = g->acc_off[o]; k < g->acc_off[o + 1]; k++)
                    if (!(g->acc_flag[k] & GA_CREATE))
                        alone += g->tensors[g->acc[k]].bytes;
                return sw_fail(err, SW_ENOFIT, "does not fit: op %d '%s' needs %s (its inputs "
                               "and outputs) and the byte limit is %s", o, g->ops[o].name,
                               sw_fmt_bytes(alone, h1, sizeof h1),
                               sw_fmt_bytes(limit, h2, sizeof h2));
            }
            int32_t out = SW_MAX(d->last_acc[v], d->last_ret[v]);
            if (on_time && !swu_on_host(u, v))
                d->d2h_free = SW_MAX(d->d2h_free, d->t_at[out + 1]) + copy_s(d, v, 0);
            int32_t in = far < d->no ? ret_pos(d, v, i, (int32_t)far, lead) : BL_NONE;
            if (g->tensors[v].persistent && !swu_on_host(u, v))
                d->dirty_out[v] = 1;
            swu_evict(u, v);
            if (add_event(d, v, out, in, far < d->no ? (int32_t)far : -1, i))
                return sw_fail(err, SW_ENOMEM, "out of memory");
        }
        swu_run(u, i);
        for (int32_t k = g->acc_off[o]; k < g->acc_off[o + 1]; k++)
            d->last_acc[g->acc[k]] = i;
        swu_lock_op(u, o, 0);
        /* a cold storage leaves after its last use in the iteration */
        for (int32_t k = g->acc_off[o]; k < g->acc_off[o + 1]; k++) {
            int32_t s = g->acc[k];
            if (d->cold[s] && u->res[s] && d->use_pos[d->use_off[s + 1] - 1] == i) {
                if (add_event(d, s, i, BL_NONE, -1, i))
                    return sw_fail(err, SW_ENOMEM, "out of memory");
                swu_evict(u, s);
            }
        }
    }
    return 0;
}

/* decide with the cold storages: none (cold_mode 0); (1) the persistent
   storages a run evicts before any use in the iteration; (2) those and the
   persistent storages a run copies out while their host copy is stale (a
   parameter the step updated, sent out in the next forward pass: cold, it
   leaves right after the step instead). The set grows by runs until one
   adds none (at most BL_COLD_ROUNDS). 1 is returned when the set is empty
   (mode 1) or holds no storage of mode 2's own (mode 2): the plan is that
   of a lower mode, tried already. */
static int decide2(bl *d, int64_t limit, double lead, int on_time, int cold_mode, sw_err *err)
{
    memset(d->cold, 0, (size_t)d->nt);
    for (int32_t j = 0; j < d->use_off[d->nt]; j++)
        d->edf_at[j] = -1;
    int rc = decide(d, limit, lead, on_time, err);
    if (rc)
        return rc;
    int any_dirty = 0;
    for (int round = 0; cold_mode && round < BL_COLD_ROUNDS; round++) {
        int any = 0;
        for (int32_t e = 0; e < d->n_ev; e++)
            if (d->ev_out[e] == -1 && d->r[d->ev_s[e]] && !d->cold[d->ev_s[e]])
                d->cold[d->ev_s[e]] = 1, any = 1;
        for (int32_t s = 0; cold_mode == 2 && s < d->nt; s++)
            if (d->dirty_out[s] && !d->cold[s])
                d->cold[s] = 1, any = 1, any_dirty = 1;
        if (!any) {
            if (round == 0)
                return 1;
            break;
        }
        if ((rc = decide(d, limit, lead, on_time, err)) != 0)
            return rc;
    }
    if (cold_mode == 2 && !any_dirty)
        return 1;
    edf(d, lead);
    return decide(d, limit, lead, on_time, err);
}

/* The recording pass: the same swaps on the builder b, then the plan. */
static int record(bl *d, plan_builder *b, plan **out, sw_err *err)
{
    const graph_profile *g = d->g;
    swu *u = &d->u;
    int32_t no = d->no;
    /* outs by x = out + 1 (0: before the first op), ins by position */
    memset(d->o_off, 0, ((size_t)no + 3) * sizeof *d->o_off);
    memset(d->i_off, 0, ((size_t)no + 3) * sizeof *d->i_off);
    for (int32_t e = 0; e < d->n_ev; e++) {
        d->o_off[d->ev_out[e] + 2]++;
        if (d->ev_in[e] >= 0)
            d->i_off[d->ev_in[e] + 1]++;
    }
    for (int32_t i = 0; i <= no + 1; i++) {
        d->o_off[i + 1] += d->o_off[i];
        d->i_off[i + 1] += d->i_off[i];
    }
    memcpy(d->o_fill, d->o_off, ((size_t)no + 2) * sizeof *d->o_fill);
    memcpy(d->i_fill, d->i_off, ((size_t)no + 2) * sizeof *d->i_fill);
    for (int32_t e = 0; e < d->n_ev; e++) {
        d->o_ev[d->o_fill[d->ev_out[e] + 1]++] = e;
        if (d->ev_in[e] >= 0)
            d->i_ev[d->i_fill[d->ev_in[e]]++] = e;
    }
    /* the copies in issued before one op go in the order they are due (the
       link takes them in issue order: one due later must not hold up one
       due sooner); ties in the order made */
    for (int32_t i = 0; i < no; i++)
        for (int32_t k = d->i_off[i] + 1; k < d->i_off[i + 1]; k++) {
            int32_t e = d->i_ev[k], j = k;
            for (; j > d->i_off[i]; j--) {
                int32_t f = d->i_ev[j - 1];
                if (d->ev_use[f] < d->ev_use[e] || (d->ev_use[f] == d->ev_use[e] && f < e))
                    break;
                d->i_ev[j] = f;
            }
            d->i_ev[j] = e;
        }
    swu_begin(u, b, d->r, INT64_MAX);
    for (int32_t k = d->o_off[0]; k < d->o_off[1]; k++)
        if (u->res[d->ev_s[d->o_ev[k]]])
            swu_evict(u, d->ev_s[d->o_ev[k]]);
    for (int32_t i = 0; i < no; i++) {
        int32_t o = u->order[i];
        for (int32_t k = d->i_off[i]; k < d->i_off[i + 1]; k++) {
            int32_t s = d->ev_s[d->i_ev[k]];
            if (!u->res[s] && swu_on_host(u, s))
                swu_swap_in(u, s);
        }
        for (int32_t k = g->acc_off[o]; k < g->acc_off[o + 1]; k++) {
            int32_t s = g->acc[k];
            if (!(g->acc_flag[k] & GA_CREATE) && !u->res[s])
                swu_swap_in(u, s);
        }
        swu_run(u, i);
        for (int32_t k = d->o_off[i + 1]; k < d->o_off[i + 2]; k++)
            if (u->res[d->ev_s[d->o_ev[k]]])
                swu_evict(u, d->ev_s[d->o_ev[k]]);
    }
    return swu_finish(u, out, err);
}

/* The fused order: the profile's, each update-phase op moved up to right
   after the last op it depends on (a read after that op's write, or a write
   after any access of the same storage, directly or through another update
   op moved before it), as when each parameter's optimizer step runs from a
   gradient hook in the backward pass. Ops that depend on one another keep
   their order, so every dependency of the profile holds. NULL when out of
   memory; *moved: whether any op moved. */
static int32_t *fused_order(const graph_profile *g, int *moved)
{
    int32_t no = g->n_ops, nt = g->n_tensors;
    int32_t *ord = sw_malloc(((size_t)no + 1) * sizeof *ord);
    int32_t *anchor = sw_malloc(((size_t)no + 1) * sizeof *anchor);
    int32_t *rest = sw_malloc(((size_t)no + 1) * sizeof *rest);
    int32_t *head = sw_malloc(((size_t)no + 2) * sizeof *head);
    int32_t *nxt = sw_malloc(((size_t)no + 1) * sizeof *nxt);
    int32_t *last_any = sw_malloc(((size_t)nt + 1) * sizeof *last_any);
    int32_t *last_wr = sw_malloc(((size_t)nt + 1) * sizeof *last_wr);
    *moved = 0;
    if (!ord || !anchor || !rest || !head || !nxt || !last_any || !last_wr) {
        sw_free(ord);
        ord = NULL;
        goto done;
    }
    for (int32_t s = 0; s < nt; s++)
        last_any[s] = last_wr[s] = -1;
    /* anchors: positions among the ops that stay, -1 before them all */
    int32_t n_rest = 0;
    for (int32_t i = 0; i < no; i++) {
        int32_t o = g->order[i], a = -1;
        if (g->ops[o].phase == GP_UPDATE) {
            for (int32_t k = g->acc_off[o]; k < g->acc_off[o + 1]; k++) {
                int32_t s = g->acc[k];
                int32_t need = g->acc_flag[k] & (GA_CREATE | GA_MUTATE) ? last_any[s] : last_wr[s];
                a = SW_MAX(a, need);
            }
        } else {
            a = n_rest;
            rest[n_rest++] = o;
        }
        anchor[o] = a;
        for (int32_t k = g->acc_off[o]; k < g->acc_off[o + 1]; k++) {
            int32_t s = g->acc[k];
            last_any[s] = SW_MAX(last_any[s], a);
            if (g->acc_flag[k] & (GA_CREATE | GA_MUTATE))
                last_wr[s] = SW_MAX(last_wr[s], a);
        }
    }
    /* each op that stays, then the update ops anchored to it, in the
       profile's order (lists built from the back) */
    for (int32_t r = 0; r <= n_rest; r++)
        head[r] = -1;
    for (int32_t i = no - 1; i >= 0; i--) {
        int32_t o = g->order[i];
        if (g->ops[o].phase == GP_UPDATE) {
            nxt[o] = head[anchor[o] + 1];
            head[anchor[o] + 1] = o;
        }
    }
    int32_t n = 0;
    for (int32_t r = -1; r < n_rest; r++) {
        if (r >= 0)
            ord[n++] = rest[r];
        for (int32_t o = head[r + 1]; o >= 0; o = nxt[o])
            ord[n++] = o;
    }
    for (int32_t i = 0; i < no; i++)
        if (ord[i] != g->order[i])
            *moved = 1;
done:
    sw_free(anchor);
    sw_free(rest);
    sw_free(head);
    sw_free(nxt);
    sw_free(last_any);
    sw_free(last_wr);
    return ord;
}

/* Why no variant gave a plan: the allocator's last refusal (last), an op
   alone too large at the lower limits (alone), or both. SW_ENOFIT. */
static int no_plan(sw_err *err, const sw_err *last, const sw_err *alone)
{
    if (!last->msg[0])
        *err = *alone;
    else if (!alone->msg[0])
        sw_fail(err, SW_ENOFIT, "does not fit: the allocator cannot place belady's swaps "
                "even at %d%% of the arena (%s)", 100 - 2 * (BL_MARGINS - 1), last->msg);
    else
        sw_fail(err, SW_ENOFIT, "does not fit: the allocator cannot place belady's swaps "
                "(%s), and lower byte limits leave an op no room (%s)", last->msg, alone->msg);
    return SW_ENOFIT;
}

static int plan_belady(const graph_profile *g, const planner_opts *o, plan **out, sw_err *err)
{
    const param_set *ps = &o->params;
    *out = NULL;
    int64_t cap = o->memory_budget - g->max_workspace;
    if (cap <= 0)
        return sw_fail(err, SW_ENOFIT, "does not fit: the budget does not cover the largest op "
                       "workspace");
    static const double leads[] = {1, 1.5, 2, 3}, weights[] = {0, 0.5, 1};
    double one = params_float(ps, "lead");
    const double *lv = params_bool(ps, "search") ? leads : &one;
    int nl = params_bool(ps, "search") ? (int)SW_ARRAY_LEN(leads) : 1;
    double one_w = params_float(ps, "size_weight");
    const double *wv = params_bool(ps, "search") ? weights : &one_w;
    int nw = params_bool(ps, "search") ? (int)SW_ARRAY_LEN(weights) : 1;
    bl d;
    memset(&d, 0, sizeof d);
    int search = params_bool(ps, "search"), fz = !strcmp(params_str(ps, "order"), "fused");
    int moved = 0, rc = 0;
    int32_t *fo = search || fz ? fused_order(g, &moved) : NULL;
    /* the search places each plan as the allocator option says and, where
       that is offline, best fit too (greedy by size is not always faster) */
    plan_builder *bs[2] = {arena_builder(g, o, NULL), NULL};
    int n_b = 1;
    if (search && !strcmp(params_str(ps, "allocator"), "offline")) {
        bs[1] = arena_builder(g, o, "best-fit");
        n_b = 2;
    }
    if (!bs[0] || (n_b == 2 && !bs[1]) || ((search || fz) && !fo)) {
        rc = sw_fail(err, SW_ENOMEM, "out of memory");
        goto done;
    }
    double best_t = 0, best_lead = 0, best_w = 0;
    int best_ot = 0, best_cm = 0, best_fused = 0;
    int best_m = 0, n_in = 0, n_out = 0, n_drop = 0;
    sw_err last, alone_err;
    memset(&last, 0, sizeof last);
    memset(&alone_err, 0, sizeof alone_err);
    rc = SW_ENOFIT;
    int nm0 = params_bool(ps, "search") ? 3 : 1; /* search: byte limits 100%, 96%, 92% too */
    int ot0 = !strcmp(params_str(ps, "victims"), "on-time"), ot1 = ot0;
    if (params_bool(ps, "search"))
        ot0 = 0, ot1 = 1;
    const char *cold = params_str(ps, "cold");
    int cm0 = !strcmp(cold, "dirty") ? 2 : !strcmp(cold, "true"), cm1 = cm0;
    if (params_bool(ps, "search"))
        cm0 = 0, cm1 = 2;
    /* search: the profile's order, then the fused one where it differs */
    for (int fu = search ? 0 : fz; fu <= (search ? moved : fz); fu++) {
    bl_free(&d);
    memset(&d, 0, sizeof d);
    if (bl_init(&d, g, fu ? fo : NULL)) {
        rc = sw_fail(err, SW_ENOMEM, "out of memory");
        plan_free(*out);
        *out = NULL;
        goto done;
    }
    for (int wi = 0; wi < nw; wi++) {
    set_size_weight(&d, wv[wi]);
    for (int cm = cm0; cm <= cm1; cm++)
    for (int ot = ot0; ot <= ot1; ot++)
    for (int li = 0; li < nl * nm0; li++) {
        if (search && wv[wi] > 0 && li % nl)
            continue; /* the size weights with lead 1 only */
        for (int m = 2 * (li / nl); m < BL_MARGINS; m++) {
            int64_t limit = cap - (int64_t)((double)cap * 0.02 * m);
            sw_err e2;
            int r2 = decide2(&d, limit, lv[li % nl], ot, cm, &e2), placed = 0;
            if (r2 == 1)
                break; /* nothing cold: the plan without is tried already */
            for (int ai = 0; !r2 && ai < n_b; ai++) {
                plan *p = NULL;
                sw_err e3;
                int r3 = record(&d, bs[ai], &p, &e3);
                if (r3 == SW_ENOFIT) {
                    last = e3;
                    continue; /* this allocator fragments */
                }
                sim_result sr;
                if (!r3)
                    r3 = sim_plan(p, NULL, NULL, &sr, &e3);
                if (r3) {
                    plan_free(p);
                    r2 = r3;
                    e2 = e3;
                    break;
                }
                placed = 1;
                if (!*out || sr.iteration_time_s < best_t) {
                    plan_free(*out);
                    *out = p;
                    best_t = sr.iteration_time_s;
                    best_lead = lv[li % nl];
                    best_ot = ot;
                    best_w = wv[wi];
                    best_cm = cm;
                    best_fused = fu;
                    best_m = m;
                    n_in = d.u.n_in;
                    n_out = d.u.n_out;
                    n_drop = d.u.n_drop;
                } else {
                    plan_free(p);
                }
            }
            if (r2 == SW_ENOFIT && d.alone) {
                alone_err = e2;
                break; /* an op alone does not fit this limit: lower ones neither */
            }
            if (r2 == SW_ENOFIT)
                continue;
            if (r2) {
                rc = r2;
                *err = e2;
                plan_free(*out);
                *out = NULL;
                goto done;
            }
            if (!placed)
                continue; /* every allocator fragments: a lower limit */
            rc = 0;
            break;
        }
    }
    }
    }
    if (!*out) {
        rc = no_plan(err, &last, &alone_err);
        goto done;
    }
    char note[384];
    snprintf(note, sizeof note, "belady: %s order, victims %s, size weight %g,%s lead %g, byte "
             "limit %d%% of the arena, placed %s; %d swap-ins, %d swap-outs, %d drops before the "
             "end-of-iteration restore", best_fused ? "fused" : "the profile's",
             best_ot ? "on-time" : "farthest", best_w,
             best_cm == 2 ? " cold and dirty storages on the host," :
             best_cm ? " cold storages on the host," : "",
             best_lead, 100 - 2 * best_m, (*out)->policy, n_in, n_out, n_drop);
    if (plan_set_notes(*out, note)) {
        plan_free(*out);
        *out = NULL;
        rc = sw_fail(err, SW_ENOMEM, "out of memory");
    }
done:
    pb_free(bs[0]);
    pb_free(bs[1]);
    bl_free(&d);
    sw_free(fo);
    return rc;
}

const planner planner_belady = {1, "belady", "offline swapping on the profile's order or with "
                                "the optimizer step fused into the backward pass: Belady's "
                                "eviction (farthest next use, weighed by size), each victim "
                                "copied out right after its last use and back just in time on a "
                                "schedule of the link, placed offline; the fastest of 216 variants",
                                belady_params, plan_belady, 0};
