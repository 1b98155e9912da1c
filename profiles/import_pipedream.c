/* import_pipedream.c: the `pipedream` importer: PipeDream's per-layer profile
   (profiler/.../graph.txt) turned into a training graph. Each node is a
   module with measured forward and backward times, its output activation
   size and its parameter size; edges give the dataflow. Forward operators
   follow the edges, backward operators come in reverse (autograd.h) with a
   gradient per activation and per parameter, then one SGD update per
   parameter (timed from the device's memory bandwidth: PipeDream does not
   measure it).

   Modelling choices (documented in docs/cli.md): every module output is a
   new tensor of its activation_size, including in-place ReLU/Add (PipeDream
   reports a size per node either way); a backward reads the module's inputs
   and, for activations, its output; several sinks are joined by a zero-time
   loss operator. Shapes of convolutions, linear layers, batch norms and
   pooling are recovered from the module text and the activation sizes and
   attached as attrs (n, c, h, w, k, r, s, stride, pad; m, n, k). */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autograd.h"
#include "opattr.h"
#include "importers.h"

typedef struct pd_node {
    char *id;
    char *repr;
    char type[48];
    double fwd_ms, bwd_ms;
    int64_t act, par;
    int line;
    int32_t *pred;
    int n_pred, cap_pred;
    int32_t tensor; /* output tensor */
    int32_t op;
    int indeg, n_succ;
} pd_node;

typedef struct pd_graph {
    pd_node *nodes;
    size_t cap;
    int n;
    const char *file;
} pd_graph;

static void pd_free(pd_graph *p)
{
    for (int i = 0; i < p->n; i++) {
        sw_free(p->nodes[i].id);
        sw_free(p->nodes[i].repr);
        sw_free(p->nodes[i].pred);
    }
    sw_free(p->nodes);
}

static int find_node(const pd_graph *p, const char *id, size_t len)
{
    for (int i = 0; i < p->n; i++)
        if (strlen(p->nodes[i].id) == len && memcmp(p->nodes[i].id, id, len) == 0)
            return i;
    return -1;
}

static const char *find_sep(const char *s, const char *end)
{
    for (const char *q = s; q + 4 <= end; q++)
        if (q[0] == ' ' && q[1] == '-' && q[2] == '-' && q[3] == ' ')
            return q;
    return NULL;
}

static const char *find_last_sep(const char *s, const char *end)
{
    for (const char *q = end - 4; q >= s; q--)
        if (q[0] == ' ' && q[1] == '-' && q[2] == '-' && q[3] == ' ')
            return q;
    return NULL;
}

static int valid_id(const char *s, size_t n)
{
    if (n == 0 || n > 64)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)s[i]) && s[i] != '_')
            return 0;
    return 1;
}

/* "key=value, key=value" metrics of a node line */
static int parse_metrics(pd_graph *p, int line, const char *s, const char *end, pd_node *nd,
                         sw_err *err)
{
    static const char *keys[4] = {"forward_compute_time", "backward_compute_time",
                                  "activation_size", "parameter_size"};
    double v[4];
    int seen[4] = {0, 0, 0, 0};
    const char *q = s;
    while (q < end) {
        while (q < end && (*q == ' ' || *q == ','))
            q++;
        if (q >= end)
            break;
        const char *eq = memchr(q, '=', (size_t)(end - q));
        if (!eq)
            return sw_fail(err, SW_EINVAL, "%s:%d: expected key=value metrics after the module, "
                           "got '%.*s'", p->file, line, (int)(end - q), q);
        const char *ve = memchr(eq, ',', (size_t)(end - eq));
        if (!ve)
            ve = end;
        int k = -1;
        for (int i = 0; i < 4; i++)
            if ((size_t)(eq - q) == strlen(keys[i]) && !memcmp(q, keys[i], (size_t)(eq - q)))
                k = i;
        char num[64];
        size_t nl = (size_t)(ve - eq - 1);
        while (nl > 0 && isspace((unsigned char)eq[nl]))
            nl--;
        if (k >= 0 && eq[1] == '[') { /* a tuple of outputs: "[a; b; c]" (GNMT) */
            const char *r = eq + 2, *close = memchr(r, ']', (size_t)(end - r));
            if (!close)
                return sw_fail(err, SW_EINVAL, "%s:%d: %s: unterminated list", p->file, line,
                               keys[k]);
            ve = memchr(close, ',', (size_t)(end - close));
            if (!ve)
                ve = end;
            v[k] = 0;
            while (r < close) {
                const char *semi = memchr(r, ';', (size_t)(close - r));
                if (!semi)
                    semi = close;
                size_t il = (size_t)(semi - r);
                while (il && isspace((unsigned char)*r)) {
                    r++;
                    il--;
                }
                double x;
                if (il == 0 || il >= sizeof num)
                    return sw_fail(err, SW_EINVAL, "%s:%d: %s: expected numbers in the list",
                                   p->file, line, keys[k]);
                memcpy(num, r, il);
                num[il] = 0;
                if (sw_parse_f64(num, &x) || !(x >= 0) || !isfinite(x))
                    return sw_fail(err, SW_EINVAL, "%s:%d: %s: expected a number >= 0, got '%s'",
                                   p->file, line, keys[k], num);
                v[k] += x;
                r = semi + 1;
            }
            seen[k] = 1;
        } else if (k >= 0) {
            if (nl == 0 || nl >= sizeof num)
                return sw_fail(err, SW_EINVAL, "%s:%d: %s: expected a number", p->file, line,
                               keys[k]);
            memcpy(num, eq + 1, nl);
            num[nl] = 0;
            if (sw_parse_f64(num, &v[k]) || !(v[k] >= 0) || !isfinite(v[k]))
                return sw_fail(err, SW_EINVAL, "%s:%d: %s: expected a number >= 0, got '%s'",
                               p->file, line, keys[k], num);
            seen[k] = 1;
        }
        q = ve;
    }
    for (int i = 0; i < 4; i++)
        if (!seen[i])
            return sw_fail(err, SW_EINVAL, "%s:%d: node %s: missing %s", p->file, line, nd->id,
                           keys[i]);
    nd->fwd_ms = v[0];
    nd->bwd_ms = v[1];
    nd->act = (int64_t)llround(v[2]);
    nd->par = (int64_t)llround(v[3]);
    return 0;
}

static int parse_file(pd_graph *p, const char *text, size_t len, sw_err *err)
{
    const char *s = text, *end = text + len;
    int line = 0;
    int edges = 0;
    while (s < end) {
        const char *e = memchr(s, '\n', (size_t)(end - s));
        if (!e)
            e = end;
        line++;
        const char *le = e;
        if (le > s && le[-1] == '\r')
            le--;
        const char *b = s;
        int indented = b < le && (*b == '\t' || *b == ' ');
        while (b < le && isspace((unsigned char)*b))
            b++;
        if (b == le) {
            s = e + 1;
            continue;
        }
        const char *sep = find_sep(b, le);
        if (!sep)
            return sw_fail(err, SW_EINVAL, "%s:%d: expected 'nodeN -- MODULE -- metrics' or an "
                           "edge '\\tnodeA -- nodeB', got '%.*s'", p->file, line,
                           (int)(le - b > 60 ? 60 : le - b), b);
        if (indented) { /* edge */
            const char *a = b, *ae = sep, *c = sep + 4, *ce = le;
            while (ce > c && isspace((unsigned char)ce[-1]))
                ce--;
            if (!valid_id(a, (size_t)(ae - a)) || !valid_id(c, (size_t)(ce - c)))
                return sw_fail(err, SW_EINVAL, "%s:%d: edge: expected two node names, got "
                               "'%.*s'", p->file, line, (int)(le - b), b);
            int ia = find_node(p, a, (size_t)(ae - a)), ic = find_node(p, c, (size_t)(ce - c));
            if (ia < 0 || ic < 0)
                return sw_fail(err, SW_EINVAL, "%s:%d: edge refers to unknown node '%.*s'",
                               p->file, line, ia < 0 ? (int)(ae - a) : (int)(ce - c),
                               ia < 0 ? a : c);
            if (ia == ic)
                return sw_fail(err, SW_EINVAL, "%s:%d: edge from node %s to itself", p->file,
                               line, p->nodes[ia].id);
            pd_node *nc = &p->nodes[ic];
            int dup = 0;
            for (int k = 0; k < nc->n_pred; k++)
                dup |= nc->pred[k] == ia;
            if (!dup) {
                if (nc->n_pred >= nc->cap_pred) {
                    int nc2 = nc->cap_pred ? 2 * nc->cap_pred : 4;
                    int32_t *np = sw_realloc(nc->pred, (size_t)nc2 * sizeof *np);
                    if (!np)
                        return sw_fail(err, SW_ENOMEM, "out of memory");
                    nc->pred = np;
                    nc->cap_pred = nc2;
                }
                nc->pred[nc->n_pred++] = ia;
            }
            edges++;
        } else { /* node */
            if (edges)
                return sw_fail(err, SW_EINVAL, "%s:%d: node line after the edges (truncated or "
                               "reordered file?)", p->file, line);
            const char *sep2 = find_last_sep(sep + 4, le);
            if (!sep2 || sep2 < sep + 4)
                return sw_fail(err, SW_EINVAL, "%s:%d: node: expected 'nodeN -- MODULE -- "
                               "metrics'", p->file, line);
            if (!valid_id(b, (size_t)(sep - b)))
                return sw_fail(err, SW_EINVAL, "%s:%d: bad node name '%.*s'", p->file, line,
                               (int)(sep - b), b);
            if (find_node(p, b, (size_t)(sep - b)) >= 0)
                return sw_fail(err, SW_EINVAL, "%s:%d: node %.*s defined twice", p->file, line,
                               (int)(sep - b), b);
            if (SW_GROW(p->nodes, p->cap, (size_t)p->n + 1))
                return sw_fail(err, SW_ENOMEM, "out of memory");
            pd_node *nd = &p->nodes[p->n];
            memset(nd, 0, sizeof *nd);
            nd->line = line;
            nd->tensor = nd->op = -1;
            nd->id = sw_strndup(b, (size_t)(sep - b));
            nd->repr = sw_strndup(sep + 4, (size_t)(sep2 - sep - 4));
            p->n++;
            if (!nd->id || !nd->repr)
                return sw_fail(err, SW_ENOMEM, "out of memory");
            size_t tl = strcspn(nd->repr, "( ");
            if (tl == 0 || tl >= sizeof nd->type)
                return sw_fail(err, SW_EINVAL, "%s:%d: node %s: no module name", p->file, line,
                               nd->id);
            memcpy(nd->type, nd->repr, tl);
            nd->type[tl] = 0;
            if (parse_metrics(p, line, sep2 + 4, le, nd, err))
                return SW_EINVAL;
        }
        s = e + 1;
    }
    if (p->n == 0)
        return sw_fail(err, SW_EINVAL, "%s: no nodes (empty or not a PipeDream graph.txt)",
                       p->file);
    return 0;
}

/* integer argument of a module repr: positional index pos (>= 0) or key=;
   tuple values give their first (which 0) or second (which 1) element */
static int64_t repr_arg(const char *repr, const char *key, int pos, int which, int64_t def)
{
    const char *a = strchr(repr, '(');
    if (!a)
        return def;
    a++;
    int idx = 0;
    while (*a && *a != ')') {
        while (*a == ' ')
            a++;
        const char *eq = NULL;
        const char *q = a;
        int depth = 0;
        while (*q && (depth > 0 || (*q != ',' && *q != ')'))) {
            if (*q == '(')
                depth++;
            if (*q == ')')
                depth--;
            if (*q == '=' && !eq && depth == 0)
                eq = q;
            q++;
        }
        const char *val = NULL;
        if (eq && key && (size_t)(eq - a) == strlen(key) && !strncmp(a, key, (size_t)(eq - a)))
            val = eq + 1;
        else if (!eq && idx == pos)
            val = a;
        if (!eq)
            idx++;
        if (val) {
            if (*val == '(') {
                val++;
                if (which == 1) {
                    const char *c = strchr(val, ',');
                    if (c)
                        val = c + 1;
                }
            }
            while (*val == ' ')
                val++;
            if (isdigit((unsigned char)*val))
                return (int64_t)strtoll(val, NULL, 10);
            return def;
        }
        a = *q ? q + 1 : q;
    }
    return def;
}

static double sq(double x) { return x > 0 ? sqrt(x) : 0; }

/* dimension attrs from the module text and activation sizes */
static int shape_attrs(graph_profile *g, const pd_graph *p, const pd_node *nd, int64_t batch)
{
    int32_t op = nd->op;
    double B = (double)batch;
    double in_bytes = nd->n_pred ? (double)p->nodes[nd->pred[0]].act : 0;
    int rc = 0;
    if (!strcmp(nd->type, "Conv2d")) {
        int64_t c = repr_arg(nd->repr, "in_channels", 0, 0, 0),
                k = repr_arg(nd->repr, "out_channels", 1, 0, 0);
        int64_t r = repr_arg(nd->repr, "kernel_size", 2, 0, 1),
                s = repr_arg(nd->repr, "kernel_size", 2, 1, r);
        int64_t st = repr_arg(nd->repr, "stride", -1, 0, 1),
                pad = repr_arg(nd->repr, "padding", -1, 0, 0),
                pad_w = repr_arg(nd->repr, "padding", -1, 1, pad),
                groups = repr_arg(nd->repr, "groups", -1, 0, 1);
        if (c <= 0 || k <= 0)
            return 0;
        double hw_in = in_bytes / (4 * B * (double)c), hw_out = (double)nd->act / (4 * B * (double)k);
        rc |= graph_op_attr(g, op, OA_N, B) | graph_op_attr(g, op, OA_C, (double)c) |
              graph_op_attr(g, op, OA_H, round(sq(hw_in))) |
              graph_op_attr(g, op, OA_W, round(sq(hw_in))) | graph_op_attr(g, op, OA_K, (double)k) |
              graph_op_attr(g, op, OA_R, (double)r) | graph_op_attr(g, op, OA_S, (double)s) |
              graph_op_attr(g, op, OA_STRIDE, (double)st) | graph_op_attr(g, op, OA_PAD, (double)pad) |
              graph_op_attr(g, op, OA_PAD_W, (double)pad_w) |
              graph_op_attr(g, op, OA_GROUPS, (double)groups) |
              graph_op_attr(g, op, OA_HO, round(sq(hw_out))) |
              graph_op_attr(g, op, OA_WO, round(sq(hw_out)));
    } else if (!strcmp(nd->type, "Linear")) {
        int64_t in = repr_arg(nd->repr, "in_features", 0, 0, 0),
                out = repr_arg(nd->repr, "out_features", 1, 0, 0);
        if (in <= 0 || out <= 0)
            return 0;
        rc |= graph_op_attr(g, op, OA_GEMM_M, round((double)nd->act / (4 * (double)out))) |
              graph_op_attr(g, op, OA_GEMM_N, (double)out) |
              graph_op_attr(g, op, OA_GEMM_K, (double)in) |
              graph_op_attr(g, op, OA_GEMM_BATCH, 1);
    } else if (!strcmp(nd->type, "BatchNorm2d")) {
        int64_t c = repr_arg(nd->repr, "num_features", 0, 0, 0);
        if (c <= 0)
            return 0;
        double hw = (double)nd->act / (4 * B * (double)c);
        rc |= graph_op_attr(g, op, OA_N, B) | graph_op_attr(g, op, OA_C, (double)c) |
              graph_op_attr(g, op, OA_H, round(sq(hw))) | graph_op_attr(g, op, OA_W, round(sq(hw)));
    } else if (!strcmp(nd->type, "MaxPool2d") || !strcmp(nd->type, "AvgPool2d")) {
        int64_t r = repr_arg(nd->repr, "kernel_size", 0, 0, 1);
        int64_t st = repr_arg(nd->repr, "stride", 1, 0, r), pad = repr_arg(nd->repr, "padding", 2, 0, 0);
        rc |= graph_op_attr(g, op, OA_R, (double)r) | graph_op_attr(g, op, OA_S, (double)r) |
              graph_op_attr(g, op, OA_STRIDE, (double)st) | graph_op_attr(g, op, OA_PAD, (double)pad) |
              graph_op_attr(g, op, OA_IN_ELEMS, in_bytes / 4) |
              graph_op_attr(g, op, OA_OUT_ELEMS, (double)nd->act / 4);
    }
    if (!rc && nd->n_pred)
        rc |= graph_op_attr(g, op, OA_IN_ELEMS, in_bytes / 4) |
              graph_op_attr(g, op, OA_OUT_ELEMS, (double)nd->act / 4);
    return rc ? SW_ENOMEM : 0;
}

static const param_def pd_params[] = {
    {"batch", PT_INT, "128", "samples per iteration of the recording (PipeDream profiles: 128)",
     NULL, 1, 1e9},
    PARAM_END};

static int is_activation(const char *type)
{
    return !strcmp(type, "ReLU") || !strcmp(type, "Sigmoid") || !strcmp(type, "Tanh") ||
           !strcmp(type, "Softmax") || !strcmp(type, "LogSoftmax");
}

/* A topological order of p's nodes (Kahn, FIFO from file order) into order
   (p->n values); a cycle is an error naming one of its nodes. */
static int pd_order(pd_graph *p, int32_t *order, int *no_out, sw_err *err)
{
    const char *file = p->file;
    int32_t *soff = sw_calloc((size_t)p->n + 2, sizeof *soff), *succ = NULL;
    if (!soff)
        return sw_fail(err, SW_ENOMEM, "out of memory");
    for (int i = 0; i < p->n; i++)
        for (int k = 0; k < p->nodes[i].n_pred; k++) {
            p->nodes[i].indeg++;
            p->nodes[p->nodes[i].pred[k]].n_succ++;
            soff[p->nodes[i].pred[k] + 1]++;
        }
    for (int i = 0; i < p->n; i++)
        soff[i + 1] += soff[i];
    succ = sw_malloc(((size_t)soff[p->n] + 1) * sizeof *succ);
    if (!succ) {
        sw_free(soff);
        return sw_fail(err, SW_ENOMEM, "out of memory");
    }
    for (int i = 0; i < p->n; i++)
        for (int k = 0; k < p->nodes[i].n_pred; k++)
            succ[soff[p->nodes[i].pred[k]]++] = i;
    for (int i = p->n; i > 0; i--)
        soff[i] = soff[i - 1];
    soff[0] = 0;
    int no = 0, head = 0;
    for (int i = 0; i < p->n; i++)
        if (p->nodes[i].indeg == 0)
            order[no++] = i;
    while (head < no) {
        int i = order[head++];
        for (int32_t k = soff[i]; k < soff[i + 1]; k++)
            if (--p->nodes[succ[k]].indeg == 0)
                order[no++] = succ[k];
    }
    sw_free(soff);
    sw_free(succ);
    *no_out = no;
    if (no < p->n)
        for (int i = 0; i < p->n; i++)
            if (p->nodes[i].indeg > 0)
                return sw_fail(err, SW_EINVAL, "%s:%d: node %s is on a cycle of edges", file,
                               p->nodes[i].line, p->nodes[i].id);
    return 0;
}

/* Node nd (its predecessors recorded) as an input or a forward op of a; a
   node nothing reads is added to sinks (64 at most). SW_EINVAL (reported) or
   SW_ENOMEM (not reported). */
static int pd_add_node(ag_graph *a, const pd_graph *p, pd_node *nd, int64_t batch,
                       int32_t *sinks, int *nsinks, sw_err *err)
{
    const char *file = p->file;
    if (nd->n_pred == 0 && strncmp(nd->type, "Input", 5) && strcmp(nd->type, "hidden"))
        return sw_fail(err, SW_EINVAL, "%s:%d: node %s (%s) has no input edge (truncated "
                       "edge list?)", file, nd->line, nd->id, nd->type);
    if (nd->n_pred == 0) { /* a source: the data batch (Input, Input0, ...) */
        nd->tensor = ag_input(a, nd->id, nd->act);
        return nd->tensor < 0 ? SW_ENOMEM : 0;
    }
    int32_t in[64];
    int nin = 0;
    for (int k = 0; k < nd->n_pred && nin < 63; k++)
        in[nin++] = p->nodes[nd->pred[k]].tensor;
    if (nd->n_pred > 63)
        return sw_fail(err, SW_EINVAL, "%s:%d: node %s has more than 63 inputs", file,
                       nd->line, nd->id);
    if (nd->par > 0) {
        char pn[96];
        snprintf(pn, sizeof pn, "%s.param", nd->id);
        in[nin] = ag_param(a, pn, nd->par);
        if (in[nin++] < 0)
            return SW_ENOMEM;
    }
    uint32_t save = AG_SAVE_ALL_IN | (is_activation(nd->type) ? AG_SAVE_OUT : 0);
    char opn[160];
    snprintf(opn, sizeof opn, "%s:%s", nd->id, nd->type);
    nd->op = ag_op(a, opn, nd->type, nd->fwd_ms * 1e-3, nd->bwd_ms * 1e-3, in, nin, &nd->act,
                   1, &nd->tensor, save, 0);
    if (nd->op < 0)
        return SW_ENOMEM;
    if (shape_attrs(a->g, p, nd, batch) || graph_op_attr(a->g, nd->op, OA_LINE, nd->line))
        return SW_ENOMEM;
    if (nd->n_succ == 0) {
        if (*nsinks >= 64)
            return sw_fail(err, SW_EINVAL, "%s: more than 64 output nodes", file);
        sinks[(*nsinks)++] = nd->tensor;
    }
    return 0;
}

static int import_pipedream(const char *const *files, int nfiles, const param_set *ps,
                            const dev_spec *dev, graph_profile **out, sw_err *err)
{
    (void)nfiles;
    const char *file = files[0];
    char *text = NULL;
    size_t len = 0;
    int rc = sw_read_file(file, &text, &len, err);
    if (rc)
        return rc;
    pd_graph p = {NULL, 0, 0, file};
    ag_graph a;
    int a_live = 0;
    int32_t *order = NULL;
    if ((rc = parse_file(&p, text, len, err)) != 0)
        goto done;
    order = sw_malloc(((size_t)p.n + 1) * sizeof *order);
    if (!order) {
        rc = sw_fail(err, SW_ENOMEM, "out of memory");
        goto done;
    }
    int no = 0;
    if ((rc = pd_order(&p, order, &no, err)) != 0 || no < p.n)
        goto done;
    const char *base = strrchr(file, '/');
    base = base ? base + 1 : file;
    char name[128];
    snprintf(name, sizeof name, "%.*s", (int)strcspn(base, "."), base);
    if (ag_init(&a, name, dev)) {
        rc = sw_fail(err, SW_ENOMEM, "out of memory");
        goto done;
    }
    a_live = 1;
    a.launch_s = 0; /* measured times include launches */
    int64_t batch = params_int(ps, "batch");
    a.g->batch = batch;
    int32_t sinks[64];
    int nsinks = 0;
    for (int oi = 0; oi < no; oi++)
        if ((rc = pd_add_node(&a, &p, &p.nodes[order[oi]], batch, sinks, &nsinks, err)) != 0) {
            if (rc == SW_ENOMEM)
                goto oom;
            goto done;
        }
    if (nsinks == 0) {
        rc = sw_fail(err, SW_EINVAL, "%s: no operator node (only inputs)", file);
        goto done;
    }
    int32_t loss = sinks[0];
    if (nsinks > 1) { /* several outputs (auxiliary heads): one zero-time loss joins them */
        int64_t four = 4;
        if (ag_op(&a, "loss", "loss_join", 0, 0, sinks, nsinks, &four, 1, &loss, 0, 0) < 0)
            goto oom;
    }
    char dv[160];
    snprintf(dv, sizeof dv, "%s (assumed; PipeDream's profiles do not name the GPU)", dev->name);
    if (graph_set_str(&a.g->prov.source, "recorded") ||
        graph_set_str(&a.g->prov.tool, "swapsim import pipedream (PipeDream profiler graph.txt)") ||
        graph_set_str(&a.g->prov.file, file) || graph_set_str(&a.g->prov.device, dv) ||
        graph_set_str(&a.g->prov.notes, "forward/backward times measured per module; update "
                      "times from the device memory bandwidth; in-place modules modelled as "
                      "new tensors"))
        goto oom;
    rc = ag_finish_training(&a, loss, AG_SGD, out, err);
    if (rc == 0)
        a_live = 0;
    goto done;
oom:
    rc = sw_fail(err, SW_ENOMEM, "out of memory");
done:
    if (a_live)
        ag_release(&a);
    sw_free(order);
    pd_free(&p);
    sw_free(text);
    return rc;
}

const importer importer_pipedream = {
    "pipedream", "PipeDream per-layer profile (graph.txt): training graph with measured times",
    "GRAPH_TXT", 1, 1, pd_params, import_pipedream};
