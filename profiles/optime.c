/* optime.c: what the cost model (costmodel.c) makes of one operator of a
   profile, from the operator's type and attributes (opattr.h): its class and
   cost terms. `swapsim calibrate` compares it with recorded times
   (profiles/calrec.c); `swapsim import pytorch --times model` times a
   recording that has no GPU times with it. */
#include "optime.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static int has(const graph_op *o, const char *k)
{
    for (int32_t i = 0; i < o->n_attr; i++)
        if (!strcmp(o->attr[i].key, k))
            return 1;
    return 0;
}

static double at(const graph_op *o, const char *k, double def)
{
    for (int32_t i = 0; i < o->n_attr; i++)
        if (!strcmp(o->attr[i].key, k))
            return o->attr[i].value;
    return def;
}

static int64_t iat(const graph_op *o, const char *k, int64_t def)
{
    double v = at(o, k, (double)def);
    return v >= 0 && v < 9e15 ? (int64_t)v : def;
}

/* does s contain w, ignoring case? */
static int ci_has(const char *s, const char *w)
{
    size_t n = strlen(w);
    for (; s && *s; s++) {
        size_t i = 0;
        while (i < n && s[i] && tolower((unsigned char)s[i]) == w[i])
            i++;
        if (i == n)
            return 1;
    }
    return 0;
}

static int ci_any(const char *s, const char *const *w, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (ci_has(s, w[i]))
            return 1;
    return 0;
}

static int cmp_name(const void *a, const void *b)
{
    const ot_name *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : (x->op > y->op) - (x->op < y->op);
}

int ot_index_build(ot_index *x, const graph_profile *g)
{
    x->g = g;
    x->n = 0;
    x->ix = sw_malloc(((size_t)g->n_ops + 1) * sizeof *x->ix);
    if (!x->ix)
        return SW_ENOMEM;
    for (int32_t i = 0; i < g->n_ops; i++)
        if (g->ops[i].phase == GP_FORWARD && g->ops[i].name) {
            x->ix[x->n].name = g->ops[i].name;
            x->ix[x->n++].op = i;
        }
    qsort(x->ix, (size_t)x->n, sizeof *x->ix, cmp_name);
    return 0;
}

void ot_index_free(ot_index *x)
{
    sw_free(x->ix);
    x->ix = NULL;
    x->n = 0;
}

/* the forward operator of generated backward operator o, or NULL */
static const graph_op *forward_of(const ot_index *x, const graph_op *o)
{
    size_t l = o->name ? strlen(o->name) : 0;
    if (l < 5 || strcmp(o->name + l - 4, "_bwd"))
        return NULL;
    int32_t lo = 0, hi = x->n - 1;
    while (lo <= hi) {
        int32_t mid = lo + (hi - lo) / 2;
        const char *nm = x->ix[mid].name;
        int c = strncmp(nm, o->name, l - 4);
        if (!c && nm[l - 4])
            c = 1;
        if (!c)
            return &x->g->ops[x->ix[mid].op];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return NULL;
}

/* does the backward operator o compute its input's gradient? need_dx where
   the importer says; for a generated one, whether its forward operator's
   input is a tensor of the model (as profiles/nn.c decides) */
static int need_dx(const ot_index *x, const graph_op *o)
{
    if (has(o, "need_dx"))
        return at(o, "need_dx", 1) != 0;
    const graph_op *f = forward_of(x, o);
    if (f && f->n_in > 0)
        return x->g->tensors[f->in[0]].kind != GK_INPUT;
    return 1;
}

/* bytes an operator reads and writes, from its accesses (a mutated storage:
   both) */
static void access_bytes(const graph_profile *g, const graph_op *o, double *rd, double *wr)
{
    *rd = *wr = 0;
    for (int32_t i = 0; i < o->n_in; i++)
        *rd += (double)g->tensors[o->in[i]].bytes;
    for (int32_t i = 0; i < o->n_out; i++)
        *wr += (double)g->tensors[o->out[i]].bytes;
    for (int32_t i = 0; i < o->n_mut; i++) {
        *rd += (double)g->tensors[o->mut[i]].bytes;
        *wr += (double)g->tensors[o->mut[i]].bytes;
    }
}

static void add_term(ot_pred *r, const cm_terms *t)
{
    if (r->n_terms < OT_MAX_TERMS && t->kernels + (t->flops > 0) + (t->bytes > 0) > 0)
        r->t[r->n_terms++] = *t;
}

void ot_predict(const graph_profile *g, int32_t i, const cm_ctx *c, const ot_index *nx,
                ot_pred *r)
{
    const graph_op *o = &g->ops[i];
    const char *t = o->type ? o->type : (o->name ? o->name : "");
    int bwd = o->phase == GP_BACKWARD;
    double es = (double)c->esize;
    cm_cost cc;
    r->n_terms = 0;
    /* recurrent layers are their products (the importer writes m, n, k) */
    static const char *const gemm_w[] = {"mm", "linear", "matmul", "gemm", "lstm", "gru", "rnn"};
    static const char *const elem_w[] = {"relu", "add", "sub", "mul", "div", "threshold",
                                         "dropout", "sigmoid", "tanh", "gelu", "silu", "clamp",
                                         "hardtanh", "leaky", "elu", "neg", "exp", "sqrt", "pow",
                                         "where", "masked_fill", "swish"};
    static const char *const copy_w[] = {"cat", "concat", "split", "copy", "clone", "contiguous",
                                         "stack", "transpose", "permute", "pad", "slice", "index",
                                         "gather", "select"};
    static const char *const soft_w[] = {"softmax", "loss", "nll", "entropy"};
    if (o->phase == GP_UPDATE) {
        r->cls = OT_OTHER;
    } else if (ci_has(t, "conv")) {
        r->cls = bwd ? OT_CONV_BWD : OT_CONV_FWD;
        if (!has(o, "k") || !has(o, "r") || !has(o, "c") || !has(o, "h"))
            return;
        int64_t n = iat(o, "n", 1), ci = iat(o, "c", 1), h = iat(o, "h", 1), w = iat(o, "w", 1),
                k = iat(o, "k", 1), rr = iat(o, "r", 1), ss = iat(o, "s", rr),
                gr = iat(o, "groups", 1), st = iat(o, "stride", 1);
        int64_t pad = iat(o, "pad", 0), pad_w = iat(o, "pad_w", pad);
        int64_t ho = iat(o, "ho", st > 0 ? (h + 2 * pad - rr) / st + 1 : h),
                wo = iat(o, "wo", st > 0 ? (w + 2 * pad_w - ss) / st + 1 : w);
        int dx = bwd ? need_dx(nx, o) : 1;
        if (ci_has(t, "sepconv")) { /* depthwise + pointwise, as nn_sepconv */
            cm_conv(c, n, ci, h, w, ci, rr, rr, ci, ho, wo, dx, &cc);
            add_term(r, bwd ? &cc.bwd : &cc.fwd);
            cm_conv(c, n, ci, ho, wo, k, 1, 1, 1, ho, wo, 1, &cc);
            add_term(r, bwd ? &cc.bwd : &cc.fwd);
        } else {
            cm_conv(c, n, ci, h, w, k, rr, ss, gr, ho, wo, dx, &cc);
            add_term(r, bwd ? &cc.bwd : &cc.fwd);
        }
        if (!strncmp(t, "relu_", 5)) { /* a ReLU fused on the input: one more pass */
            double x = (double)n * (double)ci * (double)h * (double)w * es;
            cm_terms e = {CM_ELEMWISE, 0, bwd ? 2 * x : x, 0, 0};
            add_term(r, &e);
        }
        return;
    } else if (ci_any(t, gemm_w, SW_ARRAY_LEN(gemm_w)) && has(o, "m") && has(o, "n") &&
               has(o, "k")) {
        r->cls = OT_GEMM;
        int dx = !bwd || ci_has(t, "bmm") ? 1 : need_dx(nx, o);
        if (bwd && has(o, "need_dx"))
            dx = at(o, "need_dx", 1) != 0;
        cm_matmul(c, iat(o, "batch", 1), iat(o, "m", 1), iat(o, "n", 1), iat(o, "k", 1), dx, &cc);
        add_term(r, bwd ? &cc.bwd : &cc.fwd);
        return;
    } else if (ci_any(t, gemm_w, SW_ARRAY_LEN(gemm_w)) && !ci_has(t, "add_") &&
               strcmp(t, "add")) {
        r->cls = OT_GEMM; /* a product without its shapes */
        return;
    } else if (ci_has(t, "batch_norm") || ci_has(t, "batchnorm")) {
        r->cls = OT_NORM;
        if (has(o, "c") && has(o, "n")) {
            double e = (double)iat(o, "n", 1) * (double)iat(o, "c", 1) * (double)iat(o, "h", 1) *
                       (double)iat(o, "w", 1);
            int relu = ci_has(t, "relu");
            cm_simple(c, CM_NORM, 2 * e, e, 8, relu ? 4 * e : 3 * e, e, &cc);
            add_term(r, bwd ? &cc.bwd : &cc.fwd);
            return;
        }
    } else if ((ci_has(t, "pool") || ci_has(t, "meanbackward")) && has(o, "c") && has(o, "h")) {
        r->cls = OT_POOL;
        double nc = (double)iat(o, "n", 1) * (double)iat(o, "c", 1);
        double ie = nc * (double)iat(o, "h", 1) * (double)iat(o, "w", 1);
        double oe = nc * (double)iat(o, "ho", 1) * (double)iat(o, "wo", 1);
        double rr = (double)iat(o, "r", 1);
        if (ci_has(t, "max"))
            cm_simple(c, CM_POOL, ie, oe, rr * rr, 2 * oe + ie, ie, &cc);
        else
            cm_simple(c, CM_POOL, ie, oe, oe > 0 && !has(o, "r") ? ie / oe : rr * rr, oe, ie,
                      &cc);
        add_term(r, bwd ? &cc.bwd : &cc.fwd);
        return;
    } else if (ci_any(t, elem_w, SW_ARRAY_LEN(elem_w))) {
        r->cls = OT_ELEMWISE;
    } else {
        r->cls = OT_OTHER;
    }
    /* memory bound: the bytes it reads and writes */
    cm_kind kind = o->phase == GP_UPDATE                            ? CM_UPDATE
                   : r->cls == OT_NORM || ci_has(t, "norm")          ? CM_NORM
                   : r->cls == OT_ELEMWISE                           ? CM_ELEMWISE
                   : ci_any(t, soft_w, SW_ARRAY_LEN(soft_w))         ? CM_SOFTMAX
                   : ci_has(t, "embedding")                          ? CM_EMBED
                   : ci_any(t, copy_w, SW_ARRAY_LEN(copy_w))         ? CM_COPY
                                                                     : CM_ELEMWISE;
    double bytes;
    if (has(o, "in_elems") || has(o, "out_elems"))
        bytes = es * (at(o, "in_elems", 0) + at(o, "out_elems", 0));
    else if (!bwd && o->phase != GP_UPDATE && has(o, "bytes"))
        bytes = at(o, "bytes", 0);
    else {
        double rd, wr;
        access_bytes(g, o, &rd, &wr);
        bytes = rd + wr;
    }
    if (bytes <= 0)
        return;
    cm_terms m = {kind, 0, bytes, 0, 1};
    add_term(r, &m);
}

double ot_seconds(const cm_ctx *c, const ot_pred *r)
{
    double t = 0;
    for (int i = 0; i < r->n_terms; i++)
        t += cm_time_with(c, cm_constants(r->t[i].kind), c->dev->launch_overhead_s, &r->t[i]);
    return t;
}
