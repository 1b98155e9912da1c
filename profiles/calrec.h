/* calrec.h: the cost model against recorded operator times: every operator
   of a recorded profile (`swapsim profile`, `swapsim import pytorch`) timed
   by the generators' cost model (profiles/costmodel.c) on the same device,
   the error per operator class, and the efficiency figures fitted to the
   recorded times by least squares in log space. `swapsim calibrate` reports
   them (docs/calibration.md, the H100 PyTorch traces). */
#ifndef CALREC_H
#define CALREC_H

#include "../common/sw.h"
#include "costmodel.h"
#include "graph.h"
#include "optime.h"

/* Operator classes of the report (profiles/optime.h's ot_class, in its order). */
typedef enum {
    CR_CONV_FWD,  /* convolution forward */
    CR_CONV_BWD,  /* convolution backward (data and filter gradients) */
    CR_GEMM,      /* matrix products, forward and backward */
    CR_NORM,      /* batch norm, forward and backward */
    CR_POOL,      /* pooling, forward and backward */
    CR_ELEMWISE,  /* activations, additions, dropout */
    CR_OTHER,     /* losses, concatenation, optimizer updates, ... */
    CR__COUNT
} cr_class;
_Static_assert((int)CR__COUNT == (int)OT__COUNT && (int)CR_OTHER == (int)OT_OTHER,
               "cr_class follows ot_class");

/* Name of class c ("conv forward"), or "?" */
const char *cr_class_name(int c);

#define CR_MAX_TERMS OT_MAX_TERMS

/* One recorded operator and what the cost model makes of it. */
typedef struct cr_op {
    int32_t op;         /* index in its profile */
    int src;            /* index of its source in the set */
    int cls;            /* cr_class */
    double measured_s;  /* the recorded time */
    double model_s;     /* the cost model's, built-in figures (0 if n_terms is 0) */
    int n_terms;        /* 0: the profile lacks the shapes to time it */
    cm_terms t[CR_MAX_TERMS]; /* the cost model's terms, summed */
} cr_op;

/* A recorded profile of the set. */
typedef struct cr_source {
    char name[96];      /* label (the profile's name) */
    char gpu[128];      /* the GPU its provenance says it was recorded on */
    dev_spec dev;       /* the device the cost model times it on */
    int fp16;           /* timed with the fp16 figures (its tensors are fp16) */
    int32_t n_timed;    /* operators with a recorded time */
    int32_t n_unmodelled; /* of those, operators without the shapes the model needs */
    double unmodelled_s;  /* their recorded time */
} cr_source;

/* Recorded operators of one or more profiles. */
typedef struct cr_set {
    cr_source *src;
    int n_src;
    size_t src_cap;
    cr_op *ops;
    int32_t n_ops;
    size_t ops_cap;
} cr_set;

void cr_set_init(cr_set *s);
void cr_set_free(cr_set *s);

/* Add every operator of g with a positive recorded time, timed on dev (NULL:
   the built-in device of the GPU its provenance names, else g's device),
   labelled name (NULL: g's name). g must say it is recorded (provenance
   source "recorded"): SW_EINVAL otherwise, naming it. */
int cr_add_profile(cr_set *s, const graph_profile *g, const char *name, const dev_spec *dev,
                   sw_err *err);

/* The figures the fit adjusts: per kind of the cost model, the compute
   efficiency (fraction of the peak FLOP/s) and the bandwidth efficiency;
   one fixed cost per kernel. builtin: the table's and each device's own. */
typedef struct cr_figures {
    int builtin;               /* 1: costmodel.c's table and the devices' launch cost */
    double eff[CM__COUNT];     /* compute efficiency (fp32, or fp16 for an fp16 source) */
    double eff_bw[CM__COUNT];  /* bandwidth efficiency */
    double launch_s;           /* fixed cost per kernel */
} cr_figures;

/* The built-in figures, with launch_s that of dev (NULL: 0). */
void cr_figures_builtin(const dev_spec *dev, cr_figures *f);
/* The cost model's time of o under figures f. */
double cr_op_time(const cr_set *s, const cr_figures *f, const cr_op *o);

/* The result of a fit. */
typedef struct cr_fit_result {
    cr_figures fig;            /* fitted figures (the rest built-in) */
    int free_eff[CM__COUNT];   /* 1: eff[k] was fitted */
    int free_bw[CM__COUNT];    /* 1: eff_bw[k] was fitted */
    int free_launch;           /* 1: launch_s was fitted */
    int n_kind[CM__COUNT];     /* operators with a term of kind k */
    int n_used;                /* operators fitted to */
    double rms_before;         /* root mean square of ln(model / recorded), built-in */
    double rms_after;          /* the same, fitted */
    int iterations;            /* Levenberg-Marquardt steps taken */
} cr_fit_result;

/* Fit the figures to the operators of s (leaving out those of source skip;
   -1: none) by least squares on ln(model / recorded) (Levenberg-Marquardt,
   forward-difference Jacobian, deterministic). Fitted: the compute
   efficiency of every compute kind and the bandwidth efficiency of every
   memory-bound kind with at least 3 operators, and the fixed cost per
   kernel; a weak pull (weight 1e-5) keeps a figure the data does not
   determine at its built-in value. SW_EINVAL if no operator can be fitted. */
int cr_fit(const cr_set *s, int skip, cr_fit_result *out, sw_err *err);

/* Totals of one class. */
typedef struct cr_class_sum {
    int n;                 /* operators the model times */
    double measured_s;     /* their recorded time */
    double model_s;        /* the model's */
    double median_abs_err; /* median over them of |model / recorded - 1| */
} cr_class_sum;

/* Per class, and out[CR__COUNT] over all, for the operators of source src
   (-1: all) under figures f. Returns 0 or SW_ENOMEM. */
int cr_summarise(const cr_set *s, const cr_figures *f, int src, cr_class_sum out[CR__COUNT + 1]);

/* The report sections on recorded operator times into b: the H100 PyTorch
   traces in DATA/pytorch-traces (h100_*_et.json.gz with their
   _kineto.json.gz, imported at batch 64; skipped with a line when data is
   NULL or holds none) and the recorded profiles files[0..nfiles). dev: the
   device to time them on (NULL: each profile's own). */
int cr_report(const char *data, const char *const *files, int nfiles, const dev_spec *dev,
              sw_buf *b, sw_err *err);

#endif
