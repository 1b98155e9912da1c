/* swapadvisor.c: SwapAdvisor (ASPLOS '20): a genetic algorithm over
   (schedule, size-class allocation) chromosomes, each scored by planning
   swaps (swapplan.c) and simulating the plan. */
#include "swapadvisor.h"

#include <errno.h>
#include <gsl/gsl_randist.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../ga/ga.h"
#include "../ga/islands.h"
#include "../sim/plan_io.h"
#include "../sim/verify.h"
#include "lib/schedule.h"
#include "planner.h"
#include "lib/swap_util.h"
#include "lib/swapplan.h"

/* ------------------------------------------------------------------ */
/* the size-class operators (the schedule operators: lib/schedule.c)    */

int32_t sa_cls_repair(int32_t *cls, int32_t n, int monotone)
{
    if (n <= 0)
        return 0;
    if (monotone) {
        if (cls[0] != 0) {
            int32_t d = cls[0];
            for (int32_t i = 0; i < n; i++)
                cls[i] -= d;
        }
        for (int32_t i = 1; i < n; i++) {
            int32_t step = cls[i] - cls[i - 1], fix = step < 0 ? -step : step > 1 ? 1 - step : 0;
            if (fix)
                for (int32_t j = i; j < n; j++)
                    cls[j] += fix;
        }
        return cls[n - 1] + 1;
    }
    /* free encoding: renumber classes by first appearance */
    int32_t map[4096], nc = 0;
    int32_t *m = n <= 4096 ? map : sw_malloc((size_t)n * sizeof *m);
    if (!m)
        return -1;
    for (int32_t i = 0; i < n; i++)
        m[i] = -1;
    for (int32_t i = 0; i < n; i++) {
        int32_t c = cls[i] < 0 ? 0 : cls[i] >= n ? n - 1 : cls[i];
        if (m[c] < 0)
            m[c] = nc++;
        cls[i] = m[c];
    }
    if (m != map)
        sw_free(m);
    return nc;
}

void sa_cls_crossover(const int32_t *a, const int32_t *b, int32_t n, int32_t cr, int32_t *c1,
                      int32_t *c2, int monotone)
{
    for (int32_t i = 0; i < n; i++) {
        c1[i] = i < cr ? b[i] : a[i];
        c2[i] = i < cr ? a[i] : b[i];
    }
    sa_cls_repair(c1, n, monotone);
    sa_cls_repair(c2, n, monotone);
}

int32_t sa_cls_mutate(int32_t *cls, int32_t n, double p, gsl_rng *r, int monotone)
{
    if (monotone) {
        for (int32_t i = 1; i < n; i++) {
            if (gsl_rng_uniform(r) >= p)
                continue;
            int32_t d = cls[i] == cls[i - 1] ? 1 : -1;
            for (int32_t j = i; j < n; j++)
                cls[j] += d;
        }
    } else {
        for (int32_t i = 0; i < n; i++)
            if (gsl_rng_uniform(r) < p)
                cls[i] = (int32_t)gsl_rng_uniform_int(r, (unsigned long)n);
    }
    return sa_cls_repair(cls, n, monotone);
}

void sa_cnt_expand(const int32_t *cls, const int32_t *cnt, int32_t n, int32_t *ext)
{
    for (int32_t i = 0; i < n; i++)
        ext[i] = cnt[cls[i]];
}

void sa_cnt_collapse(const int32_t *cls, const int32_t *ext, int32_t n, int32_t n_classes,
                     int32_t *cnt)
{
    /* averages over the sizes of each class; sums in double, no scratch */
    for (int32_t c = 0; c < n_classes; c++)
        cnt[c] = 0;
    for (int32_t c = 0; c < n_classes; c++) {
        double sum = 0;
        int32_t k = 0;
        for (int32_t i = 0; i < n; i++)
            if (cls[i] == c) {
                sum += ext[i];
                k++;
            }
        cnt[c] = k ? (int32_t)lround(sum / k) : 0;
    }
}

void sa_class_sizes(const int32_t *cls, const int64_t *sizes, int32_t n, int32_t n_classes,
                    int64_t *csize)
{
    for (int32_t c = 0; c < n_classes; c++)
        csize[c] = 0;
    for (int32_t i = 0; i < n; i++)
        if (sizes[i] > csize[cls[i]])
            csize[cls[i]] = sizes[i];
}

int sa_cnt_repair(int32_t *cnt, const int64_t *csize, const int32_t *min_cnt,
                  const int32_t *max_cnt, int32_t n_classes, int64_t capacity)
{
    for (int32_t c = 0; c < n_classes; c++) {
        int32_t lo = min_cnt ? min_cnt[c] : 0;
        if (max_cnt && cnt[c] > max_cnt[c])
            cnt[c] = max_cnt[c];
        if (cnt[c] < lo)
            cnt[c] = lo;
    }
    for (int round = 0; round < 64; round++) {
        int64_t total = 0;
        int32_t movable = 0;
        for (int32_t c = 0; c < n_classes; c++) {
            total += csize[c] * cnt[c];
            if (cnt[c] > (min_cnt ? min_cnt[c] : 0))
                movable++;
        }
        if (total <= capacity)
            return 0;
        if (!movable)
            return -1;
        /* each movable class gives up an equal share of the excess bytes */
        double share = (double)(total - capacity) / movable;
        for (int32_t c = 0; c < n_classes; c++) {
            int32_t lo = min_cnt ? min_cnt[c] : 0;
            if (cnt[c] <= lo || csize[c] <= 0)
                continue;
            int64_t cut = (int64_t)ceil(share / (double)csize[c]);
            cnt[c] = cnt[c] - cut < lo ? lo : (int32_t)(cnt[c] - cut);
        }
    }
    return -1;
}

/* ------------------------------------------------------------------ */
/* the chromosome                                                      */

enum { SEARCH_BOTH, SEARCH_SCHEDULE, SEARCH_ALLOCATION };
enum { UNSEARCHED_INITIAL, UNSEARCHED_DEFAULT, UNSEARCHED_FRAMEWORK, UNSEARCHED_DFS };
/* first_generation readings (init_from): each schedule the base order
   (init_base) mutated by the paper's pass at P, or a random order shuffled
   toward the uniform law */
enum { INIT_RANDOM, INIT_BASE, INIT_SHUFFLED };

typedef struct sa_ctx {
    const graph_profile *g;
    int64_t budget, pool;
    int32_t no, ns;
    const int64_t *sizes;
    int monotone, search, seed_default, unsearched;
    int move_one;           /* schedule_mutation=move_one (else the dataflow pass) */
    int run_mode;           /* schedule_mutation=chain|reuse: SA_RUN_*, else 0 */
    int cone;               /* schedule_mutation=cone: 1; mixed: 2 (else 0) */
    int init_mode;          /* first_generation=chain|reuse: SA_RUN_*, else 0 (random) */
    int fitting;            /* first_allocation=fitting */
    long drawn, unfit;      /* first generation: random allocations drawn, and those whose
                               classes' least counts exceed the pool (atomic: threads) */
    double run_length;      /* mean run of those operators (ops) */
    int init_from;          /* first_generation=framework|dfs|shuffled: INIT_*, else 0 */
    int32_t *init_base;     /* INIT_BASE: the order each first schedule mutates */
    double init_p;          /* INIT_BASE: the mutation probability P */
    long mut_nodes;         /* mutation_nodes: random picks per dataflow pass (0: P per pick) */
    double threshold;
    int32_t *size_members;  /* per distinct size: storages of that size */
    swapplan *sp0;          /* sizes and minimum counts (read-only use) */
    int32_t *def_sched, *def_cls, *def_cnt;
    int32_t *fix_sched;     /* search=allocation: every individual's schedule, or NULL */
    int32_t def_nc;
    size_t ints;            /* genome length in int32 */
} sa_ctx;

typedef struct sa_worker {
    swapplan *sp;
    sa_sched_scratch *ss;
    uint8_t *mark;
    int32_t *s1, *s2, *ea, *eb, *ec, *cls1, *cls2, *minc, *maxc;
    int64_t *csize;
    swapplan_runs *runs;    /* first_allocation=fitting: its scratch */
} sa_worker;

/* genome layout: [n_classes][schedule: no][cls: ns][cnt: ns] */
#define G_NC(x) ((x)[0])
#define G_SCHED(c, x) ((x) + 1)
#define G_CLS(c, x) ((x) + 1 + (c)->no)
#define G_CNT(c, x) ((x) + 1 + (c)->no + (c)->ns)

static void worker_free(void *user, void *wp);

static void *worker_new(void *user)
{
    sa_ctx *c = user;
    sa_worker *w = sw_calloc(1, sizeof *w);
    if (!w)
        return NULL;
    size_t no = (size_t)c->no + 1, ns = (size_t)c->ns + 1;
    w->sp = swapplan_new(c->g, c->budget);
    w->ss = sa_sched_scratch_new(c->g);
    w->mark = sw_malloc(no);
    w->s1 = sw_malloc(no * sizeof(int32_t));
    w->s2 = sw_malloc(no * sizeof(int32_t));
    w->ea = sw_malloc(ns * sizeof(int32_t));
    w->eb = sw_malloc(ns * sizeof(int32_t));
    w->ec = sw_malloc(ns * sizeof(int32_t));
    w->cls1 = sw_malloc(ns * sizeof(int32_t));
    w->cls2 = sw_malloc(ns * sizeof(int32_t));
    w->minc = sw_malloc(ns * sizeof(int32_t));
    w->maxc = sw_malloc(ns * sizeof(int32_t));
    w->csize = sw_malloc(ns * sizeof(int64_t));
    w->runs = c->fitting && w->sp ? swapplan_runs_new(w->sp) : NULL;
    if (!w->sp || !w->ss || !w->mark || !w->s1 || !w->s2 || !w->ea || !w->eb || !w->ec ||
        !w->cls1 || !w->cls2 || !w->minc || !w->maxc || !w->csize || (c->fitting && !w->runs)) {
        worker_free(c, w);
        return NULL;
    }
    return w;
}

static void worker_free(void *user, void *wp)
{
    (void)user;
    sa_worker *w = wp;
    if (!w)
        return;
    swapplan_free(w->sp);
    sa_sched_scratch_free(w->ss);
    sw_free(w->mark);
    sw_free(w->s1);
    sw_free(w->s2);
    sw_free(w->ea);
    sw_free(w->eb);
    sw_free(w->ec);
    sw_free(w->cls1);
    sw_free(w->cls2);
    sw_free(w->minc);
    sw_free(w->maxc);
    sw_free(w->csize);
    swapplan_runs_free(w->runs);
    sw_free(w);
}

/* Per class, the number of storages it serves: more objects are useless. */
static void class_members(const sa_ctx *c, const int32_t *cls, int32_t nc, int32_t *maxc)
{
    for (int32_t k = 0; k < nc; k++)
        maxc[k] = 0;
    for (int32_t i = 0; i < c->ns; i++)
        maxc[cls[i]] += c->size_members[i];
}

/* Clamp counts to each class's minimum and repair to the pool. Returns 0
   or -1 (cannot fit). */
static int fix_counts(const sa_ctx *c, sa_worker *w, const int32_t *cls, int32_t nc, int32_t *cnt)
{
    swapplan_min_counts(w->sp, cls, nc, w->minc);
    class_members(c, cls, nc, w->maxc);
    sa_class_sizes(cls, c->sizes, c->ns, nc, w->csize);
    return sa_cnt_repair(cnt, w->csize, w->minc, w->maxc, nc, c->pool);
}

static double rng_u(void *r) { return gsl_rng_uniform(r); }

static void random_alloc(sa_ctx *c, sa_worker *w, gsl_rng *r, int32_t *x)
{
    int32_t *cls = G_CLS(c, x), *cnt = G_CNT(c, x);
    int32_t fit = c->fitting ? swapplan_fitting_cls(w->sp, w->runs, c->pool, rng_u, r, cls) : 0;
    if (fit > 0) {
        /* a mapping whose smallest pool fits */
    } else if (c->monotone) {
        cls[0] = 0;
        for (int32_t i = 1; i < c->ns; i++)
            cls[i] = cls[i - 1] + (gsl_rng_uniform(r) < 0.5);
    } else {
        for (int32_t i = 0; i < c->ns; i++)
            cls[i] = (int32_t)gsl_rng_uniform_int(r, (unsigned long)c->ns);
    }
    int32_t nc = sa_cls_repair(cls, c->ns, c->monotone);
    G_NC(x) = nc;
    sa_class_sizes(cls, c->sizes, c->ns, nc, w->csize);
    swapplan_min_counts(w->sp, cls, nc, w->minc);
    class_members(c, cls, nc, w->maxc);
    /* random shares of the pool's bytes */
    double sum = 0, wt[4096];
    double *wts = nc <= 4096 ? wt : NULL;
    for (int32_t k = 0; k < nc; k++) {
        double u = gsl_rng_uniform_pos(r);
        if (wts)
            wts[k] = u;
        sum += u;
    }
    for (int32_t k = 0; k < nc; k++) {
        double share = wts ? wts[k] / sum : 1.0 / nc;
        double n = (double)c->pool * share / (double)(w->csize[k] > 0 ? w->csize[k] : 1);
        cnt[k] = n > 1e9 ? 1000000000 : (int32_t)n;
    }
    int unfit = sa_cnt_repair(cnt, w->csize, w->minc, w->maxc, nc, c->pool) != 0;
    __atomic_fetch_add(&c->drawn, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&c->unfit, unfit, __ATOMIC_RELAXED);
}

static void default_alloc(const sa_ctx *c, int32_t *x)
{
    G_NC(x) = c->def_nc;
    memcpy(G_CLS(c, x), c->def_cls, (size_t)c->ns * sizeof(int32_t));
    memcpy(G_CNT(c, x), c->def_cnt, (size_t)c->ns * sizeof(int32_t));
}

static void op_init(void *user, void *wp, gsl_rng *r, void *gv, int index)
{
    sa_ctx *c = user;
    sa_worker *w = wp;
    int32_t *x = gv;
    memset(x, 0, c->ints * sizeof(int32_t));
    /* the first generation is random, as in the paper (plus the default
       individual when seed_default is set); a part the search leaves alone
       keeps each individual's initial value */
    int dflt = c->seed_default && index == 0;
    if (c->search == SEARCH_ALLOCATION && c->fix_sched) /* the default individual too */
        memcpy(G_SCHED(c, x), c->fix_sched, (size_t)c->no * sizeof(int32_t));
    else if (dflt)
        memcpy(G_SCHED(c, x), c->def_sched, (size_t)c->no * sizeof(int32_t));
    else if (c->init_from == INIT_BASE)
        sa_schedule_mutate(c->g, w->ss, c->init_base, c->init_p, r, G_SCHED(c, x));
    else if (c->init_from == INIT_SHUFFLED) {
        sa_schedule_mutate(c->g, w->ss, c->def_sched, 1.0, r, G_SCHED(c, x));
        sa_schedule_shuffle(c->g, G_SCHED(c, x), 32L * c->no, r);
    } else if (!c->init_mode)
        sa_schedule_mutate(c->g, w->ss, c->def_sched, 1.0, r, G_SCHED(c, x));
    else { /* ours: a random order, then runs drawn over it (its order breaks ties) */
        sa_schedule_mutate(c->g, w->ss, c->def_sched, 1.0, r, w->s1);
        sa_schedule_mutate_runs(c->g, w->ss, w->s1, 1.0, c->run_length, c->init_mode, r,
                                G_SCHED(c, x));
    }
    if (dflt || (c->search == SEARCH_SCHEDULE && c->unsearched != UNSEARCHED_INITIAL))
        default_alloc(c, x);
    else
        random_alloc(c, w, r, x);
}

static void cross_alloc(const sa_ctx *c, sa_worker *w, const int32_t *a, const int32_t *b,
                        int32_t cr, int32_t *cls_out, int32_t *cnt_out, int32_t *nc_out, int first)
{
    /* CNT_EXT crossover at the same cut, collapsed onto the child's classes */
    sa_cnt_expand(G_CLS(c, a), G_CNT(c, a), c->ns, w->ea);
    sa_cnt_expand(G_CLS(c, b), G_CNT(c, b), c->ns, w->eb);
    for (int32_t i = 0; i < c->ns; i++)
        w->ec[i] = first ? (i < cr ? w->eb[i] : w->ea[i]) : (i < cr ? w->ea[i] : w->eb[i]);
    for (int32_t i = 0; i < c->ns; i++)
        cls_out[i] = first ? (i < cr ? G_CLS(c, b)[i] : G_CLS(c, a)[i])
                           : (i < cr ? G_CLS(c, a)[i] : G_CLS(c, b)[i]);
    *nc_out = sa_cls_repair(cls_out, c->ns, c->monotone);
    sa_cnt_collapse(cls_out, w->ec, c->ns, *nc_out, cnt_out);
    fix_counts(c, w, cls_out, *nc_out, cnt_out);
}

static void op_crossover(void *user, void *wp, gsl_rng *r, const void *av, const void *bv,
                         void *const cv[4])
{
    sa_ctx *c = user;
    sa_worker *w = wp;
    const int32_t *a = av, *b = bv;
    int32_t *k[4] = {cv[0], cv[1], cv[2], cv[3]};
    /* schedules */
    if (c->search == SEARCH_ALLOCATION || c->no < 2) {
        memcpy(w->s1, G_SCHED(c, a), (size_t)c->no * sizeof(int32_t));
        memcpy(w->s2, G_SCHED(c, b), (size_t)c->no * sizeof(int32_t));
    } else {
        int32_t cr = 1 + (int32_t)gsl_rng_uniform_int(r, (unsigned long)(c->no - 1));
        sa_schedule_crossover(G_SCHED(c, a), G_SCHED(c, b), c->no, cr, w->s1, w->s2, w->mark);
    }
    /* allocations: children 0/2 get the first, 1/3 the second */
    if (c->search == SEARCH_SCHEDULE || c->ns < 2) {
        for (int i = 0; i < 4; i++) {
            const int32_t *src = (i % 2) ? b : a;
            G_NC(k[i]) = G_NC(src);
            memcpy(G_CLS(c, k[i]), G_CLS(c, src), 2 * (size_t)c->ns * sizeof(int32_t));
        }
    } else {
        int32_t cr = 1 + (int32_t)gsl_rng_uniform_int(r, (unsigned long)(c->ns - 1));
        int32_t nc1, nc2;
        cross_alloc(c, w, a, b, cr, G_CLS(c, k[0]), G_CNT(c, k[0]), &nc1, 1);
        cross_alloc(c, w, a, b, cr, G_CLS(c, k[1]), G_CNT(c, k[1]), &nc2, 0);
        G_NC(k[0]) = nc1;
        G_NC(k[1]) = nc2;
        G_NC(k[2]) = nc1;
        G_NC(k[3]) = nc2;
        memcpy(G_CLS(c, k[2]), G_CLS(c, k[0]), 2 * (size_t)c->ns * sizeof(int32_t));
        memcpy(G_CLS(c, k[3]), G_CLS(c, k[1]), 2 * (size_t)c->ns * sizeof(int32_t));
    }
    memcpy(G_SCHED(c, k[0]), w->s1, (size_t)c->no * sizeof(int32_t));
    memcpy(G_SCHED(c, k[1]), w->s1, (size_t)c->no * sizeof(int32_t));
    memcpy(G_SCHED(c, k[2]), w->s2, (size_t)c->no * sizeof(int32_t));
    memcpy(G_SCHED(c, k[3]), w->s2, (size_t)c->no * sizeof(int32_t));
}

static void op_mutate(void *user, void *wp, gsl_rng *r, void *gv, double p)
{
    sa_ctx *c = user;
    sa_worker *w = wp;
    int32_t *x = gv;
    if (c->search != SEARCH_ALLOCATION && p > 0) {
        if (c->move_one)
            sa_schedule_move_one(c->g, w->ss, G_SCHED(c, x), r, w->s1);
        else if (c->cone == 1 || (c->cone == 2 && gsl_rng_uniform_int(r, 2)))
            sa_schedule_cone(c->g, w->ss, G_SCHED(c, x),
                             (int32_t)gsl_rng_uniform_int(r, (unsigned long)c->no),
                             (int)gsl_rng_uniform_int(r, 2), w->s1);
        else if (c->mut_nodes > 0)
            sa_schedule_mutate_k(c->g, w->ss, G_SCHED(c, x), c->mut_nodes, r, w->s1);
        else if (c->run_mode)
            sa_schedule_mutate_runs(c->g, w->ss, G_SCHED(c, x), p, c->run_length, c->run_mode, r,
                                    w->s1);
        else
            sa_schedule_mutate(c->g, w->ss, G_SCHED(c, x), p, r, w->s1);
        memcpy(G_SCHED(c, x), w->s1, (size_t)c->no * sizeof(int32_t));
    }
    if (c->search != SEARCH_SCHEDULE && p > 0 && c->ns > 0) {
        int32_t *cls = G_CLS(c, x), *cnt = G_CNT(c, x);
        sa_cnt_expand(cls, cnt, c->ns, w->ea);
        int32_t nc = sa_cls_mutate(cls, c->ns, p, r, c->monotone);
        sa_cnt_collapse(cls, w->ea, c->ns, nc, cnt);
        for (int32_t k = 0; k < nc; k++)
            if (gsl_rng_uniform(r) < p) {
                double sd = cnt[k] * 0.25 > 1 ? cnt[k] * 0.25 : 1;
                double v = cnt[k] + gsl_ran_gaussian(r, sd);
                cnt[k] = v < 0 ? 0 : v > 1e9 ? 1000000000 : (int32_t)lround(v);
            }
        G_NC(x) = nc;
        fix_counts(c, w, cls, nc, cnt);
    }
}

static double op_evaluate(void *user, void *wp, const void *gv)
{
    sa_ctx *c = user;
    sa_worker *w = wp;
    const int32_t *x = gv;
    sp_alloc al = {G_CLS(c, x), G_CNT(c, x), G_NC(x)};
    sim_result r;
    int rc = swapplan_make(w->sp, G_SCHED(c, x), &al, c->threshold, NULL, &r, NULL);
    if (rc)
        return rc == SW_ENOMEM ? NAN : INFINITY; /* NAN: ga_run ends with SW_ENOMEM */
    return r.iteration_time_s;
}

static const ga_ops sa_ops = {1, op_init, op_crossover, op_mutate, op_evaluate, worker_new,
                              worker_free};

/* ------------------------------------------------------------------ */
/* the planner                                                         */

static const param_def sa_params[] = {
    {"population", PT_INT, "32", "individuals per generation (N_p; the paper used 144 on 72 "
     "cores)", NULL, 2, 100000},
    {"generations", PT_INT, "0", "stop after this many generations (0: only the time budget)",
     NULL, 0, 1e9},
    {"mutation", PT_FLOAT, "0.1", "per-element mutation probability P", NULL, 0, 1},
    {"selection", PT_CHOICE, "softmax", "survivor selection: softmax (the paper's), tournament, "
     "or uniform (a reading: every candidate alike)", "softmax|tournament|uniform", 1, 0},
    {"survivors", PT_CHOICE, "all", "who competes for survival (readings of the paper): all "
     "(parents and children), children (they replace the parents) or family (each pair's "
     "parents and four children, two surviving)", "all|children|family", 1, 0},
    {"mutation_nodes", PT_INT, "0", "schedule_mutation=dataflow: random picks per pass (a "
     "reading of \"mutating multiple nodes\": K nodes per mutation; 0: each pick random with "
     "probability P, the default)", NULL, 0, 1e9},
    {"temperature", PT_FLOAT, "0.05", "softmax over t_norm / temperature (1: the paper's formula "
     "as written; see docs/swapadvisor.md)", NULL, 1e-6, 1e6},
    {"tournament", PT_INT, "3", "tournament size (selection=tournament)", NULL, 2, 1000},
    {"elite", PT_INT, "0", "the best this many candidates survive each generation before "
     "selection picks the rest (0: the paper's selection as written)", NULL, 0, 1e6},
    {"search", PT_CHOICE, "both", "what the GA searches; the other part is fixed (see "
     "unsearched)", "both|schedule|allocation", 1, 0},
    {"unsearched", PT_CHOICE, "initial", "with search=schedule or allocation, what the part not "
     "searched is: each individual's initial value (random, or the default individual's), "
     "the default (profile order; one class per size), or the framework's (the dataflow "
     "engine's order, as odswap schedule=framework; the default allocation)",
     "initial|default|framework|dfs", 1, 0},
    {"schedule_mutation", PT_CHOICE, "mixed", "schedule mutation (the default, mixed, is ours, "
     "chosen on models other than the paper's five): the paper's pass through "
     "a dataflow scheduler (each pick a random ready op with probability P, else the ready op "
     "earliest in the parent's order: many ops move), or move_one (one random op to a random "
     "legal position between its last predecessor and first successor: the alternative the "
     "paper reports as weaker), or (ours, not the paper's) chain or reuse: the dataflow pass "
     "where each random pick starts a run of run_length ops on average, each a ready successor "
     "of the op just issued (chain) or the ready op sharing the most tensor bytes with it "
     "(reuse), or (ours) cone: a random op's ancestors (with it) issued first, or its "
     "descendants (with it) last, each part in the parent's order, or (ours) mixed: a cone "
     "move or the paper's pass, 1/2 each; docs/swapadvisor.md",
     "dataflow|move_one|chain|reuse|cone|mixed", 1, 0},
    {"run_length", PT_FLOAT, "8", "schedule_mutation=chain|reuse, first_generation=chain|reuse: "
     "mean length of a run (geometric), in ops", NULL, 1, 1e9},
    {"first_generation", PT_CHOICE, "random", "the first generation's schedules: random (the "
     "paper's: each step a uniformly random ready op) or (ours) chain or reuse: a random order "
     "redrawn with runs as in schedule_mutation=chain|reuse at probability 1, or readings of \"the "
     "first generation is randomly generated\": framework (the dataflow engine's order mutated "
     "by the paper's pass at P), dfs (MXNet's executor order, a depth-first post-order from "
     "the outputs, mutated at P), shuffled (a random order then 32 x ops random adjacent "
     "transpositions, toward uniformly random topological orders)",
     "random|chain|reuse|framework|dfs|shuffled", 1, 0},
    {"first_allocation", PT_CHOICE, "random", "the first generation's size-class mappings: "
     "random (the paper's: after each size a new class with probability 1/2; at tight budgets "
     "most such mappings cannot fit) or (ours) fitting: the same draw, steered away from "
     "mappings whose smallest pool exceeds the budget (cls=monotone only)", "random|fitting", 1,
     0},
    {"cls", PT_CHOICE, "monotone", "size-class encoding: monotone (the paper's restriction) or "
     "free (Figure 9c)", "monotone|free", 1, 0},
    {"threshold", PT_FLOAT, "1", "eviction threshold: victims last used at least this many "
     "copy times of the incoming tensor ago", NULL, 0, 1e6},
    {"seed_default", PT_BOOL, "true", "include the default individual (profile order, one class "
     "per size) in the first generation; the paper's is all random (false), which the search "
     "experiments use", NULL, 1, 0},
    {"time_budget", PT_SECONDS, "60s", "search time when --time-budget is not given", NULL, 1, 0},
    {"pin", PT_BOOL, "true", "pin worker threads to cores (hwloc)", NULL, 1, 0},
    {"dump_population", PT_STRING, "", "directory: also write plans of the final population "
     "there (individual-01.plan.json ...), each verified; distinct plans of feasible "
     "individuals only (the paper's Figure 11 replays GA individuals). Deterministic for a seed "
     "with generations=N", NULL, 1, 0},
    {"dump_count", PT_INT, "5", "how many plans dump_population writes (0: every distinct one)",
     NULL, 0, 100000},
    {"dump_pick", PT_CHOICE, "spread", "which individuals dump_population writes: the best, or "
     "spread evenly over the population's ranking by simulated time (best and worst "
     "included)", "best|spread", 1, 0},
    {"islands", PT_INT, "1", "populations searched side by side (island model; population is "
     "per island); under mpirun -np N, islands=N puts one on each rank (docs/cluster.md)", NULL,
     1, 100000},
    {"migration_interval", PT_INT, "10", "islands > 1: generations between migrations", NULL, 1,
     1e9},
    {"migrants", PT_INT, "2", "islands > 1: best individuals each island sends to the next (a "
     "ring), replacing its worst", NULL, 1, 100000},
    PARAM_END};

/* default allocation: one class per distinct size, counts proportional to
   each size's peak number of live tensors in the profile's order */
static int make_defaults(sa_ctx *c, sw_err *err)
{
    const graph_profile *g = c->g;
    int32_t ns = c->ns;
    c->def_sched = sw_malloc(((size_t)c->no + 1) * sizeof(int32_t));
    c->def_cls = sw_malloc(((size_t)ns + 1) * sizeof(int32_t));
    c->def_cnt = sw_malloc(((size_t)ns + 1) * sizeof(int32_t));
    int32_t *live = sw_calloc((size_t)ns + 1, sizeof(int32_t));
    int32_t *last = sw_malloc(((size_t)g->n_tensors + 1) * sizeof(int32_t));
    int32_t *pos = sw_malloc(((size_t)g->n_ops + 1) * sizeof(int32_t));
    uint8_t *on = sw_calloc((size_t)g->n_tensors + 1, 1);
    int64_t *csize = sw_malloc(((size_t)ns + 1) * sizeof(int64_t));
    int32_t *minc = sw_malloc(((size_t)ns + 1) * sizeof(int32_t));
    int32_t *maxc = sw_malloc(((size_t)ns + 1) * sizeof(int32_t));
    int rc = 0;
    if (!c->def_sched || !c->def_cls || !c->def_cnt || !live || !last || !pos || !on || !csize ||
        !minc || !maxc) {
        rc = sw_fail(err, SW_ENOMEM, "out of memory");
        goto out;
    }
    memcpy(c->def_sched, g->order, (size_t)c->no * sizeof(int32_t));
    for (int32_t i = 0; i < ns; i++) {
        c->def_cls[i] = i;
        c->def_cnt[i] = 0;
    }
    c->def_nc = ns;
    const sp_sizes *z = swapplan_sizes(c->sp0);
    graph_lifetimes(g, g->order, pos, NULL, last, NULL, NULL);
    for (int32_t t = 0; t < g->n_tensors; t++)
        if (g->tensors[t].storage == t && g->tensors[t].persistent && z->of[t] >= 0) {
            on[t] = 1;
            live[z->of[t]]++;
        }
    for (int32_t i = 0; i < ns; i++)
        c->def_cnt[i] = live[i];
    for (int32_t i = 0; i < g->n_ops; i++) {
        int32_t o = g->order[i];
        for (int32_t k = g->acc_off[o]; k < g->acc_off[o + 1]; k++) {
            int32_t s = g->acc[k];
            if (z->of[s] >= 0 && !on[s]) {
                on[s] = 1;
                if (++live[z->of[s]] > c->def_cnt[z->of[s]])
                    c->def_cnt[z->of[s]] = live[z->of[s]];
            }
        }
        for (int32_t k = g->acc_off[o]; k < g->acc_off[o + 1]; k++) {
            int32_t s = g->acc[k];
            if (z->of[s] >= 0 && on[s] && last[s] == i && !g->tensors[s].persistent) {
                on[s] = 0;
                live[z->of[s]]--;
            }
        }
    }
    swapplan_min_counts(c->sp0, c->def_cls, ns, minc);
    class_members(c, c->def_cls, ns, maxc);
    sa_class_sizes(c->def_cls, c->sizes, ns, ns, csize);
    if (sa_cnt_repair(c->def_cnt, csize, minc, maxc, ns, c->pool)) {
        /* one class per size cannot even hold one op's tensors: try one
           class for everything (the coarsest pool) */
        for (int32_t i = 0; i < ns; i++)
            c->def_cls[i] = 0;
        c->def_nc = ns > 0 ? 1 : 0;
        swapplan_min_counts(c->sp0, c->def_cls, c->def_nc, minc);
        class_members(c, c->def_cls, c->def_nc, maxc);
        sa_class_sizes(c->def_cls, c->sizes, ns, c->def_nc, csize);
        c->def_cnt[0] = csize[0] > 0 ? (int32_t)SW_MIN(c->pool / csize[0], 1000000000) : 0;
        /* if this does not fit either, the default individual is infeasible
           and only the search can find an allocation that runs */
        if (c->def_nc)
            sa_cnt_repair(c->def_cnt, csize, minc, maxc, c->def_nc, c->pool);
    }
out:
    sw_free(live);
    sw_free(last);
    sw_free(pos);
    sw_free(on);
    sw_free(csize);
    sw_free(minc);
    sw_free(maxc);
    return rc;
}

/* FNV-1a over a plan's JSON: tells distinct plans apart */
static uint64_t text_hash(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ULL;
    }
    return h;
}

typedef struct sa_member {
    int index;      /* in the final population */
    double fitness; /* simulated iteration time */
} sa_member;

static int cmp_member(const void *a, const void *b)
{
    const sa_member *x = a, *y = b;
    if (x->fitness != y->fitness)
        return x->fitness < y->fitness ? -1 : 1;
    return (x->index > y->index) - (x->index < y->index);
}

/* the plan of genome x, with the planner's provenance */
static int member_plan(sa_ctx *c, const int32_t *x, const planner_opts *o, plan **out,
                       sw_err *err)
{
    sp_alloc al = {G_CLS(c, x), G_CNT(c, x), G_NC(x)};
    int rc = swapplan_make(c->sp0, G_SCHED(c, x), &al, c->threshold, out, NULL, err);
    if (rc)
        return rc;
    sw_buf b;
    sw_buf_init(&b);
    params_to_json(&o->params, &b);
    rc = b.oom ? SW_ENOMEM : plan_set_meta(*out, "swapadvisor", o->seed, b.data);
    sw_buf_free(&b);
    if (rc) {
        plan_free(*out);
        *out = NULL;
        return sw_fail(err, SW_ENOMEM, "out of memory");
    }
    return 0;
}

/* dump_population: write count plans of the final population into dir:
   the distinct plans of feasible individuals ranked by simulated time
   (ties: population order), the best count or count spread evenly over the
   ranking, each verified */
static int dump_population(sa_ctx *c, const ga_ctx *ga, const planner_opts *o, sw_err *err)
{
    const param_set *ps = &o->params;
    const char *dir = params_str(ps, "dump_population");
    int count = (int)params_int(ps, "dump_count");
    int spread = !strcmp(params_str(ps, "dump_pick"), "spread");
    int n = (int)params_int(ps, "population");
    if (mkdir(dir, 0777) && errno != EEXIST)
        return sw_fail(err, SW_EIO, "%s: cannot create the directory for dump_population", dir);
    sa_member *m = sw_malloc(((size_t)n + 1) * sizeof *m);
    uint64_t *hash = sw_malloc(((size_t)n + 1) * sizeof *hash);
    if (!m || !hash) {
        sw_free(m);
        sw_free(hash);
        return sw_fail(err, SW_ENOMEM, "out of memory");
    }
    int nm = 0;
    for (int i = 0; i < n; i++) {
        double f;
        if (ga_individual(ga, i, &f) && isfinite(f)) {
            m[nm].index = i;
            m[nm++].fitness = f;
        }
    }
    qsort(m, (size_t)nm, sizeof *m, cmp_member);
    /* distinct plans only (two genomes can make one plan) */
    int nd = 0, rc = 0;
    for (int i = 0; i < nm && !rc; i++) {
        plan *p = NULL;
        if ((rc = member_plan(c, ga_individual(ga, m[i].index, NULL), o, &p, err)) != 0)
            break;
        sw_buf b;
        sw_buf_init(&b);
        plan_to_json(p, &b);
        plan_free(p);
        if (b.oom) {
            sw_buf_free(&b);
            rc = sw_fail(err, SW_ENOMEM, "out of memory");
            break;
        }
        uint64_t h = text_hash(b.data, b.len);
        sw_buf_free(&b);
        int dup = 0;
        for (int j = 0; j < nd && !dup; j++)
            dup = hash[j] == h;
        if (!dup) {
            hash[nd] = h;
            m[nd++] = m[i];
        }
    }
    int k = count > 0 && count < nd ? count : nd;
    for (int i = 0; i < k && !rc; i++) {
        int r = !spread || k < 2 ? i : (int)(((long long)i * (nd - 1) + (k - 1) / 2) / (k - 1));
        plan *p = NULL;
        if ((rc = member_plan(c, ga_individual(ga, m[r].index, NULL), o, &p, err)) != 0)
            break;
        char note[256], path[4096];
        snprintf(note, sizeof note, "GA final population: individual %d, rank %d of %d distinct "
                 "feasible plans, simulated %.9g s", m[r].index, r + 1, nd, m[r].fitness);
        snprintf(path, sizeof path, "%s/individual-%02d.plan.json", dir, i + 1);
        if (plan_set_notes(p, note))
            rc = sw_fail(err, SW_ENOMEM, "out of memory");
        else if ((rc = plan_verify(p, NULL, err)) != 0)
            sw_err_prefix(err, "dump_population: individual %d: ", m[r].index);
        else
            rc = plan_write_file(p, path, err);
        plan_free(p);
    }
    sw_free(m);
    sw_free(hash);
    return rc;
}

/* The context's settings from o's options (the search, its operators, the
   first generation); SW_EINVAL for a combination that does not go. */
static int sa_read_opts(sa_ctx *c, const graph_profile *g, const planner_opts *o, sw_err *err)
{
    const param_set *ps = &o->params;
    memset(c, 0, sizeof *c);
    c->g = g;
    c->budget = o->memory_budget;
    c->pool = o->memory_budget - g->max_workspace;
    c->no = g->n_ops;
    const char *search = params_str(ps, "search");
    c->search = !strcmp(search, "schedule") ? SEARCH_SCHEDULE
                : !strcmp(search, "allocation") ? SEARCH_ALLOCATION : SEARCH_BOTH;
    c->monotone = !strcmp(params_str(ps, "cls"), "monotone");
    c->fitting = !strcmp(params_str(ps, "first_allocation"), "fitting");
    if (c->fitting && !c->monotone)
        return sw_fail(err, SW_EINVAL, "first_allocation=fitting takes cls=monotone");
    c->threshold = params_float(ps, "threshold");
    c->seed_default = params_bool(ps, "seed_default");
    const char *smut = params_str(ps, "schedule_mutation"), *fgen = params_str(ps,
                                                                           "first_generation");
    c->move_one = !strcmp(smut, "move_one");
    c->cone = !strcmp(smut, "cone") ? 1 : !strcmp(smut, "mixed") ? 2 : 0;
    c->run_mode = !strcmp(smut, "chain") ? SA_RUN_CHAIN : !strcmp(smut, "reuse") ? SA_RUN_REUSE : 0;
    c->init_mode = !strcmp(fgen, "chain") ? SA_RUN_CHAIN : !strcmp(fgen, "reuse") ? SA_RUN_REUSE : 0;
    c->run_length = params_float(ps, "run_length");
    c->init_from = !strcmp(fgen, "framework") || !strcmp(fgen, "dfs") ? INIT_BASE
                   : !strcmp(fgen, "shuffled") ? INIT_SHUFFLED : INIT_RANDOM;
    c->init_p = params_float(ps, "mutation");
    c->mut_nodes = (long)params_int(ps, "mutation_nodes");
    const char *uns = params_str(ps, "unsearched");
    c->unsearched = !strcmp(uns, "default") ? UNSEARCHED_DEFAULT
                    : !strcmp(uns, "framework") ? UNSEARCHED_FRAMEWORK
                    : !strcmp(uns, "dfs") ? UNSEARCHED_DFS : UNSEARCHED_INITIAL;
    return 0;
}

/* The sizes (c->sp0, c->size_members) and the refusals before any search:
   an op whose tensors alone exceed the pool, a pool below the smallest
   size-class pool (*min_pool: that pool with monotone classes, else -1).
   On an error nothing is left allocated. */
static int sa_setup(sa_ctx *c, int64_t *min_pool, sw_err *err)
{
    const graph_profile *g = c->g;
    if (c->pool <= 0)
        return sw_fail(err, SW_ENOFIT, "does not fit: the budget is smaller than the largest "
                       "workspace (%lld bytes)", (long long)g->max_workspace);
    c->sp0 = swapplan_new(g, c->budget);
    if (!c->sp0)
        return sw_fail(err, SW_ENOMEM, "out of memory");
    c->ns = swapplan_sizes(c->sp0)->n;
    c->sizes = swapplan_sizes(c->sp0)->size;
    c->ints = 1 + (size_t)c->no + 2 * (size_t)c->ns;
    c->size_members = sw_calloc((size_t)c->ns + 1, sizeof(int32_t));
    if (!c->size_members) {
        swapplan_free(c->sp0);
        return sw_fail(err, SW_ENOMEM, "out of memory");
    }
    for (int32_t t = 0; t < g->n_tensors; t++)
        if (swapplan_sizes(c->sp0)->of[t] >= 0)
            c->size_members[swapplan_sizes(c->sp0)->of[t]]++;
    /* no pool can run an op whose tensors alone exceed it */
    int64_t worst = 0;
    int32_t worst_op = 0;
    for (int32_t op = 0; op < g->n_ops; op++) {
        int64_t sum = 0;
        for (int32_t k = g->acc_off[op]; k < g->acc_off[op + 1]; k++)
            sum += g->tensors[g->acc[k]].bytes;
        if (sum > worst) {
            worst = sum;
            worst_op = op;
        }
    }
    if (worst > c->pool) {
        char h1[32], h2[32];
        swapplan_free(c->sp0);
        sw_free(c->size_members);
        return sw_fail(err, SW_ENOFIT, "does not fit: op %d '%s' alone needs %s for its inputs "
                       "and outputs, and %s is left after the workspace reserve", worst_op,
                       g->ops[worst_op].name, sw_fmt_bytes(worst, h1, sizeof h1),
                       sw_fmt_bytes(c->pool, h2, sizeof h2));
    }
    /* with the paper's monotone classes an allocation that fits exists
       exactly when the smallest pool does (swapplan_min_pool) */
    *min_pool = c->monotone ? swapplan_min_pool(c->sp0, NULL) : -1;
    if (c->monotone && *min_pool < 0) {
        swapplan_free(c->sp0);
        sw_free(c->size_members);
        return sw_fail(err, SW_ENOMEM, "out of memory");
    }
    if (*min_pool > c->pool) {
        char h1[32], h2[32];
        swapplan_free(c->sp0);
        sw_free(c->size_members);
        return sw_fail(err, SW_ENOFIT, "does not fit: the smallest size-class pool (over every "
                       "mapping of the %d tensor sizes to classes of contiguous sizes, each class "
                       "holding the most of its tensors one op uses) needs %s, and %s is left "
                       "after the workspace reserve", c->ns, sw_fmt_bytes(*min_pool, h1, sizeof h1),
                       sw_fmt_bytes(c->pool, h2, sizeof h2));
    }
    return 0;
}

/* The schedules the search starts from or keeps (unsearched=, the first
   generation's base order). */
static int sa_orders(sa_ctx *c, const planner_opts *o, sw_err *err)
{
    const graph_profile *g = c->g;
    if (c->search == SEARCH_ALLOCATION && c->unsearched != UNSEARCHED_INITIAL) {
        c->fix_sched = c->unsearched == UNSEARCHED_FRAMEWORK ? swu_framework_order(g)
                       : c->unsearched == UNSEARCHED_DFS ? sa_dfs_order(g)
                                                         : sw_malloc(((size_t)c->no + 1) * sizeof(int32_t));
        if (!c->fix_sched)
            return sw_fail(err, SW_ENOMEM, "out of memory");
        if (c->unsearched == UNSEARCHED_DEFAULT)
            memcpy(c->fix_sched, c->def_sched, (size_t)c->no * sizeof(int32_t));
    }
    if (c->init_from == INIT_BASE) {
        c->init_base = !strcmp(params_str(&o->params, "first_generation"), "dfs")
                           ? sa_dfs_order(g) : swu_framework_order(g);
        if (!c->init_base)
            return sw_fail(err, SW_ENOMEM, "out of memory");
    }
    return 0;
}

/* The GA's parameters and the islands' from o. */
static void sa_ga_params(const planner_opts *o, ga_params *gp, ga_island_params *ip)
{
    const param_set *ps = &o->params;
    ga_params_default(gp);
    gp->population = (int)params_int(ps, "population");
    gp->generations = (long)params_int(ps, "generations");
    gp->mutation = params_float(ps, "mutation");
    gp->selection = !strcmp(params_str(ps, "selection"), "tournament") ? GA_TOURNAMENT : GA_SOFTMAX;
    if (!strcmp(params_str(ps, "selection"), "uniform"))
        gp->selection = GA_UNIFORM;
    gp->survivors = !strcmp(params_str(ps, "survivors"), "children") ? GA_SURVIVE_CHILDREN
                    : !strcmp(params_str(ps, "survivors"), "family") ? GA_SURVIVE_FAMILY
                                                                     : GA_SURVIVE_ALL;
    gp->temperature = params_float(ps, "temperature");
    gp->tournament = (int)params_int(ps, "tournament");
    gp->elite = (int)params_int(ps, "elite");
    gp->time_budget_s = o->time_budget_s > 0 ? o->time_budget_s : params_seconds(ps, "time_budget");
    if (gp->generations > 0 && o->time_budget_s <= 0)
        gp->time_budget_s = 0; /* a generation count alone is the stopping rule */
    gp->threads = o->threads;
    gp->seed = o->seed;
    gp->pin = params_bool(ps, "pin");
    gp->stop = o->stop;
    gp->stop_ud = o->stop_ud;
    ip->islands = (int)params_int(ps, "islands");
    ip->interval = (int)params_int(ps, "migration_interval");
    ip->migrants = (int)params_int(ps, "migrants");
}

/* The refusal when no individual fits: what was tried, and what might fit. */
static int sa_refusal(const sa_ctx *c, const planner_opts *o, int islands, int64_t min_pool,
                      const ga_stats *st, sw_err *err)
{
    char why[256] = "", h1[32];
    if (c->drawn > 0 && !islands) /* islands over ranks: each counts its own */
        snprintf(why, sizeof why, " (%ld of the first generation's %ld random allocations "
                 "cannot fit at all)", c->unfit, c->drawn);
    if (min_pool >= 0)
        snprintf(why + strlen(why), sizeof why - strlen(why), "; a pool of classes of "
                 "contiguous sizes would fit (the smallest needs %s): %s",
                 sw_fmt_bytes(min_pool, h1, sizeof h1),
                 c->drawn > 0 || islands ? "try a longer search or first_allocation=fitting"
                                         : "search the allocation too (search=both)");
    return sw_fail(err, SW_ENOFIT, "does not fit: none of the %ld schedules and size-class "
                   "pools the search tried can run within %lld bytes%s", st->evaluations,
                   (long long)o->memory_budget, why);
}

/* The plan's notes: the search's figures (no wall-clock ones: the same
   seed must give the same plan bytes). */
static int sa_note(const sa_ctx *c, const ga_island_params *ip, int islands, int64_t min_pool,
                   const ga_stats *st, plan *p)
{
    char note[512], isl[128] = "", mp[192] = "", h1[32], h2[32];
    if (islands)
        snprintf(isl, sizeof isl, "%d islands (migration every %d generations, %d migrants), ",
                 ip->islands, ip->interval, ip->migrants);
    /* the allocations drawn (none when the allocation is not searched) */
    int count = c->drawn > 0 && !islands; /* islands over ranks: each counts its own */
    if (count)
        snprintf(mp, sizeof mp, "; %ld of the first generation's %ld random allocations "
                 "cannot fit", c->unfit, c->drawn);
    if (min_pool >= 0)
        snprintf(mp + strlen(mp), sizeof mp - strlen(mp),
                 count ? " (the smallest pool: %s of %s)" : "; the smallest pool: %s of %s",
                 sw_fmt_bytes(min_pool, h1, sizeof h1), sw_fmt_bytes(c->pool, h2, sizeof h2));
    snprintf(note, sizeof note, "GA: %s%ld generations, %ld evaluations%s; best of the "
             "first generation %.9g s, best found %.9g s%s", isl, st->generations,
             st->evaluations, st->stopped ? " (stopped early)" : "", st->initial_best, st->best,
             mp);
    return plan_set_notes(p, note);
}

static int plan_swapadvisor(const graph_profile *g, const planner_opts *o, plan **out, sw_err *err)
{
    const param_set *ps = &o->params;
    sa_ctx c;
    int64_t min_pool = -1;
    int rc = sa_read_opts(&c, g, o, err);
    if (!rc)
        rc = sa_setup(&c, &min_pool, err);
    if (rc)
        return rc;
    rc = make_defaults(&c, err);
    ga_ctx *ga = NULL;
    ga_islands *gi = NULL;
    FILE *log = NULL;
    if (rc || (rc = sa_orders(&c, o, err)))
        goto done;
    ga_params gp;
    ga_island_params ip;
    sa_ga_params(o, &gp, &ip);
    int spread = o->comm && o->comm->size > 1;
    if (spread)
        gp.pin = 0; /* ranks on one machine would pin their threads to the same cores */
    if ((ip.islands > 1 || spread) && params_str(ps, "dump_population")[0]) {
        rc = sw_fail(err, SW_EINVAL, "dump_population writes one population's plans: it takes "
                     "islands=1 in one process");
        goto done;
    }
    if (ip.islands > 1 || spread) {
        if ((rc = ga_islands_new(&sa_ops, &c, c.ints * sizeof(int32_t), &gp, &ip, o->comm, &gi,
                                 err)))
            goto done;
    } else if (!(ga = ga_new(&sa_ops, &c, c.ints * sizeof(int32_t), &gp))) {
        rc = sw_fail(err, SW_ENOMEM, "out of memory");
        goto done;
    }
    if (o->log_path && (!o->comm || o->comm->rank == 0)) { /* island 0 writes it */
        log = fopen(o->log_path, "w");
        if (!log) {
            rc = sw_fail(err, SW_EIO, "%s: cannot open the convergence log for writing",
                         o->log_path);
            goto done;
        }
        if (gi)
            ga_islands_set_log(gi, log);
        else
            ga_set_log(ga, log);
    }
    if (gi) {
        ga_islands_set_progress(gi, o->progress);
        rc = ga_islands_run(gi, err);
    } else {
        ga_set_progress(ga, o->progress);
        rc = ga_run(ga, err);
    }
    ga_stats st;
    if (gi)
        ga_islands_stats(gi, &st);
    else
        ga_get_stats(ga, &st);
    if (rc) {
        if (rc == SW_ENOFIT)
            rc = sa_refusal(&c, o, gi != NULL, min_pool, &st, err);
        goto done;
    }
    double best;
    const int32_t *x = gi ? ga_islands_best(gi, &best) : ga_best(ga, &best);
    sp_alloc al = {G_CLS(&c, x), G_CNT(&c, x), G_NC(x)};
    rc = swapplan_make(c.sp0, G_SCHED(&c, x), &al, c.threshold, out, NULL, err);
    if (!rc && sa_note(&c, &ip, gi != NULL, min_pool, &st, *out)) {
        plan_free(*out);
        *out = NULL;
        rc = sw_fail(err, SW_ENOMEM, "out of memory");
    }
    if (!rc && params_str(ps, "dump_population")[0] && (rc = dump_population(&c, ga, o, err))) {
        plan_free(*out);
        *out = NULL;
    }
done:
    if (log)
        fclose(log);
    ga_free(ga);
    ga_islands_free(gi);
    swapplan_free(c.sp0);
    sw_free(c.def_sched);
    sw_free(c.fix_sched);
    sw_free(c.init_base);
    sw_free(c.def_cls);
    sw_free(c.def_cnt);
    sw_free(c.size_members);
    return rc;
}

const planner planner_swapadvisor = {1, "swapadvisor", "SwapAdvisor: genetic search over "
                                     "schedules and size-class pools, Belady swap planning",
                                     sa_params, plan_swapadvisor, 0};
