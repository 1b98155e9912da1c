/* cmd_experiment.c: `swapsim experiment FILE...`: run declared experiment grids. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../experiments/mpi.h"
#include "../experiments/runner.h"
#include "cli.h"

int cmd_experiment(int argc, char **argv)
{
    exp_opts o;
    memset(&o, 0, sizeof o);
    cli_list files;
    memset(&files, 0, sizeof files);
    int rc;
    o.jobs = 0; /* not given: one per core (cli_cores: this rank's share under MPI) */
    o.data = sw_data_dir();
    int progress = 0; /* --progress */
    const cli_pos args[] = {{"FILE", "experiment files (experiments/*.json, format in "
                                     "docs/experiments.md)", 1, CLI_MANY, &files},
                            {NULL, NULL, 0, 0, NULL}};
    const cli_opt opts[] = {
        {.name = "full", .type = PT_BOOL, .dst = &o.full,
         .help = "the paper's budgets (default: quick mode)"},
        {.name = "jobs", .type = PT_INT, .dst = &o.jobs, .min = 1, .max = 256,
         .help = "cells run at a time (default: one per core it may use; under mpirun, per "
                 "rank: the cores it is bound to, or its share of its machine's)"},
        {.name = "out", .type = PT_STRING, .dst = &o.out_dir, .def = "out", .meta = "DIR",
         .help = "where DIR/<name>.csv and the cache (DIR/cache) go"},
        {.name = "data", .type = PT_STRING, .dst = &o.data, .meta = "DIR",
         .help = "the recorded data directory experiments read as {data} (default "
                 "$SWAPSIM_DATA, else the data/ folder of the source tree swapsim was built "
                 "from)"},
        {.name = "dry-run", .type = PT_BOOL, .dst = &o.dry_run,
         .help = "print the commands, run nothing"},
        {.name = "progress", .type = PT_BOOL, .dst = &progress,
         .help = "progress on standard error even where $SWAPSIM_PROGRESS=none (default: on; "
                 "a line rewritten in place on a terminal, a line per tenth of the cells "
                 "elsewhere; $SWAPSIM_PROGRESS=bar|lines|none chooses)"},
        {.name = NULL}};
    const cli_cmd cmd = {
        .name = "experiment",
        .about = "Run experiment files: expand each grid into cells, run every cell's swapsim\n"
                 "command (N at a time), reuse cells already run with the same inputs and\n"
                 "binary (cache in DIR/cache), and write DIR/<name>.csv with one row per cell.\n"
                 "Under mpirun -np N the cells are spread over the N ranks; rank 0 writes the\n"
                 "same CSV (docs/cluster.md).\n",
        .args = args,
        .opts = opts};
    if (cli_parse(&cmd, argc, argv, &rc))
        return rc;
    o.progress = cli_progress_mode(0); /* before the cells' setting below */
    if (progress && !o.progress)
        o.progress = isatty(2) ? 1 : 2;
    /* a cell's standard error is its one-line message: no progress lines there */
    setenv("SWAPSIM_PROGRESS", "none", 1);
    struct swmpi *m;
    if ((rc = cli_mpi_start("experiment", &m)))
        return rc;
    if (o.jobs == 0)
        o.jobs = cli_cores();
    if (m) {
        o.link = swmpi_exp_link(m);
        o.env = swmpi_child_env(m);
        if (swmpi_rank(m) > 0)
            o.progress = 0;
    }
    static char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return cli_fail(EXIT_USER, "cannot find the swapsim binary (/proc/self/exe)");
    self[n] = 0;
    o.swapsim = self;
    for (int i = 0; i < files.n; i++) {
        o.file = files.item[i];
        sw_err e;
        if (exp_run(&o, &e))
            return cli_error(&e);
    }
    return 0;
}
