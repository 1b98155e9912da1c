/* cuda_calibrate.cu: calibrate-device (swapsim_cuda_calibrate), built by nvcc
   into libswapsim_cuda.so beside the replay backend (cuda_backend.cu): measure
   the GPU's copy rates, per-copy latency, usable memory, GEMM and
   memory-bandwidth peaks for a device file. Everything is timed with CUDA
   events on the stream it runs on, once to warm up and then cfg->repeats
   times; the median is kept. */
#include <cuda_runtime.h>
#include <cublas_v2.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "../backend.h"

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

/* The device, its properties and versions, two streams, three events and a
   cuBLAS handle on stream 0; *free_b: the device's free memory. */
int cal_setup(const val_calib_cfg *cfg, cal_t *c, val_calib_result *out, size_t *free_b)
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
    size_t total_b = 0;
    CAL_CK(c, cudaMemGetInfo(free_b, &total_b));
    return 0;
}

/* copies: pinned host <-> device, one way each, both ways at once, small
   ones; then the memory bandwidth (a device-to-device copy reads and writes
   every byte) and the launch time (back-to-back empty kernels). */
int cal_copies(const val_calib_cfg *cfg, cal_t *c, int reps, size_t free_b,
               val_calib_result *out)
{
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
    return 0;
}

/* GEMM peaks: square, n = 8192 unless memory is short; fp32, TF32, fp16. */
int cal_gemm(cal_t *c, int reps, size_t free_b, val_calib_result *out)
{
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
    double t;
    int rc;
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
    return 0;
}

/* usable memory: the largest single allocation, with the context and cuBLAS alive */
int cal_memory(cal_t *c, val_calib_result *out)
{
    size_t free_b = 0, total_b = 0;
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

int cal_run(const val_calib_cfg *cfg, cal_t *c, val_calib_result *out)
{
    size_t free_b = 0;
    int rc = cal_setup(cfg, c, out, &free_b);
    int reps = cfg->repeats > 0 ? cfg->repeats : 5;
    if (!rc)
        rc = cal_copies(cfg, c, reps, free_b, out);
    if (!rc)
        rc = cal_gemm(c, reps, free_b, out);
    if (!rc)
        rc = cal_memory(c, out);
    return rc;
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
