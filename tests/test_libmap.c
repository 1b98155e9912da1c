/* test_libmap.c: the op-to-library matching (validate/libmap.c) and the
   attr vocabulary (profiles/opattr.h): on every generator's models the
   library calls cover >= 95% of the cost model's FLOPs, forward and
   backward, and each op's calls do the FLOPs the cost model counts; hand-
   checked shapes and operands of convolutions, linear layers, batched
   products, batch norm, pooling, softmax and separable convolutions; the
   fallback to a touch kernel; `swapsim profile --dry-run`. */
#include "../common/json.h"
#include "../profiles/calibrate.h"
#include "../profiles/models.h"
#include "../profiles/opattr.h"
#include "../validate/libmap.h"
#include "cli_run.h"
#include "tap.h"

static graph_profile *gen(const char *model, const char *const *kv, int n)
{
    graph_profile *g = NULL;
    sw_err e;
    if (cal_generate(model, kv, n, "v100", &g, &e))
        printf("# generate %s: %s\n", model, e.msg);
    return g;
}

/* The calls of op i (n receives how many; 0 on error). */
static int calls_of(const graph_profile *g, int32_t i, val_call *c)
{
    int n = 0;
    if (lm_match(g, i, c, LM_MAX_CALLS, &n))
        return 0;
    return n;
}

/* The first forward op of the given type after op `after`, or -1. */
static int32_t find_fwd(const graph_profile *g, const char *type, int32_t after)
{
    for (int32_t i = after + 1; i < g->n_ops; i++)
        if (g->ops[i].phase == GP_FORWARD && !strcmp(g->ops[i].type, type))
            return i;
    return -1;
}

/* The backward op of forward op f, or -1. */
static int32_t find_bwd(const graph_profile *g, int32_t f)
{
    for (int32_t i = 0; i < g->n_ops; i++)
        if (g->ops[i].phase == GP_BACKWARD && oa_value(&g->ops[i], OA_FWD_OP, -1) == (double)f)
            return i;
    return -1;
}

static int32_t storage(const graph_profile *g, int32_t t) { return g->tensors[t].storage; }

static const val_call *find_call(const val_call *c, int n, int kind, int nth)
{
    for (int i = 0; i < n; i++)
        if (c[i].kind == kind && nth-- == 0)
            return &c[i];
    return NULL;
}

static int same_nchw(const val_nchw_shape *a, const val_nchw_shape *b)
{
    return a->n == b->n && a->c == b->c && a->h == b->h && a->w == b->w && a->k == b->k &&
           a->ho == b->ho && a->wo == b->wo && a->r == b->r && a->s == b->s &&
           a->stride == b->stride && a->pad_h == b->pad_h && a->pad_w == b->pad_w &&
           a->groups == b->groups && a->max == b->max;
}

static int gemm_is(const val_call *c, int64_t m, int64_t n, int64_t k, int64_t b, int ta, int tb)
{
    return c && c->kind == VAL_CALL_GEMM && c->u.gemm.m == m && c->u.gemm.n == n &&
           c->u.gemm.k == k && c->u.gemm.batch == b && c->u.gemm.trans_a == ta &&
           c->u.gemm.trans_b == tb;
}

/* ---- coverage on every generator ---- */

typedef struct model_case {
    const char *model;
    const char *kv[8];
} model_case;

static const model_case cases[] = {
    {"wresnet", {"depth=50", "width=2", "image=64", "batch=2"}},
    {"wresnet", {"depth=18", "width=4", "image=32", "batch=2", "dtype=fp16"}},
    {"inception", {"batch=2"}},
    {"inception", {"version=3", "aux=true", "batch=2"}},
    {"inception", {"relu=separate", "batch=2"}},
    {"resnet", {"depth=18", "batch=2"}},
    {"resnet", {"depth=20", "batch=4"}},
    {"resnet", {"depth=50", "batch=2", "optimizer=adam"}},
    {"vgg", {"depth=11", "image=64", "batch=2"}},
    {"vgg", {"depth=16", "image=32", "batch=2", "dtype=fp16"}},
    {"transformer", {"layers=2", "hidden=64", "heads=4", "seq=16", "batch=2"}},
    {"transformer", {"layers=1", "hidden=128", "heads=4", "seq=32", "vocab=500", "batch=2"}},
    {"gpt", {"layers=2", "hidden=64", "heads=4", "seq=16", "vocab=1000", "batch=2"}},
    {"gpt", {"layers=2", "hidden=128", "heads=4", "seq=32", "vocab=1000", "batch=2",
             "dropout=true", "dtype=fp16"}},
    {"nasnet", {"repeat=1", "batch=2"}},
    {"densenet", {"batch=2"}},
    {"shufflenet", {"batch=2"}},
    {"unet", {"image_h=64", "image_w=64", "batch=2"}},
    {"rnn", {"hidden=64", "seq=5", "batch=2"}},
    {"brnn", {"hidden=64", "seq=5", "batch=2"}},
    {"brnn", {"layers=2", "hidden=64", "seq=5", "batch=2", "concat=top"}},
};

/* Types the generators make whose ops must all map to library calls. */
static int library_type(const char *type)
{
    static const char *const t[] = {
        OT_CONV2D,         OT_RELU_CONV2D,    OT_DWCONV2D,       OT_RELU_DWCONV2D,
        OT_SEPCONV2D,      OT_RELU_SEPCONV2D, OT_LINEAR,         OT_BMM,
        OT_BATCHNORM,      OT_BATCHNORM_RELU, OT_MAXPOOL2D,      OT_AVGPOOL2D,
        OT_RELU_MAXPOOL2D, OT_RELU_AVGPOOL2D, OT_GLOBAL_AVGPOOL, OT_SOFTMAX};
    size_t n = strlen(type), sl = strlen(OT_BACKWARD_SUFFIX);
    if (n > sl && !strcmp(type + n - sl, OT_BACKWARD_SUFFIX))
        n -= sl;
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (strlen(t[i]) == n && !strncmp(type, t[i], n))
            return 1;
    return 0;
}

static int documented(const char *key)
{
    int n;
    const oa_key *k = oa_keys(&n);
    for (int i = 0; i < n; i++)
        if (!strcmp(k[i].key, key))
            return 1;
    return 0;
}

/* Every op's calls: library FLOPs equal the cost model's flops attr where
   the op has a GEMM or a convolution; every key is in the vocabulary. */
static void check_ops(const graph_profile *g, const char *what)
{
    int bad_flops = 0, bad_key = 0, no_flops = 0, errors = 0, unmatched = 0;
    char first[256] = "";
    for (int32_t i = 0; i < g->n_ops; i++) {
        const graph_op *o = &g->ops[i];
        for (int32_t a = 0; a < o->n_attr; a++)
            if (!documented(o->attr[a].key) && bad_key++ == 0)
                snprintf(first, sizeof first, "op %d '%s': attr %s", i, o->name, o->attr[a].key);
        val_call c[LM_MAX_CALLS];
        int n = 0;
        if (lm_match(g, i, c, LM_MAX_CALLS, &n)) {
            errors++;
            continue;
        }
        double lib = 0;
        int dense = 0;
        for (int k = 0; k < n; k++) {
            if (lm_is_library(c[k].kind))
                lib += c[k].flops;
            dense |= c[k].kind == VAL_CALL_GEMM || c[k].kind == VAL_CALL_CONV_FWD ||
                     c[k].kind == VAL_CALL_CONV_BWD_DATA || c[k].kind == VAL_CALL_CONV_BWD_FILTER;
        }
        if (library_type(o->type) && lib <= 0 && !dense &&
            !find_call(c, n, VAL_CALL_BN_FWD, 0) && !find_call(c, n, VAL_CALL_BN_BWD, 0) &&
            !find_call(c, n, VAL_CALL_POOL_FWD, 0) && !find_call(c, n, VAL_CALL_POOL_BWD, 0) &&
            !find_call(c, n, VAL_CALL_SOFTMAX_FWD, 0) && !find_call(c, n, VAL_CALL_SOFTMAX_BWD, 0) &&
            unmatched++ == 0)
            snprintf(first, sizeof first, "op %d '%s' (%s)", i, o->name, o->type);
        double f;
        if (o->phase != GP_UPDATE && strcmp(o->type, "view") && strcmp(o->type, "view_backward") &&
            !oa_get(o, OA_FLOPS, &f))
            no_flops++;
        if (dense && oa_get(o, OA_FLOPS, &f) && fabs(lib - f) > 1e-9 * f && bad_flops++ == 0)
            snprintf(first, sizeof first, "op %d '%s' (%s): calls %.6g FLOPs, cost model %.6g", i,
                     o->name, o->type, lib, f);
    }
    IS_INT(errors, 0, "%s: every op matches", what);
    IS_INT(unmatched, 0, "%s: every convolution, product, norm, pooling and softmax op, forward "
           "and backward, maps to library calls %s", what, first);
    IS_INT(no_flops, 0, "%s: every forward and backward op has the cost model's flops", what);
    IS_INT(bad_flops, 0, "%s: GEMM and convolution calls do the cost model's FLOPs %s", what,
           first);
    IS_INT(bad_key, 0, "%s: every attr key is in the vocabulary %s", what, first);
}

static void test_coverage(void)
{
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const model_case *mc = &cases[i];
        int nkv = 0;
        while (nkv < 8 && mc->kv[nkv])
            nkv++;
        graph_profile *g = gen(mc->model, mc->kv, nkv);
        char what[160];
        snprintf(what, sizeof what, "%s %s%s", mc->model, mc->kv[0], nkv > 1 ? " ..." : "");
        OK(g != NULL, "%s: generated", what);
        if (!g)
            continue;
        lm_summary s;
        IS_INT(lm_summarize(g, &s), 0, "%s: summarized", what);
        IS_INT(s.library_ops + s.touch_ops + s.no_kernel_ops, s.ops, "%s: ops add up", what);
        IS_INT(s.fallback_ops, 0, "%s: every call fits its tensors", what);
        double fw = lm_phase_fraction(&s, GP_FORWARD), bw = lm_phase_fraction(&s, GP_BACKWARD);
        OK(fw >= 0.95, "%s: forward FLOPs on library calls %.2f%% >= 95%%", what, 100 * fw);
        OK(bw >= 0.95, "%s: backward FLOPs on library calls %.2f%% >= 95%%", what, 100 * bw);
        OK(s.flops[GP_BACKWARD] > s.flops[GP_FORWARD],
           "%s: the backward pass does more FLOPs than the forward (%.4g vs %.4g)", what,
           s.flops[GP_BACKWARD], s.flops[GP_FORWARD]);
        check_ops(g, what);
        graph_free(g);
    }
    /* the synthetic generators give no shapes: touch kernels only */
    const char *kv[] = {"batch=2"};
    graph_profile *g = gen("chain", kv, 1);
    lm_summary s;
    OK(g && lm_summarize(g, &s) == 0 && s.library_ops == 0 && s.touch_ops == s.ops,
       "chain: every op a touch kernel");
    graph_free(g);
}

/* ---- hand-checked shapes ---- */

static void test_conv(void)
{
    const char *kv[] = {"depth=18", "batch=2"};
    graph_profile *g = gen("resnet", kv, 2);
    if (!g)
        return;
    val_call f[LM_MAX_CALLS], b[LM_MAX_CALLS];
    /* the stem: 7x7 stride 2 on the data, so no input gradient */
    int32_t c0 = find_fwd(g, OT_CONV2D, -1), c0b = find_bwd(g, c0);
    int nf = calls_of(g, c0, f), nb = calls_of(g, c0b, b);
    const val_nchw_shape stem = {2, 3, 224, 224, 64, 112, 112, 7, 7, 2, 3, 3, 1, 0};
    OK(nf == 1 && f[0].kind == VAL_CALL_CONV_FWD && same_nchw(&f[0].u.nchw, &stem),
       "stem: one forward convolution 2x3x224x224 -> 64 7x7/2 pad 3 -> 112x112");
    IS_NUM(f[0].flops, 2.0 * 2 * 64 * 112 * 112 * 3 * 7 * 7, 0, "stem: forward FLOPs");
    OK(nb == 1 && b[0].kind == VAL_CALL_CONV_BWD_FILTER && same_nchw(&b[0].u.nchw, &stem),
       "stem backward: only the filter gradient (the data needs none), forward shapes");
    OK(f[0].arg[VAL_ARG_X] == storage(g, g->ops[c0].in[0]) &&
           f[0].arg[VAL_ARG_W] == storage(g, g->ops[c0].in[1]) &&
           f[0].arg[VAL_ARG_Y] == storage(g, g->ops[c0].out[0]) && f[0].arg[VAL_ARG_DY] < 0,
       "stem forward: x, w, y are the op's input, parameter and output");
    OK(nb == 1 && b[0].arg[VAL_ARG_X] == f[0].arg[VAL_ARG_X] &&
           b[0].arg[VAL_ARG_DY] == storage(g, g->ops[c0b].in[0]),
       "stem backward: reads the forward's x and the incoming gradient");
    /* the stem's parameter also holds its batch norm's scale and shift: the
       batch norm's backward (run first) creates the gradient, the
       convolution's accumulates into it */
    OK(nb == 1 && (b[0].accumulate & (1 << VAL_ARG_DW)) && g->ops[c0b].n_mut == 1 &&
           b[0].arg[VAL_ARG_DW] == storage(g, g->ops[c0b].mut[0]),
       "stem backward: accumulates its filter gradient into the shared parameter's");

    /* a later convolution: data and filter gradients with the forward's shapes */
    int32_t c1 = find_fwd(g, OT_CONV2D, c0), c1b = find_bwd(g, c1);
    nf = calls_of(g, c1, f);
    nb = calls_of(g, c1b, b);
    const val_call *bd = find_call(b, nb, VAL_CALL_CONV_BWD_DATA, 0),
                   *bf = find_call(b, nb, VAL_CALL_CONV_BWD_FILTER, 0);
    OK(nf == 1 && nb == 2 && bd && bf, "conv backward: data and filter gradients");
    OK(bd && bf && same_nchw(&bd->u.nchw, &f[0].u.nchw) && same_nchw(&bf->u.nchw, &f[0].u.nchw),
       "conv backward: both calls have the forward's shapes");
    OK(bd && bd->arg[VAL_ARG_W] == f[0].arg[VAL_ARG_W] &&
           bd->arg[VAL_ARG_DY] == storage(g, g->ops[c1b].in[0]) && bd->arg[VAL_ARG_DX] >= 0 &&
           bd->arg_bytes[VAL_ARG_DX] == f[0].arg_bytes[VAL_ARG_X],
       "conv backward data: dy and w in, dx the size of x out");
    OK(bf && bf->arg[VAL_ARG_X] == f[0].arg[VAL_ARG_X] &&
           bf->arg_bytes[VAL_ARG_DW] == f[0].arg_bytes[VAL_ARG_W],
       "conv backward filter: x and dy in, dw the size of w out");
    IS_NUM(bd && bf ? bd->flops + bf->flops : 0, oa_value(&g->ops[c1b], OA_FLOPS, -1), 0,
           "conv backward: the cost model's backward FLOPs (twice the forward's)");

    /* batch norm: scale and shift are the parameter's last 2c floats */
    int32_t bn = find_fwd(g, OT_BATCHNORM_RELU, -1), bnb = find_bwd(g, bn);
    nf = calls_of(g, bn, f);
    nb = calls_of(g, bnb, b);
    int64_t c = (int64_t)oa_value(&g->ops[bn], OA_C, 0);
    int64_t pb = g->tensors[g->ops[bn].in[1]].bytes;
    OK(nf == 1 && f[0].kind == VAL_CALL_BN_FWD && f[0].u.nchw.c == c &&
           f[0].arg[VAL_ARG_W] == storage(g, g->ops[bn].in[1]) &&
           f[0].arg_off[VAL_ARG_W] == pb - 8 * c && f[0].arg_bytes[VAL_ARG_W] == 8 * c,
       "batch norm forward: scale and shift at the end of the parameter");
    const val_call *bb = find_call(b, nb, VAL_CALL_BN_BWD, 0);
    OK(bb && find_call(b, nb, VAL_CALL_TOUCH, 0) && bb->arg[VAL_ARG_DX] >= 0 &&
           bb->arg[VAL_ARG_DW] >= 0 && bb->arg_off[VAL_ARG_DW] == pb - 8 * c,
       "batch norm + ReLU backward: a touch for the mask, then dx and the scale/shift gradient");

    /* max pooling: backward reads x, y and dy with the forward's shape */
    int32_t mp = find_fwd(g, OT_MAXPOOL2D, -1), mpb = find_bwd(g, mp);
    nf = calls_of(g, mp, f);
    nb = calls_of(g, mpb, b);
    OK(nf == 1 && f[0].kind == VAL_CALL_POOL_FWD && f[0].u.nchw.max && f[0].u.nchw.r == 3 &&
           f[0].u.nchw.ho == 56,
       "max pooling forward: 3x3/2 to 56x56");
    OK(nb == 1 && b[0].kind == VAL_CALL_POOL_BWD && same_nchw(&b[0].u.nchw, &f[0].u.nchw) &&
           b[0].arg[VAL_ARG_X] == f[0].arg[VAL_ARG_X] &&
           b[0].arg[VAL_ARG_W] == f[0].arg[VAL_ARG_Y],
       "max pooling backward: the forward's shape, x and y");
    int32_t gp = find_fwd(g, OT_GLOBAL_AVGPOOL, -1);
    nf = calls_of(g, gp, f);
    OK(nf == 1 && f[0].kind == VAL_CALL_POOL_FWD && !f[0].u.nchw.max && f[0].u.nchw.r == 7 &&
           f[0].u.nchw.s == 7 && f[0].u.nchw.ho == 1,
       "global average pooling: a 7x7 average window");
    nb = calls_of(g, find_bwd(g, gp), b);
    OK(nb == 1 && b[0].kind == VAL_CALL_POOL_BWD && b[0].arg[VAL_ARG_X] == b[0].arg[VAL_ARG_DX],
       "average pooling backward: dx stands in for the x it does not keep");

    /* the classifier: y[2, 1000] = x[2, 512] W^T; backward two GEMMs */
    int32_t fc = find_fwd(g, OT_LINEAR, -1), fcb = find_bwd(g, fc);
    nf = calls_of(g, fc, f);
    nb = calls_of(g, fcb, b);
    OK(nf == 1 && gemm_is(&f[0], 2, 1000, 512, 1, 0, 1), "linear forward: 2x1000x512, W^T");
    OK(nb == 2 && gemm_is(&b[0], 2, 512, 1000, 1, 0, 0) && gemm_is(&b[1], 1000, 512, 2, 1, 1, 0),
       "linear backward: dx = dy W (2x512x1000), dW = dy^T x (1000x512x2)");
    OK(nb == 2 && b[0].arg[VAL_ARG_X] == b[1].arg[VAL_ARG_X] &&
           b[0].arg[VAL_ARG_X] == storage(g, g->ops[fcb].in[0]) &&
           b[0].arg[VAL_ARG_W] == f[0].arg[VAL_ARG_W] && b[1].arg[VAL_ARG_W] == f[0].arg[VAL_ARG_X],
       "linear backward: both read dy; dx reads W, dW reads x");
    IS_NUM(nb == 2 ? b[0].flops + b[1].flops : 0, 2 * f[0].flops, 0,
           "linear backward: twice the forward's FLOPs");

    /* the loss: its backward is a softmax of the logits into their gradient */
    int32_t ls = find_fwd(g, OT_SOFTMAX_CROSS_ENTROPY, -1);
    nf = calls_of(g, ls, f);
    nb = calls_of(g, find_bwd(g, ls), b);
    OK(nf == 1 && f[0].kind == VAL_CALL_TOUCH, "loss forward: a touch kernel");
    OK(nb == 1 && b[0].kind == VAL_CALL_SOFTMAX_FWD && b[0].u.rows.rows == 2 &&
           b[0].u.rows.cols == 1000 && b[0].arg[VAL_ARG_X] == storage(g, g->ops[ls].in[0]),
       "loss backward: softmax over 2 rows of 1000 logits");

    /* an update: a touch kernel reading the gradient, updating the weight */
    int32_t up = g->n_ops - 1;
    nf = calls_of(g, up, f);
    OK(g->ops[up].phase == GP_UPDATE && nf == 1 && f[0].kind == VAL_CALL_TOUCH &&
           f[0].arg[VAL_ARG_X] == VAL_ARG_NONE &&
           f[0].bytes_read == (double)(2 * g->tensors[g->ops[up].mut[0]].bytes) &&
           f[0].bytes_written == (double)g->tensors[g->ops[up].mut[0]].bytes,
       "sgd update: one whole-op touch with the real bytes");

    /* errors */
    int n = 0;
    IS_INT(lm_match(g, g->n_ops, f, LM_MAX_CALLS, &n), SW_EINVAL, "op out of range: EINVAL");
    IS_INT(lm_match(g, c1b, f, 1, &n), SW_EINVAL, "too little room for the calls: EINVAL");
    graph_free(g);
}

static void test_bmm(void)
{
    const char *kv[] = {"layers=1", "hidden=64", "heads=4", "seq=16", "batch=2"};
    graph_profile *g = gen("transformer", kv, 5);
    if (!g)
        return;
    val_call f[LM_MAX_CALLS], b[LM_MAX_CALLS];
    /* scores = q k^T: [8, 16, 16] from [8, 16, 16] x [8, 16, 16]^T (dh = 16) */
    int32_t sc = find_fwd(g, OT_BMM, -1), sb = find_bwd(g, sc);
    OK(oa_value(&g->ops[sc], OA_GEMM_TRANS_B, -1) == 1, "scores: transpose_b recorded");
    int nf = calls_of(g, sc, f), nb = calls_of(g, sb, b);
    OK(nf == 1 && gemm_is(&f[0], 16, 16, 16, 8, 0, 1), "scores forward: batch 8 of 16x16x16, B^T");
    OK(nb == 2 && gemm_is(&b[0], 16, 16, 16, 8, 0, 0) && gemm_is(&b[1], 16, 16, 16, 8, 1, 0),
       "scores backward: dq = dy k, dk = dy^T q");
    OK(nb == 2 && b[1].arg[VAL_ARG_X] == storage(g, g->ops[sb].in[0]) &&
           b[1].arg[VAL_ARG_W] == f[0].arg[VAL_ARG_X],
       "scores backward: dk reads dy and q");
    /* context = p v: [8, 16, 16] x [8, 16, 16] */
    int32_t cx = find_fwd(g, OT_BMM, sc), cb = find_bwd(g, cx);
    nf = calls_of(g, cx, f);
    nb = calls_of(g, cb, b);
    OK(nf == 1 && gemm_is(&f[0], 16, 16, 16, 8, 0, 0), "context forward: no transpose");
    OK(nb == 2 && gemm_is(&b[0], 16, 16, 16, 8, 0, 1) && gemm_is(&b[1], 16, 16, 16, 8, 1, 0) &&
           b[1].arg[VAL_ARG_X] == f[0].arg[VAL_ARG_X],
       "context backward: dp = dy v^T, dv = p^T dy");
    /* softmax between them */
    int32_t sm = find_fwd(g, OT_SOFTMAX, -1);
    nf = calls_of(g, sm, f);
    nb = calls_of(g, find_bwd(g, sm), b);
    OK(nf == 1 && f[0].kind == VAL_CALL_SOFTMAX_FWD && f[0].u.rows.rows == 8 * 16 &&
           f[0].u.rows.cols == 16,
       "softmax forward: 128 rows of 16");
    OK(nb == 1 && b[0].kind == VAL_CALL_SOFTMAX_BWD && b[0].arg[VAL_ARG_W] == f[0].arg[VAL_ARG_Y],
       "softmax backward: reads the forward's output");
    graph_free(g);
}

static void test_sepconv(void)
{
    const char *kv[] = {"repeat=1", "batch=2"};
    graph_profile *g = gen("nasnet", kv, 2);
    if (!g)
        return;
    val_call f[LM_MAX_CALLS], b[LM_MAX_CALLS];
    int32_t sp = find_fwd(g, OT_RELU_SEPCONV2D, -1);
    int nf = calls_of(g, sp, f), nb = calls_of(g, find_bwd(g, sp), b);
    const val_call *dw = find_call(f, nf, VAL_CALL_CONV_FWD, 0),
                   *pw = find_call(f, nf, VAL_CALL_CONV_FWD, 1);
    int64_t c = (int64_t)oa_value(&g->ops[sp], OA_C, 0), r = (int64_t)oa_value(&g->ops[sp], OA_R, 0);
    OK(nf == 3 && find_call(f, nf, VAL_CALL_TOUCH, 0) && dw && pw,
       "separable convolution with a ReLU: a touch, then depthwise and pointwise");
    OK(dw && pw && dw->u.nchw.groups == c && dw->arg[VAL_ARG_Y] == VAL_ARG_SCRATCH &&
           pw->arg[VAL_ARG_X] == VAL_ARG_SCRATCH && pw->u.nchw.r == 1 &&
           pw->arg[VAL_ARG_W] == dw->arg[VAL_ARG_W] && pw->arg_off[VAL_ARG_W] == 4 * c * r * r,
       "depthwise to scratch, pointwise from it; weights packed depthwise first");
    IS_NUM(dw && pw ? dw->flops + pw->flops : 0, oa_value(&g->ops[sp], OA_FLOPS, -1), 0,
           "separable convolution: the cost model's FLOPs");
    OK(nb == 5 && find_call(b, nb, VAL_CALL_CONV_BWD_DATA, 1) &&
           find_call(b, nb, VAL_CALL_CONV_BWD_FILTER, 1),
       "backward: data and filter gradients of both convolutions, and the ReLU's touch");
    graph_free(g);
}

static void test_fp16_and_bind(void)
{
    const char *kv[] = {"depth=18", "batch=2", "dtype=fp16"};
    graph_profile *g = gen("resnet", kv, 3);
    if (!g)
        return;
    val_call c[LM_MAX_CALLS];
    int32_t cv = find_fwd(g, OT_CONV2D, -1);
    int n = calls_of(g, cv, c);
    OK(n == 1 && c[0].fp16 && c[0].arg_bytes[VAL_ARG_X] == 2 * 2 * 3 * 224 * 224,
       "fp16 convolution: 2-byte elements");
    int32_t bn = find_fwd(g, OT_BATCHNORM_RELU, -1);
    n = calls_of(g, bn, c);
    OK(n == 1 && c[0].arg[VAL_ARG_W] == VAL_ARG_SCRATCH,
       "fp16 batch norm: fp32 scale and shift in scratch");

    /* binding: operands become region indices; one too small falls back */
    n = calls_of(g, cv, c);
    val_region reg[3];
    memset(reg, 0, sizeof reg);
    reg[0].tensor = storage(g, g->ops[cv].out[0]);
    reg[0].bytes = g->tensors[g->ops[cv].out[0]].bytes;
    reg[1].tensor = storage(g, g->ops[cv].in[1]);
    reg[1].bytes = g->tensors[g->ops[cv].in[1]].bytes;
    reg[2].tensor = storage(g, g->ops[cv].in[0]);
    reg[2].bytes = g->tensors[g->ops[cv].in[0]].bytes;
    double flops = c[0].flops;
    IS_INT(lm_bind(c, &n, reg, 3), 0, "bind: every operand fits");
    OK(n == 1 && c[0].arg[VAL_ARG_X] == 2 && c[0].arg[VAL_ARG_W] == 1 && c[0].arg[VAL_ARG_Y] == 0,
       "bind: storage ids become region indices");
    n = calls_of(g, cv, c);
    reg[0].bytes -= 2;
    IS_INT(lm_bind(c, &n, reg, 3), 1, "bind: an output too small falls back");
    OK(n == 1 && c[0].kind == VAL_CALL_TOUCH && c[0].arg[VAL_ARG_X] == VAL_ARG_NONE &&
           c[0].flops == flops,
       "bind: the fallback is one whole-op touch with the calls' FLOPs");
    n = calls_of(g, cv, c);
    IS_INT(lm_bind(c, &n, reg, 2), 1, "bind: a missing operand falls back");
    graph_free(g);
}

/* ---- the command line ---- */

static double num(const json_value *o, const char *key)
{
    const json_value *v = json_get(o, key);
    return v && v->type == JSON_NUMBER ? v->u.num.d : -1;
}

static void test_cli(void)
{
    bin = getenv("SWAPSIM_BIN");
    if (!bin) {
        tap_skip(1, "SWAPSIM_BIN not set (run through make test)");
        return;
    }
    snprintf(dir, sizeof dir, "/tmp/swapsim-libmap-%d", (int)getpid());
    char cmd[600];
    snprintf(cmd, sizeof cmd, "mkdir -p %s", dir);
    if (system(cmd) != 0) {
        tap_skip(1, "cannot make a scratch directory");
        return;
    }
    char *o = NULL, *er = NULL;
    IS_INT(sh("model resnet --depth 18 --batch 2 -o r18.json", NULL, NULL), 0, "model resnet");
    IS_INT(sh("profile r18.json --dry-run --json", &o, &er), 0, "profile --dry-run --json");
    json_doc *d = json_doc_new();
    const json_value *root = NULL;
    sw_err e;
    OK(d && o && json_parse(d, o, strlen(o), "out", 1, &root, &e) == 0 &&
           root->type == JSON_OBJECT,
       "dry run: one JSON object");
    if (root) {
        double ops = num(root, "ops"), lib = num(root, "library_ops"),
               touch = num(root, "touch_ops"), none = num(root, "no_kernel_ops");
        OK(ops > 0 && lib > 0 && touch > 0 && lib + touch + none == ops,
           "dry run: ops, library_ops, touch_ops, no_kernel_ops");
        OK(num(root, "library_flops_fraction") >= 0.95 &&
               num(root, "forward_library_flops_fraction") >= 0.95 &&
               num(root, "backward_library_flops_fraction") >= 0.95,
           "dry run: library_flops_fraction >= 0.95, forward and backward");
        const json_value *calls = json_get(root, "calls");
        OK(calls && calls->type == JSON_OBJECT && num(calls, "conv_bwd_data") > 0 &&
               num(calls, "conv_bwd_filter") > 0 && num(calls, "gemm") == 3 &&
               num(calls, "bn_bwd") > 0,
           "dry run: calls per kind, backward included");
        IS_INT((int)num(root, "fallback_ops"), 0, "dry run: no fallbacks");
    }
    json_doc_free(d);
    sw_free(o);
    sw_free(er);
    o = NULL;
    IS_INT(sh("profile r18.json --dry-run", &o, NULL), 0, "profile --dry-run (text)");
    IS_STR_HAS(o, "FLOPs on library calls", "dry run text: the FLOPs share");
    IS_STR_HAS(o, "conv_bwd_data", "dry run text: the calls");
    sw_free(o);
    expect_fail("profile r18.json -o x.json", 2, "--device-index",
                "profile without --dry-run needs --device-index");
    expect_fail("profile r18.json --device-index 0", 2, "--output",
                "profile without --dry-run needs --output");

    /* a PipeDream import: convolutions, linear layers and batch norms have shapes */
    const char *data = tap_data_dir();
    if (!data) {
        tap_skip(2, "recorded data not found ($SWAPSIM_DATA)");
    } else {
        char args[1024];
        snprintf(args, sizeof args, "import pipedream %s/pipedream/resnet50.txt -o pd.json", data);
        IS_INT(sh(args, NULL, NULL), 0, "import pipedream resnet50");
        o = NULL;
        IS_INT(sh("profile pd.json --dry-run --json", &o, NULL), 0, "dry run of the import");
        IS_STR_HAS(o, "\"conv_bwd_data\":52,\"conv_bwd_filter\":53,\"bn_fwd\":53,\"bn_bwd\":53",
                   "PipeDream ResNet-50: every convolution and batch norm, backward too");
        sw_free(o);
    }
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        printf("# could not remove %s\n", dir);
}

/* Every documented key is in docs/profile-format.md. */
static void test_vocabulary_docs(void)
{
    char *text = NULL;
    size_t len;
    sw_err e;
    if (sw_read_file("docs/profile-format.md", &text, &len, &e)) {
        tap_skip(1, "docs/profile-format.md not found (run from the source tree)");
        return;
    }
    int n, missing = 0;
    const oa_key *k = oa_keys(&n);
    char first[64] = "";
    for (int i = 0; i < n; i++) {
        char q[64];
        snprintf(q, sizeof q, "`%s`", k[i].key);
        if (!strstr(text, q) && missing++ == 0)
            snprintf(first, sizeof first, "%s", k[i].key);
    }
    IS_INT(missing, 0, "docs/profile-format.md names every attr key %s", first);
    sw_free(text);
}

int main(int argc, char **argv)
{
    static const tap_test tests[] = {
        {"coverage", test_coverage},
        {"conv", test_conv},
        {"bmm", test_bmm},
        {"sepconv", test_sepconv},
        {"fp16_and_bind", test_fp16_and_bind},
        {"cli", test_cli},
        {"vocabulary_docs", test_vocabulary_docs},
    };
    return tap_run(tests, sizeof tests / sizeof tests[0], argc, argv);
}
