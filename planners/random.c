/* random.c: the `random` planner, a test and validation planner, not an
   optimiser. It walks the profile's order and makes random but legal swap
   decisions through the plan builder within the memory budget: a random
   resident set, swap-ins just in time (or a few ops ahead), and after each
   op a random selection of tensors not needed next is evicted (copied out
   if dirty, else dropped); when memory runs short, random victims are
   evicted. Same seed, same plan. It stands in for the random GA
   individuals the SwapAdvisor paper replayed to measure the simulator's
   error (fig11), and gives the tests plans that differ in swapping. */
#include <gsl/gsl_rng.h>
#include <stdio.h>
#include <string.h>

#include "../sim/builder.h"
#include "planner.h"

static const param_def random_params[] = {
    {"evict", PT_FLOAT, "0.3", "probability that a tensor not needed by the next ops is evicted "
     "after each op", NULL, 0, 1},
    {"resident", PT_FLOAT, "0.5", "probability that a persistent tensor is resident at "
     "iteration start (while it fits in half the budget)", NULL, 0, 1},
    {"prefetch", PT_INT, "1", "swap inputs in this many ops ahead", NULL, 0, 64},
    {"allocator", PT_CHOICE, "first-fit", "address allocator policy (the other one is tried if "
     "this one fragments too much)", "first-fit|best-fit", 1, 0},
    {"alignment", PT_SIZE, "256", "placement alignment in bytes", NULL, 1, 1e9},
    PARAM_END};

typedef struct rp {
    const graph_profile *g;
    plan_builder *b;
    gsl_rng *rng;
    uint8_t *res;    /* resident by our own count (the builder frees after last use) */
    int64_t used, limit, cap, align;
    int32_t *last;   /* position of each storage's last access in the order
                        (graph_lifetimes; ignores held_until) */
    int32_t *cand;
    int32_t *window; /* 1: accessed by an op in the protected window */
    int32_t *ppos;   /* position of each storage's producer in the order, -1 if external */
    int32_t *opos;   /* position of each op in the order */
} rp;

static int64_t sz(const rp *r, int32_t s)
{
    return (r->g->tensors[s].bytes + r->align - 1) / r->align * r->align;
}

/* Mark (1) or unmark (0) the storages accessed by ops at positions [from, to]. */
static void mark_window(rp *r, int32_t from, int32_t to, int32_t v)
{
    const graph_profile *g = r->g;
    for (int32_t i = from; i <= to && i < g->n_ops; i++) {
        int32_t o = g->order[i];
        for (int32_t k = g->acc_off[o]; k < g->acc_off[o + 1]; k++)
            r->window[g->acc[k]] = v;
    }
}

/* A tensor may leave if it is resident, not in the window, and still
   needed later (or persistent): non-persistent dead ones are freed by the
   builder anyway. */
static int evictable(const rp *r, int32_t s, int32_t pos)
{
    return r->res[s] && !r->window[s] && (r->g->tensors[s].persistent || r->last[s] > pos);
}

static void evict(rp *r, int32_t s)
{
    if (pb_host_valid(r->b, s))
        pb_drop(r->b, s);
    else
        pb_swap_out(r->b, s);
    r->res[s] = 0;
    r->used -= sz(r, s);
}

/* Evict random victims until need more bytes fit under the limit (the
   capacity less some slack against fragmentation), or at least under the
   capacity when nothing more may leave; 0 or SW_ENOFIT. */
static int make_room(rp *r, int64_t need, int32_t pos, int32_t ahead)
{
    const graph_profile *g = r->g;
    while (r->used + need > r->limit) {
        int32_t n = 0;
        for (int32_t s = 0; s < g->n_tensors; s++)
            if (g->tensors[s].storage == s && evictable(r, s, pos))
                r->cand[n++] = s;
        if (n == 0 && ahead > 0) {
            /* what later ops need may leave too, before failing */
            mark_window(r, pos + 1, pos + ahead, 0);
            mark_window(r, pos, pos, 1);
            ahead = 0;
            continue;
        }
        if (n == 0)
            return r->used + need <= r->cap ? 0 : SW_ENOFIT;
        evict(r, r->cand[gsl_rng_uniform_int(r->rng, (unsigned long)n)]);
    }
    return 0;
}

static int record(rp *r, const planner_opts *po, sw_err *err)
{
    const graph_profile *g = r->g;
    double pe = params_float(&po->params, "evict"), pr = params_float(&po->params, "resident");
    int32_t ahead = (int32_t)params_int(&po->params, "prefetch");
    /* resident set: persistent storages in random order, within half the budget */
    int32_t n = 0;
    for (int32_t s = 0; s < g->n_tensors; s++)
        if (g->tensors[s].storage == s && g->tensors[s].persistent)
            r->cand[n++] = s;
    for (int32_t i = n - 1; i > 0; i--) {
        int32_t j = (int32_t)gsl_rng_uniform_int(r->rng, (unsigned long)i + 1), t = r->cand[i];
        r->cand[i] = r->cand[j];
        r->cand[j] = t;
    }
    for (int32_t i = 0; i < n; i++) {
        int32_t s = r->cand[i];
        if (gsl_rng_uniform(r->rng) < pr && r->used + sz(r, s) <= r->limit / 2) {
            pb_resident(r->b, s);
            r->res[s] = 1;
            r->used += sz(r, s);
        }
    }
    for (int32_t i = 0; i < g->n_ops; i++) {
        int32_t o = g->order[i];
        /* inputs of this op and of the next `ahead` ops, just in time */
        mark_window(r, i, i + ahead, 1);
        for (int32_t j = i; j <= i + ahead && j < g->n_ops; j++) {
            int32_t oj = g->order[j];
            for (int32_t k = g->acc_off[oj]; k < g->acc_off[oj + 1]; k++) {
                int32_t s = g->acc[k];
                if ((g->acc_flag[k] & GA_CREATE) || r->res[s])
                    continue;
                if (r->ppos[s] >= i)
                    continue; /* produced by an op not run yet: nothing to prefetch */
                if (make_room(r, sz(r, s), i, j > i ? 0 : ahead)) {
                    if (j > i)
                        continue; /* no room to prefetch: it comes in just in time */
                    goto nofit;
                }
                pb_swap_in(r->b, s);
                r->res[s] = 1;
                r->used += sz(r, s);
            }
        }
        int64_t out = 0;
        for (int32_t k = g->acc_off[o]; k < g->acc_off[o + 1]; k++)
            if (g->acc_flag[k] & GA_CREATE)
                out += sz(r, g->acc[k]);
        if (make_room(r, out, i, ahead))
            goto nofit;
        pb_run(r->b, o);
        for (int32_t k = g->acc_off[o]; k < g->acc_off[o + 1]; k++) {
            int32_t s = g->acc[k];
            if (g->acc_flag[k] & GA_CREATE) {
                r->res[s] = 1;
                r->used += sz(r, s);
            }
            /* the builder frees a non-persistent storage after its last use
               (one held past it, at its death: counted freed early here) */
            if (!g->tensors[s].persistent && r->last[s] == i && r->res[s]) {
                r->res[s] = 0;
                r->used -= sz(r, s);
            }
        }
        mark_window(r, i, i + ahead, 0);
        /* random evictions of what the next ops do not need */
        mark_window(r, i + 1, i + 1 + ahead, 1);
        for (int32_t k = g->acc_off[o]; k < g->acc_off[o + 1]; k++) {
            int32_t s = g->acc[k];
            if (evictable(r, s, i) && gsl_rng_uniform(r->rng) < pe)
                evict(r, s);
        }
        mark_window(r, i + 1, i + 1 + ahead, 0);
    }
    pb_end_iteration(r->b);
    return 0;
nofit:
    return sw_fail(err, SW_ENOFIT, "does not fit: the tensors one op needs at once exceed the "
                   "%lld bytes the budget leaves beside the workspace", (long long)r->cap);
}

static int plan_random(const graph_profile *g, const planner_opts *o, plan **out, sw_err *err)
{
    *out = NULL;
    int64_t cap = o->memory_budget - g->max_workspace;
    if (cap <= 0)
        return sw_fail(err, SW_ENOFIT, "does not fit: the largest workspace alone needs %lld bytes",
                       (long long)g->max_workspace);
    mem_fit fit = MEM_FIRST_FIT;
    mem_fit_parse(params_str(&o->params, "allocator"), &fit);
    rp r;
    memset(&r, 0, sizeof r);
    r.g = g;
    r.align = params_size(&o->params, "alignment");
    size_t nt = (size_t)g->n_tensors + 1;
    r.res = sw_calloc(nt, 1);
    r.last = sw_malloc(nt * sizeof *r.last);
    r.cand = sw_malloc(nt * sizeof *r.cand);
    r.window = sw_calloc(nt, sizeof *r.window);
    r.ppos = sw_malloc(nt * sizeof *r.ppos);
    r.opos = sw_malloc(((size_t)g->n_ops + 1) * sizeof *r.opos);
    r.rng = gsl_rng_alloc(gsl_rng_mt19937);
    mem_model *m = NULL;
    int rc = 0;
    if (!r.res || !r.last || !r.cand || !r.window || !r.ppos || !r.opos || !r.rng) {
        rc = sw_fail(err, SW_ENOMEM, "out of memory");
        goto done;
    }
    graph_lifetimes(g, g->order, r.opos, NULL, r.last, NULL, NULL);
    for (int32_t s = 0; s < g->n_tensors; s++)
        r.ppos[s] = -1;
    for (int32_t i = 0; i < g->n_ops; i++)
        for (int32_t k = g->acc_off[g->order[i]]; k < g->acc_off[g->order[i] + 1]; k++)
            if (g->acc_flag[k] & GA_CREATE)
                r.ppos[g->acc[k]] = i;
    /* the allocator may fragment where our byte count says it fits: keep more slack
       and try again, then with the other fit policy (same seed: still deterministic) */
    for (int attempt = 0; attempt < 12; attempt++) {
        double slack = 0.1 * (attempt % 6);
        if (attempt % 6 == 0) {
            if (m)
                mem_destroy(m);
            m = mem_address_new(cap, attempt ? (fit == MEM_FIRST_FIT ? MEM_BEST_FIT : MEM_FIRST_FIT)
                                             : fit, r.align);
            if (!m) {
                rc = sw_fail(err, SW_ENOMEM, "out of memory");
                break;
            }
        }
        plan_builder *b = pb_new(g, m, o->memory_budget, g->max_workspace);
        if (!b) {
            rc = sw_fail(err, SW_ENOMEM, "out of memory");
            break;
        }
        r.b = b;
        r.used = 0;
        r.cap = cap;
        r.limit = (int64_t)((double)cap * (1 - slack));
        memset(r.res, 0, nt);
        memset(r.window, 0, nt * sizeof *r.window);
        gsl_rng_set(r.rng, o->seed);
        rc = record(&r, o, err);
        if (rc) {
            pb_free(b);
            break; /* even evicting everything it may, an op does not fit */
        }
        rc = pb_finish(b, out, err);
        pb_free(b);
        if (rc != SW_ENOFIT)
            break;
    }
done:
    if (r.rng)
        gsl_rng_free(r.rng);
    if (m)
        mem_destroy(m);
    sw_free(r.res);
    sw_free(r.last);
    sw_free(r.cand);
    sw_free(r.window);
    sw_free(r.ppos);
    sw_free(r.opos);
    return rc;
}

const planner planner_random = {1, "random", "random legal swap decisions within the budget (a "
                                "test and validation planner, not an optimiser)", random_params,
                                plan_random, 0};
