/* simulate.h: deterministic discrete-event timing of a plan: three in-order
   streams, copies sharing PCIe as the device spec says, iterations repeated
   until the iteration time is steady. */
#ifndef SIMULATE_H
#define SIMULATE_H

#include "plan.h"

typedef struct sim_result {
    double iteration_time_s;      /* steady-state time per iteration */
    double ideal_time_s;          /* sum of op compute times (infinite memory) */
    double normalized_throughput; /* ideal_time_s / iteration_time_s */
    double samples_per_s;         /* batch / iteration_time_s */
    int64_t peak_memory_bytes;    /* max bytes of resident tensors + workspace reserve */
    int64_t reserved_bytes;       /* arena (pool total or address high water) + reserve */
    int64_t swap_in_bytes, swap_out_bytes; /* per iteration */
    int32_t swap_ins, swap_outs, drops, reruns; /* per iteration */
    double recompute_time_s;      /* per iteration */
    double stall_swap_in_s;       /* compute idle waiting for a swap-in, per iteration */
    double stall_memory_s;        /* ... for memory (a swap-out or drop to free it) */
    double stall_dependency_s;    /* ... for anything else */
    double h2d_busy_s, d2h_busy_s;/* per iteration, time each copy stream is busy */
    int iterations;               /* iterations simulated */
    int steady;                   /* 1 if the iteration time converged */
    int period;                   /* period of the steady state (usually 1) */
    int64_t tasks_simulated;
} sim_result;

/* Trace events: a task (start..end), or with task -1 a memory level change at start. */
typedef void (*sim_trace_fn)(void *ud, int iter, int32_t task, int stream, double start,
                             double end, int64_t mem_in_use);

typedef struct sim_opts {
    int max_iters;        /* default 64 */
    sim_trace_fn trace;   /* NULL: no trace */
    void *trace_ud;
    int trace_from, trace_to; /* iterations traced (inclusive) */
} sim_opts;

typedef struct sim_prog sim_prog;

/* Compile a plan for a device (NULL: the profile's). The plan must outlive
   the program only for trace labels. */
int sim_compile(const plan *p, const dev_spec *dev, sim_prog **out, sw_err *err);
void sim_prog_free(sim_prog *s);
int32_t sim_prog_tasks(const sim_prog *s);
/* Run the simulation. SW_EDEADLOCK if the plan cannot make progress. */
int sim_run(const sim_prog *s, const sim_opts *o, sim_result *r, sw_err *err);

/* Build a program task by task without a plan, reusing its buffers from one
   program to the next (the GA's evaluations): sim_prog_new() once, then per
   program sim_prog_begin (n tasks for profile g, borrowed, on dev, NULL:
   the profile's; op_time, borrowed, NULL or the ops' compute times as the
   profile has them, in a compact array for speed), n calls of sim_prog_add
   in task order (or one of sim_prog_add_all), sim_prog_end.
   sim_prog_add takes the task's kind, its op (run, rerun) or storage, the
   bytes it places when it starts and those it frees implicitly when it
   ends (a swap-out's or drop's own storage is added), and its dependencies
   as a plan task's. The result is the program sim_compile makes of the
   same tasks. Errors as sim_compile's; after one the program is unusable
   until the next sim_prog_begin. */
sim_prog *sim_prog_new(void);
int sim_prog_begin(sim_prog *s, const graph_profile *g, const dev_spec *dev, int32_t n,
                   const double *op_time, sw_err *err);
int sim_prog_add(sim_prog *s, int kind, int32_t x, int64_t alloc, int64_t freeb,
                 const int32_t *dep, int n_dep, const int32_t *pdep, int n_pdep, sw_err *err);
/* Instead of n calls of sim_prog_add: every task at once, from arrays of
   n (kind, x, alloc, freeb, as sim_prog_add's) and of 2n (dep2, pdep2: each
   task's dependencies in this iteration and the previous one, at most two,
   -1 for none, added in ascending order). The same program. */
int sim_prog_add_all(sim_prog *s, const uint8_t *kind, const int32_t *x, const int64_t *alloc,
                     const int64_t *freeb, const int32_t *dep2, const int32_t *pdep2, sw_err *err);
int sim_prog_end(sim_prog *s, int64_t base_mem, int64_t reserved, sw_err *err);

/* Scratch memory for sim_run_ws, kept between runs (one per thread). */
typedef struct sim_ws sim_ws;
sim_ws *sim_ws_new(void);
void sim_ws_free(sim_ws *w);
/* sim_run with its buffers in w: no allocation once w has grown. */
int sim_run_ws(const sim_prog *s, const sim_opts *o, sim_ws *w, sim_result *r, sw_err *err);
/* Compile and run in one call. */
int sim_plan(const plan *p, const dev_spec *dev, const sim_opts *o, sim_result *r, sw_err *err);

/* Write a Chrome trace (Perfetto opens it) of the steady-state iterations:
   one track per stream, a counter track for memory in use. */
int sim_write_trace(const plan *p, const dev_spec *dev, const char *path, sw_err *err);

#endif
