/* test_sim.c: simulator timing against hand computation (the paper's
   Figure 3, one-way and duplex copies), determinism, and the builder
   reproducing the hand-made plan; one named test each (tap_run). */
#include "../sim/builder.h"
#include "../sim/plan_io.h"
#include "../sim/simulate.h"
#include "../sim/verify.h"
#include "fixtures.h"
#include "tap.h"

typedef struct rec {
    double start[16], end[16];
} rec;

static void on_task(void *ud, int iter, int32_t task, int stream, double s, double e, int64_t mem)
{
    (void)stream;
    (void)mem;
    rec *r = ud;
    if (iter == 0 && task >= 0 && task < 16) {
        r->start[task] = s;
        r->end[task] = e;
    }
}

/* A simulation that records the first iteration's task times in *tr. */
static sim_opts traced(rec *tr)
{
    memset(tr, 0, sizeof *tr);
    sim_opts o = {0};
    o.trace = on_task;
    o.trace_ud = tr;
    o.trace_from = 0;
    o.trace_to = 0;
    return o;
}

/* The paper's Figure 3 plan, timed against the hand computation. */
static void figure3_timing(void)
{
    sw_err e;
    graph_profile *g = fig3_profile();
    plan *p = fig3_plan(g, F3_OK);
    OK(plan_verify(p, NULL, &e) == 0, "figure 3 plan is safe");
    sim_result r;
    rec tr;
    sim_opts o = traced(&tr);
    int rc = sim_plan(p, NULL, &o, &r, &e);
    OK(rc == 0, "figure 3 simulates");
    /* by hand: W1 in [0,1]; op1 [1,2]; W2 in [1,2]; W1 dropped at 2; op2 [2,3];
       W3 in [2,3]; W2 dropped at 3; op3 [3,4]; W3 dropped at 4. The next
       iteration's W1 waits for W3's drop (same memory): period 4 ms. */
    IS_NUM(tr.end[0], 0.001, 1e-12, "W1 swapped in by 1 ms");
    IS_NUM(tr.start[1], 0.001, 1e-12, "op1 starts at 1 ms");
    IS_NUM(tr.end[2], 0.002, 1e-12, "W2 swapped in by 2 ms");
    IS_NUM(tr.start[5], 0.002, 1e-12, "W3 swap-in starts when W1 is dropped (2 ms)");
    IS_NUM(tr.start[7], 0.003, 1e-12, "op3 starts at 3 ms");
    IS_NUM(r.iteration_time_s, 0.004, 1e-12, "steady iteration time 4 ms");
    IS_NUM(r.ideal_time_s, 0.003, 1e-12, "ideal 3 ms");
    IS_NUM(r.normalized_throughput, 0.75, 1e-9, "75%% of ideal throughput");
    IS_NUM(r.stall_swap_in_s, 0.001, 1e-12, "1 ms per iteration waiting for a swap-in");
    IS_INT(r.swap_in_bytes, 3 * UNIT, "three units swapped in per iteration");
    IS_INT(r.swap_out_bytes, 0, "nothing copied out (clean parameters are dropped)");
    IS_INT(r.peak_memory_bytes, 4 * UNIT, "peak memory 4 units");
    OK(r.steady, "steady state reached");
    plan_free(p);
    graph_free(g);
}

/* The builder records the Figure 3 decisions and infers the same edges. */
static void builder_reproduces_figure3(void)
{
    sw_err e;
    graph_profile *g = fig3_profile();
    plan *p = fig3_plan(g, F3_OK);
    mem_model *m = mem_address_new(4 * UNIT, MEM_FIRST_FIT, 1);
    plan_builder *b = pb_new(g, m, 4 * UNIT, 0);
    pb_swap_in(b, W1);
    pb_run(b, 0);
    pb_swap_in(b, W2);
    pb_run(b, 1);
    pb_drop(b, W1);
    pb_swap_in(b, W3);
    pb_drop(b, W2);
    pb_run(b, 2);
    pb_drop(b, W3);
    plan *q = NULL;
    int rc = pb_finish(b, &q, &e);
    OK(rc == 0, "builder accepts the figure 3 decisions (%s)", rc ? e.msg : "ok");
    if (q) {
        OK(plan_verify(q, NULL, &e) == 0, "builder's plan is safe");
        int same = q->n_tasks == p->n_tasks;
        for (int32_t t = 0; same && t < q->n_tasks; t++) {
            const plan_task *x = &q->tasks[t], *y = &p->tasks[t];
            same = x->n_dep == y->n_dep && x->n_pdep == y->n_pdep && x->n_place == y->n_place;
            for (uint32_t k = 0; same && k < x->n_dep; k++)
                same = plan_task_deps(q, x)[k] == plan_task_deps(p, y)[k];
            for (uint32_t k = 0; same && k < x->n_pdep; k++)
                same = plan_task_pdeps(q, x)[k] == plan_task_pdeps(p, y)[k];
            for (uint32_t k = 0; same && k < x->n_place; k++)
                same = plan_task_places(q, x)[k].offset == plan_task_places(p, y)[k].offset;
            if (!same)
                printf("# task %d differs\n", t);
        }
        OK(same, "builder's edges and placements equal the hand-made plan's");
        sim_result r2;
        sim_plan(q, NULL, NULL, &r2, &e);
        IS_NUM(r2.iteration_time_s, 0.004, 1e-12, "builder's plan also takes 4 ms");
        plan_free(q);
    }
    pb_free(b);
    mem_destroy(m);
    plan_free(p);
    graph_free(g);
}

/* Determinism: the same plan gives the same results, and its JSON reads
   back to the same bytes and the same timing. */
static void determinism_and_round_trip(void)
{
    sw_err e;
    graph_profile *g = fig3_profile();
    plan *p = fig3_plan(g, F3_OK);
    sw_buf b1, b2;
    sw_buf_init(&b1);
    sw_buf_init(&b2);
    sim_result x, y;
    sim_plan(p, NULL, NULL, &x, &e);
    sim_plan(p, NULL, NULL, &y, &e);
    OK(memcmp(&x, &y, sizeof x) == 0, "two simulations give identical results");
    plan_to_json(p, &b1);
    plan *rt = NULL;
    int rc = plan_read_text(b1.data, b1.len, "rt.json", &rt, &e);
    OK(rc == 0, "plan JSON reads back (%s)", rc ? e.msg : "ok");
    if (rt) {
        plan_to_json(rt, &b2);
        OK(b1.len == b2.len && !memcmp(b1.data, b2.data, b1.len), "plan read(write) round trip");
        sim_plan(rt, NULL, NULL, &y, &e);
        IS_NUM(y.iteration_time_s, x.iteration_time_s, 0, "round-tripped plan simulates the same");
        plan_free(rt);
    }
    sw_buf_free(&b1);
    sw_buf_free(&b2);
    plan_free(p);
    graph_free(g);
}

/* One-way and duplex copies sharing PCIe, timed by hand. */
static void duplex_copies(void)
{
    sw_err e;
    dev_spec d = fixture_device();
    graph_profile *h = graph_new("duplex", &d);
    graph_add_tensor(h, "P", UNIT, GK_PARAMETER, 1);
    graph_add_tensor(h, "Q", UNIT, GK_PARAMETER, 1);
    graph_add_tensor(h, "A", UNIT, GK_ACTIVATION, 0);
    graph_add_tensor(h, "B", UNIT, GK_ACTIVATION, 0);
    graph_add_op(h, "op1", "op", 0.0005, GP_FORWARD, IDS(0), IDS(2), NOIDS, 0);
    graph_add_op(h, "op2", "op", 0.001, GP_FORWARD, IDS(1, 2), IDS(3), NOIDS, 0);
    OK(graph_finish(h, &e, NULL, NULL) == 0, "duplex profile");
    plan *q = plan_new(h, 0);
    q->budget = q->capacity = 4 * UNIT;
    plan_set_meta(q, "hand", 0, "{}");
    q->resident = sw_malloc(sizeof *q->resident);
    q->resident[0] = (plan_place){0, -1, -1, 0};
    q->n_resident = 1;
    plan_add_task(q, TASK_SWAP_IN, -1, 1, PL(1, UNIT), NOIDS, NOIDS, IDS(4));     /* t0 Q in */
    plan_add_task(q, TASK_RUN, 0, -1, PL(2, 2 * UNIT), NOIDS, NOIDS, IDS(5));     /* t1 op1 */
    plan_add_task(q, TASK_SWAP_OUT, -1, 0, NOPL, NOIDS, IDS(1), NOIDS);          /* t2 P out */
    plan_add_task(q, TASK_RUN, 1, -1, PL(3, 3 * UNIT), IDS(2, 3), IDS(0), NOIDS); /* t3 op2 */
    plan_add_task(q, TASK_DROP, -1, 1, NOPL, NOIDS, IDS(3), NOIDS);              /* t4 Q drop */
    plan_add_task(q, TASK_SWAP_IN, -1, 0, PL(0, 0), NOIDS, IDS(2), NOIDS);        /* t5 P in */
    int rc = plan_verify(q, NULL, &e);
    OK(rc == 0, "duplex plan is safe (%s)", rc ? e.msg : "ok");
    sim_result r;
    rec tr;
    sim_opts o = traced(&tr);
    rc = sim_plan(q, NULL, &o, &r, &e);
    OK(rc == 0, "duplex plan simulates");
    /* by hand: Q in alone at 12 GB/s for 0.5 ms (6 MB), then both directions
       at 10 GB/s each: Q's last 6 MB end at 1.1 ms; P out has 6 MB left at
       1.1 ms and finishes alone at 12 GB/s at 1.6 ms; P back in alone 1.6-2.6. */
    IS_NUM(tr.end[0], 0.0011, 1e-12, "swap-in sharing PCIe ends at 1.1 ms");
    IS_NUM(tr.start[2], 0.0005, 1e-12, "swap-out starts after op1 at 0.5 ms");
    IS_NUM(tr.end[2], 0.0016, 1e-12, "swap-out ends at 1.6 ms");
    IS_NUM(tr.start[3], 0.0011, 1e-12, "op2 starts when Q is in");
    IS_NUM(tr.end[5] - tr.start[5], 0.001, 1e-12, "a one-way copy alone takes 1 ms");
    IS_NUM(r.iteration_time_s, 0.0026, 1e-12, "steady iteration 2.6 ms");
    IS_NUM(r.stall_swap_in_s, 0.0011, 1e-12, "1.1 ms of swap-in stalls per iteration");
    IS_INT(r.swap_out_bytes, UNIT, "one unit copied out");
    /* a device with a higher duplex rate speeds the overlap up */
    dev_spec fast = d;
    fast.duplex_bw = 24e9;
    memset(&tr, 0, sizeof tr);
    sim_plan(q, &fast, &o, &r, &e);
    IS_NUM(tr.end[0], 0.001, 1e-12, "with 24 GB/s duplex each direction keeps 12 GB/s");
    plan_free(q);
    graph_free(h);
}

/* Offline placement (MEM_OFFLINE) against the online allocators, by hand.
   op a makes X, b reads X and makes Y, c reads Y and makes Z (2 units), d
   reads Z and the parameter P; 3 units of memory. Online, X goes to 0 and Y
   to 1 (first fit and best fit alike), and X's death leaves two 1-unit holes:
   no room for Z. Offline, greedy by size places Z first at 0, then X (it
   meets Z in no event) at 0 and Y (it meets X at b and Z at c) at 2. With P
   (1 unit, resident at the start, dropped after a, back before d) on 4
   units: P leaves and comes home to the same place. */
static graph_profile *offline_profile(int with_p)
{
    dev_spec d = fixture_device();
    graph_profile *g = graph_new("offline", &d);
    graph_add_tensor(g, "X", UNIT, GK_ACTIVATION, 0);
    graph_add_tensor(g, "Y", UNIT, GK_ACTIVATION, 0);
    graph_add_tensor(g, "Z", 2 * UNIT, GK_ACTIVATION, 0);
    graph_add_tensor(g, "P", UNIT, GK_PARAMETER, 1);
    static const int32_t pin[] = {3}, zp[] = {2, 3};
    graph_add_op(g, "a", "op", 0.001, GP_FORWARD, pin, with_p, IDS(0), NOIDS, 0);
    graph_add_op(g, "b", "op", 0.001, GP_FORWARD, IDS(0), IDS(1), NOIDS, 0);
    graph_add_op(g, "c", "op", 0.001, GP_FORWARD, IDS(1), IDS(2), NOIDS, 0);
    graph_add_op(g, "d", "op", 0.001, GP_FORWARD, zp, 1 + with_p, NOIDS, NOIDS, 0);
    sw_err e;
    if (graph_finish(g, &e, NULL, NULL)) {
        graph_free(g);
        return NULL;
    }
    return g;
}

static int64_t offset_of(const plan *p, int kind, int32_t x)
{
    for (int32_t t = 0; t < p->n_tasks; t++) {
        const plan_task *k = &p->tasks[t];
        if (k->kind != kind || (kind == TASK_RUN ? k->op : k->tensor) != x)
            continue;
        for (uint32_t i = 0; i < k->n_place; i++)
            return plan_task_places(p, k)[i].offset;
    }
    return -1;
}

static void offline_placement(void)
{
    sw_err e;
    graph_profile *g = offline_profile(0);
    static const mem_fit fits[] = {MEM_FIRST_FIT, MEM_BEST_FIT, MEM_OFFLINE};
    for (int f = 0; f < 3; f++) {
        plan_builder *b = pb_new_arena(g, 3 * UNIT, 0, fits[f], 1);
        for (int32_t o = 0; o < 4; o++)
            pb_run(b, o);
        plan *p = NULL;
        int rc = pb_finish(b, &p, &e);
        if (fits[f] != MEM_OFFLINE) {
            IS_INT(rc, SW_ENOFIT, "online fit %d: Z finds no 2-unit block", f);
            IS_STR_HAS(e.msg, "largest free block 12000000 bytes", "the message names the hole");
        } else {
            IS_INT(rc, 0, "offline: the plan fits (%s)", rc ? e.msg : "ok");
            if (p) {
                OK(plan_verify(p, NULL, &e) == 0, "offline: the plan verifies");
                IS_STR_HAS(p->policy, "offline", "offline: the plan says so");
                IS_INT(offset_of(p, TASK_RUN, 2), 0, "offline: Z at 0");
                IS_INT(offset_of(p, TASK_RUN, 0), 0, "offline: X at 0");
                IS_INT(offset_of(p, TASK_RUN, 1), 2 * UNIT, "offline: Y at 2 units");
                sim_result r;
                IS_INT(sim_plan(p, NULL, NULL, &r, &e), 0, "offline: the plan simulates");
                IS_INT(r.peak_memory_bytes, 3 * UNIT, "offline: peak 3 units");
            }
        }
        plan_free(p);
        pb_free(b);
    }
    /* too small: the placement's height against the arena */
    plan_builder *b = pb_new_arena(g, 2 * UNIT, 0, MEM_OFFLINE, 1);
    for (int32_t o = 0; o < 4; o++)
        pb_run(b, o);
    plan *p = NULL;
    IS_INT(pb_finish(b, &p, &e), SW_ENOFIT, "offline at 2 units: no plan");
    IS_STR_HAS(e.msg, "does not fit: task", "online best fit, tried next, names the task");
    pb_free(b);
    graph_free(g);

    g = offline_profile(1);
    b = pb_new_arena(g, 4 * UNIT, 0, MEM_OFFLINE, 1);
    pb_resident(b, 3);
    pb_run(b, 0);
    pb_drop(b, 3);
    pb_run(b, 1);
    pb_run(b, 2);
    pb_swap_in(b, 3);
    pb_run(b, 3);
    int rc = pb_finish(b, &p, &e);
    IS_INT(rc, 0, "offline with P: a plan (%s)", rc ? e.msg : "ok");
    if (p) {
        OK(plan_verify(p, NULL, &e) == 0, "offline with P: the plan verifies");
        IS_INT(p->n_resident, 1, "offline with P: P is resident at the start");
        IS_INT(offset_of(p, TASK_SWAP_IN, 3), p->resident[0].offset,
               "offline with P: P comes back home");
        sim_result r;
        IS_INT(sim_plan(p, NULL, NULL, &r, &e), 0, "offline with P: the plan simulates");
        OK(r.peak_memory_bytes <= 4 * UNIT, "offline with P: within 4 units");
        plan_free(p);
    }
    pb_free(b);
    graph_free(g);
}

/* b's plan, checked: made, safe and placed offline (what: the test's name
   in the messages); NULL when there is none. b is freed. */
static plan *offline_plan(plan_builder *b, const char *what)
{
    sw_err e;
    plan *p = NULL;
    int rc = pb_finish(b, &p, &e);
    IS_INT(rc, 0, "%s: a plan (%s)", what, rc ? e.msg : "ok");
    pb_free(b);
    if (!p)
        return NULL;
    OK(plan_verify(p, NULL, &e) == 0, "%s: the plan verifies", what);
    IS_STR_HAS(p->policy, "offline", "%s: placed offline", what);
    return p;
}

/* p's simulated iteration time against the hand-worked one (ms); p is freed. */
static void offline_time(plan *p, double ms, const char *what)
{
    sw_err e;
    sim_result r;
    IS_INT(sim_plan(p, NULL, NULL, &r, &e), 0, "%s: the plan simulates", what);
    IS_NUM(r.iteration_time_s, ms / 1000, 1e-9, "%s: %g ms, the compute time", what, ms);
    plan_free(p);
}

/* The copy out's time, worked by hand: P (persistent, one unit) is read by
   a (1 ms, makes A) and d (1 ms); b (5 ms) reads A and makes B; c (1 ms)
   reads B and makes C, which d reads. In 3 units P leaves after a and comes
   back before d. Its copy out takes 1 ms (one unit at 12 GB/s) from a's end,
   while b runs: in events P is gone when b makes B, but in time its bytes
   are held until 2 ms, so B at P's address would wait 1 ms for it (and P's
   copy in for B's free, after c: 10 ms in all). The offline placement puts
   B elsewhere (C takes A's address after b) and the plan takes the compute
   time, 8 ms. */
static void offline_copy_time(void)
{
    dev_spec d = fixture_device();
    graph_profile *g = graph_new("copy-time", &d);
    graph_add_tensor(g, "P", UNIT, GK_PARAMETER, 1);
    graph_add_tensor(g, "A", UNIT, GK_ACTIVATION, 0);
    graph_add_tensor(g, "B", UNIT, GK_ACTIVATION, 0);
    graph_add_tensor(g, "C", UNIT, GK_ACTIVATION, 0);
    static const int32_t dp[] = {0, 3};
    graph_add_op(g, "a", "op", 0.001, GP_FORWARD, IDS(0), IDS(1), NOIDS, 0);
    graph_add_op(g, "b", "op", 0.005, GP_FORWARD, IDS(1), IDS(2), NOIDS, 0);
    graph_add_op(g, "c", "op", 0.001, GP_FORWARD, IDS(2), IDS(3), NOIDS, 0);
    graph_add_op(g, "d", "op", 0.001, GP_FORWARD, dp, 2, NOIDS, NOIDS, 0);
    sw_err e;
    OK(graph_finish(g, &e, NULL, NULL) == 0, "copy time: the profile");
    plan_builder *b = pb_new_arena(g, 3 * UNIT, 0, MEM_OFFLINE, 1);
    pb_resident(b, 0);
    pb_run(b, 0);
    pb_swap_out(b, 0);
    pb_run(b, 1);
    pb_run(b, 2);
    pb_swap_in(b, 0);
    pb_run(b, 3);
    plan *p = offline_plan(b, "copy time");
    if (p) {
        OK(offset_of(p, TASK_RUN, 1) != p->resident[0].offset,
           "copy time: B is not at P's address");
        IS_INT(offset_of(p, TASK_RUN, 2), offset_of(p, TASK_RUN, 0),
               "copy time: C at A's address");
        IS_INT(offset_of(p, TASK_SWAP_IN, 0), p->resident[0].offset,
               "copy time: P comes back home");
        offline_time(p, 8, "copy time");
    }
    graph_free(g);
}

/* A copy out issued at the iteration's end runs on into the next one: M (2
   units, on the host between iterations) is updated by the last op c and
   copied out after it (2 ms at 12 GB/s), so in the next iteration its bytes
   are held until 2 ms in. Events: 0 run a (clock 0), 1 run b (2 ms), 2 swap
   in M (3 ms), 3 run d (3 ms), 4 run c (6 ms), 5 swap out M (7 ms, ends at
   9 ms: 2 ms into the next iteration). Greedy by size: M at [0, 2); A (made
   by a, read by b) meets M's copy out in the next iteration (event 0 starts
   before 2 ms), so it goes above, [2, 3); B (b to d) meets M and A, [3, 4);
   D (d to c) meets M and B but not A, [2, 3): the top is 4 units, the
   arena. In time: a 0-2 ms while M's copy out ends; M back 2-4 ms on the
   host-to-device stream; b 2-3, d 3-6, c 6-7: 7 ms, the compute time. With
   A at M's address (the spans of one iteration alone), a waits 2 ms. */
static void offline_copy_wraps(void)
{
    dev_spec d = fixture_device();
    graph_profile *g = graph_new("copy-wraps", &d);
    graph_add_tensor(g, "M", 2 * UNIT, GK_PARAMETER, 1);
    graph_add_tensor(g, "A", UNIT, GK_ACTIVATION, 0);
    graph_add_tensor(g, "B", UNIT, GK_ACTIVATION, 0);
    graph_add_tensor(g, "D", UNIT, GK_ACTIVATION, 0);
    graph_add_op(g, "a", "op", 0.002, GP_FORWARD, NOIDS, IDS(1), NOIDS, 0);
    graph_add_op(g, "b", "op", 0.001, GP_FORWARD, IDS(1), IDS(2), NOIDS, 0);
    graph_add_op(g, "d", "op", 0.003, GP_FORWARD, IDS(2), IDS(3), NOIDS, 0);
    graph_add_op(g, "c", "op", 0.001, GP_UPDATE, IDS(3), NOIDS, IDS(0), 0);
    sw_err e;
    OK(graph_finish(g, &e, NULL, NULL) == 0, "copy wraps: the profile");
    plan_builder *b = pb_new_arena(g, 4 * UNIT, 0, MEM_OFFLINE, 1);
    pb_run(b, 0);
    pb_run(b, 1);
    pb_swap_in(b, 0);
    pb_run(b, 2);
    pb_run(b, 3);
    pb_swap_out(b, 0);
    plan *p = offline_plan(b, "copy wraps");
    if (p) {
        IS_INT(offset_of(p, TASK_SWAP_IN, 0), 0, "copy wraps: M at 0");
        IS_INT(offset_of(p, TASK_RUN, 0), 2 * UNIT, "copy wraps: A above M");
        IS_INT(offset_of(p, TASK_RUN, 1), 3 * UNIT, "copy wraps: B above A");
        IS_INT(offset_of(p, TASK_RUN, 2), 2 * UNIT, "copy wraps: D at A's address");
        offline_time(p, 7, "copy wraps");
    }
    graph_free(g);
}

/* The copies still queued at the iteration's end delay the next one's: M's
   copy out after c (2 ms) ends 2 ms into the next iteration, so A's copy
   out after a, issued at 1 ms, runs 2-3 ms, not 1-2 ms. Events: 0 run a
   (clock 0, 1 ms), 1 swap out A (1 ms), 2 run b (1 ms), 3 swap in M (2 ms),
   4 run e (2 ms, 4 ms long), 5 swap in A (6 ms), 6 run c (6 ms), 7 swap out
   M (7 ms). A holds its bytes through event 4 (e starts at 2 ms, before 3
   ms), so E (e to c) does not go where A was: M [0, 2), A [2, 3), B [3,
   4), E [4, 5), A back at [2, 3). In time: a 0-1, A out 2-3 (behind M's),
   b 1-2, M in 2-4, e 2-6, A in 4-5, c 6-7: 7 ms, the compute time. With
   A's copy reckoned from 1 ms, E goes to [2, 3) and e waits for A's copy
   out (the simulator: 9.2 ms). */
static void offline_copy_backlog(void)
{
    dev_spec d = fixture_device();
    graph_profile *g = graph_new("copy-backlog", &d);
    graph_add_tensor(g, "M", 2 * UNIT, GK_PARAMETER, 1);
    graph_add_tensor(g, "A", UNIT, GK_ACTIVATION, 0);
    graph_add_tensor(g, "B", UNIT, GK_ACTIVATION, 0);
    graph_add_tensor(g, "E", UNIT, GK_ACTIVATION, 0);
    static const int32_t ce[] = {1, 3};
    graph_add_op(g, "a", "op", 0.001, GP_FORWARD, NOIDS, IDS(1), NOIDS, 0);
    graph_add_op(g, "b", "op", 0.001, GP_FORWARD, NOIDS, IDS(2), NOIDS, 0);
    graph_add_op(g, "e", "op", 0.004, GP_FORWARD, IDS(2), IDS(3), NOIDS, 0);
    graph_add_op(g, "c", "op", 0.001, GP_UPDATE, ce, 2, NOIDS, IDS(0), 0);
    sw_err e;
    OK(graph_finish(g, &e, NULL, NULL) == 0, "copy backlog: the profile");
    plan_builder *b = pb_new_arena(g, 5 * UNIT, 0, MEM_OFFLINE, 1);
    pb_run(b, 0);
    pb_swap_out(b, 1);
    pb_run(b, 1);
    pb_swap_in(b, 0);
    pb_run(b, 2);
    pb_swap_in(b, 1);
    pb_run(b, 3);
    pb_swap_out(b, 0);
    plan *p = offline_plan(b, "copy backlog");
    if (p) {
        IS_INT(offset_of(p, TASK_RUN, 0), 2 * UNIT, "copy backlog: A at [2, 3)");
        IS_INT(offset_of(p, TASK_RUN, 2), 4 * UNIT, "copy backlog: E not at A's address");
        offline_time(p, 7, "copy backlog");
    }
    graph_free(g);
}

/* Greedy by breadth where greedy by size does not fit, worked by hand: a
   makes A (2 units), b reads it and makes B (2), c reads B and makes C (1),
   d reads C and makes D (2, read by none). Spans in events: A [0, 1], B
   [1, 2], C [2, 3], D [3, 3]; the bytes per event 2, 4, 3, 3, so 4 units
   at most. Greedy by size: A at 0, B above it at 2, D (meets neither) at
   0, C (meets B and D, no gap between them) above both at 4: top 5, past
   the 4-unit arena. Greedy by breadth: A and B (broadest event 1, 4 units)
   at 0 and 2; C (event 2) at 0, in the gap below B; D (event 3) meets only
   C, so at 1: top 4. */
static void offline_by_breadth(void)
{
    dev_spec d = fixture_device();
    graph_profile *g = graph_new("by-breadth", &d);
    graph_add_tensor(g, "A", 2 * UNIT, GK_ACTIVATION, 0);
    graph_add_tensor(g, "B", 2 * UNIT, GK_ACTIVATION, 0);
    graph_add_tensor(g, "C", UNIT, GK_ACTIVATION, 0);
    graph_add_tensor(g, "D", 2 * UNIT, GK_ACTIVATION, 0);
    graph_add_op(g, "a", "op", 0.001, GP_FORWARD, NOIDS, IDS(0), NOIDS, 0);
    graph_add_op(g, "b", "op", 0.001, GP_FORWARD, IDS(0), IDS(1), NOIDS, 0);
    graph_add_op(g, "c", "op", 0.001, GP_FORWARD, IDS(1), IDS(2), NOIDS, 0);
    graph_add_op(g, "d", "op", 0.001, GP_FORWARD, IDS(2), IDS(3), NOIDS, 0);
    sw_err e;
    OK(graph_finish(g, &e, NULL, NULL) == 0, "by breadth: the profile");
    plan_builder *b = pb_new_arena(g, 4 * UNIT, 0, MEM_OFFLINE, 1);
    for (int32_t o = 0; o < 4; o++)
        pb_run(b, o);
    plan *p = offline_plan(b, "by breadth");
    if (p) {
        IS_INT(offset_of(p, TASK_RUN, 0), 0, "by breadth: A at 0");
        IS_INT(offset_of(p, TASK_RUN, 1), 2 * UNIT, "by breadth: B at 2 units");
        IS_INT(offset_of(p, TASK_RUN, 2), 0, "by breadth: C at 0, below B");
        IS_INT(offset_of(p, TASK_RUN, 3), UNIT, "by breadth: D at 1 unit, above C");
        offline_time(p, 4, "by breadth");
    }
    graph_free(g);
}

static const tap_test tests[] = {
    {"figure3_timing", figure3_timing},
    {"builder_reproduces_figure3", builder_reproduces_figure3},
    {"determinism_and_round_trip", determinism_and_round_trip},
    {"duplex_copies", duplex_copies},
    {"offline_placement", offline_placement},
    {"offline_copy_time", offline_copy_time},
    {"offline_copy_wraps", offline_copy_wraps},
    {"offline_copy_backlog", offline_copy_backlog},
    {"offline_by_breadth", offline_by_breadth},
};

int main(int argc, char **argv) { return tap_run(tests, SW_ARRAY_LEN(tests), argc, argv); }
