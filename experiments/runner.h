/* runner.h: the experiment runner. An experiment file (JSON, in
   experiments/) declares a grid of variables and a swapsim command
   template; the runner expands the grid into cells, runs each cell's
   command (in parallel processes), caches each result keyed by a hash of
   the command and the binary, and writes one CSV row per cell: the grid
   variables, then every field of the command's JSON output. */
#ifndef RUNNER_H
#define RUNNER_H

#include "../common/sw.h"

typedef struct exp_opts {
    const char *file;     /* experiment file */
    const char *out_dir;  /* where CSVs, logs and the cache go (default out/) */
    const char *swapsim;  /* the swapsim binary to run */
    const char *data;     /* the recorded data directory (for {data}); NULL: sw_data_dir() */
    int full;             /* 1: the paper's budgets; 0: quick mode */
    int jobs;             /* parallel cells (default: cores) */
    int progress;         /* progress line on stderr */
    int dry_run;          /* print the commands, run nothing */
} exp_opts;

/* Run one experiment. Errors name the file and JSON path (bad experiment
   file) or the failing cell's command and its message. A cell whose command
   fails with exit status 1 (an expected outcome such as "does not fit") is
   recorded with status and message columns, not an error. */
int exp_run(const exp_opts *o, sw_err *err);

#endif
