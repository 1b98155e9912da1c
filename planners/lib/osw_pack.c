/* osw_pack.c: optimal-swap's placement: an offline packing of the
   decisions' residencies into one address range, and the per-storage
   queues in the order the plan builder places them. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "osw.h"


static int add_item(osw *x, int32_t s, int32_t a0, int32_t b0, int32_t a1, int32_t b1)
{
    if (SW_GROW(x->item, x->cap_item, (size_t)x->n_item + 1))
        return -1;
    osw_item *it = &x->item[x->n_item++];
    it->s = s;
    it->bytes = x->g->bytes[s];
    it->a0 = a0;
    it->b0 = b0;
    it->a1 = a1;
    it->b1 = b1;
    it->off = 0;
    it->lead = 0;
    return 0;
}

static int iv_overlap(int32_t a, int32_t b, int32_t c, int32_t d)
{
    return a >= 0 && c >= 0 && a <= d && c <= b;
}

static int items_conflict(const osw_item *p, const osw_item *q)
{
    return iv_overlap(p->a0, p->b0, q->a0, q->b0) || iv_overlap(p->a0, p->b0, q->a1, q->b1) ||
           iv_overlap(p->a1, p->b1, q->a0, q->b0) || iv_overlap(p->a1, p->b1, q->a1, q->b1);
}

static int32_t item_len(const osw_item *p)
{
    return p->b0 - p->a0 + 1 + (p->a1 >= 0 ? p->b1 - p->a1 + 1 : 0);
}

/* Ties last: storage, then start (a total order: the packing is repeatable). */
static int item_tie(const osw_item *p, const osw_item *q)
{
    if (p->s != q->s)
        return p->s < q->s ? -1 : 1;
    return p->a0 < q->a0 ? -1 : p->a0 > q->a0;
}

/* Largest first, then longest. */
static int item_cmp_size(const void *a, const void *b)
{
    const osw_item *p = a, *q = b;
    if (p->bytes != q->bytes)
        return p->bytes > q->bytes ? -1 : 1;
    if (item_len(p) != item_len(q))
        return item_len(p) > item_len(q) ? -1 : 1;
    return item_tie(p, q);
}

/* Longest first, then largest. */
static int item_cmp_len(const void *a, const void *b)
{
    const osw_item *p = a, *q = b;
    if (item_len(p) != item_len(q))
        return item_len(p) > item_len(q) ? -1 : 1;
    if (p->bytes != q->bytes)
        return p->bytes > q->bytes ? -1 : 1;
    return item_tie(p, q);
}

/* Earliest start first, then largest (an allocator's order in time). */
static int item_cmp_start(const void *a, const void *b)
{
    const osw_item *p = a, *q = b;
    int32_t sp = p->a1 >= 0 ? 0 : p->a0, sq = q->a1 >= 0 ? 0 : q->a0;
    if (sp != sq)
        return sp < sq ? -1 : 1;
    if (p->bytes != q->bytes)
        return p->bytes > q->bytes ? -1 : 1;
    return item_tie(p, q);
}

/* A rotation of the cycle: the items across its cut first (largest
   first), then by start after the cut (first fit in that order colours an
   interval graph optimally). */
static int item_cmp_key(const void *a, const void *b)
{
    const osw_item *p = a, *q = b;
    if (p->key != q->key)
        return p->key < q->key ? -1 : 1;
    if (p->bytes != q->bytes)
        return p->bytes > q->bytes ? -1 : 1;
    return item_tie(p, q);
}

/* Most byte-stages first. */
static int item_cmp_area(const void *a, const void *b)
{
    const osw_item *p = a, *q = b;
    double ap = (double)p->bytes * item_len(p), aq = (double)q->bytes * item_len(q);
    if (ap != aq)
        return ap > aq ? -1 : 1;
    return item_tie(p, q);
}

typedef struct span {
    int64_t lo, hi;
} span;

static int span_cmp(const void *a, const void *b)
{
    const span *p = a, *q = b;
    return p->lo < q->lo ? -1 : p->lo > q->lo;
}

/* Residencies of the decisions (stage intervals), then their offsets:
   largest first, each at the lowest offset free over its intervals.
   Returns the highest byte used. Fills the per-storage placement queues in
   the order the builder places them. */
int osw_pack(osw *x, int64_t *high, sw_err *err)
{
    const graph_profile *g = x->g;
    int32_t n = x->n, nt = g->n_tensors;
    x->n_item = 0;
    /* per storage, its residencies in stage order */
    for (int32_t s = 0; s < nt; s++) {
        if (!is_storage(g, s) || x->uoff[s + 1] == x->uoff[s])
            continue;
        int bad = 0;
        if (!osw_persistent(x, s)) {
            int32_t start = x->upos[x->uoff[s]];
            int32_t d = x->death[s] >= 0 ? x->death[s] : x->upos[x->uoff[s + 1] - 1];
            for (int32_t i = x->win_off[s]; i < x->win_off[s + 1]; i++) {
                const osw_win *w = &x->win[i];
                if (w->out_at < 0)
                    continue;
                bad |= add_item(x, s, start, w->out_at, -1, -1);
                start = w->in_at;
            }
            bad |= add_item(x, s, start, d, -1, -1);
        } else {
            /* on the cycle: the trips sorted by out stage (windows are in gap
               order, the wrap one last) */
            int32_t outs[512], ins[512], k = 0, lead = 0;
            for (int32_t i = x->win_off[s]; i < x->win_off[s + 1] && k < 512; i++)
                if (x->win[i].out_at >= 0) {
                    outs[k] = x->win[i].out_at;
                    ins[k++] = x->win[i].in_at;
                    lead = x->span && x->win[i].wrap && x->win[i].in_at < n;
                }
            if (k == 0) {
                bad |= add_item(x, s, 0, n - 1, -1, -1);
            } else {
                /* residencies: [ins[i], outs[i+1]] and the one around the end,
                   [ins[k-1], outs[0] + n] unwrapped, taken back into [0, n) */
                for (int32_t i = 0; i < k; i++) {
                    int32_t a = ins[i], e = i + 1 < k ? outs[i + 1] : outs[0] + n;
                    int32_t a2 = a % n, e2 = e - (a - a2);
                    if (e2 <= n - 1)
                        bad |= add_item(x, s, a2, e2, -1, -1);
                    else
                        bad |= add_item(x, s, 0, e2 - n, a2, n - 1);
                    if (!bad && lead && i == k - 1)
                        x->item[x->n_item - 1].lead = 1;
                }
            }
        }
        if (bad)
            return sw_fail(err, SW_ENOMEM, "out of memory");
    }
    /* pack in four orders, each with the lowest and with the tightest gap, and
       perturbed size orders; keep the lowest */
    osw_item *sorted = sw_malloc(((size_t)x->n_item + 1) * sizeof *sorted);
    osw_item *best = sw_malloc(((size_t)x->n_item + 1) * sizeof *best);
    span *sp = sw_malloc(((size_t)x->n_item + 1) * sizeof *sp);
    if (!sorted || !sp || !best) {
        sw_free(sorted);
        sw_free(best);
        sw_free(sp);
        return sw_fail(err, SW_ENOMEM, "out of memory");
    }
    int (*const cmps[4])(const void *, const void *) = {item_cmp_size, item_cmp_area,
                                                        item_cmp_len, item_cmp_start};
    int64_t best_hw = -1;
    uint64_t rng = 0x9e3779b97f4a7c15ULL; /* fixed: the packing is repeatable */
    int base = 8 + 2 * OSW_PACK_TRIES;
    for (int c = 0; c < base + (x->span ? 2 * n : 0); c++) {
        int bestfit = c % 2; /* 0: the lowest gap; 1: the tightest gap */
        memcpy(sorted, x->item, (size_t)x->n_item * sizeof *sorted);
        if (c >= base) { /* span model: each rotation of the cycle */
            int32_t t0 = (c - base) / 2;
            for (int32_t i = 0; i < x->n_item; i++) {
                osw_item *it = &sorted[i];
                int across = (it->a0 <= t0 && t0 <= it->b0) ||
                             (it->a1 >= 0 && it->a1 <= t0 && t0 <= it->b1);
                int32_t st = it->a1 >= 0 ? it->a1 : it->a0;
                it->key = across ? -1 : (st - t0 + n) % n;
            }
            qsort(sorted, (size_t)x->n_item, sizeof *sorted, item_cmp_key);
        } else {
            qsort(sorted, (size_t)x->n_item, sizeof *sorted, cmps[c < 8 ? c / 2 : 0]);
        }
        if (c >= 8 && c < base) /* perturbed: swap random neighbours of the size order */
            for (int32_t i = 0; i + 1 < x->n_item; i++) {
                rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
                if ((rng >> 33) % 3 == 0) {
                    osw_item t = sorted[i];
                    sorted[i] = sorted[i + 1];
                    sorted[i + 1] = t;
                }
            }
        int64_t hw = 0;
        for (int32_t i = 0; i < x->n_item; i++) {
            osw_item *it = &sorted[i];
            int32_t ns = 0;
            for (int32_t j = 0; j < i; j++)
                if (sorted[j].bytes > 0 && items_conflict(it, &sorted[j]))
                    sp[ns++] = (span){sorted[j].off, sorted[j].off + sorted[j].bytes};
            qsort(sp, (size_t)ns, sizeof *sp, span_cmp);
            int64_t at = 0, pick = -1, pick_len = 0;
            for (int32_t j = 0; j <= ns; j++) {
                int64_t end = j < ns ? sp[j].lo : INT64_MAX;
                if (end - at >= it->bytes) {
                    if (!bestfit) {
                        pick = at;
                        break;
                    }
                    if (pick < 0 || (j < ns && (pick_len == INT64_MAX || end - at < pick_len))) {
                        pick = at;
                        pick_len = j < ns ? end - at : INT64_MAX;
                    }
                }
                if (j < ns && sp[j].hi > at)
                    at = sp[j].hi;
            }
            it->off = pick;
            hw = SW_MAX(hw, pick + it->bytes);
        }
        if (best_hw < 0 || hw < best_hw) {
            best_hw = hw;
            memcpy(best, sorted, (size_t)x->n_item * sizeof *best);
        }
    }
    int64_t hw = best_hw;
    sw_free(sorted);
    sorted = best;
    /* offsets back in residency order */
    for (int32_t i = 0; i < x->n_item; i++)
        for (int32_t j = 0; j < x->n_item; j++)
            if (sorted[j].s == x->item[i].s && sorted[j].a0 == x->item[i].a0 &&
                sorted[j].b0 == x->item[i].b0) {
                x->item[i].off = sorted[j].off;
                break;
            }
    sw_free(sorted);
    sw_free(sp);
    *high = hw;
    return 0;
}

/* Per storage, the items in the order the builder places them: the one
   around the iteration's end first (the resident set) and last (brought
   home), the others by start. */
int osw_queues(osw *x, const uint8_t *resident)
{
    int32_t nt = x->g->n_tensors;
    sw_free(x->qoff);
    sw_free(x->qitem);
    sw_free(x->qcur);
    x->qoff = sw_calloc((size_t)nt + 1, sizeof *x->qoff);
    x->qitem = sw_malloc(((size_t)x->n_item * 2 + 1) * sizeof *x->qitem);
    x->qcur = sw_calloc((size_t)nt + 1, sizeof *x->qcur);
    if (!x->qoff || !x->qitem || !x->qcur)
        return -1;
    int32_t q = 0, i = 0;
    for (int32_t s = 0; s < nt; s++) {
        x->qoff[s] = q;
        int32_t from = i;
        while (i < x->n_item && x->item[i].s == s)
            i++;
        int32_t wrap = -1;
        for (int32_t k = from; k < i; k++)
            if (x->item[k].a1 >= 0 || (resident[s] && x->item[k].a0 == 0))
                wrap = k;
        if (resident[s] && wrap >= 0)
            x->qitem[q++] = wrap;
        /* the rest by start stage (the wrap item's placement is its second
           interval's start) */
        int32_t done_upto = -2;
        for (;;) {
            int32_t best = -1, bs = 0;
            for (int32_t k = from; k < i; k++) {
                /* (off the GPU at the start, a residency around the end is
                   the one a trip around the end brings back: placed first) */
                int32_t st = x->item[k].lead ? -1 : x->item[k].a1 >= 0 ? x->item[k].a1
                                                                       : x->item[k].a0;
                if (k == wrap && x->item[k].a1 < 0)
                    continue; /* resident from the start to a swap-out: placed once */
                if (st > done_upto && (best < 0 || st < bs)) {
                    best = k;
                    bs = st;
                }
            }
            if (best < 0)
                break;
            x->qitem[q++] = best;
            done_upto = bs;
        }
    }
    x->qoff[nt] = q;
    x->n_q = q;
    return 0;
}
