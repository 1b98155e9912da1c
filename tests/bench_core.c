/* bench_core.c: `make bench` figures of the core: simulator throughput,
   profile reader throughput, verifier and builder time on a plan of at
   least 100,000 tasks. One line per figure: "bench: NAME VALUE UNIT". */
#include "../profiles/profile_io.h"
#include "../sim/simulate.h"
#include "../sim/verify.h"
#include "random_plans.h"
#include "tap.h"

int main(void)
{
    sw_err e;
    graph_profile *g = random_profile(11, 14000, "sgd");
    if (!g) {
        fprintf(stderr, "bench_core: cannot generate the profile\n");
        return 1;
    }
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 7);
    double t0 = sw_now();
    plan *p = random_decisions(g, rng, 0, 0.7, &e);
    double t_build = sw_now() - t0;
    gsl_rng_free(rng);
    if (!p) {
        fprintf(stderr, "bench_core: %s\n", e.msg);
        return 1;
    }
    printf("# synthetic plan: %d ops, %d tasks (random profile, random swap decisions)\n",
           g->n_ops, p->n_tasks);
    printf("bench: build_plan_%dk_tasks_s %.3f s\n", p->n_tasks / 1000, t_build);

    /* verifier */
    double best = 1e30;
    for (int i = 0; i < 3; i++) {
        t0 = sw_now();
        int rc = plan_verify(p, NULL, &e);
        double t = sw_now() - t0;
        if (rc) {
            fprintf(stderr, "bench_core: plan fails verification: %s\n", e.msg);
            return 1;
        }
        if (t < best)
            best = t;
    }
    printf("bench: verify_100k_tasks_s %.3f s (%d tasks)\n", best, p->n_tasks);

    /* simulator */
    sim_prog *s;
    if (sim_compile(p, NULL, &s, &e)) {
        fprintf(stderr, "bench_core: %s\n", e.msg);
        return 1;
    }
    int64_t tasks = 0;
    sim_result r;
    t0 = sw_now();
    int runs = 0;
    do {
        if (sim_run(s, NULL, &r, &e)) {
            fprintf(stderr, "bench_core: %s\n", e.msg);
            return 1;
        }
        tasks += r.tasks_simulated;
        runs++;
    } while (sw_now() - t0 < 2.0);
    double t_sim = sw_now() - t0;
    printf("# simulator: %d runs, %d iterations each to steady state\n", runs, r.iterations);
    printf("bench: sim_tasks_per_s %.0f tasks/s\n", (double)tasks / t_sim);
    sim_prog_free(s);

    /* profile reader */
    sw_buf b;
    sw_buf_init(&b);
    profile_to_json(g, &b, 1);
    double tr = 1e30;
    for (int i = 0; i < 5; i++) {
        graph_profile *h;
        t0 = sw_now();
        if (profile_read_text(b.data, b.len, "bench.json", &h, &e)) {
            fprintf(stderr, "bench_core: %s\n", e.msg);
            return 1;
        }
        double t = sw_now() - t0;
        if (t < tr)
            tr = t;
        graph_free(h);
    }
    printf("# profile JSON: %.1f MB, %d tensors, %d ops\n", (double)b.len / 1e6, g->n_tensors, g->n_ops);
    printf("bench: profile_read_mb_per_s %.1f MB/s\n", (double)b.len / 1e6 / tr);
    sw_buf_free(&b);
    plan_free(p);
    graph_free(g);
    return 0;
}
