/* dtr.c: the `dtr` planner: Dynamic Tensor Rematerialization (Kirisame et
   al., ICLR 2021) as its authors' simulator runs it, with the heuristics of
   the paper. The runtime (dtr_engine.c) replays the profile's schedule and
   the plan records its evictions (drop tasks) and rematerialisations (rerun
   tasks). */
#include <stdio.h>
#include <string.h>

#include "dtr_engine.h"

static const param_def dtr_params[] = {
    {"heuristic", PT_CHOICE, "dtr", "eviction heuristic: h_DTR (with the evicted "
     "neighbourhood's cost), its union-find approximation, the local cost only, least recently "
     "used, largest first, MSPS, random", "dtr|dtr-eq|dtr-local|lru|size|msps|random", 1, 0},
    DTR_PARAM_OVERHEAD_CAP,
    DTR_PARAM_SMALL_FILTER,
    DTR_PARAM_SAMPLE,
    DTR_PARAM_FAKE_DELETE("always"),
    DTR_PARAM_ALLOCATOR,
    DTR_PARAM_ALIGNMENT("1"),
    {"budget_on", PT_CHOICE, "arena", "what the budget bounds: the plan's arena (the plan "
     "fits the budget; fragmentation costs evictions), or the bytes of resident tensors as in "
     "the DTR simulator and prototype (decisions on bytes alone; the plan's arena, reported, "
     "may exceed the budget by the allocator's fragmentation)", "arena|bytes", 1, 0},
    {"frag_evict", PT_CHOICE, "heuristic", "when the bytes fit but no free block is large enough: "
     "evict the next tensor the heuristic picks, or the cheapest whose removal opens a "
     "large-enough block (fewer evictions, but on the DTR logs more runs give up)",
     "heuristic|opening", 1, 0},
    PARAM_END};

/* An option's value if the planner declares it, else the planner's fixed one. */
static double opt_float(const param_set *ps, const char *key, double fixed)
{
    return params_find(ps, key) >= 0 ? params_float(ps, key) : fixed;
}

static int opt_is(const param_set *ps, const char *key, const char *value)
{
    return params_find(ps, key) >= 0 && !strcmp(params_str(ps, key), value);
}

void dtr_config_from(const planner_opts *o, dtr_config *cfg)
{
    const param_set *ps = &o->params;
    memset(cfg, 0, sizeof *cfg);
    cfg->heuristic = params_find(ps, "heuristic") >= 0
                         ? dtr_heuristic_parse(params_str(ps, "heuristic"))
                         : DH_MEGENGINE;
    cfg->overhead_cap = params_float(ps, "overhead_cap");
    cfg->small_filter = params_float(ps, "small_tensor_filter");
    cfg->sample = params_bool(ps, "sample");
    cfg->real_delete_bwd = !strcmp(params_str(ps, "fake_delete"), "forward");
    cfg->fit = MEM_BEST_FIT;
    mem_fit_parse(params_str(ps, "allocator"), &cfg->fit);
    cfg->align = params_size(ps, "alignment");
    /* dtr-megengine has no frag_evict: its score already favours tensors
       beside free blocks */
    cfg->frag_fit = opt_is(ps, "frag_evict", "opening");
    cfg->bytes_only = opt_is(ps, "budget_on", "bytes");
    cfg->exp_compute = opt_float(ps, "exp_compute", 0);
    cfg->exp_staleness = opt_float(ps, "exp_staleness", 0);
    cfg->exp_memory = opt_float(ps, "exp_memory", 0);
    cfg->recompute_base = opt_float(ps, "recompute_base", 1);
    cfg->seed = o->seed;
}

static int plan_dtr(const graph_profile *g, const planner_opts *o, plan **out, sw_err *err)
{
    dtr_config cfg;
    dtr_config_from(o, &cfg);
    dtr_stats st;
    int rc = dtr_run(g, o->memory_budget, &cfg, out, &st, err);
    if (rc)
        return rc;
    sw_buf b;
    sw_buf_init(&b);
    sw_buf_printf(&b, "dtr (%s): ", params_str(&o->params, "heuristic"));
    dtr_stats_note(&st, &cfg, &b);
    rc = b.oom ? SW_ENOMEM : plan_set_notes(*out, b.data);
    sw_buf_free(&b);
    if (rc) {
        plan_free(*out);
        *out = NULL;
        return sw_fail(err, SW_ENOMEM, "out of memory");
    }
    return 0;
}

const planner planner_dtr = {1, "dtr", "Dynamic Tensor Rematerialization: online eviction by "
                             "h_DTR and other heuristics, evicted tensors recomputed on demand "
                             "(the DTR authors' simulator's semantics)", dtr_params, plan_dtr, 0};
