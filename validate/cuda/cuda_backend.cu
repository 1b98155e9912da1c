/* cuda_backend.cu: the CUDA replay backend and the CUPTI operator timer,
   built by nvcc into libswapsim_cuda.so (Makefile) and loaded by
   validate/cuda_load.c. It implements validate/backend.h: three CUDA
   streams, one event per slot (cudaStreamWaitEvent for edges), the device
   arena in one cudaMalloc laid out as the plan places tensors, pinned host
   buffers, cudaMemcpyAsync for swaps, and per operator a calibrated kernel
   that keeps every SM busy until the op's profiled time has passed since
   its first kernel started (reading %globaltimer), preceded by a kernel
   that checks the canaries of what it reads and fills what it writes and
   followed by sampled end checks and the poisoning of what it releases.
   With ops_library, ops the library matcher (validate/libmap.c) mapped to
   library calls (val_op_work.call: cuBLAS GEMMs, cuDNN convolutions forward
   and backward, batch norm, pooling, softmax, and touch kernels with real
   bytes) run those on their own buffers instead of the calibrated kernel.
   Timing marks are CUDA events.

   No GPU was available where this was written: it compiles and links
   there, and every part that needs no device is tested through the CPU
   backend, which implements the same interface. */
#include <cuda_runtime.h>
#include <cublas_v2.h>
#include <cupti.h>
#ifndef SWAPSIM_NO_CUDNN
#include <cudnn.h>
#endif

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <vector>

#include "../backend.h"

namespace {

/* ---- device side ---- */

struct dev_status {
    unsigned long long failures;  /* threads that found a mismatch in a region */
    unsigned long long overruns;  /* ops whose canary work ended after their deadline */
    unsigned long long timed;
    unsigned long long op_start;  /* %globaltimer when the current op's first kernel began */
    unsigned long long sink;      /* keeps touch reads alive */
    val_fail fail[VAL_MAX_FAILS];
};

const int MAX_BATCH = 16;

struct region_batch {
    int n;
    int phase;          /* 0: start (full checks, fills); 1: end (sampled checks, poison) */
    int canaries;       /* 0: read without comparing */
    long long stride;   /* sampled words */
    int task, op, iter;
    unsigned char *arena;
    dev_status *st;
    val_region r[MAX_BATCH];
};

__device__ __forceinline__ unsigned long long gtimer()
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__device__ void report(const region_batch &b, const val_region &r, int where, long long word,
                       unsigned long long expected, unsigned long long found)
{
    unsigned long long k = atomicAdd(&b.st->failures, 1ULL);
    if (k < VAL_MAX_FAILS) {
        val_fail *f = &b.st->fail[k];
        f->task = b.task;
        f->op = b.op;
        f->iter = b.iter;
        f->tensor = r.tensor;
        f->where = where;
        f->word = word;
        f->expected = expected;
        f->found = found;
    }
}

__device__ __forceinline__ unsigned char key_byte(unsigned long long key, long long j)
{
    return (unsigned char)(key >> (8 * (j & 7)));
}

/* The pattern word holding byte j of an unaligned region, for the report. */
__device__ unsigned long long word_at(const unsigned char *base, long long bytes, long long j)
{
    unsigned long long v = 0;
    long long w0 = j / 8 * 8;
    for (int k = 0; k < 8 && w0 + k < bytes; k++)
        v |= (unsigned long long)base[w0 + k] << (8 * k);
    return v;
}

/* One region (blockIdx.y) per slice of the grid. Words are 8 bytes when the
   region is 8-byte aligned; otherwise the same pattern is handled byte by
   byte (the pattern is defined relative to the region's first byte). */
__global__ void k_regions(region_batch b)
{
    const val_region &r = b.r[blockIdx.y];
    unsigned char *base = b.arena + r.off;
    long long nthreads = (long long)gridDim.x * blockDim.x;
    long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    int check = (r.mode & VAL_R_CHECK) != 0, fill = (r.mode & VAL_R_FILL) != 0;
    int release = (r.mode & VAL_R_RELEASE) != 0;
    unsigned long long expect = b.phase == 0 ? r.key_in : (fill ? r.key_out : r.key_in);
    int reported = 0;
    unsigned long long sink = 0;
    long long nw = r.bytes / 8;
    bool aligned = ((unsigned long long)base & 7) == 0;
    if (b.phase == 0) {
        if (!check && !fill)
            return;
        if (aligned) {
            unsigned long long *w = (unsigned long long *)base;
            for (long long i = tid; i < nw; i += nthreads) {
                if (check) {
                    unsigned long long v = w[i];
                    if (!b.canaries)
                        sink += v;
                    else if (v != expect && !reported) {
                        report(b, r, 0, i, expect, v);
                        reported = 1;
                    }
                }
                if (fill)
                    w[i] = r.key_out;
            }
        } else {
            for (long long j = tid; j < nw * 8; j += nthreads) {
                if (check) {
                    unsigned char v = base[j];
                    if (!b.canaries)
                        sink += v;
                    else if (v != key_byte(expect, j) && !reported) {
                        report(b, r, 0, j / 8, expect, word_at(base, r.bytes, j));
                        reported = 1;
                    }
                }
                if (fill)
                    base[j] = key_byte(r.key_out, j);
            }
        }
        if (tid == 0)
            for (long long j = nw * 8; j < r.bytes; j++) {
                if (check && b.canaries && base[j] != key_byte(expect, j) && !reported) {
                    report(b, r, 0, nw, expect, word_at(base, r.bytes, j));
                    reported = 1;
                }
                if (fill)
                    base[j] = key_byte(r.key_out, j);
            }
    } else {
        if (!b.canaries)
            return;
        long long stride = b.stride > 0 ? b.stride : 1;
        long long ns = nw > 0 ? (nw - 1) / stride + 2 : 0; /* samples, plus the last word */
        for (long long s = tid; s < ns; s += nthreads) {
            long long i = s == ns - 1 ? nw - 1 : s * stride;
            if (check || fill) {
                bool bad = false;
                unsigned long long v = 0;
                if (aligned) {
                    v = ((unsigned long long *)base)[i];
                    bad = v != expect;
                } else {
                    for (int k = 0; k < 8; k++)
                        bad |= base[8 * i + k] != key_byte(expect, k);
                    v = word_at(base, r.bytes, 8 * i);
                }
                if (bad && !reported) {
                    report(b, r, 1, i, expect, v);
                    reported = 1;
                }
            }
            if (release) {
                if (aligned)
                    ((unsigned long long *)base)[i] = VAL_POISON;
                else
                    for (int k = 0; k < 8; k++)
                        base[8 * i + k] = 0xDE;
            }
        }
        if (tid == 0 && release)
            for (long long j = nw * 8; j < r.bytes; j++)
                base[j] = 0xDE;
    }
    if (sink == 1)
        b.st->sink = sink; /* practically never: keeps the touch reads */
}

__global__ void k_fill(unsigned char *base, long long bytes, unsigned long long key)
{
    long long nthreads = (long long)gridDim.x * blockDim.x;
    long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (((unsigned long long)base & 7) == 0) {
        long long nw = bytes / 8;
        for (long long i = tid; i < nw; i += nthreads)
            ((unsigned long long *)base)[i] = key;
        if (tid == 0)
            for (long long j = nw * 8; j < bytes; j++)
                base[j] = key_byte(key, j);
    } else {
        for (long long j = tid; j < bytes; j += nthreads)
            base[j] = key_byte(key, j);
    }
}

__global__ void k_start(dev_status *st) { st->op_start = gtimer(); }

/* Keep every SM busy until op_start + ns. */
__global__ void k_busy(dev_status *st, unsigned long long ns)
{
    __shared__ unsigned long long deadline;
    if (threadIdx.x == 0) {
        deadline = st->op_start + ns;
        if (blockIdx.x == 0) {
            atomicAdd(&st->timed, 1ULL);
            if (gtimer() > deadline)
                atomicAdd(&st->overruns, 1ULL);
        }
    }
    __syncthreads();
    while (gtimer() < deadline) {
    }
}

/* ---- host side ---- */

struct backend_t {
    val_backend_cfg cfg;
    int dev;
    char name[256];
    int sms;
    unsigned char *arena;  /* device */
    unsigned char *host;   /* pinned */
    dev_status *st;        /* device */
    cudaStream_t s[3];
    std::vector<cudaEvent_t> ev, marks;
    long long checks;
    cublasHandle_t blas;
    bool blas_ok;
    unsigned char *scratch;    /* temporaries of fused ops (VAL_ARG_SCRATCH), grown on demand */
    long long scratch_bytes;
    unsigned char *aux;        /* cuDNN workspace and batch norm statistics, grown on demand */
    long long aux_bytes;
#ifndef SWAPSIM_NO_CUDNN
    cudnnHandle_t dnn;
    bool dnn_ok;
#endif
    char err[512];
};

void fmt(char *buf, size_t n, const char *f, ...) __attribute__((format(printf, 3, 4)));
void fmt(char *buf, size_t n, const char *f, ...)
{
    if (!buf || !n)
        return;
    va_list ap;
    va_start(ap, f);
    vsnprintf(buf, n, f, ap);
    va_end(ap);
}

int fail_cuda(backend_t *b, cudaError_t e, const char *what)
{
    fmt(b->err, sizeof b->err, "%s: %s", what, cudaGetErrorString(e));
    return -9;
}

#define CK(b, call)                                                                               \
    do {                                                                                          \
        cudaError_t e_ = (call);                                                                  \
        if (e_ != cudaSuccess)                                                                    \
            return fail_cuda((b), e_, #call);                                                     \
    } while (0)

bool in_range(long long off, long long bytes, long long size)
{
    return off >= 0 && bytes >= 0 && off + bytes <= size;
}

int grid_for(const backend_t *b, long long work)
{
    long long blocks = (work + 255) / 256;
    long long cap = (long long)b->sms * 8;
    return (int)std::max(1LL, std::min(blocks, cap));
}

/* Launch k_regions over w's regions (in batches of MAX_BATCH). */
int launch_regions(backend_t *b, cudaStream_t s, const val_op_work *w, int phase, int canaries,
                   int only_mode)
{
    region_batch rb;
    memset(&rb, 0, sizeof rb);
    rb.phase = phase;
    rb.canaries = canaries;
    rb.stride = b->cfg.sample_words;
    rb.task = w->task;
    rb.op = w->op;
    rb.iter = w->iter;
    rb.arena = b->arena;
    rb.st = b->st;
    long long most = 0;
    for (int i = 0; i <= w->n_region; i++) {
        if (i == w->n_region || rb.n == MAX_BATCH) {
            if (rb.n) {
                long long work = phase == 0 ? most : most / std::max(1LL, rb.stride) + 2;
                dim3 grid((unsigned)grid_for(b, work), (unsigned)rb.n);
                k_regions<<<grid, 256, 0, s>>>(rb);
                cudaError_t e = cudaGetLastError();
                if (e != cudaSuccess)
                    return fail_cuda(b, e, "k_regions launch");
            }
            rb.n = 0;
            most = 0;
            if (i == w->n_region)
                break;
        }
        const val_region &r = w->region[i];
        if (only_mode && !(r.mode & only_mode))
            continue;
        if (!in_range(r.off, r.bytes, b->cfg.arena_bytes)) {
            fmt(b->err, sizeof b->err, "op %d: region outside the arena", w->op);
            return -1;
        }
        if (phase == 0 && canaries && (r.mode & (VAL_R_CHECK | VAL_R_FILL)))
            b->checks += (r.mode & VAL_R_CHECK) != 0;
        if (phase == 1 && canaries && (r.mode & (VAL_R_CHECK | VAL_R_FILL)))
            b->checks++;
        rb.r[rb.n++] = r;
        most = std::max(most, (long long)(r.bytes / 8 + 1) * (((unsigned long long)(b->arena + r.off) & 7) ? 8 : 1));
    }
    return 0;
}

/* ---- library calls ----

   What an op runs is decided in plain C (validate/libmap.c, matched from
   the op's type and attrs, profiles/opattr.h) and arrives as val_call
   entries with operands bound to the op's regions: cuBLAS GEMMs; cuDNN
   convolutions (forward, backward data, backward filter), batch norm,
   pooling and softmax; touch kernels with the op's real bytes. A call that
   cannot run here (no cuDNN, no handle, shapes cuDNN refuses, no memory for
   a scratch buffer) becomes a touch kernel over its operands. Buffers the
   plan does not have (a fused op's temporary, cuDNN workspace beyond the
   op's, batch norm statistics) live in two buffers of the backend's own,
   grown on demand outside the plan's arena. */

const long long SCRATCH_MAX = 16LL << 30; /* largest temporary of a fused op */

/* Grow a device buffer to at least need bytes (cudaFree synchronizes the
   device, so nothing still uses the old one); false if it cannot. */
bool grow(unsigned char **p, long long *have, long long need, long long cap)
{
    if (need <= *have)
        return true;
    if (need > cap)
        return false;
    if (*p)
        cudaFree(*p);
    *p = nullptr;
    *have = 0;
    long long want = std::min(cap, need + need / 4);
    if (cudaMalloc((void **)p, (size_t)want) != cudaSuccess) {
        cudaGetLastError(); /* not sticky: clear it */
        *p = nullptr;
        return false;
    }
    *have = want;
    return true;
}

/* Operand pointers of a call (nullptr for absent slots); false if one is
   out of its region or its scratch is missing. */
bool operands(backend_t *b, const val_op_work *w, const val_call &c, unsigned char **p)
{
    for (int i = 0; i < VAL_ARGS; i++) {
        p[i] = nullptr;
        int a = c.arg[i];
        long long off = c.arg_off[i], bytes = c.arg_bytes[i];
        if (a == VAL_ARG_NONE)
            continue;
        if (off < 0 || bytes < 0)
            return false;
        if (a == VAL_ARG_SCRATCH) {
            if (off + bytes > b->scratch_bytes)
                return false;
            p[i] = b->scratch + off;
            continue;
        }
        if (a < 0 || a >= w->n_region)
            return false;
        const val_region &r = w->region[a];
        if (off + bytes > r.bytes || !in_range(r.off, r.bytes, b->cfg.arena_bytes))
            return false;
        p[i] = b->arena + r.off + off;
    }
    return true;
}

/* Reads nread bytes at src and writes nwrite bytes at dst (either may be 0). */
__global__ void k_touch(const unsigned char *src, long long nread, unsigned char *dst,
                        long long nwrite, dev_status *st)
{
    long long nthreads = (long long)gridDim.x * blockDim.x;
    long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    unsigned long long acc = 0;
    if (src && ((unsigned long long)src & 7) == 0) {
        for (long long i = tid; i < nread / 8; i += nthreads)
            acc += ((const unsigned long long *)src)[i];
    } else if (src) {
        for (long long i = tid; i < nread; i += nthreads)
            acc += src[i];
    }
    if (dst && ((unsigned long long)dst & 7) == 0) {
        for (long long i = tid; i < nwrite / 8; i += nthreads)
            ((unsigned long long *)dst)[i] = acc + (unsigned long long)i;
        if (tid == 0)
            for (long long j = nwrite / 8 * 8; j < nwrite; j++)
                dst[j] = (unsigned char)acc;
    } else if (dst) {
        for (long long i = tid; i < nwrite; i += nthreads)
            dst[i] = (unsigned char)(acc + (unsigned long long)i);
    }
    if (acc == 1)
        st->sink = acc; /* practically never: keeps the reads */
}

int touch(backend_t *b, cudaStream_t s, const unsigned char *src, long long nread,
          unsigned char *dst, long long nwrite)
{
    if ((!src || nread <= 0) && (!dst || nwrite <= 0))
        return 0;
    long long work = std::max(src ? nread : 0, dst ? nwrite : 0) / 8 + 1;
    k_touch<<<grid_for(b, work), 256, 0, s>>>(src, src ? nread : 0, dst, dst ? nwrite : 0, b->st);
    cudaError_t e = cudaGetLastError();
    return e == cudaSuccess ? 0 : fail_cuda(b, e, "k_touch launch");
}

/* A call as touch kernels: what it reads, read; what it writes, written. */
int touch_call(backend_t *b, cudaStream_t s, const val_call &c, unsigned char **p)
{
    int rc = 0;
    for (int i = 0; i < VAL_ARGS && !rc; i++) {
        bool out = i == VAL_ARG_Y || i == VAL_ARG_DX || i == VAL_ARG_DW;
        if (p[i])
            rc = out ? touch(b, s, (c.accumulate >> i) & 1 ? p[i] : nullptr, c.arg_bytes[i], p[i],
                             c.arg_bytes[i])
                     : touch(b, s, p[i], c.arg_bytes[i], nullptr, 0);
    }
    return rc;
}

bool fits_int(long long v) { return v >= 0 && v <= 2147483647LL; }

/* Row-major Y = op(X) op(W) as the column-major Y^T = op(W)^T op(X)^T. */
int call_gemm(backend_t *b, cudaStream_t s, const val_op_work *w, const val_call &c,
              unsigned char **p, bool *done)
{
    const val_gemm_shape &g = c.u.gemm;
    if (!b->blas_ok || !p[VAL_ARG_X] || !p[VAL_ARG_W] || !p[VAL_ARG_Y] || !fits_int(g.m) ||
        !fits_int(g.n) || !fits_int(g.k) || !fits_int(g.batch) || g.batch < 1)
        return 0;
    float one = 1, beta = (c.accumulate >> VAL_ARG_Y) & 1 ? 1.0f : 0.0f;
    cudaDataType_t t = c.fp16 ? CUDA_R_16F : CUDA_R_32F;
    int m = (int)g.m, n = (int)g.n, k = (int)g.k;
    cublasSetStream(b->blas, s);
    cublasStatus_t st = cublasGemmStridedBatchedEx(
        b->blas, g.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, g.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, n,
        m, k, &one, p[VAL_ARG_W], t, g.trans_b ? k : n, g.k * g.n, p[VAL_ARG_X], t,
        g.trans_a ? m : k, g.m * g.k, &beta, p[VAL_ARG_Y], t, n, g.m * g.n, (int)g.batch,
        !c.fp16 && b->cfg.tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F,
        CUBLAS_GEMM_DEFAULT);
    if (st == CUBLAS_STATUS_NOT_SUPPORTED || st == CUBLAS_STATUS_INVALID_VALUE)
        return 0; /* run as a touch instead */
    if (st != CUBLAS_STATUS_SUCCESS) {
        fmt(b->err, sizeof b->err, "op %d '%s': cuBLAS GEMM %dx%dx%d failed (status %d)", w->op,
            w->name ? w->name : "", m, n, k, (int)st);
        return -9;
    }
    *done = true;
    return 0;
}

#ifndef SWAPSIM_NO_CUDNN
const long long AUX_MAX = 4LL << 30; /* largest cuDNN workspace */

/* Descriptors that destroy themselves. */
struct tensor_d {
    cudnnTensorDescriptor_t d = nullptr;
    ~tensor_d()
    {
        if (d)
            cudnnDestroyTensorDescriptor(d);
    }
    bool set(cudnnDataType_t t, long long n, long long c, long long h, long long w)
    {
        return fits_int(n) && fits_int(c) && fits_int(h) && fits_int(w) &&
               (d || cudnnCreateTensorDescriptor(&d) == CUDNN_STATUS_SUCCESS) &&
               cudnnSetTensor4dDescriptor(d, CUDNN_TENSOR_NCHW, t, (int)n, (int)c, (int)h,
                                          (int)w) == CUDNN_STATUS_SUCCESS;
    }
};
struct filter_d {
    cudnnFilterDescriptor_t d = nullptr;
    ~filter_d()
    {
        if (d)
            cudnnDestroyFilterDescriptor(d);
    }
};
struct conv_d {
    cudnnConvolutionDescriptor_t d = nullptr;
    ~conv_d()
    {
        if (d)
            cudnnDestroyConvolutionDescriptor(d);
    }
};
struct pool_d {
    cudnnPoolingDescriptor_t d = nullptr;
    ~pool_d()
    {
        if (d)
            cudnnDestroyPoolingDescriptor(d);
    }
};

int dnn_failed(backend_t *b, const val_op_work *w, const char *what, cudnnStatus_t st)
{
    fmt(b->err, sizeof b->err, "op %d '%s': cuDNN %s failed: %s", w->op, w->name ? w->name : "",
        what, cudnnGetErrorString(st));
    return -9;
}

/* Workspace for a cuDNN call: the op's own if large enough, else the
   backend's (nullptr: none to be had). */
void *workspace(backend_t *b, const val_op_work *w, size_t need)
{
    if (need == 0)
        return nullptr;
    if ((long long)need <= w->ws_bytes)
        return b->arena + w->ws_off;
    return grow(&b->aux, &b->aux_bytes, (long long)need, AUX_MAX) ? b->aux : nullptr;
}

/* The three convolutions: the heuristics' algorithms in order, the first
   whose workspace can be had and that runs. */
int call_conv(backend_t *b, cudaStream_t s, const val_op_work *w, const val_call &c,
              unsigned char **p, bool *done)
{
    const val_nchw_shape &v = c.u.nchw;
    cudnnDataType_t t = c.fp16 ? CUDNN_DATA_HALF : CUDNN_DATA_FLOAT;
    tensor_d xd, yd;
    filter_d wd;
    conv_d cd;
    int on, oc, oh, ow;
    if (!b->dnn_ok || v.groups < 1 || !xd.set(t, v.n, v.c, v.h, v.w) ||
        !yd.set(t, v.n, v.k, v.ho, v.wo) ||
        cudnnCreateFilterDescriptor(&wd.d) != CUDNN_STATUS_SUCCESS ||
        cudnnSetFilter4dDescriptor(wd.d, t, CUDNN_TENSOR_NCHW, (int)v.k, (int)(v.c / v.groups),
                                   v.r, v.s) != CUDNN_STATUS_SUCCESS ||
        cudnnCreateConvolutionDescriptor(&cd.d) != CUDNN_STATUS_SUCCESS ||
        cudnnSetConvolution2dDescriptor(cd.d, v.pad_h, v.pad_w, v.stride, v.stride, 1, 1,
                                        CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT) !=
            CUDNN_STATUS_SUCCESS ||
        cudnnSetConvolutionGroupCount(cd.d, v.groups) != CUDNN_STATUS_SUCCESS ||
        cudnnSetConvolutionMathType(cd.d, c.fp16          ? CUDNN_TENSOR_OP_MATH
                                          : b->cfg.tf32 ? CUDNN_DEFAULT_MATH /* TF32 allowed */
                                                        : CUDNN_FMA_MATH) !=
            CUDNN_STATUS_SUCCESS ||
        cudnnGetConvolution2dForwardOutputDim(cd.d, xd.d, wd.d, &on, &oc, &oh, &ow) !=
            CUDNN_STATUS_SUCCESS ||
        on != v.n || oc != v.k || oh != v.ho || ow != v.wo)
        return 0;
    cudnnSetStream(b->dnn, s);
    float one = 1;
    int got = 0;
    if (c.kind == VAL_CALL_CONV_FWD) {
        float beta = (c.accumulate >> VAL_ARG_Y) & 1 ? 1.0f : 0.0f;
        cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
        if (!p[VAL_ARG_X] || !p[VAL_ARG_W] || !p[VAL_ARG_Y] ||
            cudnnGetConvolutionForwardAlgorithm_v7(b->dnn, xd.d, wd.d, cd.d, yd.d,
                                                   CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &got,
                                                   perf) != CUDNN_STATUS_SUCCESS)
            return 0;
        for (int i = 0; i < got && !*done; i++) {
            if (perf[i].status != CUDNN_STATUS_SUCCESS)
                continue;
            void *ws = workspace(b, w, perf[i].memory);
            if (perf[i].memory && !ws)
                continue;
            cudnnStatus_t st = cudnnConvolutionForward(b->dnn, &one, xd.d, p[VAL_ARG_X], wd.d,
                                                       p[VAL_ARG_W], cd.d, perf[i].algo, ws,
                                                       perf[i].memory, &beta, yd.d, p[VAL_ARG_Y]);
            if (st == CUDNN_STATUS_SUCCESS)
                *done = true;
            else if (st != CUDNN_STATUS_NOT_SUPPORTED && st != CUDNN_STATUS_BAD_PARAM)
                return dnn_failed(b, w, "convolution forward", st);
        }
    } else if (c.kind == VAL_CALL_CONV_BWD_DATA) {
        float beta = (c.accumulate >> VAL_ARG_DX) & 1 ? 1.0f : 0.0f;
        cudnnConvolutionBwdDataAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
        if (!p[VAL_ARG_DY] || !p[VAL_ARG_W] || !p[VAL_ARG_DX] ||
            cudnnGetConvolutionBackwardDataAlgorithm_v7(b->dnn, wd.d, yd.d, cd.d, xd.d,
                                                        CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT,
                                                        &got, perf) != CUDNN_STATUS_SUCCESS)
            return 0;
        for (int i = 0; i < got && !*done; i++) {
            if (perf[i].status != CUDNN_STATUS_SUCCESS)
                continue;
            void *ws = workspace(b, w, perf[i].memory);
            if (perf[i].memory && !ws)
                continue;
            cudnnStatus_t st = cudnnConvolutionBackwardData(
                b->dnn, &one, wd.d, p[VAL_ARG_W], yd.d, p[VAL_ARG_DY], cd.d, perf[i].algo, ws,
                perf[i].memory, &beta, xd.d, p[VAL_ARG_DX]);
            if (st == CUDNN_STATUS_SUCCESS)
                *done = true;
            else if (st != CUDNN_STATUS_NOT_SUPPORTED && st != CUDNN_STATUS_BAD_PARAM)
                return dnn_failed(b, w, "convolution backward data", st);
        }
    } else {
        float beta = (c.accumulate >> VAL_ARG_DW) & 1 ? 1.0f : 0.0f;
        cudnnConvolutionBwdFilterAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
        if (!p[VAL_ARG_X] || !p[VAL_ARG_DY] || !p[VAL_ARG_DW] ||
            cudnnGetConvolutionBackwardFilterAlgorithm_v7(b->dnn, xd.d, yd.d, cd.d, wd.d,
                                                          CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT,
                                                          &got, perf) != CUDNN_STATUS_SUCCESS)
            return 0;
        for (int i = 0; i < got && !*done; i++) {
            if (perf[i].status != CUDNN_STATUS_SUCCESS)
                continue;
            void *ws = workspace(b, w, perf[i].memory);
            if (perf[i].memory && !ws)
                continue;
            cudnnStatus_t st = cudnnConvolutionBackwardFilter(
                b->dnn, &one, xd.d, p[VAL_ARG_X], yd.d, p[VAL_ARG_DY], cd.d, perf[i].algo, ws,
                perf[i].memory, &beta, wd.d, p[VAL_ARG_DW]);
            if (st == CUDNN_STATUS_SUCCESS)
                *done = true;
            else if (st != CUDNN_STATUS_NOT_SUPPORTED && st != CUDNN_STATUS_BAD_PARAM)
                return dnn_failed(b, w, "convolution backward filter", st);
        }
    }
    return 0;
}

/* Spatial batch norm, training: scale and bias from W (fp32), running and
   saved statistics in the backend's buffer. */
int call_bn(backend_t *b, cudaStream_t s, const val_op_work *w, const val_call &c,
            unsigned char **p, bool *done)
{
    const val_nchw_shape &v = c.u.nchw;
    cudnnDataType_t t = c.fp16 ? CUDNN_DATA_HALF : CUDNN_DATA_FLOAT;
    tensor_d xd, bd;
    if (!b->dnn_ok || !p[VAL_ARG_X] || !p[VAL_ARG_W] || !xd.set(t, v.n, v.c, v.h, v.w) ||
        cudnnCreateTensorDescriptor(&bd.d) != CUDNN_STATUS_SUCCESS ||
        cudnnDeriveBNTensorDescriptor(bd.d, xd.d, CUDNN_BATCHNORM_SPATIAL) != CUDNN_STATUS_SUCCESS ||
        !grow(&b->aux, &b->aux_bytes, 16 * v.c, AUX_MAX))
        return 0;
    float *stats = (float *)b->aux; /* running mean, variance; saved mean, inverse std */
    const unsigned char *scale = p[VAL_ARG_W], *bias = p[VAL_ARG_W] + 4 * v.c;
    float one = 1, zero = 0;
    cudnnSetStream(b->dnn, s);
    cudnnStatus_t st;
    if (c.kind == VAL_CALL_BN_FWD) {
        if (!p[VAL_ARG_Y])
            return 0;
        st = cudnnBatchNormalizationForwardTraining(
            b->dnn, CUDNN_BATCHNORM_SPATIAL, &one, &zero, xd.d, p[VAL_ARG_X], xd.d, p[VAL_ARG_Y],
            bd.d, scale, bias, 0.1, stats, stats + v.c, CUDNN_BN_MIN_EPSILON * 10,
            stats + 2 * v.c, stats + 3 * v.c);
    } else {
        if (!p[VAL_ARG_DY] || !p[VAL_ARG_DX] || !p[VAL_ARG_DW])
            return 0;
        float bdx = (c.accumulate >> VAL_ARG_DX) & 1 ? 1.0f : 0.0f,
              bdw = (c.accumulate >> VAL_ARG_DW) & 1 ? 1.0f : 0.0f;
        st = cudnnBatchNormalizationBackward(
            b->dnn, CUDNN_BATCHNORM_SPATIAL, &one, &bdx, &one, &bdw, xd.d, p[VAL_ARG_X], xd.d,
            p[VAL_ARG_DY], xd.d, p[VAL_ARG_DX], bd.d, scale, p[VAL_ARG_DW],
            p[VAL_ARG_DW] + 4 * v.c, CUDNN_BN_MIN_EPSILON * 10, stats + 2 * v.c,
            stats + 3 * v.c);
    }
    if (st == CUDNN_STATUS_NOT_SUPPORTED || st == CUDNN_STATUS_BAD_PARAM)
        return 0;
    if (st != CUDNN_STATUS_SUCCESS)
        return dnn_failed(b, w, "batch norm", st);
    *done = true;
    return 0;
}

/* Max or average pooling; backward reads y from W. */
int call_pool(backend_t *b, cudaStream_t s, const val_op_work *w, const val_call &c,
              unsigned char **p, bool *done)
{
    const val_nchw_shape &v = c.u.nchw;
    cudnnDataType_t t = c.fp16 ? CUDNN_DATA_HALF : CUDNN_DATA_FLOAT;
    tensor_d xd, yd;
    pool_d pd;
    int on, oc, oh, ow;
    if (!b->dnn_ok || !xd.set(t, v.n, v.c, v.h, v.w) || !yd.set(t, v.n, v.c, v.ho, v.wo) ||
        cudnnCreatePoolingDescriptor(&pd.d) != CUDNN_STATUS_SUCCESS ||
        cudnnSetPooling2dDescriptor(pd.d,
                                    v.max ? CUDNN_POOLING_MAX
                                          : CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING,
                                    CUDNN_NOT_PROPAGATE_NAN, v.r, v.s, v.pad_h, v.pad_w,
                                    v.stride, v.stride) != CUDNN_STATUS_SUCCESS ||
        cudnnGetPooling2dForwardOutputDim(pd.d, xd.d, &on, &oc, &oh, &ow) !=
            CUDNN_STATUS_SUCCESS ||
        on != v.n || oc != v.c || oh != v.ho || ow != v.wo)
        return 0;
    float one = 1;
    cudnnSetStream(b->dnn, s);
    cudnnStatus_t st;
    if (c.kind == VAL_CALL_POOL_FWD) {
        float beta = (c.accumulate >> VAL_ARG_Y) & 1 ? 1.0f : 0.0f;
        if (!p[VAL_ARG_X] || !p[VAL_ARG_Y])
            return 0;
        st = cudnnPoolingForward(b->dnn, pd.d, &one, xd.d, p[VAL_ARG_X], &beta, yd.d,
                                 p[VAL_ARG_Y]);
    } else {
        float beta = (c.accumulate >> VAL_ARG_DX) & 1 ? 1.0f : 0.0f;
        if (!p[VAL_ARG_X] || !p[VAL_ARG_W] || !p[VAL_ARG_DY] || !p[VAL_ARG_DX])
            return 0;
        st = cudnnPoolingBackward(b->dnn, pd.d, &one, yd.d, p[VAL_ARG_W], yd.d, p[VAL_ARG_DY],
                                  xd.d, p[VAL_ARG_X], &beta, xd.d, p[VAL_ARG_DX]);
    }
    if (st == CUDNN_STATUS_NOT_SUPPORTED || st == CUDNN_STATUS_BAD_PARAM)
        return 0;
    if (st != CUDNN_STATUS_SUCCESS)
        return dnn_failed(b, w, "pooling", st);
    *done = true;
    return 0;
}

/* Softmax over each row; backward reads y from W. */
int call_softmax(backend_t *b, cudaStream_t s, const val_op_work *w, const val_call &c,
                 unsigned char **p, bool *done)
{
    const val_rows_shape &v = c.u.rows;
    tensor_d d;
    if (!b->dnn_ok || !d.set(c.fp16 ? CUDNN_DATA_HALF : CUDNN_DATA_FLOAT, v.rows, v.cols, 1, 1))
        return 0;
    float one = 1;
    cudnnSetStream(b->dnn, s);
    cudnnStatus_t st;
    if (c.kind == VAL_CALL_SOFTMAX_FWD) {
        float beta = (c.accumulate >> VAL_ARG_Y) & 1 ? 1.0f : 0.0f;
        if (!p[VAL_ARG_X] || !p[VAL_ARG_Y])
            return 0;
        st = cudnnSoftmaxForward(b->dnn, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_INSTANCE,
                                 &one, d.d, p[VAL_ARG_X], &beta, d.d, p[VAL_ARG_Y]);
    } else {
        float beta = (c.accumulate >> VAL_ARG_DX) & 1 ? 1.0f : 0.0f;
        if (!p[VAL_ARG_W] || !p[VAL_ARG_DY] || !p[VAL_ARG_DX])
            return 0;
        st = cudnnSoftmaxBackward(b->dnn, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_INSTANCE,
                                  &one, d.d, p[VAL_ARG_W], d.d, p[VAL_ARG_DY], &beta, d.d,
                                  p[VAL_ARG_DX]);
    }
    if (st == CUDNN_STATUS_NOT_SUPPORTED || st == CUDNN_STATUS_BAD_PARAM)
        return 0;
    if (st != CUDNN_STATUS_SUCCESS)
        return dnn_failed(b, w, "softmax", st);
    *done = true;
    return 0;
}
#endif

bool is_library(int kind) { return kind > VAL_CALL_TOUCH && kind < VAL_CALL__COUNT; }

/* Run the op's calls if it has a library call; *method: VAL_METHOD_CUDNN if
   a cuDNN call ran, else VAL_METHOD_CUBLAS if a GEMM did, else
   VAL_METHOD_TOUCH (every call fell back); -1 (nothing run) for an op of
   touch kernels only, which the caller runs its own way. */
int run_library(backend_t *b, cudaStream_t s, const val_op_work *w, int *method)
{
    *method = -1;
    bool any = false;
    long long scratch = 0;
    for (int i = 0; i < w->n_call; i++) {
        const val_call &c = w->call[i];
        any |= is_library(c.kind);
        for (int a = 0; a < VAL_ARGS; a++)
            if (c.arg[a] == VAL_ARG_SCRATCH)
                scratch = std::max<long long>(scratch, c.arg_off[a] + c.arg_bytes[a]);
    }
    if (!any)
        return 0;
    bool have_scratch = grow(&b->scratch, &b->scratch_bytes, scratch, SCRATCH_MAX);
    bool dnn = false, blas = false, touched = false;
    for (int i = 0; i < w->n_call; i++) {
        const val_call &c = w->call[i];
        unsigned char *p[VAL_ARGS];
        if (!have_scratch || !operands(b, w, c, p)) { /* what the call reaches is not there: */
            int rc = touched ? 0 : launch_regions(b, s, w, 0, 0, 0); /* touch the op, once */
            if (rc)
                return rc;
            touched = true;
            continue;
        }
        bool done = false;
        int rc = 0;
        switch (c.kind) {
        case VAL_CALL_TOUCH:
            if (c.arg[VAL_ARG_X] == VAL_ARG_NONE && c.arg[VAL_ARG_Y] == VAL_ARG_NONE)
                rc = launch_regions(b, s, w, 0, 0, 0);
            else
                rc = touch(b, s, p[VAL_ARG_X], c.arg_bytes[VAL_ARG_X], p[VAL_ARG_Y],
                           c.arg_bytes[VAL_ARG_Y]);
            done = true;
            break;
        case VAL_CALL_GEMM:
            rc = call_gemm(b, s, w, c, p, &done);
            blas |= done;
            break;
#ifndef SWAPSIM_NO_CUDNN
        case VAL_CALL_CONV_FWD:
        case VAL_CALL_CONV_BWD_DATA:
        case VAL_CALL_CONV_BWD_FILTER:
            rc = call_conv(b, s, w, c, p, &done);
            dnn |= done;
            break;
        case VAL_CALL_BN_FWD:
        case VAL_CALL_BN_BWD:
            rc = call_bn(b, s, w, c, p, &done);
            dnn |= done;
            break;
        case VAL_CALL_POOL_FWD:
        case VAL_CALL_POOL_BWD:
            rc = call_pool(b, s, w, c, p, &done);
            dnn |= done;
            break;
        case VAL_CALL_SOFTMAX_FWD:
        case VAL_CALL_SOFTMAX_BWD:
            rc = call_softmax(b, s, w, c, p, &done);
            dnn |= done;
            break;
#endif
        default:
            break;
        }
        if (!rc && !done)
            rc = touch_call(b, s, c, p);
        if (rc)
            return rc;
    }
    *method = dnn ? VAL_METHOD_CUDNN : blas ? VAL_METHOD_CUBLAS : VAL_METHOD_TOUCH;
    return 0;
}

/* ---- methods ---- */

void cu_close(val_backend *vb);

int cu_open(const val_backend_cfg *cfg, val_backend **out, char *err, size_t errn)
{
    *out = nullptr;
    if (cfg->abi != VAL_ABI_VERSION) {
        fmt(err, errn, "interface version mismatch");
        return -9;
    }
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n == 0) {
        fmt(err, errn, "no CUDA device (%s)",
            e != cudaSuccess ? cudaGetErrorString(e) : "cudaGetDeviceCount found none");
        return -9;
    }
    if (cfg->device_index < 0 || cfg->device_index >= n) {
        fmt(err, errn, "device index %d: this machine has %d CUDA device%s", cfg->device_index, n,
            n == 1 ? "" : "s");
        return -9;
    }
    backend_t *b = new (std::nothrow) backend_t();
    if (!b) {
        fmt(err, errn, "out of memory");
        return -2;
    }
    b->cfg = *cfg;
    if (b->cfg.sample_words < 1)
        b->cfg.sample_words = 512;
    b->dev = cfg->device_index;
    int rc = 0;
    cudaDeviceProp prop;
    do {
        if ((e = cudaSetDevice(b->dev)) != cudaSuccess ||
            (e = cudaGetDeviceProperties(&prop, b->dev)) != cudaSuccess) {
            rc = fail_cuda(b, e, "cudaSetDevice");
            break;
        }
        snprintf(b->name, sizeof b->name, "%s", prop.name);
        b->sms = prop.multiProcessorCount > 0 ? prop.multiProcessorCount : 1;
        size_t free_b = 0, total_b = 0;
        cudaMemGetInfo(&free_b, &total_b);
        if ((size_t)cfg->arena_bytes > free_b) {
            fmt(b->err, sizeof b->err, "the plan's arena (%lld bytes) exceeds the free memory of "
                "%s (%zu bytes)", (long long)cfg->arena_bytes, b->name, free_b);
            rc = -9;
            break;
        }
        if ((e = cudaMalloc((void **)&b->arena, (size_t)cfg->arena_bytes)) != cudaSuccess) {
            rc = fail_cuda(b, e, "cudaMalloc(arena)");
            break;
        }
        if ((e = cudaMallocHost((void **)&b->host, (size_t)std::max<long long>(cfg->host_bytes, 8))) !=
            cudaSuccess) {
            rc = fail_cuda(b, e, "cudaMallocHost(host buffers)");
            break;
        }
        if ((e = cudaMalloc((void **)&b->st, sizeof(dev_status))) != cudaSuccess ||
            (e = cudaMemset(b->st, 0, sizeof(dev_status))) != cudaSuccess) {
            rc = fail_cuda(b, e, "cudaMalloc(status)");
            break;
        }
        for (int i = 0; i < 3 && !rc; i++)
            if ((e = cudaStreamCreateWithFlags(&b->s[i], cudaStreamNonBlocking)) != cudaSuccess)
                rc = fail_cuda(b, e, "cudaStreamCreate");
        b->ev.assign((size_t)std::max(cfg->n_events, 1), nullptr);
        b->marks.assign((size_t)std::max(cfg->n_marks, 1), nullptr);
        for (auto &x : b->ev)
            if (!rc && (e = cudaEventCreateWithFlags(&x, cudaEventDisableTiming)) != cudaSuccess)
                rc = fail_cuda(b, e, "cudaEventCreate");
        for (auto &x : b->marks)
            if (!rc && (e = cudaEventCreate(&x)) != cudaSuccess)
                rc = fail_cuda(b, e, "cudaEventCreate(timing)");
        if (rc)
            break;
        if (cfg->ops_library) {
            b->blas_ok = cublasCreate(&b->blas) == CUBLAS_STATUS_SUCCESS;
#ifndef SWAPSIM_NO_CUDNN
            b->dnn_ok = cudnnCreate(&b->dnn) == CUDNN_STATUS_SUCCESS;
#endif
        }
    } while (0);
    if (rc) {
        fmt(err, errn, "%s", b->err);
        cu_close((val_backend *)b);
        return rc;
    }
    *out = (val_backend *)b;
    return 0;
}

void cu_close(val_backend *vb)
{
    backend_t *b = (backend_t *)vb;
    if (!b)
        return;
    cudaSetDevice(b->dev);
    cudaDeviceSynchronize();
    for (auto x : b->ev)
        if (x)
            cudaEventDestroy(x);
    for (auto x : b->marks)
        if (x)
            cudaEventDestroy(x);
    for (int i = 0; i < 3; i++)
        if (b->s[i])
            cudaStreamDestroy(b->s[i]);
    if (b->blas_ok)
        cublasDestroy(b->blas);
#ifndef SWAPSIM_NO_CUDNN
    if (b->dnn_ok)
        cudnnDestroy(b->dnn);
#endif
    if (b->arena)
        cudaFree(b->arena);
    if (b->scratch)
        cudaFree(b->scratch);
    if (b->aux)
        cudaFree(b->aux);
    if (b->st)
        cudaFree(b->st);
    if (b->host)
        cudaFreeHost(b->host);
    delete b;
}

const char *cu_device_name(val_backend *vb) { return ((backend_t *)vb)->name; }
double cu_time_scale(val_backend *) { return 1; }

int cu_init_fill(val_backend *vb, int where, int64_t off, int64_t bytes, uint64_t key)
{
    backend_t *b = (backend_t *)vb;
    if (where == VAL_HOST) {
        if (!in_range(off, bytes, b->cfg.host_bytes))
            return -1;
        unsigned char *p = b->host + off;
        long long nw = bytes / 8;
        for (long long i = 0; i < nw; i++)
            memcpy(p + 8 * i, &key, 8);
        memcpy(p + 8 * nw, &key, (size_t)(bytes % 8));
        return 0;
    }
    if (!in_range(off, bytes, b->cfg.arena_bytes))
        return -1;
    if (bytes == 0)
        return 0;
    k_fill<<<grid_for(b, bytes / 8 + 1), 256, 0, b->s[0]>>>(b->arena + off, bytes, key);
    CK(b, cudaGetLastError());
    CK(b, cudaStreamSynchronize(b->s[0]));
    return 0;
}

int cu_wait_event(val_backend *vb, int stream, int32_t ev)
{
    backend_t *b = (backend_t *)vb;
    if (ev < 0 || ev >= (int32_t)b->ev.size())
        return -1;
    CK(b, cudaStreamWaitEvent(b->s[stream], b->ev[(size_t)ev], 0));
    return 0;
}

int cu_record_event(val_backend *vb, int stream, int32_t ev)
{
    backend_t *b = (backend_t *)vb;
    if (ev < 0 || ev >= (int32_t)b->ev.size())
        return -1;
    CK(b, cudaEventRecord(b->ev[(size_t)ev], b->s[stream]));
    return 0;
}

int cu_copy(val_backend *vb, int stream, int dir, int64_t dev_off, int64_t host_off, int64_t bytes)
{
    backend_t *b = (backend_t *)vb;
    if (!in_range(dev_off, bytes, b->cfg.arena_bytes) || !in_range(host_off, bytes, b->cfg.host_bytes))
        return -1;
    if (bytes == 0)
        return 0;
    if (dir == VAL_H2D)
        CK(b, cudaMemcpyAsync(b->arena + dev_off, b->host + host_off, (size_t)bytes,
                              cudaMemcpyHostToDevice, b->s[stream]));
    else
        CK(b, cudaMemcpyAsync(b->host + host_off, b->arena + dev_off, (size_t)bytes,
                              cudaMemcpyDeviceToHost, b->s[stream]));
    return 0;
}

int cu_run_op(val_backend *vb, int stream, const val_op_work *w)
{
    backend_t *b = (backend_t *)vb;
    cudaStream_t s = b->s[stream];
    k_start<<<1, 1, 0, s>>>(b->st);
    CK(b, cudaGetLastError());
    /* in the timed pass (no canaries) an op run as library calls does no
       canary-side work: no read/write pass before the calls, no re-fill after */
    int lib = b->cfg.ops_library && w->n_call > 0;
    int rc = b->cfg.canaries || !lib ? launch_regions(b, s, w, 0, b->cfg.canaries, 0) : 0;
    if (rc)
        return rc;
    int method = -1;
    if (b->cfg.ops_library && (rc = run_library(b, s, w, &method)))
        return rc;
    if (method >= 0) {
        /* the library wrote the outputs: lay the canaries again for their readers (as a
           touch, so a mutated input's new contents are not checked against its old key) */
        if (b->cfg.canaries && (rc = launch_regions(b, s, w, 0, 0, VAL_R_FILL)))
            return rc;
    } else {
        unsigned long long ns = (unsigned long long)(w->time_s * 1e9 + 0.5);
        k_busy<<<b->sms, 32, 0, s>>>(b->st, ns);
        CK(b, cudaGetLastError());
    }
    return launch_regions(b, s, w, 1, b->cfg.canaries, 0);
}

int cu_poison(val_backend *vb, int stream, int64_t off, int64_t bytes)
{
    backend_t *b = (backend_t *)vb;
    if (!b->cfg.canaries || bytes <= 0)
        return 0;
    val_region r;
    memset(&r, 0, sizeof r);
    r.off = off;
    r.bytes = bytes;
    r.mode = VAL_R_RELEASE;
    r.tensor = -1;
    val_op_work w;
    memset(&w, 0, sizeof w);
    w.task = w.op = -1;
    w.n_region = 1;
    w.region = &r;
    return launch_regions(b, b->s[stream], &w, 1, 1, 0);
}

int cu_mark(val_backend *vb, int stream, int32_t slot)
{
    backend_t *b = (backend_t *)vb;
    if (slot < 0 || slot >= (int32_t)b->marks.size())
        return -1;
    CK(b, cudaEventRecord(b->marks[(size_t)slot], b->s[stream]));
    return 0;
}

int cu_sync(val_backend *vb, char *err, size_t errn)
{
    backend_t *b = (backend_t *)vb;
    cudaError_t e = cudaDeviceSynchronize();
    if (e == cudaSuccess)
        e = cudaGetLastError();
    if (e != cudaSuccess) {
        fmt(err, errn, "%s", cudaGetErrorString(e));
        return -9;
    }
    if (b->err[0]) {
        fmt(err, errn, "%s", b->err);
        return -9;
    }
    return 0;
}

int cu_mark_times(val_backend *vb, double *t, int32_t n)
{
    backend_t *b = (backend_t *)vb;
    if (n > (int32_t)b->marks.size())
        return -1;
    for (int32_t i = 0; i < n; i++) {
        float ms = 0;
        if (i > 0 && cudaEventElapsedTime(&ms, b->marks[0], b->marks[(size_t)i]) != cudaSuccess)
            return -9;
        t[i] = ms / 1e3;
    }
    return 0;
}

int cu_report(val_backend *vb, val_canary_report *r)
{
    backend_t *b = (backend_t *)vb;
    dev_status st;
    memset(r, 0, sizeof *r);
    if (cudaMemcpy(&st, b->st, sizeof st, cudaMemcpyDeviceToHost) != cudaSuccess)
        return -9;
    r->checks = b->checks;
    r->failures = (int64_t)st.failures;
    r->n_fail = (int32_t)std::min<unsigned long long>(st.failures, VAL_MAX_FAILS);
    memcpy(r->fail, st.fail, sizeof r->fail);
    r->overruns = (int64_t)st.overruns;
    r->timed = (int64_t)st.timed;
    return 0;
}

/* ---- CUPTI operator timing ---- */

/* The kernel record of this CUPTI (every version starts with the same
   fields, start and end among them): CUDA 13 has version 10, CUDA 12 9. */
#if defined(CUPTI_API_VERSION) && CUPTI_API_VERSION >= 130000
typedef CUpti_ActivityKernel10 cupti_kernel_record;
#else
typedef CUpti_ActivityKernel9 cupti_kernel_record;
#endif

std::mutex cupti_mu;
unsigned long long cupti_ns;  /* kernel time collected since the last reset (under cupti_mu) */
bool cupti_ready;

void CUPTIAPI buf_request(uint8_t **buffer, size_t *size, size_t *max_records)
{
    *size = 1 << 20;
    *buffer = (uint8_t *)aligned_alloc(8, *size);
    *max_records = 0;
}

void CUPTIAPI buf_complete(CUcontext, uint32_t, uint8_t *buffer, size_t, size_t valid)
{
    CUpti_Activity *rec = nullptr;
    unsigned long long ns = 0;
    while (cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS)
        if (rec->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL ||
            rec->kind == CUPTI_ACTIVITY_KIND_KERNEL) {
            const cupti_kernel_record *k = (const cupti_kernel_record *)rec;
            if (k->end > k->start)
                ns += k->end - k->start;
        }
    free(buffer);
    std::lock_guard<std::mutex> g(cupti_mu);
    cupti_ns += ns;
}

int cupti_init(char *err, size_t errn)
{
    if (cupti_ready)
        return 0;
    CUptiResult r = cuptiActivityRegisterCallbacks(buf_request, buf_complete);
    if (r == CUPTI_SUCCESS)
        r = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    if (r != CUPTI_SUCCESS) {
        const char *s = "?";
        cuptiGetResultString(r, &s);
        fmt(err, errn, "CUPTI activity API: %s", s);
        return -9;
    }
    cupti_ready = true;
    return 0;
}

int cu_time_op(val_backend *vb, const val_op_work *w, int reps, int unknown, double *seconds,
               int *method, char *err, size_t errn)
{
    backend_t *b = (backend_t *)vb;
    cudaStream_t s = b->s[0];
    *method = -1;
    if (cupti_init(err, errn))
        return -9;
    if (!b->blas_ok)
        b->blas_ok = cublasCreate(&b->blas) == CUBLAS_STATUS_SUCCESS;
#ifndef SWAPSIM_NO_CUDNN
    if (!b->dnn_ok)
        b->dnn_ok = cudnnCreate(&b->dnn) == CUDNN_STATUS_SUCCESS;
#endif
    std::vector<double> t;
    for (int rep = -1; rep < reps; rep++) { /* rep -1 warms up */
        cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
        {
            std::lock_guard<std::mutex> g(cupti_mu);
            cupti_ns = 0;
        }
        int m = -1, rc = run_library(b, s, w, &m);
        if (rc) {
            fmt(err, errn, "%s", b->err);
            return rc;
        }
        if (m < 0) {
            if (unknown == 2)
                return 0; /* keep the profile's time */
            if (unknown == 1) {
                m = VAL_METHOD_CALIBRATED;
                k_start<<<1, 1, 0, s>>>(b->st);
                k_busy<<<b->sms, 32, 0, s>>>(b->st, (unsigned long long)(w->time_s * 1e9 + 0.5));
            } else {
                m = VAL_METHOD_TOUCH;
                if ((rc = launch_regions(b, s, w, 0, 0, 0))) {
                    fmt(err, errn, "%s", b->err);
                    return rc;
                }
            }
        }
        cudaError_t e = cudaStreamSynchronize(s);
        if (e == cudaSuccess)
            e = cudaGetLastError();
        if (e != cudaSuccess) {
            fmt(err, errn, "%s", cudaGetErrorString(e));
            return -9;
        }
        cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
        std::lock_guard<std::mutex> g(cupti_mu);
        if (rep >= 0)
            t.push_back((double)cupti_ns * 1e-9);
        *method = m;
    }
    std::sort(t.begin(), t.end());
    *seconds = t.empty() ? w->time_s : t[t.size() / 2];
    return 0;
}

const val_backend_methods methods = {
    VAL_ABI_VERSION, "cuda",        cu_open,    cu_close,      cu_device_name, cu_time_scale,
    cu_init_fill,    cu_wait_event, cu_record_event, cu_copy,  cu_run_op,      cu_poison,
    cu_mark,         cu_sync,       cu_mark_times,   cu_report, cu_time_op};

} // namespace

extern "C" __attribute__((visibility("default"))) const val_backend_methods *
swapsim_cuda_backend(int abi)
{
    return abi == VAL_ABI_VERSION ? &methods : nullptr;
}
