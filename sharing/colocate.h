/* colocate.h: several training jobs on one GPU (Zico, USENIX ATC '21): each
   job is an iteration's memory curve (bytes in use against time, from its
   plan's simulation) and its share of the GPU; a discrete-event simulation
   runs the jobs together under a sharing policy and reports each job's
   throughput, stalls and the combined memory (docs/colocate.md). */
#ifndef COLOCATE_H
#define COLOCATE_H

#include <stdint.h>

#include "../common/sw.h"
#include "../profiles/device.h"
#include "../profiles/graph.h"

/* A sharing policy: a table of methods the simulation (co_run) calls at
   each event, one static const table per policy, found by name; a NULL
   method means the default. The policies (colocate.c):
     time     one job's iteration at a time on the whole GPU
     spatial  all jobs at once; a job whose memory does not fit fails (out of
              memory), or with a fallback curve goes on swapping
     zico     all jobs at once; each iteration starts after the smallest stall
              that keeps the predicted combined memory within the GPU's, and
              an allocation that would not fit waits for memory */
typedef struct co_sim co_sim; /* one run's state (colocate.c) */
typedef struct co_policy {
    const char *name;    /* "zico": --policy's value */
    int oom_fallback;    /* 1: a job out of memory may switch to its swapping curve
                            (co_job.fallback; --on-oom swap) */
    void (*tick)(co_sim *s);            /* at each event, after arrivals (NULL: nothing) */
    int (*start)(co_sim *s, int32_t q); /* ready job q may start an iteration now; returns 1
                                           when no other job may start at this event */
    double (*rate)(const co_sim *s);    /* the running jobs' progress rate (NULL: they share
                                           compute and PCIe, processor sharing) */
    double (*wake)(const co_sim *s, int32_t i); /* an event the policy wants for job i
                                                   (NULL: none) */
    void (*no_room)(co_sim *s, int32_t i); /* a running job's next step does not fit
                                              (NULL: it waits for memory) */
} co_policy;

/* The policies, in the order of --policy's choices (time, spatial, zico):
   count, the i-th (NULL past the end), the one named (NULL: none), and a
   policy's name ("?" for NULL). */
size_t co_policy_count(void);
const co_policy *co_policy_at(size_t i);
const co_policy *co_policy_find(const char *name);
const char *co_policy_name(const co_policy *p);

/* One job: its iteration's memory curve, a step function: level[k] bytes
   from at[k] to at[k + 1] seconds of the job's own progress (at[0] = 0,
   at[n] = iter_s). */
typedef struct co_job {
    char name[64];
    int32_t n;            /* steps */
    double *at;           /* n + 1 times, s (owned) */
    int64_t *level;       /* n levels, bytes (owned) */
    double iter_s;        /* iteration time alone on the GPU, s */
    int64_t persistent;   /* bytes held between iterations (weights, optimizer state) */
    double util;          /* share of the GPU's compute the job uses alone, (0, 1] */
    double pcie;          /* share of the PCIe link it uses alone (its busiest copy direction's
                             busy time over its iteration), [0, 1] */
    double arrival_s;     /* when it starts */
    int iterations;       /* how many it runs */
    struct co_job *fallback; /* spatial: the curve it switches to when out of memory (a
                                swapping plan; owned), or NULL: it fails */
} co_job;

/* Fill j from profile g planned by planner (a registered name) within
   budget bytes (0: the device's memory): the plan is verified, then one
   steady-state period of its simulation gives the curve; util is the
   time-weighted bottleneck utilisation of the ops that carry FLOP and byte
   counts (max of FLOPs / peak FLOP/s and bytes / memory bandwidth), 1 where
   none do; pcie the busier copy stream's busy time over the iteration.
   time_budget_s limits a planner that searches (0: its default). Errors
   name the job. Free with co_job_free. */
int co_job_from_profile(co_job *j, const char *name, const graph_profile *g,
                        const char *planner_name, int64_t budget, double time_budget_s,
                        sw_err *err);
/* Fill j with a given curve (copied). */
int co_job_from_curve(co_job *j, const char *name, const double *at, const int64_t *level,
                      int32_t n, int64_t persistent);
void co_job_free(co_job *j);

typedef struct co_job_result {
    int done;             /* iterations completed */
    int failed;           /* 1: out of memory (spatial) or deadlocked (zico) */
    char why[160];        /* when failed */
    double finish_s;      /* when its last iteration ended (or it failed) */
    double iter_per_s;    /* done / (finish - arrival); 0 for a job that failed (it crashed:
                             its work is lost) */
    double normalized;    /* iter_per_s x iter_s: 1 = as fast as alone */
    double stall_s;       /* waiting for memory (zico) or for its turn (time: other jobs'
                             iterations and the switches) */
    double switch_s;      /* time: copying persistent memory out and in at switches */
    int fell_back;        /* spatial: ran out of memory and went on with its swapping plan */
    double last_switch_s; /* time: the length of its latest switch (for the trace) */
} co_job_result;

/* A span of one job's timeline (for the Chrome trace). */
enum { CO_SPAN_ITERATION, CO_SPAN_WAIT, CO_SPAN_SWITCH, CO_SPAN_LOST };
typedef struct co_span {
    int32_t job;
    int kind;             /* CO_SPAN_*: an iteration, waiting to start one, a switch, an
                             iteration cut short by an out of memory (its work lost) */
    double start, end;    /* s */
} co_span;

typedef struct co_result {
    co_job_result *jobs;  /* n_jobs (owned) */
    double makespan_s;    /* last finish */
    int64_t peak_bytes;   /* largest combined memory in use */
    double total_normalized; /* jobs' worth of throughput over one common window, the first
                                arrival to the last finish: the iterations done (failed jobs:
                                none) times each job's iteration time alone, over the window */
    int64_t memory;       /* the GPU memory shared */
    int record;           /* the run was asked to record the timeline below; without,
                             n_samples <= 1 and n_spans == 0 (memory does not grow with
                             the iterations) */
    /* combined memory over time (owned): n_samples change points */
    int32_t n_samples;
    double *t;
    int64_t *bytes;       /* n_samples x (n_jobs + 1): each job's, then the total */
    co_span *spans;       /* n_spans (owned) */
    int32_t n_spans;
    size_t spans_cap;
} co_result;

/* Run jobs[0..n) together on memory bytes with policy; h2d, d2h: the copy
   rates for switches under `time` (bytes/s). With record, r also holds the
   timeline (every memory change point and span, memory linear in the
   iterations); without, only the results. Returns 0 (a job failing is a
   result, not an error); SW_EINVAL for an empty list or bad figures;
   SW_ENOMEM. Free with co_result_free. */
int co_run(const co_job *jobs, int32_t n, int64_t memory, const co_policy *policy, double h2d,
           double d2h, int record, co_result *r, sw_err *err);
void co_result_free(co_result *r);

/* A workload file (docs/colocate.md): jobs (a profile, a planner and its
   budget, an arrival, iterations, optionally a utilisation), the device and
   the memory they share. */
typedef struct co_workload {
    co_job *jobs;       /* n_jobs (owned) */
    int32_t n_jobs;
    int64_t memory;     /* bytes shared */
    dev_spec device;    /* the copy rates for switches */
} co_workload;

/* Read and prepare a workload: each profile (a path relative to the
   workload's directory) is read and planned, the plan verified and
   simulated for its memory curve. With fallbacks, each job also gets the
   curve of an ODSwap plan within an equal share of the memory, which
   spatial sharing switches it to when it runs out of memory (--on-oom
   swap). time_budget_s limits the jobs' planners that search (0: each
   planner's default). Errors name the file, the JSON path or the job. Free
   with co_workload_free. */
int co_workload_read(const char *path, int fallbacks, double time_budget_s, co_workload *w,
                     sw_err *err);
void co_workload_free(co_workload *w);

#endif
