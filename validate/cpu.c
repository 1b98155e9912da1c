/* cpu.c: the CPU replay backend: three threads are the three streams, an
   event is a completion counter under one mutex with a condition variable,
   one block of host memory is the "device" arena and another the host
   buffers. Copies are memcpy in chunks paced to the plan's PCIe rates (the
   one-way rate while the other direction is idle, its share of the duplex
   rate while both copy, as the simulator models it); an operator checks
   and writes its canaries (canary pass only) and then waits out its
   profiled time on the clock. Every duration is stretched by a time scale
   chosen so that memcpy and canary work fit inside the modelled times on
   this machine; measured times are divided by it. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "../common/sw.h"
#include "canary.h"
#include "replay.h"

enum { IT_WAIT, IT_RECORD, IT_COPY, IT_OP, IT_POISON, IT_MARK };

typedef struct cpu_item {
    uint8_t kind, dir;
    int32_t a;                /* event or mark slot */
    int64_t target;           /* IT_WAIT: completions needed */
    int64_t dev_off, host_off, bytes;
    int32_t task, op, iter, n_reg;
    double time_s;
    val_region *reg;          /* IT_OP: owned */
} cpu_item;

#define BLOCK_ITEMS 256
typedef struct cpu_block {
    struct cpu_block *next;
    int n;
    cpu_item it[BLOCK_ITEMS];
} cpu_block;

typedef struct cpu_queue {
    cpu_block *head, *tail;
    int head_i; /* next item to take in head */
} cpu_queue;

struct val_backend;
typedef struct cpu_stream {
    struct val_backend *b;
    int s;
    pthread_t th;
    int started;
    /* written by the stream's own thread, read after sync */
    int64_t checks, overruns, timed;
    double end_word_s; /* estimated cost of one word of end-of-op work (sampled checks, poison) */
    double wake_late;  /* learnt lateness of a timed sleep */
} cpu_stream;

struct val_backend {
    val_backend_cfg cfg;
    unsigned char *arena, *host;
    double scale;
    double rate_alone[2], rate_both[2];
    pthread_mutex_t mu;
    pthread_cond_t cv_work[3], cv_ev, cv_idle;
    cpu_queue q[3];
    int64_t pending; /* items enqueued and not finished */
    int quit;
    int64_t *ev_rec;  /* enqueued records per event (enqueuing thread only) */
    int64_t *ev_done; /* executed records per event (under mu) */
    double *marks;
    atomic_int xfer[2]; /* a copy in that direction is transferring */
    cpu_stream st[3];
    int64_t failures;   /* under mu */
    int32_t n_fail;
    val_fail fail[VAL_MAX_FAILS];
    char name[96];
};

/* ---- time ---- */

static void sleep_until(double t)
{
    struct timespec ts;
    ts.tv_sec = (time_t)t;
    ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
}

/* Wait until monotonic time t. Mode 0 sleeps until the thread's learnt
   wake-up lateness before t (timers on a virtual machine wake some 50 us
   late even with 1 ns of slack), then spins the rest: accurate, and
   spinning only microseconds keeps three threads from fighting over two
   cores. Mode 1 spins, mode 2 sleeps. */
static void wait_until(double t, int mode, double *late)
{
    double now = sw_now();
    if (now >= t)
        return;
    if (mode == 2) {
        sleep_until(t);
        return;
    }
    if (mode == 0 && t - now > *late + 20e-6) {
        double target = t - *late;
        sleep_until(target);
        double o = sw_now() - target;
        *late = SW_MIN(0.9 * *late + 0.1 * o, 1e-3);
    }
    while (sw_now() < t)
        ; /* spin */
}

/* ---- queue ---- */

static int push_item(val_backend *b, int s, const cpu_item *x)
{
    pthread_mutex_lock(&b->mu);
    cpu_queue *q = &b->q[s];
    if (!q->tail || q->tail->n == BLOCK_ITEMS) {
        cpu_block *nb = sw_malloc(sizeof *nb);
        if (!nb) {
            pthread_mutex_unlock(&b->mu);
            return SW_ENOMEM;
        }
        nb->next = NULL;
        nb->n = 0;
        if (q->tail)
            q->tail->next = nb;
        else {
            q->head = nb;
            q->head_i = 0;
        }
        q->tail = nb;
    }
    q->tail->it[q->tail->n++] = *x;
    b->pending++;
    pthread_cond_signal(&b->cv_work[s]);
    pthread_mutex_unlock(&b->mu);
    return 0;
}

/* under mu: take the next item of stream s; 0 if none */
static int pop_item(val_backend *b, int s, cpu_item *out)
{
    cpu_queue *q = &b->q[s];
    while (q->head && q->head_i == q->head->n) {
        if (q->head->n < BLOCK_ITEMS)
            return 0; /* the tail block, drained */
        cpu_block *nx = q->head->next;
        if (!nx)
            return 0;
        sw_free(q->head);
        q->head = nx;
        q->head_i = 0;
    }
    if (!q->head)
        return 0;
    *out = q->head->it[q->head_i++];
    return 1;
}

/* ---- work ---- */

static void record_fail(val_backend *b, const cpu_item *x, const val_region *r, int where,
                        int64_t word, uint64_t expected, uint64_t found)
{
    pthread_mutex_lock(&b->mu);
    b->failures++;
    if (b->n_fail < VAL_MAX_FAILS) {
        val_fail *f = &b->fail[b->n_fail++];
        f->task = x->task;
        f->op = x->op;
        f->iter = x->iter;
        f->tensor = r->tensor;
        f->where = where;
        f->word = word;
        f->expected = expected;
        f->found = found;
    }
    pthread_mutex_unlock(&b->mu);
}

/* An op: full checks of what it reads and fills of what it writes, then
   wait; the sampled end checks and the poisoning of what it releases are
   scheduled to finish at the op's modelled end (their cost per word is
   learnt as the replay goes), so they do not lengthen it. */
static void do_op(val_backend *b, cpu_stream *cs, const cpu_item *x)
{
    double t0 = sw_now(), end = t0 + x->time_s * b->scale;
    int64_t stride = b->cfg.sample_words;
    uint64_t found;
    int64_t bad, end_words = 0;
    if (b->cfg.canaries) {
        for (int32_t i = 0; i < x->n_reg; i++) {
            const val_region *r = &x->reg[i];
            unsigned char *p = b->arena + r->off;
            if (r->mode & VAL_R_CHECK) {
                cs->checks++;
                if ((bad = val_canary_check(p, r->bytes, r->key_in, 1, &found)) >= 0)
                    record_fail(b, x, r, 0, bad, r->key_in, found);
            }
            if (r->mode & VAL_R_FILL)
                val_canary_fill(p, r->bytes, r->key_out);
            end_words += (r->bytes / 8 / stride + 2) *
                         (((r->mode & (VAL_R_CHECK | VAL_R_FILL)) != 0) + ((r->mode & VAL_R_RELEASE) != 0));
        }
    }
    int late = sw_now() > end;
    if (end_words) {
        wait_until(end - (double)end_words * cs->end_word_s, b->cfg.wait_mode, &cs->wake_late);
        double e0 = sw_now();
        for (int32_t i = 0; i < x->n_reg; i++) {
            const val_region *r = &x->reg[i];
            if (!(r->mode & (VAL_R_CHECK | VAL_R_FILL)))
                continue;
            uint64_t key = (r->mode & VAL_R_FILL) ? r->key_out : r->key_in;
            cs->checks++;
            if ((bad = val_canary_check(b->arena + r->off, r->bytes, key, stride, &found)) >= 0)
                record_fail(b, x, r, 1, bad, key, found);
        }
        for (int32_t i = 0; i < x->n_reg; i++)
            if (x->reg[i].mode & VAL_R_RELEASE)
                val_canary_poison(b->arena + x->reg[i].off, x->reg[i].bytes, stride);
        double per = (sw_now() - e0) / (double)end_words;
        cs->end_word_s = 0.7 * cs->end_word_s + 0.3 * per;
    }
    wait_until(end, b->cfg.wait_mode, &cs->wake_late);
    cs->timed++;
    cs->overruns += late;
}

static void do_copy(val_backend *b, cpu_stream *cs, const cpu_item *x)
{
    int d = x->dir;
    double t0 = sw_now();
    double t = t0 + b->cfg.copy_latency_s * b->scale;
    wait_until(t, b->cfg.wait_mode, &cs->wake_late);
    unsigned char *dev = b->arena + x->dev_off, *host = b->host + x->host_off;
    unsigned char *dst = d == VAL_H2D ? dev : host;
    const unsigned char *src = d == VAL_H2D ? host : dev;
    const int64_t chunk = 256 * 1024;
    atomic_store(&b->xfer[d], 1);
    int late = 0;
    for (int64_t done = 0; done < x->bytes;) {
        int64_t n = SW_MIN(chunk, x->bytes - done);
        memcpy(dst + done, src + done, (size_t)n);
        int both = atomic_load(&b->xfer[1 - d]);
        t += (double)n / (both ? b->rate_both[d] : b->rate_alone[d]) * b->scale;
        late |= sw_now() > t;
        wait_until(t, b->cfg.wait_mode, &cs->wake_late);
        done += n;
    }
    atomic_store(&b->xfer[d], 0);
    cs->timed++;
    cs->overruns += late;
}

static void run_item(val_backend *b, cpu_stream *cs, const cpu_item *x)
{
    switch (x->kind) {
    case IT_WAIT:
        pthread_mutex_lock(&b->mu);
        while (b->ev_done[x->a] < x->target && !b->quit)
            pthread_cond_wait(&b->cv_ev, &b->mu);
        pthread_mutex_unlock(&b->mu);
        break;
    case IT_RECORD:
        pthread_mutex_lock(&b->mu);
        b->ev_done[x->a]++;
        pthread_cond_broadcast(&b->cv_ev);
        pthread_mutex_unlock(&b->mu);
        break;
    case IT_COPY:
        do_copy(b, cs, x);
        break;
    case IT_OP:
        do_op(b, cs, x);
        break;
    case IT_POISON:
        if (b->cfg.canaries)
            val_canary_poison(b->arena + x->dev_off, x->bytes, b->cfg.sample_words);
        break;
    default: /* IT_MARK */
        b->marks[x->a] = sw_now();
        break;
    }
}

static void *stream_main(void *arg)
{
    cpu_stream *cs = arg;
    val_backend *b = cs->b;
    /* timer slack 1 ns: sleeps end when asked, not up to 50 us later */
    prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
    for (;;) {
        cpu_item x;
        pthread_mutex_lock(&b->mu);
        int got;
        while (!(got = pop_item(b, cs->s, &x)) && !b->quit)
            pthread_cond_wait(&b->cv_work[cs->s], &b->mu);
        int quitting = b->quit;
        pthread_mutex_unlock(&b->mu);
        if (!got)
            break;
        if (!quitting)
            run_item(b, cs, &x);
        sw_free(x.reg);
        pthread_mutex_lock(&b->mu);
        if (--b->pending == 0)
            pthread_cond_broadcast(&b->cv_idle);
        pthread_mutex_unlock(&b->mu);
    }
    return NULL;
}

/* ---- the time scale ---- */

/* Host memcpy and canary check/fill rates (bytes/s), best of two on
   32 MiB (larger than the per-core caches, as tensors are). */
static void host_rates(double *copy, double *touch)
{
    const size_t n = 32u << 20;
    unsigned char *a = sw_malloc(n), *c = sw_malloc(n);
    *copy = *touch = 4e9; /* a guess if memory is short */
    if (a && c) {
        val_canary_fill(a, (int64_t)n, 1);
        val_canary_fill(c, (int64_t)n, 1);
        double bc = 0, bk = 0, bf = 0;
        for (int r = 0; r < 2; r++) {
            double t0 = sw_now();
            memcpy(c, a, n);
            double t1 = sw_now();
            uint64_t f;
            if (val_canary_check(c, (int64_t)n, 1, 1, &f) >= 0)
                break;
            double t2 = sw_now();
            val_canary_fill(a, (int64_t)n, 1);
            double t3 = sw_now();
            bc = SW_MAX(bc, t1 > t0 ? (double)n / (t1 - t0) : 0);
            bk = SW_MAX(bk, t2 > t1 ? (double)n / (t2 - t1) : 0);
            bf = SW_MAX(bf, t3 > t2 ? (double)n / (t3 - t2) : 0);
        }
        if (bc > 0)
            *copy = bc;
        if (bk > 0 && bf > 0)
            *touch = SW_MIN(bk, bf);
    }
    sw_free(a);
    sw_free(c);
}

/* How long a thread blocked on a condition variable takes to run after
   it is signalled (median of 15 round trips): what a cross-stream wait
   costs beyond the modelled time. */
typedef struct pingpong {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int turn, rounds;
    double sent;
    double lat[16];
} pingpong;

static void *pong_main(void *arg)
{
    pingpong *pp = arg;
    pthread_mutex_lock(&pp->mu);
    for (int i = 0; i < pp->rounds; i++) {
        while (pp->turn != 1)
            pthread_cond_wait(&pp->cv, &pp->mu);
        pp->lat[i] = sw_now() - pp->sent;
        pp->turn = 0;
        pthread_cond_broadcast(&pp->cv);
    }
    pthread_mutex_unlock(&pp->mu);
    return NULL;
}

static double wake_latency(void)
{
    pingpong pp;
    memset(&pp, 0, sizeof pp);
    pp.rounds = 15;
    pthread_mutex_init(&pp.mu, NULL);
    pthread_cond_init(&pp.cv, NULL);
    pthread_t th;
    double med = 50e-6;
    if (pthread_create(&th, NULL, pong_main, &pp) == 0) {
        for (int i = 0; i < pp.rounds; i++) {
            /* let the other thread block first */
            sleep_until(sw_now() + 200e-6);
            pthread_mutex_lock(&pp.mu);
            pp.sent = sw_now();
            pp.turn = 1;
            pthread_cond_broadcast(&pp.cv);
            while (pp.turn != 0)
                pthread_cond_wait(&pp.cv, &pp.mu);
            pthread_mutex_unlock(&pp.mu);
        }
        pthread_join(th, NULL);
        double v[16];
        memcpy(v, pp.lat, sizeof v);
        for (int i = 1; i < pp.rounds; i++)
            for (int j = i; j > 0 && v[j] < v[j - 1]; j--) {
                double t = v[j];
                v[j] = v[j - 1];
                v[j - 1] = t;
            }
        med = v[pp.rounds / 2];
    }
    pthread_mutex_destroy(&pp.mu);
    pthread_cond_destroy(&pp.cv);
    return med;
}

/* Stretch time so that memcpy at the plan's PCIe rate takes at most half
   of this machine's memcpy bandwidth; the canary work of ops that cannot
   fit it into 60% of their time (tiny ops touching large tensors) adds up
   to at most 1% of an iteration; and waking threads for cross-stream waits
   (measured here) adds at most 1% even if every wait blocks; and all the
   real work of an iteration (canaries and memcpy of all three streams)
   takes at most 30% of one core, since the three threads may have to
   share one (the machine may be busy with other work). Rounded up to 0.1
   (two digits above 100). The canary work counts whether or not this
   instance checks canaries: the timed pass (without) then runs at the
   scale the canary pass needs, so its accuracy does not depend on
   whether a canary pass runs, and the two passes' times compare. */
static double choose_scale(const val_backend_cfg *c)
{
    double copy, touch;
    host_rates(&copy, &touch);
    double s = 1;
    if (c->max_copy_rate > 0)
        s = SW_MAX(s, 2 * c->max_copy_rate / copy);
    if (c->ideal_s > 0) {
        s = SW_MAX(s, c->waits_per_iter * wake_latency() / (0.01 * c->ideal_s));
        double work = c->copy_bytes / copy;
        for (int32_t i = 0; i < c->n_ops; i++)
            work += c->op_bytes[i] / touch;
        s = SW_MAX(s, work / (0.3 * c->ideal_s));
    }
    if (c->n_ops > 0 && c->ideal_s > 0) {
        /* overrun(x) = sum of max(0, work - 0.6 time x) falls as x grows, the allowance
           0.01 ideal x rises: bisect (in log scale) for where they meet */
        double lo = s, hi = s;
        for (int it = 0; it < 200; it++) {
            double over = 0;
            for (int32_t i = 0; i < c->n_ops; i++)
                over += SW_MAX(0, c->op_bytes[i] / touch - 0.6 * c->op_time[i] * hi);
            if (over <= 0.01 * c->ideal_s * hi)
                break;
            lo = hi;
            hi *= 2;
        }
        for (int it = 0; it < 40 && hi > lo * 1.001; it++) {
            double mid = sqrt(lo * hi), over = 0;
            for (int32_t i = 0; i < c->n_ops; i++)
                over += SW_MAX(0, c->op_bytes[i] / touch - 0.6 * c->op_time[i] * mid);
            if (over <= 0.01 * c->ideal_s * mid)
                hi = mid;
            else
                lo = mid;
        }
        s = hi;
    }
    double m = 1;
    while (s >= 100 * m)
        m *= 10;
    return (double)(int64_t)(s / m * 10 + 0.999) * m / 10;
}

/* ---- methods ---- */

static void cpu_close(val_backend *b);

static int cpu_open(const val_backend_cfg *cfg, val_backend **out, char *err, size_t errn)
{
    *out = NULL;
    long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGE_SIZE);
    double limit = pages > 0 && psz > 0 ? 0.5 * (double)pages * (double)psz : 8e9;
    if ((double)(cfg->arena_bytes + cfg->host_bytes) > limit) {
        snprintf(err, errn, "the plan needs %.3g GB of arena and host buffers, more than the "
                 "CPU backend allows here (%.3g GB, half the machine's memory)",
                 (double)(cfg->arena_bytes + cfg->host_bytes) / 1e9, limit / 1e9);
        return SW_EUNSUPPORTED;
    }
    val_backend *b = sw_calloc(1, sizeof *b);
    if (!b) {
        snprintf(err, errn, "out of memory");
        return SW_ENOMEM;
    }
    b->cfg = *cfg;
    if (b->cfg.sample_words < 1)
        b->cfg.sample_words = 64;
    b->rate_alone[VAL_H2D] = cfg->h2d_alone;
    b->rate_alone[VAL_D2H] = cfg->d2h_alone;
    b->rate_both[VAL_H2D] = cfg->h2d_both;
    b->rate_both[VAL_D2H] = cfg->d2h_both;
    atomic_init(&b->xfer[0], 0);
    atomic_init(&b->xfer[1], 0);
    pthread_mutex_init(&b->mu, NULL);
    for (int s = 0; s < 3; s++)
        pthread_cond_init(&b->cv_work[s], NULL);
    pthread_cond_init(&b->cv_ev, NULL);
    pthread_cond_init(&b->cv_idle, NULL);
    b->arena = sw_malloc((size_t)cfg->arena_bytes);
    b->host = sw_calloc((size_t)cfg->host_bytes, 1);
    b->ev_rec = sw_calloc((size_t)cfg->n_events + 1, sizeof *b->ev_rec);
    b->ev_done = sw_calloc((size_t)cfg->n_events + 1, sizeof *b->ev_done);
    b->marks = sw_calloc((size_t)cfg->n_marks + 1, sizeof *b->marks);
    if (!b->arena || !b->host || !b->ev_rec || !b->ev_done || !b->marks) {
        cpu_close(b);
        snprintf(err, errn, "out of memory for a %lld-byte arena",
                 (long long)cfg->arena_bytes);
        return SW_ENOMEM;
    }
    if (!(cfg->h2d_alone > 0 && cfg->d2h_alone > 0 && cfg->h2d_both > 0 && cfg->d2h_both > 0)) {
        cpu_close(b);
        snprintf(err, errn, "the device's copy rates must be positive");
        return SW_EUNSUPPORTED;
    }
    b->scale = cfg->time_scale > 0 ? cfg->time_scale : choose_scale(cfg);
    snprintf(b->name, sizeof b->name, "CPU threads (time x%g)", b->scale);
    for (int s = 0; s < 3; s++) {
        b->st[s].b = b;
        b->st[s].s = s;
        b->st[s].end_word_s = 50e-9;
        b->st[s].wake_late = 60e-6;
        if (pthread_create(&b->st[s].th, NULL, stream_main, &b->st[s]) != 0) {
            cpu_close(b);
            snprintf(err, errn, "cannot start a stream thread");
            return SW_EUNSUPPORTED;
        }
        b->st[s].started = 1;
    }
    *out = b;
    return 0;
}

static void cpu_close(val_backend *b)
{
    if (!b)
        return;
    pthread_mutex_lock(&b->mu);
    b->quit = 1;
    for (int s = 0; s < 3; s++)
        pthread_cond_broadcast(&b->cv_work[s]);
    pthread_cond_broadcast(&b->cv_ev);
    pthread_mutex_unlock(&b->mu);
    for (int s = 0; s < 3; s++)
        if (b->st[s].started)
            pthread_join(b->st[s].th, NULL);
    for (int s = 0; s < 3; s++) {
        cpu_item x;
        while (pop_item(b, s, &x))
            sw_free(x.reg);
        cpu_block *k = b->q[s].head;
        while (k) {
            cpu_block *nx = k->next;
            sw_free(k);
            k = nx;
        }
    }
    pthread_mutex_destroy(&b->mu);
    for (int s = 0; s < 3; s++)
        pthread_cond_destroy(&b->cv_work[s]);
    pthread_cond_destroy(&b->cv_ev);
    pthread_cond_destroy(&b->cv_idle);
    sw_free(b->arena);
    sw_free(b->host);
    sw_free(b->ev_rec);
    sw_free(b->ev_done);
    sw_free(b->marks);
    sw_free(b);
}

static const char *cpu_device_name(val_backend *b) { return b->name; }
static double cpu_time_scale(val_backend *b) { return b->scale; }

static int in_range(int64_t off, int64_t bytes, int64_t size)
{
    return off >= 0 && bytes >= 0 && off + bytes <= size;
}

static int cpu_init_fill(val_backend *b, int where, int64_t off, int64_t bytes, uint64_t key)
{
    unsigned char *base = where == VAL_DEVICE ? b->arena : b->host;
    if (!in_range(off, bytes, where == VAL_DEVICE ? b->cfg.arena_bytes : b->cfg.host_bytes))
        return SW_EINVAL;
    val_canary_fill(base + off, bytes, key);
    return 0;
}

static int cpu_wait_event(val_backend *b, int stream, int32_t ev)
{
    if (ev < 0 || ev >= b->cfg.n_events)
        return SW_EINVAL;
    if (b->ev_rec[ev] == 0)
        return 0; /* never recorded: nothing to wait for (as in CUDA) */
    cpu_item x = {.kind = IT_WAIT, .a = ev, .target = b->ev_rec[ev]};
    return push_item(b, stream, &x);
}

static int cpu_record_event(val_backend *b, int stream, int32_t ev)
{
    if (ev < 0 || ev >= b->cfg.n_events)
        return SW_EINVAL;
    b->ev_rec[ev]++;
    cpu_item x = {.kind = IT_RECORD, .a = ev};
    return push_item(b, stream, &x);
}

static int cpu_copy(val_backend *b, int stream, int dir, int64_t dev_off, int64_t host_off,
                    int64_t bytes)
{
    if (!in_range(dev_off, bytes, b->cfg.arena_bytes) ||
        !in_range(host_off, bytes, b->cfg.host_bytes) || (dir != VAL_H2D && dir != VAL_D2H))
        return SW_EINVAL;
    cpu_item x = {.kind = IT_COPY, .dir = (uint8_t)dir, .dev_off = dev_off, .host_off = host_off,
                  .bytes = bytes};
    return push_item(b, stream, &x);
}

static int cpu_run_op(val_backend *b, int stream, const val_op_work *w)
{
    for (int32_t i = 0; i < w->n_region; i++)
        if (!in_range(w->region[i].off, w->region[i].bytes, b->cfg.arena_bytes))
            return SW_EINVAL;
    cpu_item x = {.kind = IT_OP, .task = w->task, .op = w->op, .iter = w->iter,
                  .n_reg = w->n_region, .time_s = w->time_s};
    if (w->n_region > 0) {
        x.reg = sw_malloc((size_t)w->n_region * sizeof *x.reg);
        if (!x.reg)
            return SW_ENOMEM;
        memcpy(x.reg, w->region, (size_t)w->n_region * sizeof *x.reg);
    }
    int rc = push_item(b, stream, &x);
    if (rc)
        sw_free(x.reg);
    return rc;
}

static int cpu_poison(val_backend *b, int stream, int64_t off, int64_t bytes)
{
    if (!in_range(off, bytes, b->cfg.arena_bytes))
        return SW_EINVAL;
    cpu_item x = {.kind = IT_POISON, .dev_off = off, .bytes = bytes};
    return push_item(b, stream, &x);
}

static int cpu_mark(val_backend *b, int stream, int32_t slot)
{
    if (slot < 0 || slot >= b->cfg.n_marks)
        return SW_EINVAL;
    cpu_item x = {.kind = IT_MARK, .a = slot};
    return push_item(b, stream, &x);
}

static int cpu_sync(val_backend *b, char *err, size_t errn)
{
    (void)err;
    (void)errn;
    pthread_mutex_lock(&b->mu);
    while (b->pending > 0 && !b->quit)
        pthread_cond_wait(&b->cv_idle, &b->mu);
    pthread_mutex_unlock(&b->mu);
    return 0;
}

static int cpu_mark_times(val_backend *b, double *t, int32_t n)
{
    if (n > b->cfg.n_marks)
        return SW_EINVAL;
    memcpy(t, b->marks, (size_t)n * sizeof *t);
    return 0;
}

static int cpu_report(val_backend *b, val_canary_report *r)
{
    memset(r, 0, sizeof *r);
    pthread_mutex_lock(&b->mu);
    r->failures = b->failures;
    r->n_fail = b->n_fail;
    memcpy(r->fail, b->fail, sizeof r->fail);
    for (int s = 0; s < 3; s++) {
        r->checks += b->st[s].checks;
        r->overruns += b->st[s].overruns;
        r->timed += b->st[s].timed;
    }
    pthread_mutex_unlock(&b->mu);
    return 0;
}

const val_backend_methods val_cpu_backend = {
    VAL_ABI_VERSION, "cpu", cpu_open, cpu_close, cpu_device_name, cpu_time_scale,
    cpu_init_fill, cpu_wait_event, cpu_record_event, cpu_copy, cpu_run_op, cpu_poison,
    cpu_mark, cpu_sync, cpu_mark_times, cpu_report, NULL};
