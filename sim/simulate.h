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
/* Compile and run in one call. */
int sim_plan(const plan *p, const dev_spec *dev, const sim_opts *o, sim_result *r, sw_err *err);

/* Write a Chrome trace (Perfetto opens it) of the steady-state iterations:
   one track per stream, a counter track for memory in use. */
int sim_write_trace(const plan *p, const dev_spec *dev, const char *path, sw_err *err);

#endif
