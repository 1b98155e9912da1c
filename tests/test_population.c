/* test_population.c: swapadvisor's dump_population (the plans of the GA's
   final population, for the paper's Figure 11): N plan files, each safe,
   all distinct, ranked by simulated time, the same bytes for the same seed
   whatever the thread count, and a bad directory reported; one named test
   each (tap_run). */
#include <stdio.h>
#include <unistd.h>

#include "../planners/planner.h"
#include "../sim/plan_io.h"
#include "../sim/simulate.h"
#include "../sim/verify.h"
#include "fixtures.h"
#include "random_plans.h"
#include "tap.h"

static char base[256];

/* plan g with swapadvisor, dumping into dir; returns the planner's status */
static int run(const graph_profile *g, int64_t budget, int threads, const char *dir,
               const char *count, const char *pick, sw_err *e)
{
    const planner *pl = planner_find("swapadvisor");
    planner_opts o;
    planner_opts_init(&o, pl);
    o.memory_budget = budget;
    o.threads = threads;
    o.seed = 5;
    char kv[512];
    params_set_kv(&o.params, "generations=4", e);
    params_set_kv(&o.params, "population=12", e);
    snprintf(kv, sizeof kv, "dump_population=%s", dir);
    params_set_kv(&o.params, kv, e);
    snprintf(kv, sizeof kv, "dump_count=%s", count);
    params_set_kv(&o.params, kv, e);
    snprintf(kv, sizeof kv, "dump_pick=%s", pick);
    params_set_kv(&o.params, kv, e);
    plan *q = NULL;
    int rc = planner_run(pl, g, &o, &q, e);
    plan_free(q);
    planner_opts_free(&o);
    return rc;
}

static char *slurp(const char *dir, int i, size_t *len)
{
    char path[600];
    snprintf(path, sizeof path, "%s/individual-%02d.plan.json", dir, i);
    char *t = NULL;
    sw_err e;
    if (sw_read_file(path, &t, len, &e))
        return NULL;
    return t;
}

static void check_dir(const char *dir, int n, const char *what)
{
    char *text[16] = {0};
    size_t len[16] = {0};
    int safe = 0, read = 0;
    double t[16] = {0};
    for (int i = 1; i <= n; i++) {
        text[i - 1] = slurp(dir, i, &len[i - 1]);
        plan *p = NULL;
        sw_err e;
        if (!text[i - 1] || plan_read_text(text[i - 1], len[i - 1], "dumped", &p, &e))
            continue;
        read++;
        safe += plan_verify(p, NULL, &e) == 0;
        sim_result r;
        if (!sim_plan(p, NULL, NULL, &r, &e))
            t[i - 1] = r.iteration_time_s;
        plan_free(p);
    }
    IS_INT(read, n, "%s: %d plan files read back", what, n);
    IS_INT(safe, n, "%s: every one verifies", what);
    int distinct = 1, ranked = 1;
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++) {
            if (text[i] && text[j] && len[i] == len[j] && !memcmp(text[i], text[j], len[i]))
                distinct = 0;
            if (t[j] < t[i])
                ranked = 0;
        }
    OK(distinct, "%s: all distinct", what);
    OK(ranked, "%s: in order of simulated time", what);
    char *extra = slurp(dir, n + 1, &len[15]);
    OK(!extra, "%s: no more than %d files", what, n);
    sw_free(extra);
    for (int i = 0; i < n; i++)
        sw_free(text[i]);
}

static int same_files(const char *a, const char *b, int n)
{
    for (int i = 1; i <= n; i++) {
        size_t la, lb;
        char *x = slurp(a, i, &la), *y = slurp(b, i, &lb);
        int same = x && y && la == lb && !memcmp(x, y, la);
        sw_free(x);
        sw_free(y);
        if (!same)
            return 0;
    }
    return 1;
}

/* The profile and budget every test plans (momentum, 40 ops, 0.6x the ideal
   peak); caller frees. */
static graph_profile *profile(int64_t *budget)
{
    graph_profile *g = random_profile(4, 40, "momentum");
    int64_t peak = 0;
    sw_err e;
    planner_ideal_peak(g, &peak, &e);
    *budget = peak * 6 / 10;
    return g;
}

static void path_of(char *out, size_t n, const char *name)
{
    snprintf(out, n, "%s/%s", base, name);
}

/* base/one: 5 plans picked by spread, 1 thread; made when missing */
static int spread_dump(const graph_profile *g, int64_t budget, sw_err *e)
{
    char d1[300];
    path_of(d1, sizeof d1, "one");
    return run(g, budget, 1, d1, "5", "spread", e);
}

static void spread(void)
{
    int64_t budget;
    graph_profile *g = profile(&budget);
    sw_err e;
    char d1[300];
    path_of(d1, sizeof d1, "one");
    int rc = spread_dump(g, budget, &e);
    IS_INT(rc, 0, "swapadvisor with dump_population runs %s", rc ? e.msg : "");
    check_dir(d1, 5, "spread, 5");
    graph_free(g);
}

/* again into the same directory (the options name it), the first run's
   files moved aside */
static void same_seed_same_files(void)
{
    int64_t budget;
    graph_profile *g = profile(&budget);
    sw_err e;
    char d1[300], d2[300];
    path_of(d1, sizeof d1, "one");
    path_of(d2, sizeof d2, "two");
    if (access(d1, F_OK) != 0 && spread_dump(g, budget, &e))
        printf("# %s\n", e.msg);
    OK(rename(d1, d2) == 0, "the first run's files are moved aside");
    int rc = run(g, budget, 2, d1, "5", "spread", &e);
    IS_INT(rc, 0, "again with 2 threads %s", rc ? e.msg : "");
    OK(same_files(d1, d2, 5), "the same five files, byte for byte, for the same seed");
    graph_free(g);
}

static void best(void)
{
    int64_t budget;
    graph_profile *g = profile(&budget);
    sw_err e;
    char d1[300], d3[300];
    path_of(d1, sizeof d1, "one");
    path_of(d3, sizeof d3, "best");
    if (access(d1, F_OK) != 0 && spread_dump(g, budget, &e))
        printf("# %s\n", e.msg);
    int rc = run(g, budget, 1, d3, "3", "best", &e);
    IS_INT(rc, 0, "dump_pick=best runs %s", rc ? e.msg : "");
    check_dir(d3, 3, "best, 3");
    size_t l1, l3;
    char *a = slurp(d1, 1, &l1), *b = slurp(d3, 1, &l3);
    OK(a && b && strstr(a, "rank 1 of") && strstr(b, "rank 1 of"),
       "both picks start with the best (rank 1)");
    sw_free(a);
    sw_free(b);
    graph_free(g);
}

static void every_plan(void)
{
    int64_t budget;
    graph_profile *g = profile(&budget);
    sw_err e;
    char d4[300];
    path_of(d4, sizeof d4, "all");
    int rc = run(g, budget, 1, d4, "0", "best", &e);
    IS_INT(rc, 0, "dump_count=0 runs %s", rc ? e.msg : "");
    int n = 0;
    for (size_t l; n < 12; n++) {
        char *t = slurp(d4, n + 1, &l);
        if (!t)
            break;
        sw_free(t);
    }
    OK(n >= 5 && n <= 12, "dump_count=0 writes every distinct plan (%d of a population of 12)", n);
    check_dir(d4, n, "all");
    graph_free(g);
}

static void bad_directory(void)
{
    int64_t budget;
    graph_profile *g = profile(&budget);
    sw_err e;
    int rc = run(g, budget, 1, "/nonexistent/deeper/dir", "5", "spread", &e);
    IS_INT(rc, SW_EIO, "a directory that cannot be made is an error");
    IS_STR_HAS(e.msg, "/nonexistent/deeper/dir", "naming it");
    graph_free(g);
}

static const tap_test tests[] = {
    {"spread", spread},
    {"same_seed_same_files", same_seed_same_files},
    {"best", best},
    {"every_plan", every_plan},
    {"bad_directory", bad_directory},
};

int main(int argc, char **argv)
{
    snprintf(base, sizeof base, "/tmp/swapsim-population-%d", (int)getpid());
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf %s && mkdir -p %s", base, base);
    if (system(cmd) != 0)
        tap_skip_all("cannot create a scratch directory");
    int rc = tap_run(tests, SW_ARRAY_LEN(tests), argc, argv);
    snprintf(cmd, sizeof cmd, "%s rm -rf %s", getenv("KEEP") ? "true" : "", base);
    if (system(cmd) != 0)
        printf("# could not remove %s\n", base);
    return rc;
}
