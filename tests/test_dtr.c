/* test_dtr.c: the dtr planner: a hand-made case whose evictions and
   overheads were worked out by hand (including one where the allocator's
   fragmentation forces an extra eviction), every heuristic and option on
   random training profiles (every plan verified; simulated time = compute +
   recompute), the give-up and does-not-fit errors, and the shared ResNet-32
   log against simrd's figures; one named test each (tap_run). */
#include <dirent.h>

#include "../planners/lib/dtr_engine.h"
#include "../profiles/importers.h"
#include "../sim/simulate.h"
#include "../sim/verify.h"
#include "random_plans.h"
#include "tap.h"

/* x (100 B, persistent) -> a (4 ms), b (1 ms), c (1 ms, 2000 B); a, b -> d.
   Budget 3100 B: before c, 100 + a + b + c = 4100 B, so one of a, b goes.
   h_DTR: b was just made (staleness 0, cost infinite), so a goes and comes
   back for d: 7 ms + 4 ms. Largest-first: a and b tie; the later in the pool
   (b) goes: 7 + 1 ms. */
static graph_profile *hand(void)
{
    graph_profile *g = graph_new("hand", dev_find("v100"));
    int32_t x = graph_add_tensor(g, "x", 100, GK_PARAMETER, 1);
    int32_t a = graph_add_tensor(g, "a", 1000, GK_ACTIVATION, 0);
    int32_t b = graph_add_tensor(g, "b", 1000, GK_ACTIVATION, 0);
    int32_t c = graph_add_tensor(g, "c", 2000, GK_ACTIVATION, 0);
    int32_t d = graph_add_tensor(g, "d", 1000, GK_ACTIVATION, 0);
    int32_t ab[2] = {a, b};
    graph_add_op(g, "f1", "f", 4e-3, GP_FORWARD, &x, 1, &a, 1, NULL, 0, 0);
    graph_add_op(g, "f2", "f", 1e-3, GP_FORWARD, &x, 1, &b, 1, NULL, 0, 0);
    graph_add_op(g, "f3", "f", 1e-3, GP_FORWARD, &x, 1, &c, 1, NULL, 0, 0);
    graph_add_op(g, "f4", "f", 1e-3, GP_FORWARD, ab, 2, &d, 1, NULL, 0, 0);
    sw_err e;
    if (graph_finish(g, &e, NULL, NULL)) {
        printf("# %s\n", e.msg);
        graph_free(g);
        return NULL;
    }
    return g;
}

static int dtr(const graph_profile *g, int64_t budget, const char *const *sets, int n, plan **p,
               sw_err *e)
{
    const planner *pl = planner_find("dtr");
    planner_opts o;
    planner_opts_init(&o, pl);
    o.memory_budget = budget;
    int rc = 0;
    for (int i = 0; i < n && !rc; i++)
        rc = params_set_kv(&o.params, sets[i], e);
    if (!rc)
        rc = planner_run(pl, g, &o, p, e);
    planner_opts_free(&o);
    return rc;
}

/* Verify and simulate; returns simulated time / compute, or -1. */
static double check(plan *p, const graph_profile *g, int64_t budget, sim_result *r, int *safe)
{
    sw_err e;
    *safe = plan_verify(p, NULL, &e) == 0;
    if (!*safe)
        printf("# unsafe: %s\n", e.msg);
    if (sim_plan(p, NULL, NULL, r, &e)) {
        printf("# simulate: %s\n", e.msg);
        return -1;
    }
    if (r->peak_memory_bytes > budget)
        printf("# peak %lld over budget %lld\n", (long long)r->peak_memory_bytes,
               (long long)budget);
    return r->iteration_time_s / g->total_compute_s;
}

static const char *const bytes_only[] = {"budget_on=bytes"};

static void hand_dtr(void)
{
    graph_profile *g = hand();
    plan *p = NULL;
    sw_err e;
    sim_result r;
    int safe;
    int rc = dtr(g, 3100, bytes_only, 1, &p, &e);
    IS_INT(rc, 0, "h_DTR, budget on bytes (%s)", rc ? e.msg : "ok");
    if (!rc) {
        IS_NUM(check(p, g, 1 << 30, &r, &safe), 11.0 / 7, 1e-9, "h_DTR evicts a: (7 + 4) / 7");
        OK(safe, "plan verifies");
        IS_INT(r.reruns, 1, "one rerun (f1)");
        IS_NUM(r.recompute_time_s, 4e-3, 1e-12, "recompute time 4 ms");
        IS_NUM(r.iteration_time_s, g->total_compute_s + r.recompute_time_s, 1e-12,
               "simulated time = compute + recompute");
        int rerun_f1 = 0;
        for (int32_t i = 0; i < p->n_tasks; i++)
            rerun_f1 |= p->tasks[i].kind == TASK_RERUN && p->tasks[i].op == 0;
        OK(rerun_f1, "the rerun is f1 (a comes back for f4)");
        plan_free(p);
    }
    graph_free(g);
}

static void hand_size(void)
{
    graph_profile *g = hand();
    plan *p = NULL;
    sw_err e;
    sim_result r;
    int safe;
    const char *size[] = {"budget_on=bytes", "heuristic=size"};
    int rc = dtr(g, 3100, size, 2, &p, &e);
    IS_INT(rc, 0, "largest-first (%s)", rc ? e.msg : "ok");
    if (!rc) {
        IS_NUM(check(p, g, 1 << 30, &r, &safe), 8.0 / 7, 1e-9, "size: a, b tie, b goes: 8 / 7");
        OK(safe, "plan verifies");
        plan_free(p);
    }
    graph_free(g);
}

static void hand_lru(void)
{
    graph_profile *g = hand();
    plan *p = NULL;
    sw_err e;
    sim_result r;
    int safe;
    const char *lru[] = {"budget_on=bytes", "heuristic=lru"};
    int rc = dtr(g, 3100, lru, 2, &p, &e);
    if (!rc) {
        IS_NUM(check(p, g, 1 << 30, &r, &safe), 11.0 / 7, 1e-9, "LRU: a is older: 11 / 7");
        plan_free(p);
    } else {
        OK(0, "lru: %s", e.msg);
    }
    graph_free(g);
}

/* arena = budget (best-fit): x [0,100) a [100,1100) b [1100,2100); with a
   dropped, c (2000 B) finds two 1000 B holes: b must go too (the only
   candidate that opens a 2000 B block), then both come back for f4 */
static void hand_fragmentation(void)
{
    graph_profile *g = hand();
    plan *p = NULL;
    sw_err e;
    sim_result r;
    int safe;
    int rc = dtr(g, 3100, NULL, 0, &p, &e);
    IS_INT(rc, 0, "h_DTR, arena = budget (%s)", rc ? e.msg : "ok");
    if (!rc) {
        IS_NUM(check(p, g, 3100, &r, &safe), 12.0 / 7, 1e-9,
               "fragmentation costs one more eviction: (7 + 4 + 1) / 7");
        OK(safe, "plan verifies");
        OK(r.peak_memory_bytes <= 3100, "peak within the budget");
        IS_STR_HAS(p->notes, "(1 for fragmentation)", "the notes count the extra eviction");
        plan_free(p);
    }
    graph_free(g);
}

/* 3099 B cannot hold x, a, b and d together: nothing left to evict */
static void hand_does_not_fit(void)
{
    graph_profile *g = hand();
    plan *p = NULL;
    sw_err e;
    int rc = dtr(g, 3099, bytes_only, 1, &p, &e);
    IS_INT(rc, SW_ENOFIT, "below what f4 needs: does not fit");
    IS_STR_HAS(e.msg, "does not fit: at op 3 'f4'", "the message names the op");
    graph_free(g);
}

/* overhead cap 1.5: the 4 ms rematerialisation is 4/7 > 0.5 of compute */
static void hand_overhead_cap(void)
{
    graph_profile *g = hand();
    plan *p = NULL;
    sw_err e;
    const char *cap[] = {"budget_on=bytes", "overhead_cap=1.5"};
    int rc = dtr(g, 3100, cap, 2, &p, &e);
    IS_INT(rc, SW_EEXCEEDED, "overhead cap 1.5x: exceeded");
    IS_STR_HAS(e.msg, "exceeded:", "the message says exceeded");
    graph_free(g);
}

/* dtr-megengine, by hand: x (100 B) -> a (f1), x -> b (f2), b -> c (f3),
   x -> d (2000 B, f4), (c, a) -> z (f5); 1 ms each; arena 4100 B best-fit.
   Before f4: x [0,100) a [100,1100) c [2100,3100), b's hole [1100,2100) and
   [3100,4100) free: the bytes fit (4100) but no 2000 B block. With the score
   1 / (size + free beside it) (a = b = 0, c = 1), c (3000) beats a (2000):
   c goes, d lands at 1100; f5 needs c back: b (dead) and c are recomputed:
   (5 + 2) / 5. h_DTR instead evicts a (c was just made): (5 + 1) / 5. */
static void test_megengine_hand(void)
{
    graph_profile *g = graph_new("meg", dev_find("v100"));
    int32_t x = graph_add_tensor(g, "x", 100, GK_PARAMETER, 1);
    int32_t a = graph_add_tensor(g, "a", 1000, GK_ACTIVATION, 0);
    int32_t b = graph_add_tensor(g, "b", 1000, GK_ACTIVATION, 0);
    int32_t c = graph_add_tensor(g, "c", 1000, GK_ACTIVATION, 0);
    int32_t d = graph_add_tensor(g, "d", 2000, GK_ACTIVATION, 0);
    int32_t z = graph_add_tensor(g, "z", 1, GK_ACTIVATION, 0);
    int32_t ca[2] = {c, a};
    graph_add_op(g, "f1", "f", 1e-3, GP_FORWARD, &x, 1, &a, 1, NULL, 0, 0);
    graph_add_op(g, "f2", "f", 1e-3, GP_FORWARD, &x, 1, &b, 1, NULL, 0, 0);
    graph_add_op(g, "f3", "f", 1e-3, GP_FORWARD, &b, 1, &c, 1, NULL, 0, 0);
    graph_add_op(g, "f4", "f", 1e-3, GP_FORWARD, &x, 1, &d, 1, NULL, 0, 0);
    graph_add_op(g, "f5", "f", 1e-3, GP_FORWARD, ca, 2, &z, 1, NULL, 0, 0);
    sw_err e;
    if (graph_finish(g, &e, NULL, NULL)) {
        OK(0, "%s", e.msg);
        return;
    }
    const planner *pl = planner_find("dtr-megengine");
    planner_opts o;
    planner_opts_init(&o, pl);
    o.memory_budget = 4100;
    const char *sets[] = {"exp_compute=0", "exp_staleness=0", "exp_memory=1", "alignment=1"};
    for (int i = 0; i < 4; i++)
        params_set_kv(&o.params, sets[i], &e);
    plan *p = NULL;
    int rc = planner_run(pl, g, &o, &p, &e);
    planner_opts_free(&o);
    IS_INT(rc, 0, "dtr-megengine hand case plans (%s)", rc ? e.msg : "ok");
    if (!rc) {
        sim_result r;
        int safe;
        IS_NUM(check(p, g, 4100, &r, &safe), 7.0 / 5, 1e-9, "megengine: c goes (most free "
               "space beside it); b and c recomputed: 7 / 5");
        OK(safe, "megengine plan verifies");
        IS_INT(r.reruns, 2, "two reruns (f2 of the dead b, then f3)");
        IS_STR_HAS(p->notes, "(1 for fragmentation)", "one eviction forced by fragmentation");
        plan_free(p);
    }
    const char *dset[] = {"alignment=1"};
    rc = dtr(g, 4100, dset, 1, &p, &e);
    if (!rc) {
        sim_result r;
        int safe;
        IS_NUM(check(p, g, 4100, &r, &safe), 6.0 / 5, 1e-9, "h_DTR on the same: a goes: 6 / 5");
        plan_free(p);
    } else {
        OK(0, "dtr: %s", e.msg);
    }
    graph_free(g);
}

static void test_random(void)
{
    static const char *heur[] = {"dtr", "dtr-eq", "dtr-local", "lru", "size", "msps", "random"};
    int runs = 0, safe_n = 0, exact = 0, within = 0, fails = 0;
    for (int seed = 1; seed <= 8; seed++) {
        graph_profile *g = random_profile(seed, 60, seed % 2 ? "sgd" : "adam");
        int64_t peak = graph_peak_memory(g, g->order);
        for (size_t h = 0; h < sizeof heur / sizeof heur[0]; h++)
            for (int k = 0; k < 4; k++) {
                double frac = 0.55 + 0.15 * k;
                char hs[64];
                snprintf(hs, sizeof hs, "heuristic=%s", heur[h]);
                const char *sets[5] = {hs, k % 2 ? "budget_on=bytes" : "budget_on=arena",
                                       seed % 3 == 0 ? "fake_delete=forward" : "sample=false",
                                       seed % 4 == 1 ? "sample=true" : "small_tensor_filter=0.01",
                                       seed % 5 == 2 ? "allocator=first-fit" : "alignment=256"};
                plan *p = NULL;
                sw_err e;
                int64_t budget = (int64_t)(frac * (double)peak);
                int rc = dtr(g, budget, sets, 5, &p, &e);
                if (rc) {
                    if (rc != SW_ENOFIT && rc != SW_EEXCEEDED)
                        printf("# seed %d %s: %s\n", seed, heur[h], e.msg);
                    fails += rc != SW_ENOFIT && rc != SW_EEXCEEDED;
                    continue;
                }
                runs++;
                sim_result r;
                int safe;
                check(p, g, k % 2 ? INT64_MAX : budget, &r, &safe);
                safe_n += safe;
                exact += fabs(r.iteration_time_s - (r.ideal_time_s + r.recompute_time_s)) <=
                         1e-9 * r.iteration_time_s;
                within += k % 2 || r.peak_memory_bytes <= budget;
                plan_free(p);
            }
        graph_free(g);
    }
    OK(runs > 100, "dtr planned %d random cases", runs);
    IS_INT(safe_n, runs, "every dtr plan verifies");
    IS_INT(exact, runs, "simulated time = compute + recompute in every plan");
    IS_INT(within, runs, "arena plans stay within the budget");
    IS_INT(fails, 0, "failures are only 'does not fit' or 'exceeded'");
}

static void test_determinism(void)
{
    graph_profile *g = random_profile(3, 80, "sgd");
    int64_t peak = graph_peak_memory(g, g->order);
    const char *sets[] = {"heuristic=random", "sample=true"};
    plan *p1 = NULL, *p2 = NULL;
    sw_err e;
    int rc = dtr(g, peak * 7 / 10, sets, 2, &p1, &e) || dtr(g, peak * 7 / 10, sets, 2, &p2, &e);
    OK(!rc && p1->n_tasks == p2->n_tasks, "same seed, same plan");
    if (!rc) {
        int same = 1;
        for (int32_t i = 0; i < p1->n_tasks; i++)
            same &= p1->tasks[i].kind == p2->tasks[i].kind && p1->tasks[i].op == p2->tasks[i].op &&
                    p1->tasks[i].tensor == p2->tasks[i].tensor;
        OK(same, "task by task");
    }
    plan_free(p1);
    plan_free(p2);
    graph_free(g);
}

static void test_shared(void)
{
    const char *sh = tap_data_dir();
    char ddir[512], path[1024] = "";
    snprintf(ddir, sizeof ddir, "%s/dtr-logs", sh ? sh : "");
    DIR *d = sh ? opendir(ddir) : NULL;
    struct dirent *de;
    while (d && (de = readdir(d)) != NULL)
        if (!strncmp(de->d_name, "resnet32-", 9))
            snprintf(path, sizeof path, "%s/%s", ddir, de->d_name);
    if (d)
        closedir(d);
    if (!path[0]) {
        tap_skip(9, "no shared ResNet-32 DTR log");
        return;
    }
    const importer *im = importer_find("dtr");
    param_set ps;
    params_init(&ps, im->params);
    graph_profile *g = NULL;
    sw_err e;
    const char *pp = path;
    int rc = im->import(&pp, 1, &ps, dev_find("titanv"), &g, &e);
    params_free(&ps);
    if (rc) {
        OK(0, "import: %s", e.msg);
        return;
    }
    int64_t peak = graph_peak_memory(g, g->order);
    /* Two figures per cell. simrd's (the DTR authors' simulator, as the
       parity table quotes it: three decimals, docs/dtr-parity.md) is the
       reference, met to its own precision: within half a unit in its last
       place. swapsim's own overhead (six decimals, docs/dtr-parity.csv) is
       a regression value: it only says the result has not changed. LRU at
       0.4 gives up in both. */
    static const struct {
        const char *h;
        double ratio;
        double simrd;      /* reference: simrd's overhead, 3 decimals (-1: gives up) */
        double regression; /* swapsim's own overhead when this test was written */
    } cases[] = {{"heuristic=dtr", 0.4, 1.140, 1.140387},
                 {"heuristic=dtr-eq", 0.2, 1.332, 1.332161},
                 {"heuristic=lru", 0.7, 1.095, 1.095195},
                 {"heuristic=lru", 0.4, -1, -1}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *sets[] = {cases[i].h, "budget_on=bytes"};
        plan *p = NULL;
        rc = dtr(g, (int64_t)(cases[i].ratio * (double)peak), sets, 2, &p, &e);
        if (cases[i].simrd < 0) {
            IS_INT(rc, SW_EEXCEEDED, "resnet32 %s %.1f: gives up like simrd", cases[i].h,
                   cases[i].ratio);
            continue;
        }
        sim_result r;
        int safe = 0;
        double ov = rc ? -1 : check(p, g, INT64_MAX, &r, &safe);
        IS_NUM(ov, cases[i].simrd, 5e-4, "resnet32 %s %.1f: simrd's overhead %.3f, to its three "
               "decimals", cases[i].h, cases[i].ratio, cases[i].simrd);
        IS_NUM(ov, cases[i].regression, 5e-7, "resnet32 %s %.1f: regression value %.6f "
               "(swapsim's own overhead, unchanged)", cases[i].h, cases[i].ratio,
               cases[i].regression);
        if (i == 0)
            OK(safe, "resnet32 plan verifies");
        if (i == 0) {
            plan_free(p);
            /* the same at 0.4 with the arena limited to the budget */
            const char *s2[] = {cases[i].h};
            rc = dtr(g, (int64_t)(0.4 * (double)peak), s2, 1, &p, &e);
            ov = rc ? -1 : check(p, g, (int64_t)(0.4 * (double)peak), &r, &safe);
            OK(!rc && safe && ov > 1.1 && ov < 1.2, "resnet32 0.4 in an arena of the budget: %.4f",
               ov);
        }
        plan_free(p);
    }
    graph_free(g);
}

static const tap_test tests[] = {
    {"hand_dtr", hand_dtr},
    {"hand_size", hand_size},
    {"hand_lru", hand_lru},
    {"hand_fragmentation", hand_fragmentation},
    {"hand_does_not_fit", hand_does_not_fit},
    {"hand_overhead_cap", hand_overhead_cap},
    {"megengine_hand", test_megengine_hand},
    {"random_profiles", test_random},
    {"determinism", test_determinism},
    {"shared_resnet32_log", test_shared},
};

int main(int argc, char **argv) { return tap_run(tests, SW_ARRAY_LEN(tests), argc, argv); }
