/* selective.c: the `selective` planner: Megatron-LM's selective activation
   recomputation (Korthikanti et al. 2022, "selective activation
   recomputation"): only the attention core is recomputed. Megatron
   checkpoints the core (QK^T, softmax, softmax dropout, attention over V)
   because its stored tensors grow with s^2 (the 5as/h term) while it costs
   few FLOPs to redo.

   With FlashAttention as one fused operator (the decoder generator's
   `flash_attention`) the core stores no s^2 tensor; what selective
   recompute still drops is the fused operator's output and its softmax
   statistics (2sbh + 4abs bytes per layer in 16-bit), re-running the
   operator from its saved q, k, v (which its own backward keeps anyway)
   before the first backward op reading either output (the output
   projection's backward): one more attention forward per layer, the same
   trade Megatron makes with Transformer Engine's fused attention.

   Only fused attention operators are recomputed (segments.h,
   seg_fused_attention: the generator's, and PyTorch's
   scaled_dot_product_attention in imported traces, which likewise
   outputs the attention and its logsumexp statistics): profiles with unfused
   attention (gpt, transformer: bmm, softmax, dropout) or none get a plan
   that recomputes nothing (docs/planners.md). An operator is skipped if
   it mutates anything, if an output is not read by the backward pass, or
   if an input is freed before the re-run would read it. The plan does not
   adapt to the budget: it fits or is refused. */
#include <stdio.h>
#include <string.h>

#include "lib/segments.h"

static const param_def selective_params[] = {
    {"allocator", PT_CHOICE, "best-fit", "address allocator placing the plan",
     "first-fit|best-fit", 1, 0},
    {"alignment", PT_SIZE, "1", "placement alignment in bytes", NULL, 1, 1e9},
    PARAM_END};

static int plan_selective(const graph_profile *g, const planner_opts *o, plan **out,
                          sw_err *err)
{
    uint8_t *cand = sw_calloc((size_t)g->n_ops + 1, 1);
    if (!cand)
        return sw_fail(err, SW_ENOMEM, "out of memory");
    for (int32_t op = 0; op < g->n_ops; op++)
        cand[op] = seg_fused_attention(g->ops[op].type) != 0;
    int rc = seg_plan_recompute(g, o, cand, "selective", out, err);
    sw_free(cand);
    return rc;
}

const planner planner_selective = {
    1, "selective", "Megatron selective recompute: only the attention core (with FlashAttention "
    "as one fused op: its output and softmax statistics) dropped and re-run before its "
    "backward", selective_params, plan_selective, 0};
