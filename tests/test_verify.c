/* test_verify.c: one hand-made plan per violation the verifier must catch,
   each rejected for the right reason, and the fixed plan accepted; one
   named test per kind of violation (tap_run). */
#include "../sim/verify.h"
#include "fixtures.h"
#include "tap.h"

static void expect(plan *p, int cls, const char *needle, const char *what)
{
    sw_err e = {0, ""};
    int got = -1;
    int rc = plan_verify(p, &got, &e);
    if (cls == VERIFY_OK) {
        OK(rc == 0, "%s: accepted%s%s", what, rc ? " -- " : "", rc ? e.msg : "");
    } else {
        OK(rc == SW_EUNSAFE, "%s: rejected", what);
        OK(got == cls, "%s: for the right reason (%s, got %s)", what, verify_class_name(cls),
           verify_class_name(got));
        if (needle)
            IS_STR_HAS(e.msg, needle, "%s: names it", what);
    }
    plan_free(p);
}

static void figure3_accepted(void)
{
    graph_profile *g = fig3_profile();
    OK(g != NULL, "figure 3 profile");
    expect(fig3_plan(g, F3_OK), VERIFY_OK, NULL, "figure 3 plan");
    graph_free(g);
}

/* an op whose input is not resident, or resident but not ordered after its
   swap-in */
static void input_not_resident(void)
{
    graph_profile *g = fig3_profile();
    expect(fig3_plan(g, F3_EARLY_DROP), VERIFY_NOT_RESIDENT, "input tensor 0 'W1' is not resident",
           "W1 dropped before op1");
    expect(fig3_plan(g, F3_NO_USE_EDGE), VERIFY_UNORDERED_USE, "task 1 (run op 0 'op1')",
           "op1 without an edge from W1's swap-in");
    graph_free(g);
}

/* two residencies sharing memory without an ordering edge */
static void memory_overlap(void)
{
    graph_profile *g = fig3_profile();
    expect(fig3_plan(g, F3_NO_MEM_EDGE), VERIFY_MEMORY_OVERLAP, "tensor 2 'W3'",
           "W3 swapped into W1's memory without an edge from W1's drop");
    expect(fig3_plan(g, F3_OVERLAP_LIVE), VERIFY_MEMORY_OVERLAP, "still resident",
           "A3 placed on live A2");
    graph_free(g);
}

static void capacity_exceeded(void)
{
    graph_profile *g = fig3_profile();
    expect(fig3_plan(g, F3_OUTSIDE), VERIFY_CAPACITY, "outside the arena", "A3 beyond the arena");
    expect(fig3_plan(g, F3_BIG_ARENA), VERIFY_CAPACITY, "more than the budget",
           "an arena larger than the budget");
    graph_free(g);
}

/* a persistent set that differs between iteration start and end */
static void persistent_set_differs(void)
{
    graph_profile *g = fig3_profile();
    expect(fig3_plan(g, F3_KEEP_W3), VERIFY_PERSISTENT_SET, "'W3' is resident at the end",
           "W3 kept resident at the end but not at the start");
    graph_free(g);
}

static void deadlock(void)
{
    graph_profile *g = fig3_profile();
    expect(fig3_plan(g, F3_DEADLOCK), VERIFY_DEADLOCK, "deadlocks", "swap-in waiting for its user");
    graph_free(g);
}

/* run twice / never run */
static void op_run_twice(void)
{
    graph_profile *g = fig3_profile();
    plan *p = fig3_plan(g, F3_OK);
    p->tasks[3].op = 0; /* op1 twice, op2 never */
    expect(p, VERIFY_STRUCTURE, "run more than once", "an op run twice");
    graph_free(g);
}

/* in-place mutation: the safe plan and its broken versions */
static void mutation(void)
{
    graph_profile *m = mut_profile();
    expect(mut_plan(m, MUT_SWAP), VERIFY_OK, NULL, "mutated tensor swapped out and back in");
    /* a dirty tensor dropped while still needed and neither copied nor recomputable */
    expect(mut_plan(m, MUT_DROP_USE), VERIFY_DIRTY_DROP, "dropped by", "dirty T dropped, then read");
    expect(mut_plan(m, MUT_DROP_SWAPIN), VERIFY_DIRTY_DROP, "while dirty",
           "dirty T dropped, then swapped in");
    /* recomputing a mutated tensor gives an old version: not current */
    expect(mut_plan(m, MUT_DROP_RERUN), VERIFY_NOT_CURRENT, "mutated in place",
           "dirty T dropped and recomputed by its producer");
    /* a swap-in of a tensor whose host copy is stale (being written) */
    expect(mut_plan(m, MUT_RACE), VERIFY_STALE_HOST, "writes the host copy",
           "swap-in racing the swap-out that writes the host copy");
    graph_free(m);
}

/* a persistent update lost: W resident, updated, dropped dirty */
static void persistent_update_lost(void)
{
    dev_spec d = fixture_device();
    graph_profile *u = graph_new("update", &d);
    graph_add_tensor(u, "W", UNIT, GK_PARAMETER, 1);
    graph_add_tensor(u, "Y", UNIT, GK_ACTIVATION, 0);
    graph_add_op(u, "f", "op", 0.001, GP_FORWARD, IDS(0), IDS(1), NOIDS, 0);
    graph_add_op(u, "u", "op", 0.001, GP_UPDATE, IDS(1), NOIDS, IDS(0), 0);
    sw_err e;
    OK(graph_finish(u, &e, NULL, NULL) == 0, "update profile");
    for (int fixed = 0; fixed < 2; fixed++) {
        plan *p = plan_new(u, 0);
        p->budget = p->capacity = 2 * UNIT;
        plan_set_meta(p, "hand", 0, "{}");
        plan_add_task(p, TASK_SWAP_IN, -1, 0, PL(0, 0), NOIDS, NOIDS, IDS(3));
        plan_add_task(p, TASK_RUN, 0, -1, PL(1, UNIT), NOIDS, IDS(0), NOIDS);
        plan_add_task(p, TASK_RUN, 1, -1, NOPL, IDS(1), NOIDS, NOIDS);
        plan_add_task(p, fixed ? TASK_SWAP_OUT : TASK_DROP, -1, 0, NOPL, NOIDS, IDS(2), NOIDS);
        if (fixed)
            expect(p, VERIFY_OK, NULL, "updated parameter copied out at the end");
        else
            expect(p, VERIFY_DIRTY_DROP, "update is lost", "updated parameter dropped at the end");
    }
    graph_free(u);
}

static const tap_test tests[] = {
    {"figure3_accepted", figure3_accepted},
    {"input_not_resident", input_not_resident},
    {"memory_overlap", memory_overlap},
    {"capacity_exceeded", capacity_exceeded},
    {"persistent_set_differs", persistent_set_differs},
    {"deadlock", deadlock},
    {"op_run_twice", op_run_twice},
    {"mutation", mutation},
    {"persistent_update_lost", persistent_update_lost},
};

int main(int argc, char **argv) { return tap_run(tests, SW_ARRAY_LEN(tests), argc, argv); }
