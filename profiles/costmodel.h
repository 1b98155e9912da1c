/* costmodel.h: the operator cost model of the generators: a per-operator
   roofline on the device spec (FLOPs and bytes moved from the operator's
   shapes, an efficiency factor per operator kind, a fixed cost per kernel).
   Every constant lives in the table of costmodel.c (cm_describe prints it). */
#ifndef COSTMODEL_H
#define COSTMODEL_H

#include <stdint.h>
#include "device.h"

/* Operator kinds with their own efficiency constants. */
typedef enum {
    CM_WINOGRAD,   /* 3x3 or 5x5 convolution at stride 1 (cuDNN picks Winograd/FFT) */
    CM_CONV,       /* other dense convolutions (strided, 1x7, 7x7 ...) */
    CM_CONV1X1,    /* pointwise (1x1) convolution: a GEMM over channels */
    CM_DWCONV,     /* depthwise / grouped convolution (memory bound) */
    CM_MATMUL,     /* dense matrix product (fully connected, attention, LSTM gates) */
    CM_NORM,       /* batch / layer normalisation (two passes over the data) */
    CM_ELEMWISE,   /* activations, add, mul, dropout */
    CM_POOL,       /* max / average pooling, upsampling */
    CM_COPY,       /* concat, split, transpose, pad: pure data movement */
    CM_SOFTMAX,    /* softmax, loss */
    CM_EMBED,      /* embedding lookup (gather / scatter-add) */
    CM_UPDATE,     /* optimizer update of one parameter tensor */
    CM__COUNT
} cm_kind;

/* One kind's constants and where they come from. */
typedef struct cm_const {
    const char *name;
    double eff_fp32;   /* achieved fraction of the device's fp32 peak FLOP/s */
    double eff_fp16;   /* achieved fraction of the fp16 (tensor core) peak */
    double eff_bw;     /* achieved fraction of the device memory bandwidth */
    double half_dim;   /* GEMM dimension at which the kind reaches half its efficiency
                          (narrow products cannot fill the GPU); 0: no ramp */
    int kernels_fwd;   /* kernels launched by the forward operator */
    int kernels_bwd;   /* kernels launched by its backward operator */
    const char *source;
} cm_const;

/* The constants of one kind (k < CM__COUNT). */
const cm_const *cm_constants(cm_kind k);
/* Name of the model with its version, for provenance ("roofline-v1"). */
const char *cm_model_name(void);
/* One line naming the model and every constant, for provenance.cost_model. */
void cm_describe(sw_buf *b);
/* The constants as a Markdown table (docs, `swapsim calibrate`). */
void cm_table_markdown(sw_buf *b);

/* A cost context: the device and the element type. */
typedef struct cm_ctx {
    const dev_spec *dev;
    int fp16;      /* 1: fp16 tensors and tensor-core peak for conv/matmul */
    int64_t esize; /* bytes per element (4 or 2) */
} cm_ctx;

void cm_init(cm_ctx *c, const dev_spec *dev, int fp16);

/* Time of one operator of kind k that does flops FLOPs and moves bytes bytes
   over kernels kernels: kernels * launch + max(flops / (peak * eff * ramp),
   bytes / (bandwidth * eff_bw)), ramp = dim / (dim + half_dim) where dim is
   the smallest GEMM dimension of the operator (0: no ramp). */
double cm_time(const cm_ctx *c, cm_kind k, double flops, double bytes, double dim, int kernels);

/* What one operator (or its backward) costs before the device's figures
   apply: the arguments of cm_time. */
typedef struct cm_terms {
    cm_kind kind;   /* whose constants apply */
    double flops;   /* FLOPs it does */
    double bytes;   /* bytes it moves */
    double dim;     /* narrowest GEMM dimension (0: no ramp) */
    int kernels;    /* kernels it launches (0: no operator, time 0) */
} cm_terms;

/* cm_time with the efficiency figures of row k (any cm_const, not only the
   table's) and launch_s per kernel: what `swapsim calibrate` fits. */
double cm_time_with(const cm_ctx *c, const cm_const *k, double launch_s, const cm_terms *t);

/* Forward and backward cost of one layer. FLOPs and bytes are the forward's
   (attrs for the profile); times are full times including launches. */
typedef struct cm_cost {
    double flops, bytes;
    double bwd_flops; /* FLOPs of the backward (0: no backward cost) */
    double fwd_s, bwd_s;
    cm_kind kind;
    cm_terms fwd, bwd; /* the terms fwd_s and bwd_s were computed from */
} cm_cost;

/* Convolution of an n x c x h x w input with k filters r x s (groups g) to an
   n x k x ho x wo output. Backward computes the input and weight gradients
   (twice the forward FLOPs); need_dx = 0 for the first layer (no input
   gradient). */
void cm_conv(const cm_ctx *c, int64_t n, int64_t ci, int64_t h, int64_t w, int64_t k, int64_t r,
             int64_t s, int64_t groups, int64_t ho, int64_t wo, int need_dx, cm_cost *out);
/* batch independent products of (m x kk) by (kk x n): forward 2*batch*m*n*kk
   FLOPs, backward twice that (need_dx = 0: only the weight gradient). */
void cm_matmul(const cm_ctx *c, int64_t batch, int64_t m, int64_t n, int64_t kk, int need_dx,
               cm_cost *out);
/* An operator of kind k reading in_elems and writing out_elems elements with
   flops_per_elem FLOPs per output element; bwd_read/bwd_write: elements moved
   by its backward (0, 0: no backward cost computed). */
void cm_simple(const cm_ctx *c, cm_kind k, double in_elems, double out_elems,
               double flops_per_elem, double bwd_read, double bwd_write, cm_cost *out);
/* Optimizer update of a parameter of the given bytes with n_state state
   tensors (0 sgd, 1 momentum, 2 adam): reads the gradient, reads and writes
   the parameter and each state tensor. */
double cm_update_time(const cm_ctx *c, int64_t bytes, int n_state);

#endif
