/* serve.c: serving several models on one GPU: service times per policy from
   the simulator and planners, then a FIFO single-server queue fed by a
   Poisson process (docs/serving.md). */
#include "serve.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../sim/bound.h"
#include "../planners/planner.h"
#include "../profiles/device.h"
#include "../sim/simulate.h"


/* Copying every weight storage in, one copy each at the one-way rate. */
static double weights_in_s(const graph_profile *g, int64_t *bytes)
{
    double h2d_a, d2h_a, h2d_b, d2h_b, t = 0;
    dev_rates(&g->device, &h2d_a, &d2h_a, &h2d_b, &d2h_b);
    *bytes = 0;
    for (int32_t s = 0; s < g->n_tensors; s++)
        if (g->tensors[s].storage == s && g->tensors[s].persistent && g->bytes[s] > 0) {
            *bytes += g->bytes[s];
            t += g->device.copy_latency_s + (double)g->bytes[s] / h2d_a;
        }
    return t;
}

/* The model's iteration under a SwapAdvisor plan within share bytes. */
static int swapadvisor_time(const serve_config *c, const graph_profile *g, int32_t m,
                            int64_t share, serve_model_info *mi, sw_err *err)
{
    const planner *pl = planner_find("swapadvisor");
    if (!pl)
        return sw_fail(err, SW_EINVAL, "the swapadvisor planner is not registered");
    planner_opts o;
    int rc = planner_opts_init(&o, pl);
    if (rc)
        return sw_fail(err, rc, "out of memory");
    o.memory_budget = share;
    o.seed = c->seed;
    o.threads = c->threads > 0 ? c->threads : 1;
    char gen[32], pop[32];
    snprintf(gen, sizeof gen, "%d", c->generations > 0 ? c->generations : 20);
    snprintf(pop, sizeof pop, "%d", c->population > 0 ? c->population : 16);
    if ((rc = params_set(&o.params, "generations", gen, err)) != 0 ||
        (rc = params_set(&o.params, "population", pop, err)) != 0) {
        planner_opts_free(&o);
        return rc;
    }
    o.time_budget_s = 3600; /* the generations stop it: the result does not depend on timing */
    plan *p = NULL;
    rc = planner_run(pl, g, &o, &p, err);
    planner_opts_free(&o);
    if (rc) {
        if (rc == SW_ENOFIT || rc == SW_EEXCEEDED)
            sw_err_prefix(err, "model %d '%s' does not fit its share of %lld bytes "
                          "(swapadvisor): ", (int)m, g->name, (long long)share);
        return rc;
    }
    sim_result r;
    rc = sim_plan(p, NULL, NULL, &r, err);
    plan_free(p);
    if (rc)
        return rc;
    mi->hot_s = mi->cold_s = r.iteration_time_s;
    mi->swap_in_bytes = (double)r.swap_in_bytes;
    return 0;
}

/* model m's share of the requests */
static double popularity(const serve_config *cfg, const serve_prep *p, int32_t m)
{
    (void)cfg;
    return p->cum[m] - (m ? p->cum[m - 1] : 0);
}

/* SwapAdvisor plans of every model within shares proportional to
   popularity^alpha (alpha 0: equal), into info[] */
static int plan_shares(const serve_config *cfg, const serve_prep *p, double alpha,
                       serve_model_info *info, sw_err *err)
{
    /* each model first gets its floor (what one op alone needs resident,
       and the workspace reserve: less cannot run at all), then the rest of
       the memory is split by popularity^alpha; alpha 0 is an equal split */
    double tot = 0;
    int64_t floors = 0, floor_of[4096];
    if (cfg->n_models > 4096)
        return sw_fail(err, SW_EINVAL, "at most 4096 models");
    for (int32_t m = 0; m < cfg->n_models; m++) {
        tot += pow(popularity(cfg, p, m), alpha);
        bound_result br;
        sw_err ig;
        floor_of[m] = 0;
        if (alpha > 0 && bound_compute(cfg->models[m], INT64_MAX / 4, NULL, &br, &ig) == 0)
            floor_of[m] = br.resident_bytes + cfg->models[m]->max_workspace;
        floors += floor_of[m];
    }
    int64_t rest = cfg->memory - floors;
    if (rest < 0)
        return sw_fail(err, SW_ENOFIT, "the models' floors (what one op alone needs) exceed the "
                       "memory");
    for (int32_t m = 0; m < cfg->n_models; m++) {
        const graph_profile *g = cfg->models[m];
        int64_t share = floor_of[m] + (int64_t)((double)rest * pow(popularity(cfg, p, m), alpha) /
                                                tot);
        info[m].share_bytes = share;
        /* the same profile object in the same share: one plan */
        int32_t same = -1;
        for (int32_t k = 0; k < m && same < 0; k++)
            if (cfg->models[k] == g && info[k].share_bytes == share)
                same = k;
        if (same >= 0) {
            info[m] = info[same];
            continue;
        }
        int rc = swapadvisor_time(cfg, g, m, share, &info[m], err);
        if (rc)
            return rc;
    }
    return 0;
}

/* swapadvisor: each model's SwapAdvisor plan in its share: the memory split
   equally, or (share_search) the best of three splits by the request mix */
static int swapadvisor_prepare(const serve_config *cfg, serve_prep *out, sw_err *err)
{
    /* memory split equally, or (share_search) the best of three splits by
       the request mix: floors, then the rest in proportion to popularity^a,
       a = 1/2, 1; the one with the least mean service time (ties: the
       more equal) */
    serve_model_info *cand = sw_calloc((size_t)cfg->n_models, sizeof *cand);
    if (!cand)
        return sw_fail(err, SW_ENOMEM, "out of memory");
    static const double alphas[] = {0, 0.5, 1};
    double best = INFINITY;
    int rc = 0;
    sw_err first; /* the equal split's failure, reported if no split works */
    first.msg[0] = 0;
    for (size_t a = 0; a < (cfg->share_search ? SW_ARRAY_LEN(alphas) : 1); a++) {
        for (int32_t m = 0; m < cfg->n_models; m++)
            cand[m] = out->info[m];
        int crc = plan_shares(cfg, out, alphas[a], cand, err);
        if (crc == SW_ENOMEM || (crc && a == 0 && !cfg->share_search)) {
            rc = crc;
            break;
        }
        if (crc) {
            if (a == 0) {
                rc = crc; /* kept unless a later split works */
                first = *err;
            }
            continue;
        }
        double mean = 0;
        for (int32_t m = 0; m < cfg->n_models; m++)
            mean += popularity(cfg, out, m) * cand[m].hot_s;
        if (mean < best * (1 - 1e-9)) {
            best = mean;
            rc = 0;
            out->share_alpha = alphas[a];
            for (int32_t m = 0; m < cfg->n_models; m++)
                out->info[m] = cand[m];
        }
    }
    sw_free(cand);
    if (rc && rc != SW_ENOMEM && first.msg[0])
        *err = first;
    if (rc || !isfinite(best))
        return rc ? rc : sw_fail(err, SW_ENOFIT, "no split of the memory fits every model");
    return 0;
}

/* The state a run keeps for the policies' cold method. */
struct serve_state {
    int32_t prev;         /* the model of the previous request (-1: none) */
    double *last_use;     /* n_models: when each last started a request (-1: never) */
    uint8_t *cached;      /* n_models: lru: its weights are cached */
    int64_t cached_bytes; /* lru: the cached weights' bytes */
};

/* not_shared: every request runs hot */
static void not_shared_times(serve_model_info *mi, double compute_s, double weights_in_s)
{
    (void)weights_in_s;
    mi->hot_s = mi->cold_s = compute_s;
}

/* time_shared, lru: a cold request copies its model's weights in first */
static void weights_times(serve_model_info *mi, double compute_s, double weights_in_s)
{
    mi->hot_s = compute_s;
    mi->cold_s = weights_in_s + compute_s;
}

/* time_shared: a request is cold when its model is not the previous one's */
static int time_shared_cold(serve_state *q, const serve_prep *p, int32_t m)
{
    (void)p;
    return m != q->prev;
}

/* lru: a request is cold when its model's weights are not cached; they are
   then cached, evicting the least recently used until its weights and its
   request's other memory fit beside what stays cached */
static int lru_cold(serve_state *q, const serve_prep *p, int32_t m)
{
    if (q->cached[m])
        return 0;
    int32_t n = p->cfg.n_models;
    while (q->cached_bytes + p->info[m].peak_bytes > p->cfg.memory) {
        int32_t v = -1;
        for (int32_t k = 0; k < n; k++)
            if (q->cached[k] && (v < 0 || q->last_use[k] < q->last_use[v]))
                v = k;
        if (v < 0)
            break;
        q->cached[v] = 0;
        q->cached_bytes -= p->info[v].weight_bytes;
    }
    q->cached[m] = 1;
    q->cached_bytes += p->info[m].weight_bytes;
    return 1;
}

/* In the order of --policy's choices (cmd_serve.c). */
static const serve_policy policies[] = {
    {"not_shared", 0, not_shared_times, NULL, NULL},
    {"time_shared", 0, weights_times, NULL, time_shared_cold},
    {"swapadvisor", 1, NULL, swapadvisor_prepare, NULL},
    {"lru", 0, weights_times, NULL, lru_cold},
};

size_t serve_policy_count(void) { return SW_ARRAY_LEN(policies); }

const serve_policy *serve_policy_at(size_t i)
{
    return i < SW_ARRAY_LEN(policies) ? &policies[i] : NULL;
}

const serve_policy *serve_policy_find(const char *name)
{
    for (size_t i = 0; name && i < SW_ARRAY_LEN(policies); i++)
        if (!strcmp(policies[i].name, name))
            return &policies[i];
    return NULL;
}

const char *serve_policy_name(const serve_policy *p) { return p ? p->name : "?"; }

int serve_prepare(const serve_config *cfg, serve_prep *out, sw_err *err)
{
    memset(out, 0, sizeof *out);
    if (cfg->n_models < 1)
        return sw_fail(err, SW_EINVAL, "no models to serve");
    if (!cfg->policy)
        return sw_fail(err, SW_EINVAL, "no policy");
    if (cfg->memory <= 0)
        return sw_fail(err, SW_EINVAL, "memory must be positive");
    if (!(cfg->zipf_s >= 0) || cfg->zipf_s > 100)
        return sw_fail(err, SW_EINVAL, "zipf exponent %g: expected a number in [0, 100]",
                       cfg->zipf_s);
    out->cfg = *cfg;
    out->info = sw_calloc((size_t)cfg->n_models, sizeof *out->info);
    out->cum = sw_calloc((size_t)cfg->n_models, sizeof *out->cum);
    if (!out->info || !out->cum) {
        serve_prep_free(out);
        return sw_fail(err, SW_ENOMEM, "out of memory");
    }
    double tot = 0;
    for (int32_t m = 0; m < cfg->n_models; m++) {
        tot += cfg->zipf_s > 0 ? pow((double)m + 1, -cfg->zipf_s) : 1.0;
        out->cum[m] = tot;
    }
    for (int32_t m = 0; m < cfg->n_models; m++) {
        double pm = (cfg->zipf_s > 0 ? pow((double)m + 1, -cfg->zipf_s) : 1.0) / tot;
        out->mean_batch += pm * (double)SW_MAX(cfg->models[m]->batch, 1);
        out->cum[m] /= tot;
    }
    int64_t share = cfg->memory / cfg->n_models;
    for (int32_t m = 0; m < cfg->n_models; m++) {
        const graph_profile *g = cfg->models[m];
        serve_model_info *mi = &out->info[m];
        int rc = planner_ideal_peak(g, &mi->peak_bytes, err);
        if (rc) {
            serve_prep_free(out);
            return rc;
        }
        double win = weights_in_s(g, &mi->weight_bytes);
        double c = g->total_compute_s;
        mi->share_bytes = cfg->policy->swaps ? share : cfg->memory;
        if (!cfg->policy->swaps && mi->peak_bytes > cfg->memory) {
            int64_t pk = mi->peak_bytes;
            serve_prep_free(out);
            return sw_fail(err, SW_ENOFIT, "model %d '%s' does not fit: one request needs %lld "
                           "bytes (its ideal peak), over the memory of %lld bytes (policy %s "
                           "does not swap within a request; swapadvisor does)", (int)m, g->name,
                           (long long)pk, (long long)cfg->memory, cfg->policy->name);
        }
        if (cfg->policy->times)
            cfg->policy->times(mi, c, win);
    }
    if (!cfg->policy->prepare)
        return 0;
    int rc = cfg->policy->prepare(cfg, out, err);
    if (rc)
        serve_prep_free(out);
    return rc;
}

void serve_prep_free(serve_prep *p)
{
    sw_free(p->info);
    sw_free(p->cum);
    p->info = NULL;
    p->cum = NULL;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* nearest rank: the smallest value with at least q of the sample at or below it */
static double quantile(const double *sorted, int64_t n, double q)
{
    int64_t k = (int64_t)ceil(q * (double)n) - 1;
    return sorted[SW_MIN(SW_MAX(k, 0), n - 1)];
}

int serve_run(const serve_prep *p, double rate, int64_t requests, serve_result *r, sw_err *err)
{
    memset(r, 0, sizeof *r);
    if (!(rate > 0) || !isfinite(rate))
        return sw_fail(err, SW_EINVAL, "arrival rate %g: expected a positive number of samples "
                       "per second", rate);
    if (requests < 1 || requests > ((int64_t)1 << 31))
        return sw_fail(err, SW_EINVAL, "requests %lld: expected 1 to 2^31", (long long)requests);
    const serve_config *c = &p->cfg;
    int32_t n = c->n_models;
    double *lat = sw_malloc((size_t)requests * sizeof *lat);
    serve_state q = {-1, sw_malloc((size_t)n * sizeof *q.last_use), sw_calloc((size_t)n, 1), 0};
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (!lat || !q.last_use || !q.cached || !rng) {
        sw_free(lat);
        sw_free(q.last_use);
        sw_free(q.cached);
        if (rng)
            gsl_rng_free(rng);
        return sw_fail(err, SW_ENOMEM, "out of memory");
    }
    gsl_rng_set(rng, (unsigned long)(c->seed ^ 0x5EB5EULL));
    for (int32_t m = 0; m < n; m++)
        q.last_use[m] = -1;
    double t = 0, free_at = 0, first = 0, busy = 0, sum = 0, batch = 0;
    for (int64_t i = 0; i < requests; i++) {
        t += gsl_ran_exponential(rng, p->mean_batch / rate);
        if (i == 0)
            first = t;
        double u = gsl_rng_uniform(rng);
        int32_t m = 0;
        while (m < n - 1 && u >= p->cum[m])
            m++;
        const serve_model_info *mi = &p->info[m];
        int cold = c->policy->cold ? c->policy->cold(&q, p, m) : 0;
        double service = cold ? mi->cold_s : mi->hot_s;
        double start = SW_MAX(t, free_at);
        free_at = start + service;
        q.last_use[m] = start;
        busy += service;
        lat[i] = free_at - t;
        sum += lat[i];
        if (cold) {
            r->cold++;
            r->weight_bytes_moved += (double)mi->weight_bytes;
        }
        batch += (double)SW_MAX(c->models[m]->batch, 1);
        q.prev = m;
    }
    double span = free_at - first;
    r->rate = rate;
    r->requests = requests;
    r->mean_s = sum / (double)requests;
    r->throughput = span > 0 ? (double)requests / span : 0;
    r->samples_per_s = span > 0 ? batch / span : 0;
    r->utilization = span > 0 ? busy / span : 0;
    qsort(lat, (size_t)requests, sizeof *lat, cmp_double);
    r->p50_s = quantile(lat, requests, 0.50);
    r->p90_s = quantile(lat, requests, 0.90);
    r->p99_s = quantile(lat, requests, 0.99);
    r->max_s = lat[requests - 1];
    sw_free(lat);
    sw_free(q.last_use);
    sw_free(q.cached);
    gsl_rng_free(rng);
    return 0;
}

double serve_md1_wait_cdf(double lambda, double d, double t)
{
    if (t < 0)
        return 0;
    /* P(W <= t) = (1 - rho) sum_{k=0}^{floor(t/d)} x_k^k / k! e^{-x_k},
       x_k = lambda (k d - t) <= 0: an alternating sum whose terms grow like
       e^{2 lambda t}, so it is summed in long double and is accurate while
       lambda t stays below about 20 (enough for the 99th percentile at
       moderate loads; the header says so) */
    long double rho = (long double)lambda * d, s = 0;
    int64_t kmax = (int64_t)floor(t / d);
    for (int64_t k = 0; k <= kmax; k++) {
        long double x = (long double)lambda * ((long double)k * d - t), term;
        if (x == 0)
            term = k == 0 ? 1 : 0;
        else
            term = (k % 2 ? -1.0L : 1.0L) *
                   expl((long double)k * logl(-x) - lgammal((long double)k + 1) - x);
        s += term;
    }
    return (double)((1 - rho) * s);
}
