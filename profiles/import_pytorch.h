/* import_pytorch.h: private to the `pytorch` importer (profiles/import_pytorch*.c):
   the execution trace, the Kineto trace and the importer's state, and the
   functions its files share. Nothing outside those files includes it. */
#ifndef IMPORT_PYTORCH_H
#define IMPORT_PYTORCH_H

#include <stdint.h>

#include "../common/json.h"
#include "importers.h"

/* ---- int64 -> int32 hash map ---- */

typedef struct hmap {
    int64_t *keys;
    int32_t *vals;
    size_t cap, n;
} hmap;

#define HM_EMPTY INT64_MIN

/* ---- execution trace: its nodes, sorted by id ---- */

typedef struct etn {
    int64_t id, parent_id, rf_id, tid;
    int64_t seq_id;                         /* autograd sequence number, -1: none */
    const char *name;
    const json_value *node;                 /* the node object */
    const json_value *ins, *outs;           /* value arrays (NULL if none) */
    const json_value *in_types, *out_types; /* type strings (NULL if none) */
    const json_value *in_geo, *out_geo;     /* 1.1.x {"shapes", "strides"} (NULL if none) */
    uint32_t idx;                           /* position in $.nodes */
    int32_t parent;                         /* sorted index, -1 for roots */
    int32_t top;                            /* sorted index of its operator, -1 */
    int32_t nkids;
    int8_t container, phase, in_iter;
    int32_t op;       /* profile op id of a top-level operator */
    double gpu_s;     /* kernel time charged to this operator */
} etn;

typedef struct et {
    etn *n;   /* sorted by id */
    int32_t count;
} et;

/* ---- tensors: a tensor tuple of a node's inputs or outputs ---- */

typedef struct tref {
    int64_t tensor, storage, offset, numel, itemsize;
    int64_t span; /* elements of the storage it reaches from offset: numel, or less for a
                     broadcast (stride 0) view */
    int gpu;
    int arg; /* argument position (the tensors of a list share it) */
} tref;

/* ---- kineto: CPU events, runtime launches, kernels, allocator events ---- */

typedef struct kev {
    const char *name;
    double ts, dur;
    int64_t pid, tid, corr, rf;
    uint32_t idx;
    int32_t node; /* linked ET node (sorted index) or -1 */
} kev;

/* An allocator event of a trace recorded with profile_memory=True ("[memory]"):
   the device's allocated total after it. */
typedef struct kmem {
    double ts;
    int64_t total; /* "Total Allocated" after the event, bytes */
    int64_t bytes; /* "Bytes": allocated (> 0) or freed (< 0) */
    int dev_type;  /* "Device Type": 1 a CUDA device, 0 the CPU, -1 not given */
} kmem;

typedef struct kineto {
    kmem *mem; /* in time order */
    int32_t nmem;
    kev *cpu;
    int32_t ncpu;
    kev *rt; /* runtime launches */
    int32_t nrt;
    kev *gpu; /* kernels, copies, memsets */
    int32_t ngpu;
    const char *device;
} kineto;

/* ---- the importer's state ---- */

/* a storage of the execution trace bound to a profile tensor */
typedef struct binding {
    int32_t tensor;  /* profile tensor */
    int32_t creator; /* profile op that allocated it, -1: exists before the iteration */
    uint8_t mut_update, mut_other, read_fwd;
} binding;

typedef struct ctx {
    et t;
    kineto k;
    graph_profile *g;
    hmap live; /* ET storage id -> binding index */
    binding *b;
    size_t bcap;
    int32_t nb;
    jr *r;      /* for the ET file */
    int32_t cur_op;
    int32_t *rd, *cr, *mu;
    size_t rdc, crc, muc;
    int nrd, ncr, nmu;
    tref *tin, *tout; /* tensors of the node being read */
    size_t tinc, toutc;
    double gpu_span_s;  /* first charged kernel's start to the last one's end, s */
    double gpu_busy_s;  /* time at least one charged kernel ran (union over streams), s */
    double gpu_sum_s;   /* kernel times added up (exceeds busy where streams overlap), s */
    const char *dev;    /* prefix of the model's tensors' device: "cuda", or "cpu" */
    hmap bcast;         /* 1.0.x: tensor id -> index in bc of a broadcast view */
    int64_t (*bc)[2];   /* its storage id and numel (a recycled tensor id differs) */
    size_t bccap;
    int32_t nbc;
} ctx;

/* ---- execution trace and tensors (import_pytorch_et.c) ---- */
/* The hash map: free, look up (-1: absent), insert or replace (0 or SW_ENOMEM). */
void pt_hm_free(hmap *m);
int32_t pt_hm_get(const hmap *m, int64_t k);
int pt_hm_put(hmap *m, int64_t k, int32_t v);
/* Does s start with p? */
int pt_starts(const char *s, const char *p);
/* The execution trace's nodes ($.nodes) into t, sorted by id, parents linked;
   bad input is reported through r. */
int pt_et_load(const json_value *root, jr *r, et *t);
/* Is v a tensor tuple [id, storage, offset, numel, itemsize, device]? */
int pt_is_tensor(const json_value *v);
/* The tensor tuple v as t (t->gpu: on the model's device dev). */
int pt_get_tref(jr *r, const json_value *v, const char *dev, tref *t);
/* t's span from the 1.1.x shapes and strides (geo, value i, list element j). */
void pt_set_span(tref *t, const json_value *geo, uint32_t i, int j);
/* Is node i an annotation or a module record without tensors of its own? */
int pt_is_container(const et *t, int32_t i);
/* Does any node of [lo, hi) have a tensor on a CUDA device? */
int pt_any_cuda(const et *t, int32_t lo, int32_t hi);
/* The qualified name of the innermost module record above node i, or NULL. */
const char *pt_module_of(const et *t, int32_t i);

/* ---- Kineto trace and GPU times (import_pytorch_kineto.c) ---- */
/* The Kineto trace's events into k; bad input is reported through r. */
int pt_kineto_load(const json_value *root, jr *r, kineto *k);
void pt_kineto_free(kineto *k);
/* Link Kineto CPU events to the execution trace's nodes of [lo, hi). */
int pt_link(ctx *c, int32_t lo, int32_t hi, int64_t which, const char *etf, const char *kf,
            sw_err *err);
/* Charge every kernel of the linked iteration to an operator; the GPU's busy
   time and span over them. */
int pt_charge_kernels(ctx *c, const char *kf, sw_err *err);

/* ---- tensor accesses and unnamed memory (import_pytorch_mem.c) ---- */
/* The accesses of one node, charged to profile op c->cur_op. */
int pt_node_accesses(ctx *c, const etn *e, int phase);
/* Workspaces from the allocator's events; *peak (-1: no events), *n_ws. */
void pt_unnamed_memory(ctx *c, int64_t *peak, int32_t *n_ws);

/* ---- cost-model attributes and times (import_pytorch_shapes.c) ---- */
/* The cost model's attributes of op (top-level node top; fop: its forward op
   for a backward one, -1). 0 or SW_ENOMEM. */
int pt_shape_attrs(ctx *c, const int32_t *first, const int32_t *next, int32_t top,
                   int32_t op, int32_t fop);
/* Where each op's time came from; with by_model, the cost model's times. */
int pt_op_times(graph_profile *g, int by_model, int32_t *untimed);

#endif
