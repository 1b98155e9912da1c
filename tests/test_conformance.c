/* test_conformance.c: what every registered planner promises, checked by
   looping over the registry (planner_at), so that a planner is covered the
   moment it is registered: on small random DAGs and chains at a roomy and a
   tight budget, it either returns a plan that verifies, keeps within the
   budget it was given (arena plus workspace reserve, and the simulated
   peak), and is the same plan for 1 and 2 threads with the same seed; or,
   where the budget is too tight for it, refuses with a "does not fit" or
   "exceeded" error of one line. And through the command line, a budget no
   plan can meet (one byte) ends with exit 1 and one line. One named test
   each (tap_run). */
#include <string.h>

#include "../profiles/calibrate.h"
#include "../planners/planner.h"
#include "../profiles/profile_io.h"
#include "../sim/plan_io.h"
#include "../sim/simulate.h"
#include "../sim/verify.h"
#include "cli_run.h"
#include "tap.h"

/* Plan g with pl at budget on `threads` threads, seed 7; searching planners
   get a fixed, small number of generations so the result does not depend on
   timing. Returns the planner's status; *json (caller frees) the plan's
   JSON with its planning time zeroed. */
static int plan_once(const planner *pl, const graph_profile *g, int64_t budget, int threads,
                     plan **out, char **json, sw_err *e)
{
    planner_opts o;
    planner_opts_init(&o, pl);
    o.memory_budget = budget;
    o.seed = 7;
    o.threads = threads;
    /* a backstop only: every search below stops on generations or nodes, so
       that the two runs agree whatever the load (a time share can run out
       first under the sanitizers on a busy machine) */
    o.time_budget_s = 3600;
    sw_err ignore;
    /* only for planners that declare them; others report unknown keys, ignored */
    params_set(&o.params, "generations", "2", &ignore);
    params_set(&o.params, "population", "6", &ignore);
    /* exact solvers (optimal-remat) are held to graphs they solve in seconds */
    params_set(&o.params, "max_ops", "24", &ignore);
    /* and to a node limit, so that two runs stop at the same incumbent
       whatever the machine's load (a time limit does not) */
    params_set(&o.params, "max_nodes", "300", &ignore);
    int rc = planner_run(pl, g, &o, out, e);
    planner_opts_free(&o);
    *json = NULL;
    if (!rc) {
        (*out)->planning_time_s = 0;
        sw_buf b;
        sw_buf_init(&b);
        plan_to_json(*out, &b);
        *json = b.data;
    }
    return rc;
}

static void conform(const planner *pl, const graph_profile *g, const char *gname, double frac,
                    int64_t peak)
{
    int64_t budget = (int64_t)((double)peak * frac);
    plan *p1 = NULL, *p2 = NULL;
    char *j1 = NULL, *j2 = NULL;
    sw_err e;
    int rc = plan_once(pl, g, budget, 1, &p1, &j1, &e);
    if (rc == SW_EUNSUPPORTED && (pl->flags & PLANNER_SIZE_LIMIT)) {
        /* a planner with a size limit (the exact solvers' max_ops) may refuse the profile */
        OK(!strchr(e.msg, '\n'), "%s on %s at %.1fx: refuses a profile above its size limit in "
           "one line (%s)", pl->name, gname, frac, e.msg);
        return;
    }
    if (rc) {
        /* a roomy budget (2x the ideal peak) must always give a plan */
        OK(frac < 1.0 && (rc == SW_ENOFIT || rc == SW_EEXCEEDED) &&
           !strchr(e.msg, '\n'),
           "%s on %s at %.1fx: a plan, or a one-line refusal for a tight budget (%s)", pl->name,
           gname, frac, e.msg);
        return;
    }
    OK(1, "%s on %s at %.1fx: a plan", pl->name, gname, frac);
    IS_INT(plan_verify(p1, NULL, &e), 0, "%s on %s at %.1fx: the plan verifies (%s)", pl->name,
           gname, frac, e.msg);
    sim_result r;
    IS_INT(sim_plan(p1, NULL, NULL, &r, &e), 0, "%s on %s at %.1fx: simulates", pl->name, gname,
           frac);
    if (pl->flags & PLANNER_UNBOUNDED) { /* everything resident, whatever the budget */
        OK(p1->capacity + p1->workspace_reserve <= p1->budget,
           "%s on %s at %.1fx: unbounded by design; within the budget it records", pl->name,
           gname, frac);
        tap_skip(1, "an unbounded planner: not held to the budget it was given");
    } else {
        OK(p1->budget == budget && p1->capacity + p1->workspace_reserve <= budget,
           "%s on %s at %.1fx: arena %lld + reserve %lld within the budget %lld", pl->name,
           gname, frac, (long long)p1->capacity, (long long)p1->workspace_reserve,
           (long long)budget);
        OK(r.peak_memory_bytes <= budget, "%s on %s at %.1fx: simulated peak %lld within %lld",
           pl->name, gname, frac, (long long)r.peak_memory_bytes, (long long)budget);
    }
    rc = plan_once(pl, g, budget, 2, &p2, &j2, &e);
    OK(rc == 0 && j1 && j2 && strcmp(j1, j2) == 0,
       "%s on %s at %.1fx: the same plan with 1 and 2 threads", pl->name, gname, frac);
    plan_free(p1);
    plan_free(p2);
    sw_free(j1);
    sw_free(j2);
}

static const struct {
    const char *model, *name;
    const char *kv[3];
    int nkv;
} models[] = {{"random", "random-24", {"ops=24", "seed=3", "unit=1MiB"}, 3},
              {"random", "random-40", {"ops=40", "seed=11", "unit=1MiB"}, 3},
              {"chain", "chain-6", {"layers=6", "batch=8", "hidden=256"}, 3}};
static const double fracs[] = {2.0, 0.7};

static void registry(void)
{
    OK(planner_count() >= 9, "the registry lists the planners (%zu)", planner_count());
}

/* the user-facing lists name every registered planner */
static void docs_name_every_planner(void)
{
    static const char *lists[] = {"README.md", "docs/cli.md"};
    for (size_t l = 0; l < sizeof lists / sizeof lists[0]; l++) {
        char *text = NULL;
        size_t len;
        sw_err e;
        if (sw_read_file(lists[l], &text, &len, &e)) {
            OK(0, "read %s (%s)", lists[l], e.msg);
            continue;
        }
        for (size_t i = 0; i < planner_count(); i++) {
            char quoted[80];
            snprintf(quoted, sizeof quoted, "`%s`", planner_at(i)->name);
            OK(strstr(text, quoted) != NULL, "%s names the planner %s", lists[l],
               planner_at(i)->name);
        }
        sw_free(text);
    }
}

/* Every planner on models[m] at both budgets. */
static void conform_model(size_t m)
{
    graph_profile *g = NULL;
    sw_err e;
    int rc = cal_generate(models[m].model, models[m].kv, models[m].nkv, "v100", &g, &e);
    IS_INT(rc, 0, "generate %s (%s)", models[m].name, rc ? e.msg : "ok");
    if (rc)
        return;
    int64_t peak = 0;
    IS_INT(planner_ideal_peak(g, &peak, &e), 0, "%s: ideal peak", models[m].name);
    for (size_t i = 0; i < planner_count(); i++)
        for (size_t f = 0; f < sizeof fracs / sizeof fracs[0]; f++)
            conform(planner_at(i), g, models[m].name, fracs[f], peak);
    graph_free(g);
}

static void random24(void) { conform_model(0); }
static void random40(void) { conform_model(1); }
static void chain6(void) { conform_model(2); }

/* the command line: a one-byte budget is refused by every planner */
static void cli_one_byte_budget(void)
{
    if (!bin)
        return;
    graph_profile *g = NULL;
    sw_err e;
    if (cal_generate(models[0].model, models[0].kv, models[0].nkv, "v100", &g, &e)) {
        OK(0, "generate %s (%s)", models[0].name, e.msg);
        return;
    }
    char path[400], args[1200];
    snprintf(path, sizeof path, "%s/g.json", dir);
    OK(profile_write_file(g, path, &e) == 0, "write %s", models[0].name);
    for (size_t i = 0; i < planner_count(); i++) {
        if (planner_at(i)->flags & PLANNER_UNBOUNDED)
            continue;
        snprintf(args, sizeof args, "plan %s --planner %s --memory 1B --time-budget 5s "
                 "-o %s/p.json", path, planner_at(i)->name, dir);
        char what[128];
        snprintf(what, sizeof what, "%s: a one-byte budget through the CLI",
                 planner_at(i)->name);
        expect_fail(args, 1, NULL, what);
    }
    graph_free(g);
}

static const tap_test tests[] = {
    {"registry", registry},
    {"docs_name_every_planner", docs_name_every_planner},
    {"random24", random24},
    {"random40", random40},
    {"chain6", chain6},
    {"cli_one_byte_budget", cli_one_byte_budget},
};

int main(int argc, char **argv)
{
    bin = getenv("SWAPSIM_BIN");
    snprintf(dir, sizeof dir, "/tmp/swapsim-conformance-%d", (int)getpid());
    char cmd[600];
    snprintf(cmd, sizeof cmd, "mkdir -p %s", dir);
    if (system(cmd) != 0)
        tap_skip_all("cannot make a scratch directory");
    int rc = tap_run(tests, SW_ARRAY_LEN(tests), argc, argv);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "# could not remove %s\n", dir);
    return rc;
}
