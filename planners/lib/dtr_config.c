/* dtr_config.c: the DTR runtime's configuration from a planner's options,
   and the plan of a run (dtr_config.h): what dtr.c and dtr_megengine.c
   share. */
#include "dtr_config.h"

#include <stdio.h>
#include <string.h>

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

int dtr_plan(const graph_profile *g, const planner_opts *o, const char *label, plan **out,
             sw_err *err)
{
    dtr_config cfg;
    dtr_config_from(o, &cfg);
    dtr_stats st;
    int rc = dtr_run(g, o->memory_budget, &cfg, out, &st, err);
    if (rc)
        return rc;
    sw_buf b;
    sw_buf_init(&b);
    sw_buf_printf(&b, "%s: ", label);
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
