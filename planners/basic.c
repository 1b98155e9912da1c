/* basic.c: the two reference planners. `ideal` keeps everything resident in
   unbounded memory: the upper bound every result is normalised to. `none`
   keeps everything resident within the budget, or fails with "does not
   fit". Both run the profile's own operator order. */
#include <stdio.h>
#include <string.h>

#include "../sim/builder.h"
#include "planner.h"

static const param_def basic_params[] = {
    {"allocator", PT_CHOICE, "first-fit", "address allocator policy", "first-fit|best-fit", 1, 0},
    {"alignment", PT_SIZE, "1", "placement alignment in bytes", NULL, 1, 1e9},
    PARAM_END};

/* Record the resident-everything plan for g in order through b. */
static void record_all_resident(plan_builder *b, const graph_profile *g)
{
    pb_resident_persistent(b);
    for (int32_t i = 0; i < g->n_ops; i++) {
        int32_t o = g->order[i];
        /* external non-persistent tensors (loaded each iteration) come in just before use */
        for (int32_t k = g->acc_off[o]; k < g->acc_off[o + 1]; k++) {
            int32_t s = g->acc[k];
            if (!(g->acc_flag[k] & GA_CREATE) && !pb_is_resident(b, s))
                pb_swap_in(b, s);
        }
        pb_run(b, o);
    }
}

static int build(const graph_profile *g, const planner_opts *o, int64_t capacity, int64_t budget,
                 plan **out, sw_err *err)
{
    mem_fit fit = MEM_FIRST_FIT;
    mem_fit_parse(params_str(&o->params, "allocator"), &fit);
    mem_model *m = mem_address_new(capacity, fit, params_size(&o->params, "alignment"));
    if (!m)
        return sw_fail(err, SW_ENOMEM, "out of memory");
    plan_builder *b = pb_new(g, m, budget, g->max_workspace);
    if (!b) {
        mem_destroy(m);
        return sw_fail(err, SW_ENOMEM, "out of memory");
    }
    record_all_resident(b, g);
    int rc = pb_finish(b, out, err);
    pb_free(b);
    mem_destroy(m);
    return rc;
}

static int plan_ideal(const graph_profile *g, const planner_opts *o, plan **out, sw_err *err)
{
    int64_t align = params_size(&o->params, "alignment");
    int64_t total = 0;
    for (int32_t s = 0; s < g->n_tensors; s++)
        if (g->tensors[s].storage == s)
            total += (g->tensors[s].bytes + align - 1) / align * align + align;
    return build(g, o, total, total + g->max_workspace, out, err);
}

static int plan_none(const graph_profile *g, const planner_opts *o, plan **out, sw_err *err)
{
    int64_t need = graph_peak_memory(g, g->order);
    char h1[32], h2[32];
    if (need < 0)
        return sw_fail(err, SW_ENOMEM, "out of memory");
    if (need > o->memory_budget)
        return sw_fail(err, SW_ENOFIT, "does not fit: needs %s (%lld bytes), budget %s (%lld "
                       "bytes)", sw_fmt_bytes(need, h1, sizeof h1), (long long)need,
                       sw_fmt_bytes(o->memory_budget, h2, sizeof h2), (long long)o->memory_budget);
    if (o->memory_budget < g->max_workspace)
        return sw_fail(err, SW_ENOFIT, "does not fit: the largest workspace alone needs %lld bytes",
                       (long long)g->max_workspace);
    sw_err e2;
    int rc = build(g, o, o->memory_budget - g->max_workspace, o->memory_budget, out, &e2);
    if (rc == SW_ENOFIT) {
        const char *why = e2.msg;
        if (!strncmp(why, "does not fit: ", 14))
            why += 14;
        return sw_fail(err, SW_ENOFIT, "does not fit: needs %s (%lld bytes) and the budget is %s, "
                       "but the %s allocator fragments memory (%s)",
                       sw_fmt_bytes(need, h1, sizeof h1), (long long)need,
                       sw_fmt_bytes(o->memory_budget, h2, sizeof h2),
                       params_str(&o->params, "allocator"), why);
    }
    if (rc && err)
        *err = e2;
    return rc;
}

const planner planner_ideal = {1, "ideal", "unbounded memory, everything resident: the upper "
                               "bound results are normalised to", basic_params, plan_ideal,
                               PLANNER_UNBOUNDED};
const planner planner_none = {1, "none", "everything resident within the budget, or \"does not "
                              "fit: needs X, budget Y\"", basic_params, plan_none, 0};
