/* test_dtr_setup.c: the DTR runtime's setup on profiles with more operators
   than tensors (its per-position tables are sized by operators). One named
   test each (tap_run). */
#include "../planners/lib/dtr_engine.h"
#include "../sim/simulate.h"
#include "../sim/verify.h"
#include "tap.h"

/* w (persistent) -> x; then n sinks read x and w: x dies after the last
   one, at a position far beyond the tensor count. */
static graph_profile *many_sinks(int n)
{
    graph_profile *g = graph_new("many-sinks", dev_find("v100"));
    int32_t x = graph_add_tensor(g, "x", 1024, GK_ACTIVATION, 0);
    int32_t w = graph_add_tensor(g, "w", 1024, GK_PARAMETER, 1);
    int32_t xw[2] = {x, w};
    graph_add_op(g, "make", "f", 1e-5, GP_FORWARD, &w, 1, &x, 1, NULL, 0, 0);
    for (int i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof name, "use%d", i);
        graph_add_op(g, name, "f", 1e-5, GP_FORWARD, xw, 2, NULL, 0, NULL, 0, 0);
    }
    sw_err e;
    if (graph_finish(g, &e, NULL, NULL)) {
        printf("# %s\n", e.msg);
        graph_free(g);
        return NULL;
    }
    return g;
}

static void test_more_ops_than_tensors(void)
{
    graph_profile *g = many_sinks(39);
    OK(g != NULL, "a profile of 40 ops on 2 tensors finishes");
    if (!g)
        return;
    static const char *const heur[] = {"dtr", "dtr-eq", "dtr-local", "lru", "size", "msps",
                                       "random"};
    for (size_t i = 0; i < SW_ARRAY_LEN(heur); i++) {
        const planner *pl = planner_find("dtr");
        planner_opts o;
        planner_opts_init(&o, pl);
        o.memory_budget = 1 << 20;
        char kv[64];
        snprintf(kv, sizeof kv, "heuristic=%s", heur[i]);
        sw_err e;
        plan *p = NULL;
        int rc = params_set_kv(&o.params, kv, &e);
        if (!rc)
            rc = planner_run(pl, g, &o, &p, &e);
        planner_opts_free(&o);
        IS_INT(rc, 0, "dtr (%s) plans 40 ops on 2 tensors", heur[i]);
        if (rc) {
            printf("# %s\n", e.msg);
            continue;
        }
        sim_result r;
        OK(plan_verify(p, NULL, &e) == 0 && sim_plan(p, NULL, NULL, &r, &e) == 0 &&
               r.reruns == 0 && r.drops == 0,
           "its plan is safe and evicts nothing (%s)", heur[i]);
        plan_free(p);
    }
    graph_free(g);
}

static void test_heuristic_names(void)
{
    static const char *const names[] = {"dtr", "dtr-eq", "dtr-local", "lru", "size", "msps",
                                        "random"};
    static const int want[] = {DH_DTR, DH_EQ, DH_LOCAL, DH_LRU, DH_SIZE, DH_MSPS, DH_RANDOM};
    for (size_t i = 0; i < SW_ARRAY_LEN(names); i++)
        IS_INT(dtr_heuristic_parse(names[i]), want[i], "heuristic '%s' parses", names[i]);
    IS_INT(dtr_heuristic_parse("megengine"), -1, "MegEngine's score has no heuristic name");
    IS_INT(dtr_heuristic_parse("lru "), -1, "an unknown name is -1");
    IS_INT(dtr_heuristic_parse(NULL), -1, "NULL is -1");
}

static const tap_test tests[] = {
    {"more_ops_than_tensors", test_more_ops_than_tensors},
    {"heuristic_names", test_heuristic_names},
};

int main(int argc, char **argv) { return tap_run(tests, SW_ARRAY_LEN(tests), argc, argv); }
