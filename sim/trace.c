/* trace.c: Chrome trace (Perfetto) output of a simulated plan. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "simulate.h"

typedef struct tr_event {
    int iter;
    int32_t task;
    int stream;
    double start, end;
    int64_t mem;
} tr_event;

typedef struct tr_ctx {
    tr_event *ev;
    size_t n, cap;
    int oom;
} tr_ctx;

static void collect(void *ud, int iter, int32_t task, int stream, double start, double end,
                    int64_t mem)
{
    tr_ctx *c = ud;
    if (c->oom || SW_GROW(c->ev, c->cap, c->n + 1)) {
        c->oom = 1;
        return;
    }
    tr_event *e = &c->ev[c->n++];
    e->iter = iter;
    e->task = task;
    e->stream = stream;
    e->start = start;
    e->end = end;
    e->mem = mem;
}

static int cmp_ev(const void *a, const void *b)
{
    const tr_event *x = a, *y = b;
    if (x->end != y->end)
        return x->end < y->end ? -1 : 1;
    return (x->task > y->task) - (x->task < y->task);
}

int sim_write_trace(const plan *p, const dev_spec *dev, const char *path, sw_err *err)
{
    sim_prog *s;
    int rc = sim_compile(p, dev, &s, err);
    if (rc)
        return rc;
    sim_result r;
    sim_opts o = {0};
    rc = sim_run(s, &o, &r, err);
    if (rc) {
        sim_prog_free(s);
        return rc;
    }
    tr_ctx c = {0};
    o.max_iters = r.iterations;
    o.trace = collect;
    o.trace_ud = &c;
    o.trace_from = r.iterations >= 2 ? r.iterations - 2 : 0;
    o.trace_to = r.iterations - 1;
    rc = sim_run(s, &o, &r, err);
    sim_prog_free(s);
    if (rc || c.oom) {
        sw_free(c.ev);
        return rc ? rc : sw_fail(err, SW_ENOMEM, "out of memory while tracing");
    }
    double t0 = c.n ? c.ev[0].start : 0;
    for (size_t i = 0; i < c.n; i++)
        if (c.ev[i].start < t0)
            t0 = c.ev[i].start;
    const graph_profile *g = p->prof;
    static const char *tracks[STREAM__COUNT] = {"compute", "h2d (swap-in)", "d2h (swap-out)"};
    sw_buf b;
    sw_buf_init(&b);
    sw_buf_puts(&b, "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"profile\":");
    sw_buf_put_jstr(&b, g->name);
    sw_buf_puts(&b, ",\"planner\":");
    sw_buf_put_jstr(&b, p->planner ? p->planner : "unknown");
    sw_buf_printf(&b, ",\"iteration_time_s\":%.9g,\"iterations_shown\":[%d,%d]},", r.iteration_time_s,
                  o.trace_from, o.trace_to);
    sw_buf_puts(&b, "\"traceEvents\":[\n");
    sw_buf_puts(&b, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"tid\":0,\"args\":{\"name\":");
    char pname[300];
    snprintf(pname, sizeof pname, "swapsim: %s (%s)", g->name, p->planner ? p->planner : "plan");
    sw_buf_put_jstr(&b, pname);
    sw_buf_puts(&b, "}}");
    for (int st = 0; st < STREAM__COUNT; st++) {
        sw_buf_printf(&b, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":%d,"
                      "\"args\":{\"name\":\"%s\"}}", st + 1, tracks[st]);
        sw_buf_printf(&b, ",\n{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":1,\"tid\":%d,"
                      "\"args\":{\"sort_index\":%d}}", st + 1, st);
    }
    for (size_t i = 0; i < c.n; i++) {
        const tr_event *e = &c.ev[i];
        if (e->task < 0)
            continue;
        const plan_task *x = &p->tasks[e->task];
        char name[256];
        if (x->kind <= TASK_RERUN)
            snprintf(name, sizeof name, "%s%s", x->kind == TASK_RERUN ? "rerun " : "",
                     g->ops[x->op].name);
        else
            snprintf(name, sizeof name, "%s %s",
                     x->kind == TASK_SWAP_IN ? "in" : x->kind == TASK_SWAP_OUT ? "out" : "drop",
                     g->tensors[x->tensor].name);
        sw_buf_puts(&b, ",\n{\"name\":");
        sw_buf_put_jstr(&b, name);
        sw_buf_printf(&b, ",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":1,\"tid\":%d,\"ts\":%.3f,"
                      "\"dur\":%.3f,\"args\":{\"task\":%d,\"iteration\":%d",
                      plan_task_kind_name(x->kind), e->stream + 1, (e->start - t0) * 1e6,
                      (e->end - e->start) * 1e6, e->task, e->iter);
        if (x->kind > TASK_RERUN)
            sw_buf_printf(&b, ",\"bytes\":%lld", (long long)g->tensors[x->tensor].bytes);
        sw_buf_puts(&b, "}}");
    }
    /* memory counter, in time order of the level changes */
    qsort(c.ev, c.n, sizeof *c.ev, cmp_ev);
    for (size_t i = 0; i < c.n; i++)
        sw_buf_printf(&b, ",\n{\"name\":\"memory in use\",\"ph\":\"C\",\"pid\":1,\"ts\":%.3f,"
                      "\"args\":{\"bytes\":%lld}}", (c.ev[i].end - t0) * 1e6,
                      (long long)c.ev[i].mem);
    sw_buf_puts(&b, "\n]}\n");
    sw_free(c.ev);
    rc = sw_buf_write_file(&b, path, err);
    sw_buf_free(&b);
    return rc;
}
