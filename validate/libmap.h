/* libmap.h: which cuBLAS / cuDNN calls, with which shapes, an op of a
   profile amounts to, or which memory-bound kernel with how many bytes: the
   matching the CUDA backend runs (backend.h val_call), in plain C so it is
   tested without CUDA, and the summary `swapsim profile --dry-run` prints.
   An op is matched by its phase, its type and its attrs (profiles/opattr.h);
   a backward op through its forward op (OA_FWD_OP) and the gradient bits
   autograd records (OA_GRAD_NEW, OA_GRAD_ACC). */
#ifndef LIBMAP_H
#define LIBMAP_H

#include "../profiles/graph.h"
#include "backend.h"

#define LM_MAX_CALLS 8 /* calls of one op at most */

/* The calls of op `op` of the finished profile g, into calls[0..*n), at most
   max (LM_MAX_CALLS is always enough). Operands (val_call.arg) are storage
   ids of g (or VAL_ARG_NONE / VAL_ARG_SCRATCH) until lm_bind turns them into
   region indices. An op whose shapes are unknown is one whole-op
   VAL_CALL_TOUCH with its real bytes; a view none (*n = 0). Returns 0, or
   SW_EINVAL (op out of range, g not finished, max too small). */
int lm_match(const graph_profile *g, int32_t op, val_call *calls, int max, int *n);

/* Turn the operands of calls[0..*n) from storage ids into indices of the
   regions reg[0..n_region) (region.tensor: the storage id) and check that
   every operand fits its region. If one does not (or is absent), the op
   falls back to one whole-op touch: calls[0] becomes that (flops and bytes
   kept as the sum) and *n 1. Returns 1 after such a fallback, else 0. */
int lm_bind(val_call *calls, int *n, const val_region *reg, int32_t n_region);

/* Short name of a call kind ("gemm", "conv_bwd_data"), or "?". */
const char *lm_call_name(int kind);
/* 1 if kind is a cuBLAS/cuDNN call, 0 for a touch kernel. */
int lm_is_library(int kind);

/* The mapping of a whole profile. An op's FLOPs are its flops attr (the
   cost model's) where it has one, else the sum of its calls'; the library
   FLOPs of an op are its library calls' FLOPs, at most its FLOPs. */
typedef struct lm_summary {
    int32_t ops;                       /* every op */
    int32_t library_ops;               /* ops with at least one library call */
    int32_t touch_ops;                 /* ops run only as touch kernels */
    int32_t no_kernel_ops;             /* ops without a kernel (views) */
    int32_t fallback_ops;              /* ops whose shapes did not fit their tensors */
    int64_t calls[VAL_CALL__COUNT];    /* calls per kind */
    double flops[GP__COUNT];           /* FLOPs per phase */
    double library_flops[GP__COUNT];   /* of which on library calls */
    double library_bytes, touch_bytes; /* bytes read and written by each kind of call */
} lm_summary;

/* Summarize the mapping of every op of g (finished). Operands are bound to
   regions laid out as `swapsim profile` lays them out (every storage the op
   accesses), so fallback_ops counts the ops a GPU run would not run as
   library calls. Returns 0 or SW_EINVAL / SW_ENOMEM. */
int lm_summarize(const graph_profile *g, lm_summary *s);
/* FLOPs of all phases, library FLOPs over all FLOPs (1 if no FLOPs), and
   the same for one phase. */
double lm_total_flops(const lm_summary *s);
double lm_library_fraction(const lm_summary *s);
double lm_phase_fraction(const lm_summary *s, int phase);

/* The summary as one JSON object (fields in docs/cli.md) or as text, for
   profile name. */
void lm_summary_json(const lm_summary *s, const char *name, sw_buf *b);
void lm_summary_text(const lm_summary *s, const char *name, sw_buf *b);

#endif
