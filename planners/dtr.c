/* dtr.c: the `dtr` planner: Dynamic Tensor Rematerialization (Kirisame et
   al., ICLR 2021) as its authors' simulator runs it, with the heuristics of
   the paper. The runtime (dtr_engine.c) replays the profile's schedule and
   the plan records its evictions (drop tasks) and rematerialisations (rerun
   tasks). */
#include <stdio.h>
#include <string.h>

#include "lib/dtr_config.h"

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

/* "dtr (<heuristic>): " and the runtime's statistics in the plan's notes */
static int plan_dtr(const graph_profile *g, const planner_opts *o, plan **out, sw_err *err)
{
    char label[64];
    snprintf(label, sizeof label, "dtr (%s)", params_str(&o->params, "heuristic"));
    return dtr_plan(g, o, label, out, err);
}

const planner planner_dtr = {1, "dtr", "Dynamic Tensor Rematerialization: online eviction by "
                             "h_DTR and other heuristics, evicted tensors recomputed on demand "
                             "(the DTR authors' simulator's semantics)", dtr_params, plan_dtr, 0};
