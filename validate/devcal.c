/* devcal.c: `swapsim calibrate-device`: measure a GPU through the CUDA
   shared object (swapsim_cuda_calibrate in validate/cuda/) and turn the
   figures into a device spec and the "calibration" object of its device
   file (docs/devices.md). Everything but the measurement itself is plain C
   and tested on the CPU. */
#include <ctype.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "../common/limits.h"
#include "replay.h"

#define MiB 1048576LL

void val_calib_opts_init(val_calib_opts *o)
{
    memset(o, 0, sizeof *o);
    o->copy_bytes = 256 * MiB;
    o->repeats = 5;
}

int val_calibrate(const val_calib_opts *o, val_calib_result *res, sw_err *err)
{
    memset(res, 0, sizeof *res);
    val_cuda_calibrate_fn fn = val_cuda_calibrate_find(err);
    if (!fn)
        return SW_EUNSUPPORTED;
    val_calib_cfg c;
    memset(&c, 0, sizeof c);
    c.version = VAL_CALIB_VERSION;
    c.device_index = o->device_index;
    c.copy_bytes = o->copy_bytes > 0 ? o->copy_bytes : 256 * MiB;
    c.small_bytes = 4096;
    c.small_copies = 100;
    c.repeats = o->repeats > 0 ? o->repeats : 5;
    char ebuf[512] = "";
    int rc = fn(&c, res, ebuf, sizeof ebuf);
    if (rc)
        return sw_fail(err, rc == VAL_CALIB_ENODEV ? SW_EUNSUPPORTED : SW_EIO, "%s",
                       ebuf[0] ? ebuf : "the measurement failed");
    return 0;
}

/* "NVIDIA H100 80GB HBM3" -> "nvidia-h100-80gb-hbm3", at most n - 1 bytes. */
static void slug(const char *s, char *out, size_t n)
{
    size_t k = 0;
    int dash = 0;
    for (; *s && k + 1 < n; s++) {
        unsigned char ch = (unsigned char)*s;
        if (isalnum(ch)) {
            if (dash && k > 0 && k + 2 < n)
                out[k++] = '-';
            dash = 0;
            out[k++] = (char)tolower(ch);
        } else {
            dash = 1;
        }
    }
    out[k] = 0;
    if (!k)
        snprintf(out, n, "gpu");
}

static int bad_figure(sw_err *err, const char *what, double v)
{
    return sw_fail(err, SW_EINVAL, "calibrate-device: the measured %s is %g, not a usable figure "
                   "(the measurement went wrong: run it again on an idle GPU)", what, v);
}

int val_calib_device(const val_calib_result *res, int device_index, const char *name,
                     const char *date, dev_spec *out, sw_err *err)
{
    static const struct {
        const char *what;
        size_t off;
        double lo, hi;
    } fig[] = {
        {"host-to-device rate (bytes/s)", offsetof(val_calib_result, h2d_bw), SW_MIN_BANDWIDTH,
         SW_MAX_BANDWIDTH},
        {"device-to-host rate (bytes/s)", offsetof(val_calib_result, d2h_bw), SW_MIN_BANDWIDTH,
         SW_MAX_BANDWIDTH},
        {"duplex rate (bytes/s)", offsetof(val_calib_result, duplex_bw), SW_MIN_BANDWIDTH,
         SW_MAX_BANDWIDTH},
        {"host-to-device copy latency (s)", offsetof(val_calib_result, h2d_latency_s), 0,
         SW_MAX_OP_SECONDS},
        {"device-to-host copy latency (s)", offsetof(val_calib_result, d2h_latency_s), 0,
         SW_MAX_OP_SECONDS},
        {"fp32 GEMM rate (FLOP/s)", offsetof(val_calib_result, gemm_fp32_flops), 1, 1e21},
        {"fp16 GEMM rate (FLOP/s)", offsetof(val_calib_result, gemm_fp16_flops), 1, 1e21},
        {"memory bandwidth (bytes/s)", offsetof(val_calib_result, mem_bw), SW_MIN_BANDWIDTH,
         SW_MAX_BANDWIDTH},
        {"kernel launch time (s)", offsetof(val_calib_result, launch_s), 0, SW_MAX_OP_SECONDS}};
    for (size_t i = 0; i < SW_ARRAY_LEN(fig); i++) {
        double v;
        memcpy(&v, (const char *)res + fig[i].off, sizeof v);
        if (!isfinite(v) || v < fig[i].lo || v > fig[i].hi)
            return bad_figure(err, fig[i].what, v);
    }
    int64_t mem = res->memory_usable_bytes / MiB * MiB;
    if (mem <= 0 || mem > SW_MAX_TENSOR_BYTES)
        return bad_figure(err, "usable memory (bytes)", (double)res->memory_usable_bytes);
    dev_spec d;
    memset(&d, 0, sizeof d);
    if (name && *name) {
        if (strlen(name) >= sizeof d.name)
            return sw_fail(err, SW_EINVAL, "calibrate-device: name '%s' is longer than %d "
                           "characters", name, (int)sizeof d.name - 1);
        snprintf(d.name, sizeof d.name, "%s", name);
    } else {
        slug(res->gpu, d.name, sizeof d.name);
    }
    snprintf(d.desc, sizeof d.desc, "%.48s (GPU %d), measured by swapsim calibrate-device%s%.24s",
             res->gpu[0] ? res->gpu : "a GPU", device_index, date ? " on " : "", date ? date : "");
    d.memory_bytes = mem;
    d.h2d_bw = res->h2d_bw;
    d.d2h_bw = res->d2h_bw;
    d.duplex_bw = res->duplex_bw;
    d.copy_latency_s = 0.5 * (res->h2d_latency_s + res->d2h_latency_s);
    d.peak_flops_fp32 = res->gemm_fp32_flops;
    d.peak_flops_fp16 = res->gemm_fp16_flops;
    d.mem_bw = res->mem_bw;
    d.launch_overhead_s = res->launch_s;
    if (dev_validate(&d, err))
        return SW_EINVAL;
    *out = d;
    return 0;
}

static void put_num(sw_buf *b, const char *key, double v)
{
    sw_buf_printf(b, ",\n    \"%s\": ", key);
    sw_buf_put_f64(b, v);
}

static void put_version(sw_buf *b, const char *key, int v)
{
    sw_buf_printf(b, ",\n    \"%s\": \"%d.%d\"", key, v / 1000, v % 1000 / 10);
}

void val_calib_to_json(const val_calib_opts *o, const val_calib_result *res, const char *date,
                       sw_buf *b)
{
    sw_buf_puts(b, "{\n    \"tool\": \"swapsim calibrate-device\",\n    \"date\": ");
    sw_buf_put_jstr(b, date ? date : "");
    sw_buf_puts(b, ",\n    \"gpu\": ");
    sw_buf_put_jstr(b, res->gpu);
    sw_buf_printf(b, ",\n    \"device_index\": %d,\n    \"compute_capability\": \"%d.%d\"",
                  o->device_index, res->cc_major, res->cc_minor);
    put_version(b, "driver_version", res->driver_version);
    put_version(b, "runtime_version", res->runtime_version);
    sw_buf_printf(b, ",\n    \"repeats\": %d,\n    \"copy_bytes\": %lld", o->repeats,
                  (long long)o->copy_bytes);
    sw_buf_printf(b, ",\n    \"memory_total_bytes\": %lld,\n    \"memory_free_bytes\": %lld,"
                  "\n    \"memory_usable_bytes\": %lld", (long long)res->memory_total_bytes,
                  (long long)res->memory_free_bytes, (long long)res->memory_usable_bytes);
    put_num(b, "h2d_bytes_per_s", res->h2d_bw);
    put_num(b, "d2h_bytes_per_s", res->d2h_bw);
    put_num(b, "duplex_bytes_per_s", res->duplex_bw);
    put_num(b, "h2d_latency_s", res->h2d_latency_s);
    put_num(b, "d2h_latency_s", res->d2h_latency_s);
    sw_buf_printf(b, ",\n    \"gemm_n\": %d", res->gemm_n);
    put_num(b, "gemm_fp32_flops", res->gemm_fp32_flops);
    put_num(b, "gemm_tf32_flops", res->gemm_tf32_flops);
    put_num(b, "gemm_fp16_flops", res->gemm_fp16_flops);
    put_num(b, "memory_bytes_per_s", res->mem_bw);
    put_num(b, "launch_s", res->launch_s);
    sw_buf_puts(b, ",\n    \"method\": \"CUDA events around each operation on its stream, one "
                   "warm-up then the median of the repeats; pinned cudaMemcpyAsync of copy_bytes "
                   "one way, and both ways at once on two streams; per-copy latency from 100 "
                   "back-to-back 4 KiB copies less their bytes at the one-way rate; usable memory "
                   "the largest single cudaMalloc with the context and a cuBLAS handle alive; "
                   "GEMMs square of gemm_n (fp32 without tensor cores, tf32, fp16 in and out with "
                   "fp32 compute); memory bandwidth a device-to-device copy (bytes read and "
                   "written); launch the time per back-to-back empty kernel\"\n  }");
}
