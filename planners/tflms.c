/* tflms.c: the `tflms` planner: TensorFlow Large Model Support (Le et al.,
   2018) as a static graph rewrite. Only activations are swapped: tensors a
   forward operator produces and the backward pass reads, taken in
   topological order (the first n_tensors of them, all by default), when
   their backward consumer is more than lb operators after their last
   forward use. Each is copied out after its last forward use and brought
   back lb operators before its first backward use (TFLMS's lower bound on
   the swap-in trigger distance), so the copy overlaps compute (one
   mutated in place in the forward pass, by a ReLU(inplace=True) of a
   recorded trace, after that mutation: its last forward access). Parameters
   are never swapped: when they and the working set exceed the budget the
   planner fails and says so (why the SwapAdvisor paper could run TFLMS only
   on WResNet-152-4). */
#include <stdio.h>
#include <string.h>

#include "lib/swap_util.h"

static const param_def tflms_params[] = {
    {"n_tensors", PT_INT, "0", "how many activations to swap, in topological order (0: all "
     "candidates)", NULL, 0, 1e9},
    {"lb", PT_INT, "1", "lower bound on the distance, in operators, between a swap-in and the "
     "backward operator that reads the tensor (swap-in issued that far ahead; tensors read "
     "again sooner than that are not swapped)", NULL, 1, 1e6},
    {"allocator", PT_CHOICE, "best-fit", "address allocator placing the plan",
     "first-fit|best-fit", 1, 0},
    {"alignment", PT_SIZE, "1", "placement alignment in bytes", NULL, 1, 1e9},
    PARAM_END};

static int plan_tflms(const graph_profile *g, const planner_opts *o, plan **out, sw_err *err)
{
    const param_set *ps = &o->params;
    int64_t n_max = params_int(ps, "n_tensors");
    int32_t lb = (int32_t)params_int(ps, "lb");
    int32_t nt = g->n_tensors, *lf, *fb;
    if (swu_phase_uses(g, &lf, &fb))
        return sw_fail(err, SW_ENOMEM, "out of memory");
    int32_t *out_at = sw_malloc(((size_t)nt + 1) * sizeof *out_at);
    int32_t *in_at = sw_malloc(((size_t)nt + 1) * sizeof *in_at);
    int rc = 0;
    if (!out_at || !in_at) {
        rc = sw_fail(err, SW_ENOMEM, "out of memory");
        goto done;
    }
    for (int32_t s = 0; s < nt; s++)
        out_at[s] = in_at[s] = -1;
    /* parameters never move: they alone must fit with room to work */
    int64_t params = 0, cap = o->memory_budget - g->max_workspace;
    for (int32_t s = 0; s < nt; s++)
        if (g->tensors[s].storage == s && g->tensors[s].persistent)
            params += g->tensors[s].bytes;
    int64_t n = 0;
    for (int32_t i = 0; i < g->n_ops && (n_max == 0 || n < n_max); i++) {
        int32_t op = g->order[i];
        if (g->ops[op].phase != GP_FORWARD)
            continue;
        for (int32_t k = g->acc_off[op]; k < g->acc_off[op + 1]; k++) {
            int32_t s = g->acc[k];
            if (!(g->acc_flag[k] & GA_CREATE) || fb[s] < 0 ||
                fb[s] - lf[s] <= lb || (n_max && n >= n_max))
                continue;
            out_at[s] = lf[s];
            in_at[s] = fb[s] - lb;
            n++;
        }
    }
    int64_t peak = 0;
    rc = swu_offload(g, o, out_at, in_at, "tflms", out, &peak, err);
    if (rc == SW_ENOFIT && peak > cap) {
        char h1[32], h2[32], h3[32];
        rc = sw_fail(err, SW_ENOFIT, "does not fit: TFLMS never swaps parameters: they (%s) stay "
                     "on the GPU and, with the working set after swapping %lld activations, "
                     "need %s; the budget leaves %s", sw_fmt_bytes(params, h1, sizeof h1),
                     (long long)n, sw_fmt_bytes(peak, h2, sizeof h2),
                     sw_fmt_bytes(cap, h3, sizeof h3));
    }
done:
    sw_free(lf);
    sw_free(fb);
    sw_free(out_at);
    sw_free(in_at);
    return rc;
}

const planner planner_tflms = {1, "tflms", "TensorFlow Large Model Support: swap activations "
                               "only (chosen in topological order, n_tensors and lb knobs), "
                               "prefetch ahead in the backward pass; parameters never swapped",
                               tflms_params, plan_tflms, 0};
