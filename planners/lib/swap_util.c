/* swap_util.c: schedule, deaths and a byte-counting LRU recorder shared by
   the swapping baselines and the DTR engine (see swap_util.h). */
#include "swap_util.h"

#include <stdio.h>
#include <string.h>

#include "arena.h"

static int64_t sz(const swu *u, int32_t s) { return u->g->tensors[s].bytes; }

int swu_init(swu *u, const graph_profile *g, const int32_t *order)
{
    memset(u, 0, sizeof *u);
    u->g = g;
    int32_t nt = g->n_tensors, no = g->n_ops;
    u->order = sw_malloc(((size_t)no + 1) * sizeof *u->order);
    u->pos = sw_malloc(((size_t)no + 1) * sizeof *u->pos);
    u->death = sw_malloc(((size_t)nt + 1) * sizeof *u->death);
    u->dth_off = sw_calloc((size_t)no + 2, sizeof *u->dth_off);
    u->dth = sw_malloc(((size_t)nt + 1) * sizeof *u->dth);
    u->res = sw_calloc((size_t)nt + 1, 1);
    u->hv = sw_calloc((size_t)nt + 1, 1);
    u->lock = sw_calloc((size_t)nt + 1, 1);
    u->in_r = sw_calloc((size_t)nt + 1, 1);
    u->prev = sw_malloc(((size_t)nt + 1) * sizeof *u->prev);
    u->next = sw_malloc(((size_t)nt + 1) * sizeof *u->next);
    if (!u->order || !u->pos || !u->death || !u->dth_off || !u->dth || !u->res || !u->hv ||
        !u->lock || !u->in_r || !u->prev || !u->next)
        return SW_ENOMEM;
    memcpy(u->order, order ? order : g->order, (size_t)no * sizeof *u->order);
    if (graph_lifetimes(g, u->order, u->pos, u->death, NULL, NULL, NULL))
        return SW_EINVAL;
    for (int32_t s = 0; s < nt; s++) {
        const graph_tensor *x = &g->tensors[s];
        if (x->storage != s || x->persistent || u->death[s] < 0) {
            u->death[s] = SWU_NEVER;
            continue;
        }
        u->dth_off[u->death[s]]++;
    }
    graph_counts_to_offsets(u->dth_off, no);
    int32_t *fill = sw_malloc(((size_t)no + 1) * sizeof *fill);
    if (!fill)
        return SW_ENOMEM;
    memcpy(fill, u->dth_off, ((size_t)no + 1) * sizeof *fill);
    for (int32_t s = 0; s < nt; s++)
        if (u->death[s] != SWU_NEVER)
            u->dth[fill[u->death[s]]++] = s;
    sw_free(fill);
    return 0;
}

void swu_free(swu *u)
{
    void *p[] = {u->order, u->pos, u->death, u->dth_off, u->dth, u->res, u->hv,
                 u->lock, u->in_r, u->prev, u->next};
    for (size_t i = 0; i < SW_ARRAY_LEN(p); i++)
        sw_free(p[i]);
    memset(u, 0, sizeof *u);
}

static void lru_remove(swu *u, int32_t s)
{
    if (u->prev[s] >= 0)
        u->next[u->prev[s]] = u->next[s];
    else
        u->head = u->next[s];
    if (u->next[s] >= 0)
        u->prev[u->next[s]] = u->prev[s];
    else
        u->tail = u->prev[s];
}

static void lru_push(swu *u, int32_t s)
{
    u->prev[s] = u->tail;
    u->next[s] = -1;
    if (u->tail >= 0)
        u->next[u->tail] = s;
    else
        u->head = s;
    u->tail = s;
}

static void touch(swu *u, int32_t s)
{
    lru_remove(u, s);
    lru_push(u, s);
}

static void set_res(swu *u, int32_t s)
{
    u->res[s] = 1;
    u->used += sz(u, s);
    if (u->used > u->peak)
        u->peak = u->used;
    lru_push(u, s);
}

static void clear_res(swu *u, int32_t s)
{
    u->res[s] = 0;
    u->used -= sz(u, s);
    lru_remove(u, s);
}

void swu_begin(swu *u, plan_builder *b, const uint8_t *resident, int64_t limit)
{
    const graph_profile *g = u->g;
    u->b = b;
    u->limit = limit;
    u->used = u->peak = 0;
    u->head = u->tail = -1;
    u->swap_in_bytes = u->swap_out_bytes = 0;
    u->n_in = u->n_out = u->n_drop = 0;
    if (b)
        pb_reset(b);
    for (int32_t s = 0; s < g->n_tensors; s++) {
        const graph_tensor *x = &g->tensors[s];
        u->res[s] = u->lock[s] = u->in_r[s] = 0;
        /* host copies as the builder has them: external storages start on the
           host; a resident persistent one the iteration updates is stale */
        u->hv[s] = x->storage == s && x->producer < 0;
        if (x->storage == s && x->persistent && resident && resident[s]) {
            u->in_r[s] = 1;
            if (g->n_mutations[s])
                u->hv[s] = 0;
            set_res(u, s);
            if (b)
                pb_resident(b, s);
        }
    }
}

int swu_on_host(const swu *u, int32_t s) { return u->hv[s]; }

void swu_swap_in(swu *u, int32_t s)
{
    set_res(u, s);
    u->swap_in_bytes += sz(u, s);
    u->n_in++;
    if (u->b)
        pb_swap_in(u->b, s);
}

void swu_create(swu *u, int32_t s)
{
    set_res(u, s);
    u->hv[s] = 0;
}

void swu_drop(swu *u, int32_t s)
{
    clear_res(u, s);
    u->n_drop++;
    if (u->b)
        pb_drop(u->b, s);
}

void swu_release(swu *u, int32_t s) { clear_res(u, s); }

void swu_note_transient(swu *u, int64_t extra)
{
    if (u->used + extra > u->peak)
        u->peak = u->used + extra;
}

void swu_evict(swu *u, int32_t s)
{
    if (u->hv[s]) {
        swu_drop(u, s);
    } else {
        clear_res(u, s);
        u->hv[s] = 1;
        u->n_out++;
        u->swap_out_bytes += sz(u, s);
        if (u->b)
            pb_swap_out(u->b, s);
    }
}

int64_t swu_created_bytes(const swu *u, int32_t i)
{
    const graph_profile *g = u->g;
    int32_t o = u->order[i];
    int64_t n = 0;
    for (int32_t k = g->acc_off[o]; k < g->acc_off[o + 1]; k++)
        if (g->acc_flag[k] & GA_CREATE)
            n += sz(u, g->acc[k]);
    return n;
}

void swu_lock_op(swu *u, int32_t o, int on)
{
    const graph_profile *g = u->g;
    for (int32_t k = g->acc_off[o]; k < g->acc_off[o + 1]; k++)
        if (!(g->acc_flag[k] & GA_CREATE))
            u->lock[g->acc[k]] = (uint8_t)on;
}

int swu_make_room(swu *u, int64_t need)
{
    while (u->used + need > u->limit) {
        int32_t v = u->head;
        while (v >= 0 && u->lock[v])
            v = u->next[v];
        if (v < 0)
            return SW_ENOFIT;
        swu_evict(u, v);
    }
    return 0;
}

void swu_run(swu *u, int32_t i)
{
    const graph_profile *g = u->g;
    int32_t o = u->order[i];
    for (int32_t k = g->acc_off[o]; k < g->acc_off[o + 1]; k++) {
        int32_t s = g->acc[k];
        if (g->acc_flag[k] & GA_CREATE) {
            swu_create(u, s);
        } else {
            if (g->acc_flag[k] & GA_MUTATE)
                u->hv[s] = 0;
            touch(u, s);
        }
    }
    if (u->b)
        pb_run(u->b, o);
    for (int32_t k = u->dth_off[i]; k < u->dth_off[i + 1]; k++) {
        int32_t s = u->dth[k];
        if (u->res[s])
            swu_release(u, s); /* the builder frees it after its last use */
    }
}

int swu_finish(swu *u, plan **out, sw_err *err)
{
    pb_end_iteration(u->b);
    return pb_finish(u->b, out, err);
}

int32_t *swu_framework_order(const graph_profile *g)
{
    int32_t no = g->n_ops;
    int32_t *order = sw_malloc(((size_t)no + 1) * sizeof *order);
    int32_t *indeg = sw_calloc((size_t)no + 1, sizeof *indeg);
    if (!order || !indeg) {
        sw_free(order);
        sw_free(indeg);
        return NULL;
    }
    int32_t head = 0, n = 0;
    for (int32_t o = 0; o < no; o++) { /* sources, in creation order */
        indeg[o] = g->pred_off[o + 1] - g->pred_off[o];
        if (!indeg[o])
            order[n++] = o;
    }
    while (head < n) {
        int32_t o = order[head++], first = n;
        for (int32_t k = g->succ_off[o]; k < g->succ_off[o + 1]; k++)
            if (--indeg[g->succ[k]] == 0)
                order[n++] = g->succ[k];
        /* the ones o made ready join the queue in creation order (the
           engine's push order; insertion sort: they are few) */
        for (int32_t i = first + 1; i < n; i++) {
            int32_t v = order[i], j = i;
            for (; j > first && order[j - 1] > v; j--)
                order[j] = order[j - 1];
            order[j] = v;
        }
    }
    sw_free(indeg);
    return order;
}

int swu_phase_uses(const graph_profile *g, int32_t **last_fwd, int32_t **first_bwd)
{
    int32_t nt = g->n_tensors;
    int32_t *lf = sw_malloc(((size_t)nt + 1) * sizeof *lf);
    int32_t *fb = sw_malloc(((size_t)nt + 1) * sizeof *fb);
    if (!lf || !fb) {
        sw_free(lf);
        sw_free(fb);
        return SW_ENOMEM;
    }
    for (int32_t s = 0; s < nt; s++)
        lf[s] = fb[s] = -1;
    for (int32_t i = 0; i < g->n_ops; i++) {
        int32_t o = g->order[i];
        int fwd = g->ops[o].phase == GP_FORWARD;
        for (int32_t k = g->acc_off[o]; k < g->acc_off[o + 1]; k++) {
            int32_t s = g->acc[k];
            if (fwd)
                lf[s] = i;
            else if (fb[s] < 0 && !(g->acc_flag[k] & GA_CREATE))
                fb[s] = i;
        }
    }
    *last_fwd = lf;
    *first_bwd = fb;
    return 0;
}

int swu_offload(const graph_profile *g, const planner_opts *opts, const int32_t *out_at,
                const int32_t *in_at, const char *who, plan **out, int64_t *peak, sw_err *err)
{
    *out = NULL;
    int64_t budget = opts->memory_budget;
    int32_t nt = g->n_tensors, no = g->n_ops;
    int64_t cap = budget - g->max_workspace;
    if (cap <= 0)
        return sw_fail(err, SW_ENOFIT, "does not fit: the budget does not cover the largest op "
                       "workspace");
    swu u;
    int rc = swu_init(&u, g, NULL);
    /* CSR of swap-outs after each position and swap-ins before it */
    int32_t *o_off = sw_calloc((size_t)no + 2, sizeof *o_off);
    int32_t *i_off = sw_calloc((size_t)no + 2, sizeof *i_off);
    int32_t *o_s = sw_malloc(((size_t)nt + 1) * sizeof *o_s);
    int32_t *i_s = sw_malloc(((size_t)nt + 1) * sizeof *i_s);
    uint8_t *r = sw_calloc((size_t)nt + 1, 1);
    plan_builder *b = arena_builder(g, opts, NULL);
    if (rc || !o_off || !i_off || !o_s || !i_s || !r || !b) {
        rc = sw_fail(err, SW_ENOMEM, "out of memory");
        goto done;
    }
    for (int32_t s = 0; s < nt; s++) {
        r[s] = g->tensors[s].storage == s && g->tensors[s].persistent;
        if (out_at[s] >= 0) {
            o_off[out_at[s] + 1]++;
            i_off[in_at[s] + 1]++;
        }
    }
    for (int32_t i = 0; i <= no; i++) {
        o_off[i + 1] += o_off[i];
        i_off[i + 1] += i_off[i];
    }
    int32_t *fo = sw_malloc(((size_t)no + 2) * sizeof *fo), *fi = sw_malloc(((size_t)no + 2) * sizeof *fi);
    if (!fo || !fi) {
        sw_free(fo);
        sw_free(fi);
        rc = sw_fail(err, SW_ENOMEM, "out of memory");
        goto done;
    }
    memcpy(fo, o_off, ((size_t)no + 1) * sizeof *fo);
    memcpy(fi, i_off, ((size_t)no + 1) * sizeof *fi);
    for (int32_t s = 0; s < nt; s++)
        if (out_at[s] >= 0) {
            o_s[fo[out_at[s]]++] = s;
            i_s[fi[in_at[s]]++] = s;
        }
    sw_free(fo);
    sw_free(fi);
    swu_begin(&u, b, r, INT64_MAX);
    int32_t n_off = 0;
    for (int32_t i = 0; i < no; i++) {
        int32_t o = u.order[i];
        for (int32_t k = i_off[i]; k < i_off[i + 1]; k++)
            if (!u.res[i_s[k]] && swu_on_host(&u, i_s[k]))
                swu_swap_in(&u, i_s[k]);
        for (int32_t k = g->acc_off[o]; k < g->acc_off[o + 1]; k++) {
            int32_t s = g->acc[k];
            if (!(g->acc_flag[k] & GA_CREATE) && !u.res[s])
                swu_swap_in(&u, s); /* on demand (a late prefetch) */
        }
        swu_run(&u, i);
        for (int32_t k = o_off[i]; k < o_off[i + 1]; k++)
            if (u.res[o_s[k]]) {
                swu_evict(&u, o_s[k]);
                n_off++;
            }
    }
    *peak = u.peak;
    sw_err e2;
    rc = swu_finish(&u, out, &e2);
    if (rc == SW_ENOFIT) {
        char h1[32], h2[32];
        if (u.peak > cap)
            rc = sw_fail(err, SW_ENOFIT, "does not fit: %s's schedule peaks at %s of tensors "
                         "(%d offloaded), the budget leaves %s", who,
                         sw_fmt_bytes(u.peak, h1, sizeof h1), n_off,
                         sw_fmt_bytes(cap, h2, sizeof h2));
        else
            rc = sw_fail(err, SW_ENOFIT, "does not fit: %s's schedule peaks at %s of tensors, "
                         "within the budget's %s, but the allocator fragments memory (%s)", who,
                         sw_fmt_bytes(u.peak, h1, sizeof h1), sw_fmt_bytes(cap, h2, sizeof h2),
                         e2.msg);
    } else if (rc) {
        *err = e2;
    } else {
        char note[200];
        snprintf(note, sizeof note, "%s: %d tensors offloaded, peak %lld bytes of tensors", who,
                 n_off, (long long)u.peak);
        if (plan_set_notes(*out, note)) {
            plan_free(*out);
            *out = NULL;
            rc = sw_fail(err, SW_ENOMEM, "out of memory");
        }
    }
done:
    pb_free(b);
    sw_free(o_off);
    sw_free(i_off);
    sw_free(o_s);
    sw_free(i_s);
    sw_free(r);
    swu_free(&u);
    return rc;
}
