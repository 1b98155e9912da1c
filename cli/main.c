/* main.c: the swapsim command line: subcommand dispatch and shared helpers. */
#include <stdio.h>
#include <string.h>

#include "../experiments/mpi.h"
#include "../profiles/profile_io.h"
#include "cli.h"

#define SWAPSIM_VERSION "0.1.0"

int cli_device_any(const cli_device *d) { return d->name || d->sets.n; }

void cli_warn_no_times(const graph_profile *g, const char *path)
{
    for (int32_t i = 0; i < g->n_ops; i++)
        if (g->ops[i].time_s > 0)
            return;
    fprintf(stderr, "swapsim: warning: %s: every operator takes 0 s (a recording without GPU "
            "times?): times and throughput mean nothing; 'swapsim import pytorch --times model' "
            "fills them from the cost model\n", path);
}

int cli_device_resolve(const cli_device *d, const dev_spec *base, dev_spec *out)
{
    if (d->name) {
        sw_err e;
        if (dev_resolve(d->name, out, &e))
            return cli_error(&e);
    } else {
        *out = *base;
    }
    for (int i = 0; i < d->sets.n; i++) {
        sw_err e;
        const char *it = d->sets.item[i];
        if (!strncmp(it, "memory=", 7) && cli_size_bare(it + 7))
            return cli_fail(EXIT_USER, "--device-set %s: %s: a size needs a unit (B, KiB, MiB, "
                            "GiB)", it, it + 7);
        if (dev_set(out, d->sets.item[i], &e))
            return cli_error(&e);
    }
    sw_err e;
    if (dev_validate(out, &e))
        return cli_error(&e);
    return 0;
}

static int kv_apply(const cli_list *kv, param_set *ps, const char *what)
{
    for (int i = 0; i < kv->n; i++) {
        char key[64], val[256];
        const char *k = kv->item[i], *v = kv->val[i];
        const char *eq = v ? NULL : strchr(k, '=');
        size_t kl = v ? strlen(k) : (size_t)(eq - k);
        if (kl >= sizeof key)
            return cli_fail(EXIT_USER, "%s: option name too long", what);
        memcpy(key, k, kl);
        key[kl] = 0;
        for (char *p = key; *p; p++)
            if (*p == '-')
                *p = '_';
        snprintf(val, sizeof val, "%s", v ? v : eq + 1);
        sw_err e;
        if (params_set(ps, key, val, &e))
            return cli_fail(EXIT_USER, "%s: %s", what, e.msg);
    }
    return 0;
}

int cli_kv_prepare(const cli_list *kv, const cli_device *dv, const param_def *defs,
                   const char *what, param_set *ps, dev_spec *dev)
{
    if (params_init(ps, defs))
        return cli_fail(EXIT_USER, "out of memory");
    if (kv_apply(kv, ps, what) || cli_device_resolve(dv, dev_find("v100"), dev)) {
        params_free(ps);
        return EXIT_USER;
    }
    return 0;
}

double cli_gib(int64_t bytes) { return (double)bytes / (1024.0 * 1024.0 * 1024.0); }

/* The commands, in the order --help lists them: the one table both the
   dispatch and the help come from. A command's file is named after it
   (cli/cmd_NAME.c, dashes as underscores), or after its family's first. */
static const struct cli_command {
    const char *name;
    int (*run)(int argc, char **argv); /* argv[0] is the command's name */
    const char *args;                  /* the arguments after the name in the help */
    const char *about;                 /* one line */
} commands[] = {
    {"devices", cmd_devices, "[--json]", "list built-in GPU specs"},
    {"planners", cmd_planners, "[--verbose] [--json]",
     "list planners (and their --set hyperparameters)"},
    {"models", cmd_models, "[--verbose] [--json]", "list profile generators (and their options)"},
    {"model", cmd_model, "NAME [opts] -o F", "generate a profile"},
    {"import", cmd_import, "FORMAT FILE... -o F", "import a profile recorded on a real GPU"},
    {"stats", cmd_stats, "PROFILE", "model statistics (memory, operators, sizes)"},
    {"table1", cmd_table1, "[-o F]", "the paper's Table 1 from the generators (docs/table1.md)"},
    {"calibrate", cmd_calibrate, "[-o F]", "cost model against recorded data (docs/calibration.md)"},
    {"plan", cmd_plan, "PROFILE --planner NAME [--memory SIZE] -o PLAN", "make a plan"},
    {"verify", cmd_verify, "PLAN", "check a plan is safe under every allowed order"},
    {"tradeoff", cmd_tradeoff, "PROFILE [--rate R]",
     "swapping against recomputing each activation"},
    {"bound", cmd_bound, "PROFILE [--memory SIZE]", "lower bounds on any plan's iteration time"},
    {"simulate", cmd_simulate, "PLAN", "time a plan (steady-state iteration)"},
    {"export", cmd_export, "PLAN -o POLICY [--format pytorch]",
     "a plan as a policy PyTorch applies (docs/apply.md)"},
    {"run", cmd_run, "PROFILE --planner NAME [--memory SIZE]",
     "plan, verify and simulate in one go"},
    {"sweep", cmd_sweep, "PROFILE [--planner all] [--memory 0.3x:1.0x:0.1x] [--fit]",
     "planners x budgets: table, CSV, JSON, plot; smallest fit"},
    {"experiment", cmd_experiment, "FILE...", "run experiment grids (experiments/*.json) into CSVs"},
    {"table", cmd_table, "CSV KEY=VALUE...", "tabulate an experiment CSV (pivot, mean, 95% CI)"},
    {"report", cmd_report, "TEMPLATE", "expand {{table ...}} directives (paper_results.md)"},
    {"dtr-parity", cmd_dtr_parity, "[--data DIR] [-o PREFIX]",
     "the dtr planner beside the DTR authors' simulator"},
    {"replay", cmd_replay, "PLAN [--backend cpu|cuda]",
     "run a plan for real; measured vs simulated time, canaries"},
    {"profile", cmd_profile, "PROFILE [--device-index N] [-o F]",
     "record op times on a GPU (CUDA, CUPTI)"},
    {"calibrate-device", cmd_calibrate_device, "--device-index N -o F",
     "measure a GPU into a device file (docs/devices.md)"},
    {"serve", cmd_serve, "PROFILE... [--policy P] [--rate R]",
     "serve several models on one GPU (latency percentiles)"},
    {"colocate", cmd_colocate, "WORKLOAD [--policy time|spatial|zico]",
     "several training jobs on one GPU (Zico)"},
};

#define USAGE_COL 22 /* a command's name and arguments fit in this many columns, or the
                        line after them holds its description */

static void usage(FILE *f)
{
    fputs("usage: swapsim COMMAND [options]\n"
          "\n"
          "Simulate and plan training and inference of deep networks beyond GPU memory.\n"
          "\n"
          "commands:\n",
          f);
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        char head[128];
        const struct cli_command *c = &commands[i];
        snprintf(head, sizeof head, "%s%s%s", c->name, c->args[0] ? " " : "", c->args);
        if (strlen(head) <= USAGE_COL)
            fprintf(f, "  %-*s  %s\n", USAGE_COL, head, c->about);
        else
            fprintf(f, "  %s\n  %-*s  %s\n", head, USAGE_COL, "", c->about);
    }
    fputs("\n"
          "Each command takes -h or --help. Sizes need a unit (16GiB, 512MiB, 4096B) or x\n"
          "for a multiple of the ideal peak (0.5x). Under --json every outcome, errors\n"
          "included, is one JSON object on standard output. Exit status: 0 success, 1 error\n"
          "(one line on stderr), 2 bad command line, 130/143 interrupted (SIGINT/SIGTERM;\n"
          "a search keeps and writes its best plan so far).\n",
          f);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return EXIT_USAGE;
    }
    const char *c = argv[1];
    if (!strcmp(c, "--help") || !strcmp(c, "-h") || !strcmp(c, "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(c, "--version")) {
        printf("swapsim %s\n", SWAPSIM_VERSION);
        printf("MPI: %s\n", swmpi_available() ? "yes (mpirun -np N swapsim experiment ...; "
                            "docs/cluster.md)" : "no (built without mpicc; docs/cluster.md)");
        return 0;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(c, commands[i].name)) {
            int rc = commands[i].run(argc - 1, argv + 1);
            cli_mpi_end(); /* if the command started MPI */
            return rc;
        }
    fprintf(stderr, "swapsim: unknown command '%s' (see 'swapsim --help')\n", c);
    return EXIT_USAGE;
}
