/* cmd_experiment.c: `swapsim experiment FILE...`: run declared experiment grids. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../experiments/runner.h"
#include "cli.h"

int cmd_experiment(int argc, char **argv)
{
    cli_args a = {argc, argv, 1, "experiment", {0}, 0};
    exp_opts o;
    memset(&o, 0, sizeof o);
    const char *v;
    int r;
    long nproc = sysconf(_SC_NPROCESSORS_ONLN);
    o.jobs = nproc > 0 ? (int)nproc : 1;
    o.out_dir = "out";
    o.data = sw_data_dir();
    o.progress = isatty(2);
    while (a.i < argc) {
        if (cli_flag(&a, "--help")) {
            printf("usage: swapsim experiment FILE... [--full] [--jobs N] [--out DIR]\n"
                   "                         [--data DIR] [--dry-run] [--progress]\n\n"
                   "Run experiment files (experiments/*.json, format in docs/experiments.md): expand\n"
                   "each grid into cells, run every cell's swapsim command (N at a time, default:\n"
                   "one per core), reuse cells already run with the same inputs and binary (cache\n"
                   "in DIR/cache), and write DIR/<name>.csv with one row per cell. Quick mode by\n"
                   "default; --full uses the paper's budgets. --data is the recorded data\n"
                   "directory experiments read as {data} (default $SWAPSIM_DATA, else the\n"
                   "data/ folder of the source tree swapsim was built from).\n");
            return 0;
        }
        if (cli_flag(&a, "--full")) {
            o.full = 1;
            continue;
        }
        if (cli_flag(&a, "--dry-run")) {
            o.dry_run = 1;
            continue;
        }
        if (cli_flag(&a, "--progress")) {
            o.progress = 1;
            continue;
        }
        if ((r = cli_optval(&a, "--jobs", &v)) != 0) {
            if (r < 0)
                return EXIT_USAGE;
            int64_t n;
            if (sw_parse_i64(v, &n) || n < 1 || n > 256)
                return cli_fail(EXIT_USER, "--jobs %s: expected an integer from 1 to 256", v);
            o.jobs = (int)n;
            continue;
        }
        if ((r = cli_optval(&a, "--out", &o.out_dir)) != 0 || (r = cli_optval(&a, "--data", &o.data)) != 0) {
            if (r < 0)
                return EXIT_USAGE;
            continue;
        }
        if ((r = cli_positional(&a)) != 0) {
            if (r < 0)
                return EXIT_USAGE;
            continue;
        }
        return cli_unknown(&a);
    }
    if (a.npos < 1)
        return cli_usage("experiment", "expected at least one experiment FILE");
    static char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return cli_fail(EXIT_USER, "cannot find the swapsim binary (/proc/self/exe)");
    self[n] = 0;
    o.swapsim = self;
    for (int i = 0; i < a.npos; i++) {
        o.file = a.pos[i];
        sw_err e;
        if (exp_run(&o, &e))
            return cli_error(&e);
    }
    return 0;
}
