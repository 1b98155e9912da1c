/* serve.h: serving several models on one GPU (the SwapAdvisor paper's
   Figure 8): a request-level discrete-event simulation of one GPU serving
   batches that arrive as a Poisson process, each for one model, under a
   memory-sharing policy. Each policy reduces to the time the GPU takes for
   a request given what it ran before (docs/serving.md); the service times
   come from swapsim's simulator and planners. */
#ifndef SERVE_H
#define SERVE_H

#include <stdint.h>

#include "../common/sw.h"
#include "../profiles/graph.h"

typedef struct serve_config serve_config;
typedef struct serve_prep serve_prep;
typedef struct serve_model_info serve_model_info;
typedef struct serve_state serve_state; /* one run's state (serve.c) */

/* A memory-sharing policy: a table of methods, one static const table per
   policy, found by name; a NULL method means the default. The policies
   (serve.c):
     not_shared   every model's weights stay resident: the reference (one
                  model alone)
     time_shared  the running model has the whole memory; a switch copies the
                  next model's weights in before it runs (the paper's baseline)
     swapadvisor  memory split equally; each model runs a SwapAdvisor plan in
                  its share
     lru          weights cached in the whole memory, least recently used
                  evicted */
typedef struct serve_policy {
    const char *name; /* --policy's value */
    int swaps;        /* 1: swaps within a request, in a share of the memory; 0: a request
                         needs its ideal peak within the whole memory */
    /* model mi's service times from its compute time and the time to copy
       its weights in (NULL: left to prepare) */
    void (*times)(serve_model_info *mi, double compute_s, double weights_in_s);
    /* after every model's times: the policy's own preparation (NULL: none);
       0 or an SW_ code with err set */
    int (*prepare)(const serve_config *cfg, serve_prep *p, sw_err *err);
    /* a request for model m starts: 1 if it pays the cold service time
       (NULL: never); updates the policy's state in q */
    int (*cold)(serve_state *q, const serve_prep *p, int32_t m);
} serve_policy;

/* The policies, in the order of --policy's choices (not_shared,
   time_shared, swapadvisor, lru): count, the i-th (NULL past the end), the
   one named (NULL: none), and a policy's name ("?" for NULL). */
size_t serve_policy_count(void);
const serve_policy *serve_policy_at(size_t i);
const serve_policy *serve_policy_find(const char *name);
const char *serve_policy_name(const serve_policy *p);

struct serve_config {
    const graph_profile *const *models; /* n_models inference profiles (borrowed) */
    int32_t n_models;
    double zipf_s;      /* popularity of model i (0-based) ~ 1 / (i + 1)^s; 0: uniform */
    const serve_policy *policy;
    int64_t memory;     /* GPU memory shared by the models, bytes */
    uint64_t seed;      /* arrivals and model choices; also the planner's seed */
    int threads;        /* planner threads */
    int generations;    /* swapadvisor: GA generations per distinct model (fixed: deterministic) */
    int population;     /* swapadvisor: GA population */
    int share_search;   /* swapadvisor: 0: equal shares; 1: the best of equal shares and of
                           each model's floor (what one op alone needs) plus the rest in
                           proportion to popularity^a, a = 1/2, 1 (least mean service time) */
};

/* What one model costs the GPU under the policy (after serve_prepare). */
struct serve_model_info {
    double hot_s;       /* service time when nothing needs copying first */
    double cold_s;      /* service time after a switch (time_shared) or a cache miss (lru) */
    int64_t weight_bytes; /* persistent storages (weights) */
    int64_t peak_bytes; /* ideal peak memory of one request */
    int64_t share_bytes;/* swapadvisor: its share of the memory; else the whole memory */
    double swap_in_bytes; /* swapadvisor: bytes its plan copies in per request */
};

struct serve_prep {
    serve_config cfg;
    serve_model_info *info; /* n_models */
    double *cum;            /* cumulative popularity, n_models */
    double mean_batch;      /* samples per request, averaged by popularity */
    double share_alpha;     /* swapadvisor: the split chosen (shares ~ popularity^alpha) */
};

/* Service times of every model under cfg.policy. SW_ENOFIT ("model 3
   'resnet-152' does not fit: ...") where a model cannot run at all within
   what the policy gives it; SW_EINVAL for a bad configuration. Free with
   serve_prep_free. */
int serve_prepare(const serve_config *cfg, serve_prep *out, sw_err *err);
void serve_prep_free(serve_prep *p);

typedef struct serve_result {
    double rate;          /* offered load, samples/s (requests/s x mean batch) */
    int64_t requests;     /* simulated */
    double p50_s, p90_s, p99_s, mean_s, max_s; /* latency: completion - arrival */
    double throughput;    /* completed requests / (last completion - first arrival) */
    double samples_per_s; /* throughput x batch (the profiles' batch sizes) */
    double utilization;   /* GPU busy time / span */
    int64_t cold;         /* requests that paid the cold service time */
    double weight_bytes_moved; /* time_shared and lru: weights copied in, all requests */
} serve_result;

/* Simulate `requests` requests (each one batch of its model's batch size)
   arriving as a Poisson process of rate / mean_batch requests per second,
   so that rate is in samples per second (the paper's axis); FIFO, one at a
   time on the GPU. Deterministic for the seed.
   Returns 0, SW_EINVAL (rate <= 0, requests < 1) or SW_ENOMEM. */
int serve_run(const serve_prep *p, double rate, int64_t requests, serve_result *r, sw_err *err);

/* Waiting-time distribution of an M/D/1 queue (Erlang, Crommelin):
   P(W <= t) for arrivals at rate lambda and service time d (lambda d < 1).
   An alternating sum: accurate while lambda t < 20. */
double serve_md1_wait_cdf(double lambda, double d, double t);

#endif
