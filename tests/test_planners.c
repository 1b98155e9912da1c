/* test_planners.c: the reference planners and the plan builder: every plan
   they make is verified; random swap decisions recorded through the builder
   always give safe plans (a property test of builder and verifier); one
   named test each (tap_run). */
#include "../sim/simulate.h"
#include "../sim/verify.h"
#include "random_plans.h"
#include "tap.h"

/* ideal and none on random profiles: every plan verifies, ideal runs at
   100% of ideal, none fits at the static peak and is refused below it. */
static void ideal_and_none(void)
{
    sw_err e;
    int safe = 0, total = 0, fits = 0;
    for (int seed = 1; seed <= 20; seed++) {
        graph_profile *g = random_profile(seed, 40, seed % 3 == 0 ? "adam" : "sgd");
        plan *p;
        total++;
        if (run_planner("ideal", g, 1, &p, &e) == 0) {
            safe += plan_verify(p, NULL, &e) == 0;
            sim_result r;
            if (sim_plan(p, NULL, NULL, &r, &e) == 0 && fabs(r.normalized_throughput - 1) < 1e-9)
                fits++;
            int64_t peak = r.peak_memory_bytes;
            plan_free(p);
            /* none: fits at the ideal peak, not below the static peak */
            int64_t need = graph_peak_memory(g, g->order);
            if (run_planner("none", g, need, &p, &e) == 0) {
                safe += plan_verify(p, NULL, &e) == 0;
                plan_free(p);
            } else {
                printf("# none at the peak: %s\n", e.msg);
            }
            total++;
            int rc = run_planner("none", g, need - 1, &p, &e);
            if (seed == 1) {
                IS_INT(rc, SW_ENOFIT, "none below the peak: does not fit");
                IS_STR_HAS(e.msg, "does not fit: needs", "message says what it needs");
                IS_STR_HAS(e.msg, "budget", "and the budget");
                IS_INT(peak, need, "ideal plan's simulated peak equals the static peak");
            }
        }
        graph_free(g);
    }
    IS_INT(safe, total, "every ideal and none plan verifies");
    IS_INT(fits, 20, "ideal plans run at 100%% of ideal");
}

/* Random legal decisions through the builder are always safe. */
static void builder_random_decisions(void)
{
    sw_err e;
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 42);
    int built = 0, ok = 0, sims = 0;
    for (int i = 0; i < 120; i++) {
        graph_profile *g = random_profile(100 + i, 10 + i % 40, i % 4 == 0 ? "momentum" : "sgd");
        plan *p = random_decisions(g, rng, i % 2, 0.5, &e);
        if (!p) {
            printf("# builder failed on case %d: %s\n", i, e.msg);
            graph_free(g);
            continue;
        }
        built++;
        if (plan_verify(p, NULL, &e) == 0)
            ok++;
        else
            printf("# case %d unsafe: %s\n", i, e.msg);
        sim_result r;
        if (sim_plan(p, NULL, NULL, &r, &e) == 0 && r.iteration_time_s >= r.ideal_time_s - 1e-12)
            sims++;
        else
            printf("# case %d simulate: %s\n", i, e.msg);
        plan_free(p);
        graph_free(g);
    }
    gsl_rng_free(rng);
    IS_INT(built, 120, "builder accepts every legal random decision sequence");
    IS_INT(ok, 120, "every builder plan verifies");
    IS_INT(sims, 120, "every builder plan simulates no faster than ideal");
}

/* The registry and the ideal peak that fractional budgets resolve against. */
static void registry_and_ideal_peak(void)
{
    sw_err e;
    OK(planner_find("magic") == NULL, "unknown planner is not found");
    graph_profile *g = random_profile(5, 30, "sgd");
    int64_t peak;
    OK(planner_ideal_peak(g, &peak, &e) == 0 && peak > 0, "ideal peak computed");
    graph_free(g);
}

/* A fraction budget resolves against the ideal peak; one too large for 64
   bits (the fuzzer's 5.6e29x, undefined behaviour to convert) is an error. */
static void resolve_budget(void)
{
    sw_err e;
    graph_profile *g = random_profile(5, 30, "sgd");
    int64_t peak, b = 0;
    OK(planner_ideal_peak(g, &peak, &e) == 0, "ideal peak computed");
    IS_INT(planner_resolve_budget(g, "0.5x", &b, &e), 0, "0.5x resolves");
    OK(b == (int64_t)((double)peak * 0.5), "0.5x is half the ideal peak (%lld of %lld)",
       (long long)b, (long long)peak);
    IS_INT(planner_resolve_budget(g, "1GiB", &b, &e), 0, "1GiB resolves");
    OK(b == 1073741824, "1GiB is 2^30 bytes");
    IS_INT(planner_resolve_budget(g, "0556555555555555155555555555555.7x", &b, &e), SW_EINVAL,
           "a fraction past 64 bits is refused");
    OK(strstr(e.msg, "too large") && !strchr(e.msg, '\n'), "one line: %s", e.msg);
    graph_free(g);
}

static const tap_test tests[] = {
    {"ideal_and_none", ideal_and_none},
    {"resolve_budget", resolve_budget},
    {"builder_random_decisions", builder_random_decisions},
    {"registry_and_ideal_peak", registry_and_ideal_peak},
};

int main(int argc, char **argv) { return tap_run(tests, SW_ARRAY_LEN(tests), argc, argv); }
