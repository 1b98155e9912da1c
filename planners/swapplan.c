/* swapplan.c: SwapAdvisor's swap planner (Belady eviction over a size-class
   pool, two passes for the steady state), recording through the builder. */
#include "swapplan.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct sp_ev {
    uint8_t kind;
    int32_t x;
} sp_ev;

/* A resident storage as the eviction scan sees it, kept contiguous per
   class so the Belady scan walks memory linearly. */
typedef struct sp_ent {
    double last_t; /* when its last use ended */
    int32_t s;     /* storage */
    int32_t nu;    /* next use position */
} sp_ent;


struct swapplan {
    const graph_profile *g;
    int64_t budget, pool_bytes;
    sp_sizes sz;
    int32_t nt, no;
    double h2d_bw;
    /* per call */
    int32_t *pos_of_op;
    double *t_at;              /* compute time before position i (n + 1) */
    int32_t *use_off, *use_pos;/* per storage: schedule positions using it (CSR) */
    int32_t *next_idx;         /* per storage: next use index in its list */
    int32_t *death;            /* per storage: position of its death (graph_lifetimes) */
    int32_t *hf_off, *hf;      /* per position: storages held past their last use, freed there */
    double *last_use_t;        /* per storage: time its last use ended */
    uint8_t *resident, *host_valid, *in_r, *used, *persist;
    uint32_t *pin;             /* per storage: the epoch of the op using it */
    uint32_t epoch;            /* increases with every op walked */
    int32_t *cls_of;           /* per storage: class, -1 for zero bytes or non-storage */
    int32_t *class_off;        /* per class: start of its resident list */
    int32_t *class_n;          /* per class: resident storages */
    int32_t *class_free;       /* per class: free objects */
    int32_t *cnt_eff;          /* per class: objects used (at most the class's storages) */
    uint8_t *heaped;           /* per class: its list is a heap (kept lazily: only once an
                                  eviction needs it; until then an unordered list) */
    sp_ent *class_list;        /* flat resident lists */
    int32_t *list_idx;         /* per storage: position in its class list */
    int32_t n_classes_cap;
    sp_ev *ev;
    size_t n_ev, cap_ev;
    int32_t *rset;
    int32_t n_rset;
    plan_builder *b;
    char why[256];
};

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
    size_t nt = (size_t)sp->nt + 1, no = (size_t)sp->no + 1;
    sp->sz.size = sw_malloc(nt * sizeof *sp->sz.size);
    sp->sz.of = sw_malloc(nt * sizeof *sp->sz.of);
    sp->pos_of_op = sw_malloc(no * sizeof(int32_t));
    sp->t_at = sw_malloc((no + 1) * sizeof(double));
    sp->use_off = sw_malloc((nt + 1) * sizeof(int32_t));
    sp->use_pos = sw_malloc(((size_t)g->acc_off[g->n_ops] + 1) * sizeof(int32_t));
    sp->next_idx = sw_malloc(nt * sizeof(int32_t));
    sp->death = sw_malloc(nt * sizeof(int32_t));
    sp->hf_off = sw_malloc((no + 1) * sizeof(int32_t));
    sp->hf = sw_malloc(nt * sizeof(int32_t));
    sp->last_use_t = sw_malloc(nt * sizeof(double));
    sp->resident = sw_malloc(nt);
    sp->host_valid = sw_malloc(nt);
    sp->in_r = sw_malloc(nt);
    sp->used = sw_malloc(nt);
    sp->persist = sw_calloc(nt, 1);
    sp->pin = sw_calloc(nt, sizeof(uint32_t));
    sp->cls_of = sw_malloc(nt * sizeof(int32_t));
    sp->class_list = sw_malloc(nt * sizeof(sp_ent));
    sp->list_idx = sw_malloc(nt * sizeof(int32_t));
    sp->rset = sw_malloc(nt * sizeof(int32_t));
    if (!sp->sz.size || !sp->sz.of || !sp->pos_of_op || !sp->t_at || !sp->use_off ||
        !sp->use_pos || !sp->next_idx || !sp->death || !sp->hf_off || !sp->hf || !sp->last_use_t || !sp->resident || !sp->host_valid ||
        !sp->in_r || !sp->used || !sp->persist || !sp->pin || !sp->cls_of || !sp->class_list ||
        !sp->list_idx || !sp->rset) {
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
    sw_free(sp->next_idx);
    sw_free(sp->death);
    sw_free(sp->hf_off);
    sw_free(sp->hf);
    sw_free(sp->last_use_t);
    sw_free(sp->resident);
    sw_free(sp->host_valid);
    sw_free(sp->in_r);
    sw_free(sp->used);
    sw_free(sp->persist);
    sw_free(sp->pin);
    sw_free(sp->cls_of);
    sw_free(sp->class_off);
    sw_free(sp->class_n);
    sw_free(sp->class_free);
    sw_free(sp->cnt_eff);
    sw_free(sp->heaped);
    sw_free(sp->class_list);
    sw_free(sp->list_idx);
    sw_free(sp->ev);
    sw_free(sp->rset);
    pb_free(sp->b);
    sw_free(sp);
}

const sp_sizes *swapplan_sizes(const swapplan *sp) { return &sp->sz; }
int64_t swapplan_pool_bytes(const swapplan *sp) { return sp->pool_bytes; }

void swapplan_min_counts(const swapplan *sp, const int32_t *cls, int32_t n_classes, int32_t *need)
{
    const graph_profile *g = sp->g;
    int32_t tmp[256], *cnt = n_classes <= 256 ? tmp : sw_calloc((size_t)n_classes, sizeof *cnt);
    for (int32_t c = 0; c < n_classes; c++)
        need[c] = 0;
    if (!cnt)
        return;
    for (int32_t o = 0; o < g->n_ops; o++) {
        for (int32_t k = g->acc_off[o]; k < g->acc_off[o + 1]; k++) {
            int32_t si = sp->sz.of[g->acc[k]];
            if (si >= 0)
                cnt[cls[si]] = 0;
        }
        for (int32_t k = g->acc_off[o]; k < g->acc_off[o + 1]; k++) {
            int32_t si = sp->sz.of[g->acc[k]];
            if (si >= 0) {
                int32_t c = cls[si];
                if (++cnt[c] > need[c])
                    need[c] = cnt[c];
            }
        }
    }
    if (cnt != tmp)
        sw_free(cnt);
}

static int push_ev(swapplan *sp, int kind, int32_t x)
{
    if (SW_GROW(sp->ev, sp->cap_ev, sp->n_ev + 1))
        return SW_ENOMEM;
    sp->ev[sp->n_ev].kind = (uint8_t)kind;
    sp->ev[sp->n_ev].x = x;
    sp->n_ev++;
    return 0;
}

/* Each class's resident storages form a max-heap on (next use, then lowest
   id): Belady's victim is at the top, unless the threshold excludes it. */
static int ent_before(const sp_ent *x, const sp_ent *y)
{
    return x->nu > y->nu || (x->nu == y->nu && x->s < y->s);
}

static void heap_put(swapplan *sp, int32_t at, sp_ent e)
{
    sp->class_list[at] = e;
    sp->list_idx[e.s] = at;
}

static void heap_up(swapplan *sp, int32_t base, int32_t i)
{
    sp_ent e = sp->class_list[base + i];
    while (i > 0) {
        int32_t p = (i - 1) / 2;
        if (!ent_before(&e, &sp->class_list[base + p]))
            break;
        heap_put(sp, base + i, sp->class_list[base + p]);
        i = p;
    }
    heap_put(sp, base + i, e);
}

static void heap_down(swapplan *sp, int32_t base, int32_t n, int32_t i)
{
    sp_ent e = sp->class_list[base + i];
    for (;;) {
        int32_t l = 2 * i + 1, m = -1;
        if (l >= n)
            break;
        m = l;
        if (l + 1 < n && ent_before(&sp->class_list[base + l + 1], &sp->class_list[base + l]))
            m = l + 1;
        if (!ent_before(&sp->class_list[base + m], &e))
            break;
        heap_put(sp, base + i, sp->class_list[base + m]);
        i = m;
    }
    heap_put(sp, base + i, e);
}

/* change the key of resident s */
static void ent_update(swapplan *sp, int32_t s, int32_t nu, double last_t)
{
    int32_t c = sp->cls_of[s], base = sp->class_off[c];
    int32_t i = sp->list_idx[s] - base;
    sp_ent *e = &sp->class_list[base + i];
    int up = nu > e->nu;
    e->nu = nu;
    e->last_t = last_t;
    if (!sp->heaped[c])
        return;
    if (up)
        heap_up(sp, base, i);
    else
        heap_down(sp, base, sp->class_n[c], i);
}

static void list_add(swapplan *sp, int32_t s, int32_t nu)
{
    int32_t c = sp->cls_of[s], base = sp->class_off[c];
    int32_t i = sp->class_n[c]++;
    sp_ent e = {sp->last_use_t[s], s, nu};
    heap_put(sp, base + i, e);
    if (sp->heaped[c])
        heap_up(sp, base, i);
}

static void list_remove(swapplan *sp, int32_t s)
{
    int32_t c = sp->cls_of[s], base = sp->class_off[c];
    int32_t i = sp->list_idx[s] - base, last = --sp->class_n[c];
    if (i == last)
        return;
    heap_put(sp, base + i, sp->class_list[base + last]);
    if (!sp->heaped[c])
        return;
    heap_down(sp, base, last, i);
    heap_up(sp, base, i);
}

/* the first eviction from class c: make its list a heap (Floyd, O(n)) */
static void heapify(swapplan *sp, int32_t c)
{
    int32_t base = sp->class_off[c], n = sp->class_n[c];
    for (int32_t i = n / 2 - 1; i >= 0; i--)
        heap_down(sp, base, n, i);
    sp->heaped[c] = 1;
}

/* next use position of s after the current one (persistent: wraps into the
   next iteration; none: INT32_MAX) */
static int32_t next_use(const swapplan *sp, int32_t s)
{
    int32_t k = sp->use_off[s] + sp->next_idx[s];
    if (k < sp->use_off[s + 1])
        return sp->use_pos[k];
    if (sp->persist[s] && sp->use_off[s + 1] > sp->use_off[s])
        return sp->no + sp->use_pos[sp->use_off[s]];
    return INT32_MAX;
}

/* Make room for s in its class: evict by Belady. Returns 0, or SW_ENOFIT. */
static int need(swapplan *sp, int32_t s, int32_t pos, double now, double threshold, int record,
                int pass2)
{
    int32_t c = sp->cls_of[s];
    if (c < 0)
        return 0;
    if (sp->class_free[c] > 0) {
        sp->class_free[c]--;
        list_add(sp, s, pos);
        return 0;
    }
    if (!sp->heaped[c])
        heapify(sp, c);
    double limit = now - threshold * (double)sp->g->bytes[s] / sp->h2d_bw;
    /* the top is Belady's choice; if it was used too recently, look deeper:
       walk the heap in key order (best-first over a small frontier) until an
       entry old enough appears. Pinned entries sort last. */
    int32_t base = sp->class_off[c], n = sp->class_n[c];
    const sp_ent *h = sp->class_list + base;
    /* walk the heap in key order (best-first over a small frontier): the
       first entry not used by the current op and old enough is the victim;
       failing that, the first not used by the current op */
    int32_t best = -1, any = -1;
    int32_t fr[64], nf = 0;
    if (n > 0)
        fr[nf++] = 0;
    for (int steps = 0; nf > 0 && steps < 8192; steps++) {
        int32_t bi = 0;
        for (int32_t k = 1; k < nf; k++)
            if (ent_before(&h[fr[k]], &h[fr[bi]]))
                bi = k;
        int32_t i = fr[bi];
        fr[bi] = fr[--nf];
        if (sp->pin[h[i].s] != sp->epoch) {
            if (any < 0)
                any = h[i].s;
            if (h[i].last_t <= limit) {
                best = h[i].s;
                break;
            }
        }
        for (int32_t ch = 2 * i + 1; ch <= 2 * i + 2 && ch < n; ch++)
            if (nf < 64)
                fr[nf++] = ch;
    }
    if (best < 0)
        best = any; /* none old enough: Belady's choice anyway */
    if (best < 0) {
        snprintf(sp->why, sizeof sp->why, "size class %d has too few objects for one op's tensors",
                 c);
        return SW_ENOFIT;
    }
    int32_t v = best;
    list_remove(sp, v);
    sp->resident[v] = 0;
    if (pass2 && sp->in_r[v] && !sp->used[v]) {
        /* pressure the first pass did not meet: v leaves the resident set */
        sp->in_r[v] = 0;
        sp->host_valid[v] = 1;
    } else if (record) {
        /* a non-persistent tensor with no use left (held by the framework)
           is dead: dropped, never copied */
        int dead = !sp->persist[v] && next_use(sp, v) == INT32_MAX;
        if (push_ev(sp, sp->host_valid[v] || dead ? TASK_DROP : TASK_SWAP_OUT, v))
            return SW_ENOMEM;
        sp->host_valid[v] = 1;
    }
    list_add(sp, s, pos);
    return 0;
}

/* One pass over the schedule. pass2: R (in_r) is resident at start. */
static int walk(swapplan *sp, const int32_t *sched, const sp_alloc *al, double threshold, int pass2)
{
    const graph_profile *g = sp->g;
    int32_t nt = sp->nt;
    for (int32_t c = 0; c < al->n_classes; c++) {
        sp->class_n[c] = 0;
        sp->class_free[c] = sp->cnt_eff[c];
        sp->heaped[c] = 0;
    }
    for (int32_t s = 0; s < nt; s++) {
        const graph_tensor *x = &g->tensors[s];
        sp->next_idx[s] = 0;
        sp->used[s] = 0;
        sp->last_use_t[s] = -INFINITY;
        sp->resident[s] = 0;
        if (x->storage != s)
            continue;
        sp->host_valid[s] = x->producer < 0;
        if (pass2 && sp->in_r[s]) {
            sp->resident[s] = 1;
            sp->host_valid[s] = g->n_mutations[s] == 0;
            int32_t c = sp->cls_of[s];
            if (c >= 0) {
                if (sp->class_free[c] <= 0)
                    return SW_ENOFIT;
                sp->class_free[c]--;
                list_add(sp, s, next_use(sp, s));
            }
        }
    }
    for (int32_t i = 0; i < sp->no; i++) {
        int32_t o = sched[i];
        double now = sp->t_at[i];
        int32_t a0 = g->acc_off[o], a1 = g->acc_off[o + 1];
        if (++sp->epoch == 0) { /* wrapped: forget every old pin */
            memset(sp->pin, 0, (size_t)nt * sizeof *sp->pin);
            sp->epoch = 1;
        }
        for (int32_t k = a0; k < a1; k++)
            sp->pin[g->acc[k]] = sp->epoch;
        int rc = 0;
        for (int32_t k = a0; k < a1 && !rc; k++) {
            int32_t s = g->acc[k];
            if ((g->acc_flag[k] & GA_CREATE) || sp->resident[s])
                continue;
            rc = need(sp, s, i, now, threshold, pass2, pass2);
            if (!rc && pass2)
                rc = push_ev(sp, TASK_SWAP_IN, s);
            sp->resident[s] = 1;
        }
        for (int32_t k = a0; k < a1 && !rc; k++) {
            int32_t s = g->acc[k];
            if (!(g->acc_flag[k] & GA_CREATE))
                continue;
            rc = need(sp, s, i, now, threshold, pass2, pass2);
            sp->resident[s] = 1;
            sp->host_valid[s] = 0;
        }
        if (!rc && pass2)
            rc = push_ev(sp, TASK_RUN, o);
        if (rc)
            return rc;
        double end = sp->t_at[i + 1];
        for (int32_t k = a0; k < a1; k++) {
            int32_t s = g->acc[k];
            if (g->acc_flag[k] & GA_MUTATE)
                sp->host_valid[s] = 0;
            sp->last_use_t[s] = end;
            sp->used[s] = 1;
            sp->next_idx[s]++;
            /* freed at its death, as the builder: after its last use, or
               below after the op holding it */
            if (!sp->persist[s] && sp->death[s] == i && sp->resident[s]) {
                sp->resident[s] = 0;
                if (sp->cls_of[s] >= 0) {
                    list_remove(sp, s);
                    sp->class_free[sp->cls_of[s]]++;
                }
            } else if (sp->resident[s] && sp->cls_of[s] >= 0) {
                ent_update(sp, s, next_use(sp, s), end);
            }
        }
        for (int32_t k = sp->hf_off[i]; k < sp->hf_off[i + 1]; k++) {
            int32_t s = sp->hf[k];
            if (sp->resident[s]) {
                sp->resident[s] = 0;
                if (sp->cls_of[s] >= 0) {
                    list_remove(sp, s);
                    sp->class_free[sp->cls_of[s]]++;
                }
            }
        }
    }
    return 0;
}

/* Whether s dies after its last use (held_until), at a position that does
   not access it. */
static int held_past_use(const swapplan *sp, int32_t s)
{
    int32_t n = sp->use_off[s + 1] - sp->use_off[s];
    return n > 0 && !sp->persist[s] && sp->death[s] > sp->use_pos[sp->use_off[s + 1] - 1];
}

int swapplan_make(swapplan *sp, const int32_t *schedule, const sp_alloc *al, double threshold,
                  plan **out, sim_result *r, sw_err *err)
{
    const graph_profile *g = sp->g;
    if (out)
        *out = NULL;
    int32_t no = sp->no, nt = sp->nt;
    /* schedule: positions, deaths, use lists, time prefix */
    if (graph_lifetimes(g, schedule, sp->pos_of_op, sp->death, NULL, sp->use_off, sp->use_pos))
        return sw_fail(err, SW_EINVAL, "schedule is not a permutation of the ops");
    sp->t_at[0] = 0;
    for (int32_t i = 0; i < no; i++)
        sp->t_at[i + 1] = sp->t_at[i] + g->ops[schedule[i]].time_s;
    /* storages the framework holds past their last use (held_until) are
       freed at a position that does not access them */
    memset(sp->hf_off, 0, ((size_t)no + 1) * sizeof(int32_t));
    for (int32_t s = 0; s < nt; s++)
        if (held_past_use(sp, s))
            sp->hf_off[sp->death[s]]++;
    graph_counts_to_offsets(sp->hf_off, no);
    for (int32_t s = 0; s < nt; s++)
        if (held_past_use(sp, s))
            sp->hf[sp->hf_off[sp->death[s]]++] = s; /* offsets advance to the ends */
    for (int32_t i = no; i > 0; i--) /* each end is the next start: shift back */
        sp->hf_off[i] = sp->hf_off[i - 1];
    sp->hf_off[0] = 0;
    /* classes */
    if (al->n_classes > sp->n_classes_cap) {
        sw_free(sp->class_off);
        sw_free(sp->class_n);
        sw_free(sp->class_free);
        sw_free(sp->cnt_eff);
        sw_free(sp->heaped);
        sp->heaped = sw_malloc((size_t)al->n_classes + 1);
        sp->cnt_eff = sw_malloc(((size_t)al->n_classes + 1) * sizeof(int32_t));
        sp->class_off = sw_malloc(((size_t)al->n_classes + 1) * sizeof(int32_t));
        sp->class_n = sw_malloc(((size_t)al->n_classes + 1) * sizeof(int32_t));
        sp->class_free = sw_malloc(((size_t)al->n_classes + 1) * sizeof(int32_t));
        if (!sp->class_off || !sp->class_n || !sp->class_free || !sp->cnt_eff || !sp->heaped) {
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
    int64_t *csize = NULL;
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
    int32_t off = 0;
    for (int32_t c = 0; c < al->n_classes; c++) {
        sp->class_off[c] = off;
        off += members[c];
        /* objects beyond the class's number of tensors could never be used */
        sp->cnt_eff[c] = al->cnt[c] < members[c] ? al->cnt[c] : members[c];
    }
    /* class object sizes: the largest size mapped to each */
    csize = sw_calloc((size_t)al->n_classes + 1, sizeof *csize);
    if (!csize)
        return sw_fail(err, SW_ENOMEM, "out of memory");
    for (int32_t i = 0; i < sp->sz.n; i++)
        if (sp->sz.size[i] > csize[al->cls[i]])
            csize[al->cls[i]] = sp->sz.size[i];
    for (int32_t c = 0; c < al->n_classes; c++)
        pool += csize[c] * sp->cnt_eff[c];
    if (pool > sp->pool_bytes) {
        sw_free(csize);
        return sw_fail(err, SW_ENOFIT, "does not fit: the pool needs %lld bytes, %lld available",
                       (long long)pool, (long long)sp->pool_bytes);
    }
    /* pass 1: nothing resident at start; the parameters resident at its end
       are the initially resident set */
    sp->n_ev = 0;
    memset(sp->in_r, 0, (size_t)nt);
    int rc = walk(sp, schedule, al, threshold, 0);
    if (rc) {
        sw_free(csize);
        return rc == SW_ENOFIT ? sw_fail(err, SW_ENOFIT, "does not fit: %s", sp->why)
                               : sw_fail(err, rc, "out of memory");
    }
    for (int32_t s = 0; s < nt; s++)
        sp->in_r[s] = g->tensors[s].storage == s && g->tensors[s].persistent && sp->resident[s];
    /* pass 2: that set resident at start; pressure it causes drops members */
    rc = walk(sp, schedule, al, threshold, 1);
    if (rc) {
        sw_free(csize);
        return rc == SW_ENOFIT ? sw_fail(err, SW_ENOFIT, "does not fit: %s", sp->why)
                               : sw_fail(err, rc, "out of memory");
    }
    /* record into the builder */
    int32_t *size_cls = (int32_t *)(uintptr_t)al->cls;
    mem_model *m = mem_pool_new(sp->sz.size, size_cls, sp->sz.n, sp->cnt_eff, al->n_classes);
    sw_free(csize);
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
        switch (sp->ev[i].kind) {
        case TASK_RUN: pb_run(b, sp->ev[i].x); break;
        case TASK_SWAP_IN: pb_swap_in(b, sp->ev[i].x); break;
        case TASK_SWAP_OUT: pb_swap_out(b, sp->ev[i].x); break;
        default: pb_drop(b, sp->ev[i].x); break;
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
