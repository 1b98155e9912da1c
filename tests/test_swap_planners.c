/* test_swap_planners.c: odswap, tflms, vdnn, dtr-megengine and belady: a small
   training graph whose plans were worked out by hand, random training
   profiles (every plan verified), the framework schedule, and the clear
   failures (TFLMS's parameters, an op that alone exceeds the budget); one
   named test each (tap_run). */
#include "../sim/simulate.h"
#include "../sim/verify.h"
#include "../planners/lib/swap_util.h"
#include "random_plans.h"
#include "tap.h"

/* w (100 B), in (100 B) persistent; forward f1: in,w -> a (1000 B); f2: a,w
   -> b (1000 B); f3: b -> l (10 B); backward g3: l,b -> gb (1000 B); g2:
   gb,a -> ga (1000 B); g1: ga,in -> gw (100 B). 1 ms each. inplace: r1, an
   in-place op (relu_) mutating a, runs between f1 and f2. */
static graph_profile *hand_with(int inplace)
{
    graph_profile *g = graph_new(inplace ? "inplace" : "hand", dev_find("v100"));
    int32_t w = graph_add_tensor(g, "w", 100, GK_PARAMETER, 1);
    int32_t in = graph_add_tensor(g, "in", 100, GK_INPUT, 1);
    int32_t a = graph_add_tensor(g, "a", 1000, GK_ACTIVATION, 0);
    int32_t b = graph_add_tensor(g, "b", 1000, GK_ACTIVATION, 0);
    int32_t l = graph_add_tensor(g, "l", 10, GK_ACTIVATION, 0);
    int32_t gb = graph_add_tensor(g, "gb", 1000, GK_GRADIENT, 0);
    int32_t ga = graph_add_tensor(g, "ga", 1000, GK_GRADIENT, 0);
    int32_t gw = graph_add_tensor(g, "gw", 100, GK_GRADIENT, 0);
    int32_t i1[2] = {in, w}, i2[2] = {a, w}, i4[2] = {l, b}, i5[2] = {gb, a}, i6[2] = {ga, in};
    graph_add_op(g, "f1", "linear", 1e-3, GP_FORWARD, i1, 2, &a, 1, NULL, 0, 0);
    if (inplace)
        graph_add_op(g, "r1", "relu_", 1e-3, GP_FORWARD, NULL, 0, NULL, 0, &a, 1, 0);
    graph_add_op(g, "f2", "conv2d", 1e-3, GP_FORWARD, i2, 2, &b, 1, NULL, 0, 0);
    graph_add_op(g, "f3", "loss", 1e-3, GP_FORWARD, &b, 1, &l, 1, NULL, 0, 0);
    graph_add_op(g, "g3", "loss_backward", 1e-3, GP_BACKWARD, i4, 2, &gb, 1, NULL, 0, 0);
    graph_add_op(g, "g2", "conv2d_backward", 1e-3, GP_BACKWARD, i5, 2, &ga, 1, NULL, 0, 0);
    graph_add_op(g, "g1", "linear_backward", 1e-3, GP_BACKWARD, i6, 2, &gw, 1, NULL, 0, 0);
    sw_err e;
    if (graph_finish(g, &e, NULL, NULL)) {
        printf("# %s\n", e.msg);
        graph_free(g);
        return NULL;
    }
    return g;
}

static graph_profile *hand(void) { return hand_with(0); }

static int run(const char *name, const graph_profile *g, int64_t budget, const char *set,
               plan **p, sw_err *e)
{
    const planner *pl = planner_find(name);
    planner_opts o;
    planner_opts_init(&o, pl);
    o.memory_budget = budget;
    int rc = 0;
    /* set: KEY=VALUE assignments separated by spaces */
    for (const char *a = set; a && *a && !rc;) {
        char one[128];
        size_t n = strcspn(a, " ");
        snprintf(one, sizeof one, "%.*s", (int)n, a);
        rc = params_set_kv(&o.params, one, e);
        a += n + (a[n] == ' ');
    }
    if (!rc)
        rc = planner_run(pl, g, &o, p, e);
    planner_opts_free(&o);
    return rc;
}

static int count(const plan *p, int kind, int32_t tensor)
{
    int n = 0;
    for (int32_t i = 0; i < p->n_tasks; i++)
        n += p->tasks[i].kind == kind && (tensor < 0 || p->tasks[i].tensor == tensor);
    return n;
}

/* vDNN (all): the forward layers' inputs read again backward: a (f2's
   input, read by g2); b is read by g3 right after f3 (nothing to gain). a
   leaves after f2 and returns one layer before g2 (before g3). */
static void vdnn_hand(void)
{
    graph_profile *g = hand();
    sw_err e;
    plan *p = NULL;
    sim_result r;
    int rc = run("vdnn", g, 1 << 20, NULL, &p, &e);
    IS_INT(rc, 0, "vdnn plans (%s)", rc ? e.msg : "ok");
    if (!rc) {
        OK(plan_verify(p, NULL, &e) == 0, "vdnn plan verifies");
        IS_INT(count(p, TASK_SWAP_OUT, 2), 1, "vdnn: a copied out once");
        IS_INT(count(p, TASK_SWAP_IN, 2), 1, "vdnn: a back once");
        IS_INT(count(p, TASK_SWAP_OUT, -1), 1, "vdnn: nothing else moves");
        int32_t pos_in = -1, pos_g3 = -1;
        for (int32_t i = 0; i < p->n_tasks; i++) {
            if (p->tasks[i].kind == TASK_SWAP_IN)
                pos_in = i;
            if (p->tasks[i].kind == TASK_RUN && p->tasks[i].op == 3)
                pos_g3 = i;
        }
        OK(pos_in >= 0 && pos_in < pos_g3, "vdnn: the swap-in is issued before g3 (one ahead)");
        sim_plan(p, NULL, NULL, &r, &e);
        /* best-fit puts l (f3's output) in a's hole: f3 waits for a's copy-out
           (vDNN synchronises offloads with the layer); the swap-in is hidden */
        IS_NUM(r.iteration_time_s, 6e-3 + g->device.copy_latency_s + 1000 / g->device.d2h_bw,
               1e-12, "vdnn: 6 ms + one copy-out of a");
        /* peak by hand: a is back before g3, the peak (w in l b a gb) */
        IS_INT(r.peak_memory_bytes, 3210, "vdnn: peak 3210 B (worked out by hand)");
        plan_free(p);
    }
    rc = run("vdnn", g, 1 << 20, "policy=conv", &p, &e);
    if (!rc) {
        IS_INT(count(p, TASK_SWAP_OUT, 2), 1, "vdnn conv: a is the input of the conv f2");
        plan_free(p);
    } else {
        OK(0, "vdnn conv: %s", e.msg);
    }
    graph_free(g);
}

/* TFLMS (lb 1): activations made forward and read backward more than one op
   after their last forward use: a only */
static void tflms_hand(void)
{
    graph_profile *g = hand();
    sw_err e;
    plan *p = NULL;
    int rc = run("tflms", g, 1 << 20, NULL, &p, &e);
    IS_INT(rc, 0, "tflms plans (%s)", rc ? e.msg : "ok");
    if (!rc) {
        OK(plan_verify(p, NULL, &e) == 0, "tflms plan verifies");
        IS_INT(count(p, TASK_SWAP_OUT, -1), 1, "tflms: one activation swapped (a)");
        IS_INT(count(p, TASK_SWAP_OUT, 2), 1, "tflms: it is a");
        plan_free(p);
    }
    rc = run("tflms", g, 3000, NULL, &p, &e);
    IS_INT(rc, SW_ENOFIT, "tflms below parameters + working set: does not fit");
    IS_STR_HAS(e.msg, "never swaps parameters", "tflms says why");
    graph_free(g);
}

/* The hand graph with an in-place op (relu_, as in a recorded CNN with
   ReLU(inplace=True)): r1 mutates a after f1 makes it; f2 and g2 read the
   mutated a. tflms, vdnn and offload-activations each copy a out after its
   last forward access (f2, after the mutation: the version g2 reads) and
   bring it back before g2, as for an activation never mutated: one copy
   each way, nothing else moves, and the plan verifies (a copy out before
   r1 would leave a stale host copy, which the verifier refuses). */
static void inplace_activation(void)
{
    graph_profile *g = hand_with(1);
    sw_err e;
    if (!g) {
        OK(0, "inplace graph");
        return;
    }
    int32_t a = 2; /* the hand graph's storage a */
    static const char *const who[][2] = {{"tflms", NULL},
                                         {"vdnn", NULL},
                                         {"vdnn", "policy=conv"},
                                         {"offload-activations", NULL},
                                         {"offload-activations", "prefetch=true"}};
    for (size_t k = 0; k < SW_ARRAY_LEN(who); k++) {
        plan *p = NULL;
        char set[64];
        snprintf(set, sizeof set, "%s%s", who[k][1] ? " " : "", who[k][1] ? who[k][1] : "");
        int rc = run(who[k][0], g, 1 << 20, who[k][1], &p, &e);
        IS_INT(rc, 0, "%s%s plans (%s)", who[k][0], set, rc ? e.msg : "ok");
        if (rc)
            continue;
        OK(plan_verify(p, NULL, &e) == 0, "%s%s: the plan verifies", who[k][0], set);
        IS_INT(count(p, TASK_SWAP_OUT, a), 1, "%s%s: a (mutated in place) copied out once",
               who[k][0], set);
        IS_INT(count(p, TASK_SWAP_IN, a), 1, "%s%s: a back once", who[k][0], set);
        IS_INT(count(p, TASK_SWAP_OUT, -1), 1, "%s%s: nothing else moves", who[k][0], set);
        int32_t pos_out = -1, pos_f2 = -1;
        for (int32_t i = 0; i < p->n_tasks; i++) {
            if (p->tasks[i].kind == TASK_SWAP_OUT && p->tasks[i].tensor == a)
                pos_out = i;
            if (p->tasks[i].kind == TASK_RUN && p->tasks[i].op == 2)
                pos_f2 = i;
        }
        OK(pos_out > pos_f2 && pos_f2 >= 0, "%s%s: the copy out is issued after f2 (after the "
           "mutation)", who[k][0], set);
        plan_free(p);
    }
    graph_free(g);
}

/* The victim rule's size weight, by hand. f1 makes A (1000 B), f2 reads A
   and makes B (100 B), f3 reads B and makes C (100 B), f4 reads C and makes
   D (500 B), f5 reads D and makes E (10 B); backward b1 reads D and E, b2
   reads B, b3 reads A (1 ms each). At 1620 B, f4 needs 1700 B live: 80 B
   must go, A or B (f4 holds C and D). Freed byte-seconds, up to the 80 B
   missing: A 80 B x 4 ms (next used by b3), B 80 B x 3 ms (b2). Size
   weight 0 (Belady weighed by size) evicts A (320 > 240); weight 1 divides
   by the bytes each moves, A 0.32 against B 2.4, and evicts B; 0.5 too
   (10.1 against 24). B comes back before b1 (lead 1.5 of its copy time),
   where A, D, E, G1 and B take the 1620 B exactly, so nothing else moves. */
static void belady_size_weight(void)
{
    graph_profile *g = graph_new("size-weight", dev_find("v100"));
    int32_t A = graph_add_tensor(g, "A", 1000, GK_ACTIVATION, 0);
    int32_t B = graph_add_tensor(g, "B", 100, GK_ACTIVATION, 0);
    int32_t C = graph_add_tensor(g, "C", 100, GK_ACTIVATION, 0);
    int32_t D = graph_add_tensor(g, "D", 500, GK_ACTIVATION, 0);
    int32_t E = graph_add_tensor(g, "E", 10, GK_ACTIVATION, 0);
    int32_t G1 = graph_add_tensor(g, "G1", 10, GK_GRADIENT, 0);
    int32_t G2 = graph_add_tensor(g, "G2", 10, GK_GRADIENT, 0);
    int32_t G3 = graph_add_tensor(g, "G3", 10, GK_GRADIENT, 0);
    int32_t ib1[2] = {D, E}, ib2[2] = {G1, B}, ib3[2] = {G2, A};
    graph_add_op(g, "f1", "linear", 1e-3, GP_FORWARD, NULL, 0, &A, 1, NULL, 0, 0);
    graph_add_op(g, "f2", "linear", 1e-3, GP_FORWARD, &A, 1, &B, 1, NULL, 0, 0);
    graph_add_op(g, "f3", "linear", 1e-3, GP_FORWARD, &B, 1, &C, 1, NULL, 0, 0);
    graph_add_op(g, "f4", "linear", 1e-3, GP_FORWARD, &C, 1, &D, 1, NULL, 0, 0);
    graph_add_op(g, "f5", "loss", 1e-3, GP_FORWARD, &D, 1, &E, 1, NULL, 0, 0);
    graph_add_op(g, "b1", "loss_backward", 1e-3, GP_BACKWARD, ib1, 2, &G1, 1, NULL, 0, 0);
    graph_add_op(g, "b2", "linear_backward", 1e-3, GP_BACKWARD, ib2, 2, &G2, 1, NULL, 0, 0);
    graph_add_op(g, "b3", "linear_backward", 1e-3, GP_BACKWARD, ib3, 2, &G3, 1, NULL, 0, 0);
    sw_err e;
    if (graph_finish(g, &e, NULL, NULL)) {
        OK(0, "size-weight graph: %s", e.msg);
        graph_free(g);
        return;
    }
    static const struct {
        const char *set;
        int a_leaves;
    } cases[] = {{"search=false size_weight=0", 1},
                 {"search=false size_weight=0.5", 0},
                 {"search=false size_weight=1", 0}};
    for (size_t k = 0; k < SW_ARRAY_LEN(cases); k++) {
        plan *p = NULL;
        int rc = run("belady", g, 1620, cases[k].set, &p, &e);
        IS_INT(rc, 0, "%s: a plan (%s)", cases[k].set, rc ? e.msg : "ok");
        if (rc)
            continue;
        OK(plan_verify(p, NULL, &e) == 0, "%s: the plan verifies", cases[k].set);
        int32_t v = cases[k].a_leaves ? A : B, w = cases[k].a_leaves ? B : A;
        IS_INT(count(p, TASK_SWAP_OUT, v), 1, "%s: %s copied out", cases[k].set,
               cases[k].a_leaves ? "A" : "B");
        IS_INT(count(p, TASK_SWAP_OUT, w) + count(p, TASK_DROP, w), 0, "%s: %s stays",
               cases[k].set, cases[k].a_leaves ? "B" : "A");
        IS_INT(count(p, TASK_SWAP_OUT, -1), 1, "%s: nothing else leaves", cases[k].set);
        IS_STR_HAS(p->notes, cases[k].a_leaves ? "size weight 0," :
                   strstr(cases[k].set, "0.5") ? "size weight 0.5," : "size weight 1,",
                   "%s: the notes name the weight", cases[k].set);
        plan_free(p);
    }
    graph_free(g);
}

/* ODSwap, 3100 B, on demand only: before g3 (needs 1000 B more with 3210 B
   resident), LRU evicts 'in' (clean: dropped) then 'a' (copied out); g2
   brings a back, g1 brings 'in' back */
static void odswap_hand(void)
{
    graph_profile *g = hand();
    sw_err e;
    plan *p = NULL;
    sim_result r;
    int rc = run("odswap", g, 3100, "prefetch=false", &p, &e);
    IS_INT(rc, 0, "odswap plans (%s)", rc ? e.msg : "ok");
    if (!rc) {
        OK(plan_verify(p, NULL, &e) == 0, "odswap plan verifies");
        IS_INT(count(p, TASK_SWAP_OUT, 2), 1, "odswap: a copied out");
        IS_INT(count(p, TASK_DROP, 1), 1, "odswap: 'in' dropped (its host copy is current)");
        IS_INT(count(p, TASK_SWAP_IN, 2), 1, "odswap: a swapped back in");
        IS_INT(count(p, TASK_SWAP_IN, 1), 1, "odswap: 'in' swapped back in");
        IS_INT(p->n_tasks, 10, "odswap: 6 runs + 4 moves (worked out by hand)");
        sim_plan(p, NULL, NULL, &r, &e);
        OK(r.peak_memory_bytes <= 3100, "odswap within the budget");
        plan_free(p);
    }
    rc = run("odswap", g, 2900, NULL, &p, &e);
    IS_INT(rc, SW_ENOFIT, "odswap: g2 alone needs 3000 B");
    IS_STR_HAS(e.msg, "op 4 'g2' alone needs", "odswap names the op");
    graph_free(g);
}

/* The position of the first task of kind for tensor (or op, for runs), -1 if none. */
static int32_t task_at(const plan *p, int kind, int32_t x)
{
    for (int32_t i = 0; i < p->n_tasks; i++)
        if (p->tasks[i].kind == kind &&
            (kind == TASK_RUN ? p->tasks[i].op == x : p->tasks[i].tensor == x))
            return i;
    return -1;
}

/* belady on hand(), by hand (tensors w 0, in 1, a 2; ops f1..g1 at 0..5,
   1 ms each; every copy far under 1 ms, so each copy back is issued one op
   before its use). Live bytes per op: 1200, 2200, 2210, 3210 (g3), 3200,
   1300; g2 alone needs 3000. The victim at an op short of D bytes is the
   resident storage the op does not touch with the most min(bytes, D) x
   milliseconds until its next use.
   At 3200 B: g3 is 10 B short: a scores 10 x 1, w 10 x 3 (its next use is
   f1 of the next iteration), in 10 x 2: w goes, dropped right after f2
   (its last use; its host copy is current), back at the iteration's end.
   At 3000 B: g3 is 210 B short: w (300 against a's 210 and in's 200), then
   110: in (200 against 110), then 10: a, copied out right after f2 and
   back before g2. At g2, in (back one op before g1) and a are resident,
   100 B over: a and gb are g2's, so in, just back, goes again and comes
   back before g1 instead.
   At 3100 B: g3 is 110 B short: w (300 against 110 and 200), then 10: in
   (20 against 10): both dropped, but best fit placed them below a and b,
   and the 200 bytes they free leave no 1000-byte block for gb; 98% of the
   arena decides the same, 96% is below g2's 3000 B: a refusal that names
   the allocator. */
static void belady_hand(void)
{
    graph_profile *g = hand();
    sw_err e;
    plan *p = NULL;
    sim_result r;
    int rc = run("belady", g, 3200, "search=false", &p, &e);
    IS_INT(rc, 0, "belady plans at 3200 B (%s)", rc ? e.msg : "ok");
    if (!rc) {
        OK(plan_verify(p, NULL, &e) == 0, "3200 B: the plan verifies");
        IS_INT(count(p, TASK_DROP, 0), 1, "3200 B: w dropped once");
        IS_INT(count(p, TASK_DROP, -1) + count(p, TASK_SWAP_OUT, -1), 1,
               "3200 B: nothing else leaves");
        OK(task_at(p, TASK_DROP, 0) > task_at(p, TASK_RUN, 1) &&
               task_at(p, TASK_DROP, 0) < task_at(p, TASK_RUN, 2),
           "3200 B: w dropped right after f2, its last use");
        OK(task_at(p, TASK_SWAP_IN, 0) > task_at(p, TASK_RUN, 5),
           "3200 B: w back at the iteration's end");
        IS_INT(sim_plan(p, NULL, NULL, &r, &e), 0, "3200 B: the plan simulates");
        OK(r.peak_memory_bytes <= 3200, "3200 B: within the budget (%lld B)",
           (long long)r.peak_memory_bytes);
        OK(r.normalized_throughput > 0.99, "3200 B: the copy back hides behind the ops (%.4f)",
           r.normalized_throughput);
        plan_free(p);
    }
    rc = run("belady", g, 3000, "search=false", &p, &e);
    IS_INT(rc, 0, "belady plans at 3000 B (%s)", rc ? e.msg : "ok");
    if (!rc) {
        OK(plan_verify(p, NULL, &e) == 0, "3000 B: the plan verifies");
        IS_INT(count(p, TASK_DROP, 0), 1, "3000 B: w dropped once");
        IS_INT(count(p, TASK_SWAP_OUT, 2), 1, "3000 B: a copied out once");
        IS_INT(count(p, TASK_SWAP_IN, 2), 1, "3000 B: a back once");
        IS_INT(count(p, TASK_SWAP_OUT, -1), 1, "3000 B: nothing else copied out");
        OK(task_at(p, TASK_DROP, 1) > task_at(p, TASK_RUN, 0) &&
               task_at(p, TASK_DROP, 1) < task_at(p, TASK_RUN, 1),
           "3000 B: in dropped right after f1, its last use before g3");
        OK(task_at(p, TASK_SWAP_OUT, 2) > task_at(p, TASK_RUN, 1) &&
               task_at(p, TASK_SWAP_OUT, 2) < task_at(p, TASK_RUN, 2),
           "3000 B: a copied out right after f2, its last forward use");
        OK(task_at(p, TASK_SWAP_IN, 2) > task_at(p, TASK_RUN, 3) &&
               task_at(p, TASK_SWAP_IN, 2) < task_at(p, TASK_RUN, 4),
           "3000 B: a back just before g2");
        IS_INT(count(p, TASK_SWAP_IN, 1), 1, "3000 B: in comes back once");
        OK(task_at(p, TASK_SWAP_IN, 1) > task_at(p, TASK_RUN, 4) &&
               task_at(p, TASK_SWAP_IN, 1) < task_at(p, TASK_RUN, 5),
           "3000 B: in's copy back put off to before g1");
        IS_INT(sim_plan(p, NULL, NULL, &r, &e), 0, "3000 B: the plan simulates");
        OK(r.peak_memory_bytes <= 3000, "3000 B: within the budget (%lld B)",
           (long long)r.peak_memory_bytes);
        plan_free(p);
        /* the search tries this plan among others and keeps the fastest */
        sim_result r2;
        rc = run("belady", g, 3000, NULL, &p, &e);
        IS_INT(rc, 0, "3000 B with the search: a plan (%s)", rc ? e.msg : "ok");
        if (!rc) {
            IS_INT(sim_plan(p, NULL, NULL, &r2, &e), 0, "3000 B with the search: it simulates");
            OK(r2.iteration_time_s <= r.iteration_time_s,
               "3000 B: the search's plan is no slower (%.6f s against %.6f s)",
               r2.iteration_time_s, r.iteration_time_s);
            plan_free(p);
        }
    }
    rc = run("belady", g, 3100, "search=false allocator=best-fit", &p, &e);
    IS_INT(rc, SW_ENOFIT, "belady: at 3100 B its plan fragments a best-fit arena");
    IS_STR_HAS(e.msg, "allocator cannot place", "belady says the allocator refused");
    IS_STR_HAS(e.msg, "op 4 'g2' needs", "and names the op lower limits leave no room");
    /* placed offline (the default), the same swaps fit: gb goes where w and
       in were, which best fit gave to them at the time */
    rc = run("belady", g, 3100, "search=false", &p, &e);
    IS_INT(rc, 0, "belady at 3100 B placed offline: a plan (%s)", rc ? e.msg : "ok");
    if (!rc) {
        OK(plan_verify(p, NULL, &e) == 0, "3100 B offline: the plan verifies");
        IS_STR_HAS(p->policy, "offline", "3100 B offline: the plan says how it was placed");
        IS_INT(count(p, TASK_DROP, 0) + count(p, TASK_DROP, 1), 2,
               "3100 B offline: w and in dropped, as best fit had them");
        IS_INT(count(p, TASK_SWAP_OUT, -1), 0, "3100 B offline: nothing copied out");
        IS_INT(sim_plan(p, NULL, NULL, &r, &e), 0, "3100 B offline: the plan simulates");
        OK(r.peak_memory_bytes <= 3100, "3100 B offline: within the budget (%lld B)",
           (long long)r.peak_memory_bytes);
        plan_free(p);
    }
    rc = run("belady", g, 2900, NULL, &p, &e);
    IS_INT(rc, SW_ENOFIT, "belady: g2 alone needs 3000 B");
    IS_STR_HAS(e.msg, "op 4 'g2' needs", "belady names the op");
    graph_free(g);
}

/* The fused order by hand: two layers, each parameter's update (u2, u1) in
   the profile after the whole backward pass. u2 reads gw2, which g2 makes,
   and mutates w2, which g2 reads last: fused, it runs right after g2,
   before g1; u1 right after g1. With a clipping op in the update phase
   reading both gradients and making the scale both updates read (clip),
   clip's last dependency is g1, so clip and both updates stay after g1, in
   the profile's order: an update never passes an update-phase op it
   depends on. */
static graph_profile *two_layers(int clip)
{
    graph_profile *g = graph_new("two-layers", dev_find("v100"));
    int32_t w1 = graph_add_tensor(g, "w1", 100, GK_PARAMETER, 1);
    int32_t w2 = graph_add_tensor(g, "w2", 100, GK_PARAMETER, 1);
    int32_t in = graph_add_tensor(g, "in", 100, GK_INPUT, 1);
    int32_t a = graph_add_tensor(g, "a", 1000, GK_ACTIVATION, 0);
    int32_t b = graph_add_tensor(g, "b", 1000, GK_ACTIVATION, 0);
    int32_t gb = graph_add_tensor(g, "gb", 1000, GK_GRADIENT, 0);
    int32_t ga = graph_add_tensor(g, "ga", 1000, GK_GRADIENT, 0);
    int32_t gw2 = graph_add_tensor(g, "gw2", 100, GK_GRADIENT, 0);
    int32_t gw1 = graph_add_tensor(g, "gw1", 100, GK_GRADIENT, 0);
    int32_t sc = graph_add_tensor(g, "sc", 10, GK_ACTIVATION, 0);
    int32_t i1[2] = {in, w1}, i2[2] = {a, w2}, i4[3] = {gb, a, w2}, o4[2] = {ga, gw2},
            i5[3] = {ga, in, w1}, ic[2] = {gw1, gw2}, iu2[2] = {gw2, sc}, iu1[2] = {gw1, sc};
    graph_add_op(g, "f1", "linear", 1e-3, GP_FORWARD, i1, 2, &a, 1, NULL, 0, 0);
    graph_add_op(g, "f2", "linear", 1e-3, GP_FORWARD, i2, 2, &b, 1, NULL, 0, 0);
    graph_add_op(g, "g3", "loss_backward", 1e-3, GP_BACKWARD, &b, 1, &gb, 1, NULL, 0, 0);
    graph_add_op(g, "g2", "linear_backward", 1e-3, GP_BACKWARD, i4, 3, o4, 2, NULL, 0, 0);
    graph_add_op(g, "g1", "linear_backward", 1e-3, GP_BACKWARD, i5, 3, &gw1, 1, NULL, 0, 0);
    if (clip)
        graph_add_op(g, "clip", "clip", 1e-3, GP_UPDATE, ic, 2, &sc, 1, NULL, 0, 0);
    graph_add_op(g, "u2", "sgd", 1e-3, GP_UPDATE, iu2, clip ? 2 : 1, NULL, 0, &w2, 1, 0);
    graph_add_op(g, "u1", "sgd", 1e-3, GP_UPDATE, iu1, clip ? 2 : 1, NULL, 0, &w1, 1, 0);
    sw_err e;
    if (graph_finish(g, &e, NULL, NULL)) {
        printf("# %s\n", e.msg);
        return NULL;
    }
    return g;
}

static void belady_fused_order(void)
{
    for (int clip = 0; clip < 2; clip++) {
        graph_profile *g = two_layers(clip);
        OK(g != NULL, "clip %d: the profile builds", clip);
        if (!g)
            continue;
        int32_t g1 = 4, u2 = clip ? 6 : 5, u1 = u2 + 1, cl = 5;
        for (int fused = 0; fused < 2; fused++) {
            plan *p = NULL;
            sw_err e;
            int rc = run("belady", g, 100000, fused ? "search=false order=fused"
                                                    : "search=false order=profile", &p, &e);
            IS_INT(rc, 0, "clip %d order %s: a plan (%s)", clip, fused ? "fused" : "profile",
                   rc ? e.msg : "ok");
            if (rc)
                continue;
            OK(plan_verify(p, NULL, &e) == 0, "clip %d order %s: the plan verifies", clip,
               fused ? "fused" : "profile");
            if (fused && !clip) {
                OK(task_at(p, TASK_RUN, u2) > task_at(p, TASK_RUN, 3) &&
                       task_at(p, TASK_RUN, u2) < task_at(p, TASK_RUN, g1),
                   "fused: u2 right after g2, before g1");
                OK(task_at(p, TASK_RUN, u1) > task_at(p, TASK_RUN, g1),
                   "fused: u1 after g1");
            } else {
                OK(task_at(p, TASK_RUN, u2) > task_at(p, TASK_RUN, g1),
                   "clip %d order %s: u2 after g1", clip, fused ? "fused" : "profile");
                if (clip)
                    OK(task_at(p, TASK_RUN, cl) < task_at(p, TASK_RUN, u2) &&
                           task_at(p, TASK_RUN, u2) < task_at(p, TASK_RUN, u1),
                       "clip %d order %s: clip, then u2, then u1", clip,
                       fused ? "fused" : "profile");
            }
            plan_free(p);
        }
        graph_free(g);
    }
}

/* Copies in recorded back to back before one op that are out of the order
   their next uses come in (the host-to-device link takes them in issue
   order); the group after the last op (the end-of-iteration restore) is
   not counted. */
static int ins_out_of_due_order(const plan *p)
{
    const graph_profile *g = p->prof;
    int bad = 0;
    int32_t prev_due = -1;
    for (int32_t t = 0; t < p->n_tasks; t++) {
        const plan_task *k = &p->tasks[t];
        if (k->kind == TASK_RUN || k->kind == TASK_RERUN) {
            prev_due = -1;
            continue;
        }
        if (k->kind != TASK_SWAP_IN)
            continue;
        int32_t due = -1;
        for (int32_t u = t + 1; u < p->n_tasks && due < 0; u++) {
            const plan_task *x = &p->tasks[u];
            if (x->kind != TASK_RUN && x->kind != TASK_RERUN)
                continue;
            for (int32_t a = g->acc_off[x->op]; a < g->acc_off[x->op + 1]; a++)
                if (g->acc[a] == k->tensor)
                    due = u;
        }
        if (due < 0)
            continue; /* the end-of-iteration restore */
        if (due < prev_due)
            bad++;
        prev_due = due;
    }
    return bad;
}

static void test_random(void)
{
    static const struct {
        const char *name, *set;
    } cases[] = {{"odswap", NULL},
                 {"odswap", "schedule=framework"},
                 {"odswap", "prefetch_ops=2"},
                 {"tflms", NULL},
                 {"tflms", "n_tensors=3"},
                 {"vdnn", NULL},
                 {"vdnn", "policy=conv"},
                 {"dtr-megengine", NULL},
                 {"dtr-megengine", "fake_delete=always"},
                 {"belady", NULL},
                 {"belady", "search=false"},
                 {"belady", "search=false victims=on-time cold=true lead=3"},
                 {"belady", "search=false order=fused allocator=best-fit"},
                 {"belady", "search=false order=fused cold=true"},
                 {"belady", "search=false order=fused cold=dirty victims=on-time"}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        int runs = 0, safe = 0, within = 0, bad = 0, misordered = 0;
        for (int seed = 1; seed <= 10; seed++) {
            graph_profile *g = random_profile(seed, 50, seed % 2 ? "sgd" : "momentum");
            int64_t peak = graph_peak_memory(g, g->order);
            for (int k = 0; k < 3; k++) {
                int64_t budget = (int64_t)((0.6 + 0.25 * k) * (double)peak);
                plan *p = NULL;
                sw_err e;
                int rc = run(cases[c].name, g, budget, cases[c].set, &p, &e);
                if (rc) {
                    if (rc != SW_ENOFIT && rc != SW_EEXCEEDED) {
                        printf("# %s %s seed %d: %s\n", cases[c].name,
                               cases[c].set ? cases[c].set : "", seed, e.msg);
                        bad++;
                    }
                    continue;
                }
                runs++;
                if (plan_verify(p, NULL, &e) == 0)
                    safe++;
                else
                    printf("# %s seed %d unsafe: %s\n", cases[c].name, seed, e.msg);
                sim_result r;
                if (sim_plan(p, NULL, NULL, &r, &e) == 0 && r.peak_memory_bytes <= budget)
                    within++;
                if (!strcmp(cases[c].name, "belady"))
                    misordered += ins_out_of_due_order(p);
                plan_free(p);
            }
            graph_free(g);
        }
        if (!strcmp(cases[c].name, "belady"))
            IS_INT(misordered, 0, "belady %s: copies in issued together go in the order they "
                   "are due", cases[c].set ? cases[c].set : "");
        OK(runs > 0, "%s %s: planned %d of 30 cases", cases[c].name,
           cases[c].set ? cases[c].set : "", runs);
        IS_INT(safe, runs, "%s %s: every plan verifies", cases[c].name,
               cases[c].set ? cases[c].set : "");
        IS_INT(within, runs, "%s %s: every plan stays within the budget", cases[c].name,
               cases[c].set ? cases[c].set : "");
        IS_INT(bad, 0, "%s %s: failures are only 'does not fit' / 'exceeded'", cases[c].name,
               cases[c].set ? cases[c].set : "");
    }
}

/* A two-layer RNN unrolled over three steps, forward only, ops created
   layer by layer as an unrolling library creates them (ids in brackets):
   layer 0: for t = 0..2, a0t = i2h(x_t, W0) [0, 2, 4], c0t = cell(a0t, h0,t-1,
   U0) -> h0t [1, 3, 5]; layer 1: a1t = i2h(h0t, W1) [6, 8, 10], c1t =
   cell(a1t, h1,t-1, U1) -> h1t [7, 9, 11]; loss(h10, h11, h12) [12]; h0,-1 and
   h1,-1 are the input hinit.
   The framework order by hand (FIFO queue; the sources and the ops one op
   makes ready enter in creation order):
     queue a00 a01 a02 (the sources: i2h of layer 0 reads only x_t and W0)
     a00 -> c00 ready; a01, a02 -> nothing (c01, c02 wait for the state)
     c00 -> c01, a10 (ids 3 < 6: the same layer's next step first)
     c01 -> c02, a11; a10 -> c10; c02 -> a12; a11 -> nothing (c11 waits for h10)
     c10 -> c11 (loss waits); a12 -> nothing; c11 -> c12; c12 -> loss
   giving a00 a01 a02 c00 c01 a10 c02 a11 c10 a12 c11 c12 loss: layer 1's
   first step runs before layer 0's last, the layers interleave. */
static graph_profile *rnn_2x3(void)
{
    graph_profile *g = graph_new("rnn-2x3", dev_find("v100"));
    int32_t x[3], W[2], U[2], h[2][3], a[2][3];
    char nm[32];
    for (int t = 0; t < 3; t++) {
        snprintf(nm, sizeof nm, "x%d", t);
        x[t] = graph_add_tensor(g, nm, 1000, GK_INPUT, 1);
    }
    int32_t hinit = graph_add_tensor(g, "hinit", 1000, GK_INPUT, 1);
    for (int l = 0; l < 2; l++) {
        snprintf(nm, sizeof nm, "W%d", l);
        W[l] = graph_add_tensor(g, nm, 4000, GK_PARAMETER, 1);
        snprintf(nm, sizeof nm, "U%d", l);
        U[l] = graph_add_tensor(g, nm, 4000, GK_PARAMETER, 1);
        for (int t = 0; t < 3; t++) {
            snprintf(nm, sizeof nm, "a%d%d", l, t);
            a[l][t] = graph_add_tensor(g, nm, 4000, GK_ACTIVATION, 0);
            snprintf(nm, sizeof nm, "h%d%d", l, t);
            h[l][t] = graph_add_tensor(g, nm, 1000, GK_ACTIVATION, 0);
        }
    }
    int32_t loss = graph_add_tensor(g, "loss", 4, GK_ACTIVATION, 0);
    for (int l = 0; l < 2; l++)
        for (int t = 0; t < 3; t++) {
            int32_t in1[2] = {l ? h[0][t] : x[t], W[l]};
            int32_t in2[3] = {a[l][t], t ? h[l][t - 1] : hinit, U[l]};
            snprintf(nm, sizeof nm, "a%d%d", l, t);
            graph_add_op(g, nm, "linear", 1e-3, GP_FORWARD, in1, 2, &a[l][t], 1, NULL, 0, 0);
            snprintf(nm, sizeof nm, "c%d%d", l, t);
            graph_add_op(g, nm, "lstm_cell", 1e-3, GP_FORWARD, in2, 3, &h[l][t], 1, NULL, 0, 0);
        }
    graph_add_op(g, "loss", "loss", 1e-3, GP_FORWARD, h[1], 3, &loss, 1, NULL, 0, 0);
    sw_err e;
    if (graph_finish(g, &e, NULL, NULL)) {
        printf("# %s\n", e.msg);
        graph_free(g);
        return NULL;
    }
    return g;
}

static void test_framework_order(void)
{
    graph_profile *g = random_profile(4, 60, "sgd");
    int32_t bad = -1, pred = -1;
    int32_t *o1 = swu_framework_order(g), *o2 = swu_framework_order(g);
    OK(o1 && graph_is_topological(g, o1, &bad, &pred) == 1, "framework order is topological");
    OK(o1 && o2 && !memcmp(o1, o2, (size_t)g->n_ops * sizeof *o1),
       "the framework order is deterministic");
    sw_free(o1);
    sw_free(o2);
    graph_free(g);

    static const char *const want[13] = {"a00", "a01", "a02", "c00", "c01", "a10", "c02",
                                         "a11", "c10", "a12", "c11", "c12", "loss"};
    g = rnn_2x3();
    OK(g != NULL, "the 2-layer, 3-step RNN builds");
    if (!g)
        return;
    IS_INT(g->n_ops, 13, "13 ops");
    int32_t *fw = swu_framework_order(g);
    char got[160] = "", exp[160] = "";
    for (int i = 0; i < 13 && fw; i++) {
        snprintf(got + strlen(got), sizeof got - strlen(got), " %s", g->ops[fw[i]].name);
        snprintf(exp + strlen(exp), sizeof exp - strlen(exp), " %s", want[i]);
    }
    OK(fw && !strcmp(got, exp), "framework order of the 2x3 RNN is the one derived by hand");
    if (strcmp(got, exp))
        printf("#   got     %s\n#   expected%s\n", got, exp);
    int profile_is_creation = 1;
    for (int32_t i = 0; i < g->n_ops; i++)
        profile_is_creation &= g->order[i] == i;
    OK(profile_is_creation, "while the profile's order is the creation order (layer by layer)");

    /* odswap schedule=framework runs exactly that order */
    plan *p = NULL;
    sw_err e;
    int rc = run("odswap", g, 1 << 20, "schedule=framework", &p, &e);
    OK(rc == 0, "odswap schedule=framework plans the RNN (%s)", rc ? e.msg : "ok");
    int32_t n = 0, same = p != NULL && fw != NULL;
    for (int32_t t = 0; p && same && t < p->n_tasks; t++)
        if (p->tasks[t].kind == TASK_RUN)
            same = n < g->n_ops && p->tasks[t].op == fw[n++];
    OK(same && n == g->n_ops, "odswap schedule=framework runs the ops in the framework order");
    plan_free(p);
    sw_free(fw);
    graph_free(g);
}

static const tap_test tests[] = {
    {"vdnn_hand", vdnn_hand},
    {"tflms_hand", tflms_hand},
    {"inplace_activation", inplace_activation},
    {"odswap_hand", odswap_hand},
    {"belady_hand", belady_hand},
    {"belady_size_weight", belady_size_weight},
    {"belady_fused_order", belady_fused_order},
    {"random_profiles", test_random},
    {"framework_order", test_framework_order},
};

int main(int argc, char **argv) { return tap_run(tests, SW_ARRAY_LEN(tests), argc, argv); }
