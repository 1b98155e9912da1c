/* runner.h: the experiment runner. An experiment file (JSON, in
   experiments/) declares a grid of variables and a swapsim command
   template; the runner expands the grid into cells, runs each cell's
   command (in parallel processes), caches each result keyed by a hash of
   the command and the binary, and writes one CSV row per cell: the grid
   variables, then every field of the command's JSON output. */
#ifndef RUNNER_H
#define RUNNER_H

#include "../common/sw.h"

/* The processes of one distributed run (experiments/mpi.c makes one over
   MPI ranks): every rank expands the same grid; rank 0 reads the cache,
   hands the other cells out as slots free up (its own and the ranks'),
   stores each result in the cache as it arrives and writes the CSV, which
   is the one a single process writes. */
typedef struct exp_link {
    int version;     /* 1 */
    int rank, size;  /* this process, and how many */
    const int *node; /* per rank, its machine (0...size-1; ranks on one machine share it) */
    void *ctx;       /* the transport's state */
    /* Send n bytes to rank `to`; tag says what they are. */
    int (*send)(void *ctx, int to, int tag, const void *buf, size_t n, sw_err *err);
    /* A message that has arrived, without waiting: 1 with *from, *tag and
       *buf (n bytes, the caller frees it with sw_free), 0 if there is none,
       or an error. */
    int (*recv)(void *ctx, int *from, int *tag, char **buf, size_t *n, sw_err *err);
    /* Every rank's n bytes, in rank order, into all (size * n bytes). */
    int (*allgather)(void *ctx, const void *mine, void *all, size_t n, sw_err *err);
} exp_link;

typedef struct exp_opts {
    const char *file;     /* experiment file */
    const char *out_dir;  /* where CSVs, logs and the cache go (default out/) */
    const char *swapsim;  /* the swapsim binary to run */
    const char *data;     /* the recorded data directory (for {data}); NULL: sw_data_dir() */
    int full;             /* 1: the paper's budgets; 0: quick mode */
    int jobs;             /* parallel cells (default: cores) */
    int progress;         /* progress on stderr: 0 none, 1 a line rewritten in place (a
                             terminal), 2 a line per tenth of the cells (a log) */
    int dry_run;          /* print the commands, run nothing */
    const exp_link *link; /* several processes share the cells (NULL: this one alone) */
    char *const *env;     /* the environment of the cells' commands (NULL: this process's) */
    const char *text;     /* the experiment itself (JSON text) instead of reading file, which
                             then only names it in messages (swapsim sweep's grids); NULL: read */
    int no_csv;           /* 1: write no CSV (the caller takes the results from cell_done) */
    /* Called for every cell once all have run, in grid order (i: the cell's
       index, the last variable varying fastest): status 0 ok or 1 an
       expected failure, the command's output (JSON text, "" if none) and
       the first line of its error output ("" if none). NULL: not called. */
    void (*cell_done)(void *ud, size_t i, int status, const char *output, const char *message);
    void *ud;             /* cell_done's first argument */
} exp_opts;

/* Run one experiment. Errors name the file and JSON path (bad experiment
   file) or the failing cell's command and its message. A cell whose command
   fails with exit status 1 (an expected outcome such as "does not fit") is
   recorded with status and message columns, not an error. With a link,
   every rank calls it with the same file and ends with the same status: an
   error on one rank (prefixed "rank R: ") ends every rank's run, none waits. */
int exp_run(const exp_opts *o, sw_err *err);

#endif
