/* simulate.c: the discrete-event simulator.

   Only three streams exist, so no event heap is needed: each step starts
   whatever stream heads are ready (deps finished), then advances time to the
   earliest completion. Copies run in two phases, a fixed latency and a
   transfer whose rate depends on whether the other direction is
   transferring at the same time (PCIe duplex). Ties are deterministic:
   completions before starts, streams in the order compute, h2d, d2h.
   Finish times of recent iterations live in a ring, so iterations pipeline
   across stream boundaries exactly as edges allow. */
#include "simulate.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define RING 4   /* iterations of finish times kept */
#define LEAD 2   /* a stream may run at most this many iterations ahead */
#define MAX_TRACK 4096

struct sim_prog {
    int32_t n;
    uint8_t *kind, *stream;
    double *dur;   /* compute time, or copy latency */
    double *bytes; /* copy bytes */
    int64_t *alloc, *freeb;
    int32_t *dep_off, *dep, *pdep_off, *pdep;
    int32_t *sq[STREAM__COUNT];
    int32_t n_sq[STREAM__COUNT];
    int32_t last_compute;
    double rate_alone[2], rate_both[2]; /* [0] h2d, [1] d2h */
    int64_t base_mem, reserved;
    int64_t batch;
    double ideal;
    /* per-iteration constants */
    int64_t swap_in_bytes, swap_out_bytes;
    int32_t swap_ins, swap_outs, drops, reruns;
    double recompute;
};

void sim_prog_free(sim_prog *s)
{
    if (!s)
        return;
    sw_free(s->kind);
    sw_free(s->stream);
    sw_free(s->dur);
    sw_free(s->bytes);
    sw_free(s->alloc);
    sw_free(s->freeb);
    sw_free(s->dep_off);
    sw_free(s->dep);
    sw_free(s->pdep_off);
    sw_free(s->pdep);
    for (int i = 0; i < STREAM__COUNT; i++)
        sw_free(s->sq[i]);
    sw_free(s);
}

int32_t sim_prog_tasks(const sim_prog *s) { return s->n; }

int sim_compile(const plan *p, const dev_spec *dev, sim_prog **out, sw_err *err)
{
    const graph_profile *g = p->prof;
    if (!dev)
        dev = &g->device;
    int rc = dev_validate(dev, err);
    if (rc)
        return rc;
    *out = NULL;
    sim_prog *s = sw_calloc(1, sizeof *s);
    if (!s)
        return sw_fail(err, SW_ENOMEM, "out of memory");
    int32_t n = p->n_tasks;
    s->n = n;
    size_t nn = (size_t)n + 1;
    s->kind = sw_malloc(nn);
    s->stream = sw_malloc(nn);
    s->dur = sw_malloc(nn * sizeof(double));
    s->bytes = sw_malloc(nn * sizeof(double));
    s->alloc = sw_malloc(nn * sizeof(int64_t));
    s->freeb = sw_malloc(nn * sizeof(int64_t));
    s->dep_off = sw_malloc((nn + 1) * sizeof(int32_t));
    s->pdep_off = sw_malloc((nn + 1) * sizeof(int32_t));
    size_t nd = 0, npd = 0;
    for (int32_t t = 0; t < n; t++) {
        nd += p->tasks[t].n_dep;
        npd += p->tasks[t].n_pdep;
    }
    s->dep = sw_malloc((nd + 1) * sizeof(int32_t));
    s->pdep = sw_malloc((npd + 1) * sizeof(int32_t));
    for (int i = 0; i < STREAM__COUNT; i++)
        s->sq[i] = sw_malloc(nn * sizeof(int32_t));
    if (!s->kind || !s->stream || !s->dur || !s->bytes || !s->alloc || !s->freeb || !s->dep_off ||
        !s->pdep_off || !s->dep || !s->pdep || !s->sq[0] || !s->sq[1] || !s->sq[2]) {
        sim_prog_free(s);
        return sw_fail(err, SW_ENOMEM, "out of memory");
    }
    double h2d_a, d2h_a, h2d_b, d2h_b;
    dev_rates(dev, &h2d_a, &d2h_a, &h2d_b, &d2h_b);
    s->rate_alone[0] = h2d_a;
    s->rate_alone[1] = d2h_a;
    s->rate_both[0] = h2d_b;
    s->rate_both[1] = d2h_b;
    s->last_compute = -1;
    nd = npd = 0;
    for (int32_t t = 0; t < n; t++) {
        const plan_task *x = &p->tasks[t];
        int st = plan_task_stream(x->kind);
        s->kind[t] = x->kind;
        s->stream[t] = (uint8_t)st;
        s->sq[st][s->n_sq[st]++] = t;
        s->alloc[t] = 0;
        s->freeb[t] = 0;
        const plan_place *pl = plan_task_places(p, x);
        for (uint32_t k = 0; k < x->n_place; k++)
            s->alloc[t] += g->bytes[pl[k].tensor];
        const int32_t *fr = plan_task_frees(p, x);
        for (uint32_t k = 0; k < x->n_free; k++)
            s->freeb[t] += g->bytes[fr[k]];
        switch (x->kind) {
        case TASK_RUN:
            s->dur[t] = g->ops[x->op].time_s;
            s->bytes[t] = 0;
            s->last_compute = t;
            break;
        case TASK_RERUN:
            s->dur[t] = g->ops[x->op].time_s;
            s->bytes[t] = 0;
            s->reruns++;
            s->recompute += s->dur[t];
            s->last_compute = t;
            break;
        case TASK_SWAP_IN:
            s->dur[t] = dev->copy_latency_s;
            s->bytes[t] = (double)g->bytes[x->tensor];
            s->swap_ins++;
            s->swap_in_bytes += g->bytes[x->tensor];
            break;
        case TASK_SWAP_OUT:
            s->dur[t] = dev->copy_latency_s;
            s->bytes[t] = (double)g->bytes[x->tensor];
            s->freeb[t] += g->bytes[x->tensor];
            s->swap_outs++;
            s->swap_out_bytes += g->bytes[x->tensor];
            break;
        default: /* drop */
            s->dur[t] = 0;
            s->bytes[t] = 0;
            s->freeb[t] += g->bytes[x->tensor];
            s->drops++;
            break;
        }
        s->dep_off[t] = (int32_t)nd;
        s->pdep_off[t] = (int32_t)npd;
        const int32_t *d = plan_task_deps(p, x), *pd = plan_task_pdeps(p, x);
        for (uint32_t k = 0; k < x->n_dep; k++) {
            if (d[k] < 0 || d[k] >= n) {
                sim_prog_free(s);
                return sw_fail(err, SW_EINVAL, "task %d depends on task %d, which does not exist",
                               t, d[k]);
            }
            s->dep[nd++] = d[k];
        }
        for (uint32_t k = 0; k < x->n_pdep; k++) {
            if (pd[k] < 0 || pd[k] >= n) {
                sim_prog_free(s);
                return sw_fail(err, SW_EINVAL, "task %d depends on task %d of the previous "
                               "iteration, which does not exist", t, pd[k]);
            }
            s->pdep[npd++] = pd[k];
        }
    }
    s->dep_off[n] = (int32_t)nd;
    s->pdep_off[n] = (int32_t)npd;
    if (s->last_compute < 0) {
        sim_prog_free(s);
        return sw_fail(err, SW_EINVAL, "the plan has no compute task");
    }
    s->base_mem = p->workspace_reserve;
    for (int32_t i = 0; i < p->n_resident; i++)
        s->base_mem += g->tensors[p->resident[i].tensor].bytes;
    s->reserved = p->workspace_reserve;
    if (p->mem_kind == MEM_POOL) {
        s->reserved += p->capacity;
    } else {
        /* address model: the highest byte any placement reaches */
        int64_t hw = 0;
        for (int32_t i = 0; i < p->n_resident; i++)
            hw = SW_MAX(hw, p->resident[i].offset + g->tensors[p->resident[i].tensor].bytes);
        for (size_t i = 0; i < p->n_places; i++)
            hw = SW_MAX(hw, p->places[i].offset + g->tensors[p->places[i].tensor].bytes);
        s->reserved += hw;
    }
    s->batch = g->batch;
    s->ideal = g->total_compute_s;
    *out = s;
    return 0;
}

typedef struct copy_state {
    int phase; /* 0 idle, 1 latency, 2 transfer */
    int fresh; /* entered the transfer phase; its end is not computed yet */
    double lat_end, rem, start;
    double end; /* transfer phase: when it ends at the current rates */
    int32_t task;
    int iter;
} copy_state;

/* Bring the transfer end times up to date after copies started, finished or
   left their latency phase at time now: a copy whose rate changed (the
   other direction started or stopped transferring) keeps its remaining
   bytes; divisions happen only here, not per event. */
static void rerate(const sim_prog *s, copy_state *cp, int *rated_both, double now)
{
    int both = cp[0].phase == 2 && cp[1].phase == 2;
    for (int c = 0; c < 2; c++) {
        if (cp[c].phase != 2)
            continue;
        double r = both ? s->rate_both[c] : s->rate_alone[c];
        if (cp[c].fresh) {
            cp[c].end = now + cp[c].rem / r;
            cp[c].fresh = 0;
        } else if (both != *rated_both) {
            double r0 = *rated_both ? s->rate_both[c] : s->rate_alone[c];
            cp[c].end = now + (cp[c].end - now) * r0 / r;
        }
    }
    *rated_both = both;
}

int sim_run(const sim_prog *s, const sim_opts *o, sim_result *r, sw_err *err)
{
    memset(r, 0, sizeof *r);
    int max_iters = o && o->max_iters > 0 ? o->max_iters : 64;
    if (max_iters > MAX_TRACK)
        max_iters = MAX_TRACK;
    int32_t n = s->n;
    double *fin = sw_malloc((size_t)RING * ((size_t)n + 1) * sizeof *fin);
    double *C = sw_malloc(((size_t)max_iters + 1) * sizeof *C);
    double *stall = sw_calloc(((size_t)max_iters + 1) * 3, sizeof *stall);
    double *busy = sw_calloc(((size_t)max_iters + 1) * 2, sizeof *busy);
    if (!fin || !C || !stall || !busy) {
        sw_free(fin);
        sw_free(C);
        sw_free(stall);
        sw_free(busy);
        return sw_fail(err, SW_ENOMEM, "out of memory");
    }
    sim_trace_fn trace = o ? o->trace : NULL;
    int tr_from = o ? o->trace_from : 0, tr_to = o ? o->trace_to : -1;
    int it[STREAM__COUNT] = {0, 0, 0};
    int32_t nx[STREAM__COUNT] = {0, 0, 0};
    /* per stream: the finish time that blocked its head last time (re-checked
       first, so a blocked stream costs one load per event) */
    const double *blk[STREAM__COUNT] = {NULL, NULL, NULL};
    int cleared = -1;
    double now = 0, comp_end = 0, comp_start = 0, idle_since = 0;
    int comp_busy = 0, comp_iter = 0;
    int32_t comp_task = -1;
    copy_state cp[2];
    memset(cp, 0, sizeof cp);
    int rated_both = 0, phases_changed = 0;
    int64_t mem = s->base_mem, peak = mem;
    int64_t tasks = 0;
    int done_iters = 0, converged = 0, period = 1;
    double steady = 0;
    int rc = 0;
    for (int st = 0; st < STREAM__COUNT; st++)
        if (s->n_sq[st] == 0)
            it[st] = max_iters + LEAD + 1; /* never runs */

#define FIN(k, t) fin[(size_t)((k) % RING) * (size_t)n + (size_t)(t)]
    for (;;) {
        int progress;
        do {
            progress = 0;
            int min_it = it[0];
            for (int st = 1; st < STREAM__COUNT; st++)
                if (it[st] < min_it)
                    min_it = it[st];
            for (int st = 0; st < STREAM__COUNT; st++) {
                if (st == STREAM_COMPUTE ? comp_busy : cp[st - 1].phase != 0)
                    continue;
                int k = it[st];
                if (k >= max_iters + LEAD || k - min_it > LEAD)
                    continue;
                while (cleared < k) {
                    cleared++;
                    double *row = &FIN(cleared, 0);
                    for (int32_t i = 0; i < n; i++)
                        row[i] = INFINITY;
                }
                if (blk[st] && *blk[st] > now)
                    continue;
                blk[st] = NULL;
                int32_t t = s->sq[st][nx[st]];
                int ready = 1;
                double gate = -1;
                int32_t gate_task = -1;
                for (int32_t d = s->dep_off[t]; d < s->dep_off[t + 1] && ready; d++) {
                    double f = FIN(k, s->dep[d]);
                    if (f > now) {
                        ready = 0;
                        blk[st] = &FIN(k, s->dep[d]);
                    } else if (f > gate) {
                        gate = f;
                        gate_task = s->dep[d];
                    }
                }
                if (k > 0)
                    for (int32_t d = s->pdep_off[t]; d < s->pdep_off[t + 1] && ready; d++) {
                        double f = FIN(k - 1, s->pdep[d]);
                        if (f > now) {
                            ready = 0;
                            blk[st] = &FIN(k - 1, s->pdep[d]);
                        } else if (f > gate) {
                            gate = f;
                            gate_task = s->pdep[d];
                        }
                    }
                if (!ready)
                    continue;
                progress = 1;
                tasks++;
                mem += s->alloc[t];
                if (mem > peak)
                    peak = mem;
                if (trace && s->alloc[t] && k >= tr_from && k <= tr_to)
                    trace(o->trace_ud, k, -1, st, now, now, mem); /* memory level only */
                if (st == STREAM_COMPUTE) {
                    if (now > idle_since && k < max_iters) {
                        double w = now - idle_since;
                        int cause = 2;
                        if (gate_task >= 0 && gate >= idle_since) {
                            int gk = s->kind[gate_task];
                            cause = gk == TASK_SWAP_IN ? 0 : (gk == TASK_SWAP_OUT || gk == TASK_DROP) ? 1 : 2;
                        }
                        stall[(size_t)k * 3 + (size_t)cause] += w;
                    }
                    comp_busy = 1;
                    comp_task = t;
                    comp_iter = k;
                    comp_start = now;
                    comp_end = now + s->dur[t];
                } else {
                    copy_state *c = &cp[st - 1];
                    c->task = t;
                    c->iter = k;
                    c->start = now;
                    c->rem = s->bytes[t];
                    c->lat_end = now + s->dur[t];
                    c->phase = s->dur[t] > 0 ? 1 : 2;
                    c->fresh = c->phase == 2;
                    phases_changed = 1;
                    if (c->phase == 2 && c->rem <= 0) {
                        /* zero-time task (drop): completes at once */
                        c->phase = 0;
                        FIN(k, t) = now;
                        mem -= s->freeb[t];
                        if (trace && k >= tr_from && k <= tr_to) {
                            trace(o->trace_ud, k, t, st, now, now, mem);
                        }
                        if (++nx[st] == s->n_sq[st]) {
                            nx[st] = 0;
                            it[st]++;
                        }
                    }
                }
            }
        } while (progress);
        if (phases_changed) {
            rerate(s, cp, &rated_both, now);
            phases_changed = 0;
        }

        if (!comp_busy && !cp[0].phase && !cp[1].phase) {
            if (converged || it[STREAM_COMPUTE] >= max_iters)
                break;
            char l[3][64];
            for (int st = 0; st < STREAM__COUNT; st++) {
                if (s->n_sq[st] == 0 || it[st] >= max_iters + LEAD)
                    snprintf(l[st], sizeof l[st], "idle");
                else
                    snprintf(l[st], sizeof l[st], "task %d of iteration %d", s->sq[st][nx[st]],
                             it[st]);
            }
            rc = sw_fail(err, SW_EDEADLOCK, "the plan deadlocks at t=%.9g s: compute waits at "
                         "%s, h2d at %s, d2h at %s (their dependencies can never finish)", now,
                         l[0], l[1], l[2]);
            break;
        }
        /* next event */
        double tn = INFINITY;
        if (comp_busy)
            tn = comp_end;
        for (int c = 0; c < 2; c++) {
            if (cp[c].phase == 1 && cp[c].lat_end < tn)
                tn = cp[c].lat_end;
            else if (cp[c].phase == 2 && cp[c].end < tn)
                tn = cp[c].end;
        }
        now = tn;
        /* completions: compute first, then h2d, then d2h */
        if (comp_busy && comp_end <= now) {
            comp_busy = 0;
            FIN(comp_iter, comp_task) = now;
            mem -= s->freeb[comp_task];
            idle_since = now;
            if (trace && comp_iter >= tr_from && comp_iter <= tr_to)
                trace(o->trace_ud, comp_iter, comp_task, STREAM_COMPUTE, comp_start, now, mem);
            if (++nx[STREAM_COMPUTE] == s->n_sq[STREAM_COMPUTE]) {
                nx[STREAM_COMPUTE] = 0;
                it[STREAM_COMPUTE]++;
            }
            if (comp_task == s->last_compute && comp_iter < max_iters) {
                int k = comp_iter;
                C[k] = now;
                done_iters = k + 1;
                /* steady when the last 2p iteration times repeat with period p */
                for (int p = 1; p <= 4 && !converged && k >= 2 * p && k >= 2; p++) {
                    int ok = 1;
                    double sum = 0;
                    for (int j = k - p + 1; j <= k && ok; j++) {
                        double a = C[j] - C[j - 1];
                        double b = C[j - p] - (j - p >= 1 ? C[j - p - 1] : 0);
                        if (fabs(a - b) > 1e-9 * (fabs(a) + 1e-12))
                            ok = 0;
                        sum += a;
                    }
                    if (ok) {
                        converged = 1;
                        period = p;
                        steady = sum / p;
                    }
                }
                if (converged || done_iters >= max_iters) {
                    /* the compute stream stops here; other streams finish nothing more */
                    break;
                }
            }
        }
        for (int c = 0; c < 2; c++) {
            copy_state *x = &cp[c];
            if (x->phase == 1 && x->lat_end <= now) {
                x->phase = 2;
                x->fresh = 1;
                phases_changed = 1;
            }
            if (x->phase == 2 && !x->fresh && x->end <= now) {
                int st = c + 1;
                x->phase = 0;
                phases_changed = 1;
                FIN(x->iter, x->task) = now;
                mem -= s->freeb[x->task];
                if (x->iter < max_iters)
                    busy[(size_t)x->iter * 2 + (size_t)c] += now - x->start;
                if (trace && x->iter >= tr_from && x->iter <= tr_to)
                    trace(o->trace_ud, x->iter, x->task, st, x->start, now, mem);
                if (++nx[st] == s->n_sq[st]) {
                    nx[st] = 0;
                    it[st]++;
                }
            }
        }
        if (phases_changed) {
            rerate(s, cp, &rated_both, now);
            phases_changed = 0;
        }
    }
#undef FIN
    if (!rc) {
        int k = done_iters - 1;
        if (!converged) {
            /* average over the last iterations */
            int w = done_iters >= 8 ? 8 : done_iters;
            period = w;
            steady = (C[k] - (k - w >= 0 ? C[k - w] : 0)) / w;
        }
        double st3[3] = {0, 0, 0}, bz[2] = {0, 0};
        for (int j = k - period + 1; j <= k; j++) {
            for (int c = 0; c < 3; c++)
                st3[c] += stall[(size_t)j * 3 + (size_t)c];
            for (int c = 0; c < 2; c++)
                bz[c] += busy[(size_t)j * 2 + (size_t)c];
        }
        r->iteration_time_s = steady;
        r->ideal_time_s = s->ideal;
        r->normalized_throughput = steady > 0 ? s->ideal / steady : 1;
        r->samples_per_s = steady > 0 ? (double)s->batch / steady : 0;
        r->peak_memory_bytes = peak;
        r->reserved_bytes = s->reserved;
        r->swap_in_bytes = s->swap_in_bytes;
        r->swap_out_bytes = s->swap_out_bytes;
        r->swap_ins = s->swap_ins;
        r->swap_outs = s->swap_outs;
        r->drops = s->drops;
        r->reruns = s->reruns;
        r->recompute_time_s = s->recompute;
        r->stall_swap_in_s = st3[0] / period;
        r->stall_memory_s = st3[1] / period;
        r->stall_dependency_s = st3[2] / period;
        r->h2d_busy_s = bz[0] / period;
        r->d2h_busy_s = bz[1] / period;
        r->iterations = done_iters;
        r->steady = converged;
        r->period = period;
        r->tasks_simulated = tasks;
    }
    sw_free(fin);
    sw_free(C);
    sw_free(stall);
    sw_free(busy);
    return rc;
}

int sim_plan(const plan *p, const dev_spec *dev, const sim_opts *o, sim_result *r, sw_err *err)
{
    sim_prog *s;
    int rc = sim_compile(p, dev, &s, err);
    if (rc)
        return rc;
    rc = sim_run(s, o, r, err);
    sim_prog_free(s);
    return rc;
}
