/* test_islands.c: the island model (ga/islands.c) on a toy problem: one
   island is ga_run; the result depends on the seed and generations alone,
   not on threads nor on how the islands are spread over processes (here
   threads standing in for MPI ranks, through a ga_comm of their own); a
   failure on one rank reaches every rank, none waits; migration moves the
   best into the worst places. No MPI needed (tests/test_mpi.c runs it). */
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include "../ga/islands.h"
#include "tap.h"

#define GENES 24

/* the toy problem: genes in [0, 100), fitness the distance to a target */
typedef struct toy {
    long fail_after;     /* evaluate returns NAN after this many (0: never) */
    atomic_long evals;   /* evaluations so far */
} toy;

static void t_init(void *u, void *w, gsl_rng *r, void *g, int index)
{
    (void)u, (void)w, (void)index;
    int32_t *x = g;
    for (int i = 0; i < GENES; i++)
        x[i] = (int32_t)gsl_rng_uniform_int(r, 100);
}

static void t_cross(void *u, void *w, gsl_rng *r, const void *a, const void *b, void *const c[4])
{
    (void)u, (void)w;
    const int32_t *pa = a, *pb = b;
    for (int k = 0; k < 4; k += 2) {
        int cut = (int)gsl_rng_uniform_int(r, GENES);
        int32_t *c0 = c[k], *c1 = c[k + 1];
        for (int i = 0; i < GENES; i++) {
            c0[i] = i < cut ? pa[i] : pb[i];
            c1[i] = i < cut ? pb[i] : pa[i];
        }
    }
}

static void t_mutate(void *u, void *w, gsl_rng *r, void *g, double p)
{
    (void)u, (void)w;
    int32_t *x = g;
    for (int i = 0; i < GENES; i++)
        if (gsl_rng_uniform(r) < p)
            x[i] = (int32_t)gsl_rng_uniform_int(r, 100);
}

static double t_eval(void *u, void *w, const void *g)
{
    (void)w;
    toy *t = u;
    long n = atomic_fetch_add(&t->evals, 1) + 1;
    if (t->fail_after && n > t->fail_after)
        return NAN;
    const int32_t *x = g;
    double d = 1;
    for (int i = 0; i < GENES; i++)
        d += fabs((double)(x[i] - (i * 37) % 100));
    return d;
}

static const ga_ops toy_ops = {1, t_init, t_cross, t_mutate, t_eval, NULL, NULL};

static ga_params params(int threads)
{
    ga_params p;
    ga_params_default(&p);
    p.population = 8;
    p.generations = 23; /* not a multiple of the interval: a short last stretch */
    p.time_budget_s = 0;
    p.threads = threads;
    p.seed = 7;
    p.pin = 0;
    return p;
}

/* one search's outcome */
typedef struct outcome {
    int rc;
    int32_t best[GENES];
    double fit;
    ga_stats st;
    char msg[768];
} outcome;

static void run_islands(int islands, int threads, const ga_comm *comm, toy *t, outcome *out)
{
    memset(out, 0, sizeof *out);
    ga_params p = params(threads);
    ga_island_params ip = {islands, 5, 2};
    ga_islands *gi;
    sw_err e;
    out->rc = ga_islands_new(&toy_ops, t, sizeof(int32_t) * GENES, &p, &ip, comm, &gi, &e);
    if (!out->rc) {
        out->rc = ga_islands_run(gi, &e);
        const void *b = ga_islands_best(gi, &out->fit);
        if (b)
            memcpy(out->best, b, sizeof out->best);
        ga_islands_stats(gi, &out->st);
        ga_islands_free(gi);
    }
    if (out->rc)
        snprintf(out->msg, sizeof out->msg, "%s", e.msg);
}

static int same(const outcome *a, const outcome *b)
{
    return a->rc == b->rc && !memcmp(a->best, b->best, sizeof a->best) && a->fit == b->fit &&
           a->st.evaluations == b->st.evaluations && a->st.generations == b->st.generations &&
           a->st.initial_best == b->st.initial_best;
}

static void test_one_island_is_ga_run(void)
{
    toy t = {0, 0};
    ga_params p = params(1);
    ga_ctx *ga = ga_new(&toy_ops, &t, sizeof(int32_t) * GENES, &p);
    sw_err e;
    IS_INT(ga_run(ga, &e), 0, "ga_run");
    double f;
    const void *b = ga_best(ga, &f);
    outcome o;
    run_islands(1, 1, NULL, &t, &o);
    IS_INT(o.rc, 0, "one island runs");
    OK(b && !memcmp(b, o.best, sizeof o.best) && f == o.fit,
       "one island finds what ga_run finds (%g, %g)", f, o.fit);
    ga_stats st;
    ga_get_stats(ga, &st);
    IS_INT(o.st.evaluations, st.evaluations, "the same evaluations");
    ga_free(ga);
}

static void test_islands_deterministic(void)
{
    toy t = {0, 0};
    outcome a, b, c;
    run_islands(3, 1, NULL, &t, &a);
    run_islands(3, 1, NULL, &t, &b);
    run_islands(3, 2, NULL, &t, &c);
    IS_INT(a.rc, 0, "three islands run");
    OK(same(&a, &b), "the same result twice");
    OK(same(&a, &c), "the same result with two threads per island");
    IS_INT(a.st.generations, 23, "23 generations per island");
    IS_INT(a.st.evaluations, 3 * (8 + 23 * 16), "every island's evaluations counted");
    OK(a.fit <= a.st.initial_best, "the search improves on its first generations");
}

/* ---- a ga_comm over threads, standing in for MPI ranks ---- */

#define MAX_RANKS 4
#define SLOT 65536

typedef struct tshared {
    int size;
    pthread_barrier_t bar;
    unsigned char slot[MAX_RANKS][SLOT];
} tshared;

typedef struct trank {
    tshared *sh;
    int rank;
    ga_comm comm;
    toy t;
    int islands;
    outcome out;
} trank;

static int t_shift(void *ctx, const void *send, void *recv, size_t n, sw_err *err)
{
    trank *r = ctx;
    if (n > SLOT)
        return sw_fail(err, SW_EINVAL, "too long");
    memcpy(r->sh->slot[r->rank], send, n);
    pthread_barrier_wait(&r->sh->bar);
    memcpy(recv, r->sh->slot[(r->rank + r->sh->size - 1) % r->sh->size], n);
    pthread_barrier_wait(&r->sh->bar);
    return 0;
}

static int t_allgather(void *ctx, const void *mine, void *all, size_t n, sw_err *err)
{
    trank *r = ctx;
    if (n > SLOT)
        return sw_fail(err, SW_EINVAL, "too long");
    memcpy(r->sh->slot[r->rank], mine, n);
    pthread_barrier_wait(&r->sh->bar);
    for (int k = 0; k < r->sh->size; k++)
        memcpy((unsigned char *)all + (size_t)k * n, r->sh->slot[k], n);
    pthread_barrier_wait(&r->sh->bar);
    return 0;
}

static void *rank_main(void *arg)
{
    trank *r = arg;
    run_islands(r->islands, 1, &r->comm, &r->t, &r->out);
    return NULL;
}

/* islands over `size` thread-ranks; rank fail_rank fails after fail_after evaluations */
static void run_ranks(int size, int islands, int fail_rank, long fail_after, trank *rk)
{
    static tshared sh;
    sh.size = size;
    pthread_barrier_init(&sh.bar, NULL, (unsigned)size);
    pthread_t th[MAX_RANKS];
    for (int k = 0; k < size; k++) {
        memset(&rk[k], 0, sizeof rk[k]);
        rk[k].sh = &sh;
        rk[k].rank = k;
        rk[k].islands = islands;
        rk[k].t.fail_after = k == fail_rank ? fail_after : 0;
        rk[k].comm = (ga_comm){1, k, size, &rk[k], t_shift, t_allgather};
        pthread_create(&th[k], NULL, rank_main, &rk[k]);
    }
    for (int k = 0; k < size; k++)
        pthread_join(th[k], NULL);
    pthread_barrier_destroy(&sh.bar);
}

static void test_spread_over_ranks_same_result(void)
{
    toy t = {0, 0};
    trank rk[MAX_RANKS];
    outcome one;
    run_islands(3, 1, NULL, &t, &one);
    run_ranks(3, 3, -1, 0, rk);
    for (int k = 0; k < 3; k++)
        OK(rk[k].out.rc == 0 && same(&rk[k].out, &one),
           "3 islands on 3 ranks: rank %d has the one-process result", k);
    run_islands(6, 1, NULL, &t, &one);
    run_ranks(3, 6, -1, 0, rk);
    for (int k = 0; k < 3; k++)
        OK(rk[k].out.rc == 0 && same(&rk[k].out, &one),
           "6 islands on 3 ranks (two each): rank %d has the one-process result", k);
}

static void test_failure_reaches_every_rank(void)
{
    trank rk[MAX_RANKS];
    alarm(60); /* a rank left waiting would hang: fail loudly instead */
    run_ranks(3, 3, 1, 100, rk);
    alarm(0);
    for (int k = 0; k < 3; k++) {
        IS_INT(rk[k].out.rc, SW_ENOMEM, "rank %d ends with rank 1's error", k);
        IS_STR_HAS(rk[k].out.msg, "rank 1: out of memory", "rank %d names rank 1", k);
    }
}

static void test_bad_parameters(void)
{
    toy t = {0, 0};
    ga_params p = params(1);
    ga_island_params ip = {3, 5, 8};
    ga_islands *gi;
    sw_err e;
    IS_INT(ga_islands_new(&toy_ops, &t, 4, &p, &ip, NULL, &gi, &e), SW_EINVAL,
           "migrants must be fewer than the population");
    IS_STR_HAS(e.msg, "migrants (8)", "the message says which");
    trank r = {0};
    r.comm = (ga_comm){1, 0, 2, &r, t_shift, t_allgather};
    ip.migrants = 2;
    IS_INT(ga_islands_new(&toy_ops, &t, 4, &p, &ip, &r.comm, &gi, &e), SW_EINVAL,
           "3 islands on 2 ranks refused");
    IS_STR_HAS(e.msg, "multiple of 2", "the message says what would do");
}

static void test_migration_replaces_the_worst(void)
{
    toy t = {0, 0};
    ga_params p = params(1);
    ga_ctx *a = ga_new(&toy_ops, &t, sizeof(int32_t) * GENES, &p);
    p.seed = 99;
    ga_ctx *b = ga_new(&toy_ops, &t, sizeof(int32_t) * GENES, &p);
    sw_err e;
    IS_INT(ga_begin(a, &e) | ga_begin(b, &e), 0, "two populations");
    int32_t em[2][GENES], em2[2][GENES];
    double fit[2], fit2[2], best_a, best_b;
    ga_best(a, &best_a);
    ga_best(b, &best_b);
    IS_INT(ga_emigrants(a, 2, em, fit), 2, "two emigrants");
    OK(fit[0] == best_a && fit[0] <= fit[1], "the best first (%g, %g)", fit[0], fit[1]);
    ga_immigrate(b, 2, em, fit);
    double now_b;
    ga_best(b, &now_b);
    IS_NUM(now_b, best_a < best_b ? best_a : best_b, 0, "b's best is now the better of both");
    ga_emigrants(b, 2, em2, fit2);
    OK(fit2[0] <= fit[0], "a's best is among b's best now");
    double inf[1] = {INFINITY};
    ga_immigrate(b, 1, em, inf);
    ga_emigrants(b, 2, em2, fit2);
    OK(isfinite(fit2[0]), "an infeasible migrant is not taken");
    ga_free(a);
    ga_free(b);
}

/* elitism: with selection made nearly uniform (a huge temperature), the
   population's best gets worse at some generation without elite, and never
   with elite=1 (the best candidate always survives) */
static double pop_best(const ga_ctx *ga, int n)
{
    double best = INFINITY;
    for (int i = 0; i < n; i++) {
        double f;
        if (ga_individual(ga, i, &f) && f < best)
            best = f;
    }
    return best;
}

static void test_elite_keeps_the_best(void)
{
    for (int elite = 0; elite <= 1; elite++) {
        toy t = {0};
        ga_params p = params(1);
        p.temperature = 1e6;
        p.mutation = 0.5;
        p.elite = elite;
        ga_ctx *ga = ga_new(&toy_ops, &t, GENES * sizeof(int32_t), &p);
        sw_err e = {0};
        int rc = ga ? ga_begin(ga, &e) : SW_ENOMEM;
        IS_INT(rc, 0, "elite=%d: starts", elite);
        int worse = 0;
        double prev = ga ? pop_best(ga, p.population) : 0;
        for (int g = 0; g < 40 && !rc; g++) {
            rc = ga_step(ga, 1, &e);
            double now = pop_best(ga, p.population);
            worse += now > prev;
            prev = now;
        }
        IS_INT(rc, 0, "elite=%d: 40 generations", elite);
        if (elite)
            IS_INT(worse, 0, "elite=1: the population's best never gets worse");
        else
            OK(worse > 0, "elite=0, uniform selection: the best is lost at least once (%d)", worse);
        ga_free(ga);
    }
}

int main(int argc, char **argv)
{
    static const tap_test tests[] = {
        {"one_island_is_ga_run", test_one_island_is_ga_run},
        {"islands_deterministic", test_islands_deterministic},
        {"spread_over_ranks_same_result", test_spread_over_ranks_same_result},
        {"failure_reaches_every_rank", test_failure_reaches_every_rank},
        {"bad_parameters", test_bad_parameters},
        {"migration_replaces_the_worst", test_migration_replaces_the_worst},
        {"elite_keeps_the_best", test_elite_keeps_the_best},
    };
    return tap_run(tests, sizeof tests / sizeof tests[0], argc, argv);
}
