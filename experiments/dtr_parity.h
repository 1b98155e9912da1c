/* dtr_parity.h: the parity experiment between swapsim's `dtr` planner and
   the DTR authors' simulator (simrd) on the five shared DTR logs. */
#ifndef DTR_PARITY_H
#define DTR_PARITY_H

#include "../common/sw.h"

typedef struct parity_opts {
    const char *data;          /* the recorded data folder (holds dtr-logs/) */
    const char *const *sets;   /* extra dtr planner options "key=value" */
    int nsets;
    int verify;                /* verify every plan (plan_verify) */
    const char *only;          /* run only logs whose name contains this, or NULL */
} parity_opts;

typedef struct parity_summary {
    int cells;       /* cells with a simrd figure */
    int verdicts_ok; /* same verdict (ok / OOM / exceeded) */
    int matches;     /* same verdict and, if ok, overhead within 3% */
    double max_diff; /* largest relative overhead difference among ok/ok cells */
    int arena_verdicts_ok, arena_matches; /* the same with the arena limited to the budget */
    double max_arena_over; /* largest arena / budget - 1 of the byte-budget plans */
    double seconds;  /* wall time */
} parity_summary;

/* Import each log, run `dtr` with heuristics h_DTR, h_DTR^eq and LRU at the
   issue's ratios (budget = floor(ratio x ideal peak)), twice: with the
   budget on resident bytes (simrd's semantics; the plan's arena is what the
   allocator needs) and with the arena limited to the budget; verify and
   simulate each plan (overhead = simulated iteration time / total compute),
   and write the table as CSV into csv and markdown into md beside simrd's
   figures.
   Logs missing from the folder are listed as skipped. Errors: SW_EIO (no
   logs at all), SW_EINVAL, SW_ENOMEM. */
int parity_run(const parity_opts *o, sw_buf *csv, sw_buf *md, parity_summary *sum, sw_err *err);

#endif
