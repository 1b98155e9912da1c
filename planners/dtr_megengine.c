/* dtr_megengine.c: the `dtr-megengine` planner: DTR as MegEngine v1.4 built
   it (spec/dtr-and-zico.md): the runtime of dtr_engine.c on an address
   allocator of the budget, evicting by the fragmentation-aware score
     f(t) = compute^a / (staleness^b * (size + free blocks beside it)^c) * d^recomputes
   (the tensor with the lowest f goes), fake deletes in the forward pass and
   real deletes (evicted live dependents regenerated first) after it. The
   fragmentation it suffers is reported in the plan's notes: bytes in use
   vs the arena extent at the allocator's peak, and evictions forced by
   fragmentation. */
#include <stdio.h>
#include <string.h>

#include "lib/dtr_config.h"

static const param_def meg_params[] = {
    {"exp_compute", PT_FLOAT, "1", "a: exponent of the tensor's compute time", NULL, 0, 100},
    {"exp_staleness", PT_FLOAT, "1", "b: exponent of the time since its last use", NULL, 0, 100},
    {"exp_memory", PT_FLOAT, "1", "c: exponent of its size plus the free blocks beside it",
     NULL, 0, 100},
    {"recompute_base", PT_FLOAT, "1", "d: the score is multiplied by d^(times recomputed); d > 1 "
     "spreads recomputation evenly", NULL, 0, 100},
    DTR_PARAM_OVERHEAD_CAP,
    DTR_PARAM_FAKE_DELETE("forward"),
    DTR_PARAM_ALLOCATOR,
    DTR_PARAM_ALIGNMENT("512"),
    DTR_PARAM_SAMPLE,
    DTR_PARAM_SMALL_FILTER,
    PARAM_END};

/* no heuristic option: the MegEngine score (dtr_config_from) */
static int plan_meg(const graph_profile *g, const planner_opts *o, plan **out, sw_err *err)
{
    return dtr_plan(g, o, "dtr-megengine", out, err);
}

const planner planner_dtr_megengine = {
    1, "dtr-megengine", "MegEngine's DTR: fragmentation-aware eviction score on an address "
    "allocator, real deletes after the forward pass; reports its fragmentation",
    meg_params, plan_meg, 0};
