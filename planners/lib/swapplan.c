/* swapplan.c: SwapAdvisor's swap planner (Belady eviction over a size-class
   pool, two passes for the steady state), recording through the builder,
   or for the GA's evaluations straight into the simulator's compiled form.
   This file: the planner's state, the sizes, the allocations' least counts
   and smallest pools; the walk is swapplan_walk.c, the fast path
   swapplan_fast.c (state: swapplan_impl.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "swapplan_impl.h"

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int find_size(const sp_sizes *z, int64_t bytes)
{
    int lo = 0, hi = z->n - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (z->size[mid] == bytes)
            return mid;
        if (z->size[mid] < bytes)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -1;
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* The groups swapplan_min_counts counts: each op's multiset of size
   indices (its storages' sizes, zero bytes left out), sorted, each
   distinct multiset once (many ops repeat one: the same layer's ops). */
static int min_count_groups(swapplan *sp)
{
    const graph_profile *g = sp->g;
    int32_t no = g->n_ops, na = g->acc_off[no];
    size_t nh = 16;
    while (nh < 2 * (size_t)no + 2)
        nh *= 2;
    sp->mc_off = sw_malloc(((size_t)no + 2) * sizeof *sp->mc_off);
    sp->mc_idx = sw_malloc(((size_t)na + 1) * sizeof *sp->mc_idx);
    int32_t *tab = sw_malloc(nh * sizeof *tab); /* group ids, -1 empty */
    uint64_t *hash = sw_malloc(((size_t)no + 1) * sizeof *hash);
    if (!sp->mc_off || !sp->mc_idx || !tab || !hash) {
        sw_free(tab);
        sw_free(hash);
        return SW_ENOMEM;
    }
    for (size_t i = 0; i < nh; i++)
        tab[i] = -1;
    int32_t n = 0, top = 0; /* groups, and mc_idx entries used */
    sp->mc_off[0] = 0;
    for (int32_t o = 0; o < no; o++) {
        int32_t *l = sp->mc_idx + top, len = 0;
        for (int32_t k = g->acc_off[o]; k < g->acc_off[o + 1]; k++)
            if (sp->sz.of[g->acc[k]] >= 0)
                l[len++] = sp->sz.of[g->acc[k]];
        if (!len)
            continue;
        qsort(l, (size_t)len, sizeof *l, cmp_i32);
        uint64_t h = 1469598103934665603ull;
        for (int32_t i = 0; i < len; i++)
            h = (h ^ (uint32_t)l[i]) * 1099511628211ull;
        size_t at = (size_t)(h ^ (h >> 29)) & (nh - 1);
        for (;; at = (at + 1) & (nh - 1)) {
            int32_t q = tab[at];
            if (q < 0) {
                tab[at] = n;
                hash[n] = h;
                top += len;
                sp->mc_off[++n] = top;
                break;
            }
            int32_t ql = sp->mc_off[q + 1] - sp->mc_off[q];
            if (hash[q] == h && ql == len &&
                !memcmp(sp->mc_idx + sp->mc_off[q], l, (size_t)len * sizeof *l))
                break; /* seen: l is overwritten by the next op */
        }
    }
    sp->n_mc = n;
    sw_free(tab);
    sw_free(hash);
    return 0;
}

swapplan *swapplan_new(const graph_profile *g, int64_t budget)
{
    swapplan *sp = sw_calloc(1, sizeof *sp);
    if (!sp)
        return NULL;
    sp->g = g;
    sp->budget = budget;
    sp->pool_bytes = budget - g->max_workspace;
    sp->nt = g->n_tensors;
    sp->no = g->n_ops;
    sp->h2d_bw = g->device.h2d_bw;
    sp->lim_thr = NAN;
    size_t nt = (size_t)sp->nt + 1, no = (size_t)sp->no + 1;
    sp->sz.size = sw_malloc(nt * sizeof *sp->sz.size);
    sp->sz.of = sw_malloc(nt * sizeof *sp->sz.of);
    sp->pos_of_op = sw_malloc(no * sizeof(int32_t));
    sp->t_at = sw_malloc((no + 1) * sizeof(double));
    sp->use_off = sw_malloc((nt + 1) * sizeof(int32_t));
    sp->use_pos = sw_malloc(((size_t)g->acc_off[g->n_ops] + 1) * sizeof(int32_t));
    sp->death = sw_malloc(nt * sizeof(int32_t));
    sp->scratch = sw_malloc(nt * sizeof(int32_t));
    sp->hf_off = sw_malloc((no + 1) * sizeof(int32_t));
    sp->hf = sw_malloc(nt * sizeof(int32_t));
    sp->st = sw_calloc(nt, sizeof *sp->st);
    sp->t_end = sw_malloc((no + 1) * sizeof(double));
    sp->in_r = sw_malloc(nt);
    sp->persist = sw_calloc(nt, 1);
    sp->cls_of = sw_malloc(nt * sizeof(int32_t));
    int32_t max_acc = 1;
    for (int32_t o = 0; o < g->n_ops; o++)
        if (g->acc_off[o + 1] - g->acc_off[o] > max_acc)
            max_acc = g->acc_off[o + 1] - g->acc_off[o];
    sp->cand = sw_malloc((size_t)max_acc * sizeof(int32_t));
    sp->pw = (int32_t)((2 * (size_t)sp->no + 63) / 64) + 1;
    sp->psw = (sp->pw + 63) / 64;
    sp->hw = (int32_t)(((size_t)sp->nt + 63) / 64) + 1;
    sp->pers = sw_malloc(nt * sizeof(int32_t));
    sp->fast = 1;
    sp->tflag = sw_malloc(nt);
    sp->held = sw_malloc(nt * sizeof(int32_t));
    sp->op_time = sw_malloc(no * sizeof(double));
    sp->lim = sw_malloc(nt * sizeof(double));
    if (!sp->tflag || !sp->held || !sp->op_time || !sp->lim) {
        swapplan_free(sp);
        return NULL;
    }
    for (int32_t t = 0; t < g->n_tensors; t++) {
        const graph_tensor *x = &g->tensors[t];
        sp->tflag[t] = (uint8_t)((x->storage == t ? TF_ROOT : 0) |
                                 (x->producer < 0 ? TF_EXTERNAL : 0) |
                                 (x->persistent ? TF_PERSIST : 0));
        sp->held[t] = x->held_until;
        if ((sp->tflag[t] & (TF_ROOT | TF_PERSIST)) == (TF_ROOT | TF_PERSIST) && sp->pers)
            sp->pers[sp->n_pers++] = t;
    }
    for (int32_t o = 0; o < g->n_ops; o++)
        sp->op_time[o] = g->ops[o].time_s;
    sp_fast *f = &sp->f;
    f->ofree = sw_malloc(nt);
    f->rset = sw_malloc(nt * sizeof(int32_t));
    f->free_s = sw_malloc(nt * sizeof(int32_t));
    f->cur_res = sw_malloc(nt * sizeof(int32_t));
    f->rix = sw_malloc(nt * sizeof(int32_t));
    f->final_res = sw_malloc(nt * sizeof(int32_t));
    f->onext = sw_malloc(nt * sizeof(int32_t));
    f->oprev = sw_malloc(nt * sizeof(int32_t));
    f->place_ref = sw_malloc(nt * sizeof(int64_t));
    f->user_ref = sw_malloc(nt * sizeof(int64_t));
    f->copyout_ref = sw_malloc(nt * sizeof(int64_t));
    f->obj_tag = sw_malloc(nt * sizeof(int64_t));
    f->snap_rcur = sw_malloc(nt * sizeof(int32_t));
    f->snap_cur = sw_malloc(nt * sizeof(int32_t));
    f->snap_onext = sw_malloc(nt * sizeof(int32_t));
    f->snap_oprev = sw_malloc(nt * sizeof(int32_t));
    f->snap_ofree = sw_malloc(nt);
    f->snap_place_ref = sw_malloc(nt * sizeof(int64_t));
    f->snap_user_ref = sw_malloc(nt * sizeof(int64_t));
    f->snap_copyout_ref = sw_malloc(nt * sizeof(int64_t));
    f->snap_obj_tag = sw_malloc(nt * sizeof(int64_t));
    if (!f->snap_rcur || !f->snap_cur || !f->snap_onext || !f->snap_oprev || !f->snap_ofree ||
        !f->snap_place_ref || !f->snap_user_ref || !f->snap_copyout_ref || !f->snap_obj_tag) {
        swapplan_free(sp);
        return NULL;
    }
    if (!f->ofree || !f->rset || !f->free_s || !f->cur_res || !f->rix || !f->final_res ||
        !f->onext || !f->oprev || !f->place_ref || !f->user_ref || !f->copyout_ref ||
        !f->obj_tag) {
        swapplan_free(sp);
        return NULL;
    }
    if (!sp->sz.size || !sp->sz.of || !sp->pos_of_op || !sp->t_at || !sp->use_off ||
        !sp->use_pos || !sp->death || !sp->scratch || !sp->hf_off || !sp->hf || !sp->st ||
        !sp->t_end || !sp->in_r || !sp->persist || !sp->cls_of || !sp->cand || !sp->pers) {
        swapplan_free(sp);
        return NULL;
    }
    /* TS: distinct non-zero storage sizes */
    int32_t n = 0;
    for (int32_t t = 0; t < sp->nt; t++)
        if (g->tensors[t].storage == t && g->tensors[t].bytes > 0)
            sp->sz.size[n++] = g->tensors[t].bytes;
    qsort(sp->sz.size, (size_t)n, sizeof *sp->sz.size, cmp_i64);
    int32_t m = 0;
    for (int32_t i = 0; i < n; i++)
        if (i == 0 || sp->sz.size[i] != sp->sz.size[m - 1])
            sp->sz.size[m++] = sp->sz.size[i];
    sp->sz.n = m;
    for (int32_t t = 0; t < sp->nt; t++) {
        const graph_tensor *x = &g->tensors[t];
        sp->sz.of[t] = (x->storage == t && x->bytes > 0) ? find_size(&sp->sz, x->bytes) : -1;
        sp->persist[t] = x->persistent;
    }
    /* the use lists' offsets: accesses per storage, whatever the order */
    for (int32_t t = 0; t <= sp->nt; t++)
        sp->use_off[t] = 0;
    for (int32_t k = 0; k < g->acc_off[g->n_ops]; k++)
        sp->use_off[g->acc[k]]++;
    if (graph_counts_to_offsets(sp->use_off, sp->nt) || min_count_groups(sp)) {
        swapplan_free(sp);
        return NULL;
    }
    return sp;
}

void swapplan_free(swapplan *sp)
{
    if (!sp)
        return;
    sw_free(sp->sz.size);
    sw_free(sp->sz.of);
    sw_free(sp->pos_of_op);
    sw_free(sp->t_at);
    sw_free(sp->use_off);
    sw_free(sp->use_pos);
    sw_free(sp->death);
    sw_free(sp->scratch);
    sw_free(sp->hf_off);
    sw_free(sp->hf);
    sw_free(sp->st);
    sw_free(sp->t_end);
    sw_free(sp->in_r);
    sw_free(sp->persist);
    sw_free(sp->cls_of);
    sw_free(sp->class_n);
    sw_free(sp->class_free);
    sw_free(sp->cnt_eff);
    sw_free(sp->pbits);
    sw_free(sp->psum);
    sw_free(sp->hbits);
    sw_free(sp->hcnt);
    sw_free(sp->cand);
    sw_free(sp->naive_buf);
    sw_free(sp->ev_kind);
    sw_free(sp->ev_x);
    sw_free(sp->pers);
    pb_free(sp->b);
    sw_free(sp->csize);
    sw_free(sp->tflag);
    sw_free(sp->held);
    sw_free(sp->op_time);
    sw_free(sp->mc_off);
    sw_free(sp->mc_idx);
    sw_free(sp->lim);
    sp_fast *f = &sp->f;
    sw_free(f->rset);
    sw_free(f->ev_st);
    sw_free(f->stream_idx);
    sw_free(f->place_off);
    sw_free(f->place_res);
    sw_free(f->free_off);
    sw_free(f->ev_alloc);
    sw_free(f->ev_freeb);
    sw_free(f->free_s);
    sw_free(f->res_s);
    sw_free(f->res_obj);
    sw_free(f->cur_res);
    sw_free(f->rix);
    sw_free(f->final_res);
    sw_free(f->place_ref);
    sw_free(f->user_ref);
    sw_free(f->copyout_ref);
    sw_free(f->vc);
    sw_free(f->dep);
    sw_free(f->pdep);
    sw_free(f->obj_base);
    sw_free(f->qhead);
    sw_free(f->qtail);
    sw_free(f->qn);
    sw_free(f->onext);
    sw_free(f->oprev);
    sw_free(f->ofree);
    sw_free(f->obj_tag);
    sw_free(f->reloc);
    sw_free(f->all);
    sw_free(f->snap_rcur);
    sw_free(f->snap_cur);
    sw_free(f->snap_onext);
    sw_free(f->snap_oprev);
    sw_free(f->snap_ofree);
    sw_free(f->snap_place_ref);
    sw_free(f->snap_user_ref);
    sw_free(f->snap_copyout_ref);
    sw_free(f->snap_obj_tag);
    sw_free(f->snap_qhead);
    sw_free(f->snap_qtail);
    sw_free(f->snap_qn);
    sim_prog_free(f->prog);
    sim_ws_free(f->ws);
    sw_free(sp);
}

void swapplan_set_fast(swapplan *sp, int on) { sp->fast = on != 0; }

int swapplan_set_naive_victims(swapplan *sp, int on)
{
    if (on && !sp->naive_buf &&
        !(sp->naive_buf = sw_malloc(((size_t)sp->nt + 1) * sizeof *sp->naive_buf)))
        return SW_ENOMEM;
    sp->naive = on != 0;
    return 0;
}
int64_t swapplan_fast_count(const swapplan *sp) { return sp->n_fast; }

const sp_sizes *swapplan_sizes(const swapplan *sp) { return &sp->sz; }
int64_t swapplan_pool_bytes(const swapplan *sp) { return sp->pool_bytes; }

void swapplan_min_counts(const swapplan *sp, const int32_t *cls, int32_t n_classes, int32_t *need)
{
    int32_t tmp[256], *cnt = n_classes <= 256 ? tmp : sw_calloc((size_t)n_classes, sizeof *cnt);
    for (int32_t c = 0; c < n_classes; c++)
        need[c] = 0;
    if (!cnt)
        return;
    /* per op, its storages per class; the most over the ops (each
       distinct multiset of sizes once: the others give the same) */
    for (int32_t q = 0; q < sp->n_mc; q++) {
        const int32_t *l = sp->mc_idx + sp->mc_off[q], *end = sp->mc_idx + sp->mc_off[q + 1];
        for (const int32_t *x = l; x < end; x++)
            cnt[cls[*x]] = 0;
        for (const int32_t *x = l; x < end; x++) {
            int32_t c = cls[*x];
            if (++cnt[c] > need[c])
                need[c] = cnt[c];
        }
    }
    if (cnt != tmp)
        sw_free(cnt);
}

/* The runs' costs: per size, the groups using it (CSR, a group once per
   entry of its multiset), scratch for the counts and a run's costs, and
   the least pool of each suffix of the sizes. */
struct swapplan_runs {
    int32_t *off, *grp, *cnt;
    int64_t *row;              /* a run's costs (runs_row) */
    int64_t *suf;              /* suf[i]: the least pool for sizes i .. n - 1 */
    int64_t *ext;              /* the callers' scratch */
};

void swapplan_runs_free(swapplan_runs *r)
{
    if (!r)
        return;
    sw_free(r->off);
    sw_free(r->grp);
    sw_free(r->cnt);
    sw_free(r->row);
    sw_free(r->suf);
    sw_free(r->ext);
    sw_free(r);
}

/* row[k], k = i .. n - 1: the bytes of the class of sizes i .. k, objects
   of size[k], as many as the most of its storages one op uses (which only
   grows as the run grows) */
static void runs_row(const swapplan *sp, swapplan_runs *r, int32_t i)
{
    for (int32_t q = 0; q < sp->n_mc; q++)
        r->cnt[q] = 0;
    int32_t most = 0;
    for (int32_t j = i; j < sp->sz.n; j++) {
        for (int32_t k = r->off[j]; k < r->off[j + 1]; k++)
            if (++r->cnt[r->grp[k]] > most)
                most = r->cnt[r->grp[k]];
        r->row[j] = sp->sz.size[j] * most;
    }
}

swapplan_runs *swapplan_runs_new(const swapplan *sp)
{
    int32_t ns = sp->sz.n, ng = sp->n_mc, ne = ng ? sp->mc_off[ng] : 0;
    swapplan_runs *r = sw_calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->off = sw_calloc((size_t)ns + 1, sizeof *r->off);
    r->grp = sw_malloc(((size_t)ne + 1) * sizeof *r->grp);
    r->cnt = sw_calloc((size_t)ng + 1, sizeof *r->cnt);
    r->row = sw_malloc(((size_t)ns + 1) * sizeof *r->row);
    r->suf = sw_malloc(((size_t)ns + 1) * sizeof *r->suf);
    r->ext = sw_malloc(((size_t)ns + 1) * sizeof *r->ext);
    if (!r->off || !r->grp || !r->cnt || !r->row || !r->suf || !r->ext) {
        swapplan_runs_free(r);
        return NULL;
    }
    for (int32_t k = 0; k < ne; k++)
        r->off[sp->mc_idx[k] + 1]++;
    for (int32_t i = 0; i < ns; i++)
        r->off[i + 1] += r->off[i];
    for (int32_t q = 0; q < ng; q++)
        for (int32_t k = sp->mc_off[q]; k < sp->mc_off[q + 1]; k++)
            r->grp[r->off[sp->mc_idx[k]]++] = q; /* offsets advance to the ends */
    for (int32_t i = ns; i > 0; i--)
        r->off[i] = r->off[i - 1];
    r->off[0] = 0;
    r->suf[ns] = 0;
    for (int32_t i = ns - 1; i >= 0; i--) {
        runs_row(sp, r, i);
        r->suf[i] = INT64_MAX;
        for (int32_t j = i; j < ns; j++)
            if (r->row[j] + r->suf[j + 1] < r->suf[i])
                r->suf[i] = r->row[j] + r->suf[j + 1];
    }
    return r;
}

int64_t swapplan_min_pool(const swapplan *sp, int32_t *cls)
{
    int32_t ns = sp->sz.n;
    if (ns == 0)
        return 0;
    swapplan_runs *rr = swapplan_runs_new(sp);
    int32_t *from = sw_malloc((size_t)ns * sizeof *from);
    int64_t r = -1;
    if (!rr || !from)
        goto out;
    /* best[j]: the least pool for sizes 0 .. j - 1 (the last class a run
       i .. j - 1; suf holds the same from the other end, without the runs) */
    int64_t *best = rr->ext, *row = rr->row;
    best[0] = 0;
    for (int32_t j = 1; j <= ns; j++)
        best[j] = INT64_MAX;
    for (int32_t i = 0; i < ns; i++) {
        runs_row(sp, rr, i);
        for (int32_t j = i; j < ns; j++)
            if (best[i] + row[j] < best[j + 1]) {
                best[j + 1] = best[i] + row[j];
                from[j] = i;
            }
    }
    r = best[ns];
    if (cls) { /* the runs, back to front, numbered from 0 */
        int32_t n = 0;
        for (int32_t j = ns - 1; j >= 0; j = from[j] - 1, n++)
            for (int32_t i = from[j]; i <= j; i++)
                cls[i] = n;
        for (int32_t i = 0; i < ns; i++)
            cls[i] = n - 1 - cls[i];
    }
out:
    swapplan_runs_free(rr);
    sw_free(from);
    return r;
}

int32_t swapplan_fitting_cls(const swapplan *sp, swapplan_runs *r, int64_t bytes,
                             double (*u)(void *), void *ud, int32_t *cls)
{
    int32_t ns = sp->sz.n, nc = 0;
    if (ns == 0 || r->suf[0] > bytes)
        return 0;
    /* runs left to right; acc + ext[j] <= bytes holds throughout (ext[j]:
       the least for the rest when the run goes on to j or beyond), so one
       of the two choices always fits */
    const int64_t *suf = r->suf, *row = r->row;
    int64_t *ext = r->ext, acc = 0;
    for (int32_t a = 0; a < ns;) {
        runs_row(sp, r, a);
        ext[ns] = INT64_MAX;
        for (int32_t k = ns - 1; k >= a; k--)
            ext[k] = row[k] + suf[k + 1] < ext[k + 1] ? row[k] + suf[k + 1] : ext[k + 1];
        int32_t j = a;
        for (;; j++) {
            int close = acc + row[j] + suf[j + 1] <= bytes;
            int go_on = j + 1 < ns && ext[j + 1] <= bytes - acc;
            if (close && (!go_on || u(ud) < 0.5))
                break;
            if (!go_on) /* cannot happen (see above) */
                break;
        }
        for (int32_t i = a; i <= j; i++)
            cls[i] = nc;
        nc++;
        acc += row[j];
        a = j + 1;
    }
    return nc;
}
