/* test_swapadvisor.c: SwapAdvisor's swap planner on hand-made graphs whose
   best plan is worked out by hand, each GA operator on the paper's own
   examples, validity of children over many random draws, determinism
   across thread counts, and the GA never returning worse than its first
   generation. Every plan is verified. One named test each (tap_run). */
#include <gsl/gsl_rng.h>

#include "../planners/lib/schedule.h"
#include "../planners/swapadvisor.h"
#include "../planners/lib/swap_util.h"
#include "../planners/lib/swapplan.h"
#include "../sim/plan_io.h"
#include "../sim/verify.h"
#include "fixtures.h"
#include "random_plans.h"
#include "tap.h"

static int count_kind(const plan *p, int kind)
{
    int n = 0;
    for (int32_t t = 0; t < p->n_tasks; t++)
        n += p->tasks[t].kind == kind;
    return n;
}

/* X made early and used at the end; op4 needs two new objects in a pool of
   four, so one tensor must leave. Ops 0..6: op1 -> X; op2 X -> Y; op3 -> Z
   (independent); op4 Y -> W, W2; op5 W, W2, Z -> V; op5b V -> V2;
   op6 X, V2 -> F. */
static graph_profile *branch_profile(void)
{
    dev_spec d = fixture_device();
    graph_profile *g = graph_new("branch", &d);
    const char *names[] = {"X", "Y", "Z", "W", "W2", "V", "F", "V2"};
    for (int i = 0; i < 8; i++)
        graph_add_tensor(g, names[i], UNIT, GK_ACTIVATION, 0);
    graph_add_op(g, "op1", "op", 0.001, GP_FORWARD, NOIDS, IDS(0), NOIDS, 0);
    graph_add_op(g, "op2", "op", 0.001, GP_FORWARD, IDS(0), IDS(1), NOIDS, 0);
    graph_add_op(g, "op3", "op", 0.001, GP_FORWARD, NOIDS, IDS(2), NOIDS, 0);
    graph_add_op(g, "op4", "op", 0.001, GP_FORWARD, IDS(1), IDS(3, 4), NOIDS, 0);
    graph_add_op(g, "op5", "op", 0.001, GP_FORWARD, IDS(3, 4, 2), IDS(5), NOIDS, 0);
    graph_add_op(g, "op5b", "op", 0.001, GP_FORWARD, IDS(5), IDS(7), NOIDS, 0);
    graph_add_op(g, "op6", "op", 0.001, GP_FORWARD, IDS(0, 7), IDS(6), NOIDS, 0);
    sw_err e;
    if (graph_finish(g, &e, NULL, NULL))
        return NULL;
    return g;
}

static int is_topological(const graph_profile *g, const int32_t *s)
{
    return graph_is_topological(g, s, NULL, NULL) == 1;
}

/* n_ops ops, each making its own tensor; edges[2k] -> edges[2k+1] (the
   second reads the first's output). */
static graph_profile *small_dag(int n_ops, const int *edges, int n_edges)
{
    graph_profile *g = graph_new("dag", dev_find("v100"));
    int32_t t[8];
    char nm[16];
    for (int o = 0; o < n_ops; o++) {
        snprintf(nm, sizeof nm, "t%d", o);
        t[o] = graph_add_tensor(g, nm, 100, GK_ACTIVATION, 0);
    }
    for (int o = 0; o < n_ops; o++) {
        int32_t in[8];
        int n_in = 0;
        for (int k = 0; k < n_edges; k++)
            if (edges[2 * k + 1] == o)
                in[n_in++] = t[edges[2 * k]];
        snprintf(nm, sizeof nm, "op%d", o);
        graph_add_op(g, nm, "relu", 1e-3, GP_FORWARD, in, n_in, &t[o], 1, NULL, 0, 0);
    }
    sw_err e;
    if (graph_finish(g, &e, NULL, NULL)) {
        printf("# %s\n", e.msg);
        graph_free(g);
        return NULL;
    }
    return g;
}

/* The two schedule mutations, exactly: the paper's dataflow pass and the
   move-one alternative, by their probabilities on tiny graphs and by
   validity and reach on a random one. */
static void test_schedule_mutations(void)
{
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 11);
    /* three independent ops, parent [0,1,2], P = 0.5: the first pick is a
       random ready op with probability 0.5 (each 1/3), else op0: op0 first
       with probability 0.5 + 0.5/3 = 2/3; then of the two left the earlier
       with 0.5 + 0.5/2 = 3/4: the parent kept with 2/3 x 3/4 = 1/2 */
    graph_profile *g = small_dag(3, NULL, 0);
    sa_sched_scratch *ss = sa_sched_scratch_new(g);
    int32_t par[3] = {0, 1, 2}, out[4];
    int draws = 40000, first0 = 0, kept = 0, same0 = 1;
    sa_schedule_mutate(g, ss, par, 0, rng, out);
    same0 = !memcmp(out, par, sizeof par);
    for (int i = 0; i < draws; i++) {
        sa_schedule_mutate(g, ss, par, 0.5, rng, out);
        first0 += out[0] == 0;
        kept += !memcmp(out, par, sizeof par);
    }
    OK(same0, "dataflow mutation with P = 0 keeps the parent's order");
    IS_NUM((double)first0 / draws, 2.0 / 3, 0.01,
           "dataflow mutation, P = 0.5: the parent's first op stays first with probability 2/3");
    IS_NUM((double)kept / draws, 0.5, 0.01,
           "dataflow mutation, P = 0.5: the parent's order survives with probability 1/2");
    sa_sched_scratch_free(ss);
    graph_free(g);

    /* a chain 0 -> 1 -> 2 and a free op 3, parent [0,1,2,3]: ops 0 and 1
       cannot move; op 2 can go only to 3 ([0,1,3,2]); op 3 to 0, 1 or 2.
       Each movable op is drawn with probability 1/2, so [0,1,3,2] comes
       with 1/2 + 1/2 x 1/3 = 2/3, [3,0,1,2] and [0,3,1,2] with 1/6 each */
    int chain[4] = {0, 1, 1, 2};
    g = small_dag(4, chain, 2);
    ss = sa_sched_scratch_new(g);
    int32_t p4[4] = {0, 1, 2, 3}, o4[5];
    int32_t want[3][4] = {{0, 1, 3, 2}, {3, 0, 1, 2}, {0, 3, 1, 2}};
    int hits[3] = {0, 0, 0}, other = 0, moved = 0;
    for (int i = 0; i < draws; i++) {
        moved += sa_schedule_move_one(g, ss, p4, rng, o4);
        int k = 0;
        while (k < 3 && memcmp(o4, want[k], sizeof p4))
            k++;
        if (k < 3)
            hits[k]++;
        else
            other++;
    }
    IS_INT(other, 0, "move_one on chain + free op: only the three legal single moves");
    IS_INT(moved, draws, "move_one always moves an op here");
    IS_NUM((double)hits[0] / draws, 2.0 / 3, 0.01, "move_one: [0,1,3,2] with probability 2/3");
    IS_NUM((double)hits[1] / draws, 1.0 / 6, 0.01, "move_one: [3,0,1,2] with probability 1/6");
    sa_sched_scratch_free(ss);
    graph_free(g);
    int all[2] = {0, 1};
    g = small_dag(2, all, 1);
    ss = sa_sched_scratch_new(g);
    int32_t p2[2] = {0, 1}, o2[3];
    OK(sa_schedule_move_one(g, ss, p2, rng, o2) == 0 && o2[0] == 0 && o2[1] == 1,
       "move_one on a chain: nothing can move, the order is kept");
    sa_sched_scratch_free(ss);
    graph_free(g);

    /* a random training graph: both stay topological; move_one displaces
       exactly one op, the dataflow pass (P = 0.1) many */
    graph_profile *rg = random_profile(21, 60, "sgd");
    ss = sa_sched_scratch_new(rg);
    int32_t n = rg->n_ops;
    int32_t *par2 = sw_malloc((size_t)n * 4), *a = sw_malloc((size_t)n * 4);
    int32_t *b = sw_malloc((size_t)n * 4);
    int topo = 0, one = 0, rounds = 300;
    double displaced_df = 0;
    for (int i = 0; i < rounds; i++) {
        sa_schedule_mutate(rg, ss, rg->order, 1.0, rng, par2);
        sa_schedule_move_one(rg, ss, par2, rng, a);
        sa_schedule_mutate(rg, ss, par2, 0.1, rng, b);
        topo += is_topological(rg, a) && is_topological(rg, b);
        /* exactly one op moved: deleting some op from both leaves the same list */
        int32_t diff = 0;
        for (int32_t k = 0; k < n; k++)
            diff += a[k] != par2[k];
        int ok = diff > 0;
        if (ok) {
            int32_t f = 0, l = n - 1;
            while (a[f] == par2[f])
                f++;
            while (a[l] == par2[l])
                l--;
            /* the window [f, l] is a rotation by one of the parent's */
            int left = a[l] == par2[f], right = a[f] == par2[l];
            for (int32_t k = f; k < l && left; k++)
                left = a[k] == par2[k + 1];
            for (int32_t k = f; k < l && right; k++)
                right = a[k + 1] == par2[k];
            ok = left || right;
        }
        one += ok;
        for (int32_t k = 0; k < n; k++)
            displaced_df += b[k] != par2[k];
    }
    IS_INT(topo, rounds, "both mutations keep random schedules topological");
    IS_INT(one, rounds, "move_one moves exactly one op of a random schedule");
    OK(displaced_df / rounds > 5, "the dataflow pass (P = 0.1) displaces many ops: %.1f of %d on "
       "average", displaced_df / rounds, n);
    sw_free(par2);
    sw_free(a);
    sw_free(b);
    sa_sched_scratch_free(ss);
    graph_free(rg);
    gsl_rng_free(rng);
}

/* Ours (not the paper's): the run-following mutations, by their exact
   outcomes on tiny graphs worked out by hand, and validity on a random
   training graph. mean_run 1e9: a run never ends by its length. */
static void test_run_mutations(void)
{
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 5);
    int draws = 30000;
    /* two chains 0 -> 1 -> 2 and 3 -> 4 -> 5, parent interleaved
       [0,3,1,4,2,5], P = 1: the first pick is op0 or op3 (1/2 each) and
       starts a run; chain follows a ready successor of the op just issued,
       so that chain runs to its end; then one op is ready at a time (no
       choice): [0,1,2,3,4,5] or [3,4,5,0,1,2], nothing else */
    int two[8] = {0, 1, 1, 2, 3, 4, 4, 5};
    graph_profile *g = small_dag(6, two, 4);
    sa_sched_scratch *ss = sa_sched_scratch_new(g);
    int32_t par[6] = {0, 3, 1, 4, 2, 5}, out[7];
    int32_t wa[6] = {0, 1, 2, 3, 4, 5}, wb[6] = {3, 4, 5, 0, 1, 2};
    int ha = 0, hb = 0, kept = 0;
    for (int i = 0; i < draws; i++) {
        sa_schedule_mutate_runs(g, ss, par, 1.0, 1e9, SA_RUN_CHAIN, rng, out);
        ha += !memcmp(out, wa, sizeof wa);
        hb += !memcmp(out, wb, sizeof wb);
    }
    IS_INT(ha + hb, draws, "chain, P = 1, long runs: each chain issued whole, one after the other");
    IS_NUM((double)ha / draws, 0.5, 0.01, "chain: op0's chain first with probability 1/2");
    for (int i = 0; i < 100; i++) {
        sa_schedule_mutate_runs(g, ss, par, 0, 1e9, SA_RUN_CHAIN, rng, out);
        kept += !memcmp(out, par, sizeof par);
    }
    IS_INT(kept, 100, "chain with P = 0 keeps the parent's order (no random pick, no run)");
    /* P = 1 and runs of exactly one op (mean 1): after a random pick the
       next choice follows it, then the next is random again; from
       [0,3,1,4,2,5] the first pick op0 is followed by op1 (its successor),
       then a random pick among op2, op3 */
    int a01 = 0, n0 = 0;
    for (int i = 0; i < draws; i++) {
        sa_schedule_mutate_runs(g, ss, par, 1.0, 1, SA_RUN_CHAIN, rng, out);
        if (out[0] == 0) {
            n0++;
            a01 += out[1] == 1;
        }
    }
    IS_INT(a01, n0, "chain, runs of one: op0 drawn first is always followed by op1");
    sa_sched_scratch_free(ss);
    graph_free(g);

    /* reuse: independent ops a (reads W, 1000 bytes, and x, 10 bytes),
       b (reads x), c (reads W), parent [a,b,c], P = 1, long runs. The first
       pick is random (1/3 each); then the ready op sharing the most bytes
       with the op just issued (the last op is no choice): a -> c (1000 >
       10) -> b: [a,c,b]; b -> a (x; c shares nothing) -> c: [b,a,c];
       c -> a (W) -> b: [c,a,b]. The dataflow pass at P = 1 would also give
       [a,b,c], [b,c,a] and [c,b,a]. */
    dev_spec d = fixture_device();
    g = graph_new("reuse", &d);
    int32_t W = graph_add_tensor(g, "W", 1000, GK_PARAMETER, 1);
    int32_t x = graph_add_tensor(g, "x", 10, GK_PARAMETER, 1);
    int32_t ya = graph_add_tensor(g, "ya", 10, GK_ACTIVATION, 0);
    int32_t yb = graph_add_tensor(g, "yb", 10, GK_ACTIVATION, 0);
    int32_t yc = graph_add_tensor(g, "yc", 10, GK_ACTIVATION, 0);
    graph_add_op(g, "a", "op", 0.001, GP_FORWARD, IDS(W, x), IDS(ya), NOIDS, 0);
    graph_add_op(g, "b", "op", 0.001, GP_FORWARD, IDS(x), IDS(yb), NOIDS, 0);
    graph_add_op(g, "c", "op", 0.001, GP_FORWARD, IDS(W), IDS(yc), NOIDS, 0);
    sw_err e;
    OK(graph_finish(g, &e, NULL, NULL) == 0, "the reuse graph builds");
    ss = sa_sched_scratch_new(g);
    int32_t p3[3] = {0, 1, 2}, o3[4];
    int32_t want[3][3] = {{0, 2, 1}, {1, 0, 2}, {2, 0, 1}};
    int hit[3] = {0, 0, 0}, other = 0;
    for (int i = 0; i < draws; i++) {
        sa_schedule_mutate_runs(g, ss, p3, 1.0, 1e9, SA_RUN_REUSE, rng, o3);
        int k = 0;
        while (k < 3 && memcmp(o3, want[k], sizeof p3))
            k++;
        if (k < 3)
            hit[k]++;
        else
            other++;
    }
    IS_INT(other, 0, "reuse, P = 1, long runs: only [a,c,b], [b,a,c], [c,a,b]");
    for (int k = 0; k < 3; k++)
        IS_NUM((double)hit[k] / draws, 1.0 / 3, 0.01, "reuse: outcome %d with probability 1/3",
               k);
    sa_sched_scratch_free(ss);
    graph_free(g);

    /* a random training graph: both stay topological for P = 0.1 and 1 */
    graph_profile *rg = random_profile(21, 60, "sgd");
    ss = sa_sched_scratch_new(rg);
    int32_t n = rg->n_ops;
    int32_t *p2 = sw_malloc((size_t)n * 4), *a2 = sw_malloc((size_t)n * 4);
    int ok = 0, rounds = 200, changed = 0;
    for (int i = 0; i < rounds; i++) {
        sa_schedule_mutate(rg, ss, rg->order, 1.0, rng, p2);
        int mode = i % 2 ? SA_RUN_CHAIN : SA_RUN_REUSE;
        int m = sa_schedule_mutate_runs(rg, ss, p2, 0.1, 8, mode, rng, a2);
        int32_t diff = 0;
        for (int32_t k = 0; k < n; k++)
            diff += a2[k] != p2[k];
        ok += is_topological(rg, a2) && m == diff;
        changed += diff > 0;
        sa_schedule_mutate_runs(rg, ss, p2, 1.0, 8, mode, rng, a2);
        ok += is_topological(rg, a2);
    }
    IS_INT(ok, 2 * rounds, "chain and reuse keep random schedules topological (P = 0.1 and 1); "
           "the count returned is the positions changed");
    OK(changed > rounds / 2, "and with P = 0.1 they change the order (%d of %d)", changed,
       rounds);
    sw_free(p2);
    sw_free(a2);
    sa_sched_scratch_free(ss);
    graph_free(rg);
    gsl_rng_free(rng);
}

/* Ours (not the paper's): the cone move, by hand on a join of two chains,
   and validity on a random training graph. */
static void test_cone_move(void)
{
    /* 0 -> 1 -> 2 -> 6 and 3 -> 4 -> 5 -> 6, parent [0,3,1,4,2,5,6] */
    int edges[12] = {0, 1, 1, 2, 3, 4, 4, 5, 2, 6, 5, 6};
    graph_profile *g = small_dag(7, edges, 6);
    sa_sched_scratch *ss = sa_sched_scratch_new(g);
    int32_t par[7] = {0, 3, 1, 4, 2, 5, 6}, out[8];
    int32_t h4[7] = {3, 4, 0, 1, 2, 5, 6}, s1[7] = {0, 3, 4, 5, 1, 2, 6};
    int32_t s0[7] = {3, 4, 5, 0, 1, 2, 6};
    IS_INT(sa_schedule_cone(g, ss, par, 4, 0, out), 2, "hoist op4: its cone is {3, 4}");
    OK(!memcmp(out, h4, sizeof h4), "hoist op4: [3,4,0,1,2,5,6] (the cone first, the rest in "
       "the parent's order)");
    IS_INT(sa_schedule_cone(g, ss, par, 1, 1, out), 3, "sink op1: its cone is {1, 2, 6}");
    OK(!memcmp(out, s1, sizeof s1), "sink op1: [0,3,4,5,1,2,6]");
    sa_schedule_cone(g, ss, par, 0, 1, out);
    OK(!memcmp(out, s0, sizeof s0), "sink op0: [3,4,5,0,1,2,6] (one chain after the other)");
    IS_INT(sa_schedule_cone(g, ss, par, 6, 0, out), 7, "hoist op6: every op is its ancestor");
    OK(!memcmp(out, par, sizeof par), "hoist op6 keeps the parent's order");
    sa_sched_scratch_free(ss);
    graph_free(g);

    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 7);
    graph_profile *rg = random_profile(21, 60, "sgd");
    ss = sa_sched_scratch_new(rg);
    int32_t n = rg->n_ops;
    int32_t *p2 = sw_malloc((size_t)n * 4), *a2 = sw_malloc((size_t)n * 4);
    int ok = 0, rounds = 300;
    for (int i = 0; i < rounds; i++) {
        sa_schedule_mutate(rg, ss, rg->order, 1.0, rng, p2);
        int32_t v = (int32_t)gsl_rng_uniform_int(rng, (unsigned long)n);
        sa_schedule_cone(rg, ss, p2, v, i % 2, a2);
        ok += is_topological(rg, a2);
    }
    IS_INT(ok, rounds, "hoists and sinks of random ops keep random schedules topological");
    sw_free(p2);
    sw_free(a2);
    sa_sched_scratch_free(ss);
    graph_free(rg);
    gsl_rng_free(rng);
}

/* one pool class; four objects of it */
static int32_t cls1[1] = {0}, cnt4[1] = {4};

/* Figure 3: W1 -> W3, W2 -> A3 */
static void figure3_pool_objects(void)
{
    sw_err e;
    graph_profile *g = fig3_profile();
    swapplan *sp = swapplan_new(g, 4 * UNIT);
    sp_alloc al = {cls1, cnt4, 1};
    plan *p = NULL;
    sim_result r;
    int rc = swapplan_make(sp, g->order, &al, 1.0, &p, &r, &e);
    OK(rc == 0, "figure 3 plans (%s)", rc ? e.msg : "ok");
    if (p) {
        OK(plan_verify(p, NULL, &e) == 0, "figure 3 plan is safe");
        /* W3 is swapped into W1's object, A3 into W2's */
        const plan_place *w3 = NULL, *a3 = NULL, *w1 = NULL, *w2 = NULL;
        for (int32_t t = 0; t < p->n_tasks; t++)
            for (uint32_t k = 0; k < p->tasks[t].n_place; k++) {
                const plan_place *pl = &p->places[p->tasks[t].place_at + k];
                if (pl->tensor == W1 && !w1) w1 = pl;
                if (pl->tensor == W2 && !w2) w2 = pl;
                if (pl->tensor == W3) w3 = pl;
                if (pl->tensor == A3) a3 = pl;
            }
        OK(w1 && w3 && w1->obj == w3->obj, "W1 -> W3 (same pool object)");
        OK(w2 && a3 && w2->obj == a3->obj, "W2 -> A3 (same pool object)");
        IS_INT(count_kind(p, TASK_SWAP_IN), 3, "three swap-ins (W1, W2, W3)");
        IS_INT(count_kind(p, TASK_SWAP_OUT), 0, "clean parameters are dropped, not copied");
        IS_NUM(r.iteration_time_s, 0.004, 1e-12, "4 ms, as worked out by hand");
        plan_free(p);
    }
    swapplan_free(sp);
    graph_free(g);
}

/* a chain that needs exactly one swap, fully overlapped */
static void chain_one_overlapped_swap(void)
{
    sw_err e;
    int rc;
    plan *p = NULL;
    sim_result r;
    dev_spec d = fixture_device();
    graph_profile *c = graph_new("one-swap", &d);
    const char *nm[] = {"X", "A", "B", "B2", "C", "Z", "D"};
    for (int i = 0; i < 7; i++)
        graph_add_tensor(c, nm[i], UNIT, GK_ACTIVATION, 0);
    graph_add_op(c, "op1", "op", 0.001, GP_FORWARD, NOIDS, IDS(0), NOIDS, 0);
    graph_add_op(c, "op2", "op", 0.001, GP_FORWARD, NOIDS, IDS(1), NOIDS, 0);
    graph_add_op(c, "op3", "op", 0.001, GP_FORWARD, IDS(1), IDS(2, 3), NOIDS, 0);
    graph_add_op(c, "op4", "op", 0.001, GP_FORWARD, IDS(2, 3), IDS(4), NOIDS, 0);
    graph_add_op(c, "op4b", "op", 0.001, GP_FORWARD, IDS(4), IDS(6), NOIDS, 0);
    graph_add_op(c, "op5", "op", 0.001, GP_FORWARD, IDS(0, 6), IDS(5), NOIDS, 0);
    OK(graph_finish(c, &e, NULL, NULL) == 0, "one-swap chain");
    swapplan *s2 = swapplan_new(c, 3 * UNIT);
    int32_t n3[1] = {3};
    sp_alloc a3 = {cls1, n3, 1};
    rc = swapplan_make(s2, c->order, &a3, 1.0, &p, &r, &e);
    OK(rc == 0, "one-swap chain plans (%s)", rc ? e.msg : "ok");
    if (p) {
        OK(plan_verify(p, NULL, &e) == 0, "one-swap plan is safe");
        IS_INT(count_kind(p, TASK_SWAP_OUT), 1, "exactly one swap-out (X, dirty)");
        IS_INT(count_kind(p, TASK_SWAP_IN), 1, "exactly one swap-in (X)");
        /* by hand: X out during op2 [1,2]; memory is full until op4 ends, then
           X comes back during op4b [4,5]: no stall, 6 ms */
        IS_NUM(r.iteration_time_s, 0.006, 1e-12, "the swap is hidden: 6 ms = ideal");
        IS_NUM(r.stall_swap_in_s + r.stall_memory_s, 0, 1e-12, "no stall");
        plan_free(p);
    }
    int32_t n2[1] = {2};
    sp_alloc a2 = {cls1, n2, 1};
    rc = swapplan_make(s2, c->order, &a2, 1.0, NULL, NULL, &e);
    IS_INT(rc, SW_ENOFIT, "two objects cannot hold op3's three tensors: does not fit");
    swapplan_free(s2);
    graph_free(c);
}

/* a branch where the schedule decides whether the swap overlaps */
static void branch_schedule_decides_overlap(void)
{
    sw_err e;
    graph_profile *b = branch_profile();
    swapplan *s3 = swapplan_new(b, 4 * UNIT);
    int32_t good[7] = {0, 1, 2, 3, 4, 5, 6}, bad[7] = {0, 2, 1, 3, 4, 5, 6};
    sp_alloc a4 = {cls1, cnt4, 1};
    sim_result rg, rb;
    plan *pg = NULL, *pbad = NULL;
    int ok1 = swapplan_make(s3, good, &a4, 1.0, &pg, &rg, &e) == 0;
    int ok2 = swapplan_make(s3, bad, &a4, 1.0, &pbad, &rb, &e) == 0;
    OK(ok1 && ok2, "both schedules plan");
    OK(pg && plan_verify(pg, NULL, &e) == 0 && pbad && plan_verify(pbad, NULL, &e) == 0,
       "both plans are safe");
    /* by hand: with op3 between X's last use (op2) and the pressure (op4),
       X goes out during op3 and comes back during op5b: 7 ms, no stall.
       With op3 first, X is too recent to evict: Z goes, but Z is needed
       by op5 right after, and its swap-in waits for Y's memory (freed by
       op4): op5 stalls 1 ms: 8 ms. */
    IS_NUM(rg.iteration_time_s, 0.007, 1e-12, "schedule op1 op2 op3 op4: swap overlaps, 7 ms");
    IS_NUM(rb.iteration_time_s, 0.008, 1e-12, "schedule op1 op3 op2 op4: 1 ms stall, 8 ms");
    plan_free(pg);
    plan_free(pbad);
    swapplan_free(s3);
    graph_free(b);
}

/* GA operators on the paper's examples */
static void ga_operators_paper_examples(void)
{
    int32_t s1[5] = {0, 1, 2, 3, 4}, s2[5] = {1, 2, 3, 0, 4}, c1[5], c2[5];
    uint8_t mark[5];
    sa_schedule_crossover(s1, s2, 5, 3, c1, c2, mark);
    int32_t w1[5] = {1, 2, 3, 0, 4}, w2[5] = {0, 1, 2, 3, 4};
    OK(!memcmp(c1, w1, sizeof w1), "schedule crossover CR=3: SCH2[1..3] then SCH1's order");
    OK(!memcmp(c2, w2, sizeof w2), "schedule crossover CR=3: the other child");
    /* CLS [1,1,1,1] x [1,2,2,2] at CR=2 (0-based classes here) */
    int32_t a[4] = {0, 0, 0, 0}, bb[4] = {0, 1, 1, 1}, k1[4], k2[4];
    sa_cls_crossover(a, bb, 4, 2, k1, k2, 1);
    int32_t e1[4] = {0, 1, 1, 1}, e2[4] = {0, 0, 1, 1};
    OK(!memcmp(k1, e1, sizeof e1), "CLS crossover: [1,2,1,1] repaired to [1,2,2,2]");
    OK(!memcmp(k2, e2, sizeof e2), "CLS crossover: [1,1,2,2]");
    /* CNT_EXT: CLS2=[1,2,2,2], CNT2=[8,1] -> [8,1,1,1]; CLS1=[1,1,1,1], CNT1=[4] -> [4,4,4,4] */
    int32_t cnt2[2] = {8, 1}, cnt1[1] = {4}, x2[4], x1[4], xc[4], cc[2];
    sa_cnt_expand(bb, cnt2, 4, x2);
    sa_cnt_expand(a, cnt1, 4, x1);
    OK(x2[0] == 8 && x2[1] == 1 && x2[2] == 1 && x2[3] == 1, "CNT_EXT2 = [8,1,1,1]");
    OK(x1[0] == 4 && x1[3] == 4, "CNT_EXT1 = [4,4,4,4]");
    for (int i = 0; i < 4; i++)
        xc[i] = i < 2 ? x2[i] : x1[i];
    OK(xc[0] == 8 && xc[1] == 1 && xc[2] == 4 && xc[3] == 4, "CNT_EXT_C1 = [8,1,4,4]");
    sa_cnt_collapse(k1, xc, 4, 2, cc);
    OK(cc[0] == 8 && cc[1] == 3, "averaged over CLS_C1 = [1,2,2,2]: CNT_C1 = [8,3]");
    /* repair 8 x 1MB + 3 x 4MB under 12 MB -> [4,2] */
    int64_t cs[2] = {1000000, 4000000};
    int rr = sa_cnt_repair(cc, cs, NULL, NULL, 2, 12000000);
    OK(rr == 0 && cc[0] == 4 && cc[1] == 2, "CNT repair under 12 MB: [4,2]");
    int32_t lo[2] = {5, 2};
    int32_t cc2[2] = {8, 3};
    OK(sa_cnt_repair(cc2, cs, lo, NULL, 2, 12000000) == -1, "repair fails when minimums exceed the budget");
}

/* children stay valid over many random draws */
static void children_stay_valid(void)
{
    graph_profile *rg = random_profile(21, 60, "sgd");
    sa_sched_scratch *ss = sa_sched_scratch_new(rg);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 5);
    int32_t n = rg->n_ops;
    int32_t *pa = sw_malloc((size_t)n * 4), *pb = sw_malloc((size_t)n * 4);
    int32_t *ca = sw_malloc((size_t)n * 4), *cb = sw_malloc((size_t)n * 4);
    uint8_t *mk = sw_malloc((size_t)n);
    int topo = 0, mono = 0, fits = 0, draws = 300;
    for (int i = 0; i < draws; i++) {
        sa_schedule_mutate(rg, ss, rg->order, 1.0, rng, pa);
        sa_schedule_mutate(rg, ss, rg->order, 1.0, rng, pb);
        int32_t cr = 1 + (int32_t)gsl_rng_uniform_int(rng, (unsigned long)(n - 1));
        sa_schedule_crossover(pa, pb, n, cr, ca, cb, mk);
        sa_schedule_mutate(rg, ss, ca, 0.1, rng, pa);
        topo += is_topological(rg, ca) && is_topological(rg, cb) && is_topological(rg, pa);
        int32_t c1[12], c2[12], d1[12], d2[12];
        c1[0] = c2[0] = 0;
        for (int k = 1; k < 12; k++) {
            c1[k] = c1[k - 1] + (gsl_rng_uniform(rng) < 0.5);
            c2[k] = c2[k - 1] + (gsl_rng_uniform(rng) < 0.5);
        }
        sa_cls_crossover(c1, c2, 12, 1 + (int32_t)gsl_rng_uniform_int(rng, 11), d1, d2, 1);
        sa_cls_mutate(d1, 12, 0.3, rng, 1);
        int ok = d1[0] == 0 && d2[0] == 0;
        for (int k = 1; k < 12; k++)
            ok &= (d1[k] - d1[k - 1] == 0 || d1[k] - d1[k - 1] == 1) &&
                  (d2[k] - d2[k - 1] == 0 || d2[k] - d2[k - 1] == 1);
        mono += ok;
        int32_t cnt[12];
        int64_t csz[12];
        int32_t nc = d1[11] + 1;
        for (int k = 0; k < nc; k++) {
            cnt[k] = (int32_t)gsl_rng_uniform_int(rng, 50);
            csz[k] = 1 + (int64_t)gsl_rng_uniform_int(rng, 1000);
        }
        if (sa_cnt_repair(cnt, csz, NULL, NULL, nc, 5000) == 0) {
            int64_t tot = 0;
            for (int k = 0; k < nc; k++)
                tot += cnt[k] * csz[k];
            fits += tot <= 5000;
        }
    }
    IS_INT(topo, draws, "crossed and mutated schedules are always topological");
    IS_INT(mono, draws, "crossed and mutated CLS are always monotone (steps 0 or 1)");
    IS_INT(fits, draws, "repaired CNT always fits the budget");
    sw_free(pa);
    sw_free(pb);
    sw_free(ca);
    sw_free(cb);
    sw_free(mk);
    gsl_rng_free(rng);
    sa_sched_scratch_free(ss);
    graph_free(rg);
}

/* the planner: determinism across threads, never worse than gen 0 */
static void planner_threads_and_generations(void)
{
    sw_err e;
    int rc;
    sim_result r;
    graph_profile *rg = random_profile(4, 40, "momentum");
    int64_t peak;
    planner_ideal_peak(rg, &peak, &e);
    const planner *pl = planner_find("swapadvisor");
    OK(pl != NULL, "swapadvisor is registered");
    static const char *const muts[7] = {"schedule_mutation=dataflow", "schedule_mutation=move_one",
                                        "schedule_mutation=chain", "schedule_mutation=reuse",
                                        "schedule_mutation=cone", "schedule_mutation=mixed",
                                        "first_generation=reuse"};
    for (int mu = 0; mu < 7; mu++) {
        sw_buf out[2];
        double t[2] = {0, 0};
        for (int th = 1; th <= 2; th++) {
            planner_opts o;
            planner_opts_init(&o, pl);
            o.memory_budget = peak * 6 / 10;
            o.threads = th;
            o.seed = 9;
            params_set_kv(&o.params, "generations=4", &e);
            params_set_kv(&o.params, "population=8", &e);
            params_set_kv(&o.params, muts[mu], &e);
            plan *q = NULL;
            rc = planner_run(pl, rg, &o, &q, &e);
            OK(rc == 0, "swapadvisor %s plans with %d thread(s) (%s)", muts[mu], th,
               rc ? e.msg : "ok");
            sw_buf_init(&out[th - 1]);
            if (q) {
                OK(plan_verify(q, NULL, &e) == 0, "its plan is safe (%d threads)", th);
                plan_to_json(q, &out[th - 1]);
                sim_plan(q, NULL, NULL, &r, &e);
                t[th - 1] = r.iteration_time_s;
                if (th == 1) {
                    /* notes: "... best of the first generation X s, best found Y s" */
                    const char *f = q->notes ? strstr(q->notes, "first generation ") : NULL;
                    double first = f ? atof(f + 17) : 0;
                    OK(first > 0 && r.iteration_time_s <= first * (1 + 1e-9),
                       "the GA's plan (%.6f s) is no worse than its first generation's "
                       "best (%.6f s)",
                       r.iteration_time_s, first);
                }
                plan_free(q);
            }
            planner_opts_free(&o);
        }
        OK(out[0].len > 0 && out[0].len == out[1].len &&
               !memcmp(out[0].data, out[1].data, out[0].len),
           "identical plans for 1 and 2 threads with the same seed (%s)", muts[mu]);
        IS_NUM(t[0], t[1], 0, "and identical simulated times");
        sw_buf_free(&out[0]);
        sw_buf_free(&out[1]);
    }
    graph_free(rg);
}

/* search=allocation: the schedule not searched is the one asked for */
static void search_allocation_unsearched_order(void)
{
    sw_err e;
    int rc;
    graph_profile *rg = random_profile(5, 40, "momentum");
    int64_t peak;
    planner_ideal_peak(rg, &peak, &e);
    const planner *pl = planner_find("swapadvisor");
    int32_t *fw = swu_framework_order(rg);
    const char *which[2] = {"unsearched=default", "unsearched=framework"};
    const int32_t *want[2] = {rg->order, fw};
    /* with seed_default=true too: the default individual must take the
       fixed schedule, not the profile's order (with twice the peak its
       allocation swaps nothing, so it or its children win) */
    for (int kk = 0; kk < 4; kk++) {
        int k = kk % 2;
        const char *sd = kk < 2 ? "seed_default=false" : "seed_default=true";
        planner_opts o;
        planner_opts_init(&o, pl);
        o.memory_budget = kk < 2 ? peak * 7 / 10 : peak * 2;
        o.seed = 3;
        params_set_kv(&o.params, "generations=3", &e);
        params_set_kv(&o.params, "population=8", &e);
        params_set_kv(&o.params, "search=allocation", &e);
        params_set_kv(&o.params, sd, &e);
        params_set_kv(&o.params, which[k], &e);
        plan *q = NULL;
        rc = planner_run(pl, rg, &o, &q, &e);
        OK(rc == 0, "search=allocation %s %s plans (%s)", which[k], sd, rc ? e.msg : "ok");
        int same = q != NULL && fw != NULL;
        int32_t n = 0;
        for (int32_t t = 0; q && t < q->n_tasks && same; t++)
            if (q->tasks[t].kind == TASK_RUN)
                same = n < rg->n_ops && q->tasks[t].op == want[k][n++];
        OK(same && n == rg->n_ops, "with %s %s the plan runs the ops in that order", which[k],
           sd);
        if (q)
            OK(plan_verify(q, NULL, &e) == 0, "and is safe (%s)", which[k]);
        plan_free(q);
        planner_opts_free(&o);
    }
    OK(fw && memcmp(fw, rg->order, (size_t)rg->n_ops * sizeof *fw) != 0,
       "the framework order of this graph differs from the profile's (the check above can fail)");
    sw_free(fw);
    graph_free(rg);
}

static const tap_test tests[] = {
    {"schedule_mutations", test_schedule_mutations},
    {"run_mutations", test_run_mutations},
    {"cone_move", test_cone_move},
    {"figure3_pool_objects", figure3_pool_objects},
    {"chain_one_overlapped_swap", chain_one_overlapped_swap},
    {"branch_schedule_decides_overlap", branch_schedule_decides_overlap},
    {"ga_operators_paper_examples", ga_operators_paper_examples},
    {"children_stay_valid", children_stay_valid},
    {"planner_threads_and_generations", planner_threads_and_generations},
    {"search_allocation_unsearched_order", search_allocation_unsearched_order},
};

int main(int argc, char **argv) { return tap_run(tests, SW_ARRAY_LEN(tests), argc, argv); }
