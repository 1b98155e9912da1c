/* dtr_engine.c: DTR's runtime replayed over a profile, recording a plan.

   The runtime follows the DTR authors' simulator (simrd, RuntimeV2Eager-
   Optimized; notes in docs/planners.md):
   * ops run in the profile's order; before an op runs, its inputs are
     stamped (staleness), the resident ones locked, the missing ones
     rematerialised depth-first in argument order (re-running their
     producers; an op brings back all its missing outputs at once), then
     storages are evicted one at a time by the heuristic until the op's
     outputs fit the byte budget;
   * when the framework drops its last reference to a storage (its death:
     after its last use, or held_until) it is freed but stays in the graph
     ("fake delete"): it counts in evicted neighbourhoods and can be
     rematerialised if a rematerialisation needs it, after which it stays
     until evicted;
   * constants (persistent tensors, `input` tensors) are never evicted or
     freed; the `end_of_log`-style sink op (no outputs, no mutations) pins its
     inputs one by one, rematerialising the missing ones;
   * the run gives up when rematerialisation exceeds (cap - 1) x compute.
   Placement: the plan's memory is an address allocator of the budget. The
   runtime mirrors the plan builder's allocations exactly; when the bytes fit
   but no free block is large enough, it evicts more (counted as
   fragmentation evictions). Events are replayed into the plan builder:
   evictions are drops, rematerialisations reruns; a death is an implicit
   free (the builder frees after the last use or held_until) unless the
   storage is placed again later, then an explicit drop.
   Residency is the runtime the swapping planners share (swap_util.h, run
   without a builder): the schedule and deaths (swu_init, from
   graph_lifetimes), the resident storages, their bytes (simrd's memory)
   and peak, the budget, which storages come from the host (swu_begin,
   swu_on_host), and every change of residency (swu_swap_in, swu_create,
   swu_drop for an eviction, swu_release for a death). The rest stays here
   because DTR's model differs from the swapping planners' in ways a shared
   version would get wrong:
   * eviction order: simrd scores a candidate pool kept in the order the
     storages became evictable (unlocked and resident), the last of equal
     minima winning, and random picks index into it; swu's LRU list is in
     order of access and holds locked and constant storages too, so neither
     list can stand for the other without changing which storage is evicted;
   * locks are counted: nested rematerialisations lock one storage once per
     frame that takes it as an argument, and it becomes a candidate again
     only when the last lets go; swu_lock_op's lock is a flag per op;
   * recording: the decisions are logged and replayed into the builder
     afterwards, not recorded as they are made (swu with a builder): a death
     turns into an explicit drop when the dead storage is rematerialised
     later (the log is patched), budget_on=bytes replays the same decisions
     into arenas of several sizes, and a run that gives up records nothing;
   * byte counting: the budget is checked against every byte an op creates,
     resident or not, and a re-run counts its outputs that are still
     resident twice for a moment (swu_note_transient), as simrd does;
   * per-tensor availability (views: `defined`), constants, the evicted
     neighbourhoods and the placement mirror have no counterpart in swu.
   This file is the run (residency changes, compute and rematerialisation,
   the ops in order, recording the plan); the heuristics are
   dtr_heuristics.c, the set-up dtr_setup.c, the state dtr_engine_impl.h. */
#include <gsl/gsl_rng.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "dtr_engine_impl.h"

/* ---------------- residency changes ---------------- */

static int evict(eng *e, int32_t s, int kind)
{
    if (kind == EV_DEATH)
        swu_release(&e->u, s);
    else
        swu_drop(&e->u, s);
    pool_remove(e, s);
    for (int32_t k = e->graph.on_storage_off[s]; k < e->graph.on_storage_off[s + 1]; k++)
        e->state.defined[e->graph.on_storage[k]] = 0;
    if (!e->cfg->bytes_only)
        mem_release(e->alloc.mem, &e->alloc.place[s], sbytes(e, s));
    if (kind == EV_DEATH)
        e->state.death_event[s] = (int32_t)e->log.n_events;
    if (log_ev(e, kind, s))
        return SW_ENOMEM;
    if (e->score.use_regions)
        eng_mark_dirty(e, s);
    if (e->score.use_eq) {
        int32_t n = eng_uf_new(e, e->score.compute_ns[s]);
        if (n < 0)
            return SW_ENOMEM;
        e->score.eq_node[s] = n;
        FOR_EVICTED_NEIGHBOURS(e, s, y, {
            int32_t l = eng_uf_find(e, e->score.eq_node[y]), r = eng_uf_find(e, n);
            if (l != r) {
                e->uf.parent[l] = r;
                e->uf.cost[r] += e->uf.cost[l];
            }
        })
    }
    return 0;
}

static const char *opname(const eng *e, int32_t o) { return e->g->ops[o].name; }

static int oom(eng *e, int64_t need, int frag)
{
    char h1[32], h2[32], h3[32];
    int32_t o = e->time.cur_op;
    if (frag) {
        /* need: the bytes of the tensors that must be placed together */
        mem_stats ms;
        mem_get_stats(e->alloc.mem, &ms);
        return sw_fail(e->err, SW_ENOFIT, "does not fit: at op %d '%s' nothing is left to evict "
                       "and the free blocks (largest %s, %s free in all) cannot place the %s of "
                       "tensors it needs at once (the allocator fragments memory)", o,
                       o >= 0 ? opname(e, o) : "?", sw_fmt_bytes(ms.largest_free, h2, sizeof h2),
                       sw_fmt_bytes(ms.free_bytes, h3, sizeof h3),
                       sw_fmt_bytes(need, h1, sizeof h1));
    }
    return sw_fail(e->err, SW_ENOFIT, "does not fit: at op %d '%s' nothing is left to evict: %s "
                   "resident and locked, %s more needed, budget %s", o,
                   o >= 0 ? opname(e, o) : "?", sw_fmt_bytes(e->u.used, h1, sizeof h1),
                   sw_fmt_bytes(need, h2, sizeof h2), sw_fmt_bytes(e->u.limit, h3, sizeof h3));
}

/* Evict until need more bytes fit the budget. */
static int free_bytes(eng *e, int64_t need)
{
    while (e->u.used + need > e->u.limit) {
        int32_t v = eng_choose(e);
        if (v < 0)
            return oom(e, need, 0);
        e->st->evictions++;
        int rc = evict(e, v, EV_DROP);
        if (rc)
            return rc;
    }
    return 0;
}

static void note_alloc(eng *e)
{
    mem_stats ms;
    mem_get_stats(e->alloc.mem, &ms);
    if (ms.in_use > e->st->peak_in_use) {
        e->st->peak_in_use = ms.in_use;
        e->st->reserved_at_peak = ms.high_water;
    }
    e->st->high_water = ms.high_water;
}

/* Place the storages in list[0..n) that are not resident, as the builder
   will; evict more while a placement fails. */
static int place_all(eng *e, const int32_t *list, int32_t n)
{
    if (e->cfg->bytes_only)
        return 0;
    for (;;) {
        int32_t k, fail = -1;
        for (k = 0; k < n; k++) {
            int32_t s = list[k];
            if (e->u.res[s])
                continue;
            if (mem_alloc(e->alloc.mem, s, sbytes(e, s), &e->alloc.place[s])) {
                fail = s;
                break;
            }
        }
        if (fail < 0) {
            note_alloc(e);
            return 0;
        }
        for (int32_t j = 0; j < k; j++)
            if (!e->u.res[list[j]])
                mem_release(e->alloc.mem, &e->alloc.place[list[j]], sbytes(e, list[j]));
        int32_t v = e->cfg->frag_fit ? eng_choose_opening(e, sbytes(e, fail)) : -1;
        if (v < 0)
            v = eng_choose(e);
        if (v < 0) {
            int64_t all = 0;
            for (int32_t j = 0; j < n; j++)
                if (!e->u.res[list[j]])
                    all += sbytes(e, list[j]);
            return oom(e, all, 1);
        }
        e->st->evictions++;
        e->st->frag_evictions++;
        int rc = evict(e, v, EV_DROP);
        if (rc)
            return rc;
    }
}

/* Run (or re-run) op o: outputs appear, missing siblings come back for free,
   resident ones are double-counted transiently. */
static int compute(eng *e, int32_t o, int remat, int32_t target)
{
    const graph_op *op = &e->g->ops[o];
    int64_t dup = 0;
    for (int32_t k = 0; k < op->n_out; k++) {
        int32_t u = op->out[k];
        if (!e->graph.is_view[u] && e->state.defined[u])
            dup += sbytes(e, stor(e, u));
    }
    /* storages that become resident, in simrd's order: siblings, then the target */
    int32_t fresh[64], nf = 0, *fr = fresh, *heap = NULL;
    if (op->n_out > 64) {
        heap = sw_malloc((size_t)op->n_out * sizeof *heap);
        if (!heap)
            return SW_ENOMEM;
        fr = heap;
    }
    for (int pass = 0; pass < 2; pass++)
        for (int32_t k = 0; k < op->n_out; k++) {
            int32_t u = op->out[k];
            if ((pass == 0) == (u == target) || e->graph.is_view[u] || e->u.res[stor(e, u)])
                continue;
            fr[nf++] = stor(e, u);
        }
    /* bounded inputs; saturate, never wrap */
    e->time.clock = sw_add_sat(e->time.clock, e->graph.ticks[o]);
    /* the fresh storages, and for a moment the new copies of resident ones */
    for (int32_t k = 0; k < nf; k++)
        swu_create(&e->u, fr[k]);
    swu_note_transient(&e->u, dup);
    for (int32_t k = 0; k < op->n_out; k++)
        e->state.defined[op->out[k]] = 1;
    if (remat) {
        e->time.remat_ticks += e->graph.ticks[o];
        e->st->remats++;
        for (int32_t k = 0; k < nf; k++) {
            int32_t s = fr[k];
            e->st->dead_remats += e->state.dead[s];
            e->state.n_remat[s]++;
            if (e->state.death_event[s] >= 0) { /* placed again: an explicit drop */
                e->log.events[e->state.death_event[s]].kind = EV_DEATH_DROP;
                e->state.death_event[s] = -1;
            }
        }
    } else {
        e->time.model_ticks += e->graph.ticks[o];
        e->state.ran[o] = 1;
        for (int32_t k = 0; k < op->n_out; k++) {
            int32_t s = stor(e, op->out[k]);
            if (e->score.compute_op[s] != o) {
                e->score.compute_op[s] = o;
                e->score.compute_ns[s] += e->graph.ticks[o];
            }
        }
    }
    int rc = log_ev(e, remat ? EV_RERUN : EV_RUN, o);
    for (int32_t k = 0; k < nf && !rc; k++) {
        int32_t s = fr[k];
        make_evictable(e, s);
        if (e->score.use_regions)
            eng_mark_dirty(e, s);
        if (e->score.use_eq && e->score.eq_node[s] >= 0) {
            e->uf.cost[eng_uf_find(e, e->score.eq_node[s])] -= e->score.compute_ns[s];
            e->score.eq_node[s] = -1;
        }
    }
    sw_free(heap);
    return rc;
}

static int parents_n(const eng *e, int32_t o)
{
    return e->graph.args_off[o + 1] - e->graph.args_off[o];
}

/* simrd's _materialize, with an explicit stack: op o0 (re)computed, after its
   missing inputs are rematerialised depth-first. */
static int materialize(eng *e, int32_t o0, int remat0, int32_t target0)
{
    size_t base = e->walk.n_frames;
    if (SW_GROW(e->walk.frames, e->walk.cap_frames, e->walk.n_frames + 1))
        return SW_ENOMEM;
    e->walk.frames[e->walk.n_frames++] = (frame){o0, target0, 0, (uint8_t)remat0, 0, 0};
    while (e->walk.n_frames > base) {
        frame *f = &e->walk.frames[e->walk.n_frames - 1];
        int32_t o = f->op, np = parents_n(e, o);
        const int32_t *P = e->graph.args + e->graph.args_off[o];
        if (f->stage == 0) {
            for (int32_t k = 0; k < np; k++)
                e->state.last_access[stor(e, P[k])] = e->time.clock;
            if (SW_GROW(e->walk.arg_missing, e->walk.cap_arg_missing,
                        e->walk.n_arg_missing + (size_t)np + 1))
                return SW_ENOMEM;
            f = &e->walk.frames[e->walk.n_frames - 1];
            f->miss_off = e->walk.n_arg_missing;
            e->walk.n_arg_missing += (size_t)np;
            for (int32_t k = 0; k < np; k++) {
                e->walk.arg_missing[f->miss_off + (size_t)k] = !e->state.defined[P[k]];
                if (e->state.defined[P[k]])
                    lock(e, stor(e, P[k]));
            }
            f->stage = 1;
            f->arg = 0;
        }
        if (f->stage == 2) { /* a missing input was just rematerialised */
            lock(e, stor(e, P[f->arg]));
            f->arg++;
            f->stage = 1;
        }
        int pushed = 0;
        while (f->stage == 1 && f->arg < np) {
            int32_t p = P[f->arg];
            if (!e->walk.arg_missing[f->miss_off + (size_t)f->arg]) {
                f->arg++;
                continue;
            }
            if (e->state.defined[p]) {
                lock(e, stor(e, p));
                f->arg++;
                continue;
            }
            int32_t q = e->g->tensors[p].producer, s = stor(e, p);
            if (q < 0 || e->state.banished[s])
                return sw_fail(e->err, SW_EINVAL, "dtr: tensor %d '%s' is needed but cannot be "
                               "rematerialised (a bug)", p, e->g->tensors[p].name);
            f->stage = 2;
            if (SW_GROW(e->walk.frames, e->walk.cap_frames, e->walk.n_frames + 1))
                return SW_ENOMEM;
            e->walk.frames[e->walk.n_frames++] = (frame){q, p, 0, 1, 0, 0};
            pushed = 1;
            break;
        }
        if (pushed)
            continue;
        /* all inputs resident and locked: make room, place, compute */
        int rc = 0;
        if (e->u.used + e->graph.created_bytes[o] > e->u.limit)
            rc = free_bytes(e, e->graph.created_bytes[o]);
        if (!rc)
            rc = place_all(e, e->graph.created + e->graph.created_off[o],
                           e->graph.created_off[o + 1] - e->graph.created_off[o]);
        f = &e->walk.frames[e->walk.n_frames - 1];
        if (!rc)
            rc = compute(e, o, f->remat, f->target);
        if (rc)
            return rc;
        f = &e->walk.frames[e->walk.n_frames - 1];
        for (int32_t k = 0; k < np; k++)
            unlock(e, stor(e, P[k]));
        e->walk.n_arg_missing = f->miss_off;
        e->walk.n_frames--;
        if (e->time.remat_limit >= 0 && (double)e->time.remat_ticks > e->time.remat_limit)
            return sw_fail(e->err, SW_EEXCEEDED,
                           "exceeded: rematerialisation passed %.3gx the "
                           "compute time (overhead cap %gx) at op %d '%s'",
                           (double)e->time.remat_ticks / (double)e->time.total_ticks,
                           e->cfg->overhead_cap, e->time.cur_op, opname(e, e->time.cur_op));
    }
    return 0;
}

/* MegEngine's real delete: regenerate the evicted storages that still have
   references and depend on s, then s can never come back; protect the
   resident storages whose recomputation would need it. */
static int real_delete(eng *e, int32_t s, int32_t now)
{
    e->st->real_deletes++;
    /* live non-resident dependents, reached through non-resident storages */
    int32_t *list = NULL;
    size_t nl = 0, cap = 0;
    next_epoch(e);
    int32_t n = 0;
    e->walk.stack[n++] = s;
    e->walk.visited[s] = e->walk.epoch;
    while (n) {
        int32_t x = e->walk.stack[--n];
        for (int32_t k = e->graph.fwd_off[x]; k < e->graph.fwd_off[x + 1]; k++) {
            int32_t y = e->graph.fwd_to[k];
            if (!e->state.ran[e->graph.fwd_op[k]] || e->walk.visited[y] == e->walk.epoch ||
                e->u.res[y])
                continue;
            e->walk.visited[y] = e->walk.epoch;
            e->walk.stack[n++] = y;
            if (e->u.death[y] > now && !e->state.banished[y]) {
                if (SW_GROW(list, cap, nl + 1)) {
                    sw_free(list);
                    return SW_ENOMEM;
                }
                list[nl++] = y;
            }
        }
    }
    for (size_t i = 0; i < nl; i++) {
        int32_t y = list[i];
        if (e->u.res[y])
            continue;
        e->st->regenerations++;
        int rc = materialize(e, e->g->tensors[y].producer, 1, y);
        if (rc) {
            sw_free(list);
            return rc;
        }
    }
    sw_free(list);
    if (e->u.res[s]) {
        int rc = evict(e, s, EV_DEATH);
        if (rc)
            return rc;
    }
    e->state.banished[s] = 1;
    next_epoch(e);
    n = 0;
    e->walk.stack[n++] = s;
    e->walk.visited[s] = e->walk.epoch;
    while (n) {
        int32_t x = e->walk.stack[--n];
        for (int32_t k = e->graph.fwd_off[x]; k < e->graph.fwd_off[x + 1]; k++) {
            int32_t y = e->graph.fwd_to[k];
            if (!e->state.ran[e->graph.fwd_op[k]] || e->walk.visited[y] == e->walk.epoch)
                continue;
            e->walk.visited[y] = e->walk.epoch;
            if (!e->u.res[y]) {
                e->walk.stack[n++] = y;
            } else if (e->u.death[y] > now) {
                e->state.no_evict[y] = 1;
                pool_remove(e, y);
            }
        }
    }
    return 0;
}

/* ---------------- the run ---------------- */

static int swap_in_external(eng *e, int32_t s)
{
    int rc = 0;
    if (e->u.used + sbytes(e, s) > e->u.limit)
        rc = free_bytes(e, sbytes(e, s));
    if (!rc)
        rc = place_all(e, &s, 1);
    if (rc)
        return rc;
    swu_swap_in(&e->u, s);
    for (int32_t k = e->graph.on_storage_off[s]; k < e->graph.on_storage_off[s + 1]; k++)
        if (!e->graph.is_view[e->graph.on_storage[k]])
            e->state.defined[e->graph.on_storage[k]] = 1;
    return log_ev(e, EV_SWAPIN, s);
}

/* Run the iteration within limit bytes of tensors. */
static int run_ops(eng *e, int64_t limit)
{
    const graph_profile *g = e->g;
    int rc = 0;
    /* the resident set: every persistent storage, placed first as the builder does */
    uint8_t *persistent = sw_calloc((size_t)e->nt + 1, 1); /* per storage */
    if (!persistent)
        return SW_ENOMEM;
    for (int32_t s = 0; s < e->nt; s++)
        persistent[s] = g->tensors[s].storage == s && g->tensors[s].persistent;
    swu_begin(&e->u, NULL, persistent, limit);
    for (int32_t s = 0; s < e->nt && !rc; s++)
        if (persistent[s] && !e->cfg->bytes_only) {
            if (mem_alloc(e->alloc.mem, s, sbytes(e, s), &e->alloc.place[s]))
                rc = sw_fail(e->err, SW_ENOFIT, "does not fit: the persistent tensors alone "
                             "exceed the budget");
            else
                note_alloc(e);
        }
    sw_free(persistent);
    if (rc)
        return rc;
    e->st->peak_bytes = e->u.peak;
    if (e->u.used > e->u.limit)
        return sw_fail(e->err, SW_ENOFIT, "does not fit: the persistent tensors alone exceed "
                       "the budget");
    for (int32_t i = 0; i < e->no && !rc; i++) {
        int32_t o = g->order[i];
        const graph_op *op = &g->ops[o];
        e->time.cur_op = o;
        for (int32_t k = e->graph.args_off[o]; k < e->graph.args_off[o + 1] && !rc; k++) {
            int32_t s = stor(e, e->graph.args[k]);
            if (!e->u.res[s] && swu_on_host(&e->u, s)) /* external: never evicted */
                rc = swap_in_external(e, s);
        }
        if (rc)
            break;
        if (op->n_out == 0 && op->n_mut == 0) {
            /* a sink: its inputs are made resident and pinned one by one */
            for (int32_t k = 0; k < op->n_in && !rc; k++) {
                int32_t p = op->in[k], s = stor(e, p);
                if (!e->state.defined[p] && g->tensors[p].producer < 0)
                    rc = sw_fail(e->err, SW_EINVAL, "dtr: input %d '%s' of the sink is missing "
                                 "(a bug)", p, g->tensors[p].name);
                else if (!e->state.defined[p])
                    rc = materialize(e, g->tensors[p].producer, 1, p);
                if (!rc && !e->state.pinned[s]) {
                    lock(e, s);
                    e->state.pinned[s] = 1;
                }
            }
            if (!rc) {
                e->time.clock = sw_add_sat(
                    e->time.clock, e->graph.ticks[o]); /* bounded inputs; saturate, never wrap */
                e->time.model_ticks += e->graph.ticks[o];
                e->state.ran[o] = 1;
                rc = log_ev(e, EV_RUN, o);
            }
        } else {
            rc = materialize(e, o, 0, op->n_out ? op->out[0] : -1);
            for (int32_t k = 0; k < op->n_out && !rc; k++)
                e->state.last_access[stor(e, op->out[k])] = e->time.clock;
        }
        int real = e->cfg->real_delete_bwd && op->phase != GP_FORWARD;
        for (int32_t k = e->u.dth_off[i]; k < e->u.dth_off[i + 1] && !rc; k++) {
            int32_t s = e->u.dth[k];
            e->state.dead[s] = 1;
            if (e->graph.constant[s] || e->state.pinned[s])
                continue;
            if (real)
                rc = real_delete(e, s, i);
            else if (e->u.res[s])
                rc = evict(e, s, EV_DEATH);
        }
    }
    e->st->peak_bytes = e->u.peak;
    if (rc)
        return rc;
    /* storages the runtime keeps past their death (rematerialised after it,
       constants): the builder would free them after their last use */
    for (int32_t s = 0; s < e->nt && !rc; s++)
        if (g->tensors[s].storage == s && e->u.res[s] && e->state.dead[s] &&
            e->u.death[s] < e->no - 1)
            rc = log_ev(e, EV_DROP, s);
    return rc;
}

static int record_in(eng *e, mem_model *m, int64_t budget, plan **out, sw_err *e2)
{
    const graph_profile *g = e->g;
    plan_builder *b = pb_new(g, m, budget, g->max_workspace);
    if (!b)
        return SW_ENOMEM;
    int rc = replay_record(b, e->log.events, e->log.n_events, out, e2);
    pb_free(b);
    return rc;
}

/* The plan in an arena of the budget, placed as the runtime mirrored it. */
static int record(eng *e, plan **out)
{
    sw_err e2;
    int rc = record_in(e, e->alloc.mem, e->u.limit + e->g->max_workspace, out, &e2);
    if (rc == SW_ENOFIT || rc == SW_EINVAL)
        return sw_fail(e->err, rc, "dtr: the recorded plan does not build (a bug): %s", e2.msg);
    if (rc)
        *e->err = e2;
    return rc;
}

/* bytes_only: place the decisions in a large arena, then in the smallest
   one that holds them (first-fit places the same way in any arena that
   fits; best-fit may not, so grow until it builds). */
static int record_bytes(eng *e, plan **out)
{
    const graph_profile *g = e->g;
    int64_t a = e->cfg->align > 0 ? e->cfg->align : 1, cap = 0;
    for (int32_t s = 0; s < e->nt; s++)
        if (g->tensors[s].storage == s)
            cap += (sbytes(e, s) + a) / a * a + a;
    sw_err e2;
    for (int attempt = 0; attempt < 64; attempt++) {
        mem_model *m = mem_address_new(cap, e->cfg->fit, a);
        if (!m)
            return SW_ENOMEM;
        plan *p = NULL;
        int rc = record_in(e, m, cap + g->max_workspace, &p, &e2);
        mem_stats ms;
        mem_get_stats(m, &ms);
        mem_destroy(m);
        if (rc == SW_ENOFIT && attempt > 0) {
            cap += cap / 256 + a;
            continue;
        }
        if (rc) {
            *e->err = e2;
            return rc == SW_ENOMEM ? rc : sw_fail(e->err, rc, "dtr: the recorded plan does not "
                                                  "build (a bug): %s", e2.msg);
        }
        if (attempt == 0) { /* the large arena: now the smallest that holds it */
            plan_free(p);
            cap = ms.high_water > 0 ? ms.high_water : 1;
            continue;
        }
        e->st->arena = p->capacity;
        *out = p;
        return 0;
    }
    return sw_fail(e->err, SW_EINVAL, "dtr: no arena holds the recorded decisions (a bug)");
}

int dtr_run(const graph_profile *g, int64_t budget, const dtr_config *cfg, plan **out,
            dtr_stats *st_out, sw_err *err)
{
    *out = NULL;
    dtr_stats st_local;
    dtr_stats *st = st_out ? st_out : &st_local;
    memset(st, 0, sizeof *st);
    eng e;
    memset(&e, 0, sizeof e);
    e.g = g;
    e.cfg = cfg;
    e.st = st;
    e.err = err;
    e.time.cur_op = -1;
    e.score.heur = eng_heuristic_of(cfg->heuristic);
    e.score.use_regions = e.score.heur->regions;
    e.score.use_eq = e.score.heur->eq;
    int64_t limit = budget - g->max_workspace; /* bytes for tensors */
    e.time.clock = 1;
    if (limit <= 0)
        return sw_fail(err, SW_ENOFIT, "does not fit: the budget does not cover the largest op "
                       "workspace (%lld bytes)", (long long)g->max_workspace);
    int rc = eng_setup(&e);
    if (!rc) {
        e.time.remat_limit =
            cfg->overhead_cap > 0 ? (cfg->overhead_cap - 1) * (double)e.time.total_ticks : -1;
        e.alloc.mem = mem_address_new(limit, cfg->fit, cfg->align > 0 ? cfg->align : 1);
        e.score.rng = gsl_rng_alloc(gsl_rng_mt19937);
        if (!e.alloc.mem || !e.score.rng)
            rc = SW_ENOMEM;
        else
            gsl_rng_set(e.score.rng, (unsigned long)cfg->seed);
    }
    if (!rc)
        rc = run_ops(&e, limit);
    st->compute_ns = e.time.total_ticks;
    st->remat_ns = e.time.remat_ticks;
    st->clock_ns = e.time.clock;
    st->overhead = e.time.total_ticks > 0 ? (double)e.time.clock / (double)e.time.total_ticks : 1;
    if (!rc && !cfg->no_plan)
        rc = cfg->bytes_only ? record_bytes(&e, out) : record(&e, out);
    if (rc == SW_ENOMEM)
        sw_fail(err, SW_ENOMEM, "out of memory");
    mem_destroy(e.alloc.mem);
    eng_free(&e);
    return rc;
}

void dtr_stats_note(const dtr_stats *st, const dtr_config *cfg, sw_buf *b)
{
    (void)cfg;
    sw_buf_printf(b, "overhead %.4f (simrd clock / compute), recompute %.6f s in %lld reruns "
                  "(%lld of dead storages), %lld evictions (%lld for fragmentation), peak %lld "
                  "bytes counted; allocator at its peak: %lld bytes in use, arena extent %lld "
                  "bytes (fragmentation %lld bytes)",
                  st->overhead, (double)st->remat_ns * 1e-9, (long long)st->remats,
                  (long long)st->dead_remats, (long long)st->evictions,
                  (long long)st->frag_evictions, (long long)st->peak_bytes,
                  (long long)st->peak_in_use, (long long)st->reserved_at_peak,
                  (long long)(st->reserved_at_peak - st->peak_in_use));
    if (st->arena)
        sw_buf_printf(b, "; budget on bytes: the plan's arena is %lld bytes", (long long)st->arena);
    if (st->real_deletes)
        sw_buf_printf(b, ", %lld real deletes (%lld regenerations)", (long long)st->real_deletes,
                      (long long)st->regenerations);
}
