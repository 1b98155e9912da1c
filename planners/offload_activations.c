/* offload_activations.c: the `offload-activations` planner: PyTorch's
   `torch.autograd.graph.save_on_cpu` semantics. Every activation the
   backward pass saves (a storage a forward op makes, not persistent, that a
   backward op reads) is copied to pinned host memory once the forward pass
   is done with it and freed on the GPU; the backward pass brings it back.
   One mutated in place in the forward pass (a ReLU(inplace=True) on a
   convolution's output) leaves after its last forward access, after the
   mutation: the host holds the version the backward pass reads, as
   save_on_cpu's hook packs it. save_on_cpu itself unpacks a tensor when the backward op
   that needs it runs (prefetch=false: the copy is issued just before that
   op, which waits for it); Megatron-LM's fine-grained activation offloading
   overlaps the copy-back with the backward of the block after it
   (prefetch=true: each tensor's copy-back is issued when the backward pass
   enters the block following its producer's block, segments.h's rule).

   What stays: parameters, gradients, optimizer state and the data batch;
   a saved activation that the next op reads at once (the loss's logits)
   is not copied. save_on_cpu's hook also copies the parameters a layer
   saves (a linear layer's weight); we keep those resident, as Megatron's
   offloading does. The plan does not adapt to the budget: it fits or not. */
#include <stdio.h>
#include <string.h>

#include "lib/segments.h"
#include "lib/swap_util.h"

static const param_def offload_activations_params[] = {
    {"prefetch", PT_BOOL, "false", "false: bring each activation back when its backward op "
     "runs (save_on_cpu); true: one block ahead, overlapping the backward of the block after "
     "it (Megatron's fine-grained offload)", NULL, 1, 0},
    {"allocator", PT_CHOICE, "best-fit", "address allocator placing the plan",
     "first-fit|best-fit", 1, 0},
    {"alignment", PT_SIZE, "1", "placement alignment in bytes", NULL, 1, 1e9},
    PARAM_END};

static int plan_offload_activations(const graph_profile *g, const planner_opts *o, plan **out,
                                    sw_err *err)
{
    const param_set *ps = &o->params;
    int prefetch = params_bool(ps, "prefetch");
    int32_t nt = g->n_tensors, no = g->n_ops, *lf = NULL, *fb = NULL;
    int32_t *out_at = sw_malloc(((size_t)nt + 1) * sizeof *out_at);
    int32_t *in_at = sw_malloc(((size_t)nt + 1) * sizeof *in_at);
    int32_t *block = sw_malloc(((size_t)no + 1) * sizeof *block);
    int32_t *bwd_start = sw_malloc(((size_t)no + 1) * sizeof *bwd_start); /* per block */
    int rc = 0;
    if (!out_at || !in_at || !block || !bwd_start || swu_phase_uses(g, &lf, &fb) ||
        seg_blocks(g, block) < 0) {
        rc = sw_fail(err, SW_ENOMEM, "out of memory");
        goto done;
    }
    /* where the backward pass enters each block: its first backward op */
    for (int32_t b = 0; b <= no; b++)
        bwd_start[b] = -1;
    for (int32_t i = 0; i < no; i++) {
        int32_t b = block[g->order[i]];
        if (g->ops[g->order[i]].phase == GP_BACKWARD && b >= 0 && bwd_start[b] < 0)
            bwd_start[b] = i;
    }
    for (int32_t s = 0; s < nt; s++) {
        out_at[s] = in_at[s] = -1;
        const graph_tensor *t = &g->tensors[s];
        if (t->storage != s || t->persistent || t->producer < 0 ||
            g->ops[t->producer].phase != GP_FORWARD || fb[s] < 0 || fb[s] <= lf[s] + 1)
            continue;
        out_at[s] = lf[s];
        in_at[s] = fb[s];
        int32_t b = block[t->producer];
        if (prefetch) {
            int32_t at = b >= 0 ? bwd_start[b + 1] : -1;
            in_at[s] = at > lf[s] && at < fb[s] ? at : fb[s] - 1;
        }
    }
    int64_t peak;
    rc = swu_offload(g, o, out_at, in_at, "offload-activations", out, &peak, err);
done:
    sw_free(lf);
    sw_free(fb);
    sw_free(out_at);
    sw_free(in_at);
    sw_free(block);
    sw_free(bwd_start);
    return rc;
}

const planner planner_offload_activations = {
    1, "offload-activations", "save_on_cpu: every saved activation to the host after its "
    "forward use, back for the backward pass (on demand, or one block ahead with "
    "prefetch=true)", offload_activations_params, plan_offload_activations, 0};
