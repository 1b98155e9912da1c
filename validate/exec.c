/* exec.c: the one executor both backends share. It lays the plan out
   (layout.c) and builds the event graph (events.c); then in each of two
   passes it opens the backend, writes the initial contents (canary.c) and
   enqueues iterations task by task exactly as a CUDA runtime would: waits
   for the task's edges, the task's work, a record of its event if anything
   waits for it, and a timing mark after each iteration's last compute
   task. The timed pass (warm-up + measured iterations) runs without canary
   work; the canary pass (more iterations) checks every one. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../sim/simulate.h"
#include "canary.h"
#include "events.h"
#include "layout.h"
#include "libmap.h"
#include "replay.h"

void val_opts_init(val_opts *o)
{
    memset(o, 0, sizeof *o);
    o->iterations = 10;
    o->warmup = 2;
    o->canary_iterations = VAL_CANARY_ITERATIONS;
    o->poison = 1;
    o->sample_words = 512;
    o->lead = VAL_LEAD;
    o->max_seconds = VAL_MAX_SECONDS;
}

/* Figures the CPU backend chooses its time scale from: per compute task
   the bytes its canaries touch and its time. Arrays owned by the caller. */
static int load_summary(const plan *p, const val_layout *L, val_backend_cfg *c, double **bytes,
                        double **times)
{
    const graph_profile *g = p->prof;
    *bytes = sw_malloc(((size_t)p->n_tasks + 1) * sizeof **bytes);
    *times = sw_malloc(((size_t)p->n_tasks + 1) * sizeof **times);
    if (!*bytes || !*times)
        return SW_ENOMEM;
    int32_t nr = 0;
    int copies = 0;
    for (int32_t t = 0; t < p->n_tasks; t++) {
        const plan_task *x = &p->tasks[t];
        if (x->kind == TASK_RUN || x->kind == TASK_RERUN) {
            double touched = 0;
            for (uint32_t i = 0; i < L->task[t].n_acc; i++) {
                const val_lacc *a = &L->acc[L->task[t].acc_at + i];
                touched += (double)a->bytes * (((a->mode & VAL_R_CHECK) != 0) + ((a->mode & VAL_R_FILL) != 0));
            }
            (*bytes)[nr] = touched;
            (*times)[nr++] = g->ops[x->op].time_s;
        } else if (x->kind != TASK_DROP) {
            copies = 1;
            c->copy_bytes += (double)L->task[t].bytes;
        }
    }
    c->n_ops = nr;
    c->op_bytes = *bytes;
    c->op_time = *times;
    c->max_copy_rate = copies ? SW_MAX(c->h2d_alone, c->d2h_alone) : 0;
    c->ideal_s = g->total_compute_s;
    return 0;
}

static void describe_failure(const plan *p, const val_fail *f, char *buf, size_t n)
{
    const graph_profile *g = p->prof;
    char lb[160], got[160], want[160];
    val_canary_describe(g, f->found, got, sizeof got);
    val_canary_describe(g, f->expected, want, sizeof want);
    const char *tn = f->tensor >= 0 && f->tensor < g->n_tensors ? g->tensors[f->tensor].name : "?";
    snprintf(buf, n, "%s, iteration %d, %s: tensor %d '%s' holds %s at byte %lld, expected %s",
             f->task >= 0 && f->task < p->n_tasks ? plan_task_label(p, f->task, lb, sizeof lb)
                                                  : "a task",
             f->iter, f->where ? "when the op ends" : "when the op starts", f->tensor, tn, got,
             (long long)f->word * 8, want);
}

/* What one pass (an open, a run of iterations, a close) measured. */
typedef struct pass_out {
    double scale;          /* the backend's time scale */
    char device[128];      /* the backend's device description */
    val_canary_report rep; /* its canary report (and overruns) */
} pass_out;

/* One pass over p on m: open with canaries on or off, write the initial
   contents, enqueue `total` iterations, sync, read the marks (into
   marks[total]) and the report, close. */
static int run_pass(const plan *p, const val_backend_methods *m, const val_opts *o,
                    const val_layout *L, const val_events *E, val_backend_cfg *c, int canaries,
                    int total, double *marks, val_region *reg, const char **akey, double *aval,
                    pass_out *out, sw_err *err)
{
    const graph_profile *g = p->prof;
    val_backend *b = NULL;
    char ebuf[512] = "";
    c->canaries = canaries;
    c->n_marks = total;
    int rc = m->open(c, &b, ebuf, sizeof ebuf);
    if (rc)
        return sw_fail(err, rc < 0 && rc >= SW_EUNSUPPORTED ? rc : SW_EUNSUPPORTED,
                       "%s backend: %s", m->name, ebuf[0] ? ebuf : "cannot open");
    snprintf(out->device, sizeof out->device, "%s", m->device_name(b));
    out->scale = m->time_scale(b);
    /* initial contents: the arena is released memory; resident storages hold version 0;
       host copies of external storages hold their loaded contents, others nothing yet */
    rc = m->init_fill(b, VAL_DEVICE, 0, L->arena_bytes, VAL_POISON);
    for (int32_t i = 0; i < L->n_init && !rc; i++)
        rc = m->init_fill(b, VAL_DEVICE, L->init[i].off, L->init[i].bytes,
                          val_canary_key(g, L->init[i].storage, 0, 0));
    for (int32_t s = 0; s < g->n_tensors && !rc; s++)
        if (L->host_off[s] >= 0)
            rc = m->init_fill(b, VAL_HOST, L->host_off[s], g->tensors[s].bytes,
                              g->tensors[s].producer < 0 ? val_canary_key(g, s, 0, 0) : VAL_ZERO_KEY);
    if (rc) {
        m->close(b);
        return sw_fail(err, SW_EUNSUPPORTED, "%s backend: cannot write the initial contents",
                       m->name);
    }
    for (int k = 0; k < total && !rc; k++) {
        for (int32_t i = 0; i < p->n_tasks && !rc; i++) {
            int32_t t = E->order[i];
            const plan_task *x = &p->tasks[t];
            const val_ltask *lt = &L->task[t];
            int st = plan_task_stream(x->kind);
            for (int32_t e = E->in_off[t]; e < E->in_off[t + 1] && !rc; e++) {
                int64_t kk = (int64_t)k - E->in[e].dist;
                if (kk >= 0)
                    rc = m->wait_event(b, st, val_events_slot(E, E->in[e].task, kk));
            }
            if (rc)
                break;
            if (x->kind == TASK_RUN || x->kind == TASK_RERUN) {
                const graph_op *op = &g->ops[x->op];
                for (uint32_t j = 0; j < lt->n_acc; j++) {
                    const val_lacc *a = &L->acc[lt->acc_at + j];
                    val_region *q = &reg[j];
                    q->off = a->off;
                    q->bytes = a->bytes;
                    q->tensor = a->storage;
                    q->mode = a->mode & (o->poison ? ~0 : ~VAL_R_RELEASE);
                    q->key_in = val_canary_key(g, a->storage, a->ver_in, k);
                    q->key_out = val_canary_key(g, a->storage, a->ver_out, k);
                }
                for (int32_t j = 0; j < op->n_attr; j++) {
                    akey[j] = op->attr[j].key;
                    aval[j] = op->attr[j].value;
                }
                val_call calls[LM_MAX_CALLS];
                int nc = 0;
                if (o->ops_library && !lm_match(g, x->op, calls, LM_MAX_CALLS, &nc))
                    lm_bind(calls, &nc, reg, (int32_t)lt->n_acc);
                val_op_work w = {t, x->op, k, op->time_s, (int32_t)lt->n_acc, reg, L->ws_off,
                                 SW_MIN(op->workspace_bytes, L->ws_bytes), op->name, op->type,
                                 op->n_attr, akey, aval, nc, calls};
                rc = m->run_op(b, st, &w);
            } else if (x->kind == TASK_SWAP_IN) {
                rc = m->copy(b, st, VAL_H2D, lt->dev_off, lt->host_off, lt->bytes);
            } else {
                if (x->kind == TASK_SWAP_OUT)
                    rc = m->copy(b, st, VAL_D2H, lt->dev_off, lt->host_off, lt->bytes);
                if (!rc && o->poison && canaries)
                    rc = m->poison(b, st, lt->dev_off, lt->bytes);
            }
            if (!rc && E->ev_ring[t] > 0)
                rc = m->record_event(b, st, val_events_slot(E, t, k));
            if (!rc && t == E->last_compute)
                rc = m->mark(b, st, k);
        }
    }
    int src = m->sync(b, ebuf, sizeof ebuf);
    if (rc || src) {
        m->close(b);
        return sw_fail(err, SW_EUNSUPPORTED, "%s backend failed while running the plan: %s",
                       m->name, ebuf[0] ? ebuf : "enqueue failed");
    }
    memset(&out->rep, 0, sizeof out->rep);
    if (m->mark_times(b, marks, total) || m->report(b, &out->rep)) {
        m->close(b);
        return sw_fail(err, SW_EUNSUPPORTED, "%s backend: cannot read the measurements", m->name);
    }
    m->close(b);
    return 0;
}

int val_execute(const plan *p, const val_backend_methods *m, const val_opts *o, val_result *r,
                sw_err *err)
{
    const graph_profile *g = p->prof;
    memset(r, 0, sizeof *r);
    if (o->iterations < 1 || o->warmup < 1)
        return sw_fail(err, SW_EINVAL, "a replay needs at least 1 warm-up and 1 measured iteration");
    if (o->canary_iterations < 0)
        return sw_fail(err, SW_EINVAL, "canary iterations must be 0 or more, got %d",
                       o->canary_iterations);
    if (!m || m->version != VAL_ABI_VERSION)
        return sw_fail(err, SW_EINVAL, "backend interface version mismatch");
    double w0 = sw_now();
    val_layout L;
    val_events E;
    int rc = val_layout_build(p, &L, err);
    if (rc)
        return rc;
    rc = val_events_build(p, o->lead, &E, err);
    if (rc) {
        val_layout_free(&L);
        return rc;
    }
    int total = o->warmup + o->iterations;
    const dev_spec *dev = o->device ? o->device : &g->device;
    val_backend_cfg c;
    memset(&c, 0, sizeof c);
    c.abi = VAL_ABI_VERSION;
    c.arena_bytes = L.arena_bytes;
    c.host_bytes = SW_MAX(L.host_bytes, 8);
    c.n_events = SW_MAX(E.n_events, 1);
    c.device_index = o->device_index;
    c.sample_words = o->sample_words > 0 ? o->sample_words : 512;
    c.ops_library = o->ops_library;
    c.tf32 = o->tf32;
    c.time_scale = o->time_scale;
    c.wait_mode = o->wait_mode;
    dev_rates(dev, &c.h2d_alone, &c.d2h_alone, &c.h2d_both, &c.d2h_both);
    c.copy_latency_s = dev->copy_latency_s;
    val_region *reg = NULL;
    const char **akey = NULL;
    double *aval = NULL;
    double *marks = NULL;
    double *op_bytes = NULL, *op_time = NULL;
    c.waits_per_iter = E.n_edges;
    if (load_summary(p, &L, &c, &op_bytes, &op_time)) {
        rc = sw_fail(err, SW_ENOMEM, "out of memory");
        goto out;
    }
    int32_t max_reg = 1, max_attr = 1;
    for (int32_t t = 0; t < p->n_tasks; t++)
        max_reg = SW_MAX(max_reg, (int32_t)L.task[t].n_acc);
    for (int32_t i = 0; i < g->n_ops; i++)
        max_attr = SW_MAX(max_attr, g->ops[i].n_attr);
    reg = sw_malloc((size_t)max_reg * sizeof *reg);
    akey = sw_malloc((size_t)max_attr * sizeof *akey);
    aval = sw_malloc((size_t)max_attr * sizeof *aval);
    marks = sw_malloc((size_t)SW_MAX(total, o->canary_iterations) * sizeof *marks);
    if (!reg || !akey || !aval || !marks) {
        rc = sw_fail(err, SW_ENOMEM, "out of memory");
        goto out;
    }
    /* the timed pass: no canary work, so nothing but the plan's own work is timed */
    pass_out po;
    if ((rc = run_pass(p, m, o, &L, &E, &c, 0, total, marks, reg, akey, aval, &po, err)))
        goto out;
    snprintf(r->backend, sizeof r->backend, "%s", m->name);
    snprintf(r->device, sizeof r->device, "%s", po.device);
    r->time_scale = po.scale;
    double sc = r->time_scale > 0 ? r->time_scale : 1;
    int w = o->warmup, nmeas = o->iterations;
    r->iterations = nmeas;
    r->warmup = w;
    r->iteration_time_s = (marks[w + nmeas - 1] - marks[w - 1]) / nmeas / sc;
    r->iteration_min_s = r->iteration_max_s = (marks[w] - marks[w - 1]) / sc;
    for (int k = w; k < total; k++) {
        double d = (marks[k] - marks[k - 1]) / sc;
        r->iteration_min_s = SW_MIN(r->iteration_min_s, d);
        r->iteration_max_s = SW_MAX(r->iteration_max_s, d);
    }
    r->overruns = po.rep.overruns;
    r->timed = po.rep.timed;
    /* the canary pass: every iteration checked; its time is reported, not compared */
    int nc = o->canary_iterations;
    if (nc > 0) {
        c.time_scale = po.scale; /* the same scale for both passes */
        if ((rc = run_pass(p, m, o, &L, &E, &c, 1, nc, marks, reg, akey, aval, &po, err)))
            goto out;
        double csc = po.scale > 0 ? po.scale : 1;
        r->canary_iterations = nc;
        r->canary_iteration_time_s = nc > 1 ? (marks[nc - 1] - marks[0]) / (nc - 1) / csc : 0;
        r->canary_checks = po.rep.checks;
        r->canary_violations = po.rep.failures;
        if (po.rep.n_fail > 0)
            describe_failure(p, &po.rep.fail[0], r->first_violation, sizeof r->first_violation);
    }
    r->ideal_time_s = g->total_compute_s;
    r->dangling = L.dangling;
    r->tasks = p->n_tasks;
    r->edges = E.n_edges;
    r->events = E.n_events;
out:
    c.op_bytes = c.op_time = NULL;
    sw_free(reg);
    sw_free(akey);
    sw_free(aval);
    sw_free(marks);
    sw_free(op_bytes);
    sw_free(op_time);
    val_layout_free(&L);
    val_events_free(&E);
    r->wall_s = sw_now() - w0;
    return rc;
}

int val_replay(const plan *p, const char *backend, const val_opts *o, val_result *r, sw_err *err)
{
    const val_backend_methods *m = val_backend_find(backend, err);
    if (!m)
        return err ? err->code : SW_ENOTFOUND;
    const dev_spec *dev = o->device ? o->device : &p->prof->device;
    sim_result sr, sp;
    int rc = sim_plan(p, dev, NULL, &sr, err);
    if (!rc)
        rc = o->device ? sim_plan(p, NULL, NULL, &sp, err) : 0;
    if (rc)
        return rc;
    if (!o->device)
        sp = sr;
    int n = o->warmup + o->iterations + SW_MAX(o->canary_iterations, 0);
    double total = (double)n * sr.iteration_time_s;
    if (o->max_seconds > 0 && total > o->max_seconds)
        return sw_fail(err, SW_EINVAL, "the replay would take %.6g simulated seconds (%d "
                       "iterations of %.6g s, warm-up and canary pass included), over the limit "
                       "of %g s (--max-seconds)", total, n, sr.iteration_time_s, o->max_seconds);
    rc = val_execute(p, m, o, r, err);
    if (rc)
        return rc;
    snprintf(r->sim_device, sizeof r->sim_device, "%s", dev->name);
    r->simulated_time_s = sr.iteration_time_s;
    r->error = sr.iteration_time_s > 0 ? r->iteration_time_s / sr.iteration_time_s - 1 : 0;
    r->profile_simulated_time_s = sp.iteration_time_s;
    r->profile_error =
        sp.iteration_time_s > 0 ? r->iteration_time_s / sp.iteration_time_s - 1 : 0;
    return 0;
}
