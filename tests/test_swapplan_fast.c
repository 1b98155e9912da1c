/* test_swapplan_fast.c: the swap planner's fast evaluation path (compiled
   form written directly, no plan builder) against the builder path: on
   random profiles, schedules, allocations and thresholds, the same status,
   message and every sim_result field, bit for bit, and the same as
   simulating the final plan the builder makes; and its victim search (the
   per-class position bitsets) against a reference that sorts the
   resident storages. Named tests (tap_run). */
#include <gsl/gsl_rng.h>

#include "../planners/planner.h"
#include "../planners/lib/schedule.h"
#include "../planners/swapadvisor.h"
#include "../planners/lib/swapplan.h"
#include "../sim/simulate.h"
#include "../sim/verify.h"
#include "random_plans.h"
#include "tap.h"

/* field by field, bitwise for doubles (so -0 and NaN are caught too) */
static int same_result(const sim_result *a, const sim_result *b, char *why, size_t n)
{
#define D(f)                                                                                       \
    if (memcmp(&a->f, &b->f, sizeof a->f)) {                                                       \
        snprintf(why, n, #f ": %.17g vs %.17g", (double)a->f, (double)b->f);                      \
        return 0;                                                                                  \
    }
    D(iteration_time_s) D(ideal_time_s) D(normalized_throughput) D(samples_per_s)
    D(peak_memory_bytes) D(reserved_bytes) D(swap_in_bytes) D(swap_out_bytes) D(swap_ins)
    D(swap_outs) D(drops) D(reruns) D(recompute_time_s) D(stall_swap_in_s) D(stall_memory_s)
    D(stall_dependency_s) D(h2d_busy_s) D(d2h_busy_s) D(iterations) D(steady) D(period)
    D(tasks_simulated)
#undef D
    return 1;
}

/* A random allocation of sp's sizes (n of them, at most 4096): up to
   max_k classes (free encoding, renumbered), counts from the minimum to
   extra - 1 above it, repaired to fit the pool with probability p_fit (1:
   always, no draw). Returns the number of classes. */
static int32_t random_alloc(swapplan *sp, gsl_rng *rng, int32_t max_k, unsigned long extra,
                            double p_fit, int32_t *cls, int32_t *cnt)
{
    const sp_sizes *z = swapplan_sizes(sp);
    int32_t n = z->n, need[4096];
    int64_t csize[4096];
    int32_t k = 1 + (int32_t)gsl_rng_uniform_int(rng, (unsigned long)(n < max_k ? n : max_k));
    for (int32_t i = 0; i < n; i++)
        cls[i] = (int32_t)gsl_rng_uniform_int(rng, (unsigned long)k);
    int32_t nc = sa_cls_repair(cls, n, gsl_rng_uniform(rng) < 0.5);
    swapplan_min_counts(sp, cls, nc, need);
    for (int32_t c = 0; c < nc; c++)
        cnt[c] = need[c] + (int32_t)gsl_rng_uniform_int(rng, extra);
    sa_class_sizes(cls, z->size, n, nc, csize);
    if (p_fit >= 1 || gsl_rng_uniform(rng) < p_fit)
        sa_cnt_repair(cnt, csize, need, NULL, nc, swapplan_pool_bytes(sp));
    return nc;
}

/* p's tasks compiled by sim_prog_add_all instead of sim_compile's task by
   task sim_prog_add (each task's two dependencies given in descending
   order, which sim_prog_add_all sorts), then simulated. 1 if a task has
   more than two dependencies of a kind (not representable). */
static int sim_plan_add_all(const plan *p, sim_result *r, sw_err *err)
{
    const graph_profile *g = p->prof;
    int32_t n = p->n_tasks;
    uint8_t *kind = sw_malloc((size_t)n + 1);
    int32_t *x = sw_malloc(((size_t)n + 1) * sizeof *x);
    int64_t *alloc = sw_calloc((size_t)n + 1, sizeof *alloc);
    int64_t *freeb = sw_calloc((size_t)n + 1, sizeof *freeb);
    int32_t *dep = sw_malloc((2 * (size_t)n + 1) * sizeof *dep);
    int32_t *pdep = sw_malloc((2 * (size_t)n + 1) * sizeof *pdep);
    sim_prog *s = sim_prog_new();
    int rc = !kind || !x || !alloc || !freeb || !dep || !pdep || !s ? SW_ENOMEM : 0;
    for (int32_t t = 0; t < n && !rc; t++) {
        const plan_task *k = &p->tasks[t];
        kind[t] = k->kind;
        x[t] = k->kind == TASK_RUN || k->kind == TASK_RERUN ? k->op : k->tensor;
        const plan_place *pl = plan_task_places(p, k);
        for (uint32_t i = 0; i < k->n_place; i++)
            alloc[t] += g->bytes[pl[i].tensor];
        const int32_t *fr = plan_task_frees(p, k);
        for (uint32_t i = 0; i < k->n_free; i++)
            freeb[t] += g->bytes[fr[i]];
        if (k->n_dep > 2 || k->n_pdep > 2)
            rc = 1;
        const int32_t *d = plan_task_deps(p, k), *pd = plan_task_pdeps(p, k);
        dep[2 * t] = k->n_dep > 1 ? d[1] : -1;
        dep[2 * t + 1] = k->n_dep > 0 ? d[0] : -1;
        pdep[2 * t] = k->n_pdep > 1 ? pd[1] : -1;
        pdep[2 * t + 1] = k->n_pdep > 0 ? pd[0] : -1;
    }
    int64_t base_mem = p->workspace_reserve;
    for (int32_t i = 0; i < p->n_resident; i++)
        base_mem += g->tensors[p->resident[i].tensor].bytes;
    if (!rc)
        rc = sim_prog_begin(s, g, NULL, n, NULL, err);
    if (!rc)
        rc = sim_prog_add_all(s, kind, x, alloc, freeb, dep, pdep, err);
    if (!rc)
        rc = sim_prog_end(s, base_mem, p->workspace_reserve + p->capacity, err);
    if (!rc)
        rc = sim_run(s, NULL, r, err);
    sim_prog_free(s);
    sw_free(kind);
    sw_free(x);
    sw_free(alloc);
    sw_free(freeb);
    sw_free(dep);
    sw_free(pdep);
    return rc;
}

typedef struct tally {
    int cases, ok, swapping, mismatches, plan_mismatches, add_all_mismatches;
    char first[2048]; /* the first mismatch */
} tally;

static void one_case(tally *t, swapplan *fast, swapplan *slow,
                     const int32_t *sched, gsl_rng *rng)
{
    int32_t n = swapplan_sizes(fast)->n, cls[4096], cnt[4096];
    if (n <= 0 || n > 4096)
        return;
    /* mostly fitting pools; some that do not */
    int32_t nc = random_alloc(fast, rng, 6, 12, 0.85, cls, cnt);
    sp_alloc al = {cls, cnt, nc};
    static const double thr[] = {0, 0.5, 1, 2};
    double th = thr[gsl_rng_uniform_int(rng, 4)];
    sim_result rf, rs, rp;
    memset(&rf, 0x5a, sizeof rf);
    memset(&rs, 0xa5, sizeof rs);
    sw_err ef, es;
    ef.msg[0] = es.msg[0] = 0;
    int cf = swapplan_make(fast, sched, &al, th, NULL, &rf, &ef);
    int cs = swapplan_make(slow, sched, &al, th, NULL, &rs, &es);
    char why[256] = "";
    t->cases++;
    int same = cf == cs &&
               (cf ? strcmp(ef.msg, es.msg) == 0 : same_result(&rf, &rs, why, sizeof why));
    if (!same) {
        if (!t->mismatches++)
            snprintf(t->first, sizeof t->first, "rc %d vs %d ('%s' vs '%s') %s", cf, cs, ef.msg,
                     es.msg, why);
        return;
    }
    if (cf)
        return;
    t->ok++;
    t->swapping += rf.swap_ins > 0;
    /* the final plan, simulated, gives the same */
    plan *p = NULL;
    sw_err e;
    if (swapplan_make(slow, sched, &al, th, &p, NULL, &e) || sim_plan(p, NULL, NULL, &rp, &e) ||
        !same_result(&rf, &rp, why, sizeof why)) {
        if (!t->plan_mismatches++ && !t->mismatches)
            snprintf(t->first, sizeof t->first, "final plan: %s %s", e.msg, why);
    }
    /* and compiled in one call */
    sim_result ra;
    if (p && (sim_plan_add_all(p, &ra, &e) || !same_result(&rp, &ra, why, sizeof why)))
        t->add_all_mismatches++;
    plan_free(p);
}

/* The planner keeps the eviction limits of the last threshold it was
   given: a planner that has planned with other thresholds gives, for each
   threshold, what a new planner gives (thresholds that change the plan
   included, so a stale limit would show). */
static void threshold_change(void)
{
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 17);
    static const double thr[] = {0, 2, 0.5, 2, 1, 0, 4, 0.25};
    int compared = 0, same = 0, differ_by_thr = 0;
    for (int seed = 21; seed <= 26; seed++) {
        graph_profile *g = random_profile(seed, 120, "sgd");
        if (!g)
            continue;
        int64_t budget = (int64_t)((double)graph_peak_memory(g, g->order) * 0.4) + g->max_workspace;
        swapplan *reused = swapplan_new(g, budget);
        const sp_sizes *z = reused ? swapplan_sizes(reused) : NULL;
        int32_t cls[4096], cnt[4096], need[4096];
        int64_t csize[4096];
        if (!z || z->n <= 0 || z->n > 4096) {
            swapplan_free(reused);
            graph_free(g);
            continue;
        }
        /* one class per size, counts a little above the minimum */
        for (int32_t i = 0; i < z->n; i++)
            cls[i] = i;
        swapplan_min_counts(reused, cls, z->n, need);
        for (int32_t c = 0; c < z->n; c++)
            cnt[c] = need[c] + (int32_t)gsl_rng_uniform_int(rng, 3);
        sa_class_sizes(cls, z->size, z->n, z->n, csize);
        sa_cnt_repair(cnt, csize, need, NULL, z->n, swapplan_pool_bytes(reused));
        sp_alloc al = {cls, cnt, z->n};
        double t0 = NAN;
        for (size_t i = 0; i < sizeof thr / sizeof thr[0]; i++) {
            swapplan *fresh = swapplan_new(g, budget);
            sim_result ra, rb;
            sw_err ea, eb;
            int ca = swapplan_make(reused, g->order, &al, thr[i], NULL, &ra, &ea);
            int cb = fresh ? swapplan_make(fresh, g->order, &al, thr[i], NULL, &rb, &eb) : -1;
            char why[256] = "";
            compared++;
            if (ca == cb && (ca || same_result(&ra, &rb, why, sizeof why)))
                same++;
            else if (same + 1 == compared)
                printf("#   profile %d, threshold %g: rc %d vs %d %s\n", seed, thr[i], ca, cb, why);
            if (!ca && i == 0)
                t0 = ra.iteration_time_s;
            else if (!ca && ra.iteration_time_s != t0)
                differ_by_thr++;
            swapplan_free(fresh);
        }
        swapplan_free(reused);
        graph_free(g);
    }
    IS_INT(same, compared, "a reused planner gives what a new one gives, whatever thresholds "
           "it saw before (%d plans)", compared);
    OK(differ_by_thr > 0, "the thresholds change some plans' times (%d), so the comparison "
       "can fail", differ_by_thr);
    gsl_rng_free(rng);
}

/* swapplan_min_counts (which counts each distinct multiset of an op's
   sizes once) against the definition: per class, the most of one op's
   storages (zero bytes left out) it maps to, over every op. */
static void min_counts_definition(void)
{
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 29);
    int compared = 0, same = 0, above_one = 0;
    for (int seed = 31; seed <= 38; seed++) {
        graph_profile *g = random_profile(seed, 60 + 40 * (seed % 4), seed % 2 ? "sgd" : "adam");
        swapplan *sp = g ? swapplan_new(g, INT64_MAX / 4) : NULL;
        const sp_sizes *z = sp ? swapplan_sizes(sp) : NULL;
        if (!z || z->n <= 0 || z->n > 512) {
            swapplan_free(sp);
            graph_free(g);
            continue;
        }
        for (int trial = 0; trial < 6; trial++) {
            int32_t cls[512], need[512], want[512], cnt[512];
            int32_t k = 1 + (int32_t)gsl_rng_uniform_int(rng, (unsigned long)(z->n < 5 ? z->n : 5));
            for (int32_t i = 0; i < z->n; i++)
                cls[i] = trial == 0 ? i : (int32_t)gsl_rng_uniform_int(rng, (unsigned long)k);
            int32_t nc = sa_cls_repair(cls, z->n, trial % 2);
            swapplan_min_counts(sp, cls, nc, need);
            for (int32_t c = 0; c < nc; c++)
                want[c] = 0;
            for (int32_t o = 0; o < g->n_ops; o++) {
                for (int32_t c = 0; c < nc; c++)
                    cnt[c] = 0;
                for (int32_t a = g->acc_off[o]; a < g->acc_off[o + 1]; a++) {
                    int32_t s = g->acc[a];
                    if (g->tensors[s].storage != s || g->tensors[s].bytes <= 0)
                        continue;
                    int32_t si = 0;
                    while (si < z->n && z->size[si] != g->tensors[s].bytes)
                        si++;
                    if (si < z->n && ++cnt[cls[si]] > want[cls[si]])
                        want[cls[si]] = cnt[cls[si]];
                }
            }
            compared++;
            same += memcmp(need, want, (size_t)nc * sizeof *need) == 0;
            for (int32_t c = 0; c < nc; c++)
                above_one += want[c] > 1;
        }
        swapplan_free(sp);
        graph_free(g);
    }
    OK(compared > 20, "%d class maps compared", compared);
    IS_INT(same, compared, "swapplan_min_counts gives the most storages of one op per class");
    OK(above_one > 0, "some class needs more than one object (%d), so counting matters",
       above_one);
    gsl_rng_free(rng);
}

/* A random profile (sgd on odd seeds, adam on even) and its planner with
   no budget, when it has 2 to 512 sizes; else NULL (nothing kept). */
static swapplan *sized_profile(int seed, int ops, graph_profile **g)
{
    *g = random_profile(seed, ops, seed % 2 ? "sgd" : "adam");
    swapplan *sp = *g ? swapplan_new(*g, INT64_MAX / 4) : NULL;
    if (sp && swapplan_sizes(sp)->n > 1 && swapplan_sizes(sp)->n <= 512)
        return sp;
    swapplan_free(sp);
    graph_free(*g);
    *g = NULL;
    return NULL;
}

/* The pool of mapping cls (monotone) with each class's least count. */
static int64_t pool_of(swapplan *sp, const int32_t *cls)
{
    const sp_sizes *z = swapplan_sizes(sp);
    int32_t need[512];
    int64_t csize[512], sum = 0;
    int32_t nc = z->n ? cls[z->n - 1] + 1 : 0;
    swapplan_min_counts(sp, cls, nc, need);
    sa_class_sizes(cls, z->size, z->n, nc, csize);
    for (int32_t c = 0; c < nc; c++)
        sum += csize[c] * need[c];
    return sum;
}

/* swapplan_min_pool against every monotone mapping (sizes up to 15: all
   2^(n-1) of them; more: random ones, which it must not beat), its
   mapping reaching it; then that mapping with the least counts runs
   random schedules in exactly that pool, and the planner refuses a pool
   one byte smaller at once, naming the smallest pool. */
static void min_pool_exact(void)
{
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 53);
    int exhaustive = 0, same = 0, sampled = 0, beaten = 0, reached = 0, runs = 0, ran = 0;
    int refused = 0, profiles = 0, merged = 0;
    char first[1024] = "";
    for (int seed = 61; seed <= 84; seed++) {
        graph_profile *g;
        swapplan *sp = sized_profile(seed, seed % 3 ? 8 + 30 * (seed % 5) : 6 + seed % 4, &g);
        if (!sp)
            continue;
        const sp_sizes *z = swapplan_sizes(sp);
        profiles++;
        int32_t n = z->n, cls[512], best_cls[512];
        int64_t mp = swapplan_min_pool(sp, best_cls);
        reached += pool_of(sp, best_cls) == mp;
        merged += best_cls[n - 1] + 1 < n;
        if (n <= 15) {
            int64_t lo = INT64_MAX;
            for (uint32_t m = 0; m < 1u << (n - 1); m++) {
                cls[0] = 0;
                for (int32_t i = 1; i < n; i++)
                    cls[i] = cls[i - 1] + (int32_t)((m >> (i - 1)) & 1);
                int64_t v = pool_of(sp, cls);
                lo = v < lo ? v : lo;
            }
            exhaustive++;
            same += lo == mp;
            if (lo != mp && !first[0])
                snprintf(first, sizeof first, "profile %d (%d sizes): %lld, exhaustive %lld", seed,
                         n, (long long)mp, (long long)lo);
        } else {
            for (int k = 0; k < 200; k++, sampled++) {
                cls[0] = 0;
                for (int32_t i = 1; i < n; i++)
                    cls[i] = cls[i - 1] + (int32_t)gsl_rng_uniform_int(rng, 2);
                beaten += pool_of(sp, cls) < mp;
            }
        }
        /* that pool runs random schedules */
        int64_t budget = mp + g->max_workspace;
        swapplan *tight = swapplan_new(g, budget);
        sa_sched_scratch *sc = sa_sched_scratch_new(g);
        int32_t *sched = sw_malloc((size_t)g->n_ops * sizeof *sched), cnt[512];
        int32_t nc = best_cls[n - 1] + 1;
        swapplan_min_counts(sp, best_cls, nc, cnt);
        for (int i = 0; i < 4 && tight && sc && sched; i++) {
            sa_schedule_mutate(g, sc, g->order, i == 0 ? 0 : 1, rng, sched);
            sp_alloc al = {best_cls, cnt, nc};
            plan *p = NULL;
            sw_err e;
            runs++;
            if (swapplan_make(tight, sched, &al, 1.0, &p, NULL, &e) == 0 &&
                plan_verify(p, NULL, &e) == 0)
                ran++;
            else if (!first[0])
                snprintf(first, sizeof first, "profile %d, schedule %d: %s", seed, i, e.msg);
            plan_free(p);
        }
        sw_free(sched);
        sa_sched_scratch_free(sc);
        swapplan_free(tight);
        /* the planner, one byte short */
        const planner *pl = planner_find("swapadvisor");
        planner_opts o;
        planner_opts_init(&o, pl);
        o.memory_budget = budget - 1;
        o.seed = 1;
        sw_err e;
        params_set(&o.params, "generations", "2", &e);
        plan *p = NULL;
        double t0 = sw_now();
        int rc = planner_run(pl, g, &o, &p, &e);
        refused += rc == SW_ENOFIT && strstr(e.msg, "smallest size-class pool") &&
                   sw_now() - t0 < 5;
        plan_free(p);
        planner_opts_free(&o);
        swapplan_free(sp);
        graph_free(g);
    }
    OK(profiles >= 18, "%d profiles", profiles);
    OK(exhaustive >= 6 && sampled >= 600, "%d against every mapping, %d random mappings of the "
       "others", exhaustive, sampled);
    IS_INT(same, exhaustive, "the least over every monotone mapping");
    IS_INT(beaten, 0, "no random mapping needs less");
    IS_INT(reached, profiles, "the mapping it returns needs exactly that");
    OK(merged > 0, "on %d profiles the least merges sizes into one class", merged);
    IS_INT(ran, runs, "that mapping with its least counts runs every schedule in that pool "
           "(and the plan verifies)");
    IS_INT(refused, profiles, "one byte less: swapadvisor says so at once, naming the smallest "
           "pool");
    if (first[0])
        printf("#   first: %s\n", first);
    gsl_rng_free(rng);
}

static double u01(void *r) { return gsl_rng_uniform(r); }

/* swapplan_fitting_cls: monotone mappings whose smallest pool fits, the
   paper's draw itself where the budget does not bind, none below the
   smallest pool; and swapadvisor with first_allocation=fitting plans at
   exactly the smallest pool, where every allocation it draws fits. */
static void fitting_cls(void)
{
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937), *r2 = gsl_rng_alloc(gsl_rng_mt19937);
    int drawn = 0, fit = 0, monotone = 0, unbound = 0, paper = 0, below = 0, profiles = 0;
    int planned = 0, none_unfit = 0, random_fails = 0, tight = 0;
    for (int seed = 91; seed <= 106; seed++) {
        graph_profile *g;
        swapplan *sp = sized_profile(seed, 20 + 30 * (seed % 5), &g);
        if (!sp)
            continue;
        const sp_sizes *z = swapplan_sizes(sp);
        profiles++;
        int32_t n = z->n, cls[512], want[512];
        int64_t mp = swapplan_min_pool(sp, NULL);
        swapplan_runs *runs = swapplan_runs_new(sp);
        for (int k = 0; k < 40 && runs; k++) {
            double f = k < 30 ? 1 + 0.1 * k : 1e6; /* tight to loose, then unbounded */
            int64_t bytes = (int64_t)((double)mp * f);
            gsl_rng_set(rng, (unsigned long)(1000 * seed + k));
            int32_t nc = swapplan_fitting_cls(sp, runs, bytes, u01, rng, cls);
            drawn++;
            int mono = nc > 0 && cls[0] == 0 && cls[n - 1] == nc - 1;
            for (int32_t i = 1; i < n; i++)
                mono &= cls[i] == cls[i - 1] || cls[i] == cls[i - 1] + 1;
            monotone += mono;
            fit += nc > 0 && pool_of(sp, cls) <= bytes;
            tight += k == 0 && nc > 0 && pool_of(sp, cls) == mp;
            if (k >= 30) { /* the paper's draw, from the same numbers */
                unbound++;
                gsl_rng_set(r2, (unsigned long)(1000 * seed + k));
                want[0] = 0;
                for (int32_t i = 1; i < n; i++)
                    want[i] = want[i - 1] + (gsl_rng_uniform(r2) < 0.5);
                paper += !memcmp(cls, want, (size_t)n * sizeof *cls);
            }
        }
        below += runs && swapplan_fitting_cls(sp, runs, mp - 1, u01, rng, cls) == 0;
        swapplan_runs_free(runs);
        /* the planner at exactly the smallest pool */
        const planner *pl = planner_find("swapadvisor");
        for (int fa = 0; fa < 2; fa++) {
            planner_opts o;
            planner_opts_init(&o, pl);
            o.memory_budget = mp + g->max_workspace;
            o.seed = 1;
            sw_err e;
            params_set(&o.params, "generations", "2", &e);
            params_set(&o.params, "population", "8", &e);
            params_set(&o.params, "seed_default", "false", &e);
            params_set(&o.params, "first_allocation", fa ? "fitting" : "random", &e);
            plan *p = NULL;
            int rc = planner_run(pl, g, &o, &p, &e);
            if (fa) {
                planned += rc == 0 && plan_verify(p, NULL, &e) == 0;
                none_unfit += p && p->notes && strstr(p->notes, "; 0 of the first generation's 8 "
                                                      "random allocations cannot fit");
            } else {
                random_fails += rc == SW_ENOFIT || (p && p->notes && !strstr(p->notes, "; 0 of "));
            }
            plan_free(p);
            planner_opts_free(&o);
        }
        swapplan_free(sp);
        graph_free(g);
    }
    OK(profiles >= 12, "%d profiles, %d mappings drawn", profiles, drawn);
    IS_INT(monotone, drawn, "every mapping is monotone (classes of contiguous sizes)");
    IS_INT(fit, drawn, "and its smallest pool fits the bytes given");
    IS_INT(tight, profiles, "at exactly the smallest pool, it needs exactly that");
    IS_INT(paper, unbound, "with room to spare it is the paper's random draw, number for number");
    IS_INT(below, profiles, "one byte below the smallest pool: none");
    IS_INT(planned, profiles, "swapadvisor with first_allocation=fitting plans within exactly "
           "the smallest pool (the plan verifies)");
    IS_INT(none_unfit, profiles, "and none of its first generation's allocations fails to fit");
    OK(random_fails > 0, "there the paper's random allocations do not all fit (%d of %d "
       "profiles)", random_fails, profiles);
    gsl_rng_free(rng);
    gsl_rng_free(r2);
}

static void fast_matches_builder(void)
{
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 13);
    tally t;
    memset(&t, 0, sizeof t);
    int64_t n_fast = 0, n_slow_fast = 0;
    static const int ops[] = {30, 80, 200, 400};
    for (int seed = 1; seed <= 16; seed++) {
        graph_profile *g = random_profile(seed, ops[seed % 4], seed % 3 ? "sgd" : "adam");
        if (!g) {
            OK(0, "random profile %d", seed);
            continue;
        }
        int64_t peak = graph_peak_memory(g, g->order);
        static const double frac[] = {0.35, 0.5, 0.7, 1.1};
        sa_sched_scratch *sc = sa_sched_scratch_new(g);
        int32_t *sched = sw_malloc((size_t)g->n_ops * sizeof *sched);
        for (int b = 0; b < 4 && sc && sched; b++) {
            int64_t budget = (int64_t)((double)peak * frac[b]) + g->max_workspace;
            swapplan *fast = swapplan_new(g, budget), *slow = swapplan_new(g, budget);
            if (!fast || !slow) {
                OK(0, "swapplan_new");
                swapplan_free(fast);
                swapplan_free(slow);
                continue;
            }
            swapplan_set_fast(slow, 0);
            for (int i = 0; i < 12; i++) {
                /* the profile's order, near it, and uniformly random orders */
                double p = i == 0 ? 0 : i < 6 ? 0.1 : 1;
                sa_schedule_mutate(g, sc, g->order, p, rng, sched);
                one_case(&t, fast, slow, sched, rng);
            }
            n_fast += swapplan_fast_count(fast);
            n_slow_fast += swapplan_fast_count(slow);
            swapplan_free(fast);
            swapplan_free(slow);
        }
        sw_free(sched);
        sa_sched_scratch_free(sc);
        graph_free(g);
    }
    printf("# %d cases: %d planned (%d swapping), fast path %lld\n", t.cases, t.ok, t.swapping,
           (long long)n_fast);
    IS_INT(n_slow_fast, 0, "swapplan_set_fast(sp, 0) keeps evaluations on the builder path");
    IS_INT(t.mismatches, 0, "fast path and builder path agree on status, message and every "
           "sim_result field");
    if (t.mismatches || t.plan_mismatches)
        printf("#   first: %s\n", t.first);
    IS_INT(t.plan_mismatches, 0, "and with the final plan simulated");
    IS_INT(t.add_all_mismatches, 0, "and with that plan's program written by sim_prog_add_all");
    OK(t.ok >= t.cases / 4, "most cases plan (%d of %d)", t.ok, t.cases);
    OK(t.swapping >= t.ok / 4, "many swap (%d of %d)", t.swapping, t.ok);
    OK(n_fast >= t.ok * 9 / 10, "the fast path handles nearly all (%lld of %d)",
       (long long)n_fast, t.ok);
    gsl_rng_free(rng);
}

/* Belady's victims: the per-class position bitsets need walks against
   the reference that sorts every resident storage of the class by key
   (swapplan_set_naive_victims), on random profiles, schedules, class maps
   and thresholds: the same status and message, the same plan task by
   task, and the same simulated result. */
static void victims_match_reference(void)
{
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 41);
    int cases = 0, same = 0, planned = 0, swapping = 0, held = 0;
    char first[2048] = "";
    static const int ops[] = {40, 120, 300};
    for (int seed = 51; seed <= 62; seed++) {
        graph_profile *g = random_profile(seed, ops[seed % 3], seed % 2 ? "sgd" : "adam");
        if (!g) {
            OK(0, "random profile %d", seed);
            continue;
        }
        /* on every other profile, the framework holds a quarter of the
           storages until a random op (past their last use, often) */
        for (int32_t t = 0; t < g->n_tensors && seed % 2; t++) {
            graph_tensor *x = &g->tensors[t];
            if (x->storage == t && x->view_of < 0 && !x->persistent &&
                gsl_rng_uniform(rng) < 0.25)
                x->held_until = (int32_t)gsl_rng_uniform_int(rng, (unsigned long)g->n_ops);
            held += x->held_until >= 0;
        }
        int64_t peak = graph_peak_memory(g, g->order);
        sa_sched_scratch *sc = sa_sched_scratch_new(g);
        int32_t *sched = sw_malloc((size_t)g->n_ops * sizeof *sched);
        static const double frac[] = {0.3, 0.45, 0.7};
        for (int b = 0; b < 3 && sc && sched; b++) {
            int64_t budget = (int64_t)((double)peak * frac[b]) + g->max_workspace;
            swapplan *walk = swapplan_new(g, budget), *ref = swapplan_new(g, budget);
            if (!walk || !ref || swapplan_set_naive_victims(ref, 1)) {
                OK(0, "swapplan_new");
                swapplan_free(walk);
                swapplan_free(ref);
                continue;
            }
            int32_t n = swapplan_sizes(walk)->n, cls[4096], cnt[4096];
            for (int i = 0; i < 10 && n > 0 && n <= 4096; i++) {
                sa_schedule_mutate(g, sc, g->order, i == 0 ? 0 : i < 5 ? 0.1 : 1, rng, sched);
                int32_t nc = random_alloc(walk, rng, 4, 4, 1, cls, cnt);
                sp_alloc al = {cls, cnt, nc};
                static const double thr[] = {0, 0.5, 1, 3};
                double th = thr[gsl_rng_uniform_int(rng, 4)];
                plan *pa = NULL, *pb = NULL;
                sw_err ea, eb;
                ea.msg[0] = eb.msg[0] = 0;
                int ca = swapplan_make(walk, sched, &al, th, &pa, NULL, &ea);
                int cb = swapplan_make(ref, sched, &al, th, &pb, NULL, &eb);
                int ok = ca == cb && (ca ? strcmp(ea.msg, eb.msg) == 0
                                         : pa->n_tasks == pb->n_tasks);
                for (int32_t t = 0; ok && !ca && t < pa->n_tasks; t++)
                    ok = pa->tasks[t].kind == pb->tasks[t].kind &&
                         pa->tasks[t].op == pb->tasks[t].op &&
                         pa->tasks[t].tensor == pb->tasks[t].tensor;
                sim_result ra, rb;
                char why[256] = "";
                if (ok && !ca)
                    ok = swapplan_make(walk, sched, &al, th, NULL, &ra, &ea) == 0 &&
                         swapplan_make(ref, sched, &al, th, NULL, &rb, &eb) == 0 &&
                         same_result(&ra, &rb, why, sizeof why);
                cases++;
                same += ok;
                if (!ok && !first[0])
                    snprintf(first, sizeof first, "profile %d, budget %d, case %d: rc %d vs %d "
                             "('%.300s' vs '%.300s') %.200s", seed, b, i, ca, cb, ea.msg, eb.msg,
                             why);
                if (!ca && ok) {
                    planned++;
                    swapping += ra.swap_ins > 0;
                }
                plan_free(pa);
                plan_free(pb);
            }
            swapplan_free(walk);
            swapplan_free(ref);
        }
        sw_free(sched);
        sa_sched_scratch_free(sc);
        graph_free(g);
    }
    printf("# %d cases: %d planned, %d swapping; %d tensors held past their last use\n", cases,
           planned, swapping, held);
    IS_INT(same, cases, "the victims of the bitset walk are the reference's: same status, "
           "message, tasks and simulated result");
    if (same != cases)
        printf("#   first: %s\n", first);
    OK(planned >= cases / 3 && swapping >= planned / 2, "most cases plan and swap (%d, %d of %d)",
       planned, swapping, cases);
    gsl_rng_free(rng);
}

/* sim_prog_add_all refuses a dependency on a task that does not exist,
   naming it, and tasks added before it */
static void add_all_errors(void)
{
    graph_profile *g = random_profile(3, 30, "sgd");
    if (!g) {
        OK(0, "random profile");
        return;
    }
    sim_prog *s = sim_prog_new();
    sw_err e;
    uint8_t kind[2] = {TASK_RUN, TASK_RUN};
    int32_t x[2] = {0, 1}, dep[4] = {-1, -1, 0, 5}, pdep[4] = {-1, -1, -1, -1};
    int64_t z[2] = {0, 0};
    IS_INT(sim_prog_begin(s, g, NULL, 2, NULL, &e), 0, "begin");
    IS_INT(sim_prog_add_all(s, kind, x, z, z, dep, pdep, &e), SW_EINVAL, "a dependency on task 5 "
           "of 2 is refused");
    OK(strstr(e.msg, "task 1 depends on task 5") != NULL, "named: %s", e.msg);
    dep[3] = -1;
    pdep[2] = 2;
    IS_INT(sim_prog_begin(s, g, NULL, 2, NULL, &e), 0, "begin again");
    IS_INT(sim_prog_add_all(s, kind, x, z, z, dep, pdep, &e), SW_EINVAL,
           "and one on the previous iteration's task 2");
    OK(strstr(e.msg, "task 2 of the previous iteration") != NULL, "named: %s", e.msg);
    pdep[2] = 0;
    IS_INT(sim_prog_begin(s, g, NULL, 2, NULL, &e), 0, "begin again");
    IS_INT(sim_prog_add(s, TASK_RUN, 0, 0, 0, NULL, 0, NULL, 0, &e), 0, "one task added");
    IS_INT(sim_prog_add_all(s, kind, x, z, z, dep, pdep, &e), SW_EINVAL,
           "sim_prog_add_all after sim_prog_add is refused");
    IS_INT(sim_prog_begin(s, g, NULL, 2, NULL, &e), 0, "begin again");
    IS_INT(sim_prog_add_all(s, kind, x, z, z, dep, pdep, &e), 0, "valid tasks are taken");
    IS_INT(sim_prog_end(s, 0, 0, &e), 0, "and the program ends");
    IS_INT(sim_prog_tasks(s), 2, "with its two tasks");
    sim_prog_free(s);
    graph_free(g);
}

static const tap_test tests[] = {
    {"add_all_errors", add_all_errors},
    {"min_counts_definition", min_counts_definition},
    {"min_pool_exact", min_pool_exact},
    {"fitting_cls", fitting_cls},
    {"victims_match_reference", victims_match_reference},
    {"fast_matches_builder", fast_matches_builder},
    {"threshold_change", threshold_change},
};

int main(int argc, char **argv) { return tap_run(tests, SW_ARRAY_LEN(tests), argc, argv); }
