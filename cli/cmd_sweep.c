/* cmd_sweep.c: `swapsim sweep`: planners x memory budgets of one profile in
   one call (the experiment runner runs the cells: parallel, cached), the
   smallest budget each planner fits in, the largest batch of a generated
   model; a table, CSV, JSON and a gnuplot plot (experiments/sweep.h). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/json.h"
#include "../experiments/runner.h"
#include "../experiments/sweep.h"
#include "../profiles/models.h"
#include "../profiles/profile_io.h"
#include "cli.h"

typedef struct sweep_args {
    const char *profile, *planners, *memory, *fit_tol, *batch, *model, *out, *cache;
    int64_t seed;
    double time_budget;
    int threads, fit, json, progress;
} sweep_args;

/* The runner's side: every batch of cells becomes one in-memory experiment
   whose variable "cell" zips each cell's command parts. */
typedef struct runner_ctx {
    const sweep *s;
    exp_opts o;
    const char *profile_path; /* the profile every cell reads (NULL under --batch) */
    char model_args[512];     /* under --batch: the generator's options as --KEY VALUE */
    sweep_cell *cells;
    sw_err *err;
    int bad;                  /* a cell's output did not parse */
    int round;                /* batches of cells run so far */
} runner_ctx;

static void put_cell_var(const runner_ctx *r, const sweep_cell *c, sw_buf *b)
{
    sw_buf_printf(b, "{\"verb\":\"%s\",\"memory\":\"%lldB\",\"batch\":\"%lld\",\"rest\":",
                  c->planner ? "run" : "bound", (long long)c->budget, (long long)c->batch);
    char rest[256];
    if (c->planner)
        snprintf(rest, sizeof rest, "--planner %s --seed %llu --time-budget %.9gs --json",
                 c->planner, (unsigned long long)r->s->seed, r->s->time_budget_s);
    else
        snprintf(rest, sizeof rest, "--json");
    sw_buf_put_jstr(b, rest);
    sw_buf_putc(b, '}');
}

static void experiment_text(const runner_ctx *r, const sweep_cell *c, size_t n, sw_buf *b)
{
    /* the progress line's name: the grid, then each round of the searches */
    if (r->round == 1)
        sw_buf_puts(b, "{\"name\":\"sweep\",\"command\":[\"{verb}\",");
    else
        sw_buf_printf(b, "{\"name\":\"sweep, search round %d\",\"command\":[\"{verb}\",",
                      r->round - 1);
    if (r->profile_path) {
        sw_buf_put_jstr(b, r->profile_path);
    } else {
        sw_buf_puts(b, "\"{profile}\"");
    }
    sw_buf_puts(b, ",\"--memory\",\"{memory}\",\"{rest}\"]");
    if (!r->profile_path) {
        sw_buf_puts(b, ",\"profile\":[\"model\",");
        sw_buf_put_jstr(b, r->s->model);
        for (const char *p = r->model_args; *p;) { /* one argument per word */
            size_t k = strcspn(p, " ");
            char word[256];
            snprintf(word, sizeof word, "%.*s", (int)(k < 255 ? k : 255), p);
            sw_buf_puts(b, ",");
            sw_buf_put_jstr(b, word);
            p += k;
            p += *p == ' ';
        }
        sw_buf_puts(b, ",\"--batch\",\"{batch}\"]");
    }
    sw_buf_puts(b, ",\"vars\":{\"cell\":[");
    for (size_t i = 0; i < n; i++) {
        sw_buf_puts(b, i ? "," : "");
        put_cell_var(r, &c[i], b);
    }
    sw_buf_puts(b, "]}}");
}

static double num(const json_value *o, const char *key, int *bad)
{
    const json_value *v = json_get(o, key);
    if (!v || v->type != JSON_NUMBER) {
        *bad = 1;
        return 0;
    }
    return v->u.num.d;
}

static void cell_done(void *ud, size_t i, int status, const char *output, const char *message)
{
    runner_ctx *r = ud;
    sweep_cell *c = &r->cells[i];
    if (status) { /* "swapsim: does not fit ...": the message without the program's name */
        const char *m = strncmp(message, "swapsim: ", 9) ? message : message + 9;
        snprintf(c->message, sizeof c->message, "%s", m);
        return;
    }
    json_doc *d = json_doc_new();
    const json_value *v;
    sw_err e;
    if (!d || json_parse(d, output, strlen(output), "cell output", 1, &v, &e) ||
        v->type != JSON_OBJECT) {
        r->bad = 1;
    } else if (c->planner) {
        c->ntp = num(v, "normalized_throughput", &r->bad);
        c->iter_s = num(v, "iteration_time_s", &r->bad);
        c->sps = num(v, "samples_per_s", &r->bad);
        c->peak = (int64_t)num(v, "peak_memory_bytes", &r->bad);
        c->fits = 1;
    } else {
        c->iter_s = num(v, "any_bound_s", &r->bad);
        c->ntp = c->iter_s > 0 ? num(v, "compute_s", &r->bad) / c->iter_s : 0;
        c->fits = 1;
    }
    json_doc_free(d);
}

static int eval_runner(void *ud, sweep_cell *cells, size_t n, sw_err *err)
{
    runner_ctx *r = ud;
    sw_buf b;
    sw_buf_init(&b);
    r->round++;
    experiment_text(r, cells, n, &b);
    if (b.oom) {
        sw_buf_free(&b);
        return sw_fail(err, SW_ENOMEM, "out of memory");
    }
    r->cells = cells;
    r->o.text = b.data;
    r->bad = 0;
    int rc = exp_run(&r->o, err);
    sw_buf_free(&b);
    if (!rc && r->bad)
        rc = sw_fail(err, SW_EINVAL, "a cell's output is not the JSON object expected (is "
                     "%s the swapsim that ran it?)", r->o.swapsim);
    return rc;
}

/* "resnet,depth=50" -> the generator's name and its options ("depth=50"),
   and as swapsim model's arguments ("--depth 50"); batch=N only where
   batch_ok (not under --batch). */
static int split_model(char *spec, const char **opts, char *args, size_t n, int batch_ok)
{
    char *comma = strchr(spec, ',');
    *opts = comma ? comma + 1 : NULL;
    if (comma)
        *comma = 0;
    args[0] = 0;
    size_t len = 0;
    for (const char *p = *opts; p && *p;) {
        size_t k = strcspn(p, ","), eq = strcspn(p, "=");
        if (eq >= k || eq == 0)
            return cli_fail(EXIT_USER, "--model %s,%s: options are KEY=VALUE separated by "
                            "commas (e.g. resnet,depth=50)", spec, *opts);
        if (!strncmp(p, "batch=", 6) && !batch_ok)
            return cli_fail(EXIT_USER, "--model: batch=... and --batch together: give the "
                            "batches with --batch LO:HI");
        int w = snprintf(args + len, n - len, "%s--%.*s %.*s", len ? " " : "", (int)eq, p,
                         (int)(k - eq - 1), p + eq + 1);
        if (w < 0 || (size_t)w >= n - len)
            return cli_fail(EXIT_USER, "--model: options too long");
        len += (size_t)w;
        p += k;
        if (*p == ',')
            p++;
    }
    return 0;
}

static const char *model_name_at(size_t i) { return model_at(i)->name; }

/* The profile the sweep describes: PROFILE, or --model generated here (under
   --batch: at the range's first batch). */
static int load_profile(sweep_args *a, const sweep *s, graph_profile **g)
{
    sw_err e;
    if (a->profile && a->model)
        return cli_usage("sweep", "give PROFILE or --model, not both");
    if (!a->profile && !a->model)
        return cli_usage("sweep", "missing PROFILE (or --model NAME[,KEY=VALUE...])");
    if (a->profile) {
        if (profile_read_file(a->profile, g, &e))
            return cli_error(&e);
        if (a->batch) {
            const char *src = (*g)->prov.source;
            int rec = src && !strcmp(src, "recorded");
            long long b = (long long)(*g)->batch;
            graph_free(*g);
            *g = NULL;
            return rec ? cli_fail(EXIT_USER, "%s: --batch: a recorded trace has one batch (%lld); "
                                  "record the model at another batch, or sweep a generated "
                                  "model (--model NAME)", a->profile, b)
                       : cli_fail(EXIT_USER, "%s: --batch: a profile file has one batch (%lld); "
                                  "--model NAME[,KEY=VALUE...] generates one per batch",
                                  a->profile, b);
        }
        return 0;
    }
    if (!model_find(s->model))
        return cli_unknown_name("model", s->model, model_count(), model_name_at);
    /* under --batch at the range's first batch; else with the options as given */
    int64_t batch = a->batch ? strtoll(a->batch, NULL, 10) : 0;
    if (sweep_make_model(s, batch, g, &e))
        return cli_fail(EXIT_USER, "--model %s: %s", s->model, e.msg);
    return 0;
}

/* The profile as the cells read it: a copy named by its content's hash in
   the cache (so a changed profile is never answered from the cache). */
static int cache_profile(const graph_profile *g, const char *dir, char *path, size_t n)
{
    sw_buf b;
    sw_buf_init(&b);
    profile_to_json(g, &b, 0);
    if (b.oom) {
        sw_buf_free(&b);
        return cli_fail(EXIT_USER, "out of memory");
    }
    uint64_t h = sw_hash64(b.data, b.len, 0);
    snprintf(path, n, "%s/cache/sweep-%016llx.profile.json", dir, (unsigned long long)h);
    int rc = 0;
    if (access(path, R_OK) != 0) {
        char tmp[1300];
        snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
        sw_err e;
        if (sw_buf_write_file(&b, tmp, &e) || rename(tmp, path))
            rc = cli_fail(EXIT_USER, "%s: cannot write the profile for the cells", path);
    }
    sw_buf_free(&b);
    return rc;
}

static int mkdirs(const char *dir)
{
    char t[1024];
    snprintf(t, sizeof t, "%s/cache", dir);
    for (char *p = t + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            if (mkdir(t, 0775) && errno != EEXIST)
                return -1;
            *p = '/';
        }
    return mkdir(t, 0775) && errno != EEXIST ? -1 : 0;
}

/* PREFIX.csv, .json, .png or .svg is the profile itself: refused. */
static int clobbers_profile(const char *profile, const char *prefix)
{
    char in[4096];
    if (!realpath(profile, in))
        return 0;
    static const char *const ext[] = {"csv", "json", "png", "svg"};
    for (size_t i = 0; i < SW_ARRAY_LEN(ext); i++) {
        char path[1100], out[4096];
        snprintf(path, sizeof path, "%s.%s", prefix, ext[i]);
        if (realpath(path, out) && !strcmp(in, out))
            return cli_fail(EXIT_USER, "--out %s: %s would overwrite the profile %s (give "
                            "another --out PREFIX)", prefix, path, profile);
    }
    return 0;
}

static int write_out(const char *prefix, const char *ext, const sw_buf *b)
{
    char path[1100];
    snprintf(path, sizeof path, "%s.%s", prefix, ext);
    sw_err e;
    return sw_buf_write_file(b, path, &e) ? cli_error(&e) : 0;
}

/* The plot: throughput against memory, one line per planner, the region
   above the bound (which no plan reaches) shaded; PNG and SVG. */
static void plot(const sweep *s, const char *prefix, int quiet)
{
    if (system("command -v gnuplot > /dev/null 2>&1") != 0) {
        fprintf(stderr, "swapsim sweep: gnuplot not found: no %s.png or %s.svg (Debian: "
                "gnuplot-nox); the CSV and JSON are written\n", prefix, prefix);
        return;
    }
    sw_buf b;
    sw_buf_init(&b);
    size_t w = (size_t)s->npl + 1;
    for (size_t p = 0; p < w; p++) {
        sw_buf_printf(&b, "$d%zu << EOD\n", p);
        for (int i = 0; i < s->nb; i++) {
            const sweep_cell *c = &s->grid[(size_t)i * w + p];
            double gib = (double)c->budget / (1 << 30);
            if (c->fits)
                sw_buf_printf(&b, "%.6f %.6f\n", gib, c->ntp);
            else if (p == 0)
                sw_buf_printf(&b, "%.6f 0\n", gib);
        }
        sw_buf_puts(&b, "EOD\n");
    }
    sw_buf_puts(&b, "set grid ytics lc rgb '#dddddd'\nset border 3\nset tics nomirror\n"
                    "set key outside right\nset xlabel 'memory budget (GiB)'\n"
                    "set ylabel 'throughput / ideal throughput'\nset yrange [0:1.05]\n");
    sw_buf_printf(&b, "set title \"%s on %s: throughput against memory\" noenhanced\n",
                  s->g->name, s->g->device.name);
    double lo = (double)s->budgets[0] / (1 << 30), hi = (double)s->budgets[s->nb - 1] / (1 << 30);
    sw_buf_printf(&b, "set xrange [%.6f:%.6f]\n", lo - 0.05 * hi, hi * 1.05); /* one budget too */
    for (int t = 0; t < 2; t++) {
        if (t == 0)
            sw_buf_printf(&b, "set terminal pngcairo size 1100,560 font 'Sans,11'\n"
                          "set output '%s.png'\n", prefix);
        else
            sw_buf_printf(&b, "set terminal svg size 1100,560 font 'Sans,11' dynamic\n"
                          "set output '%s.svg'\n", prefix);
        sw_buf_puts(&b, "plot $d0 using 1:2:(1.05) with filledcurves fs transparent solid 0.2 "
                        "noborder lc rgb '#888888' title 'above the bound: no plan', "
                        "$d0 using 1:2 with lines dt 2 lc rgb '#555555' title 'bound'");
        for (int p = 0; p < s->npl; p++) {
            int any = 0; /* a planner that fits nowhere has no line (gnuplot would warn) */
            for (int i = 0; i < s->nb; i++)
                any |= s->grid[(size_t)i * w + (size_t)p + 1].fits;
            if (any)
                sw_buf_printf(&b, ", $d%d using 1:2 with linespoints lw 2 title '%s' noenhanced",
                              p + 1, s->planners[p]);
        }
        sw_buf_puts(&b, "\nunset output\n");
    }
    FILE *f = popen("gnuplot", "w");
    int rc = f ? (fwrite(b.data, 1, b.len, f) != b.len) : 1;
    rc |= f ? pclose(f) != 0 : 1;
    sw_buf_free(&b);
    if (rc)
        fprintf(stderr, "swapsim sweep: gnuplot failed: %s.png and %s.svg may be missing\n",
                prefix, prefix);
    else if (!quiet)
        printf("wrote %s.csv, %s.json, %s.png and %s.svg\n", prefix, prefix, prefix, prefix);
}

/* Before any work: the outputs would not overwrite the profile, and they
   and the cache can be written (path: PREFIX.csv, made if absent; *existed:
   whether it was there). */
static int check_outputs(const sweep_args *a, char *path, size_t n, int *existed)
{
    int rc = a->profile ? clobbers_profile(a->profile, a->out) : 0;
    if (rc)
        return rc;
    snprintf(path, n, "%s.csv", a->out);
    *existed = access(path, F_OK) == 0;
    FILE *probe = fopen(path, "a");
    if (!probe || mkdirs(a->cache)) {
        int err = errno;
        if (probe)
            fclose(probe);
        return cli_fail(EXIT_USER, "%s: cannot write: %s", probe ? a->cache : path,
                        strerror(err));
    }
    fclose(probe);
    return 0;
}

/* PREFIX.json and .csv, the table (or the JSON) on standard output, the plot. */
static int emit(const sweep *s, const sweep_args *a)
{
    sw_buf b;
    sw_buf_init(&b);
    sweep_json(s, &b);
    int rc = write_out(a->out, "json", &b);
    if (!rc && a->json)
        fputs(b.data, stdout);
    b.len = 0;
    sweep_csv(s, &b);
    rc = rc ? rc : write_out(a->out, "csv", &b);
    if (!rc && !a->json) {
        b.len = 0;
        sweep_table(s, &b);
        fputs(b.data, stdout);
    }
    sw_buf_free(&b);
    if (!rc && s->grid)
        plot(s, a->out, a->json);
    else if (!rc && !a->json)
        printf("wrote %s.csv and %s.json\n", a->out, a->out);
    return rc;
}

int cmd_sweep(int argc, char **argv)
{
    sweep_args a;
    memset(&a, 0, sizeof a);
    a.threads = cli_cores();
    a.progress = isatty(2);
    int rc;
    const cli_pos args[] = {{"PROFILE", "the profile (docs/profile-format.md); or --model", 0, 1,
                             &a.profile},
                            {NULL, NULL, 0, 0, NULL}};
    const cli_opt opts[] = {
        {.name = "planner", .type = PT_STRING, .dst = &a.planners, .def = "all", .meta = "LIST",
         .help = "planners separated by commas, or all: every planner but ideal (the "
                 "reference), random (a test planner) and the exact solvers (name them to run "
                 "them)"},
        {.name = "memory", .type = PT_STRING, .dst = &a.memory, .meta = "LIST",
         .help = "budgets separated by commas: sizes (16GiB), fractions of the ideal peak "
                 "(0.4x), ranges FROM:TO:STEP (0.3x:1.0x:0.1x, the default; 4GiB:16GiB:2GiB); "
                 "with --batch one size (default: the device's memory)"},
        {.name = "fit", .type = PT_BOOL, .dst = &a.fit,
         .help = "also find each planner's smallest budget that fits, by bisection"},
        {.name = "fit-tol", .type = PT_STRING, .dst = &a.fit_tol, .def = "0.01x", .meta = "SIZE",
         .help = "--fit's tolerance: a size or a fraction of the ideal peak"},
        {.name = "model", .type = PT_STRING, .dst = &a.model, .meta = "NAME,KEY=VALUE...",
         .help = "sweep a generated model ('swapsim models --verbose') instead of PROFILE, "
                 "e.g. resnet,depth=50,batch=32 or gpt,layers=12,device=a100"},
        {.name = "batch", .type = PT_STRING, .dst = &a.batch, .meta = "LO:HI",
         .help = "with --model: each planner's largest batch that fits in --memory, by "
                 "bisection over LO to HI, and its samples/s (a recorded profile has one batch)"},
        {.name = "threads", .type = PT_INT, .dst = &a.threads, .min = 1, .max = 256,
         .help = "cells run at a time (default: one per core it may use)"},
        {.name = "time-budget", .type = PT_SECONDS, .dst = &a.time_budget, .def = "5s",
         .help = "search time of each run of a planner that searches (swapadvisor, hybrid)"},
        {.name = "seed", .type = PT_INT, .dst = &a.seed, .def = "1", .min = 0, .max = INFINITY,
         .flags = CLI_INT64, .help = "random seed of every run"},
        {.name = "out", .type = PT_STRING, .dst = &a.out, .def = "sweep", .meta = "PREFIX",
         .help = "write PREFIX.csv, PREFIX.json, and with gnuplot PREFIX.png and PREFIX.svg"},
        {.name = "cache", .type = PT_STRING, .dst = &a.cache, .def = "out", .meta = "DIR",
         .help = "the experiment runner's cache (DIR/cache, shared with swapsim experiment): "
                 "cells already run with the same inputs and binary are reused"},
        {.name = "json", .type = PT_BOOL, .dst = &a.json,
         .help = "print the JSON (PREFIX.json) instead of the table"},
        {.name = "progress", .type = PT_BOOL, .dst = &a.progress,
         .help = "a progress line on standard error (default: when it is a terminal)"},
        {.name = NULL}};
    const cli_cmd cmd = {
        .name = "sweep",
        .about = "Run planners x memory budgets of one profile in one call: each cell is a\n"
                 "'swapsim run' (and 'swapsim bound' for the lower bound), run N at a time\n"
                 "by the experiment runner with its cache. Prints the normalised throughput\n"
                 "per planner per budget beside the bound, writes CSV, JSON and a plot\n"
                 "(gnuplot). --fit adds each planner's smallest budget that fits; --model\n"
                 "with --batch each planner's largest batch that fits (docs/cli.md).\n",
        .args = args,
        .opts = opts};
    if (cli_parse(&cmd, argc, argv, &rc))
        return rc;
    sweep s;
    memset(&s, 0, sizeof s);
    s.seed = (uint64_t)a.seed;
    s.time_budget_s = a.time_budget;
    s.threads = a.threads;
    char mspec[512] = "";
    runner_ctx r;
    memset(&r, 0, sizeof r);
    if (a.model) { /* NAME,KEY=VALUE...: the name, its options, and under --batch as
                      swapsim model's arguments */
        snprintf(mspec, sizeof mspec, "%s", a.model);
        if ((rc = split_model(mspec, &s.model_opts, r.model_args, sizeof r.model_args, !a.batch)))
            return rc;
        s.model = mspec;
    }
    graph_profile *g = NULL;
    if ((rc = load_profile(&a, &s, &g)))
        return rc;
    s.g = g;
    if (!a.batch)
        s.model = NULL; /* a generated profile is swept as a file */
    sw_err e;
    if (sweep_setup(&s, a.planners, a.memory, a.fit ? a.fit_tol : NULL, a.batch, &e)) {
        graph_free(g);
        return cli_error(&e);
    }
    char path[1100];
    int existed = 0;
    if ((rc = check_outputs(&a, path, sizeof path, &existed))) {
        graph_free(g);
        return rc;
    }
    static char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) {
        graph_free(g);
        return cli_fail(EXIT_USER, "cannot find the swapsim binary (/proc/self/exe)");
    }
    self[n] = 0;
    char ppath[1200];
    if (!a.batch && (rc = cache_profile(g, a.cache, ppath, sizeof ppath))) {
        graph_free(g);
        return rc;
    }
    r.s = &s;
    r.profile_path = a.batch ? NULL : ppath;
    r.o.file = "swapsim sweep";
    r.o.out_dir = a.cache;
    r.o.swapsim = self;
    r.o.jobs = a.threads;
    r.o.progress = a.progress;
    r.o.no_csv = 1;
    r.o.cell_done = cell_done;
    r.o.ud = &r;
    rc = sweep_run(&s, eval_runner, &r, &e) ? cli_error(&e) : 0;
    if (rc && !existed)
        unlink(path); /* the empty file the check above made */
    if (!rc)
        rc = emit(&s, &a);
    sweep_free(&s);
    graph_free(g);
    return rc;
}
