/* device.h: GPU device specifications (memory, PCIe, compute) and overrides. */
#ifndef DEVICE_H
#define DEVICE_H

#include <stdint.h>
#include "../common/sw.h"

typedef struct dev_spec {
    char name[32];
    char desc[128];
    int64_t memory_bytes;    /* device memory capacity */
    double h2d_bw;           /* host-to-device bytes/s, one direction alone */
    double d2h_bw;           /* device-to-host bytes/s, one direction alone */
    double duplex_bw;        /* both directions at once, bytes/s in total */
    double copy_latency_s;   /* fixed cost of each copy (DMA setup, launch) */
    double peak_flops_fp32;  /* FLOP/s, non-tensor-core */
    double peak_flops_fp16;  /* FLOP/s, tensor cores where present */
    double mem_bw;           /* device memory bandwidth, bytes/s */
    double launch_overhead_s;/* per-kernel launch overhead for the cost model */
} dev_spec;

/* Built-in devices. */
size_t dev_count(void);
const dev_spec *dev_at(size_t i);
/* Built-in device by name (case-insensitive), or NULL. */
const dev_spec *dev_find(const char *name);
/* Apply one override "key=value" (keys: memory, h2d, d2h, duplex, latency,
   fp32, fp16, mem_bw, launch, name). Returns 0 or SW_EINVAL. */
int dev_set(dev_spec *d, const char *assignment, sw_err *err);
/* One-line help listing the override keys. */
const char *dev_set_help(void);
/* Effective copy rates: when both directions are active the duplex rate is
   split between them in proportion to their one-way rates (never above
   the one-way rate). */
void dev_rates(const dev_spec *d, double *h2d_alone, double *d2h_alone, double *h2d_both,
               double *d2h_both);
/* Check a spec's figures are positive and consistent. */
int dev_validate(const dev_spec *d, sw_err *err);

#endif
