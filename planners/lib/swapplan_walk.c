/* swapplan_walk.c: SwapAdvisor's swap planner proper: the Belady walk over
   the schedule (victims from per-class position bitsets), its two passes
   for the steady state, and swapplan_make, which records the second pass
   through the plan builder or hands it to the fast path. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "swapplan_impl.h"

/* room for n tasks */
int sp_grow_ev(swapplan *sp, size_t n)
{
    if (n <= sp->cap_ev)
        return 0;
    size_t c = sp->cap_ev ? sp->cap_ev : 1024;
    while (c < n)
        c *= 2;
    uint8_t *k = sw_realloc(sp->ev_kind, c);
    if (k)
        sp->ev_kind = k;
    int32_t *x = sw_realloc(sp->ev_x, c * sizeof *x);
    if (x)
        sp->ev_x = x;
    if (!k || !x)
        return SW_ENOMEM;
    sp->cap_ev = c;
    return 0;
}
/* Belady's order. A resident storage's key is its next use (a schedule
   position, or no use left), then its id (lower first); the victim is the
   storage with the largest key, unless the threshold excludes it. Rather
   than a heap, each class keeps a bitset over positions (pbits, with a
   summary psum) and the held set (hbits). The storages whose next use is
   position p are among those the op at p accesses, so a set bit stands for
   that op's storages of the class that are resident with their next use
   at p; a bit is set on each use and cleared lazily, when need finds no
   such storage there. A use costs one bit; an eviction walks down from
   the top. */
static inline int32_t clz64(uint64_t x) { return __builtin_clzll(x); }

/* the highest set position <= p in class c's bits, or -1 */
static inline int32_t pbit_top(const swapplan *sp, int32_t c, int32_t p)
{
    if (p < 0)
        return -1;
    const uint64_t *pb = sp->pbits + (size_t)c * (size_t)sp->pw;
    const uint64_t *ps = sp->psum + (size_t)c * (size_t)sp->psw;
    int32_t w = p >> 6;
    uint64_t m = pb[w] & (~0ULL >> (63 - (p & 63)));
    if (m)
        return (w << 6) + 63 - clz64(m);
    int32_t j = w >> 6;
    uint64_t sm = (w & 63) ? ps[j] & (~0ULL >> (64 - (w & 63))) : 0;
    while (!sm) {
        if (--j < 0)
            return -1;
        sm = ps[j];
    }
    int32_t w2 = (j << 6) + 63 - clz64(sm);
    return (w2 << 6) + 63 - clz64(pb[w2]);
}

static inline void pbit_set(swapplan *sp, int32_t c, int32_t p)
{
    uint64_t *pb = sp->pbits + (size_t)c * (size_t)sp->pw;
    int32_t w = p >> 6;
    if (!pb[w])
        sp->psum[(size_t)c * (size_t)sp->psw + (size_t)(w >> 6)] |= 1ULL << (w & 63);
    pb[w] |= 1ULL << (p & 63);
}

static inline void pbit_clear(swapplan *sp, int32_t c, int32_t p)
{
    uint64_t *pb = sp->pbits + (size_t)c * (size_t)sp->pw;
    int32_t w = p >> 6;
    pb[w] &= ~(1ULL << (p & 63));
    if (!pb[w])
        sp->psum[(size_t)c * (size_t)sp->psw + (size_t)(w >> 6)] &= ~(1ULL << (w & 63));
}

/* resident s (class c >= 0) has next use nu now */
static inline void key_set(swapplan *sp, int32_t s, int32_t c, int32_t nu)
{
    if (nu != INT32_MAX) {
        pbit_set(sp, c, nu);
        return;
    }
    sp->hbits[(size_t)c * (size_t)sp->hw + (size_t)(s >> 6)] |= 1ULL << (s & 63);
    sp->hcnt[c]++;
    sp->st[s].held = 1;
}

/* s (class c >= 0) leaves the resident set; its position bit goes lazily */
static inline void key_drop(swapplan *sp, int32_t s, int32_t c)
{
    if (!sp->st[s].held)
        return;
    sp->hbits[(size_t)c * (size_t)sp->hw + (size_t)(s >> 6)] &= ~(1ULL << (s & 63));
    sp->hcnt[c]--;
    sp->st[s].held = 0;
}

/* next use position of s after the current one (persistent: wraps into the
   next iteration; none: INT32_MAX) */
static inline int32_t next_use(const swapplan *sp, int32_t s)
{
    const sp_st *x = &sp->st[s];
    if (x->nk < x->ne)
        return sp->use_pos[x->nk];
    if ((x->fl & TF_PERSIST) && x->ne > sp->use_off[s])
        return sp->no + sp->use_pos[sp->use_off[s]];
    return INT32_MAX;
}

/* v (class c) leaves the device to make room: recorded as a swap-out or a
   drop (pass 2), or leaves the resident set R */
static inline __attribute__((always_inline)) int evict(swapplan *sp, int32_t v, int32_t c,
                                                       const int record, const int pass2)
{
    sp_st *xv = &sp->st[v];
    key_drop(sp, v, c);
    xv->res = 0;
    if (pass2 && sp->in_r[v] && !xv->used) {
        /* pressure the first pass did not meet: v leaves the resident set,
           and the builder never sees it there */
        sp->in_r[v] = 0;
        xv->hv = 1;
        xv->bhv = (xv->fl & TF_EXTERNAL) != 0;
        sp->f.cur_res[v] = sp->f.rix[v] = -1;
    } else if (record) {
        /* a non-persistent tensor with no use left (held by the framework)
           is dead: dropped, never copied */
        int dead = !(xv->fl & TF_PERSIST) && next_use(sp, v) == INT32_MAX;
        int kind = xv->hv || dead ? TASK_DROP : TASK_SWAP_OUT;
        rec_ev(sp, kind, v);
        sp->f.cur_res[v] = -1;
        if (kind == TASK_SWAP_OUT)
            xv->bhv = 1;
        xv->hv = 1;
    }
    return 0;
}

/* One entry of a victim search, visited in key order: 1 if it is the
   victim (not used by the current op, and last used at least the
   threshold's time before now: limit); the first entry not used by the
   current op is kept in *any. */
static inline int victim_ok(const swapplan *sp, int32_t x, double limit, int32_t *any)
{
    if (sp->st[x].pin == sp->epoch)
        return 0;
    if (*any < 0)
        *any = x;
    return sp->t_end[sp->st[x].lu] <= limit;
}

/* The end of a victim search: evict best, or failing that any (none old
   enough: Belady's choice anyway); neither: SW_ENOFIT. */
static inline __attribute__((always_inline)) int evict_found(swapplan *sp, int32_t best,
                                                             int32_t any, int32_t c,
                                                             const int record, const int pass2)
{
    if (best < 0)
        best = any;
    if (best < 0) {
        snprintf(sp->why, sizeof sp->why, "size class %d has too few objects for one op's tensors",
                 c);
        return SW_ENOFIT;
    }
    return evict(sp, best, c, record, pass2);
}

/* The reference for need's walk (swapplan_set_naive_victims): every
   resident storage of class c, sorted by key (next use, later first, then
   id, lower first), the same rules applied in that order. */
static int cmp_key_desc(const void *a, const void *b)
{
    uint64_t ka = *(const uint64_t *)a, kb = *(const uint64_t *)b;
    return ka < kb ? 1 : ka > kb ? -1 : 0;
}

static int need_naive(swapplan *sp, int32_t c, double limit, int record, int pass2)
{
    int32_t n = 0, best = -1, any = -1;
    uint64_t *key = sp->naive_buf;
    for (int32_t x = 0; x < sp->nt; x++)
        if (sp->st[x].res && sp->cls_of[x] == c)
            key[n++] = ((uint64_t)(uint32_t)next_use(sp, x) << 32) |
                       (uint64_t)(UINT32_MAX - (uint32_t)x);
    qsort(key, (size_t)n, sizeof *key, cmp_key_desc);
    for (int32_t j = 0; j < n && j < SP_WALK_MAX; j++) {
        int32_t x = (int32_t)(UINT32_MAX - (uint32_t)key[j]);
        if (victim_ok(sp, x, limit, &any)) {
            best = x;
            break;
        }
    }
    return evict_found(sp, best, any, c, record, pass2);
}

/* Make room for s in its class c >= 0 at position pos: evict by Belady.
   Returns 0, or SW_ENOFIT. */
static inline __attribute__((always_inline)) int need(swapplan *sp, const int32_t *sched,
                                                      int32_t s, int32_t c, int32_t pos,
                                                      double now, const int record,
                                                      const int pass2)
{
    if (sp->class_free[c] > 0) {
        sp->class_free[c]--;
        return 0;
    }
    double limit = now - sp->lim[s]; /* now - threshold * bytes / h2d_bw */
    if (sp->naive)
        return need_naive(sp, c, limit, record, pass2);
    /* Walk the class's resident storages in key order, at most SP_WALK_MAX
       of them: the first not used by the current op and old enough is the
       victim; failing that, the first not used by the current op
       (Belady's choice anyway). The current op's storages have their next
       use at pos, after every other key: the walk stops above pos. */
    const sp_st *st = sp->st;
    int32_t best = -1, any = -1, steps = 0;
    if (sp->hcnt[c] > 0) { /* no use left: the largest keys, by id */
        const uint64_t *hb = sp->hbits + (size_t)c * (size_t)sp->hw;
        for (int32_t w = 0; w < sp->hw && best < 0 && steps < SP_WALK_MAX; w++) {
            for (uint64_t m = hb[w]; m && steps < SP_WALK_MAX; m &= m - 1, steps++) {
                int32_t hs = (w << 6) + __builtin_ctzll(m);
                if (victim_ok(sp, hs, limit, &any)) {
                    best = hs;
                    break;
                }
            }
        }
    }
    const int32_t *acc = sp->g->acc, *acc_off = sp->g->acc_off;
    int32_t no = sp->no, *cand = sp->cand;
    const int32_t *cls_of = sp->cls_of; /* compact: most of an op's storages are of other classes */
    for (int32_t p = best < 0 && steps < SP_WALK_MAX ? pbit_top(sp, c, 2 * no - 1) : -1;
         p > pos && best < 0 && steps < SP_WALK_MAX; p = pbit_top(sp, c, p - 1)) {
        /* the storages of class c resident with next use p, by id */
        int32_t o = sched[p < no ? p : p - no], nc = 0;
        for (int32_t k = acc_off[o]; k < acc_off[o + 1]; k++) {
            int32_t x = acc[k];
            if (cls_of[x] != c || !st[x].res || next_use(sp, x) != p)
                continue;
            int32_t j = nc++;
            for (; j > 0 && cand[j - 1] > x; j--)
                cand[j] = cand[j - 1];
            cand[j] = x;
        }
        if (!nc) {
            pbit_clear(sp, c, p);
            continue;
        }
        for (int32_t j = 0; j < nc && steps < SP_WALK_MAX; j++, steps++) {
            if (victim_ok(sp, cand[j], limit, &any)) {
                best = cand[j];
                break;
            }
        }
    }
    return evict_found(sp, best, any, c, record, pass2);
}

/* The walk's state at the start of a pass: every class empty, every
   storage at its first use; pass2: R (in_r) resident. SW_ENOFIT when R
   does not fit its classes. */
static inline __attribute__((always_inline)) int walk_start(swapplan *sp, const sp_alloc *al,
                                                            const int pass2)
{
    const graph_profile *g = sp->g;
    int32_t nt = sp->nt;
    sp_st *st = sp->st;
    for (int32_t c = 0; c < al->n_classes; c++) {
        sp->class_free[c] = sp->cnt_eff[c];
        if (sp->hcnt[c])
            memset(sp->hbits + (size_t)c * (size_t)sp->hw, 0, (size_t)sp->hw * sizeof(uint64_t));
        sp->hcnt[c] = 0;
    }
    memset(sp->pbits, 0, (size_t)al->n_classes * (size_t)sp->pw * sizeof(uint64_t));
    memset(sp->psum, 0, (size_t)al->n_classes * (size_t)sp->psw * sizeof(uint64_t));
    sp_fast *f = &sp->f;
    if (pass2) {
        f->n_res = f->n_place = f->n_free = 0;
        for (int st_ = 0; st_ < STREAM__COUNT; st_++)
            f->n_s[st_] = 0;
    }
    for (int32_t s = 0; s < nt; s++) {
        sp_st *x = &st[s];
        uint8_t fl = sp->tflag[s];
        if (pass2)
            f->cur_res[s] = f->rix[s] = -1;
        x->nk = sp->use_off[s];
        x->ne = sp->use_off[s + 1];
        x->death = sp->death[s];
        x->cls = sp->cls_of[s];
        x->lu = 0;
        x->fl = fl;
        x->used = 0;
        x->res = 0;
        x->hv = 0;
        x->held = 0;
        x->bhv = 0;
        if (!(fl & TF_ROOT))
            continue;
        x->hv = (fl & TF_EXTERNAL) != 0;
        if (pass2)
            x->bhv = x->hv;
        if (pass2 && sp->in_r[s]) {
            /* its residency at the start (the builder numbers R's first) */
            int32_t r = (int32_t)f->n_res++;
            f->res_s[r] = s;
            f->res_obj[r] = -1;
            f->cur_res[s] = f->rix[s] = r;
            x->res = 1;
            x->hv = x->bhv = g->n_mutations[s] == 0;
            int32_t c = x->cls;
            if (c >= 0) {
                if (sp->class_free[c] <= 0)
                    return SW_ENOFIT;
                sp->class_free[c]--;
                key_set(sp, s, c, next_use(sp, s));
            }
        }
    }
    return 0;
}

/* One pass over the schedule. pass2: R (in_r) is resident at start. */
static inline __attribute__((always_inline)) int walk(swapplan *sp, const int32_t *sched,
                                                      const sp_alloc *al, const int pass2)
{
    const graph_profile *g = sp->g;
    int32_t nt = sp->nt;
    sp_st *st = sp->st;
    if (walk_start(sp, al, pass2))
        return SW_ENOFIT;
    sp_fast *f = &sp->f;
    const int32_t *acc = g->acc, *acc_off = g->acc_off;
    const uint8_t *acc_flag = g->acc_flag;
    for (int32_t i = 0; i < sp->no; i++) {
        int32_t o = sched[i];
        double now = sp->t_at[i];
        int32_t a0 = acc_off[o], a1 = acc_off[o + 1];
        if (++sp->epoch == 0) { /* wrapped: forget every old pin */
            for (int32_t s = 0; s < nt; s++)
                st[s].pin = 0;
            sp->epoch = 1;
        }
        uint32_t epoch = sp->epoch;
        for (int32_t k = a0; k < a1; k++)
            st[acc[k]].pin = epoch;
        int rc = 0;
        for (int32_t k = a0; k < a1 && !rc; k++) {
            int32_t s = acc[k];
            sp_st *x = &st[s];
            if ((acc_flag[k] & GA_CREATE) || x->res)
                continue;
            if (x->cls >= 0)
                rc = need(sp, sched, s, x->cls, i, now, pass2, pass2);
            if (!rc && pass2) {
                rec_ev(sp, TASK_SWAP_IN, s);
                rec_place(f, s);
            }
            x->res = 1;
        }
        for (int32_t k = a0; k < a1 && !rc; k++) {
            int32_t s = acc[k];
            if (!(acc_flag[k] & GA_CREATE))
                continue;
            sp_st *x = &st[s];
            if (x->cls >= 0)
                rc = need(sp, sched, s, x->cls, i, now, pass2, pass2);
            x->res = 1;
            x->hv = 0;
            if (pass2)
                x->bhv = 0;
        }
        if (rc)
            return rc;
        size_t f0 = f->n_free;
        if (pass2)
            rec_ev(sp, TASK_RUN, o);
        int32_t lu = i + 1;
        for (int32_t k = a0; k < a1; k++) {
            int32_t s = acc[k];
            sp_st *x = &st[s];
            if (pass2) { /* the first pass records nothing: host copies and R are the second's */
                if (acc_flag[k] & GA_CREATE)
                    rec_place(f, s);
                if (acc_flag[k] & GA_MUTATE)
                    x->hv = x->bhv = 0;
                x->used = 1;
            }
            x->lu = lu;
            x->nk++;
            /* freed at its death, as the builder: after its last use, or
               below after the op holding it */
            if (!x->res)
                continue;
            if (!(x->fl & TF_PERSIST) && x->death == i) {
                x->res = 0;
                if (pass2)
                    f->free_s[f->n_free++] = s;
                if (x->cls >= 0) {
                    key_drop(sp, s, x->cls);
                    sp->class_free[x->cls]++;
                }
            } else if (x->cls >= 0) {
                key_set(sp, s, x->cls, next_use(sp, s));
            }
        }
        for (int32_t k = sp->hf_off[i]; k < sp->hf_off[i + 1]; k++) {
            int32_t s = sp->hf[k];
            sp_st *x = &st[s];
            if (x->res) {
                x->res = 0;
                if (pass2)
                    f->free_s[f->n_free++] = s;
                if (x->cls >= 0) {
                    key_drop(sp, s, x->cls);
                    sp->class_free[x->cls]++;
                }
            }
        }
        /* the builder frees at the run's end in storage order */
        if (pass2)
            for (size_t a = f0 + 1; a < f->n_free; a++) {
                int32_t v = f->free_s[a];
                size_t b = a;
                for (; b > f0 && f->free_s[b - 1] > v; b--)
                    f->free_s[b] = f->free_s[b - 1];
                f->free_s[b] = v;
            }
    }
    return 0;
}

/* walk for each pass, so each is compiled for its constant pass2 */
static int walk_pass1(swapplan *sp, const int32_t *sched, const sp_alloc *al)
{
    return walk(sp, sched, al, 0);
}
static int walk_pass2(swapplan *sp, const int32_t *sched, const sp_alloc *al)
{
    return walk(sp, sched, al, 1);
}

/* Whether s dies after its last use (held_until), at a position that does
   not access it. */
static inline int held_past_use(const swapplan *sp, int32_t s)
{
    int32_t n = sp->use_off[s + 1] - sp->use_off[s];
    return n > 0 && !sp->persist[s] && sp->death[s] > sp->use_pos[sp->use_off[s + 1] - 1];
}


/* The schedule's positions, deaths, use lists and time prefix, and the
   storages freed at a position that does not access them. -1 when the
   schedule is not a permutation of the ops. */
static int sp_schedule(swapplan *sp, const int32_t *schedule)
{
    const graph_profile *g = sp->g;
    int32_t no = sp->no, nt = sp->nt;
    if (graph_lifetimes_again(g, schedule, sp->pos_of_op, sp->death, sp->use_off, sp->use_pos,
                              sp->scratch))
        return -1;
    sp->t_at[0] = 0;
    for (int32_t i = 0; i < no; i++)
        sp->t_at[i + 1] = sp->t_at[i] + sp->op_time[schedule[i]];
    sp->t_end[0] = -INFINITY;
    memcpy(sp->t_end + 1, sp->t_at + 1, (size_t)no * sizeof *sp->t_end);
    /* storages the framework holds past their last use (held_until) are
       freed at a position that does not access them */
    memset(sp->hf_off, 0, ((size_t)no + 1) * sizeof(int32_t));
    int32_t n_held = 0, *held = sp->scratch;
    for (int32_t s = 0; s < nt; s++)
        if (held_past_use(sp, s)) {
            sp->hf_off[sp->death[s]]++;
            held[n_held++] = s;
        }
    graph_counts_to_offsets(sp->hf_off, no);
    for (int32_t i = 0; i < n_held; i++)
        sp->hf[sp->hf_off[sp->death[held[i]]]++] = held[i]; /* offsets advance to the ends */
    for (int32_t i = no; i > 0; i--) /* each end is the next start: shift back */
        sp->hf_off[i] = sp->hf_off[i - 1];
    sp->hf_off[0] = 0;
    return 0;
}

/* Room for al's classes in the per-class arrays (they grow, never shrink).
   0, or SW_ENOMEM. */
static int sp_classes_room(swapplan *sp, const sp_alloc *al)
{
    if (al->n_classes <= sp->n_classes_cap)
        return 0;
    sw_free(sp->class_n);
    sw_free(sp->class_free);
    sw_free(sp->cnt_eff);
    sw_free(sp->pbits);
    sw_free(sp->psum);
    sw_free(sp->hbits);
    sw_free(sp->hcnt);
    sw_free(sp->csize);
    sw_free(sp->f.obj_base);
    sw_free(sp->f.qhead);
    sw_free(sp->f.qtail);
    sw_free(sp->f.qn);
    sw_free(sp->f.snap_qhead);
    sw_free(sp->f.snap_qtail);
    sw_free(sp->f.snap_qn);
    size_t nc = (size_t)al->n_classes + 1;
    sp->csize = sw_malloc(nc * sizeof *sp->csize);
    sp->f.obj_base = sw_malloc(nc * sizeof(int32_t));
    sp->f.qhead = sw_malloc(nc * sizeof(int32_t));
    sp->f.qtail = sw_malloc(nc * sizeof(int32_t));
    sp->f.qn = sw_malloc(nc * sizeof(int32_t));
    sp->f.snap_qhead = sw_malloc(nc * sizeof(int32_t));
    sp->f.snap_qtail = sw_malloc(nc * sizeof(int32_t));
    sp->f.snap_qn = sw_malloc(nc * sizeof(int32_t));
    sp->pbits = sw_malloc(nc * (size_t)sp->pw * sizeof(uint64_t));
    sp->psum = sw_malloc(nc * (size_t)sp->psw * sizeof(uint64_t));
    sp->hbits = sw_calloc(nc * (size_t)sp->hw, sizeof(uint64_t));
    sp->hcnt = sw_calloc(nc, sizeof(int32_t));
    sp->cnt_eff = sw_malloc(((size_t)al->n_classes + 1) * sizeof(int32_t));
    sp->class_n = sw_malloc(((size_t)al->n_classes + 1) * sizeof(int32_t));
    sp->class_free = sw_malloc(((size_t)al->n_classes + 1) * sizeof(int32_t));
    if (!sp->class_n || !sp->class_free || !sp->cnt_eff || !sp->pbits || !sp->psum ||
        !sp->hbits || !sp->hcnt || !sp->csize || !sp->f.obj_base || !sp->f.qhead ||
        !sp->f.qtail || !sp->f.qn || !sp->f.snap_qhead || !sp->f.snap_qtail ||
        !sp->f.snap_qn) {
        sp->n_classes_cap = 0;
        return SW_ENOMEM;
    }
    sp->n_classes_cap = al->n_classes;
    return 0;
}

/* Record pass 2's events through the plan builder: the plan into *out (if
   out), its simulation into *r (if r). */
static int sp_record(swapplan *sp, const sp_alloc *al, plan **out, sim_result *r, sw_err *err)
{
    const graph_profile *g = sp->g;
    int32_t nt = sp->nt;
    int rc;
    int32_t *size_cls = (int32_t *)(uintptr_t)al->cls;
    mem_model *m = mem_pool_new(sp->sz.size, size_cls, sp->sz.n, sp->cnt_eff, al->n_classes);
    if (!m)
        return sw_fail(err, SW_ENOMEM, "out of memory");
    if (!sp->b)
        sp->b = pb_new(g, m, sp->budget, g->max_workspace);
    if (!sp->b) {
        mem_destroy(m);
        return sw_fail(err, SW_ENOMEM, "out of memory");
    }
    plan_builder *b = sp->b;
    pb_reset(b);
    pb_set_memory(b, m);
    for (int32_t s = 0; s < nt; s++)
        if (sp->in_r[s])
            pb_resident(b, s);
    for (size_t i = 0; i < sp->n_ev; i++) {
        switch (sp->ev_kind[i]) {
        case TASK_RUN: pb_run(b, sp->ev_x[i]); break;
        case TASK_SWAP_IN: pb_swap_in(b, sp->ev_x[i]); break;
        case TASK_SWAP_OUT: pb_swap_out(b, sp->ev_x[i]); break;
        default: pb_drop(b, sp->ev_x[i]); break;
        }
    }
    pb_end_iteration(b);
    plan *p = NULL;
    rc = pb_finish(b, &p, err);
    pb_set_memory(b, NULL);
    mem_destroy(m);
    if (rc)
        return rc;
    if (r) {
        rc = sim_plan(p, NULL, NULL, r, err);
        if (rc) {
            plan_free(p);
            return rc;
        }
    }
    if (out)
        *out = p;
    else
        plan_free(p);
    return 0;
}

int swapplan_make(swapplan *sp, const int32_t *schedule, const sp_alloc *al, double threshold,
                  plan **out, sim_result *r, sw_err *err)
{
    const graph_profile *g = sp->g;
    if (out)
        *out = NULL;
    int32_t nt = sp->nt;
    if (sp_schedule(sp, schedule))
        return sw_fail(err, SW_EINVAL, "schedule is not a permutation of the ops");
    /* classes */
    if (sp_classes_room(sp, al))
        return sw_fail(err, SW_ENOMEM, "out of memory");
    int32_t *members = sp->class_n; /* count storages per class */
    for (int32_t c = 0; c < al->n_classes; c++)
        members[c] = 0;
    int64_t pool = 0;
    for (int32_t c = 0; c < al->n_classes; c++)
        if (al->cnt[c] < 0)
            return sw_fail(err, SW_EINVAL, "negative object count for class %d", c);
    int64_t *csize = sp->csize;
    for (int32_t s = 0; s < nt; s++) {
        int32_t si = sp->sz.of[s];
        sp->cls_of[s] = si >= 0 ? al->cls[si] : -1;
        if (si >= 0) {
            if (al->cls[si] < 0 || al->cls[si] >= al->n_classes)
                return sw_fail(err, SW_EINVAL, "size %d maps to class %d of %d", si, al->cls[si],
                               al->n_classes);
            members[al->cls[si]]++;
        }
    }
    for (int32_t c = 0; c < al->n_classes; c++) {
        /* objects beyond the class's number of tensors could never be used */
        sp->cnt_eff[c] = al->cnt[c] < members[c] ? al->cnt[c] : members[c];
    }
    /* class object sizes: the largest size mapped to each */
    for (int32_t c = 0; c < al->n_classes; c++)
        csize[c] = 0;
    for (int32_t i = 0; i < sp->sz.n; i++)
        if (sp->sz.size[i] > csize[al->cls[i]])
            csize[al->cls[i]] = sp->sz.size[i];
    for (int32_t c = 0; c < al->n_classes; c++)
        pool += csize[c] * sp->cnt_eff[c];
    if (pool > sp->pool_bytes) {
        return sw_fail(err, SW_ENOFIT, "does not fit: the pool needs %lld bytes, %lld available",
                       (long long)pool, (long long)sp->pool_bytes);
    }
    /* the eviction threshold per storage, kept while the threshold is the same */
    if (memcmp(&threshold, &sp->lim_thr, sizeof threshold)) {
        for (int32_t s = 0; s < nt; s++)
            sp->lim[s] = threshold * (double)g->bytes[s] / sp->h2d_bw;
        sp->lim_thr = threshold;
    }
    /* pass 1: nothing resident at start; the parameters resident at its end
       are the initially resident set */
    if (sp_reserve(sp))
        return sw_fail(err, SW_ENOMEM, "out of memory");
    sp->n_ev = 0;
    memset(sp->in_r, 0, (size_t)nt);
    int rc = walk_pass1(sp, schedule, al);
    if (rc) {
        return rc == SW_ENOFIT ? sw_fail(err, SW_ENOFIT, "does not fit: %s", sp->why)
                               : sw_fail(err, rc, "out of memory");
    }
    for (int32_t s = 0; s < nt; s++)
        sp->in_r[s] = (sp->tflag[s] & (TF_ROOT | TF_PERSIST)) == (TF_ROOT | TF_PERSIST) &&
                      sp->st[s].res;
    /* pass 2: that set resident at start; pressure it causes drops members */
    rc = walk_pass2(sp, schedule, al);
    if (rc) {
        return rc == SW_ENOFIT ? sw_fail(err, SW_ENOFIT, "does not fit: %s", sp->why)
                               : sw_fail(err, rc, "out of memory");
    }
    /* an evaluation: the fast path, unless it declines */
    if (!out && r && sp->fast) {
        rc = sp_fast_eval(sp, r, err, al);
        if (rc != FAST_DECLINE) {
            sp->n_fast += rc == 0;
            return rc;
        }
    }
    return sp_record(sp, al, out, r, err);
}
