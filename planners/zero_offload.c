/* zero_offload.c: the `zero-offload` planner: DeepSpeed's ZeRO-Offload
   (Ren et al., USENIX ATC 2021) on one GPU, from its description: the
   optimizer states (and the fp32 master weights) live in host memory and
   the optimizer step runs on the CPU; each gradient is copied to the host
   as the backward pass finishes it and freed on the GPU; after the CPU
   step the updated 16-bit parameters are copied back before the next
   forward pass. The GPU keeps the parameters and the activations.

   The plan format has no host compute, so the planner rewrites the profile
   (the plan owns the rewritten copy and its file embeds it):
   * every update op becomes a `cpu_adam_update` op that no longer touches
     the optimizer-state tensors (they stay in host memory: no GPU op reads
     them, they are never resident) nor reads the gradient; it mutates the
     parameter (the new value arriving), and its time is the CPU step for
     the parameter's elements at adam_s_per_param, plus the copy of the
     parameter back to the GPU at the device's host-to-device rate (with
     its latency): the step and the copy-back are serial in ZeRO-Offload
     without its delayed parameter update, and the GPU waits for both;
   * each gradient is held until its parameter's update (graph.h,
     held_until) and the plan copies it out (a swap-out, on the
     device-to-host stream) right after the backward op that finishes it.
   Approximations, stated in docs/planners.md: the step runs on the
   compute stream (the GPU is idle then, as in ZeRO-Offload, but the model
   cannot overlap the step of early gradients with the rest of backward, and
   no edge makes a parameter's step wait for its gradient's copy); the
   copy-back is time on that stream rather than a copy competing with
   others on the link. */
#include <stdio.h>
#include <string.h>

#include "lib/arena.h"
#include "lib/swap_util.h"

/* adam_s_per_param's default: DeepSpeed PR #735 (R. Yazdani Aminabadi,
   2021) reports CPU-Adam's optimizer step for an 11.6B-parameter GPT-2 at
   8.2 s (torch.optim.Adam: 56 s): 8.2 / 11.6e9 = 7.07e-10 s per parameter. */
static const param_def zero_offload_params[] = {
    {"adam_s_per_param", PT_FLOAT, "7.07e-10", "CPU optimizer step time per parameter, "
     "seconds (default: DeepSpeed's CPU-Adam, 8.2 s for 11.6B parameters, DeepSpeed PR 735)",
     NULL, 0, 1},
    {"allocator", PT_CHOICE, "best-fit", "address allocator placing the plan",
     "first-fit|best-fit", 1, 0},
    {"alignment", PT_SIZE, "1", "placement alignment in bytes", NULL, 1, 1e9},
    PARAM_END};

/* Elements of tensor t: its shape's, else its bytes at its dtype's size
   (2 bytes if unknown: a 16-bit model). */
static double elements(const graph_tensor *t)
{
    if (t->n_shape > 0) {
        double e = 1;
        for (int32_t i = 0; i < t->n_shape; i++)
            e *= (double)t->shape[i];
        return e;
    }
    int es = t->dtype && (!strcmp(t->dtype, "fp32") || !strcmp(t->dtype, "float32")) ? 4 : 2;
    return (double)t->bytes / es;
}

/* The gradients the optimizer step reads (grad[s] for storage s, n_tensors
   entries): the non-persistent storages an update op reads that are tagged
   gradients, or that a backward op made (an imported trace's .grad
   tensors, made by AccumulateGrad, are activations to the importer). A
   persistent gradient (a .grad buffer living across iterations) stays on
   the GPU, read by the step as before. Returns the largest input or
   mutation count of an update op. */
static int32_t find_gradients(const graph_profile *g, uint8_t *grad)
{
    int32_t most = 1;
    for (int32_t o = 0; o < g->n_ops; o++) {
        const graph_op *op = &g->ops[o];
        if (op->phase != GP_UPDATE)
            continue;
        most = SW_MAX(most, SW_MAX(op->n_in, op->n_mut));
        for (int32_t k = 0; k < op->n_in; k++) {
            int32_t x = op->in[k], st = g->tensors[x].storage, p = g->tensors[st].producer;
            if (!g->tensors[st].persistent &&
                (g->tensors[x].kind == GK_GRADIENT || (p >= 0 && g->ops[p].phase == GP_BACKWARD)))
                grad[st] = 1;
        }
    }
    return most;
}

/* The rewritten profile (above) in *out. */
static int rewrite(const graph_profile *g, double s_per_param, graph_profile **out,
                   sw_err *err)
{
    graph_profile *h = graph_new(g->name, &g->device);
    uint8_t *grad = sw_calloc((size_t)g->n_tensors + 1, 1);
    int32_t most = grad ? find_gradients(g, grad) : 0;
    int32_t *in = sw_malloc((size_t)most * sizeof *in), *mut = sw_malloc((size_t)most * sizeof *mut);
    if (!h || !grad || !in || !mut) {
        graph_free(h);
        sw_free(grad);
        sw_free(in);
        sw_free(mut);
        return sw_fail(err, SW_ENOMEM, "out of memory");
    }
    h->batch = g->batch;
    int bad = graph_set_str(&h->prov.source, g->prov.source) ||
              graph_set_str(&h->prov.tool, g->prov.tool) ||
              graph_set_str(&h->prov.file, g->prov.file) ||
              graph_set_str(&h->prov.device, g->prov.device) ||
              graph_set_str(&h->prov.cost_model, g->prov.cost_model) ||
              graph_set_str(&h->prov.notes, "rewritten by the zero-offload planner: optimizer "
                            "steps on the host (cpu_adam_update), states off the GPU");
    for (int32_t t = 0; t < g->n_tensors && !bad; t++) {
        const graph_tensor *x = &g->tensors[t];
        int32_t id = graph_add_tensor(h, x->name, x->bytes, grad[t] ? GK_GRADIENT : x->kind,
                                      x->persistent);
        bad = id != t || ((x->n_shape || x->dtype) &&
                          graph_tensor_shape(h, t, x->shape, x->n_shape, x->dtype));
        if (!bad) {
            h->tensors[t].view_of = x->view_of;
            h->tensors[t].held_until = x->held_until;
        }
    }
    for (int32_t o = 0; o < g->n_ops && !bad; o++) {
        const graph_op *op = &g->ops[o];
        int32_t id;
        if (op->phase != GP_UPDATE) {
            id = graph_add_op(h, op->name, op->type, op->time_s, op->phase, op->in, op->n_in,
                              op->out, op->n_out, op->mut, op->n_mut, op->workspace_bytes);
            for (int32_t k = 0; k < op->n_attr && id == o; k++)
                bad |= graph_op_attr(h, o, op->attr[k].key, op->attr[k].value);
            bad |= id != o;
            continue;
        }
        /* the host step: keep non-gradient inputs and the parameters it updates */
        int32_t ni = 0, nm = 0;
        double t = 0;
        for (int32_t k = 0; k < op->n_in; k++) {
            int32_t x = op->in[k], st = g->tensors[x].storage;
            if (grad[st])
                h->tensors[st].held_until = o;
            else if (g->tensors[x].kind == GK_OPTIMIZER_STATE)
                continue; /* in host memory: SGD's momentum buffers, read by the step */
            else
                in[ni++] = x;
        }
        for (int32_t k = 0; k < op->n_mut; k++) {
            int32_t x = op->mut[k];
            if (g->tensors[x].kind == GK_OPTIMIZER_STATE)
                continue;
            mut[nm++] = x;
            if (g->tensors[x].kind == GK_PARAMETER)
                t += elements(&g->tensors[x]) * s_per_param +
                     g->device.copy_latency_s + (double)g->tensors[x].bytes / g->device.h2d_bw;
        }
        id = graph_add_op(h, op->name, "cpu_adam_update", t, GP_UPDATE, in, ni, op->out,
                          op->n_out, mut, nm, 0);
        bad |= id != o;
    }
    sw_free(grad);
    sw_free(in);
    sw_free(mut);
    sw_err e2;
    if (bad) {
        graph_free(h);
        return sw_fail(err, SW_ENOMEM, "out of memory");
    }
    if (graph_finish(h, &e2, NULL, NULL)) {
        graph_free(h);
        return sw_fail(err, SW_EINVAL, "zero-offload: the rewritten profile is invalid (%s)",
                       e2.msg);
    }
    *out = h;
    return 0;
}

static int plan_zero_offload(const graph_profile *g, const planner_opts *o, plan **out,
                             sw_err *err)
{
    const param_set *ps = &o->params;
    int64_t cap = o->memory_budget - g->max_workspace;
    if (cap <= 0)
        return sw_fail(err, SW_ENOFIT, "does not fit: the budget does not cover the largest op "
                       "workspace (%lld bytes)", (long long)g->max_workspace);
    graph_profile *h = NULL;
    int rc = rewrite(g, params_float(ps, "adam_s_per_param"), &h, err);
    if (rc)
        return rc;
    int32_t nt = h->n_tensors, no = h->n_ops;
    int32_t *last_bwd = sw_malloc(((size_t)nt + 1) * sizeof *last_bwd);
    uint8_t *res = sw_calloc((size_t)nt + 1, 1);
    plan_builder *b = arena_builder(h, o, NULL);
    swu u;
    memset(&u, 0, sizeof u);
    if (!last_bwd || !res || !b || swu_init(&u, h, NULL)) {
        rc = sw_fail(err, SW_ENOMEM, "out of memory");
        goto done;
    }
    /* resident at the start: the persistent storages a GPU op touches (not
       the optimizer states, in host memory); each gradient's last backward
       access, after which it is copied out */
    for (int32_t s = 0; s < nt; s++)
        last_bwd[s] = -1;
    for (int32_t i = 0; i < no; i++) {
        int32_t op = h->order[i];
        for (int32_t k = h->acc_off[op]; k < h->acc_off[op + 1]; k++) {
            int32_t s = h->acc[k];
            if (h->tensors[s].persistent)
                res[s] = 1;
            if (h->ops[op].phase == GP_BACKWARD && h->tensors[s].kind == GK_GRADIENT &&
                !h->tensors[s].persistent)
                last_bwd[s] = i;
        }
    }
    swu_begin(&u, b, res, INT64_MAX);
    int32_t n_grads = 0;
    int64_t grad_bytes = 0;
    for (int32_t i = 0; i < no; i++) {
        int32_t op = u.order[i];
        for (int32_t k = h->acc_off[op]; k < h->acc_off[op + 1]; k++) {
            int32_t s = h->acc[k];
            if (!(h->acc_flag[k] & GA_CREATE) && !u.res[s])
                swu_swap_in(&u, s);
        }
        swu_run(&u, i);
        for (int32_t k = h->acc_off[op]; k < h->acc_off[op + 1]; k++) {
            int32_t s = h->acc[k];
            if (last_bwd[s] == i && u.res[s] && h->tensors[s].held_until >= 0) {
                swu_evict(&u, s);
                n_grads++;
                grad_bytes += h->tensors[s].bytes;
            }
        }
    }
    int64_t peak = u.peak, kept = 0;
    for (int32_t s = 0; s < nt; s++)
        kept += res[s] ? h->tensors[s].bytes : 0;
    sw_err e2;
    rc = swu_finish(&u, out, &e2);
    if (rc == SW_ENOFIT) {
        char h1[32], h2[32], h3[32];
        rc = sw_fail(err, SW_ENOFIT, "does not fit: zero-offload keeps the parameters and "
                     "activations on the GPU: %s of tensors at the peak (%lld bytes, %s of them "
                     "persistent on the GPU), the budget leaves %s (%lld bytes)%s%s",
                     sw_fmt_bytes(peak, h1, sizeof h1), (long long)peak,
                     sw_fmt_bytes(kept, h3, sizeof h3), sw_fmt_bytes(cap, h2, sizeof h2),
                     (long long)cap, peak <= cap ? ", and the allocator fragments memory: " : "",
                     peak <= cap ? e2.msg : "");
    } else if (rc) {
        if (err)
            *err = e2;
    } else {
        char note[240];
        snprintf(note, sizeof note, "zero-offload: %d gradients (%lld bytes) copied to the host, "
                 "optimizer steps on the host (%.3g s per parameter), peak %lld bytes of tensors",
                 n_grads, (long long)grad_bytes, params_float(ps, "adam_s_per_param"),
                 (long long)peak);
        if (plan_set_notes(*out, note)) {
            plan_free(*out);
            *out = NULL;
            rc = sw_fail(err, SW_ENOMEM, "out of memory");
        } else {
            (*out)->owns_prof = 1; /* the rewritten profile goes with the plan */
            h = NULL;
        }
    }
done:
    swu_free(&u);
    pb_free(b);
    sw_free(last_bwd);
    sw_free(res);
    graph_free(h);
    return rc;
}

const planner planner_zero_offload = {
    1, "zero-offload", "ZeRO-Offload: optimizer states and the optimizer step on the host "
    "(CPU-Adam time model), gradients copied out during backward, parameters back after the "
    "step", zero_offload_params, plan_zero_offload, 0};
