/* osw_stage.c: optimal-swap's storages, their accesses and windows (the
   round trips a storage may take), and the stage model's program (one
   stage per op; no copy spans a stage). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "osw.h"

/* ---- storages, accesses, windows ---- */

void osw_free(osw *x)
{
    sw_free(x->order);
    sw_free(x->pos);
    sw_free(x->uoff);
    sw_free(x->upos);
    sw_free(x->udirty);
    sw_free(x->death);
    sw_free(x->win);
    sw_free(x->win_off);
    sw_free(x->item);
    sw_free(x->qoff);
    sw_free(x->qitem);
    sw_free(x->qcur);
    sw_free(x->ord_in);
    sw_free(x->ord_out);
}

/* Accesses of every storage in schedule positions, deduplicated, with
   whether each creates or mutates it. */
int osw_accesses(osw *x, sw_err *err)
{
    const graph_profile *g = x->g;
    int32_t nt = g->n_tensors, n = x->n_ops;
    size_t na = (size_t)g->acc_off[g->n_ops];
    x->uoff = sw_calloc((size_t)nt + 2, sizeof *x->uoff);
    x->upos = sw_malloc((na + 1) * sizeof *x->upos);
    x->udirty = sw_calloc(na + 1, 1);
    x->death = sw_malloc(((size_t)nt + 1) * sizeof *x->death);
    if (!x->uoff || !x->upos || !x->udirty || !x->death)
        return sw_fail(err, SW_ENOMEM, "out of memory");
    if (graph_lifetimes(g, x->order, x->pos, x->death, NULL, NULL, NULL))
        return sw_fail(err, SW_EINVAL, "the profile's order is not a permutation of its ops");
    for (int32_t s = 0; s < nt; s++) /* positions to stages */
        x->death[s] = x->death[s] >= 0 ? 2 * x->death[s] + 1 : -1;
    for (int32_t i = 0; i < n; i++) {
        int32_t o = x->order[i];
        for (int32_t k = g->acc_off[o]; k < g->acc_off[o + 1]; k++)
            x->uoff[g->acc[k] + 1]++;
    }
    for (int32_t s = 0; s < nt; s++)
        x->uoff[s + 1] += x->uoff[s];
    int32_t *fill = sw_calloc((size_t)nt + 1, sizeof *fill);
    if (!fill)
        return sw_fail(err, SW_ENOMEM, "out of memory");
    for (int32_t i = 0; i < n; i++) {
        int32_t o = x->order[i];
        for (int32_t k = g->acc_off[o]; k < g->acc_off[o + 1]; k++) {
            int32_t s = g->acc[k];
            int32_t at = x->uoff[s] + fill[s];
            uint8_t d = (g->acc_flag[k] & (GA_CREATE | GA_MUTATE)) != 0;
            if (fill[s] > 0 && x->upos[at - 1] == 2 * i + 1) { /* the same op again */
                x->udirty[at - 1] |= d;
                continue;
            }
            x->upos[at] = 2 * i + 1; /* the op's stage */
            x->udirty[at] = d;
            fill[s]++;
        }
    }
    /* compact: distinct accesses only */
    int32_t w = 0;
    for (int32_t s = 0; s < nt; s++) {
        int32_t from = x->uoff[s];
        x->uoff[s] = w;
        for (int32_t k = 0; k < fill[s]; k++, w++) {
            x->upos[w] = x->upos[from + k];
            x->udirty[w] = x->udirty[from + k];
        }
    }
    x->uoff[nt] = w;
    sw_free(fill);
    return 0;
}

int osw_tl_add(term_list *t, int i, double v)
{
    if (SW_GROW(t->idx, t->cap, t->n + 1) || SW_GROW(t->val, t->cap2, t->n + 1))
        return -1;
    t->idx[t->n] = i;
    t->val[t->n++] = v;
    return 0;
}

void osw_tl_free(term_list *t, int32_t n)
{
    if (!t)
        return;
    for (int32_t i = 0; i < n; i++) {
        sw_free(t[i].idx);
        sw_free(t[i].val);
    }
    sw_free(t);
}

static int add_window(osw *x, int32_t s, int32_t lo, int32_t hi, int32_t gap, int wrap)
{
    if (hi - lo < 3)
        return 0; /* no stage to copy out in before one to copy in */
    if (SW_GROW(x->win, x->cap_win, (size_t)x->n_win + 1))
        return -1;
    osw_win *w = &x->win[x->n_win++];
    memset(w, 0, sizeof *w);
    w->s = s;
    w->lo = lo;
    w->hi = hi;
    w->gap = gap;
    w->wrap = wrap;
    w->v_od = -1;
    w->out_at = w->in_at = -1;
    return 0;
}

/* The windows of every storage with bytes. */
int osw_windows(osw *x, sw_err *err)
{
    const graph_profile *g = x->g;
    int32_t nt = g->n_tensors, n = x->n;
    x->win_off = sw_calloc((size_t)nt + 1, sizeof *x->win_off);
    if (!x->win_off)
        return sw_fail(err, SW_ENOMEM, "out of memory");
    for (int32_t s = 0; s < nt; s++) {
        x->win_off[s] = x->n_win;
        int32_t u0 = x->uoff[s], m = x->uoff[s + 1] - u0;
        if (!is_storage(g, s) || m == 0)
            continue;
        const graph_tensor *t = &g->tensors[s];
        if (!t->persistent && t->producer < 0)
            return sw_fail(err, SW_EUNSUPPORTED, "optimal-swap: tensor %d '%s' exists before "
                           "the iteration but is not persistent (not modelled)", s, t->name);
        if (t->persistent && t->producer >= 0)
            return sw_fail(err, SW_EUNSUPPORTED, "optimal-swap: persistent tensor %d '%s' is "
                           "made by an op (not modelled)", s, t->name);
        if (g->bytes[s] <= 0)
            continue;
        for (int32_t k = 0; k + 1 < m; k++)
            if (add_window(x, s, x->upos[u0 + k], x->upos[u0 + k + 1], k, 0))
                return sw_fail(err, SW_ENOMEM, "out of memory");
        if (t->persistent && add_window(x, s, x->upos[u0 + m - 1], x->upos[u0] + n, m - 1, 1))
            return sw_fail(err, SW_ENOMEM, "out of memory");
    }
    x->win_off[nt] = x->n_win;
    return 0;
}

/* The window of storage s in gap k, or NULL. */
osw_win *osw_win_at(osw *x, int32_t s, int32_t k)
{
    for (int32_t i = x->win_off[s]; i < x->win_off[s + 1]; i++)
        if (x->win[i].gap == k)
            return &x->win[i];
    return NULL;
}

/* A round trip is taken (w->v_w) exactly when one copy-out or drop, and one
   copy-in, of window w is: two rows over its len stage variables. idx and
   val hold at least 2 * len + drop stages + 1 entries. */
void osw_trip_rows(milp *m, const osw_win *w, int32_t len, int *idx, double *val)
{
    int nz = 0;
    for (int32_t k = 0; k < len; k++) {
        idx[nz] = w->v_oc + k;
        val[nz++] = 1;
    }
    if (w->v_od >= 0)
        for (int32_t a = w->od_lo; a <= w->od_hi; a++) {
            idx[nz] = w->v_od + (a - w->od_lo);
            val[nz++] = 1;
        }
    idx[nz] = w->v_w;
    val[nz++] = -1;
    milp_row(m, 0, 0, nz, idx, val);
    nz = 0;
    for (int32_t k = 0; k < len; k++) {
        idx[nz] = w->v_in + k;
        val[nz++] = 1;
    }
    idx[nz] = w->v_w;
    val[nz++] = -1;
    milp_row(m, 0, 0, nz, idx, val);
}

/* Where a drop is allowed (the host copy may be current): the stages of
   the window's out range that can be drops, and the row that says when. */
static int drop_rows(osw *x, milp *m, osw_win *w)
{
    const graph_profile *g = x->g;
    int32_t s = w->s, u0 = x->uoff[s], ms = x->uoff[s + 1] - u0, n = x->n;
    int persistent = g->tensors[s].persistent;
    int clean = persistent && g->n_mutations[s] == 0;
    int32_t a_lo = w->lo + 1, a_hi = w->hi - 2;
    /* the last dirtying access at or before the gap's lower access */
    int32_t q = -1;
    for (int32_t k = 0; k <= w->gap; k++)
        if (x->udirty[u0 + k])
            q = k;
    int idx[256];
    double val[256];
    int nz = 0;
    w->v_od = -1;
    if (clean) {
        w->od_lo = a_lo;
        w->od_hi = a_hi;
    } else if (w->wrap) {
        /* out before the end (a <= n-1): current after an earlier trip past
           the last dirtying access; out after the start: stale (resident
           at the start and mutated) */
        w->od_lo = a_lo;
        w->od_hi = SW_MIN(a_hi, n - 1);
        for (int32_t k = q < 0 ? 0 : q; k < ms - 1 && nz < 250; k++) {
            osw_win *p = osw_win_at(x, s, k);
            if (p) {
                idx[nz] = p->v_w;
                val[nz++] = -1;
            }
        }
        if (!nz)
            w->od_lo = 1, w->od_hi = 0;
    } else {
        w->od_lo = a_lo;
        w->od_hi = a_hi;
        for (int32_t k = q < 0 ? 0 : q; k < w->gap && nz < 250; k++) {
            osw_win *p = osw_win_at(x, s, k);
            if (p) {
                idx[nz] = p->v_w;
                val[nz++] = -1;
            }
        }
        osw_win *wr = persistent ? osw_win_at(x, s, ms - 1) : NULL;
        if (q < 0 && wr && wr != w) {
            /* current at the start unless resident there: the trip around
               the end was taken, and not both ways before the end */
            idx[nz] = wr->v_w;
            val[nz++] = -1;
            for (int32_t b = wr->lo + 2; b <= SW_MIN(wr->hi - 1, n - 1) && nz < 255; b++) {
                idx[nz] = wr->v_in + (b - wr->lo - 2);
                val[nz++] = 1;
            }
        }
        if (!nz)
            w->od_lo = 1, w->od_hi = 0;
    }
    if (w->od_lo > w->od_hi)
        return 0;
    w->v_od = milp_vars(m);
    for (int32_t a = w->od_lo; a <= w->od_hi; a++) {
        int v = milp_var(m, 0, 1, 0, 1);
        if (!clean && nz < 255) {
            idx[nz] = v;
            val[nz++] = 1;
        }
    }
    if (!clean)
        milp_row(m, -MILP_INF, 0, nz, idx, val);
    return 0;
}

int osw_build(osw *x, milp *m, int64_t cap, sw_err *err)
{
    const graph_profile *g = x->g;
    int32_t n = x->n, nt = g->n_tensors;
    double L = x->lat / x->tau;
    term_list *tt = sw_calloc((size_t)n, sizeof *tt), *mm = sw_calloc((size_t)n, sizeof *mm);
    double *live = sw_calloc((size_t)n, sizeof *live);
    int rc = 0;
    if (!tt || !mm || !live) {
        rc = sw_fail(err, SW_ENOMEM, "out of memory");
        goto done;
    }
    /* stage lengths: the objective */
    for (int32_t j = 0; j < n; j++)
        milp_var(m, stage_op(x, j) >= 0 ? g->ops[stage_op(x, j)].time_s / x->tau : 0, MILP_INF,
                 1, 0);
    /* live bytes per stage */
    for (int32_t s = 0; s < nt; s++) {
        if (!is_storage(g, s) || x->uoff[s + 1] == x->uoff[s])
            continue;
        double b = (double)g->bytes[s] / (double)cap;
        if (osw_persistent(x, s)) {
            for (int32_t j = 0; j < n; j++)
                live[j] += b;
        } else {
            int32_t d = x->death[s] >= 0 ? x->death[s] : x->upos[x->uoff[s + 1] - 1];
            for (int32_t j = x->upos[x->uoff[s]]; j <= d && j < n; j++)
                live[j] += b;
        }
    }
    /* windows: variables and flow rows; the first pass makes every w
       variable, which the drop rows of later windows refer to */
    for (int32_t i = 0; i < x->n_win; i++) {
        osw_win *w = &x->win[i];
        int32_t len = w->hi - w->lo - 2;
        w->v_w = milp_var(m, 0, 1, 0, 0);
        w->v_oc = milp_vars(m);
        for (int32_t k = 0; k < len; k++)
            milp_var(m, 0, 1, 0, 1);
        w->v_in = milp_vars(m);
        for (int32_t k = 0; k < len; k++)
            milp_var(m, 0, 1, 0, 1);
        w->v_r = milp_vars(m);
        for (int32_t k = 0; k + 1 < len; k++)
            milp_var(m, 0, 1, 0, 0);
    }
    for (int32_t i = 0; i < x->n_win; i++) {
        osw_win *w = &x->win[i];
        int32_t s = w->s, len = w->hi - w->lo - 2;
        const graph_tensor *t = &g->tensors[s];
        int clean = t->persistent && g->n_mutations[s] == 0;
        if (clean) /* never copied: every out is a drop */
            for (int32_t k = 0; k < len; k++)
                milp_row(m, 0, 0, 1, (int[]){w->v_oc + k}, (double[]){1});
        drop_rows(x, m, w);
        /* sum of outs = sum of ins = w */
        int *idx = sw_malloc((size_t)(2 * len + 2) * sizeof *idx);
        double *val = sw_malloc((size_t)(2 * len + 2) * sizeof *val);
        if (!idx || !val) {
            sw_free(idx);
            sw_free(val);
            rc = sw_fail(err, SW_ENOMEM, "out of memory");
            goto done;
        }
        osw_trip_rows(m, w, len, idx, val);
        int nz;
        /* off during stage t: r_t = r_{t-1} + out_{t-1} - in_t, r = 0 before
           the first out stage and after the last in stage */
        for (int32_t st = w->lo + 2; st <= w->hi - 1; st++) {
            nz = 0;
            int32_t a = st - 1;
            if (st <= w->hi - 2) {
                idx[nz] = w->v_r + (st - w->lo - 2);
                val[nz++] = 1;
            }
            if (st - 1 >= w->lo + 2) {
                idx[nz] = w->v_r + (st - 1 - w->lo - 2);
                val[nz++] = -1;
            }
            idx[nz] = w->v_oc + (a - w->lo - 1);
            val[nz++] = -1;
            if (w->v_od >= 0 && a >= w->od_lo && a <= w->od_hi) {
                idx[nz] = w->v_od + (a - w->od_lo);
                val[nz++] = -1;
            }
            idx[nz] = w->v_in + (st - w->lo - 2);
            val[nz++] = 1;
            milp_row(m, 0, 0, nz, idx, val);
        }
        sw_free(idx);
        sw_free(val);
        /* stage time and memory terms */
        double bh = L + (double)g->bytes[s] / x->rate_h / x->tau;
        double bd = L + (double)g->bytes[s] / x->rate_d / x->tau;
        double bm = (double)g->bytes[s] / (double)cap;
        int bad = 0;
        for (int32_t k = 0; k < len; k++) {
            bad |= osw_tl_add(&tt[(w->lo + 2 + k) % n], w->v_in + k, -bh);
            bad |= osw_tl_add(&tt[(w->lo + 1 + k) % n], w->v_oc + k, -bd);
            if (k + 1 < len)
                bad |= osw_tl_add(&mm[(w->lo + 2 + k) % n], w->v_r + k, -bm);
        }
        if (bad) {
            rc = sw_fail(err, SW_ENOMEM, "out of memory");
            goto done;
        }
    }
    for (int32_t j = 0; j < n; j++) {
        if (osw_tl_add(&tt[j], j, 1)) {
            rc = sw_fail(err, SW_ENOMEM, "out of memory");
            goto done;
        }
        milp_row(m, 0, MILP_INF, (int)tt[j].n, tt[j].idx, tt[j].val);
        if (live[j] > 1 + 1e-12) {
            if (!mm[j].n) {
                char h1[32], h2[32];
                int32_t op = x->order[j / 2];
                rc = sw_fail(err, SW_ENOFIT, "does not fit: %s op %d '%s' (position %d of the "
                             "schedule) %s are live and none can leave the GPU; the arena "
                             "holds %s", j % 2 ? "at" : "before", op, g->ops[op].name, j / 2,
                             sw_fmt_bytes((int64_t)(live[j] * (double)cap), h1, sizeof h1),
                             sw_fmt_bytes(cap, h2, sizeof h2));
                goto done;
            }
            /* (the solver's feasibility tolerance may leave a stage a few
               bytes over: the packing finds that and the program is solved
               again with those bytes less) */
            milp_row(m, -MILP_INF, 1 - live[j], (int)mm[j].n, mm[j].idx, mm[j].val);
        }
    }
done:
    osw_tl_free(tt, n);
    osw_tl_free(mm, n);
    sw_free(live);
    return rc;
}
