/* dtr_engine.h: the online rematerialisation runtime shared by the `dtr` and
   `dtr-megengine` planners: DTR's runtime (as the DTR authors' simulator simrd
   runs it) replayed over a profile's schedule, recording its decisions
   (evictions = drop tasks, rematerialisations = rerun tasks) as a plan. */
#ifndef DTR_ENGINE_H
#define DTR_ENGINE_H

#include "../../sim/mem.h"
#include "../planner.h"

typedef enum {
    DH_DTR,      /* h_DTR: (cost + evicted neighbourhood) / (size * staleness) */
    DH_EQ,       /* h_DTR^eq: neighbourhood by union-find equivalence classes */
    DH_LOCAL,    /* h_DTR^local: own cost / (size * staleness) */
    DH_LRU,      /* least recently used */
    DH_SIZE,     /* largest first */
    DH_MSPS,     /* (cost + evicted ancestors) / size */
    DH_RANDOM,   /* uniformly random candidate */
    DH_MEGENGINE /* MegEngine's fragmentation-aware score */
} dtr_heuristic;

/* Parse a heuristic name (dtr, dtr-eq, dtr-local, lru, size, msps, random); -1 if unknown. */
int dtr_heuristic_parse(const char *s);

typedef struct dtr_config {
    int heuristic;         /* dtr_heuristic */
    double overhead_cap;   /* give up once rematerialisation exceeds (cap - 1) x the
                              compute time; <= 0: never */
    double small_filter;   /* skip candidates smaller than this fraction of the
                              candidates' mean size (DTR prototype: 0.01); 0: off */
    int sample;            /* examine about sqrt(N) candidates (random stride) */
    int real_delete_bwd;   /* 1: fake delete only in the forward pass; a storage whose
                              last reference dies in the backward pass is deleted for
                              real (its evicted live dependents regenerated first) */
    mem_fit fit;           /* the address allocator placing the plan */
    int64_t align;
    double exp_compute, exp_staleness, exp_memory, recompute_base; /* MegEngine score */
    uint64_t seed;
    int frag_fit;          /* when the bytes fit but no block does: evict the cheapest
                              candidate whose removal opens a large-enough block (1), or
                              simply the next one the heuristic picks (0) */
    int bytes_only;        /* decide on bytes alone (simrd, the DTR prototype's
                              allocated-bytes budget): no placement during the run, no
                              fragmentation evictions; the plan's arena is then the
                              smallest that holds the decisions (it may exceed the
                              budget: plan budget = arena + workspace) */
    int no_plan;           /* only run the runtime and fill the stats; *out stays NULL */
} dtr_config;

typedef struct dtr_stats {
    int64_t compute_ns;      /* sum of op times (the baseline compute) */
    int64_t remat_ns;        /* time spent rematerialising */
    int64_t clock_ns;        /* 1 + compute + remat (simrd's clock) */
    int64_t evictions;       /* by the heuristic, including the ones below */
    int64_t frag_evictions;  /* evictions because no free block was large enough */
    int64_t remats, dead_remats, real_deletes, regenerations;
    int64_t peak_bytes;      /* peak of the runtime's byte count (simrd's max_memory) */
    int64_t peak_in_use;     /* allocator: bytes in use at its peak */
    int64_t reserved_at_peak;/* allocator: arena extent (highest byte used) at that peak */
    int64_t high_water;      /* allocator: highest byte ever used */
    int64_t arena;           /* bytes_only: the arena the plan needed */
    int64_t evaluations;     /* heuristic evaluations */
    double overhead;         /* clock / compute */
} dtr_stats;

/* The options the dtr and dtr-megengine planners share, each defined once
   (each planner's table lists them in its own order, which plans record);
   def: the planner's default. */
#define DTR_PARAM_OVERHEAD_CAP                                                                  \
    {"overhead_cap", PT_FLOAT, "2", "give up (\"exceeded\") once rematerialisation exceeds "    \
     "(cap - 1) x the compute time; 0: never", NULL, 0, 1e9}
#define DTR_PARAM_SMALL_FILTER                                                                  \
    {"small_tensor_filter", PT_FLOAT, "0", "skip eviction candidates smaller than this "         \
     "fraction of the candidates' mean size (the DTR prototype uses 0.01)", NULL, 0, 1}
#define DTR_PARAM_SAMPLE                                                                        \
    {"sample", PT_BOOL, "false", "examine about sqrt(N) of the N candidates (random stride), as " \
     "the DTR prototype does (MegEngine: enable_sqrt_sampling)", NULL, 1, 0}
#define DTR_PARAM_FAKE_DELETE(def)                                                              \
    {"fake_delete", PT_CHOICE, def, "when the last reference to a tensor dies, free it but "    \
     "keep its record so dependents can regenerate it: always (the DTR simulator), or only in " \
     "the forward pass (MegEngine; later deletes are real: evicted live dependents are "        \
     "regenerated first)", "always|forward", 1, 0}
#define DTR_PARAM_ALLOCATOR                                                                     \
    {"allocator", PT_CHOICE, "best-fit", "address allocator placing the plan in the budget; a " \
     "placement that fails although the bytes fit evicts more", "first-fit|best-fit", 1, 0}
#define DTR_PARAM_ALIGNMENT(def)                                                                \
    {"alignment", PT_SIZE, def, "placement alignment in bytes", NULL, 1, 1e9}

/* dtr_config_from: lib/dtr_config.h */

/* Run the runtime on g (finished) within budget bytes (op workspaces are
   reserved out of it) and record the plan. Errors: SW_ENOFIT ("does not fit:
   ..."; the runtime ran out of evictable tensors), SW_EEXCEEDED ("exceeded:
   ..."; the overhead cap), SW_EINVAL, SW_ENOMEM. st (optional) is filled
   even when the run fails. */
int dtr_run(const graph_profile *g, int64_t budget, const dtr_config *cfg, plan **out,
            dtr_stats *st, sw_err *err);

/* One-line summary of st for plan notes. */
void dtr_stats_note(const dtr_stats *st, const dtr_config *cfg, sw_buf *b);

#endif
