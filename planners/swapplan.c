/* swapplan.c: SwapAdvisor's swap planner (Belady eviction over a size-class
   pool, two passes for the steady state), recording through the builder,
   or for the GA's evaluations straight into the simulator's compiled form. */
#include "swapplan.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The fast evaluation path's state (see fast_eval), kept across calls. */
typedef struct sp_fast {
    int32_t *rset;             /* the resident set, ascending */
    int32_t n_r;               /* its size */
    int32_t E;                 /* tasks (events), end-of-iteration ones included */
    size_t cap_e;              /* capacity of the per-event arrays */
    uint8_t *ev_st;            /* per event: its stream */
    int32_t *stream_idx;       /* per event: its index in its stream */
    int32_t n_s[STREAM__COUNT];/* per stream: events */
    int32_t last_of[STREAM__COUNT]; /* per stream: its last event */
    int32_t *place_off;        /* per event: CSR offsets into place_res */
    int32_t *place_res;        /* residencies placed, in event order */
    size_t n_place, cap_place;
    int32_t *free_off;         /* per event: CSR offsets into free_s */
    int64_t *ev_alloc, *ev_freeb; /* per event: bytes it places, bytes it frees implicitly
                                  (pass 0) */
    int32_t *free_s;           /* storages freed implicitly, by event, ascending within one */
    size_t n_free;
    int32_t *res_s, *res_obj;  /* per residency: storage, its pool object (-1: none yet, or
                                  zero bytes) */
    size_t n_res, cap_res;
    int32_t *cur_res, *rix, *final_res; /* per storage: current residency, its residency at
                                  the start (members of R), residency open at the end (all
                                  -1 for none) */
    int64_t *place_ref, *user_ref, *copyout_ref; /* per storage: last placement, compute use
                                  since, swap-out, as event references (fref), -1 none */
    int32_t *vc;               /* [2][E][3] vector clocks over the streams */
    int32_t *dep, *pdep;       /* per event: up to two edges each, -1 none */
    int32_t *obj_base, *qhead, *qtail, *qn; /* per class: first flat object, free queue
                                  head and tail (-1 empty), free objects */
    int32_t *onext, *oprev;    /* per flat object: free queue links */
    uint8_t *ofree;            /* per flat object: free */
    int64_t *obj_tag;          /* per flat object: last release, or -2 occupied */
    int64_t capacity;          /* the pool's bytes */
    int32_t n_obj, n_classes;  /* the pool's objects and classes */
    int32_t lis[STREAM__COUNT];/* pass 0: per stream, the last event processed */
    /* the state after the first attempt's pass 0 (see fast_resume) */
    int32_t *snap_rcur;        /* per storage: open residency after the first attempt's events */
    int32_t *snap_cur;
    int64_t *snap_place_ref, *snap_user_ref, *snap_copyout_ref, *snap_obj_tag;
    int32_t *snap_onext, *snap_oprev, *snap_qhead, *snap_qtail, *snap_qn;
    uint8_t *snap_ofree;
    int32_t snap_lis[STREAM__COUNT], snap_n_s[STREAM__COUNT], snap_last_of[STREAM__COUNT];
    size_t snap_n_res, snap_n_place;
    int32_t *reloc, *all;      /* tensors that cannot come home: this attempt's, all so far */
    size_t n_reloc, cap_reloc, cap_all;
    sim_prog *prog;            /* the compiled program, rebuilt in place */
    sim_ws *ws;                /* the simulator's scratch */
} sp_fast;

/* A storage as the walk sees it, one cache line's half: everything its
   loop over an op's accesses reads and writes. */
typedef struct sp_st {
    int32_t nk;                /* index in use_pos of its next use (use_off[s] + uses passed) */
    int32_t ne;                /* use_off[s + 1]: its uses end there */
    int32_t death;             /* position of its death (graph_lifetimes) */
    int32_t cls;               /* its class, -1 for zero bytes or non-storage */
    int32_t lu;                /* 0: never used yet; else 1 + the position of its last use */
    uint32_t pin;              /* the epoch of the op using it */
    uint8_t res, hv, used;     /* resident, host copy valid, used this pass */
    uint8_t fl;                /* TF_* bits */
    uint8_t held;              /* in its class's held set (resident, no use left) */
    uint8_t bhv;               /* pass 2: the builder's host-valid flag (as hv, except that a
                                  drop leaves it, and a member of R that leaves R unused
                                  takes the value of a storage never in R) */
} sp_st;

struct swapplan {
    const graph_profile *g;
    int64_t budget, pool_bytes;
    sp_sizes sz;
    int32_t nt, no;
    double h2d_bw;
    double *lim;               /* per storage: threshold x bytes / h2d_bw, how long ago a
                                  victim must have been used (s), for threshold lim_thr */
    double lim_thr;            /* the threshold lim holds (NAN: none yet) */
    /* per call */
    int32_t *pos_of_op;
    double *t_at;              /* compute time before position i (n + 1) */
    int32_t *use_off, *use_pos;/* per storage: schedule positions using it (CSR; the offsets
                                  are the profile's, set once) */
    int32_t *scratch;          /* per storage: scratch (graph_lifetimes_again, the held) */
    int32_t *death;            /* per storage: position of its death (graph_lifetimes) */
    int32_t *hf_off, *hf;      /* per position: storages held past their last use, freed there */
    sp_st *st;                 /* per storage: the walk's state (compact for its hot loop) */
    double *t_end;             /* t_end[0] = -inf, t_end[i + 1] = t_at[i + 1]: when the op at
                                  position i ends (the times sp_st.lu refers to) */
    uint8_t *in_r, *persist;
    uint32_t epoch;            /* increases with every op walked */
    int32_t *cls_of;           /* per storage: class, -1 for zero bytes or non-storage */
    int32_t *class_n;          /* per class: scratch (its storages) */
    int32_t *class_free;       /* per class: free objects */
    int32_t *cnt_eff;          /* per class: objects used (at most the class's storages) */
    /* Belady's order over each class's resident storages (see need): */
    uint64_t *pbits;           /* per class, pw words: bit p set when a resident storage of
                                  the class may have its next use at position p (0 .. 2n - 1;
                                  n + q: a persistent one's first use q, next iteration) */
    uint64_t *psum;            /* per class, psw words: bit w set when word w of pbits is not 0 */
    uint64_t *hbits;           /* per class, hw words: the held set, resident storages with no
                                  use left (held by the framework until their death), by id */
    int32_t *hcnt;             /* per class: storages in the held set */
    int32_t pw, psw, hw;       /* words per class of pbits, psum, hbits */
    int32_t *cand;             /* need's scratch: one position's storages (max_acc) */
    int naive;                 /* victims by sorting every resident storage (tests) */
    uint64_t *naive_buf;       /* its scratch: keys (nt) */
    int32_t n_classes_cap;
    uint8_t *ev_kind;          /* the tasks recorded: kind (TASK_*) */
    int32_t *ev_x;             /* and op or storage */
    size_t n_ev, cap_ev;
    size_t e_max;              /* pass 2's events at most (sp_reserve; 0: not reserved yet) */
    int32_t *pers, n_pers;     /* the persistent storages, ascending */
    plan_builder *b;
    int64_t *csize;            /* per class: object size (the largest size mapped to it) */
    uint8_t *tflag;            /* per tensor: TF_* bits (profile fields, compact for hot loops) */
    int32_t *held;             /* per tensor: held_until */
    double *op_time;           /* per op: compute time (s) */
    int32_t *mc_off, *mc_idx;  /* the ops' distinct multisets of size indices (CSR over
                                  groups; swapplan_min_counts needs one op of each) */
    int32_t n_mc;              /* how many */
    int fast;                  /* evaluate through the fast path (default 1) */
    int64_t n_fast;            /* evaluations the fast path completed */
    sp_fast f;                 /* the fast evaluation path's buffers */
    char why[256];
};

#define SP_WALK_MAX 8192 /* entries need's walk visits at most */

#define TF_ROOT 1     /* a storage (root tensor) */
#define TF_EXTERNAL 2 /* no producer: its host copy exists at start */
#define TF_PERSIST 4  /* persistent */

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

/* room for n tasks */
static int grow_ev(swapplan *sp, size_t n)
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

static inline int push_ev(swapplan *sp, int kind, int32_t x)
{
    if (sp->n_ev >= sp->cap_ev && grow_ev(sp, sp->n_ev + 1))
        return SW_ENOMEM;
    sp->ev_kind[sp->n_ev] = (uint8_t)kind;
    sp->ev_x[sp->n_ev] = x;
    sp->n_ev++;
    return 0;
}

/* Pass 2 records event (kind, x) with what the fast path needs of it: its
   stream and index there, no edges yet, and where its placements and
   implicit frees start. The capacities are reserved before the walk
   (sp_reserve). */
static inline void rec_ev(swapplan *sp, int kind, int32_t x)
{
    sp_fast *f = &sp->f;
    size_t e = sp->n_ev++;
    int st = plan_task_stream(kind);
    sp->ev_kind[e] = (uint8_t)kind;
    sp->ev_x[e] = x;
    f->ev_st[e] = (uint8_t)st;
    f->stream_idx[e] = f->n_s[st]++;
    f->last_of[st] = (int32_t)e;
    f->dep[2 * e] = f->dep[2 * e + 1] = f->pdep[2 * e] = f->pdep[2 * e + 1] = -1;
    f->place_off[e] = (int32_t)f->n_place;
    f->free_off[e] = (int32_t)f->n_free;
}

/* a residency of s, placed by the event recorded last */
static inline void rec_place(sp_fast *f, int32_t s)
{
    int32_t r = (int32_t)f->n_res++;
    f->res_s[r] = s;
    f->res_obj[r] = -1;
    f->place_res[f->n_place++] = r;
    f->cur_res[s] = r;
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

/* One pass over the schedule. pass2: R (in_r) is resident at start. */
static inline __attribute__((always_inline)) int walk(swapplan *sp, const int32_t *sched,
                                                      const sp_alloc *al, const int pass2)
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

/* ------------------------------------------------------------------ */
/* The fast evaluation path: the builder's placement and edge inference
   (sim/builder.c, pb_finish) specialised to this planner's plans (a pool,
   tasks run, swap-in, swap-out, drop), writing the simulator's compiled
   form directly instead of a plan, into buffers kept across calls. It
   reproduces the builder's result exactly; whatever it does not handle
   (a placement the pool cannot make, a swap-in with no copy to read, a
   release of what is not resident) it declines, and the builder path runs instead,
   so errors and messages are the builder's. */

#define FAST_DECLINE 1
#define FREF_NONE (-1)
#define FREF_LIVE (-2)

/* A reference to event e of pass p (a task of the first or the second
   iteration): the pass (bit 62), its stream (bits 60-61), its position in
   the stream over both passes (bits 32-59: p x the stream's events + its
   index there) and the event (bits 0-31). Two references to one stream and
   pass compare as their positions; FREF_NONE and FREF_LIVE are below all. */
static inline int64_t fref(int p, int st, int32_t pos, int32_t e)
{
    return ((int64_t)p << 62) | ((int64_t)st << 60) | ((int64_t)pos << 32) |
           (int64_t)(uint32_t)e;
}
static inline int fref_pass(int64_t r) { return (int)(r >> 62); }
static inline int fref_stream(int64_t r) { return (int)(r >> 60) & 3; }
static inline int32_t fref_pos(int64_t r) { return (int32_t)((r >> 32) & 0x0fffffff); }
static inline int32_t fref_ev(int64_t r) { return (int32_t)(r & 0xffffffff); }

/* grow the per-event arrays to e events */
static int fast_reserve_events(swapplan *sp, size_t e)
{
    sp_fast *f = &sp->f;
    if (e <= f->cap_e)
        return 0;
    size_t c = f->cap_e ? f->cap_e : 1024;
    while (c < e)
        c *= 2;
    int ok = 1;
#define FGROW(a, n)                                                                                \
    do {                                                                                           \
        void *x_ = sw_realloc(f->a, (n) * sizeof *f->a);                                           \
        if (x_)                                                                                    \
            f->a = x_;                                                                             \
        else                                                                                       \
            ok = 0;                                                                                \
    } while (0)
    FGROW(ev_st, c + 1);
    FGROW(stream_idx, c + 1);
    FGROW(place_off, c + 1);
    FGROW(free_off, c + 1);
    FGROW(ev_alloc, c + 1);
    FGROW(ev_freeb, c + 1);
    FGROW(vc, 6 * c + 1);
    FGROW(dep, 2 * c + 1);
    FGROW(pdep, 2 * c + 1);
#undef FGROW
    if (!ok)
        return SW_ENOMEM;
    f->cap_e = c;
    return 0;
}

/* room for c residencies */
static int fast_grow_res(sp_fast *f, size_t c)
{
    if (c <= f->cap_res)
        return 0;
    int32_t *a = sw_realloc(f->res_s, c * sizeof *a);
    if (a)
        f->res_s = a;
    int32_t *o = sw_realloc(f->res_obj, c * sizeof *o);
    if (o)
        f->res_obj = o;
    if (!a || !o)
        return SW_ENOMEM;
    f->cap_res = c;
    return 0;
}

static inline int fast_new_res(sp_fast *f, int32_t s)
{
    if (f->n_res >= f->cap_res && fast_grow_res(f, f->cap_res ? 2 * f->cap_res : 1024))
        return -1;
    int32_t r = (int32_t)f->n_res++;
    f->res_s[r] = s;
    f->res_obj[r] = -1;
    return r;
}

static inline int fast_push_place(sp_fast *f, int32_t r)
{
    if (f->n_place >= f->cap_place && SW_GROW(f->place_res, f->cap_place, f->n_place + 1))
        return -1;
    f->place_res[f->n_place++] = r;
    return 0;
}

/* the pool: per class a queue of free objects in release order */
static inline void fpool_unlink(sp_fast *f, int32_t c, int32_t obj)
{
    int32_t b = f->obj_base[c], x = b + obj;
    int32_t nx = f->onext[x], pv = f->oprev[x];
    if (pv >= 0)
        f->onext[b + pv] = nx;
    else
        f->qhead[c] = nx;
    if (nx >= 0)
        f->oprev[b + nx] = pv;
    else
        f->qtail[c] = pv;
    f->ofree[x] = 0;
    f->qn[c]--;
}

static inline void fpool_append(sp_fast *f, int32_t c, int32_t obj)
{
    int32_t b = f->obj_base[c], x = b + obj;
    f->onext[x] = -1;
    f->oprev[x] = f->qtail[c];
    if (f->qtail[c] >= 0)
        f->onext[b + f->qtail[c]] = obj;
    else
        f->qhead[c] = obj;
    f->qtail[c] = obj;
    f->ofree[x] = 1;
    f->qn[c]++;
}

/* A candidate edge from ref to an event on stream st, filed per stream in
   cand: pass 0 files its own events (the intra-iteration edges), pass 1
   only pass 0's (the edges from the previous iteration; its own events'
   edges are pass 0's). */
static inline void fast_cand(int64_t *cand, int p, int st, int64_t ref)
{
    if (ref < 0 || (p == 1 && fref_pass(ref) == 1))
        return;
    int s = fref_stream(ref);
    if (s != st && ref > cand[s]) /* the same stream: implied by its order; the
                                     candidates of one call are of one pass */
        cand[s] = ref;
}

static inline int32_t fast_pos(const sp_fast *f, int p, int32_t e)
{
    return p * f->n_s[f->ev_st[e]] + f->stream_idx[e];
}

static inline int32_t *fast_vc(const sp_fast *f, int p, int32_t e)
{
    return f->vc + ((size_t)p * (size_t)f->E + (size_t)e) * 3;
}

static inline void fast_join(int32_t *dst, const int32_t *src)
{
    for (int s = 0; s < STREAM__COUNT; s++)
        if (src[s] > dst[s])
            dst[s] = src[s];
}

/* fast_choose's test of the candidate on stream s (a constant: always
   inlined, so each stream's test is straight-line code) */
static inline __attribute__((always_inline)) void fast_keep(const int32_t *vc,
                                                            const int64_t *cand, const int s,
                                                            int64_t *keep, int32_t *kpos,
                                                            int *ks, int *nk)
{
    if (cand[s] < 0)
        return;
    int32_t pos = fref_pos(cand[s]);
    if (vc[s] < pos) {
        keep[*nk] = cand[s];
        kpos[*nk] = pos;
        ks[(*nk)++] = s;
    }
}

/* the builder's choose(): at most two candidates not implied by vc.
   cand[s] is on stream s (fast_cand files it there). */
static inline __attribute__((always_inline)) void fast_choose(const sp_fast *f, int32_t *vc,
                                                              const int64_t *cand, int32_t *out)
{
    int64_t keep[3];
    int32_t kpos[3];
    int ks[3], nk = 0;
    fast_keep(vc, cand, 0, keep, kpos, ks, &nk);
    fast_keep(vc, cand, 1, keep, kpos, ks, &nk);
    fast_keep(vc, cand, 2, keep, kpos, ks, &nk);
    out[0] = out[1] = -1;
    if (nk == 0)
        return;
    if (nk == 2) {
        const int32_t *v0 = fast_vc(f, fref_pass(keep[0]), fref_ev(keep[0]));
        const int32_t *v1 = fast_vc(f, fref_pass(keep[1]), fref_ev(keep[1]));
        if (v0[ks[1]] >= kpos[1])
            nk = 1;
        else if (v1[ks[0]] >= kpos[0]) {
            keep[0] = keep[1];
            nk = 1;
        }
    }
    for (int i = 0; i < nk; i++) {
        fast_join(vc, fast_vc(f, fref_pass(keep[i]), fref_ev(keep[i])));
        out[i] = fref_ev(keep[i]);
    }
}

/* release the residency of s at event me (explicit or implicit) */
static inline void fast_release(sp_fast *f, const swapplan *sp, int p, int32_t s, int64_t me)
{
    int32_t r = f->cur_res[s];
    if (sp->g->bytes[s] > 0) {
        int32_t c = sp->cls_of[s], x = f->obj_base[c] + f->res_obj[r];
        if (p == 0)
            fpool_append(f, c, f->res_obj[r]);
        f->obj_tag[x] = me;
    }
    f->cur_res[s] = -1;
    f->place_ref[s] = f->user_ref[s] = FREF_NONE;
}

/* The builder's process_pass from event e0 on: pass 0 places and picks
   the intra-iteration edges, pass 1 the edges from the previous iteration.
   last_in_stream (per stream, the last event processed, -1) is updated. */
static inline int fast_pass(swapplan *sp, const int p, int32_t e0, int32_t *last_in_stream)
{
    sp_fast *f = &sp->f;
    const graph_profile *g = sp->g;
    int32_t E = f->E;
    unsigned covered = 0, streams = 0; /* pass 1: the streams covered, and those with events */
    for (int s = 0; s < STREAM__COUNT; s++)
        if (f->n_s[s] > 0)
            streams |= 1u << s;
    for (int32_t e = e0; e < E; e++) {
        int kind = sp->ev_kind[e];
        int32_t x = sp->ev_x[e];
        int st = f->ev_st[e];
        int64_t cand[STREAM__COUNT] = {FREF_NONE, FREF_NONE, FREF_NONE};
        int32_t mpos = fast_pos(f, p, e);
        int64_t me = fref(p, st, mpos, e);
        int64_t alloc = 0, freeb = 0;
        for (int32_t k = f->place_off[e]; k < f->place_off[e + 1]; k++) {
            int32_t r = f->place_res[k], s = f->res_s[r];
            int64_t bytes = g->bytes[s];
            alloc += bytes;
            if (bytes > 0) {
                int32_t c = sp->cls_of[s];
                if (p == 0) {
                    if (f->final_res[s] == r && sp->in_r[s]) {
                        /* returns home; if its home is taken, it comes home at
                           the end instead (pb_finish): placed anywhere now */
                        int32_t home = f->res_obj[f->rix[s]];
                        if (f->ofree[f->obj_base[c] + home]) {
                            fpool_unlink(f, c, home);
                            f->res_obj[r] = home;
                        } else {
                            if (SW_GROW(f->reloc, f->cap_reloc, f->n_reloc + 1))
                                return SW_ENOMEM;
                            f->reloc[f->n_reloc++] = s;
                            if (f->qn[c] == 0)
                                return FAST_DECLINE;
                            f->res_obj[r] = f->qhead[c];
                            fpool_unlink(f, c, f->qhead[c]);
                        }
                    } else {
                        if (f->qn[c] == 0)
                            return FAST_DECLINE;
                        f->res_obj[r] = f->qhead[c];
                        fpool_unlink(f, c, f->qhead[c]);
                    }
                }
                int64_t *tag = &f->obj_tag[f->obj_base[c] + f->res_obj[r]];
                if (*tag == FREF_LIVE)
                    return FAST_DECLINE;
                fast_cand(cand, p, st, *tag);
                *tag = FREF_LIVE;
            }
            f->cur_res[s] = r;
            f->place_ref[s] = me;
            f->user_ref[s] = FREF_NONE;
            if (kind == TASK_SWAP_IN) {
                int64_t co = f->copyout_ref[s];
                if (co >= 0 && fref_pass(co) == p)
                    fast_cand(cand, p, st, co);
                else if (sp->tflag[s] & TF_PERSIST)
                    fast_cand(cand, p, st, co);
                else if (!(sp->tflag[s] & TF_EXTERNAL))
                    return FAST_DECLINE;
            }
        }
        if (kind == TASK_RUN) {
            for (int32_t k = g->acc_off[x]; k < g->acc_off[x + 1]; k++) {
                if (g->acc_flag[k] & GA_CREATE)
                    continue;
                int32_t s = g->acc[k];
                fast_cand(cand, p, st, f->place_ref[s]);
                f->user_ref[s] = me;
            }
        } else if (kind == TASK_SWAP_OUT || kind == TASK_DROP) {
            if (f->cur_res[x] < 0)
                return FAST_DECLINE;
            fast_cand(cand, p, st, f->user_ref[x]);
            fast_cand(cand, p, st, f->place_ref[x]);
            fast_release(f, sp, p, x, me);
            if (kind == TASK_SWAP_OUT)
                f->copyout_ref[x] = me;
        }
        for (int32_t k = f->free_off[e]; k < f->free_off[e + 1]; k++) {
            freeb += g->bytes[f->free_s[k]];
            fast_release(f, sp, p, f->free_s[k], me);
        }
        if (p == 0) {
            f->ev_alloc[e] = alloc;
            f->ev_freeb[e] = freeb;
        }
        int32_t *vc = fast_vc(f, p, e);
        int32_t prev = last_in_stream[st];
        if (prev >= 0)
            memcpy(vc, fast_vc(f, p, prev), 3 * sizeof *vc);
        else if (p == 1 && f->n_s[st] > 0)
            memcpy(vc, fast_vc(f, 0, f->last_of[st]), 3 * sizeof *vc);
        else
            vc[0] = vc[1] = vc[2] = -1;
        if (p == 0) {
            fast_choose(f, vc, cand, f->dep + 2 * (size_t)e);
        } else {
            for (size_t i = 0; i < 2; i++)
                if (f->dep[2 * (size_t)e + i] >= 0)
                    fast_join(vc, fast_vc(f, 1, f->dep[2 * (size_t)e + i]));
            fast_choose(f, vc, cand, f->pdep + 2 * (size_t)e);
        }
        vc[st] = mpos;
        last_in_stream[st] = e;
        /* pass 1: once an event's clock covers every stream's last pass 0
           event, every later event of its stream (whose clock starts from
           this one and only grows) has each pass 0 candidate implied, so
           no edge from the previous iteration; when that holds on every
           stream, the rest of the pass adds nothing. Nothing else it
           computes differs from pass 0, whose checks all passed: from its
           first write in this pass each storage's and object's state is
           pass 0's at the same event, and before it pass 0's end state,
           which is its start state (the resident set, every one home). */
        if (p == 1) {
            if (vc[0] >= f->n_s[0] - 1 && vc[1] >= f->n_s[1] - 1 && vc[2] >= f->n_s[2] - 1)
                covered |= 1u << st;
            if (covered == streams)
                break;
        }
    }
    return 0;
}

/* fast_pass for each pass, so each is compiled for its constant p */
static int fast_pass0(swapplan *sp, int32_t e0, int32_t *lis) { return fast_pass(sp, 0, e0, lis); }
static int fast_pass1(swapplan *sp, int32_t *lis) { return fast_pass(sp, 1, 0, lis); }

/* pb_end_iteration on pass 2's end state: the persistent storages
   resident but not in R leave (copied if their host copy is stale), then
   the members of R not resident come back, with their residencies; R in
   f->rset, ascending, and each member's final residency. Pass 2 recorded
   the rest as the builder would build it (its placements, implicit frees
   and host-valid flags): tests/test_swapplan_fast compares the two paths. */
static void fast_end(swapplan *sp)
{
    sp_fast *f = &sp->f;
    f->n_r = 0;
    for (int32_t i = 0; i < sp->n_pers; i++) {
        int32_t s = sp->pers[i];
        sp_st *x = &sp->st[s];
        if (sp->in_r[s]) {
            f->rset[f->n_r++] = s;
        } else if (x->res) {
            rec_ev(sp, x->bhv ? TASK_DROP : TASK_SWAP_OUT, s);
            f->cur_res[s] = -1;
            x->bhv = 1;
            x->res = 0;
        }
    }
    for (int32_t i = 0; i < f->n_r; i++) {
        int32_t s = f->rset[i];
        if (!sp->st[s].res) {
            rec_ev(sp, TASK_SWAP_IN, s);
            rec_place(f, s);
            sp->st[s].res = 1;
        }
        f->final_res[s] = f->cur_res[s];
    }
    f->E = (int32_t)sp->n_ev;
    f->place_off[f->E] = (int32_t)f->n_place;
    f->free_off[f->E] = (int32_t)f->n_free;
}

/* The first attempt of the builder's finish_once: residencies, placements
   and pass 0's edges. 0 (then f->n_reloc tensors could not come home, and
   pass 1 is still to do), FAST_DECLINE or SW_ENOMEM. */
static int fast_attempt(swapplan *sp, const sp_alloc *al)
{
    sp_fast *f = &sp->f;
    const graph_profile *g = sp->g;
    int32_t nt = sp->nt;
    f->n_reloc = 0;
    memcpy(f->snap_rcur, f->cur_res, (size_t)nt * sizeof *f->cur_res);
    /* the pool: objects of each class free, lowest index first */
    int64_t capacity = 0;
    int32_t total = 0;
    for (int32_t c = 0; c < al->n_classes; c++) {
        f->obj_base[c] = total;
        f->qhead[c] = f->qtail[c] = -1;
        f->qn[c] = 0;
        total += sp->cnt_eff[c];
        capacity += sp->csize[c] * sp->cnt_eff[c];
    }
    if (capacity + g->max_workspace > sp->budget)
        return FAST_DECLINE;
    f->capacity = capacity;
    f->n_obj = total;
    for (int32_t c = 0; c < al->n_classes; c++)
        for (int32_t i = 0; i < sp->cnt_eff[c]; i++)
            fpool_append(f, c, i);
    for (int32_t i = 0; i < total; i++)
        f->obj_tag[i] = FREF_NONE;
    for (int32_t s = 0; s < nt; s++) {
        f->cur_res[s] = -1;
        f->place_ref[s] = f->user_ref[s] = f->copyout_ref[s] = FREF_NONE;
    }
    for (int32_t i = 0; i < f->n_r; i++) {
        int32_t s = f->rset[i], r = f->rix[s]; /* its residency at the start */
        f->cur_res[s] = r;
        if (g->bytes[s] <= 0)
            continue;
        int32_t c = sp->cls_of[s];
        if (f->qn[c] == 0)
            return FAST_DECLINE;
        f->res_obj[r] = f->qhead[c];
        fpool_unlink(f, c, f->qhead[c]);
        f->obj_tag[f->obj_base[c] + f->res_obj[r]] = FREF_LIVE;
    }
    for (int st = 0; st < STREAM__COUNT; st++)
        f->lis[st] = -1;
    return fast_pass0(sp, 0, f->lis);
}

/* Save (save = 1) or restore the state pass 0 leaves after the first
   attempt's events: the pool, the object tags, the per-storage references. */
static void fast_snapshot(swapplan *sp, int save)
{
    sp_fast *f = &sp->f;
    size_t nt = (size_t)sp->nt, no = (size_t)f->n_obj, nc = (size_t)f->n_classes;
#define SNAP(a, b, n)                                                                              \
    do {                                                                                           \
        if (save)                                                                                  \
            memcpy(f->b, f->a, (n) * sizeof *f->a);                                                \
        else                                                                                       \
            memcpy(f->a, f->b, (n) * sizeof *f->a);                                                \
    } while (0)
    SNAP(cur_res, snap_cur, nt);
    SNAP(place_ref, snap_place_ref, nt);
    SNAP(user_ref, snap_user_ref, nt);
    SNAP(copyout_ref, snap_copyout_ref, nt);
    SNAP(onext, snap_onext, no);
    SNAP(oprev, snap_oprev, no);
    SNAP(ofree, snap_ofree, no);
    SNAP(obj_tag, snap_obj_tag, no);
    SNAP(qhead, snap_qhead, nc);
    SNAP(qtail, snap_qtail, nc);
    SNAP(qn, snap_qn, nc);
    SNAP(lis, snap_lis, (size_t)STREAM__COUNT);
#undef SNAP
}

/* A later attempt: the events from n_orig on (tensors leaving and coming
   home) appended to the first attempt's. Everything before n_orig is as
   the first attempt left it (a relocated tensor's earlier residency was
   placed as an ordinary one there already), so only the new events are
   processed, from the saved state. Returns as fast_attempt. */
static int fast_resume(swapplan *sp, int32_t n_orig)
{
    sp_fast *f = &sp->f;
    int32_t nt = sp->nt;
    int rc = fast_reserve_events(sp, sp->n_ev + 1);
    if (rc)
        return rc;
    f->E = (int32_t)sp->n_ev;
    f->n_reloc = 0;
    int32_t E = f->E;
    for (int st = 0; st < STREAM__COUNT; st++) {
        f->n_s[st] = f->snap_n_s[st];
        f->last_of[st] = f->snap_last_of[st];
    }
    for (int32_t e = n_orig; e < E; e++) {
        int st = plan_task_stream(sp->ev_kind[e]);
        f->ev_st[e] = (uint8_t)st;
        f->stream_idx[e] = f->n_s[st]++;
        f->last_of[st] = e;
        f->dep[2 * e] = f->dep[2 * e + 1] = f->pdep[2 * e] = f->pdep[2 * e + 1] = -1;
    }
    /* residencies of the new events (swap-ins place, the others release) */
    f->n_res = f->snap_n_res;
    f->n_place = f->snap_n_place;
    memcpy(f->cur_res, f->snap_rcur, (size_t)nt * sizeof *f->cur_res);
    for (int32_t e = n_orig; e < E; e++) {
        int32_t x = sp->ev_x[e];
        f->place_off[e] = (int32_t)f->n_place;
        if (sp->ev_kind[e] == TASK_SWAP_IN) {
            int32_t r = fast_new_res(f, x);
            if (r < 0 || fast_push_place(f, r))
                return SW_ENOMEM;
            f->cur_res[x] = r;
        } else {
            if (sp->ev_kind[e] == TASK_RUN || f->cur_res[x] < 0)
                return FAST_DECLINE;
            f->cur_res[x] = -1;
        }
    }
    f->place_off[E] = (int32_t)f->n_place;
    for (int32_t e = n_orig + 1; e <= E; e++)
        f->free_off[e] = f->free_off[n_orig];
    for (int32_t s = 0; s < nt; s++) {
        if (!(sp->tflag[s] & TF_PERSIST))
            continue;
        f->final_res[s] = f->cur_res[s];
        if (f->cur_res[s] >= 0 && !sp->in_r[s])
            return FAST_DECLINE;
    }
    for (int32_t i = 0; i < f->n_r; i++)
        if (f->final_res[f->rset[i]] < 0)
            return FAST_DECLINE;
    fast_snapshot(sp, 0);
    return fast_pass0(sp, n_orig, f->lis);
}

/* The capacities pass 2 records into (rec_ev, rec_place), reserved once:
   per op its run, per access at most a swap-in or a create and one
   eviction, then at most one end-of-iteration task per persistent storage;
   residencies and placements: R's, the swap-ins and creates, the end's. */
static int sp_reserve(swapplan *sp)
{
    if (sp->e_max)
        return 0;
    sp_fast *f = &sp->f;
    size_t n_acc = (size_t)sp->g->acc_off[sp->no], n_pers = (size_t)sp->n_pers;
    size_t e = (size_t)sp->no + 2 * n_acc + n_pers + 1, r = n_acc + 2 * n_pers + 1;
    if (grow_ev(sp, e) || fast_reserve_events(sp, e + 1) || fast_grow_res(f, r) ||
        (r > f->cap_place && SW_GROW(f->place_res, f->cap_place, r)))
        return SW_ENOMEM;
    sp->e_max = e;
    return 0;
}

/* Evaluate: the builder's plan, compiled and simulated, without the plan.
   0, FAST_DECLINE, or an error code (with err). */
static int fast_eval(swapplan *sp, sim_result *r, sw_err *err, const sp_alloc *al)
{
    sp_fast *f = &sp->f;
    const graph_profile *g = sp->g;
    size_t n_ev0 = sp->n_ev;
    fast_end(sp);
    int rc = 0;
    /* pb_finish: tensors that cannot come home leave again (copied if
       dirty) and come home at the end; rebuilt, at most four attempts */
    size_t n_orig = sp->n_ev, n_all = 0;
    int attempt;
    for (attempt = 0; attempt < 4 && !rc; attempt++) {
        rc = attempt ? fast_resume(sp, (int32_t)n_orig) : fast_attempt(sp, al);
        if (rc || !f->n_reloc)
            break;
        if (!attempt) {
            f->n_classes = al->n_classes;
            fast_snapshot(sp, 1);
            f->snap_n_res = f->n_res;
            f->snap_n_place = f->n_place;
            for (int st = 0; st < STREAM__COUNT; st++) {
                f->snap_n_s[st] = f->n_s[st];
                f->snap_last_of[st] = f->last_of[st];
            }
        }
        if (SW_GROW(f->all, f->cap_all, n_all + f->n_reloc)) {
            rc = SW_ENOMEM;
            break;
        }
        memcpy(f->all + n_all, f->reloc, f->n_reloc * sizeof *f->all);
        n_all += f->n_reloc;
        sp->n_ev = n_orig;
        for (size_t i = 0; i < n_all && !rc; i++)
            rc = push_ev(sp, sp->st[f->all[i]].bhv ? TASK_DROP : TASK_SWAP_OUT, f->all[i]);
        for (size_t i = 0; i < n_all && !rc; i++)
            rc = push_ev(sp, TASK_SWAP_IN, f->all[i]);
    }
    if (!rc && attempt == 4)
        rc = FAST_DECLINE;
    if (!rc) {
        int32_t lis[STREAM__COUNT] = {-1, -1, -1};
        rc = fast_pass1(sp, lis);
    }
    if (rc) {
        sp->n_ev = n_ev0;
        return rc == SW_ENOMEM ? sw_fail(err, SW_ENOMEM, "out of memory") : rc;
    }
    /* the compiled program */
    int32_t E = f->E;
    if (!f->prog && !(f->prog = sim_prog_new()))
        rc = SW_ENOMEM;
    if (!f->ws && !(f->ws = sim_ws_new()))
        rc = SW_ENOMEM;
    if (rc) {
        sp->n_ev = n_ev0;
        return sw_fail(err, SW_ENOMEM, "out of memory");
    }
    int64_t base_mem = g->max_workspace;
    for (int32_t i = 0; i < f->n_r; i++)
        base_mem += g->tensors[f->rset[i]].bytes;
    rc = sim_prog_begin(f->prog, g, NULL, E, sp->op_time, err);
    if (!rc)
        rc = sim_prog_add_all(f->prog, sp->ev_kind, sp->ev_x, f->ev_alloc, f->ev_freeb, f->dep,
                              f->pdep, err);
    if (!rc)
        rc = sim_prog_end(f->prog, base_mem, g->max_workspace + f->capacity, err);
    if (!rc)
        rc = sim_run_ws(f->prog, NULL, f->ws, r, err);
    sp->n_ev = n_ev0;
    return rc;
}

int swapplan_make(swapplan *sp, const int32_t *schedule, const sp_alloc *al, double threshold,
                  plan **out, sim_result *r, sw_err *err)
{
    const graph_profile *g = sp->g;
    if (out)
        *out = NULL;
    int32_t no = sp->no, nt = sp->nt;
    /* schedule: positions, deaths, use lists, time prefix */
    if (graph_lifetimes_again(g, schedule, sp->pos_of_op, sp->death, sp->use_off, sp->use_pos,
                              sp->scratch))
        return sw_fail(err, SW_EINVAL, "schedule is not a permutation of the ops");
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
    /* classes */
    if (al->n_classes > sp->n_classes_cap) {
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
            return sw_fail(err, SW_ENOMEM, "out of memory");
        }
        sp->n_classes_cap = al->n_classes;
    }
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
        rc = fast_eval(sp, r, err, al);
        if (rc != FAST_DECLINE) {
            sp->n_fast += rc == 0;
            return rc;
        }
    }
    /* record into the builder */
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
