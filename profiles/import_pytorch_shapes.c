/* import_pytorch_shapes.c: the `pytorch` importer's operator attributes for the cost
   model (shapes of convolutions, matrix products, norms, pools, RNNs) and where
   each operator's time comes from. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import_pytorch.h"
#include "opattr.h"
#include "optime.h"

/* ---- shapes: the attributes the cost model needs ----

   Each operator gets the attributes the generators write for the same layer
   (profiles/nn.c), read from the execution trace's inputs: a convolution
   n, c, h, w, k, r, s, stride, pad, pad_w, groups, ho, wo; a matrix product
   m, n, k, batch; a batch norm n, c, h, w; a pooling n, c, h, w, r, s,
   stride, pad, ho, wo; every operator in_elems and out_elems, the elements
   of the device tensors its first kernel-launching node reads and writes.
   A backward operator has its forward operator's (as autograd.c gives them)
   and need_dx (0: no input gradient: a first layer's). */

/* the shapes of node e's inputs (out 0) or outputs: 1.1.x "shapes" beside
   the values, 1.0.x "input_shapes" / "output_shapes" (NULL if none) */
static const json_value *node_shapes(const etn *e, int out)
{
    const json_value *io = json_get(e->node, out ? "outputs" : "inputs");
    const json_value *sh = io && io->type == JSON_OBJECT
                               ? json_get(io, "shapes")
                               : json_get(e->node, out ? "output_shapes" : "input_shapes");
    return sh && sh->type == JSON_ARRAY ? sh : NULL;
}

/* the dimensions of argument i (an array of integers): how many (at most
   max), or -1 */
static int shape_dims(const json_value *sh, uint32_t i, int64_t *d, int max)
{
    if (!sh || i >= sh->n)
        return -1;
    const json_value *a = &sh->u.items[i];
    if (a->type != JSON_ARRAY || a->n > (uint32_t)max)
        return -1;
    for (uint32_t k = 0; k < a->n; k++) {
        const json_value *x = &a->u.items[k];
        if (x->type != JSON_NUMBER || !x->is_int || x->u.num.i < 0 || x->u.num.i > (1 << 30))
            return -1;
        d[k] = x->u.num.i;
    }
    return (int)a->n;
}

/* integers of value i: an integer, a boolean, or a list of them (stride
   [2, 2], output_mask [true, true, false]): how many (at most max), or -1 */
static int value_ints(const json_value *vals, uint32_t i, int64_t *d, int max)
{
    if (!vals || i >= vals->n)
        return -1;
    const json_value *a = &vals->u.items[i];
    uint32_t n = a->type == JSON_ARRAY ? a->n : 1;
    if (n > (uint32_t)max)
        return -1;
    for (uint32_t k = 0; k < n; k++) {
        const json_value *x = a->type == JSON_ARRAY ? &a->u.items[k] : a;
        if (x->type == JSON_TRUE || x->type == JSON_FALSE)
            d[k] = x->type == JSON_TRUE;
        else if (x->type == JSON_NUMBER && x->is_int && x->u.num.i >= -(1 << 30) &&
                 x->u.num.i <= (1 << 30))
            d[k] = x->u.num.i;
        else
            return -1;
    }
    return (int)n;
}

/* elements of the device tensors among vals (lists of tensors included) */
static double tensor_elems(const json_value *vals, const char *dev)
{
    double n = 0;
    for (uint32_t i = 0; vals && vals->type == JSON_ARRAY && i < vals->n; i++) {
        const json_value *v = &vals->u.items[i];
        if (pt_is_tensor(v)) {
            if (pt_starts(v->u.items[5].u.str, dev) && v->u.items[3].u.num.i > 0)
                n += (double)v->u.items[3].u.num.i;
        } else if (v->type == JSON_ARRAY) {
            n += tensor_elems(v, dev);
        }
    }
    return n;
}

/* nodes that launch no kernel of their own (views, allocations) */
static int is_viewlike(const char *name)
{
    static const char *const v[] = {
        "aten::view", "aten::_unsafe_view", "aten::reshape", "aten::expand", "aten::expand_as",
        "aten::as_strided", "aten::t", "aten::transpose", "aten::permute", "aten::squeeze",
        "aten::unsqueeze", "aten::slice", "aten::select", "aten::narrow", "aten::detach",
        "aten::alias", "aten::empty", "aten::empty_like", "aten::empty_strided", "aten::flatten",
        "aten::unflatten", "aten::split", "aten::chunk", "aten::unbind", "aten::resize_",
        "aten::lift_fresh", "aten::to", "aten::_to_copy", "aten::contiguous", "aten::numpy_T"};
    for (size_t i = 0; i < SW_ARRAY_LEN(v); i++)
        if (!strcmp(name, v[i]))
            return 1;
    return 0;
}

/* the first node of the operator (first/next: its nodes in id order) named
   one of names, or -1 */
static int32_t op_node(const et *t, const int32_t *first, const int32_t *next, int32_t top,
                       const char *const *names, size_t nn)
{
    for (int32_t j = first[top]; j >= 0; j = next[j])
        for (size_t k = 0; k < nn; k++)
            if (!strcmp(t->n[j].name, names[k]))
                return j;
    return -1;
}

typedef struct conv_layout {
    const char *name;
    int x, w, y, y_out; /* argument of input, weight, output (y_out: among the outputs) */
    int stride, pad, groups, mask; /* value positions (-1: none) */
} conv_layout;

static const conv_layout conv_layouts[] = {
    {"aten::convolution_backward", 1, 2, 0, 0, 4, 5, 9, 10},
    {"aten::convolution", 0, 1, 0, 1, 3, 4, 8, -1},
    {"aten::_convolution", 0, 1, 0, 1, 3, 4, 8, -1},
    {"aten::conv2d", 0, 1, 0, 1, 3, 4, 6, -1},
    {"aten::cudnn_convolution", 0, 1, 0, 1, 3, 2, 5, -1},
};

static int set_attrs(graph_profile *g, int32_t op, const char *const *keys, const double *vals,
                     int n)
{
    for (int i = 0; i < n; i++)
        if (graph_op_attr(g, op, keys[i], vals[i]))
            return SW_ENOMEM;
    return 0;
}

/* convolution attributes of op from node e laid out as l; 0 if the shapes
   are not those of a 2-D convolution (nothing set) */
static int conv_attrs(graph_profile *g, int32_t op, const etn *e, const conv_layout *l)
{
    int64_t x[8], w[8], y[8], st[4], pd[4], gr[2], mk[4];
    const json_value *in = node_shapes(e, 0), *out = node_shapes(e, 1);
    if (shape_dims(in, (uint32_t)l->x, x, 8) != 4 || shape_dims(in, (uint32_t)l->w, w, 8) != 4 ||
        shape_dims(l->y_out ? out : in, (uint32_t)l->y, y, 8) != 4)
        return 0;
    int ns = value_ints(e->ins, (uint32_t)l->stride, st, 4);
    int np = value_ints(e->ins, (uint32_t)l->pad, pd, 4);
    if (value_ints(e->ins, (uint32_t)l->groups, gr, 2) != 1 || gr[0] < 1)
        gr[0] = 1;
    static const char *const k[] = {"n", "c", "h", "w", "k", "r", "s", "stride", "pad", "pad_w",
                                    "groups", "ho", "wo"};
    double v[] = {(double)x[0], (double)x[1], (double)x[2], (double)x[3], (double)w[0],
                  (double)w[2], (double)w[3], ns >= 1 ? (double)st[0] : 1,
                  np >= 1 ? (double)pd[0] : 0, np >= 2 ? (double)pd[1] : np >= 1 ? (double)pd[0] : 0,
                  (double)gr[0], (double)y[2], (double)y[3]};
    if (set_attrs(g, op, k, v, 13))
        return SW_ENOMEM;
    if (l->mask >= 0 && value_ints(e->ins, (uint32_t)l->mask, mk, 4) >= 1 &&
        graph_op_attr(g, op, "need_dx", (double)(mk[0] != 0)))
        return SW_ENOMEM;
    return 1;
}

/* Attributes of profile op `op` made of the nodes of top-level node top;
   fop: its forward operator's profile op (a backward operator), or -1. */
/* A recurrent layer (aten::lstm, gru, rnn_tanh, rnn_relu, _cudnn_rnn): its
   products are each 2-D weight (w_ih: gates x input, w_hh: gates x hidden, per
   layer and direction) times every token of the sequence, written as `batch`
   products (one per ih/hh pair) of m = tokens, n = the first weight's rows,
   k = the weights' elements / (batch x n): the FLOPs are exact, the
   recurrence's dependence between steps is not modelled. 1: attributes set,
   0: not a recurrent layer or no shapes, SW_ENOMEM. */
static int rnn_attrs(ctx *c, const int32_t *first, const int32_t *next, int32_t top, int32_t op)
{
    static const char *const rnn_names[] = {"aten::_cudnn_rnn", "aten::lstm", "aten::gru",
                                            "aten::rnn_tanh", "aten::rnn_relu"};
    int32_t j = op_node(&c->t, first, next, top, rnn_names, SW_ARRAY_LEN(rnn_names));
    if (j < 0)
        return 0;
    const json_value *sh = node_shapes(&c->t.n[j], 0);
    int64_t x[8];
    if (shape_dims(sh, 0, x, 8) != 3)
        return 0;
    double tokens = (double)x[0] * (double)x[1], rows = 0, elems = 0;
    int nw = 0;
    for (uint32_t i = 1; i < sh->n; i++) {
        const json_value *l = &sh->u.items[i];
        if (l->type != JSON_ARRAY || l->n == 0 || l->u.items[0].type != JSON_ARRAY)
            continue;
        for (uint32_t w = 0; w < l->n; w++) {
            int64_t d[4];
            if (shape_dims(l, w, d, 4) != 2)
                continue;
            if (!nw)
                rows = (double)d[0];
            elems += (double)d[0] * (double)d[1];
            nw++;
        }
        if (nw)
            break; /* the weights: the first list with 2-D tensors (not hx) */
    }
    if (nw < 2 || rows <= 0)
        return 0;
    double batch = (double)(nw / 2);
    static const char *const k[] = {"m", "n", "k", "batch"};
    double v[] = {tokens, rows, elems / (batch * rows), batch};
    return set_attrs(c->g, op, k, v, 4) ? SW_ENOMEM : 1;
}

int pt_shape_attrs(ctx *c, const int32_t *first, const int32_t *next, int32_t top,
                   int32_t op, int32_t fop)
{
    const et *t = &c->t;
    graph_profile *g = c->g;
    if (fop >= 0)
        for (int32_t k = 0; k < g->ops[fop].n_attr; k++) {
            const graph_attr *a = &g->ops[fop].attr[k];
            if (strcmp(a->key, "et_id") && graph_op_attr(g, op, a->key, a->value))
                return SW_ENOMEM;
        }
    /* the elements the first kernel-launching node reads and writes */
    for (int32_t j = first[top]; j >= 0; j = next[j]) {
        const etn *e = &t->n[j];
        if (!pt_starts(e->name, "aten::") || is_viewlike(e->name))
            continue;
        double ie = tensor_elems(e->ins, c->dev), oe = tensor_elems(e->outs, c->dev);
        if (ie + oe <= 0)
            continue;
        if (graph_op_attr(g, op, "in_elems", ie) || graph_op_attr(g, op, "out_elems", oe))
            return SW_ENOMEM;
        break;
    }
    /* convolutions */
    for (size_t l = 0; l < SW_ARRAY_LEN(conv_layouts); l++) {
        const char *nm = conv_layouts[l].name;
        int32_t j = op_node(t, first, next, top, &nm, 1);
        if (j < 0)
            continue;
        int rc = conv_attrs(g, op, &t->n[j], &conv_layouts[l]);
        if (rc)
            return rc < 0 ? rc : 0;
    }
    /* recurrent layers (cuDNN's or the native ones), as matrix products */
    if (fop < 0) {
        int rc = rnn_attrs(c, first, next, top, op);
        if (rc)
            return rc < 0 ? rc : 0;
    }
    /* matrix products: (a, b) at these positions; a backward counts its
       products (two: input and weight gradients; one: weight only) */
    static const char *const mm_names[] = {"aten::addmm", "aten::mm", "aten::bmm",
                                           "aten::baddbmm"};
    static const int mm_a[] = {1, 0, 0, 1};
    int nmm = 0;
    int32_t jm = -1;
    size_t which = 0;
    for (int32_t j = first[top]; j >= 0; j = next[j])
        for (size_t k = 0; k < SW_ARRAY_LEN(mm_names); k++)
            if (!strcmp(t->n[j].name, mm_names[k])) {
                if (jm < 0) {
                    jm = j;
                    which = k;
                }
                nmm++;
            }
    if (jm >= 0 && fop >= 0)
        return graph_op_attr(g, op, "need_dx", nmm >= 2) ? SW_ENOMEM : 0;
    if (jm >= 0) {
        int64_t a[8], b[8];
        const json_value *in = node_shapes(&t->n[jm], 0);
        int na = shape_dims(in, (uint32_t)mm_a[which], a, 8);
        int nb = shape_dims(in, (uint32_t)mm_a[which] + 1, b, 8);
        if (na >= 2 && nb >= 2 && na == nb && na <= 3) {
            static const char *const k[] = {"m", "n", "k", "batch"};
            double v[] = {(double)a[na - 2], (double)b[nb - 1], (double)a[na - 1],
                          na == 3 ? (double)a[0] : 1};
            return set_attrs(g, op, k, v, 4);
        }
        return 0;
    }
    if (fop >= 0)
        return 0;
    /* batch norm */
    static const char *const bn_names[] = {"aten::batch_norm", "aten::native_batch_norm",
                                           "aten::cudnn_batch_norm",
                                           "aten::_batch_norm_impl_index"};
    int32_t j = op_node(t, first, next, top, bn_names, SW_ARRAY_LEN(bn_names));
    if (j >= 0) {
        int64_t x[8];
        int nx = shape_dims(node_shapes(&t->n[j], 0), 0, x, 8);
        if (nx >= 2) {
            static const char *const k[] = {"n", "c", "h", "w"};
            double v[] = {(double)x[0], (double)x[1], nx >= 3 ? (double)x[2] : 1,
                          nx >= 4 ? (double)x[3] : 1};
            return set_attrs(g, op, k, v, 4);
        }
        return 0;
    }
    /* pooling: (self, kernel, stride, padding, ...) or adaptive (self, output_size) */
    static const char *const pool_names[] = {"aten::max_pool2d", "aten::max_pool2d_with_indices",
                                             "aten::avg_pool2d", "aten::adaptive_avg_pool2d",
                                             "aten::adaptive_max_pool2d"};
    j = op_node(t, first, next, top, pool_names, SW_ARRAY_LEN(pool_names));
    if (j >= 0) {
        const etn *e = &t->n[j];
        int64_t x[8], y[8], kr[4], st[4], pd[4];
        if (shape_dims(node_shapes(e, 0), 0, x, 8) != 4 ||
            shape_dims(node_shapes(e, 1), 0, y, 8) != 4 || y[2] < 1 || y[3] < 1)
            return 0;
        int adaptive = pt_starts(e->name, "aten::adaptive");
        int nk = adaptive ? 0 : value_ints(e->ins, 1, kr, 4);
        int ns = adaptive ? 0 : value_ints(e->ins, 2, st, 4);
        int np = adaptive ? 0 : value_ints(e->ins, 3, pd, 4);
        double r = nk >= 1 ? (double)kr[0] : (double)((x[2] + y[2] - 1) / y[2]);
        double sc = nk >= 2 ? (double)kr[1] : nk >= 1 ? r : (double)((x[3] + y[3] - 1) / y[3]);
        static const char *const k[] = {"n", "c", "h", "w", "r", "s", "stride", "pad", "ho", "wo"};
        double v[] = {(double)x[0], (double)x[1], (double)x[2], (double)x[3], r, sc,
                      ns >= 1 ? (double)st[0] : r, np >= 1 ? (double)pd[0] : 0, (double)y[2],
                      (double)y[3]};
        return set_attrs(g, op, k, v, 10);
    }
    return 0;
}

/* Marks where each operator's time came from (OA_TIME_SRC); with by_model,
   replaces every time with the cost model's (profiles/optime.c) and counts the
   operators it cannot time (left at 0 s). 0 or SW_ENOMEM. */
int pt_op_times(graph_profile *g, int by_model, int32_t *untimed)
{
    *untimed = 0;
    ot_index nx;
    cm_ctx cc;
    if (by_model) {
        if (ot_index_build(&nx, g))
            return SW_ENOMEM;
        cm_init(&cc, &g->device, 0);
    }
    int rc = 0;
    for (int32_t i = 0; i < g->n_ops && !rc; i++) {
        graph_op *o = &g->ops[i];
        if (by_model) {
            ot_pred p;
            ot_predict(g, i, &cc, &nx, &p);
            o->time_s = ot_seconds(&cc, &p);
            if (!p.n_terms)
                (*untimed)++;
            rc = graph_op_attr(g, i, OA_TIME_SRC, OA_TIME_MODEL);
        } else if (o->time_s > 0) {
            rc = graph_op_attr(g, i, OA_TIME_SRC, OA_TIME_TRACE);
        }
    }
    if (by_model)
        ot_index_free(&nx);
    return rc ? SW_ENOMEM : 0;
}
