/* fixtures.h: hand-made profiles and plans shared by the simulator and
   verifier tests, each small enough to work out by hand. */
#ifndef FIXTURES_H
#define FIXTURES_H

#include "../sim/plan.h"

#define IDS(...) (int32_t[]){__VA_ARGS__}, (int)(sizeof((int32_t[]){__VA_ARGS__}) / sizeof(int32_t))
#define NOIDS NULL, 0
#define PL(t, off) (plan_place[]){{(t), -1, -1, (off)}}, 1
#define PL2(t1, o1, t2, o2) (plan_place[]){{(t1), -1, -1, (o1)}, {(t2), -1, -1, (o2)}}, 2
#define NOPL NULL, 0

#define UNIT 12000000LL /* one unit: 1 ms at 12 GB/s */

static inline dev_spec fixture_device(void)
{
    dev_spec d = *dev_find("v100");
    d.copy_latency_s = 0;
    return d;
}

/* The SwapAdvisor paper's Figure 3 (our reading): op1(W1) -> A1,
   op2(A1, W2) -> A2, op3(A1, A2, W3) -> A3; every tensor one unit, every op
   1 ms, GPU memory 4 units. Tensors: W1=0 W2=1 W3=2 A1=3 A2=4 A3=5. */
enum { W1, W2, W3, A1, A2, A3 };

static inline graph_profile *fig3_profile(void)
{
    dev_spec d = fixture_device();
    graph_profile *g = graph_new("figure3", &d);
    graph_add_tensor(g, "W1", UNIT, GK_PARAMETER, 1);
    graph_add_tensor(g, "W2", UNIT, GK_PARAMETER, 1);
    graph_add_tensor(g, "W3", UNIT, GK_PARAMETER, 1);
    graph_add_tensor(g, "A1", UNIT, GK_ACTIVATION, 0);
    graph_add_tensor(g, "A2", UNIT, GK_ACTIVATION, 0);
    graph_add_tensor(g, "A3", UNIT, GK_ACTIVATION, 0);
    graph_add_op(g, "op1", "op", 0.001, GP_FORWARD, IDS(W1), IDS(A1), NOIDS, 0);
    graph_add_op(g, "op2", "op", 0.001, GP_FORWARD, IDS(A1, W2), IDS(A2), NOIDS, 0);
    graph_add_op(g, "op3", "op", 0.001, GP_FORWARD, IDS(A1, A2, W3), IDS(A3), NOIDS, 0);
    sw_err e;
    if (graph_finish(g, &e, NULL, NULL)) {
        graph_free(g);
        return NULL;
    }
    return g;
}

/* Variants of the Figure 3 plan that break it in one way each (task ids
   stay the same). */
enum {
    F3_OK = 0,
    F3_NO_USE_EDGE = 1,  /* op1 not ordered after W1's swap-in */
    F3_NO_MEM_EDGE = 2,  /* W3's swap-in not ordered after W1's drop (same memory) */
    F3_OVERLAP_LIVE = 4, /* A3 placed on A2, which op3 still reads */
    F3_OUTSIDE = 8,      /* A3 placed beyond the 4-unit arena */
    F3_KEEP_W3 = 16,     /* 5-unit arena, W3 in its own slot and never released */
    F3_DEADLOCK = 32,    /* W1's swap-in waits for op1 */
    F3_BIG_ARENA = 64,   /* arena larger than the budget */
    F3_EARLY_DROP = 128  /* W1 dropped right after its swap-in, before op1 needs it */
};

static inline plan *fig3_plan(graph_profile *g, int v)
{
    plan *p = plan_new(g, 0);
    int keep = (v & F3_KEEP_W3) != 0;
    p->mem_kind = MEM_ADDRESS;
    p->budget = keep ? 5 * UNIT : 4 * UNIT;
    p->capacity = (v & F3_BIG_ARENA) ? 5 * UNIT : p->budget;
    p->workspace_reserve = 0;
    plan_set_meta(p, "hand", 0, "{}");
    int64_t a3 = (v & F3_OVERLAP_LIVE) ? 3 * UNIT : (v & F3_OUTSIDE) ? 4 * UNIT : 2 * UNIT;
    int64_t w3 = keep ? 4 * UNIT : 0;
    /* t0 */ if (v & F3_DEADLOCK)
        plan_add_task(p, TASK_SWAP_IN, -1, W1, PL(W1, 0), NOIDS, IDS(1), IDS(8));
    else
        plan_add_task(p, TASK_SWAP_IN, -1, W1, PL(W1, 0), NOIDS, NOIDS, IDS(keep ? 4 : 8));
    /* t1 */ if (v & F3_NO_USE_EDGE)
        plan_add_task(p, TASK_RUN, 0, -1, PL(A1, UNIT), NOIDS, NOIDS, NOIDS);
    else
        plan_add_task(p, TASK_RUN, 0, -1, PL(A1, UNIT), NOIDS, IDS((v & F3_EARLY_DROP) ? 4 : 0), NOIDS);
    /* t2: A3's memory, freed by the previous op3: implied through t0's wait on t8 */
    /* t2 */ if (keep)
        plan_add_task(p, TASK_SWAP_IN, -1, W2, PL(W2, 2 * UNIT), NOIDS, NOIDS, IDS(7));
    else
        plan_add_task(p, TASK_SWAP_IN, -1, W2, PL(W2, 2 * UNIT), NOIDS, NOIDS, NOIDS);
    /* t3 */ plan_add_task(p, TASK_RUN, 1, -1, PL(A2, 3 * UNIT), NOIDS, IDS(2), NOIDS);
    /* t4 */ plan_add_task(p, TASK_DROP, -1, W1, NOPL, NOIDS, IDS((v & F3_EARLY_DROP) ? 0 : 1), NOIDS);
    /* t5 */ if ((v & F3_NO_MEM_EDGE) || keep)
        plan_add_task(p, TASK_SWAP_IN, -1, W3, PL(W3, w3), NOIDS, NOIDS, NOIDS);
    else
        plan_add_task(p, TASK_SWAP_IN, -1, W3, PL(W3, w3), NOIDS, IDS(4), NOIDS);
    /* t6 */ plan_add_task(p, TASK_DROP, -1, W2, NOPL, NOIDS, IDS(3), NOIDS);
    /* t7 */ plan_add_task(p, TASK_RUN, 2, -1, PL(A3, a3), IDS(A1, A2, A3), IDS(5, 6), NOIDS);
    /* t8 */ if (!keep)
        plan_add_task(p, TASK_DROP, -1, W3, NOPL, NOIDS, IDS(7), NOIDS);
    return p;
}

/* A tensor mutated in place: a() -> T, m mutates T, r(T) -> R.
   Tensors T=0, R=1; ops a=0, m=1, r=2. Each op 1 ms, T one unit. */
static inline graph_profile *mut_profile(void)
{
    dev_spec d = fixture_device();
    graph_profile *g = graph_new("mutate", &d);
    graph_add_tensor(g, "T", UNIT, GK_ACTIVATION, 0);
    graph_add_tensor(g, "R", UNIT, GK_ACTIVATION, 0);
    graph_add_op(g, "a", "op", 0.001, GP_FORWARD, NOIDS, IDS(0), NOIDS, 0);
    graph_add_op(g, "m", "op", 0.001, GP_FORWARD, NOIDS, NOIDS, IDS(0), 0);
    graph_add_op(g, "r", "op", 0.001, GP_FORWARD, IDS(0), IDS(1), NOIDS, 0);
    sw_err e;
    if (graph_finish(g, &e, NULL, NULL)) {
        graph_free(g);
        return NULL;
    }
    return g;
}

enum {
    MUT_SWAP = 0,      /* a, m, swap T out, swap T in, r: safe */
    MUT_DROP_RERUN,    /* a, m, drop T, rerun a, r: recomputes an old version */
    MUT_DROP_USE,      /* a, m, drop T, r: dirty drop, T needed */
    MUT_DROP_SWAPIN,   /* a, m, drop T, swap T in: dirty drop then stale host */
    MUT_RACE           /* swap-in not ordered after the swap-out writing the host copy */
};

static inline plan *mut_plan(graph_profile *g, int v)
{
    plan *p = plan_new(g, 0);
    p->mem_kind = MEM_ADDRESS;
    p->budget = 4 * UNIT;
    p->capacity = 4 * UNIT;
    plan_set_meta(p, "hand", 0, "{}");
    plan_add_task(p, TASK_RUN, 0, -1, PL(0, 0), NOIDS, NOIDS, NOIDS);     /* t0 a */
    plan_add_task(p, TASK_RUN, 1, -1, NOPL, NOIDS, NOIDS, NOIDS);         /* t1 m */
    switch (v) {
    case MUT_SWAP:
        plan_add_task(p, TASK_SWAP_OUT, -1, 0, NOPL, NOIDS, IDS(1), NOIDS);      /* t2 */
        plan_add_task(p, TASK_SWAP_IN, -1, 0, PL(0, UNIT), NOIDS, IDS(2), NOIDS); /* t3 */
        plan_add_task(p, TASK_RUN, 2, -1, PL(1, 2 * UNIT), IDS(0, 1), IDS(3), NOIDS);
        break;
    case MUT_RACE:
        plan_add_task(p, TASK_SWAP_OUT, -1, 0, NOPL, NOIDS, IDS(1), NOIDS);      /* t2 */
        plan_add_task(p, TASK_SWAP_IN, -1, 0, PL(0, UNIT), NOIDS, NOIDS, NOIDS); /* t3: no edge */
        plan_add_task(p, TASK_RUN, 2, -1, PL(1, 2 * UNIT), IDS(0, 1), IDS(3), NOIDS);
        break;
    case MUT_DROP_RERUN:
        plan_add_task(p, TASK_DROP, -1, 0, NOPL, NOIDS, IDS(1), NOIDS);          /* t2 */
        plan_add_task(p, TASK_RERUN, 0, -1, PL(0, UNIT), NOIDS, IDS(2), NOIDS);  /* t3 */
        plan_add_task(p, TASK_RUN, 2, -1, PL(1, 2 * UNIT), IDS(0, 1), NOIDS, NOIDS);
        break;
    case MUT_DROP_USE:
        plan_add_task(p, TASK_DROP, -1, 0, NOPL, NOIDS, IDS(1), NOIDS);
        plan_add_task(p, TASK_RUN, 2, -1, PL(1, 2 * UNIT), IDS(1), IDS(2), NOIDS);
        break;
    default: /* MUT_DROP_SWAPIN */
        plan_add_task(p, TASK_DROP, -1, 0, NOPL, NOIDS, IDS(1), NOIDS);
        plan_add_task(p, TASK_SWAP_IN, -1, 0, PL(0, UNIT), NOIDS, IDS(2), NOIDS);
        plan_add_task(p, TASK_RUN, 2, -1, PL(1, 2 * UNIT), IDS(0, 1), IDS(3), NOIDS);
        break;
    }
    return p;
}

#endif
