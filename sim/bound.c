/* bound.c: lower bounds on the iteration time of any plan under a budget.

   Three facts hold for every plan the verifier accepts and the simulator
   times (docs/bounds.md writes each argument out):
   - every op runs at least once on the one compute stream: T >= compute;
   - while op o runs, every storage that is live then (made before or by o,
     used by o or later, or persistent and used at all) is either resident
     or off the GPU, and at most budget bytes are resident, so at least
     live(o) + workspace(o) - budget bytes are off the GPU at o; each of them
     is used again, so it comes back by PCIe (at most the fastest
     host-to-device rate) or is recomputed (a re-run of its producer);
   - a storage made by op p and used by op u is live at every op o with
     p ->* o ->* u in the dependency DAG, whatever the schedule.
   Bounds never count held_until (a planner may free such a storage early)
   nor copy latencies (they only add). */
#include "bound.h"

#include <math.h>
#include <string.h>

#include "../profiles/device.h"

/* The smallest T with T >= compute + (excess - s) * rho and T >= s / rate
   for some 0 <= s <= excess: the excess split between PCIe (hidden behind
   compute at best) and recomputation (added to the compute stream). */
static double split_bound(double compute, double excess, double rho, double rate)
{
    if (excess <= 0 || excess / rate <= compute)
        return compute;
    if (!isfinite(rho))
        return excess / rate;
    return (compute + excess * rho) / (1 + rate * rho);
}

/* Per op: bytes live at it in every schedule (reachability), without the
   persistent storages and the workspace. Returns 0 or SW_ENOMEM. */
static int dag_live(const graph_profile *g, const int32_t *s_off, const int32_t *s_ops,
                    int64_t *live)
{
    int32_t n = g->n_ops;
    size_t w = ((size_t)n + 63) / 64;
    uint64_t *D = sw_calloc((size_t)n * w, sizeof *D); /* descendants-or-self */
    uint64_t *A = sw_calloc((size_t)n * w, sizeof *A); /* ancestors-or-self */
    uint64_t *acc = sw_malloc(w * sizeof *acc);
    if (!D || !A || !acc) {
        sw_free(D);
        sw_free(A);
        sw_free(acc);
        return SW_ENOMEM;
    }
    for (int32_t k = n - 1; k >= 0; k--) {
        int32_t o = g->order[k];
        uint64_t *d = D + (size_t)o * w;
        d[o / 64] |= 1ull << (o % 64);
        for (int32_t j = g->succ_off[o]; j < g->succ_off[o + 1]; j++) {
            const uint64_t *ds = D + (size_t)g->succ[j] * w;
            for (size_t x = 0; x < w; x++)
                d[x] |= ds[x];
        }
    }
    for (int32_t k = 0; k < n; k++) {
        int32_t o = g->order[k];
        uint64_t *a = A + (size_t)o * w;
        a[o / 64] |= 1ull << (o % 64);
        for (int32_t j = g->pred_off[o]; j < g->pred_off[o + 1]; j++) {
            const uint64_t *ap = A + (size_t)g->pred[j] * w;
            for (size_t x = 0; x < w; x++)
                a[x] |= ap[x];
        }
    }
    for (int32_t s = 0; s < g->n_tensors; s++) {
        if (s_off[s] == s_off[s + 1] || g->tensors[s].persistent)
            continue;
        memset(acc, 0, w * sizeof *acc);
        for (int32_t j = s_off[s]; j < s_off[s + 1]; j++) {
            const uint64_t *au = A + (size_t)s_ops[j] * w;
            for (size_t x = 0; x < w; x++)
                acc[x] |= au[x];
        }
        int32_t p = g->tensors[s].producer;
        const uint64_t *dp = p >= 0 ? D + (size_t)p * w : NULL;
        int64_t b = g->bytes[s];
        for (size_t x = 0; x < w; x++) {
            uint64_t m = dp ? acc[x] & dp[x] : acc[x];
            while (m) {
                int bit = __builtin_ctzll(m);
                m &= m - 1;
                live[x * 64 + (size_t)bit] += b;
            }
        }
    }
    sw_free(D);
    sw_free(A);
    sw_free(acc);
    return 0;
}

int bound_compute(const graph_profile *g, int64_t budget, const int32_t *order, bound_result *r,
                  sw_err *err)
{
    memset(r, 0, sizeof *r);
    r->budget_bytes = budget;
    r->compute_s = g->total_compute_s;
    r->resident_op = r->live_op = r->order_live_op = -1;
    double h2d_a, d2h_a, h2d_b, d2h_b;
    dev_rates(&g->device, &h2d_a, &d2h_a, &h2d_b, &d2h_b);
    r->h2d_rate = SW_MAX(h2d_a, h2d_b);
    int32_t n = g->n_ops, nt = g->n_tensors;
    if (order) {
        int32_t bad_op = -1, bad_pred = -1;
        int topo = graph_is_topological(g, order, &bad_op, &bad_pred);
        if (topo < 0)
            return sw_fail(err, SW_ENOMEM, "out of memory");
        if (!topo) {
            if (bad_op >= 0 && bad_op < n && bad_pred >= 0 && bad_pred < n)
                return sw_fail(err, SW_EINVAL, "the order runs op '%s' before its predecessor "
                               "'%s'", g->ops[bad_op].name, g->ops[bad_pred].name);
            return sw_fail(err, SW_EINVAL, "the order is not a topological order of the %d ops",
                           n);
        }
    }
    /* accessors of each storage (CSR), and what each op needs resident */
    int32_t *s_off = sw_calloc((size_t)nt + 1, sizeof *s_off);
    int32_t *s_ops = sw_malloc(((size_t)g->acc_off[n] + 1) * sizeof *s_ops);
    int64_t *live = sw_calloc((size_t)n + 1, sizeof *live);
    int32_t *first = sw_malloc(((size_t)nt + 1) * sizeof *first);
    int32_t *pos = sw_malloc(((size_t)n + 1) * sizeof *pos);
    int64_t *diff = sw_calloc((size_t)n + 2, sizeof *diff);
    int rc = 0;
    if (!s_off || !s_ops || !live || !first || !pos || !diff) {
        rc = sw_fail(err, SW_ENOMEM, "out of memory");
        goto done;
    }
    for (int32_t j = 0; j < g->acc_off[n]; j++)
        s_off[g->acc[j] + 1]++;
    for (int32_t s = 0; s < nt; s++)
        s_off[s + 1] += s_off[s];
    for (int32_t s = 0; s < nt; s++)
        first[s] = s_off[s];
    double rho = INFINITY;
    for (int32_t o = 0; o < n; o++) {
        int64_t need = g->ops[o].workspace_bytes, made = 0;
        for (int32_t j = g->acc_off[o]; j < g->acc_off[o + 1]; j++) {
            int32_t s = g->acc[j];
            s_ops[first[s]++] = o;
            need += g->bytes[s];
            if ((g->acc_flag[j] & GA_CREATE) && !g->tensors[s].persistent)
                made += g->bytes[s];
        }
        if (need > r->resident_bytes || r->resident_op < 0) {
            r->resident_bytes = need;
            r->resident_op = o;
        }
        if (made > 0 && g->ops[o].time_s / (double)made < rho)
            rho = g->ops[o].time_s / (double)made;
    }
    r->recompute_s_per_byte = rho;
    if (n > 0 && r->resident_bytes > budget) {
        const graph_op *op = &g->ops[r->resident_op];
        rc = sw_fail(err, SW_ENOFIT, "no plan fits: op %d '%s' needs %lld bytes resident while "
                     "it runs (its storages and %lld bytes of workspace), over the budget of "
                     "%lld bytes", r->resident_op, op->name, (long long)r->resident_bytes,
                     (long long)op->workspace_bytes, (long long)budget);
        goto done;
    }
    for (int32_t s = 0; s < nt; s++)
        if (s_off[s] < s_off[s + 1] && g->tensors[s].persistent)
            r->persistent_bytes += g->bytes[s];
    /* live in every schedule */
    r->exact_dag = n <= BOUND_MAX_DAG_OPS;
    if (r->exact_dag) {
        if (dag_live(g, s_off, s_ops, live)) {
            rc = sw_fail(err, SW_ENOMEM, "out of memory");
            goto done;
        }
    } else {
        for (int32_t o = 0; o < n; o++)
            for (int32_t j = g->acc_off[o]; j < g->acc_off[o + 1]; j++)
                if (!g->tensors[g->acc[j]].persistent)
                    live[o] += g->bytes[g->acc[j]];
    }
    for (int32_t o = 0; o < n; o++) {
        int64_t v = live[o] + r->persistent_bytes + g->ops[o].workspace_bytes;
        if (r->live_op < 0 || v > r->live_bytes) {
            r->live_bytes = v;
            r->live_op = o;
        }
    }
    r->excess_bytes = SW_MAX(0, r->live_bytes - budget);
    r->swap_s = SW_MAX(r->compute_s, (double)r->excess_bytes / r->h2d_rate);
    r->any_s = split_bound(r->compute_s, (double)r->excess_bytes, rho, r->h2d_rate);
    /* live under a given order: made at or before the position, used at or
       after it (persistent storages the iteration uses: throughout) */
    if (order) {
        r->has_order = 1;
        for (int32_t k = 0; k < n; k++)
            pos[order[k]] = k;
        for (int32_t s = 0; s < nt; s++) {
            if (s_off[s] == s_off[s + 1] || g->tensors[s].persistent)
                continue;
            int32_t lo = n, hi = -1;
            for (int32_t j = s_off[s]; j < s_off[s + 1]; j++) {
                lo = SW_MIN(lo, pos[s_ops[j]]);
                hi = SW_MAX(hi, pos[s_ops[j]]);
            }
            if (g->tensors[s].producer < 0)
                lo = 0;
            diff[lo] += g->bytes[s];
            diff[hi + 1] -= g->bytes[s];
        }
        int64_t run = 0;
        for (int32_t k = 0; k < n; k++) {
            run += diff[k];
            int64_t v = run + r->persistent_bytes + g->ops[order[k]].workspace_bytes;
            if (r->order_live_op < 0 || v > r->order_live_bytes) {
                r->order_live_bytes = v;
                r->order_live_op = order[k];
            }
        }
        r->order_excess_bytes = SW_MAX(0, r->order_live_bytes - budget);
        r->order_swap_s = SW_MAX(r->compute_s, (double)r->order_excess_bytes / r->h2d_rate);
        r->order_any_s = split_bound(r->compute_s, (double)r->order_excess_bytes, rho,
                                     r->h2d_rate);
    }
done:
    sw_free(s_off);
    sw_free(s_ops);
    sw_free(live);
    sw_free(first);
    sw_free(pos);
    sw_free(diff);
    return rc;
}

double bound_for(const bound_result *r, int reruns, int same_order)
{
    if (same_order && r->has_order)
        return reruns ? r->order_any_s : r->order_swap_s;
    return reruns ? r->any_s : r->swap_s;
}
