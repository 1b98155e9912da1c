/* events.c: the event graph of a replay (see events.h).

   CUDA's cudaStreamWaitEvent waits for the latest record of an event
   enqueued before the wait. Iterations are enqueued one after another, so
   when task t of iteration k waits for task u of iteration k - d, records
   of u from iterations up to k may already be enqueued; giving u a ring of
   d_max + 1 events (slot = iteration mod ring) keeps the one wanted
   intact. The CPU backend implements the same semantics, so one executor
   serves both. */
#include "events.h"
#include "../common/heap.h"

#include <stdio.h>
#include <string.h>

void val_events_free(val_events *E)
{
    if (!E)
        return;
    sw_free(E->in_off);
    sw_free(E->in);
    sw_free(E->ev_base);
    sw_free(E->ev_ring);
    sw_free(E->order);
    memset(E, 0, sizeof *E);
}

/* The builder's state: per task its position in its stream and the previous
   task of its stream, the one-iteration graph (in-degrees, successors) and
   the kept edges counted (pass 0) or filled (pass 1). */
typedef struct ebuild {
    const plan *p;
    val_events *E;
    int lead;
    int32_t n;
    int32_t *stream_pos, *prev, *indeg, *heap, *succ_off, *succ;
    int32_t first[STREAM__COUNT], lastt[STREAM__COUNT];
    size_t ne, ns; /* kept edges, one-iteration edges so far */
    sw_err *err;
} ebuild;

/* Edge u -> t at iteration distance dist (list: 0 deps, 1 prev_deps, 2 the
   run-ahead bound); start: t's first kept edge. */
static int add_edge(ebuild *b, int32_t t, int32_t u, int dist, int list, int fill, size_t start)
{
    const plan *p = b->p;
    val_events *E = b->E;
    int st = plan_task_stream(p->tasks[t].kind);
    if (u < 0 || u >= b->n)
        return sw_fail(b->err, SW_EINVAL, "task %d depends on task %d%s, which does not exist",
                       t, u, dist == 1 ? " of the previous iteration" : "");
    int su = plan_task_stream(p->tasks[u].kind);
    if (dist == 0) {
        if (fill)
            b->succ[b->ns] = t;
        b->ns++;
        if (fill)
            b->indeg[t]++;
    }
    /* implied by stream order: an earlier task of the same stream, or any
       task of the same stream in an earlier iteration */
    if (su == st && (dist > 0 || b->stream_pos[u] < b->stream_pos[t])) {
        E->n_implied += fill && list < 2;
        return 0;
    }
    if (su == st)
        return 0; /* a wait on a later task of the same stream: the cycle check reports it */
    if (fill)
        for (size_t i = start; i < b->ne; i++)
            if (E->in[i].task == u && E->in[i].dist == dist)
                return 0;
    if (fill) {
        E->in[b->ne].task = u;
        E->in[b->ne].dist = dist;
        if (dist + 1 > E->ev_ring[u])
            E->ev_ring[u] = dist + 1;
    }
    b->ne++;
    return 0;
}

/* Task t's edges: its deps, its prev_deps, the run-ahead bound and its stream
   predecessor. */
static int task_edges(ebuild *b, int32_t t, int fill)
{
    const plan *p = b->p;
    const plan_task *x = &p->tasks[t];
    int st = plan_task_stream(x->kind);
    size_t start = b->ne;
    int rc;
    if (fill)
        b->E->in_off[t] = (int32_t)b->ne;
    for (int list = 0; list < 3; list++) {
        const int32_t *d;
        uint32_t nd;
        int dist;
        int32_t lead_src[STREAM__COUNT];
        if (list == 0) {
            d = plan_task_deps(p, x);
            nd = x->n_dep;
            dist = 0;
        } else if (list == 1) {
            d = plan_task_pdeps(p, x);
            nd = x->n_pdep;
            dist = 1;
        } else {
            /* run-ahead bound: a stream's first task of iteration k waits for every
               other stream's last task of iteration k - lead - 1 */
            nd = 0;
            if (b->lead >= 0 && b->first[st] == t)
                for (int o = 0; o < STREAM__COUNT; o++)
                    if (o != st && b->lastt[o] >= 0)
                        lead_src[nd++] = b->lastt[o];
            d = lead_src;
            dist = b->lead + 1;
        }
        for (uint32_t k = 0; k < nd; k++)
            if ((rc = add_edge(b, t, d[k], dist, list, fill, start)))
                return rc;
    }
    if (b->prev[t] >= 0) {
        if (fill) {
            b->succ[b->ns] = t;
            b->indeg[t]++;
        }
        b->ns++;
    }
    return 0;
}

/* succ was filled grouped by target; regroup it by source (CSR succ_off) */
static int regroup_succ(ebuild *b)
{
    const plan *p = b->p;
    int32_t n = b->n;
    size_t ns = b->ns;
    int32_t *src = sw_malloc((ns + 1) * sizeof *src);
    int32_t *tmp = sw_malloc((ns + 1) * sizeof *tmp);
    int32_t *fillp = sw_malloc(((size_t)n + 1) * sizeof *fillp);
    if (!src || !tmp || !fillp) {
        sw_free(src);
        sw_free(tmp);
        sw_free(fillp);
        return sw_fail(b->err, SW_ENOMEM, "out of memory");
    }
    size_t k = 0;
    for (int32_t t = 0; t < n; t++) {
        const plan_task *x = &p->tasks[t];
        const int32_t *d = plan_task_deps(p, x);
        for (uint32_t i = 0; i < x->n_dep; i++)
            src[k++] = d[i];
        if (b->prev[t] >= 0)
            src[k++] = b->prev[t];
    }
    for (size_t i = 0; i < ns; i++)
        b->succ_off[src[i] + 1]++;
    for (int32_t t = 0; t < n; t++)
        b->succ_off[t + 1] += b->succ_off[t];
    memcpy(fillp, b->succ_off, (size_t)n * sizeof *fillp);
    for (size_t i = 0; i < ns; i++)
        tmp[fillp[src[i]]++] = b->succ[i];
    memcpy(b->succ, tmp, ns * sizeof *b->succ);
    sw_free(fillp);
    sw_free(src);
    sw_free(tmp);
    return 0;
}

/* The deadlock left after Kahn: walk back through unfinished predecessors
   until a task repeats: it is on a cycle. */
static int report_cycle(const ebuild *b)
{
    const plan *p = b->p;
    char lb[160];
    int32_t t = 0;
    while (b->indeg[t] == 0)
        t++;
    for (int32_t step = 0; step < b->n; step++) {
        const plan_task *x = &p->tasks[t];
        const int32_t *d = plan_task_deps(p, x);
        int32_t nxt = -1;
        for (uint32_t i = 0; i < x->n_dep && nxt < 0; i++)
            if (b->indeg[d[i]] > 0)
                nxt = d[i];
        if (nxt < 0)
            nxt = b->prev[t];
        t = nxt;
    }
    return sw_fail(b->err, SW_EDEADLOCK, "the plan deadlocks: its edges and stream order form a "
                   "cycle through %s", plan_task_label(p, t, lb, sizeof lb));
}

/* Streams: each task's position and predecessor in its stream, each stream's
   first and last task, the last compute task (none is an error). */
static int stream_order(ebuild *b)
{
    int32_t cnt[STREAM__COUNT] = {0, 0, 0};
    b->E->last_compute = -1;
    for (int32_t t = 0; t < b->n; t++) {
        int st = plan_task_stream(b->p->tasks[t].kind);
        b->stream_pos[t] = cnt[st]++;
        b->prev[t] = b->lastt[st];
        if (b->first[st] < 0)
            b->first[st] = t;
        b->lastt[st] = t;
        if (st == STREAM_COMPUTE)
            b->E->last_compute = t;
    }
    if (b->E->last_compute < 0)
        return sw_fail(b->err, SW_EINVAL, "the plan has no compute task");
    return 0;
}

int val_events_build(const plan *p, int lead, val_events *E, sw_err *err)
{
    memset(E, 0, sizeof *E);
    int32_t n = p->n_tasks;
    E->n_tasks = n;
    size_t nn = (size_t)n + 1;
    ebuild b = {p, E, lead, n, NULL, NULL, NULL, NULL, NULL, NULL, {-1, -1, -1}, {-1, -1, -1},
                0, 0, err};
    b.stream_pos = sw_malloc(nn * sizeof *b.stream_pos);
    b.prev = sw_malloc(nn * sizeof *b.prev);
    b.indeg = sw_calloc(nn, sizeof *b.indeg);
    b.heap = sw_malloc(nn * sizeof *b.heap);
    b.succ_off = sw_calloc(nn + 1, sizeof *b.succ_off);
    E->in_off = sw_calloc(nn + 1, sizeof *E->in_off);
    E->ev_base = sw_malloc(nn * sizeof *E->ev_base);
    E->ev_ring = sw_calloc(nn, sizeof *E->ev_ring);
    E->order = sw_malloc(nn * sizeof *E->order);
    int rc = 0;
    if (!b.stream_pos || !b.prev || !b.indeg || !b.heap || !b.succ_off || !E->in_off ||
        !E->ev_base || !E->ev_ring || !E->order) {
        rc = sw_fail(err, SW_ENOMEM, "out of memory");
        goto out;
    }
    if ((rc = stream_order(&b)))
        goto out;
    /* pass 0 counts, pass 1 fills: kept edges (CSR in) and the one-iteration graph (CSR succ) */
    for (int fill = 0; fill < 2; fill++) {
        b.ne = b.ns = 0;
        for (int32_t t = 0; t < n; t++)
            if ((rc = task_edges(&b, t, fill)))
                goto out;
        if (!fill) {
            E->in = sw_malloc((b.ne + 1) * sizeof *E->in);
            b.succ = sw_malloc((b.ns + 1) * sizeof *b.succ);
            if (!E->in || !b.succ) {
                rc = sw_fail(err, SW_ENOMEM, "out of memory");
                goto out;
            }
        }
    }
    E->in_off[n] = (int32_t)b.ne;
    E->n_edges = (int32_t)b.ne;
    if ((rc = regroup_succ(&b)))
        goto out;
    /* Kahn, lowest task id first, over one iteration's deps and stream order */
    if (sw_topo_order(n, b.succ_off, b.succ, b.indeg, b.heap, E->order) < n) {
        rc = report_cycle(&b);
        goto out;
    }
    int32_t nev = 0;
    for (int32_t t = 0; t < n; t++) {
        E->ev_base[t] = E->ev_ring[t] > 0 ? nev : -1;
        nev += E->ev_ring[t];
    }
    E->n_events = nev;
out:
    sw_free(b.stream_pos);
    sw_free(b.prev);
    sw_free(b.indeg);
    sw_free(b.heap);
    sw_free(b.succ_off);
    sw_free(b.succ);
    if (rc)
        val_events_free(E);
    return rc;
}
