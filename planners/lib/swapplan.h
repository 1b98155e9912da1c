/* swapplan.h: SwapAdvisor's swap planner. Given a schedule (a topological
   order of the ops) and a size-class pool allocation, decide which tensors
   to swap out (Belady: the one used farthest in the future, among those
   last used at least a threshold ago) and in, in two passes for the
   iteration's steady state, and emit the plan through the plan builder.
   The state is reusable across calls (the GA evaluates many individuals). */
#ifndef SWAPPLAN_H
#define SWAPPLAN_H

#include "../../sim/builder.h"
#include "../../sim/simulate.h"

typedef struct swapplan swapplan;

/* The distinct non-zero storage sizes of g, ascending (TS in the paper). */
typedef struct sp_sizes {
    int32_t n;
    int64_t *size;    /* n sizes */
    int32_t *of;      /* per tensor: index of its storage's size in size[], -1 for 0 bytes */
} sp_sizes;

/* Planner state for one profile and budget (the pool must fit in
   budget - the largest workspace). Returns NULL on allocation failure. */
swapplan *swapplan_new(const graph_profile *g, int64_t budget);
void swapplan_free(swapplan *sp);
const sp_sizes *swapplan_sizes(const swapplan *sp);
/* Bytes available to the pool: budget minus the workspace reserve. */
int64_t swapplan_pool_bytes(const swapplan *sp);

/* The allocation: cls[i] is the class (0-based) of size i, cnt[c] the
   objects of class c, n_classes = max(cls) + 1. */
typedef struct sp_alloc {
    const int32_t *cls;
    const int32_t *cnt;
    int32_t n_classes;
} sp_alloc;

/* Per class, the most objects one op needs at once (a lower bound on cnt). */
void swapplan_min_counts(const swapplan *sp, const int32_t *cls, int32_t n_classes, int32_t *need);

/* The smallest pool SwapAdvisor's memory model allows: the least bytes,
   over every monotone mapping of the sizes to classes (contiguous runs of
   the ascending sizes, the paper's constraint), of the sum over classes of
   object size x the most storages of the class one op uses (each class's
   least count, swapplan_min_counts). An exact dynamic program over the
   runs. With monotone classes an allocation that fits exists exactly when
   this is at most swapplan_pool_bytes: with these counts every op's
   storages have room, and eviction frees the rest, whatever the schedule.
   cls (n entries, or NULL) receives a mapping reaching it. Returns the
   bytes, or -1 when out of memory. */
int64_t swapplan_min_pool(const swapplan *sp, int32_t *cls);
/* Scratch for swapplan_fitting_cls (the same program's tables, made once;
   one per thread). NULL when out of memory. */
typedef struct swapplan_runs swapplan_runs;
swapplan_runs *swapplan_runs_new(const swapplan *sp);
void swapplan_runs_free(swapplan_runs *r);
/* A random monotone mapping (cls: n entries) whose smallest pool fits in
   bytes: after each size the class ends with probability 1/2 (u: uniform
   draws in [0, 1)), as in the paper's random mapping, except where that
   choice would leave no fitting completion; then the other is taken.
   Allocates nothing. Returns the number of classes, or 0 when even the
   smallest pool does not fit (cls untouched). */
int32_t swapplan_fitting_cls(const swapplan *sp, swapplan_runs *r, int64_t bytes,
                             double (*u)(void *), void *ud, int32_t *cls);
/* Plan schedule (n_ops op ids, topological) with alloc. threshold scales
   the eviction threshold: a victim must have been last used at least
   threshold x (copy time of the tensor needing the space) of compute time
   ago, when such a victim exists. On success *out (if not NULL) receives
   the plan (borrowing the profile) and *r (if not NULL) its simulation.
   SW_ENOFIT when the allocation cannot run the schedule at all. */
int swapplan_make(swapplan *sp, const int32_t *schedule, const sp_alloc *alloc, double threshold,
                  plan **out, sim_result *r, sw_err *err);

/* Evaluations (swapplan_make with out NULL and r not NULL) skip the plan
   builder: the planner writes the simulator's compiled form directly,
   with the builder's placements and edges, so *r is what simulating the
   builder's plan gives. on = 0 makes them go through the builder (tests
   compare the two). On by default. */
void swapplan_set_fast(swapplan *sp, int on);
/* on = 1: choose each victim by sorting every resident storage of its
   class by key instead of walking the per-class position bitsets (the
   reference the tests compare the walk with; slow). Returns 0, or SW_ENOMEM. */
int swapplan_set_naive_victims(swapplan *sp, int on);
/* Evaluations the fast path completed (it declines the rare plans it does
   not handle: the builder's errors, relocation beyond four rounds). */
int64_t swapplan_fast_count(const swapplan *sp);

#endif
