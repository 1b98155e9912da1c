/* dtr_engine_impl.h: the state of the DTR runtime (planners/dtr_engine.h),
   private to its files: the run (dtr_engine.c), the eviction heuristics
   and their caches (dtr_heuristics.c) and the set-up of the profile's
   tables (dtr_setup.c); the small operations on the candidate pool, the
   locks and the log that all of them use, inline. */
#ifndef DTR_ENGINE_IMPL_H
#define DTR_ENGINE_IMPL_H

#include <gsl/gsl_rng.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../../common/limits.h"
#include "dtr_engine.h"
#include "swap_util.h"
#include "replay.h"

#define NEVER SWU_NEVER

/* the run's events: replay.h's (replayed into the plan by replay_record) */
enum { EV_RUN = REPLAY_RUN, EV_RERUN = REPLAY_RERUN, EV_DROP = REPLAY_DROP,
       EV_DEATH = REPLAY_DEATH, EV_DEATH_DROP = REPLAY_DEATH_DROP, EV_SWAPIN = REPLAY_SWAPIN };
typedef replay_ev dtr_ev;

/* One level of materialize's explicit stack: op being (re)computed. */
typedef struct frame {
    int32_t op;       /* the op to run */
    int32_t target;   /* the tensor it is run for (simrd's order: siblings first), or -1 */
    int32_t arg;      /* stage 1, 2: the argument being made resident (index in args) */
    uint8_t remat;    /* a rematerialisation (rerun), not the op's scheduled run */
    uint8_t stage;    /* 0: arguments not stamped yet; 1: walking the arguments;
                         2: argument arg was just rematerialised (lock it next) */
    size_t miss_off;  /* this frame's slice of arg_missing (one flag per argument) */
} frame;

/* The runtime's state. Index spaces: "per op" arrays are over op ids,
   "per position" over positions in g->order, "per tensor" over tensor ids,
   "per storage" over tensor ids too but meaningful only at storage roots.
   Times are integer ticks of 1 ns (simrd's clock). Every array is owned
   (eng_free); each fixed one has one spare slot. The state is grouped by
   what uses it: the run's context first, then the parts below. */

/* The profile as the runtime sees it: static, built by setup. */
typedef struct eng_graph {
    int64_t *ticks;          /* per op: its compute time */
    int32_t *args_off, *args;       /* CSR per op: tensors it reads (inputs, then mutated) */
    int32_t *created_off, *created; /* CSR per op: storages it creates (GA_CREATE) */
    int64_t *created_bytes;  /* per op: bytes of the storages it creates */
    int32_t *on_storage_off, *on_storage; /* CSR per storage: the tensors on it (views too) */
    int32_t *fwd_off, *fwd_to, *fwd_op; /* CSR per storage: storages an op computes from it
                                           (argument -> output), and that op */
    int32_t *rev_off, *rev_to, *rev_op; /* CSR per storage: the reverse edges (output ->
                                           argument), and the op */
    uint8_t *constant;       /* per storage: never evicted or freed (persistent, no
                                producer, or of kind input) */
    uint8_t *evictable;      /* per storage: may be evicted (recomputable whenever needed) */
    uint8_t *is_view;        /* per tensor: a view of another tensor's storage */
} eng_graph;

/* The tensor table: what the run has done to each tensor, storage and op
   (residency itself is eng.u's). */
typedef struct eng_state {
    uint8_t *defined;        /* per tensor: its value is available (storage resident) */
    uint8_t *pinned;         /* per storage: locked for good by the sink op */
    uint8_t *ran;            /* per op: its scheduled run happened */
    uint8_t *dead;           /* per storage: the framework dropped its last reference */
    uint8_t *banished;       /* per storage: deleted for real, can never come back */
    uint8_t *no_evict;       /* per storage: never evicted again (recomputing it would need
                                a storage deleted for real) */
    int32_t *locks;          /* per storage: lock count (locked: not a candidate) */
    int64_t *last_access;    /* per storage: clock at its last access (staleness) */
    int32_t *n_remat;        /* per storage: times rematerialised */
    int32_t *death_event;    /* per storage: index in events of its EV_DEATH, or -1 */
} eng_state;

/* The candidate pool: the evictable storages (unlocked and resident), in
   the order they became evictable (a doubly linked list over storages). */
typedef struct eng_pool {
    uint8_t *in;             /* per storage: in the pool */
    int32_t *prev, *next;    /* per storage: the links (-1: none) */
    int32_t head, tail, n;   /* the ends and the length */
} eng_pool;

/* The eviction heuristic and what its scores are computed from. */
typedef struct eng_score {
    const struct heuristic_def *heur; /* the eviction heuristic (heuristics[]) */
    int64_t *compute_ns;     /* per storage: compute time of the ops that produced it */
    int32_t *compute_op;     /* per storage: the last op counted in compute_ns */
    int64_t *fwd_region_ns, *rev_region_ns; /* per storage: cached compute of its evicted
                                               neighbourhood, consumers' / producers' side */
    uint8_t *fwd_dirty, *rev_dirty; /* per storage: fwd/rev_region_ns is stale */
    int32_t *eq_node;        /* per storage: its union-find node while evicted (h_DTR^eq),
                                else -1 */
    int use_regions, use_eq; /* keep neighbourhood caches / equivalence classes */
    gsl_rng *rng;            /* random picks and sampling strides (seeded from cfg) */
} eng_score;

/* Union-find over the evicted storages' classes (h_DTR^eq). */
typedef struct eng_uf {
    int32_t *parent;         /* per node: parent (a root: itself) */
    int64_t *cost;           /* per root: compute of its evicted class */
    uint32_t *mark;          /* per node: epoch it was last summed in */
    size_t n, cap_parent, cap_cost, cap_mark; /* nodes; capacities */
} eng_uf;

/* Scratch of the walks: materialize's explicit stack and the depth-first
   searches over storages. */
typedef struct eng_walk {
    int32_t *stack;          /* depth-first stack of storages */
    uint32_t *visited, epoch;/* per storage: epoch it was last visited; the current one */
    frame *frames;           /* materialize's stack */
    size_t n_frames, cap_frames;
    uint8_t *arg_missing;    /* per frame argument: missing when its frame started */
    size_t n_arg_missing, cap_arg_missing;
} eng_walk;

/* The run's log, replayed into the plan builder. */
typedef struct eng_log {
    dtr_ev *events;
    size_t n_events, cap_events;
} eng_log;

/* The placement mirroring the builder's. */
typedef struct eng_alloc {
    mem_model *mem;          /* the address allocator */
    plan_place *place;       /* per storage: its placement while resident */
} eng_alloc;

/* The clock and the rematerialisation budget. */
typedef struct eng_time {
    int64_t clock;           /* simrd's clock: 1 + compute + rematerialisation (ticks) */
    int64_t remat_ticks, model_ticks, total_ticks; /* rerun, scheduled run, all ops' time */
    int32_t cur_op;          /* the scheduled op being run, -1 before the first */
    double remat_limit;      /* give up past this much rematerialisation (ticks); < 0 none */
} eng_time;

typedef struct eng {
    /* the run's context */
    const graph_profile *g;  /* the profile (finished; borrowed) */
    const dtr_config *cfg;   /* borrowed */
    dtr_stats *st;           /* filled as the run goes (borrowed) */
    sw_err *err;             /* borrowed */
    int32_t nt, no;          /* tensors, ops */
    swu u;                   /* residency, shared with the swapping planners (no builder:
                                the plan is recorded from events): resident storages
                                (u.res), their bytes (u.used) and peak, the limit (bytes for
                                tensors: the budget less the largest workspace), deaths
                                (u.death: NEVER if none; u.dth_off/u.dth per position) */
    eng_graph graph;         /* the profile's tables */
    eng_state state;         /* the tensor table */
    eng_pool pool;           /* the eviction candidates */
    eng_score score;         /* the heuristic and its caches */
    eng_uf uf;               /* equivalence classes of evicted storages */
    eng_walk walk;           /* the walks' scratch */
    eng_log log;             /* the run's events */
    eng_alloc alloc;         /* the placement */
    eng_time time;           /* the clock */
} eng;

static inline int64_t sbytes(const eng *e, int32_t s) { return e->g->tensors[s].bytes; }
static inline int32_t stor(const eng *e, int32_t t) { return e->g->tensors[t].storage; }

/* ---------------- candidate pool (ordered: order of becoming evictable) ---------------- */

static inline void pool_append(eng *e, int32_t s)
{
    if (e->pool.in[s])
        return;
    e->pool.in[s] = 1;
    e->pool.prev[s] = e->pool.tail;
    e->pool.next[s] = -1;
    if (e->pool.tail >= 0)
        e->pool.next[e->pool.tail] = s;
    else
        e->pool.head = s;
    e->pool.tail = s;
    e->pool.n++;
}

static inline void pool_remove(eng *e, int32_t s)
{
    if (!e->pool.in[s])
        return;
    e->pool.in[s] = 0;
    if (e->pool.prev[s] >= 0)
        e->pool.next[e->pool.prev[s]] = e->pool.next[s];
    else
        e->pool.head = e->pool.next[s];
    if (e->pool.next[s] >= 0)
        e->pool.prev[e->pool.next[s]] = e->pool.prev[s];
    else
        e->pool.tail = e->pool.prev[s];
    e->pool.n--;
}

static inline void make_evictable(eng *e, int32_t s)
{
    if (e->graph.evictable[s] && !e->state.no_evict[s] && !e->state.pinned[s] && e->u.res[s] &&
        !e->state.locks[s])
        pool_append(e, s);
}

static inline void lock(eng *e, int32_t s)
{
    if (e->state.locks[s]++ == 0)
        pool_remove(e, s);
}

static inline void unlock(eng *e, int32_t s)
{
    if (--e->state.locks[s] == 0)
        make_evictable(e, s);
}

/* ---------------- events ---------------- */

static inline int log_ev(eng *e, int kind, int32_t x)
{
    if (SW_GROW(e->log.events, e->log.cap_events, e->log.n_events + 1))
        return SW_ENOMEM;
    e->log.events[e->log.n_events].kind = (uint8_t)kind;
    e->log.events[e->log.n_events].x = x;
    e->log.n_events++;
    return 0;
}

/* A fresh epoch for the walks' visited marks. */
static inline void next_epoch(eng *e)
{
    if (++e->walk.epoch == 0) {
        memset(e->walk.visited, 0, (size_t)e->nt * sizeof *e->walk.visited);
        e->walk.epoch = 1;
    }
}

/* For every evicted neighbour of s (producers' inputs and consumers'
   outputs of its tensors), call fn. */
#define FOR_EVICTED_NEIGHBOURS(e, s, y, ...)                                                       \
    for (int dir_ = 0; dir_ < 2; dir_++) {                                                         \
        const int32_t *off_ = dir_ ? (e)->graph.rev_off : (e)->graph.fwd_off;                      \
        const int32_t *to_ = dir_ ? (e)->graph.rev_to : (e)->graph.fwd_to;                         \
        const int32_t *via_ = dir_ ? (e)->graph.rev_op : (e)->graph.fwd_op;                        \
        for (int32_t k_ = off_[s]; k_ < off_[(s) + 1]; k_++) {                                     \
            int32_t y = to_[k_];                                                                   \
            if (!(e)->state.ran[via_[k_]] || (e)->u.res[y] || y == (s) ||                          \
                (e)->score.eq_node[y] < 0)                                                         \
                continue;                                                                          \
            __VA_ARGS__                                                                            \
        }                                                                                          \
    }

/* A heuristic's score of evicting storage s (the lowest score is evicted):
   sz its bytes, stale the ticks since its last access, den sz x stale
   (stale clamped at 0). */
typedef double score_fn(eng *e, int32_t s, int64_t sz, int64_t stale, unsigned __int128 den);

/* An eviction heuristic (dtr_heuristics.c's table, indexed by dtr_heuristic). */
typedef struct heuristic_def {
    const char *name;   /* the dtr planner's `heuristic` value; NULL: not selectable by name */
    score_fn *score;    /* the candidate's score */
    uint8_t regions;    /* keeps the evicted neighbourhoods' compute (fwd/rev_region_ns) */
    uint8_t eq;         /* keeps union-find equivalence classes of evicted storages */
    uint8_t random;     /* picks a uniformly random candidate instead of scoring */
} heuristic_def;

/* dtr_heuristics.c: the neighbourhood caches, the equivalence classes, the
   heuristics' table, and the choice of a victim */
void eng_mark_dirty(eng *e, int32_t x);
int32_t eng_uf_new(eng *e, int64_t v);
int32_t eng_uf_find(eng *e, int32_t x);
const heuristic_def *eng_heuristic_of(int h);
int32_t eng_choose_opening(eng *e, int64_t need);
int32_t eng_choose(eng *e);

/* dtr_setup.c: the tables and the initial state; freeing them */
int eng_setup(eng *e);
void eng_free(eng *e);

#endif
