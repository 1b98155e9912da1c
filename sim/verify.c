/* verify.c: the plan verifier.

   Two consecutive iterations are unrolled. Happens-before is exact and
   cheap because there are only three in-order streams: every task gets a
   vector clock (for each stream, the last task of that stream that must
   finish before it starts). One linearization (Kahn's algorithm) is then
   walked while checking, for every storage, that its events (placements,
   uses, releases, host copies) are totally ordered by happens-before and
   correct along the walk; together these imply correctness under every
   order. Memory reuse is checked against the last occupant of each byte
   range (an interval map), which by transitivity covers every earlier one.
   Because every edge points forward in iterations, conflicts between
   iterations further apart are implied by those between neighbours. */
#include "verify.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/heap.h"
#include "imap.h"

static const char *class_names[] = {
    "ok", "structure", "capacity", "deadlock", "not-resident", "not-current",
    "unordered-use", "memory-overlap", "dirty-drop", "stale-host", "persistent-set",
    "leak", "unordered-release"};

const char *verify_class_name(int c)
{
    return c >= 0 && (size_t)c < SW_ARRAY_LEN(class_names) ? class_names[c] : "?";
}

typedef struct vstate {
    const plan *p;
    const graph_profile *g;
    int32_t n;               /* tasks per iteration */
    int32_t n_s[STREAM__COUNT];
    int32_t *sidx;           /* per task: index in its stream */
    int32_t *order;          /* linearization of 2n nodes */
    int32_t *vc;             /* per node: 3 */
    sw_err *err;
    int *cls;
    /* per storage */
    uint8_t *open;
    plan_place *place;
    int32_t *place_node, *last_user, *host_writer, *dirty_drop;
    int64_t *content, *logical, *host;
    int8_t *seen_iter;
    int32_t *home_idx;       /* index into p->resident, -1 */
    imap im;
} vstate;

static int32_t node_task(const vstate *v, int32_t node) { return node % v->n; }
static int node_iter(const vstate *v, int32_t node) { return node / v->n; }
static int node_stream(const vstate *v, int32_t node)
{
    return plan_task_stream(v->p->tasks[node_task(v, node)].kind);
}
static int32_t node_pos(const vstate *v, int32_t node)
{
    int32_t t = node_task(v, node);
    return node_iter(v, node) * v->n_s[node_stream(v, node)] + v->sidx[t];
}

/* u happens before v (u finishes before v starts); u == v is false */
static int hb(const vstate *v, int32_t u, int32_t w)
{
    if (u < 0)
        return 1; /* iteration start */
    if (u == w)
        return 0;
    return v->vc[(size_t)w * 3 + (size_t)node_stream(v, u)] >= node_pos(v, u);
}

static int violate(vstate *v, int cls, int32_t node, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int violate(vstate *v, int cls, int32_t node, const char *fmt, ...)
{
    char msg[600], lab[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (v->cls)
        *v->cls = cls;
    if (node >= 0)
        return sw_fail(v->err, SW_EUNSAFE, "unsafe plan (%s): %s, iteration %d: %s",
                       verify_class_name(cls), plan_task_label(v->p, node_task(v, node), lab, sizeof lab),
                       node_iter(v, node), msg);
    return sw_fail(v->err, SW_EUNSAFE, "unsafe plan (%s): %s", verify_class_name(cls), msg);
}

static const char *tn(const vstate *v, int32_t s) { return v->g->tensors[s].name; }

static const char *lab(const vstate *v, int32_t node, char *buf, size_t n)
{
    if (node < 0) {
        snprintf(buf, n, "iteration start");
        return buf;
    }
    plan_task_label(v->p, node_task(v, node), buf, n);
    size_t l = strlen(buf);
    if (l + 24 < n)
        sprintf(buf + l, " of iteration %d", node_iter(v, node));
    return buf;
}

/* ---------------- structure ---------------- */

static int check_place(vstate *v, const plan_place *pl, int32_t task, const char *where)
{
    const plan *p = v->p;
    const graph_profile *g = v->g;
    int32_t s = pl->tensor;
    if (s < 0 || s >= g->n_tensors || g->tensors[s].storage != s)
        return violate(v, VERIFY_STRUCTURE, task, "%s places %d, which is not a storage (root "
                       "tensor) id", where, s);
    int64_t bytes = g->tensors[s].bytes;
    if (bytes == 0)
        return 0; /* takes no memory: any placement */
    if (p->mem_kind == MEM_POOL) {
        if (pl->cls < 0 || pl->cls >= p->n_classes || pl->obj < 0 ||
            pl->obj >= p->classes[pl->cls].count)
            return violate(v, VERIFY_CAPACITY, task, "%s places tensor %d '%s' in pool object "
                           "%d/%d, which does not exist (the pool has %d classes)", where, s,
                           tn(v, s), pl->cls, pl->obj, p->n_classes);
        if (p->classes[pl->cls].size < bytes)
            return violate(v, VERIFY_CAPACITY, task, "%s places tensor %d '%s' (%lld bytes) in "
                           "class %d whose objects have %lld bytes", where, s, tn(v, s),
                           (long long)bytes, pl->cls, (long long)p->classes[pl->cls].size);
    } else if (pl->offset < 0 || pl->offset > p->capacity - bytes) {
        return violate(v, VERIFY_CAPACITY, task, "%s places tensor %d '%s' at [%lld, %lld), "
                       "outside the arena [0, %lld)", where, s, tn(v, s), (long long)pl->offset,
                       (long long)(pl->offset + bytes), (long long)p->capacity);
    }
    return 0;
}

static int check_structure(vstate *v)
{
    const plan *p = v->p;
    const graph_profile *g = v->g;
    if (!g || !g->finished)
        return violate(v, VERIFY_STRUCTURE, -1, "the plan has no finished profile");
    if (p->workspace_reserve < g->max_workspace)
        return violate(v, VERIFY_CAPACITY, -1, "the workspace reserve (%lld bytes) is smaller "
                       "than the largest op workspace (%lld bytes)", (long long)p->workspace_reserve,
                       (long long)g->max_workspace);
    if (p->mem_kind == MEM_POOL) {
        int64_t cap = 0;
        for (int32_t c = 0; c < p->n_classes; c++) {
            if (p->classes[c].size < 0 || p->classes[c].count < 0)
                return violate(v, VERIFY_STRUCTURE, -1, "pool class %d has a negative size or "
                               "count", c);
            cap += p->classes[c].size * p->classes[c].count;
        }
        if (cap != p->capacity)
            return violate(v, VERIFY_STRUCTURE, -1, "pool capacity %lld does not match its "
                           "classes (%lld)", (long long)p->capacity, (long long)cap);
    }
    if (p->capacity + p->workspace_reserve > p->budget)
        return violate(v, VERIFY_CAPACITY, -1, "capacity exceeded: arena %lld bytes plus "
                       "workspace reserve %lld bytes is more than the budget %lld bytes",
                       (long long)p->capacity, (long long)p->workspace_reserve,
                       (long long)p->budget);
    for (int32_t i = 0; i < p->n_resident; i++) {
        int rc = check_place(v, &p->resident[i], -1, "the resident set");
        if (rc)
            return rc;
        int32_t s = p->resident[i].tensor;
        if (!g->tensors[s].persistent)
            return violate(v, VERIFY_PERSISTENT_SET, -1, "tensor %d '%s' is in the resident set "
                           "but is not persistent", s, tn(v, s));
        if (v->home_idx[s] >= 0)
            return violate(v, VERIFY_STRUCTURE, -1, "tensor %d '%s' is in the resident set twice",
                           s, tn(v, s));
        v->home_idx[s] = i;
    }
    int32_t *runs = sw_calloc((size_t)g->n_ops + 1, sizeof *runs);
    int32_t *order = sw_malloc(((size_t)g->n_ops + 1) * sizeof *order);
    if (!runs || !order) {
        sw_free(runs);
        sw_free(order);
        return sw_fail(v->err, SW_ENOMEM, "out of memory");
    }
    int32_t nrun = 0;
    int rc = 0;
    for (int32_t t = 0; t < p->n_tasks && !rc; t++) {
        const plan_task *x = &p->tasks[t];
        if (x->kind >= TASK__COUNT) {
            rc = violate(v, VERIFY_STRUCTURE, t, "unknown task kind");
            break;
        }
        int comp = x->kind <= TASK_RERUN;
        if (comp && (x->op < 0 || x->op >= g->n_ops)) {
            rc = violate(v, VERIFY_STRUCTURE, t, "op %d does not exist", x->op);
            break;
        }
        if (!comp && (x->tensor < 0 || x->tensor >= g->n_tensors ||
                      g->tensors[x->tensor].storage != x->tensor)) {
            rc = violate(v, VERIFY_STRUCTURE, t, "tensor %d is not a storage (root tensor) id",
                         x->tensor);
            break;
        }
        if (x->kind == TASK_RUN) {
            if (runs[x->op]++) {
                rc = violate(v, VERIFY_STRUCTURE, t, "op %d '%s' is run more than once per "
                             "iteration (use rerun to rematerialise)", x->op, g->ops[x->op].name);
                break;
            }
            order[nrun++] = x->op;
        }
        if (x->kind == TASK_RERUN) {
            if (!runs[x->op])
                rc = violate(v, VERIFY_STRUCTURE, t, "rerun of op %d '%s' before it first runs",
                             x->op, g->ops[x->op].name);
            else if (g->ops[x->op].n_mut)
                rc = violate(v, VERIFY_STRUCTURE, t, "rerun of op %d '%s', which mutates "
                             "tensors in place, would apply its update twice", x->op,
                             g->ops[x->op].name);
        }
        if (x->kind == TASK_SWAP_IN && (x->n_place != 1 || p->places[x->place_at].tensor != x->tensor))
            rc = violate(v, VERIFY_STRUCTURE, t, "a swap-in must place exactly its own tensor");
        if (!rc && !comp && x->kind != TASK_SWAP_IN && x->n_place)
            rc = violate(v, VERIFY_STRUCTURE, t, "a swap-out or drop places no tensor");
        if (!rc && !comp && x->n_free)
            rc = violate(v, VERIFY_STRUCTURE, t, "only compute tasks have free lists");
        for (uint32_t k = 0; k < x->n_place && !rc; k++)
            rc = check_place(v, &p->places[x->place_at + k], t, "the task");
        const int32_t *d = plan_task_deps(p, x), *pd = plan_task_pdeps(p, x);
        for (uint32_t k = 0; k < x->n_dep && !rc; k++)
            if (d[k] < 0 || d[k] >= p->n_tasks || d[k] == t)
                rc = violate(v, VERIFY_STRUCTURE, t, "dependency on task %d, which is not "
                             "another task of the plan", d[k]);
        for (uint32_t k = 0; k < x->n_pdep && !rc; k++)
            if (pd[k] < 0 || pd[k] >= p->n_tasks)
                rc = violate(v, VERIFY_STRUCTURE, t, "dependency on task %d of the previous "
                             "iteration, which is not a task of the plan", pd[k]);
        const int32_t *fr = plan_task_frees(p, x);
        for (uint32_t k = 0; k < x->n_free && !rc; k++)
            if (fr[k] < 0 || fr[k] >= g->n_tensors || g->tensors[fr[k]].storage != fr[k])
                rc = violate(v, VERIFY_STRUCTURE, t, "frees %d, which is not a storage id", fr[k]);
            else if (g->tensors[fr[k]].persistent)
                rc = violate(v, VERIFY_STRUCTURE, t, "frees persistent tensor %d '%s' (persistent "
                             "tensors leave only by swap_out or drop)", fr[k], tn(v, fr[k]));
    }
    for (int32_t o = 0; o < g->n_ops && !rc; o++)
        if (!runs[o])
            rc = violate(v, VERIFY_STRUCTURE, -1, "op %d '%s' is never run", o, g->ops[o].name);
    if (!rc) {
        int32_t bad, pred;
        int topo = graph_is_topological(g, order, &bad, &pred);
        if (topo < 0)
            rc = sw_fail(v->err, topo, "out of memory while verifying");
        else if (!topo)
            rc = violate(v, VERIFY_STRUCTURE, -1, "the compute order is not a topological order "
                         "of the graph: op %d '%s' runs before op %d '%s' it depends on", bad,
                         g->ops[bad].name, pred, pred >= 0 ? g->ops[pred].name : "?");
    }
    sw_free(runs);
    sw_free(order);
    return rc;
}

/* ---------------- order and happens-before ---------------- */

static int build_order(vstate *v)
{
    const plan *p = v->p;
    int32_t n = v->n, N = 2 * n;
    int32_t *prev_s = sw_malloc(((size_t)n + 1) * sizeof *prev_s); /* previous task in stream */
    int32_t *first_s = NULL;
    int32_t *indeg = sw_calloc((size_t)N + 1, sizeof *indeg);
    int32_t *succ_off = sw_calloc((size_t)N + 2, sizeof *succ_off);
    int32_t *succ = NULL, *fill = NULL;
    int32_t *heap = sw_malloc(((size_t)N + 1) * sizeof(int32_t));
    int rc = SW_ENOMEM;
    if (!prev_s || !indeg || !succ_off || !heap)
        goto out;
    int32_t last[STREAM__COUNT] = {-1, -1, -1}, firstt[STREAM__COUNT] = {-1, -1, -1};
    for (int32_t t = 0; t < n; t++) {
        int s = plan_task_stream(p->tasks[t].kind);
        prev_s[t] = last[s];
        if (firstt[s] < 0)
            firstt[s] = t;
        last[s] = t;
    }
    (void)first_s;
    /* predecessor enumeration: for node x = (it, t):
       stream prev: (it, prev_s[t]) or, for the first of a stream in it 1, (0, last[s]);
       deps: (it, d); pdeps: (it-1, d) if it == 1 */
#define FOR_PREDS(x, body)                                                                        \
    do {                                                                                          \
        int32_t t_ = (x) % n, it_ = (x) / n;                                                      \
        const plan_task *T_ = &p->tasks[t_];                                                      \
        int s_ = plan_task_stream(T_->kind);                                                      \
        int32_t u_;                                                                               \
        if (prev_s[t_] >= 0) {                                                                    \
            u_ = it_ * n + prev_s[t_];                                                            \
            body;                                                                                 \
        } else if (it_ == 1) {                                                                    \
            u_ = last[s_];                                                                        \
            body;                                                                                 \
        }                                                                                         \
        const int32_t *d_ = plan_task_deps(p, T_);                                                \
        for (uint32_t k_ = 0; k_ < T_->n_dep; k_++) {                                             \
            u_ = it_ * n + d_[k_];                                                                \
            body;                                                                                 \
        }                                                                                         \
        if (it_ == 1) {                                                                           \
            const int32_t *pd_ = plan_task_pdeps(p, T_);                                          \
            for (uint32_t k_ = 0; k_ < T_->n_pdep; k_++) {                                        \
                u_ = pd_[k_];                                                                     \
                body;                                                                             \
            }                                                                                     \
        }                                                                                         \
    } while (0)
    size_t ne = 0;
    for (int32_t x = 0; x < N; x++)
        FOR_PREDS(x, {
            indeg[x]++;
            succ_off[u_ + 1]++;
            ne++;
        });
    for (int32_t x = 0; x < N; x++)
        succ_off[x + 1] += succ_off[x];
    succ = sw_malloc((ne + 1) * sizeof *succ);
    fill = sw_malloc(((size_t)N + 1) * sizeof *fill);
    if (!succ || !fill)
        goto out;
    memcpy(fill, succ_off, (size_t)N * sizeof *fill);
    for (int32_t x = 0; x < N; x++)
        FOR_PREDS(x, { succ[fill[u_]++] = x; });
    int32_t done = sw_topo_order(N, succ_off, succ, indeg, heap, v->order);
    if (done < N) {
        /* name a cycle: walk blocked predecessors */
        int32_t start = -1;
        for (int32_t x = 0; x < N && start < 0; x++)
            if (indeg[x] > 0)
                start = x;
        int32_t cur = start, steps = 0, nxt;
        char buf[400];
        size_t off = 0;
        buf[0] = 0;
        int8_t *seen = sw_calloc((size_t)N + 1, 1);
        while (seen && !seen[cur] && steps++ < N) {
            seen[cur] = 1;
            nxt = -1;
            FOR_PREDS(cur, {
                if (nxt < 0 && indeg[u_] > 0)
                    nxt = u_;
            });
            if (nxt < 0)
                break;
            cur = nxt;
        }
        /* cur is on the cycle: print it */
        int32_t c0 = cur;
        steps = 0;
        do {
            char l[200];
            int w = snprintf(buf + off, sizeof buf - off, "%s%s", steps ? " waits for " : "",
                             lab(v, cur, l, sizeof l));
            if (w > 0)
                off = SW_MIN(off + (size_t)w, sizeof buf - 1);
            nxt = -1;
            FOR_PREDS(cur, {
                if (nxt < 0 && indeg[u_] > 0)
                    nxt = u_;
            });
            cur = nxt;
        } while (cur >= 0 && cur != c0 && ++steps < 6);
        sw_free(seen);
        rc = violate(v, VERIFY_DEADLOCK, -1, "the plan deadlocks: %s%s", buf,
                     cur == c0 ? " (a cycle through edges and stream order)" : " ...");
        goto out;
    }
    /* vector clocks along the order */
    for (int32_t i = 0; i < N; i++) {
        int32_t x = v->order[i];
        int32_t *vc = v->vc + (size_t)x * 3;
        vc[0] = vc[1] = vc[2] = -1;
        FOR_PREDS(x, {
            const int32_t *uv = v->vc + (size_t)u_ * 3;
            for (int s = 0; s < 3; s++)
                if (uv[s] > vc[s])
                    vc[s] = uv[s];
        });
        vc[node_stream(v, x)] = node_pos(v, x);
    }
#undef FOR_PREDS
    rc = 0;
out:
    if (rc == SW_ENOMEM)
        sw_fail(v->err, SW_ENOMEM, "out of memory while verifying");
    sw_free(prev_s);
    sw_free(indeg);
    sw_free(succ_off);
    sw_free(succ);
    sw_free(fill);
    sw_free(heap);
    return rc;
}

/* ---------------- the walk ---------------- */

static int64_t kmul(const vstate *v, int32_t s)
{
    int32_t m = v->g->n_mutations[s];
    return v->g->tensors[s].persistent ? m : m + 1;
}

static int same_place(const plan_place *a, const plan_place *b, int pool)
{
    return pool ? (a->cls == b->cls && a->obj == b->obj) : a->offset == b->offset;
}

/* end-of-iteration-0 state of storage s */
static int end_check(vstate *v, int32_t s)
{
    const graph_tensor *x = &v->g->tensors[s];
    int pool = v->p->mem_kind == MEM_POOL;
    if (x->persistent) {
        int32_t h = v->home_idx[s];
        if (h >= 0) {
            if (!v->open[s])
                return violate(v, VERIFY_PERSISTENT_SET, -1, "persistent tensor %d '%s' is "
                               "resident at the start of the iteration but not at its end", s,
                               tn(v, s));
            if (!same_place(&v->place[s], &v->p->resident[h], pool))
                return violate(v, VERIFY_PERSISTENT_SET, -1, "persistent tensor %d '%s' ends the "
                               "iteration at a different placement (offset %lld) than it starts "
                               "(offset %lld)", s, tn(v, s), (long long)v->place[s].offset,
                               (long long)v->p->resident[h].offset);
        } else {
            if (v->open[s])
                return violate(v, VERIFY_PERSISTENT_SET, -1, "persistent tensor %d '%s' is "
                               "resident at the end of the iteration but not at its start", s,
                               tn(v, s));
            if (v->host[s] != v->logical[s]) {
                char l[200];
                if (v->dirty_drop[s] >= 0)
                    return violate(v, VERIFY_DIRTY_DROP, -1, "persistent tensor %d '%s' was "
                                   "dropped by %s while dirty: its update is lost (never copied "
                                   "out)", s, tn(v, s), lab(v, v->dirty_drop[s], l, sizeof l));
                return violate(v, VERIFY_PERSISTENT_SET, -1, "persistent tensor %d '%s' ends "
                               "the iteration off the device with a stale host copy", s, tn(v, s));
            }
        }
    } else if (v->open[s]) {
        return violate(v, VERIFY_LEAK, -1, "tensor %d '%s' is still resident at the end of the "
                       "iteration (never freed)", s, tn(v, s));
    }
    return 0;
}

static int enter_iter(vstate *v, int32_t s, int it)
{
    if (v->seen_iter[s] >= it)
        return 0;
    if (v->seen_iter[s] == 0 && it == 1) {
        int rc = end_check(v, s);
        if (rc)
            return rc;
    }
    v->seen_iter[s] = (int8_t)it;
    const graph_tensor *x = &v->g->tensors[s];
    if (!x->persistent) {
        int64_t base = it * kmul(v, s);
        v->logical[s] = base;
        if (x->producer < 0) { /* loaded fresh by the data loader each iteration */
            v->host[s] = base;
            v->host_writer[s] = -1;
        }
        v->dirty_drop[s] = -1;
    }
    return 0;
}

static int place(vstate *v, int32_t node, const plan_place *pl)
{
    int32_t s = pl->tensor;
    char l[200];
    if (v->open[s])
        return violate(v, VERIFY_MEMORY_OVERLAP, node, "places tensor %d '%s', which is already "
                       "resident (placed by %s)", s, tn(v, s), lab(v, v->place_node[s], l, sizeof l));
    plan_place q = *pl;
    plan_place_resolve(v->p, &q);
    int64_t bytes = v->g->tensors[s].bytes;
    if (bytes > 0) {
        for (size_t i = imap_first(&v->im, q.offset);
             i < v->im.n && v->im.seg[i].start < q.offset + bytes; i++) {
            int64_t tag = v->im.seg[i].tag;
            if (tag <= -3) {
                int32_t o = (int32_t)(-(tag + 3));
                return violate(v, VERIFY_MEMORY_OVERLAP, node, "places tensor %d '%s' at [%lld, "
                               "%lld), which overlaps tensor %d '%s' still resident there "
                               "(placed by %s)", s, tn(v, s), (long long)q.offset,
                               (long long)(q.offset + bytes), o, tn(v, o),
                               lab(v, v->place_node[o], l, sizeof l));
            }
            if (tag >= 0 && !hb(v, (int32_t)tag, node))
                return violate(v, VERIFY_MEMORY_OVERLAP, node, "places tensor %d '%s' in memory "
                               "[%lld, %lld) released by %s without an ordering edge between "
                               "them: both can be resident at once", s, tn(v, s),
                               (long long)SW_MAX(q.offset, v->im.seg[i].start),
                               (long long)SW_MIN(q.offset + bytes, v->im.seg[i].end),
                               lab(v, (int32_t)tag, l, sizeof l));
        }
        if (imap_assign(&v->im, q.offset, q.offset + bytes, -3 - (int64_t)s))
            return sw_fail(v->err, SW_ENOMEM, "out of memory");
    }
    v->open[s] = 1;
    v->place[s] = q;
    v->place_node[s] = node;
    v->last_user[s] = -1;
    return 0;
}

static int release(vstate *v, int32_t node, int32_t s)
{
    char l[200];
    int32_t u = v->last_user[s] >= 0 ? v->last_user[s] : v->place_node[s];
    if (u >= 0 && u != node && !hb(v, u, node))
        return violate(v, VERIFY_UNORDERED_RELEASE, node, "releases tensor %d '%s' without "
                       "being ordered after %s, which %s it", s, tn(v, s),
                       lab(v, u, l, sizeof l), v->last_user[s] >= 0 ? "uses" : "places");
    int64_t bytes = v->g->tensors[s].bytes;
    if (bytes > 0 && imap_assign(&v->im, v->place[s].offset, v->place[s].offset + bytes, node))
        return sw_fail(v->err, SW_ENOMEM, "out of memory");
    v->open[s] = 0;
    return 0;
}

static int use(vstate *v, int32_t node, int32_t s, int64_t expect, int mutate)
{
    char l[200];
    if (!v->open[s]) {
        if (v->dirty_drop[s] >= 0)
            return violate(v, VERIFY_DIRTY_DROP, node, "needs tensor %d '%s', which was dropped "
                           "by %s while dirty (host copy stale) and neither copied out nor "
                           "recomputed", s, tn(v, s), lab(v, v->dirty_drop[s], l, sizeof l));
        return violate(v, VERIFY_NOT_RESIDENT, node, "input tensor %d '%s' is not resident", s,
                       tn(v, s));
    }
    if (v->place_node[s] >= 0 && v->place_node[s] != node && !hb(v, v->place_node[s], node))
        return violate(v, VERIFY_UNORDERED_USE, node, "uses tensor %d '%s' without being ordered "
                       "after %s, which brings it in", s, tn(v, s),
                       lab(v, v->place_node[s], l, sizeof l));
    if (v->content[s] != expect)
        return violate(v, VERIFY_NOT_CURRENT, node, "input tensor %d '%s' is resident but not "
                       "current: the device copy holds version %lld, the op expects version %lld",
                       s, tn(v, s), (long long)v->content[s], (long long)expect);
    if (mutate) {
        v->content[s]++;
        v->logical[s] = v->content[s];
    }
    v->last_user[s] = node;
    return 0;
}

static int walk(vstate *v)
{
    const plan *p = v->p;
    const graph_profile *g = v->g;
    int32_t N = 2 * v->n;
    int pool = p->mem_kind == MEM_POOL;
    (void)pool;
    for (int32_t i = 0; i < N; i++) {
        int32_t node = v->order[i], t = node_task(v, node);
        int it = node_iter(v, node);
        const plan_task *x = &p->tasks[t];
        int rc = 0;
        char l[200];
        if (x->kind == TASK_RUN || x->kind == TASK_RERUN) {
            int32_t o = x->op;
            for (int32_t k = g->acc_off[o]; k < g->acc_off[o + 1]; k++)
                if ((rc = enter_iter(v, g->acc[k], it)))
                    return rc;
            for (uint32_t k = 0; k < x->n_free; k++)
                if ((rc = enter_iter(v, plan_task_frees(p, x)[k], it)))
                    return rc;
            /* placements: exactly the created storages (run), a subset (rerun) */
            const plan_place *pl = plan_task_places(p, x);
            for (uint32_t k = 0; k < x->n_place; k++) {
                int32_t s = pl[k].tensor, ok = 0;
                for (int32_t a = g->acc_off[o]; a < g->acc_off[o + 1]; a++)
                    ok |= g->acc[a] == s && (g->acc_flag[a] & GA_CREATE);
                if (!ok)
                    return violate(v, VERIFY_STRUCTURE, node, "places tensor %d '%s', which op "
                                   "%d does not create", s, tn(v, s), o);
                if ((rc = enter_iter(v, s, it)) || (rc = place(v, node, &pl[k])))
                    return rc;
                int64_t base = it * kmul(v, s);
                if (x->kind == TASK_RERUN && v->logical[s] != base)
                    return violate(v, VERIFY_NOT_CURRENT, node, "recomputes tensor %d '%s', but "
                                   "it was mutated in place after it was produced (current "
                                   "version %lld, recomputation gives %lld)", s, tn(v, s),
                                   (long long)v->logical[s], (long long)base);
                v->content[s] = base;
                v->logical[s] = base;
                v->dirty_drop[s] = -1;
            }
            for (int32_t a = g->acc_off[o]; a < g->acc_off[o + 1]; a++) {
                int32_t s = g->acc[a];
                if (g->acc_flag[a] & GA_CREATE) {
                    if (!v->open[s] || (x->kind == TASK_RUN && v->place_node[s] != node))
                        return violate(v, VERIFY_STRUCTURE, node, "does not place its output "
                                       "tensor %d '%s'", s, tn(v, s));
                    continue;
                }
                if ((rc = use(v, node, s, it * kmul(v, s) + g->acc_ver[a],
                              (g->acc_flag[a] & GA_MUTATE) != 0)))
                    return rc;
            }
            const int32_t *fr = plan_task_frees(p, x);
            for (uint32_t k = 0; k < x->n_free; k++) {
                int32_t s = fr[k];
                if (!v->open[s])
                    return violate(v, VERIFY_STRUCTURE, node, "frees tensor %d '%s', which is "
                                   "not resident", s, tn(v, s));
                if (v->host[s] != v->content[s])
                    v->dirty_drop[s] = node;
                if ((rc = release(v, node, s)))
                    return rc;
            }
        } else {
            int32_t s = x->tensor;
            if ((rc = enter_iter(v, s, it)))
                return rc;
            if (x->kind == TASK_SWAP_IN) {
                if (v->host[s] != v->logical[s]) {
                    if (v->dirty_drop[s] >= 0)
                        return violate(v, VERIFY_DIRTY_DROP, node, "swaps in tensor %d '%s', "
                                       "which was dropped by %s while dirty (the host copy is "
                                       "stale and it is not recomputed)", s, tn(v, s),
                                       lab(v, v->dirty_drop[s], l, sizeof l));
                    if (v->host[s] < 0)
                        return violate(v, VERIFY_STALE_HOST, node, "swaps in tensor %d '%s', "
                                       "but the host holds no copy of it", s, tn(v, s));
                    return violate(v, VERIFY_STALE_HOST, node, "swaps in tensor %d '%s' from a "
                                   "stale host copy (host version %lld, current version %lld)",
                                   s, tn(v, s), (long long)v->host[s], (long long)v->logical[s]);
                }
                if (v->host_writer[s] >= 0 && !hb(v, v->host_writer[s], node))
                    return violate(v, VERIFY_STALE_HOST, node, "swaps in tensor %d '%s' without "
                                   "being ordered after %s, which writes the host copy", s,
                                   tn(v, s), lab(v, v->host_writer[s], l, sizeof l));
                if ((rc = place(v, node, plan_task_places(p, x))))
                    return rc;
                v->content[s] = v->host[s];
                v->dirty_drop[s] = -1;
            } else {
                if (!v->open[s])
                    return violate(v, VERIFY_STRUCTURE, node, "%s of tensor %d '%s', which is "
                                   "not resident", plan_task_kind_name(x->kind), s, tn(v, s));
                if (x->kind == TASK_SWAP_OUT) {
                    v->host[s] = v->content[s];
                    v->host_writer[s] = node;
                    v->dirty_drop[s] = -1;
                } else if (v->host[s] != v->content[s]) {
                    v->dirty_drop[s] = node;
                }
                if ((rc = release(v, node, s)))
                    return rc;
            }
        }
    }
    for (int32_t s = 0; s < g->n_tensors; s++)
        if (g->tensors[s].storage == s && v->seen_iter[s] < 1) {
            int rc = end_check(v, s);
            if (rc)
                return rc;
        }
    return 0;
}

/* steady state: is the host copy of a resident persistent tensor current at
   iteration start? Yes if never mutated, or copied out after its last
   mutation (looked up along iteration 0 of the order). */
static void host_at_start(vstate *v)
{
    const plan *p = v->p;
    const graph_profile *g = v->g;
    int32_t *last_mut = v->last_user, *last_out = v->host_writer; /* scratch */
    for (int32_t s = 0; s < g->n_tensors; s++)
        last_mut[s] = last_out[s] = -1;
    for (int32_t i = 0; i < 2 * v->n; i++) {
        int32_t node = v->order[i];
        if (node >= v->n)
            continue;
        const plan_task *x = &p->tasks[node];
        if (x->kind == TASK_RUN) {
            for (int32_t k = g->acc_off[x->op]; k < g->acc_off[x->op + 1]; k++)
                if (g->acc_flag[k] & GA_MUTATE)
                    last_mut[g->acc[k]] = i;
        } else if (x->kind == TASK_SWAP_OUT) {
            last_out[x->tensor] = i;
        }
    }
    for (int32_t s = 0; s < g->n_tensors; s++) {
        const graph_tensor *t = &g->tensors[s];
        v->host[s] = -1;
        if (t->storage != s)
            continue;
        if (t->persistent) {
            int valid = v->home_idx[s] < 0 || g->n_mutations[s] == 0 || last_out[s] > last_mut[s];
            v->host[s] = valid ? 0 : -1;
        } else if (t->producer < 0) {
            v->host[s] = 0;
        }
    }
    for (int32_t s = 0; s < g->n_tensors; s++)
        last_mut[s] = last_out[s] = -1;
}

int plan_verify(const plan *p, int *cls, sw_err *err)
{
    vstate v;
    memset(&v, 0, sizeof v);
    v.p = p;
    v.g = p->prof;
    v.n = p->n_tasks;
    v.err = err;
    v.cls = cls;
    if (cls)
        *cls = VERIFY_OK;
    imap_init(&v.im);
    int rc = SW_ENOMEM;
    int32_t nt = v.g ? v.g->n_tensors : 0, N = 2 * v.n;
    v.home_idx = sw_malloc(((size_t)nt + 1) * sizeof(int32_t));
    if (!v.home_idx)
        goto oom;
    for (int32_t s = 0; s < nt; s++)
        v.home_idx[s] = -1;
    rc = check_structure(&v);
    if (rc)
        goto out;
    rc = SW_ENOMEM;
    v.sidx = sw_malloc(((size_t)v.n + 1) * sizeof(int32_t));
    v.order = sw_malloc(((size_t)N + 1) * sizeof(int32_t));
    v.vc = sw_malloc(((size_t)N * 3 + 1) * sizeof(int32_t));
    v.open = sw_calloc((size_t)nt + 1, 1);
    v.place = sw_calloc((size_t)nt + 1, sizeof(plan_place));
    v.place_node = sw_malloc(((size_t)nt + 1) * sizeof(int32_t));
    v.last_user = sw_malloc(((size_t)nt + 1) * sizeof(int32_t));
    v.host_writer = sw_malloc(((size_t)nt + 1) * sizeof(int32_t));
    v.dirty_drop = sw_malloc(((size_t)nt + 1) * sizeof(int32_t));
    v.content = sw_calloc((size_t)nt + 1, sizeof(int64_t));
    v.logical = sw_calloc((size_t)nt + 1, sizeof(int64_t));
    v.host = sw_calloc((size_t)nt + 1, sizeof(int64_t));
    v.seen_iter = sw_calloc((size_t)nt + 1, 1);
    if (!v.sidx || !v.order || !v.vc || !v.open || !v.place || !v.place_node || !v.last_user ||
        !v.host_writer || !v.dirty_drop || !v.content || !v.logical || !v.host || !v.seen_iter)
        goto oom;
    for (int32_t t = 0; t < v.n; t++)
        v.sidx[t] = v.n_s[plan_task_stream(p->tasks[t].kind)]++;
    rc = build_order(&v);
    if (rc)
        goto out;
    host_at_start(&v);
    for (int32_t s = 0; s < nt; s++) {
        v.place_node[s] = v.last_user[s] = v.host_writer[s] = v.dirty_drop[s] = -1;
        v.seen_iter[s] = 0;
    }
    for (int32_t i = 0; i < p->n_resident; i++) {
        int32_t s = p->resident[i].tensor;
        rc = place(&v, -1, &p->resident[i]);
        if (rc)
            goto out;
        v.place_node[s] = -1;
    }
    rc = walk(&v);
    goto out;
oom:
    rc = sw_fail(err, SW_ENOMEM, "out of memory while verifying");
out:
    sw_free(v.home_idx);
    sw_free(v.sidx);
    sw_free(v.order);
    sw_free(v.vc);
    sw_free(v.open);
    sw_free(v.place);
    sw_free(v.place_node);
    sw_free(v.last_user);
    sw_free(v.host_writer);
    sw_free(v.dirty_drop);
    sw_free(v.content);
    sw_free(v.logical);
    sw_free(v.host);
    sw_free(v.seen_iter);
    imap_free(&v.im);
    return rc;
}
