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
   storage is placed again later, then an explicit drop. */
#include "dtr_engine.h"
#include "../common/limits.h"

#include <gsl/gsl_rng.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../sim/builder.h"

#define NEVER INT32_MAX

enum { EV_RUN, EV_RERUN, EV_DROP, EV_DEATH, EV_DEATH_DROP, EV_SWAPIN };

typedef struct dtr_ev {
    uint8_t kind;
    int32_t x;
} dtr_ev;

typedef struct frame {
    int32_t op, target, i;
    uint8_t remat, stage;
    size_t uoff;
} frame;

typedef struct eng {
    const graph_profile *g;
    const dtr_config *cfg;
    dtr_stats *st;
    sw_err *err;
    int32_t nt, no;
    int64_t budget;
    double limit; /* remat ns limit, < 0 none */
    /* static */
    int64_t *ticks;
    int32_t *pos;
    int32_t *par_off, *par;
    int32_t *cre_off, *cre;
    int64_t *tsize;
    int32_t *ton_off, *ton;
    int32_t *fwd_off, *fwd_s, *fwd_op;
    int32_t *rev_off, *rev_s, *rev_op;
    int32_t *death;
    int32_t *dth_off, *dth;
    uint8_t *keep, *evictable, *isview, *external;
    /* dynamic */
    uint8_t *defined, *material, *pinned, *ran, *dead, *banished, *noevict, *fdirty, *rdirty,
        *inpool;
    int32_t *locks, *pprev, *pnext, phead, ptail, pn;
    int64_t *last_access, *comp, *fcomp, *rcomp;
    int32_t *ecn, *nremat, *last_death_ev, *comp_op;
    int32_t *ufp;
    int64_t *ufv;
    uint32_t *ufmark;
    size_t n_uf, cap_uf, cap_ufv, cap_ufm;
    int32_t *stk;
    uint32_t *vis, epoch;
    frame *fr;
    size_t nfr, cap_fr;
    uint8_t *ufl;
    size_t nufl, cap_ufl;
    dtr_ev *ev;
    size_t nev, cap_ev;
    int32_t *cand;
    mem_model *mem;
    plan_place *place;
    int64_t clock, bytes, remat_ticks, model_ticks, total_ticks;
    int32_t cur_op;
    gsl_rng *rng;
    int use_regions, use_eq;
} eng;

int dtr_heuristic_parse(const char *s)
{
    static const char *names[] = {"dtr", "dtr-eq", "dtr-local", "lru", "size", "msps", "random"};
    for (int i = 0; i < (int)SW_ARRAY_LEN(names); i++)
        if (s && !strcmp(s, names[i]))
            return i;
    return -1;
}

static int64_t sbytes(const eng *e, int32_t s) { return e->g->tensors[s].bytes; }
static int32_t stor(const eng *e, int32_t t) { return e->g->tensors[t].storage; }

/* ---------------- candidate pool (ordered: order of becoming evictable) ---------------- */

static void pool_append(eng *e, int32_t s)
{
    if (e->inpool[s])
        return;
    e->inpool[s] = 1;
    e->pprev[s] = e->ptail;
    e->pnext[s] = -1;
    if (e->ptail >= 0)
        e->pnext[e->ptail] = s;
    else
        e->phead = s;
    e->ptail = s;
    e->pn++;
}

static void pool_remove(eng *e, int32_t s)
{
    if (!e->inpool[s])
        return;
    e->inpool[s] = 0;
    if (e->pprev[s] >= 0)
        e->pnext[e->pprev[s]] = e->pnext[s];
    else
        e->phead = e->pnext[s];
    if (e->pnext[s] >= 0)
        e->pprev[e->pnext[s]] = e->pprev[s];
    else
        e->ptail = e->pprev[s];
    e->pn--;
}

static void make_evictable(eng *e, int32_t s)
{
    if (e->evictable[s] && !e->noevict[s] && !e->pinned[s] && e->material[s] && !e->locks[s])
        pool_append(e, s);
}

static void lock(eng *e, int32_t s)
{
    if (e->locks[s]++ == 0)
        pool_remove(e, s);
}

static void unlock(eng *e, int32_t s)
{
    if (--e->locks[s] == 0)
        make_evictable(e, s);
}

/* ---------------- events ---------------- */

static int log_ev(eng *e, int kind, int32_t x)
{
    if (SW_GROW(e->ev, e->cap_ev, e->nev + 1))
        return SW_ENOMEM;
    e->ev[e->nev].kind = (uint8_t)kind;
    e->ev[e->nev].x = x;
    e->nev++;
    return 0;
}

/* ---------------- evicted neighbourhoods ---------------- */

static void next_epoch(eng *e)
{
    if (++e->epoch == 0) {
        memset(e->vis, 0, (size_t)e->nt * sizeof *e->vis);
        e->epoch = 1;
    }
}

/* Sum of compute over the storages reachable from s through non-material
   storages (forward: consumers; reverse: producers' inputs). */
static int64_t region(eng *e, int32_t s, int rev)
{
    const int32_t *off = rev ? e->rev_off : e->fwd_off, *to = rev ? e->rev_s : e->fwd_s,
                  *via = rev ? e->rev_op : e->fwd_op;
    next_epoch(e);
    int64_t sum = 0;
    int32_t n = 0;
    e->stk[n++] = s;
    e->vis[s] = e->epoch;
    while (n) {
        int32_t x = e->stk[--n];
        for (int32_t k = off[x]; k < off[x + 1]; k++) {
            int32_t y = to[k];
            if (!e->ran[via[k]] || e->material[y] || e->vis[y] == e->epoch)
                continue;
            e->vis[y] = e->epoch;
            sum += e->comp[y];
            e->stk[n++] = y;
        }
    }
    return sum;
}

/* x changed residency: the cached neighbourhoods that may include it are
   those of the resident storages bordering its evicted component. */
static void mark_dirty(eng *e, int32_t x)
{
    e->fdirty[x] = e->rdirty[x] = 1;
    for (int dir = 0; dir < 2; dir++) {
        /* walking producers (rev) finds storages whose forward region holds x */
        const int32_t *off = dir ? e->fwd_off : e->rev_off, *to = dir ? e->fwd_s : e->rev_s,
                      *via = dir ? e->fwd_op : e->rev_op;
        uint8_t *dirty = dir ? e->rdirty : e->fdirty;
        next_epoch(e);
        int32_t n = 0;
        e->stk[n++] = x;
        e->vis[x] = e->epoch;
        while (n) {
            int32_t a = e->stk[--n];
            for (int32_t k = off[a]; k < off[a + 1]; k++) {
                int32_t y = to[k];
                if (!e->ran[via[k]] || e->vis[y] == e->epoch)
                    continue;
                e->vis[y] = e->epoch;
                if (e->material[y])
                    dirty[y] = 1;
                else
                    e->stk[n++] = y;
            }
        }
    }
}

/* ---------------- equivalence classes (union-find) ---------------- */

static int32_t uf_new(eng *e, int64_t v)
{
    if (SW_GROW(e->ufp, e->cap_uf, e->n_uf + 1) || SW_GROW(e->ufv, e->cap_ufv, e->n_uf + 1) ||
        SW_GROW(e->ufmark, e->cap_ufm, e->n_uf + 1))
        return -1;
    e->ufp[e->n_uf] = (int32_t)e->n_uf;
    e->ufv[e->n_uf] = v;
    e->ufmark[e->n_uf] = 0;
    return (int32_t)e->n_uf++;
}

static int32_t uf_find(eng *e, int32_t x)
{
    int32_t r = x;
    while (e->ufp[r] != r)
        r = e->ufp[r];
    while (e->ufp[x] != r) {
        int32_t n = e->ufp[x];
        e->ufp[x] = r;
        x = n;
    }
    return r;
}

/* For every evicted neighbour of s (producers' inputs and consumers'
   outputs of its tensors), call fn. */
#define FOR_EVICTED_NEIGHBOURS(e, s, y, ...)                                                      \
    for (int dir_ = 0; dir_ < 2; dir_++) {                                                        \
        const int32_t *off_ = dir_ ? (e)->rev_off : (e)->fwd_off;                                 \
        const int32_t *to_ = dir_ ? (e)->rev_s : (e)->fwd_s;                                      \
        const int32_t *via_ = dir_ ? (e)->rev_op : (e)->fwd_op;                                   \
        for (int32_t k_ = off_[s]; k_ < off_[(s) + 1]; k_++) {                                    \
            int32_t y = to_[k_];                                                                  \
            if (!(e)->ran[via_[k_]] || (e)->material[y] || y == (s) || (e)->ecn[y] < 0)           \
                continue;                                                                         \
            __VA_ARGS__                                                                           \
        }                                                                                         \
    }

/* ---------------- heuristics ---------------- */

static double quot(int64_t num, unsigned __int128 den)
{
    if (den == 0)
        return INFINITY;
    return (double)((long double)num / (long double)den);
}

static double cost(eng *e, int32_t s)
{
    e->st->evaluations++;
    int64_t stale = e->clock - e->last_access[s], sz = sbytes(e, s);
    unsigned __int128 den = (unsigned __int128)(uint64_t)sz * (uint64_t)(stale > 0 ? stale : 0);
    switch (e->cfg->heuristic) {
    case DH_DTR:
        if (e->fdirty[s]) {
            e->fcomp[s] = region(e, s, 0);
            e->fdirty[s] = 0;
        }
        if (e->rdirty[s]) {
            e->rcomp[s] = region(e, s, 1);
            e->rdirty[s] = 0;
        }
        return quot(e->comp[s] + e->fcomp[s] + e->rcomp[s], den);
    case DH_EQ: {
        int64_t sum = e->comp[s];
        if (++e->epoch == 0)
            e->epoch = 1;
        uint32_t mk = e->epoch;
        FOR_EVICTED_NEIGHBOURS(e, s, y, {
            int32_t r = uf_find(e, e->ecn[y]);
            if (e->ufmark[r] != mk) {
                e->ufmark[r] = mk;
                sum += e->ufv[r];
            }
        })
        return quot(sum, den);
    }
    case DH_LOCAL:
        return quot(e->comp[s], den);
    case DH_LRU:
        return (double)e->last_access[s];
    case DH_SIZE:
        return sz > 0 ? 1.0 / (double)sz : INFINITY;
    case DH_MSPS:
        if (e->rdirty[s]) {
            e->rcomp[s] = region(e, s, 1);
            e->rdirty[s] = 0;
        }
        return quot(e->comp[s] + e->rcomp[s], (unsigned __int128)(uint64_t)sz);
    case DH_MEGENGINE: {
        const dtr_config *c = e->cfg;
        double adj = (double)mem_adjacent_free(e->mem, &e->place[s], sz);
        double d = pow((double)stale, c->exp_staleness) * pow((double)sz + adj, c->exp_memory);
        if (!(d > 0))
            return INFINITY;
        return pow((double)e->comp[s], c->exp_compute) / d * pow(c->recompute_base, e->nremat[s]);
    }
    default:
        return INFINITY;
    }
}

/* Fragmentation: the cheapest candidate whose removal (coalesced with the
   free blocks beside it) opens a block of need bytes; -1 if none. */
static int32_t choose_opening(eng *e, int64_t need)
{
    int32_t best = -1;
    double best_cost = INFINITY;
    int64_t a = e->cfg->align > 1 ? e->cfg->align : 1;
    int64_t want = ((need > 0 ? need : 1) + a - 1) / a * a;
    for (int32_t s = e->phead; s >= 0; s = e->pnext[s]) {
        int64_t sz = sbytes(e, s), own = ((sz > 0 ? sz : 1) + a - 1) / a * a;
        if (own + mem_adjacent_free(e->mem, &e->place[s], sz) < want)
            continue;
        double c = e->cfg->heuristic == DH_RANDOM ? 0 : cost(e, s);
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
    if (e->pn == 0)
        return -1;
    if (e->cfg->heuristic == DH_RANDOM) {
        int32_t k = (int32_t)gsl_rng_uniform_int(e->rng, (unsigned long)e->pn), s = e->phead;
        while (k--)
            s = e->pnext[s];
        return s;
    }
    double min_size = 0;
    if (e->cfg->small_filter > 0) {
        double sum = 0;
        for (int32_t s = e->phead; s >= 0; s = e->pnext[s])
            sum += (double)sbytes(e, s);
        min_size = e->cfg->small_filter * sum / e->pn;
    }
    int32_t stride = 1;
    if (e->cfg->sample) {
        stride = (int32_t)sqrt((double)e->pn);
        if (stride < 1)
            stride = 1;
    }
    int32_t best = -1;
    double best_cost = INFINITY;
    for (int pass = 0; pass < 2 && best < 0; pass++) {
        int32_t skip = 0;
        for (int32_t s = e->phead; s >= 0; s = e->pnext[s]) {
            if (skip > 0) {
                skip--;
                continue;
            }
            if (stride > 1)
                skip = (int32_t)gsl_rng_uniform_int(e->rng, (unsigned long)stride);
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
    e->material[s] = 0;
    e->bytes -= sbytes(e, s);
    pool_remove(e, s);
    for (int32_t k = e->ton_off[s]; k < e->ton_off[s + 1]; k++)
        e->defined[e->ton[k]] = 0;
    if (!e->cfg->bytes_only)
        mem_release(e->mem, &e->place[s], sbytes(e, s));
    if (kind == EV_DEATH)
        e->last_death_ev[s] = (int32_t)e->nev;
    if (log_ev(e, kind, s))
        return SW_ENOMEM;
    if (e->use_regions)
        mark_dirty(e, s);
    if (e->use_eq) {
        int32_t n = uf_new(e, e->comp[s]);
        if (n < 0)
            return SW_ENOMEM;
        e->ecn[s] = n;
        FOR_EVICTED_NEIGHBOURS(e, s, y, {
            int32_t l = uf_find(e, e->ecn[y]), r = uf_find(e, n);
            if (l != r) {
                e->ufp[l] = r;
                e->ufv[r] += e->ufv[l];
            }
        })
    }
    return 0;
}

static const char *opname(const eng *e, int32_t o) { return e->g->ops[o].name; }

static int oom(eng *e, int64_t need, int frag)
{
    char h1[32], h2[32], h3[32];
    int32_t o = e->cur_op;
    if (frag) {
        /* need: the bytes of the tensors that must be placed together */
        mem_stats ms;
        mem_get_stats(e->mem, &ms);
        return sw_fail(e->err, SW_ENOFIT, "does not fit: at op %d '%s' nothing is left to evict "
                       "and the free blocks (largest %s, %s free in all) cannot place the %s of "
                       "tensors it needs at once (the allocator fragments memory)", o,
                       o >= 0 ? opname(e, o) : "?", sw_fmt_bytes(ms.largest_free, h2, sizeof h2),
                       sw_fmt_bytes(ms.free_bytes, h3, sizeof h3),
                       sw_fmt_bytes(need, h1, sizeof h1));
    }
    return sw_fail(e->err, SW_ENOFIT, "does not fit: at op %d '%s' nothing is left to evict: %s "
                   "resident and locked, %s more needed, budget %s", o,
                   o >= 0 ? opname(e, o) : "?", sw_fmt_bytes(e->bytes, h1, sizeof h1),
                   sw_fmt_bytes(need, h2, sizeof h2), sw_fmt_bytes(e->budget, h3, sizeof h3));
}

/* Evict until need more bytes fit the budget. */
static int free_bytes(eng *e, int64_t need)
{
    while (e->bytes + need > e->budget) {
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
    mem_get_stats(e->mem, &ms);
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
            if (e->material[s])
                continue;
            if (mem_alloc(e->mem, s, sbytes(e, s), &e->place[s])) {
                fail = s;
                break;
            }
        }
        if (fail < 0) {
            note_alloc(e);
            return 0;
        }
        for (int32_t j = 0; j < k; j++)
            if (!e->material[list[j]])
                mem_release(e->mem, &e->place[list[j]], sbytes(e, list[j]));
        int32_t v = e->cfg->frag_fit ? choose_opening(e, sbytes(e, fail)) : -1;
        if (v < 0)
            v = choose(e);
        if (v < 0) {
            int64_t all = 0;
            for (int32_t j = 0; j < n; j++)
                if (!e->material[list[j]])
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
        if (!e->isview[u] && e->defined[u])
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
            if ((pass == 0) == (u == target) || e->isview[u] || e->material[stor(e, u)])
                continue;
            fr[nf++] = stor(e, u);
        }
    e->clock = sw_add_sat(e->clock, e->ticks[o]); /* bounded inputs; saturate, never wrap */
    e->bytes += e->tsize[o];
    if (e->bytes > e->st->peak_bytes)
        e->st->peak_bytes = e->bytes;
    e->bytes -= dup;
    for (int32_t k = 0; k < op->n_out; k++)
        e->defined[op->out[k]] = 1;
    for (int32_t k = e->cre_off[o]; k < e->cre_off[o + 1]; k++)
        e->material[e->cre[k]] = 1;
    if (remat) {
        e->remat_ticks += e->ticks[o];
        e->st->remats++;
        for (int32_t k = 0; k < nf; k++) {
            int32_t s = fr[k];
            e->st->dead_remats += e->dead[s];
            e->nremat[s]++;
            if (e->last_death_ev[s] >= 0) {
                e->ev[e->last_death_ev[s]].kind = EV_DEATH_DROP; /* placed again: explicit */
                e->last_death_ev[s] = -1;
            }
        }
    } else {
        e->model_ticks += e->ticks[o];
        e->ran[o] = 1;
        for (int32_t k = 0; k < op->n_out; k++) {
            int32_t s = stor(e, op->out[k]);
            if (e->comp_op[s] != o) {
                e->comp_op[s] = o;
                e->comp[s] += e->ticks[o];
            }
        }
    }
    int rc = log_ev(e, remat ? EV_RERUN : EV_RUN, o);
    for (int32_t k = 0; k < nf && !rc; k++) {
        int32_t s = fr[k];
        make_evictable(e, s);
        if (e->use_regions)
            mark_dirty(e, s);
        if (e->use_eq && e->ecn[s] >= 0) {
            e->ufv[uf_find(e, e->ecn[s])] -= e->comp[s];
            e->ecn[s] = -1;
        }
    }
    sw_free(heap);
    return rc;
}

static int parents_n(const eng *e, int32_t o) { return e->par_off[o + 1] - e->par_off[o]; }

/* simrd's _materialize, with an explicit stack: op o0 (re)computed, after its
   missing inputs are rematerialised depth-first. */
static int materialize(eng *e, int32_t o0, int remat0, int32_t target0)
{
    size_t base = e->nfr;
    if (SW_GROW(e->fr, e->cap_fr, e->nfr + 1))
        return SW_ENOMEM;
    e->fr[e->nfr++] = (frame){o0, target0, 0, (uint8_t)remat0, 0, 0};
    while (e->nfr > base) {
        frame *f = &e->fr[e->nfr - 1];
        int32_t o = f->op, np = parents_n(e, o);
        const int32_t *P = e->par + e->par_off[o];
        if (f->stage == 0) {
            for (int32_t k = 0; k < np; k++)
                e->last_access[stor(e, P[k])] = e->clock;
            if (SW_GROW(e->ufl, e->cap_ufl, e->nufl + (size_t)np + 1))
                return SW_ENOMEM;
            f = &e->fr[e->nfr - 1];
            f->uoff = e->nufl;
            e->nufl += (size_t)np;
            for (int32_t k = 0; k < np; k++) {
                e->ufl[f->uoff + (size_t)k] = !e->defined[P[k]];
                if (e->defined[P[k]])
                    lock(e, stor(e, P[k]));
            }
            f->stage = 1;
            f->i = 0;
        }
        if (f->stage == 2) { /* a missing input was just rematerialised */
            lock(e, stor(e, P[f->i]));
            f->i++;
            f->stage = 1;
        }
        int pushed = 0;
        while (f->stage == 1 && f->i < np) {
            int32_t p = P[f->i];
            if (!e->ufl[f->uoff + (size_t)f->i]) {
                f->i++;
                continue;
            }
            if (e->defined[p]) {
                lock(e, stor(e, p));
                f->i++;
                continue;
            }
            int32_t q = e->g->tensors[p].producer, s = stor(e, p);
            if (q < 0 || e->banished[s])
                return sw_fail(e->err, SW_EINVAL, "dtr: tensor %d '%s' is needed but cannot be "
                               "rematerialised (a bug)", p, e->g->tensors[p].name);
            f->stage = 2;
            if (SW_GROW(e->fr, e->cap_fr, e->nfr + 1))
                return SW_ENOMEM;
            e->fr[e->nfr++] = (frame){q, p, 0, 1, 0, 0};
            pushed = 1;
            break;
        }
        if (pushed)
            continue;
        /* all inputs resident and locked: make room, place, compute */
        int rc = 0;
        if (e->bytes + e->tsize[o] > e->budget)
            rc = free_bytes(e, e->tsize[o]);
        if (!rc)
            rc = place_all(e, e->cre + e->cre_off[o], e->cre_off[o + 1] - e->cre_off[o]);
        f = &e->fr[e->nfr - 1];
        if (!rc)
            rc = compute(e, o, f->remat, f->target);
        if (rc)
            return rc;
        f = &e->fr[e->nfr - 1];
        for (int32_t k = 0; k < np; k++)
            unlock(e, stor(e, P[k]));
        e->nufl = f->uoff;
        e->nfr--;
        if (e->limit >= 0 && (double)e->remat_ticks > e->limit)
            return sw_fail(e->err, SW_EEXCEEDED, "exceeded: rematerialisation passed %.3gx the "
                           "compute time (overhead cap %gx) at op %d '%s'",
                           (double)e->remat_ticks / (double)e->total_ticks, e->cfg->overhead_cap,
                           e->cur_op, opname(e, e->cur_op));
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
    e->stk[n++] = s;
    e->vis[s] = e->epoch;
    while (n) {
        int32_t x = e->stk[--n];
        for (int32_t k = e->fwd_off[x]; k < e->fwd_off[x + 1]; k++) {
            int32_t y = e->fwd_s[k];
            if (!e->ran[e->fwd_op[k]] || e->vis[y] == e->epoch || e->material[y])
                continue;
            e->vis[y] = e->epoch;
            e->stk[n++] = y;
            if (e->death[y] > now && !e->banished[y]) {
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
        if (e->material[y])
            continue;
        e->st->regenerations++;
        int rc = materialize(e, e->g->tensors[y].producer, 1, y);
        if (rc) {
            sw_free(list);
            return rc;
        }
    }
    sw_free(list);
    if (e->material[s]) {
        int rc = evict(e, s, EV_DEATH);
        if (rc)
            return rc;
    }
    e->banished[s] = 1;
    next_epoch(e);
    n = 0;
    e->stk[n++] = s;
    e->vis[s] = e->epoch;
    while (n) {
        int32_t x = e->stk[--n];
        for (int32_t k = e->fwd_off[x]; k < e->fwd_off[x + 1]; k++) {
            int32_t y = e->fwd_s[k];
            if (!e->ran[e->fwd_op[k]] || e->vis[y] == e->epoch)
                continue;
            e->vis[y] = e->epoch;
            if (!e->material[y]) {
                e->stk[n++] = y;
            } else if (e->death[y] > now) {
                e->noevict[y] = 1;
                pool_remove(e, y);
            }
        }
    }
    return 0;
}

/* ---------------- setup ---------------- */

#define ALLOC(p, n) ((p) = sw_calloc((size_t)(n) + 1, sizeof *(p)))

static int setup(eng *e)
{
    const graph_profile *g = e->g;
    int32_t nt = g->n_tensors, no = g->n_ops;
    e->nt = nt;
    e->no = no;
    if (!ALLOC(e->ticks, no) || !ALLOC(e->pos, no) || !ALLOC(e->par_off, no + 1) ||
        !ALLOC(e->cre_off, no + 1) || !ALLOC(e->tsize, no) || !ALLOC(e->ton_off, nt + 1) ||
        !ALLOC(e->ton, nt) || !ALLOC(e->fwd_off, nt + 1) || !ALLOC(e->rev_off, nt + 1) ||
        !ALLOC(e->death, nt) || !ALLOC(e->dth_off, no + 1) || !ALLOC(e->keep, nt) ||
        !ALLOC(e->evictable, nt) || !ALLOC(e->isview, nt) || !ALLOC(e->external, nt) ||
        !ALLOC(e->defined, nt) || !ALLOC(e->material, nt) || !ALLOC(e->pinned, nt) ||
        !ALLOC(e->ran, no) || !ALLOC(e->dead, nt) || !ALLOC(e->banished, nt) ||
        !ALLOC(e->noevict, nt) || !ALLOC(e->fdirty, nt) || !ALLOC(e->rdirty, nt) ||
        !ALLOC(e->inpool, nt) || !ALLOC(e->locks, nt) || !ALLOC(e->pprev, nt) ||
        !ALLOC(e->pnext, nt) || !ALLOC(e->last_access, nt) || !ALLOC(e->comp, nt) ||
        !ALLOC(e->fcomp, nt) || !ALLOC(e->rcomp, nt) || !ALLOC(e->ecn, nt) ||
        !ALLOC(e->nremat, nt) || !ALLOC(e->last_death_ev, nt) || !ALLOC(e->comp_op, nt) ||
        !ALLOC(e->stk, nt) || !ALLOC(e->vis, nt) || !ALLOC(e->place, nt) || !ALLOC(e->cand, nt))
        return SW_ENOMEM;
    if (graph_lifetimes(g, g->order, e->pos, e->death, NULL, NULL, NULL))
        return SW_EINVAL;
    e->total_ticks = 0;
    for (int32_t o = 0; o < no; o++) {
        const graph_op *op = &g->ops[o];
        double ns = op->time_s * 1e9;
        e->ticks[o] = ns > 0 ? (int64_t)llround(ns) : 0;
        e->total_ticks += e->ticks[o];
        e->par_off[o] = op->n_in + op->n_mut;
        for (int32_t k = g->acc_off[o]; k < g->acc_off[o + 1]; k++)
            if (g->acc_flag[k] & GA_CREATE) {
                e->cre_off[o]++;
                e->tsize[o] += sbytes(e, g->acc[k]);
            }
    }
    if (graph_counts_to_offsets(e->par_off, no) || graph_counts_to_offsets(e->cre_off, no))
        return SW_ENOMEM;
    if (!ALLOC(e->par, e->par_off[no]) || !ALLOC(e->cre, e->cre_off[no]))
        return SW_ENOMEM;
    for (int32_t o = 0; o < no; o++) {
        const graph_op *op = &g->ops[o];
        int32_t *P = e->par + e->par_off[o], *C = e->cre + e->cre_off[o];
        for (int32_t k = 0; k < op->n_in; k++)
            *P++ = op->in[k];
        for (int32_t k = 0; k < op->n_mut; k++)
            *P++ = op->mut[k];
        for (int32_t k = g->acc_off[o]; k < g->acc_off[o + 1]; k++)
            if (g->acc_flag[k] & GA_CREATE)
                *C++ = g->acc[k];
    }
    /* tensors on each storage */
    for (int32_t t = 0; t < nt; t++) {
        e->ton_off[stor(e, t)]++;
        e->isview[t] = g->tensors[t].view_of >= 0;
    }
    if (graph_counts_to_offsets(e->ton_off, nt))
        return SW_ENOMEM;
    for (int32_t t = 0; t < nt; t++)
        e->ton[e->ton_off[stor(e, t)] + e->cand[stor(e, t)]++] = t;
    memset(e->cand, 0, ((size_t)nt + 1) * sizeof *e->cand);
    /* storage edges: inputs of an op -> its outputs */
    for (int pass = 0; pass < 2; pass++) {
        for (int32_t o = 0; o < no; o++) {
            const graph_op *op = &g->ops[o];
            for (int32_t k = e->par_off[o]; k < e->par_off[o + 1]; k++)
                for (int32_t j = 0; j < op->n_out; j++) {
                    int32_t a = stor(e, e->par[k]), b = stor(e, op->out[j]);
                    if (a == b)
                        continue;
                    if (pass == 0) {
                        e->fwd_off[a]++;
                        e->rev_off[b]++;
                    } else {
                        int32_t x = e->fwd_off[a] + e->cand[a]++;
                        e->fwd_s[x] = b;
                        e->fwd_op[x] = o;
                        int32_t y = e->rev_off[b] + e->stk[b]++;
                        e->rev_s[y] = a;
                        e->rev_op[y] = o;
                    }
                }
        }
        if (pass == 0) {
            if (graph_counts_to_offsets(e->fwd_off, nt) || graph_counts_to_offsets(e->rev_off, nt))
                return SW_ENOMEM;
            if (!ALLOC(e->fwd_s, e->fwd_off[nt]) || !ALLOC(e->fwd_op, e->fwd_off[nt]) ||
                !ALLOC(e->rev_s, e->rev_off[nt]) || !ALLOC(e->rev_op, e->rev_off[nt]))
                return SW_ENOMEM;
        }
    }
    memset(e->cand, 0, ((size_t)nt + 1) * sizeof *e->cand);
    memset(e->stk, 0, ((size_t)nt + 1) * sizeof *e->stk);
    /* deaths: after the last access in the schedule, or held_until (a
       storage never accessed never dies: it is never materialised) */
    for (int32_t s = 0; s < nt; s++) {
        const graph_tensor *x = &g->tensors[s];
        if (x->storage != s)
            continue;
        if (x->persistent || e->death[s] < 0)
            e->death[s] = NEVER;
        e->external[s] = !x->persistent && x->producer < 0;
        e->keep[s] = x->persistent || x->producer < 0 || x->kind == GK_INPUT;
        if (e->death[s] != NEVER)
            e->dth_off[e->death[s]]++;
    }
    if (graph_counts_to_offsets(e->dth_off, no) || !ALLOC(e->dth, e->dth_off[no]))
        return SW_ENOMEM;
    for (int32_t s = 0; s < nt; s++)
        if (g->tensors[s].storage == s && e->death[s] != NEVER)
            e->dth[e->dth_off[e->death[s]] + e->cand[e->death[s]]++] = s;
    memset(e->cand, 0, ((size_t)nt + 1) * sizeof *e->cand);
    /* which storages can be recomputed whenever they are needed (mutations
       make an input's old version unavailable): R = the last position a
       recomputation can happen; evictable if every use comes before it */
    int32_t *mut_off = sw_calloc((size_t)nt + 2, sizeof *mut_off), *muts = NULL;
    int32_t *R = sw_malloc(((size_t)nt + 1) * sizeof *R);
    if (!mut_off || !R) {
        sw_free(mut_off);
        sw_free(R);
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
        return SW_ENOMEM;
    }
    for (int32_t i = 0; i < no; i++) { /* positions, ascending per storage */
        int32_t o = g->order[i];
        for (int32_t k = 0; k < g->ops[o].n_mut; k++) {
            int32_t s = stor(e, g->ops[o].mut[k]);
            muts[mut_off[s] + e->cand[s]++] = i;
        }
    }
    memset(e->cand, 0, ((size_t)nt + 1) * sizeof *e->cand);
    for (int32_t s = 0; s < nt; s++)
        R[s] = INT32_MIN;
    for (int32_t i = 0; i < no; i++) {
        int32_t p = g->order[i];
        const graph_op *op = &g->ops[p];
        /* re-running p recreates every missing output: none may be one the
           iteration mutates in place (nor may p mutate anything) */
        int32_t r = op->n_mut ? INT32_MIN : NEVER;
        for (int32_t k = e->cre_off[p]; k < e->cre_off[p + 1]; k++)
            if (mut_off[e->cre[k] + 1] > mut_off[e->cre[k]])
                r = INT32_MIN;
        for (int32_t k = e->par_off[p]; k < e->par_off[p + 1] && r != INT32_MIN; k++) {
            int32_t q = stor(e, e->par[k]), nm = NEVER;
            for (int32_t j = mut_off[q]; j < mut_off[q + 1]; j++)
                if (muts[j] > i) {
                    nm = muts[j];
                    break;
                }
            int32_t avail = e->keep[q] ? nm : SW_MIN(nm, SW_MAX(e->death[q], R[q]));
            r = SW_MIN(r, avail);
        }
        for (int32_t k = e->cre_off[p]; k < e->cre_off[p + 1]; k++) {
            int32_t s = e->cre[k];
            R[s] = e->keep[s] || mut_off[s + 1] > mut_off[s] ? INT32_MIN : r;
            e->evictable[s] = !e->keep[s] && R[s] >= e->death[s];
        }
    }
    sw_free(mut_off);
    sw_free(muts);
    sw_free(R);
    /* initial state */
    e->phead = e->ptail = -1;
    for (int32_t s = 0; s < nt; s++) {
        e->ecn[s] = -1;
        e->last_death_ev[s] = -1;
        e->comp_op[s] = -1;
        e->last_access[s] = 0;
    }
    for (int32_t t = 0; t < nt; t++)
        if (g->tensors[stor(e, t)].persistent && !e->isview[t])
            e->defined[t] = 1;
    return 0;
}

static void eng_free(eng *e)
{
    void *ptrs[] = {e->ticks, e->pos, e->par_off, e->par, e->cre_off, e->cre, e->tsize,
                    e->ton_off, e->ton, e->fwd_off, e->fwd_s, e->fwd_op, e->rev_off, e->rev_s,
                    e->rev_op, e->death, e->dth_off, e->dth, e->keep, e->evictable, e->isview,
                    e->external, e->defined, e->material, e->pinned, e->ran, e->dead,
                    e->banished, e->noevict, e->fdirty, e->rdirty, e->inpool, e->locks, e->pprev,
                    e->pnext, e->last_access, e->comp, e->fcomp, e->rcomp, e->ecn, e->nremat,
                    e->last_death_ev, e->comp_op, e->ufp, e->ufv, e->ufmark, e->stk, e->vis,
                    e->fr, e->ufl, e->ev, e->cand, e->place};
    for (size_t i = 0; i < SW_ARRAY_LEN(ptrs); i++)
        sw_free(ptrs[i]);
    if (e->rng)
        gsl_rng_free(e->rng);
}

/* ---------------- the run ---------------- */

static int swap_in_external(eng *e, int32_t s)
{
    int rc = 0;
    if (e->bytes + sbytes(e, s) > e->budget)
        rc = free_bytes(e, sbytes(e, s));
    if (!rc)
        rc = place_all(e, &s, 1);
    if (rc)
        return rc;
    e->material[s] = 1;
    e->bytes += sbytes(e, s);
    if (e->bytes > e->st->peak_bytes)
        e->st->peak_bytes = e->bytes;
    for (int32_t k = e->ton_off[s]; k < e->ton_off[s + 1]; k++)
        if (!e->isview[e->ton[k]])
            e->defined[e->ton[k]] = 1;
    return log_ev(e, EV_SWAPIN, s);
}

static int run_ops(eng *e)
{
    const graph_profile *g = e->g;
    int rc = 0;
    for (int32_t s = 0; s < e->nt; s++) /* the resident set, placed first as the builder does */
        if (g->tensors[s].storage == s && g->tensors[s].persistent) {
            e->bytes += sbytes(e, s);
            rc = place_all(e, &s, 1);
            e->material[s] = 1;
            if (rc) {
                if (rc == SW_ENOFIT)
                    rc = sw_fail(e->err, SW_ENOFIT, "does not fit: the persistent tensors alone "
                                 "exceed the budget");
                return rc;
            }
        }
    e->st->peak_bytes = e->bytes;
    if (e->bytes > e->budget)
        return sw_fail(e->err, SW_ENOFIT, "does not fit: the persistent tensors alone exceed "
                       "the budget");
    for (int32_t i = 0; i < e->no && !rc; i++) {
        int32_t o = g->order[i];
        const graph_op *op = &g->ops[o];
        e->cur_op = o;
        for (int32_t k = e->par_off[o]; k < e->par_off[o + 1] && !rc; k++) {
            int32_t s = stor(e, e->par[k]);
            if (e->external[s] && !e->material[s])
                rc = swap_in_external(e, s);
        }
        if (rc)
            break;
        if (op->n_out == 0 && op->n_mut == 0) {
            /* a sink: its inputs are made resident and pinned one by one */
            for (int32_t k = 0; k < op->n_in && !rc; k++) {
                int32_t p = op->in[k], s = stor(e, p);
                if (!e->defined[p] && g->tensors[p].producer < 0)
                    rc = sw_fail(e->err, SW_EINVAL, "dtr: input %d '%s' of the sink is missing "
                                 "(a bug)", p, g->tensors[p].name);
                else if (!e->defined[p])
                    rc = materialize(e, g->tensors[p].producer, 1, p);
                if (!rc && !e->pinned[s]) {
                    lock(e, s);
                    e->pinned[s] = 1;
                }
            }
            if (!rc) {
                e->clock = sw_add_sat(e->clock, e->ticks[o]); /* bounded inputs; saturate, never wrap */
                e->model_ticks += e->ticks[o];
                e->ran[o] = 1;
                rc = log_ev(e, EV_RUN, o);
            }
        } else {
            rc = materialize(e, o, 0, op->n_out ? op->out[0] : -1);
            for (int32_t k = 0; k < op->n_out && !rc; k++)
                e->last_access[stor(e, op->out[k])] = e->clock;
        }
        int real = e->cfg->real_delete_bwd && op->phase != GP_FORWARD;
        for (int32_t k = e->dth_off[i]; k < e->dth_off[i + 1] && !rc; k++) {
            int32_t s = e->dth[k];
            e->dead[s] = 1;
            if (e->keep[s] || e->pinned[s])
                continue;
            if (real)
                rc = real_delete(e, s, i);
            else if (e->material[s])
                rc = evict(e, s, EV_DEATH);
        }
    }
    if (rc)
        return rc;
    /* storages the runtime keeps past their death (rematerialised after it,
       constants): the builder would free them after their last use */
    for (int32_t s = 0; s < e->nt && !rc; s++)
        if (g->tensors[s].storage == s && e->material[s] && e->dead[s] &&
            e->death[s] < e->no - 1)
            rc = log_ev(e, EV_DROP, s);
    return rc;
}

static int record_in(eng *e, mem_model *m, int64_t budget, plan **out, sw_err *e2)
{
    const graph_profile *g = e->g;
    plan_builder *b = pb_new(g, m, budget, g->max_workspace);
    if (!b)
        return SW_ENOMEM;
    for (int32_t s = 0; s < e->nt; s++)
        if (g->tensors[s].storage == s && g->tensors[s].persistent)
            pb_resident(b, s);
    for (size_t i = 0; i < e->nev; i++) {
        const dtr_ev *v = &e->ev[i];
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
    int rc = record_in(e, e->mem, e->budget + e->g->max_workspace, out, &e2);
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
    e.cur_op = -1;
    e.use_regions = cfg->heuristic == DH_DTR || cfg->heuristic == DH_MSPS;
    e.use_eq = cfg->heuristic == DH_EQ;
    e.budget = budget - g->max_workspace;
    e.clock = 1;
    if (e.budget <= 0)
        return sw_fail(err, SW_ENOFIT, "does not fit: the budget does not cover the largest op "
                       "workspace (%lld bytes)", (long long)g->max_workspace);
    int rc = setup(&e);
    if (!rc) {
        e.limit = cfg->overhead_cap > 0 ? (cfg->overhead_cap - 1) * (double)e.total_ticks : -1;
        e.mem = mem_address_new(e.budget, cfg->fit, cfg->align > 0 ? cfg->align : 1);
        e.rng = gsl_rng_alloc(gsl_rng_mt19937);
        if (!e.mem || !e.rng)
            rc = SW_ENOMEM;
        else
            gsl_rng_set(e.rng, (unsigned long)cfg->seed);
    }
    if (!rc)
        rc = run_ops(&e);
    st->compute_ns = e.total_ticks;
    st->remat_ns = e.remat_ticks;
    st->clock_ns = e.clock;
    st->overhead = e.total_ticks > 0 ? (double)e.clock / (double)e.total_ticks : 1;
    if (!rc && !cfg->no_plan)
        rc = cfg->bytes_only ? record_bytes(&e, out) : record(&e, out);
    if (rc == SW_ENOMEM)
        sw_fail(err, SW_ENOMEM, "out of memory");
    mem_destroy(e.mem);
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
