/* test_sublinear.c: the `sublinear` planner (Chen et al. 2016 checkpointing)
   against hand-derived plans: on a chain of N layers in k segments it
   re-runs every non-checkpoint layer outside the last segment once,
   (k - 1)(N/k - 1) ops, and the recomputation is exactly their time; the
   budget search meets a budget between the sqrt(N) plan's peak and the
   ideal one with less recomputation; producers whose inputs are mutated
   before the recomputation are kept; a re-run op whose other output (a
   checkpoint) has died remakes it; and on random DAGs and generated models
   every plan verifies, its recomputation is its re-runs' time and its
   peak is the one the planner counted.; one named test each
   (tap_run). */
#include <string.h>

#include "../profiles/calibrate.h"
#include "../planners/planner.h"
#include "../sim/simulate.h"
#include "../sim/verify.h"
#include "tap.h"

/* Plan g with sublinear at budget, options "k=v" (NULL-terminated). */
static int plan_sl(const graph_profile *g, int64_t budget, const char *const *kv, plan **p,
                   sw_err *e)
{
    const planner *pl = planner_find("sublinear");
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

/* Sum of the re-run ops' times; *n their count; rerun_of[op] marks them. */
static double rerun_time(const plan *p, int *n, uint8_t *rerun_of)
{
    double t = 0;
    *n = 0;
    for (int32_t i = 0; i < p->n_tasks; i++)
        if (p->tasks[i].kind == TASK_RERUN) {
            t += p->prof->ops[p->tasks[i].op].time_s;
            (*n)++;
            if (rerun_of)
                rerun_of[p->tasks[i].op] = 1;
        }
    return t;
}

/* The peak the planner counted (its notes). */
static long long noted_peak(const plan *p)
{
    const char *s = p->notes ? strstr(p->notes, "peak ") : NULL;
    long long v = -1;
    if (s)
        sscanf(s, "peak %lld", &v);
    return v;
}

static graph_profile *chain(int layers)
{
    char l[32];
    snprintf(l, sizeof l, "layers=%d", layers);
    const char *kv[] = {l, "activation_bytes=1MiB", "param_bytes=1KiB", "op_time=1ms"};
    graph_profile *g = NULL;
    sw_err e;
    if (cal_generate("chain", kv, 4, "v100", &g, &e))
        printf("# chain: %s\n", e.msg);
    return g;
}

static int32_t op_named(const graph_profile *g, const char *name)
{
    for (int32_t o = 0; o < g->n_ops; o++)
        if (!strcmp(g->ops[o].name, name))
            return o;
    return -1;
}

/* Chain of N layers, aiming for k segments (0: sqrt): the expected re-runs. */
static void chain_case(int n, int k, int expect)
{
    graph_profile *g = chain(n);
    if (!g) {
        OK(0, "chain %d", n);
        return;
    }
    char seg[32];
    snprintf(seg, sizeof seg, "segments=%d", k);
    const char *kv[] = {seg, NULL};
    plan *p = NULL;
    sw_err e;
    int rc = plan_sl(g, INT64_MAX / 4, kv, &p, &e);
    IS_INT(rc, 0, "chain %d, %d segments: a plan (%s)", n, k, rc ? e.msg : "ok");
    if (!rc) {
        int nr;
        rerun_time(p, &nr, NULL);
        IS_INT(nr, expect, "chain %d, %d segments: (k - 1)(N/k - 1) = %d re-runs", n, k, expect);
        IS_INT(plan_verify(p, NULL, &e), 0, "chain %d, %d segments: verifies", n, k);
        plan_free(p);
    }
    graph_free(g);
}

/* Tensors and ops by hand: a profile for the mutation and re-run cases. */
typedef struct hand {
    graph_profile *g;
    int32_t t[32];
} hand;

static int32_t act(hand *h, const char *name)
{
    return graph_add_tensor(h->g, name, 1 << 20, GK_ACTIVATION, 0);
}

static int32_t op(hand *h, const char *name, int phase, const int32_t *in, int nin,
                  const int32_t *out, int nout, const int32_t *mut, int nmut)
{
    return graph_add_op(h->g, name, "op", 1e-3, phase, in, nin, out, nout, mut, nmut, 0);
}

/* f1: x,w -> a1; f2: a1 -> a2; f3: a2 -> a3, mutating a1; f4..f6 on to the
   loss; the backward pass reads a1..a5. Re-running f2 after f3 would read
   a1's new version: a2 must be kept. */
static graph_profile *mutation_profile(void)
{
    hand h;
    h.g = graph_new("mutation", dev_find("v100"));
    graph_profile *g = h.g;
    int32_t x = graph_add_tensor(g, "x", 1 << 20, GK_INPUT, 1);
    int32_t w = graph_add_tensor(g, "w", 1024, GK_PARAMETER, 1);
    int32_t a1 = act(&h, "a1"), a2 = act(&h, "a2"), a3 = act(&h, "a3"), a4 = act(&h, "a4"),
            a5 = act(&h, "a5");
    int32_t loss = graph_add_tensor(g, "loss", 4, GK_ACTIVATION, 0);
    int32_t g5 = act(&h, "g5"), g4 = act(&h, "g4"), g3 = act(&h, "g3"), g2 = act(&h, "g2"),
            g1 = act(&h, "g1");
    int32_t gw = graph_add_tensor(g, "gw", 1024, GK_GRADIENT, 0);
    int32_t i1[] = {x, w};
    op(&h, "f1", GP_FORWARD, i1, 2, &a1, 1, NULL, 0);
    op(&h, "f2", GP_FORWARD, &a1, 1, &a2, 1, NULL, 0);
    op(&h, "f3", GP_FORWARD, &a2, 1, &a3, 1, &a1, 1);
    op(&h, "f4", GP_FORWARD, &a3, 1, &a4, 1, NULL, 0);
    op(&h, "f5", GP_FORWARD, &a4, 1, &a5, 1, NULL, 0);
    op(&h, "f6", GP_FORWARD, &a5, 1, &loss, 1, NULL, 0);
    op(&h, "b6", GP_BACKWARD, &a5, 1, &g5, 1, NULL, 0);
    int32_t b5[] = {g5, a4}, b4[] = {g4, a3}, b3[] = {g3, a2}, b2[] = {g2, a1}, b1[] = {g1, x};
    op(&h, "b5", GP_BACKWARD, b5, 2, &g4, 1, NULL, 0);
    op(&h, "b4", GP_BACKWARD, b4, 2, &g3, 1, NULL, 0);
    op(&h, "b3", GP_BACKWARD, b3, 2, &g2, 1, NULL, 0);
    op(&h, "b2", GP_BACKWARD, b2, 2, &g1, 1, NULL, 0);
    op(&h, "b1", GP_BACKWARD, b1, 2, &gw, 1, NULL, 0);
    op(&h, "update", GP_UPDATE, &gw, 1, NULL, 0, &w, 1);
    sw_err e;
    if (graph_finish(g, &e, NULL, NULL)) {
        printf("# mutation profile: %s\n", e.msg);
        graph_free(g);
        return NULL;
    }
    return g;
}

/* f2 makes a2 (read by the backward pass) and c2 (read by f3 only). With a
   boundary after f2, c2 is a checkpoint that dies after f3; re-running f2
   for a2 remakes c2, so c2 must be dropped first, not left for the builder
   to free before the re-run. */
static graph_profile *two_output_profile(void)
{
    hand h;
    h.g = graph_new("two-output", dev_find("v100"));
    graph_profile *g = h.g;
    int32_t x = graph_add_tensor(g, "x", 1 << 20, GK_INPUT, 1);
    int32_t w = graph_add_tensor(g, "w", 1024, GK_PARAMETER, 1);
    int32_t a1 = act(&h, "a1"), a2 = act(&h, "a2"), c2 = act(&h, "c2"), a3 = act(&h, "a3"),
            a4 = act(&h, "a4");
    int32_t loss = graph_add_tensor(g, "loss", 4, GK_ACTIVATION, 0);
    int32_t g4 = act(&h, "g4"), g3 = act(&h, "g3"), g2 = act(&h, "g2"), g1 = act(&h, "g1");
    int32_t gw = graph_add_tensor(g, "gw", 1024, GK_GRADIENT, 0);
    int32_t i1[] = {x, w}, o2[] = {a2, c2};
    op(&h, "f1", GP_FORWARD, i1, 2, &a1, 1, NULL, 0);
    op(&h, "f2", GP_FORWARD, &a1, 1, o2, 2, NULL, 0);
    op(&h, "f3", GP_FORWARD, &c2, 1, &a3, 1, NULL, 0);
    op(&h, "f4", GP_FORWARD, &a3, 1, &a4, 1, NULL, 0);
    op(&h, "f5", GP_FORWARD, &a4, 1, &loss, 1, NULL, 0);
    int32_t b4[] = {g4, a3}, b2[] = {g2, a2}, b1[] = {g1, x};
    op(&h, "b5", GP_BACKWARD, &a4, 1, &g4, 1, NULL, 0);
    op(&h, "b4", GP_BACKWARD, b4, 2, &g3, 1, NULL, 0);
    op(&h, "b3", GP_BACKWARD, &g3, 1, &g2, 1, NULL, 0);
    op(&h, "b2", GP_BACKWARD, b2, 2, &g1, 1, NULL, 0);
    op(&h, "b1", GP_BACKWARD, b1, 2, &gw, 1, NULL, 0);
    op(&h, "update", GP_UPDATE, &gw, 1, NULL, 0, &w, 1);
    sw_err e;
    if (graph_finish(g, &e, NULL, NULL)) {
        printf("# two-output profile: %s\n", e.msg);
        graph_free(g);
        return NULL;
    }
    return g;
}

/* Every plan verifies, recomputes exactly its re-runs' time, and peaks
   where the planner counted. Returns 1 if all hold (prints why not). */
static int consistent(const plan *p, const char *what)
{
    sw_err e;
    if (plan_verify(p, NULL, &e)) {
        printf("# %s: does not verify: %s\n", what, e.msg);
        return 0;
    }
    sim_result r;
    if (sim_plan(p, NULL, NULL, &r, &e)) {
        printf("# %s: does not simulate: %s\n", what, e.msg);
        return 0;
    }
    int nr;
    double t = rerun_time(p, &nr, NULL);
    if (r.reruns != nr || fabs(r.recompute_time_s - t) > 1e-9 * (1 + t)) {
        printf("# %s: recompute %.9g s in %d reruns, the re-runs' time %.9g s in %d\n", what,
               r.recompute_time_s, r.reruns, t, nr);
        return 0;
    }
    if (noted_peak(p) + p->workspace_reserve != r.peak_memory_bytes) {
        printf("# %s: simulated peak %lld, counted %lld + reserve %lld\n", what,
               (long long)r.peak_memory_bytes, noted_peak(p), (long long)p->workspace_reserve);
        return 0;
    }
    return 1;
}

/* chain 16's ideal peak and the peak of its plan in sqrt mode (the ideal
   one if there is none) */
static void chain16_peaks(const graph_profile *g, int64_t *ideal, int64_t *sqrt_peak)
{
    sw_err e;
    *ideal = *sqrt_peak = 0;
    if (planner_ideal_peak(g, ideal, &e))
        return;
    *sqrt_peak = *ideal;
    plan *p = NULL;
    sim_result r;
    if (plan_sl(g, *ideal, NULL, &p, &e) == 0 && sim_plan(p, NULL, NULL, &r, &e) == 0)
        *sqrt_peak = r.peak_memory_bytes;
    plan_free(p);
}

/* chain of 16 layers, sqrt mode: 4 segments of 4 layers */
static void chain16_sqrt(void)
{
    sw_err e;
    graph_profile *g = chain(16);
    if (!g)
        return;
    int64_t ideal = 0;
    IS_INT(planner_ideal_peak(g, &ideal, &e), 0, "chain 16: ideal peak");
    plan *p = NULL;
    int rc = plan_sl(g, ideal, NULL, &p, &e);
    IS_INT(rc, 0, "chain 16, sqrt: a plan at the ideal peak (%s)", rc ? e.msg : "ok");
    int64_t sqrt_peak = ideal;
    if (!rc) {
        IS_INT(plan_verify(p, NULL, &e), 0, "chain 16, sqrt: verifies");
        uint8_t *rr = sw_calloc((size_t)g->n_ops, 1);
        int nr;
        double t = rerun_time(p, &nr, rr);
        /* segments 1-4, 5-8, 9-12, 13-16 (+ loss): checkpoints layer4, 8, 12;
           the first three segments' other layers re-run once; the last kept */
        IS_INT(nr, 9, "chain 16, sqrt: 3 x 3 = 9 layers re-run");
        int want = 1, ckpt_kept = 1;
        for (int l = 1; l <= 16; l++) {
            char name[32];
            snprintf(name, sizeof name, "layer%d", l);
            int32_t o = op_named(g, name);
            int expect = l <= 12 && l % 4 != 0;
            want &= o >= 0 && rr[o] == expect;
            if (l % 4 == 0 && l < 16)
                ckpt_kept &= !rr[o];
        }
        OK(want, "chain 16, sqrt: the re-run layers are 1-3, 5-7, 9-11");
        OK(ckpt_kept, "chain 16, sqrt: layers 4, 8, 12 are the checkpoints (sqrt(16) - 1)");
        OK(p->notes && strstr(p->notes, "4 segments, 3 checkpoints"), "notes: %s",
           p->notes ? p->notes : "(none)");
        sim_result r;
        IS_INT(sim_plan(p, NULL, NULL, &r, &e), 0, "chain 16, sqrt: simulates");
        IS_NUM(t, 9e-3, 1e-12, "the re-run layers take 9 x 1 ms");
        IS_NUM(r.recompute_time_s, t, 1e-12, "recompute time = the re-run ops' time");
        IS_NUM(r.iteration_time_s, r.ideal_time_s + t, 1e-9, "iteration = compute + recompute");
        IS_INT(r.drops, 9, "9 drops");
        sqrt_peak = r.peak_memory_bytes;
        OK(sqrt_peak < ideal * 6 / 10, "peak %lld well below the ideal %lld", (long long)sqrt_peak,
           (long long)ideal);
        IS_INT(noted_peak(p), sqrt_peak, "the planner counted the simulated peak");
        sw_free(rr);
        plan_free(p);
    }
    graph_free(g);
}

/* below its own peak, sqrt mode says what it needs */
static void chain16_sqrt_below_peak(void)
{
    sw_err e;
    graph_profile *g = chain(16);
    if (!g)
        return;
    int64_t ideal, sqrt_peak;
    chain16_peaks(g, &ideal, &sqrt_peak);
    plan *p = NULL;
    int rc = plan_sl(g, sqrt_peak - 1, NULL, &p, &e);
    IS_INT(rc, SW_ENOFIT, "chain 16, sqrt, one byte below its peak: does not fit");
    IS_STR_HAS(e.msg, "does not fit: sublinear checkpointing (sqrt, 4 segments) needs",
               "names the mode and the memory");
    OK(!strchr(e.msg, '\n'), "one line");
    plan_free(p);
    graph_free(g);
}

/* budget mode between the sqrt peak and the ideal one: fewer re-runs */
static void chain16_budget(void)
{
    sw_err e;
    graph_profile *g = chain(16);
    if (!g)
        return;
    int64_t ideal, sqrt_peak;
    chain16_peaks(g, &ideal, &sqrt_peak);
    plan *p = NULL;
    int64_t mid = (sqrt_peak + ideal) / 2;
    const char *budget_kv[] = {"mode=budget", NULL};
    int rc = plan_sl(g, mid, budget_kv, &p, &e);
    IS_INT(rc, 0, "chain 16, budget at %lld: a plan (%s)", (long long)mid, rc ? e.msg : "ok");
    if (!rc) {
        sim_result r;
        IS_INT(sim_plan(p, NULL, NULL, &r, &e), 0, "chain 16, budget: simulates");
        int nr;
        double t = rerun_time(p, &nr, NULL);
        OK(nr > 0 && nr < 9, "chain 16, budget: %d re-runs, fewer than sqrt's 9", nr);
        OK(r.peak_memory_bytes <= mid, "within the budget (%lld <= %lld)",
           (long long)r.peak_memory_bytes, (long long)mid);
        IS_NUM(r.recompute_time_s, t, 1e-12, "recompute time = the re-run ops' time");
        OK(consistent(p, "chain 16, budget"), "chain 16, budget: verifies, consistent");
        plan_free(p);
    }
    rc = plan_sl(g, ideal, budget_kv, &p, &e);
    IS_INT(rc, 0, "chain 16, budget at the ideal peak: a plan");
    if (!rc) {
        int nr;
        rerun_time(p, &nr, NULL);
        IS_INT(nr, 0, "at the ideal peak nothing is recomputed");
        plan_free(p);
    }
    rc = plan_sl(g, sqrt_peak / 3, budget_kv, &p, &e);
    IS_INT(rc, SW_ENOFIT, "chain 16, budget at a third of the sqrt peak: does not fit");
    IS_STR_HAS(e.msg, "sublinear checkpointing at its least memory", "names the least memory");
    OK(!strchr(e.msg, '\n'), "one line");
    const char *bad_kv[] = {"mode=budget", "segments=3", NULL};
    IS_INT(plan_sl(g, ideal, bad_kv, &p, &e), SW_EINVAL, "segments with mode=budget: refused");
    graph_free(g);
}

/* other segment counts and lengths: (k - 1)(N/k - 1) */
static void segment_counts(void)
{
    chain_case(16, 2, 7);
    chain_case(16, 8, 7);
    chain_case(25, 0, 16);
    chain_case(36, 0, 25);
    chain_case(16, 1, 0);
}

/* a producer whose input is mutated before the recomputation is kept */
static void mutated_input_kept(void)
{
    sw_err e;
    plan *p = NULL;
    graph_profile *g = mutation_profile();
    if (g) {
        int rc = plan_sl(g, INT64_MAX / 4, NULL, &p, &e);
        IS_INT(rc, 0, "mutation: a plan (%s)", rc ? e.msg : "ok");
        if (!rc) {
            uint8_t *rr = sw_calloc((size_t)g->n_ops, 1);
            int nr;
            rerun_time(p, &nr, rr);
            OK(!rr[op_named(g, "f2")] && !rr[op_named(g, "f3")],
               "mutation: f2 (its input mutated by f3) and f3 (mutates) never re-run");
            OK(consistent(p, "mutation"), "mutation: verifies, consistent");
            sw_free(rr);
            plan_free(p);
        }
        graph_free(g);
    }
}

/* a re-run op's other output, a checkpoint dead by then, is remade */
static void two_outputs(void)
{
    sw_err e;
    plan *p = NULL;
    graph_profile *g = two_output_profile();
    if (g) {
        const char *kv[] = {"segments=3", NULL};
        int rc = plan_sl(g, INT64_MAX / 4, kv, &p, &e);
        IS_INT(rc, 0, "two outputs: a plan (%s)", rc ? e.msg : "ok");
        if (!rc) {
            uint8_t *rr = sw_calloc((size_t)g->n_ops, 1);
            int nr;
            rerun_time(p, &nr, rr);
            OK(nr == 2 && rr[op_named(g, "f1")] && rr[op_named(g, "f2")],
               "two outputs: f1 and f2 re-run (%d re-runs)", nr);
            int c2 = -1, c2_drops = 0;
            for (int32_t t = 0; t < g->n_tensors; t++)
                if (!strcmp(g->tensors[t].name, "c2"))
                    c2 = t;
            for (int32_t i = 0; i < p->n_tasks; i++)
                c2_drops += p->tasks[i].kind == TASK_DROP && p->tasks[i].tensor == c2;
            IS_INT(c2_drops, 1, "two outputs: the checkpoint c2 is dropped before the re-run");
            OK(consistent(p, "two outputs"), "two outputs: verifies, consistent");
            sw_free(rr);
            plan_free(p);
        }
        graph_free(g);
    }
}

/* random DAGs and generated models: every plan verifies and is consistent */
static void random_dags(void)
{
    sw_err e;
    graph_profile *g;
    plan *p = NULL;
    int64_t ideal = 0;
    int plans = 0, good = 0;
    for (int seed = 1; seed <= 24; seed++) {
        char s_seed[32], s_ops[32];
        snprintf(s_seed, sizeof s_seed, "seed=%d", seed);
        snprintf(s_ops, sizeof s_ops, "ops=%d", 10 + seed * 3);
        const char *kv[] = {s_seed, s_ops, seed % 3 ? "optimizer=sgd" : "optimizer=adam"};
        if (cal_generate("random", kv, 3, "v100", &g, &e)) {
            OK(0, "random %d: %s", seed, e.msg);
            continue;
        }
        if (planner_ideal_peak(g, &ideal, &e) == 0) {
            const double fr[] = {1.0, 0.8, 0.6};
            for (int m = 0; m < 2; m++)
                for (int f = 0; f < 3; f++) {
                    const char *kvm[] = {m ? "mode=budget" : "mode=sqrt", NULL};
                    if (plan_sl(g, (int64_t)((double)ideal * fr[f]), kvm, &p, &e))
                        continue;
                    char what[64];
                    snprintf(what, sizeof what, "random %d %s %.1fx", seed, kvm[0], fr[f]);
                    plans++;
                    good += consistent(p, what);
                    plan_free(p);
                }
        }
        graph_free(g);
    }
    OK(plans >= 60, "random DAGs: %d plans", plans);
    IS_INT(good, plans, "random DAGs: every plan verifies, recomputes its re-runs' time, peaks "
           "where counted");
}

/* generated models: every plan verifies and is consistent */
static void generated_models(void)
{
    sw_err e;
    graph_profile *g;
    plan *p = NULL;
    int64_t ideal = 0;
    const struct {
        const char *model;
        const char *kv[5];
        int nkv;
    } models[] = {{"resnet", {"depth=20", "batch=8"}, 2},
                  {"transformer", {"layers=2", "batch=2"}, 2},
                  {"rnn", {"layers=2", "hidden=256", "seq=8", "vocab=0", "batch=256"}, 5}};
    for (size_t m = 0; m < SW_ARRAY_LEN(models); m++) {
        if (cal_generate(models[m].model, models[m].kv, models[m].nkv, "v100", &g, &e)) {
            OK(0, "%s: %s", models[m].model, e.msg);
            continue;
        }
        planner_ideal_peak(g, &ideal, &e);
        for (int md = 0; md < 2; md++) {
            const char *kvm[] = {md ? "mode=budget" : "mode=sqrt", NULL};
            char what[64];
            snprintf(what, sizeof what, "%s %s", models[m].model, kvm[0]);
            int rc = plan_sl(g, ideal * 7 / 10, kvm, &p, &e);
            IS_INT(rc, 0, "%s at 0.7x: a plan (%s)", what, rc ? e.msg : "ok");
            if (!rc) {
                int nr;
                rerun_time(p, &nr, NULL);
                OK(nr > 0 && consistent(p, what), "%s: %d re-runs, verifies, consistent", what,
                   nr);
                plan_free(p);
            }
        }
        graph_free(g);
    }
}

static const tap_test tests[] = {
    {"chain16_sqrt", chain16_sqrt},
    {"chain16_sqrt_below_peak", chain16_sqrt_below_peak},
    {"chain16_budget", chain16_budget},
    {"segment_counts", segment_counts},
    {"mutated_input_kept", mutated_input_kept},
    {"two_outputs", two_outputs},
    {"random_dags", random_dags},
    {"generated_models", generated_models},
};

int main(int argc, char **argv) { return tap_run(tests, SW_ARRAY_LEN(tests), argc, argv); }
