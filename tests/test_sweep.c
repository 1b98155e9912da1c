/* test_sweep.c: swapsim sweep: budgets parsed (lists, ranges), the table,
   CSV and JSON written and agreeing with swapsim run, --fit's budget fits
   and the budget a tolerance below it does not, the largest batch fits and
   the next does not, and --batch refused on a recorded profile. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/json.h"
#include "../experiments/sweep.h"
#include "../planners/planner.h"
#include "../profiles/profile_io.h"
#include "cli_run.h"

static char profile[400]; /* a small generated model: resnet-18, batch 8 */

/* The JSON file dir/NAME parsed into d; its root, or NULL. */
static const json_value *read_json(json_doc *d, const char *name)
{
    char path[600], *text = NULL;
    size_t n;
    sw_err e;
    const json_value *v = NULL;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (sw_read_file(path, &text, &n, &e) || json_parse(d, text, n, path, 1, &v, &e))
        v = NULL;
    sw_free(text);
    return v;
}

static double num(const json_value *o, const char *key)
{
    const json_value *v = o ? json_get(o, key) : NULL;
    return v && v->type == JSON_NUMBER ? v->u.num.d : -1;
}

/* swapsim run at budget bytes: 0 fits (and *ntp its throughput), else the exit status */
static int run_at(const char *name, long long bytes, double *ntp)
{
    char args[800], *o = NULL;
    snprintf(args, sizeof args, "run %s --planner %s --memory %lldB --json", profile, name,
             bytes);
    int rc = sh(args, &o, NULL);
    if (!rc && ntp) {
        json_doc *d = json_doc_new();
        const json_value *v;
        sw_err e;
        *ntp = d && o && !json_parse(d, o, strlen(o), "run", 1, &v, &e)
                   ? num(v, "normalized_throughput") : -1;
        json_doc_free(d);
    }
    sw_free(o);
    return rc;
}

/* A range and a list expand into the budgets --memory FRACTION would give. */
static void test_budgets_parsed(void)
{
    graph_profile *g;
    sw_err e;
    int rc = profile_read_file(profile, &g, &e);
    IS_INT(rc, 0, "the profile reads");
    if (rc)
        return;
    sweep s;
    memset(&s, 0, sizeof s);
    s.g = g;
    rc = sweep_setup(&s, "dtr,odswap", "0.3x:1.0x:0.1x", "0.01x", NULL, &e);
    IS_INT(rc, 0, "0.3x:1.0x:0.1x parses");
    IS_INT(s.nb, 8, "0.3x to 1.0x by 0.1x: 8 budgets");
    IS_STR_HAS(s.labels[0], "0.3x", "the first is 0.3x");
    IS_STR_HAS(s.labels[7], "1x", "the last is 1x");
    int64_t want;
    planner_resolve_budget(g, "0.7x", &want, &e);
    IS_INT(s.budgets[4], want, "0.7x in the range is --memory 0.7x's bytes");
    IS_INT(s.tol, (int64_t)((double)s.ideal_peak * 0.01), "0.01x: a hundredth of the peak");
    rc = sweep_setup(&s, "all", "64MiB,0.5x,64MiB", NULL, NULL, &e);
    IS_INT(rc, 0, "a list of sizes and fractions parses");
    IS_INT(s.nb, 2, "a budget given twice counts once");
    OK(s.budgets[0] < s.budgets[1], "budgets in increasing order");
    OK(s.npl >= 8, "all: every planner that runs unattended (%d)", s.npl);
    IS_STR_HAS(s.skipped, "random", "all: the test planner left out, and said so");
    IS_STR_HAS(s.skipped, "ideal", "all: the reference left out, and said so");
    IS_INT(sweep_setup(&s, "dtr", "0.3x:1GiB:0.1x", NULL, NULL, &e), SW_EINVAL,
           "a range mixing units is refused");
    IS_STR_HAS(e.msg, "FROM:TO:STEP", "naming the form");
    IS_INT(sweep_setup(&s, "dtr", "1.0x:0.3x:0.1x", NULL, NULL, &e), SW_EINVAL,
           "a range running backwards is refused");
    IS_INT(sweep_setup(&s, "nope", "0.5x", NULL, NULL, &e), SW_ENOTFOUND,
           "an unknown planner is refused");
    graph_free(g);
}

/* The table, CSV and JSON, and their numbers are swapsim run's. */
static void test_grid_written(void)
{
    char args[800], *o = NULL, *err = NULL;
    snprintf(args, sizeof args, "sweep %s --planner odswap,dtr,sublinear --memory 0.6x:1.0x:0.2x "
             "--threads 2 --cache cache --out g", profile);
    int rc = sh(args, &o, &err);
    IS_INT(rc, 0, "sweep runs: %s", err ? err : "");
    IS_STR_HAS(o, "budget", "a table header");
    IS_STR_HAS(o, "0.8x", "a row per budget");
    IS_STR_HAS(o, "sublinear", "a column per planner");
    IS_STR_HAS(o, "bound", "the bound beside them");
    char *csv = NULL;
    size_t n;
    sw_err e;
    char path[600];
    snprintf(path, sizeof path, "%s/g.csv", dir);
    OK(!sw_read_file(path, &csv, &n, &e), "the CSV is written");
    IS_INT(lines(csv), 1 + 3 * 4, "a header and a row per cell (3 budgets x (bound + 3))");
    sw_free(csv);
    json_doc *d = json_doc_new();
    const json_value *v = read_json(d, "g.json");
    OK(v && v->type == JSON_OBJECT, "the JSON parses");
    const json_value *cells = v ? json_get(v, "cells") : NULL;
    IS_INT(cells ? cells->n : 0, 12, "12 cells in the JSON");
    int compared = 0, agree = 0;
    for (uint32_t i = 0; cells && i < cells->n; i++) {
        const json_value *c = &cells->u.items[i];
        const json_value *pl = json_get(c, "planner"), *fits = json_get(c, "fits");
        if (!pl || !strcmp(pl->u.str, "bound") || !fits || fits->type != JSON_TRUE)
            continue;
        double ntp = -1;
        compared++;
        agree += !run_at(pl->u.str, (long long)num(c, "budget_bytes"), &ntp) &&
                 ntp == num(c, "normalized_throughput");
    }
    OK(compared >= 3, "some planners fit somewhere (%d cells)", compared);
    IS_INT(agree, compared, "every fitting cell is what swapsim run gives");
    json_doc_free(d);
    snprintf(path, sizeof path, "%s/g.png", dir);
    if (system("command -v gnuplot > /dev/null 2>&1") == 0)
        OK(access(path, R_OK) == 0, "the plot (gnuplot is here)");
    else
        tap_skip(1, "gnuplot is not installed");
    sw_free(o);
    sw_free(err);
}

/* --fit: each budget found fits, and the budget a tolerance below does not;
   none, which needs more than the ideal peak under first-fit, is found
   above the grid (below the device's memory). */
static void test_fit(void)
{
    char args[800], *err = NULL;
    snprintf(args, sizeof args, "sweep %s --planner odswap,dtr,sublinear,none --memory 0.5x,1.0x "
             "--fit --fit-tol 0.02x --threads 2 --cache cache --out f --json", profile);
    int rc = sh(args, NULL, &err);
    IS_INT(rc, 0, "sweep --fit runs: %s", err ? err : "");
    sw_free(err);
    json_doc *d = json_doc_new();
    const json_value *v = read_json(d, "f.json"), *fit = v ? json_get(v, "fit") : NULL;
    const json_value *pls = fit ? json_get(fit, "planners") : NULL;
    OK(pls && pls->n == 4, "a fit per planner");
    long long tol = (long long)num(fit, "tolerance_bytes");
    OK(tol > 0 && (double)tol <= 0.02 * num(v, "ideal_peak_bytes") + 1, "the tolerance, in bytes");
    for (uint32_t i = 0; pls && i < pls->n; i++) {
        const json_value *p = &pls->u.items[i];
        const char *name = json_get(p, "planner")->u.str;
        long long b = (long long)num(p, "smallest_budget_bytes");
        if (b <= 0) {
            tap_skip(2, "the planner fits at no budget of the grid");
            continue;
        }
        IS_INT(run_at(name, b, NULL), 0, "%s fits at its budget (%lld bytes)", name, b);
        IS_INT(run_at(name, b - tol, NULL), 1, "%s does not fit at %lld bytes less", name, tol);
    }
    json_doc_free(d);
}

/* --batch: the largest batch fits, the next does not; a recorded trace is
   refused in one line. */
static void test_batch(void)
{
    char *err = NULL;
    int rc = sh("sweep --model resnet,depth=18 --batch 4:64 --memory 256MiB --planner "
                "odswap,dtr --threads 2 --cache cache --out b --json", NULL, &err);
    IS_INT(rc, 0, "sweep --batch runs: %s", err ? err : "");
    sw_free(err);
    json_doc *d = json_doc_new();
    const json_value *v = read_json(d, "b.json"), *lb = v ? json_get(v, "largest_batch") : NULL;
    const json_value *pls = lb ? json_get(lb, "planners") : NULL;
    OK(pls && pls->n == 2, "a largest batch per planner");
    for (uint32_t i = 0; pls && i < pls->n; i++) {
        const json_value *p = &pls->u.items[i];
        const char *name = json_get(p, "planner")->u.str;
        long long b = (long long)num(p, "largest_batch");
        OK(b >= 4 && b < 64, "%s: a batch inside the range (%lld)", name, b);
        OK(num(p, "samples_per_s") > 0, "%s: its samples/s", name);
        for (long long k = b; k <= b + 1 && b > 0; k++) {
            char args[600];
            snprintf(args, sizeof args, "model resnet --depth 18 --batch %lld -o p%lld.json", k,
                     k);
            sh(args, NULL, NULL);
            snprintf(args, sizeof args, "run p%lld.json --planner %s --memory 256MiB", k, name);
            IS_INT(sh(args, NULL, NULL), k == b ? 0 : 1, "%s at batch %lld: %s", name, k,
                   k == b ? "fits" : "does not");
        }
    }
    json_doc_free(d);
    const char *data = getenv("SWAPSIM_DATA");
    char args[1200];
    snprintf(args, sizeof args, "import pytorch %s/pytorch-traces/linear_et.json.gz "
             "%s/pytorch-traces/linear_kineto.json.gz -o rec.json", data ? data : "data",
             data ? data : "data");
    if (sh(args, NULL, NULL) != 0) {
        tap_skip(6, "the recorded PyTorch traces are absent (SWAPSIM_DATA)");
        return;
    }
    expect_fail("sweep rec.json --batch 16:512 --memory 16GiB --cache cache --out r", 1,
                "a recorded trace has one batch", "--batch on an imported profile");
    /* a recorded profile is swept as recorded: the cells (which read its copy in the
       cache) give what swapsim run gives on the file */
    char *o = NULL;
    IS_INT(sh("sweep rec.json --planner odswap,dtr --memory 0.7x,1x --cache cache --out r --json",
              &o, NULL), 0, "a recorded profile sweeps");
    json_doc *dr = json_doc_new();
    const json_value *rv = NULL, *cells;
    sw_err e;
    if (o && !json_parse(dr, o, strlen(o), "sweep", 1, &rv, &e))
        cells = json_get(rv, "cells");
    else
        cells = NULL;
    int fits = 0, agree = 0;
    for (uint32_t i = 0; cells && i < cells->n; i++) {
        const json_value *c = &cells->u.items[i], *f = json_get(c, "fits");
        const char *pl = json_get(c, "planner")->u.str;
        if (!strcmp(pl, "bound") || !f || f->type != JSON_TRUE)
            continue;
        char a2[300], *ro = NULL;
        snprintf(a2, sizeof a2, "run rec.json --planner %s --memory %.0fB --json", pl,
                 num(c, "budget_bytes"));
        fits++;
        if (sh(a2, &ro, NULL) == 0 && ro) {
            json_doc *d1 = json_doc_new();
            const json_value *x;
            agree += !json_parse(d1, ro, strlen(ro), "run", 1, &x, &e) &&
                     num(x, "normalized_throughput") == num(c, "normalized_throughput");
            json_doc_free(d1);
        }
        sw_free(ro);
    }
    OK(fits >= 1, "some cells fit (%d)", fits);
    IS_INT(agree, fits, "each is swapsim run's on the recorded file");
    json_doc_free(dr);
    sw_free(o);
}

static void test_bad_input(void)
{
    char args[800];
    snprintf(args, sizeof args, "sweep %s --memory 0.3x:1GiB:0.1x --out x", profile);
    expect_fail(args, 1, "FROM:TO:STEP", "a range mixing units");
    snprintf(args, sizeof args, "sweep %s --planner dtr,nope --out x", profile);
    expect_fail(args, 1, "unknown planner 'nope'", "an unknown planner");
    snprintf(args, sizeof args, "sweep %s --out /nonexistent-dir/x", profile);
    expect_fail(args, 1, "/nonexistent-dir/x.csv", "an output that cannot be written, at once");
    snprintf(args, sizeof args, "sweep %s --out %.*s", profile, (int)strlen(profile) - 5,
             profile);
    expect_fail(args, 1, "would overwrite the profile", "an output over the profile");
    expect_fail("sweep --model resnet,depth=18 --batch 4:64 --fit --cache cache --out x", 1,
                "--fit and --batch", "--fit with --batch");
    expect_fail("sweep --model resnet,depth=18 --batch 64:4 --cache cache --out x", 1,
                "LO:HI", "a batch range running backwards");
}

static const tap_test tests[] = {
    {"budgets_parsed", test_budgets_parsed},
    {"grid_written", test_grid_written},
    {"fit", test_fit},
    {"batch", test_batch},
    {"bad_input", test_bad_input},
};

int main(int argc, char **argv)
{
    cli_open("sweep");
    snprintf(profile, sizeof profile, "%s/r18.json", dir);
    char args[600];
    snprintf(args, sizeof args, "model resnet --depth 18 --batch 8 -o %s", profile);
    if (sh(args, NULL, NULL) != 0)
        tap_skip_all("swapsim model failed");
    int rc = tap_run(tests, SW_ARRAY_LEN(tests), argc, argv);
    if (cli_close())
        printf("# could not remove %s\n", dir);
    return rc;
}
