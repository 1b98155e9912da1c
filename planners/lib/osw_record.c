/* osw_record.c: optimal-swap's recording: the decisions through the plan
   builder, in stages (stage model) or in stream order (span model), and
   the edges that make the simulator keep the program's timing. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "osw.h"


/* Record the decisions through the builder; stage[e] receives each task's
   stage. */
int osw_record(osw *x, plan_builder *b, const uint8_t *resident, int32_t *stage,
               int32_t *n_ev)
{
    const graph_profile *g = x->g;
    int32_t n = x->n, e = 0;
    for (int32_t s = 0; s < g->n_tensors; s++)
        if (resident[s])
            pb_resident(b, s);
    for (int32_t j = 0; j < n; j++) {
        for (int32_t i = 0; i < x->n_win; i++)
            if (x->win[i].in_at >= 0 && x->win[i].in_at % n == j) {
                pb_swap_in(b, x->win[i].s);
                stage[e++] = j;
            }
        if (stage_op(x, j) >= 0) {
            pb_run(b, stage_op(x, j));
            stage[e++] = j;
        }
        for (int32_t i = 0; i < x->n_win; i++)
            if (x->win[i].out_at >= 0 && x->win[i].out_at % n == j) {
                if (x->win[i].drop)
                    pb_drop(b, x->win[i].s);
                else
                    pb_swap_out(b, x->win[i].s);
                stage[e++] = j;
            }
    }
    *n_ev = e;
    return 0;
}

/* The plan p with the stage edges added: the first task of each stream in
   a stage waits for the last task of every other stream in the stages
   before (in the previous iteration, if none in this one), and the stage's
   first copy out waits for its last copy in. Returns the new plan or NULL. */
plan *osw_stage_edges(plan *p, const int32_t *stage)
{
    plan *q = plan_new(p->prof, 0);
    if (!q)
        return NULL;
    q->mem_kind = p->mem_kind;
    q->budget = p->budget;
    q->capacity = p->capacity;
    q->workspace_reserve = p->workspace_reserve;
    memcpy(q->policy, p->policy, sizeof q->policy);
    if (p->n_resident) {
        q->resident = sw_malloc((size_t)p->n_resident * sizeof *q->resident);
        if (!q->resident) {
            plan_free(q);
            return NULL;
        }
        memcpy(q->resident, p->resident, (size_t)p->n_resident * sizeof *q->resident);
        q->n_resident = p->n_resident;
    }
    int32_t last_of[STREAM__COUNT], before[STREAM__COUNT], last_all[STREAM__COUNT];
    int32_t cur_stage = -1;
    for (int st = 0; st < STREAM__COUNT; st++)
        last_of[st] = before[st] = last_all[st] = -1;
    for (int32_t t = 0; t < p->n_tasks; t++)
        last_all[plan_task_stream(p->tasks[t].kind)] = t;
    int32_t prev_stage[STREAM__COUNT] = {-1, -1, -1};
    int32_t last_h2d_here = -1;
    for (int32_t t = 0; t < p->n_tasks; t++) {
        const plan_task *x = &p->tasks[t];
        int st = plan_task_stream(x->kind);
        if (stage[t] != cur_stage) {
            for (int k = 0; k < STREAM__COUNT; k++)
                before[k] = last_of[k];
            cur_stage = stage[t];
            last_h2d_here = -1;
        }
        int32_t d[8], pd[8];
        int nd = 0, npd = 0;
        for (uint32_t k = 0; k < x->n_dep; k++)
            d[nd++] = plan_task_deps(p, x)[k];
        for (uint32_t k = 0; k < x->n_pdep; k++)
            pd[npd++] = plan_task_pdeps(p, x)[k];
        if (prev_stage[st] != stage[t]) { /* first of its stream in this stage */
            for (int o = 0; o < STREAM__COUNT; o++) {
                if (o == st)
                    continue;
                if (before[o] >= 0)
                    d[nd++] = before[o];
                else if (last_all[o] >= 0)
                    pd[npd++] = last_all[o];
            }
            if (st == STREAM_D2H && last_h2d_here >= 0)
                d[nd++] = last_h2d_here;
        }
        if (st == STREAM_H2D)
            last_h2d_here = t;
        prev_stage[st] = stage[t];
        last_of[st] = t;
        /* dedupe */
        int32_t dd[8], dpd[8];
        int nd2 = 0, npd2 = 0;
        for (int i = 0; i < nd; i++) {
            int dup = 0;
            for (int k = 0; k < nd2; k++)
                dup |= dd[k] == d[i];
            if (!dup)
                dd[nd2++] = d[i];
        }
        for (int i = 0; i < npd; i++) {
            int dup = 0;
            for (int k = 0; k < npd2; k++)
                dup |= dpd[k] == pd[i];
            if (!dup)
                dpd[npd2++] = pd[i];
        }
        if (plan_add_task(q, x->kind, x->op, x->tensor, plan_task_places(p, x), (int)x->n_place,
                          plan_task_frees(p, x), (int)x->n_free, dd, nd2, dpd, npd2) < 0) {
            plan_free(q);
            return NULL;
        }
    }
    return q;
}

/* Record the span model's decisions through the builder: before op i of
   the schedule the ins placed there (in the h2d order, each no earlier
   than its start op and than the in before it), op i, then the outs and
   drops issued after it (in the d2h order). Fills each window's in and
   out task and each op position's run task; extra edges then say when
   each copy may start and must end: e_to[k] waits for e_from[k] (of the
   previous iteration where e_prev[k]). */
int osw_record_span(osw *x, plan_builder *b, const uint8_t *resident, int32_t *t_in,
                    int32_t *t_out, int32_t *t_run, int32_t *n_ev)
{
    const graph_profile *g = x->g;
    int32_t no = x->n_ops, e = 0;
    int32_t *at = sw_malloc(((size_t)x->n_win + 1) * sizeof *at);
    if (!at)
        return -1;
    int32_t p = 0;
    for (int32_t k = 0; k < x->n_win; k++) {
        const osw_win *w = &x->win[x->ord_in[k]];
        at[k] = -1;
        if (w->in_op < 0)
            continue;
        int32_t a = w->in_op - (w->wrap ? no : 0);
        p = SW_MAX(p, SW_MAX(a, 0));
        at[k] = p;
    }
    for (int32_t s = 0; s < g->n_tensors; s++)
        if (resident[s])
            pb_resident(b, s);
    int32_t kin = 0, kout = 0;
    for (int32_t i = 0; i < no; i++) {
        for (; kin < x->n_win && (at[kin] < 0 || at[kin] == i); kin++)
            if (at[kin] >= 0) {
                pb_swap_in(b, x->win[x->ord_in[kin]].s);
                t_in[x->ord_in[kin]] = e++;
            }
        pb_run(b, x->order[i]);
        t_run[i] = e++;
        for (; kout < x->n_win && x->win[x->ord_out[kout]].lop == i; kout++) {
            const osw_win *w = &x->win[x->ord_out[kout]];
            if (w->out_op < 0)
                continue;
            if (w->drop)
                pb_drop(b, w->s);
            else
                pb_swap_out(b, w->s);
            t_out[x->ord_out[kout]] = e++;
        }
    }
    sw_free(at);
    *n_ev = e;
    return 0;
}

/* The plan p with extra edges: task to[k] waits for from[k] (of the
   previous iteration where prev[k]). Returns the new plan or NULL. */
static plan *add_edges(plan *p, const int32_t *to, const int32_t *from, const uint8_t *prev,
                       int32_t ne)
{
    plan *q = plan_new(p->prof, 0);
    int32_t *d = sw_malloc(((size_t)ne + 64) * sizeof *d);
    int32_t *pd = sw_malloc(((size_t)ne + 64) * sizeof *pd);
    if (!q || !d || !pd)
        goto fail;
    q->mem_kind = p->mem_kind;
    q->budget = p->budget;
    q->capacity = p->capacity;
    q->workspace_reserve = p->workspace_reserve;
    memcpy(q->policy, p->policy, sizeof q->policy);
    if (p->n_resident) {
        q->resident = sw_malloc((size_t)p->n_resident * sizeof *q->resident);
        if (!q->resident)
            goto fail;
        memcpy(q->resident, p->resident, (size_t)p->n_resident * sizeof *q->resident);
        q->n_resident = p->n_resident;
    }
    for (int32_t t = 0; t < p->n_tasks; t++) {
        const plan_task *x = &p->tasks[t];
        int nd = 0, npd = 0;
        for (uint32_t k = 0; k < x->n_dep; k++)
            d[nd++] = plan_task_deps(p, x)[k];
        for (uint32_t k = 0; k < x->n_pdep; k++)
            pd[npd++] = plan_task_pdeps(p, x)[k];
        int base_d = nd, base_pd = npd;
        for (int32_t k = 0; k < ne; k++) {
            if (to[k] != t || plan_task_stream(p->tasks[from[k]].kind) == plan_task_stream(x->kind))
                continue; /* (same stream: implied by its order) */
            int32_t *l = prev[k] ? pd : d;
            int *nl = prev[k] ? &npd : &nd;
            int dup = 0;
            for (int i = 0; i < *nl; i++)
                dup |= l[i] == from[k];
            if (!dup && *nl < ne + 64 - 1)
                l[(*nl)++] = from[k];
        }
        (void)base_d;
        (void)base_pd;
        if (plan_add_task(q, x->kind, x->op, x->tensor, plan_task_places(p, x), (int)x->n_place,
                          plan_task_frees(p, x), (int)x->n_free, d, nd, pd, npd) < 0)
            goto fail;
    }
    sw_free(d);
    sw_free(pd);
    return q;
fail:
    sw_free(d);
    sw_free(pd);
    plan_free(q);
    return NULL;
}

/* The span model's edges: an in waits for the end of the op before its
   start op; the op an out (or drop) must end before waits for it. */
plan *osw_span_edges(const osw *x, plan *p, const int32_t *t_in, const int32_t *t_out,
                     const int32_t *t_run)
{
    int32_t no = x->n_ops, ne = 0;
    int32_t *to = sw_malloc((2 * (size_t)x->n_win + 1) * sizeof *to);
    int32_t *from = sw_malloc((2 * (size_t)x->n_win + 1) * sizeof *from);
    uint8_t *prev = sw_malloc(2 * (size_t)x->n_win + 1);
    plan *q = NULL;
    if (to && from && prev) {
        for (int32_t i = 0; i < x->n_win; i++) {
            const osw_win *w = &x->win[i];
            if (w->in_op < 0)
                continue;
            int32_t ga = w->in_op - 1 - (w->wrap ? no : 0);
            to[ne] = t_in[i];
            from[ne] = t_run[ga >= 0 ? ga : ga + no];
            prev[ne++] = ga < 0;
            int32_t b = w->out_op;
            to[ne] = t_run[b < no ? b : b - no];
            from[ne] = t_out[i];
            prev[ne++] = b >= no;
        }
        q = add_edges(p, to, from, prev, ne);
    }
    sw_free(to);
    sw_free(from);
    sw_free(prev);
    return q;
}
