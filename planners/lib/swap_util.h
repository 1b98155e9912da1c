/* swap_util.h: the residency runtime the swapping baselines (odswap, tflms,
   vdnn) and the DTR engine share: a schedule, when each storage dies (last
   use or held_until), and a recorder that issues tasks to the plan builder
   while counting resident bytes and keeping an LRU list. */
#ifndef SWAP_UTIL_H
#define SWAP_UTIL_H

#include "../../sim/builder.h"
#include "../planner.h"

#define SWU_NEVER INT32_MAX

typedef struct swu {
    const graph_profile *g;
    plan_builder *b;       /* NULL: a dry run (nothing recorded) */
    int32_t *order, *pos;  /* the schedule and each op's position in it */
    int32_t *death;        /* per storage: position after which nothing needs it
                              (graph_lifetimes), SWU_NEVER for persistent, unused or views */
    int32_t *dth_off, *dth;/* storages dying at each position (CSR) */
    uint8_t *res;          /* per storage: resident */
    uint8_t *hv;           /* per storage: the host holds its current value */
    uint8_t *lock;         /* per storage: locked by swu_lock_op (not an LRU victim) */
    uint8_t *in_r;         /* per storage: resident when the iteration starts */
    int32_t *prev, *next, head, tail; /* LRU list of resident storages (head: oldest) */
    int64_t used, peak;    /* bytes resident now; their peak this iteration */
    int64_t limit;         /* bytes decisions must respect (swu_begin) */
    int64_t swap_in_bytes, swap_out_bytes; /* bytes copied in / out this iteration */
    int32_t n_in, n_out, n_drop; /* swap-ins, swap-outs, drops this iteration */
} swu;

/* Set up for g with schedule order (NULL: the profile's). SW_ENOMEM, or
   SW_EINVAL if order is not a permutation of the ops. */
int swu_init(swu *u, const graph_profile *g, const int32_t *order);
void swu_free(swu *u);
/* Start an iteration: resident[s] marks the persistent storages resident at
   its start (recorded with pb_resident when b is not NULL). limit: the byte
   count decisions must respect. */
void swu_begin(swu *u, plan_builder *b, const uint8_t *resident, int64_t limit);
void swu_swap_in(swu *u, int32_t s);
/* Free s: copy it out if the host copy is stale, else drop it. */
void swu_evict(swu *u, int32_t s);
/* Run the op at schedule position i: its outputs appear, its accesses are
   touched (LRU), then the storages dying at i are freed (implicitly). The
   caller makes sure its inputs are resident. */
void swu_run(swu *u, int32_t i);
/* Bytes the op at position i creates. */
int64_t swu_created_bytes(const swu *u, int32_t i);
/* Evict least-recently-used unlocked storages until need more bytes fit
   the limit; SW_ENOFIT if that is impossible. */
int swu_make_room(swu *u, int64_t need);
/* Lock/unlock every storage op o reads or mutates. */
void swu_lock_op(swu *u, int32_t o, int on);
/* Whether s can be brought in from the host (it exists there). */
int swu_on_host(const swu *u, int32_t s);

/* The residency changes the calls above are made of, for a runtime that
   decides residency itself (the DTR engine runs its own schedule, with
   reruns, and evicts by its own heuristics): each keeps the resident set,
   the byte count, its peak and the LRU list, and records a task when a
   builder is set. */
/* s appears, made by the op about to run: resident, its host copy stale. No
   task (the op's run makes it). */
void swu_create(swu *u, int32_t s);
/* Free s without a copy (its host copy is current, or it can be recomputed):
   a drop task. */
void swu_drop(swu *u, int32_t s);
/* s leaves memory with no task: its death (the builder frees a storage after
   its last use or held_until by itself). */
void swu_release(swu *u, int32_t s);
/* Count extra bytes, held beyond the resident set for a moment, in the peak
   (an op re-run writes new copies of its outputs that are still resident,
   as the DTR authors' simulator counts it). */
void swu_note_transient(swu *u, int64_t extra);

/* Make the plan of the recorded iteration through the builder's memory
   model: pb_end_iteration, placement, edges. Errors as pb_finish. */
int swu_finish(swu *u, plan **out, sw_err *err);

/* Static offloading (vDNN, TFLMS): with everything persistent resident,
   run the profile's order; storage s with out_at[s] >= 0 is copied out after
   the op at position out_at[s] and brought back before the op at position
   in_at[s] (or on demand before its next use), within o->memory_budget,
   placed as o's "allocator" and "alignment" options say (lib/arena.h).
   *peak receives the peak of resident bytes. Errors: SW_ENOFIT ("does not
   fit: ..."), SW_ENOMEM. */
int swu_offload(const graph_profile *g, const planner_opts *o, const int32_t *out_at,
                const int32_t *in_at, const char *who, plan **out, int64_t *peak, sw_err *err);

/* Per storage: the last position of a forward-phase access and the first
   position of a backward/update-phase read (-1 if none), in the profile's
   order. Caller frees both. */
int swu_phase_uses(const graph_profile *g, int32_t **last_fwd, int32_t **first_bwd);

/* The framework's order ("without schedule search"): the order a dataflow
   engine such as MXNet's runs g in on one GPU worker. An op becomes ready
   when its last predecessor has run; ready ops run first-in first-out; the
   sources, and the ops made ready by the same op, enter the queue in
   creation order (op id). Deterministic (docs/swapadvisor.md, "The
   framework order"). Caller frees. NULL on allocation failure. */
int32_t *swu_framework_order(const graph_profile *g);

#endif
