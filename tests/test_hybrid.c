/* test_hybrid.c: the `hybrid` planner on hand-worked graphs where the right
   choice is clear: a cheap op's activation is recomputed rather than
   swapped when PCIe is slow; an expensive convolution's output with a long
   idle gap is swapped when PCIe is fast; plans stay within the budget and
   verify; an impossible budget is refused with SW_ENOFIT. */
#include <string.h>

#include "../profiles/calibrate.h"
#include "../planners/planner.h"
#include "../sim/simulate.h"
#include "../sim/verify.h"
#include "fixtures.h"
#include "tap.h"

/* Plan g with hybrid at budget, options "k=v" (NULL-terminated). */
static int plan_hy(const graph_profile *g, int64_t budget, const char *const *kv, plan **p,
                   sw_err *e)
{
    const planner *pl = planner_find("hybrid");
    planner_opts o;
    planner_opts_init(&o, pl);
    o.memory_budget = budget;
    int rc = 0;
    for (int i = 0; kv && kv[i] && !rc; i++)
        rc = params_set_kv(&o.params, kv[i], e);
    if (!rc)
        rc = planner_run(pl, g, &o, p, e);
    planner_opts_free(&o);
    return rc;
}

/* The six-op network of the tests, every tensor one UNIT (1 ms of copy at
   the fixture's 12 GB/s), no parameters:
     f1: -> a1 (t1)      f2: a1 -> a2 (t2)     f3: a2 -> a3 (10 ms)
     b3: a3 -> g3        b2: g3, a2 -> g2      b1: g2, a1 -> g1   (10 ms each)
   In this order the peak is 4 units (a1, a2, a3, g3 at b3). At 3 units
   one of a1, a2 must leave memory for b3; at b2 a1 must leave as well
   (a1, g3, a2, g2). bw: both PCIe directions, bytes/s. */
enum { A1_, A2_, A3_, G3_, G2_, G1_ };

static graph_profile *net(double t1, double t2, double bw)
{
    dev_spec d = fixture_device();
    d.h2d_bw = d.d2h_bw = bw;
    d.duplex_bw = 2 * bw;
    graph_profile *g = graph_new("hybrid-net", &d);
    const char *names[] = {"a1", "a2", "a3", "g3", "g2", "g1"};
    for (int i = 0; i < 6; i++)
        graph_add_tensor(g, names[i], UNIT, i < 3 ? GK_ACTIVATION : GK_GRADIENT, 0);
    graph_add_op(g, "f1", "conv", t1, GP_FORWARD, NOIDS, IDS(A1_), NOIDS, 0);
    graph_add_op(g, "f2", "relu", t2, GP_FORWARD, IDS(A1_), IDS(A2_), NOIDS, 0);
    graph_add_op(g, "f3", "conv", 0.010, GP_FORWARD, IDS(A2_), IDS(A3_), NOIDS, 0);
    graph_add_op(g, "b3", "conv_bwd", 0.010, GP_BACKWARD, IDS(A3_), IDS(G3_), NOIDS, 0);
    graph_add_op(g, "b2", "conv_bwd", 0.010, GP_BACKWARD, IDS(G3_, A2_), IDS(G2_), NOIDS, 0);
    graph_add_op(g, "b1", "conv_bwd", 0.010, GP_BACKWARD, IDS(G2_, A1_), IDS(G1_), NOIDS, 0);
    sw_err e;
    if (graph_finish(g, &e, NULL, NULL)) {
        printf("# net: %s\n", e.msg);
        graph_free(g);
        return NULL;
    }
    return g;
}

/* net(), checked: it builds (a failure is a failed test, never a silent
   return), and its figures are the ones the tests reason from: a peak of
   4 units in its order and t1 + t2 + 40 ms of compute. NULL on failure. */
static graph_profile *net_checked(double t1, double t2, double bw)
{
    graph_profile *g = net(t1, t2, bw);
    OK(g != NULL, "the six-op fixture builds");
    if (!g)
        return NULL;
    IS_INT(graph_peak_memory(g, g->order), 4 * UNIT, "the fixture's peak: 4 units (at b3)");
    IS_NUM(g->total_compute_s, t1 + t2 + 0.040, 1e-12, "the fixture's compute: %.4f s",
           t1 + t2 + 0.040);
    return g;
}

typedef struct counts {
    int out[6], in[6], drop[6], rerun[6]; /* per tensor / per op */
    int first_rerun;                      /* op of the first re-run, -1 */
    int first_evict;                      /* tensor first swapped out or dropped, -1 */
} counts;

static counts count(const plan *p)
{
    counts c;
    memset(&c, 0, sizeof c);
    c.first_rerun = c.first_evict = -1;
    for (int32_t i = 0; i < p->n_tasks; i++) {
        const plan_task *t = &p->tasks[i];
        if (t->kind == TASK_RERUN) {
            c.rerun[t->op]++;
            if (c.first_rerun < 0)
                c.first_rerun = t->op;
        } else if (t->kind == TASK_SWAP_IN) {
            c.in[t->tensor]++;
        } else if (t->kind == TASK_SWAP_OUT || t->kind == TASK_DROP) {
            if (t->kind == TASK_SWAP_OUT)
                c.out[t->tensor]++;
            else
                c.drop[t->tensor]++;
            if (c.first_evict < 0)
                c.first_evict = t->tensor;
        }
    }
    return c;
}

static void check_safe(const plan *p, int64_t budget, const char *what)
{
    sw_err e;
    int rc = plan_verify(p, NULL, &e);
    IS_INT(rc, 0, "%s: verifies (%s)", what, rc ? e.msg : "ok");
    sim_result r;
    rc = sim_plan(p, NULL, NULL, &r, &e);
    IS_INT(rc, 0, "%s: simulates (%s)", what, rc ? e.msg : "ok");
    OK(!rc && r.peak_memory_bytes <= budget, "%s: peak %lld within the budget %lld", what,
       (long long)r.peak_memory_bytes, (long long)budget);
    OK(p->capacity + p->workspace_reserve <= budget, "%s: arena within the budget", what);
}

/* PCIe at 1 MB/s: a unit (12 MB) takes 12 s each way, far beyond any
   re-run. At b3 the choice is a1 (its producer f1, 10 ms) or a2 (f2, a
   0.1 ms relu, its input a1 resident): a2 is dropped. At b2 a2 is remade
   by re-running f2 from a1; then a1 must go for g2 and, swapping being
   dear, is dropped and remade by f1 before b1. Nothing crosses PCIe; the
   iteration takes the compute (50.1 ms) plus the two re-runs (10.1 ms). */
static void cheap_op_recomputed(void)
{
    graph_profile *g = net_checked(0.010, 0.0001, 1e6);
    if (!g)
        return;
    const char *kv[] = {"search=false", NULL};
    plan *p = NULL;
    sw_err e;
    int rc = plan_hy(g, 3 * UNIT, kv, &p, &e);
    IS_INT(rc, 0, "slow PCIe, 3 units: a plan (%s)", rc ? e.msg : "ok");
    if (!rc) {
        counts c = count(p);
        IS_INT(c.first_evict, A2_, "the relu's output a2 is the first to leave");
        IS_INT(c.first_rerun, 1, "the first re-run is f2 (the relu)");
        IS_INT(c.rerun[1], 1, "f2 re-run once");
        IS_INT(c.rerun[0], 1, "f1 re-run once (a1 dropped at b2)");
        IS_INT(c.out[A1_] + c.out[A2_] + c.in[A1_] + c.in[A2_], 0, "no copies of a1, a2");
        check_safe(p, 3 * UNIT, "slow PCIe");
        sim_result r;
        if (!sim_plan(p, NULL, NULL, &r, &e)) {
            IS_NUM(r.recompute_time_s, 0.0101, 1e-9, "recompute: f1 + f2 = 10.1 ms");
            IS_NUM(r.iteration_time_s, 0.0501 + 0.0101, 1e-9, "iteration = compute + re-runs");
        }
        plan_free(p);
    }
    /* swapping alone must copy instead */
    const char *kv_swap[] = {"search=false", "mode=swap", NULL};
    rc = plan_hy(g, 3 * UNIT, kv_swap, &p, &e);
    IS_INT(rc, 0, "slow PCIe, mode=swap: a plan (%s)", rc ? e.msg : "ok");
    if (!rc) {
        counts c = count(p);
        IS_INT(c.rerun[0] + c.rerun[1], 0, "mode=swap: no re-runs");
        OK(c.out[A1_] + c.out[A2_] > 0, "mode=swap: activations copied out");
        check_safe(p, 3 * UNIT, "slow PCIe, mode=swap");
        plan_free(p);
    }
    graph_free(g);
}

/* PCIe at 12 GB/s (1 ms per unit) and every forward op a 10 ms
   convolution: re-running a1 or a2 would cost 10 ms, a copy out and back
   1 ms each, hidden behind the 20 ms of b3 and b2 before a1's next use.
   At b3 a1 (next used by b1, the farthest) is swapped out, and comes back
   for b1; nothing is re-run. */
static void conv_output_swapped(void)
{
    graph_profile *g = net_checked(0.010, 0.010, 12e9);
    if (!g)
        return;
    const char *kv[] = {"search=false", NULL};
    plan *p = NULL;
    sw_err e;
    int rc = plan_hy(g, 3 * UNIT, kv, &p, &e);
    IS_INT(rc, 0, "fast PCIe, 3 units: a plan (%s)", rc ? e.msg : "ok");
    if (!rc) {
        counts c = count(p);
        IS_INT(c.first_evict, A1_, "a1, used farthest ahead, is the first to leave");
        IS_INT(c.out[A1_], 1, "a1 swapped out once");
        IS_INT(c.in[A1_], 1, "a1 swapped in once");
        int reruns = 0;
        for (int o = 0; o < 6; o++)
            reruns += c.rerun[o];
        IS_INT(reruns, 0, "no re-runs");
        check_safe(p, 3 * UNIT, "fast PCIe");
        plan_free(p);
    }
    graph_free(g);
}

/* b2 alone needs g3, a2 and g2: below 3 units nothing can run it. */
static void impossible_budget(void)
{
    graph_profile *g = net_checked(0.010, 0.0001, 12e9);
    if (!g)
        return;
    plan *p = NULL;
    sw_err e;
    const char *kv[] = {"generations=1", "population=4", NULL};
    int rc = plan_hy(g, 3 * UNIT - 1, kv, &p, &e);
    IS_INT(rc, SW_ENOFIT, "one byte below 3 units: does not fit");
    IS_STR_HAS(e.msg, "does not fit", "says so");
    OK(!strchr(e.msg, '\n'), "one line");
    if (!rc)
        plan_free(p);
    rc = plan_hy(g, 3 * UNIT, kv, &p, &e);
    IS_INT(rc, 0, "at 3 units, with the search and the portfolio: a plan (%s)",
           rc ? e.msg : "ok");
    if (!rc) {
        check_safe(p, 3 * UNIT, "search");
        IS_STR_HAS(p->notes, "hybrid: member ", "the notes name the member kept");
        char member[64] = "";
        if (p->notes && !strncmp(p->notes, "hybrid: member ", 15))
            snprintf(member, sizeof member, "%.*s", (int)strcspn(p->notes + 15, ";"),
                     p->notes + 15);
        int own = !strncmp(member, "runtime", 7);
        OK(!strcmp(member, "runtime") || !strcmp(member, "runtime-on-ga-schedule") ||
           !strcmp(member, "sublinear") || !strcmp(member, "swapadvisor"),
           "a member of the portfolio: '%s'", member);
        OK(own == (strstr(p->notes, ": own (") != NULL), "the member (%s) is the candidate "
           "the notes describe: %s", member, p->notes);
        plan_free(p);
    }
    graph_free(g);
}

/* Random DAGs and small generated models at tight budgets: every plan the
   own variants make verifies and keeps within the budget. */
static void within_budget(void)
{
    int plans = 0;
    for (int seed = 1; seed <= 12; seed++) {
        char s_seed[32], s_ops[32];
        snprintf(s_seed, sizeof s_seed, "seed=%d", seed);
        snprintf(s_ops, sizeof s_ops, "ops=%d", 10 + seed * 4);
        const char *gkv[] = {s_seed, s_ops, seed % 3 ? "optimizer=sgd" : "optimizer=adam"};
        graph_profile *g = NULL;
        sw_err e;
        if (cal_generate("random", gkv, 3, "v100", &g, &e)) {
            OK(0, "random %d: %s", seed, e.msg);
            continue;
        }
        int64_t ideal = 0;
        if (!planner_ideal_peak(g, &ideal, &e)) {
            const double fr[] = {0.8, 0.5, 0.3};
            for (int f = 0; f < 3; f++) {
                int64_t budget = (int64_t)((double)ideal * fr[f]);
                const char *kv[] = {"portfolio=false", NULL};
                plan *p = NULL;
                if (plan_hy(g, budget, kv, &p, &e))
                    continue;
                char what[64];
                snprintf(what, sizeof what, "random %d at %.1fx", seed, fr[f]);
                check_safe(p, budget, what);
                plans++;
                plan_free(p);
            }
        }
        graph_free(g);
    }
    OK(plans >= 24, "random DAGs: %d plans", plans);
    const char *rkv[] = {"depth=20", "batch=8"};
    graph_profile *g = NULL;
    sw_err e;
    if (cal_generate("resnet", rkv, 2, "v100", &g, &e)) {
        OK(0, "resnet: %s", e.msg);
        return;
    }
    int64_t ideal = 0;
    planner_ideal_peak(g, &ideal, &e);
    for (int m = 0; m < 3; m++) {
        const char *modes[] = {"mode=hybrid", "mode=swap", "mode=recompute"};
        const char *kv[] = {"search=false", modes[m], NULL};
        plan *p = NULL;
        int rc = plan_hy(g, ideal * 4 / 10, kv, &p, &e);
        IS_INT(rc, 0, "resnet-20 at 0.4x, %s: a plan (%s)", modes[m], rc ? e.msg : "ok");
        if (!rc) {
            check_safe(p, ideal * 4 / 10, modes[m]);
            plan_free(p);
        }
    }
    graph_free(g);
}

int main(int argc, char **argv)
{
    static const tap_test tests[] = {
        {"cheap_op_recomputed", cheap_op_recomputed},
        {"conv_output_swapped", conv_output_swapped},
        {"impossible_budget", impossible_budget},
        {"within_budget", within_budget},
    };
    return tap_run(tests, SW_ARRAY_LEN(tests), argc, argv);
}
