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
   With ops_library, ops whose attrs give GEMM or convolution shapes run as
   cuBLAS / cuDNN calls on their own buffers instead of the calibrated
   kernel. Timing marks are CUDA events.

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

/* ---- library ops ---- */

bool attr(const val_op_work *w, const char *key, double *v)
{
    for (int i = 0; i < w->n_attr; i++)
        if (!strcmp(w->attr_key[i], key)) {
            *v = w->attr_val[i];
            return true;
        }
    return false;
}

bool type_has(const val_op_work *w, const char *needle)
{
    if (!w->type)
        return false;
    char t[128];
    size_t n = 0;
    for (; w->type[n] && n + 1 < sizeof t; n++)
        t[n] = (char)((w->type[n] >= 'A' && w->type[n] <= 'Z') ? w->type[n] + 32 : w->type[n]);
    t[n] = 0;
    return strstr(t, needle) != nullptr;
}

/* The op's inputs (read only) and outputs (written only), in region order. */
void io_regions(const val_op_work *w, const val_region **in, int *nin, const val_region **out,
                int *nout)
{
    *nin = *nout = 0;
    for (int i = 0; i < w->n_region; i++) {
        const val_region &r = w->region[i];
        if ((r.mode & VAL_R_CHECK) && !(r.mode & VAL_R_FILL) && *nin < 4)
            in[(*nin)++] = &r;
        else if ((r.mode & VAL_R_FILL) && !(r.mode & VAL_R_CHECK) && *nout < 4)
            out[(*nout)++] = &r;
    }
}

/* GEMM: attrs gemm_m, gemm_n, gemm_k (gemm_batch, gemm_fp16 optional):
   C[m,n] = A[m,k] B[k,n] on the first two inputs and the first output. */
int try_gemm(backend_t *b, cudaStream_t s, const val_op_work *w, bool *done)
{
    *done = false;
    double m, n, k, batch = 1, half = 0;
    if (!b->blas_ok || !(type_has(w, "matmul") || type_has(w, "gemm") || type_has(w, "linear") ||
                         type_has(w, "dense") || type_has(w, "fc")))
        return 0;
    if (!attr(w, "gemm_m", &m) || !attr(w, "gemm_n", &n) || !attr(w, "gemm_k", &k))
        return 0;
    attr(w, "gemm_batch", &batch);
    attr(w, "gemm_fp16", &half);
    const val_region *in[4], *out[4];
    int nin, nout;
    io_regions(w, in, &nin, out, &nout);
    long long es = half ? 2 : 4, bt = (long long)batch;
    if (nin < 2 || nout < 1 || m < 1 || n < 1 || k < 1 || bt < 1 ||
        in[0]->bytes < (long long)(m * k) * es * bt || in[1]->bytes < (long long)(k * n) * es * bt ||
        out[0]->bytes < (long long)(m * n) * es * bt)
        return 0;
    int im = (int)m, in_ = (int)n, ik = (int)k;
    float one = 1, zero = 0;
    cublasSetStream(b->blas, s);
    void *A = b->arena + in[0]->off, *B = b->arena + in[1]->off, *C = b->arena + out[0]->off;
    cublasStatus_t st;
    if (half)
        st = cublasGemmStridedBatchedEx(b->blas, CUBLAS_OP_N, CUBLAS_OP_N, im, in_, ik, &one, A,
                                        CUDA_R_16F, im, (long long)m * (long long)k, B, CUDA_R_16F,
                                        ik, (long long)k * (long long)n, &zero, C, CUDA_R_16F, im,
                                        (long long)m * (long long)n, (int)bt, CUBLAS_COMPUTE_32F,
                                        CUBLAS_GEMM_DEFAULT);
    else
        st = cublasSgemmStridedBatched(b->blas, CUBLAS_OP_N, CUBLAS_OP_N, im, in_, ik, &one,
                                       (const float *)A, im, (long long)m * (long long)k,
                                       (const float *)B, ik, (long long)k * (long long)n, &zero,
                                       (float *)C, im, (long long)m * (long long)n, (int)bt);
    if (st != CUBLAS_STATUS_SUCCESS) {
        fmt(b->err, sizeof b->err, "op %d '%s': cuBLAS GEMM failed (status %d)", w->op,
            w->name ? w->name : "", (int)st);
        return -9;
    }
    *done = true;
    return 0;
}

#ifndef SWAPSIM_NO_CUDNN
/* Forward convolution: attrs conv_n, conv_c, conv_h, conv_w, conv_k, conv_r,
   conv_s (conv_stride, conv_pad, conv_dilation optional), NCHW fp32: x the
   first input, w the second, y the first output, workspace the op's. */
int try_conv(backend_t *b, cudaStream_t s, const val_op_work *w, bool *done)
{
    *done = false;
    double N, C, H, W, K, R, S, stride = 1, pad = 0, dil = 1;
    if (!b->dnn_ok || !type_has(w, "conv") || type_has(w, "bwd") || type_has(w, "backward") ||
        type_has(w, "grad"))
        return 0;
    if (!attr(w, "conv_n", &N) || !attr(w, "conv_c", &C) || !attr(w, "conv_h", &H) ||
        !attr(w, "conv_w", &W) || !attr(w, "conv_k", &K) || !attr(w, "conv_r", &R) ||
        !attr(w, "conv_s", &S))
        return 0;
    attr(w, "conv_stride", &stride);
    attr(w, "conv_pad", &pad);
    attr(w, "conv_dilation", &dil);
    const val_region *in[4], *out[4];
    int nin, nout;
    io_regions(w, in, &nin, out, &nout);
    if (nin < 2 || nout < 1)
        return 0;
    cudnnTensorDescriptor_t xd = nullptr, yd = nullptr;
    cudnnFilterDescriptor_t wd = nullptr;
    cudnnConvolutionDescriptor_t cd = nullptr;
    int on, oc, oh, ow, rc = 0;
    bool ok = cudnnCreateTensorDescriptor(&xd) == CUDNN_STATUS_SUCCESS &&
              cudnnCreateTensorDescriptor(&yd) == CUDNN_STATUS_SUCCESS &&
              cudnnCreateFilterDescriptor(&wd) == CUDNN_STATUS_SUCCESS &&
              cudnnCreateConvolutionDescriptor(&cd) == CUDNN_STATUS_SUCCESS &&
              cudnnSetTensor4dDescriptor(xd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, (int)N, (int)C,
                                         (int)H, (int)W) == CUDNN_STATUS_SUCCESS &&
              cudnnSetFilter4dDescriptor(wd, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, (int)K, (int)C,
                                         (int)R, (int)S) == CUDNN_STATUS_SUCCESS &&
              cudnnSetConvolution2dDescriptor(cd, (int)pad, (int)pad, (int)stride, (int)stride,
                                              (int)dil, (int)dil, CUDNN_CROSS_CORRELATION,
                                              CUDNN_DATA_FLOAT) == CUDNN_STATUS_SUCCESS &&
              cudnnGetConvolution2dForwardOutputDim(cd, xd, wd, &on, &oc, &oh, &ow) ==
                  CUDNN_STATUS_SUCCESS &&
              cudnnSetTensor4dDescriptor(yd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, on, oc, oh, ow) ==
                  CUDNN_STATUS_SUCCESS;
    if (ok && in[0]->bytes >= (long long)(N * C * H * W) * 4 &&
        in[1]->bytes >= (long long)(K * C * R * S) * 4 &&
        out[0]->bytes >= (long long)on * oc * oh * ow * 4) {
        cudnnConvolutionFwdAlgoPerf_t perf[8];
        int got = 0;
        cudnnSetStream(b->dnn, s);
        if (cudnnGetConvolutionForwardAlgorithm_v7(b->dnn, xd, wd, cd, yd, 8, &got, perf) ==
            CUDNN_STATUS_SUCCESS) {
            for (int i = 0; i < got && !*done; i++) {
                if (perf[i].status != CUDNN_STATUS_SUCCESS ||
                    (long long)perf[i].memory > w->ws_bytes)
                    continue;
                float one = 1, zero = 0;
                cudnnStatus_t st = cudnnConvolutionForward(
                    b->dnn, &one, xd, b->arena + in[0]->off, wd, b->arena + in[1]->off, cd,
                    perf[i].algo, b->arena + w->ws_off, (size_t)w->ws_bytes, &zero, yd,
                    b->arena + out[0]->off);
                if (st != CUDNN_STATUS_SUCCESS) {
                    fmt(b->err, sizeof b->err, "op %d '%s': cuDNN convolution failed: %s", w->op,
                        w->name ? w->name : "", cudnnGetErrorString(st));
                    rc = -9;
                    break;
                }
                *done = true;
            }
        }
    }
    if (xd)
        cudnnDestroyTensorDescriptor(xd);
    if (yd)
        cudnnDestroyTensorDescriptor(yd);
    if (wd)
        cudnnDestroyFilterDescriptor(wd);
    if (cd)
        cudnnDestroyConvolutionDescriptor(cd);
    return rc;
}
#endif

int try_library(backend_t *b, cudaStream_t s, const val_op_work *w, int *method)
{
    bool done = false;
    int rc = try_gemm(b, s, w, &done);
    if (rc || done) {
        *method = VAL_METHOD_CUBLAS;
        return rc;
    }
#ifndef SWAPSIM_NO_CUDNN
    rc = try_conv(b, s, w, &done);
    if (rc || done) {
        *method = VAL_METHOD_CUDNN;
        return rc;
    }
#endif
    *method = -1;
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
    int rc = launch_regions(b, s, w, 0, b->cfg.canaries, 0);
    if (rc)
        return rc;
    int method = -1;
    if (b->cfg.ops_library && (rc = try_library(b, s, w, &method)))
        return rc;
    if (method >= 0) {
        /* the library wrote the outputs: lay the canaries again for their readers (as a
           touch, so a mutated input's new contents are not checked against its old key) */
        if ((rc = launch_regions(b, s, w, 0, 0, VAL_R_FILL)))
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
            const CUpti_ActivityKernel10 *k = (const CUpti_ActivityKernel10 *)rec;
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
        int m = -1, rc = try_library(b, s, w, &m);
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

/* ---- calibrate-device (swapsim_cuda_calibrate): measure the GPU's copy
   rates, per-copy latency, usable memory, GEMM and memory-bandwidth peaks
   for a device file. Everything is timed with CUDA events on the stream it
   runs on, once to warm up and then cfg->repeats times; the median is
   kept. */

#include <cuda_fp16.h>

namespace {

struct cal_t {
    char *err;
    size_t errn;
    cudaStream_t s[2];
    cudaEvent_t e[3];
    unsigned char *d[2];     /* device buffers, copy_bytes each */
    unsigned char *h[2];     /* pinned host buffers, copy_bytes each */
    float *g[3];             /* GEMM operands, gemm_n^2 floats each */
    cublasHandle_t blas;
    bool blas_ok;
};

void cal_msg(cal_t *c, const char *f, ...) __attribute__((format(printf, 2, 3)));
void cal_msg(cal_t *c, const char *f, ...)
{
    if (!c->err || !c->errn)
        return;
    va_list ap;
    va_start(ap, f);
    vsnprintf(c->err, c->errn, f, ap);
    va_end(ap);
}

#define CAL_CK(c, call)                                                                           \
    do {                                                                                          \
        cudaError_t e_ = (call);                                                                  \
        if (e_ != cudaSuccess) {                                                                  \
            cal_msg((c), "%s: %s", #call, cudaGetErrorString(e_));                                \
            return -9;                                                                            \
        }                                                                                         \
    } while (0)

#define CAL_BLAS(c, call)                                                                         \
    do {                                                                                          \
        cublasStatus_t b_ = (call);                                                               \
        if (b_ != CUBLAS_STATUS_SUCCESS) {                                                        \
            cal_msg((c), "%s: cuBLAS status %d", #call, (int)b_);                                 \
            return -9;                                                                            \
        }                                                                                         \
    } while (0)

void cal_free(cal_t *c)
{
    cudaDeviceSynchronize();
    for (int i = 0; i < 2; i++) {
        if (c->d[i])
            cudaFree(c->d[i]);
        if (c->h[i])
            cudaFreeHost(c->h[i]);
        if (c->s[i])
            cudaStreamDestroy(c->s[i]);
        c->d[i] = c->h[i] = nullptr;
        c->s[i] = nullptr;
    }
    for (int i = 0; i < 3; i++) {
        if (c->g[i])
            cudaFree(c->g[i]);
        if (c->e[i])
            cudaEventDestroy(c->e[i]);
        c->g[i] = nullptr;
        c->e[i] = nullptr;
    }
    if (c->blas_ok)
        cublasDestroy(c->blas);
    c->blas_ok = false;
}

/* Time what enq enqueues on stream 0 (it may use stream 1 after waiting for
   event 0 and must bring stream 1 back into stream 0): warm-up, then reps
   timings; *sec is the median. */
template <class F> int cal_time(cal_t *c, int reps, F enq, double *sec)
{
    std::vector<double> t;
    for (int r = -1; r < reps; r++) {
        CAL_CK(c, cudaEventRecord(c->e[0], c->s[0]));
        int rc = enq();
        if (rc)
            return rc;
        CAL_CK(c, cudaEventRecord(c->e[1], c->s[0]));
        CAL_CK(c, cudaEventSynchronize(c->e[1]));
        float ms = 0;
        CAL_CK(c, cudaEventElapsedTime(&ms, c->e[0], c->e[1]));
        if (r >= 0)
            t.push_back((double)ms * 1e-3);
    }
    std::sort(t.begin(), t.end());
    *sec = t[t.size() / 2];
    if (!(*sec > 0)) {
        cal_msg(c, "a timing came out as %g s", *sec);
        return -9;
    }
    return 0;
}

__global__ void cal_empty() {}

/* Small values (no denormals, no zeros) in fp32 or fp16. */
__global__ void cal_fill(float *p, long long n)
{
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x)
        p[i] = (float)((i * 2654435761LL >> 8) & 255) / 256.0f - 0.5f;
}

__global__ void cal_fill_half(__half *p, long long n)
{
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x)
        p[i] = __float2half((float)((i * 2654435761LL >> 8) & 255) / 256.0f - 0.5f);
}

int cal_run(const val_calib_cfg *cfg, cal_t *c, val_calib_result *out)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n == 0) {
        cal_msg(c, "no CUDA device (%s)",
                e != cudaSuccess ? cudaGetErrorString(e) : "cudaGetDeviceCount found none");
        return VAL_CALIB_ENODEV;
    }
    if (cfg->device_index < 0 || cfg->device_index >= n) {
        cal_msg(c, "device index %d: this machine has %d CUDA device%s", cfg->device_index, n,
                n == 1 ? "" : "s");
        return VAL_CALIB_ENODEV;
    }
    CAL_CK(c, cudaSetDevice(cfg->device_index));
    cudaDeviceProp prop;
    CAL_CK(c, cudaGetDeviceProperties(&prop, cfg->device_index));
    snprintf(out->gpu, sizeof out->gpu, "%s", prop.name);
    out->cc_major = prop.major;
    out->cc_minor = prop.minor;
    CAL_CK(c, cudaDriverGetVersion(&out->driver_version));
    CAL_CK(c, cudaRuntimeGetVersion(&out->runtime_version));
    CAL_CK(c, cudaFree(nullptr)); /* the context */
    for (int i = 0; i < 2; i++)
        CAL_CK(c, cudaStreamCreateWithFlags(&c->s[i], cudaStreamNonBlocking));
    for (int i = 0; i < 3; i++)
        CAL_CK(c, cudaEventCreate(&c->e[i]));
    CAL_BLAS(c, cublasCreate(&c->blas));
    c->blas_ok = true;
    CAL_BLAS(c, cublasSetStream(c->blas, c->s[0]));
    size_t free_b = 0, total_b = 0;
    CAL_CK(c, cudaMemGetInfo(&free_b, &total_b));
    int reps = cfg->repeats > 0 ? cfg->repeats : 5;

    /* copies: pinned host <-> device, one way each, both ways at once, small ones */
    size_t B = (size_t)std::min<long long>(std::max<long long>(cfg->copy_bytes, 1 << 20),
                                           (long long)(free_b / 8));
    for (int i = 0; i < 2; i++) {
        CAL_CK(c, cudaMalloc((void **)&c->d[i], B));
        CAL_CK(c, cudaMallocHost((void **)&c->h[i], B));
        CAL_CK(c, cudaMemset(c->d[i], 0x5A, B));
        memset(c->h[i], 0x5A, B);
    }
    double t;
    int rc = cal_time(c, reps, [&]() {
        CAL_CK(c, cudaMemcpyAsync(c->d[0], c->h[0], B, cudaMemcpyHostToDevice, c->s[0]));
        return 0;
    }, &t);
    if (rc)
        return rc;
    out->h2d_bw = (double)B / t;
    rc = cal_time(c, reps, [&]() {
        CAL_CK(c, cudaMemcpyAsync(c->h[1], c->d[1], B, cudaMemcpyDeviceToHost, c->s[0]));
        return 0;
    }, &t);
    if (rc)
        return rc;
    out->d2h_bw = (double)B / t;
    rc = cal_time(c, reps, [&]() {
        CAL_CK(c, cudaStreamWaitEvent(c->s[1], c->e[0], 0));
        CAL_CK(c, cudaMemcpyAsync(c->d[0], c->h[0], B, cudaMemcpyHostToDevice, c->s[0]));
        CAL_CK(c, cudaMemcpyAsync(c->h[1], c->d[1], B, cudaMemcpyDeviceToHost, c->s[1]));
        CAL_CK(c, cudaEventRecord(c->e[2], c->s[1]));
        CAL_CK(c, cudaStreamWaitEvent(c->s[0], c->e[2], 0));
        return 0;
    }, &t);
    if (rc)
        return rc;
    out->duplex_bw = 2.0 * (double)B / t;
    size_t sb = (size_t)std::max<long long>(std::min<long long>(cfg->small_bytes, (long long)B), 8);
    int ns = cfg->small_copies > 0 ? cfg->small_copies : 100;
    for (int dir = 0; dir < 2; dir++) {
        rc = cal_time(c, reps, [&]() {
            for (int i = 0; i < ns; i++)
                if (dir == 0)
                    CAL_CK(c, cudaMemcpyAsync(c->d[0], c->h[0], sb, cudaMemcpyHostToDevice, c->s[0]));
                else
                    CAL_CK(c, cudaMemcpyAsync(c->h[1], c->d[1], sb, cudaMemcpyDeviceToHost, c->s[0]));
            return 0;
        }, &t);
        if (rc)
            return rc;
        double per = t / ns - (double)sb / (dir == 0 ? out->h2d_bw : out->d2h_bw);
        (dir == 0 ? out->h2d_latency_s : out->d2h_latency_s) = std::max(per, 0.0);
    }

    /* memory bandwidth: a device-to-device copy reads and writes every byte */
    rc = cal_time(c, reps, [&]() {
        CAL_CK(c, cudaMemcpyAsync(c->d[1], c->d[0], B, cudaMemcpyDeviceToDevice, c->s[0]));
        return 0;
    }, &t);
    if (rc)
        return rc;
    out->mem_bw = 2.0 * (double)B / t;

    /* launches: back-to-back empty kernels */
    const int nk = 1000;
    rc = cal_time(c, reps, [&]() {
        for (int i = 0; i < nk; i++)
            cal_empty<<<1, 32, 0, c->s[0]>>>();
        CAL_CK(c, cudaGetLastError());
        return 0;
    }, &t);
    if (rc)
        return rc;
    out->launch_s = t / nk;
    for (int i = 0; i < 2; i++) {
        CAL_CK(c, cudaFree(c->d[i]));
        CAL_CK(c, cudaFreeHost(c->h[i]));
        c->d[i] = c->h[i] = nullptr;
    }

    /* GEMM peaks: square, n = 8192 unless memory is short */
    long long gn = 8192;
    while (gn > 512 && 3.0 * (double)gn * (double)gn * 4 > 0.5 * (double)free_b)
        gn /= 2;
    out->gemm_n = (int)gn;
    size_t ge = (size_t)(gn * gn);
    for (int i = 0; i < 3; i++)
        CAL_CK(c, cudaMalloc((void **)&c->g[i], ge * sizeof(float)));
    double flop = 2.0 * (double)gn * (double)gn * (double)gn;
    float one = 1, zero = 0;
    int in = (int)gn;
    for (int i = 0; i < 3; i++)
        cal_fill<<<1024, 256, 0, c->s[0]>>>(c->g[i], (long long)ge);
    CAL_CK(c, cudaGetLastError());
    for (int mode = 0; mode < 2; mode++) {
        CAL_BLAS(c, cublasSetMathMode(c->blas, mode ? CUBLAS_TF32_TENSOR_OP_MATH
                                                    : CUBLAS_DEFAULT_MATH));
        rc = cal_time(c, reps, [&]() {
            CAL_BLAS(c, cublasSgemm(c->blas, CUBLAS_OP_N, CUBLAS_OP_N, in, in, in, &one, c->g[0], in,
                                    c->g[1], in, &zero, c->g[2], in));
            return 0;
        }, &t);
        if (rc)
            return rc;
        (mode ? out->gemm_tf32_flops : out->gemm_fp32_flops) = flop / t;
    }
    CAL_BLAS(c, cublasSetMathMode(c->blas, CUBLAS_DEFAULT_MATH));
    for (int i = 0; i < 3; i++)
        cal_fill_half<<<1024, 256, 0, c->s[0]>>>((__half *)c->g[i], (long long)ge);
    CAL_CK(c, cudaGetLastError());
    rc = cal_time(c, reps, [&]() {
        CAL_BLAS(c, cublasGemmEx(c->blas, CUBLAS_OP_N, CUBLAS_OP_N, in, in, in, &one, c->g[0],
                                 CUDA_R_16F, in, c->g[1], CUDA_R_16F, in, &zero, c->g[2],
                                 CUDA_R_16F, in, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
        return 0;
    }, &t);
    if (rc)
        return rc;
    out->gemm_fp16_flops = flop / t;
    for (int i = 0; i < 3; i++) {
        CAL_CK(c, cudaFree(c->g[i]));
        c->g[i] = nullptr;
    }

    /* usable memory: the largest single allocation, with the context and cuBLAS alive */
    CAL_CK(c, cudaDeviceSynchronize());
    CAL_CK(c, cudaMemGetInfo(&free_b, &total_b));
    out->memory_total_bytes = (int64_t)total_b;
    out->memory_free_bytes = (int64_t)free_b;
    const size_t step = (size_t)64 << 20;
    size_t want = free_b / (2 << 20) * (2 << 20);
    for (int i = 0; i < 256 && want >= step; i++, want -= step) {
        void *p = nullptr;
        if (cudaMalloc(&p, want) == cudaSuccess) {
            cudaFree(p);
            out->memory_usable_bytes = (int64_t)want;
            break;
        }
        cudaGetLastError(); /* clear the allocation failure */
    }
    if (out->memory_usable_bytes <= 0) {
        cal_msg(c, "no allocation of %zu bytes or less succeeded (of %zu free)", want, free_b);
        return -9;
    }
    return 0;
}

} // namespace

extern "C" __attribute__((visibility("default"))) int
swapsim_cuda_calibrate(const val_calib_cfg *cfg, val_calib_result *out, char *err, size_t errn)
{
    cal_t c;
    memset(&c, 0, sizeof c);
    c.err = err;
    c.errn = errn;
    if (!cfg || !out || cfg->version != VAL_CALIB_VERSION) {
        cal_msg(&c, "calibrate-device: interface version mismatch (rebuild libswapsim_cuda.so)");
        return -9;
    }
    memset(out, 0, sizeof *out);
    int rc = cal_run(cfg, &c, out);
    cal_free(&c);
    return rc;
}
