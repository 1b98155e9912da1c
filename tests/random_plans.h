/* random_plans.h: random profiles and random-but-legal swap decisions
   recorded through the plan builder (tests and benchmarks). */
#ifndef RANDOM_PLANS_H
#define RANDOM_PLANS_H

#include <gsl/gsl_rng.h>
#include <string.h>

#include "../planners/planner.h"
#include "../profiles/models.h"
#include "../sim/builder.h"

static inline graph_profile *random_profile(int seed, int ops, const char *opt)
{
    const model_def *m = model_find("random");
    param_set ps;
    params_init(&ps, m->params);
    char b1[32], b2[32], b3[32];
    snprintf(b1, sizeof b1, "seed=%d", seed);
    snprintf(b2, sizeof b2, "ops=%d", ops);
    snprintf(b3, sizeof b3, "optimizer=%s", opt);
    sw_err e;
    params_set_kv(&ps, b1, &e);
    params_set_kv(&ps, b2, &e);
    params_set_kv(&ps, b3, &e);
    graph_profile *g = NULL;
    m->generate(&ps, dev_find("v100"), &g, &e);
    params_free(&ps);
    return g;
}

static inline int run_planner(const char *name, const graph_profile *g, int64_t budget, plan **p,
                       sw_err *e)
{
    const planner *pl = planner_find(name);
    planner_opts o;
    planner_opts_init(&o, pl);
    o.memory_budget = budget;
    int rc = planner_run(pl, g, &o, p, e);
    planner_opts_free(&o);
    return rc;
}

/* Random but legal decisions: swap in what the next op needs, then evict a
   random selection of what it does not need (copy if dirty, else drop). */
static inline plan *random_decisions(const graph_profile *g, gsl_rng *rng, int pool,
                                     double evict_p, sw_err *e)
{
    mem_model *m;
    if (pool) {
        /* one class per distinct size, plenty of objects */
        int64_t sizes[4096];
        int32_t cls[4096], cnt[4096];
        int n = 0;
        for (int32_t t = 0; t < g->n_tensors; t++) {
            if (g->tensors[t].storage != t)
                continue;
            int64_t b = g->tensors[t].bytes;
            int k = 0;
            while (k < n && sizes[k] < b)
                k++;
            if (k < n && sizes[k] == b)
                continue;
            memmove(sizes + k + 1, sizes + k, (size_t)(n - k) * sizeof *sizes);
            sizes[k] = b;
            n++;
        }
        for (int i = 0; i < n; i++) {
            cls[i] = i;
            cnt[i] = g->n_tensors;
        }
        m = mem_pool_new(sizes, cls, n, cnt, n);
    } else {
        int64_t total = 0;
        for (int32_t t = 0; t < g->n_tensors; t++)
            total += g->tensors[t].bytes;
        m = mem_address_new(total * 2, gsl_rng_uniform(rng) < 0.5 ? MEM_FIRST_FIT : MEM_BEST_FIT, 1);
    }
    mem_stats st;
    mem_get_stats(m, &st);
    plan_builder *b = pb_new(g, m, st.capacity + g->max_workspace, g->max_workspace);
    for (int32_t s = 0; s < g->n_tensors; s++)
        if (g->tensors[s].storage == s && g->tensors[s].persistent && gsl_rng_uniform(rng) < 0.5)
            pb_resident(b, s);
    uint8_t *need = sw_calloc((size_t)g->n_tensors, 1);
    int32_t *last = sw_malloc((size_t)g->n_tensors * sizeof *last);
    int32_t *pos = sw_malloc((size_t)g->n_ops * sizeof *pos);
    graph_lifetimes(g, g->order, pos, NULL, last, NULL, NULL);
    sw_free(pos);
    for (int32_t i = 0; i < g->n_ops; i++) {
        int32_t o = g->order[i];
        for (int32_t k = g->acc_off[o]; k < g->acc_off[o + 1]; k++) {
            int32_t s = g->acc[k];
            if (!(g->acc_flag[k] & GA_CREATE) && !pb_is_resident(b, s))
                pb_swap_in(b, s);
        }
        pb_run(b, o);
        int32_t nx = i + 1 < g->n_ops ? g->order[i + 1] : -1;
        if (nx >= 0)
            for (int32_t k = g->acc_off[nx]; k < g->acc_off[nx + 1]; k++)
                need[g->acc[k]] = 1;
        /* evict a random selection of the storages this op touched that are used later */
        for (int32_t k = g->acc_off[o]; k < g->acc_off[o + 1]; k++) {
            int32_t s = g->acc[k];
            if (!pb_is_resident(b, s) || need[s])
                continue;
            if (!(g->tensors[s].persistent || last[s] > i) || gsl_rng_uniform(rng) > evict_p)
                continue;
            if (pb_host_valid(b, s))
                pb_drop(b, s);
            else
                pb_swap_out(b, s);
        }
        if (nx >= 0)
            for (int32_t k = g->acc_off[nx]; k < g->acc_off[nx + 1]; k++)
                need[g->acc[k]] = 0;
    }
    sw_free(last);
    pb_end_iteration(b);
    sw_free(need);
    plan *p = NULL;
    if (pb_finish(b, &p, e))
        p = NULL;
    pb_free(b);
    mem_destroy(m);
    return p;
}

#endif
