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

int val_events_build(const plan *p, int lead, val_events *E, sw_err *err)
{
    memset(E, 0, sizeof *E);
    int32_t n = p->n_tasks;
    E->n_tasks = n;
    size_t nn = (size_t)n + 1;
    int32_t *stream_pos = sw_malloc(nn * sizeof *stream_pos);
    int32_t *prev = sw_malloc(nn * sizeof *prev);
    int32_t *indeg = sw_calloc(nn, sizeof *indeg);
    int32_t *heap = sw_malloc(nn * sizeof *heap);
    int32_t *succ_off = sw_calloc(nn + 1, sizeof *succ_off);
    int32_t *succ = NULL;
    int32_t first[STREAM__COUNT] = {-1, -1, -1}, lastt[STREAM__COUNT] = {-1, -1, -1};
    int32_t cnt[STREAM__COUNT] = {0, 0, 0};
    E->in_off = sw_calloc(nn + 1, sizeof *E->in_off);
    E->ev_base = sw_malloc(nn * sizeof *E->ev_base);
    E->ev_ring = sw_calloc(nn, sizeof *E->ev_ring);
    E->order = sw_malloc(nn * sizeof *E->order);
    char lb[160];
    int rc = 0;
    if (!stream_pos || !prev || !indeg || !heap || !succ_off || !E->in_off || !E->ev_base ||
        !E->ev_ring || !E->order) {
        rc = sw_fail(err, SW_ENOMEM, "out of memory");
        goto out;
    }
    E->last_compute = -1;
    for (int32_t t = 0; t < n; t++) {
        int st = plan_task_stream(p->tasks[t].kind);
        stream_pos[t] = cnt[st]++;
        prev[t] = lastt[st];
        if (first[st] < 0)
            first[st] = t;
        lastt[st] = t;
        if (st == STREAM_COMPUTE)
            E->last_compute = t;
    }
    if (E->last_compute < 0) {
        rc = sw_fail(err, SW_EINVAL, "the plan has no compute task");
        goto out;
    }
    /* pass 0 counts, pass 1 fills: kept edges (CSR in) and the one-iteration graph (CSR succ) */
    size_t ne = 0, ns = 0;
    for (int fill = 0; fill < 2; fill++) {
        ne = ns = 0;
        for (int32_t t = 0; t < n; t++) {
            const plan_task *x = &p->tasks[t];
            int st = plan_task_stream(x->kind);
            size_t start = ne;
            if (fill)
                E->in_off[t] = (int32_t)ne;
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
                    if (lead >= 0 && first[st] == t)
                        for (int o = 0; o < STREAM__COUNT; o++)
                            if (o != st && lastt[o] >= 0)
                                lead_src[nd++] = lastt[o];
                    d = lead_src;
                    dist = lead + 1;
                }
                for (uint32_t k = 0; k < nd; k++) {
                    int32_t u = d[k];
                    if (u < 0 || u >= n) {
                        rc = sw_fail(err, SW_EINVAL, "task %d depends on task %d%s, which does "
                                     "not exist", t, u, dist == 1 ? " of the previous iteration" : "");
                        goto out;
                    }
                    int su = plan_task_stream(p->tasks[u].kind);
                    if (dist == 0) {
                        if (fill)
                            succ[ns] = t;
                        ns++;
                        if (fill)
                            indeg[t]++;
                    }
                    /* implied by stream order: an earlier task of the same stream, or any
                       task of the same stream in an earlier iteration */
                    if (su == st && (dist > 0 || stream_pos[u] < stream_pos[t])) {
                        E->n_implied += fill && list < 2;
                        continue;
                    }
                    if (su == st)
                        continue; /* a wait on a later task of the same stream: the cycle
                                     check below reports it */
                    int dup = 0;
                    if (fill)
                        for (size_t i = start; i < ne; i++)
                            if (E->in[i].task == u && E->in[i].dist == dist)
                                dup = 1;
                    if (dup)
                        continue;
                    if (fill) {
                        E->in[ne].task = u;
                        E->in[ne].dist = dist;
                        if (dist + 1 > E->ev_ring[u])
                            E->ev_ring[u] = dist + 1;
                    }
                    ne++;
                }
            }
            if (prev[t] >= 0) {
                if (fill) {
                    succ[ns] = t;
                    indeg[t]++;
                }
                ns++;
            }
        }
        if (!fill) {
            E->in = sw_malloc((ne + 1) * sizeof *E->in);
            succ = sw_malloc((ns + 1) * sizeof *succ);
            if (!E->in || !succ) {
                rc = sw_fail(err, SW_ENOMEM, "out of memory");
                goto out;
            }
        }
    }
    E->in_off[n] = (int32_t)ne;
    E->n_edges = (int32_t)ne;
    /* succ was filled grouped by target; regroup by source for Kahn */
    {
        int32_t *src = sw_malloc((ns + 1) * sizeof *src);
        int32_t *tmp = sw_malloc((ns + 1) * sizeof *tmp);
        if (!src || !tmp) {
            sw_free(src);
            sw_free(tmp);
            rc = sw_fail(err, SW_ENOMEM, "out of memory");
            goto out;
        }
        size_t k = 0;
        for (int32_t t = 0; t < n; t++) {
            const plan_task *x = &p->tasks[t];
            const int32_t *d = plan_task_deps(p, x);
            for (uint32_t i = 0; i < x->n_dep; i++)
                src[k++] = d[i];
            if (prev[t] >= 0)
                src[k++] = prev[t];
        }
        for (size_t i = 0; i < ns; i++)
            succ_off[src[i] + 1]++;
        for (int32_t t = 0; t < n; t++)
            succ_off[t + 1] += succ_off[t];
        int32_t *fillp = sw_malloc(nn * sizeof *fillp);
        if (!fillp) {
            sw_free(src);
            sw_free(tmp);
            rc = sw_fail(err, SW_ENOMEM, "out of memory");
            goto out;
        }
        memcpy(fillp, succ_off, (size_t)n * sizeof *fillp);
        for (size_t i = 0; i < ns; i++)
            tmp[fillp[src[i]]++] = succ[i];
        memcpy(succ, tmp, ns * sizeof *succ);
        sw_free(fillp);
        sw_free(src);
        sw_free(tmp);
    }
    /* Kahn, lowest task id first, over one iteration's deps and stream order */
    int32_t done = sw_topo_order(n, succ_off, succ, indeg, heap, E->order);
    if (done < n) {
        /* walk back through unfinished predecessors until a task repeats: it is on a cycle */
        int32_t t = 0;
        while (indeg[t] == 0)
            t++;
        for (int32_t step = 0; step < n; step++) {
            const plan_task *x = &p->tasks[t];
            const int32_t *d = plan_task_deps(p, x);
            int32_t nxt = -1;
            for (uint32_t i = 0; i < x->n_dep && nxt < 0; i++)
                if (indeg[d[i]] > 0)
                    nxt = d[i];
            if (nxt < 0)
                nxt = prev[t];
            t = nxt;
        }
        rc = sw_fail(err, SW_EDEADLOCK, "the plan deadlocks: its edges and stream order form a "
                     "cycle through %s", plan_task_label(p, t, lb, sizeof lb));
        goto out;
    }
    int32_t nev = 0;
    for (int32_t t = 0; t < n; t++) {
        E->ev_base[t] = E->ev_ring[t] > 0 ? nev : -1;
        nev += E->ev_ring[t];
    }
    E->n_events = nev;
out:
    sw_free(stream_pos);
    sw_free(prev);
    sw_free(indeg);
    sw_free(heap);
    sw_free(succ_off);
    sw_free(succ);
    if (rc)
        val_events_free(E);
    return rc;
}
