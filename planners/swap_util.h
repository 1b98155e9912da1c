/* swap_util.h: what the swapping baselines (odswap, tflms, vdnn) share: a
   schedule, when each storage dies (last use or held_until), and a recorder
   that issues tasks to the plan builder while counting resident bytes and
   keeping an LRU list. */
#ifndef SWAP_UTIL_H
#define SWAP_UTIL_H

#include "../sim/builder.h"
#include "planner.h"

#define SWU_NEVER INT32_MAX

typedef struct swu {
    const graph_profile *g;
    plan_builder *b;       /* NULL: a dry run (nothing recorded) */
    int32_t *order, *pos;  /* the schedule and each op's position in it */
    int32_t *death;        /* per storage: position after which nothing needs it
                              (graph_lifetimes), SWU_NEVER for persistent, unused or views */
    int32_t *dth_off, *dth;/* storages dying at each position (CSR) */
    uint8_t *res, *hv, *lock, *in_r;
    int32_t *prev, *next, head, tail; /* LRU list of resident storages (head: oldest) */
    int64_t used, peak, limit;
    int64_t swap_in_bytes, swap_out_bytes;
    int32_t n_in, n_out, n_drop;
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

/* Make the plan of the recorded iteration in an address arena of cap bytes:
   pb_end_iteration, placement, edges. Errors as pb_finish. */
int swu_finish(swu *u, mem_model *m, plan **out, sw_err *err);

/* Static offloading (vDNN, TFLMS): with everything persistent resident,
   run the profile's order; storage s with out_at[s] >= 0 is copied out after
   the op at position out_at[s] and brought back before the op at position
   in_at[s] (or on demand before its next use). *peak receives the peak of
   resident bytes. Errors: SW_ENOFIT ("does not fit: ..."), SW_ENOMEM. */
int swu_offload(const graph_profile *g, int64_t budget, mem_fit fit, int64_t align,
                const int32_t *out_at, const int32_t *in_at, const char *who, plan **out,
                int64_t *peak, sw_err *err);

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
