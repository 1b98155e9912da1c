/* dtr_setup.c: the DTR runtime's set-up: the profile's tables (arguments,
   created storages, views, the storages' edges), the constants, what may
   be evicted, the initial state; and freeing it all. */
#include <gsl/gsl_rng.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "dtr_engine_impl.h"

/* ---------------- setup ---------------- */

#define ALLOC(p, n) ((p) = sw_calloc((size_t)(n) + 1, sizeof *(p)))

/* The fixed-size arrays, zeroed, one spare slot each. */
static int alloc_arrays(eng *e)
{
    int32_t nt = e->nt, no = e->no;
    if (!ALLOC(e->graph.ticks, no) || !ALLOC(e->graph.args_off, no + 1) ||
        !ALLOC(e->graph.created_off, no + 1) || !ALLOC(e->graph.created_bytes, no) ||
        !ALLOC(e->graph.on_storage_off, nt + 1) || !ALLOC(e->graph.on_storage, nt) ||
        !ALLOC(e->graph.fwd_off, nt + 1) || !ALLOC(e->graph.rev_off, nt + 1) ||
        !ALLOC(e->graph.constant, nt) || !ALLOC(e->graph.evictable, nt) ||
        !ALLOC(e->graph.is_view, nt) || !ALLOC(e->state.defined, nt) ||
        !ALLOC(e->state.pinned, nt) || !ALLOC(e->state.ran, no) || !ALLOC(e->state.dead, nt) ||
        !ALLOC(e->state.banished, nt) || !ALLOC(e->state.no_evict, nt) ||
        !ALLOC(e->score.fwd_dirty, nt) || !ALLOC(e->score.rev_dirty, nt) ||
        !ALLOC(e->pool.in, nt) || !ALLOC(e->state.locks, nt) || !ALLOC(e->pool.prev, nt) ||
        !ALLOC(e->pool.next, nt) || !ALLOC(e->state.last_access, nt) ||
        !ALLOC(e->score.compute_ns, nt) || !ALLOC(e->score.fwd_region_ns, nt) ||
        !ALLOC(e->score.rev_region_ns, nt) || !ALLOC(e->score.eq_node, nt) ||
        !ALLOC(e->state.n_remat, nt) || !ALLOC(e->state.death_event, nt) ||
        !ALLOC(e->score.compute_op, nt) || !ALLOC(e->walk.stack, nt) ||
        !ALLOC(e->walk.visited, nt) || !ALLOC(e->alloc.place, nt))
        return SW_ENOMEM;
    return 0;
}

/* Per op: its time in ticks (and the total), its arguments (inputs, then
   mutated tensors) and the storages it creates, with their bytes. */
static int build_op_tables(eng *e)
{
    const graph_profile *g = e->g;
    int32_t no = e->no;
    e->time.total_ticks = 0;
    for (int32_t o = 0; o < no; o++) {
        const graph_op *op = &g->ops[o];
        double ns = op->time_s * 1e9;
        e->graph.ticks[o] = ns > 0 ? (int64_t)llround(ns) : 0;
        e->time.total_ticks += e->graph.ticks[o];
        e->graph.args_off[o] = op->n_in + op->n_mut;
        for (int32_t k = g->acc_off[o]; k < g->acc_off[o + 1]; k++)
            if (g->acc_flag[k] & GA_CREATE) {
                e->graph.created_off[o]++;
                e->graph.created_bytes[o] += sbytes(e, g->acc[k]);
            }
    }
    if (graph_counts_to_offsets(e->graph.args_off, no) ||
        graph_counts_to_offsets(e->graph.created_off, no))
        return SW_ENOMEM;
    if (!ALLOC(e->graph.args, e->graph.args_off[no]) ||
        !ALLOC(e->graph.created, e->graph.created_off[no]))
        return SW_ENOMEM;
    for (int32_t o = 0; o < no; o++) {
        const graph_op *op = &g->ops[o];
        int32_t *P = e->graph.args + e->graph.args_off[o],
                *C = e->graph.created + e->graph.created_off[o];
        for (int32_t k = 0; k < op->n_in; k++)
            *P++ = op->in[k];
        for (int32_t k = 0; k < op->n_mut; k++)
            *P++ = op->mut[k];
        for (int32_t k = g->acc_off[o]; k < g->acc_off[o + 1]; k++)
            if (g->acc_flag[k] & GA_CREATE)
                *C++ = g->acc[k];
    }
    return 0;
}

/* Per storage, the tensors on it (in id order); per tensor, is_view. */
static int build_storage_tensors(eng *e)
{
    const graph_profile *g = e->g;
    int32_t nt = e->nt;
    for (int32_t t = 0; t < nt; t++) {
        e->graph.on_storage_off[stor(e, t)]++;
        e->graph.is_view[t] = g->tensors[t].view_of >= 0;
    }
    if (graph_counts_to_offsets(e->graph.on_storage_off, nt))
        return SW_ENOMEM;
    int32_t *fill = sw_calloc((size_t)nt + 1, sizeof *fill); /* per storage: tensors placed */
    if (!fill)
        return SW_ENOMEM;
    for (int32_t t = 0; t < nt; t++)
        e->graph.on_storage[e->graph.on_storage_off[stor(e, t)] + fill[stor(e, t)]++] = t;
    sw_free(fill);
    return 0;
}

/* The storage graph: an edge from each argument's storage to each output's
   (not to itself) per op, forward (fwd_*) and reverse (rev_*), in op order. */
static int build_storage_edges(eng *e)
{
    const graph_profile *g = e->g;
    int32_t nt = e->nt, no = e->no;
    int32_t *fwd_fill = NULL, *rev_fill = NULL; /* per storage: edges placed */
    for (int pass = 0; pass < 2; pass++) {
        for (int32_t o = 0; o < no; o++) {
            const graph_op *op = &g->ops[o];
            for (int32_t k = e->graph.args_off[o]; k < e->graph.args_off[o + 1]; k++)
                for (int32_t j = 0; j < op->n_out; j++) {
                    int32_t a = stor(e, e->graph.args[k]), b = stor(e, op->out[j]);
                    if (a == b)
                        continue;
                    if (pass == 0) {
                        e->graph.fwd_off[a]++;
                        e->graph.rev_off[b]++;
                    } else {
                        int32_t x = e->graph.fwd_off[a] + fwd_fill[a]++;
                        e->graph.fwd_to[x] = b;
                        e->graph.fwd_op[x] = o;
                        int32_t y = e->graph.rev_off[b] + rev_fill[b]++;
                        e->graph.rev_to[y] = a;
                        e->graph.rev_op[y] = o;
                    }
                }
        }
        if (pass == 0) {
            if (graph_counts_to_offsets(e->graph.fwd_off, nt) ||
                graph_counts_to_offsets(e->graph.rev_off, nt))
                return SW_ENOMEM;
            fwd_fill = sw_calloc((size_t)nt + 1, sizeof *fwd_fill);
            rev_fill = sw_calloc((size_t)nt + 1, sizeof *rev_fill);
            if (!fwd_fill || !rev_fill || !ALLOC(e->graph.fwd_to, e->graph.fwd_off[nt]) ||
                !ALLOC(e->graph.fwd_op, e->graph.fwd_off[nt]) ||
                !ALLOC(e->graph.rev_to, e->graph.rev_off[nt]) ||
                !ALLOC(e->graph.rev_op, e->graph.rev_off[nt])) {
                sw_free(fwd_fill);
                sw_free(rev_fill);
                return SW_ENOMEM;
            }
        }
    }
    sw_free(fwd_fill);
    sw_free(rev_fill);
    return 0;
}

/* Which storages are constants: never evicted or freed. (Deaths, the
   storages dying after each position and which storages come from the host
   are the residency runtime's: swu_init, swu_begin.) */
static void build_constants(eng *e)
{
    const graph_profile *g = e->g;
    for (int32_t s = 0; s < e->nt; s++) {
        const graph_tensor *x = &g->tensors[s];
        if (x->storage == s)
            e->graph.constant[s] = x->persistent || x->producer < 0 || x->kind == GK_INPUT;
    }
}

/* Which storages can be recomputed whenever they are needed (mutations
   make an input's old version unavailable): R = the last position a
   recomputation can happen; evictable if every use comes before it. */
static int find_evictable(eng *e)
{
    const graph_profile *g = e->g;
    int32_t nt = e->nt, no = e->no;
    /* CSR per storage: the positions that mutate it, ascending */
    int32_t *mut_off = sw_calloc((size_t)nt + 2, sizeof *mut_off), *muts = NULL;
    int32_t *R = sw_malloc(((size_t)nt + 1) * sizeof *R); /* per storage */
    int32_t *fill = sw_calloc((size_t)nt + 1, sizeof *fill); /* per storage: positions placed */
    if (!mut_off || !R || !fill) {
        sw_free(mut_off);
        sw_free(R);
        sw_free(fill);
        return SW_ENOMEM;
    }
    for (int32_t o = 0; o < no; o++)
        for (int32_t k = 0; k < g->ops[o].n_mut; k++)
            mut_off[stor(e, g->ops[o].mut[k])]++;
    graph_counts_to_offsets(mut_off, nt);
    muts = sw_malloc(((size_t)mut_off[nt] + 1) * sizeof *muts);
    if (!muts) {
        sw_free(mut_off);
        sw_free(R);
        sw_free(fill);
        return SW_ENOMEM;
    }
    for (int32_t i = 0; i < no; i++) { /* positions, ascending per storage */
        int32_t o = g->order[i];
        for (int32_t k = 0; k < g->ops[o].n_mut; k++) {
            int32_t s = stor(e, g->ops[o].mut[k]);
            muts[mut_off[s] + fill[s]++] = i;
        }
    }
    for (int32_t s = 0; s < nt; s++)
        R[s] = INT32_MIN;
    for (int32_t i = 0; i < no; i++) {
        int32_t p = g->order[i];
        const graph_op *op = &g->ops[p];
        /* re-running p recreates every missing output: none may be one the
           iteration mutates in place (nor may p mutate anything) */
        int32_t r = op->n_mut ? INT32_MIN : NEVER;
        for (int32_t k = e->graph.created_off[p]; k < e->graph.created_off[p + 1]; k++)
            if (mut_off[e->graph.created[k] + 1] > mut_off[e->graph.created[k]])
                r = INT32_MIN;
        for (int32_t k = e->graph.args_off[p]; k < e->graph.args_off[p + 1] && r != INT32_MIN;
             k++) {
            int32_t q = stor(e, e->graph.args[k]), nm = NEVER;
            for (int32_t j = mut_off[q]; j < mut_off[q + 1]; j++)
                if (muts[j] > i) {
                    nm = muts[j];
                    break;
                }
            int32_t avail = e->graph.constant[q] ? nm : SW_MIN(nm, SW_MAX(e->u.death[q], R[q]));
            r = SW_MIN(r, avail);
        }
        for (int32_t k = e->graph.created_off[p]; k < e->graph.created_off[p + 1]; k++) {
            int32_t s = e->graph.created[k];
            R[s] = e->graph.constant[s] || mut_off[s + 1] > mut_off[s] ? INT32_MIN : r;
            e->graph.evictable[s] = !e->graph.constant[s] && R[s] >= e->u.death[s];
        }
    }
    sw_free(mut_off);
    sw_free(muts);
    sw_free(R);
    sw_free(fill);
    return 0;
}

/* The runtime before the first op: an empty pool, nothing evicted or dead
   yet, the persistent tensors defined. */
static void init_state(eng *e)
{
    const graph_profile *g = e->g;
    e->pool.head = e->pool.tail = -1;
    for (int32_t s = 0; s < e->nt; s++) {
        e->score.eq_node[s] = -1;
        e->state.death_event[s] = -1;
        e->score.compute_op[s] = -1;
        e->state.last_access[s] = 0;
    }
    for (int32_t t = 0; t < e->nt; t++)
        if (g->tensors[stor(e, t)].persistent && !e->graph.is_view[t])
            e->state.defined[t] = 1;
}

/* Everything the run reads but never changes, then the initial state. */
int eng_setup(eng *e)
{
    const graph_profile *g = e->g;
    e->nt = g->n_tensors;
    e->no = g->n_ops;
    int rc = alloc_arrays(e);
    if (!rc)
        rc = swu_init(&e->u, g, NULL); /* the schedule, deaths, residency */
    if (!rc)
        rc = build_op_tables(e);
    if (!rc)
        rc = build_storage_tensors(e);
    if (!rc)
        rc = build_storage_edges(e);
    if (!rc)
        build_constants(e);
    if (!rc)
        rc = find_evictable(e);
    if (!rc)
        init_state(e);
    return rc;
}

void eng_free(eng *e)
{
    void *ptrs[] = {e->graph.ticks,
                    e->graph.args_off,
                    e->graph.args,
                    e->graph.created_off,
                    e->graph.created,
                    e->graph.created_bytes,
                    e->graph.on_storage_off,
                    e->graph.on_storage,
                    e->graph.fwd_off,
                    e->graph.fwd_to,
                    e->graph.fwd_op,
                    e->graph.rev_off,
                    e->graph.rev_to,
                    e->graph.rev_op,
                    e->graph.constant,
                    e->graph.evictable,
                    e->graph.is_view,
                    e->state.defined,
                    e->state.pinned,
                    e->state.ran,
                    e->state.dead,
                    e->state.banished,
                    e->state.no_evict,
                    e->score.fwd_dirty,
                    e->score.rev_dirty,
                    e->pool.in,
                    e->state.locks,
                    e->pool.prev,
                    e->pool.next,
                    e->state.last_access,
                    e->score.compute_ns,
                    e->score.fwd_region_ns,
                    e->score.rev_region_ns,
                    e->score.eq_node,
                    e->state.n_remat,
                    e->state.death_event,
                    e->score.compute_op,
                    e->uf.parent,
                    e->uf.cost,
                    e->uf.mark,
                    e->walk.stack,
                    e->walk.visited,
                    e->walk.frames,
                    e->walk.arg_missing,
                    e->log.events,
                    e->alloc.place};
    for (size_t i = 0; i < SW_ARRAY_LEN(ptrs); i++)
        sw_free(ptrs[i]);
    if (e->score.rng)
        gsl_rng_free(e->score.rng);
    swu_free(&e->u);
}
