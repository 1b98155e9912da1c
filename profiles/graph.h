/* graph.h: the profile: one training or inference iteration as a static
   dataflow graph of operators and tensors, plus its device and provenance. */
#ifndef GRAPH_H
#define GRAPH_H

#include <stdint.h>
#include "../common/sw.h"
#include "device.h"

typedef enum {
    GK_PARAMETER,
    GK_OPTIMIZER_STATE,
    GK_INPUT,
    GK_ACTIVATION,
    GK_GRADIENT,
    GK_WORKSPACE,
    GK__COUNT
} graph_kind;

typedef enum { GP_FORWARD, GP_BACKWARD, GP_UPDATE, GP__COUNT } graph_phase;

/* Per-op storage access flags (graph_profile.acc_flag). */
enum {
    GA_READ = 1,   /* storage must be resident and current */
    GA_CREATE = 2, /* a new storage produced by the op (allocated at its start) */
    GA_MUTATE = 4  /* storage updated in place (read + new version) */
};

typedef struct graph_attr {
    char *key;
    double value;
} graph_attr;

typedef struct graph_tensor {
    char *name;
    int64_t bytes;      /* storage bytes; for a view informational only (never counted) */
    int32_t view_of;    /* -1, or the tensor whose storage this one views */
    uint8_t kind;       /* graph_kind */
    uint8_t persistent; /* lives across iterations (parameters, optimizer state) */
    char *dtype;        /* optional element type ("fp32"), NULL if unknown */
    int32_t n_shape;
    int64_t *shape;     /* optional dimensions */
    int32_t held_until; /* -1, or an op: the framework holds this storage (a root) until that
                           op has run, even if nothing reads it after its last use; a planner
                           may still free it earlier (nothing needs it) */
    /* derived by graph_finish */
    int32_t storage;    /* root tensor id (itself unless a view) */
    int32_t producer;   /* op that produces this tensor, -1 if none */
} graph_tensor;

typedef struct graph_op {
    char *name;
    char *type;
    double time_s;          /* compute time on the profile's device */
    int64_t workspace_bytes;/* scratch memory while it runs */
    uint8_t phase;          /* graph_phase */
    int32_t n_in, n_out, n_mut;
    int32_t *in, *out, *mut;/* tensor ids */
    int32_t n_attr;
    graph_attr *attr;       /* optional numeric attributes (shapes, FLOPs) */
} graph_op;

typedef struct graph_provenance {
    char *source;     /* "generated" or "recorded" */
    char *tool;       /* what made it ("swapsim model chain", "swapsim import dtr") */
    char *file;       /* recorded input file(s), if any */
    char *device;     /* GPU it was recorded on or modelled for */
    char *cost_model; /* cost model and constants, for generated profiles */
    char *notes;
} graph_provenance;

typedef struct graph_profile {
    char *name;
    int64_t batch;       /* samples per iteration (throughput) */
    dev_spec device;
    graph_provenance prov;
    int32_t n_tensors, n_ops;
    graph_tensor *tensors;
    graph_op *ops;
    size_t tcap, ocap;
    /* derived by graph_finish (read-only afterwards) */
    int finished;
    int32_t *order;            /* default schedule: file order if topological */
    int32_t *pred_off, *pred;  /* op dependency DAG, CSR over ops */
    int32_t *succ_off, *succ;
    int32_t *acc_off, *acc;    /* distinct storages each op touches, CSR over ops */
    uint8_t *acc_flag;         /* GA_* per access */
    int32_t *acc_ver;          /* version of the storage the op reads (mutations before it) */
    int32_t *n_mutations;      /* per storage: mutations per iteration */
    int64_t *bytes;            /* per tensor: its bytes, contiguous for hot loops */
    int64_t max_workspace;     /* largest op workspace */
    double total_compute_s;    /* sum of op times */
} graph_profile;

const char *graph_kind_name(int kind);
int graph_kind_parse(const char *s);   /* -1 if unknown */
const char *graph_phase_name(int phase);
int graph_phase_parse(const char *s);  /* -1 if unknown */
/* Kinds that persist by default: parameters and optimizer state. */
int graph_kind_default_persistent(int kind);

/* Construction. graph_new returns an empty profile for the device (copied)
   or NULL on allocation failure; free with graph_free. */
graph_profile *graph_new(const char *name, const dev_spec *dev);
void graph_free(graph_profile *g);
/* Add a tensor; returns its id, or -1 on allocation failure. */
int32_t graph_add_tensor(graph_profile *g, const char *name, int64_t bytes, int kind,
                         int persistent);
/* Add an operator; arrays are copied. Returns its id or -1 on failure. */
int32_t graph_add_op(graph_profile *g, const char *name, const char *type, double time_s,
                     int phase, const int32_t *in, int n_in, const int32_t *out, int n_out,
                     const int32_t *mut, int n_mut, int64_t workspace_bytes);
/* Attach a numeric attribute to an op / a shape to a tensor. 0 or SW_ENOMEM. */
int graph_op_attr(graph_profile *g, int32_t op, const char *key, double value);
int graph_tensor_shape(graph_profile *g, int32_t t, const int64_t *dims, int n, const char *dtype);
/* Set a provenance field (copied). */
int graph_set_str(char **field, const char *value);

/* Validate and derive (storages, producers, dependency DAG, default order).
   On error returns SW_EINVAL with a message naming the op or tensor; if
   bad_op / bad_tensor are not NULL they receive the offending index (or -1). */
int graph_finish(graph_profile *g, sw_err *err, int32_t *bad_op, int32_t *bad_tensor);

/* Storage helpers (valid after graph_finish). */
static inline int64_t graph_storage_bytes(const graph_profile *g, int32_t s)
{
    return g->tensors[s].bytes;
}
/* 1 if the storage exists before the iteration (no producer). */
static inline int graph_storage_external(const graph_profile *g, int32_t s)
{
    return g->tensors[s].producer < 0;
}

/* Is order[0..n_ops) a topological order of the dependency DAG? Returns 1
   if so, 0 if not (and bad_op, if not NULL, receives an op that runs before
   its predecessor *bad_pred), or SW_ENOMEM. */
int graph_is_topological(const graph_profile *g, const int32_t *order, int32_t *bad_op,
                         int32_t *bad_pred);

/* When a storage dies: the later of its last access (last; -1: never
   accessed) and hold, when the op it is held until (held_until) runs (-1:
   none, or that op does not run). A storage never accessed gets -1 whatever
   holds it: nothing allocated it, so there is nothing to keep. Times are any
   increasing count: schedule positions (graph_lifetimes) or the events of a
   plan (the plan builder, within one residency). This is the one definition;
   every planner that predicts when the builder frees a storage uses it. */
static inline int32_t graph_death_at(int32_t last, int32_t hold)
{
    return last >= 0 && hold > last ? hold : last;
}

/* Counts to CSR offsets in place: off[0..n) holds counts on entry; on return
   off[i] is the sum of the counts before i and off[n] (n + 1 entries) the
   total. 0, or SW_EINVAL if the total exceeds INT32_MAX (off is then
   unspecified). */
int graph_counts_to_offsets(int32_t *off, int32_t n);

/* Lifetimes of the storages when the ops run in the order given: the one
   place that says when a storage dies under a schedule (the builder frees it
   then; planners predict that). Nothing is allocated: the results go to the
   caller's buffers, so a search can call it for every schedule it tries.

   order: n_ops op ids, the first to run first; a permutation of the ops (not
   necessarily topological), else SW_EINVAL with the outputs unspecified.
   A position is an index into order: op order[i] runs at position i,
   0 <= i < n_ops. pos (n_ops entries, required) receives each op's position.

   Per tensor id, each array n_tensors entries or NULL (not wanted); only
   storages (roots) are accessed, so a view always gets -1:
     last[s]   position of the last op accessing s (any access in g->acc:
               read, create or mutate), -1 if no op does.
     death[s]  position after which nothing needs s: graph_death_at(last[s],
               position of its held_until op), i.e. its last access, or the op
               holding it if that runs later; -1 if no op accesses s, held or
               not. death[s] > last[s] exactly when s is held past its last
               use. A persistent storage cannot be held and gets its last
               access; callers keeping it for the next iteration treat it as
               never dying.
   use_off (n_tensors + 1 entries, or NULL) receives CSR offsets over
   storages; with it, use_pos (g->acc_off[n_ops] entries, or NULL) receives
   the positions of each storage's accesses in increasing order,
   use_pos[use_off[s] .. use_off[s + 1]); the last one is last[s].
   Returns 0 or SW_EINVAL. */
int graph_lifetimes(const graph_profile *g, const int32_t *order, int32_t *pos, int32_t *death,
                    int32_t *last, int32_t *use_off, int32_t *use_pos);

/* graph_lifetimes for a search that calls it for one profile again and
   again: use_off is what graph_lifetimes gave for any order (a storage's
   number of accesses does not depend on the order), kept by the caller; pos,
   death and use_pos (all required) are filled as graph_lifetimes fills
   them, with fill (n_tensors entries) as scratch. 0 or SW_EINVAL. */
int graph_lifetimes_again(const graph_profile *g, const int32_t *order, int32_t *pos,
                          int32_t *death, const int32_t *use_off, int32_t *use_pos,
                          int32_t *fill);

/* Peak memory of executing order with every non-persistent storage freed
   at its death (graph_lifetimes: after its last use, or its held_until op if
   that runs later) and every persistent one resident throughout, plus the
   largest workspace. Returns bytes, or
   -1 on allocation failure or if order is not a permutation of the ops. */
int64_t graph_peak_memory(const graph_profile *g, const int32_t *order);
/* The same peak with each operator's workspace held only while it runs (a
   caching allocator's view: PyTorch allocates cuDNN's workspace inside the
   convolution) instead of the largest one reserved throughout. */
int64_t graph_peak_memory_op_workspace(const graph_profile *g, const int32_t *order);

typedef struct graph_stats {
    int64_t peak_memory_bytes;    /* graph_peak_memory over the default order */
    int64_t peak_op_workspace_bytes; /* graph_peak_memory_op_workspace, same order */
    int64_t total_tensor_bytes;   /* every storage's bytes (views excluded) */
    int64_t parameter_bytes;      /* kind parameter */
    int64_t optimizer_bytes;      /* kind optimizer_state */
    int64_t persistent_bytes;
    int64_t max_workspace_bytes;
    /* persistent storages + every storage made by a forward operator + the
       gradients read by updates: the memory of an iteration that frees
       nothing before the backward pass starts (Table 1's "memory") */
    int64_t footprint_bytes;
    int32_t operators, tensors, storages, distinct_tensor_sizes;
    int32_t ops_per_phase[GP__COUNT];
    double total_compute_s;
} graph_stats;
int graph_compute_stats(const graph_profile *g, graph_stats *st);

/* Field-by-field equality of two finished profiles (for round-trip tests).
   Returns 1 if equal; otherwise 0 with a description in why. */
int graph_equal(const graph_profile *a, const graph_profile *b, char *why, size_t n);

#endif
