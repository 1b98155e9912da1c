/* nn.h: layers for the model generators. Each call records one forward
   operator through autograd.h with real shapes (the output tensor's shape,
   the operator's dimensions as attrs), its forward and backward times from
   the cost model (costmodel.h) and which tensors its backward reads. */
#ifndef NN_H
#define NN_H

#include <stdint.h>
#include "../common/params.h"
#include "autograd.h"
#include "costmodel.h"

#define NN_MAXD 4

/* A tensor of the network being built: id in the profile and its shape
   (NCHW for images, [batch, features] or [batch, seq, features] otherwise). */
typedef struct nn_t {
    int32_t id;
    int nd;
    int64_t d[NN_MAXD];
} nn_t;

/* Layer flags. */
enum {
    NN_BN = 1,       /* batch norm after the convolution (its scale and shift are
                        packed into the convolution's parameter tensor) */
    NN_RELU = 2,     /* ReLU fused into the operator's output (BN+ReLU, add+ReLU) */
    NN_PRE_RELU = 4, /* ReLU fused into the operator's input (pre-activation) */
    NN_BIAS = 8,     /* a bias vector packed into the parameter tensor */
    NN_PRE_BN = 16   /* batch norm + ReLU on the input before the convolution
                        (pre-activation, DenseNet); scale and shift packed into
                        the convolution's parameter tensor */
};

typedef struct nn_net {
    ag_graph a;
    cm_ctx cm;
    dev_spec dev;
    int64_t batch;
    int failed;      /* sticky: 1 an allocation failed, 2 too many inputs, 3 uneven split; nn_finish reports it */
    char scope[96];  /* prefix of operator names */
    const char *dtype;
} nn_net;

/* Start a network on device dev (copied) with fp16 (1) or fp32 (0) tensors.
   Returns 0 or SW_ENOMEM. */
int nn_init(nn_net *n, const char *name, const dev_spec *dev, int fp16, int64_t batch);
/* Release everything (when not finished). */
void nn_release(nn_net *n);
/* Prefix the names of the following operators ("stage2.unit3"). */
void nn_scope(nn_net *n, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A persistent input (the data batch) of the given shape. */
nn_t nn_input(nn_net *n, const char *name, int nd, const int64_t *d);
/* A parameter tensor of elems elements (fp32/fp16 as the net). */
int32_t nn_param(nn_net *n, const char *name, int64_t elems);

/* 2-D convolution of x (NCHW) to k channels with an r x s window. */
nn_t nn_conv(nn_net *n, const char *name, nn_t x, int64_t k, int r, int s, int stride, int pad_h,
             int pad_w, int groups, int flags);
/* Square convolution, padding r/2 ("same" at stride 1). */
nn_t nn_convs(nn_net *n, const char *name, nn_t x, int64_t k, int r, int stride, int flags);
/* Depthwise-separable convolution (depthwise r x r then pointwise to k
   channels) as one operator; with NN_BN the batch norm follows. */
nn_t nn_sepconv(nn_net *n, const char *name, nn_t x, int64_t k, int r, int stride, int flags);
/* Batch norm (+ReLU if relu) with its own scale/shift parameter. */
nn_t nn_bn(nn_net *n, const char *name, nn_t x, int relu);
/* Pooling: max (1) or average (0), r x r window. */
nn_t nn_pool(nn_net *n, const char *name, nn_t x, int max, int r, int stride, int pad, int flags);
/* Global average pooling to [N, C]. */
nn_t nn_gpool(nn_net *n, const char *name, nn_t x);
/* Elementwise sum of two tensors of the same shape (NN_RELU: fused ReLU). */
nn_t nn_add(nn_net *n, const char *name, nn_t a, nn_t b, int flags);
/* Concatenation along axis (1 for channels). */
nn_t nn_concat(nn_net *n, const char *name, const nn_t *xs, int k, int axis);
/* Split x into k equal parts along axis (one operator with k outputs). */
int nn_split(nn_net *n, const char *name, nn_t x, int k, int axis, nn_t *out);
/* Fully connected layer on the last dimension (leading dimensions are rows). */
nn_t nn_linear(nn_net *n, const char *name, nn_t x, int64_t out, int flags);
/* A linear layer with an existing weight tensor w (shared parameters). */
nn_t nn_linear_shared(nn_net *n, const char *name, nn_t x, int32_t w, int64_t out);
/* Batched product of activations: a [B, M, K] x b [B, K, N] (transpose_b:
   b is [B, N, K]). */
nn_t nn_bmm(nn_net *n, const char *name, nn_t a, nn_t b, int transpose_b);
/* Elementwise unary operator of the given type ("relu", "sigmoid", "tanh",
   "gelu", "dropout"); backward reads the output (save_out) or the input. */
nn_t nn_unary(nn_net *n, const char *name, const char *type, nn_t x, int save_out);
/* ReLU as its own operator whose backward reads its input, its output and
   the output's gradient (cuDNN's cudnnActivationBackward takes x, y and dy),
   so both tensors stay until the backward pass. */
nn_t nn_relu_xy(nn_net *n, const char *name, nn_t x);
/* Elementwise binary operator ("add", "mul"); mul's backward reads both. */
nn_t nn_binary(nn_net *n, const char *name, const char *type, nn_t a, nn_t b);
/* Layer norm over the last dimension (scale and shift parameters). */
nn_t nn_layernorm(nn_net *n, const char *name, nn_t x);
/* RMSNorm over the last dimension (one scale parameter); backward reads x. */
nn_t nn_rmsnorm(nn_net *n, const char *name, nn_t x);
/* Rotary position embedding of x (queries or keys): an elementwise
   rotation whose backward reads nothing saved. */
nn_t nn_rope(nn_net *n, const char *name, nn_t x);
/* SwiGLU's gating, silu(gate) * up, as one fused operator reading both. */
nn_t nn_swiglu(nn_net *n, const char *name, nn_t gate, nn_t up);
/* FlashAttention as one fused operator: queries q [b*s, heads*hd], keys
   and values k, v [b*s, kv_heads*hd] (grouped-query when narrower) to the
   output [b*s, heads*hd]. Its memory holds no seq x seq scores: it saves
   q, k, v, the output and one fp32 softmax statistic per row and head (a
   second output, [b, heads, s]); backward recomputes the scores.
   causal: count only the lower triangle's FLOPs. */
nn_t nn_flash_attention(nn_net *n, const char *name, nn_t q, nn_t k, nn_t v, int64_t batch,
                        int64_t seq, int64_t heads, int causal);
/* Softmax over the last dimension. */
nn_t nn_softmax(nn_net *n, const char *name, nn_t x);
/* Embedding lookup of integer ids [B, S] into a vocab x dim table (its id in
   *weight if not NULL). */
nn_t nn_embedding(nn_net *n, const char *name, nn_t ids, int64_t vocab, int64_t dim,
                  int32_t *weight);
/* Bilinear upsampling by an integer factor. */
nn_t nn_upsample(nn_net *n, const char *name, nn_t x, int factor);
/* A data-movement operator producing a new tensor of shape d (channel
   shuffle, transpose into a contiguous layout, padding). */
nn_t nn_copy(nn_net *n, const char *name, const char *type, nn_t x, int nd, const int64_t *d);
/* A view of x with shape d (reshape): no data, no time. */
nn_t nn_view(nn_net *n, const char *name, nn_t x, int nd, const int64_t *d);
/* Softmax cross-entropy loss against labels (an input tensor): a scalar. */
nn_t nn_loss(nn_net *n, const char *name, nn_t logits);

/* Elements of a shape. */
int64_t nn_numel(nn_t x);

/* Common generator options, read from a param_set that declares them
   (batch, dtype, optimizer, inference). */
typedef struct nn_common {
    int64_t batch;
    int fp16;
    int inference;
    ag_optimizer opt;
} nn_common;
void nn_common_get(const param_set *ps, nn_common *c);

/* Finish: forward only if inference, else backward from loss and updates.
   Sets the provenance (tool "swapsim model NAME {options}", the cost model
   and its constants). On success *out owns the profile; the net is
   released either way. */
int nn_finish(nn_net *n, const char *model, const param_set *ps, nn_t loss, const nn_common *c,
              graph_profile **out, sw_err *err);

#endif
