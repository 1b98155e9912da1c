/* layout.c: plan-to-arena layout (see layout.h). One walk over the tasks in
   planned order tracks where each storage lives; the walk runs twice so
   that the second pass, which is what gets recorded, starts from the state
   an iteration really starts from (the end of the previous one). */
#include "layout.h"

#include <stdio.h>
#include <string.h>

#define HOST_ALIGN 64
#define WS_ALIGN 256

static int64_t round_up(int64_t x, int64_t a) { return (x + a - 1) / a * a; }

void val_layout_free(val_layout *L)
{
    if (!L)
        return;
    sw_free(L->host_off);
    sw_free(L->task);
    sw_free(L->acc);
    sw_free(L->init);
    memset(L, 0, sizeof *L);
}

static const char *tlabel(const plan *p, int32_t t, char *buf, size_t n)
{
    return plan_task_label(p, t, buf, n);
}

/* Resolve and bounds-check one placement of storage s by task t (-1: resident set). */
static int check_place(const plan *p, plan_place *pl, int32_t t, sw_err *err)
{
    const graph_profile *g = p->prof;
    char lb[160];
    const char *who = t >= 0 ? tlabel(p, t, lb, sizeof lb) : "the resident set";
    int32_t s = pl->tensor;
    if (s < 0 || s >= g->n_tensors || g->tensors[s].storage != s)
        return sw_fail(err, SW_EINVAL, "%s places %d, which is not a storage id", who, s);
    int64_t bytes = g->tensors[s].bytes;
    if (p->mem_kind == MEM_POOL) {
        if (pl->cls < 0 || pl->cls >= p->n_classes || pl->obj < 0 ||
            pl->obj >= p->classes[pl->cls].count)
            return sw_fail(err, SW_EINVAL, "%s places tensor %d '%s' in pool object %d/%d, which "
                           "does not exist", who, s, g->tensors[s].name, pl->cls, pl->obj);
        if (bytes > p->classes[pl->cls].size)
            return sw_fail(err, SW_EINVAL, "%s places tensor %d '%s' (%lld bytes) in an object of "
                           "class %d (%lld bytes)", who, s, g->tensors[s].name, (long long)bytes,
                           pl->cls, (long long)p->classes[pl->cls].size);
        plan_place_resolve(p, pl);
    }
    if (pl->offset < 0 || pl->offset + bytes > p->capacity)
        return sw_fail(err, SW_EINVAL, "%s places tensor %d '%s' at [%lld, %lld), outside the "
                       "%lld-byte arena", who, s, g->tensors[s].name, (long long)pl->offset,
                       (long long)(pl->offset + bytes), (long long)p->capacity);
    return 0;
}

static int find_place(const plan *p, const plan_task *x, int32_t s, plan_place *out)
{
    const plan_place *pl = plan_task_places(p, x);
    for (uint32_t k = 0; k < x->n_place; k++)
        if (pl[k].tensor == s) {
            *out = pl[k];
            return 1;
        }
    return 0;
}

/* The next region: recorded in pass 1, scratch in pass 0. */
static val_lacc *push_acc(val_layout *L, int record, val_lacc *scratch)
{
    if (!record) {
        memset(scratch, 0, sizeof *scratch);
        return scratch;
    }
    if (SW_GROW(L->acc, L->cap_acc, L->n_acc + 1))
        return NULL;
    val_lacc *a = &L->acc[L->n_acc++];
    memset(a, 0, sizeof *a);
    return a;
}

/* Structure checks, and one host buffer per storage that is ever copied. */
static int layout_structure(const plan *p, val_layout *L, sw_err *err)
{
    const graph_profile *g = p->prof;
    int32_t nt = g->n_tensors;
    char lb[160];
    for (int32_t t = 0; t < p->n_tasks; t++) {
        const plan_task *x = &p->tasks[t];
        if (x->kind >= TASK__COUNT)
            return sw_fail(err, SW_EINVAL, "task %d has an unknown kind", t);
        if (x->kind == TASK_RUN || x->kind == TASK_RERUN) {
            if (x->op < 0 || x->op >= g->n_ops)
                return sw_fail(err, SW_EINVAL, "task %d runs op %d, which does not exist", t,
                               x->op);
            const int32_t *fr = plan_task_frees(p, x);
            for (uint32_t k = 0; k < x->n_free; k++)
                if (fr[k] < 0 || fr[k] >= nt || g->tensors[fr[k]].storage != fr[k])
                    return sw_fail(err, SW_EINVAL, "%s frees %d, which is not a storage id",
                                   tlabel(p, t, lb, sizeof lb), fr[k]);
            continue;
        }
        int32_t s = x->tensor;
        if (s < 0 || s >= nt || g->tensors[s].storage != s)
            return sw_fail(err, SW_EINVAL, "task %d moves %d, which is not a storage id", t, s);
        if (x->kind != TASK_DROP && L->host_off[s] < 0) {
            L->host_off[s] = L->host_bytes;
            L->host_bytes += round_up(SW_MAX(g->tensors[s].bytes, 1), HOST_ALIGN);
        }
    }
    return 0;
}

/* One pass over the tasks: where each storage is now (cur, -1: not placed)
   and was last (last); pass 1 records the regions (pass 0 only finds the
   last places of storages read before they are placed). */
typedef struct lwalk {
    const plan *p;
    val_layout *L;
    int64_t *cur, *last;
    int pass, rec;     /* rec: pass == 1 */
    val_lacc scratch;  /* the region of pass 0 */
    sw_err *err;
} lwalk;

/* The region run task t (x) reads or creates: storage s, access k of its op. */
static int run_access(lwalk *w, int32_t t, const plan_task *x, int32_t k)
{
    const plan *p = w->p;
    const graph_profile *g = p->prof;
    val_layout *L = w->L;
    int32_t s = g->acc[k];
    uint8_t f = g->acc_flag[k];
    val_lacc *a;
    plan_place pl;
    char lb[160];
    if (f & GA_CREATE) {
        if (!find_place(p, x, s, &pl)) {
            if (x->kind == TASK_RERUN)
                return 0; /* still resident: a rerun leaves it alone */
            return sw_fail(w->err, SW_EINVAL, "%s does not place its output tensor %d '%s'",
                           tlabel(p, t, lb, sizeof lb), s, g->tensors[s].name);
        }
        check_place(p, &pl, t, NULL);
        if (!(a = push_acc(L, w->rec, &w->scratch)))
            return sw_fail(w->err, SW_ENOMEM, "out of memory");
        a->storage = s;
        a->mode = VAL_R_FILL;
        a->ver_out = 0;
        a->off = pl.offset;
    } else {
        if (!(a = push_acc(L, w->rec, &w->scratch)))
            return sw_fail(w->err, SW_ENOMEM, "out of memory");
        a->storage = s;
        a->mode = VAL_R_CHECK;
        a->ver_in = g->acc_ver[k];
        if (f & GA_MUTATE) {
            a->mode |= VAL_R_FILL;
            a->ver_out = g->acc_ver[k] + 1;
        }
        a->off = w->cur[s];
        if (a->off < 0) {
            if (w->last[s] < 0 && w->pass == 1)
                return sw_fail(w->err, SW_EINVAL, "%s reads tensor %d '%s', which the plan "
                               "never places", tlabel(p, t, lb, sizeof lb), s,
                               g->tensors[s].name);
            a->off = w->last[s];
            a->dangling = 1;
            L->dangling += w->rec;
        }
    }
    a->bytes = g->tensors[s].bytes;
    return 0;
}

/* The storages run task x frees: released (their regions from first on, or
   a region of their own). */
static int run_frees(lwalk *w, const plan_task *x, uint32_t first)
{
    const graph_profile *g = w->p->prof;
    val_layout *L = w->L;
    const int32_t *fr = plan_task_frees(w->p, x);
    for (uint32_t k = 0; k < x->n_free; k++) {
        int32_t s = fr[k];
        val_lacc *a = NULL;
        if (w->rec)
            for (size_t i = first; i < L->n_acc; i++)
                if (L->acc[i].storage == s)
                    a = &L->acc[i];
        if (!a) {
            if (w->cur[s] < 0 && w->last[s] < 0) {
                L->dangling += w->rec; /* never placed: nothing to release */
                continue;
            }
            if (!(a = push_acc(L, w->rec, &w->scratch)))
                return sw_fail(w->err, SW_ENOMEM, "out of memory");
            a->storage = s;
            a->off = w->cur[s] >= 0 ? w->cur[s] : w->last[s];
            a->bytes = g->tensors[s].bytes;
            if (w->cur[s] < 0) {
                a->dangling = 1;
                L->dangling += w->rec;
            }
        }
        a->mode |= VAL_R_RELEASE;
        w->cur[s] = -1;
    }
    return 0;
}

/* Run (or rerun) task t: its places, its accesses' regions, its frees. */
static int layout_run(lwalk *w, int32_t t)
{
    const plan *p = w->p;
    const graph_profile *g = p->prof;
    const plan_task *x = &p->tasks[t];
    val_ltask *lt = &w->L->task[t];
    const plan_place *pls = plan_task_places(p, x);
    int32_t o = x->op;
    uint32_t first = (uint32_t)w->L->n_acc;
    int rc;
    for (uint32_t k = 0; k < x->n_place; k++) {
        plan_place pl = pls[k];
        check_place(p, &pl, t, NULL);
        w->cur[pl.tensor] = w->last[pl.tensor] = pl.offset;
    }
    for (int32_t k = g->acc_off[o]; k < g->acc_off[o + 1]; k++)
        if ((rc = run_access(w, t, x, k)))
            return rc;
    if ((rc = run_frees(w, x, first)))
        return rc;
    if (w->rec) {
        lt->acc_at = first;
        lt->n_acc = (uint32_t)(w->L->n_acc - first);
    }
    lt->dev_off = lt->host_off = -1;
    return 0;
}

/* Copy task t (swap_in, swap_out, drop): its device and host offsets. */
static int layout_move(lwalk *w, int32_t t)
{
    const plan *p = w->p;
    const graph_profile *g = p->prof;
    const plan_task *x = &p->tasks[t];
    val_ltask *lt = &w->L->task[t];
    const plan_place *pls = plan_task_places(p, x);
    char lb[160];
    plan_place pl;
    int32_t s = x->tensor;
    lt->bytes = g->tensors[s].bytes;
    lt->host_off = x->kind == TASK_DROP ? -1 : w->L->host_off[s];
    if (x->kind == TASK_SWAP_IN) {
        if (!find_place(p, x, s, &pl))
            return sw_fail(w->err, SW_EINVAL, "%s does not say where tensor %d '%s' goes",
                           tlabel(p, t, lb, sizeof lb), s, g->tensors[s].name);
        for (uint32_t k = 0; k < x->n_place; k++) {
            plan_place q = pls[k];
            check_place(p, &q, t, NULL);
            w->cur[q.tensor] = w->last[q.tensor] = q.offset;
        }
        check_place(p, &pl, t, NULL);
        lt->dev_off = pl.offset;
        lt->dangling = 0;
        return 0;
    }
    /* swap_out, drop */
    lt->dangling = 0;
    if (w->cur[s] >= 0) {
        lt->dev_off = w->cur[s];
    } else if (w->last[s] >= 0) {
        lt->dev_off = w->last[s];
        lt->dangling = 1;
        w->L->dangling += w->rec;
    } else if (w->pass == 1) {
        return sw_fail(w->err, SW_EINVAL, "%s moves tensor %d '%s' off the device, where the "
                       "plan never places it", tlabel(p, t, lb, sizeof lb), s,
                       g->tensors[s].name);
    } else {
        lt->dev_off = -1;
    }
    w->cur[s] = -1;
    return 0;
}

/* every placement is checked: the arena needs to reach the highest one only */
static void layout_extent(val_layout *L)
{
    for (int32_t i = 0; i < L->n_init; i++)
        L->used = SW_MAX(L->used, L->init[i].off + L->init[i].bytes);
    for (size_t i = 0; i < L->n_acc; i++)
        L->used = SW_MAX(L->used, L->acc[i].off + L->acc[i].bytes);
    for (int32_t t = 0; t < L->n_tasks; t++)
        if (L->task[t].dev_off >= 0)
            L->used = SW_MAX(L->used, L->task[t].dev_off + L->task[t].bytes);
    L->ws_off = round_up(L->used, WS_ALIGN);
    L->arena_bytes = SW_MAX(L->ws_off + L->ws_bytes, 8);
}

int val_layout_build(const plan *p, val_layout *L, sw_err *err)
{
    const graph_profile *g = p->prof;
    memset(L, 0, sizeof *L);
    int32_t nt = g->n_tensors, n = p->n_tasks;
    L->capacity = p->capacity;
    L->ws_bytes = p->workspace_reserve > 0 ? p->workspace_reserve : 0;
    L->n_tensors = nt;
    L->n_tasks = n;
    L->host_off = sw_malloc(((size_t)nt + 1) * sizeof *L->host_off);
    L->task = sw_calloc((size_t)n + 1, sizeof *L->task);
    L->init = sw_calloc((size_t)p->n_resident + 1, sizeof *L->init);
    lwalk w = {p, L, NULL, NULL, 0, 0, {0}, err};
    w.cur = sw_malloc(((size_t)nt + 1) * sizeof *w.cur);
    w.last = sw_malloc(((size_t)nt + 1) * sizeof *w.last);
    int rc = 0;
    if (!L->host_off || !L->task || !L->init || !w.cur || !w.last) {
        rc = sw_fail(err, SW_ENOMEM, "out of memory");
        goto out;
    }
    for (int32_t s = 0; s < nt; s++)
        L->host_off[s] = w.cur[s] = w.last[s] = -1;
    if ((rc = layout_structure(p, L, err)))
        goto out;
    for (int32_t i = 0; i < p->n_resident; i++) {
        plan_place pl = p->resident[i];
        if ((rc = check_place(p, &pl, -1, err)))
            goto out;
        int32_t s = pl.tensor;
        w.cur[s] = w.last[s] = pl.offset;
        val_lacc *a = &L->init[L->n_init++];
        a->storage = s;
        a->off = pl.offset;
        a->bytes = g->tensors[s].bytes;
    }
    for (w.pass = 0; w.pass < 2; w.pass++) {
        w.rec = w.pass == 1;
        for (int32_t t = 0; t < n; t++) {
            const plan_task *x = &p->tasks[t];
            const plan_place *pls = plan_task_places(p, x);
            for (uint32_t k = 0; k < x->n_place; k++) {
                plan_place pl = pls[k];
                if ((rc = check_place(p, &pl, t, err)))
                    goto out;
            }
            rc = x->kind == TASK_RUN || x->kind == TASK_RERUN ? layout_run(&w, t)
                                                              : layout_move(&w, t);
            if (rc)
                goto out;
        }
    }
    layout_extent(L);
out:
    sw_free(w.cur);
    sw_free(w.last);
    if (rc)
        val_layout_free(L);
    return rc;
}
