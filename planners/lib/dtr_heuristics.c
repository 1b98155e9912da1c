/* dtr_heuristics.c: the DTR runtime's eviction heuristics (h_DTR and its
   variants, LRU, size, MSPS, random, MegEngine's score), the caches they
   score from (evicted neighbourhoods, union-find equivalence classes) and
   the choice of a victim among the candidates. */
#include <gsl/gsl_rng.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "dtr_engine_impl.h"

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
void eng_mark_dirty(eng *e, int32_t x)
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

int32_t eng_uf_new(eng *e, int64_t v)
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

int32_t eng_uf_find(eng *e, int32_t x)
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

/* ---------------- heuristics ---------------- */

static double quot(int64_t num, unsigned __int128 den)
{
    if (den == 0)
        return INFINITY;
    return (double)((long double)num / (long double)den);
}

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
        int32_t r = eng_uf_find(e, e->score.eq_node[y]);
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
const heuristic_def *eng_heuristic_of(int h)
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
int32_t eng_choose_opening(eng *e, int64_t need)
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
int32_t eng_choose(eng *e)
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
