/* colocate.c: several training jobs on one GPU under a sharing policy
   (time slicing, spatial sharing, Zico), simulated over each job's memory
   curve (docs/colocate.md). */
#include "colocate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/json.h"
#include "../planners/planner.h"
#include "../profiles/profile_io.h"
#include "../profiles/device.h"
#include "../profiles/opattr.h"
#include "../sim/plan.h"
#include "../sim/simulate.h"
#include "../sim/verify.h"

#define CO_MAX_STEPS 256 /* a curve is kept as at most this many steps (upper envelope) */
#define CO_EPS 1e-12

void co_job_free(co_job *j)
{
    if (j->fallback) {
        co_job_free(j->fallback);
        sw_free(j->fallback);
        j->fallback = NULL;
    }
    sw_free(j->at);
    sw_free(j->level);
    j->at = NULL;
    j->level = NULL;
    j->n = 0;
}

/* Keep at most CO_MAX_STEPS steps: equal slices of time, each at the
   largest level within it (an upper envelope: never less than the curve). */
static int compress(co_job *j)
{
    if (j->n <= CO_MAX_STEPS)
        return 0;
    double *at = sw_malloc((CO_MAX_STEPS + 1) * sizeof *at);
    int64_t *lv = sw_malloc(CO_MAX_STEPS * sizeof *lv);
    if (!at || !lv) {
        sw_free(at);
        sw_free(lv);
        return SW_ENOMEM;
    }
    int32_t k = 0;
    for (int32_t s = 0; s < CO_MAX_STEPS; s++) {
        double a = j->iter_s * s / CO_MAX_STEPS, b = j->iter_s * (s + 1) / CO_MAX_STEPS;
        at[s] = a;
        while (k + 1 < j->n && j->at[k + 1] <= a)
            k++;
        int64_t m = j->level[k];
        for (int32_t q = k; q < j->n && j->at[q] < b; q++)
            m = SW_MAX(m, j->level[q]);
        lv[s] = m;
    }
    at[CO_MAX_STEPS] = j->iter_s;
    sw_free(j->at);
    sw_free(j->level);
    j->at = at;
    j->level = lv;
    j->n = CO_MAX_STEPS;
    return 0;
}

int co_job_from_curve(co_job *j, const char *name, const double *at, const int64_t *level,
                      int32_t n, int64_t persistent)
{
    memset(j, 0, sizeof *j);
    snprintf(j->name, sizeof j->name, "%s", name);
    j->at = sw_malloc(((size_t)n + 1) * sizeof *j->at);
    j->level = sw_malloc(((size_t)n + 1) * sizeof *j->level);
    if (!j->at || !j->level) {
        co_job_free(j);
        return SW_ENOMEM;
    }
    memcpy(j->at, at, ((size_t)n + 1) * sizeof *at);
    memcpy(j->level, level, (size_t)n * sizeof *level);
    j->n = n;
    j->iter_s = at[n];
    j->persistent = persistent;
    j->util = 1;
    j->iterations = 1;
    return compress(j);
}

/* memory level changes of one traced period */
typedef struct tr_mem {
    double *t;
    int64_t *m;
    size_t n, cap;
    int oom;
} tr_mem;

static void on_trace(void *ud, int iter, int32_t task, int stream, double start, double end,
                     int64_t mem)
{
    /* every event is reported when it happens (end: a task's completion,
       with the level after its frees; or a level change at a start, start
       = end); a completion's start time would put the level after its
       frees back at its start, over the level its start allocated, and
       lose the peak inside the task */
    (void)iter, (void)task, (void)stream, (void)start;
    tr_mem *c = ud;
    if (c->oom)
        return;
    if (c->n == c->cap) {
        size_t nc = c->cap ? 2 * c->cap : 1024;
        double *t = sw_realloc(c->t, nc * sizeof *t);
        if (!t) {
            c->oom = 1;
            return;
        }
        c->t = t;
        int64_t *m = sw_realloc(c->m, nc * sizeof *m);
        if (!m) {
            c->oom = 1;
            return;
        }
        c->m = m;
        c->cap = nc;
    }
    c->t[c->n] = end;
    c->m[c->n] = mem;
    c->n++;
}

static double job_util(const graph_profile *g)
{
    double num = 0, den = 0;
    for (int32_t o = 0; o < g->n_ops; o++) {
        const graph_op *op = &g->ops[o];
        double fl = -1, by = -1;
        for (int32_t a = 0; a < op->n_attr; a++) {
            if (!strcmp(op->attr[a].key, OA_FLOPS))
                fl = op->attr[a].value;
            else if (!strcmp(op->attr[a].key, OA_BYTES))
                by = op->attr[a].value;
        }
        if (fl < 0 || by < 0 || op->time_s <= 0)
            continue;
        double u = SW_MAX(fl / (op->time_s * g->device.peak_flops_fp32),
                          by / (op->time_s * g->device.mem_bw));
        num += SW_MIN(u, 1.0) * op->time_s;
        den += op->time_s;
    }
    return den > 0 && num > 0 ? SW_MIN(1.0, SW_MAX(0.05, num / den)) : 1.0;
}

int co_job_from_profile(co_job *j, const char *name, const graph_profile *g,
                        const char *planner_name, int64_t budget, double time_budget_s,
                        sw_err *err)
{
    memset(j, 0, sizeof *j);
    const planner *pl = planner_find(planner_name);
    if (!pl)
        return sw_fail(err, SW_EINVAL, "job '%s': unknown planner '%s'", name, planner_name);
    planner_opts o;
    if (planner_opts_init(&o, pl))
        return sw_fail(err, SW_ENOMEM, "out of memory");
    o.memory_budget = budget > 0 ? budget : g->device.memory_bytes;
    o.seed = 1;
    o.threads = 1;
    o.time_budget_s = time_budget_s;
    plan *p = NULL;
    int rc = planner_run(pl, g, &o, &p, err);
    planner_opts_free(&o);
    if (rc) {
        sw_err_prefix(err, "job '%s': planner %s: ", name, planner_name);
        return rc;
    }
    if ((rc = plan_verify(p, NULL, err)) != 0) {
        plan_free(p);
        sw_err_prefix(err, "job '%s': the plan fails verification: ", name);
        return rc;
    }
    sim_prog *s;
    if ((rc = sim_compile(p, NULL, &s, err)) != 0) {
        plan_free(p);
        return rc;
    }
    sim_result r;
    sim_opts so = {0};
    if ((rc = sim_run(s, &so, &r, err)) != 0)
        goto out;
    tr_mem c = {0};
    so.max_iters = r.iterations;
    so.trace = on_trace;
    so.trace_ud = &c;
    so.trace_from = 0;
    so.trace_to = r.iterations;
    if ((rc = sim_run(s, &so, &r, err)) != 0 || c.oom) {
        rc = rc ? rc : sw_fail(err, SW_ENOMEM, "out of memory");
        sw_free(c.t);
        sw_free(c.m);
        goto out;
    }
    /* one steady period: the last iteration_time_s before the last event */
    double T = r.iteration_time_s, end = 0;
    for (size_t i = 0; i < c.n; i++)
        end = SW_MAX(end, c.t[i]);
    double a = end - T;
    size_t first = 0;
    int64_t at_a = c.n ? c.m[0] : 0;
    for (size_t i = 0; i < c.n && c.t[i] <= a; i++) {
        /* (of several changes at one instant, the most held, as below) */
        at_a = i && c.t[i] == c.t[i - 1] ? SW_MAX(at_a, c.m[i]) : c.m[i];
        first = i + 1;
    }
    size_t n = 1 + (c.n - first);
    double *ts = sw_malloc((n + 1) * sizeof *ts);
    int64_t *ms = sw_malloc((n + 1) * sizeof *ms);
    if (!ts || !ms) {
        sw_free(ts);
        sw_free(ms);
        sw_free(c.t);
        sw_free(c.m);
        rc = sw_fail(err, SW_ENOMEM, "out of memory");
        goto out;
    }
    size_t k = 0;
    ts[0] = 0;
    ms[0] = at_a;
    for (size_t i = first; i < c.n; i++) {
        double x = SW_MAX(0, SW_MIN(T, c.t[i] - a));
        if (x <= ts[k] + CO_EPS) /* the same instant: the most it held then (the */
            ms[k] = k || i > first ? SW_MAX(ms[k], c.m[i]) : c.m[i]; /* peak, kept) */
        else {
            k++;
            ts[k] = x;
            ms[k] = c.m[i];
        }
    }
    int32_t steps = (int32_t)k + 1;
    ts[steps] = T;
    if (steps > 1 && ts[steps - 1] >= T - CO_EPS)
        steps--; /* an event at the very end starts the next period */
    ts[steps] = T;
    int64_t pers = 0;
    for (int32_t t = 0; t < g->n_tensors; t++)
        if (g->tensors[t].storage == t && g->tensors[t].persistent)
            pers += g->bytes[t];
    rc = co_job_from_curve(j, name, ts, ms, steps, pers);
    sw_free(ts);
    sw_free(ms);
    sw_free(c.t);
    sw_free(c.m);
    if (rc) {
        rc = sw_fail(err, SW_ENOMEM, "out of memory");
        goto out;
    }
    j->util = job_util(g);
    j->pcie = r.iteration_time_s > 0
                  ? SW_MIN(1.0, SW_MAX(r.h2d_busy_s, r.d2h_busy_s) / r.iteration_time_s)
                  : 0;
out:
    sim_prog_free(s);
    plan_free(p);
    return rc;
}

/* ---- the simulation ---- */

enum { S_ARRIVING, S_READY, S_RUNNING, S_BLOCKED, S_DONE, S_FAILED };

typedef struct js {
    int state;
    int32_t k;        /* step (running or blocked) */
    double tau;       /* own progress in the iteration, s */
    int64_t mem;      /* bytes held now */
    double start_at;  /* zico: the planned start of the next iteration */
    double ready_since; /* when it became ready to start an iteration (fairness order) */
    const co_job *cv; /* the curve it runs: the job's, or its fallback after an out of memory */
    double iter_start; /* when its current iteration started */
    int planned;      /* zico: start_at is set */
} js;

static int64_t level_at(const co_job *j, double p)
{
    if (p < 0)
        return 0;
    int32_t lo = 0, hi = j->n - 1;
    while (lo < hi) {
        int32_t mid = (lo + hi + 1) / 2;
        if (j->at[mid] <= p)
            lo = mid;
        else
            hi = mid - 1;
    }
    return j->level[lo];
}

/* job i's predicted memory at time x >= now at rate r (repeating its
   iterations while it has some left) */
static int64_t predict(const co_job *j, const js *s, int done, double now, double r, double x)
{
    if (s->state == S_DONE || s->state == S_FAILED || s->state == S_ARRIVING)
        return s->mem;
    if (s->state != S_RUNNING)
        return s->mem;
    double p = s->tau + r * (x - now);
    int left = j->iterations - done;
    if (p >= j->iter_s * left)
        return 0;
    return level_at(j, fmod(p, j->iter_s));
}

/* Processor sharing of two resources, the GPU's compute and the PCIe link:
   jobs running together progress at min(1, 1 / their summed compute share,
   1 / their summed PCIe share) each. */
static double rate_of(const co_job *jobs, const js *st, int32_t n, int extra)
{
    double u = 0, p = 0;
    for (int32_t i = 0; i < n; i++)
        if (st[i].state == S_RUNNING || i == extra) {
            u += jobs[i].util;
            p += st[i].cv->pcie;
        }
    double m = SW_MAX(u, p);
    return m > 1 ? 1 / m : 1;
}

/* zico_start's scratch: room for every candidate start (allocated once per
   run, so planning allocates nothing) */
typedef struct zscratch {
    double *cand, *tmp;
    int64_t *others;
    int *run;      /* where each sorted run of candidates starts */
} zscratch;

static void zscratch_free(zscratch *z)
{
    sw_free(z->cand);
    sw_free(z->tmp);
    sw_free(z->others);
    sw_free(z->run);
}

/* sort cand[0..nc), the concatenation of nrun ascending runs starting at
   run[0..nrun), by merging neighbouring runs (the runs are each job's
   predicted steps, already in order) */
static void merge_runs(double *cand, double *tmp, int nc, int *run, int nrun)
{
    while (nrun > 1) {
        int m = 0;
        for (int j = 0; j < nrun; j += 2) {
            int lo = run[j], mid = j + 1 < nrun ? run[j + 1] : nc;
            int hi = j + 2 < nrun ? run[j + 2] : nc;
            int a = lo, b = mid, o = lo;
            while (a < mid && b < hi)
                tmp[o++] = cand[b] < cand[a] ? cand[b++] : cand[a++];
            while (a < mid)
                tmp[o++] = cand[a++];
            while (b < hi)
                tmp[o++] = cand[b++];
            memcpy(cand + lo, tmp + lo, (size_t)(hi - lo) * sizeof *cand);
            run[m++] = lo;
        }
        nrun = m;
    }
}

/* zico: the earliest s >= now at which job q can start an iteration with
   the predicted combined memory within memory over that iteration;
   INFINITY if none within the horizon */
static double zico_start(const co_job *jobs, const js *st, const int *done, int32_t n, int32_t q,
                         double now, int64_t memory, const zscratch *z)
{
    double r = rate_of(jobs, st, n, q);
    double span = st[q].cv->iter_s / r, horizon = span;
    for (int32_t i = 0; i < n; i++)
        horizon = SW_MAX(horizon, 2 * st[i].cv->iter_s / r);
    /* candidate starts: now, and every predicted step of the others (each
       job's in order) */
    double *cand = z->cand;
    int nc = 0, nrun = 0;
    z->run[nrun++] = 0;
    cand[nc++] = now;
    for (int32_t i = 0; i < n; i++) {
        if (i == q || st[i].state != S_RUNNING)
            continue;
        z->run[nrun++] = nc;
        for (int rep = 0; rep < 2; rep++)
            for (int32_t k = 0; k <= st[i].cv->n; k++) {
                double p = st[i].cv->at[k] + rep * st[i].cv->iter_s;
                if (p > st[i].tau)
                    cand[nc++] = now + (p - st[i].tau) / r;
            }
    }
    merge_runs(cand, z->tmp, nc, z->run, nrun);
    /* the others' predicted memory at each candidate (it does not depend on
       q's start) */
    int64_t *others = z->others;
    for (int c = 0; c < nc; c++) {
        if (cand[c] > now + horizon + span)
            break;
        others[c] = 0;
        for (int32_t i = 0; i < n; i++)
            if (i != q)
                others[c] += predict(st[i].cv, &st[i], done[i], now, r, cand[c]);
    }
    for (int c = 0; c < nc; c++) {
        double s = cand[c];
        if (s > now + horizon)
            break;
        int ok = 1;
        /* the combined memory changes only at q's own steps and at the
           others' predicted steps: check it there, over [s, s + span) */
        const co_job *qc = st[q].cv;
        int32_t kq = 0; /* q's step at cand[c2], which only moves forward */
        for (int c2 = c; c2 < nc && ok && cand[c2] < s + span; c2++) {
            double p = (cand[c2] - s) * r;
            while (kq + 1 < qc->n && qc->at[kq + 1] <= p)
                kq++;
            ok = qc->level[kq] + others[c2] <= memory;
        }
        for (int32_t k = 0; k < qc->n && ok; k++) {
            double x = s + qc->at[k] / r;
            int64_t tot = qc->level[k];
            for (int32_t i = 0; i < n; i++)
                if (i != q)
                    tot += predict(st[i].cv, &st[i], done[i], now, r, x);
            ok = tot <= memory;
        }
        if (ok)
            return s;
    }
    return INFINITY;
}

static int64_t curve_peak(const co_job *j)
{
    int64_t pk = 0;
    for (int32_t k = 0; k < j->n; k++)
        pk = SW_MAX(pk, j->level[k]);
    return pk;
}

void co_result_free(co_result *r)
{
    sw_free(r->spans);
    sw_free(r->jobs);
    sw_free(r->t);
    sw_free(r->bytes);
    memset(r, 0, sizeof *r);
}

static int sample(co_result *r, int32_t n, const js *st, double t, size_t *cap, int record)
{
    if (r->n_samples > 0 && (r->t[r->n_samples - 1] == t || !record))
        r->n_samples--; /* the same instant (or not recording): keep the latest state only */
    if ((size_t)r->n_samples == *cap) {
        size_t nc = *cap ? 2 * *cap : 256;
        double *tt = sw_realloc(r->t, nc * sizeof *tt);
        if (!tt)
            return SW_ENOMEM;
        r->t = tt;
        int64_t *bb = sw_realloc(r->bytes, nc * ((size_t)n + 1) * sizeof *bb);
        if (!bb)
            return SW_ENOMEM;
        r->bytes = bb;
        *cap = nc;
    }
    int64_t *row = r->bytes + (size_t)r->n_samples * ((size_t)n + 1), tot = 0;
    for (int32_t i = 0; i < n; i++) {
        row[i] = st[i].mem;
        tot += st[i].mem;
    }
    row[n] = tot;
    r->t[r->n_samples++] = t;
    r->peak_bytes = SW_MAX(r->peak_bytes, tot);
    return tot > r->memory ? SW_EINVAL : 0;
}

static int64_t total(const js *st, int32_t n)
{
    int64_t t = 0;
    for (int32_t i = 0; i < n; i++)
        t += st[i].mem;
    return t;
}

static void fail(co_result *r, js *s, int32_t i, double t, const char *why)
{
    s->state = S_FAILED;
    s->mem = 0;
    r->jobs[i].failed = 1;
    r->jobs[i].finish_s = t;
    snprintf(r->jobs[i].why, sizeof r->jobs[i].why, "%s", why);
}

/* record a span of job i (kind CO_SPAN_*) for the trace; 0 or SW_ENOMEM */
static int span(co_result *r, int32_t i, int kind, double a, double b)
{
    if (b <= a || !r->record)
        return 0;
    if ((size_t)r->n_spans == r->spans_cap) {
        size_t nc = r->spans_cap ? 2 * r->spans_cap : 64;
        co_span *ns = sw_realloc(r->spans, nc * sizeof *ns);
        if (!ns)
            return SW_ENOMEM;
        r->spans = ns;
        r->spans_cap = nc;
    }
    co_span *x = &r->spans[r->n_spans++];
    x->job = i;
    x->kind = kind;
    x->start = a;
    x->end = b;
    return 0;
}

/* job i starts an iteration at t on its current curve */
static int begin(co_result *r, js *s, int32_t i, double t)
{
    int rc = s->state == S_READY ? span(r, i, CO_SPAN_WAIT, s->ready_since, t) : 0;
    s->state = S_RUNNING;
    s->k = 0;
    s->tau = 0;
    s->mem = s->cv->level[0];
    s->iter_start = t;
    return rc;
}

/* One run: the jobs, the GPU they share, each job's state and the clock.
   The sharing policy's methods read and change it (below). */
struct co_sim {
    const co_job *jobs;
    int32_t n;
    int64_t memory;     /* bytes shared */
    double h2d, d2h;    /* copy rates for time's switches, bytes/s */
    co_result *r;
    const co_policy *pol;
    js st[64];
    int done[64];       /* iterations each job completed */
    zscratch z;         /* zico's planning scratch */
    double t;           /* now, s */
    int all_fit;        /* time: the jobs' peaks fit together (no switch copies) */
    int32_t cur, last;  /* time: the running job, the last one run (-1: none) */
    double switch_end;  /* time: when the switch under way ends */
    int32_t switch_to;  /* time: the job the switch under way starts (-1: none) */
    int rc;             /* 0, or the first failure (SW_ENOMEM, SW_EINVAL: over memory) */
};

/* spatial with a fallback (--on-oom swap): job i, out of memory, switches
   to its swapping curve and starts its iteration over (what it had done of
   it is lost). Returns 1 if it could (the fallback's first step fits
   beside the others), 0 if it fails. */
static int oom_swap(co_sim *s, int32_t i)
{
    js *st = s->st;
    const co_job *fb = s->jobs[i].fallback;
    if (!fb || st[i].cv == fb)
        return 0;
    int64_t others = total(st, s->n) - st[i].mem;
    if (others + fb->level[0] > s->memory)
        return 0;
    if (st[i].state == S_RUNNING || st[i].state == S_BLOCKED)
        s->rc |= span(s->r, i, CO_SPAN_LOST, st[i].iter_start, s->t);
    st[i].cv = fb;
    st[i].state = S_RUNNING; /* the work of this iteration so far is lost */
    s->rc |= begin(s->r, &st[i], i, s->t);
    s->r->jobs[i].fell_back = 1;
    return 1;
}

/* ---- the policies: one method table each ---- */

/* time: a switch that ended starts its job */
static void time_tick(co_sim *s)
{
    if (s->switch_to < 0 || s->t < s->switch_end - CO_EPS)
        return;
    int32_t c = s->cur = s->switch_to;
    s->switch_to = -1;
    s->rc |= span(s->r, c, CO_SPAN_SWITCH, s->switch_end - s->r->jobs[c].last_switch_s, s->t);
    s->rc |= begin(s->r, &s->st[c], c, s->t);
}

/* time: when the GPU is free, the first ready job after the last one run
   (round robin) gets it, after copying the last one's persistent memory
   out and its own in unless every job's peak fits together */
static int time_start(co_sim *s, int32_t q)
{
    int32_t n = s->n;
    const co_job *jobs = s->jobs;
    js *st = s->st;
    if (s->cur >= 0 || s->switch_to >= 0)
        return 0;
    int32_t pick = -1, last = s->last;
    for (int32_t d = 1; d <= n && pick < 0; d++) {
        int32_t c = (last + d + n) % n;
        if (st[c].state == S_READY)
            pick = c;
    }
    q = pick;
    double sw = 0;
    if (!s->all_fit && last >= 0 && last != q)
        sw = (double)jobs[last].persistent / s->d2h + (double)jobs[q].persistent / s->h2d;
    if (!s->all_fit && last >= 0 && last != q && st[last].state != S_FAILED)
        st[last].mem = 0; /* swapped out */
    s->r->jobs[q].switch_s += sw;
    s->r->jobs[q].last_switch_s = sw;
    s->last = q;
    if (sw > 0) {
        s->switch_to = q;
        s->switch_end = s->t + sw;
        st[q].mem = jobs[q].persistent; /* copied in during the switch */
        return 1;
    }
    s->cur = q;
    s->rc |= begin(s->r, &st[q], q, s->t);
    return 1;
}

/* time: the running job has the whole GPU */
static double time_rate(const co_sim *s)
{
    (void)s;
    return 1;
}

/* spatial: a job starts when its first step fits; one that does not runs
   out of memory (or falls back to its swapping curve) */
static int spatial_start(co_sim *s, int32_t q)
{
    int64_t need = s->st[q].cv->level[0] - s->st[q].mem;
    if (total(s->st, s->n) + need > s->memory) {
        if (!oom_swap(s, q))
            fail(s->r, &s->st[q], q, s->t, "out of memory at the start of an iteration");
        return 0;
    }
    s->rc |= begin(s->r, &s->st[q], q, s->t);
    return 0;
}

/* spatial: an allocation that does not fit is an out of memory */
static void spatial_no_room(co_sim *s, int32_t i)
{
    if (!oom_swap(s, i))
        fail(s->r, &s->st[i], i, s->t, "out of memory during an iteration");
}

/* zico: a job starts at the earliest time its iteration's predicted memory
   fits beside the others' */
static int zico_start_job(co_sim *s, int32_t q)
{
    js *st = s->st;
    /* planned again at every event: the prediction assumes the rates stay
       as they are, and they change (Zico refines its plan from what
       actually happened) */
    st[q].start_at = zico_start(s->jobs, st, s->done, s->n, q, s->t, s->memory, &s->z);
    st[q].planned = isfinite(st[q].start_at);
    if (!st[q].planned || st[q].start_at > s->t + CO_EPS)
        return 0;
    st[q].planned = 0;
    int64_t need = st[q].cv->level[0] - st[q].mem;
    if (total(st, s->n) + need > s->memory)
        return 0; /* the prediction was off: plan again at the next event */
    s->rc |= begin(s->r, &st[q], q, s->t);
    return 0;
}

/* zico: a ready job's planned start is an event */
static double zico_wake(const co_sim *s, int32_t i)
{
    const js *j = &s->st[i];
    return j->state == S_READY && j->planned && isfinite(j->start_at) ? j->start_at : INFINITY;
}

/* In the order of the --policy choices (cmd_colocate.c's "time|spatial|zico"). */
static const co_policy policies[] = {
    {"time", 0, time_tick, time_start, time_rate, NULL, NULL},
    {"spatial", 1, NULL, spatial_start, NULL, NULL, spatial_no_room},
    {"zico", 0, NULL, zico_start_job, NULL, zico_wake, NULL},
};

size_t co_policy_count(void) { return SW_ARRAY_LEN(policies); }

const co_policy *co_policy_at(size_t i) { return i < SW_ARRAY_LEN(policies) ? &policies[i] : NULL; }

const co_policy *co_policy_find(const char *name)
{
    for (size_t i = 0; name && i < SW_ARRAY_LEN(policies); i++)
        if (!strcmp(policies[i].name, name))
            return &policies[i];
    return NULL;
}

const char *co_policy_name(const co_policy *p) { return p ? p->name : "?"; }

/* The wrappers the simulation calls the methods through (NULL: the default). */
static void pol_tick(co_sim *s)
{
    if (s->pol->tick)
        s->pol->tick(s);
}

static double pol_rate(const co_sim *s)
{
    return s->pol->rate ? s->pol->rate(s) : rate_of(s->jobs, s->st, s->n, -1);
}

static double pol_wake(const co_sim *s, int32_t i)
{
    return s->pol->wake ? s->pol->wake(s, i) : INFINITY;
}

static void pol_no_room(co_sim *s, int32_t i)
{
    if (s->pol->no_room)
        s->pol->no_room(s, i);
    else
        s->st[i].state = S_BLOCKED; /* wait for memory */
}

/* ---- the run ---- */

static int check_jobs(const co_job *jobs, int32_t n, int64_t memory, const co_policy *policy,
                      double h2d, double d2h, sw_err *err)
{
    if (n < 1)
        return sw_fail(err, SW_EINVAL, "no jobs");
    if (n > 64)
        return sw_fail(err, SW_EINVAL, "%d jobs: at most 64", (int)n);
    if (!policy || !policy->start)
        return sw_fail(err, SW_EINVAL, "no policy");
    if (memory <= 0 || !(h2d > 0) || !(d2h > 0))
        return sw_fail(err, SW_EINVAL, "memory and copy rates must be positive");
    for (int32_t i = 0; i < n; i++)
        if (jobs[i].n < 1 || !(jobs[i].iter_s > 0) || jobs[i].iterations < 1 ||
            !(jobs[i].util > 0) || jobs[i].util > 1 || !(jobs[i].arrival_s >= 0) ||
            !(jobs[i].pcie >= 0) || jobs[i].pcie > 1)
            return sw_fail(err, SW_EINVAL, "job %d '%s': expected a curve, an iteration time > 0, "
                           "iterations >= 1, a utilisation in (0, 1], a PCIe share in [0, 1] and an "
                           "arrival >= 0",
                           (int)i, jobs[i].name);
    return 0;
}

/* Set s up for a run; *max_events bounds it. 0 or SW_ENOMEM (nothing to free). */
static int sim_init(co_sim *s, int64_t *max_events)
{
    const co_job *jobs = s->jobs;
    int32_t n = s->n;
    for (int32_t i = 0; i < n; i++)
        s->st[i].cv = &jobs[i];
    s->r->jobs = sw_calloc((size_t)n, sizeof *s->r->jobs);
    if (!s->r->jobs)
        return SW_ENOMEM;
    s->r->memory = s->memory;
    size_t nz = 1;
    /* every event moves some job a step, starts, switches or fails one:
       far fewer than this many (beyond it the run is a bug, not a result) */
    *max_events = 1000000;
    for (int32_t i = 0; i < n; i++) {
        int32_t steps = SW_MAX(jobs[i].n, jobs[i].fallback ? jobs[i].fallback->n : 0);
        nz += 2 * ((size_t)steps + 1);
        *max_events += 8 * (int64_t)jobs[i].iterations * (steps + 3);
    }
    zscratch z = {sw_malloc(nz * sizeof *z.cand), sw_malloc(nz * sizeof *z.tmp),
                  sw_malloc(nz * sizeof *z.others), sw_malloc(((size_t)n + 1) * sizeof *z.run)};
    s->z = z;
    if (!z.cand || !z.tmp || !z.others || !z.run) {
        zscratch_free(&s->z);
        co_result_free(s->r);
        return SW_ENOMEM;
    }
    int64_t sum_peaks = 0;
    for (int32_t i = 0; i < n; i++) {
        int64_t pk = curve_peak(&jobs[i]);
        sum_peaks += pk;
        if (pk > s->memory) {
            char why[160];
            snprintf(why, sizeof why, "its peak of %lld bytes alone exceeds the GPU's %lld",
                     (long long)pk, (long long)s->memory);
            fail(s->r, &s->st[i], i, jobs[i].arrival_s, why);
        }
    }
    s->all_fit = sum_peaks <= s->memory; /* time: others keep their memory resident */
    s->cur = s->last = s->switch_to = -1;
    s->switch_end = -1;
    return 0;
}

/* Arrivals, then the policy's starts: the job ready the longest first
   (then by index). */
static void starts(co_sim *s)
{
    js *st = s->st;
    int32_t n = s->n;
    for (int32_t i = 0; i < n; i++)
        if (st[i].state == S_ARRIVING && s->jobs[i].arrival_s <= s->t + CO_EPS) {
            st[i].state = S_READY;
            st[i].ready_since = s->jobs[i].arrival_s;
        }
    pol_tick(s);
    int32_t order[64];
    for (int32_t i = 0; i < n; i++) {
        int32_t k = i;
        for (; k > 0 && (st[order[k - 1]].ready_since > st[i].ready_since); k--)
            order[k] = order[k - 1];
        order[k] = i;
    }
    for (int32_t oi = 0; oi < n; oi++) {
        int32_t q = order[oi];
        if (st[q].state == S_READY && s->pol->start(s, q))
            break;
    }
}

/* The time of the next event (INFINITY: none but waiting for memory);
   *any: some job has not finished. */
static double next_event(const co_sim *s, double rate, int *any)
{
    double next = INFINITY;
    *any = 0;
    for (int32_t i = 0; i < s->n; i++) {
        const js *j = &s->st[i];
        if (j->state == S_ARRIVING)
            next = SW_MIN(next, s->jobs[i].arrival_s);
        if (j->state == S_RUNNING)
            next = SW_MIN(next, s->t + (j->cv->at[j->k + 1] - j->tau) / rate);
        next = SW_MIN(next, pol_wake(s, i));
        *any |= j->state != S_DONE && j->state != S_FAILED;
    }
    if (s->switch_to >= 0)
        next = SW_MIN(next, s->switch_end);
    return next;
}

/* Job i ended an iteration at s->t. */
static void iteration_end(co_sim *s, int32_t i)
{
    js *j = &s->st[i];
    s->done[i]++;
    s->rc |= span(s->r, i, CO_SPAN_ITERATION, j->iter_start, s->t);
    s->r->jobs[i].done = s->done[i];
    s->r->jobs[i].finish_s = s->t;
    if (s->cur == i)
        s->cur = -1; /* time: the GPU is free */
    if (s->done[i] >= s->jobs[i].iterations) {
        j->state = S_DONE;
        j->mem = 0;
    } else {
        j->state = S_READY;
        j->ready_since = s->t;
        j->mem = SW_MIN(s->jobs[i].persistent, j->mem);
    }
}

/* Move the clock to next: progress at rate, stalls, then the step ends:
   frees first, then allocations, then iteration ends. */
static void advance(co_sim *s, double next, double rate)
{
    js *st = s->st;
    int32_t n = s->n;
    double dt = next - s->t;
    for (int32_t i = 0; i < n; i++) {
        if (st[i].state == S_RUNNING)
            st[i].tau += rate * dt;
        else if (st[i].state == S_READY || st[i].state == S_BLOCKED)
            s->r->jobs[i].stall_s += dt;
    }
    s->t = next;
    for (int pass = 0; pass < 2; pass++)
        for (int32_t i = 0; i < n; i++) {
            js *j = &st[i];
            if (j->state != S_RUNNING && j->state != S_BLOCKED)
                continue;
            if (j->state == S_RUNNING && j->tau < j->cv->at[j->k + 1] - 1e-9 * j->cv->iter_s)
                continue;
            j->tau = j->cv->at[j->k + 1];
            if (j->k + 1 == j->cv->n) { /* the iteration ends */
                if (pass == 1)
                    iteration_end(s, i);
                continue;
            }
            int64_t nxt = j->cv->level[j->k + 1];
            if ((pass == 0) != (nxt <= j->mem))
                continue;
            if (nxt > j->mem && total(st, n) - j->mem + nxt > s->memory) {
                pol_no_room(s, i);
                continue;
            }
            j->state = S_RUNNING;
            j->k++;
            j->mem = nxt;
        }
}

/* The run's failures as errors, else each job's throughput and the total. */
static int finish(co_sim *s, int64_t events, int64_t max_events, sw_err *err)
{
    co_result *r = s->r;
    int32_t n = s->n;
    if (!s->rc && events == max_events) {
        co_result_free(r);
        return sw_fail(err, SW_EINVAL, "internal error (a bug): the run did not end after %lld "
                       "events", (long long)max_events);
    }
    if (s->rc == SW_EINVAL) {
        double at_t = r->t[r->n_samples - 1];
        int64_t tot = r->bytes[(size_t)(r->n_samples - 1) * ((size_t)n + 1) + (size_t)n];
        co_result_free(r);
        return sw_fail(err, SW_EINVAL, "internal error (a bug): the jobs hold %lld bytes at "
                       "%.6f s, over the GPU's %lld", (long long)tot, at_t, (long long)s->memory);
    }
    if (s->rc) {
        co_result_free(r);
        return sw_fail(err, SW_ENOMEM, "out of memory");
    }
    double first = INFINITY, work = 0;
    for (int32_t i = 0; i < n; i++) {
        co_job_result *x = &r->jobs[i];
        double sp = x->finish_s - s->jobs[i].arrival_s;
        /* a job that failed crashed: what it had done is lost */
        x->iter_per_s = sp > 0 && !x->failed ? x->done / sp : 0;
        x->normalized = x->iter_per_s * s->jobs[i].iter_s; /* against the job alone with its
                                                              own plan */
        r->makespan_s = SW_MAX(r->makespan_s, x->finish_s);
        first = SW_MIN(first, s->jobs[i].arrival_s);
        if (!x->failed)
            work += x->done * s->jobs[i].iter_s; /* the job's iterations, at its speed alone */
    }
    /* the total over one window common to every job, the first arrival to
       the last finish (each job over its own lifetime would count the time
       a job waits after another's finish for neither: two identical jobs
       time-sliced would score above 1) */
    r->total_normalized = r->makespan_s > first ? work / (r->makespan_s - first) : 0;
    return 0;
}

int co_run(const co_job *jobs, int32_t n, int64_t memory, const co_policy *policy, double h2d,
           double d2h, int record, co_result *r, sw_err *err)
{
    memset(r, 0, sizeof *r);
    r->record = record != 0;
    int rc = check_jobs(jobs, n, memory, policy, h2d, d2h, err);
    if (rc)
        return rc;
    co_sim *s = sw_calloc(1, sizeof *s);
    if (!s)
        return sw_fail(err, SW_ENOMEM, "out of memory");
    s->jobs = jobs;
    s->n = n;
    s->memory = memory;
    s->h2d = h2d;
    s->d2h = d2h;
    s->r = r;
    s->pol = policy;
    int64_t max_events, events = 0;
    if (sim_init(s, &max_events)) {
        sw_free(s);
        return sw_fail(err, SW_ENOMEM, "out of memory");
    }
    size_t cap = 0;
    for (; events < max_events; events++) {
        starts(s);
        if (s->rc || (s->rc = sample(r, n, s->st, s->t, &cap, r->record)) != 0)
            break;
        double rate = pol_rate(s);
        int any;
        double next = next_event(s, rate, &any);
        if (!any)
            break;
        if (!isfinite(next)) {
            /* everything left waits for memory: fail the job waiting on the most */
            int32_t v = -1;
            for (int32_t i = 0; i < n; i++)
                if ((s->st[i].state == S_READY || s->st[i].state == S_BLOCKED) &&
                    (v < 0 || s->st[i].mem > s->st[v].mem))
                    v = i;
            if (v < 0)
                break;
            fail(r, &s->st[v], v, s->t, "deadlocked: every job left waits for memory");
            continue;
        }
        advance(s, next, rate);
    }
    zscratch_free(&s->z);
    rc = finish(s, events, max_events, err);
    sw_free(s);
    return rc;
}

/* ---- workload files ---- */

void co_workload_free(co_workload *w)
{
    for (int32_t i = 0; w->jobs && i < w->n_jobs; i++)
        co_job_free(&w->jobs[i]);
    sw_free(w->jobs);
    memset(w, 0, sizeof *w);
}

static int read_job(jr *r, const json_value *o, const char *dir, int32_t idx, co_workload *w,
                    int64_t memory_default, double time_budget_s, graph_profile **gout,
                    sw_err *err)
{
    const char *name, *prof, *pl, *budget_s;
    double arrival, util;
    int64_t iters;
    char defname[32];
    snprintf(defname, sizeof defname, "job%d", (int)idx);
    if (o->type != JSON_OBJECT)
        return jr_error(r, o, NULL, "expected a job object");
    if (jr_str(r, o, "name", 0, defname, &name) || jr_str(r, o, "profile", 1, NULL, &prof) ||
        jr_str(r, o, "planner", 0, "none", &pl) || jr_str(r, o, "budget", 0, NULL, &budget_s) ||
        jr_f64_range(r, o, "arrival", 0, 0, 0, 1e9, &arrival) ||
        jr_i64(r, o, "iterations", 0, 10, 1, 1000000, &iters) ||
        jr_f64_range(r, o, "utilization", 0, -1, -1, 1, &util))
        return SW_EINVAL;
    if (util == 0 || (util < 0 && util != -1))
        return jr_error(r, o, "utilization", "expected a number in (0, 1]");
    char path[4096];
    size_t dl = prof[0] == '/' ? 0 : strlen(dir), fl = strlen(prof);
    if (dl + fl + 2 > sizeof path)
        return jr_error(r, o, "profile", "path too long");
    if (dl) {
        memcpy(path, dir, dl);
        path[dl++] = '/';
    }
    memcpy(path + dl, prof, fl + 1);
    graph_profile *g = NULL;
    int rc = profile_read_file(path, &g, err);
    if (rc)
        return rc;
    int64_t budget = memory_default;
    if (budget_s) {
        if ((rc = planner_resolve_budget(g, budget_s, &budget, err)) != 0) {
            graph_free(g);
            return jr_error(r, o, "budget", "%s", err->msg);
        }
    }
    if (!w->device.name[0])
        w->device = g->device;
    g->device.memory_bytes = SW_MAX(g->device.memory_bytes, budget);
    co_job *j = &w->jobs[idx];
    rc = co_job_from_profile(j, name, g, pl, budget, time_budget_s, err);
    if (rc) {
        graph_free(g);
        return rc;
    }
    *gout = g;
    j->arrival_s = arrival;
    j->iterations = (int)iters;
    if (util > 0)
        j->util = util;
    return 0;
}

/* what co_workload_read's JSON reader needs besides the document */
typedef struct wl_ctx {
    const char *path;  /* the workload file (job profiles are relative to its folder) */
    int fallbacks;     /* build spatial's ODSwap fallback plans */
    double time_budget_s; /* the jobs' search time limit (0: each planner's default) */
    co_workload *w;    /* filled in */
} wl_ctx;

static int read_workload(jr *r, const json_value *root, void *ctx_)
{
    const wl_ctx *ctx = ctx_;
    const char *path = ctx->path;
    int fallbacks = ctx->fallbacks;
    co_workload *w = ctx->w;
    sw_err *err = r->err;
    int rc = 0;
    if (root->type != JSON_OBJECT) {
        rc = jr_error(r, root, NULL, "expected a workload object with \"jobs\"");
        return rc;
    }
    const char *dev_name, *mem_s;
    const json_value *jobs;
    if ((rc = jr_str(r, root, "device", 0, NULL, &dev_name)) ||
        (rc = jr_str(r, root, "memory", 0, NULL, &mem_s)) ||
        (rc = jr_field(r, root, "jobs", JSON_ARRAY, 1, &jobs)))
        return rc;
    if (jobs->n == 0) {
        rc = jr_error(r, jobs, NULL, "expected at least one job");
        return rc;
    }
    if (jobs->n > 64) {
        rc = jr_error(r, jobs, NULL, "expected at most 64 jobs");
        return rc;
    }
    if (dev_name) {
        const dev_spec *dv = dev_find(dev_name);
        if (!dv) {
            rc = jr_error(r, root, "device", "unknown device '%s'", dev_name);
            return rc;
        }
        w->device = *dv;
    }
    if (mem_s) {
        double frac;
        if (sw_parse_size(mem_s, &w->memory, &frac, err) || frac > 0 || w->memory <= 0) {
            rc = jr_error(r, root, "memory", "expected a size like 16GiB, got '%s'", mem_s);
            return rc;
        }
    }
    w->jobs = sw_calloc(jobs->n, sizeof *w->jobs);
    if (!w->jobs) {
        rc = sw_fail(err, SW_ENOMEM, "out of memory");
        return rc;
    }
    char dir[4096];
    size_t pl = strlen(path);
    if (pl >= sizeof dir) {
        rc = sw_fail(err, SW_EINVAL, "%.200s...: path too long", path);
        return rc;
    }
    memcpy(dir, path, pl + 1);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = 0;
    else
        dir[0] = 0;
    graph_profile *gs[64] = {0};
    size_t s0 = jr_push_key(r, "jobs");
    for (uint32_t i = 0; i < jobs->n && !rc; i++) {
        size_t s1 = jr_push_idx(r, i);
        int64_t mem = w->memory ? w->memory : (w->device.name[0] ? w->device.memory_bytes : 0);
        rc = read_job(r, &jobs->u.items[i], dir, (int32_t)i, w, mem, ctx->time_budget_s, &gs[i], err);
        w->n_jobs = (int32_t)i + (rc ? 0 : 1);
        jr_pop(r, s1);
    }
    jr_pop(r, s0);
    if (!rc && !w->memory)
        w->memory = w->device.memory_bytes;
    /* spatial's fallback: an ODSwap plan within what the other jobs' peaks
       leave (an equal share where they leave nothing) */
    for (int32_t i = 0; i < w->n_jobs && !rc && fallbacks; i++) {
        int64_t others = 0;
        for (int32_t k = 0; k < w->n_jobs; k++)
            if (k != i)
                others += curve_peak(&w->jobs[k]);
        int64_t fb = w->memory - others > 0 ? w->memory - others : w->memory / w->n_jobs;
        co_job *j = &w->jobs[i];
        j->fallback = sw_calloc(1, sizeof *j->fallback);
        if (!j->fallback) {
            rc = sw_fail(err, SW_ENOMEM, "out of memory");
            break;
        }
        if ((rc = co_job_from_profile(j->fallback, j->name, gs[i], "odswap", fb, 0, err)) != 0) {
            sw_free(j->fallback);
            j->fallback = NULL;
            if (rc == SW_ENOFIT || rc == SW_EEXCEEDED) {
                rc = 0; /* no swapping plan fits what the others leave: it fails as without */
                continue;
            }
            sw_err_prefix(err, "its fallback for --on-oom swap (odswap within %lld bytes): ",
                          (long long)fb);
            break;
        }
        j->fallback->iterations = j->iterations;
        j->fallback->util = j->util;
        j->fallback->arrival_s = j->arrival_s;
    }
    for (int32_t i = 0; i < 64; i++)
        graph_free(gs[i]);
    return rc;
}

int co_workload_read(const char *path, int fallbacks, double time_budget_s, co_workload *w,
                     sw_err *err)
{
    memset(w, 0, sizeof *w);
    wl_ctx ctx = {path, fallbacks, time_budget_s, w};
    int rc = jr_read_file(path, read_workload, &ctx, err);
    if (rc)
        co_workload_free(w);
    return rc;
}
