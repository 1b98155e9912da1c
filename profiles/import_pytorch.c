/* import_pytorch.c: the `pytorch` importer: a PyTorch execution trace
   (ExecutionTraceObserver JSON, schemas 1.0.x and 1.1.x) plus, optionally,
   the matching Kineto / torch.profiler Chrome trace, gzip or plain.

   Operators are the top-level operators of one iteration of the execution
   trace: the outermost nodes that are not annotations (thread roots,
   "## forward ##", ProfilerStep#N, Optimizer.step#..., module records).
   Their tensor accesses are gathered from their whole subtree; storages come
   from the tensor tuples [tensor_id, storage_id, offset, numel, itemsize,
   device] (views share their storage; a storage id that reappears as the
   output of an operator that did not read it is a new allocation at a
   recycled address). Storages read before any operator makes them exist
   before the iteration (parameters, inputs, optimizer state, persistent
   gradients). GPU time of an operator is the sum of the kernels, copies and
   memsets launched under it: kernel -> CUDA runtime launch (args
   correlation) -> the innermost CPU operator whose interval holds the launch
   -> its execution-trace node (by "Record function id" = rf_id when the
   Kineto trace has it, else by matching the sequence of operator names of
   one iteration) -> the node's top-level operator. Without a Kineto trace
   the times are zero. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/json.h"
#include "importers.h"
#include "opattr.h"
#include "optime.h"

/* ---- int64 -> int32 hash map ---- */

typedef struct hmap {
    int64_t *keys;
    int32_t *vals;
    size_t cap, n;
} hmap;

#define HM_EMPTY INT64_MIN

static void hm_free(hmap *m)
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

static int32_t hm_get(const hmap *m, int64_t k)
{
    if (!m->cap)
        return -1;
    size_t i = hm_slot(m, k);
    return m->keys[i] == k ? m->vals[i] : -1;
}

static int hm_put(hmap *m, int64_t k, int32_t v)
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

typedef struct etn {
    int64_t id, parent_id, rf_id, tid;
    int64_t seq_id;                         /* autograd sequence number, -1: none */
    const char *name;
    const json_value *node;                 /* the node object */
    const json_value *ins, *outs;           /* value arrays (NULL if none) */
    const json_value *in_types, *out_types; /* type strings (NULL if none) */
    const json_value *in_geo, *out_geo;     /* 1.1.x {"shapes", "strides"} (NULL if none) */
    uint32_t idx;                           /* position in $.nodes */
    int32_t parent;                         /* sorted index, -1 for roots */
    int32_t top;                            /* sorted index of its operator, -1 */
    int32_t nkids;
    int8_t container, phase, in_iter;
    int32_t op;       /* profile op id of a top-level operator */
    double gpu_s;     /* kernel time charged to this operator */
} etn;

typedef struct et {
    etn *n;   /* sorted by id */
    int32_t count;
} et;

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

static int starts(const char *s, const char *p) { return strncmp(s, p, strlen(p)) == 0; }

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

static int et_load(const json_value *root, jr *r, et *t)
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
            if (e->parent < 0 && !starts(e->name, "[pytorch|profiler"))
                return jr_error(r, e->node, NULL, "parent %lld is not a node of the trace",
                                (long long)e->parent_id);
            if (e->parent >= 0 && e->parent_id > e->id && !starts(e->name, "[pytorch|profiler"))
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

typedef struct tref {
    int64_t tensor, storage, offset, numel, itemsize;
    int64_t span; /* elements of the storage it reaches from offset: numel, or less for a
                     broadcast (stride 0) view */
    int gpu;
    int arg; /* argument position (the tensors of a list share it) */
} tref;

/* Is v a tensor tuple [id, storage, offset, numel, itemsize, device]? */
static int is_tensor(const json_value *v)
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
static int get_tref(jr *r, const json_value *v, const char *dev, tref *t)
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
    t->gpu = starts(v->u.items[5].u.str, dev);
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
static void set_span(tref *t, const json_value *geo, uint32_t i, int j)
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

/* ---- kineto ---- */

typedef struct kev {
    const char *name;
    double ts, dur;
    int64_t pid, tid, corr, rf;
    uint32_t idx;
    int32_t node; /* linked ET node (sorted index) or -1 */
} kev;

/* An allocator event of a trace recorded with profile_memory=True ("[memory]"):
   the device's allocated total after it. */
typedef struct kmem {
    double ts;
    int64_t total; /* "Total Allocated" after the event, bytes */
    int64_t bytes; /* "Bytes": allocated (> 0) or freed (< 0) */
    int dev_type;  /* "Device Type": 1 a CUDA device, 0 the CPU, -1 not given */
} kmem;

typedef struct kineto {
    kmem *mem; /* in time order */
    int32_t nmem;
    kev *cpu;
    int32_t ncpu;
    kev *rt; /* runtime launches */
    int32_t nrt;
    kev *gpu; /* kernels, copies, memsets */
    int32_t ngpu;
    const char *device;
} kineto;

static int cmp_kev_ts(const void *a, const void *b)
{
    const kev *x = a, *y = b;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    if (x->dur != y->dur)
        return x->dur > y->dur ? -1 : 1; /* enclosing event first */
    return (x->idx > y->idx) - (x->idx < y->idx);
}

static int cmp_kmem(const void *a, const void *b)
{
    const kmem *x = a, *y = b;
    return (x->ts > y->ts) - (x->ts < y->ts);
}

static int cmp_kev_corr(const void *a, const void *b)
{
    const kev *x = a, *y = b;
    return (x->corr > y->corr) - (x->corr < y->corr);
}

static int num_field(jr *r, const json_value *o, const char *key, int required, double *out)
{
    const json_value *v = json_get(o, key);
    if (!v) {
        if (required)
            return jr_error(r, o, NULL, "missing \"%s\"", key);
        *out = 0;
        return 0;
    }
    if (v->type == JSON_NUMBER) {
        *out = v->u.num.d;
        return 0;
    }
    if (v->type == JSON_STRING && !sw_parse_f64(v->u.str, out))
        return 0;
    return jr_error(r, v, key, "expected a number");
}

static int kineto_load(const json_value *root, jr *r, kineto *k)
{
    const json_value *evs = root;
    if (root->type == JSON_OBJECT && jr_field(r, root, "traceEvents", JSON_ARRAY, 1, &evs))
        return SW_EINVAL;
    if (evs->type != JSON_ARRAY)
        return jr_error(r, evs, NULL, "expected a Chrome trace (an object with traceEvents)");
    const json_value *dp = root->type == JSON_OBJECT ? json_get(root, "deviceProperties") : NULL;
    if (dp && dp->type == JSON_ARRAY && dp->n > 0) {
        const json_value *nm = json_get(&dp->u.items[0], "name");
        if (nm && nm->type == JSON_STRING)
            k->device = nm->u.str;
    }
    size_t cap = evs->n + 1;
    k->cpu = sw_malloc(cap * sizeof *k->cpu);
    k->rt = sw_malloc(cap * sizeof *k->rt);
    k->gpu = sw_malloc(cap * sizeof *k->gpu);
    if (!k->cpu || !k->rt || !k->gpu)
        return sw_fail(r->err, SW_ENOMEM, "out of memory");
    size_t mcap = 0;
    size_t s0 = jr_push_key(r, "traceEvents");
    for (uint32_t i = 0; i < evs->n; i++) {
        const json_value *e = &evs->u.items[i];
        if (e->type != JSON_OBJECT) {
            jr_push_idx(r, i);
            return jr_error(r, e, NULL, "expected an event object");
        }
        const json_value *cat = json_get(e, "cat"), *ph = json_get(e, "ph");
        const json_value *nmv = json_get(e, "name");
        if (ph && ph->type == JSON_STRING && !strcmp(ph->u.str, "i") && nmv &&
            nmv->type == JSON_STRING && !strcmp(nmv->u.str, "[memory]")) {
            size_t s1 = jr_push_idx(r, i);
            kmem m;
            double total, bytes, dt = -1;
            const json_value *args = NULL;
            if (num_field(r, e, "ts", 1, &m.ts) ||
                jr_field(r, e, "args", JSON_OBJECT, 1, &args))
                return SW_EINVAL;
            size_t s2 = jr_push_key(r, "args");
            if (num_field(r, args, "Total Allocated", 1, &total) ||
                num_field(r, args, "Bytes", 1, &bytes) ||
                (json_get(args, "Device Type") && num_field(r, args, "Device Type", 1, &dt)))
                return SW_EINVAL;
            if (!(total >= 0) || total > 9e18 || !(fabs(bytes) < 9e18))
                return jr_error(r, args, "Total Allocated", "expected a byte count");
            jr_pop(r, s2);
            jr_pop(r, s1);
            m.total = (int64_t)total;
            m.bytes = (int64_t)bytes;
            m.dev_type = (int)dt;
            if (SW_GROW(k->mem, mcap, (size_t)k->nmem + 1))
                return sw_fail(r->err, SW_ENOMEM, "out of memory");
            k->mem[k->nmem++] = m;
            continue;
        }
        if (!cat || cat->type != JSON_STRING || !ph || ph->type != JSON_STRING ||
            strcmp(ph->u.str, "X"))
            continue;
        const char *c = cat->u.str;
        int kind = !strcmp(c, "cpu_op") || !strcmp(c, "user_annotation") ? 0
                   : !strcmp(c, "cuda_runtime") || !strcmp(c, "cuda_driver") ? 1
                   : !strcmp(c, "kernel") || !strcmp(c, "gpu_memcpy") || !strcmp(c, "gpu_memset")
                       ? 2
                       : -1;
        if (kind < 0)
            continue;
        size_t s1 = jr_push_idx(r, i);
        kev ev;
        memset(&ev, 0, sizeof ev);
        ev.idx = i;
        ev.node = -1;
        ev.corr = ev.rf = -1;
        double pid = 0, tid = 0;
        if (jr_str(r, e, "name", 1, NULL, &ev.name) || num_field(r, e, "ts", 1, &ev.ts) ||
            num_field(r, e, "dur", kind != 1, &ev.dur) || num_field(r, e, "pid", 0, &pid) ||
            num_field(r, e, "tid", 0, &tid))
            return SW_EINVAL;
        if (!(ev.dur >= 0))
            return jr_error(r, e, "dur", "expected a duration >= 0");
        ev.pid = (int64_t)pid;
        ev.tid = (int64_t)tid;
        const json_value *args = json_get(e, "args");
        if (args && args->type == JSON_OBJECT) {
            size_t s2 = jr_push_key(r, "args");
            double x;
            const json_value *cv = json_get(args, "correlation");
            if (cv) {
                if (num_field(r, args, "correlation", 1, &x))
                    return SW_EINVAL;
                ev.corr = (int64_t)x;
            }
            const json_value *rv = json_get(args, "Record function id");
            if (rv) {
                if (num_field(r, args, "Record function id", 1, &x))
                    return SW_EINVAL;
                ev.rf = (int64_t)x;
            }
            jr_pop(r, s2);
        }
        if (kind == 2 && ev.corr < 0)
            return jr_error(r, e, NULL, "%s '%s' has no args.correlation", c, ev.name);
        if (kind == 0)
            k->cpu[k->ncpu++] = ev;
        else if (kind == 1) {
            if (ev.corr >= 0)
                k->rt[k->nrt++] = ev;
        } else
            k->gpu[k->ngpu++] = ev;
        jr_pop(r, s1);
    }
    jr_pop(r, s0);
    qsort(k->cpu, (size_t)k->ncpu, sizeof *k->cpu, cmp_kev_ts);
    qsort(k->rt, (size_t)k->nrt, sizeof *k->rt, cmp_kev_corr);
    if (k->nmem)
        qsort(k->mem, (size_t)k->nmem, sizeof *k->mem, cmp_kmem);
    return 0;
}

static void kineto_free(kineto *k)
{
    sw_free(k->mem);
    sw_free(k->cpu);
    sw_free(k->rt);
    sw_free(k->gpu);
}

static const kev *rt_find(const kineto *k, int64_t corr)
{
    int32_t lo = 0, hi = k->nrt - 1;
    while (lo <= hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (k->rt[mid].corr == corr)
            return &k->rt[mid];
        if (k->rt[mid].corr < corr)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return NULL;
}

/* ---- the importer ---- */

static const param_def pt_params[] = {
    {"iteration", PT_INT, "0", "which ProfilerStep#N iteration of the execution trace (N; 0: "
     "the last), and which of several matching iterations of the Kineto trace (0: the last)",
     NULL, 0, 1e9},
    {"batch", PT_INT, "1", "samples per iteration (the traces do not say)", NULL, 1, 1e9},
    {"times", PT_CHOICE, "trace", "where operator times come from: trace (the GPU time of the "
     "kernels the Kineto trace recorded; zero without one, with a warning) or model (the cost "
     "model's, from each operator's shapes in the execution trace, on the profile's device: for "
     "a recording made on the CPU or without Kineto)", "trace|model", 0, 0},
    {"partial", PT_BOOL, "false", "import an incomplete iteration (no backward pass or no "
     "optimizer step: a trace cut off, or an inference run) instead of refusing it; the "
     "profile's provenance notes say what is missing", NULL, 0, 0},
    PARAM_END};

typedef struct binding {
    int32_t tensor;  /* profile tensor */
    int32_t creator; /* profile op that allocated it, -1: exists before the iteration */
    uint8_t mut_update, mut_other, read_fwd;
} binding;

typedef struct ctx {
    et t;
    kineto k;
    graph_profile *g;
    hmap live; /* ET storage id -> binding index */
    binding *b;
    size_t bcap;
    int32_t nb;
    jr *r;      /* for the ET file */
    int32_t cur_op;
    int32_t *rd, *cr, *mu;
    size_t rdc, crc, muc;
    int nrd, ncr, nmu;
    tref *tin, *tout; /* tensors of the node being read */
    size_t tinc, toutc;
    double gpu_span_s;  /* first charged kernel's start to the last one's end, s */
    double gpu_busy_s;  /* time at least one charged kernel ran (union over streams), s */
    double gpu_sum_s;   /* kernel times added up (exceeds busy where streams overlap), s */
    const char *dev;    /* prefix of the model's tensors' device: "cuda", or "cpu" */
    hmap bcast;         /* 1.0.x: tensor id -> index in bc of a broadcast view */
    int64_t (*bc)[2];   /* its storage id and numel (a recycled tensor id differs) */
    size_t bccap;
    int32_t nbc;
} ctx;

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
    int32_t k = hm_get(&c->bcast, t->tensor);
    if (mark && k < 0) {
        if (SW_GROW(c->bc, c->bccap, (size_t)c->nbc + 1) || hm_put(&c->bcast, t->tensor, c->nbc))
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
        if (is_tensor(v)) {
            tref t;
            if (get_tref(c->r, v, c->dev, &t))
                return SW_EINVAL;
            set_span(&t, geo, i, -1);
            if (!geo && broadcast_view(c, &t, broadcast))
                return sw_fail(c->r->err, SW_ENOMEM, "out of memory");
            t.arg = (int)i;
            if (t.gpu && push_tref(out, cap, n, &t))
                return sw_fail(c->r->err, SW_ENOMEM, "out of memory");
        } else if (v->type == JSON_ARRAY && v->n > 0 && is_tensor(&v->u.items[0])) {
            for (uint32_t j = 0; j < v->n; j++) {
                if (!is_tensor(&v->u.items[j])) {
                    jr_push_idx(c->r, j);
                    return jr_error(c->r, &v->u.items[j], NULL, "expected a tensor [id, storage, "
                                    "offset, numel, itemsize, device] in a list of tensors");
                }
                tref t;
                if (get_tref(c->r, &v->u.items[j], c->dev, &t))
                    return SW_EINVAL;
                set_span(&t, geo, i, (int)j);
                if (!geo && broadcast_view(c, &t, broadcast))
                    return sw_fail(c->r->err, SW_ENOMEM, "out of memory");
                t.arg = (int)i;
                if (t.gpu && push_tref(out, cap, n, &t))
                    return sw_fail(c->r->err, SW_ENOMEM, "out of memory");
            }
        } else if (ty && starts(ty, "Tensor(") && v->type != JSON_NULL &&
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
    if (hm_put(&c->live, sid, c->nb))
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
static int node_accesses(ctx *c, const etn *e, int phase)
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
        int32_t bi = hm_get(&c->live, in[k].storage);
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
        int32_t bi = hm_get(&c->live, out[k].storage);
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

static int is_container(const et *t, int32_t i)
{
    const etn *e = &t->n[i];
    if (starts(e->name, "[pytorch|profiler"))
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
            has = is_tensor(&v->u.items[j]) ||
                  (v->u.items[j].type == JSON_ARRAY && v->u.items[j].n > 0 &&
                   is_tensor(&v->u.items[j].u.items[0]));
    }
    return !has;
}

/* link Kineto CPU events to ET nodes of the iteration [lo, hi) (sorted
   indices); returns 0 or an error naming both files */
static int link(ctx *c, int32_t lo, int32_t hi, int64_t which, const char *etf, const char *kf,
                sw_err *err)
{
    et *t = &c->t;
    kineto *k = &c->k;
    /* Record function ids link the traces only when the execution trace
       observer ran in the profiler's session; without it PyTorch 2.x writes
       "Record function id": 0 on every event, which links nothing. */
    int has_rf = 0;
    for (int32_t i = 0; i < k->ncpu && !has_rf; i++)
        has_rf = k->cpu[i].rf > 0;
    if (has_rf) {
        hmap byrf = {0};
        for (int32_t i = lo; i < hi; i++)
            if (t->n[i].rf_id >= 0 && hm_put(&byrf, t->n[i].rf_id, i)) {
                hm_free(&byrf);
                return sw_fail(err, SW_ENOMEM, "out of memory");
            }
        int linked = 0;
        for (int32_t j = 0; j < k->ncpu; j++)
            if (k->cpu[j].rf >= 0 && (k->cpu[j].node = hm_get(&byrf, k->cpu[j].rf)) >= 0)
                linked++;
        hm_free(&byrf);
        if (!linked)
            return sw_fail(err, SW_EINVAL, "%s: no CPU operator's \"Record function id\" is an "
                           "rf_id of the execution trace %s: the two traces do not match", kf,
                           etf);
        return 0;
    }
    /* no record function ids: match the sequence of names */
    int32_t *seq = sw_malloc(((size_t)(hi - lo) + 1) * sizeof *seq);
    if (!seq)
        return sw_fail(err, SW_ENOMEM, "out of memory");
    int32_t n = 0;
    for (int32_t i = lo; i < hi; i++)
        if (!starts(t->n[i].name, "[pytorch|profiler"))
            seq[n++] = i;
    if (n == 0) {
        sw_free(seq);
        return sw_fail(err, SW_EINVAL, "%s: the iteration has no operators", etf);
    }
    int32_t best_len = 0, best_at = -1, found = 0, pick = -1;
    for (int32_t o = 0; o + n <= k->ncpu; o++) {
        if (strcmp(k->cpu[o].name, t->n[seq[0]].name))
            continue;
        int32_t m = 0;
        while (m < n && !strcmp(k->cpu[o + m].name, t->n[seq[m]].name))
            m++;
        if (m > best_len) {
            best_len = m;
            best_at = o;
        }
        if (m == n) {
            found++;
            if (which == 0 || found == which)
                pick = o;
            o += n - 1;
        }
    }
    if (pick < 0) {
        int rc;
        if (best_at < 0)
            rc = sw_fail(err, SW_EINVAL, "%s does not match %s: no CPU operator of the Kineto "
                         "trace is '%s', the execution trace's first operator of the iteration "
                         "(the traces come from different runs or models)", kf, etf,
                         t->n[seq[0]].name);
        else if (found)
            rc = sw_fail(err, SW_EINVAL, "%s: --iteration %lld: only %d iterations of the "
                         "Kineto trace match %s", kf, (long long)which, found, etf);
        else
            rc = sw_fail(err, SW_EINVAL, "%s does not match %s: the longest run of the Kineto "
                         "trace's CPU operators (at $.traceEvents[%u]) agrees with the execution "
                         "trace's %d operators of the iteration for %d of them, then has '%s' "
                         "where node %lld is '%s' (the traces come from different runs or models)",
                         kf, etf, k->cpu[best_at].idx, n, best_len,
                         best_at + best_len < k->ncpu ? k->cpu[best_at + best_len].name : "(end)",
                         (long long)t->n[seq[best_len]].id, t->n[seq[best_len]].name);
        sw_free(seq);
        return rc;
    }
    for (int32_t m = 0; m < n; m++)
        k->cpu[pick + m].node = seq[m];
    sw_free(seq);
    return 0;
}

static int cmp_interval(const void *a, const void *b)
{
    const double *x = a, *y = b;
    if (x[0] != y[0])
        return (x[0] > y[0]) - (x[0] < y[0]);
    return (x[1] > y[1]) - (x[1] < y[1]);
}

static int cmp_double(const void *a, const void *b)
{
    const double *x = a, *y = b;
    return (*x > *y) - (*x < *y);
}

/* Charge each kernel its share of the GPU's busy time: where k kernels run at
   once (cuDNN's RNN on several streams, VGG's convolutions), each instant is
   split k ways. The operators' times then add up to the busy time, which is
   what one iteration takes, instead of the kernels' durations added up; the
   simulator runs one compute stream, so concurrency is folded into the
   operators' times (docs/pytorch-import.md). iv: n intervals [start, end,
   top operator], sorted by start. With F(x) = the integral up to x of
   1/k(t) over busy time, a kernel's share is F(end) - F(start). */
static int share_busy(et *t, const double (*iv)[3], int32_t n)
{
    double *pt = sw_malloc(((size_t)n * 2 + 1) * sizeof *pt);
    double *ends = sw_malloc(((size_t)n + 1) * sizeof *ends);
    double *f = sw_malloc(((size_t)n * 2 + 1) * sizeof *f);
    if (!pt || !ends || !f) {
        sw_free(pt);
        sw_free(ends);
        sw_free(f);
        return SW_ENOMEM;
    }
    for (int32_t i = 0; i < n; i++) {
        pt[2 * i] = iv[i][0];
        pt[2 * i + 1] = iv[i][1];
        ends[i] = iv[i][1];
    }
    qsort(pt, (size_t)n * 2, sizeof *pt, cmp_double);
    qsort(ends, (size_t)n, sizeof *ends, cmp_double);
    /* distinct boundary points; F at each; active = started - ended before
       the segment [pt[j], pt[j+1]) */
    int32_t np = 0;
    for (int32_t i = 0; i < 2 * n; i++)
        if (np == 0 || pt[i] != pt[np - 1])
            pt[np++] = pt[i];
    int32_t si = 0, ei = 0;
    double acc = 0;
    for (int32_t j = 0; j < np; j++) {
        f[j] = acc;
        while (si < n && iv[si][0] <= pt[j])
            si++;
        while (ei < n && ends[ei] <= pt[j])
            ei++;
        int32_t active = si - ei;
        if (j + 1 < np && active > 0)
            acc += (pt[j + 1] - pt[j]) / active;
    }
    for (int32_t i = 0; i < n; i++) {
        const double *a = bsearch(&iv[i][0], pt, (size_t)np, sizeof *pt, cmp_double);
        const double *b = bsearch(&iv[i][1], pt, (size_t)np, sizeof *pt, cmp_double);
        t->n[(int32_t)iv[i][2]].gpu_s += (f[b - pt] - f[a - pt]) * 1e-6;
    }
    sw_free(pt);
    sw_free(ends);
    sw_free(f);
    return 0;
}

/* charge every kernel launched inside the linked iteration to an operator,
   and measure the GPU's busy time and span over them */
static int charge_kernels(ctx *c, const char *kf, sw_err *err)
{
    kineto *k = &c->k;
    et *t = &c->t;
    double lo = 1e300, hi = -1e300;
    int32_t nl = 0;
    for (int32_t i = 0; i < k->ncpu; i++)
        if (k->cpu[i].node >= 0) {
            lo = SW_MIN(lo, k->cpu[i].ts);
            hi = SW_MAX(hi, k->cpu[i].ts + k->cpu[i].dur);
            nl++;
        }
    /* linked events, in start order: the innermost enclosing one is the last
       that starts before the launch and ends after it */
    kev **lk = sw_malloc(((size_t)nl + 1) * sizeof *lk);
    if (!lk)
        return sw_fail(err, SW_ENOMEM, "out of memory");
    int32_t m = 0;
    for (int32_t i = 0; i < k->ncpu; i++)
        if (k->cpu[i].node >= 0)
            lk[m++] = &k->cpu[i];
    /* charged kernels' intervals and operators: [start, end, top] */
    double (*iv)[3] = sw_malloc(((size_t)k->ngpu + 1) * sizeof *iv);
    int32_t niv = 0;
    if (!iv) {
        sw_free(lk);
        return sw_fail(err, SW_ENOMEM, "out of memory");
    }
    for (int32_t gi = 0; gi < k->ngpu; gi++) {
        const kev *gk = &k->gpu[gi];
        const kev *launch = rt_find(k, gk->corr);
        if (!launch || launch->ts < lo || launch->ts > hi)
            continue; /* another iteration */
        int thread_known = 0;
        const kev *in = NULL;
        int32_t a = 0, b = m - 1, last = -1;
        while (a <= b) {
            int32_t mid = a + (b - a) / 2;
            if (lk[mid]->ts <= launch->ts) {
                last = mid;
                a = mid + 1;
            } else
                b = mid - 1;
        }
        for (int32_t j = last; j >= 0; j--) {
            const kev *e = lk[j];
            if (e->pid != launch->pid || e->tid != launch->tid)
                continue;
            thread_known = 1;
            if (e->ts + e->dur >= launch->ts) {
                in = e;
                break;
            }
        }
        if (!thread_known) {
            for (int32_t j = 0; j < m && !thread_known; j++)
                thread_known = lk[j]->pid == launch->pid && lk[j]->tid == launch->tid;
            if (!thread_known)
                continue; /* a thread the execution trace does not record */
        }
        int32_t top = in ? t->n[in->node].top : -1;
        if (top < 0) {
            sw_free(lk);
            sw_free(iv);
            return sw_fail(err, SW_EINVAL, "%s: at $.traceEvents[%u]: %s '%.80s' (correlation "
                           "%lld) was launched by no operator of the execution trace%s%s%s", kf,
                           gk->idx, "kernel", gk->name, (long long)gk->corr,
                           in ? " (only inside '" : "", in ? t->n[in->node].name : "",
                           in ? "', an annotation)" : "");
        }
        iv[niv][0] = gk->ts;
        iv[niv][1] = gk->ts + gk->dur;
        iv[niv][2] = top;
        niv++;
    }
    sw_free(lk);
    qsort(iv, (size_t)niv, sizeof *iv, cmp_interval);
    double busy = 0, sum = 0, end = -1e300;
    for (int32_t i = 0; i < niv; i++) {
        sum += iv[i][1] - iv[i][0];
        if (iv[i][0] >= end)
            busy += iv[i][1] - iv[i][0];
        else if (iv[i][1] > end)
            busy += iv[i][1] - end;
        end = SW_MAX(end, iv[i][1]);
    }
    c->gpu_span_s = niv ? (end - iv[0][0]) * 1e-6 : 0;
    c->gpu_busy_s = busy * 1e-6;
    c->gpu_sum_s = sum * 1e-6;
    int rc = share_busy(t, iv, niv);
    sw_free(iv);
    return rc ? sw_fail(err, SW_ENOMEM, "out of memory") : 0;
}

/* Does any node of [lo, hi) have a tensor on a CUDA device? */
static int any_cuda(const et *t, int32_t lo, int32_t hi)
{
    for (int32_t i = lo; i < hi; i++)
        for (int w = 0; w < 2; w++) {
            const json_value *v = w ? t->n[i].outs : t->n[i].ins;
            for (uint32_t j = 0; v && j < v->n; j++) {
                const json_value *x = &v->u.items[j];
                if (x->type == JSON_ARRAY && x->n > 0 && !is_tensor(x) && is_tensor(&x->u.items[0]))
                    x = &x->u.items[0];
                if (is_tensor(x) && starts(x->u.items[5].u.str, "cuda"))
                    return 1;
            }
        }
    return 0;
}

/* The prefix of the module records tools/record_pytorch.py writes (a
   record_function around each module's forward): "nn.Module: layer3.2.conv1". */
#define MODULE_REC "nn.Module: "

/* The qualified name of the innermost module record above node i, or NULL. */
static const char *module_of(const et *t, int32_t i)
{
    for (int32_t p = t->n[i].parent; p >= 0; p = t->n[p].parent)
        if (starts(t->n[p].name, MODULE_REC))
            return t->n[p].name + strlen(MODULE_REC);
    return NULL;
}

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
        if (is_tensor(v)) {
            if (starts(v->u.items[5].u.str, dev) && v->u.items[3].u.num.i > 0)
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

static int shape_attrs(ctx *c, const int32_t *first, const int32_t *next, int32_t top,
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
        if (!starts(e->name, "aten::") || is_viewlike(e->name))
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
        int adaptive = starts(e->name, "aten::adaptive");
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

/* Memory the execution trace does not name, from the allocator's events of a
   Kineto trace recorded with profile_memory=True: while each operator runs
   (its CPU event), the device's allocated total rises above what it was when
   the operator started by its peak; what the storages the operator creates
   do not account for is scratch memory allocated outside any operator (cuDNN
   convolution workspaces, library handles' buffers) plus the allocator's
   rounding, and becomes the operator's workspace. *peak: the allocator's
   peak over the iteration (-1 without memory events); *n_ws: operators given
   a workspace. */
static void unnamed_memory(ctx *c, int64_t *peak, int32_t *n_ws)
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

/* Marks where each operator's time came from (OA_TIME_SRC); with by_model,
   replaces every time with the cost model's (profiles/optime.c) and counts the
   operators it cannot time (left at 0 s). 0 or SW_ENOMEM. */
static int op_times(graph_profile *g, int by_model, int32_t *untimed)
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

static const dev_spec *device_of(const char *kname, const dev_spec *def, dev_spec *buf)
{
    static const struct {
        const char *pat, *dev;
    } map[] = {{"2080 Ti", "rtx2080ti"}, {"V100", "v100"},   {"TITAN V", "titanv"},
               {"Titan V", "titanv"},    {"A100", "a100"},   {"H100", "h100"}};
    for (size_t i = 0; kname && i < SW_ARRAY_LEN(map); i++)
        if (strstr(kname, map[i].pat)) {
            *buf = *dev_find(map[i].dev);
            return buf;
        }
    return def;
}

static int import_pytorch(const char *const *files, int nfiles, const param_set *ps,
                          const dev_spec *dev, graph_profile **out, sw_err *err)
{
    const char *etf = files[0], *kf = nfiles > 1 ? files[1] : NULL;
    char *et_text = NULL, *k_text = NULL;
    size_t et_len = 0, k_len = 0;
    json_doc *d1 = NULL, *d2 = NULL;
    ctx c;
    memset(&c, 0, sizeof c);
    jr r;
    jr_init(&r, etf, err);
    c.r = &r;
    int rc;
    const json_value *root;
    if ((rc = sw_read_file(etf, &et_text, &et_len, err)) != 0)
        goto done;
    d1 = json_doc_new();
    if (!d1) {
        rc = sw_fail(err, SW_ENOMEM, "out of memory");
        goto done;
    }
    if ((rc = json_parse(d1, et_text, et_len, etf, 1, &root, err)) != 0)
        goto done;
    if (root->type != JSON_OBJECT) {
        rc = jr_error(&r, root, NULL, "expected an execution trace object with \"nodes\"");
        goto done;
    }
    if ((rc = et_load(root, &r, &c.t)) != 0)
        goto done;
    et *t = &c.t;
    /* containers, operators, phases */
    for (int32_t i = 0; i < t->count; i++)
        if (t->n[i].parent >= 0)
            t->n[t->n[i].parent].nkids++;
    int64_t main_tid = -1;
    for (int32_t i = 0; i < t->count; i++) {
        etn *e = &t->n[i];
        if (e->tid < 0 && e->parent >= 0)
            e->tid = t->n[e->parent].tid;
        e->container = (int8_t)is_container(t, i);
        if (e->container)
            continue;
        int32_t p = e->parent;
        e->top = p >= 0 && t->n[p].top >= 0 ? t->n[p].top : i;
    }
    /* iteration window: ProfilerStep#N nodes split the trace */
    int64_t which = params_int(ps, "iteration");
    int32_t lo = 0, hi = t->count, nsteps = 0, chosen = -1;
    for (int32_t i = 0; i < t->count; i++)
        if (starts(t->n[i].name, "ProfilerStep#")) {
            nsteps++;
            long long num = atoll(t->n[i].name + 13);
            if (which == 0 || num == which)
                chosen = i;
        }
    if (nsteps) {
        if (chosen < 0) {
            rc = sw_fail(err, SW_EINVAL, "%s: --iteration %lld: no node ProfilerStep#%lld", etf,
                         (long long)which, (long long)which);
            goto done;
        }
        lo = chosen;
        for (int32_t i = chosen + 1; i < t->count; i++)
            if (starts(t->n[i].name, "ProfilerStep#")) {
                hi = i;
                break;
            }
    }
    for (int32_t i = lo; i < hi && main_tid < 0; i++)
        if (!t->n[i].container)
            main_tid = t->n[i].tid;
    for (int32_t i = lo; i < hi; i++) {
        etn *e = &t->n[i];
        e->in_iter = 1;
        if (e->top != i)
            continue;
        /* the autograd engine runs backward on its own thread on a GPU, and
           on the caller's thread on the CPU */
        e->phase = e->tid != main_tid || starts(e->name, "autograd::engine::evaluate_function")
                       ? GP_BACKWARD
                       : GP_FORWARD;
        for (int32_t p = e->parent; p >= 0; p = t->n[p].parent)
            if (starts(t->n[p].name, "Optimizer.step") || !strcmp(t->n[p].name, "## optimizer ##"))
                e->phase = GP_UPDATE;
    }
    /* a recording made on the CPU has no CUDA tensor: its model is on the CPU */
    c.dev = any_cuda(t, lo, hi) ? "cuda" : "cpu";
    /* Kineto: times */
    dev_spec kdev;
    const dev_spec *use_dev = dev;
    if (kf) {
        if ((rc = sw_read_file(kf, &k_text, &k_len, err)) != 0)
            goto done;
        d2 = json_doc_new();
        const json_value *kroot;
        if (!d2) {
            rc = sw_fail(err, SW_ENOMEM, "out of memory");
            goto done;
        }
        if ((rc = json_parse(d2, k_text, k_len, kf, 1, &kroot, err)) != 0)
            goto done;
        jr kr;
        jr_init(&kr, kf, err);
        if ((rc = kineto_load(kroot, &kr, &c.k)) != 0)
            goto done;
        if ((rc = link(&c, lo, hi, nsteps ? 0 : which, etf, kf, err)) != 0)
            goto done;
        if ((rc = charge_kernels(&c, kf, err)) != 0)
            goto done;
        use_dev = device_of(c.k.device, dev, &kdev);
    }
    /* the profile */
    const char *base = strrchr(etf, '/');
    base = base ? base + 1 : etf;
    char name[128];
    snprintf(name, sizeof name, "%.*s", (int)strcspn(base, "."), base);
    c.g = graph_new(name, use_dev);
    if (!c.g) {
        rc = sw_fail(err, SW_ENOMEM, "out of memory");
        goto done;
    }
    c.g->batch = params_int(ps, "batch");
    /* nodes of each operator, in id order (threads may interleave) */
    int32_t *first = sw_malloc(((size_t)t->count + 1) * sizeof *first);
    int32_t *next = sw_malloc(((size_t)t->count + 1) * sizeof *next);
    int32_t *tail = sw_malloc(((size_t)t->count + 1) * sizeof *tail);
    if (!first || !next || !tail) {
        sw_free(first);
        sw_free(next);
        sw_free(tail);
        rc = sw_fail(err, SW_ENOMEM, "out of memory");
        goto done;
    }
    for (int32_t i = 0; i < t->count; i++)
        first[i] = next[i] = tail[i] = -1;
    for (int32_t i = lo; i < hi; i++) {
        int32_t top = t->n[i].top;
        if (top < 0)
            continue;
        if (first[top] < 0)
            first[top] = i;
        else
            next[tail[top]] = i;
        tail[top] = i;
    }
    /* autograd sequence number -> the forward operator that has it, so a
       backward operator takes the name of its forward operator's module */
    hmap fwd_of_seq = {0};
    /* the operator that made the autograd node: the last forward operator
       with its sequence number (one without a node, as batch norm's
       num_batches_tracked += 1, sees the number the next node will take) */
    hmap maker_of_seq = {0};
    for (int32_t i = lo; i < hi && !rc; i++) {
        const etn *e = &t->n[i];
        if (e->top < 0 || e->seq_id < 0 || t->n[e->top].phase != GP_FORWARD)
            continue;
        if ((hm_get(&fwd_of_seq, e->seq_id) < 0 && hm_put(&fwd_of_seq, e->seq_id, e->top)) ||
            hm_put(&maker_of_seq, e->seq_id, e->top))
            rc = sw_fail(err, SW_ENOMEM, "out of memory");
    }
    int32_t nops = 0;
    for (int32_t i = lo; i < hi && !rc; i++) {
        etn *e = &t->n[i];
        if (e->top != i)
            continue;
        c.nrd = c.ncr = c.nmu = 0;
        c.cur_op = c.g->n_ops;
        for (int32_t j = first[i]; j >= 0 && !rc; j = next[j])
            rc = node_accesses(&c, &t->n[j], e->phase);
        if (rc == SW_ENOMEM) /* node_accesses reports bad input only */
            rc = sw_fail(err, SW_ENOMEM, "%s: out of memory", etf);
        if (rc)
            break;
        if (c.nrd + c.ncr + c.nmu == 0 && e->gpu_s == 0)
            continue; /* no tensor, no kernel: nothing to simulate */
        int32_t *rd = sw_malloc(((size_t)c.nrd + 1) * sizeof *rd);
        int32_t *cr = sw_malloc(((size_t)c.ncr + 1) * sizeof *cr);
        int32_t *mu = sw_malloc(((size_t)c.nmu + 1) * sizeof *mu);
        int nr = 0;
        if (!rd || !cr || !mu) {
            sw_free(rd);
            sw_free(cr);
            sw_free(mu);
            rc = sw_fail(err, SW_ENOMEM, "out of memory");
            break;
        }
        for (int k = 0; k < c.nrd; k++) {
            int dup = 0;
            for (int j = 0; j < c.nmu && !dup; j++)
                dup = c.mu[j] == c.rd[k];
            if (!dup)
                rd[nr++] = c.b[c.rd[k]].tensor;
        }
        for (int k = 0; k < c.ncr; k++)
            cr[k] = c.b[c.cr[k]].tensor;
        for (int k = 0; k < c.nmu; k++)
            mu[k] = c.b[c.mu[k]].tensor;
        const char *type = e->name;
        if (starts(type, "autograd::engine::evaluate_function: "))
            type += strlen("autograd::engine::evaluate_function: ");
        /* named after the user's module where the trace has module records
           (layer3.2.conv1:aten::convolution, layer3.2.conv1:ConvolutionBackward0),
           else after the node (n1734:aten::convolution) */
        const char *mod = module_of(t, i);
        for (int32_t j = first[i]; j >= 0 && !mod && e->phase == GP_BACKWARD; j = next[j])
            if (t->n[j].seq_id >= 0) {
                int32_t f = hm_get(&fwd_of_seq, t->n[j].seq_id);
                if (f >= 0)
                    mod = module_of(t, f);
                break;
            }
        char opn[192];
        if (mod)
            snprintf(opn, sizeof opn, "%.120s:%.60s", mod, type);
        else
            snprintf(opn, sizeof opn, "n%lld:%.60s", (long long)e->id, type);
        int32_t op = graph_add_op(c.g, opn, type, e->gpu_s, e->phase, rd, nr, cr, c.ncr, mu,
                                  c.nmu, 0);
        sw_free(rd);
        sw_free(cr);
        sw_free(mu);
        int32_t fop = -1;
        for (int32_t j = first[i]; j >= 0 && e->phase == GP_BACKWARD; j = next[j])
            if (t->n[j].seq_id >= 0) {
                int32_t f = hm_get(&maker_of_seq, t->n[j].seq_id);
                fop = f >= 0 ? t->n[f].op : -1;
                break;
            }
        if (op < 0 || graph_op_attr(c.g, op, OA_ET_ID, (double)e->id) ||
            shape_attrs(&c, first, next, i, op, fop)) {
            rc = sw_fail(err, SW_ENOMEM, "out of memory");
            break;
        }
        e->op = op;
        nops++;
    }
    sw_free(first);
    sw_free(next);
    sw_free(tail);
    hm_free(&fwd_of_seq);
    hm_free(&maker_of_seq);
    if (rc)
        goto done;
    if (nops == 0) {
        rc = sw_fail(err, SW_EINVAL, "%s: no operator with GPU tensors or kernels in the "
                     "iteration", etf);
        goto done;
    }
    /* a complete training iteration has a backward pass and an optimizer step;
       a trace cut short must not pass for a small model */
    int nph[GP__COUNT] = {0};
    for (int32_t o = 0; o < c.g->n_ops; o++)
        nph[c.g->ops[o].phase]++;
    char missing[160] = "";
    if (!nph[GP_BACKWARD] || !nph[GP_UPDATE])
        snprintf(missing, sizeof missing, "%s%s%s", !nph[GP_BACKWARD] ? "no backward pass" : "",
                 !nph[GP_BACKWARD] && !nph[GP_UPDATE] ? " and " : "",
                 !nph[GP_UPDATE] ? "no optimizer step" : "");
    if (missing[0] && !params_bool(ps, "partial")) {
        rc = sw_fail(err, SW_EINVAL, "%s: the iteration is incomplete: %d forward operators but "
                     "%s (a trace cut off, or not a training step); --partial imports it anyway",
                     etf, nph[GP_FORWARD], missing);
        goto done;
    }
    /* kinds of the storages that exist before the iteration */
    for (int32_t i = 0; i < c.nb; i++) {
        binding *b = &c.b[i];
        if (b->creator >= 0)
            continue;
        graph_tensor *x = &c.g->tensors[b->tensor];
        x->kind = (uint8_t)(b->mut_update ? (b->read_fwd ? GK_PARAMETER : GK_OPTIMIZER_STATE)
                            : b->mut_other ? GK_GRADIENT
                                           : GK_INPUT);
    }
    int64_t alloc_peak = -1;
    int32_t n_ws = 0;
    if (kf)
        unnamed_memory(&c, &alloc_peak, &n_ws);
    int32_t untimed = 0;
    int by_model = !strcmp(params_str(ps, "times"), "model");
    if ((rc = op_times(c.g, by_model, &untimed)) != 0) {
        rc = sw_fail(err, rc, "out of memory");
        goto done;
    }
    char files_s[2048];
    snprintf(files_s, sizeof files_s, "%s%s%s", etf, kf ? " " : "", kf ? kf : "");
    char dv[160];
    if (c.k.device)
        snprintf(dv, sizeof dv, "%s (from the Kineto trace; profile device %s)", c.k.device,
                 use_dev->name);
    else
        snprintf(dv, sizeof dv, "%s (assumed: the traces do not name the GPU)", use_dev->name);
    char notes[1400];
    size_t nn = 0;
    if (missing[0])
        nn = (size_t)snprintf(notes, sizeof notes, "partial iteration: %s (imported with "
                              "--partial); ", missing);
    if (!strcmp(c.dev, "cpu"))
        nn += (size_t)snprintf(notes + nn, sizeof notes - nn, "recorded on the CPU (no CUDA "
                               "tensor): the CPU's tensors are the model's, and there are no "
                               "GPU times; ");
    if (by_model)
        nn += (size_t)snprintf(notes + nn, sizeof notes - nn, "operator times from the cost "
                               "model (--times model: built-in figures, device %s, fp32), %d "
                               "operators without the shapes it needs at 0 s; ", use_dev->name,
                               untimed);
    if (alloc_peak >= 0)
        nn += (size_t)snprintf(notes + nn, sizeof notes - nn, "the allocator's events (a trace "
                               "recorded with profile_memory=True): peak allocated %lld bytes "
                               "during the iteration; %d operators given the scratch memory "
                               "they allocated beyond their outputs as workspace; ",
                               (long long)alloc_peak, n_ws);
    else if (kf)
        nn += (size_t)snprintf(notes + nn, sizeof notes - nn, "no allocator events (record with "
                               "profile_memory=True): memory that no operator's tensors name "
                               "(library workspaces) is not in the profile; ");
    if (kf)
        snprintf(notes + nn, sizeof notes - nn, "%s = GPU time of the kernels, copies and "
                 "memsets each top-level operator launched, time that kernels on several "
                 "streams share split among them; kernels %.6f s in all, the GPU busy "
                 "%.6f s of a %.6f s span from the first kernel to the last (idle between "
                 "kernels %.6f s)", by_model ? "recorded time" : "operator time", c.gpu_sum_s,
                 c.gpu_busy_s, c.gpu_span_s, c.gpu_span_s - c.gpu_busy_s);
    else if (!by_model)
        snprintf(notes + nn, sizeof notes - nn, "no Kineto trace: operator times are zero");
    if (graph_set_str(&c.g->prov.source, "recorded") ||
        graph_set_str(&c.g->prov.tool, kf ? "swapsim import pytorch (PyTorch execution trace + "
                                            "Kineto trace)"
                                          : "swapsim import pytorch (PyTorch execution trace)") ||
        graph_set_str(&c.g->prov.file, files_s) || graph_set_str(&c.g->prov.device, dv) ||
        graph_set_str(&c.g->prov.notes, notes)) {
        rc = sw_fail(err, SW_ENOMEM, "out of memory");
        goto done;
    }
    if ((rc = graph_finish(c.g, err, NULL, NULL)) != 0) {
        sw_err_prefix(err, "%s: ", etf);
        goto done;
    }
    *out = c.g;
    c.g = NULL;
done:
    graph_free(c.g);
    hm_free(&c.live);
    hm_free(&c.bcast);
    sw_free(c.bc);
    sw_free(c.b);
    sw_free(c.rd);
    sw_free(c.cr);
    sw_free(c.mu);
    sw_free(c.tin);
    sw_free(c.tout);
    sw_free(c.t.n);
    kineto_free(&c.k);
    json_doc_free(d1);
    json_doc_free(d2);
    sw_free(et_text);
    sw_free(k_text);
    return rc;
}

const importer importer_pytorch = {
    "pytorch", "PyTorch execution trace (+ Kineto trace for GPU times), gzip or plain",
    "ET [KINETO]", 1, 2, pt_params, import_pytorch};
