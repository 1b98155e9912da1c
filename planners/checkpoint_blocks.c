/* checkpoint_blocks.c: the `checkpoint-blocks` planner: activation
   checkpointing per block, as `torch.utils.checkpoint` wrapped around each
   transformer layer and Megatron-LM's full recompute (Korthikanti et al.
   2022, "full activation recomputation") do it: each block's input is kept
   through the forward pass, everything the block makes inside is freed
   once the forward pass leaves it, and the block's forward ops are re-run
   from the kept input just before its backward pass needs them.

   Blocks come from the operator names (segments.h, seg_blocks: the
   generators' scopes, "layer3" for the decoder's fourth layer; an op with
   no scope in its name is its own block). The segment machinery is
   sublinear.c's with the cuts between blocks instead of Chen's greedy
   walk. Two differences from the frameworks, both documented in
   docs/planners.md: the last block (the decoder's head: final norm, output
   layer, loss) is not recomputed, as the backward pass starts with it
   (torch would not wrap it either); and a re-run remakes only what the
   backward pass reads or what remaking that needs, where torch re-runs
   the whole block (the decoder's down projection and last residual add,
   whose outputs only the forward pass reads, are not re-run here). */
#include <stdio.h>
#include <string.h>

#include "lib/segments.h"

static const param_def checkpoint_blocks_params[] = {
    {"allocator", PT_CHOICE, "best-fit", "address allocator placing the plan",
     "first-fit|best-fit", 1, 0},
    {"alignment", PT_SIZE, "1", "placement alignment in bytes", NULL, 1, 1e9},
    PARAM_END};

static int plan_checkpoint_blocks(const graph_profile *g, const planner_opts *o, plan **out,
                                  sw_err *err)
{
    int32_t *block = sw_malloc(((size_t)g->n_ops + 1) * sizeof *block);
    uint8_t *cut = sw_calloc((size_t)g->n_ops + 1, 1);
    int rc = 0;
    if (!block || !cut || seg_blocks(g, block) < 0) {
        rc = sw_fail(err, SW_ENOMEM, "out of memory");
        goto done;
    }
    /* a cut after each forward op whose next forward op starts another block */
    int32_t prev = -1;
    for (int32_t i = 0; i < g->n_ops; i++) {
        int32_t op = g->order[i];
        if (g->ops[op].phase != GP_FORWARD)
            continue;
        if (prev >= 0 && block[op] != block[prev])
            cut[prev] = 1;
        prev = op;
    }
    rc = sublinear_plan_cuts(g, o, cut, "checkpoint-blocks", out, err);
done:
    sw_free(block);
    sw_free(cut);
    return rc;
}

const planner planner_checkpoint_blocks = {
    1, "checkpoint-blocks", "activation checkpointing per block (torch.utils.checkpoint per "
    "layer, Megatron full recompute): keep each block's input, recompute its interior before "
    "its backward; blocks from the op names' scopes", checkpoint_blocks_params,
    plan_checkpoint_blocks, 0};
