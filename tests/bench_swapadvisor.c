/* bench_swapadvisor.c: `make bench` figures of SwapAdvisor: evaluations per
   second per core (swap planning + simulation of one individual) on
   NASNet-25 and RNN-8-8K (seeded with the default individual, and from a
   random first generation; the default schedule mutation), RNN-8-8K's
   throughput after a 60 s search on two threads from the paper's random
   first generation (with the default schedule mutation, ours, mixed, and
   with the paper's, schedule_mutation=dataflow) and from a seeded one
   (seed_default=true), and (with SWAPSIM_BENCH_LONG=1) what 10 minutes find
   from a random first generation with each mutation. One line
   per figure: "bench: NAME VALUE UNIT". */
#include "../planners/planner.h"
#include "../profiles/models.h"
#include "../sim/simulate.h"
#include "../sim/verify.h"
#include "tap.h"

static graph_profile *make(const char *model, const char *const *kv, int n)
{
    const model_def *m = model_find(model);
    if (!m)
        return NULL;
    param_set ps;
    params_init(&ps, m->params);
    sw_err e;
    for (int i = 0; i < n; i++)
        params_set_kv(&ps, kv[i], &e);
    graph_profile *g = NULL;
    if (m->generate(&ps, dev_find("v100"), &g, &e))
        fprintf(stderr, "bench_swapadvisor: %s: %s\n", model, e.msg);
    params_free(&ps);
    return g;
}

/* run SwapAdvisor; returns the simulated time of its plan, stats in notes */
static double search(const graph_profile *g, double seconds, int threads, int seeded,
                     const char *mutation, long *evals, double *elapsed)
{
    const planner *pl = planner_find("swapadvisor");
    planner_opts o;
    planner_opts_init(&o, pl);
    o.memory_budget = dev_find("v100")->memory_bytes;
    o.time_budget_s = seconds;
    o.threads = threads;
    o.seed = 1;
    sw_err e;
    params_set(&o.params, "seed_default", seeded ? "true" : "false", &e);
    if (mutation) /* NULL: the default */
        params_set(&o.params, "schedule_mutation", mutation, &e);
    plan *p = NULL;
    double t0 = sw_now();
    int rc = planner_run(pl, g, &o, &p, &e);
    *elapsed = sw_now() - t0;
    planner_opts_free(&o);
    if (rc) {
        fprintf(stderr, "bench_swapadvisor: %s\n", e.msg);
        return -1;
    }
    *evals = 0;
    const char *n = p->notes ? strstr(p->notes, "generations, ") : NULL;
    if (n)
        *evals = atol(n + 13);
    sim_result r;
    double t = -1;
    if (plan_verify(p, NULL, &e) == 0 && sim_plan(p, NULL, NULL, &r, &e) == 0)
        t = r.iteration_time_s;
    else
        fprintf(stderr, "bench_swapadvisor: the plan fails: %s\n", e.msg);
    plan_free(p);
    return t;
}

int main(void)
{
    const char *nas_kv[] = {"repeat=25", "batch=64"};
    const char *rnn_kv[] = {"layers=8", "hidden=8192", "batch=256"};
    graph_profile *nas = make("nasnet", nas_kv, 2), *rnn = make("rnn", rnn_kv, 3);
    if (!nas || !rnn) {
        printf("# the paper's models are not available: skipped\n");
        return 0;
    }
    long ev;
    double el;
    search(nas, 20, 1, 1, NULL, &ev, &el);
    printf("# NASNet-25 batch 64, v100 16 GiB: %ld evaluations in %.1f s on one thread\n", ev, el);
    printf("bench: sa_evals_per_s_core_nasnet25 %.0f evals/s\n", (double)ev / el);
    search(rnn, 20, 1, 1, NULL, &ev, &el);
    printf("# RNN-8-8K batch 256, v100 16 GiB: %ld evaluations in %.1f s on one thread\n", ev, el);
    printf("bench: sa_evals_per_s_core_rnn88k %.0f evals/s\n", (double)ev / el);
    /* the same from a random first generation, whose individuals' schedules
       may swap more (and cost more) than the seeded search's */
    search(nas, 20, 1, 0, NULL, &ev, &el);
    printf("# NASNet-25, random first generation: %ld evaluations in %.1f s on one thread\n", ev,
           el);
    printf("bench: sa_evals_per_s_core_nasnet25_random_start %.0f evals/s\n", (double)ev / el);
    search(rnn, 20, 1, 0, NULL, &ev, &el);
    printf("# RNN-8-8K, random first generation: %ld evaluations in %.1f s on one thread\n", ev,
           el);
    printf("bench: sa_evals_per_s_core_rnn88k_random_start %.0f evals/s\n", (double)ev / el);
    double t60 = search(rnn, 60, 2, 0, NULL, &ev, &el);
    printf("# RNN-8-8K, 60 s on 2 threads from a random first generation, the default schedule "
           "mutation (ours, mixed): %ld evaluations, %.4f s per iteration, ideal %.4f s\n", ev,
           t60, rnn->total_compute_s);
    printf("bench: sa_rnn88k_60s_random_start_normalized_throughput %.3f fraction (target 0.50)\n",
           rnn->total_compute_s / t60);
    double d60 = search(rnn, 60, 2, 0, "dataflow", &ev, &el);
    printf("# RNN-8-8K, 60 s on 2 threads from a random first generation, the paper's schedule "
           "mutation (schedule_mutation=dataflow): %ld evaluations, %.4f s per iteration\n", ev,
           d60);
    printf("bench: sa_rnn88k_60s_random_start_dataflow_normalized_throughput %.3f fraction\n",
           rnn->total_compute_s / d60);
    double s60 = search(rnn, 60, 2, 1, NULL, &ev, &el);
    printf("# RNN-8-8K, 60 s on 2 threads, seeded (seed_default=true): %ld evaluations, %.4f s "
           "per iteration\n", ev, s60);
    printf("bench: sa_rnn88k_60s_seeded_normalized_throughput %.3f fraction\n",
           rnn->total_compute_s / s60);
    if (getenv("SWAPSIM_BENCH_LONG")) {
        double t600 = search(rnn, 600, 2, 0, NULL, &ev, &el);
        printf("# RNN-8-8K, 600 s on 2 threads from a random first generation, the default "
               "schedule mutation (ours, mixed): %ld evaluations, %.4f s per iteration\n", ev,
               t600);
        printf("bench: sa_rnn88k_600s_random_start_normalized_throughput %.3f fraction (target "
               "0.70)\n", rnn->total_compute_s / t600);
        double d600 = search(rnn, 600, 2, 0, "dataflow", &ev, &el);
        printf("# RNN-8-8K, 600 s on 2 threads from a random first generation, the paper's "
               "schedule mutation (schedule_mutation=dataflow): %ld evaluations, %.4f s per "
               "iteration\n", ev, d600);
        printf("bench: sa_rnn88k_600s_random_start_dataflow_normalized_throughput %.3f "
               "fraction\n", rnn->total_compute_s / d600);
    } else {
        printf("# set SWAPSIM_BENCH_LONG=1 for the 10-minute search from a random first "
               "generation\n");
    }
    graph_free(nas);
    graph_free(rnn);
    return 0;
}
