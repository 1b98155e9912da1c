/* sac.c: the `sac` planner: PyTorch's selective activation checkpointing
   with the policy the issue names as its default (and torch.compile's
   partitioner's rule of thumb): save the outputs of matmuls and attention,
   recompute the pointwise ops. "Compute-intensive" ops, whose outputs are
   saved: linear, the matmuls (mm, addmm, bmm, matmul), convolutions, the
   fused attention (the generator's and PyTorch's scaled_dot_product_attention,
   segments.h), embeddings, recurrent cells and the loss; every other forward op (norms, rotary, SwiGLU, adds,
   activations, softmax, copies, pooling) is "pointwise" and a candidate
   for recomputation.

   A pointwise op's outputs that the backward pass reads are dropped after
   their last forward use and the op is re-run just before the first
   backward op that reads one (segments.h, seg_plan_recompute), provided
   its inputs are still alive then and kept. torch saves a matmul output a
   recomputed pointwise op needs even when the backward pass does not read
   it; the plan builder cannot lengthen a storage's life, so when that
   input (the rotary op's q/k projections, the residual adds' projections)
   died, the pointwise output is kept instead: the same bytes for a unary
   op, one tensor instead of the matmul output for an add
   (docs/planners.md). The plan does not adapt to the budget. */
#include <string.h>

#include "lib/segments.h"

static const param_def sac_params[] = {
    {"allocator", PT_CHOICE, "best-fit", "address allocator placing the plan",
     "first-fit|best-fit", 1, 0},
    {"alignment", PT_SIZE, "1", "placement alignment in bytes", NULL, 1, 1e9},
    PARAM_END};

/* Outputs saved under the policy: matmuls, attention, lookups, the loss. */
static int saved_kind(const char *type)
{
    /* "mm" covers mm, addmm, bmm, baddbmm, matmul (an imported trace's
       aten:: names: GPT-2's Conv1D layers are aten::addmm) */
    static const char *const keep[] = {"linear", "mm",   "conv", "embedding", "cross_entropy",
                                       "loss",   "lstm", "gru",  "rnn",       "gemm"};
    if (!type || seg_fused_attention(type))
        return 1; /* unknown, or the attention: saved */
    for (size_t i = 0; i < SW_ARRAY_LEN(keep); i++)
        if (strstr(type, keep[i]))
            return 1;
    return 0;
}

static int plan_sac(const graph_profile *g, const planner_opts *o, plan **out, sw_err *err)
{
    uint8_t *cand = sw_calloc((size_t)g->n_ops + 1, 1);
    if (!cand)
        return sw_fail(err, SW_ENOMEM, "out of memory");
    for (int32_t op = 0; op < g->n_ops; op++)
        cand[op] = !saved_kind(g->ops[op].type);
    int rc = seg_plan_recompute(g, o, cand, "sac", out, err);
    sw_free(cand);
    return rc;
}

const planner planner_sac = {
    1, "sac", "selective activation checkpointing, default policy: save matmul and attention "
    "outputs, recompute pointwise ops before their backward", sac_params, plan_sac, 0};
