/* schedule.c: operators on schedules (schedule.h): SwapAdvisor's crossover
   and dataflow mutation, ours (runs, the cone move, one move), and the
   readings of the paper's search (MXNet's DFS order, k picks, the
   Karzanov-Khachiyan shuffle). Moved here from swapadvisor.c so that
   optimal_swap.c uses them without including a peer planner. */
#include "schedule.h"

#include <gsl/gsl_randist.h>
#include <string.h>

#include "../../common/sw.h"
#include "../../common/heap.h"

void sa_schedule_crossover(const int32_t *s1, const int32_t *s2, int32_t n, int32_t cr,
                           int32_t *c1, int32_t *c2, uint8_t *mark)
{
    const int32_t *first[2] = {s2, s1}, *rest[2] = {s1, s2};
    int32_t *out[2] = {c1, c2};
    for (int k = 0; k < 2; k++) {
        memset(mark, 0, (size_t)n);
        int32_t m = 0;
        for (int32_t i = 0; i < cr; i++) {
            out[k][m++] = first[k][i];
            mark[first[k][i]] = 1;
        }
        for (int32_t i = 0; i < n; i++)
            if (!mark[rest[k][i]])
                out[k][m++] = rest[k][i];
    }
}

struct sa_sched_scratch {
    int32_t n;
    int32_t *indeg, *pos;   /* in-degree; position in the input schedule */
    int32_t *heap;          /* ready nodes' positions in the input schedule, a min-heap */
    int32_t hn;
    /* the run-following mutations (sa_schedule_mutate_runs) */
    uint8_t *ready;         /* per op: in the heap */
    int32_t *user_off, *user; /* per storage: the ops touching it (CSR) */
    int64_t *score;         /* per op: bytes shared with the last op issued (0 between uses) */
    int32_t *cand;          /* candidates with a score, n entries */
};

sa_sched_scratch *sa_sched_scratch_new(const graph_profile *g)
{
    sa_sched_scratch *s = sw_calloc(1, sizeof *s);
    if (!s)
        return NULL;
    size_t n = (size_t)g->n_ops + 1;
    s->n = g->n_ops;
    s->indeg = sw_malloc(n * sizeof(int32_t));
    s->pos = sw_malloc(n * sizeof(int32_t));
    s->heap = sw_malloc(n * sizeof(int32_t));
    s->ready = sw_calloc(n, 1);
    s->score = sw_calloc(n, sizeof(int64_t));
    s->cand = sw_malloc(n * sizeof(int32_t));
    s->user_off = sw_calloc((size_t)g->n_tensors + 1, sizeof(int32_t));
    s->user = sw_malloc(((size_t)g->acc_off[g->n_ops] + 1) * sizeof(int32_t));
    if (!s->indeg || !s->pos || !s->heap || !s->ready || !s->score || !s->cand || !s->user_off ||
        !s->user) {
        sa_sched_scratch_free(s);
        return NULL;
    }
    /* storage -> ops touching it, ops in id order */
    for (int32_t k = 0; k < g->acc_off[g->n_ops]; k++)
        s->user_off[g->acc[k] + 1]++;
    for (int32_t t = 0; t < g->n_tensors; t++)
        s->user_off[t + 1] += s->user_off[t];
    for (int32_t o = 0; o < g->n_ops; o++)
        for (int32_t k = g->acc_off[o]; k < g->acc_off[o + 1]; k++)
            s->user[s->user_off[g->acc[k]]++] = o;
    for (int32_t t = g->n_tensors; t > 0; t--)
        s->user_off[t] = s->user_off[t - 1];
    s->user_off[0] = 0;
    return s;
}

void sa_sched_scratch_free(sa_sched_scratch *s)
{
    if (!s)
        return;
    sw_free(s->indeg);
    sw_free(s->pos);
    sw_free(s->heap);
    sw_free(s->ready);
    sw_free(s->score);
    sw_free(s->cand);
    sw_free(s->user_off);
    sw_free(s->user);
    sw_free(s);
}

/* The ready set is a min-heap of positions in the input schedule (unique,
   so no ties; common/heap.h); the node at position q is in[q]. */
static void hpush(sa_sched_scratch *s, int32_t q)
{
    sw_heap h = {s->heap, s->hn};
    sw_heap_push(&h, q);
    s->hn = h.n;
}

/* remove the heap's element i; returns its position */
static int32_t hremove(sa_sched_scratch *s, int32_t i)
{
    sw_heap h = {s->heap, s->hn};
    int32_t q = sw_heap_remove_at(&h, i);
    s->hn = h.n;
    return q;
}

void sa_schedule_mutate(const graph_profile *g, sa_sched_scratch *s, const int32_t *in, double p,
                        gsl_rng *r, int32_t *out)
{
    int32_t n = g->n_ops;
    for (int32_t i = 0; i < n; i++)
        s->pos[in[i]] = i;
    s->hn = 0;
    for (int32_t o = 0; o < n; o++) {
        s->indeg[o] = g->pred_off[o + 1] - g->pred_off[o];
        if (!s->indeg[o])
            hpush(s, s->pos[o]);
    }
    for (int32_t k = 0; k < n; k++) {
        int32_t pick = 0; /* the ready node earliest in the input schedule */
        if (p > 0 && s->hn > 1 && gsl_rng_uniform(r) < p)
            pick = (int32_t)gsl_rng_uniform_int(r, (unsigned long)s->hn);
        int32_t v = in[hremove(s, pick)];
        out[k] = v;
        for (int32_t e = g->succ_off[v]; e < g->succ_off[v + 1]; e++)
            if (--s->indeg[g->succ[e]] == 0)
                hpush(s, s->pos[g->succ[e]]);
    }
}

/* the op to follow `last` with in a run, or -1: SA_RUN_CHAIN, a uniformly
   drawn ready successor of last; SA_RUN_REUSE, the ready op sharing the most
   storage bytes with last (ties: the earliest in the input schedule) */
static int32_t run_next(const graph_profile *g, sa_sched_scratch *s, int32_t last, int mode,
                        gsl_rng *r)
{
    int32_t nc = 0;
    if (mode == SA_RUN_CHAIN) {
        for (int32_t e = g->succ_off[last]; e < g->succ_off[last + 1]; e++)
            if (s->ready[g->succ[e]])
                s->cand[nc++] = g->succ[e];
        return nc ? s->cand[nc > 1 ? gsl_rng_uniform_int(r, (unsigned long)nc) : 0] : -1;
    }
    for (int32_t k = g->acc_off[last]; k < g->acc_off[last + 1]; k++) {
        int32_t st = g->acc[k];
        for (int32_t e = s->user_off[st]; e < s->user_off[st + 1]; e++) {
            int32_t u = s->user[e];
            if (!s->ready[u])
                continue;
            if (!s->score[u])
                s->cand[nc++] = u;
            s->score[u] += g->bytes[st] > 0 ? g->bytes[st] : 1;
        }
    }
    int32_t best = -1;
    for (int32_t i = 0; i < nc; i++) {
        int32_t u = s->cand[i];
        if (best < 0 || s->score[u] > s->score[best] ||
            (s->score[u] == s->score[best] && s->pos[u] < s->pos[best]))
            best = u;
    }
    for (int32_t i = 0; i < nc; i++)
        s->score[s->cand[i]] = 0;
    return best;
}

int sa_schedule_mutate_runs(const graph_profile *g, sa_sched_scratch *s, const int32_t *in,
                            double p, double mean_run, int mode, gsl_rng *r, int32_t *out)
{
    int32_t n = g->n_ops, last = -1, moved = 0;
    long run = 0;
    for (int32_t i = 0; i < n; i++)
        s->pos[in[i]] = i;
    s->hn = 0;
    for (int32_t o = 0; o < n; o++) {
        s->indeg[o] = g->pred_off[o + 1] - g->pred_off[o];
        s->ready[o] = 0;
        if (!s->indeg[o]) {
            hpush(s, s->pos[o]);
            s->ready[o] = 1;
        }
    }
    for (int32_t k = 0; k < n; k++) {
        int32_t v = -1, hi = 0;
        if (run > 0 && s->hn > 1) {
            v = run_next(g, s, last, mode, r);
            run = v < 0 ? 0 : run - 1;
        }
        if (v >= 0) {
            while (s->heap[hi] != s->pos[v])
                hi++;
        } else if (p > 0 && s->hn > 1 && gsl_rng_uniform(r) < p) {
            hi = (int32_t)gsl_rng_uniform_int(r, (unsigned long)s->hn);
            run = mean_run > 1 ? (long)gsl_ran_geometric(r, 1.0 / mean_run) : 1;
        }
        v = in[hremove(s, hi)];
        s->ready[v] = 0;
        moved += v != in[k];
        out[k] = v;
        last = v;
        for (int32_t e = g->succ_off[v]; e < g->succ_off[v + 1]; e++)
            if (--s->indeg[g->succ[e]] == 0) {
                hpush(s, s->pos[g->succ[e]]);
                s->ready[g->succ[e]] = 1;
            }
    }
    return moved;
}

int32_t sa_schedule_cone(const graph_profile *g, sa_sched_scratch *s, const int32_t *in,
                         int32_t v, int sink, int32_t *out)
{
    int32_t n = g->n_ops, nq = 0, m = 0, k = 0;
    const int32_t *off = sink ? g->succ_off : g->pred_off, *adj = sink ? g->succ : g->pred;
    uint8_t *mark = s->ready;
    memset(mark, 0, (size_t)n);
    mark[v] = 1;
    s->cand[nq++] = v;
    while (k < nq) { /* breadth-first over predecessors (successors) */
        int32_t u = s->cand[k++];
        for (int32_t e = off[u]; e < off[u + 1]; e++)
            if (!mark[adj[e]]) {
                mark[adj[e]] = 1;
                s->cand[nq++] = adj[e];
            }
    }
    /* hoist: the cone first, then the rest; sink: the rest, then the cone;
       each part in the input's order */
    for (int pass = 0; pass < 2; pass++) {
        uint8_t want = (uint8_t)(pass == sink ? 1 : 0);
        for (int32_t i = 0; i < n; i++)
            if (mark[in[i]] == want)
                out[m++] = in[i];
    }
    return nq;
}

int sa_schedule_move_one(const graph_profile *g, sa_sched_scratch *s, const int32_t *in,
                         gsl_rng *r, int32_t *out)
{
    int32_t n = g->n_ops, nm = 0;
    memcpy(out, in, (size_t)n * sizeof *out);
    for (int32_t i = 0; i < n; i++)
        s->pos[in[i]] = i;
    /* legal positions of v: after its last predecessor, before its first
       successor (positions in `in`, v itself still there) */
    for (int32_t v = 0; v < n; v++) {
        int32_t lo = 0, hi = n - 1;
        for (int32_t e = g->pred_off[v]; e < g->pred_off[v + 1]; e++)
            lo = SW_MAX(lo, s->pos[g->pred[e]] + 1);
        for (int32_t e = g->succ_off[v]; e < g->succ_off[v + 1]; e++)
            hi = SW_MIN(hi, s->pos[g->succ[e]] - 1);
        if (hi > lo)
            s->heap[nm++] = v; /* movable: another legal position exists */
    }
    if (!nm)
        return 0;
    int32_t v = s->heap[gsl_rng_uniform_int(r, (unsigned long)nm)], i = s->pos[v];
    int32_t lo = 0, hi = n - 1;
    for (int32_t e = g->pred_off[v]; e < g->pred_off[v + 1]; e++)
        lo = SW_MAX(lo, s->pos[g->pred[e]] + 1);
    for (int32_t e = g->succ_off[v]; e < g->succ_off[v + 1]; e++)
        hi = SW_MIN(hi, s->pos[g->succ[e]] - 1);
    int32_t j = lo + (int32_t)gsl_rng_uniform_int(r, (unsigned long)(hi - lo));
    if (j >= i)
        j++; /* uniform over [lo, hi] without i */
    if (j > i)
        memmove(out + i, out + i + 1, (size_t)(j - i) * sizeof *out);
    else
        memmove(out + j + 1, out + j, (size_t)(i - j) * sizeof *out);
    out[j] = v;
    return 1;
}

int32_t *sa_dfs_order(const graph_profile *g)
{
    int32_t n = g->n_ops, m = 0, sp = 0;
    int32_t *out = sw_malloc(((size_t)n + 1) * sizeof *out);
    int32_t *st = sw_malloc(((size_t)n + 1) * sizeof *st), *it = sw_malloc(((size_t)n + 1) * sizeof *it);
    uint8_t *seen = sw_calloc((size_t)n + 1, 1);
    if (!out || !st || !it || !seen) {
        sw_free(out);
        out = NULL;
        goto done;
    }
    for (int32_t root = 0; root < n; root++) {
        if (g->succ_off[root + 1] > g->succ_off[root] || seen[root])
            continue; /* not an output, or already issued */
        seen[root] = 1;
        st[sp] = root;
        it[sp++] = g->pred_off[root];
        while (sp) {
            int32_t v = st[sp - 1];
            if (it[sp - 1] < g->pred_off[v + 1]) {
                int32_t u = g->pred[it[sp - 1]++];
                if (!seen[u]) {
                    seen[u] = 1;
                    st[sp] = u;
                    it[sp++] = g->pred_off[u];
                }
            } else {
                out[m++] = v; /* after all its inputs */
                sp--;
            }
        }
    }
    /* every op reaches an output in a DAG, so m == n */
done:
    sw_free(st);
    sw_free(it);
    sw_free(seen);
    return out;
}

void sa_schedule_mutate_k(const graph_profile *g, sa_sched_scratch *s, const int32_t *in,
                          long k, gsl_rng *r, int32_t *out)
{
    int32_t n = g->n_ops;
    long left = k < n ? k : n;
    for (int32_t i = 0; i < n; i++)
        s->pos[in[i]] = i;
    s->hn = 0;
    for (int32_t o = 0; o < n; o++) {
        s->indeg[o] = g->pred_off[o + 1] - g->pred_off[o];
        if (!s->indeg[o])
            hpush(s, s->pos[o]);
    }
    for (int32_t i = 0; i < n; i++) {
        int32_t pick = 0;
        /* selection sampling: this step is one of the k with probability left / (n - i) */
        if (left > 0 && gsl_rng_uniform(r) * (double)(n - i) < (double)left) {
            left--;
            if (s->hn > 1)
                pick = (int32_t)gsl_rng_uniform_int(r, (unsigned long)s->hn);
        }
        int32_t v = in[hremove(s, pick)];
        out[i] = v;
        for (int32_t e = g->succ_off[v]; e < g->succ_off[v + 1]; e++)
            if (--s->indeg[g->succ[e]] == 0)
                hpush(s, s->pos[g->succ[e]]);
    }
}

void sa_schedule_shuffle(const graph_profile *g, int32_t *order, long steps, gsl_rng *r)
{
    int32_t n = g->n_ops;
    if (n < 2)
        return;
    for (long t = 0; t < steps; t++) {
        int32_t i = (int32_t)gsl_rng_uniform_int(r, (unsigned long)(n - 1));
        if (gsl_rng_uniform_int(r, 2))
            continue; /* the lazy half: the chain is aperiodic */
        int32_t a = order[i], b = order[i + 1], edge = 0;
        for (int32_t e = g->succ_off[a]; e < g->succ_off[a + 1] && !edge; e++)
            edge = g->succ[e] == b;
        if (!edge) {
            order[i] = b;
            order[i + 1] = a;
        }
    }
}
