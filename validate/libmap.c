/* libmap.c: op-to-library matching (libmap.h): cuBLAS GEMMs for linear
   layers and batched products, cuDNN for convolutions, batch norm, pooling
   and softmax, forward and backward; touch kernels with the real bytes for
   the rest. FLOPs follow the cost model (profiles/costmodel.c). */
#include "libmap.h"

#include <math.h>
#include <string.h>

#include "../profiles/opattr.h"

typedef enum {
    CLS_TOUCH,   /* memory bound: one kernel reading and writing the op's tensors */
    CLS_NONE,    /* no kernel (a view) */
    CLS_CONV,    /* convolution, grouped or not */
    CLS_SEPCONV, /* depthwise then pointwise convolution */
    CLS_LINEAR,
    CLS_BMM,
    CLS_BN,
    CLS_POOL,
    CLS_GPOOL,
    CLS_SOFTMAX,
    CLS_LOSS     /* softmax cross-entropy */
} op_class;

enum { F_PRE_RELU = 1, F_RELU = 2, F_MAX = 4 };

static const struct {
    const char *type;
    op_class cls;
    int flags;
} types[] = {
    {OT_CONV2D, CLS_CONV, 0},
    {OT_RELU_CONV2D, CLS_CONV, F_PRE_RELU},
    {OT_DWCONV2D, CLS_CONV, 0},
    {OT_RELU_DWCONV2D, CLS_CONV, F_PRE_RELU},
    {OT_SEPCONV2D, CLS_SEPCONV, 0},
    {OT_RELU_SEPCONV2D, CLS_SEPCONV, F_PRE_RELU},
    {OT_LINEAR, CLS_LINEAR, 0},
    {OT_BMM, CLS_BMM, 0},
    {OT_BATCHNORM, CLS_BN, 0},
    {OT_BATCHNORM_RELU, CLS_BN, F_RELU},
    {OT_BATCHNORM2D, CLS_BN, 0},
    {OT_MAXPOOL2D, CLS_POOL, F_MAX},
    {OT_AVGPOOL2D, CLS_POOL, 0},
    {OT_RELU_MAXPOOL2D, CLS_POOL, F_MAX},
    {OT_RELU_AVGPOOL2D, CLS_POOL, 0},
    {OT_GLOBAL_AVGPOOL, CLS_GPOOL, 0},
    {OT_SOFTMAX, CLS_SOFTMAX, 0},
    {OT_SOFTMAX_CROSS_ENTROPY, CLS_LOSS, 0},
    {OT_VIEW, CLS_NONE, 0},
};

static const char *const call_names[VAL_CALL__COUNT] = {
    [VAL_CALL_TOUCH] = "touch",
    [VAL_CALL_GEMM] = "gemm",
    [VAL_CALL_CONV_FWD] = "conv_fwd",
    [VAL_CALL_CONV_BWD_DATA] = "conv_bwd_data",
    [VAL_CALL_CONV_BWD_FILTER] = "conv_bwd_filter",
    [VAL_CALL_BN_FWD] = "bn_fwd",
    [VAL_CALL_BN_BWD] = "bn_bwd",
    [VAL_CALL_POOL_FWD] = "pool_fwd",
    [VAL_CALL_POOL_BWD] = "pool_bwd",
    [VAL_CALL_SOFTMAX_FWD] = "softmax_fwd",
    [VAL_CALL_SOFTMAX_BWD] = "softmax_bwd",
};

const char *lm_call_name(int kind)
{
    return kind >= 0 && kind < VAL_CALL__COUNT ? call_names[kind] : "?";
}

int lm_is_library(int kind) { return kind > VAL_CALL_TOUCH && kind < VAL_CALL__COUNT; }

/* lowercase equality */
static int same_type(const char *a, const char *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char x = a[i], y = b[i];
        if (x >= 'A' && x <= 'Z')
            x = (char)(x - 'A' + 'a');
        if (x != y)
            return 0;
        if (!x)
            return 1;
    }
    return 1;
}

/* The class of a type (n: its length). */
static op_class classify(const char *type, size_t n, int *flags)
{
    *flags = 0;
    if (!type)
        return CLS_TOUCH;
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (strlen(types[i].type) == n && same_type(type, types[i].type, n)) {
            *flags = types[i].flags;
            return types[i].cls;
        }
    return CLS_TOUCH;
}

/* ---- one op ---- */

typedef struct mctx {
    const graph_profile *g;
    int32_t op;
    const graph_op *o; /* the op */
    const graph_op *f; /* its forward op (o itself in the forward pass) */
    int bwd;
    int fp16;
    int64_t es;        /* bytes per element */
    uint32_t gnew, gacc;
    val_call *calls;
    int n, max, overflow;
} mctx;

/* An operand: a tensor id of g (>= 0), VAL_ARG_SCRATCH or VAL_ARG_NONE, and
   the byte offset and bytes the call reaches. */
typedef struct opnd {
    int32_t t;
    int64_t off, bytes;
} opnd;

static opnd T(int32_t t, int64_t bytes) { return (opnd){t, 0, bytes}; }
static opnd TO(int32_t t, int64_t off, int64_t bytes) { return (opnd){t, off, bytes}; }
static const opnd NONE = {VAL_ARG_NONE, 0, 0};

static val_call *add(mctx *m, int kind)
{
    if (m->n >= m->max) {
        m->overflow = 1;
        return NULL;
    }
    val_call *c = &m->calls[m->n++];
    memset(c, 0, sizeof *c);
    c->kind = kind;
    c->fp16 = m->fp16;
    for (int i = 0; i < VAL_ARGS; i++)
        c->arg[i] = VAL_ARG_NONE;
    return c;
}

static void set(mctx *m, val_call *c, int slot, opnd x, int acc)
{
    if (!c || x.t == VAL_ARG_NONE)
        return;
    c->arg[slot] = x.t >= 0 ? m->g->tensors[x.t].storage : x.t;
    c->arg_off[slot] = x.off;
    c->arg_bytes[slot] = x.bytes;
    if (slot == VAL_ARG_Y || slot == VAL_ARG_DX || slot == VAL_ARG_DW) {
        c->bytes_written += (double)x.bytes;
        if (acc) {
            c->accumulate |= 1 << slot;
            c->bytes_read += (double)x.bytes;
        }
    } else {
        c->bytes_read += (double)x.bytes;
    }
}

#define LM_DIM_MAX 2147483647.0 /* largest dimension accepted */
#define LM_ELEMS_MAX 1e15        /* largest operand accepted, in elements */

/* An integer attr >= lo (1 if present and sane). */
static int ival(const graph_op *o, const char *key, int64_t lo, int64_t *out)
{
    double v;
    if (!oa_get(o, key, &v) || !isfinite(v) || v != floor(v) || v < (double)lo ||
        v > LM_DIM_MAX)
        return 0;
    *out = (int64_t)v;
    return 1;
}

/* An integer attr >= lo, or def when absent; 0 if present and not sane. */
static int ival_def(const graph_op *o, const char *key, int64_t lo, int64_t def, int64_t *out)
{
    double v;
    if (!oa_get(o, key, &v)) {
        *out = def;
        return 1;
    }
    return ival(o, key, lo, out);
}

static int32_t fin(const mctx *m, int i) { return i < m->f->n_in ? m->f->in[i] : -1; }
static int32_t fout(const mctx *m, int i) { return i < m->f->n_out ? m->f->out[i] : -1; }

static int reads(const graph_op *o, int32_t t)
{
    for (int32_t i = 0; i < o->n_in; i++)
        if (o->in[i] == t)
            return 1;
    return 0;
}

/* The backward op's incoming gradient: its first input, unless that is a
   tensor of the forward op (saved; then the output had no gradient). */
static int32_t grad_out(const mctx *m)
{
    if (!m->bwd || m->o->n_in < 1)
        return -1;
    int32_t t = m->o->in[0];
    for (int32_t i = 0; i < m->f->n_in; i++)
        if (m->f->in[i] == t)
            return -1;
    for (int32_t i = 0; i < m->f->n_out; i++)
        if (m->f->out[i] == t)
            return -1;
    return t;
}

static int bits_below(uint32_t v, int k)
{
    int n = 0;
    for (int i = 0; i < k; i++)
        n += (int)((v >> i) & 1u);
    return n;
}

/* The gradient of forward input k (-1: none); *acc: accumulated in place. */
static int32_t grad_in(const mctx *m, int k, int *acc)
{
    *acc = 0;
    if (!m->bwd || k >= OA_GRAD_BITS)
        return -1;
    if ((m->gnew >> k) & 1u) {
        int i = bits_below(m->gnew, k);
        return i < m->o->n_out ? m->o->out[i] : -1;
    }
    if ((m->gacc >> k) & 1u) {
        int i = bits_below(m->gacc, k);
        *acc = 1;
        return i < m->o->n_mut ? m->o->mut[i] : -1;
    }
    return -1;
}

/* The op as one touch kernel over every storage it accesses. */
static void touch_op(mctx *m)
{
    val_call *c = add(m, VAL_CALL_TOUCH);
    if (!c)
        return;
    const graph_profile *g = m->g;
    for (int32_t k = g->acc_off[m->op]; k < g->acc_off[m->op + 1]; k++) {
        double b = (double)g->tensors[g->acc[k]].bytes;
        if (g->acc_flag[k] & (GA_READ | GA_MUTATE))
            c->bytes_read += b;
        if (g->acc_flag[k] & (GA_CREATE | GA_MUTATE))
            c->bytes_written += b;
    }
    c->flops = oa_value(m->o, OA_FLOPS, 0);
}

/* A touch kernel reading x and writing y (either may be NONE). */
static void touch(mctx *m, opnd x, opnd y)
{
    val_call *c = add(m, VAL_CALL_TOUCH);
    set(m, c, VAL_ARG_X, x, 0);
    set(m, c, VAL_ARG_Y, y, 0);
}

/* ---- GEMM ---- */

static void gemm(mctx *m, int64_t mm, int64_t nn, int64_t kk, int64_t batch, int ta, int tb,
                 int32_t a, int32_t b, int32_t y, int acc)
{
    val_call *c = add(m, VAL_CALL_GEMM);
    if (!c)
        return;
    c->u.gemm = (val_gemm_shape){mm, nn, kk, batch, ta, tb};
    c->flops = 2.0 * (double)batch * (double)mm * (double)nn * (double)kk;
    set(m, c, VAL_ARG_X, T(a, m->es * batch * mm * kk), 0);
    set(m, c, VAL_ARG_W, T(b, m->es * batch * kk * nn), 0);
    set(m, c, VAL_ARG_Y, T(y, m->es * batch * mm * nn), acc);
}

/* Linear: y[m, n] = x[m, k] W^T, W stored [n, k]. */
static int match_linear(mctx *m)
{
    int64_t M, N, K, B;
    if (!ival(m->f, OA_GEMM_M, 1, &M) || !ival(m->f, OA_GEMM_N, 1, &N) ||
        !ival(m->f, OA_GEMM_K, 1, &K) || !ival_def(m->f, OA_GEMM_BATCH, 1, 1, &B))
        return 0;
    if ((double)M * (double)B * (double)(N > K ? N : K) > LM_ELEMS_MAX ||
        (double)N * (double)K > LM_ELEMS_MAX)
        return 0;
    M *= B; /* independent rows sharing one weight */
    int32_t x = fin(m, 0), w = fin(m, 1), y = fout(m, 0);
    if (x < 0 || w < 0 || y < 0)
        return 0;
    if (!m->bwd) {
        gemm(m, M, N, K, 1, 0, 1, x, w, y, 0);
        return 1;
    }
    int32_t dy = grad_out(m);
    int ax, aw;
    int32_t dx = grad_in(m, 0, &ax), dw = grad_in(m, 1, &aw);
    if (dy < 0 || (dx < 0 && dw < 0))
        return 0;
    if (dx >= 0) /* dx[m, k] = dy[m, n] W[n, k] */
        gemm(m, M, K, N, 1, 0, 0, dy, w, dx, ax);
    if (dw >= 0) /* dW[n, k] = dy^T[n, m] x[m, k] */
        gemm(m, N, K, M, 1, 1, 0, dy, x, dw, aw);
    return 1;
}

/* Batched product: y[b, m, n] = a[b, m, k] b[b, k, n] (transpose_b: b
   stored [b, n, k]). */
static int match_bmm(mctx *m)
{
    int64_t M, N, K, B, tb;
    if (!ival(m->f, OA_GEMM_M, 1, &M) || !ival(m->f, OA_GEMM_N, 1, &N) ||
        !ival(m->f, OA_GEMM_K, 1, &K) || !ival_def(m->f, OA_GEMM_BATCH, 1, 1, &B) ||
        !ival_def(m->f, OA_GEMM_TRANS_B, 0, 0, &tb) || tb > 1)
        return 0;
    double most = (double)(M > N ? M : N) * (double)(N > K ? N : K);
    if ((double)B * most > LM_ELEMS_MAX)
        return 0;
    int32_t a = fin(m, 0), b = fin(m, 1), y = fout(m, 0);
    if (a < 0 || b < 0 || y < 0)
        return 0;
    if (!m->bwd) {
        gemm(m, M, N, K, B, 0, (int)tb, a, b, y, 0);
        return 1;
    }
    int32_t dy = grad_out(m);
    int aa, ab;
    int32_t da = grad_in(m, 0, &aa), db = grad_in(m, 1, &ab);
    if (dy < 0 || (da < 0 && db < 0))
        return 0;
    if (da >= 0) /* da[m, k] = dy[m, n] op(b)^T */
        gemm(m, M, K, N, B, 0, !tb, dy, b, da, aa);
    if (db >= 0 && !tb) /* db[k, n] = a^T[k, m] dy[m, n] */
        gemm(m, K, N, M, B, 1, 0, a, dy, db, ab);
    else if (db >= 0) /* db[n, k] = dy^T[n, m] a[m, k] */
        gemm(m, N, K, M, B, 1, 0, dy, a, db, ab);
    return 1;
}

/* ---- convolutions ---- */

/* sep: a separable convolution (groups applies to its depthwise part only) */
static int conv_shape(const graph_op *o, val_nchw_shape *s, int sep)
{
    int64_t stride, pad, pad_w, groups, ho, wo, r, ss;
    memset(s, 0, sizeof *s);
    if (!ival(o, OA_N, 1, &s->n) || !ival(o, OA_C, 1, &s->c) || !ival(o, OA_H, 1, &s->h) ||
        !ival(o, OA_W, 1, &s->w) || !ival(o, OA_K, 1, &s->k) || !ival(o, OA_R, 1, &r) ||
        !ival(o, OA_S, 1, &ss) || !ival_def(o, OA_STRIDE, 1, 1, &stride) ||
        !ival_def(o, OA_PAD, 0, 0, &pad) || !ival_def(o, OA_PAD_W, 0, pad, &pad_w) ||
        !ival_def(o, OA_GROUPS, 1, 1, &groups))
        return 0;
    if (r > 1 << 20 || ss > 1 << 20 || stride > 1 << 20 || pad > 1 << 20 || pad_w > 1 << 20 ||
        groups > 1 << 30 || s->c % groups || (!sep && s->k % groups))
        return 0;
    if (!ival_def(o, OA_HO, 1, (s->h + 2 * pad - r) / stride + 1, &ho) ||
        !ival_def(o, OA_WO, 1, (s->w + 2 * pad_w - ss) / stride + 1, &wo) || ho < 1 || wo < 1)
        return 0;
    double n = (double)s->n;
    if (n * (double)s->c * (double)s->h * (double)s->w > LM_ELEMS_MAX ||
        n * (double)s->k * (double)ho * (double)wo > LM_ELEMS_MAX ||
        n * (double)s->c * (double)ho * (double)wo > LM_ELEMS_MAX ||
        (double)s->k * (double)s->c * (double)r * (double)ss > LM_ELEMS_MAX)
        return 0;
    s->ho = ho;
    s->wo = wo;
    s->r = (int32_t)r;
    s->s = (int32_t)ss;
    s->stride = (int32_t)stride;
    s->pad_h = (int32_t)pad;
    s->pad_w = (int32_t)pad_w;
    s->groups = (int32_t)groups;
    return 1;
}

static int64_t x_elems(const val_nchw_shape *s) { return s->n * s->c * s->h * s->w; }
static int64_t y_elems(const val_nchw_shape *s) { return s->n * s->k * s->ho * s->wo; }
static int64_t w_elems(const val_nchw_shape *s)
{
    return s->k * (s->c / s->groups) * s->r * s->s;
}

/* One convolution call: x (or dx), w (or dw), y (or dy) by kind; acc: the
   written operand is accumulated. */
static void conv(mctx *m, int kind, const val_nchw_shape *s, opnd x, opnd w, opnd y, int acc)
{
    val_call *c = add(m, kind);
    if (!c)
        return;
    c->u.nchw = *s;
    c->flops = 2.0 * (double)y_elems(s) * (double)(s->c / s->groups) * s->r * s->s;
    x.bytes = m->es * x_elems(s);
    w.bytes = m->es * w_elems(s);
    y.bytes = m->es * y_elems(s);
    if (kind == VAL_CALL_CONV_FWD) {
        set(m, c, VAL_ARG_X, x, 0);
        set(m, c, VAL_ARG_W, w, 0);
        set(m, c, VAL_ARG_Y, y, acc);
    } else if (kind == VAL_CALL_CONV_BWD_DATA) {
        set(m, c, VAL_ARG_DY, y, 0);
        set(m, c, VAL_ARG_W, w, 0);
        set(m, c, VAL_ARG_DX, x, acc);
    } else {
        set(m, c, VAL_ARG_X, x, 0);
        set(m, c, VAL_ARG_DY, y, 0);
        set(m, c, VAL_ARG_DW, w, acc);
    }
}

static int match_conv(mctx *m, int flags)
{
    val_nchw_shape s;
    if (!conv_shape(m->f, &s, 0))
        return 0;
    int32_t x = fin(m, 0), w = fin(m, 1), y = fout(m, 0);
    if (x < 0 || w < 0 || y < 0)
        return 0;
    int64_t xb = m->es * x_elems(&s);
    if (!m->bwd) {
        if (flags & F_PRE_RELU) /* the ReLU on the input: one more pass over it */
            touch(m, T(x, xb), NONE);
        conv(m, VAL_CALL_CONV_FWD, &s, T(x, 0), T(w, 0), T(y, 0), 0);
        return 1;
    }
    int32_t dy = grad_out(m);
    int ax, aw;
    int32_t dx = grad_in(m, 0, &ax), dw = grad_in(m, 1, &aw);
    if (dy < 0 || (dx < 0 && dw < 0))
        return 0;
    if (dx >= 0)
        conv(m, VAL_CALL_CONV_BWD_DATA, &s, T(dx, 0), T(w, 0), T(dy, 0), ax);
    if (flags & F_PRE_RELU) /* the ReLU's mask: two more passes */
        touch(m, T(x, xb), dx >= 0 ? T(dx, xb) : NONE);
    if (dw >= 0)
        conv(m, VAL_CALL_CONV_BWD_FILTER, &s, T(x, 0), T(dw, 0), T(dy, 0), aw);
    return 1;
}

/* Depthwise r x s then pointwise to k channels: the depthwise output is a
   temporary of the op (scratch; its gradient too), the weights are packed
   depthwise first. Backward does not recompute the temporary (the cost
   model does not count it). */
static int match_sepconv(mctx *m, int flags)
{
    val_nchw_shape s;
    if (!conv_shape(m->f, &s, 1) || s.groups != s.c)
        return 0;
    val_nchw_shape dw = s, pw = s;
    dw.k = s.c;
    pw.h = s.ho;
    pw.w = s.wo;
    pw.r = pw.s = pw.stride = 1;
    pw.pad_h = pw.pad_w = 0;
    pw.groups = 1;
    int32_t x = fin(m, 0), w = fin(m, 1), y = fout(m, 0);
    if (x < 0 || w < 0 || y < 0)
        return 0;
    int64_t dwb = m->es * w_elems(&dw), tmpb = m->es * s.n * s.c * s.ho * s.wo;
    opnd tmp = TO(VAL_ARG_SCRATCH, 0, 0), dtmp = TO(VAL_ARG_SCRATCH, tmpb, 0);
    int64_t xb = m->es * x_elems(&s);
    if (!m->bwd) {
        if (flags & F_PRE_RELU)
            touch(m, T(x, xb), NONE);
        conv(m, VAL_CALL_CONV_FWD, &dw, T(x, 0), T(w, 0), tmp, 0);
        conv(m, VAL_CALL_CONV_FWD, &pw, tmp, TO(w, dwb, 0), T(y, 0), 0);
        return 1;
    }
    int32_t dy = grad_out(m);
    int ax, aw;
    int32_t dx = grad_in(m, 0, &ax), dwt = grad_in(m, 1, &aw);
    if (dy < 0)
        return 0;
    conv(m, VAL_CALL_CONV_BWD_DATA, &pw, dtmp, TO(w, dwb, 0), T(dy, 0), 0);
    if (dwt >= 0) {
        conv(m, VAL_CALL_CONV_BWD_FILTER, &pw, tmp, TO(dwt, dwb, 0), T(dy, 0), aw);
        conv(m, VAL_CALL_CONV_BWD_FILTER, &dw, T(x, 0), T(dwt, 0), dtmp, aw);
    }
    if (dx >= 0)
        conv(m, VAL_CALL_CONV_BWD_DATA, &dw, T(dx, 0), T(w, 0), dtmp, ax);
    if (flags & F_PRE_RELU)
        touch(m, T(x, xb), dx >= 0 ? T(dx, xb) : NONE);
    return 1;
}

/* ---- batch norm, pooling, softmax ---- */

/* Batch norm over x [n, c, h, w]; its scale and bias (2c fp32 values) are
   the last 2c values of the parameter tensor (where the generators pack
   them), or scratch for fp16 data (cuDNN wants fp32 scale and bias). */
static int match_bn(mctx *m, int flags)
{
    val_nchw_shape s;
    memset(&s, 0, sizeof s);
    if (!ival(m->f, OA_N, 1, &s.n) || !ival(m->f, OA_C, 1, &s.c) || !ival(m->f, OA_H, 1, &s.h) ||
        !ival(m->f, OA_W, 1, &s.w) ||
        (double)s.n * (double)s.c * (double)s.h * (double)s.w > LM_ELEMS_MAX)
        return 0;
    s.k = s.c;
    s.ho = s.h;
    s.wo = s.w;
    int32_t x = fin(m, 0), p = fin(m, 1), y = fout(m, 0);
    if (x < 0 || y < 0)
        return 0;
    int64_t e = x_elems(&s), xb = m->es * e, pb = 8 * s.c;
    int in_param = !m->fp16 && p >= 0 && m->g->tensors[p].bytes >= pb;
    opnd param = in_param ? TO(p, m->g->tensors[p].bytes - pb, pb) : TO(VAL_ARG_SCRATCH, 0, pb);
    if (!m->bwd) {
        val_call *c = add(m, VAL_CALL_BN_FWD);
        if (!c)
            return 1;
        c->u.nchw = s;
        c->flops = 8.0 * (double)e;
        set(m, c, VAL_ARG_X, T(x, xb), 0);
        set(m, c, VAL_ARG_W, param, 0);
        set(m, c, VAL_ARG_Y, T(y, xb), 0);
        return 1;
    }
    int32_t dy = grad_out(m);
    int ax, ap;
    int32_t dx = grad_in(m, 0, &ax), dp = grad_in(m, 1, &ap);
    if (dy < 0)
        return 0;
    if (flags & F_RELU) /* the ReLU's mask: one more pass, over the output */
        touch(m, T(y, xb), NONE);
    val_call *c = add(m, VAL_CALL_BN_BWD);
    if (!c)
        return 1;
    c->u.nchw = s;
    c->flops = 8.0 * (double)e;
    set(m, c, VAL_ARG_X, T(x, xb), 0);
    set(m, c, VAL_ARG_W, param, 0);
    set(m, c, VAL_ARG_DY, T(dy, xb), 0);
    set(m, c, VAL_ARG_DX, dx >= 0 ? T(dx, xb) : TO(VAL_ARG_SCRATCH, 2 * pb, xb), ax);
    opnd dparam = in_param && dp >= 0 ? TO(dp, m->g->tensors[p].bytes - pb, pb)
                                      : TO(VAL_ARG_SCRATCH, pb, pb);
    set(m, c, VAL_ARG_DW, dparam, in_param && dp >= 0 ? ap : 0);
    return 1;
}

static int match_pool(mctx *m, op_class cls, int flags)
{
    val_nchw_shape s;
    memset(&s, 0, sizeof s);
    if (!ival(m->f, OA_N, 1, &s.n) || !ival(m->f, OA_C, 1, &s.c) || !ival(m->f, OA_H, 1, &s.h) ||
        !ival(m->f, OA_W, 1, &s.w) ||
        (double)s.n * (double)s.c * (double)s.h * (double)s.w > LM_ELEMS_MAX)
        return 0;
    s.k = s.c;
    s.groups = 1;
    if (cls == CLS_GPOOL) {
        s.r = (int32_t)s.h;
        s.s = (int32_t)s.w;
        s.stride = 1;
        s.ho = s.wo = 1;
    } else {
        int64_t r, ss, stride, pad, pad_w;
        if (!ival(m->f, OA_R, 1, &r) || !ival_def(m->f, OA_S, 1, r, &ss) ||
            !ival_def(m->f, OA_STRIDE, 1, 1, &stride) || !ival_def(m->f, OA_PAD, 0, 0, &pad) ||
            !ival_def(m->f, OA_PAD_W, 0, pad, &pad_w) || r > 1 << 20 || ss > 1 << 20 ||
            stride > 1 << 20 || pad > 1 << 20 || pad_w > 1 << 20)
            return 0;
        if (!ival_def(m->f, OA_HO, 1, (s.h + 2 * pad - r) / stride + 1, &s.ho) ||
            !ival_def(m->f, OA_WO, 1, (s.w + 2 * pad_w - ss) / stride + 1, &s.wo) || s.ho < 1 ||
            s.wo < 1 || (double)s.n * (double)s.c * (double)s.ho * (double)s.wo > LM_ELEMS_MAX)
            return 0;
        s.r = (int32_t)r;
        s.s = (int32_t)ss;
        s.stride = (int32_t)stride;
        s.pad_h = (int32_t)pad;
        s.pad_w = (int32_t)pad_w;
        s.max = (flags & F_MAX) != 0;
    }
    int32_t x = fin(m, 0), y = fout(m, 0);
    if (x < 0 || y < 0)
        return 0;
    int64_t xb = m->es * x_elems(&s), yb = m->es * y_elems(&s);
    double flops = (double)s.r * s.s * (double)y_elems(&s);
    if (!m->bwd) {
        val_call *c = add(m, VAL_CALL_POOL_FWD);
        if (!c)
            return 1;
        c->u.nchw = s;
        c->flops = flops;
        set(m, c, VAL_ARG_X, T(x, xb), 0);
        set(m, c, VAL_ARG_Y, T(y, yb), 0);
        return 1;
    }
    int32_t dy = grad_out(m);
    int ax;
    int32_t dx = grad_in(m, 0, &ax);
    if (dy < 0 || dx < 0)
        return 0;
    val_call *c = add(m, VAL_CALL_POOL_BWD);
    if (!c)
        return 1;
    c->u.nchw = s;
    c->flops = flops;
    /* average pooling keeps neither x nor y (cuDNN does not read them then):
       dx and dy stand in, having their shapes */
    set(m, c, VAL_ARG_X, T(reads(m->o, x) ? x : dx, xb), 0);
    set(m, c, VAL_ARG_W, T(reads(m->o, y) ? y : dy, yb), 0);
    set(m, c, VAL_ARG_DY, T(dy, yb), 0);
    set(m, c, VAL_ARG_DX, T(dx, xb), ax);
    return 1;
}

/* Rows and columns of a tensor's shape (softmax over the last dimension). */
static int rows_of(const graph_profile *g, int32_t t, val_rows_shape *s)
{
    if (t < 0)
        return 0;
    const graph_tensor *x = &g->tensors[t];
    if (x->n_shape < 1 || !x->shape)
        return 0;
    int64_t e = 1;
    for (int32_t i = 0; i < x->n_shape; i++) {
        if (x->shape[i] < 1 || (double)x->shape[i] * (double)e > LM_ELEMS_MAX)
            return 0;
        e *= x->shape[i];
    }
    s->cols = x->shape[x->n_shape - 1];
    s->rows = e / s->cols;
    return 1;
}

static int match_softmax(mctx *m, op_class cls)
{
    val_rows_shape s;
    int32_t x = fin(m, 0), y = fout(m, 0);
    if (!rows_of(m->g, x, &s))
        return 0;
    int64_t b = m->es * s.rows * s.cols;
    double flops = 5.0 * (double)s.rows * (double)s.cols;
    if (cls == CLS_LOSS) { /* forward: a reduction to a scalar (touch); backward: the
                              softmax of the logits into their gradient */
        int ax;
        int32_t dx = grad_in(m, 0, &ax);
        if (!m->bwd || dx < 0)
            return 0;
        val_call *c = add(m, VAL_CALL_SOFTMAX_FWD);
        if (c) {
            c->u.rows = s;
            c->flops = flops;
            set(m, c, VAL_ARG_X, T(x, b), 0);
            set(m, c, VAL_ARG_Y, T(dx, b), ax);
        }
        return 1;
    }
    if (y < 0)
        return 0;
    if (!m->bwd) {
        val_call *c = add(m, VAL_CALL_SOFTMAX_FWD);
        if (c) {
            c->u.rows = s;
            c->flops = flops;
            set(m, c, VAL_ARG_X, T(x, b), 0);
            set(m, c, VAL_ARG_Y, T(y, b), 0);
        }
        return 1;
    }
    int32_t dy = grad_out(m);
    int ax;
    int32_t dx = grad_in(m, 0, &ax);
    if (dy < 0 || dx < 0 || !reads(m->o, y))
        return 0;
    val_call *c = add(m, VAL_CALL_SOFTMAX_BWD);
    if (c) {
        c->u.rows = s;
        c->flops = flops;
        set(m, c, VAL_ARG_W, T(y, b), 0);
        set(m, c, VAL_ARG_DY, T(dy, b), 0);
        set(m, c, VAL_ARG_DX, T(dx, b), ax);
    }
    return 1;
}

static int is_fp16(const graph_profile *g, int32_t t)
{
    const char *d = t >= 0 ? g->tensors[t].dtype : NULL;
    return d && (!strcmp(d, "fp16") || !strcmp(d, "float16"));
}

/* The forward op of backward op o (NULL if its attrs do not name one whose
   type its own extends). */
static const graph_op *forward_of(const graph_profile *g, int32_t op, const graph_op *o)
{
    int64_t f;
    if (!ival(o, OA_FWD_OP, 0, &f) || f >= op || f >= g->n_ops)
        return NULL;
    const graph_op *fo = &g->ops[f];
    if (!fo->type || !o->type)
        return NULL;
    size_t n = strlen(fo->type);
    if (fo->phase != GP_FORWARD || strncmp(o->type, fo->type, n) ||
        strcmp(o->type + n, OT_BACKWARD_SUFFIX))
        return NULL;
    return fo;
}

int lm_match(const graph_profile *g, int32_t op, val_call *calls, int max, int *n)
{
    *n = 0;
    if (!g || !g->finished || op < 0 || op >= g->n_ops || max < 1)
        return SW_EINVAL;
    mctx m;
    memset(&m, 0, sizeof m);
    m.g = g;
    m.op = op;
    m.o = m.f = &g->ops[op];
    m.calls = calls;
    m.max = max;
    op_class cls = CLS_TOUCH;
    int flags = 0;
    if (m.o->phase == GP_FORWARD) {
        cls = classify(m.o->type, m.o->type ? strlen(m.o->type) : 0, &flags);
    } else if (m.o->phase == GP_BACKWARD) {
        const graph_op *f = forward_of(g, op, m.o);
        if (f) {
            int64_t gn, ga;
            m.f = f;
            m.bwd = 1;
            if (ival_def(m.o, OA_GRAD_NEW, 0, 0, &gn) && ival_def(m.o, OA_GRAD_ACC, 0, 0, &ga) &&
                gn < (1 << OA_GRAD_BITS) && ga < (1 << OA_GRAD_BITS) && !(gn & ga)) {
                m.gnew = (uint32_t)gn;
                m.gacc = (uint32_t)ga;
                cls = classify(f->type, strlen(f->type), &flags);
            }
        }
    }
    int32_t ref = m.f->n_out > 0 ? m.f->out[0] : m.f->n_in > 0 ? m.f->in[0] : -1;
    m.fp16 = is_fp16(g, ref);
    m.es = m.fp16 ? 2 : 4;
    int ok = 0;
    switch (cls) {
    case CLS_NONE: /* a view, and its backward unless that accumulates */
        if (!m.bwd || m.o->time_s <= 0)
            return 0;
        break;
    case CLS_CONV:
        ok = match_conv(&m, flags);
        break;
    case CLS_SEPCONV:
        ok = match_sepconv(&m, flags);
        break;
    case CLS_LINEAR:
        ok = match_linear(&m);
        break;
    case CLS_BMM:
        ok = match_bmm(&m);
        break;
    case CLS_BN:
        ok = match_bn(&m, flags);
        break;
    case CLS_POOL:
    case CLS_GPOOL:
        ok = match_pool(&m, cls, flags);
        break;
    case CLS_SOFTMAX:
    case CLS_LOSS:
        ok = match_softmax(&m, cls);
        break;
    case CLS_TOUCH:
        break;
    }
    if (m.overflow)
        return SW_EINVAL;
    if (!ok) {
        m.n = 0;
        touch_op(&m);
        if (m.overflow)
            return SW_EINVAL;
    }
    *n = m.n;
    return 0;
}

int lm_bind(val_call *calls, int *n, const val_region *reg, int32_t n_region)
{
    int bad = 0;
    for (int i = 0; i < *n && !bad; i++)
        for (int a = 0; a < VAL_ARGS && !bad; a++) {
            int32_t s = calls[i].arg[a];
            if (s < 0)
                continue;
            int32_t j = 0;
            while (j < n_region && reg[j].tensor != s)
                j++;
            if (j == n_region || calls[i].arg_off[a] < 0 || calls[i].arg_bytes[a] < 0 ||
                calls[i].arg_off[a] + calls[i].arg_bytes[a] > reg[j].bytes)
                bad = 1;
            else
                calls[i].arg[a] = j;
        }
    if (!bad)
        return 0;
    val_call t;
    memset(&t, 0, sizeof t);
    t.kind = VAL_CALL_TOUCH;
    t.fp16 = *n > 0 ? calls[0].fp16 : 0;
    for (int a = 0; a < VAL_ARGS; a++)
        t.arg[a] = VAL_ARG_NONE;
    for (int i = 0; i < *n; i++) {
        t.flops += calls[i].flops;
        t.bytes_read += calls[i].bytes_read;
        t.bytes_written += calls[i].bytes_written;
    }
    calls[0] = t;
    *n = 1;
    return 1;
}

/* ---- summary ---- */

int lm_summarize(const graph_profile *g, lm_summary *s)
{
    memset(s, 0, sizeof *s);
    if (!g || !g->finished)
        return SW_EINVAL;
    int32_t most = 1;
    for (int32_t i = 0; i < g->n_ops; i++)
        most = SW_MAX(most, g->acc_off[i + 1] - g->acc_off[i]);
    val_region *reg = sw_malloc((size_t)most * sizeof *reg);
    if (!reg)
        return SW_ENOMEM;
    s->ops = g->n_ops;
    for (int32_t i = 0; i < g->n_ops; i++) {
        val_call calls[LM_MAX_CALLS];
        int n = 0;
        int rc = lm_match(g, i, calls, LM_MAX_CALLS, &n);
        if (rc) {
            sw_free(reg);
            return rc;
        }
        int32_t nr = 0;
        for (int32_t k = g->acc_off[i]; k < g->acc_off[i + 1]; k++) {
            memset(&reg[nr], 0, sizeof reg[nr]);
            reg[nr].tensor = g->acc[k];
            reg[nr].bytes = g->tensors[g->acc[k]].bytes;
            nr++;
        }
        s->fallback_ops += lm_bind(calls, &n, reg, nr);
        double lib = 0, all = 0, op_flops;
        int nlib = 0;
        for (int c = 0; c < n; c++) {
            s->calls[calls[c].kind]++;
            all += calls[c].flops;
            double b = calls[c].bytes_read + calls[c].bytes_written;
            if (lm_is_library(calls[c].kind)) {
                lib += calls[c].flops;
                nlib++;
                s->library_bytes += b;
            } else {
                s->touch_bytes += b;
            }
        }
        if (!oa_get(&g->ops[i], OA_FLOPS, &op_flops) || !(op_flops >= 0))
            op_flops = all;
        int ph = g->ops[i].phase < GP__COUNT ? g->ops[i].phase : GP_UPDATE;
        s->flops[ph] += op_flops;
        s->library_flops[ph] += SW_MIN(lib, op_flops);
        if (nlib)
            s->library_ops++;
        else if (n)
            s->touch_ops++;
        else
            s->no_kernel_ops++;
    }
    sw_free(reg);
    return 0;
}

double lm_total_flops(const lm_summary *s)
{
    double t = 0;
    for (int p = 0; p < GP__COUNT; p++)
        t += s->flops[p];
    return t;
}

double lm_library_fraction(const lm_summary *s)
{
    double t = lm_total_flops(s), l = 0;
    for (int p = 0; p < GP__COUNT; p++)
        l += s->library_flops[p];
    return t > 0 ? l / t : 1;
}

double lm_phase_fraction(const lm_summary *s, int phase)
{
    if (phase < 0 || phase >= GP__COUNT)
        return 0;
    return s->flops[phase] > 0 ? s->library_flops[phase] / s->flops[phase] : 1;
}

void lm_summary_json(const lm_summary *s, const char *name, sw_buf *b)
{
    sw_buf_puts(b, "{\"profile\":");
    sw_buf_put_jstr(b, name ? name : "");
    sw_buf_printf(b, ",\"ops\":%d,\"library_ops\":%d,\"touch_ops\":%d,\"no_kernel_ops\":%d,"
                  "\"fallback_ops\":%d,\"library_flops_fraction\":",
                  s->ops, s->library_ops, s->touch_ops, s->no_kernel_ops, s->fallback_ops);
    sw_buf_put_f64(b, lm_library_fraction(s));
    sw_buf_puts(b, ",\"forward_library_flops_fraction\":");
    sw_buf_put_f64(b, lm_phase_fraction(s, GP_FORWARD));
    sw_buf_puts(b, ",\"backward_library_flops_fraction\":");
    sw_buf_put_f64(b, lm_phase_fraction(s, GP_BACKWARD));
    sw_buf_puts(b, ",\"flops\":");
    sw_buf_put_f64(b, lm_total_flops(s));
    sw_buf_puts(b, ",\"library_bytes\":");
    sw_buf_put_f64(b, s->library_bytes);
    sw_buf_puts(b, ",\"touch_bytes\":");
    sw_buf_put_f64(b, s->touch_bytes);
    sw_buf_puts(b, ",\"calls\":{");
    for (int k = 0; k < VAL_CALL__COUNT; k++)
        sw_buf_printf(b, "%s\"%s\":%lld", k ? "," : "", lm_call_name(k), (long long)s->calls[k]);
    sw_buf_puts(b, "}}\n");
}

void lm_summary_text(const lm_summary *s, const char *name, sw_buf *b)
{
    sw_buf_printf(b, "profile %s: %d ops: %d with library calls, %d touch kernels only, %d "
                  "without a kernel", name ? name : "", s->ops, s->library_ops, s->touch_ops,
                  s->no_kernel_ops);
    if (s->fallback_ops)
        sw_buf_printf(b, " (%d fell back to touch: shapes larger than their tensors)",
                      s->fallback_ops);
    sw_buf_printf(b, "\n  FLOPs on library calls  %.2f%% of %.4g (forward %.2f%%, backward "
                  "%.2f%%)\n", 100 * lm_library_fraction(s), lm_total_flops(s),
                  100 * lm_phase_fraction(s, GP_FORWARD), 100 * lm_phase_fraction(s, GP_BACKWARD));
    sw_buf_puts(b, "  calls                  ");
    int first = 1;
    for (int k = 0; k < VAL_CALL__COUNT; k++)
        if (s->calls[k]) {
            sw_buf_printf(b, "%s%s %lld", first ? "" : ", ", lm_call_name(k),
                          (long long)s->calls[k]);
            first = 0;
        }
    sw_buf_puts(b, first ? "none\n" : "\n");
}
