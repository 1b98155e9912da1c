/* device.c: the built-in device table and command-line overrides. */
#include "device.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#define GiB 1073741824LL

/* Sources: vendor datasheets for memory, FLOP/s and memory bandwidth;
   PCIe figures: the SwapAdvisor paper's measurement on a p3.2xlarge V100
   (PCIe 3 x16: 12 GB/s one way, 20 GB/s duplex) for every PCIe 3 card;
   PCIe 4 and 5 scaled by the link rate (2x and 4x) and rounded down to
   what pinned-memory cudaMemcpyAsync reaches in public bandwidthTest runs.
   Copy latency: ~10 us per cudaMemcpyAsync of pinned memory (launch plus
   DMA setup). Launch overhead: ~5 us per kernel (framework + driver). */
static const dev_spec builtin[] = {
    {"v100", "NVIDIA Tesla V100 16 GB, PCIe 3 (the SwapAdvisor paper's testbed)", 16 * GiB,
     12e9, 12e9, 20e9, 10e-6, 15.7e12, 125e12, 900e9, 5e-6},
    {"titanv", "NVIDIA Titan V 12 GB, PCIe 3 (the DTR logs' GPU)", 12 * GiB, 12e9, 12e9, 20e9,
     10e-6, 14.9e12, 110e12, 652.8e9, 5e-6},
    {"rtx2080ti", "NVIDIA GeForce RTX 2080 Ti 11 GB, PCIe 3", 11 * GiB, 12e9, 12e9, 20e9, 10e-6,
     13.4e12, 107e12, 616e9, 5e-6},
    {"a100", "NVIDIA A100 40 GB, PCIe 4", 40 * GiB, 24e9, 24e9, 40e9, 8e-6, 19.5e12, 312e12,
     1555e9, 4e-6},
    {"h100", "NVIDIA H100 80 GB, PCIe 5", 80 * GiB, 48e9, 48e9, 80e9, 6e-6, 51.2e12, 756e12,
     2000e9, 3e-6},
    /* Today's links (docs/devices.md, "Today's devices", gives each figure's
       source and what the duplex model makes of it). H100 PCIe: pinned
       copies measured on PCIe Gen5 x16 (issue 37): 52.5 GB/s in, 55.1 out,
       92.8 both ways at once. */
    {"h100-pcie", "NVIDIA H100 PCIe 80 GB HBM2e, PCIe Gen5 x16 (measured)", 80 * GiB, 52.5e9,
     55.1e9, 92.8e9, 6e-6, 51.2e12, 756e12, 2000e9, 3e-6},
    /* H100 SXM5: the host link is the same PCIe Gen5 x16 (DGX/HGX H100):
       the H100 PCIe measurement; HBM3 and the SXM clocks from the datasheet */
    {"h100-sxm", "NVIDIA H100 SXM5 80 GB HBM3, PCIe Gen5 x16 host link", 80 * GiB, 52.5e9,
     55.1e9, 92.8e9, 6e-6, 67e12, 989.4e12, 3350e9, 3e-6},
    /* A100 80 GB PCIe: the a100 row's Gen4 link, the 80 GB card's HBM2e */
    {"a100-80gb", "NVIDIA A100 80 GB PCIe, PCIe 4", 80 * GiB, 24e9, 24e9, 40e9, 8e-6, 19.5e12,
     312e12, 1935e9, 4e-6},
    /* GH200: the Hopper GPU on NVLink-C2C to the Grace CPU's memory (450
       GB/s per direction nominal); published measurements near 375 GB/s in
       and 297 out; both ways at once not measured: each direction keeps its
       own rate (duplex = their sum, 672 <= 900 nominal) */
    {"gh200", "NVIDIA GH200 96 GB HBM3, NVLink-C2C to the host", 96 * GiB, 375e9, 297e9, 672e9,
     6e-6, 67e12, 989.4e12, 4000e9, 3e-6},
};

size_t dev_count(void) { return SW_ARRAY_LEN(builtin); }

const dev_spec *dev_at(size_t i) { return i < dev_count() ? &builtin[i] : NULL; }

const dev_spec *dev_find(const char *name)
{
    for (size_t i = 0; i < dev_count(); i++)
        if (name && strcasecmp(builtin[i].name, name) == 0)
            return &builtin[i];
    return NULL;
}

const char *dev_set_help(void)
{
    return "memory=SIZE h2d=RATE d2h=RATE duplex=RATE latency=SECONDS fp32=FLOPS fp16=FLOPS "
           "mem_bw=RATE launch=SECONDS name=TEXT";
}

int dev_set(dev_spec *d, const char *a, sw_err *err)
{
    const char *eq = strchr(a, '=');
    if (!eq || eq == a)
        return sw_fail(err, SW_EINVAL, "bad device override '%s': expected KEY=VALUE with KEY one "
                       "of: %s", a, dev_set_help());
    size_t kl = (size_t)(eq - a);
    const char *v = eq + 1;
    char key[32];
    if (kl >= sizeof key)
        kl = sizeof key - 1;
    memcpy(key, a, kl);
    key[kl] = 0;
    sw_err e2;
    if (!strcmp(key, "memory")) {
        int64_t b;
        if (sw_parse_size(v, &b, NULL, &e2) || b <= 0)
            return sw_fail(err, SW_EINVAL, "device override memory=%s: expected a positive size "
                           "such as 16GiB", v);
        d->memory_bytes = b;
        return 0;
    }
    double *rate = !strcmp(key, "h2d") ? &d->h2d_bw : !strcmp(key, "d2h") ? &d->d2h_bw
                   : !strcmp(key, "duplex") ? &d->duplex_bw : !strcmp(key, "mem_bw") ? &d->mem_bw
                   : NULL;
    if (rate) {
        if (sw_parse_rate(v, rate, &e2))
            return sw_fail(err, SW_EINVAL, "device override %s: %s", key, e2.msg);
        return 0;
    }
    double *secs = !strcmp(key, "latency") ? &d->copy_latency_s
                   : !strcmp(key, "launch") ? &d->launch_overhead_s : NULL;
    if (secs) {
        if (sw_parse_seconds(v, secs, &e2))
            return sw_fail(err, SW_EINVAL, "device override %s: %s", key, e2.msg);
        return 0;
    }
    double *fl = !strcmp(key, "fp32") ? &d->peak_flops_fp32
                 : !strcmp(key, "fp16") ? &d->peak_flops_fp16 : NULL;
    if (fl) {
        if (sw_parse_f64(v, fl) || *fl <= 0)
            return sw_fail(err, SW_EINVAL, "device override %s=%s: expected a positive number "
                           "of FLOP/s such as 15.7e12", key, v);
        return 0;
    }
    if (!strcmp(key, "name")) {
        snprintf(d->name, sizeof d->name, "%s", v);
        return 0;
    }
    return sw_fail(err, SW_EINVAL, "bad device override '%s': unknown key '%s' (expected one "
                   "of: %s)", a, key, dev_set_help());
}

void dev_rates(const dev_spec *d, double *h2d_alone, double *d2h_alone, double *h2d_both,
               double *d2h_both)
{
    *h2d_alone = d->h2d_bw;
    *d2h_alone = d->d2h_bw;
    double sum = d->h2d_bw + d->d2h_bw;
    double a = d->duplex_bw * d->h2d_bw / sum, b = d->duplex_bw * d->d2h_bw / sum;
    *h2d_both = a < d->h2d_bw ? a : d->h2d_bw;
    *d2h_both = b < d->d2h_bw ? b : d->d2h_bw;
}

int dev_validate(const dev_spec *d, sw_err *err)
{
    if (d->memory_bytes <= 0)
        return sw_fail(err, SW_EINVAL, "device %s: memory must be positive", d->name);
    if (!(d->h2d_bw > 0) || !(d->d2h_bw > 0) || !(d->duplex_bw > 0))
        return sw_fail(err, SW_EINVAL, "device %s: copy bandwidths must be positive", d->name);
    if (!(d->copy_latency_s >= 0))
        return sw_fail(err, SW_EINVAL, "device %s: copy latency must be >= 0", d->name);
    return 0;
}
