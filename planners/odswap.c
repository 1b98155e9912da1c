/* odswap.c: the `odswap` planner, SwapAdvisor's on-demand swapping baseline
   (spec/swapadvisor.md, Baselines) written as the runtime policy it is:
   * the schedule is the framework's: `schedule=profile` runs the profile's
     own operator order; `schedule=framework` emulates a dataflow engine
     (MXNet's) that issues operators as they become ready (FIFO), the ones
     made ready by the same operator in creation order (swu_framework_order):
     for unrolled RNNs this interleaves layers and time steps, as the paper
     observed;
   * first iteration: before each operator, its missing inputs are swapped in
     on demand and memory for its outputs is made by evicting the least
     recently used tensors (copied out if still needed and stale on the
     host, else dropped);
   * later iterations know the access sequence of the first: after each
     operator, the inputs of the next operators are prefetched, in order, as
     long as they fit in free memory (prefetching never evicts), so copies
     overlap with compute.
   The plan is the steady state: the first iteration is replayed until the
   persistent tensors resident at its end stop changing, and the iteration
   recorded starts from that set. Decisions count bytes; if the allocator
   then cannot place the plan (fragmentation), the byte limit is lowered
   step by step (reported in the notes). */
#include <stdio.h>
#include <string.h>

#include "lib/arena.h"
#include "lib/swap_util.h"

static const param_def odswap_params[] = {
    {"schedule", PT_CHOICE, "profile", "operator order: the profile's, or a dataflow engine's "
     "(ops issued as they become ready, FIFO, ties in creation order)", "profile|framework",
     1, 0},
    {"prefetch", PT_BOOL, "true", "after the first iteration, prefetch by the recorded access "
     "sequence (false: on demand only)", NULL, 1, 0},
    {"prefetch_ops", PT_INT, "0", "how many operators ahead to prefetch (0: as far as free "
     "memory allows)", NULL, 0, 1e9},
    {"allocator", PT_CHOICE, "best-fit", "address allocator placing the plan",
     "first-fit|best-fit", 1, 0},
    {"alignment", PT_SIZE, "1", "placement alignment in bytes", NULL, 1, 1e9},
    PARAM_END};

typedef struct od {
    swu u;
    int prefetch;
    int32_t window;
} od;

/* Prefetch inputs of the operators after position i, in order, while they fit. */
static void prefetch(od *d, int32_t i)
{
    swu *u = &d->u;
    const graph_profile *g = u->g;
    int32_t no = g->n_ops, end = d->window > 0 && i + 1 + d->window < no ? i + 1 + d->window : no;
    for (int32_t j = i + 1; j < end; j++) {
        int32_t o = u->order[j];
        for (int32_t k = g->acc_off[o]; k < g->acc_off[o + 1]; k++) {
            int32_t s = g->acc[k];
            if ((g->acc_flag[k] & GA_CREATE) || u->res[s] || !swu_on_host(u, s))
                continue;
            if (u->used + g->tensors[s].bytes > u->limit)
                return; /* in order: stop at the first that does not fit */
            swu_swap_in(u, s);
        }
    }
}

/* One iteration from the resident set r (updated to the set at its end). */
static int iterate(od *d, plan_builder *b, uint8_t *r, int pf, int64_t limit, sw_err *err)
{
    swu *u = &d->u;
    const graph_profile *g = u->g;
    swu_begin(u, b, r, limit);
    for (int32_t i = 0; i < g->n_ops; i++) {
        int32_t o = u->order[i];
        swu_lock_op(u, o, 1);
        for (int32_t k = g->acc_off[o]; k < g->acc_off[o + 1]; k++) {
            int32_t s = g->acc[k];
            if ((g->acc_flag[k] & GA_CREATE) || u->res[s])
                continue;
            if (swu_make_room(u, g->tensors[s].bytes))
                goto nofit;
            swu_swap_in(u, s);
        }
        if (swu_make_room(u, swu_created_bytes(u, i)))
            goto nofit;
        swu_run(u, i);
        swu_lock_op(u, o, 0);
        if (pf)
            prefetch(d, i);
        continue;
    nofit:;
        int64_t need = swu_created_bytes(u, i);
        for (int32_t k = g->acc_off[o]; k < g->acc_off[o + 1]; k++)
            if (!(g->acc_flag[k] & GA_CREATE))
                need += g->tensors[g->acc[k]].bytes;
        char h1[32], h2[32];
        return sw_fail(err, SW_ENOFIT, "does not fit: op %d '%s' alone needs %s (its inputs and "
                       "outputs), the budget leaves %s for tensors", o, g->ops[o].name,
                       sw_fmt_bytes(need, h1, sizeof h1), sw_fmt_bytes(limit, h2, sizeof h2));
    }
    for (int32_t s = 0; s < g->n_tensors; s++)
        if (g->tensors[s].storage == s && g->tensors[s].persistent)
            r[s] = u->res[s];
    return 0;
}

static int plan_odswap(const graph_profile *g, const planner_opts *o, plan **out, sw_err *err)
{
    const param_set *ps = &o->params;
    int64_t cap = o->memory_budget - g->max_workspace;
    if (cap <= 0)
        return sw_fail(err, SW_ENOFIT, "does not fit: the budget does not cover the largest op "
                       "workspace");
    int32_t *order = NULL;
    if (!strcmp(params_str(ps, "schedule"), "framework") &&
        !(order = swu_framework_order(g)))
        return sw_fail(err, SW_ENOMEM, "out of memory");
    od d;
    memset(&d, 0, sizeof d);
    int rc = swu_init(&d.u, g, order);
    sw_free(order);
    uint8_t *r = sw_calloc((size_t)g->n_tensors + 1, 1);
    uint8_t *r2 = sw_calloc((size_t)g->n_tensors + 1, 1);
    plan_builder *b = arena_builder(g, o, NULL);
    if (rc || !r || !r2 || !b) {
        rc = sw_fail(err, SW_ENOMEM, "out of memory");
        goto done;
    }
    d.window = (int32_t)params_int(ps, "prefetch_ops");
    int pf = params_bool(ps, "prefetch");
    double margin = 1.0;
    for (int attempt = 0; attempt < 24; attempt++, margin -= 0.02) {
        int64_t limit = (int64_t)((double)cap * margin);
        /* persistent tensors start resident in order of first use while they fit */
        memset(r, 0, (size_t)g->n_tensors);
        int64_t used = 0;
        for (int32_t i = 0; i < g->n_ops; i++) {
            int32_t op = d.u.order[i];
            for (int32_t k = g->acc_off[op]; k < g->acc_off[op + 1]; k++) {
                int32_t s = g->acc[k];
                if (g->tensors[s].persistent && !r[s] && used + g->tensors[s].bytes <= limit / 2) {
                    r[s] = 1;
                    used += g->tensors[s].bytes;
                }
            }
        }
        /* the first iteration on demand, then prefetching ones until the set
           of persistent tensors resident at the end repeats */
        for (int k = 0; k < 8; k++) {
            memcpy(r2, r, (size_t)g->n_tensors);
            if ((rc = iterate(&d, NULL, r, k > 0 && pf, limit, err)) != 0)
                goto done;
            if (k > 0 && !memcmp(r, r2, (size_t)g->n_tensors))
                break;
        }
        /* the steady state, recorded */
        if ((rc = iterate(&d, b, r, pf, limit, err)) != 0)
            goto done;
        sw_err e2;
        rc = swu_finish(&d.u, out, &e2);
        if (rc == SW_ENOFIT)
            continue; /* the allocator fragments: leave more room */
        if (rc)
            *err = e2;
        break;
    }
    if (rc == SW_ENOFIT)
        rc = sw_fail(err, SW_ENOFIT, "does not fit: the allocator cannot place the on-demand "
                     "schedule even at %.0f%% of the budget", 100 * (margin + 0.02));
    if (!rc) {
        char note[256];
        snprintf(note, sizeof note, "odswap: byte limit %.0f%% of the arena; %d swap-ins, %d "
                 "swap-outs, %d drops before the end-of-iteration restore", 100 * margin, d.u.n_in, d.u.n_out,
                 d.u.n_drop);
        if (plan_set_notes(*out, note)) {
            plan_free(*out);
            *out = NULL;
            rc = sw_fail(err, SW_ENOMEM, "out of memory");
        }
    }
done:
    pb_free(b);
    sw_free(r);
    sw_free(r2);
    swu_free(&d.u);
    return rc;
}

const planner planner_odswap = {1, "odswap", "on-demand swapping (SwapAdvisor's baseline): LRU "
                                "eviction in the first iteration, prefetching by the recorded "
                                "access sequence after it; the steady state is reported",
                                odswap_params, plan_odswap, 0};
