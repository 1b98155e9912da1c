/* test_optimal_remat.c: the `optimal-remat` planner (Checkmate's integer
   program): a chain worked by hand at budgets that force no, one and three
   re-runs, and one that nothing fits; small random training graphs at
   several budgets (the plan verifies at the budget, its simulated time is
   the objective, the objective is no lower than the lower bound, and no
   rematerialising heuristic is faster); a solve stopped by its time limit
   keeps an incumbent with a gap; lp-round's plans keep the same promises and
   its lp_bound lies below every optimum and heuristic, above the compute. */
#include <string.h>

#include "../profiles/calibrate.h"
#include "../sim/bound.h"
#include "../planners/planner.h"
#include "../sim/simulate.h"
#include "../sim/verify.h"
#include "tap.h"

#define MiB (1LL << 20)

/* Plan g with pl at budget; kv: "key", "value" pairs. */
static int plan_with(const planner *pl, const graph_profile *g, int64_t budget, double time_s,
                     const char *const *kv, int nkv, plan **out, sw_err *e)
{
    planner_opts o;
    planner_opts_init(&o, pl);
    o.memory_budget = budget;
    o.time_budget_s = time_s;
    for (int i = 0; i + 1 < nkv; i += 2)
        params_set(&o.params, kv[i], kv[i + 1], e);
    int rc = planner_run(pl, g, &o, out, e);
    planner_opts_free(&o);
    return rc;
}

/* A figure from the planner's notes: "NAME %lf". -1 if absent. */
static double note_num(const plan *p, const char *name)
{
    const char *s = p->notes ? strstr(p->notes, name) : NULL;
    double v = -1;
    if (s && sscanf(s + strlen(name), " %lf", &v) != 1)
        v = -1;
    return v;
}

static int reruns_of(const plan *p, int32_t op)
{
    int n = 0;
    for (int32_t t = 0; t < p->n_tasks; t++)
        n += p->tasks[t].kind == TASK_RERUN && (op < 0 || p->tasks[t].op == op);
    return n;
}

/* The chain x -> f1 -> a1 -> f2 -> a2 -> f3 -> a3 -> f4 -> a4, then
   b4(a3, a4) -> g3, b3(a2, g3) -> g2, b2(a1, g2) -> g1, b1(g1, x); x
   persistent; every tensor 1 MiB, no workspace. Times f1 3 ms, f2 1 ms, f3
   and f4 2 ms, every b 2 ms: 16 ms in all.

   Resident without re-runs (each freed after its last use): a1; a1 a2;
   a1 a2 a3; a1..a4; at b4 a1..a4 and g3: 5 MiB + x = 6 MiB, the peak.
   - 6 MiB: nothing re-run, 16 ms.
   - 5 MiB (4 for activations): at b4 one of a1, a2 must be gone. Dropping
     a2 after f3 and re-running f2 (1 ms, from a1) before b3 peaks at 4
     (b4: a1 a3 a4 g3; b3: a1 g3 a2 g2); dropping a1 costs f1 (3 ms): 17 ms,
     one re-run of f2.
   - 4 MiB (3): at b4 a3 a4 g3 fill it: a1 and a2 are both gone. b3 needs
     a2, so f2 re-runs in b3's stage, reading a1: f1 re-runs there too; b3
     then holds g3 a2 g2, so a1 cannot stay for b2: f1 re-runs again before
     b2. 16 + 3 + 1 + 3 = 23 ms, three re-runs (f1 twice).
   - 3 MiB: b4 alone needs a3 a4 g3 + x = 4: "does not fit". */
static graph_profile *hand_chain(void)
{
    dev_spec d = *dev_find("v100");
    graph_profile *g = graph_new("hand-chain", &d);
    int32_t x = graph_add_tensor(g, "x", MiB, GK_INPUT, 1);
    int32_t a[5], gr[4];
    char nm[16];
    for (int i = 1; i <= 4; i++) {
        snprintf(nm, sizeof nm, "a%d", i);
        a[i] = graph_add_tensor(g, nm, MiB, GK_ACTIVATION, 0);
    }
    for (int i = 1; i <= 3; i++) {
        snprintf(nm, sizeof nm, "g%d", i);
        gr[i] = graph_add_tensor(g, nm, MiB, GK_GRADIENT, 0);
    }
    a[0] = x;
    static const double ft[5] = {0, 0.003, 0.001, 0.002, 0.002};
    for (int i = 1; i <= 4; i++) {
        snprintf(nm, sizeof nm, "f%d", i);
        graph_add_op(g, nm, "op", ft[i], GP_FORWARD, &a[i - 1], 1, &a[i], 1, NULL, 0, 0);
    }
    int32_t in4[2] = {a[3], a[4]}, in3[2] = {a[2], gr[3]}, in2[2] = {a[1], gr[2]};
    int32_t in1[2] = {gr[1], x};
    graph_add_op(g, "b4", "op", 0.002, GP_BACKWARD, in4, 2, &gr[3], 1, NULL, 0, 0);
    graph_add_op(g, "b3", "op", 0.002, GP_BACKWARD, in3, 2, &gr[2], 1, NULL, 0, 0);
    graph_add_op(g, "b2", "op", 0.002, GP_BACKWARD, in2, 2, &gr[1], 1, NULL, 0, 0);
    graph_add_op(g, "b1", "op", 0.002, GP_BACKWARD, in1, 2, NULL, 0, NULL, 0, 0);
    sw_err e;
    if (graph_finish(g, &e, NULL, NULL)) {
        graph_free(g);
        return NULL;
    }
    return g;
}

/* The promises of one plan at budget: verifies, within the budget, its
   simulated time is the objective and no lower than the lower bound.
   Returns the simulated time (-1 on failure). */
static double check_plan(const graph_profile *g, plan *p, int64_t budget, const char *what)
{
    sw_err e;
    IS_INT(plan_verify(p, NULL, &e), 0, "%s: verifies (%s)", what, e.msg);
    sim_result r;
    if (sim_plan(p, NULL, NULL, &r, &e)) {
        OK(0, "%s: simulates (%s)", what, e.msg);
        return -1;
    }
    OK(r.peak_memory_bytes <= budget && p->capacity + p->workspace_reserve <= budget,
       "%s: peak %lld within %lld", what, (long long)r.peak_memory_bytes, (long long)budget);
    double obj = note_num(p, "objective"), bnd = note_num(p, "bound"), gap = note_num(p, "gap");
    IS_NUM(r.iteration_time_s, obj, 1e-9 * obj + 1e-12, "%s: simulated time = objective", what);
    OK(bnd <= obj + 1e-12 && gap >= 0, "%s: bound %.9f <= objective, gap %.4f%% >= 0", what, bnd,
       gap);
    bound_result br;
    if (bound_compute(g, budget, g->order, &br, &e) == 0) {
        double lb = bound_for(&br, r.reruns > 0, 1);
        OK(obj >= lb - 1e-12, "%s: objective %.9f >= lower bound %.9f", what, obj, lb);
    } else {
        OK(0, "%s: bound (%s)", what, e.msg);
    }
    return r.iteration_time_s;
}

static void hand(void)
{
    graph_profile *g = hand_chain();
    OK(g != NULL, "the hand-made chain");
    if (!g)
        return;
    static const struct {
        int64_t mib;
        double time_s;
        int reruns, f1, f2;
    } want[] = {{6, 0.016, 0, 0, 0}, {5, 0.017, 1, 0, 1}, {4, 0.023, 3, 2, 1}};
    for (size_t i = 0; i < SW_ARRAY_LEN(want); i++) {
        plan *p = NULL;
        sw_err e;
        char what[64];
        snprintf(what, sizeof what, "chain at %lld MiB", (long long)want[i].mib);
        int rc = plan_with(&planner_optimal_remat, g, want[i].mib * MiB, 30, NULL, 0, &p, &e);
        IS_INT(rc, 0, "%s: a plan (%s)", what, rc ? e.msg : "ok");
        if (rc)
            continue;
        double t = check_plan(g, p, want[i].mib * MiB, what);
        IS_NUM(t, want[i].time_s, 1e-12, "%s: %.3f s", what, want[i].time_s);
        IS_INT(reruns_of(p, -1), want[i].reruns, "%s: %d re-runs", what, want[i].reruns);
        IS_INT(reruns_of(p, 0), want[i].f1, "%s: f1 re-run %d times", what, want[i].f1);
        IS_INT(reruns_of(p, 1), want[i].f2, "%s: f2 re-run %d times", what, want[i].f2);
        IS_STR_HAS(p->notes, "optimal-remat: optimal,", "%s: proven optimal", what);
        plan_free(p);
    }
    plan *p = NULL;
    sw_err e;
    int rc = plan_with(&planner_optimal_remat, g, 3 * MiB, 30, NULL, 0, &p, &e);
    IS_INT(rc, SW_ENOFIT, "chain at 3 MiB: does not fit");
    OK(rc && !strchr(e.msg, '\n'), "one line: %s", rc ? e.msg : "");
    IS_STR_HAS(rc ? e.msg : "", "'b4'", "names the op that cannot fit");
    plan_free(p);
    /* GLPK (--set solver=glpk) proves the same optima, with and without
       the start, and its lp-round plan keeps the same promises */
    for (size_t i = 0; i < SW_ARRAY_LEN(want); i++) {
        for (int st = 0; st < 2; st++) {
            static const char *const kv[] = {"solver", "glpk", "start", "none"};
            char what[80];
            snprintf(what, sizeof what, "chain at %lld MiB, glpk%s", (long long)want[i].mib,
                     st ? ", no start" : "");
            int rg = plan_with(&planner_optimal_remat, g, want[i].mib * MiB, 30, kv, st ? 4 : 2,
                               &p, &e);
            IS_INT(rg, 0, "%s: a plan (%s)", what, rg ? e.msg : "ok");
            if (rg)
                continue;
            double t = check_plan(g, p, want[i].mib * MiB, what);
            IS_NUM(t, want[i].time_s, 1e-12, "%s: %.3f s", what, want[i].time_s);
            IS_STR_HAS(p->notes, "optimal-remat: optimal,", "%s: proven optimal", what);
            if (!strstr(p->notes, "no solve needed"))
                IS_STR_HAS(p->notes, "glpk", "%s: by GLPK", what);
            plan_free(p);
        }
    }
    {
        static const char *const kv[] = {"solver", "glpk", "method", "lp-round"};
        int rg = plan_with(&planner_optimal_remat, g, 4 * MiB, 30, kv, 4, &p, &e);
        IS_INT(rg, 0, "chain at 4 MiB, glpk lp-round: a plan (%s)", rg ? e.msg : "ok");
        if (!rg) {
            check_plan(g, p, 4 * MiB, "chain at 4 MiB, glpk lp-round");
            OK(note_num(p, "lp_bound") <= 0.023 + 1e-12, "its lp_bound %.6f <= the optimum",
               note_num(p, "lp_bound"));
        }
        plan_free(p);
    }
    /* no start: the solver alone finds the same optimum */
    static const char *const nostart[] = {"start", "none"};
    rc = plan_with(&planner_optimal_remat, g, 4 * MiB, 30, nostart, 2, &p, &e);
    IS_INT(rc, 0, "chain at 4 MiB without a start (%s)", rc ? e.msg : "ok");
    if (!rc)
        IS_NUM(note_num(p, "objective"), 0.023, 1e-12, "the same 23 ms");
    plan_free(p);
    graph_free(g);
}

/* Small random training graphs (5 and 6 forward ops) at budgets from the
   ideal peak down: every plan keeps the promises, and where the solver
   proved its plan optimal no rematerialising heuristic is faster; where the
   program is infeasible, none of them finds a plan either. */
static void random_graphs(void)
{
    static const char *const heur_kv[] = {"mode", "budget"};
    const planner *heur[] = {&planner_dtr, &planner_dtr_megengine, &planner_sublinear};
    static const double fracs[] = {0.97, 0.93, 0.9, 0.85};
    int plans = 0, compared = 0;
    for (int ops = 5; ops <= 6; ops++)
        for (int seed = 1; seed <= 3; seed++) {
            char o1[32], s1[32];
            snprintf(o1, sizeof o1, "ops=%d", ops);
            snprintf(s1, sizeof s1, "seed=%d", seed);
            const char *kv[] = {o1, s1, "unit=1MiB"};
            graph_profile *g = NULL;
            sw_err e;
            if (cal_generate("random", kv, 3, "v100", &g, &e)) {
                OK(0, "generate (%s)", e.msg);
                continue;
            }
            int64_t peak;
            planner_ideal_peak(g, &peak, &e);
            for (size_t f = 0; f < SW_ARRAY_LEN(fracs); f++) {
                int64_t budget = (int64_t)((double)peak * fracs[f]);
                char what[96];
                snprintf(what, sizeof what, "random %d ops seed %d at %.2fx", ops, seed,
                         fracs[f]);
                plan *p = NULL;
                int rc = plan_with(&planner_optimal_remat, g, budget, 60, NULL, 0, &p, &e);
                double t = -1;
                int optimal = 0;
                if (!rc) {
                    plans++;
                    t = check_plan(g, p, budget, what);
                    optimal = strstr(p->notes, "optimal-remat: optimal,") != NULL;
                    plan_free(p);
                } else {
                    OK(rc == SW_ENOFIT && !strchr(e.msg, '\n'), "%s: a plan or one line (%s)",
                       what, e.msg);
                }
                int infeasible = rc == SW_ENOFIT && !strstr(e.msg, "fragments");
                for (size_t h = 0; h < SW_ARRAY_LEN(heur); h++) {
                    plan *q = NULL;
                    sw_err e2;
                    int hr = plan_with(heur[h], g, budget, 30, heur_kv, heur[h] ==
                                       &planner_sublinear ? 2 : 0, &q, &e2);
                    if (hr)
                        continue;
                    sim_result r;
                    sim_plan(q, NULL, NULL, &r, &e2);
                    if (infeasible)
                        OK(0, "%s: %s finds a plan (%.9f s) where the program is infeasible", what,
                           heur[h]->name, r.iteration_time_s);
                    if (optimal) {
                        compared++;
                        OK(r.iteration_time_s >= t - 1e-9 * t, "%s: %s %.9f s >= optimum %.9f s",
                           what, heur[h]->name, r.iteration_time_s, t);
                    }
                    plan_free(q);
                }
            }
            graph_free(g);
        }
    OK(plans >= 6, "plans at %d of the budgets", plans);
    OK(compared >= 4, "%d heuristic plans set beside proven optima", compared);
}

/* A graph too large to solve in 2 s: the solve stops at its limit and the
   plan is the incumbent (the dtr plan as the start, or better), with the
   proven bound and a gap >= 0. */
static void time_limited(void)
{
    const char *kv[] = {"ops=24", "seed=3", "unit=1MiB"};
    graph_profile *g = NULL;
    sw_err e;
    if (cal_generate("random", kv, 3, "v100", &g, &e)) {
        OK(0, "generate (%s)", e.msg);
        return;
    }
    int64_t peak;
    planner_ideal_peak(g, &peak, &e);
    int64_t budget = (int64_t)((double)peak * 0.9);
    plan *p = NULL;
    int rc = plan_with(&planner_optimal_remat, g, budget, 2, NULL, 0, &p, &e);
    IS_INT(rc, 0, "random-24 at 0.9x in 2 s: a plan (%s)", rc ? e.msg : "ok");
    if (!rc) {
        check_plan(g, p, budget, "random-24 at 0.9x in 2 s");
        IS_STR_HAS(p->notes, "gap", "the notes give the gap");
        plan *q = NULL;
        if (!plan_with(&planner_dtr, g, budget, 30, NULL, 0, &q, &e)) {
            sim_result r;
            sim_plan(q, NULL, NULL, &r, &e);
            OK(note_num(p, "objective") <= r.iteration_time_s + 1e-12,
               "no slower than its dtr start (%.9f <= %.9f)", note_num(p, "objective"),
               r.iteration_time_s);
            plan_free(q);
        }
    }
    plan_free(p);
    /* a size limit refuses in one line, before building anything */
    static const char *const small[] = {"max_ops", "10"};
    rc = plan_with(&planner_optimal_remat, g, budget, 2, small, 2, &p, &e);
    IS_INT(rc, SW_EUNSUPPORTED, "max_ops=10: unsupported");
    OK(rc && !strchr(e.msg, '\n') && strstr(e.msg, "max_ops"), "one line naming max_ops: %s",
       rc ? e.msg : "");
    graph_free(g);
}

/* lp-round (Checkmate's rounding of the LP relaxation), with the program's
   own relaxation and the coarse one. On the hand chain (optima 16, 17 and
   23 ms at 6, 5 and 4 MiB, above): the plan keeps the promises, is no
   faster than the optimum, and lp_bound lies between the compute (16 ms,
   strictly above it where a re-run is needed) and the optimum. On the small
   random graphs: the same promises, and lp_bound is no higher than the
   exact method's proven optimum nor than any plan of dtr, dtr-megengine,
   sublinear, and above the compute wherever the exact optimum re-runs
   something. */
static void lp_round(void)
{
    static const char *const forms[] = {"full", "coarse"};
    graph_profile *g = hand_chain();
    OK(g != NULL, "the hand-made chain");
    static const struct {
        int64_t mib;
        double opt_s;
    } want[] = {{5, 0.017}, {4, 0.023}};
    for (size_t i = 0; g && i < SW_ARRAY_LEN(want); i++)
        for (size_t f = 0; f < SW_ARRAY_LEN(forms); f++) {
            const char *kv[] = {"method", "lp-round", "lp", forms[f]};
            plan *p = NULL;
            sw_err e;
            char what[96];
            snprintf(what, sizeof what, "chain at %lld MiB, lp-round (%s)",
                     (long long)want[i].mib, forms[f]);
            int rc = plan_with(&planner_optimal_remat, g, want[i].mib * MiB, 30, kv, 4, &p, &e);
            IS_INT(rc, 0, "%s: a plan (%s)", what, rc ? e.msg : "ok");
            if (rc)
                continue;
            double t = check_plan(g, p, want[i].mib * MiB, what);
            OK(t >= want[i].opt_s - 1e-12, "%s: %.6f s no faster than the optimum %.3f s",
               what, t, want[i].opt_s);
            double lpb = note_num(p, "lp_bound");
            OK(lpb > 0.016 + 1e-12 && lpb <= want[i].opt_s + 1e-12,
               "%s: 16 ms < lp_bound %.9f s <= %.3f s", what, lpb, want[i].opt_s);
            IS_STR_HAS(p->notes, "method lp-round", "%s: the notes name the method", what);
            plan_free(p);
        }
    graph_free(g);

    static const char *const heur_kv[] = {"mode", "budget"};
    const planner *heur[] = {&planner_dtr, &planner_dtr_megengine, &planner_sublinear};
    static const double fracs[] = {0.97, 0.93, 0.9, 0.85};
    int bounds = 0, vs_opt = 0;
    for (int ops = 5; ops <= 6; ops++)
        for (int seed = 1; seed <= 3; seed++) {
            char o1[32], s1[32];
            snprintf(o1, sizeof o1, "ops=%d", ops);
            snprintf(s1, sizeof s1, "seed=%d", seed);
            const char *gkv[] = {o1, s1, "unit=1MiB"};
            sw_err e;
            g = NULL;
            if (cal_generate("random", gkv, 3, "v100", &g, &e)) {
                OK(0, "generate (%s)", e.msg);
                continue;
            }
            int64_t peak;
            planner_ideal_peak(g, &peak, &e);
            for (size_t fr = 0; fr < SW_ARRAY_LEN(fracs); fr++) {
                int64_t budget = (int64_t)((double)peak * fracs[fr]);
                plan *p = NULL;
                double opt = -1;
                if (!plan_with(&planner_optimal_remat, g, budget, 60, NULL, 0, &p, &e) &&
                    strstr(p->notes, "optimal-remat: optimal,"))
                    opt = note_num(p, "objective");
                plan_free(p);
                double heur_t[3];
                for (size_t h = 0; h < SW_ARRAY_LEN(heur); h++) {
                    plan *q = NULL;
                    sim_result r;
                    heur_t[h] = -1;
                    if (!plan_with(heur[h], g, budget, 30, heur_kv,
                                   heur[h] == &planner_sublinear ? 2 : 0, &q, &e) &&
                        !sim_plan(q, NULL, NULL, &r, &e))
                        heur_t[h] = r.iteration_time_s;
                    plan_free(q);
                }
                for (size_t f = 0; f < SW_ARRAY_LEN(forms); f++) {
                    const char *kv[] = {"method", "lp-round", "lp", forms[f]};
                    char what[128];
                    snprintf(what, sizeof what, "random %d ops seed %d at %.2fx, lp-round (%s)",
                             ops, seed, fracs[fr], forms[f]);
                    p = NULL;
                    int rc = plan_with(&planner_optimal_remat, g, budget, 60, kv, 4, &p, &e);
                    if (rc) {
                        OK(rc == SW_ENOFIT && !strchr(e.msg, '\n') && opt < 0,
                           "%s: a plan, or \"does not fit\" in one line where the exact method "
                           "has no optimum (%s)", what, e.msg);
                        continue;
                    }
                    check_plan(g, p, budget, what);
                    double lpb = note_num(p, "lp_bound");
                    if (lpb >= 0) {
                        bounds++;
                        double total = g->total_compute_s;
                        OK(lpb >= total - 1e-12, "%s: lp_bound %.9f >= compute %.9f", what, lpb,
                           total);
                        if (opt >= 0) {
                            vs_opt++;
                            OK(lpb <= opt + 1e-9 * opt, "%s: lp_bound %.9f <= optimum %.9f",
                               what, lpb, opt);
                            if (opt > total + 1e-12)
                                OK(lpb > total + 1e-12, "%s: lp_bound %.9f > compute %.9f where "
                                   "the optimum re-runs", what, lpb, total);
                        }
                        for (size_t h = 0; h < SW_ARRAY_LEN(heur); h++)
                            if (heur_t[h] >= 0)
                                OK(lpb <= heur_t[h] + 1e-9 * heur_t[h],
                                   "%s: lp_bound %.9f <= %s %.9f", what, lpb, heur[h]->name,
                                   heur_t[h]);
                    }
                    plan_free(p);
                }
            }
            graph_free(g);
        }
    OK(bounds >= 12, "lp_bound at %d budgets", bounds);
    OK(vs_opt >= 5, "%d set beside proven optima", vs_opt);
}

/* method=auto: the exact program up to max_vars, lp-round above it;
   method=exact above max_vars keeps the start's plan, unsolved. */
static void method_choice(void)
{
    const char *gkv[] = {"ops=6", "seed=1", "unit=1MiB"};
    graph_profile *g = NULL;
    sw_err e;
    if (cal_generate("random", gkv, 3, "v100", &g, &e)) {
        OK(0, "generate (%s)", e.msg);
        return;
    }
    int64_t peak;
    planner_ideal_peak(g, &peak, &e);
    int64_t budget = (int64_t)((double)peak * 0.9);
    static const struct {
        const char *method, *max_vars, *has;
    } cases[] = {{"auto", "40000", "method exact"},
                 {"auto", "10", "method lp-round"},
                 {"exact", "10", "not solved (the program is larger than max_vars)"},
                 {"lp-round", "40000", "method lp-round: lp_bound"}};
    for (size_t i = 0; i < SW_ARRAY_LEN(cases); i++) {
        const char *kv[] = {"method", cases[i].method, "max_vars", cases[i].max_vars};
        plan *p = NULL;
        int rc = plan_with(&planner_optimal_remat, g, budget, 60, kv, 4, &p, &e);
        IS_INT(rc, 0, "method=%s max_vars=%s: a plan (%s)", cases[i].method, cases[i].max_vars,
               rc ? e.msg : "ok");
        if (!rc) {
            check_plan(g, p, budget, cases[i].method);
            IS_STR_HAS(p->notes, cases[i].has, "method=%s max_vars=%s: %s", cases[i].method,
                       cases[i].max_vars, cases[i].has);
        }
        plan_free(p);
    }
    graph_free(g);
}

static const tap_test tests[] = {
    {"hand", hand},
    {"random_graphs", random_graphs},
    {"time_limited", time_limited},
    {"lp_round", lp_round},
    {"method_choice", method_choice},
};

int main(int argc, char **argv) { return tap_run(tests, SW_ARRAY_LEN(tests), argc, argv); }
