/* bound.h: lower bounds on the iteration time of every plan of a profile
   under a memory budget (docs/bounds.md gives the argument for each). */
#ifndef BOUND_H
#define BOUND_H

#include "../profiles/graph.h"

/* Above this many operators the reachability bitsets (2 n^2 bits) are not
   built, and "live in every schedule" falls back to the weaker per-op
   argument (persistent storages + the op's own storages + its workspace). */
#define BOUND_MAX_DAG_OPS 16384

typedef struct bound_result {
    int64_t budget_bytes;      /* the budget the bounds hold for */
    double compute_s;          /* sum of op times: every plan runs every op at least once */
    double h2d_rate;           /* the fastest host-to-device rate the simulator uses, B/s */
    double d2h_rate;           /* the fastest device-to-host rate, B/s */
    int64_t persistent_bytes;  /* persistent storages the iteration accesses: live throughout */
    int64_t resident_bytes;    /* max over ops of what must be resident while one runs */
    int32_t resident_op;       /* where (its storages and workspace) */
    int exact_dag;             /* 1: live_bytes from reachability; 0: the per-op fallback */
    int64_t live_bytes;        /* max over ops of the bytes live in every schedule, + workspace */
    int32_t live_op;           /* where */
    int64_t excess_bytes;      /* live_bytes - budget (>= 0): off the GPU there in every plan */
    double swap_s;             /* plans that never recompute: max(compute, excess / h2d_rate) */
    double recompute_s_per_byte; /* cheapest re-run per byte of output over all ops (s/B) */
    double any_s;              /* plans that swap, recompute or both */
    /* the two-window bounds (docs/bounds.md), schedule-free (exact_dag only;
       else the compute time); swap_s and any_s above include them */
    double window_swap_s;      /* plans that never recompute */
    double window_any_s;       /* any plan: re-runs at each storage's own producer's rate */
    int32_t window_op;         /* the cut (op) where window_any_s (or window_swap_s) is set */
    /* the same for plans that keep a given schedule (bound_compute's order) */
    int has_order;
    int64_t order_live_bytes;  /* max over positions of live bytes + workspace */
    int32_t order_live_op;
    int64_t order_excess_bytes;
    double order_swap_s;
    double order_any_s;
    double order_window_swap_s;/* the two-window bounds of the order (included above) */
    double order_window_any_s;
    int32_t order_window_op;
} bound_result;

/* Bounds for g (finished) at budget bytes. order (n_ops op ids, a
   topological order) or NULL adds the bounds for plans that keep that
   schedule. Returns 0; SW_ENOFIT ("no plan fits: ...") when some op alone
   needs more than the budget resident; SW_EINVAL for a non-topological
   order; SW_ENOMEM. */
int bound_compute(const graph_profile *g, int64_t budget, const int32_t *order, bound_result *r,
                  sw_err *err);

/* The better of the two lower bounds a plan is held to: swap_s for a plan
   that reruns no op (reruns == 0), else any_s (or, with same_order, the
   order_ ones). */
double bound_for(const bound_result *r, int reruns, int same_order);

#endif
