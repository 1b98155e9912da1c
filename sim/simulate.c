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

/* A task as its stream's head sees it: the stream's tasks are packed in
   issue order, with their dependency lists in per-stream arrays, so the
   run walks each stream's data front to back. */
typedef struct sim_qt {
    double dur;            /* compute time, or copy latency (s) */
    double bytes;          /* copy bytes (0 for compute and drops) */
    int64_t alloc;         /* bytes placed when it starts */
    int64_t freeb;         /* bytes freed when it finishes */
    int32_t t;             /* the task */
    int32_t d0, d1;        /* its tasks of the same iteration: qdep[stream][d0..d1) */
    int32_t p0, p1;        /* of the previous iteration: qpdep[stream][p0..p1) */
} sim_qt;

struct sim_prog {
    int32_t n;             /* tasks per iteration (the plan's) */
    uint8_t *kind;         /* per task: its TASK_* kind */
    sim_qt *q[STREAM__COUNT];   /* per stream: its tasks in issue order */
    int32_t *qdep[STREAM__COUNT], *qpdep[STREAM__COUNT]; /* per stream: the dependency
                              lists of its tasks, in issue order (task ids) */
    int32_t n_sq[STREAM__COUNT];/* per stream: how many tasks */
    int32_t n_qdep[STREAM__COUNT], n_qpdep[STREAM__COUNT]; /* per stream: list lengths */
    int32_t last_compute;  /* the iteration's last compute task: its end ends the iteration */
    double rate_alone[2], rate_both[2]; /* copy rates (bytes/s), one direction alone or both
                                           at once: [0] h2d, [1] d2h */
    int64_t base_mem;      /* bytes in use at the start: resident tensors + workspace reserve */
    int64_t reserved;      /* bytes the memory model reserves: workspace reserve + the pool's
                              capacity, or the highest placed byte */
    int64_t batch;         /* samples per iteration */
    double ideal;          /* the profile's compute time (s) */
    /* per-iteration constants */
    int64_t swap_in_bytes, swap_out_bytes; /* bytes copied each way */
    int32_t swap_ins, swap_outs, drops, reruns; /* tasks of each kind */
    double recompute;      /* compute time of the reruns (s) */
    /* construction (sim_prog_begin .. sim_prog_end) */
    const graph_profile *g;/* the profile the tasks refer to */
    const double *op_time; /* per op: its compute time (borrowed), or NULL: the profile's */
    double copy_latency;   /* the device's per-copy latency (s) */
    int32_t n_added;       /* tasks added so far */
    size_t cap_n;          /* capacity of kind and of each stream's q */
    size_t cap_qdep[STREAM__COUNT], cap_qpdep[STREAM__COUNT]; /* capacities of the lists */
};

void sim_prog_free(sim_prog *s)
{
    if (!s)
        return;
    sw_free(s->kind);
    for (int i = 0; i < STREAM__COUNT; i++) {
        sw_free(s->q[i]);
        sw_free(s->qdep[i]);
        sw_free(s->qpdep[i]);
    }
    sw_free(s);
}

int32_t sim_prog_tasks(const sim_prog *s) { return s->n; }

sim_prog *sim_prog_new(void) { return sw_calloc(1, sizeof(sim_prog)); }

/* grow the per-task arrays to hold n tasks (kept across programs) */
static int prog_reserve_tasks(sim_prog *s, size_t n)
{
    if (n <= s->cap_n)
        return 0;
    size_t c = s->cap_n ? s->cap_n : 64;
    while (c < n)
        c *= 2;
    uint8_t *k = sw_realloc(s->kind, c);
    s->kind = k ? k : s->kind;
    int ok = k != NULL;
    for (int i = 0; i < STREAM__COUNT; i++) {
        sim_qt *q = sw_realloc(s->q[i], c * sizeof *q);
        if (q)
            s->q[i] = q;
        ok = ok && q;
    }
    if (!ok)
        return SW_ENOMEM;
    s->cap_n = c;
    return 0;
}

static int grow_ids(int32_t **a, size_t *cap, size_t n)
{
    if (n <= *cap)
        return 0;
    size_t c = *cap ? *cap : 64;
    while (c < n)
        c *= 2;
    int32_t *x = sw_realloc(*a, c * sizeof *x);
    if (!x)
        return SW_ENOMEM;
    *a = x;
    *cap = c;
    return 0;
}

int sim_prog_begin(sim_prog *s, const graph_profile *g, const dev_spec *dev, int32_t n,
                   const double *op_time, sw_err *err)
{
    if (!dev)
        dev = &g->device;
    int rc = dev_validate(dev, err);
    if (rc)
        return rc;
    if (n < 0 || prog_reserve_tasks(s, (size_t)n + 1))
        return sw_fail(err, SW_ENOMEM, "out of memory");
    s->g = g;
    s->op_time = op_time;
    s->copy_latency = dev->copy_latency_s;
    s->n = n;
    s->n_added = 0;
    double h2d_a, d2h_a, h2d_b, d2h_b;
    dev_rates(dev, &h2d_a, &d2h_a, &h2d_b, &d2h_b);
    s->rate_alone[0] = h2d_a;
    s->rate_alone[1] = d2h_a;
    s->rate_both[0] = h2d_b;
    s->rate_both[1] = d2h_b;
    s->last_compute = -1;
    for (int i = 0; i < STREAM__COUNT; i++)
        s->n_sq[i] = s->n_qdep[i] = s->n_qpdep[i] = 0;
    s->swap_in_bytes = s->swap_out_bytes = 0;
    s->swap_ins = s->swap_outs = s->drops = s->reruns = 0;
    s->recompute = 0;
    return 0;
}

/* Task t (kind, x) at the end of stream st's queue, without its dependency
   lists (d0, p0 at the lists' ends). */
static inline sim_qt *prog_put(sim_prog *s, int st, int32_t t, int kind, int32_t x,
                               int64_t alloc, int64_t freeb)
{
    const graph_profile *g = s->g;
    s->kind[t] = (uint8_t)kind;
    sim_qt *q = &s->q[st][s->n_sq[st]++];
    q->t = t;
    q->alloc = alloc;
    q->freeb = freeb;
    switch (kind) {
    case TASK_RUN:
        q->dur = s->op_time ? s->op_time[x] : g->ops[x].time_s;
        q->bytes = 0;
        s->last_compute = t;
        break;
    case TASK_RERUN:
        q->dur = s->op_time ? s->op_time[x] : g->ops[x].time_s;
        q->bytes = 0;
        s->reruns++;
        s->recompute += q->dur;
        s->last_compute = t;
        break;
    case TASK_SWAP_IN:
        q->dur = s->copy_latency;
        q->bytes = (double)g->bytes[x];
        s->swap_ins++;
        s->swap_in_bytes += g->bytes[x];
        break;
    case TASK_SWAP_OUT:
        q->dur = s->copy_latency;
        q->bytes = (double)g->bytes[x];
        q->freeb += g->bytes[x];
        s->swap_outs++;
        s->swap_out_bytes += g->bytes[x];
        break;
    default: /* drop */
        q->dur = 0;
        q->bytes = 0;
        q->freeb += g->bytes[x];
        s->drops++;
        break;
    }
    q->d0 = s->n_qdep[st];
    q->p0 = s->n_qpdep[st];
    return q;
}

int sim_prog_add(sim_prog *s, int kind, int32_t x, int64_t alloc, int64_t freeb,
                 const int32_t *d, int n_dep, const int32_t *pd, int n_pdep, sw_err *err)
{
    int32_t t = s->n_added, n = s->n;
    if (t >= n)
        return sw_fail(err, SW_EINVAL, "more tasks than announced (%d)", n);
    int st = plan_task_stream(kind);
    size_t nd = (size_t)s->n_qdep[st], npd = (size_t)s->n_qpdep[st];
    if ((nd + (size_t)n_dep > s->cap_qdep[st] &&
         grow_ids(&s->qdep[st], &s->cap_qdep[st], nd + (size_t)n_dep)) ||
        (npd + (size_t)n_pdep > s->cap_qpdep[st] &&
         grow_ids(&s->qpdep[st], &s->cap_qpdep[st], npd + (size_t)n_pdep)))
        return sw_fail(err, SW_ENOMEM, "out of memory");
    sim_qt *q = prog_put(s, st, t, kind, x, alloc, freeb);
    for (int k = 0; k < n_dep; k++) {
        if (d[k] < 0 || d[k] >= n)
            return sw_fail(err, SW_EINVAL, "task %d depends on task %d, which does not exist",
                           t, d[k]);
        s->qdep[st][nd++] = d[k];
    }
    for (int k = 0; k < n_pdep; k++) {
        if (pd[k] < 0 || pd[k] >= n)
            return sw_fail(err, SW_EINVAL, "task %d depends on task %d of the previous "
                           "iteration, which does not exist", t, pd[k]);
        s->qpdep[st][npd++] = pd[k];
    }
    q->d1 = (int32_t)nd;
    q->p1 = (int32_t)npd;
    s->n_qdep[st] = (int32_t)nd;
    s->n_qpdep[st] = (int32_t)npd;
    s->n_added = t + 1;
    return 0;
}

/* append task t's dependencies d[0], d[1] (-1: none) to list l (its
   length *nl) in ascending order, checked against n tasks */
static inline int put_deps(int32_t *l, int32_t *nl, const int32_t *d, int32_t t, int32_t n,
                           int prev, sw_err *err)
{
    int32_t a = d[0], b = d[1];
    if (a > b && b >= 0) {
        a = d[1];
        b = d[0];
    }
    if (a >= n || b >= n)
        return sw_fail(err, SW_EINVAL, "task %d depends on task %d%s, which does not exist", t,
                       a >= n ? a : b, prev ? " of the previous iteration" : "");
    if (a >= 0)
        l[(*nl)++] = a;
    if (b >= 0)
        l[(*nl)++] = b;
    return 0;
}

int sim_prog_add_all(sim_prog *s, const uint8_t *kind, const int32_t *x, const int64_t *alloc,
                     const int64_t *freeb, const int32_t *dep2, const int32_t *pdep2, sw_err *err)
{
    int32_t n = s->n;
    if (s->n_added)
        return sw_fail(err, SW_EINVAL, "tasks were added before sim_prog_add_all");
    for (int st = 0; st < STREAM__COUNT; st++)
        if (grow_ids(&s->qdep[st], &s->cap_qdep[st], 2 * (size_t)n + 1) ||
            grow_ids(&s->qpdep[st], &s->cap_qpdep[st], 2 * (size_t)n + 1))
            return sw_fail(err, SW_ENOMEM, "out of memory");
    for (int32_t t = 0; t < n; t++) {
        int st = plan_task_stream(kind[t]);
        sim_qt *q = prog_put(s, st, t, kind[t], x[t], alloc[t], freeb[t]);
        if (put_deps(s->qdep[st], &s->n_qdep[st], dep2 + 2 * (size_t)t, t, n, 0, err) ||
            put_deps(s->qpdep[st], &s->n_qpdep[st], pdep2 + 2 * (size_t)t, t, n, 1, err))
            return SW_EINVAL;
        q->d1 = s->n_qdep[st];
        q->p1 = s->n_qpdep[st];
    }
    s->n_added = n;
    return 0;
}

int sim_prog_end(sim_prog *s, int64_t base_mem, int64_t reserved, sw_err *err)
{
    if (s->n_added != s->n)
        return sw_fail(err, SW_EINVAL, "%d tasks announced, %d added", s->n, s->n_added);
    if (s->last_compute < 0)
        return sw_fail(err, SW_EINVAL, "the plan has no compute task");
    s->base_mem = base_mem;
    s->reserved = reserved;
    s->batch = s->g->batch;
    s->ideal = s->g->total_compute_s;
    return 0;
}

int sim_compile(const plan *p, const dev_spec *dev, sim_prog **out, sw_err *err)
{
    const graph_profile *g = p->prof;
    *out = NULL;
    sim_prog *s = sim_prog_new();
    if (!s)
        return sw_fail(err, SW_ENOMEM, "out of memory");
    int32_t n = p->n_tasks;
    int rc = sim_prog_begin(s, g, dev, n, NULL, err);
    for (int32_t t = 0; t < n && !rc; t++) {
        const plan_task *x = &p->tasks[t];
        int64_t alloc = 0, freeb = 0;
        const plan_place *pl = plan_task_places(p, x);
        for (uint32_t k = 0; k < x->n_place; k++)
            alloc += g->bytes[pl[k].tensor];
        const int32_t *fr = plan_task_frees(p, x);
        for (uint32_t k = 0; k < x->n_free; k++)
            freeb += g->bytes[fr[k]];
        int comp = x->kind == TASK_RUN || x->kind == TASK_RERUN;
        rc = sim_prog_add(s, x->kind, comp ? x->op : x->tensor, alloc, freeb,
                          plan_task_deps(p, x), (int)x->n_dep, plan_task_pdeps(p, x),
                          (int)x->n_pdep, err);
    }
    if (rc) {
        sim_prog_free(s);
        return rc;
    }
    int64_t base_mem = p->workspace_reserve;
    for (int32_t i = 0; i < p->n_resident; i++)
        base_mem += g->tensors[p->resident[i].tensor].bytes;
    int64_t reserved = p->workspace_reserve;
    if (p->mem_kind == MEM_POOL) {
        reserved += p->capacity;
    } else {
        /* address model: the highest byte any placement reaches */
        int64_t hw = 0;
        for (int32_t i = 0; i < p->n_resident; i++)
            hw = SW_MAX(hw, p->resident[i].offset + g->tensors[p->resident[i].tensor].bytes);
        for (size_t i = 0; i < p->n_places; i++)
            hw = SW_MAX(hw, p->places[i].offset + g->tensors[p->places[i].tensor].bytes);
        reserved += hw;
    }
    rc = sim_prog_end(s, base_mem, reserved, err);
    if (rc) {
        sim_prog_free(s);
        return rc;
    }
    *out = s;
    return 0;
}

typedef struct copy_state {
    int phase;      /* 0 idle, 1 latency, 2 transfer */
    int fresh;      /* entered the transfer phase; its end is not computed yet */
    double lat_end; /* when the latency phase ends (s) */
    double rem;     /* bytes to transfer (read once, when the transfer phase starts) */
    double start;   /* when the task started (s) */
    double end;     /* transfer phase: when it ends at the current rates (s) */
    int64_t freeb;  /* bytes it frees when it finishes */
    int32_t task;   /* the task on this copy engine */
    int iter;       /* its iteration */
} copy_state;

/* Bring the transfer end times up to date after copies started, finished or
   left their latency phase at time now: a copy whose rate changed (the
   other direction started or stopped transferring) keeps its remaining
   bytes; divisions happen only here, not per event. */
static inline __attribute__((always_inline)) void rerate_one(const sim_prog *s, copy_state *x,
                                                              const int c, int both,
                                                              int rated_both, double now)
{
    if (x->phase != 2)
        return;
    double r = both ? s->rate_both[c] : s->rate_alone[c];
    if (x->fresh) {
        x->end = now + x->rem / r;
        x->fresh = 0;
    } else if (both != rated_both) {
        double r0 = rated_both ? s->rate_both[c] : s->rate_alone[c];
        x->end = now + (x->end - now) * r0 / r;
    }
}

static inline void rerate(const sim_prog *s, copy_state *cp, int *rated_both, double now)
{
    int both = cp[0].phase == 2 && cp[1].phase == 2;
    rerate_one(s, &cp[0], 0, both, *rated_both, now);
    rerate_one(s, &cp[1], 1, both, *rated_both, now);
    *rated_both = both;
}

/* One sim_run in progress: the clock, each stream's position, the engines'
   current tasks, memory, and what is recorded per iteration. The phases
   below are static inline: the loop they form is the GA's inner loop. */
typedef struct run_state {
    const sim_prog *s;
    double *row[RING];          /* the rows of fin: row[k % RING] for iteration k */
    sim_trace_fn trace;         /* NULL: no trace */
    void *trace_ud;
    int tr_from, tr_to;         /* iterations traced (inclusive) */
    int max_iters;              /* iterations simulated at most (<= MAX_TRACK) */
    double *fin;                /* RING rows of n finish times (s), row k % RING for
                                   iteration k; INFINITY until the task finishes (the
                                   workspace's) */
    double *C;                  /* per iteration: when its last compute task finished (s) */
    double *stall;              /* per iteration x 3 causes: compute idle time (s) waiting on
                                   a swap-in, on memory (swap-out, drop), on anything else */
    double *busy;               /* per iteration x 2: time (s) h2d, d2h copies ran */
    int it[STREAM__COUNT];      /* per stream: the iteration of its head task */
    int elig[STREAM__COUNT];    /* per stream: its head's iteration may start (below
                                   max_iters + LEAD, within LEAD of the slowest stream's);
                                   recomputed whenever a stream moves to its next iteration */
    int32_t nx[STREAM__COUNT];  /* per stream: its head task's index in sq[] */
    const double *blk[STREAM__COUNT]; /* per stream: the finish time that blocked its head
                                   last time (in fin; re-checked first), or NULL */
    int cleared;                /* the last iteration whose fin row was reset */
    double now;                 /* simulated time (s) */
    double comp_start, comp_end;/* the running compute task's start and end (s) */
    double idle_since;          /* when the compute stream last went idle (s) */
    int comp_busy, comp_iter;   /* a compute task runs; its iteration */
    int32_t comp_task;          /* the running compute task, -1 before the first */
    int64_t comp_freeb;         /* bytes it frees when it finishes */
    copy_state cp[2];           /* the copy engines: [0] h2d, [1] d2h */
    int rated_both;             /* the transfer ends were computed at the duplex rates */
    int phases_changed;         /* a copy changed phase: rerate before time advances */
    int finished;               /* a task finished since the streams' heads were last
                                   examined: until one does, none can start (each idle
                                   stream's head waits for a task not finished) */
    int64_t mem, peak;          /* bytes in use now, and at most */
    int64_t tasks;              /* tasks started */
    int done_iters;             /* iterations whose last compute task finished */
    int converged, period;      /* steady state found, with this period (iterations) */
    double steady;              /* steady-state iteration time (s) */
} run_state;

/* The finish time of task t in iteration k >= 0 (a slot of the ring). */
static inline double *fin_at(const run_state *rs, int k, int32_t t)
{
    return rs->row[(unsigned)k % RING] + t;
}

/* Which streams' heads may start by their iteration (elig), after a
   stream moved to its next iteration (and at the start). A stream that
   becomes eligible has its iteration's row of fin reset to INFINITY now:
   it is idle (it moved on, and has not started since), and no stream
   within LEAD iterations reads the row it overwrites (LEAD + 2 back). */
static void update_eligible(run_state *rs)
{
    const sim_prog *s = rs->s;
    int min_it = rs->it[0];
    for (int st = 1; st < STREAM__COUNT; st++)
        if (rs->it[st] < min_it)
            min_it = rs->it[st];
    for (int st = 0; st < STREAM__COUNT; st++) {
        int k = rs->it[st];
        rs->elig[st] = !(k >= rs->max_iters + LEAD || k - min_it > LEAD);
        if (!rs->elig[st])
            continue;
        while (rs->cleared < k) {
            rs->cleared++;
            double *row = rs->row[(unsigned)rs->cleared % RING];
            for (int32_t i = 0; i < s->n; i++)
                row[i] = INFINITY;
        }
    }
}

/* Stream st's head task finished (or started, for a zero-time one): the
   next task becomes the head, wrapping into the next iteration. */
static inline void advance_head(run_state *rs, int st)
{
    if (++rs->nx[st] == rs->s->n_sq[st]) {
        rs->nx[st] = 0;
        rs->it[st]++;
        update_eligible(rs);
    }
}

/* Recompute the copies' transfer ends if a copy changed phase. */
static inline void update_rates(run_state *rs)
{
    if (rs->phases_changed) {
        rerate(rs->s, rs->cp, &rs->rated_both, rs->now);
        rs->phases_changed = 0;
    }
}

/* 1 if task t of iteration k has all its dependencies (this iteration's
   and the previous one's) finished by now; then *gate is the latest of
   their finish times and *gate_task its task. Else blk[st] is set to the
   finish time that blocks it. */
static inline int deps_finished(run_state *rs, int st, const sim_qt *q, int k, double *gate,
                                int32_t *gate_task)
{
    const sim_prog *s = rs->s;
    const int32_t *dep = s->qdep[st];
    for (int32_t d = q->d0; d < q->d1; d++) {
        double f = *fin_at(rs, k, dep[d]);
        if (f > rs->now) {
            rs->blk[st] = fin_at(rs, k, dep[d]);
            return 0;
        } else if (f > *gate) {
            *gate = f;
            *gate_task = dep[d];
        }
    }
    if (k > 0) {
        const int32_t *pdep = s->qpdep[st];
        for (int32_t d = q->p0; d < q->p1; d++) {
            double f = *fin_at(rs, k - 1, pdep[d]);
            if (f > rs->now) {
                rs->blk[st] = fin_at(rs, k - 1, pdep[d]);
                return 0;
            } else if (f > *gate) {
                *gate = f;
                *gate_task = pdep[d];
            }
        }
    }
    return 1;
}

/* Start compute task t of iteration k, charging the idle time since the
   last one to the cause of the dependency that gated it. */
static inline void start_compute(run_state *rs, const sim_qt *q, int k, double gate,
                                 int32_t gate_task)
{
    const sim_prog *s = rs->s;
    if (rs->now > rs->idle_since && k < rs->max_iters) {
        double w = rs->now - rs->idle_since;
        int cause = 2;
        if (gate_task >= 0 && gate >= rs->idle_since) {
            int gk = s->kind[gate_task];
            cause = gk == TASK_SWAP_IN ? 0 : (gk == TASK_SWAP_OUT || gk == TASK_DROP) ? 1 : 2;
        }
        rs->stall[(size_t)k * 3 + (size_t)cause] += w;
    }
    rs->comp_busy = 1;
    rs->comp_task = q->t;
    rs->comp_freeb = q->freeb;
    rs->comp_iter = k;
    rs->comp_start = rs->now;
    rs->comp_end = rs->now + q->dur;
}

/* Start copy (or drop) task t of iteration k on stream st; a zero-time task
   (a drop) completes at once, and then 1 is returned. */
static inline int start_copy(run_state *rs, int st, const sim_qt *q, int k, int tr)
{
    copy_state *c = &rs->cp[st - 1];
    int32_t t = q->t;
    c->task = t;
    c->iter = k;
    c->start = rs->now;
    c->rem = q->bytes;
    c->freeb = q->freeb;
    c->lat_end = rs->now + q->dur;
    c->phase = q->dur > 0 ? 1 : 2;
    c->fresh = c->phase == 2;
    /* a copy entering its latency phase changes no transfer rate (the
       rates were brought up to date before this start): rerate would do
       nothing */
    if (c->phase == 2)
        rs->phases_changed = 1;
    if (c->phase == 2 && c->rem <= 0) {
        c->phase = 0;
        *fin_at(rs, k, t) = rs->now;
        rs->mem -= c->freeb;
        if (tr && k >= rs->tr_from && k <= rs->tr_to)
            rs->trace(rs->trace_ud, k, t, st, rs->now, rs->now, rs->mem);
        advance_head(rs, st);
        return 1;
    }
    return 0;
}

/* Start stream st's head if it is idle, within LEAD iterations of the
   slowest stream, and has its dependencies finished. Returns 1 when it
   completed at once (a zero-time copy). Always inlined: st is a constant
   at each call, which settles its stream's checks at compile time. */
static inline __attribute__((always_inline)) int start_head(run_state *rs, const int st, int tr)
{
    const sim_prog *s = rs->s;
    if (st == STREAM_COMPUTE ? rs->comp_busy : rs->cp[st - 1].phase != 0)
        return 0;
    if (!rs->elig[st])
        return 0;
    int k = rs->it[st];
    if (rs->blk[st] && *rs->blk[st] > rs->now)
        return 0;
    rs->blk[st] = NULL;
    const sim_qt *q = &s->q[st][rs->nx[st]];
    double gate = -1;
    int32_t gate_task = -1;
    if (!deps_finished(rs, st, q, k, &gate, &gate_task))
        return 0;
    rs->tasks++;
    rs->mem += q->alloc;
    if (rs->mem > rs->peak)
        rs->peak = rs->mem;
    if (tr && q->alloc && k >= rs->tr_from && k <= rs->tr_to)
        /* the memory level only */
        rs->trace(rs->trace_ud, k, -1, st, rs->now, rs->now, rs->mem);
    if (st == STREAM_COMPUTE) {
        start_compute(rs, q, k, gate, gate_task);
        return 0;
    }
    return start_copy(rs, st, q, k, tr);
}

/* Start every stream head that is idle, within LEAD iterations of the
   slowest stream, and has its dependencies finished, until none can start
   (in stream order: compute, h2d, d2h). Another round is needed only after
   a task completed at once: a start alone changes no finish time, no
   stream's iteration and no other stream's state, so a round after it
   would start nothing (every stream that started is busy, and every other
   one is blocked as before). */
static inline void start_ready_tasks(run_state *rs, int tr)
{
    int again;
    do {
        start_head(rs, STREAM_COMPUTE, tr);
        again = start_head(rs, STREAM_H2D, tr);
        again |= start_head(rs, STREAM_D2H, tr);
    } while (again);
}

/* Nothing runs and nothing can start: a deadlock, described by each stream's head. */
static int report_deadlock(const run_state *rs, sw_err *err)
{
    const sim_prog *s = rs->s;
    char l[3][64];
    for (int st = 0; st < STREAM__COUNT; st++) {
        if (s->n_sq[st] == 0 || rs->it[st] >= rs->max_iters + LEAD)
            snprintf(l[st], sizeof l[st], "idle");
        else
            snprintf(l[st], sizeof l[st], "task %d of iteration %d", s->q[st][rs->nx[st]].t,
                     rs->it[st]);
    }
    return sw_fail(err, SW_EDEADLOCK, "the plan deadlocks at t=%.9g s: compute waits at "
                   "%s, h2d at %s, d2h at %s (their dependencies can never finish)", rs->now,
                   l[0], l[1], l[2]);
}

/* Advance the clock to the next event: the earliest end of the running
   compute task, a copy's latency phase or a copy's transfer. */
static inline void advance_time(run_state *rs)
{
    double tn = INFINITY;
    if (rs->comp_busy)
        tn = rs->comp_end;
    for (int c = 0; c < 2; c++) {
        if (rs->cp[c].phase == 1 && rs->cp[c].lat_end < tn)
            tn = rs->cp[c].lat_end;
        else if (rs->cp[c].phase == 2 && rs->cp[c].end < tn)
            tn = rs->cp[c].end;
    }
    rs->now = tn;
}

/* Iteration k's last compute task just finished: steady when the last 2p
   iteration times repeat with period p (p <= 4); sets converged, period and
   steady. */
static inline void detect_steady_state(run_state *rs, int k)
{
    const double *C = rs->C;
    for (int p = 1; p <= 4 && !rs->converged && k >= 2 * p && k >= 2; p++) {
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
            rs->converged = 1;
            rs->period = p;
            rs->steady = sum / p;
        }
    }
}

/* Complete the compute task if it ends now; at the end of an iteration,
   look for the steady state. Returns 1 when the simulation is over
   (steady, or max_iters iterations done): the compute stream stops there
   and the other streams finish nothing more. */
static inline int complete_compute(run_state *rs, int tr)
{
    const sim_prog *s = rs->s;
    if (!rs->comp_busy || rs->comp_end > rs->now)
        return 0;
    rs->comp_busy = 0;
    rs->finished = 1;
    *fin_at(rs, rs->comp_iter, rs->comp_task) = rs->now;
    rs->mem -= rs->comp_freeb;
    rs->idle_since = rs->now;
    if (tr && rs->comp_iter >= rs->tr_from && rs->comp_iter <= rs->tr_to)
        rs->trace(rs->trace_ud, rs->comp_iter, rs->comp_task, STREAM_COMPUTE, rs->comp_start,
                  rs->now, rs->mem);
    advance_head(rs, STREAM_COMPUTE);
    if (rs->comp_task == s->last_compute && rs->comp_iter < rs->max_iters) {
        int k = rs->comp_iter;
        rs->C[k] = rs->now;
        rs->done_iters = k + 1;
        detect_steady_state(rs, k);
        if (rs->converged || rs->done_iters >= rs->max_iters)
            return 1;
    }
    return 0;
}

/* Copies whose latency phase ends now enter the transfer phase; copies
   whose transfer ends now complete (h2d, then d2h). */
static inline __attribute__((always_inline)) void complete_copy(run_state *rs, const int c,
                                                                 int tr)
{
    copy_state *x = &rs->cp[c];
    if (x->phase == 1 && x->lat_end <= rs->now) {
        x->phase = 2;
        x->fresh = 1;
        rs->phases_changed = 1;
    }
    if (x->phase == 2 && !x->fresh && x->end <= rs->now) {
        int st = c + 1;
        x->phase = 0;
        rs->phases_changed = 1;
        rs->finished = 1;
        *fin_at(rs, x->iter, x->task) = rs->now;
        rs->mem -= x->freeb;
        if (x->iter < rs->max_iters)
            rs->busy[(size_t)x->iter * 2 + (size_t)c] += rs->now - x->start;
        if (tr && x->iter >= rs->tr_from && x->iter <= rs->tr_to)
            rs->trace(rs->trace_ud, x->iter, x->task, st, x->start, rs->now, rs->mem);
        advance_head(rs, st);
    }
}

static inline void complete_copies(run_state *rs, int tr)
{
    complete_copy(rs, 0, tr);
    complete_copy(rs, 1, tr);
}

/* The result: the steady state (or, unconverged, the mean of the last
   iterations, up to 8), and stalls and copy busy time averaged over its
   period. */
static void fill_result(run_state *rs, sim_result *r)
{
    const sim_prog *s = rs->s;
    const double *C = rs->C;
    int k = rs->done_iters - 1;
    if (!rs->converged) {
        /* average over the last iterations */
        int w = rs->done_iters >= 8 ? 8 : rs->done_iters;
        rs->period = w;
        rs->steady = (C[k] - (k - w >= 0 ? C[k - w] : 0)) / w;
    }
    int period = rs->period;
    double steady = rs->steady;
    double st3[3] = {0, 0, 0}, bz[2] = {0, 0};
    for (int j = k - period + 1; j <= k; j++) {
        for (int c = 0; c < 3; c++)
            st3[c] += rs->stall[(size_t)j * 3 + (size_t)c];
        for (int c = 0; c < 2; c++)
            bz[c] += rs->busy[(size_t)j * 2 + (size_t)c];
    }
    r->iteration_time_s = steady;
    r->ideal_time_s = s->ideal;
    r->normalized_throughput = steady > 0 ? s->ideal / steady : 1;
    r->samples_per_s = steady > 0 ? (double)s->batch / steady : 0;
    r->peak_memory_bytes = rs->peak;
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
    r->iterations = rs->done_iters;
    r->steady = rs->converged;
    r->period = period;
    r->tasks_simulated = rs->tasks;
}

/* The simulation proper. Each step: start what can start, then move to
   the next completion (ties: completions before starts, compute before h2d
   before d2h). tr: a trace is written (a flag the loop's checks test
   instead of loading the callback each time). */
static inline int run_loop(run_state *rs, int tr, sw_err *err)
{
    for (;;) {
        if (rs->finished) {
            rs->finished = 0;
            start_ready_tasks(rs, tr);
        }
        update_rates(rs);
        if (!rs->comp_busy && !rs->cp[0].phase && !rs->cp[1].phase) {
            if (!rs->converged && rs->it[STREAM_COMPUTE] < rs->max_iters)
                return report_deadlock(rs, err);
            return 0;
        }
        advance_time(rs);
        if (complete_compute(rs, tr))
            return 0;
        complete_copies(rs, tr);
        update_rates(rs);
    }
}

struct sim_ws {
    double *fin, *C, *stall, *busy; /* run_state's arrays, kept between runs */
    size_t cap_fin, cap_iters;      /* their capacities: fin doubles, iterations */
};

sim_ws *sim_ws_new(void) { return sw_calloc(1, sizeof(sim_ws)); }

void sim_ws_free(sim_ws *w)
{
    if (!w)
        return;
    sw_free(w->fin);
    sw_free(w->C);
    sw_free(w->stall);
    sw_free(w->busy);
    sw_free(w);
}

/* the workspace's arrays for fin doubles and iters iterations */
static int ws_reserve(sim_ws *w, size_t fin, size_t iters)
{
    if (fin > w->cap_fin) {
        sw_free(w->fin);
        w->fin = sw_malloc(fin * sizeof *w->fin);
        w->cap_fin = w->fin ? fin : 0;
    }
    if (iters > w->cap_iters) {
        sw_free(w->C);
        sw_free(w->stall);
        sw_free(w->busy);
        w->C = sw_malloc(iters * sizeof *w->C);
        w->stall = sw_malloc(iters * 3 * sizeof *w->stall);
        w->busy = sw_malloc(iters * 2 * sizeof *w->busy);
        w->cap_iters = w->C && w->stall && w->busy ? iters : 0;
    }
    return w->cap_fin >= fin && w->cap_iters >= iters ? 0 : SW_ENOMEM;
}

int sim_run(const sim_prog *s, const sim_opts *o, sim_result *r, sw_err *err)
{
    sim_ws w;
    memset(&w, 0, sizeof w);
    int rc = sim_run_ws(s, o, &w, r, err);
    sw_free(w.fin);
    sw_free(w.C);
    sw_free(w.stall);
    sw_free(w.busy);
    return rc;
}

int sim_run_ws(const sim_prog *s, const sim_opts *o, sim_ws *w, sim_result *r, sw_err *err)
{
    memset(r, 0, sizeof *r);
    run_state rs;
    memset(&rs, 0, sizeof rs);
    rs.s = s;
    rs.max_iters = o && o->max_iters > 0 ? o->max_iters : 64;
    if (rs.max_iters > MAX_TRACK)
        rs.max_iters = MAX_TRACK;
    size_t iters = (size_t)rs.max_iters + 1;
    if (ws_reserve(w, (size_t)RING * ((size_t)s->n + 1), iters))
        return sw_fail(err, SW_ENOMEM, "out of memory");
    rs.fin = w->fin;
    for (int i = 0; i < RING; i++)
        rs.row[i] = rs.fin + (size_t)i * (size_t)s->n;
    rs.C = w->C;
    rs.stall = w->stall;
    rs.busy = w->busy;
    memset(rs.stall, 0, iters * 3 * sizeof *rs.stall);
    memset(rs.busy, 0, iters * 2 * sizeof *rs.busy);
    rs.trace = o ? o->trace : NULL;
    rs.trace_ud = o ? o->trace_ud : NULL;
    rs.tr_from = o ? o->trace_from : 0;
    rs.tr_to = o ? o->trace_to : -1;
    rs.cleared = -1;
    rs.comp_task = -1;
    rs.mem = rs.peak = s->base_mem;
    rs.period = 1;
    for (int st = 0; st < STREAM__COUNT; st++)
        if (s->n_sq[st] == 0)
            rs.it[st] = rs.max_iters + LEAD + 1; /* never runs */
    update_eligible(&rs);
    rs.finished = 1;
    int rc = rs.trace ? run_loop(&rs, 1, err) : run_loop(&rs, 0, err);
    if (!rc)
        fill_result(&rs, r);
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
