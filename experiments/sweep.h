/* sweep.h: one profile's planners x memory budgets in one call (`swapsim
   sweep`, the Python package): the grid with the lower bound beside it, the
   smallest budget each planner fits in (bisection to a tolerance), and for
   generated models the largest batch each fits at one budget. The cells are
   run by an evaluator the caller supplies: the command line runs them as
   swapsim processes through the experiment runner (parallel, cached), the
   library's own (sweep_eval_local) in this process; both give the same
   numbers for planners that do not depend on time. */
#ifndef SWEEP_H
#define SWEEP_H

#include "../common/params.h"
#include "../profiles/graph.h"

#define SWEEP_MAX_PLANNERS 32
#define SWEEP_MAX_BUDGETS 256

/* One cell: what to run, then its result. */
typedef struct sweep_cell {
    const char *planner; /* a planner's name, or NULL: the lower bound (swapsim bound) */
    int64_t budget;      /* memory budget, bytes */
    int64_t batch;       /* generated models under --batch: the batch; 0: the profile as it is */
    int done;            /* 1 once evaluated */
    int fits;            /* 1: a verified plan within the budget was simulated (the bound:
                            some plan may fit) */
    double ntp;          /* normalised throughput (ideal time / iteration time); the bound:
                            the most any plan reaches */
    double iter_s;       /* iteration time (the bound: its lower bound), s */
    double sps;          /* samples per second */
    int64_t peak;        /* simulated peak memory, bytes */
    char message[1024];  /* why it does not fit (the one line), or "" */
} sweep_cell;

/* Evaluates n cells (any order, any parallelism) and fills in their
   results; a cell that does not fit is a result, not an error. Returns 0,
   or an error that ends the sweep. */
typedef int (*sweep_eval_fn)(void *ud, sweep_cell *cells, size_t n, sw_err *err);

/* Per planner, the result of --fit or of the batch search. */
typedef struct sweep_fit {
    int status;     /* SWEEP_FIT_* */
    int64_t value;  /* --fit: the smallest budget found to fit (bytes); batch: the largest
                       batch that fits */
    int64_t other;  /* --fit: the largest budget found not to fit (< value); batch: the
                       smallest batch found not to fit (> value); -1 where none was tried */
    sweep_cell at;  /* the cell at value */
    int evals;      /* cells evaluated for this search */
} sweep_fit;

enum {
    SWEEP_FIT_FOUND = 0, /* value found, within the tolerance */
    SWEEP_FIT_NEVER,     /* does not fit at the largest budget (batch: at the smallest batch) */
    SWEEP_FIT_ALWAYS     /* batch: fits at the largest batch of the range */
};

typedef struct sweep {
    /* inputs, set by the caller before sweep_setup */
    const graph_profile *g;  /* the profile (under --batch: the model at the range's first
                                batch, for its name, device and peak); borrowed */
    const char *model;       /* generated model under --batch: its name; else NULL */
    const char *model_opts;  /* its options as "k=v,k=v" (batch excluded), or NULL */
    uint64_t seed;           /* planners' seed (default 1) */
    double time_budget_s;    /* search time of planners that search (swapadvisor, hybrid) */
    int threads;             /* how many cells run at once (the results do not depend on it) */
    /* from sweep_setup */
    const char *planners[SWEEP_MAX_PLANNERS];
    int npl;
    char skipped[1024];      /* "all": the planners left out and why, one line, or "" */
    int64_t ideal_peak;      /* the profile's ideal peak, bytes (what 1x means) */
    int64_t budgets[SWEEP_MAX_BUDGETS];
    char labels[SWEEP_MAX_BUDGETS][32]; /* as given ("0.3x", "16GiB") */
    int nb;
    int64_t batch_lo, batch_hi; /* under --batch: the range */
    int64_t tol;             /* --fit: tolerance, bytes (0: no fit) */
    char tol_label[32];      /* as given ("0.01x") */
    /* results */
    sweep_cell *grid;        /* nb x (npl + 1): per budget, the bound then each planner */
    sweep_fit fit[SWEEP_MAX_PLANNERS]; /* --fit or --batch results, per planner */
    int did_fit, did_batch;
    sweep_cell *log;         /* every cell evaluated, in order (grid, then searches) */
    size_t nlog, caplog;
} sweep;

/* Resolve planners ("all", or names separated by commas), budgets (a list
   separated by commas of sizes and fractions of the ideal peak such as
   0.4x, and ranges FROM:TO:STEP such as 0.3x:1.0x:0.1x), the --fit
   tolerance (NULL: no fit; a size or a fraction) and under --batch the
   batch range (LO:HI; NULL: none). "all" is every registered planner but
   ideal (the reference: 1 by definition), random (a test planner) and the
   exact solvers that refuse profiles above a size (named in skipped).
   Errors (SW_EINVAL, SW_ENOTFOUND) name the option and the text. */
int sweep_setup(sweep *s, const char *planners, const char *budgets, const char *fit_tol,
                const char *batches, sw_err *err);

/* Run the grid (every planner and the bound at every budget), then the
   --fit bisections or the batch search; every cell through eval. */
int sweep_run(sweep *s, sweep_eval_fn eval, void *ud, sw_err *err);

/* The evaluator of this process: plan, verify and simulate each cell as
   `swapsim run --json` does (the bound as `swapsim bound`), one after
   another; ud is the sweep. */
int sweep_eval_local(void *ud, sweep_cell *cells, size_t n, sw_err *err);

/* Generate s->model at batch (0: the options' own or the generator's
   default) with s->model_opts ("k=v,..."; device=NAME|FILE picks the
   device, v100 by default, as swapsim model does). Caller frees *g. */
int sweep_make_model(const sweep *s, int64_t batch, graph_profile **g, sw_err *err);

/* The results as one JSON object (docs/cli.md, swapsim sweep), as CSV (one
   row per cell evaluated, then a row per --fit or batch result) and as the
   table swapsim sweep prints. */
void sweep_json(const sweep *s, sw_buf *b);
void sweep_csv(const sweep *s, sw_buf *b);
void sweep_table(const sweep *s, sw_buf *b);

void sweep_free(sweep *s);

#endif
