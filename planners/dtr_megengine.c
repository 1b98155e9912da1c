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

#include "dtr_engine.h"

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

static int plan_meg(const graph_profile *g, const planner_opts *o, plan **out, sw_err *err)
{
    dtr_config cfg;
    dtr_config_from(o, &cfg); /* no heuristic option: the MegEngine score */
    dtr_stats st;
    int rc = dtr_run(g, o->memory_budget, &cfg, out, &st, err);
    if (rc)
        return rc;
    sw_buf b;
    sw_buf_init(&b);
    sw_buf_puts(&b, "dtr-megengine: ");
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

const planner planner_dtr_megengine = {
    1, "dtr-megengine", "MegEngine's DTR: fragmentation-aware eviction score on an address "
    "allocator, real deletes after the forward pass; reports its fragmentation",
    meg_params, plan_meg, 0};
