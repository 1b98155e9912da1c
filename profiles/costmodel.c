/* costmodel.c: the roofline cost model of the generators and its constants
   (the one place they live; docs/calibration.md shows how well they do). */
#include "costmodel.h"

#include <stdio.h>
#include <string.h>

/* The constants, per operator kind. Device figures (peak FLOP/s, memory
   bandwidth, per-kernel launch cost) come from the device table
   (profiles/device.c); these are the fractions of them operators reach.
   `swapsim calibrate` (docs/calibration.md) shows how well they do.

   Where they come from:
   - Convolutions: fitted to PipeDream's per-layer times of ResNet-50, VGG-16
     and Inception-v3 (batch 128, fp32, V100; data/pipedream/).
     Efficiency is counted against the direct algorithm's 2*n*k*c*r*s*ho*wo
     FLOPs and ramps with the narrowest GEMM dimension d = min(k, c*r*s)
     as d / (d + half_dim). 3x3 stride-1 layers reach up to ~2.5x the fp32
     peak (cuDNN's Winograd does fewer multiplications): 0.45 at 32 channels,
     0.8 at 64, 1.3 at 128, 1.5-2.5 at 256-512; fit 2.4 * d / (d + 140).
     1x1 layers: 0.2-0.3 at 32-64 output channels, 0.55-0.66 from 192 up;
     fit 0.72 * d / (d + 40). Strided and 1x7/7x1 layers: 0.5-0.95; fit
     0.9 * d / (d + 50). Tensor-core (fp16) efficiencies: ~40-50% of the
     fp16 peak (NVIDIA's published ResNet-50 mixed-precision throughput).
   - Matrix products: cuBLAS SGEMM reaches 85-90% of the fp32 peak on large
     products (cuBLAS performance notes), less when a dimension is narrow
     (half at 128 rows/columns); HGEMM ~60% of the tensor-core peak.
   - Memory-bound kinds: PyTorch's elementwise kernels of PipeDream's era
     reach ~45-50% of the V100's 900 GB/s (ReLU: 0.4 forward, 0.48 backward
     on ResNet-50's 205 MB activations), well below STREAM's ~80%; cuDNN
     batch norm ~55% counting its two passes (ResNet-50: 0.5); pooling ~55%.
   - Kernels per operator: a forward is one kernel; backward of a convolution
     or matrix product is two (input and weight gradients); batch norm
     backward is one fused cuDNN kernel.
   - The launch cost per kernel is the device's launch_overhead_s (5 us on
     the PCIe 3 cards: framework dispatch + driver). PipeDream's forward
     times also carry ~0.27 ms of profiler overhead per module, which is not
     GPU time and is not modelled. */
static const cm_const table[CM__COUNT] = {
    [CM_WINOGRAD] = {"conv3x3", 2.40, 0.50, 0.70, 140, 1, 2,
                     "PipeDream V100 fit: 3x3/5x5 stride-1 layers (Winograd)"},
    [CM_CONV] = {"conv", 0.90, 0.45, 0.70, 50, 1, 2,
                 "PipeDream V100 fit: strided and 1x7/7x1 layers"},
    [CM_CONV1X1] = {"conv1x1", 0.72, 0.40, 0.70, 40, 1, 2,
                    "PipeDream V100 fit: 1x1 layers of ResNet-50 and Inception-v3"},
    [CM_DWCONV] = {"dwconv", 0.10, 0.05, 0.50, 0, 1, 2,
                   "memory bound: depthwise kernels reach ~50% of HBM bandwidth"},
    [CM_MATMUL] = {"matmul", 0.85, 0.60, 0.80, 32, 1, 2,
                   "cuBLAS SGEMM/HGEMM large-size efficiency; narrow-dimension ramp"},
    [CM_NORM] = {"norm", 0.0, 0.0, 0.55, 0, 1, 1,
                 "cuDNN batch norm, two passes over the input (PipeDream ResNet-50 BN)"},
    [CM_ELEMWISE] = {"elementwise", 0.0, 0.0, 0.50, 0, 1, 1,
                     "PyTorch elementwise kernels (PipeDream ResNet-50 ReLU: 0.4-0.48)"},
    [CM_POOL] = {"pool", 0.0, 0.0, 0.55, 0, 1, 1, "PipeDream max-pooling layers"},
    [CM_COPY] = {"copy", 0.0, 0.0, 0.60, 0, 1, 1, "strided copies (concat, transpose)"},
    [CM_SOFTMAX] = {"softmax", 0.0, 0.0, 0.50, 0, 1, 1, "reduction + exp kernels"},
    [CM_EMBED] = {"embedding", 0.0, 0.0, 0.40, 0, 1, 2, "gather / scatter-add kernels"},
    [CM_UPDATE] = {"update", 0.0, 0.0, 0.80, 0, 1, 1,
                   "fused SGD/Adam kernels are STREAM-like (~80% of HBM bandwidth)"},
};

const cm_const *cm_constants(cm_kind k) { return (unsigned)k < CM__COUNT ? &table[k] : NULL; }

const char *cm_model_name(void) { return "swapsim roofline-v1"; }

void cm_describe(sw_buf *b)
{
    sw_buf_printf(b, "%s: time = kernels*launch + max(FLOPs/(peak*eff*ramp), bytes/(bw*eff_bw)), "
                  "ramp = d/(d+half_dim), d = narrowest GEMM dimension; per kind eff_fp32/"
                  "eff_fp16/eff_bw/half_dim/kernels fwd,bwd:", cm_model_name());
    for (int k = 0; k < CM__COUNT; k++)
        sw_buf_printf(b, " %s=%g/%g/%g/%g/%d,%d", table[k].name, table[k].eff_fp32,
                      table[k].eff_fp16, table[k].eff_bw, table[k].half_dim,
                      table[k].kernels_fwd, table[k].kernels_bwd);
    sw_buf_puts(b, " (profiles/costmodel.c)");
}

void cm_table_markdown(sw_buf *b)
{
    sw_buf_puts(b, "| kind | eff fp32 | eff fp16 | eff bandwidth | half-efficiency dimension | "
                   "kernels fwd/bwd | source |\n|---|---|---|---|---|---|---|\n");
    for (int k = 0; k < CM__COUNT; k++)
        sw_buf_printf(b, "| %s | %g | %g | %g | %g | %d/%d | %s |\n", table[k].name,
                      table[k].eff_fp32, table[k].eff_fp16, table[k].eff_bw, table[k].half_dim,
                      table[k].kernels_fwd, table[k].kernels_bwd, table[k].source);
}

void cm_init(cm_ctx *c, const dev_spec *dev, int fp16)
{
    c->dev = dev;
    c->fp16 = fp16 ? 1 : 0;
    c->esize = fp16 ? 2 : 4;
}

double cm_time_with(const cm_ctx *c, const cm_const *t, double launch_s, const cm_terms *x)
{
    const dev_spec *d = c->dev;
    double t_compute = 0, t_mem = 0;
    double eff = c->fp16 ? t->eff_fp16 : t->eff_fp32;
    double peak = c->fp16 ? d->peak_flops_fp16 : d->peak_flops_fp32;
    if (x->flops > 0 && eff > 0 && peak > 0) {
        double ramp = t->half_dim > 0 && x->dim > 0 ? x->dim / (x->dim + t->half_dim) : 1.0;
        t_compute = x->flops / (peak * eff * ramp);
    }
    if (x->bytes > 0 && d->mem_bw > 0)
        t_mem = x->bytes / (d->mem_bw * t->eff_bw);
    double lat = launch_s > 0 ? launch_s : 0;
    return (double)x->kernels * lat + (t_compute > t_mem ? t_compute : t_mem);
}

double cm_time(const cm_ctx *c, cm_kind k, double flops, double bytes, double dim, int kernels)
{
    cm_terms x = {k, flops, bytes, dim, kernels};
    return cm_time_with(c, &table[k], c->dev->launch_overhead_s, &x);
}

static double terms_time(const cm_ctx *c, cm_terms *x, cm_kind k, double flops, double bytes,
                         double dim, int kernels)
{
    x->kind = k;
    x->flops = flops;
    x->bytes = bytes;
    x->dim = dim;
    x->kernels = kernels;
    return cm_time(c, k, flops, bytes, dim, kernels);
}

void cm_conv(const cm_ctx *c, int64_t n, int64_t ci, int64_t h, int64_t w, int64_t k, int64_t r,
             int64_t s, int64_t groups, int64_t ho, int64_t wo, int need_dx, cm_cost *out)
{
    if (groups < 1)
        groups = 1;
    double x = (double)n * (double)ci * (double)h * (double)w;
    double y = (double)n * (double)k * (double)ho * (double)wo;
    double wt = (double)k * (double)(ci / groups) * (double)r * (double)s;
    double flops = 2.0 * y * (double)(ci / groups) * (double)r * (double)s;
    double es = (double)c->esize;
    cm_kind kind = groups > 1 && groups == ci ? CM_DWCONV
                   : r * s == 1                ? CM_CONV1X1
                   : r == s && (r == 3 || r == 5) && ho >= h - r + 1 && wo >= w - s + 1
                       ? CM_WINOGRAD /* stride 1 */
                       : CM_CONV;
    double dim = (double)(ci / groups) * (double)r * (double)s;
    if ((double)k < dim)
        dim = (double)k;
    out->kind = kind;
    out->flops = flops;
    out->bytes = es * (x + y + wt);
    out->fwd_s = terms_time(c, &out->fwd, kind, flops, out->bytes, dim, table[kind].kernels_fwd);
    /* weight gradient: read x, dy; write dw. input gradient: read dy, w; write dx */
    double bwd_bytes = es * (x + y + wt);
    double bwd_flops = flops;
    int kernels = 1;
    if (need_dx) {
        bwd_bytes += es * (y + wt + x);
        bwd_flops += flops;
        kernels = table[kind].kernels_bwd;
    }
    out->bwd_flops = bwd_flops;
    out->bwd_s = terms_time(c, &out->bwd, kind, bwd_flops, bwd_bytes, dim, kernels);
}

void cm_matmul(const cm_ctx *c, int64_t batch, int64_t m, int64_t n, int64_t kk, int need_dx,
               cm_cost *out)
{
    double b = (double)batch;
    double flops = 2.0 * b * (double)m * (double)n * (double)kk;
    double es = (double)c->esize;
    double a = b * (double)m * (double)kk, w = b * (double)kk * (double)n,
           y = b * (double)m * (double)n;
    double dim = (double)m;
    if ((double)n < dim)
        dim = (double)n;
    if ((double)kk < dim)
        dim = (double)kk;
    out->kind = CM_MATMUL;
    out->flops = flops;
    out->bytes = es * (a + w + y);
    out->fwd_s =
        terms_time(c, &out->fwd, CM_MATMUL, flops, out->bytes, dim, table[CM_MATMUL].kernels_fwd);
    double bwd_flops = flops, bwd_bytes = es * (a + y + w);
    int kernels = 1;
    if (need_dx) {
        bwd_flops += flops;
        bwd_bytes += es * (y + w + a);
        kernels = table[CM_MATMUL].kernels_bwd;
    }
    out->bwd_flops = bwd_flops;
    out->bwd_s = terms_time(c, &out->bwd, CM_MATMUL, bwd_flops, bwd_bytes, dim, kernels);
}

void cm_simple(const cm_ctx *c, cm_kind k, double in_elems, double out_elems,
               double flops_per_elem, double bwd_read, double bwd_write, cm_cost *out)
{
    double es = (double)c->esize;
    out->kind = k;
    out->flops = flops_per_elem * out_elems;
    out->bytes = es * (in_elems + out_elems);
    /* memory-bound kinds have no compute efficiency: the FLOPs are hidden
       under the memory traffic (eff 0 skips the compute term) */
    out->fwd_s = terms_time(c, &out->fwd, k, out->flops, out->bytes, 0, table[k].kernels_fwd);
    out->bwd_flops = bwd_read + bwd_write > 0 ? out->flops : 0;
    memset(&out->bwd, 0, sizeof out->bwd);
    out->bwd.kind = k;
    out->bwd_s = bwd_read + bwd_write > 0 ? terms_time(c, &out->bwd, k, out->flops,
                                                       es * (bwd_read + bwd_write), 0,
                                                       table[k].kernels_bwd)
                                          : 0;
}

double cm_update_time(const cm_ctx *c, int64_t bytes, int n_state)
{
    double moved = (double)bytes * (3.0 + 2.0 * n_state);
    return cm_time(c, CM_UPDATE, 0, moved, 0, table[CM_UPDATE].kernels_fwd);
}
