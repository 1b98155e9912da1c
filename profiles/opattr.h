/* opattr.h: the one vocabulary of op types and op attributes (graph_op.attr
   keys) that generators, importers, autograd, the library matcher
   (validate/libmap.c) and the CUDA backend share. Write and read attrs only
   through these names; docs/profile-format.md lists them. */
#ifndef OPATTR_H
#define OPATTR_H

#include "graph.h"

/* ---- attribute keys ---- */

/* Cost model (profiles/costmodel.c). */
#define OA_FLOPS "flops"         /* FLOPs of the op (forward or backward) */
#define OA_BYTES "bytes"         /* bytes a forward op moves */
#define OA_BWD_FLOPS "bwd_flops" /* on a forward op: FLOPs of its backward (autograd moves
                                    it to the backward op's flops) */

/* Matrix products (linear, bmm): C[batch, m, n] = A[batch, m, k] B[batch, k, n]. */
#define OA_GEMM_M "m"
#define OA_GEMM_N "n"
#define OA_GEMM_K "k"
#define OA_GEMM_BATCH "batch"
#define OA_GEMM_TRANS_B "transpose_b" /* bmm: B is stored [batch, n, k] */

/* Images, NCHW (convolution, batch norm, pooling): the input's dimensions
   and the output's height and width. */
#define OA_N "n"
#define OA_C "c"
#define OA_H "h"
#define OA_W "w"
#define OA_HO "ho"
#define OA_WO "wo"
/* Windows (convolution, pooling). */
#define OA_K "k"           /* convolution: output channels (filters) */
#define OA_R "r"           /* window height */
#define OA_S "s"           /* window width */
#define OA_STRIDE "stride"
#define OA_PAD "pad"       /* padding of the height (and the width unless pad_w) */
#define OA_PAD_W "pad_w"   /* padding of the width */
#define OA_GROUPS "groups" /* convolution groups (c: depthwise) */

/* Other layers. */
#define OA_AXIS "axis"       /* concat, split */
#define OA_INPUTS "inputs"   /* concat: tensors joined */
#define OA_OUTPUTS "outputs" /* split: parts */
#define OA_VOCAB "vocab"     /* embedding: rows of the table */
#define OA_DIM "dim"         /* embedding: columns of the table */
#define OA_FACTOR "factor"   /* upsampling factor */

/* Importers. */
#define OA_IN_ELEMS "in_elems"   /* pipedream: elements of the first input */
#define OA_OUT_ELEMS "out_elems" /* pipedream: elements of the output */
#define OA_LINE "line"           /* pipedream: line of the node in graph.txt */
#define OA_ET_ID "et_id"         /* pytorch: execution-trace node id */
#define OA_TIME_SRC "time_src"   /* pytorch: where time_s came from: OA_TIME_TRACE or
                                    OA_TIME_MODEL (absent: given in the profile) */
#define OA_TIME_TRACE 1 /* the GPU time of the kernels the trace recorded */
#define OA_TIME_MODEL 2 /* the cost model's, from the operator's shapes (--times model) */

/* Autograd, on backward ops: which forward op they differentiate and where
   the gradients of its inputs go. Bit i is forward input i (i < 24). */
#define OA_FWD_OP "fwd_op"     /* the forward op's id */
#define OA_GRAD_NEW "grad_new" /* inputs whose gradient the op creates (its outputs, in
                                  input order) */
#define OA_GRAD_ACC "grad_acc" /* inputs whose gradient it accumulates in place (its
                                  mutated tensors, in input order) */
#define OA_GRAD_BITS 24

/* ---- op types ---- */

/* Types are compared without regard to case, so PipeDream's module names
   (Conv2d, Linear, BatchNorm2d, MaxPool2d, AvgPool2d) are these types.
   Backward ops are named after their forward op plus this suffix. */
#define OT_BACKWARD_SUFFIX "_backward"

#define OT_CONV2D "conv2d"
#define OT_RELU_CONV2D "relu_conv2d"       /* ReLU fused into the input */
#define OT_DWCONV2D "dwconv2d"             /* depthwise (groups = c) */
#define OT_RELU_DWCONV2D "relu_dwconv2d"
#define OT_SEPCONV2D "sepconv2d"           /* depthwise r x s, then pointwise to k */
#define OT_RELU_SEPCONV2D "relu_sepconv2d"
#define OT_LINEAR "linear"                 /* y[m, n] = x[m, k] W^T, W stored [n, k] */
#define OT_BMM "bmm"
#define OT_BATCHNORM "batchnorm"
#define OT_BATCHNORM_RELU "batchnorm_relu"
#define OT_BATCHNORM2D "batchnorm2d"       /* PyTorch's name (PipeDream) */
#define OT_MAXPOOL2D "maxpool2d"
#define OT_AVGPOOL2D "avgpool2d"
#define OT_RELU_MAXPOOL2D "relu_maxpool2d"
#define OT_RELU_AVGPOOL2D "relu_avgpool2d"
#define OT_GLOBAL_AVGPOOL "global_avgpool"
#define OT_SOFTMAX "softmax"               /* over the last dimension */
#define OT_SOFTMAX_CROSS_ENTROPY "softmax_cross_entropy"
#define OT_VIEW "view"                     /* no data, no kernel */

/* An attr of op o: 1 and *v set if present, else 0 (*v untouched). */
int oa_get(const graph_op *o, const char *key, double *v);
/* An attr of op o, or def if absent. */
double oa_value(const graph_op *o, const char *key, double def);

/* One documented key: the table docs/profile-format.md is checked against. */
typedef struct oa_key {
    const char *key;     /* OA_* */
    const char *meaning; /* one line */
} oa_key;
/* The documented keys (*n receives how many). */
const oa_key *oa_keys(int *n);

#endif
