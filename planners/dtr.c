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
    {"overhead_cap", PT_FLOAT, "2", "give up (\"exceeded\") once rematerialisation exceeds "
     "(cap - 1) x the compute time; 0: never", NULL, 0, 1e9},
    {"small_tensor_filter", PT_FLOAT, "0", "skip eviction candidates smaller than this fraction "
     "of the candidates' mean size (the DTR prototype uses 0.01)", NULL, 0, 1},
    {"sample", PT_BOOL, "false", "examine about sqrt(N) of the N candidates (random stride), as "
     "the DTR prototype does", NULL, 1, 0},
    {"fake_delete", PT_CHOICE, "always", "when the last reference to a tensor dies, free it but "
     "keep its record so dependents can regenerate it: always (the DTR simulator), or only in "
     "the forward pass (later deletes are real: evicted live dependents are regenerated first)",
     "always|forward", 1, 0},
    {"allocator", PT_CHOICE, "best-fit", "address allocator placing the plan in the budget; a "
     "placement that fails although the bytes fit evicts more", "first-fit|best-fit", 1, 0},
    {"alignment", PT_SIZE, "1", "placement alignment in bytes", NULL, 1, 1e9},
    {"budget_on", PT_CHOICE, "arena", "what the budget bounds: the plan's arena (the plan "
     "fits the budget; fragmentation costs evictions), or the bytes of resident tensors as in "
     "the DTR simulator and prototype (decisions on bytes alone; the plan's arena, reported, "
     "may exceed the budget by the allocator's fragmentation)", "arena|bytes", 1, 0},
    {"frag_evict", PT_CHOICE, "heuristic", "when the bytes fit but no free block is large enough: "
     "evict the next tensor the heuristic picks, or the cheapest whose removal opens a "
     "large-enough block (fewer evictions, but on the DTR logs more runs give up)",
     "heuristic|opening", 1, 0},
    PARAM_END};

/* Fill cfg from the planner options (shared with dtr-megengine). */
void dtr_config_from(const planner_opts *o, dtr_config *cfg);
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
    cfg->frag_fit = !strcmp(params_str(ps, "frag_evict"), "opening");
    cfg->bytes_only = !strcmp(params_str(ps, "budget_on"), "bytes");
    cfg->recompute_base = 1;
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
