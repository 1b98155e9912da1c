/* planner.c: the planner registry and the common entry point. */
#include "planner.h"

#include <stdio.h>
#include <string.h>

#include "../sim/simulate.h"

/* planner.h's PLANNER_REGISTRY, in its order */
#define PLANNER_ENTRY(name) &planner_##name,
static const planner *const registry[] = {PLANNER_REGISTRY(PLANNER_ENTRY)};
#undef PLANNER_ENTRY

size_t planner_count(void) { return SW_ARRAY_LEN(registry); }
const planner *planner_at(size_t i) { return i < planner_count() ? registry[i] : NULL; }

const planner *planner_find(const char *name)
{
    for (size_t i = 0; i < planner_count(); i++)
        if (name && strcmp(registry[i]->name, name) == 0)
            return registry[i];
    return NULL;
}

int planner_opts_init(planner_opts *o, const planner *pl)
{
    memset(o, 0, sizeof *o);
    o->seed = 1;
    o->threads = 1;
    return params_init(&o->params, pl->params);
}

void planner_opts_free(planner_opts *o) { params_free(&o->params); }

int planner_opts_derive(planner_opts *o, const planner *pl, const planner_opts *parent,
                        int64_t memory_budget, const char *const *kv, sw_err *err)
{
    if (planner_opts_init(o, pl))
        return sw_fail(err, SW_ENOMEM, "out of memory");
    o->memory_budget = memory_budget;
    if (parent)
        o->seed = parent->seed;
    int rc = 0;
    for (; kv && *kv && !rc; kv++)
        rc = params_set_kv(&o->params, *kv, err);
    if (rc)
        planner_opts_free(o);
    return rc;
}

/* What gets further than a refusal, by planner (NULL: any) and the cause its
   message names; the first match is appended to the message. */
static const struct {
    const char *planner, *says, *hint;
} refusal_hints[] = {
    {"dtr", "fragments memory",
     "fragmentation: --set budget_on=bytes decides on the resident bytes alone, as the DTR "
     "authors' simulator does (the plan's arena may then exceed the budget by the "
     "fragmentation), --set frag_evict=opening evicts to open a large-enough block, and hybrid "
     "or odswap swap instead"},
    {"dtr-megengine", "fragments memory",
     "fragmentation: the dtr planner's --set budget_on=bytes decides on bytes alone; hybrid or "
     "odswap swap instead"},
    {"hybrid", "fragments memory",
     "fragmentation: dtr --set budget_on=bytes decides on bytes alone; odswap places on demand"},
    {NULL, "fragments memory",
     "fragmentation: hybrid, odswap or dtr --set budget_on=bytes may place it"},
    {NULL, "resident and locked",
     "the persistent set: parameters, optimizer state and the operator's own tensors cannot be "
     "rematerialised; hybrid, swapadvisor and odswap swap them to the host"},
    {NULL, "persistent tensors alone",
     "the persistent set: hybrid, swapadvisor and odswap swap parameters to the host"},
    {"tflms", "never swaps parameters",
     "the persistent set: odswap, swapadvisor and hybrid swap parameters too"},
    {NULL, "alone needs",
     "a single operator's need: no plan holds less than one operator's tensors at once "
     "('swapsim bound' gives this floor)"},
    {NULL, "the largest op",
     "a single operator's need: no plan holds less than one operator's tensors at once "
     "('swapsim bound' gives this floor)"},
    {"swapadvisor", "size-class pool",
     "the size-class pool: planners on an address allocator (hybrid, odswap) are not held to "
     "the smallest pool"},
    {"vdnn", "schedule peaks",
     "vdnn offloads only layers' inputs: tflms, odswap and hybrid swap more"},
    {"sublinear", "needs",
     "sublinear keeps its segments' boundaries: --set segments=N places them differently; "
     "hybrid adds swapping, dtr rematerialises on demand"},
    {"none", "needs", "every tensor resident: a planner that swaps or recomputes fits in less "
                      "('swapsim planners')"},
};

/* Appends to a refusal what would get further (refusal_hints). */
static void refusal_hint(const planner *pl, sw_err *err)
{
    if (!err)
        return;
    for (size_t i = 0; i < SW_ARRAY_LEN(refusal_hints); i++)
        if ((!refusal_hints[i].planner || !strcmp(refusal_hints[i].planner, pl->name)) &&
            strstr(err->msg, refusal_hints[i].says)) {
            size_t n = strlen(err->msg);
            snprintf(err->msg + n, sizeof err->msg - n, " (cause: %s)", refusal_hints[i].hint);
            return;
        }
}

int planner_run(const planner *pl, const graph_profile *g, const planner_opts *o, plan **out,
                sw_err *err)
{
    *out = NULL;
    if (!g->finished)
        return sw_fail(err, SW_EINVAL, "the profile is not finished");
    if (o->memory_budget <= 0)
        return sw_fail(err, SW_EINVAL, "the memory budget must be positive");
    if (o->threads < 1)
        return sw_fail(err, SW_EINVAL, "threads must be at least 1");
    if (o->params.defs != pl->params)
        return sw_fail(err, SW_EINVAL, "options were initialised for another planner");
    double t0 = sw_now();
    int rc = pl->plan(g, o, out, err);
    if (rc == SW_ENOFIT)
        refusal_hint(pl, err);
    if (rc)
        return rc;
    sw_buf b;
    sw_buf_init(&b);
    params_to_json(&o->params, &b);
    rc = b.oom ? SW_ENOMEM : plan_set_meta(*out, pl->name, o->seed, b.data);
    sw_buf_free(&b);
    if (rc) {
        plan_free(*out);
        *out = NULL;
        return sw_fail(err, SW_ENOMEM, "out of memory");
    }
    (*out)->planning_time_s = sw_now() - t0;
    return 0;
}

int planner_ideal_peak(const graph_profile *g, int64_t *peak, sw_err *err)
{
    planner_opts o;
    int rc = planner_opts_derive(&o, &planner_ideal, NULL, INT64_MAX / 4, NULL, err);
    if (rc)
        return rc;
    plan *p;
    rc = planner_run(&planner_ideal, g, &o, &p, err);
    planner_opts_free(&o);
    if (rc)
        return rc;
    sim_result r;
    rc = sim_plan(p, NULL, NULL, &r, err);
    plan_free(p);
    if (!rc)
        *peak = r.peak_memory_bytes;
    return rc;
}

int planner_resolve_budget(const graph_profile *g, const char *text, int64_t *budget,
                           sw_err *err)
{
    double frac = 0;
    int64_t b = g->device.memory_bytes;
    if (text) {
        if (sw_parse_size(text, &b, &frac, err))
            return SW_EINVAL;
        if (frac > 0) {
            int64_t peak;
            int rc = planner_ideal_peak(g, &peak, err);
            if (rc)
                return rc;
            double v = (double)peak * frac;
            if (!(v < 0x1p62)) /* the fuzzer's 5.6e29x: no conversion past int64 */
                return sw_fail(err, SW_EINVAL, "%s: the budget is too large (%.3g bytes; at "
                               "most %.3g)", text, v, 0x1p62);
            b = (int64_t)v;
        }
    }
    if (b <= 0)
        return sw_fail(err, SW_EINVAL, "%s: the budget must be positive", text ? text : "memory");
    *budget = b;
    return 0;
}
