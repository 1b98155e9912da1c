/* optime.h: what the cost model makes of one operator of a profile: its
   class and its cost terms (FLOPs, bytes, launches), from the operator's type
   and attributes, the same terms the generators use for the same layer. */
#ifndef OPTIME_H
#define OPTIME_H

#include "costmodel.h"
#include "graph.h"

/* Operator classes (the calibration report's rows). */
typedef enum {
    OT_CONV_FWD, /* convolution forward */
    OT_CONV_BWD, /* convolution backward (data and filter gradients) */
    OT_GEMM,     /* matrix products, forward and backward */
    OT_NORM,     /* batch norm, forward and backward */
    OT_POOL,     /* pooling, forward and backward */
    OT_ELEMWISE, /* activations, additions, dropout */
    OT_OTHER,    /* losses, concatenation, optimizer updates, ... */
    OT__COUNT
} ot_class;

#define OT_MAX_TERMS 3

/* What the cost model makes of one operator. */
typedef struct ot_pred {
    int cls;                  /* ot_class */
    int n_terms;              /* 0: the operator lacks the shapes to time it */
    cm_terms t[OT_MAX_TERMS]; /* the cost model's terms, summed */
} ot_pred;

typedef struct ot_name {
    const char *name;
    int32_t op;
} ot_name;

/* A profile's forward operators by name (a generated backward operator
   "X_bwd" finds its forward operator "X"). */
typedef struct ot_index {
    const graph_profile *g;
    ot_name *ix;
    int32_t n;
} ot_index;

/* Builds the index of g (which must outlive it); 0 or SW_ENOMEM. */
int ot_index_build(ot_index *x, const graph_profile *g);
void ot_index_free(ot_index *x);

/* The class and cost terms of op i of g on context c (nx: g's index). */
void ot_predict(const graph_profile *g, int32_t i, const cm_ctx *c, const ot_index *nx,
                ot_pred *r);

/* Seconds of r on c's device with the built-in figures and the device's
   launch overhead (0 when r has no terms). */
double ot_seconds(const cm_ctx *c, const ot_pred *r);

#endif
