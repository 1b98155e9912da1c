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
        if (device_resolve(d->name, out, &e))
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

static void usage(FILE *f)
{
    fputs("usage: swapsim COMMAND [options]\n"
          "\n"
          "Simulate and plan training and inference of deep networks beyond GPU memory.\n"
          "\n"
          "commands:\n"
          "  devices [--json]        list built-in GPU specs\n"
          "  planners [--verbose] [--json]\n"
          "                          list planners (and their --set hyperparameters)\n"
          "  models [--verbose] [--json]\n"
          "                          list profile generators (and their options)\n"
          "  model NAME [opts] -o F  generate a profile\n"
          "  import FORMAT FILE... -o F\n"
          "                          import a profile recorded on a real GPU\n"
          "  stats PROFILE           model statistics (memory, operators, sizes)\n"
          "  table1 [-o F]           the paper's Table 1 from the generators (docs/table1.md)\n"
          "  calibrate [-o F]        cost model against recorded data (docs/calibration.md)\n"
          "  plan PROFILE --planner NAME [--memory SIZE] -o PLAN\n"
          "                          make a plan\n"
          "  verify PLAN             check a plan is safe under every allowed order\n"
          "  tradeoff PROFILE [--rate R]\n"
          "                          swapping against recomputing each activation\n"
          "  bound PROFILE [--memory SIZE]\n"
          "                          lower bounds on any plan's iteration time\n"
          "  simulate PLAN           time a plan (steady-state iteration)\n"
          "  export PLAN -o POLICY [--format pytorch]\n"
          "                          a plan as a policy PyTorch applies (docs/apply.md)\n"
          "  run PROFILE --planner NAME [--memory SIZE]\n"
          "                          plan, verify and simulate in one go\n"
          "  sweep PROFILE [--planner all] [--memory 0.3x:1.0x:0.1x] [--fit]\n"
          "                          planners x budgets: table, CSV, JSON, plot; smallest fit\n"
          "  experiment FILE...      run experiment grids (experiments/*.json) into CSVs\n"
          "  table CSV KEY=VALUE...  tabulate an experiment CSV (pivot, mean, 95% CI)\n"
          "  report TEMPLATE         expand {{table ...}} directives (paper_results.md)\n"
          "  dtr-parity [--data DIR] [-o PREFIX]\n"
          "                          the dtr planner beside the DTR authors' simulator\n"
          "  replay PLAN [--backend cpu|cuda]\n"
          "                          run a plan for real; measured vs simulated time, canaries\n"
          "  profile PROFILE [--device-index N] [-o F]\n"
          "                          record op times on a GPU (CUDA, CUPTI)\n"
          "  calibrate-device --device-index N -o F\n"
          "                          measure a GPU into a device file (docs/devices.md)\n"
          "  serve PROFILE... [--policy P] [--rate R]\n"
          "                          serve several models on one GPU (latency percentiles)\n"
          "  colocate WORKLOAD [--policy time|spatial|zico]\n"
          "                          several training jobs on one GPU (Zico)\n"
          "\n"
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
    static const struct {
        const char *name;
        int (*fn)(int, char **);
    } cmds[] = {{"devices", cmd_devices}, {"planners", cmd_planners}, {"models", cmd_models},
                {"model", cmd_model},     {"stats", cmd_stats},       {"plan", cmd_plan},
                {"simulate", cmd_simulate}, {"verify", cmd_verify},   {"run", cmd_run},
                {"import", cmd_import},
                {"experiment", cmd_experiment},
                {"table", cmd_table},
                {"report", cmd_report},
                {"calibrate", cmd_calibrate},
                {"table1", cmd_table1},
                {"dtr-parity", cmd_dtr_parity},
                {"replay", cmd_replay},
                {"profile", cmd_profile},
                {"calibrate-device", cmd_calibrate_device},
                {"bound", cmd_bound},
                {"serve", cmd_serve},
                {"colocate", cmd_colocate},
                {"tradeoff", cmd_tradeoff},
                {"export", cmd_export},
                {"sweep", cmd_sweep},
    };
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
        if (!strcmp(c, cmds[i].name)) {
            int rc = cmds[i].fn(argc - 1, argv + 1);
            cli_mpi_end(); /* if the command started MPI */
            return rc;
        }
    fprintf(stderr, "swapsim: unknown command '%s' (see 'swapsim --help')\n", c);
    return EXIT_USAGE;
}
