/* test_cli.c: the swapsim command line end to end: exit codes, one-line
   errors, the documented JSON fields, traces, determinism; one named test
   each (tap_run). */
#include "../common/json.h"
#include "cli_run.h"
#include "tap.h"

static const json_value *parse_json(json_doc *d, const char *text)
{
    const json_value *v = NULL;
    sw_err e;
    json_doc_reset(d);
    if (!text || json_parse(d, text, strlen(text), "output", 1, &v, &e)) {
        printf("# bad JSON: %s\n", text ? e.msg : "(none)");
        return NULL;
    }
    return v;
}

/* r.json (a random profile) and p.json (a plan for it) in the scratch
   directory, made when missing, for the tests that start from them (each can
   run alone) */
static void need_profile(void)
{
    char path[512], args[1024];
    snprintf(path, sizeof path, "%s/r.json", dir);
    if (access(path, F_OK) == 0)
        return;
    snprintf(args, sizeof args, "model random --ops 30 --seed 3 -o %s/r.json", dir);
    if (sh(args, NULL, NULL) != 0)
        printf("# could not make r.json\n");
}

static void need_plan(void)
{
    char path[512], args[1024];
    need_profile();
    snprintf(path, sizeof path, "%s/p.json", dir);
    if (access(path, F_OK) == 0)
        return;
    snprintf(args, sizeof args, "plan %s/r.json --planner none --memory 2x -o %s/p.json", dir, dir);
    if (sh(args, NULL, NULL) != 0)
        printf("# could not make p.json\n");
}

static void help_and_usage(void)
{
    char args[1024], *o = NULL;
    IS_INT(sh("--help", &o, NULL), 0, "--help exits 0");
    IS_STR_HAS(o, "usage: swapsim", "--help prints usage");
    sw_free(o);
    const char *cmds[] = {"devices", "planners", "models", "model", "stats", "plan",
                          "simulate", "verify", "run"};
    int helps = 0;
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        snprintf(args, sizeof args, "%s --help", cmds[i]);
        o = NULL;
        helps += sh(args, &o, NULL) == 0 && o && strstr(o, "usage: swapsim") != NULL;
        sw_free(o);
    }
    IS_INT(helps, 9, "every command has --help");
    expect_fail("frobnicate", 2, "unknown command", "unknown command");
    expect_fail("run", 2, "expected one PROFILE", "missing profile");
    expect_fail("devices --bogus", 2, "unknown option", "unknown option");
}

/* generate, stats */
static void model_and_stats(void)
{
    char args[1024], *o = NULL;
    json_doc *d = json_doc_new();
    snprintf(args, sizeof args, "model random --ops 30 --seed 3 -o %s/r.json", dir);
    IS_INT(sh(args, NULL, NULL), 0, "model random writes a profile");
    snprintf(args, sizeof args, "stats %s/r.json --json", dir);
    o = NULL;
    IS_INT(sh(args, &o, NULL), 0, "stats --json");
    const json_value *v = parse_json(d, o);
    const char *stat_fields[] = {"peak_memory_bytes", "total_tensor_bytes", "parameter_bytes",
                                 "operators", "distinct_tensor_sizes"};
    int have = 0;
    for (size_t i = 0; i < 5; i++)
        have += json_get(v, stat_fields[i]) != NULL;
    IS_INT(have, 5, "stats reports the documented fields");
    sw_free(o);
    snprintf(args, sizeof args, "model random --ops 30 --bogus 3 -o %s/x.json", dir);
    expect_fail(args, 1, "unknown option 'bogus'", "unknown generator option");
    expect_fail("model nosuch -o /dev/null", 1, "unknown model", "unknown model");
    json_doc_free(d);
}

/* run with ideal and none: documented JSON */
static void run_json_fields(void)
{
    need_profile();
    char args[1024], *o = NULL;
    json_doc *d = json_doc_new();
    const char *fields[] = {"iteration_time_s", "ideal_time_s", "normalized_throughput",
                            "samples_per_s", "peak_memory_bytes", "swap_in_bytes",
                            "swap_out_bytes", "recompute_time_s", "planner",
                            "memory_budget_bytes", "seed"};
    const char *planners[] = {"ideal", "none"};
    for (int i = 0; i < 2; i++) {
        snprintf(args, sizeof args, "run %s/r.json --planner %s --json", dir, planners[i]);
        o = NULL;
        IS_INT(sh(args, &o, NULL), 0, "run --planner %s", planners[i]);
        const json_value *v = parse_json(d, o);
        int have = 0;
        for (size_t k = 0; k < sizeof fields / sizeof fields[0]; k++)
            have += json_get(v, fields[k]) != NULL;
        IS_INT(have, (int)(sizeof fields / sizeof fields[0]), "%s: every documented field", planners[i]);
        const json_value *nt = json_get(v, "normalized_throughput");
        OK(nt && fabs(nt->u.num.d - 1) < 1e-9, "%s: runs at ideal speed", planners[i]);
        sw_free(o);
    }
    json_doc_free(d);
}

static void run_errors(void)
{
    need_profile();
    char args[1024];
    snprintf(args, sizeof args, "run %s/r.json --planner none --memory 0.5x", dir);
    expect_fail(args, 1, "does not fit: needs", "none under half the peak");
    snprintf(args, sizeof args, "run %s/r.json --planner magic", dir);
    expect_fail(args, 1, "unknown planner 'magic'", "unknown planner");
    snprintf(args, sizeof args, "run %s/r.json --planner none --memory 12XB", dir);
    expect_fail(args, 1, "swapsim run: --memory: expected a size like 16G or 0.4x, got '12XB'",
                "bad size");
    snprintf(args, sizeof args, "run %s/r.json --planner none --set nope=1", dir);
    expect_fail(args, 1, "unknown option 'nope'", "unknown hyperparameter");
    snprintf(args, sizeof args, "run %s/r.json --planner none --device tpu", dir);
    expect_fail(args, 1, "unknown device 'tpu'", "unknown device");
}

/* sizes */
static void memory_sizes(void)
{
    need_profile();
    char args[1024], *o = NULL;
    json_doc *d = json_doc_new();
    snprintf(args, sizeof args, "run %s/r.json --planner ideal --memory 16GiB --json", dir);
    o = NULL;
    sh(args, &o, NULL);
    const json_value *v = parse_json(d, o);
    const json_value *mb = json_get(v, "memory_budget_bytes");
    OK(mb != NULL, "budget reported");
    sw_free(o);
    snprintf(args, sizeof args, "run %s/r.json --planner none --memory 16G --json", dir);
    o = NULL;
    sh(args, &o, NULL);
    v = parse_json(d, o);
    mb = json_get(v, "memory_budget_bytes");
    IS_INT(mb ? mb->u.num.i : 0, 17179869184LL, "16G is 16 GiB");
    sw_free(o);
    json_doc_free(d);
}

/* trace */
static void trace(void)
{
    need_profile();
    char args[1024];
    json_doc *d = json_doc_new();
    snprintf(args, sizeof args, "run %s/r.json --planner none --memory 1.5x --trace %s/t.json", dir, dir);
    IS_INT(sh(args, NULL, NULL), 0, "run with --trace");
    char path[512], *text = NULL;
    size_t len;
    sw_err er;
    snprintf(path, sizeof path, "%s/t.json", dir);
    sw_read_file(path, &text, &len, &er);
    const json_value *v = parse_json(d, text);
    const json_value *ev = json_get(v, "traceEvents");
    int x_events = 0, counters = 0, names = 0;
    for (uint32_t i = 0; ev && i < ev->n; i++) {
        const json_value *ph = json_get(&ev->u.items[i], "ph");
        if (ph && !strcmp(ph->u.str, "X") && json_get(&ev->u.items[i], "ts") &&
            json_get(&ev->u.items[i], "dur"))
            x_events++;
        if (ph && !strcmp(ph->u.str, "C"))
            counters++;
        if (ph && !strcmp(ph->u.str, "M"))
            names++;
    }
    OK(ev && ev->type == JSON_ARRAY, "trace is a Chrome trace object with traceEvents");
    OK(x_events > 0 && counters > 0 && names >= 4, "trace has task slices (%d), a memory counter "
       "(%d) and track names (%d)", x_events, counters, names);
    sw_free(text);
    json_doc_free(d);
}

/* plan, verify, simulate; determinism */
static void plan_verify_simulate(void)
{
    need_profile();
    char args[1024], *o = NULL, path[512], *text = NULL;
    size_t len;
    sw_err er;
    snprintf(args, sizeof args, "plan %s/r.json --planner none --memory 2x -o %s/p.json", dir, dir);
    IS_INT(sh(args, NULL, NULL), 0, "plan writes a plan");
    snprintf(args, sizeof args, "verify %s/p.json", dir);
    o = NULL;
    IS_INT(sh(args, &o, NULL), 0, "verify accepts it");
    IS_STR_HAS(o, "safe", "verify says safe");
    sw_free(o);
    /* a budget from outside replaces the plan's own: the plan was made for 2x
       the ideal peak; its arena holds at least the peak, so it cannot fit 0.5x */
    snprintf(args, sizeof args, "verify %s/p.json --memory 2x", dir);
    IS_INT(sh(args, NULL, NULL), 0, "verify --memory at the plan's own budget accepts it");
    snprintf(args, sizeof args, "verify %s/p.json --memory 0.5x", dir);
    expect_fail(args, 1, "capacity exceeded", "verify --memory 0.5x rejects a plan made for 2x");
    snprintf(args, sizeof args, "verify %s/p.json --memory 12parsecs", dir);
    expect_fail(args, 1, "--memory", "verify --memory with a bad size");
    /* the plan's budget and arena both raised by hand: it still verifies on its
       own word, but not against the budget given from outside */
    snprintf(path, sizeof path, "%s/p.json", dir);
    sw_read_file(path, &text, &len, &er);
    snprintf(path, sizeof path, "%s/raised.json", dir);
    FILE *rf = fopen(path, "w");
    char *bud = text ? strstr(text, "\"budget_bytes\":") : NULL;
    char *capb = text ? strstr(text, "\"capacity_bytes\":") : NULL;
    if (rf && bud && capb && bud < capb) {
        fwrite(text, 1, (size_t)(bud - text), rf);
        fputs("\"budget_bytes\":1000000000000", rf);
        char *r1 = bud + strcspn(bud, ",}");
        fwrite(r1, 1, (size_t)(capb - r1), rf);
        fputs("\"capacity_bytes\":900000000000", rf);
        fputs(capb + strcspn(capb, ",}"), rf);
    }
    if (rf)
        fclose(rf);
    sw_free(text);
    text = NULL;
    snprintf(args, sizeof args, "verify %s/raised.json", dir);
    IS_INT(sh(args, NULL, NULL), 0, "a plan with budget and arena raised passes on its own word");
    snprintf(args, sizeof args, "verify %s/raised.json --memory 2x", dir);
    expect_fail(args, 1, "capacity exceeded", "verify --memory catches the raised plan");
    snprintf(args, sizeof args, "simulate %s/p.json --json", dir);
    char *o1 = NULL, *o2 = NULL;
    sh(args, &o1, NULL);
    sh(args, &o2, NULL);
    OK(o1 && o2 && !strcmp(o1, o2), "simulate twice: same bytes of output");
    sw_free(o1);
    sw_free(o2);
}

/* a broken plan file: strip the deps from the text */
static void unsafe_plan_refused(void)
{
    need_plan();
    char args[1024], path[512], *text = NULL;
    size_t len;
    sw_err er;
    snprintf(path, sizeof path, "%s/p.json", dir);
    sw_read_file(path, &text, &len, &er);
    snprintf(args, sizeof args, "%s/bad.json", dir);
    FILE *f = fopen(args, "w");
    /* capacity 1 byte: every placement is outside the arena */
    char *cap = strstr(text, "\"capacity_bytes\":");
    if (cap && f) {
        fwrite(text, 1, (size_t)(cap - text), f);
        fputs("\"capacity_bytes\":1", f);
        char *rest = strchr(cap, '}');
        fputs(rest, f);
    }
    if (f)
        fclose(f);
    sw_free(text);
    snprintf(args, sizeof args, "verify %s/bad.json", dir);
    expect_fail(args, 1, "unsafe plan (capacity)", "verify rejects an edited plan");
    snprintf(args, sizeof args, "simulate %s/bad.json", dir);
    expect_fail(args, 1, "unsafe plan", "simulate refuses an unsafe plan");
}

/* malformed profile: one line naming file, line, column */
static void malformed_profile(void)
{
    char args[1024], path[512];
    snprintf(path, sizeof path, "%s/broken.json", dir);
    FILE *f = fopen(path, "w");
    if (f) {
        fputs("{\"tensors\": [\n  {\"bytes\": -3, \"kind\": \"activation\"}\n], \"ops\": []}\n", f);
        fclose(f);
    }
    snprintf(args, sizeof args, "stats %s", path);
    expect_fail(args, 1, "broken.json:2:13: at $.tensors[0].bytes", "negative size in a profile");
    snprintf(args, sizeof args, "stats %s/nothing.json", dir);
    expect_fail(args, 1, "cannot open", "missing profile file");
}

/* report: {{compare}} computes the comparison a sentence states, so that
   commentary cannot contradict its table (here: one cell ahead, one
   level, one behind, by hand) */
static void report_compare_csv(void)
{
    char path[512];
    snprintf(path, sizeof path, "%s/cmp.csv", dir);
    FILE *f = fopen(path, "w");
    if (f) {
        fputs("label,batch,planner,normalized_throughput,status\n"
              "W,16,sa,0.97,ok\nW,16,od,0.64,ok\nI,16,sa,1.00,ok\nI,16,od,1.00,ok\n"
              "N,64,sa,0.40,ok\nN,64,od,0.50,ok\nR,8,sa,0.90,ok\nR,8,od,0.10,failed\n", f);
        fclose(f);
    }
}

static void report_compare(void)
{
    char args[1024], path[512], *o = NULL;
    report_compare_csv();
    snprintf(path, sizeof path, "%s/cmp.in", dir);
    FILE *f = fopen(path, "w");
    if (f) {
        fputs("{{compare cmp.csv rows=label,batch cols=planner value=normalized_throughput "
              "a=sa b=od names=SA,OD}}.\n", f);
        fclose(f);
    }
    snprintf(args, sizeof args, "report %s/cmp.in --data %s", dir, dir);
    o = NULL;
    IS_INT(sh(args, &o, NULL), 0, "report with {{compare}}");
    IS_STR_HAS(o, "SA is ahead of OD (by more than 1%) in 1 of the 3 cells where both ran, "
               "level within 1% in 1 (I 16), behind in 1 (N 64); SA's throughput relative to OD "
               "ranges from -20% to +52%.", "compare: counts, cells and range from the CSV");
    sw_free(o);
}

/* report: {{compare}} with b=X|Y (against the best of several that ran) and
   big=10 (leads of 10% or more, and cells the others ran and A did not) */
static void report_compare_best(void)
{
    char args[1024], path[512], *o = NULL;
    /* by hand: W 0.92 vs the best 0.80, +15%; I level with sa, dt failed;
       N 0.50 vs dt's 0.70, -29%; R: hy failed */
    snprintf(path, sizeof path, "%s/best.csv", dir);
    FILE *f = fopen(path, "w");
    if (f) {
        fputs("label,planner,normalized_throughput,status\n"
              "W,hy,0.92,ok\nW,sa,0.80,ok\nW,dt,0.60,ok\nI,hy,1.00,ok\nI,sa,1.00,ok\n"
              "I,dt,0.30,failed\nN,hy,0.50,ok\nN,sa,0.40,ok\nN,dt,0.70,ok\nR,hy,0.90,failed\n"
              "R,sa,0.50,ok\nR,dt,0.40,ok\n", f);
        fclose(f);
    }
    snprintf(path, sizeof path, "%s/best.in", dir);
    f = fopen(path, "w");
    if (f) {
        fputs("{{compare best.csv rows=label cols=planner value=normalized_throughput "
              "a=hy b=sa|dt big=10 names=HY,best}}.\n", f);
        fclose(f);
    }
    snprintf(args, sizeof args, "report %s/best.in --data %s", dir, dir);
    o = NULL;
    IS_INT(sh(args, &o, NULL), 0, "report with {{compare}} against the best of two");
    IS_STR_HAS(o, "HY is ahead of best (by more than 1%) in 1 of the 3 cells where both ran, "
               "level within 1% in 1 (I), behind in 1 (N); HY's throughput relative to best "
               "ranges from -29% to +15%; HY leads by 10% or more in 1 of the 3 cells; best ran "
               "in 1 cell where HY did not.", "compare b=X|Y big=10: best of the two, big leads");
    sw_free(o);
}

/* report: {{compare}} and {{number}} with stat=max: a column grouping
   several planners (a family) compared by its best row, not the mean. By
   hand: W swap 0.90 (best of 0.90, 0.30; mean 0.60) vs recompute 0.80:
   +12.5% (the mean would be -25%); N swap 0.40 vs recompute 0.50 (best of
   0.50, 0.20): -20%. number pick=max over swap: 0.90 at W. */
static void report_compare_stat_max(void)
{
    char args[1024], path[512], *o = NULL;
    snprintf(path, sizeof path, "%s/fam.csv", dir);
    FILE *f = fopen(path, "w");
    if (f) {
        fputs("label,family,normalized_throughput,status\n"
              "W,swap,0.90,ok\nW,swap,0.30,ok\nW,recompute,0.80,ok\n"
              "N,swap,0.40,ok\nN,recompute,0.50,ok\nN,recompute,0.20,ok\n", f);
        fclose(f);
    }
    snprintf(path, sizeof path, "%s/fam.in", dir);
    f = fopen(path, "w");
    if (f) {
        fputs("{{compare fam.csv rows=label cols=family value=normalized_throughput stat=max "
              "a=swap b=recompute names=S,R}}. top {{number fam.csv rows=label cols=family "
              "value=normalized_throughput where=family:swap stat=max pick=max fmt=%.2f "
              "cell=1}}; mean {{number fam.csv rows=label cols=family "
              "value=normalized_throughput where=family:swap pick=max fmt=%.2f}}\n", f);
        fclose(f);
    }
    snprintf(args, sizeof args, "report %s/fam.in --data %s", dir, dir);
    IS_INT(sh(args, &o, NULL), 0, "report with stat=max");
    IS_STR_HAS(o, "S is ahead of R (by more than 1%) in 1 of the 2 cells where both ran, behind "
               "in 1 (N); S's throughput relative to R ranges from -20% to +12%",
               "compare stat=max: the best row of each family");
    IS_STR_HAS(o, "top 0.90 (W); mean 0.60", "number stat=max: the best row; default: the mean");
    sw_free(o);
}

/* report: {{number}} picks one cell or the extreme ratio over rows (by hand
   from cmp.csv, which report_compare writes: sa/od is 0.97/0.64 = 1.516 at
   W 16, 1.00 at I 16, 0.80 at N 64; R 8's od failed and does not count) */
static void put_text(const char *name, const char *text);

static void report_number(void)
{
    char args[1024], path[512], *o = NULL;
    report_compare_csv();
    snprintf(path, sizeof path, "%s/num.in", dir);
    FILE *f = fopen(path, "w");
    if (f) {
        fputs("max {{number cmp.csv rows=label,batch cols=planner value=normalized_throughput "
              "a=sa b=od pick=max fmt=%.3fx cell=1}}; min {{number cmp.csv rows=label,batch "
              "cols=planner value=normalized_throughput a=sa b=od pick=min fmt=%.2f}}; "
              "lowest sa {{number cmp.csv rows=label,batch cols=planner "
              "value=normalized_throughput where=planner:sa pick=min fmt=%.2f cell=1}}; "
              "scaled {{number cmp.csv rows=label value=normalized_throughput "
              "where=planner:sa pick=max scale=100 fmt=%.0f%%}}; "
              "{{number cmp.csv rows=label value=nothing pick=max}}\n", f);
        fclose(f);
    }
    snprintf(args, sizeof args, "report %s/num.in --data %s", dir, dir);
    o = NULL;
    IS_INT(sh(args, &o, NULL), 0, "report with {{number}}");
    IS_STR_HAS(o, "max 1.516x (W 16); min 0.80; lowest sa 0.40 (N 64); scaled 100%; *(not "
               "available:", "number: extreme cell and ratio from the CSV");
    sw_free(o);
    snprintf(path, sizeof path, "%s/num2.in", dir);
    f = fopen(path, "w");
    if (f) {
        fputs("{{number cmp.csv rows=label value=normalized_throughput}}\n", f);
        fclose(f);
    }
    snprintf(args, sizeof args, "report %s/num2.in --data %s", dir, dir);
    expect_fail(args, 1, "num2.in:1: {{number}} needs a CSV file and pick=min|max",
                "number without pick");
    /* FILE with a folder in it, absent under --data: read where it is (results
       committed with the repository); a bare name is looked for under --data only */
    char tpl[1200];
    snprintf(tpl, sizeof tpl, "{{number %s/cmp.csv rows=label value=normalized_throughput "
             "where=planner:sa pick=max scale=100 fmt=%%.0f%%%%}} and {{number cmp.csv "
             "rows=label value=normalized_throughput pick=max}}\n", dir);
    put_text("num3.in", tpl);
    snprintf(args, sizeof args, "report %s/num3.in --data %s/empty", dir, dir);
    o = NULL;
    IS_INT(sh(args, &o, NULL), 0, "report with a FILE outside --data");
    IS_STR_HAS(o, "100% and *(not available:", "number: FILE/with/folders read where it is, "
               "a bare FILE only under --data");
    sw_free(o);
}

static void put_text(const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

/* report: row labels holding a comma or a quote (quoted in the CSV) keep
   {{compare}} and {{number}} on their own cells (they were split at the
   comma, comparing the wrong columns) */
static void report_compare_quoted(void)
{
    char args[1024], *o = NULL;
    put_text("quoted.csv",
             "label,batch,planner,normalized_throughput,status\n"
             "\"Inc, relu=sep\",16,sa,0.995,ok\n\"Inc, relu=sep\",16,od,1.00,ok\n"
             "\"Inc, relu=sep\",64,sa,0.63,ok\n\"Inc, relu=sep\",64,od,0.45,ok\n"
             "\"a \"\"q\"\", b\",8,sa,0.50,ok\n\"a \"\"q\"\", b\",8,od,0.25,ok\n");
    put_text("quoted.in",
             "{{compare quoted.csv rows=label,batch cols=planner value=normalized_throughput "
             "a=sa b=od names=SA,OD}}.\n{{number quoted.csv rows=label,batch cols=planner "
             "value=normalized_throughput a=sa b=od pick=max fmt=%.2f cell=1}}\n");
    snprintf(args, sizeof args, "report %s/quoted.in --data %s", dir, dir);
    IS_INT(sh(args, &o, NULL), 0, "report with quoted labels");
    IS_STR_HAS(o, "SA is ahead of OD (by more than 1%) in 2 of the 3 cells where both ran, "
               "level within 1% in 1 (Inc, relu=sep 16); SA's throughput relative to OD ranges "
               "from -1% to +100%.", "compare: quoted labels keep their cells");
    IS_STR_HAS(o, "2.00 (a \"q\", b 8)", "number: the largest ratio and its quoted label");
    sw_free(o);
}

/* the start of field col of the CSV line at p (quoted fields skipped whole),
   or NULL past the line's end */
static const char *csv_at(const char *p, int col)
{
    for (int c = 0; c < col; c++) {
        int q = 0;
        for (; *p && (q || (*p != ',' && *p != '\n')); p++)
            q ^= *p == '"';
        if (*p != ',')
            return NULL;
        p++;
    }
    return p;
}

/* the CSV cell of row (1 = the first after the header) and column name, as
   a number (NAN where empty or missing) */
static double csv_num(const char *csv, int row, const char *name)
{
    if (!csv)
        return NAN;
    int col = -1;
    for (int c = 0; col < 0; c++) {
        const char *f = csv_at(csv, c);
        if (!f)
            return NAN;
        size_t l = strcspn(f, ",\n");
        if (l == strlen(name) && !strncmp(f, name, l))
            col = c;
    }
    const char *line = csv;
    for (int r = 0; r < row && line; r++)
        line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL;
    const char *f = line && *line ? csv_at(line, col) : NULL;
    if (!f)
        return NAN;
    char *e;
    double v = strtod(f, &e);
    return e == f ? NAN : v;
}

/* experiment files' "derive": columns from a reference cell (a ratio over
   it, or a copy of its field), "where" and first-match-wins, and errors that
   name the file and the place; a variable's value may name {data}/... */
static void experiment_derive(void)
{
    char args[1024], path[512], *o = NULL, *csv = NULL;
    put_text("d.json",
             "{\"name\": \"d\", \"profile\": [\"model\", \"random\", \"--ops\", \"12\", \"--seed\", "
             "\"{seed}\"],\n"
             " \"command\": [\"run\", \"{profile}\", \"--planner\", \"{planner}\", \"--memory\", "
             "\"{mem}\", \"--json\"],\n"
             " \"vars\": {\"seed\": [1, 2], \"mem\": [\"0.7x\"], \"planner\": [\"ideal\", \"none\", "
             "\"odswap\"]},\n"
             " \"derive\": [\n"
             "  {\"column\": \"slowdown\", \"ratio\": \"iteration_time_s\", \"over\": "
             "\"iteration_time_s\", \"from\": {\"planner\": \"ideal\"}, \"where\": {\"planner\": "
             "[\"odswap\", \"ideal\"]}},\n"
             "  {\"column\": \"slowdown\", \"copy\": \"status\", \"from\": {\"planner\": \"none\"}},\n"
             "  {\"column\": \"ideal_s\", \"copy\": \"iteration_time_s\", \"from\": {\"planner\": "
             "\"ideal\"}}]}\n");
    snprintf(args, sizeof args, "experiment %s/d.json --out %s/dout --jobs 1", dir, dir);
    IS_INT(sh(args, NULL, NULL), 0, "an experiment with derived columns runs");
    snprintf(path, sizeof path, "%s/dout/d.csv", dir);
    size_t n;
    sw_err e;
    if (sw_read_file(path, &csv, &n, &e))
        csv = NULL;
    OK(csv && strstr(csv, ",slowdown,ideal_s\n"), "the derived columns come last, once each");
    /* rows: seed 1 ideal, none, odswap; seed 2 ideal, none, odswap */
    for (int s = 0; s < 2; s++) {
        double ti = csv_num(csv, 3 * s + 1, "iteration_time_s");
        double to = csv_num(csv, 3 * s + 3, "iteration_time_s");
        double r = csv_num(csv, 3 * s + 3, "slowdown");
        OK(ti > 0 && to >= ti && fabs(r - to / ti) <= 1e-5 * r,
           "seed %d: odswap's slowdown is its time over ideal's in the same seed (%g / %g = %g)",
           s + 1, to, ti, r);
        IS_NUM(csv_num(csv, 3 * s + 1, "slowdown"), 1.0, 1e-12, "seed %d: ideal over itself", s + 1);
        IS_NUM(csv_num(csv, 3 * s + 3, "ideal_s"), ti, 1e-9 * ti, "seed %d: a copy of the "
               "reference's field", s + 1);
    }
    const char *row2 = csv ? strchr(csv, '\n') : NULL;
    row2 = row2 ? strchr(row2 + 1, '\n') : NULL; /* the end of row 1 */
    OK(row2 && !strncmp(row2 + 1, "1,0.7x,none,error,", 18) && strstr(row2, ",error,"),
       "none fails at 0.7x: an error row, and the copy fills its slowdown (first match wins)");
    sw_free(csv);
    /* errors: one line naming the file and the place */
    put_text("bad1.json", "{\"name\": \"b\", \"command\": [\"run\"], \"vars\": {\"p\": [\"a\"]},\n"
                          " \"derive\": [{\"column\": \"x\", \"copy\": \"y\", \"from\": {\"q\": "
                          "\"a\"}}]}\n");
    snprintf(args, sizeof args, "experiment %s/bad1.json --out %s/b1 --dry-run", dir, dir);
    expect_fail(args, 1, "'q' is not a variable field", "derive: from names no variable");
    o = NULL;
    sh(args, NULL, &o);
    OK(o && strstr(o, "bad1.json") && strstr(o, "derive") && !strchr(o, '\n')[1],
       "the error names the file and the place, in one line");
    sw_free(o);
    put_text("bad2.json", "{\"name\": \"b\", \"command\": [\"run\"], \"vars\": {\"p\": [\"a\"]},\n"
                          " \"derive\": [{\"column\": \"x\", \"ratio\": \"y\", \"from\": {\"p\": "
                          "\"a\"}}]}\n");
    snprintf(args, sizeof args, "experiment %s/bad2.json --out %s/b2 --dry-run", dir, dir);
    expect_fail(args, 1, "\"ratio\" and \"over\" go together", "derive: ratio without over");
    put_text("bad3.json", "{\"name\": \"b\", \"command\": [\"run\"], \"vars\": {\"p\": [\"a\"]},\n"
                          " \"derive\": [{\"column\": \"x\", \"from\": {\"p\": \"a\"}}]}\n");
    snprintf(args, sizeof args, "experiment %s/bad3.json --out %s/b3 --dry-run", dir, dir);
    expect_fail(args, 1, "expected one of \"copy\" or \"ratio\"", "derive: neither copy nor ratio");
    put_text("bad4.json", "{\"name\": \"b\", \"command\": [\"run\"], \"vars\": {\"p\": [\"a\"]},\n"
                          " \"derive\": [{\"column\": \"x\", \"copy\": \"y\", \"from\": {\"p\": \"a\"}, "
                          "\"where\": {\"p\": [\"a\", 3, \"b\"]}}]}\n");
    snprintf(args, sizeof args, "experiment %s/bad4.json --out %s/b4 --dry-run", dir, dir);
    expect_fail(args, 1, "expected a string or a non-empty list of strings",
                "derive: a where list with a number in it");
    /* {data} inside a variable's value */
    put_text("dv.json", "{\"name\": \"dv\", \"command\": [\"stats\", \"{f}\", \"--json\"], "
                        "\"vars\": {\"f\": [\"{data}/x.json\"]}}\n");
    snprintf(args, sizeof args, "experiment %s/dv.json --out %s/dv --dry-run --data /some/where",
             dir, dir);
    o = NULL;
    IS_INT(sh(args, &o, NULL), 0, "dry run of a value naming {data}");
    IS_STR_HAS(o, "stats /some/where/x.json --json", "{data} in a variable's value expands");
    sw_free(o);
    /* another variable inside a variable's value: a search's budget in one
       planner's options only (experiments' "--set generations={generations}") */
    put_text("nv.json", "{\"name\": \"nv\", \"command\": [\"run\", \"p\", \"{opts}\"], "
                        "\"vars\": {\"planner\": [{\"planner\": \"ga\", \"opts\": "
                        "\"--set generations={generations} --set x={nope}\"}, {\"planner\": "
                        "\"other\", \"opts\": \"\"}], \"generations\": {\"quick\": [7], "
                        "\"full\": [900]}}}\n");
    snprintf(args, sizeof args, "experiment %s/nv.json --out %s/nv --dry-run", dir, dir);
    o = NULL;
    IS_INT(sh(args, &o, NULL), 0, "dry run of a value naming another variable");
    IS_STR_HAS(o, "run p --set generations=7 --set x={nope}\n",
               "a variable in a variable's value expands (quick); an unknown name stays");
    IS_STR_HAS(o, "run p\n", "the other planner's empty options");
    sw_free(o);
    snprintf(args, sizeof args, "experiment %s/nv.json --out %s/nv --dry-run --full", dir, dir);
    o = NULL;
    IS_INT(sh(args, &o, NULL), 0, "dry run --full");
    IS_STR_HAS(o, "--set generations=900 ", "the full mode's value");
    sw_free(o);
}

/* report --check (make docs-check): a measured number typed into the prose
   is refused, with its line; the forms that are not measured figures pass;
   an --allow list holds the ones still typed in; a claim= the table
   contradicts is refused, one it bears out passes (cmp.csv by hand: sa is
   highest at I 16 (1.00), lowest at N 64 (0.40); sa/od is +51.6% at W 16,
   level at I 16, -20.0% at N 64, and R 8's od failed; a claim writes the
   space in a row of several columns as ~) */
static void report_check(void)
{
    char args[1024], *o = NULL;
    report_compare_csv();
    put_text("bare.in", "# Results\n\nOur ODSwap keeps ResNet-50 at batch 16 (Figure 6, section 4,\n"
                        "ASPLOS 2020) near the paper's (paper: 0.53) and `--memory 12GiB`,\n"
                        "mean and 95%\nconfidence interval (a 95% interval);\n"
                        "time sharing saturates near 243 samples/s.\n");
    snprintf(args, sizeof args, "report %s/bare.in --check --data %s", dir, dir);
    IS_INT(sh(args, &o, NULL), 1, "check: a bare measured number fails");
    IS_STR_HAS(o, "bare.in:7: time sharing saturates near 243 samples/s.: a measured number "
               "typed into the prose", "check: names the line and the number's context");
    IS_STR_HAS(o, " 1 bare numbers in the prose", "check: only that one (names, years, figure "
               "and section numbers, code, the paper's own are not measured figures)");
    sw_free(o);
    put_text("allow.txt", "# still typed in\ntime sharing saturates near 243 samples/s.\n");
    snprintf(args, sizeof args, "report %s/bare.in --check --data %s --allow %s/allow.txt", dir,
             dir, dir);
    o = NULL;
    IS_INT(sh(args, &o, NULL), 0, "check: a number the allow list holds passes");
    sw_free(o);
    put_text("claim.in", "{{argmax cmp.csv rows=label,batch value=normalized_throughput "
                         "where=planner:sa claim=I~16}} is fastest; "
                         "{{argmin cmp.csv rows=label,batch value=normalized_throughput "
                         "where=planner:sa claim=W~16}} is slowest.\n");
    snprintf(args, sizeof args, "report %s/claim.in --check --data %s", dir, dir);
    o = NULL;
    IS_INT(sh(args, &o, NULL), 1, "check: a false claim fails");
    IS_STR_HAS(o, "{{argmin}} claim=W 16 is false: the table gives N 64", "check: the false "
               "claim and what the table gives");
    IS_STR_HAS(o, "2 claims (1 false", "check: the true one counted as true");
    sw_free(o);
    put_text("within.in", "SA is level with OD except {{within cmp.csv rows=label,batch "
                          "cols=planner value=normalized_throughput a=sa b=od claim=N~64}}.\n"
                          "At a wide tolerance: {{within cmp.csv rows=label,batch cols=planner "
                          "value=normalized_throughput a=sa b=od tol=60 claim=none}}.\n");
    snprintf(args, sizeof args, "report %s/within.in --data %s", dir, dir);
    o = NULL;
    IS_INT(sh(args, &o, NULL), 0, "report with {{within}}");
    IS_STR_HAS(o, "except W 16 (+51.6%), N 64 (-20.0%) *(the template's claim, N 64, is false)*.",
               "within: the rows outside 1 percent with their differences; a false claim marked");
    IS_STR_HAS(o, "At a wide tolerance: none.", "within: none outside 60 percent");
    sw_free(o);
    snprintf(args, sizeof args, "report %s/within.in --check --data %s", dir, dir);
    o = NULL;
    IS_INT(sh(args, &o, NULL), 1, "check: a false {{within}} claim fails");
    IS_STR_HAS(o, "claim=N 64 is false: the table gives W 16|N 64", "check: within's rows");
    sw_free(o);
    /* {{compare}} claim=: what holds in every cell (W 16 ahead, I 16 level,
       N 64 behind) */
    put_text("cmpclaim.in", "{{compare cmp.csv rows=label,batch cols=planner "
                            "value=normalized_throughput a=sa b=od where=label:W claim=ahead}}; "
                            "{{compare cmp.csv rows=label,batch cols=planner "
                            "value=normalized_throughput a=sa b=od claim=not-behind}}.\n");
    snprintf(args, sizeof args, "report %s/cmpclaim.in --check --data %s", dir, dir);
    o = NULL;
    IS_INT(sh(args, &o, NULL), 1, "check: a false {{compare}} claim fails");
    IS_STR_HAS(o, "{{compare}} claim=not-behind is false: the table gives ahead in 1, level in "
               "1, behind in 1 of 3 cells", "check: compare's counts");
    IS_STR_HAS(o, "2 claims (1 false", "check: the true compare claim (W 16 ahead) holds");
    sw_free(o);
    /* a ~ in a where= value stands for a space (labels such as "ResNet-50 b128") */
    put_text("sp.csv", "label,planner,normalized_throughput\nR b1,sa,0.5\nR b1,od,0.25\n"
                       "V b2,sa,0.9\nV b2,od,0.3\n");
    put_text("sp.in", "{{number sp.csv rows=label cols=planner value=normalized_throughput "
                      "where=label:R~b1 a=sa b=od pick=max fmt=%.2f}}; {{compare sp.csv rows=label "
                      "cols=planner value=normalized_throughput where=label:V~b2 a=sa b=od "
                      "claim=ahead}}.\n");
    snprintf(args, sizeof args, "report %s/sp.in --check --data %s", dir, dir);
    o = NULL;
    IS_INT(sh(args, &o, NULL), 0, "check: where=label:R~b1 selects the label with a space");
    sw_free(o);
    snprintf(args, sizeof args, "report %s/sp.in --data %s", dir, dir);
    o = NULL;
    IS_INT(sh(args, &o, NULL), 0, "report with ~ in where=");
    IS_STR_HAS(o, "2.00; sa is ahead of od (by more than 1%) in 1 of the 1 cells", "where: R b1's "
               "ratio alone, V b2 alone in the comparison");
    sw_free(o);
    put_text("cmpbad.in", "{{compare cmp.csv rows=label,batch cols=planner "
                          "value=normalized_throughput a=sa b=od claim=best}}\n");
    snprintf(args, sizeof args, "report %s/cmpbad.in --data %s", dir, dir);
    expect_fail(args, 1, "cmpbad.in:1: {{compare}} claim=best: expected ahead", "check: an "
                "unknown compare claim is the template's error");
    snprintf(args, sizeof args, "report %s/within.in --check --data %s/nowhere", dir, dir);
    o = NULL;
    IS_INT(sh(args, &o, NULL), 0, "check: without the CSVs a claim is unchecked, not false");
    IS_STR_HAS(o, "2 claims (0 false, 2 unchecked", "check: counted as unchecked");
    sw_free(o);
}

/* report: {{device NAME FIELD}} writes a built-in device's figure from the
   simulator's table (the V100: 16 GiB, 12 GB/s each way, 20 GB/s both,
   10 us per copy; the 2080 Ti: 11 GiB); an unknown device or field, or a
   fmt= that is not one conversion of a number, is an error of the
   template, named */
static void report_device(void)
{
    char args[1024], *o = NULL;
    put_text("dev.in", "A {{device v100 memory}} GiB V100, {{device v100 h2d}} GB/s one way, "
                       "{{device v100 duplex fmt=%.1f}} GB/s both, {{device v100 latency}} us; "
                       "{{device rtx2080ti memory}} GiB.\n");
    snprintf(args, sizeof args, "report %s/dev.in --check --data %s", dir, dir);
    IS_INT(sh(args, &o, NULL), 0, "check: device figures are not typed-in numbers");
    IS_STR_HAS(o, " 0 bare numbers in the prose", "check: no bare number in device directives");
    sw_free(o);
    snprintf(args, sizeof args, "report %s/dev.in --data %s", dir, dir);
    o = NULL;
    IS_INT(sh(args, &o, NULL), 0, "report with {{device}}");
    IS_STR_HAS(o, "A 16 GiB V100, 12 GB/s one way, 20.0 GB/s both, 10 us; 11 GiB.",
               "device: the figures of the simulator's table");
    sw_free(o);
    put_text("dev2.in", "{{device v100 colour}}\n");
    snprintf(args, sizeof args, "report %s/dev2.in --data %s", dir, dir);
    expect_fail(args, 1, "dev2.in:1: {{device NAME FIELD [fmt=F]}}: expected a built-in device",
                "device: an unknown field");
    put_text("dev3.in", "{{device v100 memory fmt=%s}}\n");
    snprintf(args, sizeof args, "report %s/dev3.in --data %s", dir, dir);
    expect_fail(args, 1, "dev3.in:1: {{device", "device: a format that is not a number's");
    /* {{budget}}: an experiment file's setting (FILE is relative to the
       current directory; here an absolute path to the test's own file) */
    put_text("exp.json", "{\"name\": \"e\", \"command\": [\"run\", \"--set\", \"population=16\"], "
                         "\"vars\": {\"planner\": {\"quick\": [{\"planner\": \"a\", \"opts\": "
                         "\"--set max_nodes=200 --set x=1\"}, {\"planner\": \"b\", \"opts\": "
                         "\"--set max_nodes=500\"}], \"full\": [{\"planner\": \"b\", \"opts\": "
                         "\"--set max_nodes=5000\"}]}, \"seed\": [1, 2, 3], \"label\": "
                         "[\"a\"], \"generations\": {\"quick\": [40], \"full\": [400]}}}\n");
    char text[4096];
    snprintf(text, sizeof text, "{{budget %s/exp.json generations}} generations, {{budget "
             "%s/exp.json generations full}} with FULL=1; seeds {{budget %s/exp.json seed}}, "
             "{{budget %s/exp.json seed n=1}} of them; population {{budget %s/exp.json "
             "population}}; nodes {{budget %s/exp.json planner of=planner:b set=max_nodes}}, "
             "{{budget %s/exp.json planner full of=planner:b set=max_nodes}}.\n", dir, dir, dir,
             dir, dir, dir, dir);
    put_text("bud.in", text);
    snprintf(args, sizeof args, "report %s/bud.in --check --data %s", dir, dir);
    o = NULL;
    IS_INT(sh(args, &o, NULL), 0, "check: budget directives are not typed-in numbers");
    sw_free(o);
    snprintf(args, sizeof args, "report %s/bud.in --data %s", dir, dir);
    o = NULL;
    IS_INT(sh(args, &o, NULL), 0, "report with {{budget}}");
    IS_STR_HAS(o, "40 generations, 400 with FULL=1; seeds 1, 2, 3, 3 of them; population 16; "
               "nodes 500, 5000.",
               "budget: quick and full values, a count and a command's setting from the "
               "experiment file");
    sw_free(o);
    snprintf(text, sizeof text, "{{budget %s/exp.json label}}\n", dir);
    put_text("bud2.in", text);
    snprintf(args, sizeof args, "report %s/bud2.in --data %s", dir, dir);
    expect_fail(args, 1, "bud2.in:1: {{budget", "budget: a variable of text without n=1");
    snprintf(text, sizeof text, "{{budget %s/exp.json nothing}}\n", dir);
    put_text("bud3.in", text);
    snprintf(args, sizeof args, "report %s/bud3.in --data %s", dir, dir);
    expect_fail(args, 1, "no such variable under \"vars\", nor VAR=VALUE in \"command\"",
                "budget: a variable not in the file");
    snprintf(text, sizeof text, "{{budget %s/exp.json planner of=planner:c set=max_nodes}}\n", dir);
    put_text("bud4.in", text);
    snprintf(args, sizeof args, "report %s/bud4.in --data %s", dir, dir);
    expect_fail(args, 1, "no value of the variable with that field", "budget: of= matching none");
    put_text("fmt.in", "{{table cmp.csv rows=label value=normalized_throughput fmt=%s}}\n");
    snprintf(args, sizeof args, "report %s/fmt.in --data %s", dir, dir);
    expect_fail(args, 1, "table option fmt=%s: expected one printf conversion", "table: fmt= "
                "checked before it reaches printf");
}

/* an exact planner's solve in `run --json` (solver_status, objective, bound,
   gap) and in the plan file, where `simulate --json` reads it back; other
   planners have none */
static void solver_fields(void)
{
    char args[1024], *o = NULL;
    json_doc *d = json_doc_new();
    snprintf(args, sizeof args, "model random --ops 6 --seed 1 --unit 1MiB -o %s/s6.json", dir);
    IS_INT(sh(args, NULL, NULL), 0, "a 6-op profile");
    snprintf(args, sizeof args, "plan %s/s6.json --planner optimal-swap --memory 0.9x --set "
             "model=stage --set max_nodes=50 -o %s/s6p.json", dir, dir);
    int rc = sh(args, NULL, NULL);
    IS_INT(rc, 0, "optimal-swap plans the 6-op profile");
    snprintf(args, sizeof args, "simulate %s/s6p.json --json", dir);
    IS_INT(sh(args, &o, NULL), 0, "simulate its plan");
    const json_value *v = parse_json(d, o);
    const json_value *st = json_get(v, "solver_status"), *ob = json_get(v, "solver_objective_s"),
                     *bd = json_get(v, "solver_bound_s"), *gp = json_get(v, "solver_gap_pct"),
                     *it = json_get(v, "iteration_time_s");
    OK(st && st->type == JSON_STRING && *st->u.str, "solver_status: %s",
       st && st->type == JSON_STRING ? st->u.str : "(missing)");
    OK(ob && bd && gp && it, "objective, bound and gap are there");
    if (ob && bd && gp && it) {
        double obj = ob->u.num.d, b = bd->u.num.d, g = gp->u.num.d;
        OK(b <= obj * (1 + 1e-9) && g >= 0 && g <= 100, "bound %g <= objective %g, gap %g%%", b,
           obj, g);
        IS_NUM(g, obj > 0 ? 100 * (obj - b) / obj : 0, 1e-6, "the gap is (objective - bound) / "
               "objective");
        /* the stage model's time is exact in the simulator (docs/bounds.md) */
        IS_NUM(it->u.num.d, obj, 1e-6 * obj, "the plan simulates at its objective");
    }
    sw_free(o);
    snprintf(args, sizeof args, "run %s/s6.json --planner odswap --memory 0.9x --json", dir);
    o = NULL;
    IS_INT(sh(args, &o, NULL), 0, "odswap runs");
    v = parse_json(d, o);
    OK(v && !json_get(v, "solver_status"), "a heuristic has no solver fields");
    sw_free(o);
    json_doc_free(d);
}

static const tap_test tests[] = {
    {"help_and_usage", help_and_usage},
    {"model_and_stats", model_and_stats},
    {"run_json_fields", run_json_fields},
    {"run_errors", run_errors},
    {"memory_sizes", memory_sizes},
    {"trace", trace},
    {"plan_verify_simulate", plan_verify_simulate},
    {"unsafe_plan_refused", unsafe_plan_refused},
    {"malformed_profile", malformed_profile},
    {"report_compare", report_compare},
    {"report_number", report_number},
    {"report_compare_best", report_compare_best},
    {"report_compare_stat_max", report_compare_stat_max},
    {"report_compare_quoted", report_compare_quoted},
    {"report_check", report_check},
    {"report_device", report_device},
    {"experiment_derive", experiment_derive},
    {"solver_fields", solver_fields},
};

int main(int argc, char **argv)
{
    cli_open("cli");
    int rc = tap_run(tests, SW_ARRAY_LEN(tests), argc, argv);
    if (cli_close())
        printf("# could not remove %s\n", dir);
    return rc;
}
