/* import_pytorch_et.c: the `pytorch` importer's execution-trace reader: an int64 hash
   map, the nodes sorted by id, their tensor tuples, and which nodes are
   annotations (containers) or carry module records. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import_pytorch.h"
#include "opattr.h"
#include "optime.h"

/* ---- int64 -> int32 hash map ---- */

void pt_hm_free(hmap *m)
{
    sw_free(m->keys);
    sw_free(m->vals);
    memset(m, 0, sizeof *m);
}

static size_t hm_slot(const hmap *m, int64_t k)
{
    uint64_t h = (uint64_t)k * 0x9E3779B97F4A7C15ull;
    size_t i = (size_t)(h >> 20) & (m->cap - 1);
    while (m->keys[i] != HM_EMPTY && m->keys[i] != k)
        i = (i + 1) & (m->cap - 1);
    return i;
}

int32_t pt_hm_get(const hmap *m, int64_t k)
{
    if (!m->cap)
        return -1;
    size_t i = hm_slot(m, k);
    return m->keys[i] == k ? m->vals[i] : -1;
}

int pt_hm_put(hmap *m, int64_t k, int32_t v)
{
    if (2 * (m->n + 1) > m->cap) {
        size_t nc = m->cap ? 2 * m->cap : 1024;
        int64_t *nk = sw_malloc(nc * sizeof *nk);
        int32_t *nv = sw_malloc(nc * sizeof *nv);
        if (!nk || !nv) {
            sw_free(nk);
            sw_free(nv);
            return SW_ENOMEM;
        }
        for (size_t i = 0; i < nc; i++)
            nk[i] = HM_EMPTY;
        hmap o = *m;
        m->keys = nk;
        m->vals = nv;
        m->cap = nc;
        m->n = 0;
        for (size_t i = 0; i < o.cap; i++)
            if (o.keys[i] != HM_EMPTY) {
                size_t s = hm_slot(m, o.keys[i]);
                m->keys[s] = o.keys[i];
                m->vals[s] = o.vals[i];
                m->n++;
            }
        sw_free(o.keys);
        sw_free(o.vals);
    }
    size_t s = hm_slot(m, k);
    if (m->keys[s] != k) {
        m->keys[s] = k;
        m->n++;
    }
    m->vals[s] = v;
    return 0;
}

/* ---- execution trace ---- */

static int cmp_etn(const void *a, const void *b)
{
    const etn *x = a, *y = b;
    return (x->id > y->id) - (x->id < y->id);
}

static int32_t et_find(const et *t, int64_t id)
{
    int32_t lo = 0, hi = t->count - 1;
    while (lo <= hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (t->n[mid].id == id)
            return mid;
        if (t->n[mid].id < id)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -1;
}

int pt_starts(const char *s, const char *p) { return strncmp(s, p, strlen(p)) == 0; }

/* an attribute of a 1.1.x node: attrs [{name, type, value}] */
static const json_value *node_attr(const json_value *node, const char *key)
{
    const json_value *a = json_get(node, "attrs");
    if (!a || a->type != JSON_ARRAY)
        return NULL;
    for (uint32_t i = 0; i < a->n; i++) {
        const json_value *nm = json_get(&a->u.items[i], "name");
        if (nm && nm->type == JSON_STRING && !strcmp(nm->u.str, key))
            return json_get(&a->u.items[i], "value");
    }
    return NULL;
}

/* integer field key of the node, or of its attrs */
static int node_int(jr *r, const json_value *node, const char *key, int required, int64_t def,
                    int64_t *out)
{
    const json_value *v = json_get(node, key);
    if (v)
        return jr_i64(r, node, key, 1, def, INT64_MIN, INT64_MAX, out);
    v = node_attr(node, key);
    if (v) {
        size_t s = jr_push_key(r, "attrs");
        int rc = jr_as_i64(r, v, INT64_MIN, INT64_MAX, out);
        jr_pop(r, s);
        return rc;
    }
    if (required)
        return jr_error(r, node, NULL, "missing \"%s\"", key);
    *out = def;
    return 0;
}

/* inputs/outputs: 1.0.x has arrays "inputs" + "input_types"; 1.1.x objects
   {"values", "shapes", "types"} */
static int node_io(jr *r, const json_value *node, int out, const json_value **vals,
                   const json_value **types, const json_value **strides)
{
    const char *key = out ? "outputs" : "inputs";
    const json_value *v = json_get(node, key);
    *vals = *types = *strides = NULL;
    if (!v)
        return 0;
    if (v->type == JSON_ARRAY) { /* 1.0.x: no strides */
        *vals = v;
        const json_value *t = json_get(node, out ? "output_types" : "input_types");
        *types = t && t->type == JSON_ARRAY ? t : NULL;
        return 0;
    }
    if (v->type != JSON_OBJECT)
        return jr_error(r, v, key, "expected an array or an object with \"values\"");
    const json_value *vv = json_get(v, "values");
    if (vv && vv->type != JSON_ARRAY) {
        size_t s = jr_push_key(r, key);
        int rc = jr_error(r, vv, "values", "expected an array");
        jr_pop(r, s);
        return rc;
    }
    *vals = vv;
    const json_value *t = json_get(v, "types");
    *types = t && t->type == JSON_ARRAY ? t : NULL;
    const json_value *sh = json_get(v, "shapes"), *st = json_get(v, "strides");
    if (sh && st && sh->type == JSON_ARRAY && st->type == JSON_ARRAY && vv && sh->n == vv->n &&
        st->n == vv->n)
        *strides = v; /* the object: span() reads its "shapes" and "strides" */
    return 0;
}

int pt_et_load(const json_value *root, jr *r, et *t)
{
    const json_value *nodes;
    if (jr_field(r, root, "nodes", JSON_ARRAY, 1, &nodes))
        return SW_EINVAL;
    t->count = (int32_t)nodes->n;
    t->n = sw_calloc((size_t)t->count + 1, sizeof *t->n);
    if (!t->n)
        return sw_fail(r->err, SW_ENOMEM, "out of memory");
    size_t s0 = jr_push_key(r, "nodes");
    for (uint32_t i = 0; i < nodes->n; i++) {
        const json_value *nd = &nodes->u.items[i];
        etn *e = &t->n[i];
        size_t s1 = jr_push_idx(r, i);
        if (nd->type != JSON_OBJECT)
            return jr_error(r, nd, NULL, "expected a node object");
        e->node = nd;
        e->idx = i;
        e->top = -1;
        e->op = -1;
        if (jr_i64(r, nd, "id", 1, 0, 0, INT64_MAX, &e->id) || jr_str(r, nd, "name", 1, NULL, &e->name))
            return SW_EINVAL;
        const json_value *pv = json_get(nd, "ctrl_deps") ? json_get(nd, "ctrl_deps")
                                                          : json_get(nd, "parent");
        if (!pv)
            return jr_error(r, nd, NULL, "missing the parent (\"ctrl_deps\" or \"parent\")");
        if (jr_as_i64(r, pv, 0, INT64_MAX, &e->parent_id) ||
            node_int(r, nd, "rf_id", 0, -1, &e->rf_id) || node_int(r, nd, "tid", 0, -1, &e->tid) ||
            node_int(r, nd, "seq_id", 0, -1, &e->seq_id) ||
            node_io(r, nd, 0, &e->ins, &e->in_types, &e->in_geo) ||
            node_io(r, nd, 1, &e->outs, &e->out_types, &e->out_geo))
            return SW_EINVAL;
        jr_pop(r, s1);
    }
    qsort(t->n, (size_t)t->count, sizeof *t->n, cmp_etn);
    for (int32_t i = 0; i < t->count; i++) {
        etn *e = &t->n[i];
        size_t s1 = jr_push_idx(r, e->idx);
        if (i > 0 && t->n[i - 1].id == e->id)
            return jr_error(r, e->node, "id", "node id %lld appears twice", (long long)e->id);
        e->parent = -1;
        if (e->parent_id != e->id) {
            e->parent = et_find(t, e->parent_id);
            if (e->parent < 0 && !pt_starts(e->name, "[pytorch|profiler"))
                return jr_error(r, e->node, NULL, "parent %lld is not a node of the trace",
                                (long long)e->parent_id);
            if (e->parent >= 0 && e->parent_id > e->id && !pt_starts(e->name, "[pytorch|profiler"))
                return jr_error(r, e->node, NULL, "parent %lld starts after its child",
                                (long long)e->parent_id);
            if (e->parent >= 0 && t->n[e->parent].id > e->id) /* root annotations only */
                e->parent = -1;
        }
        jr_pop(r, s1);
    }
    jr_pop(r, s0);
    return 0;
}

/* ---- tensors ---- */

/* Is v a tensor tuple [id, storage, offset, numel, itemsize, device]? */
int pt_is_tensor(const json_value *v)
{
    if (v->type != JSON_ARRAY || v->n != 6 || v->u.items[5].type != JSON_STRING)
        return 0;
    for (int k = 0; k < 5; k++)
        if (v->u.items[k].type != JSON_NUMBER || !v->u.items[k].is_int)
            return 0;
    return 1;
}

/* The model's tensors are those on the device whose name starts with dev
   ("cuda", or "cpu" for a recording made on the CPU). */
int pt_get_tref(jr *r, const json_value *v, const char *dev, tref *t)
{
    int64_t x[5];
    static const int64_t lo[5] = {0, 0, 0, 0, 0}, hi[5] = {INT64_MAX, INT64_MAX, INT64_MAX,
                                                          (int64_t)1 << 50, 64};
    for (int k = 0; k < 5; k++) {
        x[k] = v->u.items[k].u.num.i;
        if (x[k] < lo[k] || x[k] > hi[k]) {
            static const char *const what[5] = {"tensor id", "storage id", "offset", "numel",
                                                "itemsize"};
            return jr_error(r, &v->u.items[k], NULL, "%s %lld out of range", what[k],
                            (long long)x[k]);
        }
    }
    t->tensor = x[0];
    t->storage = x[1];
    t->offset = x[2];
    t->numel = x[3];
    t->itemsize = x[4];
    t->gpu = pt_starts(v->u.items[5].u.str, dev);
    t->span = t->numel;
    return 0;
}

/* The elements a tensor of shape sh and strides st reaches: 1 + sum of
   (size - 1) * stride (0 for an empty tensor), or -1 when the two are not
   integer arrays of one length. A broadcast view (stride 0) reaches less than
   its numel. */
static int64_t span_of(const json_value *sh, const json_value *st)
{
    if (!sh || !st || sh->type != JSON_ARRAY || st->type != JSON_ARRAY || sh->n != st->n)
        return -1;
    int64_t reach = 0;
    for (uint32_t d = 0; d < sh->n; d++) {
        const json_value *a = &sh->u.items[d], *b = &st->u.items[d];
        if (a->type != JSON_NUMBER || !a->is_int || b->type != JSON_NUMBER || !b->is_int ||
            a->u.num.i < 0 || b->u.num.i < 0 || a->u.num.i > ((int64_t)1 << 50) ||
            b->u.num.i > ((int64_t)1 << 50))
            return -1;
        if (a->u.num.i == 0)
            return 0;
        int64_t add = (a->u.num.i - 1) * b->u.num.i;
        if (add > ((int64_t)1 << 50) - reach)
            return -1;
        reach += add;
    }
    return reach + 1;
}

/* geo: the 1.1.x value object with "shapes" and "strides" (or NULL); i, j:
   the value and, for a list of tensors, the element (-1: a tensor) */
void pt_set_span(tref *t, const json_value *geo, uint32_t i, int j)
{
    if (!geo)
        return;
    const json_value *sh = &json_get(geo, "shapes")->u.items[i];
    const json_value *st = &json_get(geo, "strides")->u.items[i];
    if (j >= 0) {
        if (sh->type != JSON_ARRAY || st->type != JSON_ARRAY || (uint32_t)j >= sh->n ||
            (uint32_t)j >= st->n)
            return;
        sh = &sh->u.items[j];
        st = &st->u.items[j];
    }
    int64_t sp = span_of(sh, st);
    if (sp >= 0 && sp < t->span)
        t->span = sp;
}

int pt_is_container(const et *t, int32_t i)
{
    const etn *e = &t->n[i];
    if (pt_starts(e->name, "[pytorch|profiler"))
        return 1;
    if (strstr(e->name, "::"))
        return 0;
    if (e->nkids == 0)
        return 0;
    /* an annotation or module record without tensors of its own */
    int has = 0;
    for (int w = 0; w < 2; w++) {
        const json_value *v = w ? e->outs : e->ins;
        for (uint32_t j = 0; v && j < v->n && !has; j++)
            has = pt_is_tensor(&v->u.items[j]) ||
                  (v->u.items[j].type == JSON_ARRAY && v->u.items[j].n > 0 &&
                   pt_is_tensor(&v->u.items[j].u.items[0]));
    }
    return !has;
}

/* Does any node of [lo, hi) have a tensor on a CUDA device? */
int pt_any_cuda(const et *t, int32_t lo, int32_t hi)
{
    for (int32_t i = lo; i < hi; i++)
        for (int w = 0; w < 2; w++) {
            const json_value *v = w ? t->n[i].outs : t->n[i].ins;
            for (uint32_t j = 0; v && j < v->n; j++) {
                const json_value *x = &v->u.items[j];
                if (x->type == JSON_ARRAY && x->n > 0 && !pt_is_tensor(x) && pt_is_tensor(&x->u.items[0]))
                    x = &x->u.items[0];
                if (pt_is_tensor(x) && pt_starts(x->u.items[5].u.str, "cuda"))
                    return 1;
            }
        }
    return 0;
}

/* The prefix of the module records tools/record_pytorch.py writes (a
   record_function around each module's forward): "nn.Module: layer3.2.conv1". */
#define MODULE_REC "nn.Module: "

/* The qualified name of the innermost module record above node i, or NULL. */
const char *pt_module_of(const et *t, int32_t i)
{
    for (int32_t p = t->n[i].parent; p >= 0; p = t->n[p].parent)
        if (pt_starts(t->n[p].name, MODULE_REC))
            return t->n[p].name + strlen(MODULE_REC);
    return NULL;
}
