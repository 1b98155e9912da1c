/* sublinear.c: the `sublinear` planner: static checkpointing after Chen, Xu,
   Zhang and Guestrin, "Training Deep Nets with Sublinear Memory Cost"
   (2016), the static plan MegEngine compares DTR against.

   The forward ops, in the profile's order, are cut into segments. A
   storage a forward op makes is a checkpoint when a forward op of a later
   segment reads it: it stays resident. The activations of a segment that
   the backward pass reads (and the ones needed to recompute them) are
   dropped after their last forward use; just before the first op after the
   segment that reads one of them, the segment's forward ops that remake
   them are re-run in forward order from the checkpoints, and the
   recomputed storages are freed after their last use. The last segment is
   never dropped: the backward pass starts with it.

   Only storages whose producer can be re-run are dropped: made by a forward
   op that mutates nothing, neither they nor the op's other outputs mutated
   in the iteration, not persistent and not of kind input (what the DTR
   runtime never evicts), and every input the re-run reads still at the
   version the op first read; a producer that fails the last test has its
   outputs kept.

   Boundaries come from Chen's greedy walk: accumulate, op by op, the bytes
   the backward pass reads of what the forward ops make since the last
   boundary; once they reach a threshold B, cut. On a chain every layer
   is a candidate cut; on a DAG the cut goes at the boundary, among the
   last ones where at least B/2 had accumulated, across which the fewest
   bytes flow (a residual block's output rather than its inside). Mode
   `sqrt` takes B = total / round(sqrt(n)), n the forward ops making such
   activations (sqrt(n) segments on a chain); mode `budget` tries B = total
   / k for k = 1..n (one segment: nothing recomputed), each also with the
   longest kept tail (forward ops never dropped) that fits, and keeps the
   plan with the least recomputation whose memory fits the budget. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../sim/builder.h"
#include "lib/arena.h"
#include "lib/replay.h"
#include "lib/segments.h"
#include "planner.h"

#define NEVER INT32_MAX

static const param_def sublinear_params[] = {
    {"mode", PT_CHOICE, "sqrt", "sqrt: about sqrt(n) segments of equal activation bytes; "
     "budget: Chen's greedy threshold (and a kept tail of the forward pass) searched for the "
     "least recomputation whose plan fits the budget", "sqrt|budget", 1, 0},
    {"segments", PT_INT, "0", "sqrt mode: the number of segments to aim for (0: round(sqrt(n)), "
     "n the forward ops making activations the backward pass reads)", NULL, 0, 1e9},
    {"allocator", PT_CHOICE, "best-fit", "address allocator placing the plan",
     "first-fit|best-fit", 1, 0},
    {"alignment", PT_SIZE, "1", "placement alignment in bytes", NULL, 1, 1e9},
    PARAM_END};

/* the task sequence: lib/replay.h's events (run, rerun, drop, swap-in) */
enum { EV_RUN = REPLAY_RUN, EV_RERUN = REPLAY_RERUN, EV_DROP = REPLAY_DROP,
       EV_SWAPIN = REPLAY_SWAPIN };
typedef replay_ev sl_ev;

typedef struct sl_eval {
    int32_t segments;     /* segments the boundaries make */
    int32_t checkpoints;  /* storages kept across a boundary that could have been dropped */
    int64_t ckpt_bytes;   /* their bytes */
    int32_t reruns;       /* re-run ops */
    double recompute_s;   /* their time */
    int64_t peak;         /* resident bytes at the peak (without the workspace reserve) */
} sl_eval;

typedef struct sl {
    const graph_profile *g;
    int32_t no, nt, nf;
    /* the profile, once */
    int32_t *pos;      /* per op: its position in g->order */
    int32_t *fwd;      /* the forward ops in order (nf) */
    int32_t *fidx;     /* per op: its index in fwd, -1 if not forward */
    int32_t *pf;       /* per storage: fidx of its producer (a forward op) where elig could
                          hold, else -1 */
    uint8_t *elig;     /* per storage: its producer could re-run it */
    int32_t *lastfr;   /* per storage: fidx of its last forward reader, -1 if none */
    int32_t *late;     /* per storage: position of its first access by a non-forward op */
    int32_t *use_off, *use_pos; /* graph_lifetimes: each storage's access positions */
    int32_t *mut_off, *muts;    /* each storage's mutation positions, ascending */
    int64_t *prefix;   /* per fidx: bytes the backward pass reads made by fwd[0..i] */
    int64_t *cut;      /* per fidx i: eligible bytes made up to i and read by a forward op after */
    int32_t layers;    /* forward ops making such bytes */
    int32_t *runev;    /* per op: the event running it (scratch) */
    /* one evaluation */
    int32_t *splits;   /* boundaries: after fwd[splits[k]] */
    int32_t nsplit;
    int32_t *seg;      /* per fidx: segment */
    int32_t *seg_lo;   /* per segment: its first fidx */
    int32_t *seg_end;  /* per segment: position of its last forward op */
    int32_t *byT;      /* segments by recomputation position */
    int32_t *T;        /* per segment: position before which it is recomputed, NEVER */
    uint8_t *forced;   /* per storage: kept, its producer cannot re-run in time */
    uint8_t *dropped;  /* per storage: dropped after its forward use, recomputed */
    uint8_t *rerun;    /* per op: re-run */
    uint8_t *open;     /* per storage (scratch) */
    uint8_t *flag;     /* per storage (scratch) */
    int32_t *stk;      /* per op: work list, or per position: a cursor (scratch) */
    int32_t *cnt;      /* per position / event: CSR counts (scratch) */
    int32_t *list;     /* CSR payload (scratch) */
    int32_t *a1, *a2;  /* per storage (scratch) */
    sl_ev *ev, *ev2;   /* the task sequence; ev2: scratch for merging drops in */
    size_t nev, cap, cap2;
} sl;

static int32_t stor(const sl *c, int32_t t) { return c->g->tensors[t].storage; }

static int crossing(const sl *c, int32_t s)
{
    return c->lastfr[s] >= 0 && c->seg[c->lastfr[s]] > c->seg[c->pf[s]];
}

static void clear8(uint8_t *p, int32_t n)
{
    if (n > 0)
        memset(p, 0, (size_t)n);
}

#define ALLOC(p, n) ((p) = sw_calloc((size_t)(n) + 1, sizeof *(p)))

static void sl_free(sl *c)
{
    void *ptrs[] = {c->pos, c->fwd, c->fidx, c->pf, c->elig, c->lastfr, c->late, c->use_off,
                    c->use_pos, c->mut_off, c->muts, c->prefix, c->cut, c->runev, c->splits,
                    c->seg, c->seg_lo, c->seg_end, c->byT, c->flag, c->T, c->forced,
                    c->dropped, c->rerun, c->open, c->stk, c->cnt, c->list, c->a1, c->a2,
                    c->ev, c->ev2};
    for (size_t i = 0; i < SW_ARRAY_LEN(ptrs); i++)
        sw_free(ptrs[i]);
}

/* What the profile says once: forward ops, which storages could be dropped,
   their forward readers and first later use, the bytes per forward op and
   across each boundary. */
static int sl_setup(sl *c, const graph_profile *g)
{
    int32_t no = g->n_ops, nt = g->n_tensors, nacc = g->acc_off[no];
    c->g = g;
    c->no = no;
    c->nt = nt;
    int32_t nev_max = 2 * no + 2 * nt + 8; /* runs, reruns, a drop and swap-in per storage */
    if (!ALLOC(c->pos, no) || !ALLOC(c->fwd, no) || !ALLOC(c->fidx, no) || !ALLOC(c->pf, nt) ||
        !ALLOC(c->elig, nt) || !ALLOC(c->lastfr, nt) || !ALLOC(c->late, nt) ||
        !ALLOC(c->use_off, nt + 1) || !ALLOC(c->use_pos, nacc) || !ALLOC(c->mut_off, nt + 1) ||
        !ALLOC(c->prefix, no) || !ALLOC(c->cut, no + 1) || !ALLOC(c->runev, no) ||
        !ALLOC(c->splits, no) || !ALLOC(c->seg, no) || !ALLOC(c->seg_end, no + 1) ||
        !ALLOC(c->seg_lo, no + 1) || !ALLOC(c->byT, no + 1) || !ALLOC(c->flag, nt) ||
        !ALLOC(c->T, no + 1) || !ALLOC(c->forced, nt) || !ALLOC(c->dropped, nt) ||
        !ALLOC(c->rerun, no) || !ALLOC(c->open, nt) || !ALLOC(c->stk, no) ||
        !ALLOC(c->cnt, nev_max + no + nt + 2) || !ALLOC(c->list, nev_max + no + nt + 2) ||
        !ALLOC(c->a1, nt) || !ALLOC(c->a2, nt))
        return SW_ENOMEM;
    if (graph_lifetimes(g, g->order, c->pos, NULL, NULL, c->use_off, c->use_pos))
        return SW_EINVAL;
    c->nf = 0;
    for (int32_t i = 0; i < no; i++) {
        int32_t o = g->order[i];
        c->fidx[o] = -1;
        if (g->ops[o].phase == GP_FORWARD) {
            c->fidx[o] = c->nf;
            c->fwd[c->nf++] = o;
        }
    }
    /* mutation positions per storage */
    for (int32_t o = 0; o < no; o++)
        for (int32_t k = 0; k < g->ops[o].n_mut; k++)
            c->mut_off[stor(c, g->ops[o].mut[k])]++;
    if (graph_counts_to_offsets(c->mut_off, nt) || !ALLOC(c->muts, c->mut_off[nt]))
        return SW_ENOMEM;
    memset(c->a1, 0, ((size_t)nt + 1) * sizeof *c->a1);
    for (int32_t i = 0; i < no; i++) {
        int32_t o = g->order[i];
        for (int32_t k = 0; k < g->ops[o].n_mut; k++) {
            int32_t s = stor(c, g->ops[o].mut[k]);
            c->muts[c->mut_off[s] + c->a1[s]++] = i;
        }
    }
    for (int32_t s = 0; s < nt; s++) {
        const graph_tensor *x = &g->tensors[s];
        c->pf[s] = c->lastfr[s] = -1;
        c->late[s] = NEVER;
        if (x->storage != s || x->producer < 0 || x->persistent || x->kind == GK_INPUT ||
            g->n_mutations[s])
            continue;
        int32_t p = x->producer;
        if (g->ops[p].phase != GP_FORWARD)
            continue;
        c->pf[s] = c->fidx[p];
        int ok = g->ops[p].n_mut == 0;
        for (int32_t k = g->acc_off[p]; k < g->acc_off[p + 1] && ok; k++)
            if ((g->acc_flag[k] & GA_CREATE) && g->n_mutations[g->acc[k]])
                ok = 0;
        c->elig[s] = (uint8_t)ok;
    }
    for (int32_t i = 0; i < no; i++) {
        int32_t o = g->order[i];
        for (int32_t k = g->acc_off[o]; k < g->acc_off[o + 1]; k++) {
            int32_t s = g->acc[k];
            if (g->acc_flag[k] & GA_CREATE)
                continue;
            if (c->fidx[o] >= 0)
                c->lastfr[s] = c->fidx[o];
            else if (c->late[s] == NEVER)
                c->late[s] = i;
        }
    }
    /* bytes per forward op the backward pass reads, and across each boundary */
    int64_t *need = c->prefix;
    for (int32_t s = 0; s < nt; s++) {
        if (!c->elig[s])
            continue;
        int64_t b = g->tensors[s].bytes;
        if (c->late[s] != NEVER)
            need[c->pf[s]] += b;
        if (c->lastfr[s] > c->pf[s]) {
            c->cut[c->pf[s]] += b;
            c->cut[c->lastfr[s]] -= b;
        }
    }
    c->layers = 0;
    for (int32_t i = 0; i < c->nf; i++) {
        c->layers += need[i] > 0;
        if (i) {
            need[i] += need[i - 1];
            c->cut[i] += c->cut[i - 1];
        }
    }
    return 0;
}

/* Chen's greedy walk with threshold B: boundaries into c->splits. tail >= 0:
   the forward ops from fidx tail on form the last segment (kept), the walk
   covers the ones before; tail < 0: the last segment is what the walk
   leaves. */
static void sl_greedy(sl *c, double B, int32_t tail)
{
    int32_t end = tail >= 0 && tail < c->nf ? tail : c->nf;
    const int64_t *P = c->prefix;
    int64_t total = end ? P[end - 1] : 0, base = 0;
    int32_t last = -1;
    c->nsplit = 0;
    for (int32_t i = 0; i < end && P[i] < total; i++) {
        while (last < i && (double)(P[i] - base) >= B) {
            /* the last position reaching B/2 since the last boundary with the
               fewest bytes across it (the latest of equal ones) */
            int32_t best = i;
            for (int32_t j = i - 1; j > last && (double)(P[j] - base) >= B / 2; j--)
                if (c->cut[j] < c->cut[best])
                    best = j;
            c->splits[c->nsplit++] = best;
            last = best;
            base = P[best];
        }
    }
    if (end < c->nf && end > 0 && last != end - 1)
        c->splits[c->nsplit++] = end - 1;
}

/* Segments from the boundaries; the drop and recompute sets. Returns 1 if a
   producer had to be kept (call again), 0 when the sets are settled. */
static int sl_sets(sl *c, int32_t *nseg_out)
{
    const graph_profile *g = c->g;
    int32_t nseg = c->nsplit + 1;
    c->seg_lo[0] = 0;
    for (int32_t i = 0, j = 0; i < c->nf; i++) {
        c->seg[i] = j;
        c->seg_end[j] = c->pos[c->fwd[i]];
        if (j < c->nsplit && c->splits[j] == i)
            c->seg_lo[++j] = i + 1;
    }
    *nseg_out = nseg;
    for (int32_t j = 0; j < nseg; j++)
        c->T[j] = NEVER;
    clear8(c->dropped, c->nt);
    clear8(c->rerun, c->no);
    int32_t ns = 0;
    /* what the backward pass reads: dropped, the segment recomputed before the first read */
    for (int32_t s = 0; s < c->nt; s++) {
        if (!c->elig[s] || c->forced[s] || c->late[s] == NEVER || crossing(c, s))
            continue;
        int32_t j = c->seg[c->pf[s]];
        if (j == nseg - 1 || c->late[s] <= c->seg_end[j])
            continue;
        c->dropped[s] = 1;
        c->T[j] = SW_MIN(c->T[j], c->late[s]);
        int32_t p = g->tensors[s].producer;
        if (!c->rerun[p]) {
            c->rerun[p] = 1;
            c->stk[ns++] = p;
        }
    }
    /* what re-running them needs: the segment's droppable inputs, re-run too */
    while (ns) {
        int32_t p = c->stk[--ns], j = c->seg[c->fidx[p]];
        for (int32_t k = g->acc_off[p]; k < g->acc_off[p + 1]; k++) {
            int32_t q = g->acc[k];
            int local = c->elig[q] && !c->forced[q] && c->seg[c->pf[q]] == j && !crossing(c, q);
            if (g->acc_flag[k] & GA_CREATE) {
                if (local)
                    c->dropped[q] = 1; /* remade by the re-run: dropped before it */
                continue;
            }
            if (local) {
                c->dropped[q] = 1;
                int32_t r = g->tensors[q].producer;
                if (!c->rerun[r]) {
                    c->rerun[r] = 1;
                    c->stk[ns++] = r;
                }
                continue;
            }
            /* kept: still at the version p read when the segment is recomputed? */
            for (int32_t m = c->mut_off[q]; m < c->mut_off[q + 1]; m++) {
                if (c->muts[m] <= c->pos[p])
                    continue;
                if (c->muts[m] < c->T[j]) {
                    for (int32_t a = g->acc_off[p]; a < g->acc_off[p + 1]; a++)
                        if (g->acc_flag[a] & GA_CREATE)
                            c->forced[g->acc[a]] = 1;
                    return 1;
                }
                break;
            }
        }
    }
    return 0;
}

static int push(sl *c, int kind, int32_t x)
{
    if (SW_GROW(c->ev, c->cap, c->nev + 1))
        return SW_ENOMEM;
    c->ev[c->nev].kind = (uint8_t)kind;
    c->ev[c->nev].x = x;
    c->nev++;
    return 0;
}

/* The last position before `before` at which s is accessed. */
static int32_t last_use_before(const sl *c, int32_t s, int32_t before)
{
    int32_t r = -1;
    for (int32_t k = c->use_off[s]; k < c->use_off[s + 1] && c->use_pos[k] < before; k++)
        r = c->use_pos[k];
    return r;
}

/* The task sequence: the profile's order with each dropped storage dropped
   after its last use before its segment's recomputation, and the
   recomputations before their ops. */
static int sl_events(sl *c, int32_t nseg)
{
    const graph_profile *g = c->g;
    int32_t no = c->no, nt = c->nt;
    c->nev = 0;
    /* drops per position: CSR in cnt/list */
    int32_t *doff = c->cnt, *dl = c->list;
    memset(doff, 0, ((size_t)no + 2) * sizeof *doff);
    for (int32_t s = 0; s < nt; s++)
        if (c->dropped[s]) {
            int32_t at = last_use_before(c, s, c->T[c->seg[c->pf[s]]]);
            c->a1[s] = at;
            doff[at]++;
        }
    if (graph_counts_to_offsets(doff, no))
        return SW_ENOMEM;
    int32_t *fill = c->stk; /* per position cursor */
    memcpy(fill, doff, (size_t)no * sizeof *fill);
    for (int32_t s = 0; s < nt; s++)
        if (c->dropped[s])
            dl[fill[c->a1[s]]++] = s;
    clear8(c->open, nt);
    for (int32_t s = 0; s < nt; s++)
        if (g->tensors[s].storage == s && g->tensors[s].persistent)
            c->open[s] = 1;
    /* segments by recomputation position (segments in order for equal ones) */
    int32_t nxt = 0;
    int32_t *byT = c->byT; /* segment ids sorted by T, stable */
    for (int32_t j = 0; j < nseg; j++)
        byT[j] = j;
    for (int32_t a = 1; a < nseg; a++) { /* insertion sort: few segments out of order */
        int32_t x = byT[a], b = a;
        while (b > 0 && c->T[byT[b - 1]] > c->T[x]) {
            byT[b] = byT[b - 1];
            b--;
        }
        byT[b] = x;
    }
    for (int32_t i = 0; i < no; i++) {
        int32_t o = g->order[i];
        for (; nxt < nseg && c->T[byT[nxt]] == i; nxt++) {
            int32_t j = byT[nxt];
            for (int32_t f = c->seg_lo[j]; f < c->nf && c->seg[f] == j; f++) {
                if (!c->rerun[c->fwd[f]])
                    continue;
                if (push(c, EV_RERUN, c->fwd[f]))
                    return SW_ENOMEM;
                for (int32_t k = g->acc_off[c->fwd[f]]; k < g->acc_off[c->fwd[f] + 1]; k++)
                    if (g->acc_flag[k] & GA_CREATE)
                        c->open[g->acc[k]] = 1;
            }
        }
        for (int32_t k = g->acc_off[o]; k < g->acc_off[o + 1]; k++) {
            int32_t s = g->acc[k];
            if ((g->acc_flag[k] & GA_CREATE) || c->open[s])
                continue;
            if (!graph_storage_external(g, s))
                return SW_EINVAL; /* a dropped storage read before its recomputation */
            c->open[s] = 1;
            if (push(c, EV_SWAPIN, s))
                return SW_ENOMEM;
        }
        for (int32_t k = g->acc_off[o]; k < g->acc_off[o + 1]; k++)
            if (g->acc_flag[k] & GA_CREATE)
                c->open[g->acc[k]] = 1;
        if (push(c, EV_RUN, o))
            return SW_ENOMEM;
        for (int32_t k = doff[i]; k < doff[i + 1]; k++) {
            c->open[dl[k]] = 0;
            if (push(c, EV_DROP, dl[k]))
                return SW_ENOMEM;
        }
    }
    return 0;
}

/* A re-run remakes only the outputs that are not resident; the plan builder
   frees a storage after its last use, so a kept output of a re-run op whose
   last use came before the re-run (a checkpoint read by nothing later, an
   output nothing reads) would be gone without being remade. Drop each such
   storage explicitly after its last use before the re-run, so the re-run
   places it again. */
static int sl_fixup(sl *c)
{
    const graph_profile *g = c->g;
    int32_t nt = c->nt;
    size_t E = c->nev;
    /* forward: the re-run (at most one per storage) that finds its output
       still open, so the builder would not place it */
    int32_t *skipev = c->a2, *ins = c->a1;
    clear8(c->open, nt);
    for (int32_t s = 0; s < nt; s++) {
        skipev[s] = ins[s] = -1;
        if (g->tensors[s].storage == s && g->tensors[s].persistent)
            c->open[s] = 1;
    }
    for (int32_t o = 0; o < c->no; o++)
        c->runev[o] = -1;
    size_t nskip = 0;
    for (size_t e = 0; e < E; e++) {
        const sl_ev *v = &c->ev[e];
        if (v->kind == EV_RUN || v->kind == EV_RERUN) {
            if (v->kind == EV_RUN)
                c->runev[v->x] = (int32_t)e;
            for (int32_t k = g->acc_off[v->x]; k < g->acc_off[v->x + 1]; k++)
                if (g->acc_flag[k] & GA_CREATE) {
                    if (c->open[g->acc[k]] && v->kind == EV_RERUN) {
                        skipev[g->acc[k]] = (int32_t)e;
                        nskip++;
                    }
                    c->open[g->acc[k]] = 1;
                }
        } else {
            c->open[v->x] = v->kind == EV_SWAPIN;
        }
    }
    if (!nskip)
        return 0;
    /* backward: alive[s]: the residency of s open here goes on past this
       event (a later read, or an explicit drop); pending[s]: s is to be
       dropped after the previous event touching it */
    uint8_t *alive = c->open, *pending = c->flag;
    clear8(alive, nt);
    clear8(pending, nt);
    size_t nins = 0;
    for (size_t e = E; e-- > 0;) {
        const sl_ev *v = &c->ev[e];
        int32_t ei = (int32_t)e;
        if (v->kind == EV_DROP) {
            alive[v->x] = 1;
            continue;
        }
        if (v->kind == EV_SWAPIN) {
            if (pending[v->x]) {
                ins[v->x] = ei;
                pending[v->x] = 0;
                nins++;
            }
            alive[v->x] = 0;
            continue;
        }
        int32_t o = v->x;
        for (int32_t k = g->acc_off[o]; k < g->acc_off[o + 1]; k++) {
            int32_t s = g->acc[k];
            if (!(g->acc_flag[k] & GA_CREATE))
                continue;
            if (skipev[s] == ei) {
                int32_t h = g->tensors[s].held_until;
                if (!alive[s] && !(h >= 0 && c->runev[h] > ei)) {
                    pending[s] = 1; /* freed before this re-run: drop it, remade here */
                    alive[s] = 1;
                }
                continue; /* the residency reaches back before this event */
            }
            if (pending[s]) { /* placed here: dropped right after */
                ins[s] = ei;
                pending[s] = 0;
                nins++;
            }
            alive[s] = 0;
        }
        for (int32_t k = g->acc_off[o]; k < g->acc_off[o + 1]; k++) {
            int32_t s = g->acc[k];
            if (g->acc_flag[k] & GA_CREATE)
                continue;
            if (pending[s]) {
                ins[s] = ei;
                pending[s] = 0;
                nins++;
            }
            alive[s] = 1;
        }
    }
    if (!nins)
        return 0;
    /* merge the drops in: after event ins[s], in storage order */
    int32_t *off = c->cnt;
    memset(off, 0, (E + 2) * sizeof *off);
    for (int32_t s = 0; s < nt; s++)
        if (ins[s] >= 0)
            off[ins[s]]++;
    if (graph_counts_to_offsets(off, (int32_t)E))
        return SW_ENOMEM;
    if (SW_GROW(c->ev2, c->cap2, E + nins + 1))
        return SW_ENOMEM;
    int32_t *dl = c->list;
    for (int32_t s = 0; s < nt; s++)
        if (ins[s] >= 0)
            dl[off[ins[s]]++] = s;
    /* off[e] now ends event e's drops; they begin where event e - 1's end */
    size_t n = 0;
    for (size_t e = 0; e < E; e++) {
        c->ev2[n++] = c->ev[e];
        for (int32_t k = e ? off[e - 1] : 0; k < off[e]; k++) {
            c->ev2[n].kind = EV_DROP;
            c->ev2[n++].x = dl[k];
        }
    }
    sl_ev *t = c->ev;
    c->ev = c->ev2;
    c->ev2 = t;
    size_t tc = c->cap;
    c->cap = c->cap2;
    c->cap2 = tc;
    c->nev = n;
    return 0;
}

/* The memory the plan builder gives the task sequence (placements at a
   task's start, explicit drops, implicit frees at each final residency's
   death) and the recomputation. */
static void sl_account(sl *c, sl_eval *r)
{
    const graph_profile *g = c->g;
    int32_t nt = c->nt;
    size_t E = c->nev;
    int32_t *place = c->a1, *lastu = c->a2;
    clear8(c->open, nt);
    int64_t cur = 0;
    for (int32_t s = 0; s < nt; s++) {
        place[s] = lastu[s] = -1;
        if (g->tensors[s].storage == s && g->tensors[s].persistent) {
            c->open[s] = 1;
            cur += g->tensors[s].bytes;
        }
    }
    for (int32_t o = 0; o < c->no; o++)
        c->runev[o] = -1;
    r->reruns = 0;
    r->recompute_s = 0;
    for (size_t e = 0; e < E; e++) {
        const sl_ev *v = &c->ev[e];
        int32_t ei = (int32_t)e;
        if (v->kind == EV_DROP) {
            c->open[v->x] = 0;
        } else if (v->kind == EV_SWAPIN) {
            c->open[v->x] = 1;
            place[v->x] = ei;
            lastu[v->x] = -1;
        } else {
            int32_t o = v->x;
            if (v->kind == EV_RUN)
                c->runev[o] = ei;
            else {
                r->reruns++;
                r->recompute_s += g->ops[o].time_s;
            }
            for (int32_t k = g->acc_off[o]; k < g->acc_off[o + 1]; k++) {
                int32_t s = g->acc[k];
                if (!(g->acc_flag[k] & GA_CREATE))
                    lastu[s] = ei;
                else if (!c->open[s]) {
                    c->open[s] = 1;
                    place[s] = ei;
                    lastu[s] = -1;
                }
            }
        }
    }
    /* deaths of the residencies open at the end, per event */
    int32_t *off = c->cnt, *dl = c->list;
    memset(off, 0, (E + 2) * sizeof *off);
    for (int32_t s = 0; s < nt; s++) {
        if (!c->open[s] || g->tensors[s].persistent)
            continue;
        int32_t h = g->tensors[s].held_until;
        int32_t at = graph_death_at(lastu[s] >= 0 ? lastu[s] : place[s], h >= 0 ? c->runev[h] : -1);
        place[s] = at; /* reused: the event after which it is freed */
        if (at >= 0)
            off[at]++;
    }
    graph_counts_to_offsets(off, (int32_t)E);
    for (int32_t s = 0; s < nt; s++)
        if (c->open[s] && !g->tensors[s].persistent && place[s] >= 0)
            dl[off[place[s]]++] = s;
    /* off[e] ends event e's frees */
    clear8(c->open, nt);
    for (int32_t s = 0; s < nt; s++)
        if (g->tensors[s].storage == s && g->tensors[s].persistent)
            c->open[s] = 1;
    int64_t peak = cur;
    for (size_t e = 0; e < E; e++) {
        const sl_ev *v = &c->ev[e];
        if (v->kind == EV_DROP) {
            c->open[v->x] = 0;
            cur -= g->tensors[v->x].bytes;
            continue;
        }
        if (v->kind == EV_SWAPIN) {
            c->open[v->x] = 1;
            cur += g->tensors[v->x].bytes;
        } else {
            for (int32_t k = g->acc_off[v->x]; k < g->acc_off[v->x + 1]; k++) {
                int32_t s = g->acc[k];
                if ((g->acc_flag[k] & GA_CREATE) && !c->open[s]) {
                    c->open[s] = 1;
                    cur += g->tensors[s].bytes;
                }
            }
        }
        peak = SW_MAX(peak, cur);
        for (int32_t k = e ? off[e - 1] : 0; k < off[e]; k++) {
            cur -= g->tensors[dl[k]].bytes;
            c->open[dl[k]] = 0;
        }
    }
    r->peak = peak;
}

/* Plan with threshold B (and tail, as sl_greedy): boundaries, sets, task
   sequence, and its figures. */
static int sl_evaluate_splits(sl *c, sl_eval *r);

static int sl_evaluate(sl *c, double B, int32_t tail, sl_eval *r)
{
    sl_greedy(c, B, tail);
    return sl_evaluate_splits(c, r);
}

/* sl_evaluate with the boundaries already in c->splits. */
static int sl_evaluate_splits(sl *c, sl_eval *r)
{
    clear8(c->forced, c->nt);
    int32_t nseg;
    while (sl_sets(c, &nseg))
        ;
    memset(r, 0, sizeof *r);
    r->segments = nseg;
    for (int32_t s = 0; s < c->nt; s++)
        if (c->elig[s] && !c->forced[s] && crossing(c, s)) {
            r->checkpoints++;
            r->ckpt_bytes += c->g->tensors[s].bytes;
        }
    int rc = sl_events(c, nseg);
    if (!rc)
        rc = sl_fixup(c);
    if (!rc)
        sl_account(c, r);
    return rc;
}

/* Record the task sequence into a plan placed in the budget. */
static int sl_build(const sl *c, const planner_opts *o, plan **out, sw_err *err)
{
    const graph_profile *g = c->g;
    plan_builder *b = arena_builder(g, o, NULL);
    if (!b)
        return sw_fail(err, SW_ENOMEM, "out of memory");
    int rc = replay_record(b, c->ev, c->nev, out, err);
    pb_free(b);
    return rc;
}

static double threshold(const sl *c, int32_t k)
{
    int64_t total = c->nf ? c->prefix[c->nf - 1] : 0;
    return k <= 1 ? (double)total : (double)total / (double)k;
}

static void note(plan *p, const char *mode, const sl_eval *r)
{
    sw_buf b;
    sw_buf_init(&b);
    sw_buf_printf(&b, "%s: %d segments, %d checkpoints (%lld bytes), %d reruns "
                  "(recompute %.6f s), peak %lld bytes of tensors", mode, r->segments,
                  r->checkpoints, (long long)r->ckpt_bytes, r->reruns, r->recompute_s,
                  (long long)r->peak);
    p->notes = b.oom ? NULL : sw_strdup(b.data);
    sw_buf_free(&b);
}

/* sw_fail for a plan that does not fit: the memory reached, the budget. */
static int no_fit(sw_err *err, const char *what, int64_t need, int64_t budget)
{
    char h1[32], h2[32];
    return sw_fail(err, SW_ENOFIT, "does not fit: %s needs %s (%lld bytes, the largest "
                   "workspace included), budget %s (%lld bytes)", what,
                   sw_fmt_bytes(need, h1, sizeof h1), (long long)need,
                   sw_fmt_bytes(budget, h2, sizeof h2), (long long)budget);
}

/* A build that failed on placement although the bytes fit: say so. */
static int frag_fail(sw_err *err, const sw_err *e2, const char *what, int64_t need,
                     int64_t budget, const char *alloc)
{
    char h1[32], h2[32];
    const char *why = e2->msg;
    if (!strncmp(why, "does not fit: ", 14))
        why += 14;
    return sw_fail(err, SW_ENOFIT, "does not fit: %s needs %s (%lld bytes) and the budget is %s, "
                   "but the %s allocator fragments memory (%s)", what,
                   sw_fmt_bytes(need, h1, sizeof h1), (long long)need,
                   sw_fmt_bytes(budget, h2, sizeof h2), alloc, why);
}

typedef struct sl_cand {
    int32_t k;    /* threshold total / k */
    int32_t tail; /* sl_greedy's tail */
    sl_eval r;
} sl_cand;

/* The budget search's state: the plans that fit, the least memory seen. */
typedef struct sl_search {
    sl_cand *cand;
    size_t n, cap;
    int64_t arena;
    int64_t least;       /* least peak seen */
    int32_t least_segs;  /* its segments */
} sl_search;

/* Evaluate (k, tail); keep it if it fits. *fits: whether it did. */
static int consider(sl *c, sl_search *q, int32_t k, int32_t tail, int *fits)
{
    sl_eval r;
    int rc = sl_evaluate(c, threshold(c, k), tail, &r);
    if (rc)
        return rc;
    if (r.peak < q->least) {
        q->least = r.peak;
        q->least_segs = r.segments;
    }
    *fits = r.peak <= q->arena;
    if (!*fits)
        return 0;
    if (SW_GROW(q->cand, q->cap, q->n + 1))
        return SW_ENOMEM;
    q->cand[q->n].k = k;
    q->cand[q->n].tail = tail;
    q->cand[q->n++].r = r;
    return 0;
}

static int cand_cmp(const void *a, const void *b)
{
    const sl_cand *x = a, *y = b;
    if (x->r.recompute_s != y->r.recompute_s)
        return x->r.recompute_s < y->r.recompute_s ? -1 : 1;
    if (x->r.peak != y->r.peak)
        return x->r.peak < y->r.peak ? -1 : 1;
    if (x->k != y->k)
        return x->k < y->k ? -1 : 1;
    return x->tail < y->tail ? -1 : x->tail > y->tail;
}

static int plan_sublinear(const graph_profile *g, const planner_opts *o, plan **out, sw_err *err)
{
    const param_set *ps = &o->params;
    int budget_mode = !strcmp(params_str(ps, "mode"), "budget");
    int64_t want = params_int(ps, "segments");
    if (budget_mode && params_is_set(ps, "segments"))
        return sw_fail(err, SW_EINVAL, "sublinear: segments is for mode=sqrt (mode=budget "
                       "searches the threshold)");
    int64_t arena = o->memory_budget - g->max_workspace;
    if (arena <= 0)
        return sw_fail(err, SW_ENOFIT, "does not fit: the budget does not cover the largest op "
                       "workspace (%lld bytes)", (long long)g->max_workspace);
    sl c;
    memset(&c, 0, sizeof c);
    sl_cand *cand = NULL;
    int rc = sl_setup(&c, g);
    if (rc) {
        sl_free(&c);
        return rc == SW_ENOMEM ? sw_fail(err, rc, "out of memory")
                               : sw_fail(err, rc, "sublinear: the profile's order is not a "
                                         "permutation of its ops");
    }
    sl_eval r;
    const char *alloc = params_str(ps, "allocator");
    if (!budget_mode) {
        int32_t k = want > 0 ? (int32_t)SW_MIN(want, INT32_MAX)
                             : (int32_t)lround(sqrt((double)c.layers));
        rc = sl_evaluate(&c, threshold(&c, k), -1, &r);
        if (rc)
            goto internal;
        char what[96];
        snprintf(what, sizeof what, "sublinear checkpointing (sqrt, %d segments)", r.segments);
        if (r.peak > arena) {
            rc = no_fit(err, what, r.peak + g->max_workspace, o->memory_budget);
            goto done;
        }
        sw_err e2;
        rc = sl_build(&c, o, out, &e2);
        if (rc == SW_ENOFIT)
            rc = frag_fail(err, &e2, what, r.peak + g->max_workspace, o->memory_budget, alloc);
        else if (rc && err)
            *err = e2;
        if (!rc)
            note(*out, "sublinear (sqrt)", &r);
        goto done;
    }
    /* budget: thresholds total / k, every k up to 64 segments, then 1 in 64
       (k = 1: one segment, nothing dropped); for each, the walk's own last
       segment, and the longest kept tail that fits (binary search: a longer
       tail holds more at the backward pass's start and recomputes less; with
       k = 1, one recomputed segment before the tail) */
    sl_search q = {NULL, 0, 0, arena, INT64_MAX, 1};
    int32_t kmax = SW_MAX(c.layers, 1);
    for (int32_t k = 1; k <= kmax && !rc; k += 1 + k / 64) {
        int fits;
        rc = consider(&c, &q, k, -1, &fits);
        if (rc || c.nf < 2)
            continue;
        int32_t lo = 1, hi = c.nf - 1; /* tail = fidx where the kept tail starts */
        rc = consider(&c, &q, k, hi, &fits);
        while (!rc && fits && lo < hi) {
            int32_t mid = lo + (hi - lo) / 2;
            int ok;
            rc = consider(&c, &q, k, mid, &ok);
            if (ok)
                hi = mid;
            else
                lo = mid + 1;
        }
    }
    cand = q.cand;
    if (rc)
        goto internal;
    if (!q.n) {
        char what[96];
        snprintf(what, sizeof what, "sublinear checkpointing at its least memory (%d segments)",
                 q.least_segs);
        rc = no_fit(err, what, q.least + g->max_workspace, o->memory_budget);
        goto done;
    }
    qsort(cand, q.n, sizeof *cand, cand_cmp);
    sw_err e2;
    rc = SW_ENOFIT;
    for (size_t i = 0; i < q.n && rc == SW_ENOFIT; i++) {
        rc = sl_evaluate(&c, threshold(&c, cand[i].k), cand[i].tail, &r);
        if (rc)
            goto internal;
        rc = sl_build(&c, o, out, &e2);
    }
    if (rc == SW_ENOFIT)
        rc = frag_fail(err, &e2, "sublinear checkpointing at its least memory", q.least +
                       g->max_workspace, o->memory_budget, alloc);
    else if (rc && err)
        *err = e2;
    if (!rc)
        note(*out, "sublinear (budget)", &r);
    goto done;
internal:
    rc = rc == SW_ENOMEM ? sw_fail(err, rc, "out of memory")
                         : sw_fail(err, rc, "sublinear: a dropped storage is read before its "
                                   "recomputation (a bug)");
done:
    sw_free(cand);
    sl_free(&c);
    return rc;
}

int sublinear_plan_cuts(const graph_profile *g, const planner_opts *o, const uint8_t *cut_after,
                        const char *who, plan **out, sw_err *err)
{
    int64_t arena = o->memory_budget - g->max_workspace;
    if (arena <= 0)
        return sw_fail(err, SW_ENOFIT, "does not fit: the budget does not cover the largest op "
                       "workspace (%lld bytes)", (long long)g->max_workspace);
    sl c;
    memset(&c, 0, sizeof c);
    int rc = sl_setup(&c, g);
    if (rc) {
        sl_free(&c);
        return rc == SW_ENOMEM ? sw_fail(err, rc, "out of memory")
                               : sw_fail(err, rc, "%s: the profile's order is not a permutation "
                                         "of its ops", who);
    }
    c.nsplit = 0;
    for (int32_t i = 0; i + 1 < c.nf; i++)
        if (cut_after[c.fwd[i]])
            c.splits[c.nsplit++] = i;
    sl_eval r;
    rc = sl_evaluate_splits(&c, &r);
    if (rc) {
        rc = rc == SW_ENOMEM ? sw_fail(err, rc, "out of memory")
                             : sw_fail(err, rc, "%s: a dropped storage is read before its "
                                       "recomputation (a bug)", who);
    } else {
        int64_t pers = 0;
        for (int32_t t = 0; t < g->n_tensors; t++)
            if (g->tensors[t].storage == t && g->tensors[t].persistent)
                pers += g->tensors[t].bytes;
        char what[200], hp[32];
        snprintf(what, sizeof what, "%s (%d segments: %d checkpoints of %lld bytes, %s "
                 "persistent)", who, r.segments, r.checkpoints, (long long)r.ckpt_bytes,
                 sw_fmt_bytes(pers, hp, sizeof hp));
        if (r.peak > arena) {
            rc = no_fit(err, what, r.peak + g->max_workspace, o->memory_budget);
        } else {
            sw_err e2;
            rc = sl_build(&c, o, out, &e2);
            if (rc == SW_ENOFIT)
                rc = frag_fail(err, &e2, what, r.peak + g->max_workspace, o->memory_budget,
                               params_str(&o->params, "allocator"));
            else if (rc && err)
                *err = e2;
            if (!rc)
                note(*out, who, &r);
        }
    }
    sl_free(&c);
    return rc;
}

const planner planner_sublinear = {1, "sublinear", "static checkpointing (Chen et al. 2016): "
                                   "keep segment boundaries, drop the rest in the forward pass, "
                                   "recompute each segment before its backward; sqrt(n) "
                                   "segments or a threshold searched to fit the budget",
                                   sublinear_params, plan_sublinear, 0};
