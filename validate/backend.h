/* backend.h: the replay backend interface (SQLite VFS style: a static method
   table found by name) that the one executor (exec.c) drives: streams,
   events, device arena and host buffers, copies, operators, timing marks.
   The CUDA backend lives in a shared object built by nvcc, so this header
   is plain C that C++ also compiles, and uses no other swapsim type. */
#ifndef VAL_BACKEND_H
#define VAL_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __CUDACC__
#define VAL_HD __host__ __device__
#else
#define VAL_HD
#endif

/* Bumped whenever a struct below or the method table changes; the CUDA
   shared object must have been built with the same value. */
#define VAL_ABI_VERSION 3

enum { VAL_STREAM_COMPUTE = 0, VAL_STREAM_H2D = 1, VAL_STREAM_D2H = 2 };
enum { VAL_DEVICE = 0, VAL_HOST = 1 };
enum { VAL_H2D = 0, VAL_D2H = 1 };

/* Canary words. Every 8 bytes of a live buffer hold its key (the byte
   pattern is taken from the region's first byte, so a region at any
   alignment is fine): tag byte, storage id + 1 (24 bits), state (32 bits).
   Released memory holds VAL_POISON in sampled words. */
#define VAL_KEY_TAG 0x5Au
#define VAL_POISON 0xDEDEDEDEDEDEDEDEull
#define VAL_ZERO_KEY 0ull

static inline VAL_HD uint64_t val_key_make(int32_t storage, uint32_t state)
{
    return ((uint64_t)VAL_KEY_TAG << 56) | (((uint64_t)(uint32_t)(storage + 1) & 0xFFFFFFull) << 32) |
           (uint64_t)state;
}

/* What an operator does to one region of the device arena. */
enum {
    VAL_R_CHECK = 1,   /* check key_in at the start (every word) and at the end (sampled) */
    VAL_R_FILL = 2,    /* fill with key_out at the start, check it (sampled) at the end */
    VAL_R_RELEASE = 4  /* released when the op ends: poisoned (sampled) after the end checks */
};

typedef struct val_region {
    int64_t off, bytes;     /* arena byte range */
    uint64_t key_in;        /* VAL_R_CHECK: expected contents */
    uint64_t key_out;       /* VAL_R_FILL: contents written */
    int32_t tensor;         /* storage id, for messages */
    int32_t mode;           /* VAL_R_* bits */
} val_region;

/* Library calls: what validate/libmap.c matches an op to, for the CUDA
   backend's ops_library mode (the CPU backend ignores them). */
enum {
    VAL_CALL_TOUCH,           /* memory-bound kernel: reads X, writes Y (both -1: every
                                 region of the op, as it reads and writes them) */
    VAL_CALL_GEMM,            /* cuBLAS, row-major: Y[m, n] = op(X)[m, k] op(W)[k, n],
                                 strided over batch */
    VAL_CALL_CONV_FWD,        /* cuDNN: Y = conv(X, W) */
    VAL_CALL_CONV_BWD_DATA,   /* cuDNN: DX = conv_backward_data(DY, W) */
    VAL_CALL_CONV_BWD_FILTER, /* cuDNN: DW = conv_backward_filter(X, DY) */
    VAL_CALL_BN_FWD,          /* cuDNN spatial batch norm, training: Y = bn(X; W) */
    VAL_CALL_BN_BWD,          /* cuDNN: DX, DW (scale and bias) = bn_backward(X, DY; W) */
    VAL_CALL_POOL_FWD,        /* cuDNN max / average pooling: Y = pool(X) */
    VAL_CALL_POOL_BWD,        /* cuDNN: DX = pool_backward(Y, DY, X) */
    VAL_CALL_SOFTMAX_FWD,     /* cuDNN softmax over rows: Y = softmax(X) */
    VAL_CALL_SOFTMAX_BWD,     /* cuDNN: DX = softmax_backward(Y, DY) */
    VAL_CALL__COUNT
};

/* Operand slots of a call (val_call.arg). X, W and DY are read; Y, DX and
   DW are written. GEMM: A in X, B in W, C in Y. Batch norm: W holds the
   scale (c floats) then the bias (c floats), fp32; DW their gradients.
   Pooling and softmax backward: W holds the forward output y. */
enum { VAL_ARG_X, VAL_ARG_W, VAL_ARG_DY, VAL_ARG_Y, VAL_ARG_DX, VAL_ARG_DW, VAL_ARGS };
#define VAL_ARG_NONE (-1)    /* no operand */
#define VAL_ARG_SCRATCH (-2) /* the backend's scratch buffer (a fused op's temporary) */

/* Shapes. */
typedef struct val_gemm_shape {
    int64_t m, n, k, batch;   /* batch independent products, each operand contiguous */
    int32_t trans_a, trans_b; /* X stored [k, m] / W stored [n, k] */
} val_gemm_shape;
typedef struct val_nchw_shape {
    int64_t n, c, h, w;       /* input (convolution, batch norm, pooling) */
    int64_t k, ho, wo;        /* output channels (convolution) and size */
    int32_t r, s, stride, pad_h, pad_w, groups; /* window */
    int32_t max;              /* pooling: 1 max, 0 average (padding included) */
} val_nchw_shape;
typedef struct val_rows_shape {
    int64_t rows, cols;       /* softmax over each row */
} val_rows_shape;

typedef struct val_call {
    int32_t kind;             /* VAL_CALL_* */
    int32_t fp16;             /* 1: fp16 operands (fp32 accumulation), 0: fp32 */
    int32_t accumulate;       /* bit per slot: the written operand is added to (beta 1) */
    int32_t arg[VAL_ARGS];    /* operand per slot: a region index of the op's work,
                                 VAL_ARG_NONE or VAL_ARG_SCRATCH */
    int64_t arg_off[VAL_ARGS];   /* the operand's byte offset in its region */
    int64_t arg_bytes[VAL_ARGS]; /* the bytes the call reaches from there */
    union {
        val_gemm_shape gemm;
        val_nchw_shape nchw;  /* convolutions, batch norm, pooling */
        val_rows_shape rows;  /* softmax */
    } u;
    double flops;             /* FLOPs of the call */
    double bytes_read, bytes_written; /* bytes it moves at least */
} val_call;

/* One operator to run: its profiled time and the regions it touches. The
   pointers are valid during the call only (backends copy what they keep). */
typedef struct val_op_work {
    int32_t task, op, iter; /* plan task, profile op, iteration (messages) */
    double time_s;          /* profiled compute time */
    int32_t n_region;
    const val_region *region;
    int64_t ws_off, ws_bytes;      /* workspace in the reserve region */
    const char *name, *type;       /* op name and type */
    int32_t n_attr;                /* numeric attributes (shapes) for library calls */
    const char *const *attr_key;
    const double *attr_val;
    int32_t n_call;                /* library calls (ops_library), 0: none matched */
    const val_call *call;
} val_op_work;

/* What a backend is opened with. */
typedef struct val_backend_cfg {
    int abi;                /* VAL_ABI_VERSION */
    int64_t arena_bytes;    /* device arena: plan arena plus workspace reserve */
    int64_t host_bytes;     /* every host buffer, one block */
    int32_t n_events;       /* synchronisation events */
    int32_t n_marks;        /* timing marks */
    int device_index;       /* cuda: which GPU */
    int canaries;           /* 0: touch buffers without checking */
    int64_t sample_words;   /* stride of sampled checks and poison, in 8-byte words */
    int ops_library;        /* cuda: cuBLAS/cuDNN for ops whose shapes are known */
    /* cpu backend: time and copy model */
    double time_scale;      /* real seconds per plan second; 0: choose */
    int wait_mode;          /* 0 hybrid sleep+spin, 1 spin, 2 sleep */
    double h2d_alone, d2h_alone, h2d_both, d2h_both; /* bytes/s as the simulator models PCIe */
    double copy_latency_s;
    double ideal_s;         /* sum of op times of one iteration */
    double waits_per_iter;  /* cross-stream waits per iteration (event graph edges) */
    int32_t n_ops;          /* compute tasks of one iteration, with for each (valid during */
    const double *op_bytes; /* open only) the bytes its canaries check and fill */
    const double *op_time;  /* and its time */
    double max_copy_rate;   /* largest copy rate, bytes/s */
    double copy_bytes;      /* bytes copied per iteration, both ways */
    int tf32;               /* cuda: fp32 library calls may use TF32 tensor cores (Ampere and
                               newer); 0: strict fp32 (the paper's MXNet) */
} val_backend_cfg;

/* First canary mismatches, for the report. */
typedef struct val_fail {
    int32_t task, op, iter, tensor;
    int32_t where;          /* 0 start of op, 1 end of op */
    int64_t word;           /* word index in the region */
    uint64_t expected, found;
} val_fail;

#define VAL_MAX_FAILS 8
typedef struct val_canary_report {
    int64_t checks;         /* regions checked */
    int64_t failures;       /* regions found wrong */
    int32_t n_fail;
    val_fail fail[VAL_MAX_FAILS];
    int64_t overruns;       /* ops or copies whose real work ran past their modelled end */
    int64_t timed;          /* ops and copies timed */
} val_canary_report;

typedef struct val_backend val_backend; /* an open instance */

typedef struct val_backend_methods {
    int version; /* VAL_ABI_VERSION */
    const char *name;
    /* Open an instance (streams, events, arena, host buffers). On error
       returns a negative code with a one-line message in err. */
    int (*open)(const val_backend_cfg *cfg, val_backend **out, char *err, size_t errn);
    void (*close)(val_backend *b);
    /* Device description ("CPU threads", "NVIDIA A100-SXM4-40GB") and the
       time scale in use (real seconds per plan second; 1 on a GPU). */
    const char *(*device_name)(val_backend *b);
    double (*time_scale)(val_backend *b);
    /* Synchronous initial contents: every word of [off, off+bytes) of the
       arena (VAL_DEVICE) or host block (VAL_HOST) set to key. */
    int (*init_fill)(val_backend *b, int where, int64_t off, int64_t bytes, uint64_t key);
    /* Asynchronous stream work, in stream order. wait_event waits for the
       latest record_event of ev enqueued before it (CUDA semantics). */
    int (*wait_event)(val_backend *b, int stream, int32_t ev);
    int (*record_event)(val_backend *b, int stream, int32_t ev);
    int (*copy)(val_backend *b, int stream, int dir, int64_t dev_off, int64_t host_off,
                int64_t bytes);
    int (*run_op)(val_backend *b, int stream, const val_op_work *w);
    int (*poison)(val_backend *b, int stream, int64_t off, int64_t bytes);
    int (*mark)(val_backend *b, int stream, int32_t slot);
    /* Wait for all streams; then read marks (seconds, any origin) and the
       canary report. */
    int (*sync)(val_backend *b, char *err, size_t errn);
    int (*mark_times)(val_backend *b, double *t, int32_t n);
    int (*report)(val_backend *b, val_canary_report *r);
    /* Profiler (NULL where unsupported): time one operator, run on the
       arena's regions, reps times; *seconds is the median of its kernels'
       summed durations. unknown: 0 touch kernel, 1 calibrated kernel. */
    int (*time_op)(val_backend *b, const val_op_work *w, int reps, int unknown, double *seconds,
                   int *method, char *err, size_t errn);
} val_backend_methods;

/* Entry point the CUDA shared object exports (C linkage): returns its
   method table if abi matches, else NULL. */
typedef const val_backend_methods *(*val_cuda_entry_fn)(int abi);
#define VAL_CUDA_ENTRY "swapsim_cuda_backend"

/* calibrate-device: a second entry point of the CUDA shared object (C
   linkage), so the method table above is unchanged. It measures GPU
   cfg->device_index and fills *out; on error returns VAL_CALIB_ENODEV
   (no such device) or another negative code, with a one-line message in
   err ("no CUDA device (...)"). */
#define VAL_CALIB_VERSION 1
typedef struct val_calib_cfg {
    int version;            /* VAL_CALIB_VERSION */
    int device_index;       /* which GPU */
    int64_t copy_bytes;     /* bytes of each timed copy (pinned host memory) and of the
                               device-to-device copy timing memory bandwidth */
    int64_t small_bytes;    /* bytes of the back-to-back copies timing the per-copy latency */
    int small_copies;       /* how many of them per timing */
    int repeats;            /* timings of each figure after one warm-up; the median is kept */
} val_calib_cfg;

typedef struct val_calib_result {
    char gpu[256];                /* the GPU's name (cudaDeviceProp.name) */
    int cc_major, cc_minor;       /* compute capability */
    int driver_version;           /* cudaDriverGetVersion: 1000 major + 10 minor */
    int runtime_version;          /* cudaRuntimeGetVersion, the same way */
    int64_t memory_total_bytes;   /* cudaMemGetInfo's total */
    int64_t memory_free_bytes;    /* and free, with the context and a cuBLAS handle alive */
    int64_t memory_usable_bytes;  /* the largest single cudaMalloc that succeeded then */
    double h2d_bw, d2h_bw;        /* bytes/s, pinned, one direction alone */
    double duplex_bw;             /* bytes/s in total, both directions at once (two streams) */
    double h2d_latency_s;         /* per copy: back-to-back small copies, less their bytes */
    double d2h_latency_s;         /*   at the one-way rate */
    int gemm_n;                   /* m = n = k of the GEMMs */
    double gemm_fp32_flops;       /* cublasSgemm, no tensor cores (CUBLAS_DEFAULT_MATH) */
    double gemm_tf32_flops;       /* cublasSgemm with CUBLAS_TF32_TENSOR_OP_MATH */
    double gemm_fp16_flops;       /* cublasGemmEx, fp16 in and out, fp32 compute */
    double mem_bw;                /* device-to-device cudaMemcpyAsync, bytes read + written /s */
    double launch_s;              /* per kernel: back-to-back empty kernels on one stream */
} val_calib_result;

typedef int (*val_cuda_calibrate_fn)(const val_calib_cfg *cfg, val_calib_result *out, char *err,
                                     size_t errn);
#define VAL_CUDA_CALIBRATE "swapsim_cuda_calibrate"
#define VAL_CALIB_ENODEV (-19) /* its return value where there is no such CUDA device */

/* Methods of time_op's *method. */
enum { VAL_METHOD_TOUCH = 0, VAL_METHOD_CALIBRATED = 1, VAL_METHOD_CUBLAS = 2,
       VAL_METHOD_CUDNN = 3 };

#ifdef __cplusplus
}
#endif

#endif
