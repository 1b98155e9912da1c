/* autograd.c: backward and update generation from a recorded forward pass. */
#include "autograd.h"
#include "opattr.h"

#include <stdio.h>
#include <string.h>

int ag_init(ag_graph *a, const char *name, const dev_spec *dev)
{
    memset(a, 0, sizeof *a);
    a->g = graph_new(name, dev);
    if (!a->g)
        return SW_ENOMEM;
    a->update_bytes_per_s = dev && dev->mem_bw > 0 ? dev->mem_bw * 0.8 : 500e9;
    a->launch_s = dev ? dev->launch_overhead_s : 0;
    return 0;
}

void ag_release(ag_graph *a)
{
    for (int32_t i = 0; i < a->n_fwd; i++)
        sw_free(a->fwd[i].bwd_type);
    sw_free(a->fwd);
    graph_free(a->g);
    memset(a, 0, sizeof *a);
}

int32_t ag_input(ag_graph *a, const char *name, int64_t bytes)
{
    return graph_add_tensor(a->g, name, bytes, GK_INPUT, 1);
}

int32_t ag_param(ag_graph *a, const char *name, int64_t bytes)
{
    return graph_add_tensor(a->g, name, bytes, GK_PARAMETER, 1);
}

static int record(ag_graph *a, int32_t op, uint32_t save, double bwd, int64_t ws, const char *bt)
{
    if (SW_GROW(a->fwd, a->fcap, (size_t)a->n_fwd + 1))
        return -1;
    ag_fwd *f = &a->fwd[a->n_fwd++];
    f->op = op;
    f->save = save;
    f->bwd_time_s = bwd;
    f->bwd_workspace = ws;
    f->bwd_type = bt ? sw_strdup(bt) : NULL;
    return 0;
}

int32_t ag_op(ag_graph *a, const char *name, const char *type, double fwd_time_s,
              double bwd_time_s, const int32_t *in, int n_in, const int64_t *out_bytes,
              int n_out, int32_t *out_ids, uint32_t save, int64_t workspace)
{
    int32_t outs[16];
    if (n_out > 16)
        return -1;
    for (int i = 0; i < n_out; i++) {
        char tn[160];
        snprintf(tn, sizeof tn, n_out == 1 ? "%s" : "%s:%d", name, i);
        outs[i] = graph_add_tensor(a->g, tn, out_bytes[i], GK_ACTIVATION, 0);
        if (outs[i] < 0)
            return -1;
        if (out_ids)
            out_ids[i] = outs[i];
    }
    int32_t op = graph_add_op(a->g, name, type, fwd_time_s + a->launch_s, GP_FORWARD, in, n_in,
                              outs, n_out, NULL, 0, workspace);
    if (op < 0 || record(a, op, save, bwd_time_s + a->launch_s, workspace, NULL))
        return -1;
    return op;
}

int32_t ag_view(ag_graph *a, const char *name, int32_t base, int64_t bytes)
{
    int32_t v = graph_add_tensor(a->g, name, bytes, GK_ACTIVATION, 0);
    if (v < 0)
        return -1;
    a->g->tensors[v].view_of = base;
    int32_t op = graph_add_op(a->g, name, OT_VIEW, 0, GP_FORWARD, &base, 1, &v, 1, NULL, 0, 0);
    if (op < 0 || record(a, op, 0, 0, 0, OT_VIEW OT_BACKWARD_SUFFIX))
        return -1;
    return v;
}

int ag_parse_optimizer(const char *s, ag_optimizer *out)
{
    if (!strcmp(s, "sgd"))
        *out = AG_SGD;
    else if (!strcmp(s, "momentum"))
        *out = AG_MOMENTUM;
    else if (!strcmp(s, "adam"))
        *out = AG_ADAM;
    else
        return SW_EINVAL;
    return 0;
}

static int finish(ag_graph *a, graph_profile **out, sw_err *err)
{
    int rc = graph_finish(a->g, err, NULL, NULL);
    if (rc) {
        ag_release(a);
        return rc;
    }
    *out = a->g;
    a->g = NULL;
    ag_release(a);
    return 0;
}

int ag_finish_inference(ag_graph *a, graph_profile **out, sw_err *err)
{
    return finish(a, out, err);
}

static int requires_grad(const graph_profile *g, int32_t t)
{
    int k = g->tensors[t].kind;
    return k == GK_PARAMETER || k == GK_ACTIVATION;
}

/* The backward op's attributes: the forward's dimensions (not its FLOPs/bytes:
   the forward's bwd_flops become its flops), its forward op and where the
   gradients go (validate/libmap.c finds its operands with them). 0 or
   SW_ENOMEM. */
static int bwd_attrs(graph_profile *g, int32_t fop, int32_t bop, uint32_t grad_new,
                     uint32_t grad_acc)
{
    for (int32_t k = 0; k < g->ops[fop].n_attr; k++) {
        const graph_attr *at = &g->ops[fop].attr[k];
        const char *key = at->key;
        if (!strcmp(key, OA_FLOPS) || !strcmp(key, OA_BYTES))
            continue;
        if (!strcmp(key, OA_BWD_FLOPS))
            key = OA_FLOPS;
        if (graph_op_attr(g, bop, key, at->value))
            return SW_ENOMEM;
    }
    if (graph_op_attr(g, bop, OA_FWD_OP, (double)fop) ||
        graph_op_attr(g, bop, OA_GRAD_NEW, (double)grad_new) ||
        graph_op_attr(g, bop, OA_GRAD_ACC, (double)grad_acc))
        return SW_ENOMEM;
    return 0;
}

/* The backward op of the recorded forward fw (none when its outputs do not
   reach the loss); grad (per tensor of the forward graph: its gradient
   tensor, -1) gains the gradients it makes. 0, SW_EINVAL (reported) or
   SW_ENOMEM. */
static int add_backward(ag_graph *a, const ag_fwd *fw, int32_t loss, int32_t *grad, sw_err *err)
{
    graph_profile *g = a->g;
    /* copy what we need: adding tensors/ops may move g->ops */
    int32_t n_in = g->ops[fw->op].n_in, n_out = g->ops[fw->op].n_out;
    int32_t fin[64], fout[16];
    if (n_in > 64 || n_out > 16)
        return sw_fail(err, SW_EINVAL, "op '%s' has too many inputs or outputs for autograd",
                       g->ops[fw->op].name);
    memcpy(fin, g->ops[fw->op].in, (size_t)n_in * sizeof *fin);
    memcpy(fout, g->ops[fw->op].out, (size_t)n_out * sizeof *fout);
    char name[200], type[96];
    snprintf(name, sizeof name, "%s_bwd", g->ops[fw->op].name);
    if (fw->bwd_type)
        snprintf(type, sizeof type, "%s", fw->bwd_type);
    else
        snprintf(type, sizeof type, "%s" OT_BACKWARD_SUFFIX, g->ops[fw->op].type);
    int32_t bin[96], bout[64], bmut[64];
    int nbin = 0, nbout = 0, nbmut = 0;
    int is_loss_op = 0, any_grad = 0;
    for (int32_t k = 0; k < n_out; k++) {
        if (fout[k] == loss)
            is_loss_op = 1;
        if (grad[fout[k]] >= 0) {
            bin[nbin++] = grad[fout[k]];
            any_grad = 1;
        }
    }
    if (!is_loss_op && !any_grad)
        return 0; /* outputs do not reach the loss: no backward */
    for (int32_t k = 0; k < n_in && k < 24; k++) /* AG_SAVE_IN covers inputs 0..23 */
        if (fw->save & AG_SAVE_IN(k))
            bin[nbin++] = fin[k];
    if (fw->save & AG_SAVE_OUT)
        for (int32_t k = 0; k < n_out; k++)
            bin[nbin++] = fout[k];
    int is_view = g->ops[fw->op].n_out == 1 && g->tensors[fout[0]].view_of == fin[0];
    double extra_time = 0;
    uint32_t grad_new = 0, grad_acc = 0; /* OA_GRAD_NEW / OA_GRAD_ACC */
    for (int32_t k = 0; k < n_in; k++) {
        int32_t x = fin[k];
        if (!requires_grad(g, x))
            continue;
        /* the same tensor twice among inputs: one gradient output */
        int dup = 0;
        for (int32_t j = 0; j < k; j++)
            dup |= fin[j] == x;
        if (dup)
            continue;
        if (grad[x] >= 0) {
            bmut[nbmut++] = grad[x]; /* accumulate in place */
            if (k < OA_GRAD_BITS)
                grad_acc |= 1u << k;
            if (is_view)
                extra_time += (double)g->tensors[x].bytes / a->update_bytes_per_s;
            continue;
        }
        char gn[200];
        snprintf(gn, sizeof gn, "grad:%s", g->tensors[x].name);
        int kind = g->tensors[x].kind == GK_PARAMETER ? GK_GRADIENT : GK_GRADIENT;
        int32_t gt = graph_add_tensor(g, gn, g->tensors[x].bytes, kind, 0);
        if (gt < 0)
            return SW_ENOMEM;
        if (is_view && nbin > 0)
            g->tensors[gt].view_of = bin[0]; /* grad of a view's base views the grad */
        grad[x] = gt;
        bout[nbout++] = gt;
        if (k < OA_GRAD_BITS)
            grad_new |= 1u << k;
    }
    double t = fw->bwd_time_s + extra_time;
    if (is_view && extra_time == 0)
        t = 0;
    int32_t bop = graph_add_op(g, name, type, t, GP_BACKWARD, bin, nbin, bout, nbout, bmut,
                               nbmut, fw->bwd_workspace);
    if (bop < 0)
        return SW_ENOMEM;
    return bwd_attrs(g, fw->op, bop, grad_new, grad_acc);
}

/* The optimizer's update of parameter t from its gradient gin, with its state
   tensors (a master copy, momentum, Adam's second moment). 0 or SW_ENOMEM. */
static int add_update(ag_graph *a, int32_t t, int32_t gin, ag_optimizer opt)
{
    graph_profile *g = a->g;
    int32_t mut[4] = {t, -1, -1, -1};
    int nm = 1;
    int64_t bytes = g->tensors[t].bytes;
    int64_t sbytes = bytes * (a->state_mult > 0 ? a->state_mult : 1);
    const char *type = "sgd_update";
    if (a->master_copy) {
        char sn[200];
        snprintf(sn, sizeof sn, "%s:master", g->tensors[t].name);
        mut[nm] = graph_add_tensor(g, sn, sbytes, GK_OPTIMIZER_STATE, 1);
        if (mut[nm++] < 0)
            return SW_ENOMEM;
    }
    if (opt != AG_SGD) {
        char sn[200];
        snprintf(sn, sizeof sn, "%s:m", g->tensors[t].name);
        mut[nm] = graph_add_tensor(g, sn, sbytes, GK_OPTIMIZER_STATE, 1);
        if (mut[nm++] < 0)
            return SW_ENOMEM;
        type = "momentum_update";
    }
    if (opt == AG_ADAM) {
        char sn[200];
        snprintf(sn, sizeof sn, "%s:v", g->tensors[t].name);
        mut[nm] = graph_add_tensor(g, sn, sbytes, GK_OPTIMIZER_STATE, 1);
        if (mut[nm++] < 0)
            return SW_ENOMEM;
        type = "adam_update";
    }
    /* bytes moved: read grad, read+write param and each state tensor */
    double moved = (double)bytes * 3 + 2.0 * (double)sbytes * (nm - 1);
    char name[200];
    snprintf(name, sizeof name, "update:%s", g->tensors[t].name);
    if (graph_add_op(g, name, type, moved / a->update_bytes_per_s + a->launch_s, GP_UPDATE,
                     &gin, 1, NULL, 0, mut, nm, 0) < 0)
        return SW_ENOMEM;
    return 0;
}

int ag_finish_training(ag_graph *a, int32_t loss, ag_optimizer opt, graph_profile **out,
                       sw_err *err)
{
    graph_profile *g = a->g;
    int32_t nt0 = g->n_tensors;
    int32_t *grad = sw_malloc(((size_t)nt0 + 1) * sizeof *grad);
    if (!grad) {
        ag_release(a);
        return sw_fail(err, SW_ENOMEM, "out of memory");
    }
    for (int32_t t = 0; t < nt0; t++)
        grad[t] = -1;
    int rc = 0;
    /* backward in reverse recording order */
    for (int32_t f = a->n_fwd - 1; f >= 0 && !rc; f--)
        rc = add_backward(a, &a->fwd[f], loss, grad, err);
    /* updates, in parameter order */
    for (int32_t t = 0; t < nt0 && !rc; t++)
        if (g->tensors[t].kind == GK_PARAMETER && grad[t] >= 0)
            rc = add_update(a, t, grad[t], opt);
    sw_free(grad);
    if (!rc)
        return finish(a, out, err);
    ag_release(a);
    if (rc == SW_ENOMEM)
        rc = sw_fail(err, SW_ENOMEM, "out of memory while building the backward pass");
    return rc;
}
