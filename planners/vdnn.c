/* vdnn.c: the `vdnn` planner: vDNN (Rhu et al., MICRO 2016) as a static
   plan. In the forward pass each layer's input activation that the backward
   pass needs again is offloaded to the host once no later forward layer
   reads it (policy=all), or only the inputs of convolutions (policy=conv);
   in the backward pass each offloaded tensor is prefetched one layer ahead
   (issued before the layer preceding its first backward use, so the copy
   overlaps that layer). Parameters, gradients and the rest stay on the GPU;
   vDNN does not adapt to the budget: the plan fits or does not. */
#include <stdio.h>
#include <string.h>

#include "lib/swap_util.h"

static const param_def vdnn_params[] = {
    {"policy", PT_CHOICE, "all", "offload every layer's input activation, or only the inputs "
     "of convolutions", "all|conv", 1, 0},
    {"prefetch_layers", PT_INT, "1", "issue each swap-in this many layers (ops) before its use",
     NULL, 1, 1e6},
    {"allocator", PT_CHOICE, "best-fit", "address allocator placing the plan",
     "first-fit|best-fit", 1, 0},
    {"alignment", PT_SIZE, "1", "placement alignment in bytes", NULL, 1, 1e9},
    PARAM_END};

static int is_conv(const graph_op *op)
{
    const char *t = op->type ? op->type : op->name;
    return t && strstr(t, "conv") && !strstr(t, "backward");
}

static int plan_vdnn(const graph_profile *g, const planner_opts *o, plan **out, sw_err *err)
{
    const param_set *ps = &o->params;
    int conv = !strcmp(params_str(ps, "policy"), "conv");
    int32_t ahead = (int32_t)params_int(ps, "prefetch_layers");
    int32_t nt = g->n_tensors, *lf, *fb;
    if (swu_phase_uses(g, &lf, &fb))
        return sw_fail(err, SW_ENOMEM, "out of memory");
    int32_t *out_at = sw_malloc(((size_t)nt + 1) * sizeof *out_at);
    int32_t *in_at = sw_malloc(((size_t)nt + 1) * sizeof *in_at);
    if (!out_at || !in_at) {
        sw_free(lf);
        sw_free(fb);
        sw_free(out_at);
        sw_free(in_at);
        return sw_fail(err, SW_ENOMEM, "out of memory");
    }
    for (int32_t s = 0; s < nt; s++)
        out_at[s] = in_at[s] = -1;
    /* inputs of forward layers that the backward pass reads again */
    for (int32_t i = 0; i < g->n_ops; i++) {
        int32_t op = g->order[i];
        const graph_op *x = &g->ops[op];
        if (x->phase != GP_FORWARD || (conv && !is_conv(x)))
            continue;
        for (int32_t k = g->acc_off[op]; k < g->acc_off[op + 1]; k++) {
            int32_t s = g->acc[k];
            const graph_tensor *t = &g->tensors[s];
            if ((g->acc_flag[k] & GA_CREATE) || t->persistent || t->producer < 0 ||
                fb[s] < 0 || fb[s] <= lf[s] + 1)
                continue;
            out_at[s] = lf[s];
            in_at[s] = SW_MAX(lf[s] + 1, fb[s] - ahead);
        }
    }
    int64_t peak;
    int rc = swu_offload(g, o, out_at, in_at, "vdnn", out, &peak, err);
    sw_free(lf);
    sw_free(fb);
    sw_free(out_at);
    sw_free(in_at);
    return rc;
}

const planner planner_vdnn = {1, "vdnn", "vDNN: offload layers' input activations (all or "
                              "convolutions only) in the forward pass, prefetch one layer ahead "
                              "in the backward pass", vdnn_params, plan_vdnn, 0};
