/* planner.h: the planner interface every planner implements (SQLite VFS
   style: a static method table found by name), and the shared options. */
#ifndef PLANNER_H
#define PLANNER_H

#include "../common/params.h"
#include "../sim/plan.h"

struct ga_comm; /* ga/islands.h */

typedef struct planner_opts {
    int64_t memory_budget; /* bytes the plan may use on the device */
    uint64_t seed;         /* random seed (planners that search) */
    double time_budget_s;  /* search time limit; 0: the planner's default */
    int threads;           /* worker threads (>= 1) */
    param_set params;      /* the planner's declared hyperparameters (--set) */
    const char *log_path;  /* convergence log for planners that search, or NULL */
    int progress;          /* progress on stderr: 0 none, 1 a line rewritten in place (a
                              terminal), 2 a line at every tenth of the search (a log) */
    /* Asked now and then by planners that search (swapadvisor's GA between
       generations, hybrid between candidates; not yet the exact solvers) with
       the work done so far (evaluations, candidates): nonzero stops the search
       there and the planner returns the best plan found so far, as if its
       budget had run out (an interrupt). NULL: never. Must not block. */
    int (*stop)(void *ud, long work);
    void *stop_ud;
    const struct ga_comm *comm; /* the processes (MPI ranks) an island search spreads its
                                   islands over (swapadvisor islands=N); NULL: this one */
} planner_opts;

typedef struct planner {
    int version; /* 1 */
    const char *name;
    const char *summary;
    const param_def *params; /* hyperparameters, NULL-key terminated */
    /* Produce a plan for g within o->memory_budget. The plan borrows g.
       Errors: SW_ENOFIT ("does not fit: ..."), SW_EINVAL, SW_ENOMEM. */
    int (*plan)(const graph_profile *g, const planner_opts *o, plan **out, sw_err *err);
    int flags; /* PLANNER_* below; 0 for a planner that keeps within its budget */
} planner;

/* The planner ignores the memory budget by design (`ideal`: everything
   resident, the reference results are normalised to); the conformance test
   checks its plans but not against the budget. */
#define PLANNER_UNBOUNDED 1
/* The planner refuses profiles above a size it can handle (the exact
   solvers' max_ops) with SW_EUNSUPPORTED and one line; the conformance test accepts
   that refusal from such a planner, at any budget. */
#define PLANNER_SIZE_LIMIT 2

size_t planner_count(void);
const planner *planner_at(size_t i);
const planner *planner_find(const char *name);

/* Initialise options for pl with defaults (params declared, none set). */
int planner_opts_init(planner_opts *o, const planner *pl);
void planner_opts_free(planner_opts *o);

/* Options for sub-planner pl run on behalf of another run (a composite
   planner's candidates, a start for an exact solver): pl's defaults, the
   memory budget given, parent's seed (parent NULL: the default), then the
   settings kv, "key=value" strings, NULL-terminated (NULL: none). What else
   the sub-run inherits (threads, time, stop) the caller copies after. The
   one place sub-planner options are built; run them through planner_run.
   Returns 0, or SW_ENOMEM, or SW_EINVAL (a setting pl does not take; the
   message names it), with o freed. */
int planner_opts_derive(planner_opts *o, const planner *pl, const planner_opts *parent,
                        int64_t memory_budget, const char *const *kv, sw_err *err);

/* Run pl: checks options, times the run, stamps the plan's metadata
   (planner, seed, options, planning time). */
int planner_run(const planner *pl, const graph_profile *g, const planner_opts *o, plan **out,
                sw_err *err);

/* Peak memory of the ideal plan (unbounded memory), for budgets given as a
   fraction ("0.4x"). */
int planner_ideal_peak(const graph_profile *g, int64_t *peak, sw_err *err);

/* A memory budget for profile g from text: a size (16GiB, 16G, 16GB, bytes)
   or a fraction of the ideal plan's peak (0.4x); NULL means the device's
   memory. Returns 0 with *budget > 0, or SW_EINVAL with a message naming the
   text (what `--memory` takes everywhere). */
int planner_resolve_budget(const graph_profile *g, const char *text, int64_t *budget,
                           sw_err *err);

/* The registry: one line per built-in planner, X(NAME) for the method
   table planner_NAME defined in planners/NAME.c (the file may be named
   otherwise: dtr_megengine.c), in the order `swapsim planners` lists them.
   Adding a planner adds its line here (docs/adding-a-planner.md); each
   line declares planner_NAME below and enters it in planner.c's registry. */
#define PLANNER_REGISTRY(X)                                                      \
    X(ideal)                                                                     \
    X(none)                                                                      \
    X(swapadvisor)                                                               \
    X(dtr)                                                                       \
    X(dtr_megengine)                                                             \
    X(odswap)                                                                    \
    X(tflms)                                                                     \
    X(vdnn)                                                                      \
    X(sublinear)                                                                 \
    X(hybrid)                                                                    \
    X(optimal_remat)       /* Checkmate's integer program for rematerialisation */ \
    X(optimal_swap)        /* the optimal swapping plan of a fixed schedule, an   \
                              integer program */                                  \
    X(checkpoint_blocks)   /* today's planners (docs/planners.md): checkpointing  \
                              per block, save_on_cpu, ... */                      \
    X(offload_activations)                                                       \
    X(zero_offload)                                                              \
    X(selective)                                                                 \
    X(sac)                                                                       \
    X(act_budget)                                                                \
    X(belady)              /* offline Belady eviction, early copy out, just-in-time copy in */ \
    X(random)              /* test and validation only: random legal swaps */

/* Built-in planners: extern const planner planner_NAME; for each line above. */
#define PLANNER_DECLARE(name) extern const planner planner_##name;
PLANNER_REGISTRY(PLANNER_DECLARE)
#undef PLANNER_DECLARE

#endif
