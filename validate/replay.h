/* replay.h: replay a plan for real and measure it: one executor (exec.c)
   over the backend interface of backend.h, with a CPU backend that runs
   everywhere (cpu.c) and a CUDA backend in a shared object loaded on
   demand (cuda_load.c, cuda/). docs/validate.md describes the harness. */
#ifndef VAL_REPLAY_H
#define VAL_REPLAY_H

#include "../sim/plan.h"
#include "backend.h"

typedef struct val_opts {
    int iterations;       /* measured iterations, run without canary work (default 10) */
    int warmup;           /* iterations run before measuring (default 2, at least 1) */
    int canary_iterations;/* iterations of the separate canary pass, run after the timed ones
                             with canaries filled and checked (default 3; 0: no canary pass) */
    int poison;           /* canary pass: poison memory when the plan releases it (default 1) */
    int64_t sample_words; /* stride of end-of-op checks and poison, 8-byte words (default
                             512: one word per 4 KiB page) */
    int lead;             /* run-ahead bound (default VAL_LEAD; -1 none) */
    int device_index;     /* cuda: GPU (default 0) */
    int ops_library;      /* cuda: cuBLAS/cuDNN for ops with known shapes (default 0) */
    double time_scale;    /* cpu: real seconds per plan second; 0 chooses (default) */
    int wait_mode;        /* cpu: 0 sleep then spin (default), 1 spin, 2 sleep */
    double max_seconds;   /* longest replay accepted, in simulated seconds of all iterations
                             (warm-up and canary pass included; default VAL_MAX_SECONDS);
                             longer: SW_EINVAL */
    const dev_spec *device; /* the GPU the replay runs on, for the simulation (and the cpu
                               backend's copy rates): NULL: the profile's device */
    int tf32;             /* cuda, --ops library: fp32 calls may use TF32 (default 0) */
} val_opts;

#define VAL_MAX_SECONDS 600.0 /* default of val_opts.max_seconds */
#define VAL_CANARY_ITERATIONS 3 /* default of val_opts.canary_iterations */

typedef struct val_result {
    char backend[16];
    char device[128];
    double time_scale;       /* real seconds per plan second, of the timed iterations */
    int iterations, warmup;
    double iteration_time_s; /* measured mean of the timed iterations (no canary work), in plan
                                seconds (real / time_scale) */
    double iteration_min_s, iteration_max_s; /* fastest and slowest timed iteration */
    char sim_device[32];     /* the device simulated for (val_opts.device, else the profile's) */
    double simulated_time_s; /* sim_plan's steady-state iteration time on sim_device (val_replay) */
    double error;            /* iteration_time_s / simulated_time_s - 1 */
    double profile_simulated_time_s; /* the same on the profile's device (val_replay) */
    double profile_error;    /* iteration_time_s / profile_simulated_time_s - 1 */
    double ideal_time_s;     /* sum of op times */
    int canary_iterations;   /* iterations of the canary pass (0: none ran) */
    double canary_iteration_time_s; /* its mean iteration time, canary work included (0 with
                                       fewer than 2 iterations) */
    int64_t canary_checks;   /* regions checked */
    int64_t canary_violations; /* mismatches (CPU: regions; CUDA: thread blocks) */
    char first_violation[768]; /* the first mismatch, described */
    int64_t overruns, timed; /* timed iterations: ops and copies that ran past their modelled
                                end / all */
    int32_t dangling;        /* accesses to storages the plan does not hold resident there */
    int32_t tasks, edges, events;
    double wall_s;           /* wall-clock time of the replay, both passes */
} val_result;

void val_opts_init(val_opts *o);

/* The backend called name: "cpu" (built in) or "cuda" (loads
   libswapsim_cuda.so: $SWAPSIM_CUDA_LIB, else next to the executable and
   in ../lib/swapsim, ../build/rel, ..). NULL with SW_ENOTFOUND or
   SW_EUNSUPPORTED (a one-line reason) otherwise. */
const val_backend_methods *val_backend_find(const char *name, sw_err *err);
extern const val_backend_methods val_cpu_backend;

/* Execute p on backend m: lay out, build the event graph; then the timed
   pass (the backend opened without canaries; warmup + iterations
   iterations enqueued, the iterations after the warm-up measured) and the
   canary pass (opened again with canaries; canary_iterations iterations,
   every one checked). Canary mismatches are results, not errors. Errors: SW_EINVAL (a plan that cannot be laid out), SW_EDEADLOCK,
   SW_EUNSUPPORTED (the backend cannot open: no device, too large),
   SW_ENOMEM. */
int val_execute(const plan *p, const val_backend_methods *m, const val_opts *o, val_result *r,
                sw_err *err);

/* Find the backend, execute, simulate (sim_plan on o->device, or the
   profile's device, and on the profile's device) and fill the simulated
   times and errors. */
int val_replay(const plan *p, const char *backend, const val_opts *o, val_result *r,
               sw_err *err);

/* Record a profile on a GPU (`swapsim profile`): every op of g timed under
   CUPTI (cuBLAS/cuDNN where its attrs give shapes, otherwise a kernel that
   reads its inputs and writes its outputs, or the calibrated kernel), reps
   times each, median. The copy *out has the measured times and provenance
   "recorded with swapsim profile on <GPU>". unknown: 0 touch, 1
   calibrated, 2 keep the profile's time. */
typedef struct val_profile_opts {
    int device_index;
    int reps;    /* default 5 */
    int unknown; /* default 0 */
    const char *source_file; /* for provenance */
    int tf32;    /* fp32 library calls may use TF32 (default 0: strict fp32) */
} val_profile_opts;
int val_profile(const graph_profile *g, const val_profile_opts *o, graph_profile **out,
                sw_err *err);

/* calibrate-device (devcal.c): measure a GPU through the CUDA shared
   object's second entry point and turn the figures into a device file. */
typedef struct val_calib_opts {
    int device_index;   /* which GPU */
    int64_t copy_bytes; /* bytes of each timed copy (default 256 MiB) */
    int repeats;        /* timings per figure, median kept (default 5) */
    const char *name;   /* the device's name in the file; NULL: from the GPU's name */
} val_calib_opts;

void val_calib_opts_init(val_calib_opts *o);
/* The calibrate-device entry point of libswapsim_cuda.so (loaded as for
   the cuda backend), or NULL with SW_EUNSUPPORTED and why. */
val_cuda_calibrate_fn val_cuda_calibrate_find(sw_err *err);
/* Measure GPU o->device_index into *res. Errors, with a one-line reason:
   SW_EUNSUPPORTED without the shared object or such a device, SW_EIO when
   a CUDA call fails on the device. */
int val_calibrate(const val_calib_opts *o, val_calib_result *res, sw_err *err);
/* The device a measurement describes: copy rates, per-copy latency (the
   mean of both directions), usable memory (rounded down to MiB), GEMM
   peaks (fp32 without tensor cores; fp16), memory bandwidth and launch
   time; named name (NULL: the GPU's name in lower case, dashes for the
   rest), described with the GPU, index and date. SW_EINVAL naming the
   figure when one is not a positive finite number or out of range. */
int val_calib_device(const val_calib_result *res, int device_index, const char *name,
                     const char *date, dev_spec *out, sw_err *err);
/* Append the device file's "calibration" object: what was measured, how,
   on what and when (date: "2025-01-31T12:00:00Z"). */
void val_calib_to_json(const val_calib_opts *o, const val_calib_result *res, const char *date,
                       sw_buf *b);

#endif
