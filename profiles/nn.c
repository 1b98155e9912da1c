/* nn.c: layers of the model generators on top of autograd and the cost model. */
#include "nn.h"
#include "opattr.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int nn_init(nn_net *n, const char *name, const dev_spec *dev, int fp16, int64_t batch)
{
    memset(n, 0, sizeof *n);
    n->dev = *dev;
    if (ag_init(&n->a, name, &n->dev))
        return SW_ENOMEM;
    cm_init(&n->cm, &n->dev, fp16);
    n->batch = batch;
    n->a.g->batch = batch;
    n->dtype = fp16 ? "fp16" : "fp32";
    /* autograd adds launch_s to every operator it records and times updates
       at update_bytes_per_s; both come from the cost model's table, and
       layer times below are passed without their first launch */
    n->a.launch_s = dev->launch_overhead_s;
    n->a.update_bytes_per_s = dev->mem_bw * cm_constants(CM_UPDATE)->eff_bw;
    return 0;
}

void nn_release(nn_net *n) { ag_release(&n->a); }

void nn_scope(nn_net *n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(n->scope, sizeof n->scope, fmt, ap);
    va_end(ap);
}

int64_t nn_numel(nn_t x)
{
    int64_t e = 1;
    for (int i = 0; i < x.nd; i++)
        e *= x.d[i];
    return e;
}

static nn_t shape(int nd, const int64_t *d)
{
    nn_t t;
    memset(&t, 0, sizeof t);
    t.id = -1;
    t.nd = nd;
    for (int i = 0; i < nd && i < NN_MAXD; i++)
        t.d[i] = d[i];
    return t;
}

static nn_t shape4(int64_t a, int64_t b, int64_t c, int64_t d)
{
    int64_t v[4] = {a, b, c, d};
    return shape(4, v);
}

static void opname(nn_net *n, char *buf, size_t len, const char *name)
{
    if (n->scope[0])
        snprintf(buf, len, "%s.%s", n->scope, name);
    else
        snprintf(buf, len, "%s", name);
}

static void set_shape(nn_net *n, int32_t t, const nn_t *s, const char *dtype)
{
    if (t < 0)
        return;
    if (graph_tensor_shape(n->a.g, t, s->d, s->nd, dtype))
        n->failed = 1;
}

nn_t nn_input(nn_net *n, const char *name, int nd, const int64_t *d)
{
    nn_t x = shape(nd, d);
    x.id = ag_input(&n->a, name, nn_numel(x) * n->cm.esize);
    if (x.id < 0)
        n->failed = 1;
    else
        set_shape(n, x.id, &x, n->dtype);
    return x;
}

int32_t nn_param(nn_net *n, const char *name, int64_t elems)
{
    char nm[160];
    opname(n, nm, sizeof nm, name);
    int32_t p = ag_param(&n->a, nm, elems * n->cm.esize);
    if (p < 0)
        n->failed = 1;
    else {
        int64_t d = elems;
        if (graph_tensor_shape(n->a.g, p, &d, 1, n->dtype))
            n->failed = 1;
    }
    return p;
}

/* Attributes of an operator, as key/value pairs ending with NULL. */
static void attrs(nn_net *n, int32_t op, ...)
{
    va_list ap;
    va_start(ap, op);
    const char *k;
    while ((k = va_arg(ap, const char *)) != NULL) {
        double v = va_arg(ap, double);
        if (graph_op_attr(n->a.g, op, k, v))
            n->failed = 1;
    }
    va_end(ap);
}

/* Record one forward op with outputs of the given shapes. The cost's times
   include every launch; autograd adds the first one itself. */
static int32_t rec_x(nn_net *n, const char *name, const char *type, const cm_cost *c,
                     const int32_t *in, int n_in, nn_t *outs, int n_out, uint32_t save,
                     const int64_t *esizes, const char *const *dtypes)
{
    if (n->failed)
        return -1;
    char nm[160];
    opname(n, nm, sizeof nm, name);
    int64_t bytes[16];
    int32_t ids[16];
    for (int i = 0; i < n_out && i < 16; i++)
        bytes[i] = nn_numel(outs[i]) * (esizes ? esizes[i] : n->cm.esize);
    double lat = n->dev.launch_overhead_s;
    double f = c->fwd_s - lat, b = c->bwd_s - lat;
    int32_t op = ag_op(&n->a, nm, type, f > 0 ? f : 0, b > 0 ? b : 0, in, n_in, bytes, n_out, ids,
                       save, 0);
    if (op < 0) {
        n->failed = 1;
        return -1;
    }
    for (int i = 0; i < n_out; i++) {
        outs[i].id = ids[i];
        set_shape(n, ids[i], &outs[i], dtypes ? dtypes[i] : n->dtype);
    }
    attrs(n, op, OA_FLOPS, c->flops, OA_BYTES, c->bytes, OA_BWD_FLOPS, c->bwd_flops,
          (const char *)NULL);
    return op;
}

static int32_t rec(nn_net *n, const char *name, const char *type, const cm_cost *c,
                   const int32_t *in, int n_in, nn_t *outs, int n_out, uint32_t save)
{
    return rec_x(n, name, type, c, in, n_in, outs, n_out, save, NULL, NULL);
}

static int needs_dx(nn_net *n, nn_t x)
{
    return x.id >= 0 && n->a.g->tensors[x.id].kind != GK_INPUT;
}

/* Batch norm (+ReLU) on y, its scale and shift living in parameter p. */
static nn_t batchnorm(nn_net *n, const char *name, nn_t y, int32_t p, int relu)
{
    double e = (double)nn_numel(y);
    cm_cost c;
    /* forward: statistics pass + normalise pass; backward: reads x and dy
       twice (reductions, then dx), plus the output for the ReLU mask */
    cm_simple(&n->cm, CM_NORM, 2 * e, e, 8, relu ? 4 * e : 3 * e, e, &c);
    nn_t z = y;
    char nm[128];
    snprintf(nm, sizeof nm, "%s.bn", name);
    int32_t in[2] = {y.id, p};
    int32_t op = rec(n, nm, relu ? OT_BATCHNORM_RELU : OT_BATCHNORM, &c, in, 2, &z, 1,
                     AG_SAVE_IN(0) | AG_SAVE_IN(1) | (relu ? AG_SAVE_OUT : 0));
    if (op >= 0)
        attrs(n, op, OA_N, (double)y.d[0], OA_C, (double)y.d[1], OA_H, (double)y.d[2], OA_W,
              (double)y.d[3], (const char *)NULL);
    return z;
}

nn_t nn_bn(nn_net *n, const char *name, nn_t x, int relu)
{
    char pn[128];
    snprintf(pn, sizeof pn, "%s.w", name);
    int32_t p = nn_param(n, pn, 2 * x.d[1]);
    return batchnorm(n, name, x, p, relu);
}

nn_t nn_conv(nn_net *n, const char *name, nn_t x, int64_t k, int r, int s, int stride, int pad_h,
             int pad_w, int groups, int flags)
{
    int64_t N = x.d[0], C = x.d[1], H = x.d[2], W = x.d[3];
    int64_t ho = (H + 2 * pad_h - r) / stride + 1, wo = (W + 2 * pad_w - s) / stride + 1;
    if (groups < 1)
        groups = 1;
    int64_t welems = k * (C / groups) * r * s + ((flags & NN_BIAS) ? k : 0) +
                     ((flags & NN_BN) ? 2 * k : 0) + ((flags & NN_PRE_BN) ? 2 * C : 0);
    char pn[128];
    snprintf(pn, sizeof pn, "%s.w", name);
    int32_t p = nn_param(n, pn, welems);
    if (flags & NN_PRE_BN) {
        char bn[128];
        snprintf(bn, sizeof bn, "%s.pre", name);
        x = batchnorm(n, bn, x, p, 1);
    }
    cm_cost c;
    cm_conv(&n->cm, N, C, H, W, k, r, s, groups, ho, wo, needs_dx(n, x), &c);
    if (flags & NN_PRE_RELU) { /* ReLU on the input: one more pass over it */
        double extra = (double)nn_numel(x) * (double)n->cm.esize;
        c.fwd_s += extra / (n->dev.mem_bw * cm_constants(CM_ELEMWISE)->eff_bw);
        c.bwd_s += 2 * extra / (n->dev.mem_bw * cm_constants(CM_ELEMWISE)->eff_bw);
    }
    nn_t y = shape4(N, k, ho, wo);
    int32_t in[2] = {x.id, p};
    const char *type = (flags & NN_PRE_RELU) ? OT_RELU_CONV2D : OT_CONV2D;
    if (groups > 1 && groups == C)
        type = (flags & NN_PRE_RELU) ? OT_RELU_DWCONV2D : OT_DWCONV2D;
    int32_t op = rec(n, name, type, &c, in, 2, &y, 1, AG_SAVE_IN(0) | AG_SAVE_IN(1));
    if (op >= 0)
        attrs(n, op, OA_N, (double)N, OA_C, (double)C, OA_H, (double)H, OA_W, (double)W, OA_K,
              (double)k, OA_R, (double)r, OA_S, (double)s, OA_STRIDE, (double)stride, OA_PAD,
              (double)pad_h, OA_PAD_W, (double)pad_w, OA_GROUPS, (double)groups, OA_HO, (double)ho,
              OA_WO, (double)wo, (const char *)NULL);
    if (flags & NN_BN)
        return batchnorm(n, name, y, p, flags & NN_RELU);
    if (flags & NN_RELU)
        return nn_unary(n, name, "relu", y, 1);
    return y;
}

nn_t nn_convs(nn_net *n, const char *name, nn_t x, int64_t k, int r, int stride, int flags)
{
    return nn_conv(n, name, x, k, r, r, stride, r / 2, r / 2, 1, flags);
}

nn_t nn_sepconv(nn_net *n, const char *name, nn_t x, int64_t k, int r, int stride, int flags)
{
    int64_t N = x.d[0], C = x.d[1], H = x.d[2], W = x.d[3];
    int pad = r / 2;
    int64_t ho = (H + 2 * pad - r) / stride + 1, wo = (W + 2 * pad - r) / stride + 1;
    int64_t welems = C * r * r + C * k + ((flags & NN_BN) ? 2 * k : 0);
    char pn[128];
    snprintf(pn, sizeof pn, "%s.w", name);
    int32_t p = nn_param(n, pn, welems);
    cm_cost dw, pw;
    int dx = needs_dx(n, x);
    cm_conv(&n->cm, N, C, H, W, C, r, r, C, ho, wo, dx, &dw);
    cm_conv(&n->cm, N, C, ho, wo, k, 1, 1, 1, ho, wo, 1, &pw);
    cm_cost c = pw;
    c.flops = dw.flops + pw.flops;
    c.bytes = dw.bytes + pw.bytes;
    c.bwd_flops = dw.bwd_flops + pw.bwd_flops;
    c.fwd_s = dw.fwd_s + pw.fwd_s;
    c.bwd_s = dw.bwd_s + pw.bwd_s;
    if (flags & NN_PRE_RELU) {
        double extra = (double)nn_numel(x) * (double)n->cm.esize;
        c.fwd_s += extra / (n->dev.mem_bw * cm_constants(CM_ELEMWISE)->eff_bw);
        c.bwd_s += 2 * extra / (n->dev.mem_bw * cm_constants(CM_ELEMWISE)->eff_bw);
    }
    /* the depthwise output is an internal temporary of the fused operator:
       backward recomputes it (it is small next to the pointwise output) */
    nn_t y = shape4(N, k, ho, wo);
    int32_t in[2] = {x.id, p};
    int32_t op = rec(n, name, (flags & NN_PRE_RELU) ? OT_RELU_SEPCONV2D : OT_SEPCONV2D, &c, in, 2,
                     &y, 1, AG_SAVE_IN(0) | AG_SAVE_IN(1));
    if (op >= 0)
        attrs(n, op, OA_N, (double)N, OA_C, (double)C, OA_H, (double)H, OA_W, (double)W, OA_K,
              (double)k, OA_R, (double)r, OA_S, (double)r, OA_STRIDE, (double)stride, OA_PAD,
              (double)pad, OA_GROUPS, (double)C, OA_HO, (double)ho, OA_WO, (double)wo,
              (const char *)NULL);
    if (flags & NN_BN)
        return batchnorm(n, name, y, p, flags & NN_RELU);
    return y;
}

nn_t nn_pool(nn_net *n, const char *name, nn_t x, int max, int r, int stride, int pad, int flags)
{
    int64_t N = x.d[0], C = x.d[1], H = x.d[2], W = x.d[3];
    int64_t ho = (H + 2 * pad - r) / stride + 1, wo = (W + 2 * pad - r) / stride + 1;
    nn_t y = shape4(N, C, ho, wo);
    double ie = (double)nn_numel(x), oe = (double)nn_numel(y);
    cm_cost c;
    /* backward: max reads dy, x and y and writes dx; average reads dy only */
    cm_simple(&n->cm, CM_POOL, ie, oe, (double)(r * r), max ? 2 * oe + ie : oe, ie, &c);
    uint32_t save = max ? AG_SAVE_IN(0) | AG_SAVE_OUT : 0;
    if (flags & NN_PRE_RELU)
        save |= AG_SAVE_IN(0);
    const char *type = max ? ((flags & NN_PRE_RELU) ? OT_RELU_MAXPOOL2D : OT_MAXPOOL2D)
                           : ((flags & NN_PRE_RELU) ? OT_RELU_AVGPOOL2D : OT_AVGPOOL2D);
    int32_t op = rec(n, name, type, &c, &x.id, 1, &y, 1, save);
    if (op >= 0)
        attrs(n, op, OA_N, (double)N, OA_C, (double)C, OA_H, (double)H, OA_W, (double)W, OA_R,
              (double)r, OA_S, (double)r, OA_STRIDE, (double)stride, OA_PAD, (double)pad, OA_HO,
              (double)ho, OA_WO, (double)wo, (const char *)NULL);
    return y;
}

nn_t nn_gpool(nn_net *n, const char *name, nn_t x)
{
    int64_t d[2] = {x.d[0], x.d[1]};
    nn_t y = shape(2, d);
    double ie = (double)nn_numel(x), oe = (double)nn_numel(y);
    cm_cost c;
    cm_simple(&n->cm, CM_POOL, ie, oe, ie / oe, oe, ie, &c);
    int32_t op = rec(n, name, OT_GLOBAL_AVGPOOL, &c, &x.id, 1, &y, 1, 0);
    if (op >= 0)
        attrs(n, op, OA_N, (double)x.d[0], OA_C, (double)x.d[1], OA_H, (double)x.d[2], OA_W,
              (double)x.d[3], (const char *)NULL);
    return y;
}

nn_t nn_add(nn_net *n, const char *name, nn_t a, nn_t b, int flags)
{
    nn_t y = a;
    double e = (double)nn_numel(a);
    cm_cost c;
    /* backward: dy passes through to both inputs (ReLU: masked by y) */
    cm_simple(&n->cm, CM_ELEMWISE, 2 * e, e, 1, (flags & NN_RELU) ? 2 * e : e, 2 * e, &c);
    int32_t in[2] = {a.id, b.id};
    rec(n, name, (flags & NN_RELU) ? "add_relu" : "add", &c, in, 2, &y, 1,
        (flags & NN_RELU) ? AG_SAVE_OUT : 0);
    return y;
}

nn_t nn_concat(nn_net *n, const char *name, const nn_t *xs, int k, int axis)
{
    nn_t y = xs[0];
    y.d[axis] = 0;
    int32_t in[64];
    if (k > 64) { /* autograd bounds an operator's inputs */
        n->failed = 2;
        return y;
    }
    for (int i = 0; i < k; i++) {
        y.d[axis] += xs[i].d[axis];
        in[i] = xs[i].id;
    }
    double e = (double)nn_numel(y);
    cm_cost c;
    cm_simple(&n->cm, CM_COPY, e, e, 0, e, e, &c);
    int32_t op = rec(n, name, "concat", &c, in, k, &y, 1, 0);
    if (op >= 0)
        attrs(n, op, OA_AXIS, (double)axis, OA_INPUTS, (double)k, (const char *)NULL);
    return y;
}

int nn_split(nn_net *n, const char *name, nn_t x, int k, int axis, nn_t *out)
{
    if (k > 16 || x.d[axis] % k) {
        n->failed = 3;
        return -1;
    }
    for (int i = 0; i < k; i++) {
        out[i] = x;
        out[i].d[axis] = x.d[axis] / k;
    }
    double e = (double)nn_numel(x);
    cm_cost c;
    cm_simple(&n->cm, CM_COPY, e, e, 0, e, e, &c);
    int32_t op = rec(n, name, "split", &c, &x.id, 1, out, k, 0);
    if (op >= 0)
        attrs(n, op, OA_AXIS, (double)axis, OA_OUTPUTS, (double)k, (const char *)NULL);
    return op < 0 ? -1 : 0;
}

static nn_t linear_impl(nn_net *n, const char *name, nn_t x, int32_t w, int64_t out, int bias,
                        int shared)
{
    int64_t K = x.d[x.nd - 1];
    int64_t M = nn_numel(x) / K;
    if (w < 0 && !shared) {
        char pn[128];
        snprintf(pn, sizeof pn, "%s.w", name);
        w = nn_param(n, pn, K * out + (bias ? out : 0));
    }
    cm_cost c;
    cm_matmul(&n->cm, 1, M, out, K, needs_dx(n, x), &c);
    nn_t y = x;
    y.d[y.nd - 1] = out;
    int32_t in[2] = {x.id, w};
    int32_t op = rec(n, name, OT_LINEAR, &c, in, 2, &y, 1, AG_SAVE_IN(0) | AG_SAVE_IN(1));
    if (op >= 0)
        attrs(n, op, OA_GEMM_M, (double)M, OA_GEMM_N, (double)out, OA_GEMM_K, (double)K,
              OA_GEMM_BATCH, 1.0, (const char *)NULL);
    return y;
}

nn_t nn_linear(nn_net *n, const char *name, nn_t x, int64_t out, int flags)
{
    return linear_impl(n, name, x, -1, out, flags & NN_BIAS, 0);
}

nn_t nn_linear_shared(nn_net *n, const char *name, nn_t x, int32_t w, int64_t out)
{
    return linear_impl(n, name, x, w, out, 0, 1);
}

nn_t nn_bmm(nn_net *n, const char *name, nn_t a, nn_t b, int transpose_b)
{
    int64_t B = a.d[0], M = a.d[1], K = a.d[2];
    int64_t N = transpose_b ? b.d[1] : b.d[2];
    int64_t d[3] = {B, M, N};
    nn_t y = shape(3, d);
    cm_cost c;
    cm_matmul(&n->cm, B, M, N, K, 1, &c);
    int32_t in[2] = {a.id, b.id};
    int32_t op = rec(n, name, OT_BMM, &c, in, 2, &y, 1, AG_SAVE_IN(0) | AG_SAVE_IN(1));
    if (op >= 0)
        attrs(n, op, OA_GEMM_M, (double)M, OA_GEMM_N, (double)N, OA_GEMM_K, (double)K,
              OA_GEMM_BATCH, (double)B, OA_GEMM_TRANS_B, transpose_b ? 1.0 : 0.0,
              (const char *)NULL);
    return y;
}

nn_t nn_unary(nn_net *n, const char *name, const char *type, nn_t x, int save_out)
{
    nn_t y = x;
    double e = (double)nn_numel(x);
    cm_cost c;
    cm_simple(&n->cm, CM_ELEMWISE, e, e, 4, 2 * e, e, &c);
    char nm[128];
    snprintf(nm, sizeof nm, "%s.%s", name, type);
    rec(n, strcmp(name, type) ? nm : name, type, &c, &x.id, 1, &y, 1,
        save_out ? AG_SAVE_OUT : AG_SAVE_IN(0));
    return y;
}

nn_t nn_relu_xy(nn_net *n, const char *name, nn_t x)
{
    nn_t y = x;
    double e = (double)nn_numel(x);
    cm_cost c;
    cm_simple(&n->cm, CM_ELEMWISE, e, e, 1, 3 * e, e, &c);
    char nm[128];
    snprintf(nm, sizeof nm, "%s.relu", name);
    rec(n, nm, "relu", &c, &x.id, 1, &y, 1, AG_SAVE_IN(0) | AG_SAVE_OUT);
    return y;
}

nn_t nn_binary(nn_net *n, const char *name, const char *type, nn_t a, nn_t b)
{
    nn_t y = a;
    double e = (double)nn_numel(a);
    int mul = strcmp(type, "add") != 0;
    cm_cost c;
    cm_simple(&n->cm, CM_ELEMWISE, 2 * e, e, 1, mul ? 3 * e : e, 2 * e, &c);
    int32_t in[2] = {a.id, b.id};
    rec(n, name, type, &c, in, 2, &y, 1, mul ? AG_SAVE_IN(0) | AG_SAVE_IN(1) : 0);
    return y;
}

nn_t nn_layernorm(nn_net *n, const char *name, nn_t x)
{
    int64_t D = x.d[x.nd - 1];
    char pn[128];
    snprintf(pn, sizeof pn, "%s.w", name);
    int32_t p = nn_param(n, pn, 2 * D);
    nn_t y = x;
    double e = (double)nn_numel(x);
    cm_cost c;
    cm_simple(&n->cm, CM_NORM, 2 * e, e, 8, 3 * e, e, &c);
    int32_t in[2] = {x.id, p};
    rec(n, name, "layernorm", &c, in, 2, &y, 1, AG_SAVE_IN(0) | AG_SAVE_IN(1));
    return y;
}

nn_t nn_rmsnorm(nn_net *n, const char *name, nn_t x)
{
    int64_t D = x.d[x.nd - 1];
    char pn[128];
    snprintf(pn, sizeof pn, "%s.w", name);
    int32_t p = nn_param(n, pn, D);
    nn_t y = x;
    double e = (double)nn_numel(x);
    cm_cost c;
    /* one pass for the mean square, one to scale; backward reads x and dy */
    cm_simple(&n->cm, CM_NORM, 2 * e, e, 4, 2 * e, e, &c);
    int32_t in[2] = {x.id, p};
    rec(n, name, "rmsnorm", &c, in, 2, &y, 1, AG_SAVE_IN(0) | AG_SAVE_IN(1));
    return y;
}

nn_t nn_rope(nn_net *n, const char *name, nn_t x)
{
    nn_t y = x;
    double e = (double)nn_numel(x);
    cm_cost c;
    /* the rotation by position: cos/sin tables are recomputed from the
       positions, so backward (the inverse rotation of dy) saves nothing */
    cm_simple(&n->cm, CM_ELEMWISE, e, e, 3, e, e, &c);
    rec(n, name, "rope", &c, &x.id, 1, &y, 1, 0);
    return y;
}

nn_t nn_swiglu(nn_net *n, const char *name, nn_t gate, nn_t up)
{
    nn_t y = gate;
    double e = (double)nn_numel(gate);
    cm_cost c;
    /* silu(gate) * up, one fused kernel; backward reads gate, up and dy */
    cm_simple(&n->cm, CM_ELEMWISE, 2 * e, e, 6, 3 * e, 2 * e, &c);
    int32_t in[2] = {gate.id, up.id};
    rec(n, name, "swiglu", &c, in, 2, &y, 1, AG_SAVE_IN(0) | AG_SAVE_IN(1));
    return y;
}

nn_t nn_flash_attention(nn_net *n, const char *name, nn_t q, nn_t k, nn_t v, int64_t batch,
                        int64_t seq, int64_t heads, int causal)
{
    int64_t D = q.d[q.nd - 1], hd = D / heads;
    double b = (double)batch, s = (double)seq, h = (double)D;
    /* QK^T and PV: 2 * 2 * b * s^2 * h FLOPs over the full square; a causal
       kernel skips the tiles above the diagonal (half). Backward recomputes
       the scores and does five products where the forward does two
       (FlashAttention-2, Dao 2023): 2.5 times the forward's FLOPs. */
    double flops = 4.0 * b * s * s * h * (causal ? 0.5 : 1.0);
    double qkvo = (double)(nn_numel(q) + nn_numel(k) + nn_numel(v) + nn_numel(q));
    double es = (double)n->cm.esize;
    cm_cost c;
    memset(&c, 0, sizeof c);
    c.kind = CM_MATMUL;
    c.flops = flops;
    c.bytes = es * qkvo + 4.0 * b * (double)heads * s;
    c.bwd_flops = 2.5 * flops;
    c.fwd.kind = c.bwd.kind = CM_MATMUL;
    c.fwd.flops = flops;
    c.fwd.bytes = c.bytes;
    c.fwd.dim = (double)hd;
    c.fwd.kernels = cm_constants(CM_MATMUL)->kernels_fwd;
    c.fwd_s = cm_time(&n->cm, CM_MATMUL, flops, c.bytes, c.fwd.dim, c.fwd.kernels);
    c.bwd.flops = c.bwd_flops;
    c.bwd.bytes = 2.0 * c.bytes; /* reads q, k, v, o, dO, stats; writes dq, dk, dv */
    c.bwd.dim = (double)hd;
    c.bwd.kernels = cm_constants(CM_MATMUL)->kernels_bwd;
    c.bwd_s = cm_time(&n->cm, CM_MATMUL, c.bwd.flops, c.bwd.bytes, c.bwd.dim, c.bwd.kernels);
    /* outputs: o (as q) and the softmax statistics, one fp32 log-sum-exp
       per row and head: O(seq), never the seq x seq scores */
    nn_t outs[2];
    outs[0] = q;
    memset(&outs[1], 0, sizeof outs[1]);
    outs[1].nd = 3;
    outs[1].d[0] = batch;
    outs[1].d[1] = heads;
    outs[1].d[2] = seq;
    int64_t esz[2] = {n->cm.esize, 4};
    const char *dts[2] = {n->dtype, "fp32"};
    int32_t in[3] = {q.id, k.id, v.id};
    int32_t op = rec_x(n, name, "flash_attention", &c, in, 3, outs, 2,
                       AG_SAVE_IN(0) | AG_SAVE_IN(1) | AG_SAVE_IN(2) | AG_SAVE_OUT, esz, dts);
    if (op >= 0)
        attrs(n, op, OA_GEMM_BATCH, b * (double)heads, OA_GEMM_M, s, OA_GEMM_N, s, OA_GEMM_K,
              (double)hd, (const char *)NULL);
    return outs[0];
}

nn_t nn_softmax(nn_net *n, const char *name, nn_t x)
{
    nn_t y = x;
    double e = (double)nn_numel(x);
    cm_cost c;
    cm_simple(&n->cm, CM_SOFTMAX, 2 * e, e, 5, 2 * e, e, &c);
    rec(n, name, OT_SOFTMAX, &c, &x.id, 1, &y, 1, AG_SAVE_OUT);
    return y;
}

nn_t nn_embedding(nn_net *n, const char *name, nn_t ids, int64_t vocab, int64_t dim,
                  int32_t *weight)
{
    char pn[128];
    snprintf(pn, sizeof pn, "%s.w", name);
    int32_t p = nn_param(n, pn, vocab * dim);
    if (weight)
        *weight = p;
    nn_t y = ids;
    y.d[y.nd] = dim;
    y.nd++;
    double e = (double)nn_numel(y);
    cm_cost c;
    /* backward: scatter-add of dy into a dense table gradient (zeroed first) */
    cm_simple(&n->cm, CM_EMBED, e, e, 0, e, e + (double)(vocab * dim), &c);
    int32_t in[2] = {ids.id, p};
    int32_t op = rec(n, name, "embedding", &c, in, 2, &y, 1, AG_SAVE_IN(0));
    if (op >= 0)
        attrs(n, op, OA_VOCAB, (double)vocab, OA_DIM, (double)dim, (const char *)NULL);
    return y;
}

nn_t nn_upsample(nn_net *n, const char *name, nn_t x, int factor)
{
    nn_t y = shape4(x.d[0], x.d[1], x.d[2] * factor, x.d[3] * factor);
    double ie = (double)nn_numel(x), oe = (double)nn_numel(y);
    cm_cost c;
    cm_simple(&n->cm, CM_POOL, ie, oe, 8, oe, ie, &c);
    int32_t op = rec(n, name, "upsample_bilinear2d", &c, &x.id, 1, &y, 1, 0);
    if (op >= 0)
        attrs(n, op, OA_FACTOR, (double)factor, (const char *)NULL);
    return y;
}

nn_t nn_copy(nn_net *n, const char *name, const char *type, nn_t x, int nd, const int64_t *d)
{
    nn_t y = shape(nd, d);
    double ie = (double)nn_numel(x), oe = (double)nn_numel(y);
    cm_cost c;
    cm_simple(&n->cm, CM_COPY, ie, oe, 0, oe, ie, &c);
    rec(n, name, type, &c, &x.id, 1, &y, 1, 0);
    return y;
}

nn_t nn_view(nn_net *n, const char *name, nn_t x, int nd, const int64_t *d)
{
    nn_t y = shape(nd, d);
    if (n->failed)
        return y;
    char nm[160];
    opname(n, nm, sizeof nm, name);
    y.id = ag_view(&n->a, nm, x.id, nn_numel(y) * n->cm.esize);
    if (y.id < 0)
        n->failed = 1;
    else
        set_shape(n, y.id, &y, n->dtype);
    return y;
}

nn_t nn_loss(nn_net *n, const char *name, nn_t logits)
{
    int64_t rows = nn_numel(logits) / logits.d[logits.nd - 1];
    int64_t ld = rows;
    nn_t lab = shape(1, &ld);
    char ln[64];
    snprintf(ln, sizeof ln, "labels");
    lab.id = ag_input(&n->a, ln, rows * 4);
    if (lab.id < 0)
        n->failed = 1;
    else
        set_shape(n, lab.id, &lab, "int32");
    int64_t one = 1;
    nn_t y = shape(1, &one);
    double e = (double)nn_numel(logits);
    cm_cost c;
    cm_simple(&n->cm, CM_SOFTMAX, 2 * e, 1, 5, e, e, &c);
    int32_t in[2] = {logits.id, lab.id};
    rec(n, name, OT_SOFTMAX_CROSS_ENTROPY, &c, in, 2, &y, 1, AG_SAVE_IN(0) | AG_SAVE_IN(1));
    return y;
}

void nn_common_get(const param_set *ps, nn_common *c)
{
    c->batch = params_int(ps, "batch");
    c->fp16 = strcmp(params_str(ps, "dtype"), "fp16") == 0;
    c->inference = params_bool(ps, "inference");
    c->opt = AG_SGD;
    ag_parse_optimizer(params_str(ps, "optimizer"), &c->opt);
}

int nn_finish(nn_net *n, const char *model, const param_set *ps, nn_t loss, const nn_common *c,
              graph_profile **out, sw_err *err)
{
    if (n->failed) {
        int why = n->failed;
        nn_release(n);
        if (why == 2)
            return sw_fail(err, SW_EINVAL, "model %s: a concatenation of more than 64 tensors "
                           "(not supported)", model);
        if (why == 3)
            return sw_fail(err, SW_EINVAL, "model %s: a split into unequal parts (check the "
                           "widths)", model);
        return sw_fail(err, SW_ENOMEM, "out of memory while generating %s", model);
    }
    graph_profile *g = n->a.g;
    sw_buf b, cmb;
    sw_buf_init(&b);
    sw_buf_init(&cmb);
    sw_buf_printf(&b, "swapsim model %s ", model);
    params_to_json(ps, &b);
    cm_describe(&cmb);
    int rc = b.oom || cmb.oom || graph_set_str(&g->prov.source, "generated") ||
             graph_set_str(&g->prov.tool, b.data) || graph_set_str(&g->prov.device, n->dev.name) ||
             graph_set_str(&g->prov.cost_model, cmb.data);
    sw_buf_free(&b);
    sw_buf_free(&cmb);
    if (rc) {
        nn_release(n);
        return sw_fail(err, SW_ENOMEM, "out of memory while generating %s", model);
    }
    if (c->inference)
        rc = ag_finish_inference(&n->a, out, err);
    else
        rc = ag_finish_training(&n->a, loss.id, c->opt, out, err);
    if (rc)
        nn_release(n);
    return rc;
}
