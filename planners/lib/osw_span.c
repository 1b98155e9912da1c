/* osw_span.c: optimal-swap's span model (copies may span ops, op and copy
   times continuous: an event model), the no-good rows that exclude a
   decision set, and reading either model's decisions from an incumbent. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "osw.h"


/* A binary variable, fixed to fix's value where fix is given (the timing
   of decisions already taken: a linear program). */
static int bvar(milp *m, const double *fix)
{
    int i = milp_vars(m);
    if (fix) {
        double v = fix[i] > 0.5 ? 1 : 0;
        return milp_var(m, v, v, 0, 1);
    }
    return milp_var(m, 0, 1, 0, 1);
}

/* Op position i's time (s / tau), possibly past an iteration's end or
   before its start: the op's duration. */
static double op_tau(const osw *x, int32_t i)
{
    int32_t n = x->n_ops;
    i = ((i % n) + n) % n;
    return x->g->ops[x->order[i]].time_s / x->tau;
}

/* Append c times the start of op position i (unwrapped: S_(i mod n) plus
   P per iteration away) to a row; returns the new length. */
static int t_start(const osw *x, int32_t i, double c, int *idx, double *val, int nz)
{
    int32_t n = x->n_ops, k = 0;
    while (i >= n) {
        i -= n;
        k++;
    }
    while (i < 0) {
        i += n;
        k--;
    }
    idx[nz] = x->v_s + i;
    val[nz++] = c;
    if (k) {
        idx[nz] = x->v_p;
        val[nz++] = c * k;
    }
    return nz;
}

/* The span model's drops: where the host copy may be current, each end op
   of the window may be reached by a drop; the row that says when (earlier
   trips since the last write, or, before any write, the trip around the
   iteration's end that leaves the storage off the GPU at the start). */
static int drop_rows_span(osw *x, milp *m, osw_win *w, const double *fix, int *idx, double *val)
{
    const graph_profile *g = x->g;
    int32_t s = w->s, u0 = x->uoff[s], ms = x->uoff[s + 1] - u0;
    int persistent = g->tensors[s].persistent;
    int clean = persistent && g->n_mutations[s] == 0;
    int32_t q = -1;
    for (int32_t k = 0; k <= w->gap; k++)
        if (x->udirty[u0 + k])
            q = k;
    int nz = 0;
    w->v_od = -1;
    w->od_lo = w->lop + 1;
    w->od_hi = w->hop - 1;
    if (!clean) {
        int32_t upto = w->wrap ? ms - 1 : w->gap;
        for (int32_t k = q < 0 ? 0 : q; k < upto; k++) {
            osw_win *p = osw_win_at(x, s, k);
            if (p && p != w) {
                idx[nz] = p->v_w;
                val[nz++] = -1;
            }
        }
        osw_win *wr = persistent ? osw_win_at(x, s, ms - 1) : NULL;
        if (!w->wrap && q < 0 && wr && wr != w) {
            idx[nz] = wr->v_w;
            val[nz++] = -1;
        }
        if (!nz) {
            w->od_lo = 1, w->od_hi = 0;
            return 0;
        }
    }
    w->v_od = milp_vars(m);
    for (int32_t b = w->od_lo; b <= w->od_hi; b++) {
        int v = bvar(m, fix);
        if (!clean) {
            idx[nz] = v;
            val[nz++] = 1;
        }
    }
    if (!clean)
        milp_row(m, -MILP_INF, 0, nz, idx, val);
    return 0;
}

/* The d2h (outs) order: by the op after which the out is issued; the h2d
   (ins) order: by the op that needs the storage back (in the iteration the
   in is issued), ties by storage and gap. */
static int span_before(const osw *x, const osw_win *a, const osw_win *b, int in)
{
    int32_t ka = in ? a->hop - (a->wrap ? x->n_ops : 0) : a->lop;
    int32_t kb = in ? b->hop - (b->wrap ? x->n_ops : 0) : b->lop;
    if (ka != kb)
        return ka < kb;
    if (a->s != b->s)
        return a->s < b->s;
    return a->gap < b->gap;
}

static int span_orders(osw *x)
{
    sw_free(x->ord_in);
    sw_free(x->ord_out);
    x->ord_in = sw_malloc(((size_t)x->n_win + 1) * sizeof *x->ord_in);
    x->ord_out = sw_malloc(((size_t)x->n_win + 1) * sizeof *x->ord_out);
    if (!x->ord_in || !x->ord_out)
        return -1;
    for (int32_t i = 0; i < x->n_win; i++) {
        x->win[i].lop = (x->win[i].lo - 1) / 2;
        x->win[i].hop = (x->win[i].hi - 1) / 2;
    }
    for (int in = 0; in < 2; in++) {
        int32_t *o = in ? x->ord_in : x->ord_out;
        for (int32_t i = 0; i < x->n_win; i++) { /* insertion sort: a total order */
            int32_t j = i;
            while (j > 0 && span_before(x, &x->win[i], &x->win[o[j - 1]], in)) {
                o[j] = o[j - 1];
                j--;
            }
            o[j] = i;
        }
    }
    return 0;
}

/* One window's rows in the span model: its drops, its trip, when it is off
   the GPU, and its terms in the memory rows of the half-stages (mm).
   Nonzero when out of memory. */
static int span_window(osw *x, milp *m, osw_win *w, const double *fix, int64_t cap, term_list *mm,
                       int *idx, double *val)
{
    const graph_profile *g = x->g;
    int32_t n = x->n;
    int32_t len = w->hop - w->lop - 1;
    drop_rows_span(x, m, w, fix, idx, val);
    osw_trip_rows(m, w, len, idx, val);
    int nz;
    /* off while op i runs (R_i, i = lop+1+k): R_i = R_(i-1) + out_i - in_i,
       in_i for i >= lop+2 (at index i-lop-2); R_(hop-1) = in_hop; off in
       the half-stage before op i: R_(i-1) - in_i >= 0 */
    for (int32_t k = 0; k < len; k++) {
        int32_t b = w->lop + 1 + k;
        nz = 0;
        idx[nz] = w->v_r + k;
        val[nz++] = 1;
        if (k > 0) {
            idx[nz] = w->v_r + k - 1;
            val[nz++] = -1;
            idx[nz] = w->v_in + k - 1;
            val[nz++] = 1;
        }
        idx[nz] = w->v_oc + k;
        val[nz++] = -1;
        if (w->v_od >= 0 && b >= w->od_lo && b <= w->od_hi) {
            idx[nz] = w->v_od + (b - w->od_lo);
            val[nz++] = -1;
        }
        milp_row(m, 0, 0, nz, idx, val);
        if (k > 0)
            milp_row2(m, 0, MILP_INF, w->v_r + k - 1, 1, w->v_in + k - 1, -1);
    }
    milp_row2(m, 0, 0, w->v_r + len - 1, 1, w->v_in + len - 1, -1);
    double bm = (double)g->bytes[w->s] / (double)cap;
    int bad = 0;
    for (int32_t k = 0; k < len; k++) {
        int32_t op = w->lop + 1 + k;
        bad |= osw_tl_add(&mm[(2 * op + 1) % n], w->v_r + k, -bm);
        if (k > 0) { /* the half-stage before op: R_(op-1) - in_op */
            bad |= osw_tl_add(&mm[(2 * op) % n], w->v_r + k - 1, -bm);
            bad |= osw_tl_add(&mm[(2 * op) % n], w->v_in + k - 1, bm);
        }
    }
    return bad;
}

/* The span model's copy streams: each runs its copies in a fixed order
   (x->ord_in, x->ord_out), its cursor tied to the ops chosen by big-M rows
   (M). */
static void span_streams(const osw *x, milp *m, double L, double M, int *idx, double *val)
{
    const graph_profile *g = x->g;
    int32_t no = x->n_ops;
    for (int in = 0; in < 2; in++) {
        const int32_t *ord = in ? x->ord_in : x->ord_out;
        for (int32_t k = 0; k < x->n_win; k++) {
            osw_win *w = &x->win[ord[k]], *pw = &x->win[ord[k ? k - 1 : x->n_win - 1]];
            int32_t len = w->hop - w->lop - 1;
            double bytes = (double)g->bytes[w->s] / x->tau;
            double d = L + bytes / (in ? x->rate_h : x->rate_d);
            int v_e = in ? w->v_ei : w->v_eo, v_pe = in ? pw->v_ei : pw->v_eo;
            int v_x = in ? w->v_in : w->v_oc; /* the copies (drops take no time) */
            int nz = 0;
            /* after the stream's previous copy (of the previous iteration for
               the first one, one iteration time earlier) */
            if (x->n_win > 1) {
                idx[nz] = v_e;
                val[nz++] = 1;
                idx[nz] = v_pe;
                val[nz++] = -1;
            }
            if (!k) {
                idx[nz] = x->v_p;
                val[nz++] = 1;
            }
            for (int32_t j = 0; j < len; j++) {
                idx[nz] = v_x + j;
                val[nz++] = -d;
            }
            milp_row(m, 0, MILP_INF, nz, idx, val);
            if (!in) {
                /* an out starts after op lop ends, and has ended before op b
                   starts (b: its end op, binary) */
                nz = 0;
                idx[nz] = v_e;
                val[nz++] = 1;
                for (int32_t j = 0; j < len; j++) {
                    idx[nz] = v_x + j;
                    val[nz++] = -d;
                }
                nz = t_start(x, w->lop, -1, idx, val, nz);
                milp_row(m, op_tau(x, w->lop), MILP_INF, nz, idx, val);
                for (int32_t b = w->lop + 1; b <= w->hop - 1; b++) {
                    nz = 0;
                    idx[nz] = v_e;
                    val[nz++] = 1;
                    nz = t_start(x, b, -1, idx, val, nz);
                    for (int32_t b2 = w->lop + 1; b2 <= b; b2++) {
                        idx[nz] = w->v_oc + (b2 - w->lop - 1);
                        val[nz++] = M;
                        if (w->v_od >= 0 && b2 >= w->od_lo && b2 <= w->od_hi) {
                            idx[nz] = w->v_od + (b2 - w->od_lo);
                            val[nz++] = M;
                        }
                    }
                    milp_row(m, -MILP_INF, M, nz, idx, val);
                }
            } else {
                /* an in has ended before op hop starts (times of the
                   iteration it is issued in: one earlier for a wrap window),
                   and starts after op a - 1 ends (a: its start op, binary) */
                int32_t sh = w->wrap ? 1 : 0;
                nz = 0;
                idx[nz] = v_e;
                val[nz++] = 1;
                nz = t_start(x, w->hop - sh * no, -1, idx, val, nz);
                milp_row(m, -MILP_INF, 0, nz, idx, val);
                for (int32_t a = w->lop + 2; a <= w->hop; a++) {
                    nz = 0;
                    idx[nz] = v_e;
                    val[nz++] = 1;
                    for (int32_t j = 0; j < len; j++) {
                        idx[nz] = v_x + j;
                        val[nz++] = -d;
                    }
                    nz = t_start(x, a - 1 - sh * no, -1, idx, val, nz);
                    for (int32_t a2 = a; a2 <= w->hop; a2++) {
                        idx[nz] = w->v_in + (a2 - w->lop - 2);
                        val[nz++] = -M;
                    }
                    milp_row(m, op_tau(x, a - 1) - M, MILP_INF, nz, idx, val);
                }
            }
        }
    }
}

/* The span model (docs/bounds.md, "optimal-swap"): op starts S_i and the
   iteration time P continuous; per window an out that ends before op b
   starts (b binary, a drop or a copy) and an in that starts after op a - 1
   ends (a binary), the storage off the GPU in the half-stages between;
   each copy stream runs its copies in a fixed order, its cursor (the end
   of the stream's last copy so far) a continuous variable; big-M rows tie
   the cursors to the chosen ops. fix: the binaries fixed to these values
   (NULL: free). */
int osw_build_span(osw *x, milp *m, int64_t cap, const double *fix, sw_err *err)
{
    const graph_profile *g = x->g;
    int32_t n = x->n, no = x->n_ops, nt = g->n_tensors;
    double L = x->lat / x->tau;
    term_list *mm = sw_calloc((size_t)n, sizeof *mm);
    double *live = sw_calloc((size_t)n, sizeof *live);
    size_t cap_nz = 4 * (size_t)no + 64;
    int *idx = sw_malloc(cap_nz * sizeof *idx);
    double *val = sw_malloc(cap_nz * sizeof *val);
    int rc = 0;
    if (!mm || !live || !idx || !val || span_orders(x)) {
        rc = sw_fail(err, SW_ENOMEM, "out of memory");
        goto done;
    }
    /* op starts (op 0 at time 0) and the iteration time */
    x->v_s = milp_vars(m);
    for (int32_t i = 0; i < no; i++)
        milp_var(m, 0, i ? MILP_INF : 0, 0, 0);
    x->v_p = milp_var(m, 0, MILP_INF, 1, 0);
    for (int32_t i = 1; i < no; i++)
        milp_row2(m, op_tau(x, i - 1), MILP_INF, x->v_s + i, 1, x->v_s + i - 1, -1);
    milp_row2(m, op_tau(x, no - 1), MILP_INF, x->v_p, 1, x->v_s + no - 1, -1);
    /* big M: above any time difference of a plan worth having (every op,
       every possible copy, one after another) */
    double ub = 0;
    for (int32_t i = 0; i < no; i++)
        ub += op_tau(x, i);
    for (int32_t i = 0; i < x->n_win; i++) {
        double b = (double)g->bytes[x->win[i].s] / x->tau;
        ub += 2 * L + b / x->rate_h + b / x->rate_d;
    }
    double M = 3 * ub + 1;
    /* live bytes per half-stage */
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
    /* windows: variables */
    for (int32_t i = 0; i < x->n_win; i++) {
        osw_win *w = &x->win[i];
        const graph_tensor *t = &g->tensors[w->s];
        int clean = t->persistent && g->n_mutations[w->s] == 0;
        int32_t len = w->hop - w->lop - 1;
        w->v_w = milp_var(m, 0, 1, 0, 0);
        w->v_oc = milp_vars(m);
        for (int32_t k = 0; k < len; k++)
            if (clean) /* never copied: every out is a drop */
                milp_var(m, 0, 0, 0, 1);
            else
                bvar(m, fix);
        w->v_in = milp_vars(m);
        for (int32_t k = 0; k < len; k++)
            bvar(m, fix);
        w->v_r = milp_vars(m);
        for (int32_t k = 0; k < len; k++)
            milp_var(m, 0, 1, 0, 0);
        w->v_eo = milp_var(m, -MILP_INF, MILP_INF, 0, 0);
        w->v_ei = milp_var(m, -MILP_INF, MILP_INF, 0, 0);
    }
    /* windows: flow and memory */
    for (int32_t i = 0; i < x->n_win; i++) {
        osw_win *w = &x->win[i];
        int32_t len = w->hop - w->lop - 1;
        if ((size_t)(3 * len + 16) > cap_nz) {
            rc = sw_fail(err, SW_EINVAL, "optimal-swap: internal: row too long");
            goto done;
        }
        if (span_window(x, m, w, fix, cap, mm, idx, val)) {
            rc = sw_fail(err, SW_ENOMEM, "out of memory");
            goto done;
        }
    }
    span_streams(x, m, L, M, idx, val);
    /* memory per half-stage */
    for (int32_t j = 0; j < n; j++) {
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
            milp_row(m, -MILP_INF, 1 - live[j], (int)mm[j].n, mm[j].idx, mm[j].val);
        }
    }
done:
    osw_tl_free(mm, n);
    sw_free(live);
    sw_free(idx);
    sw_free(val);
    return rc;
}

/* Exclude the decisions of incumbent v (the span model's binaries) from
   the program: sum of those at 1 - sum of the others <= ones - 1. */
void osw_nogood(const osw *x, milp *m, const double *v)
{
    int n = milp_vars(m), nz = 0;
    int *idx = sw_malloc(((size_t)n + 1) * sizeof *idx);
    double *val = sw_malloc(((size_t)n + 1) * sizeof *val);
    if (!idx || !val) {
        sw_free(idx);
        sw_free(val);
        milp_row(m, 0, 0, 1, (int[]){-1}, (double[]){1}); /* reported by the solve */
        return;
    }
    double ones = 0;
    for (int32_t i = 0; i < x->n_win; i++) {
        const osw_win *w = &x->win[i];
        int32_t len = w->hop - w->lop - 1;
        for (int part = 0; part < 3; part++) {
            int v0 = part == 0 ? w->v_oc : part == 1 ? w->v_in : w->v_od;
            int32_t cnt = part < 2 ? len : w->v_od >= 0 ? w->od_hi - w->od_lo + 1 : 0;
            for (int32_t k = 0; k < cnt; k++) {
                int on = v[v0 + k] > 0.5;
                idx[nz] = v0 + k;
                val[nz++] = on ? 1 : -1;
                ones += on;
            }
        }
    }
    milp_row(m, -MILP_INF, ones - 1, nz, idx, val);
    sw_free(idx);
    sw_free(val);
}

/* One gap's decisions in the incumbent v, for both models: a trip taken
   (v_w) leaves at lo + 1 + k where its out binary k is set, or at the
   drop's position, and comes back at lo + 2 + k where its in binary k is
   set (len binaries each; positions are ops in the span model, half-stages
   in the stage model). *out and *in are -1 where none is set; returns 1 for
   a drop. */
static int osw_pick(const osw_win *w, const double *v, int32_t lo, int32_t len, int32_t *out,
                    int32_t *in)
{
    int drop = 0;
    *out = *in = -1;
    if (v[w->v_w] < 0.5)
        return 0;
    for (int32_t k = 0; k < len; k++) {
        if (v[w->v_oc + k] > 0.5)
            *out = lo + 1 + k;
        if (v[w->v_in + k] > 0.5)
            *in = lo + 2 + k;
    }
    if (w->v_od >= 0)
        for (int32_t a = w->od_lo; a <= w->od_hi; a++)
            if (v[w->v_od + (a - w->od_lo)] > 0.5) {
                *out = a;
                drop = 1;
            }
    return drop;
}

/* Read the span model's decisions: out_op/in_op, and the half-stages
   out_at = 2 out_op (resident until op out_op starts), in_at = 2 in_op
   (resident from the end of op in_op - 1) that the packing works in. */
void osw_read_span(osw *x, const double *v)
{
    for (int32_t i = 0; i < x->n_win; i++) {
        osw_win *w = &x->win[i];
        w->out_at = w->in_at = -1;
        w->drop = osw_pick(w, v, w->lop, w->hop - w->lop - 1, &w->out_op, &w->in_op);
        if (w->out_op < 0 || w->in_op < 0) {
            w->out_op = w->in_op = -1;
            w->drop = 0;
            continue;
        }
        w->out_at = 2 * w->out_op;
        w->in_at = 2 * w->in_op;
    }
}

/* Read the stage model's decisions (half-stages) from the incumbent. */
void osw_read(osw *x, const double *v)
{
    for (int32_t i = 0; i < x->n_win; i++) {
        osw_win *w = &x->win[i];
        w->drop = osw_pick(w, v, w->lo, w->hi - w->lo - 2, &w->out_at, &w->in_at);
    }
}

/* The iteration time the decisions give in the stage model (s). */
double osw_time(const osw *x, double *stage)
{
    const graph_profile *g = x->g;
    int32_t n = x->n;
    for (int32_t j = 0; j < n; j++)
        stage[j] = 0;
    for (int32_t i = 0; i < x->n_win; i++) {
        const osw_win *w = &x->win[i];
        if (w->out_at < 0)
            continue;
        double b = (double)g->bytes[w->s];
        stage[w->in_at % n] += x->lat + b / x->rate_h;
        if (!w->drop)
            stage[w->out_at % n] += x->lat + b / x->rate_d;
    }
    double total = 0;
    for (int32_t j = 0; j < n; j++) {
        double op = stage_op(x, j) >= 0 ? g->ops[stage_op(x, j)].time_s : 0;
        stage[j] = SW_MAX(stage[j], op);
        total += stage[j];
    }
    return total;
}
