/* orm_round.c: lp-round, Checkmate's two-phase rounding: R from a rounded
   S, holding and repairing plans over the budget, and the roundings of
   the relaxation. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "orm.h"

/* ---- lp-round: Checkmate's two-phase rounding ---- */

/* R from c->S (Checkmate's second phase): from the last stage back, every
   storage stage t reads (op t's inputs, a re-run's) or hands on to the next
   stage (S[t+1]) and does not hold at its start is remade by re-running its
   producer, whose inputs are then needed in turn; where the producer may not
   be re-run in stage t, the storage is held at the stage's start instead
   (S[t] = 1, which the stage before must then provide). This is the least R
   for S; orc_settle then drops what S kept and nothing needs. */
void orc_r_from_s(orc *c)
{
    int32_t T = c->T, ns = c->ns;
    memset(c->R, 0, (size_t)Tsq(c));
    for (int32_t t = T - 1; t >= 0; t--) {
        uint8_t *Rt = c->R + (size_t)t * (size_t)T;
        uint8_t *St = c->S + (size_t)t * (size_t)ns;
        const uint8_t *Sn = t + 1 < T ? c->S + (size_t)(t + 1) * (size_t)ns : NULL;
        memset(c->need, 0, (size_t)ns);
        for (int32_t a = c->acc_off[t]; a < c->acc_off[t + 1]; a++)
            if (!c->acc_mk[a] && !St[c->acc_c[a]])
                c->need[c->acc_c[a]] = 1;
        for (int32_t x = 0; Sn && x < ns; x++)
            if (Sn[x] && !St[x] && c->pp[x] < t)
                c->need[x] = 1;
        for (int32_t k = t - 1; k >= 0; k--) {
            int any = 0;
            for (int32_t a = c->acc_off[k]; a < c->acc_off[k + 1] && !any; a++)
                any = c->acc_mk[a] && c->need[c->acc_c[a]];
            if (!any)
                continue;
            if (can_rerun(c, t, k)) {
                Rt[k] = 1;
                for (int32_t a = c->acc_off[k]; a < c->acc_off[k + 1]; a++)
                    if (c->acc_mk[a])
                        c->need[c->acc_c[a]] = 0;
                for (int32_t a = c->acc_off[k]; a < c->acc_off[k + 1]; a++)
                    if (!c->acc_mk[a] && !St[c->acc_c[a]])
                        c->need[c->acc_c[a]] = 1;
            } else {
                for (int32_t a = c->acc_off[k]; a < c->acc_off[k + 1]; a++)
                    if (c->acc_mk[a] && c->need[c->acc_c[a]]) {
                        St[c->acc_c[a]] = 1;
                        c->need[c->acc_c[a]] = 0;
                    }
            }
        }
    }
}

/* Fill the gaps of c->S that would be remade only to be held: from the last
   stage back, a storage held at the next stage's start and not read by
   this stage's op is held at this one's too (S grows instead of R). */
static void orc_hold(orc *c)
{
    int32_t T = c->T, ns = c->ns;
    for (int32_t t = T - 2; t >= 0; t--) {
        uint8_t *St = c->S + (size_t)t * (size_t)ns;
        const uint8_t *Sn = St + ns;
        for (int32_t x = 0; x < ns; x++) {
            if (!Sn[x] || St[x] || c->pp[x] >= t)
                continue;
            int reads = 0;
            for (int32_t a = c->acc_off[t]; a < c->acc_off[t + 1] && !reads; a++)
                reads = c->acc_c[a] == x;
            if (!reads)
                St[x] = 1;
        }
    }
}

/* What remaking x in stage t would cost, with St held: its producer's
   time and, recursively, that of each input not held (c->list marks the
   producers counted, with stamp); 1e30 where some producer may not be
   re-run in t. */
static double remake_cost(orc *c, int32_t t, int32_t x, const uint8_t *St, int32_t stamp)
{
    int32_t p = c->pp[x];
    if (c->list[p] == stamp)
        return 0;
    c->list[p] = stamp;
    if (!can_rerun(c, t, p))
        return 1e30;
    double sum = c->time[p];
    for (int32_t a = c->acc_off[p]; a < c->acc_off[p + 1] && sum < 1e29; a++)
        if (!c->acc_mk[a] && !St[c->acc_c[a]])
            sum += remake_cost(c, t, c->acc_c[a], St, stamp);
    return sum;
}

/* The plan of c->S (through orc_r_from_s), repaired until it fits c->cap:
   at the first stage that overflows, of the storages held at its start the
   one with the least (S* + 0.05) x remaking time (its producer's and, in
   turn, that of inputs not held) per byte and per stage until its next use
   (DTR's heuristic, weighted by the relaxation) is dropped, eight times
   dearer if the stage uses it (nu: scratch, per storage): an unused one until the next stage that reads it,
   which remakes it; a used one at this stage only, which remakes it before
   its use. Then R is derived again. Returns 0 with *ev
   (c->R, c->S settled) when it fits, -1 when nothing can be dropped or
   after max_iter drops. */
int orc_repair(orc *c, const double *lpS, int32_t *nu, or_eval *ev, int32_t max_iter)
{
    int32_t T = c->T, ns = c->ns;
    for (int32_t it = 0;; it++) {
        orc_r_from_s(c);
        if (orc_settle(c) || orc_replay(c, NULL, ev))
            return -1;
        if (ev->peak <= c->cap)
            return 0;
        if (it >= max_iter || ev->over < 0)
            return -1;
        int32_t t = ev->over;
        uint8_t *St = c->S + (size_t)t * (size_t)ns;
        /* c->last as a mark: the storages stage t touches */
        const uint8_t *Rt = c->R + (size_t)t * (size_t)T;
        for (int32_t x = 0; x < ns; x++)
            c->last[x] = 0;
        for (int32_t k = 0; k <= t; k++)
            if (k == t || Rt[k])
                for (int32_t a = c->acc_off[k]; a < c->acc_off[k + 1]; a++)
                    c->last[c->acc_c[a]] = 1;
        /* the next stage (>= t) that touches each held storage; c->need marks
           those still unfound */
        int32_t left = 0;
        for (int32_t x = 0; x < ns; x++) {
            c->need[x] = St[x] != 0;
            nu[x] = T;
            left += St[x] != 0;
        }
        for (int32_t v = t; v < T && left > 0; v++) {
            const uint8_t *Rv = c->R + (size_t)v * (size_t)T;
            for (int32_t k = 0; k <= v; k++) {
                if (k < v && !Rv[k])
                    continue;
                for (int32_t a = c->acc_off[k]; a < c->acc_off[k + 1]; a++) {
                    int32_t x = c->acc_c[a];
                    if (c->need[x]) {
                        c->need[x] = 0;
                        nu[x] = v;
                        left--;
                    }
                }
            }
        }
        int32_t dropped = -1;
        for (int32_t k = 0; k < T; k++)
            c->list[k] = -1;
        int32_t stamp = 0;
        for (;;) {
            int32_t best = -1;
            double bs = 0;
            for (int32_t x = 0; x < ns; x++) {
                if (!St[x] || c->last[x] == 2)
                    continue;
                double cost = remake_cost(c, t, x, St, stamp++);
                if (cost >= 1e29)
                    continue;
                double v = lpS ? SW_MAX(lpS[(size_t)t * (size_t)ns + (size_t)x], 0.0) : 1;
                double sc = (v + 0.05) * (cost + 1e-9) /
                            ((double)c->M[x] * (double)(nu[x] - t + 1)) * (c->last[x] ? 8 : 1);
                if (best < 0 || sc < bs) {
                    best = x;
                    bs = sc;
                }
            }
            if (best < 0)
                break;
            int used = c->last[best] == 1;
            c->last[best] = 2; /* tried */
            int32_t u = used ? t : nu[best];
            if (u >= T || !can_rerun(c, u, c->pp[best]))
                continue;
            for (int32_t v = t; v <= u; v++)
                c->S[(size_t)v * (size_t)ns + (size_t)best] = 0;
            dropped = best;
            break;
        }
        if (dropped < 0)
            return -1;
    }
}

/* Hold instead of re-run where the bytes allow: for each re-run of the
   settled plan in c->R, of the dearest ops first, its outputs are held from
   where they last were up to the stage that re-ran them, and R derived
   again; kept where the plan still fits c->cap and costs less (passes
   while something is kept, OR_HOLD_PASSES at most). *ev is the
   plan's figures, in and out. Returns the changes kept, or -1 when out of
   memory. */
int orc_improve(orc *c, or_eval *ev)
{
    int32_t T = c->T, ns = c->ns;
    size_t n = (size_t)T * (size_t)ns;
    uint8_t *S1 = sw_malloc(n + 1), *R1 = sw_malloc((size_t)Tsq(c) + 1);
    int32_t *ord = sw_malloc(((size_t)T + 1) * sizeof *ord);
    if (!S1 || !R1 || !ord) {
        sw_free(S1), sw_free(R1), sw_free(ord);
        return -1;
    }
    /* ops by time, dearest first (insertion sort: ties keep the order) */
    for (int32_t i = 0; i < T; i++) {
        int32_t j = i;
        while (j > 0 && c->time[ord[j - 1]] < c->time[i]) {
            ord[j] = ord[j - 1];
            j--;
        }
        ord[j] = i;
    }
    int kept = 0, before = -1;
    for (int pass = 0; pass < OR_HOLD_PASSES && kept > before; pass++) {
    before = kept;
    for (int32_t i = 0; i < T; i++) {
        int32_t k = ord[i];
        if (!c->elig[k])
            continue;
        for (int32_t t = k + 1; t < T; t++) {
            if (!c->R[(size_t)t * (size_t)T + (size_t)k])
                continue;
            memcpy(S1, c->S, n);
            memcpy(R1, c->R, (size_t)Tsq(c));
            for (int32_t a = c->acc_off[k]; a < c->acc_off[k + 1]; a++) {
                if (!c->acc_mk[a])
                    continue;
                int32_t x = c->acc_c[a], u = t;
                while (u - 1 > k && !c->S[(size_t)(u - 1) * (size_t)ns + (size_t)x] &&
                       !c->R[(size_t)(u - 1) * (size_t)T + (size_t)k])
                    u--;
                for (int32_t w = u; w <= t && w <= c->N[x]; w++)
                    c->S[(size_t)w * (size_t)ns + (size_t)x] = 1;
            }
            orc_r_from_s(c);
            or_eval e2;
            if (!orc_settle(c) && !orc_replay(c, NULL, &e2) && e2.peak <= c->cap &&
                e2.recompute_s < ev->recompute_s) {
                *ev = e2;
                kept++;
            } else {
                memcpy(c->S, S1, n);
                memcpy(c->R, R1, (size_t)Tsq(c));
            }
        }
    }
    }
    sw_free(S1), sw_free(R1), sw_free(ord);
    return kept;
}

/* splitmix64: the roundings' random numbers, from the seed alone. */
static uint64_t or_rand(uint64_t *z)
{
    uint64_t x = (*z += 0x9e3779b97f4a7c15ULL);
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

#define OR_THRESHOLDS 11 /* deterministic thresholds tried per relaxation */

/* Round c->lpS into plans (thresholds, then `rounds` random draws S = 1 with
   probability S*); the cheapest that fits c->cap goes to bestR / *best.
   Returns the candidates that fit; *won = 1 and *how naming the rounding
   where one beats *best (or is the first, without have). */
int or_round(orc *c, const planner_opts *o, uint8_t *bestR, or_eval *best, int have,
             char *how, size_t howlen, int *tried, int *won, double *rbest, char *rhow,
             uint8_t *rbestR)
{
    static const double thr[OR_THRESHOLDS] = {0.01, 0.05, 0.1, 0.2, 0.3, 0.4,
                                              0.5,  0.6,  0.7, 0.8, 0.9};
    int32_t rounds = (int32_t)params_int(&o->params, "rounds");
    uint64_t z = (uint64_t)o->seed * 0x2545f4914f6cdd1dULL + 17;
    size_t n = (size_t)c->T * (size_t)c->ns;
    int fits = 0;
    uint8_t *S0 = sw_malloc(n + 1); /* the rounding, for its second repair */
    int32_t *nu = sw_malloc(((size_t)c->ns + 1) * sizeof *nu); /* orc_repair's scratch */
    if (!S0 || !nu) {
        sw_free(S0);
        sw_free(nu);
        return 0;
    }
    for (int32_t i = 0; i < 2 * OR_THRESHOLDS + rounds; i++) {
        if (i >= OR_THRESHOLDS && i < 2 * OR_THRESHOLDS) {
            /* R >= threshold, the least S it needs */
            double u = thr[i - OR_THRESHOLDS];
            for (size_t j = 0; j < (size_t)Tsq(c); j++)
                c->R[j] = c->lpR[j] > 1e-6 && c->lpR[j] >= u;
            if (orc_settle(c))
                continue;
        } else {
            for (size_t j = 0; j < n; j++) {
                double v = c->lpS[j];
                double u = i < OR_THRESHOLDS ? thr[i]
                                             : (double)(or_rand(&z) >> 11) *
                                                   (1.0 / 9007199254740992.0);
                c->S[j] = v > 1 - 1e-6 || (v > 1e-6 && (i < OR_THRESHOLDS ? v >= u : v > u));
            }
        }
        memcpy(S0, c->S, n);
        for (int hold = 0; hold < 2; hold++) {
            if (hold) {
                memcpy(c->S, S0, n);
                orc_hold(c);
            }
            or_eval ev;
            (*tried)++;
            int bad = orc_repair(c, c->lpS, nu, &ev, 4 * c->ns);
            if (bad)
                continue;
            fits++;
            char h[OR_HOWLEN];
            if (i < OR_THRESHOLDS)
                snprintf(h, sizeof h, "rounding S >= %.2f%s", thr[i], hold ? ", held" : "");
            else if (i < 2 * OR_THRESHOLDS)
                snprintf(h, sizeof h, "rounding R >= %.2f%s", thr[i - OR_THRESHOLDS],
                         hold ? ", held" : "");
            else
                snprintf(h, sizeof h, "random rounding of S %d of %d%s",
                         i - 2 * OR_THRESHOLDS + 1, rounds, hold ? ", held" : "");
            if (*rbest < 0 || ev.recompute_s < *rbest) {
                *rbest = ev.recompute_s;
                snprintf(rhow, OR_HOWLEN, "%s", h);
                memcpy(rbestR, c->R, (size_t)Tsq(c));
            }
            if (!have || ev.recompute_s < best->recompute_s) {
                *best = ev;
                have = 1;
                *won = 1;
                memcpy(bestR, c->R, (size_t)Tsq(c));
                snprintf(how, howlen, "%s", h);
            }
        }
    }
    sw_free(S0);
    sw_free(nu);
    return fits;
}
