/* dtr_engine.c: DTR's runtime replayed over a profile, recording a plan.

   The runtime follows the DTR authors' simulator (simrd, RuntimeV2Eager-
   Optimized; notes in docs/planners.md):
   * ops run in the profile's order; before an op runs, its inputs are
     stamped (staleness), the resident ones locked, the missing ones
     rematerialised depth-first in argument order (re-running their
     producers; an op brings back all its missing outputs at once), then
     storages are evicted one at a time by the heuristic until the op's
     outputs fit the byte budget;
   * when the framework drops its last reference to a storage (its death:
     after its last use, or held_until) it is freed but stays in the graph
     ("fake delete"): it counts in evicted neighbourhoods and can be
     rematerialised if a rematerialisation needs it, after which it stays
     until evicted;
   * constants (persistent tensors, `input` tensors) are never evicted or
     freed; the `end_of_log`-style sink op (no outputs, no mutations) pins its
     inputs one by one, rematerialising the missing ones;
   * the run gives up when rematerialisation exceeds (cap - 1) x compute.
   Placement: the plan's memory is an address allocator of the budget. The
   runtime mirrors the plan builder's allocations exactly; when the bytes fit
   but no free block is large enough, it evicts more (counted as
   fragmentation evictions). Events are replayed into the plan builder:
   evictions are drops, rematerialisations reruns; a death is an implicit
   free (the builder frees after the last use or held_until) unless the
   storage is placed again later, then an explicit drop.
   Residency is the runtime the swapping planners share (swap_util.h, run
   without a builder): the schedule and deaths (swu_init, from
   graph_lifetimes), the resident storages, their bytes (simrd's memory)
   and peak, the budget, which storages come from the host (swu_begin,
   swu_on_host), and every change of residency (swu_swap_in, swu_create,
   swu_drop for an eviction, swu_release for a death). The rest stays here
   because DTR's model differs from the swapping planners' in ways a shared
   version would get wrong:
   * eviction order: simrd scores a candidate pool kept in the order the
     storages became evictable (unlocked and resident), the last of equal
     minima winning, and random picks index into it; swu's LRU list is in
     order of access and holds locked and constant storages too, so neither
     list can stand for the other without changing which storage is evicted;
   * locks are counted: nested rematerialisations lock one storage once per
     frame that takes it as an argument, and it becomes a candidate again
     only when the last lets go; swu_lock_op's lock is a flag per op;
   * recording: the decisions are logged and replayed into the builder
     afterwards, not recorded as they are made (swu with a builder): a death
     turns into an explicit drop when the dead storage is rematerialised
     later (the log is patched), budget_on=bytes replays the same decisions
     into arenas of several sizes, and a run that gives up records nothing;
   * byte counting: the budget is checked against every byte an op creates,
     resident or not, and a re-run counts its outputs that are still
     resident twice for a moment (swu_note_transient), as simrd does;
   * per-tensor availability (views: `defined`), constants, the evicted
     neighbourhoods and the placement mirror have no counterpart in swu. */
#include "../dtr_engine.h"
#include "../../common/limits.h"

#include <gsl/gsl_rng.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../swap_util.h"

#define NEVER SWU_NEVER

enum { EV_RUN, EV_RERUN, EV_DROP, EV_DEATH, EV_DEATH_DROP, EV_SWAPIN };

typedef struct dtr_ev {
    uint8_t kind; /* EV_* */
    int32_t x;    /* the op (EV_RUN, EV_RERUN) or the storage (the others) */
} dtr_ev;

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

static int64_t sbytes(const eng *e, int32_t s) { return e->g->tensors[s].bytes; }
static int32_t stor(const eng *e, int32_t t) { return e->g->tensors[t].storage; }

/* ---------------- candidate pool (ordered: order of becoming evictable) ---------------- */

static void pool_append(eng *e, int32_t s)
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

static void pool_remove(eng *e, int32_t s)
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

static void make_evictable(eng *e, int32_t s)
{
    if (e->graph.evictable[s] && !e->state.no_evict[s] && !e->state.pinned[s] && e->u.res[s] &&
        !e->state.locks[s])
        pool_append(e, s);
}

static void lock(eng *e, int32_t s)
{
    if (e->state.locks[s]++ == 0)
        pool_remove(e, s);
}

static void unlock(eng *e, int32_t s)
{
    if (--e->state.locks[s] == 0)
        make_evictable(e, s);
}

/* ---------------- events ---------------- */

static int log_ev(eng *e, int kind, int32_t x)
{
    if (SW_GROW(e->log.events, e->log.cap_events, e->log.n_events + 1))
        return SW_ENOMEM;
    e->log.events[e->log.n_events].kind = (uint8_t)kind;
    e->log.events[e->log.n_events].x = x;
    e->log.n_events++;
    return 0;
}

/* ---------------- evicted neighbourhoods ---------------- */

static void next_epoch(eng *e)
{
    if (++e->walk.epoch == 0) {
        memset(e->walk.visited, 0, (size_t)e->nt * sizeof *e->walk.visited);
        e->walk.epoch = 1;
    }
}

/* Sum of compute over the storages reachable from s through non-material
   storages (forward: consumers; reverse: producers' inputs). */
static int64_t region(eng *e, int32_t s, int rev)
{
    const int32_t *off = rev ? e->graph.rev_off : e->graph.fwd_off,
                  *to = rev ? e->graph.rev_to : e->graph.fwd_to,
                  *via = rev ? e->graph.rev_op : e->graph.fwd_op;
    next_epoch(e);
    int64_t sum = 0;
    int32_t n = 0;
    e->walk.stack[n++] = s;
    e->walk.visited[s] = e->walk.epoch;
    while (n) {
        int32_t x = e->walk.stack[--n];
        for (int32_t k = off[x]; k < off[x + 1]; k++) {
            int32_t y = to[k];
            if (!e->state.ran[via[k]] || e->u.res[y] || e->walk.visited[y] == e->walk.epoch)
                continue;
            e->walk.visited[y] = e->walk.epoch;
            sum += e->score.compute_ns[y];
            e->walk.stack[n++] = y;
        }
    }
    return sum;
}

/* x changed residency: the cached neighbourhoods that may include it are
   those of the resident storages bordering its evicted component. */
static void mark_dirty(eng *e, int32_t x)
{
    e->score.fwd_dirty[x] = e->score.rev_dirty[x] = 1;
    for (int dir = 0; dir < 2; dir++) {
        /* walking producers (rev) finds storages whose forward region holds x */
        const int32_t *off = dir ? e->graph.fwd_off : e->graph.rev_off,
                      *to = dir ? e->graph.fwd_to : e->graph.rev_to,
                      *via = dir ? e->graph.fwd_op : e->graph.rev_op;
        uint8_t *dirty = dir ? e->score.rev_dirty : e->score.fwd_dirty;
        next_epoch(e);
        int32_t n = 0;
        e->walk.stack[n++] = x;
        e->walk.visited[x] = e->walk.epoch;
        while (n) {
            int32_t a = e->walk.stack[--n];
            for (int32_t k = off[a]; k < off[a + 1]; k++) {
                int32_t y = to[k];
                if (!e->state.ran[via[k]] || e->walk.visited[y] == e->walk.epoch)
                    continue;
                e->walk.visited[y] = e->walk.epoch;
                if (e->u.res[y])
                    dirty[y] = 1;
                else
                    e->walk.stack[n++] = y;
            }
        }
    }
}

/* ---------------- equivalence classes (union-find) ---------------- */

static int32_t uf_new(eng *e, int64_t v)
{
    if (SW_GROW(e->uf.parent, e->uf.cap_parent, e->uf.n + 1) ||
        SW_GROW(e->uf.cost, e->uf.cap_cost, e->uf.n + 1) ||
        SW_GROW(e->uf.mark, e->uf.cap_mark, e->uf.n + 1))
        return -1;
    e->uf.parent[e->uf.n] = (int32_t)e->uf.n;
    e->uf.cost[e->uf.n] = v;
    e->uf.mark[e->uf.n] = 0;
    return (int32_t)e->uf.n++;
}

static int32_t uf_find(eng *e, int32_t x)
{
    int32_t r = x;
    while (e->uf.parent[r] != r)
        r = e->uf.parent[r];
    while (e->uf.parent[x] != r) {
        int32_t n = e->uf.parent[x];
        e->uf.parent[x] = r;
        x = n;
    }
    return r;
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

/* ---------------- heuristics ---------------- */

static double quot(int64_t num, unsigned __int128 den)
{
    if (den == 0)
        return INFINITY;
    return (double)((long double)num / (long double)den);
}

/* A heuristic's score of evicting storage s (the lowest score is evicted):
   sz its bytes, stale the ticks since its last access, den sz x stale
   (stale clamped at 0). */
typedef double score_fn(eng *e, int32_t s, int64_t sz, int64_t stale, unsigned __int128 den);

/* h_DTR: (own compute + both evicted neighbourhoods) / (size x staleness) */
static double score_dtr(eng *e, int32_t s, int64_t sz, int64_t stale, unsigned __int128 den)
{
    (void)sz;
    (void)stale;
    if (e->score.fwd_dirty[s]) {
        e->score.fwd_region_ns[s] = region(e, s, 0);
        e->score.fwd_dirty[s] = 0;
    }
    if (e->score.rev_dirty[s]) {
        e->score.rev_region_ns[s] = region(e, s, 1);
        e->score.rev_dirty[s] = 0;
    }
    return quot(e->score.compute_ns[s] + e->score.fwd_region_ns[s] + e->score.rev_region_ns[s],
                den);
}

/* h_DTR^eq: (own compute + the evicted equivalence classes beside it) /
   (size x staleness) */
static double score_eq(eng *e, int32_t s, int64_t sz, int64_t stale, unsigned __int128 den)
{
    (void)sz;
    (void)stale;
    int64_t sum = e->score.compute_ns[s];
    if (++e->walk.epoch == 0)
        e->walk.epoch = 1;
    uint32_t mk = e->walk.epoch;
    FOR_EVICTED_NEIGHBOURS(e, s, y, {
        int32_t r = uf_find(e, e->score.eq_node[y]);
        if (e->uf.mark[r] != mk) {
            e->uf.mark[r] = mk;
            sum += e->uf.cost[r];
        }
    })
    return quot(sum, den);
}

/* h_DTR^local: own compute / (size x staleness) */
static double score_local(eng *e, int32_t s, int64_t sz, int64_t stale, unsigned __int128 den)
{
    (void)sz;
    (void)stale;
    return quot(e->score.compute_ns[s], den);
}

/* least recently used */
static double score_lru(eng *e, int32_t s, int64_t sz, int64_t stale, unsigned __int128 den)
{
    (void)sz;
    (void)stale;
    (void)den;
    return (double)e->state.last_access[s];
}

/* largest first */
static double score_size(eng *e, int32_t s, int64_t sz, int64_t stale, unsigned __int128 den)
{
    (void)e;
    (void)s;
    (void)stale;
    (void)den;
    return sz > 0 ? 1.0 / (double)sz : INFINITY;
}

/* MSPS: (own compute + evicted ancestors) / size */
static double score_msps(eng *e, int32_t s, int64_t sz, int64_t stale, unsigned __int128 den)
{
    (void)stale;
    (void)den;
    if (e->score.rev_dirty[s]) {
        e->score.rev_region_ns[s] = region(e, s, 1);
        e->score.rev_dirty[s] = 0;
    }
    return quot(e->score.compute_ns[s] + e->score.rev_region_ns[s],
                (unsigned __int128)(uint64_t)sz);
}

/* MegEngine: compute^a / (staleness^b x (size + free blocks beside it)^c)
   x d^(times recomputed) */
static double score_megengine(eng *e, int32_t s, int64_t sz, int64_t stale,
                              unsigned __int128 den)
{
    (void)den;
    const dtr_config *c = e->cfg;
    double adj = (double)mem_adjacent_free(e->alloc.mem, &e->alloc.place[s], sz);
    double d = pow((double)stale, c->exp_staleness) * pow((double)sz + adj, c->exp_memory);
    if (!(d > 0))
        return INFINITY;
    return pow((double)e->score.compute_ns[s], c->exp_compute) / d *
           pow(c->recompute_base, e->state.n_remat[s]);
}

/* no score: every candidate ties (random picks without scoring) */
static double score_none(eng *e, int32_t s, int64_t sz, int64_t stale, unsigned __int128 den)
{
    (void)e;
    (void)s;
    (void)sz;
    (void)stale;
    (void)den;
    return INFINITY;
}

typedef struct heuristic_def {
    const char *name;   /* the dtr planner's `heuristic` value; NULL: not selectable by name */
    score_fn *score;    /* the candidate's score */
    uint8_t regions;    /* keeps the evicted neighbourhoods' compute (fwd/rev_region_ns) */
    uint8_t eq;         /* keeps union-find equivalence classes of evicted storages */
    uint8_t random;     /* picks a uniformly random candidate instead of scoring */
} heuristic_def;

/* Indexed by dtr_heuristic. */
static const heuristic_def heuristics[] = {
    [DH_DTR] = {"dtr", score_dtr, 1, 0, 0},
    [DH_EQ] = {"dtr-eq", score_eq, 0, 1, 0},
    [DH_LOCAL] = {"dtr-local", score_local, 0, 0, 0},
    [DH_LRU] = {"lru", score_lru, 0, 0, 0},
    [DH_SIZE] = {"size", score_size, 0, 0, 0},
    [DH_MSPS] = {"msps", score_msps, 1, 0, 0},
    [DH_RANDOM] = {"random", score_none, 0, 0, 1},
    [DH_MEGENGINE] = {NULL, score_megengine, 0, 0, 0}, /* the dtr-megengine planner's */
};
_Static_assert(SW_ARRAY_LEN(heuristics) == DH_MEGENGINE + 1, "one entry per dtr_heuristic");

/* The entry of heuristic h; an unknown one scores every candidate INFINITY. */
static const heuristic_def *heuristic_of(int h)
{
    static const heuristic_def unknown = {NULL, score_none, 0, 0, 0};
    return h >= 0 && h < (int)SW_ARRAY_LEN(heuristics) ? &heuristics[h] : &unknown;
}

int dtr_heuristic_parse(const char *s)
{
    for (int i = 0; i < (int)SW_ARRAY_LEN(heuristics); i++)
        if (s && heuristics[i].name && !strcmp(s, heuristics[i].name))
            return i;
    return -1;
}

/* Score candidate s by the run's heuristic (counted in the stats). */
static double cost(eng *e, int32_t s)
{
    e->st->evaluations++;
    int64_t stale = e->time.clock - e->state.last_access[s], sz = sbytes(e, s);
    unsigned __int128 den = (unsigned __int128)(uint64_t)sz * (uint64_t)(stale > 0 ? stale : 0);
    return e->score.heur->score(e, s, sz, stale, den);
}

/* Fragmentation: the cheapest candidate whose removal (coalesced with the
   free blocks beside it) opens a block of need bytes; -1 if none. */
static int32_t choose_opening(eng *e, int64_t need)
{
    int32_t best = -1;
    double best_cost = INFINITY;
    int64_t a = e->cfg->align > 1 ? e->cfg->align : 1;
    int64_t want = ((need > 0 ? need : 1) + a - 1) / a * a;
    for (int32_t s = e->pool.head; s >= 0; s = e->pool.next[s]) {
        int64_t sz = sbytes(e, s), own = ((sz > 0 ? sz : 1) + a - 1) / a * a;
        if (own + mem_adjacent_free(e->alloc.mem, &e->alloc.place[s], sz) < want)
            continue;
        double c = e->score.heur->random ? 0 : cost(e, s);
        if (c <= best_cost) {
            best_cost = c;
            best = s;
        }
    }
    return best;
}

/* The storage to evict, or -1 if the pool is empty. */
static int32_t choose(eng *e)
{
    if (e->pool.n == 0)
        return -1;
    if (e->score.heur->random) {
        int32_t k = (int32_t)gsl_rng_uniform_int(e->score.rng, (unsigned long)e->pool.n);
        int32_t s = e->pool.head;
        while (k--)
            s = e->pool.next[s];
        return s;
    }
    double min_size = 0;
    if (e->cfg->small_filter > 0) {
        double sum = 0;
        for (int32_t s = e->pool.head; s >= 0; s = e->pool.next[s])
            sum += (double)sbytes(e, s);
        min_size = e->cfg->small_filter * sum / e->pool.n;
    }
    int32_t stride = 1;
    if (e->cfg->sample) {
        stride = (int32_t)sqrt((double)e->pool.n);
        if (stride < 1)
            stride = 1;
    }
    int32_t best = -1;
    double best_cost = INFINITY;
    for (int pass = 0; pass < 2 && best < 0; pass++) {
        int32_t skip = 0;
        for (int32_t s = e->pool.head; s >= 0; s = e->pool.next[s]) {
            if (skip > 0) {
                skip--;
                continue;
            }
            if (stride > 1)
                skip = (int32_t)gsl_rng_uniform_int(e->score.rng, (unsigned long)stride);
            if (pass == 0 && (double)sbytes(e, s) < min_size)
                continue;
            double c = cost(e, s);
            if (c <= best_cost) { /* simrd: the last of equal minima wins */
                best_cost = c;
                best = s;
            }
            if (c == 0)
                break;
        }
        min_size = 0; /* nothing passed the filter: consider everything */
    }
    return best;
}

/* ---------------- residency changes ---------------- */

static int evict(eng *e, int32_t s, int kind)
{
    if (kind == EV_DEATH)
        swu_release(&e->u, s);
    else
        swu_drop(&e->u, s);
    pool_remove(e, s);
    for (int32_t k = e->graph.on_storage_off[s]; k < e->graph.on_storage_off[s + 1]; k++)
        e->state.defined[e->graph.on_storage[k]] = 0;
    if (!e->cfg->bytes_only)
        mem_release(e->alloc.mem, &e->alloc.place[s], sbytes(e, s));
    if (kind == EV_DEATH)
        e->state.death_event[s] = (int32_t)e->log.n_events;
    if (log_ev(e, kind, s))
        return SW_ENOMEM;
    if (e->score.use_regions)
        mark_dirty(e, s);
    if (e->score.use_eq) {
        int32_t n = uf_new(e, e->score.compute_ns[s]);
        if (n < 0)
            return SW_ENOMEM;
        e->score.eq_node[s] = n;
        FOR_EVICTED_NEIGHBOURS(e, s, y, {
            int32_t l = uf_find(e, e->score.eq_node[y]), r = uf_find(e, n);
            if (l != r) {
                e->uf.parent[l] = r;
                e->uf.cost[r] += e->uf.cost[l];
            }
        })
    }
    return 0;
}

static const char *opname(const eng *e, int32_t o) { return e->g->ops[o].name; }

static int oom(eng *e, int64_t need, int frag)
{
    char h1[32], h2[32], h3[32];
    int32_t o = e->time.cur_op;
    if (frag) {
        /* need: the bytes of the tensors that must be placed together */
        mem_stats ms;
        mem_get_stats(e->alloc.mem, &ms);
        return sw_fail(e->err, SW_ENOFIT, "does not fit: at op %d '%s' nothing is left to evict "
                       "and the free blocks (largest %s, %s free in all) cannot place the %s of "
                       "tensors it needs at once (the allocator fragments memory)", o,
                       o >= 0 ? opname(e, o) : "?", sw_fmt_bytes(ms.largest_free, h2, sizeof h2),
                       sw_fmt_bytes(ms.free_bytes, h3, sizeof h3),
                       sw_fmt_bytes(need, h1, sizeof h1));
    }
    return sw_fail(e->err, SW_ENOFIT, "does not fit: at op %d '%s' nothing is left to evict: %s "
                   "resident and locked, %s more needed, budget %s", o,
                   o >= 0 ? opname(e, o) : "?", sw_fmt_bytes(e->u.used, h1, sizeof h1),
                   sw_fmt_bytes(need, h2, sizeof h2), sw_fmt_bytes(e->u.limit, h3, sizeof h3));
}

/* Evict until need more bytes fit the budget. */
static int free_bytes(eng *e, int64_t need)
{
    while (e->u.used + need > e->u.limit) {
        int32_t v = choose(e);
        if (v < 0)
            return oom(e, need, 0);
        e->st->evictions++;
        int rc = evict(e, v, EV_DROP);
        if (rc)
            return rc;
    }
    return 0;
}

static void note_alloc(eng *e)
{
    mem_stats ms;
    mem_get_stats(e->alloc.mem, &ms);
    if (ms.in_use > e->st->peak_in_use) {
        e->st->peak_in_use = ms.in_use;
        e->st->reserved_at_peak = ms.high_water;
    }
    e->st->high_water = ms.high_water;
}

/* Place the storages in list[0..n) that are not resident, as the builder
   will; evict more while a placement fails. */
static int place_all(eng *e, const int32_t *list, int32_t n)
{
    if (e->cfg->bytes_only)
        return 0;
    for (;;) {
        int32_t k, fail = -1;
        for (k = 0; k < n; k++) {
            int32_t s = list[k];
            if (e->u.res[s])
                continue;
            if (mem_alloc(e->alloc.mem, s, sbytes(e, s), &e->alloc.place[s])) {
                fail = s;
                break;
            }
        }
        if (fail < 0) {
            note_alloc(e);
            return 0;
        }
        for (int32_t j = 0; j < k; j++)
            if (!e->u.res[list[j]])
                mem_release(e->alloc.mem, &e->alloc.place[list[j]], sbytes(e, list[j]));
        int32_t v = e->cfg->frag_fit ? choose_opening(e, sbytes(e, fail)) : -1;
        if (v < 0)
            v = choose(e);
        if (v < 0) {
            int64_t all = 0;
            for (int32_t j = 0; j < n; j++)
                if (!e->u.res[list[j]])
                    all += sbytes(e, list[j]);
            return oom(e, all, 1);
        }
        e->st->evictions++;
        e->st->frag_evictions++;
        int rc = evict(e, v, EV_DROP);
        if (rc)
            return rc;
    }
}

/* Run (or re-run) op o: outputs appear, missing siblings come back for free,
   resident ones are double-counted transiently. */
static int compute(eng *e, int32_t o, int remat, int32_t target)
{
    const graph_op *op = &e->g->ops[o];
    int64_t dup = 0;
    for (int32_t k = 0; k < op->n_out; k++) {
        int32_t u = op->out[k];
        if (!e->graph.is_view[u] && e->state.defined[u])
            dup += sbytes(e, stor(e, u));
    }
    /* storages that become resident, in simrd's order: siblings, then the target */
    int32_t fresh[64], nf = 0, *fr = fresh, *heap = NULL;
    if (op->n_out > 64) {
        heap = sw_malloc((size_t)op->n_out * sizeof *heap);
        if (!heap)
            return SW_ENOMEM;
        fr = heap;
    }
    for (int pass = 0; pass < 2; pass++)
        for (int32_t k = 0; k < op->n_out; k++) {
            int32_t u = op->out[k];
            if ((pass == 0) == (u == target) || e->graph.is_view[u] || e->u.res[stor(e, u)])
                continue;
            fr[nf++] = stor(e, u);
        }
    /* bounded inputs; saturate, never wrap */
    e->time.clock = sw_add_sat(e->time.clock, e->graph.ticks[o]);
    /* the fresh storages, and for a moment the new copies of resident ones */
    for (int32_t k = 0; k < nf; k++)
        swu_create(&e->u, fr[k]);
    swu_note_transient(&e->u, dup);
    for (int32_t k = 0; k < op->n_out; k++)
        e->state.defined[op->out[k]] = 1;
    if (remat) {
        e->time.remat_ticks += e->graph.ticks[o];
        e->st->remats++;
        for (int32_t k = 0; k < nf; k++) {
            int32_t s = fr[k];
            e->st->dead_remats += e->state.dead[s];
            e->state.n_remat[s]++;
            if (e->state.death_event[s] >= 0) { /* placed again: an explicit drop */
                e->log.events[e->state.death_event[s]].kind = EV_DEATH_DROP;
                e->state.death_event[s] = -1;
            }
        }
    } else {
        e->time.model_ticks += e->graph.ticks[o];
        e->state.ran[o] = 1;
        for (int32_t k = 0; k < op->n_out; k++) {
            int32_t s = stor(e, op->out[k]);
            if (e->score.compute_op[s] != o) {
                e->score.compute_op[s] = o;
                e->score.compute_ns[s] += e->graph.ticks[o];
            }
        }
    }
    int rc = log_ev(e, remat ? EV_RERUN : EV_RUN, o);
    for (int32_t k = 0; k < nf && !rc; k++) {
        int32_t s = fr[k];
        make_evictable(e, s);
        if (e->score.use_regions)
            mark_dirty(e, s);
        if (e->score.use_eq && e->score.eq_node[s] >= 0) {
            e->uf.cost[uf_find(e, e->score.eq_node[s])] -= e->score.compute_ns[s];
            e->score.eq_node[s] = -1;
        }
    }
    sw_free(heap);
    return rc;
}

static int parents_n(const eng *e, int32_t o)
{
    return e->graph.args_off[o + 1] - e->graph.args_off[o];
}

/* simrd's _materialize, with an explicit stack: op o0 (re)computed, after its
   missing inputs are rematerialised depth-first. */
static int materialize(eng *e, int32_t o0, int remat0, int32_t target0)
{
    size_t base = e->walk.n_frames;
    if (SW_GROW(e->walk.frames, e->walk.cap_frames, e->walk.n_frames + 1))
        return SW_ENOMEM;
    e->walk.frames[e->walk.n_frames++] = (frame){o0, target0, 0, (uint8_t)remat0, 0, 0};
    while (e->walk.n_frames > base) {
        frame *f = &e->walk.frames[e->walk.n_frames - 1];
        int32_t o = f->op, np = parents_n(e, o);
        const int32_t *P = e->graph.args + e->graph.args_off[o];
        if (f->stage == 0) {
            for (int32_t k = 0; k < np; k++)
                e->state.last_access[stor(e, P[k])] = e->time.clock;
            if (SW_GROW(e->walk.arg_missing, e->walk.cap_arg_missing,
                        e->walk.n_arg_missing + (size_t)np + 1))
                return SW_ENOMEM;
            f = &e->walk.frames[e->walk.n_frames - 1];
            f->miss_off = e->walk.n_arg_missing;
            e->walk.n_arg_missing += (size_t)np;
            for (int32_t k = 0; k < np; k++) {
                e->walk.arg_missing[f->miss_off + (size_t)k] = !e->state.defined[P[k]];
                if (e->state.defined[P[k]])
                    lock(e, stor(e, P[k]));
            }
            f->stage = 1;
            f->arg = 0;
        }
        if (f->stage == 2) { /* a missing input was just rematerialised */
            lock(e, stor(e, P[f->arg]));
            f->arg++;
            f->stage = 1;
        }
        int pushed = 0;
        while (f->stage == 1 && f->arg < np) {
            int32_t p = P[f->arg];
            if (!e->walk.arg_missing[f->miss_off + (size_t)f->arg]) {
                f->arg++;
                continue;
            }
            if (e->state.defined[p]) {
                lock(e, stor(e, p));
                f->arg++;
                continue;
            }
            int32_t q = e->g->tensors[p].producer, s = stor(e, p);
            if (q < 0 || e->state.banished[s])
                return sw_fail(e->err, SW_EINVAL, "dtr: tensor %d '%s' is needed but cannot be "
                               "rematerialised (a bug)", p, e->g->tensors[p].name);
            f->stage = 2;
            if (SW_GROW(e->walk.frames, e->walk.cap_frames, e->walk.n_frames + 1))
                return SW_ENOMEM;
            e->walk.frames[e->walk.n_frames++] = (frame){q, p, 0, 1, 0, 0};
            pushed = 1;
            break;
        }
        if (pushed)
            continue;
        /* all inputs resident and locked: make room, place, compute */
        int rc = 0;
        if (e->u.used + e->graph.created_bytes[o] > e->u.limit)
            rc = free_bytes(e, e->graph.created_bytes[o]);
        if (!rc)
            rc = place_all(e, e->graph.created + e->graph.created_off[o],
                           e->graph.created_off[o + 1] - e->graph.created_off[o]);
        f = &e->walk.frames[e->walk.n_frames - 1];
        if (!rc)
            rc = compute(e, o, f->remat, f->target);
        if (rc)
            return rc;
        f = &e->walk.frames[e->walk.n_frames - 1];
        for (int32_t k = 0; k < np; k++)
            unlock(e, stor(e, P[k]));
        e->walk.n_arg_missing = f->miss_off;
        e->walk.n_frames--;
        if (e->time.remat_limit >= 0 && (double)e->time.remat_ticks > e->time.remat_limit)
            return sw_fail(e->err, SW_EEXCEEDED,
                           "exceeded: rematerialisation passed %.3gx the "
                           "compute time (overhead cap %gx) at op %d '%s'",
                           (double)e->time.remat_ticks / (double)e->time.total_ticks,
                           e->cfg->overhead_cap, e->time.cur_op, opname(e, e->time.cur_op));
    }
    return 0;
}

/* MegEngine's real delete: regenerate the evicted storages that still have
   references and depend on s, then s can never come back; protect the
   resident storages whose recomputation would need it. */
static int real_delete(eng *e, int32_t s, int32_t now)
{
    e->st->real_deletes++;
    /* live non-resident dependents, reached through non-resident storages */
    int32_t *list = NULL;
    size_t nl = 0, cap = 0;
    next_epoch(e);
    int32_t n = 0;
    e->walk.stack[n++] = s;
    e->walk.visited[s] = e->walk.epoch;
    while (n) {
        int32_t x = e->walk.stack[--n];
        for (int32_t k = e->graph.fwd_off[x]; k < e->graph.fwd_off[x + 1]; k++) {
            int32_t y = e->graph.fwd_to[k];
            if (!e->state.ran[e->graph.fwd_op[k]] || e->walk.visited[y] == e->walk.epoch ||
                e->u.res[y])
                continue;
            e->walk.visited[y] = e->walk.epoch;
            e->walk.stack[n++] = y;
            if (e->u.death[y] > now && !e->state.banished[y]) {
                if (SW_GROW(list, cap, nl + 1)) {
                    sw_free(list);
                    return SW_ENOMEM;
                }
                list[nl++] = y;
            }
        }
    }
    for (size_t i = 0; i < nl; i++) {
        int32_t y = list[i];
        if (e->u.res[y])
            continue;
        e->st->regenerations++;
        int rc = materialize(e, e->g->tensors[y].producer, 1, y);
        if (rc) {
            sw_free(list);
            return rc;
        }
    }
    sw_free(list);
    if (e->u.res[s]) {
        int rc = evict(e, s, EV_DEATH);
        if (rc)
            return rc;
    }
    e->state.banished[s] = 1;
    next_epoch(e);
    n = 0;
    e->walk.stack[n++] = s;
    e->walk.visited[s] = e->walk.epoch;
    while (n) {
        int32_t x = e->walk.stack[--n];
        for (int32_t k = e->graph.fwd_off[x]; k < e->graph.fwd_off[x + 1]; k++) {
            int32_t y = e->graph.fwd_to[k];
            if (!e->state.ran[e->graph.fwd_op[k]] || e->walk.visited[y] == e->walk.epoch)
                continue;
            e->walk.visited[y] = e->walk.epoch;
            if (!e->u.res[y]) {
                e->walk.stack[n++] = y;
            } else if (e->u.death[y] > now) {
                e->state.no_evict[y] = 1;
                pool_remove(e, y);
            }
        }
    }
    return 0;
}

/* ---------------- setup ---------------- */

#define ALLOC(p, n) ((p) = sw_calloc((size_t)(n) + 1, sizeof *(p)))

/* The fixed-size arrays, zeroed, one spare slot each. */
static int alloc_arrays(eng *e)
{
    int32_t nt = e->nt, no = e->no;
    if (!ALLOC(e->graph.ticks, no) || !ALLOC(e->graph.args_off, no + 1) ||
        !ALLOC(e->graph.created_off, no + 1) || !ALLOC(e->graph.created_bytes, no) ||
        !ALLOC(e->graph.on_storage_off, nt + 1) || !ALLOC(e->graph.on_storage, nt) ||
        !ALLOC(e->graph.fwd_off, nt + 1) || !ALLOC(e->graph.rev_off, nt + 1) ||
        !ALLOC(e->graph.constant, nt) || !ALLOC(e->graph.evictable, nt) ||
        !ALLOC(e->graph.is_view, nt) || !ALLOC(e->state.defined, nt) ||
        !ALLOC(e->state.pinned, nt) || !ALLOC(e->state.ran, no) || !ALLOC(e->state.dead, nt) ||
        !ALLOC(e->state.banished, nt) || !ALLOC(e->state.no_evict, nt) ||
        !ALLOC(e->score.fwd_dirty, nt) || !ALLOC(e->score.rev_dirty, nt) ||
        !ALLOC(e->pool.in, nt) || !ALLOC(e->state.locks, nt) || !ALLOC(e->pool.prev, nt) ||
        !ALLOC(e->pool.next, nt) || !ALLOC(e->state.last_access, nt) ||
        !ALLOC(e->score.compute_ns, nt) || !ALLOC(e->score.fwd_region_ns, nt) ||
        !ALLOC(e->score.rev_region_ns, nt) || !ALLOC(e->score.eq_node, nt) ||
        !ALLOC(e->state.n_remat, nt) || !ALLOC(e->state.death_event, nt) ||
        !ALLOC(e->score.compute_op, nt) || !ALLOC(e->walk.stack, nt) ||
        !ALLOC(e->walk.visited, nt) || !ALLOC(e->alloc.place, nt))
        return SW_ENOMEM;
    return 0;
}

/* Per op: its time in ticks (and the total), its arguments (inputs, then
   mutated tensors) and the storages it creates, with their bytes. */
static int build_op_tables(eng *e)
{
    const graph_profile *g = e->g;
    int32_t no = e->no;
    e->time.total_ticks = 0;
    for (int32_t o = 0; o < no; o++) {
        const graph_op *op = &g->ops[o];
        double ns = op->time_s * 1e9;
        e->graph.ticks[o] = ns > 0 ? (int64_t)llround(ns) : 0;
        e->time.total_ticks += e->graph.ticks[o];
        e->graph.args_off[o] = op->n_in + op->n_mut;
        for (int32_t k = g->acc_off[o]; k < g->acc_off[o + 1]; k++)
            if (g->acc_flag[k] & GA_CREATE) {
                e->graph.created_off[o]++;
                e->graph.created_bytes[o] += sbytes(e, g->acc[k]);
            }
    }
    if (graph_counts_to_offsets(e->graph.args_off, no) ||
        graph_counts_to_offsets(e->graph.created_off, no))
        return SW_ENOMEM;
    if (!ALLOC(e->graph.args, e->graph.args_off[no]) ||
        !ALLOC(e->graph.created, e->graph.created_off[no]))
        return SW_ENOMEM;
    for (int32_t o = 0; o < no; o++) {
        const graph_op *op = &g->ops[o];
        int32_t *P = e->graph.args + e->graph.args_off[o],
                *C = e->graph.created + e->graph.created_off[o];
        for (int32_t k = 0; k < op->n_in; k++)
            *P++ = op->in[k];
        for (int32_t k = 0; k < op->n_mut; k++)
            *P++ = op->mut[k];
        for (int32_t k = g->acc_off[o]; k < g->acc_off[o + 1]; k++)
            if (g->acc_flag[k] & GA_CREATE)
                *C++ = g->acc[k];
    }
    return 0;
}

/* Per storage, the tensors on it (in id order); per tensor, is_view. */
static int build_storage_tensors(eng *e)
{
    const graph_profile *g = e->g;
    int32_t nt = e->nt;
    for (int32_t t = 0; t < nt; t++) {
        e->graph.on_storage_off[stor(e, t)]++;
        e->graph.is_view[t] = g->tensors[t].view_of >= 0;
    }
    if (graph_counts_to_offsets(e->graph.on_storage_off, nt))
        return SW_ENOMEM;
    int32_t *fill = sw_calloc((size_t)nt + 1, sizeof *fill); /* per storage: tensors placed */
    if (!fill)
        return SW_ENOMEM;
    for (int32_t t = 0; t < nt; t++)
        e->graph.on_storage[e->graph.on_storage_off[stor(e, t)] + fill[stor(e, t)]++] = t;
    sw_free(fill);
    return 0;
}

/* The storage graph: an edge from each argument's storage to each output's
   (not to itself) per op, forward (fwd_*) and reverse (rev_*), in op order. */
static int build_storage_edges(eng *e)
{
    const graph_profile *g = e->g;
    int32_t nt = e->nt, no = e->no;
    int32_t *fwd_fill = NULL, *rev_fill = NULL; /* per storage: edges placed */
    for (int pass = 0; pass < 2; pass++) {
        for (int32_t o = 0; o < no; o++) {
            const graph_op *op = &g->ops[o];
            for (int32_t k = e->graph.args_off[o]; k < e->graph.args_off[o + 1]; k++)
                for (int32_t j = 0; j < op->n_out; j++) {
                    int32_t a = stor(e, e->graph.args[k]), b = stor(e, op->out[j]);
                    if (a == b)
                        continue;
                    if (pass == 0) {
                        e->graph.fwd_off[a]++;
                        e->graph.rev_off[b]++;
                    } else {
                        int32_t x = e->graph.fwd_off[a] + fwd_fill[a]++;
                        e->graph.fwd_to[x] = b;
                        e->graph.fwd_op[x] = o;
                        int32_t y = e->graph.rev_off[b] + rev_fill[b]++;
                        e->graph.rev_to[y] = a;
                        e->graph.rev_op[y] = o;
                    }
                }
        }
        if (pass == 0) {
            if (graph_counts_to_offsets(e->graph.fwd_off, nt) ||
                graph_counts_to_offsets(e->graph.rev_off, nt))
                return SW_ENOMEM;
            fwd_fill = sw_calloc((size_t)nt + 1, sizeof *fwd_fill);
            rev_fill = sw_calloc((size_t)nt + 1, sizeof *rev_fill);
            if (!fwd_fill || !rev_fill || !ALLOC(e->graph.fwd_to, e->graph.fwd_off[nt]) ||
                !ALLOC(e->graph.fwd_op, e->graph.fwd_off[nt]) ||
                !ALLOC(e->graph.rev_to, e->graph.rev_off[nt]) ||
                !ALLOC(e->graph.rev_op, e->graph.rev_off[nt])) {
                sw_free(fwd_fill);
                sw_free(rev_fill);
                return SW_ENOMEM;
            }
        }
    }
    sw_free(fwd_fill);
    sw_free(rev_fill);
    return 0;
}

/* Which storages are constants: never evicted or freed. (Deaths, the
   storages dying after each position and which storages come from the host
   are the residency runtime's: swu_init, swu_begin.) */
static void build_constants(eng *e)
{
    const graph_profile *g = e->g;
    for (int32_t s = 0; s < e->nt; s++) {
        const graph_tensor *x = &g->tensors[s];
        if (x->storage == s)
            e->graph.constant[s] = x->persistent || x->producer < 0 || x->kind == GK_INPUT;
    }
}

/* Which storages can be recomputed whenever they are needed (mutations
   make an input's old version unavailable): R = the last position a
   recomputation can happen; evictable if every use comes before it. */
static int find_evictable(eng *e)
{
    const graph_profile *g = e->g;
    int32_t nt = e->nt, no = e->no;
    /* CSR per storage: the positions that mutate it, ascending */
    int32_t *mut_off = sw_calloc((size_t)nt + 2, sizeof *mut_off), *muts = NULL;
    int32_t *R = sw_malloc(((size_t)nt + 1) * sizeof *R); /* per storage */
    int32_t *fill = sw_calloc((size_t)nt + 1, sizeof *fill); /* per storage: positions placed */
    if (!mut_off || !R || !fill) {
        sw_free(mut_off);
        sw_free(R);
        sw_free(fill);
        return SW_ENOMEM;
    }
    for (int32_t o = 0; o < no; o++)
        for (int32_t k = 0; k < g->ops[o].n_mut; k++)
            mut_off[stor(e, g->ops[o].mut[k])]++;
    graph_counts_to_offsets(mut_off, nt);
    muts = sw_malloc(((size_t)mut_off[nt] + 1) * sizeof *muts);
    if (!muts) {
        sw_free(mut_off);
        sw_free(R);
        sw_free(fill);
        return SW_ENOMEM;
    }
    for (int32_t i = 0; i < no; i++) { /* positions, ascending per storage */
        int32_t o = g->order[i];
        for (int32_t k = 0; k < g->ops[o].n_mut; k++) {
            int32_t s = stor(e, g->ops[o].mut[k]);
            muts[mut_off[s] + fill[s]++] = i;
        }
    }
    for (int32_t s = 0; s < nt; s++)
        R[s] = INT32_MIN;
    for (int32_t i = 0; i < no; i++) {
        int32_t p = g->order[i];
        const graph_op *op = &g->ops[p];
        /* re-running p recreates every missing output: none may be one the
           iteration mutates in place (nor may p mutate anything) */
        int32_t r = op->n_mut ? INT32_MIN : NEVER;
        for (int32_t k = e->graph.created_off[p]; k < e->graph.created_off[p + 1]; k++)
            if (mut_off[e->graph.created[k] + 1] > mut_off[e->graph.created[k]])
                r = INT32_MIN;
        for (int32_t k = e->graph.args_off[p]; k < e->graph.args_off[p + 1] && r != INT32_MIN;
             k++) {
            int32_t q = stor(e, e->graph.args[k]), nm = NEVER;
            for (int32_t j = mut_off[q]; j < mut_off[q + 1]; j++)
                if (muts[j] > i) {
                    nm = muts[j];
                    break;
                }
            int32_t avail = e->graph.constant[q] ? nm : SW_MIN(nm, SW_MAX(e->u.death[q], R[q]));
            r = SW_MIN(r, avail);
        }
        for (int32_t k = e->graph.created_off[p]; k < e->graph.created_off[p + 1]; k++) {
            int32_t s = e->graph.created[k];
            R[s] = e->graph.constant[s] || mut_off[s + 1] > mut_off[s] ? INT32_MIN : r;
            e->graph.evictable[s] = !e->graph.constant[s] && R[s] >= e->u.death[s];
        }
    }
    sw_free(mut_off);
    sw_free(muts);
    sw_free(R);
    sw_free(fill);
    return 0;
}

/* The runtime before the first op: an empty pool, nothing evicted or dead
   yet, the persistent tensors defined. */
static void init_state(eng *e)
{
    const graph_profile *g = e->g;
    e->pool.head = e->pool.tail = -1;
    for (int32_t s = 0; s < e->nt; s++) {
        e->score.eq_node[s] = -1;
        e->state.death_event[s] = -1;
        e->score.compute_op[s] = -1;
        e->state.last_access[s] = 0;
    }
    for (int32_t t = 0; t < e->nt; t++)
        if (g->tensors[stor(e, t)].persistent && !e->graph.is_view[t])
            e->state.defined[t] = 1;
}

/* Everything the run reads but never changes, then the initial state. */
static int setup(eng *e)
{
    const graph_profile *g = e->g;
    e->nt = g->n_tensors;
    e->no = g->n_ops;
    int rc = alloc_arrays(e);
    if (!rc)
        rc = swu_init(&e->u, g, NULL); /* the schedule, deaths, residency */
    if (!rc)
        rc = build_op_tables(e);
    if (!rc)
        rc = build_storage_tensors(e);
    if (!rc)
        rc = build_storage_edges(e);
    if (!rc)
        build_constants(e);
    if (!rc)
        rc = find_evictable(e);
    if (!rc)
        init_state(e);
    return rc;
}

static void eng_free(eng *e)
{
    void *ptrs[] = {e->graph.ticks,
                    e->graph.args_off,
                    e->graph.args,
                    e->graph.created_off,
                    e->graph.created,
                    e->graph.created_bytes,
                    e->graph.on_storage_off,
                    e->graph.on_storage,
                    e->graph.fwd_off,
                    e->graph.fwd_to,
                    e->graph.fwd_op,
                    e->graph.rev_off,
                    e->graph.rev_to,
                    e->graph.rev_op,
                    e->graph.constant,
                    e->graph.evictable,
                    e->graph.is_view,
                    e->state.defined,
                    e->state.pinned,
                    e->state.ran,
                    e->state.dead,
                    e->state.banished,
                    e->state.no_evict,
                    e->score.fwd_dirty,
                    e->score.rev_dirty,
                    e->pool.in,
                    e->state.locks,
                    e->pool.prev,
                    e->pool.next,
                    e->state.last_access,
                    e->score.compute_ns,
                    e->score.fwd_region_ns,
                    e->score.rev_region_ns,
                    e->score.eq_node,
                    e->state.n_remat,
                    e->state.death_event,
                    e->score.compute_op,
                    e->uf.parent,
                    e->uf.cost,
                    e->uf.mark,
                    e->walk.stack,
                    e->walk.visited,
                    e->walk.frames,
                    e->walk.arg_missing,
                    e->log.events,
                    e->alloc.place};
    for (size_t i = 0; i < SW_ARRAY_LEN(ptrs); i++)
        sw_free(ptrs[i]);
    if (e->score.rng)
        gsl_rng_free(e->score.rng);
    swu_free(&e->u);
}

/* ---------------- the run ---------------- */

static int swap_in_external(eng *e, int32_t s)
{
    int rc = 0;
    if (e->u.used + sbytes(e, s) > e->u.limit)
        rc = free_bytes(e, sbytes(e, s));
    if (!rc)
        rc = place_all(e, &s, 1);
    if (rc)
        return rc;
    swu_swap_in(&e->u, s);
    for (int32_t k = e->graph.on_storage_off[s]; k < e->graph.on_storage_off[s + 1]; k++)
        if (!e->graph.is_view[e->graph.on_storage[k]])
            e->state.defined[e->graph.on_storage[k]] = 1;
    return log_ev(e, EV_SWAPIN, s);
}

/* Run the iteration within limit bytes of tensors. */
static int run_ops(eng *e, int64_t limit)
{
    const graph_profile *g = e->g;
    int rc = 0;
    /* the resident set: every persistent storage, placed first as the builder does */
    uint8_t *persistent = sw_calloc((size_t)e->nt + 1, 1); /* per storage */
    if (!persistent)
        return SW_ENOMEM;
    for (int32_t s = 0; s < e->nt; s++)
        persistent[s] = g->tensors[s].storage == s && g->tensors[s].persistent;
    swu_begin(&e->u, NULL, persistent, limit);
    for (int32_t s = 0; s < e->nt && !rc; s++)
        if (persistent[s] && !e->cfg->bytes_only) {
            if (mem_alloc(e->alloc.mem, s, sbytes(e, s), &e->alloc.place[s]))
                rc = sw_fail(e->err, SW_ENOFIT, "does not fit: the persistent tensors alone "
                             "exceed the budget");
            else
                note_alloc(e);
        }
    sw_free(persistent);
    if (rc)
        return rc;
    e->st->peak_bytes = e->u.peak;
    if (e->u.used > e->u.limit)
        return sw_fail(e->err, SW_ENOFIT, "does not fit: the persistent tensors alone exceed "
                       "the budget");
    for (int32_t i = 0; i < e->no && !rc; i++) {
        int32_t o = g->order[i];
        const graph_op *op = &g->ops[o];
        e->time.cur_op = o;
        for (int32_t k = e->graph.args_off[o]; k < e->graph.args_off[o + 1] && !rc; k++) {
            int32_t s = stor(e, e->graph.args[k]);
            if (!e->u.res[s] && swu_on_host(&e->u, s)) /* external: never evicted */
                rc = swap_in_external(e, s);
        }
        if (rc)
            break;
        if (op->n_out == 0 && op->n_mut == 0) {
            /* a sink: its inputs are made resident and pinned one by one */
            for (int32_t k = 0; k < op->n_in && !rc; k++) {
                int32_t p = op->in[k], s = stor(e, p);
                if (!e->state.defined[p] && g->tensors[p].producer < 0)
                    rc = sw_fail(e->err, SW_EINVAL, "dtr: input %d '%s' of the sink is missing "
                                 "(a bug)", p, g->tensors[p].name);
                else if (!e->state.defined[p])
                    rc = materialize(e, g->tensors[p].producer, 1, p);
                if (!rc && !e->state.pinned[s]) {
                    lock(e, s);
                    e->state.pinned[s] = 1;
                }
            }
            if (!rc) {
                e->time.clock = sw_add_sat(
                    e->time.clock, e->graph.ticks[o]); /* bounded inputs; saturate, never wrap */
                e->time.model_ticks += e->graph.ticks[o];
                e->state.ran[o] = 1;
                rc = log_ev(e, EV_RUN, o);
            }
        } else {
            rc = materialize(e, o, 0, op->n_out ? op->out[0] : -1);
            for (int32_t k = 0; k < op->n_out && !rc; k++)
                e->state.last_access[stor(e, op->out[k])] = e->time.clock;
        }
        int real = e->cfg->real_delete_bwd && op->phase != GP_FORWARD;
        for (int32_t k = e->u.dth_off[i]; k < e->u.dth_off[i + 1] && !rc; k++) {
            int32_t s = e->u.dth[k];
            e->state.dead[s] = 1;
            if (e->graph.constant[s] || e->state.pinned[s])
                continue;
            if (real)
                rc = real_delete(e, s, i);
            else if (e->u.res[s])
                rc = evict(e, s, EV_DEATH);
        }
    }
    e->st->peak_bytes = e->u.peak;
    if (rc)
        return rc;
    /* storages the runtime keeps past their death (rematerialised after it,
       constants): the builder would free them after their last use */
    for (int32_t s = 0; s < e->nt && !rc; s++)
        if (g->tensors[s].storage == s && e->u.res[s] && e->state.dead[s] &&
            e->u.death[s] < e->no - 1)
            rc = log_ev(e, EV_DROP, s);
    return rc;
}

static int record_in(eng *e, mem_model *m, int64_t budget, plan **out, sw_err *e2)
{
    const graph_profile *g = e->g;
    plan_builder *b = pb_new(g, m, budget, g->max_workspace);
    if (!b)
        return SW_ENOMEM;
    pb_resident_persistent(b);
    for (size_t i = 0; i < e->log.n_events; i++) {
        const dtr_ev *v = &e->log.events[i];
        switch (v->kind) {
        case EV_RUN:
            pb_run(b, v->x);
            break;
        case EV_RERUN:
            pb_rerun(b, v->x);
            break;
        case EV_DROP:
        case EV_DEATH_DROP:
            pb_drop(b, v->x);
            break;
        case EV_SWAPIN:
            pb_swap_in(b, v->x);
            break;
        default:
            break; /* EV_DEATH: the builder frees it after its last use / held_until */
        }
    }
    int rc = pb_finish(b, out, e2);
    pb_free(b);
    return rc;
}

/* The plan in an arena of the budget, placed as the runtime mirrored it. */
static int record(eng *e, plan **out)
{
    sw_err e2;
    int rc = record_in(e, e->alloc.mem, e->u.limit + e->g->max_workspace, out, &e2);
    if (rc == SW_ENOFIT || rc == SW_EINVAL)
        return sw_fail(e->err, rc, "dtr: the recorded plan does not build (a bug): %s", e2.msg);
    if (rc)
        *e->err = e2;
    return rc;
}

/* bytes_only: place the decisions in a large arena, then in the smallest
   one that holds them (first-fit places the same way in any arena that
   fits; best-fit may not, so grow until it builds). */
static int record_bytes(eng *e, plan **out)
{
    const graph_profile *g = e->g;
    int64_t a = e->cfg->align > 0 ? e->cfg->align : 1, cap = 0;
    for (int32_t s = 0; s < e->nt; s++)
        if (g->tensors[s].storage == s)
            cap += (sbytes(e, s) + a) / a * a + a;
    sw_err e2;
    for (int attempt = 0; attempt < 64; attempt++) {
        mem_model *m = mem_address_new(cap, e->cfg->fit, a);
        if (!m)
            return SW_ENOMEM;
        plan *p = NULL;
        int rc = record_in(e, m, cap + g->max_workspace, &p, &e2);
        mem_stats ms;
        mem_get_stats(m, &ms);
        mem_destroy(m);
        if (rc == SW_ENOFIT && attempt > 0) {
            cap += cap / 256 + a;
            continue;
        }
        if (rc) {
            *e->err = e2;
            return rc == SW_ENOMEM ? rc : sw_fail(e->err, rc, "dtr: the recorded plan does not "
                                                  "build (a bug): %s", e2.msg);
        }
        if (attempt == 0) { /* the large arena: now the smallest that holds it */
            plan_free(p);
            cap = ms.high_water > 0 ? ms.high_water : 1;
            continue;
        }
        e->st->arena = p->capacity;
        *out = p;
        return 0;
    }
    return sw_fail(e->err, SW_EINVAL, "dtr: no arena holds the recorded decisions (a bug)");
}

int dtr_run(const graph_profile *g, int64_t budget, const dtr_config *cfg, plan **out,
            dtr_stats *st_out, sw_err *err)
{
    *out = NULL;
    dtr_stats st_local;
    dtr_stats *st = st_out ? st_out : &st_local;
    memset(st, 0, sizeof *st);
    eng e;
    memset(&e, 0, sizeof e);
    e.g = g;
    e.cfg = cfg;
    e.st = st;
    e.err = err;
    e.time.cur_op = -1;
    e.score.heur = heuristic_of(cfg->heuristic);
    e.score.use_regions = e.score.heur->regions;
    e.score.use_eq = e.score.heur->eq;
    int64_t limit = budget - g->max_workspace; /* bytes for tensors */
    e.time.clock = 1;
    if (limit <= 0)
        return sw_fail(err, SW_ENOFIT, "does not fit: the budget does not cover the largest op "
                       "workspace (%lld bytes)", (long long)g->max_workspace);
    int rc = setup(&e);
    if (!rc) {
        e.time.remat_limit =
            cfg->overhead_cap > 0 ? (cfg->overhead_cap - 1) * (double)e.time.total_ticks : -1;
        e.alloc.mem = mem_address_new(limit, cfg->fit, cfg->align > 0 ? cfg->align : 1);
        e.score.rng = gsl_rng_alloc(gsl_rng_mt19937);
        if (!e.alloc.mem || !e.score.rng)
            rc = SW_ENOMEM;
        else
            gsl_rng_set(e.score.rng, (unsigned long)cfg->seed);
    }
    if (!rc)
        rc = run_ops(&e, limit);
    st->compute_ns = e.time.total_ticks;
    st->remat_ns = e.time.remat_ticks;
    st->clock_ns = e.time.clock;
    st->overhead = e.time.total_ticks > 0 ? (double)e.time.clock / (double)e.time.total_ticks : 1;
    if (!rc && !cfg->no_plan)
        rc = cfg->bytes_only ? record_bytes(&e, out) : record(&e, out);
    if (rc == SW_ENOMEM)
        sw_fail(err, SW_ENOMEM, "out of memory");
    mem_destroy(e.alloc.mem);
    eng_free(&e);
    return rc;
}

void dtr_stats_note(const dtr_stats *st, const dtr_config *cfg, sw_buf *b)
{
    (void)cfg;
    sw_buf_printf(b, "overhead %.4f (simrd clock / compute), recompute %.6f s in %lld reruns "
                  "(%lld of dead storages), %lld evictions (%lld for fragmentation), peak %lld "
                  "bytes counted; allocator at its peak: %lld bytes in use, arena extent %lld "
                  "bytes (fragmentation %lld bytes)",
                  st->overhead, (double)st->remat_ns * 1e-9, (long long)st->remats,
                  (long long)st->dead_remats, (long long)st->evictions,
                  (long long)st->frag_evictions, (long long)st->peak_bytes,
                  (long long)st->peak_in_use, (long long)st->reserved_at_peak,
                  (long long)(st->reserved_at_peak - st->peak_in_use));
    if (st->arena)
        sw_buf_printf(b, "; budget on bytes: the plan's arena is %lld bytes", (long long)st->arena);
    if (st->real_deletes)
        sw_buf_printf(b, ", %lld real deletes (%lld regenerations)", (long long)st->real_deletes,
                      (long long)st->regenerations);
}
