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
    {"overhead_cap", PT_FLOAT, "2", "give up (\"exceeded\") once rematerialisation exceeds "
     "(cap - 1) x the compute time; 0: never", NULL, 0, 1e9},
    {"fake_delete", PT_CHOICE, "forward", "keep the record of a tensor whose last reference dies "
     "only in the forward pass (MegEngine), or always", "forward|always", 1, 0},
    {"allocator", PT_CHOICE, "best-fit", "address allocator policy", "first-fit|best-fit", 1, 0},
    {"alignment", PT_SIZE, "512", "placement alignment in bytes", NULL, 1, 1e9},
    {"sample", PT_BOOL, "false", "examine about sqrt(N) candidates (MegEngine's "
     "enable_sqrt_sampling)", NULL, 1, 0},
    {"small_tensor_filter", PT_FLOAT, "0", "skip candidates smaller than this fraction of the "
     "candidates' mean size", NULL, 0, 1},
    PARAM_END};

static int plan_meg(const graph_profile *g, const planner_opts *o, plan **out, sw_err *err)
{
    const param_set *ps = &o->params;
    dtr_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.heuristic = DH_MEGENGINE;
    cfg.exp_compute = params_float(ps, "exp_compute");
    cfg.exp_staleness = params_float(ps, "exp_staleness");
    cfg.exp_memory = params_float(ps, "exp_memory");
    cfg.recompute_base = params_float(ps, "recompute_base");
    cfg.overhead_cap = params_float(ps, "overhead_cap");
    cfg.real_delete_bwd = !strcmp(params_str(ps, "fake_delete"), "forward");
    cfg.fit = MEM_BEST_FIT;
    mem_fit_parse(params_str(ps, "allocator"), &cfg.fit);
    cfg.align = params_size(ps, "alignment");
    cfg.sample = params_bool(ps, "sample");
    cfg.small_filter = params_float(ps, "small_tensor_filter");
    cfg.frag_fit = 0; /* the score already favours tensors beside free blocks */
    cfg.seed = o->seed;
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
