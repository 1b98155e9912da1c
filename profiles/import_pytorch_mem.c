/* import_pytorch_mem.c: the `pytorch` importer's tensor accesses (storages bound to
   profile tensors: reads, creations, mutations) and the memory no tensor names
   (workspaces, from the allocator's events). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import_pytorch.h"
#include "opattr.h"
#include "optime.h"

/* ---- tensor accesses: storages bound to profile tensors ---- */

static int push_unique(int32_t **arr, size_t *cap, int *n, int32_t v)
{
    for (int i = 0; i < *n; i++)
        if ((*arr)[i] == v)
            return 0;
    if (SW_GROW(*arr, *cap, (size_t)*n + 1))
        return SW_ENOMEM;
    (*arr)[(*n)++] = v;
    return 0;
}

static int is_inplace(const char *name)
{
    const char *p = strstr(name, "::");
    p = p ? p + 2 : name;
    size_t n = strlen(p);
    /* add_, relu_, _foreach_add_ (not dunders such as __getitem__) */
    return n > 1 && p[n - 1] == '_' && p[n - 2] != '_';
}

static int push_tref(tref **arr, size_t *cap, int *n, const tref *t)
{
    if (SW_GROW(*arr, *cap, (size_t)*n + 1))
        return SW_ENOMEM;
    (*arr)[(*n)++] = *t;
    return 0;
}

/* collect the GPU tensors of a value array (tensors and lists of tensors) */
/* Without strides (1.0.x), the outputs of a broadcast (expand) are marked,
   and any later use of such a tensor reaches none of its storage beyond
   what its other uses show. */
static int broadcast_view(ctx *c, tref *t, int mark)
{
    int32_t k = pt_hm_get(&c->bcast, t->tensor);
    if (mark && k < 0) {
        if (SW_GROW(c->bc, c->bccap, (size_t)c->nbc + 1) || pt_hm_put(&c->bcast, t->tensor, c->nbc))
            return SW_ENOMEM;
        k = c->nbc++;
        c->bc[k][0] = t->storage;
        c->bc[k][1] = t->numel;
    }
    if (k >= 0 && c->bc[k][0] == t->storage && c->bc[k][1] == t->numel)
        t->span = 0;
    return 0;
}

static int collect(ctx *c, const json_value *vals, const json_value *types,
                   const json_value *geo, int broadcast, tref **out, size_t *cap, int *n,
                   const char *what)
{
    *n = 0;
    if (!vals)
        return 0;
    size_t s0 = jr_push_key(c->r, what);
    for (uint32_t i = 0; i < vals->n; i++) {
        const json_value *v = &vals->u.items[i];
        const char *ty = types && i < types->n && types->u.items[i].type == JSON_STRING
                             ? types->u.items[i].u.str
                             : NULL;
        size_t s1 = jr_push_idx(c->r, i);
        if (pt_is_tensor(v)) {
            tref t;
            if (pt_get_tref(c->r, v, c->dev, &t))
                return SW_EINVAL;
            pt_set_span(&t, geo, i, -1);
            if (!geo && broadcast_view(c, &t, broadcast))
                return sw_fail(c->r->err, SW_ENOMEM, "out of memory");
            t.arg = (int)i;
            if (t.gpu && push_tref(out, cap, n, &t))
                return sw_fail(c->r->err, SW_ENOMEM, "out of memory");
        } else if (v->type == JSON_ARRAY && v->n > 0 && pt_is_tensor(&v->u.items[0])) {
            for (uint32_t j = 0; j < v->n; j++) {
                if (!pt_is_tensor(&v->u.items[j])) {
                    jr_push_idx(c->r, j);
                    return jr_error(c->r, &v->u.items[j], NULL, "expected a tensor [id, storage, "
                                    "offset, numel, itemsize, device] in a list of tensors");
                }
                tref t;
                if (pt_get_tref(c->r, &v->u.items[j], c->dev, &t))
                    return SW_EINVAL;
                pt_set_span(&t, geo, i, (int)j);
                if (!geo && broadcast_view(c, &t, broadcast))
                    return sw_fail(c->r->err, SW_ENOMEM, "out of memory");
                t.arg = (int)i;
                if (t.gpu && push_tref(out, cap, n, &t))
                    return sw_fail(c->r->err, SW_ENOMEM, "out of memory");
            }
        } else if (ty && pt_starts(ty, "Tensor(") && v->type != JSON_NULL &&
                   !(v->type == JSON_STRING && !strcmp(v->u.str, "<None>")) &&
                   !(v->type == JSON_ARRAY && v->n == 0)) {
            return jr_error(c->r, v, NULL, "type %s: expected a tensor [id, storage, offset, "
                            "numel, itemsize, device]", ty);
        }
        jr_pop(c->r, s1);
    }
    jr_pop(c->r, s0);
    return 0;
}

static int64_t extent(const tref *t) { return (t->offset + t->span) * t->itemsize; }

/* An operator whose output is a broadcast view of its input: without strides
   (schema 1.0.x) its output's numel overstates the storage. */
static int is_broadcast(const char *name)
{
    return !strcmp(name, "aten::expand") || !strcmp(name, "aten::expand_as") ||
           !strcmp(name, "aten::broadcast_to");
}

static int new_binding(ctx *c, int64_t sid, int64_t bytes, int creator, int32_t *out)
{
    if (SW_GROW(c->b, c->bcap, (size_t)c->nb + 1))
        return SW_ENOMEM;
    char nm[64];
    snprintf(nm, sizeof nm, "s%lld.%d", (long long)sid, c->nb);
    int32_t t = graph_add_tensor(c->g, nm, bytes, creator >= 0 ? GK_ACTIVATION : GK_INPUT,
                                 creator < 0);
    if (t < 0)
        return SW_ENOMEM;
    binding *b = &c->b[c->nb];
    memset(b, 0, sizeof *b);
    b->tensor = t;
    b->creator = creator;
    if (pt_hm_put(&c->live, sid, c->nb))
        return SW_ENOMEM;
    *out = c->nb++;
    return 0;
}

static void grow_bytes(ctx *c, int32_t bi, int64_t bytes)
{
    graph_tensor *t = &c->g->tensors[c->b[bi].tensor];
    if (bytes > t->bytes)
        t->bytes = bytes;
}

/* Has the operator being read (c->cur_op) read or updated binding bi? */
static int in_op(const ctx *c, int32_t bi)
{
    for (int i = 0; i < c->nrd; i++)
        if (c->rd[i] == bi)
            return 1;
    for (int i = 0; i < c->nmu; i++)
        if (c->mu[i] == bi)
            return 1;
    return 0;
}

/* accesses of one ET node, charged to profile op c->cur_op */
int pt_node_accesses(ctx *c, const etn *e, int phase)
{
    int nin = 0, nout = 0;
    size_t s0 = jr_push_key(c->r, "nodes");
    size_t s1 = jr_push_idx(c->r, e->idx);
    int rc = collect(c, e->ins, e->in_types, e->in_geo, 0, &c->tin, &c->tinc, &nin, "inputs");
    if (!rc)
        rc = collect(c, e->outs, e->out_types, e->out_geo, is_broadcast(e->name),
                     &c->tout, &c->toutc, &nout, "outputs");
    jr_pop(c->r, s1);
    jr_pop(c->r, s0);
    if (rc)
        return rc;
    const tref *in = c->tin, *out = c->tout;
    int inplace = is_inplace(e->name);
    for (int k = 0; k < nin; k++) {
        int32_t bi = pt_hm_get(&c->live, in[k].storage);
        if (bi < 0 && new_binding(c, in[k].storage, extent(&in[k]), -1, &bi))
            return SW_ENOMEM;
        grow_bytes(c, bi, extent(&in[k]));
        binding *b = &c->b[bi];
        if (b->creator == c->cur_op)
            continue;
        if (inplace && in[k].arg == 0) {
            if (push_unique(&c->mu, &c->muc, &c->nmu, bi))
                return SW_ENOMEM;
            if (phase == GP_UPDATE)
                b->mut_update = 1;
            else
                b->mut_other = 1;
        } else if (push_unique(&c->rd, &c->rdc, &c->nrd, bi))
            return SW_ENOMEM;
        if (phase == GP_FORWARD)
            b->read_fwd = 1;
    }
    for (int k = 0; k < nout; k++) {
        int seen = 0;
        for (int j = 0; j < nin && !seen; j++)
            seen = in[j].storage == out[k].storage;
        int32_t bi = pt_hm_get(&c->live, out[k].storage);
        /* A storage this operator already made, read or updated is the same
           storage: nested operators (conv2d > convolution > _convolution >
           cudnn_convolution) each list the one output, and views of it or of
           an input (a weight's flattened buffer) share it. The operator holds
           its inputs and its own outputs alive, so none of them can have
           been freed and reallocated at the same address inside it. */
        if (bi >= 0 && (seen || c->b[bi].creator == c->cur_op || in_op(c, bi))) {
            grow_bytes(c, bi, extent(&out[k]));
            continue;
        }
        /* a new allocation (possibly at a recycled storage id) */
        if (new_binding(c, out[k].storage, extent(&out[k]), c->cur_op, &bi))
            return SW_ENOMEM;
        if (push_unique(&c->cr, &c->crc, &c->ncr, bi))
            return SW_ENOMEM;
    }
    return 0;
}

/* Memory the execution trace does not name, from the allocator's events of a
   Kineto trace recorded with profile_memory=True: while each operator runs
   (its CPU event), the device's allocated total rises above what it was when
   the operator started by its peak; what the storages the operator creates
   do not account for is scratch memory allocated outside any operator (cuDNN
   convolution workspaces, library handles' buffers) plus the allocator's
   rounding, and becomes the operator's workspace. *peak: the allocator's
   peak over the iteration (-1 without memory events); *n_ws: operators given
   a workspace. */
void pt_unnamed_memory(ctx *c, int64_t *peak, int32_t *n_ws)
{
    const kineto *k = &c->k;
    const et *t = &c->t;
    int want = !strcmp(c->dev, "cpu") ? 0 : 1;
    *peak = -1;
    *n_ws = 0;
    int any = 0;
    for (int32_t m = 0; m < k->nmem && !any; m++)
        any = k->mem[m].dev_type < 0 || k->mem[m].dev_type == want;
    if (!any)
        return;
    int32_t m = 0;
    for (int32_t j = 0; j < k->ncpu; j++) {
        const kev *ev = &k->cpu[j];
        if (ev->node < 0 || t->n[ev->node].top != ev->node || t->n[ev->node].op < 0)
            continue;
        /* the total when the operator starts: after the last event before it */
        while (m < k->nmem && k->mem[m].ts < ev->ts)
            m++;
        int64_t start = -1, high = -1;
        for (int32_t b = m - 1; b >= 0 && start < 0; b--)
            if (k->mem[b].dev_type < 0 || k->mem[b].dev_type == want)
                start = k->mem[b].total;
        for (int32_t x = m; x < k->nmem && k->mem[x].ts <= ev->ts + ev->dur; x++)
            if (k->mem[x].dev_type < 0 || k->mem[x].dev_type == want) {
                if (start < 0) /* no event before: the first one's total before it */
                    start = k->mem[x].total - k->mem[x].bytes;
                high = SW_MAX(high, k->mem[x].total);
            }
        if (high < 0 || start < 0)
            continue;
        *peak = SW_MAX(*peak, high);
        graph_op *o = &c->g->ops[t->n[ev->node].op];
        int64_t made = 0;
        for (int32_t i = 0; i < o->n_out; i++)
            made += c->g->tensors[o->out[i]].bytes;
        int64_t ws = high - start - made;
        if (ws > o->workspace_bytes) {
            if (!o->workspace_bytes)
                (*n_ws)++;
            o->workspace_bytes = ws;
        }
    }
}
