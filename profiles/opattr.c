/* opattr.c: reading op attrs and the table of documented attr keys. */
#include "opattr.h"

#include <string.h>

int oa_get(const graph_op *o, const char *key, double *v)
{
    for (int32_t i = 0; i < o->n_attr; i++)
        if (strcmp(o->attr[i].key, key) == 0) {
            *v = o->attr[i].value;
            return 1;
        }
    return 0;
}

double oa_value(const graph_op *o, const char *key, double def)
{
    double v = def;
    oa_get(o, key, &v);
    return v;
}

static const oa_key keys[] = {
    {OA_FLOPS, "FLOPs of the op, forward or backward (cost model)"},
    {OA_BYTES, "bytes a forward op moves (cost model)"},
    {OA_BWD_FLOPS, "on a forward op: FLOPs of its backward op (cost model)"},
    {OA_GEMM_M, "matrix product: rows of A and C"},
    {OA_GEMM_N, "matrix product: columns of B and C; image: batch (N of NCHW)"},
    {OA_GEMM_K, "matrix product: the reduced dimension; convolution: output channels"},
    {OA_GEMM_BATCH, "matrix product: independent products (bmm; 1 for linear)"},
    {OA_GEMM_TRANS_B, "bmm: 1 if B is stored [batch, n, k]"},
    {OA_C, "image: input channels"},
    {OA_H, "image: input height"},
    {OA_W, "image: input width"},
    {OA_HO, "image: output height"},
    {OA_WO, "image: output width"},
    {OA_R, "window height (convolution, pooling)"},
    {OA_S, "window width (convolution, pooling)"},
    {OA_STRIDE, "window stride"},
    {OA_PAD, "padding of the height (and of the width without pad_w)"},
    {OA_PAD_W, "padding of the width"},
    {OA_GROUPS, "convolution groups (c: depthwise)"},
    {OA_AXIS, "concat, split: the axis"},
    {OA_INPUTS, "concat: tensors joined"},
    {OA_OUTPUTS, "split: parts"},
    {OA_VOCAB, "embedding: rows of the table"},
    {OA_DIM, "embedding: columns of the table"},
    {OA_FACTOR, "upsampling factor"},
    {OA_IN_ELEMS, "pipedream: elements of the first input"},
    {OA_OUT_ELEMS, "pipedream: elements of the output"},
    {OA_LINE, "pipedream: line of the node in graph.txt"},
    {OA_ET_ID, "pytorch: execution-trace node id"},
    {OA_TIME_SRC, "pytorch: where the op's time came from: 1 the trace's kernels, 2 the cost "
                  "model (--times model)"},
    {OA_FWD_OP, "backward op: the id of its forward op"},
    {OA_GRAD_NEW, "backward op: bit i set if it creates the gradient of forward input i"},
    {OA_GRAD_ACC, "backward op: bit i set if it accumulates the gradient of forward input i"},
};

const oa_key *oa_keys(int *n)
{
    *n = (int)(sizeof keys / sizeof keys[0]);
    return keys;
}
