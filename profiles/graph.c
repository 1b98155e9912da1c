/* graph.c: building, validating and deriving the profile's dataflow graph. */
#include "graph.h"
#include "../common/heap.h"
#include "../common/limits.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *kind_names[GK__COUNT] = {"parameter", "optimizer_state", "input",
                                            "activation", "gradient", "workspace"};
static const char *phase_names[GP__COUNT] = {"forward", "backward", "update"};

const char *graph_kind_name(int k) { return k >= 0 && k < GK__COUNT ? kind_names[k] : "?"; }
const char *graph_phase_name(int p) { return p >= 0 && p < GP__COUNT ? phase_names[p] : "?"; }

int graph_kind_parse(const char *s)
{
    for (int i = 0; i < GK__COUNT; i++)
        if (s && strcmp(s, kind_names[i]) == 0)
            return i;
    return -1;
}

int graph_phase_parse(const char *s)
{
    for (int i = 0; i < GP__COUNT; i++)
        if (s && strcmp(s, phase_names[i]) == 0)
            return i;
    return -1;
}

int graph_kind_default_persistent(int k) { return k == GK_PARAMETER || k == GK_OPTIMIZER_STATE; }

graph_profile *graph_new(const char *name, const dev_spec *dev)
{
    graph_profile *g = sw_calloc(1, sizeof *g);
    if (!g)
        return NULL;
    g->name = sw_strdup(name ? name : "unnamed");
    if (dev)
        g->device = *dev;
    g->batch = 1;
    if (!g->name) {
        sw_free(g);
        return NULL;
    }
    return g;
}

static void free_derived(graph_profile *g)
{
    sw_free(g->order);
    sw_free(g->pred_off);
    sw_free(g->pred);
    sw_free(g->succ_off);
    sw_free(g->succ);
    sw_free(g->acc_off);
    sw_free(g->acc);
    sw_free(g->acc_flag);
    sw_free(g->acc_ver);
    sw_free(g->n_mutations);
    sw_free(g->bytes);
    g->bytes = NULL;
    g->order = g->pred_off = g->pred = g->succ_off = g->succ = NULL;
    g->acc_off = g->acc = g->acc_ver = g->n_mutations = NULL;
    g->acc_flag = NULL;
    g->finished = 0;
}

void graph_free(graph_profile *g)
{
    if (!g)
        return;
    for (int32_t i = 0; i < g->n_tensors; i++) {
        sw_free(g->tensors[i].name);
        sw_free(g->tensors[i].dtype);
        sw_free(g->tensors[i].shape);
    }
    for (int32_t i = 0; i < g->n_ops; i++) {
        graph_op *o = &g->ops[i];
        sw_free(o->name);
        sw_free(o->type);
        sw_free(o->in);
        sw_free(o->out);
        sw_free(o->mut);
        for (int32_t j = 0; j < o->n_attr; j++)
            sw_free(o->attr[j].key);
        sw_free(o->attr);
    }
    sw_free(g->tensors);
    sw_free(g->ops);
    sw_free(g->name);
    sw_free(g->prov.source);
    sw_free(g->prov.tool);
    sw_free(g->prov.file);
    sw_free(g->prov.device);
    sw_free(g->prov.cost_model);
    sw_free(g->prov.notes);
    free_derived(g);
    sw_free(g);
}

int graph_set_str(char **field, const char *value)
{
    char *d = value ? sw_strdup(value) : NULL;
    if (value && !d)
        return SW_ENOMEM;
    sw_free(*field);
    *field = d;
    return 0;
}

int32_t graph_add_tensor(graph_profile *g, const char *name, int64_t bytes, int kind,
                         int persistent)
{
    if (g->n_tensors == INT32_MAX || SW_GROW(g->tensors, g->tcap, (size_t)g->n_tensors + 1))
        return -1;
    graph_tensor *t = &g->tensors[g->n_tensors];
    memset(t, 0, sizeof *t);
    char tmp[32];
    if (!name) {
        snprintf(tmp, sizeof tmp, "t%d", g->n_tensors);
        name = tmp;
    }
    t->name = sw_strdup(name);
    if (!t->name)
        return -1;
    t->bytes = bytes;
    t->kind = (uint8_t)kind;
    t->persistent = (uint8_t)(persistent != 0);
    t->view_of = -1;
    t->held_until = -1;
    t->storage = g->n_tensors;
    t->producer = -1;
    g->finished = 0;
    return g->n_tensors++;
}

static int32_t *dup_ids(const int32_t *a, int n, int *fail)
{
    if (n <= 0)
        return NULL;
    int32_t *d = sw_malloc((size_t)n * sizeof *d);
    if (!d) {
        *fail = 1;
        return NULL;
    }
    memcpy(d, a, (size_t)n * sizeof *d);
    return d;
}

int32_t graph_add_op(graph_profile *g, const char *name, const char *type, double time_s,
                     int phase, const int32_t *in, int n_in, const int32_t *out, int n_out,
                     const int32_t *mut, int n_mut, int64_t workspace_bytes)
{
    if (g->n_ops == INT32_MAX || SW_GROW(g->ops, g->ocap, (size_t)g->n_ops + 1))
        return -1;
    graph_op *o = &g->ops[g->n_ops];
    memset(o, 0, sizeof *o);
    char tmp[32];
    if (!name) {
        snprintf(tmp, sizeof tmp, "op%d", g->n_ops);
        name = tmp;
    }
    int fail = 0;
    o->name = sw_strdup(name);
    o->type = sw_strdup(type ? type : "op");
    o->in = dup_ids(in, n_in, &fail);
    o->out = dup_ids(out, n_out, &fail);
    o->mut = dup_ids(mut, n_mut, &fail);
    if (fail || !o->name || !o->type) {
        sw_free(o->name);
        sw_free(o->type);
        sw_free(o->in);
        sw_free(o->out);
        sw_free(o->mut);
        return -1;
    }
    o->n_in = n_in;
    o->n_out = n_out;
    o->n_mut = n_mut;
    o->time_s = time_s;
    o->phase = (uint8_t)phase;
    o->workspace_bytes = workspace_bytes;
    g->finished = 0;
    return g->n_ops++;
}

int graph_op_attr(graph_profile *g, int32_t op, const char *key, double value)
{
    graph_op *o = &g->ops[op];
    for (int32_t i = 0; i < o->n_attr; i++)
        if (strcmp(o->attr[i].key, key) == 0) {
            o->attr[i].value = value;
            return 0;
        }
    graph_attr *a = sw_realloc(o->attr, (size_t)(o->n_attr + 1) * sizeof *a);
    if (!a)
        return SW_ENOMEM;
    o->attr = a;
    a[o->n_attr].key = sw_strdup(key);
    if (!a[o->n_attr].key)
        return SW_ENOMEM;
    a[o->n_attr].value = value;
    o->n_attr++;
    return 0;
}

int graph_tensor_shape(graph_profile *g, int32_t t, const int64_t *dims, int n, const char *dtype)
{
    graph_tensor *x = &g->tensors[t];
    sw_free(x->shape);
    x->shape = NULL;
    x->n_shape = 0;
    if (n > 0) {
        x->shape = sw_malloc((size_t)n * sizeof *dims);
        if (!x->shape)
            return SW_ENOMEM;
        memcpy(x->shape, dims, (size_t)n * sizeof *dims);
        x->n_shape = n;
    }
    return graph_set_str(&x->dtype, dtype);
}

/* ---- finishing: validation and derived data ---- */

static int fail_op(sw_err *err, int32_t *bad_op, int32_t op, const graph_profile *g,
                   const char *fmt, const char *detail)
{
    if (bad_op)
        *bad_op = op;
    char m[512];
    snprintf(m, sizeof m, fmt, detail);
    return sw_fail(err, SW_EINVAL, "op %d '%s': %s", op, g->ops[op].name, m);
}

/* Describe a cycle among ops left with nonzero in-degree after Kahn. */
static void describe_cycle(const graph_profile *g, const int32_t *indeg, char *buf, size_t n,
                           int32_t *first)
{
    int32_t start = -1;
    for (int32_t i = 0; i < g->n_ops && start < 0; i++)
        if (indeg[i] > 0)
            start = i;
    /* walk predecessors that are still blocked until an op repeats */
    int32_t *seen = sw_calloc((size_t)g->n_ops, sizeof *seen);
    int32_t *path = sw_malloc((size_t)g->n_ops * sizeof *path);
    buf[0] = 0;
    *first = start;
    if (!seen || !path || start < 0) {
        snprintf(buf, n, "ops depend on each other in a cycle");
        sw_free(seen);
        sw_free(path);
        return;
    }
    int32_t len = 0, cur = start;
    while (!seen[cur]) {
        seen[cur] = len + 1;
        path[len++] = cur;
        int32_t next = -1;
        for (int32_t k = g->pred_off[cur]; k < g->pred_off[cur + 1]; k++)
            if (indeg[g->pred[k]] > 0) {
                next = g->pred[k];
                break;
            }
        if (next < 0)
            break;
        cur = next;
    }
    int32_t from = seen[cur] - 1;
    size_t off = 0;
    *first = cur;
    /* the path was walked along predecessors: print it in dependency order */
    for (int32_t i = len - 1; i >= from && off < n; i--) {
        int w = snprintf(buf + off, n - off, "%sop %d '%s'", i == len - 1 ? "" : " -> ", path[i],
                         g->ops[path[i]].name);
        if (w > 0)
            off += (size_t)w;
    }
    if (off < n)
        snprintf(buf + off, n - off, " -> op %d '%s'", path[len - 1], g->ops[path[len - 1]].name);
    sw_free(seen);
    sw_free(path);
}

/* The limits of common/limits.h, for profiles from every source (the JSON
   loader, generators, importers): each tensor, workspace and op time within
   its bound, and the profile's bytes and seconds in all within theirs. Each
   addend is bounded first, so the running sums cannot overflow. */
static int check_limits(const graph_profile *g, sw_err *err, int32_t *bad_op, int32_t *bad_tensor)
{
    int64_t bytes = 0;
    double secs = 0;
    for (int32_t t = 0; t < g->n_tensors; t++) {
        const graph_tensor *x = &g->tensors[t];
        if (x->bytes < 0 || x->bytes > SW_MAX_TENSOR_BYTES || x->bytes > SW_MAX_TOTAL_BYTES - bytes) {
            if (bad_tensor)
                *bad_tensor = t;
            return sw_fail(err, SW_EINVAL, "tensor %d '%s': size %lld bytes is outside the "
                           "limits (expected 0 to 2^50 bytes a tensor, 2^62 in all)", t, x->name,
                           (long long)x->bytes);
        }
        bytes += x->bytes;
    }
    for (int32_t o = 0; o < g->n_ops; o++) {
        const graph_op *op = &g->ops[o];
        if (op->workspace_bytes < 0 || op->workspace_bytes > SW_MAX_TENSOR_BYTES ||
            op->workspace_bytes > SW_MAX_TOTAL_BYTES - bytes) {
            char d[64];
            snprintf(d, sizeof d, "%lld", (long long)op->workspace_bytes);
            return fail_op(err, bad_op, o, g, "workspace of %s bytes is beyond the limits "
                           "(expected 0 to 2^50 bytes, 2^62 in all with the tensors)", d);
        }
        bytes += op->workspace_bytes;
        if (!(op->time_s >= 0 && op->time_s <= SW_MAX_OP_SECONDS) ||
            op->time_s > SW_MAX_TOTAL_SECONDS - secs) {
            char d[64];
            snprintf(d, sizeof d, "%.17g", op->time_s);
            return fail_op(err, bad_op, o, g, "time of %s s is beyond the limits (expected 0 to "
                           "86400 s an op, 1e9 s in all)", d);
        }
        secs += op->time_s;
    }
    return 0;
}

/* Tensors: each has a valid size, kind and view target (a tensor, not itself);
   producers are reset (check_ops sets them). */
static int check_tensors(graph_profile *g, sw_err *err, int32_t *bad_tensor)
{
    int32_t nt = g->n_tensors;
    for (int32_t t = 0; t < nt; t++) {
        graph_tensor *x = &g->tensors[t];
        x->producer = -1;
        if (x->bytes < 0) {
            if (bad_tensor)
                *bad_tensor = t;
            return sw_fail(err, SW_EINVAL, "tensor %d '%s': negative size %lld", t, x->name,
                           (long long)x->bytes);
        }
        if (x->kind >= GK__COUNT) {
            if (bad_tensor)
                *bad_tensor = t;
            return sw_fail(err, SW_EINVAL, "tensor %d '%s': bad kind", t, x->name);
        }
        if (x->view_of >= nt || x->view_of < -1 || x->view_of == t) {
            if (bad_tensor)
                *bad_tensor = t;
            return sw_fail(err, SW_EINVAL, "tensor %d '%s': view of a missing tensor %d", t,
                           x->name, x->view_of);
        }
    }
    return 0;
}

/* Each tensor's storage: the root at the end of its chain of views (a chain
   longer than the tensor count is a cycle). */
static int derive_storages(graph_profile *g, sw_err *err, int32_t *bad_tensor)
{
    int32_t nt = g->n_tensors;
    for (int32_t t = 0; t < nt; t++) {
        int32_t r = t, steps = 0;
        while (g->tensors[r].view_of >= 0 && steps <= nt) {
            r = g->tensors[r].view_of;
            steps++;
        }
        if (steps > nt) {
            if (bad_tensor)
                *bad_tensor = t;
            return sw_fail(err, SW_EINVAL, "tensor %d '%s': views form a cycle", t,
                           g->tensors[t].name);
        }
        g->tensors[t].storage = r;
    }
    return 0;
}

/* Ops: valid time, workspace, phase and tensor ids; the totals
   (total_compute_s, max_workspace); each output's producer (one op, and
   never a persistent tensor). */
static int check_ops(graph_profile *g, sw_err *err, int32_t *bad_op)
{
    int32_t nt = g->n_tensors, no = g->n_ops;
    g->max_workspace = 0;
    g->total_compute_s = 0;
    for (int32_t o = 0; o < no; o++) {
        graph_op *op = &g->ops[o];
        if (!(op->time_s >= 0))
            return fail_op(err, bad_op, o, g, "compute time must be >= 0%s", "");
        if (op->workspace_bytes < 0)
            return fail_op(err, bad_op, o, g, "workspace must be >= 0%s", "");
        if (op->phase >= GP__COUNT)
            return fail_op(err, bad_op, o, g, "bad phase%s", "");
        const int32_t *lists[3] = {op->in, op->out, op->mut};
        int32_t lens[3] = {op->n_in, op->n_out, op->n_mut};
        static const char *what[3] = {"input", "output", "mutated tensor"};
        for (int l = 0; l < 3; l++)
            for (int32_t k = 0; k < lens[l]; k++)
                if (lists[l][k] < 0 || lists[l][k] >= nt) {
                    char d[96];
                    snprintf(d, sizeof d, "%s %d is not a tensor id (dangling reference)", what[l],
                             lists[l][k]);
                    return fail_op(err, bad_op, o, g, "%s", d);
                }
        g->total_compute_s += op->time_s;
        if (op->workspace_bytes > g->max_workspace)
            g->max_workspace = op->workspace_bytes;
        for (int32_t k = 0; k < op->n_out; k++) {
            graph_tensor *x = &g->tensors[op->out[k]];
            if (x->producer >= 0) {
                char d[160];
                snprintf(d, sizeof d, "output tensor %d '%s' is already produced by op %d",
                         op->out[k], x->name, x->producer);
                return fail_op(err, bad_op, o, g, "%s", d);
            }
            if (x->persistent) {
                char d[200];
                snprintf(d, sizeof d, "output tensor %d '%s' is persistent; persistent tensors "
                         "exist before the iteration and are updated in place (mutates)",
                         op->out[k], x->name);
                return fail_op(err, bad_op, o, g, "%s", d);
            }
            x->producer = o;
        }
    }
    return 0;
}

/* held_until: -1, or an op id on a non-persistent root storage. */
static int check_held_until(const graph_profile *g, sw_err *err, int32_t *bad_tensor)
{
    for (int32_t t = 0; t < g->n_tensors; t++) {
        const graph_tensor *x = &g->tensors[t];
        if (x->held_until < -1 || x->held_until >= g->n_ops ||
            (x->held_until >= 0 && (x->view_of >= 0 || x->persistent))) {
            if (bad_tensor)
                *bad_tensor = t;
            return sw_fail(err, SW_EINVAL, "tensor %d '%s': held_until must be an op id on a "
                           "non-persistent storage (not a view), got %d", t, x->name,
                           x->held_until);
        }
    }
    return 0;
}

/* No op lists one tensor as both an input and an output (in-place updates
   are mutations). */
static int check_in_out(const graph_profile *g, sw_err *err, int32_t *bad_op)
{
    for (int32_t o = 0; o < g->n_ops; o++) {
        const graph_op *op = &g->ops[o];
        for (int32_t k = 0; k < op->n_in; k++)
            for (int32_t j = 0; j < op->n_out; j++)
                if (op->in[k] == op->out[j]) {
                    char d[128];
                    snprintf(d, sizeof d, "tensor %d is both an input and an output (use "
                             "mutates for in-place updates)", op->in[k]);
                    return fail_op(err, bad_op, o, g, "%s", d);
                }
    }
    return 0;
}

static int fail_oom(sw_err *err)
{
    return sw_fail(err, SW_ENOMEM, "out of memory while building the graph");
}

/* Per-op storage accesses, deduplicated, CSR over ops (acc_off, acc,
   acc_flag): created storages first, then reads, then mutations; an op may
   not read or mutate a storage it creates. Also allocates acc_ver and
   n_mutations (collect_edges fills them) and fills bytes. */
static int build_accesses(graph_profile *g, sw_err *err, int32_t *bad_op)
{
    int32_t nt = g->n_tensors, no = g->n_ops;
    int rc = 0;
    size_t total = 0;
    for (int32_t o = 0; o < no; o++)
        total += (size_t)(g->ops[o].n_in + g->ops[o].n_out + g->ops[o].n_mut);
    g->acc_off = sw_malloc(((size_t)no + 1) * sizeof(int32_t));
    g->acc = sw_malloc((total + 1) * sizeof(int32_t));
    g->acc_flag = sw_malloc(total + 1);
    g->acc_ver = sw_malloc((total + 1) * sizeof(int32_t));
    g->n_mutations = sw_calloc((size_t)nt + 1, sizeof(int32_t));
    g->bytes = sw_malloc(((size_t)nt + 1) * sizeof(int64_t));
    int32_t *mark = sw_malloc(((size_t)nt + 1) * sizeof(int32_t)); /* per storage: last op seen */
    int32_t *pos = sw_malloc(((size_t)nt + 1) * sizeof(int32_t));  /* per storage: its access
                                                                      index in that op */
    if (!g->acc_off || !g->acc || !g->acc_flag || !g->acc_ver || !g->n_mutations || !g->bytes ||
        !mark || !pos) {
        rc = fail_oom(err);
        goto done;
    }
    for (int32_t t = 0; t < nt; t++)
        g->bytes[t] = g->tensors[t].bytes;
    for (int32_t t = 0; t < nt; t++)
        mark[t] = -1;
    int32_t na = 0;
    for (int32_t o = 0; o < no; o++) {
        graph_op *op = &g->ops[o];
        g->acc_off[o] = na;
        /* created storages first, then reads, then mutations */
        for (int32_t k = 0; k < op->n_out; k++) {
            graph_tensor *x = &g->tensors[op->out[k]];
            int32_t s = x->storage;
            int flag = x->view_of < 0 ? GA_CREATE : GA_READ;
            if (mark[s] != o) {
                mark[s] = o;
                pos[s] = na;
                g->acc[na] = s;
                g->acc_flag[na] = (uint8_t)flag;
                na++;
            } else {
                g->acc_flag[pos[s]] |= (uint8_t)flag;
            }
        }
        for (int32_t k = 0; k < op->n_in + op->n_mut; k++) {
            int32_t t = k < op->n_in ? op->in[k] : op->mut[k - op->n_in];
            int32_t s = g->tensors[t].storage;
            uint8_t flag = k < op->n_in ? GA_READ : GA_READ | GA_MUTATE;
            if (mark[s] != o) {
                mark[s] = o;
                pos[s] = na;
                g->acc[na] = s;
                g->acc_flag[na] = flag;
                na++;
            } else {
                g->acc_flag[pos[s]] |= flag;
            }
        }
        for (int32_t k = g->acc_off[o]; k < na; k++)
            if ((g->acc_flag[k] & GA_CREATE) && (g->acc_flag[k] & (GA_READ | GA_MUTATE))) {
                char d[160];
                snprintf(d, sizeof d, "storage of tensor %d '%s' is created by this op and "
                         "also read or mutated by it", g->acc[k], g->tensors[g->acc[k]].name);
                rc = fail_op(err, bad_op, o, g, "%s", d);
                goto done;
            }
    }
    g->acc_off[no] = na;
done:
    sw_free(mark);
    sw_free(pos);
    return rc;
}

/* Dependency edges as (pred, succ) pairs in *epair (the caller frees it):
   creator -> every later access, last writer -> every access, and readers
   since the last write -> the next mutation (file order); duplicates stay.
   Fills acc_ver and n_mutations. */
static int collect_edges(graph_profile *g, sw_err *err, int32_t **epair_out, size_t *ne_out)
{
    int32_t nt = g->n_tensors, no = g->n_ops, na = g->acc_off[no];
    int rc = 0;
    *epair_out = NULL;
    *ne_out = 0;
    int32_t *last_writer = sw_malloc(((size_t)nt + 1) * sizeof(int32_t)); /* per storage */
    int32_t *nreaders = sw_calloc((size_t)nt + 1, sizeof(int32_t)); /* per storage: readers
                                                                       since its last write */
    int32_t *readers_off = sw_calloc((size_t)nt + 2, sizeof(int32_t)); /* CSR over storages */
    int32_t *readers = NULL, *epair = NULL;
    if (!last_writer || !nreaders || !readers_off) {
        rc = fail_oom(err);
        goto done;
    }
    /* readers since last write can be at most the number of accesses of s */
    for (int32_t k = 0; k < na; k++)
        readers_off[g->acc[k] + 1]++;
    for (int32_t t = 0; t < nt; t++)
        readers_off[t + 1] += readers_off[t];
    readers = sw_malloc(((size_t)na + 1) * sizeof(int32_t));
    /* edge list as pairs (pred, succ); bound: each access adds at most
       1 (creator) + 1 (last writer) + readers (WAR) edges; WAR edges total <= accesses */
    size_t ecap = (size_t)na * 3 + 1, ne = 0;
    epair = sw_malloc(ecap * 2 * sizeof(int32_t));
    if (!readers || !epair) {
        rc = fail_oom(err);
        goto done;
    }
    for (int32_t t = 0; t < nt; t++)
        last_writer[t] = -1;
    for (int32_t o = 0; o < no; o++) {
        for (int32_t k = g->acc_off[o]; k < g->acc_off[o + 1]; k++) {
            int32_t s = g->acc[k];
            uint8_t f = g->acc_flag[k];
            int32_t creator = g->tensors[s].producer;
            g->acc_ver[k] = g->n_mutations[s];
            if (f & GA_CREATE)
                continue;
            if (creator >= 0 && creator != o) {
                epair[2 * ne] = creator;
                epair[2 * ne + 1] = o;
                ne++;
            }
            if (last_writer[s] >= 0 && last_writer[s] != o) {
                epair[2 * ne] = last_writer[s];
                epair[2 * ne + 1] = o;
                ne++;
            }
            if (f & GA_MUTATE) {
                for (int32_t r = 0; r < nreaders[s]; r++) {
                    int32_t rd = readers[readers_off[s] + r];
                    if (rd != o) {
                        epair[2 * ne] = rd;
                        epair[2 * ne + 1] = o;
                        ne++;
                    }
                }
                nreaders[s] = 0;
                last_writer[s] = o;
                g->n_mutations[s]++;
            } else {
                readers[readers_off[s] + nreaders[s]++] = o;
            }
        }
    }
    *epair_out = epair;
    *ne_out = ne;
    epair = NULL;
done:
    sw_free(last_writer);
    sw_free(nreaders);
    sw_free(readers_off);
    sw_free(readers);
    sw_free(epair);
    return rc;
}

/* The op DAG from the edge pairs, CSR over ops: pred (each op's
   predecessors, deduplicated, in edge order) and succ (its successors, in
   op order). */
static int build_dag(graph_profile *g, sw_err *err, const int32_t *epair, size_t ne)
{
    int32_t no = g->n_ops;
    int rc = 0;
    int32_t *cnt = NULL, *tmp = NULL, *omark = NULL, *fill = NULL;
    g->pred_off = sw_calloc((size_t)no + 1, sizeof(int32_t));
    g->succ_off = sw_calloc((size_t)no + 1, sizeof(int32_t));
    if (!g->pred_off || !g->succ_off)
        goto oom;
    /* dedup: sort pairs by (succ, pred) via counting into buckets */
    cnt = sw_calloc((size_t)no + 1, sizeof(int32_t));
    tmp = sw_malloc((ne + 1) * sizeof(int32_t));
    if (!cnt || !tmp)
        goto oom;
    for (size_t e = 0; e < ne; e++)
        cnt[epair[2 * e + 1] + 1]++;
    for (int32_t o = 0; o < no; o++)
        cnt[o + 1] += cnt[o];
    for (size_t e = 0; e < ne; e++)
        tmp[cnt[epair[2 * e + 1]]++] = epair[2 * e];
    /* cnt[o] is now the end of o's bucket; starts are cnt[o-1] */
    g->pred = sw_malloc((ne + 1) * sizeof(int32_t));
    omark = sw_malloc((size_t)no * sizeof(int32_t)); /* per op: the last op it was a pred of */
    if (!g->pred || !omark)
        goto oom;
    for (int32_t o = 0; o < no; o++)
        omark[o] = -1;
    int32_t np = 0, start = 0;
    for (int32_t o = 0; o < no; o++) {
        g->pred_off[o] = np;
        for (int32_t k = start; k < cnt[o]; k++) {
            int32_t p = tmp[k];
            if (omark[p] != o) {
                omark[p] = o;
                g->pred[np++] = p;
            }
        }
        start = cnt[o];
    }
    g->pred_off[no] = np;
    g->succ = sw_malloc(((size_t)np + 1) * sizeof(int32_t));
    fill = sw_malloc(((size_t)no + 1) * sizeof(int32_t));
    if (!g->succ || !fill)
        goto oom;
    for (int32_t k = 0; k < np; k++)
        g->succ_off[g->pred[k] + 1]++;
    for (int32_t o = 0; o < no; o++)
        g->succ_off[o + 1] += g->succ_off[o];
    memcpy(fill, g->succ_off, (size_t)no * sizeof(int32_t));
    for (int32_t o = 0; o < no; o++)
        for (int32_t k = g->pred_off[o]; k < g->pred_off[o + 1]; k++)
            g->succ[fill[g->pred[k]]++] = o;
    goto done;
oom:
    rc = fail_oom(err);
done:
    sw_free(cnt);
    sw_free(tmp);
    sw_free(omark);
    sw_free(fill);
    return rc;
}

/* The default order: Kahn's algorithm preferring file order (a min-heap of
   ready op ids); ops left over form a cycle, reported by name. */
static int default_order(graph_profile *g, sw_err *err, int32_t *bad_op)
{
    int32_t no = g->n_ops;
    int rc = 0;
    int32_t *indeg = sw_malloc(((size_t)no + 1) * sizeof(int32_t)); /* per op: preds not yet
                                                                       ordered */
    g->order = sw_malloc(((size_t)no + 1) * sizeof(int32_t));
    int32_t *heap = sw_malloc(((size_t)no + 1) * sizeof(int32_t));
    if (!indeg || !g->order || !heap) {
        rc = fail_oom(err);
        goto done;
    }
    for (int32_t o = 0; o < no; o++)
        indeg[o] = g->pred_off[o + 1] - g->pred_off[o];
    int32_t n_ordered = sw_topo_order(no, g->succ_off, g->succ, indeg, heap, g->order);
    if (n_ordered < no) {
        char cyc[400];
        int32_t first;
        describe_cycle(g, indeg, cyc, sizeof cyc, &first);
        if (bad_op)
            *bad_op = first;
        rc = sw_fail(err, SW_EINVAL, "cyclic graph: %s", cyc);
    }
done:
    sw_free(heap);
    sw_free(indeg);
    return rc;
}

int graph_finish(graph_profile *g, sw_err *err, int32_t *bad_op, int32_t *bad_tensor)
{
    if (bad_op)
        *bad_op = -1;
    if (bad_tensor)
        *bad_tensor = -1;
    free_derived(g);
    if (g->n_ops == 0)
        return sw_fail(err, SW_EINVAL, "the profile has no operators");
    /* validation, then the derived arrays, each phase stopping at the first error */
    int rc = check_limits(g, err, bad_op, bad_tensor);
    if (!rc)
        rc = check_tensors(g, err, bad_tensor);
    if (!rc)
        rc = derive_storages(g, err, bad_tensor);
    if (!rc)
        rc = check_ops(g, err, bad_op);
    if (!rc)
        rc = check_held_until(g, err, bad_tensor);
    if (!rc)
        rc = check_in_out(g, err, bad_op);
    if (!rc)
        rc = build_accesses(g, err, bad_op);
    int32_t *epair = NULL;
    size_t ne = 0;
    if (!rc)
        rc = collect_edges(g, err, &epair, &ne);
    if (!rc)
        rc = build_dag(g, err, epair, ne);
    sw_free(epair);
    if (!rc)
        rc = default_order(g, err, bad_op);
    if (rc) {
        free_derived(g);
        return rc;
    }
    g->finished = 1;
    return 0;
}

int graph_is_topological(const graph_profile *g, const int32_t *order, int32_t *bad_op,
                         int32_t *bad_pred)
{
    int32_t *at = sw_malloc((size_t)g->n_ops * sizeof *at);
    if (!at)
        return SW_ENOMEM;
    for (int32_t o = 0; o < g->n_ops; o++)
        at[o] = -1;
    int ok = 1;
    for (int32_t i = 0; i < g->n_ops && ok; i++) {
        int32_t o = order[i];
        if (o < 0 || o >= g->n_ops || at[o] >= 0) {
            ok = 0;
            if (bad_op)
                *bad_op = o;
            if (bad_pred)
                *bad_pred = -1;
            break;
        }
        at[o] = i;
        for (int32_t k = g->pred_off[o]; k < g->pred_off[o + 1]; k++)
            if (at[g->pred[k]] < 0) {
                ok = 0;
                if (bad_op)
                    *bad_op = o;
                if (bad_pred)
                    *bad_pred = g->pred[k];
                break;
            }
    }
    sw_free(at);
    return ok;
}

int graph_counts_to_offsets(int32_t *off, int32_t n)
{
    int32_t sum = 0;
    for (int32_t i = 0; i < n; i++) {
        int32_t c = off[i];
        off[i] = sum;
        if (c > INT32_MAX - sum)
            return SW_EINVAL;
        sum += c;
    }
    off[n] = sum;
    return 0;
}

/* pos[o]: op o's position in order; SW_EINVAL if order is not a permutation */
static int order_positions(const graph_profile *g, const int32_t *order, int32_t *pos)
{
    int32_t no = g->n_ops;
    for (int32_t o = 0; o < no; o++)
        pos[o] = -1;
    for (int32_t i = 0; i < no; i++) {
        int32_t o = order[i];
        if (o < 0 || o >= no || pos[o] >= 0)
            return SW_EINVAL;
        pos[o] = i;
    }
    return 0;
}

int graph_lifetimes(const graph_profile *g, const int32_t *order, int32_t *pos, int32_t *death,
                    int32_t *last, int32_t *use_off, int32_t *use_pos)
{
    int32_t nt = g->n_tensors, no = g->n_ops;
    if (order_positions(g, order, pos))
        return SW_EINVAL;
    if (!use_off)
        use_pos = NULL; /* the lists need their offsets */
    int32_t *lp = last ? last : death; /* last accesses, then deaths from them */
    if (lp)
        for (int32_t s = 0; s < nt; s++)
            lp[s] = -1;
    if (use_off) {
        for (int32_t s = 0; s <= nt; s++)
            use_off[s] = 0;
        for (int32_t k = 0; k < g->acc_off[no]; k++)
            use_off[g->acc[k]]++;
        graph_counts_to_offsets(use_off, nt); /* at most acc_off[no] */
    }
    if (lp || use_pos)
        for (int32_t i = 0; i < no; i++) {
            int32_t o = order[i];
            for (int32_t k = g->acc_off[o]; k < g->acc_off[o + 1]; k++) {
                int32_t s = g->acc[k];
                if (lp)
                    lp[s] = i;
                if (use_pos)
                    use_pos[use_off[s]++] = i; /* offsets advance to the ends */
            }
        }
    if (use_pos) {
        for (int32_t s = nt; s > 0; s--) /* each end is the next start: shift back */
            use_off[s] = use_off[s - 1];
        use_off[0] = 0;
    }
    if (death) {
        if (death != lp)
            memcpy(death, lp, (size_t)nt * sizeof *death);
        for (int32_t s = 0; s < nt; s++) {
            int32_t h = g->tensors[s].held_until;
            death[s] = graph_death_at(death[s], h >= 0 ? pos[h] : -1);
        }
    }
    return 0;
}

int graph_lifetimes_again(const graph_profile *g, const int32_t *order, int32_t *pos,
                          int32_t *death, const int32_t *use_off, int32_t *use_pos,
                          int32_t *fill)
{
    int32_t nt = g->n_tensors, no = g->n_ops;
    if (order_positions(g, order, pos))
        return SW_EINVAL;
    memcpy(fill, use_off, (size_t)nt * sizeof *fill);
    for (int32_t i = 0; i < no; i++) {
        int32_t o = order[i];
        for (int32_t k = g->acc_off[o]; k < g->acc_off[o + 1]; k++)
            use_pos[fill[g->acc[k]]++] = i;
    }
    for (int32_t s = 0; s < nt; s++) {
        int32_t last = use_off[s + 1] > use_off[s] ? use_pos[use_off[s + 1] - 1] : -1;
        int32_t h = g->tensors[s].held_until;
        death[s] = graph_death_at(last, h >= 0 ? pos[h] : -1);
    }
    return 0;
}

/* per_op 0: live bytes + the largest workspace, reserved throughout (the
   simulator's model); 1: each operator's workspace only while it runs */
static int64_t peak_memory(const graph_profile *g, const int32_t *order, int per_op)
{
    int32_t nt = g->n_tensors, no = g->n_ops;
    int32_t *death = sw_malloc(((size_t)nt + 1) * sizeof *death);
    int32_t *last = sw_malloc(((size_t)nt + 1) * sizeof *last);
    uint8_t *live = sw_calloc((size_t)nt + 1, 1);
    int32_t *pos = sw_malloc(((size_t)no + 1) * sizeof *pos);
    /* storages held past their last use (held_until) are freed at a step that
       does not access them: CSR held_off/held by step */
    int32_t *held_off = sw_calloc((size_t)no + 1, sizeof *held_off);
    int32_t *held = sw_malloc(((size_t)nt + 1) * sizeof *held);
    int64_t peak = -1;
    if (!death || !last || !live || !pos || !held_off || !held ||
        graph_lifetimes(g, order, pos, death, last, NULL, NULL))
        goto done;
    for (int32_t t = 0; t < nt; t++)
        if (death[t] > last[t])
            held_off[death[t]]++;
    graph_counts_to_offsets(held_off, no);
    for (int32_t t = 0; t < nt; t++)
        if (death[t] > last[t])
            held[held_off[death[t]]++] = t; /* offsets advance to the ends */
    int64_t cur = 0;
    for (int32_t t = 0; t < nt; t++)
        if (g->tensors[t].storage == t && g->tensors[t].persistent) {
            cur += g->tensors[t].bytes;
            live[t] = 1;
        }
    peak = cur;
    for (int32_t i = 0; i < no; i++) {
        int32_t o = order[i];
        for (int32_t k = g->acc_off[o]; k < g->acc_off[o + 1]; k++) {
            int32_t s = g->acc[k];
            if (!live[s]) {
                live[s] = 1;
                cur += g->tensors[s].bytes;
            }
        }
        int64_t need = cur + (per_op ? g->ops[o].workspace_bytes : 0);
        if (need > peak)
            peak = need;
        for (int32_t k = g->acc_off[o]; k < g->acc_off[o + 1]; k++) {
            int32_t s = g->acc[k];
            if (death[s] == i && !g->tensors[s].persistent && live[s]) {
                live[s] = 0;
                cur -= g->tensors[s].bytes;
            }
        }
        for (int32_t k = i ? held_off[i - 1] : 0; k < held_off[i]; k++) {
            int32_t s = held[k];
            if (live[s]) {
                live[s] = 0;
                cur -= g->tensors[s].bytes;
            }
        }
    }
    if (!per_op)
        peak += g->max_workspace;
done:
    sw_free(death);
    sw_free(last);
    sw_free(live);
    sw_free(pos);
    sw_free(held_off);
    sw_free(held);
    return peak;
}

int64_t graph_peak_memory(const graph_profile *g, const int32_t *order)
{
    return peak_memory(g, order, 0);
}

int64_t graph_peak_memory_op_workspace(const graph_profile *g, const int32_t *order)
{
    return peak_memory(g, order, 1);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

int graph_compute_stats(const graph_profile *g, graph_stats *st)
{
    memset(st, 0, sizeof *st);
    st->operators = g->n_ops;
    st->tensors = g->n_tensors;
    st->total_compute_s = g->total_compute_s;
    st->max_workspace_bytes = g->max_workspace;
    int64_t *sizes = sw_malloc(((size_t)g->n_tensors + 1) * sizeof *sizes);
    if (!sizes)
        return SW_ENOMEM;
    int32_t ns = 0;
    for (int32_t t = 0; t < g->n_tensors; t++) {
        const graph_tensor *x = &g->tensors[t];
        if (x->view_of >= 0)
            continue;
        st->storages++;
        st->total_tensor_bytes += x->bytes;
        if (x->kind == GK_PARAMETER)
            st->parameter_bytes += x->bytes;
        if (x->kind == GK_OPTIMIZER_STATE)
            st->optimizer_bytes += x->bytes;
        if (x->persistent)
            st->persistent_bytes += x->bytes;
        if (x->bytes > 0)
            sizes[ns++] = x->bytes;
    }
    qsort(sizes, (size_t)ns, sizeof *sizes, cmp_i64);
    for (int32_t i = 0; i < ns; i++)
        if (i == 0 || sizes[i] != sizes[i - 1])
            st->distinct_tensor_sizes++;
    sw_free(sizes);
    for (int32_t o = 0; o < g->n_ops; o++)
        st->ops_per_phase[g->ops[o].phase]++;
    /* footprint: persistent storages, every storage the forward pass makes
       and the gradients the updates read (see graph.h) */
    uint8_t *mark = sw_calloc((size_t)g->n_tensors + 1, 1);
    if (!mark)
        return SW_ENOMEM;
    for (int32_t o = 0; o < g->n_ops; o++) {
        const graph_op *op = &g->ops[o];
        if (op->phase == GP_FORWARD)
            for (int32_t k = 0; k < op->n_out; k++)
                mark[g->tensors[op->out[k]].storage] = 1;
        if (op->phase == GP_UPDATE)
            for (int32_t k = 0; k < op->n_in; k++)
                mark[g->tensors[op->in[k]].storage] = 1;
    }
    for (int32_t t = 0; t < g->n_tensors; t++)
        if (g->tensors[t].view_of < 0 && (mark[t] || g->tensors[t].persistent))
            st->footprint_bytes += g->tensors[t].bytes;
    sw_free(mark);
    st->peak_memory_bytes = graph_peak_memory(g, g->order);
    st->peak_op_workspace_bytes = graph_peak_memory_op_workspace(g, g->order);
    return st->peak_memory_bytes < 0 || st->peak_op_workspace_bytes < 0 ? SW_ENOMEM : 0;
}

static int streq(const char *a, const char *b)
{
    if (!a || !b)
        return a == b;
    return strcmp(a, b) == 0;
}

#define NEQ(cond, ...)                                                                            \
    do {                                                                                          \
        if (cond) {                                                                               \
            snprintf(why, n, __VA_ARGS__);                                                        \
            return 0;                                                                             \
        }                                                                                         \
    } while (0)

int graph_equal(const graph_profile *a, const graph_profile *b, char *why, size_t n)
{
    NEQ(!streq(a->name, b->name), "name differs");
    NEQ(a->batch != b->batch, "batch differs");
    const dev_spec *da = &a->device, *db = &b->device;
    NEQ(strcmp(da->name, db->name) || strcmp(da->desc, db->desc) ||
            da->memory_bytes != db->memory_bytes || da->h2d_bw != db->h2d_bw ||
            da->d2h_bw != db->d2h_bw || da->duplex_bw != db->duplex_bw ||
            da->copy_latency_s != db->copy_latency_s || da->peak_flops_fp32 != db->peak_flops_fp32 ||
            da->peak_flops_fp16 != db->peak_flops_fp16 || da->mem_bw != db->mem_bw ||
            da->launch_overhead_s != db->launch_overhead_s,
        "device differs");
    NEQ(!streq(a->prov.source, b->prov.source) || !streq(a->prov.tool, b->prov.tool) ||
            !streq(a->prov.file, b->prov.file) || !streq(a->prov.device, b->prov.device) ||
            !streq(a->prov.cost_model, b->prov.cost_model) || !streq(a->prov.notes, b->prov.notes),
        "provenance differs");
    NEQ(a->n_tensors != b->n_tensors, "tensor count differs (%d vs %d)", a->n_tensors, b->n_tensors);
    NEQ(a->n_ops != b->n_ops, "op count differs (%d vs %d)", a->n_ops, b->n_ops);
    for (int32_t t = 0; t < a->n_tensors; t++) {
        const graph_tensor *x = &a->tensors[t], *y = &b->tensors[t];
        NEQ(!streq(x->name, y->name) || x->bytes != y->bytes || x->view_of != y->view_of ||
                x->held_until != y->held_until ||
                x->kind != y->kind || x->persistent != y->persistent || !streq(x->dtype, y->dtype) ||
                x->n_shape != y->n_shape,
            "tensor %d differs", t);
        for (int32_t i = 0; i < x->n_shape; i++)
            NEQ(x->shape[i] != y->shape[i], "tensor %d shape differs", t);
    }
    for (int32_t o = 0; o < a->n_ops; o++) {
        const graph_op *x = &a->ops[o], *y = &b->ops[o];
        NEQ(!streq(x->name, y->name) || !streq(x->type, y->type) || x->time_s != y->time_s ||
                x->workspace_bytes != y->workspace_bytes || x->phase != y->phase ||
                x->n_in != y->n_in || x->n_out != y->n_out || x->n_mut != y->n_mut ||
                x->n_attr != y->n_attr,
            "op %d differs", o);
        for (int32_t i = 0; i < x->n_in; i++)
            NEQ(x->in[i] != y->in[i], "op %d inputs differ", o);
        for (int32_t i = 0; i < x->n_out; i++)
            NEQ(x->out[i] != y->out[i], "op %d outputs differ", o);
        for (int32_t i = 0; i < x->n_mut; i++)
            NEQ(x->mut[i] != y->mut[i], "op %d mutates differ", o);
        for (int32_t i = 0; i < x->n_attr; i++)
            NEQ(!streq(x->attr[i].key, y->attr[i].key) || x->attr[i].value != y->attr[i].value,
                "op %d attrs differ", o);
    }
    return 1;
}
