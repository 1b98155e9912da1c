/* orm_state.c: optimal-remat's view of the profile (stages, tracked
   storages, who may be re-run when), and a solution's settling (the least
   residency its re-runs need) and replay through the plan builder. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "orm.h"

void orc_free(orc *c)
{
    void *ptrs[] = {c->st, c->sid, c->pp, c->N, c->M, c->acc_off, c->acc_c, c->acc_mk, c->nout,
                    c->elig, c->H, c->RH, c->time, c->R, c->S, c->need, c->res, c->last,
                    c->list, c->lpS, c->lpR};
    for (size_t i = 0; i < SW_ARRAY_LEN(ptrs); i++)
        sw_free(ptrs[i]);
}

/* What the profile says once. Returns 0, SW_ENOMEM, or SW_EUNSUPPORTED (a
   non-persistent storage no op makes: it would come in by a copy). */
int orc_setup(orc *c, const graph_profile *g, int forward_only, sw_err *err)
{
    int32_t T = g->n_ops, nt = g->n_tensors, na = g->acc_off[T];
    c->g = g;
    c->T = T;
    int32_t *pos = NULL, *moff = NULL, *mpos = NULL, *fill = NULL;
    if (!ALLOC(c->sid, nt) || !ALLOC(c->st, nt) || !ALLOC(c->pp, nt) || !ALLOC(c->N, nt) ||
        !ALLOC(c->M, nt) || !ALLOC(c->acc_off, T + 1) || !ALLOC(c->acc_c, na) ||
        !ALLOC(c->acc_mk, na) || !ALLOC(c->nout, T) || !ALLOC(c->elig, T) || !ALLOC(c->H, T) ||
        !ALLOC(c->RH, T) || !ALLOC(c->time, T) || !ALLOC(c->need, nt) || !ALLOC(c->res, nt) ||
        !ALLOC(c->last, nt) || !ALLOC(c->list, T) || !ALLOC(pos, T) || !ALLOC(moff, nt + 1) ||
        !ALLOC(mpos, na) || !ALLOC(fill, nt + 1))
        goto oom;
    for (int32_t i = 0; i < T; i++)
        pos[g->order[i]] = i;
    c->persist = 0;
    c->ns = 0;
    for (int32_t s = 0; s < nt; s++) {
        c->sid[s] = -1;
        if (g->tensors[s].storage == s && g->tensors[s].persistent)
            c->persist += g->tensors[s].bytes;
    }
    /* tracked storages, in the order their producers run */
    for (int32_t i = 0; i < T; i++) {
        int32_t o = g->order[i];
        c->time[i] = g->ops[o].time_s;
        for (int32_t k = g->acc_off[o]; k < g->acc_off[o + 1]; k++) {
            int32_t s = g->acc[k];
            if (g->tensors[s].persistent || c->sid[s] >= 0)
                continue;
            if (!(g->acc_flag[k] & GA_CREATE)) {
                int rc = sw_fail(err, SW_EUNSUPPORTED, "optimal-remat: op %d '%s' reads tensor "
                                 "%d '%s', which is neither persistent nor made by an op (it "
                                 "would come in by a copy; rematerialisation plans copy nothing)",
                                 o, g->ops[o].name, s, g->tensors[s].name);
                sw_free(pos), sw_free(moff), sw_free(mpos), sw_free(fill);
                return rc;
            }
            c->sid[s] = c->ns;
            c->st[c->ns] = s;
            c->pp[c->ns] = i;
            c->M[c->ns] = g->tensors[s].bytes;
            c->ns++;
        }
    }
    /* tracked accesses per position */
    int32_t n = 0;
    for (int32_t i = 0; i < T; i++) {
        int32_t o = g->order[i];
        c->acc_off[i] = n;
        for (int32_t k = g->acc_off[o]; k < g->acc_off[o + 1]; k++) {
            int32_t x = c->sid[g->acc[k]];
            if (x < 0)
                continue;
            c->acc_c[n] = x;
            c->acc_mk[n] = (g->acc_flag[k] & GA_CREATE) != 0;
            c->nout[i] += c->acc_mk[n];
            n++;
        }
    }
    c->acc_off[T] = n;
    /* mutation positions per storage (every storage: persistent inputs too) */
    for (int32_t i = 0; i < T; i++) {
        int32_t o = g->order[i];
        for (int32_t k = g->acc_off[o]; k < g->acc_off[o + 1]; k++)
            if (g->acc_flag[k] & GA_MUTATE)
                moff[g->acc[k]]++;
    }
    if (graph_counts_to_offsets(moff, nt))
        goto oom;
    for (int32_t i = 0; i < T; i++) {
        int32_t o = g->order[i];
        for (int32_t k = g->acc_off[o]; k < g->acc_off[o + 1]; k++)
            if (g->acc_flag[k] & GA_MUTATE) {
                int32_t s = g->acc[k];
                mpos[moff[s] + fill[s]++] = i;
            }
    }
    /* which ops may be re-run, and until when */
    for (int32_t i = 0; i < T; i++) {
        int32_t o = g->order[i];
        int ok = g->ops[o].n_mut == 0 && c->nout[i] > 0 &&
                 (!forward_only || g->ops[o].phase == GP_FORWARD);
        c->H[i] = T - 1;
        for (int32_t k = g->acc_off[o]; k < g->acc_off[o + 1] && ok; k++) {
            int32_t s = g->acc[k];
            if (g->acc_flag[k] & GA_CREATE) {
                if (g->n_mutations[s] || g->tensors[s].kind == GK_INPUT)
                    ok = 0;
                continue;
            }
            /* a re-run must read the version the run read: before the next mutation */
            for (int32_t m = moff[s]; m < moff[s + 1]; m++)
                if (mpos[m] > i) {
                    c->H[i] = SW_MIN(c->H[i], mpos[m]);
                    break;
                }
        }
        c->elig[i] = (uint8_t)ok;
        if (!ok)
            c->H[i] = i;
    }
    /* the last stage each storage can be needed in, and each re-run be of
       use in, from the end back */
    for (int32_t x = 0; x < c->ns; x++)
        c->N[x] = c->pp[x];
    for (int32_t i = T - 1; i >= 0; i--) {
        int32_t rh = i;
        for (int32_t a = c->acc_off[i]; a < c->acc_off[i + 1]; a++)
            if (c->acc_mk[a])
                rh = SW_MAX(rh, c->N[c->acc_c[a]]);
        c->RH[i] = c->elig[i] ? SW_MIN(rh, c->H[i]) : i;
        for (int32_t a = c->acc_off[i]; a < c->acc_off[i + 1]; a++)
            if (!c->acc_mk[a])
                c->N[c->acc_c[a]] = SW_MAX(c->N[c->acc_c[a]], c->RH[i]);
    }
    sw_free(pos), sw_free(moff), sw_free(mpos), sw_free(fill);
    return 0;
oom:
    sw_free(pos), sw_free(moff), sw_free(mpos), sw_free(fill);
    return sw_fail(err, SW_ENOMEM, "out of memory");
}

/* From c->R (re-runs per stage): drop the useless re-runs (no output needed
   later in the stage or by the next), and the least residency S the rest
   needs, from the last stage back. Returns 0, or -1 if R re-runs an op it
   may not (then R is no solution). */
int orc_settle(orc *c)
{
    int32_t T = c->T, ns = c->ns;
    memset(c->need, 0, (size_t)ns);
    for (int32_t t = T - 1; t >= 0; t--) {
        uint8_t *Rt = c->R + (size_t)t * (size_t)T;
        for (int32_t k = t; k >= 0; k--) {
            if (k < t) {
                if (!Rt[k])
                    continue;
                if (k >= t || !c->elig[k] || t > c->H[k])
                    return -1;
                int useful = 0;
                for (int32_t a = c->acc_off[k]; a < c->acc_off[k + 1] && !useful; a++)
                    useful = c->acc_mk[a] && c->need[c->acc_c[a]];
                if (!useful) {
                    Rt[k] = 0;
                    continue;
                }
            }
            for (int32_t a = c->acc_off[k]; a < c->acc_off[k + 1]; a++)
                if (c->acc_mk[a])
                    c->need[c->acc_c[a]] = 0;
            for (int32_t a = c->acc_off[k]; a < c->acc_off[k + 1]; a++)
                if (!c->acc_mk[a])
                    c->need[c->acc_c[a]] = 1;
        }
        memcpy(c->S + (size_t)t * (size_t)ns, c->need, (size_t)ns);
    }
    for (int32_t x = 0; x < ns; x++)
        if (c->need[x])
            return -1; /* needed before anything made it */
    return 0;
}

/* Replay the settled R and S: the bytes resident after each computation
   (placements at its start, drops right after a storage's last use in the
   stage unless the next stage needs it), recording the tasks through b if
   not NULL. Returns 0, or -1 if an input would not be resident (a bug). */
int orc_replay(orc *c, plan_builder *b, or_eval *r)
{
    int32_t T = c->T, ns = c->ns;
    const graph_profile *g = c->g;
    memset(c->res, 0, (size_t)ns);
    memset(r, 0, sizeof *r);
    r->over = -1;
    int64_t cur = 0;
    for (int32_t t = 0; t < T; t++) {
        const uint8_t *Rt = c->R + (size_t)t * (size_t)T;
        const uint8_t *Sn = t + 1 < T ? c->S + (size_t)(t + 1) * (size_t)ns : NULL;
        int32_t nC = 0;
        for (int32_t k = 0; k < t; k++)
            if (Rt[k])
                c->list[nC++] = k;
        c->list[nC++] = t;
        for (int32_t i = 0; i < nC; i++) {
            int32_t k = c->list[i];
            for (int32_t a = c->acc_off[k]; a < c->acc_off[k + 1]; a++)
                c->last[c->acc_c[a]] = k;
        }
        for (int32_t i = 0; i < nC; i++) {
            int32_t k = c->list[i];
            for (int32_t a = c->acc_off[k]; a < c->acc_off[k + 1]; a++)
                if (!c->acc_mk[a] && !c->res[c->acc_c[a]])
                    return -1;
            if (b) {
                if (k < t)
                    pb_rerun(b, g->order[k]);
                else
                    pb_run(b, g->order[k]);
            }
            if (k < t) {
                r->reruns++;
                r->recompute_s += c->time[k];
            }
            for (int32_t a = c->acc_off[k]; a < c->acc_off[k + 1]; a++) {
                int32_t x = c->acc_c[a];
                if (c->acc_mk[a] && !c->res[x]) {
                    c->res[x] = 1;
                    cur += c->M[x];
                }
            }
            r->peak = SW_MAX(r->peak, cur);
            if (cur > c->cap && r->over < 0)
                r->over = t;
            for (int32_t a = c->acc_off[k]; a < c->acc_off[k + 1]; a++) {
                int32_t x = c->acc_c[a];
                if (c->last[x] == k && c->res[x] && !(Sn && Sn[x])) {
                    c->res[x] = 0;
                    cur -= c->M[x];
                    if (b)
                        pb_drop(b, c->st[x]);
                }
            }
        }
        /* resident but not needed next and not used here: gone at the stage's end */
        for (int32_t x = 0; x < ns; x++)
            if (c->res[x] && !(Sn && Sn[x])) {
                c->res[x] = 0;
                cur -= c->M[x];
                if (b)
                    pb_drop(b, c->st[x]);
            }
    }
    return 0;
}

/* R from a plan's tasks: the re-runs recorded before each run form its
   stage. Returns 0, or -1 if the plan does not read as stages. */
int orc_from_plan(orc *c, const plan *p)
{
    int32_t T = c->T;
    const graph_profile *g = c->g;
    memset(c->R, 0, (size_t)Tsq(c));
    int32_t n = 0; /* pending re-runs in c->list */
    int32_t t = 0;
    for (int32_t i = 0; i < p->n_tasks; i++) {
        const plan_task *x = &p->tasks[i];
        if (x->kind == TASK_RERUN) {
            if (n >= T)
                return -1;
            c->list[n++] = x->op;
        } else if (x->kind == TASK_RUN) {
            if (t >= T || g->order[t] != x->op)
                return -1;
            for (int32_t j = 0; j < n; j++) {
                int32_t k = -1;
                for (int32_t q = 0; q < t && k < 0; q++)
                    if (g->order[q] == c->list[j])
                        k = q;
                if (k < 0 || !c->elig[k] || t > c->H[k])
                    return -1;
                if (t <= c->RH[k])
                    c->R[(size_t)t * (size_t)T + (size_t)k] = 1;
            }
            n = 0;
            t++;
        } else if (x->kind == TASK_SWAP_IN || x->kind == TASK_SWAP_OUT) {
            if (!c->g->tensors[x->tensor].persistent)
                return -1;
        }
    }
    return t == T ? 0 : -1;
}
