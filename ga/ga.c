/* ga.c: the genetic algorithm engine (see ga.h). */
#include "ga.h"

#include <gsl/gsl_randist.h>
#include <hwloc.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

struct ga_ctx {
    ga_ops ops;
    void *user;
    size_t gb;
    ga_params p;
    unsigned char *pop, *kids, *tmp, *best;
    double *pop_fit, *kid_fit, *cand_fit, *prob;
    int *order, *chosen;
    unsigned char *mark; /* per individual: taken (migration) */
    unsigned long *seeds;
    int *fam;            /* survivors=family: the pairs' parents (N) */
    double *fam_fit;     /* survivors=children|family: the survivors' fitness (N) */
    double best_fit;
    gsl_rng *rng;
    void **workers;
    gsl_rng **wrng;
    int nworkers;
    hwloc_topology_t topo;
    int topo_ok, ncores;
    FILE *log;
    int progress; /* GA_PROGRESS_* or 0 */
    int tenths;   /* GA_PROGRESS_LINES: the tenths of the stopping rule reported (-1: none) */
    ga_stats st;
    double t0;
    /* job dispatch */
    int phase; /* 0: first generation, 1: children */
    int n_jobs;
    atomic_int next_job;
};

void ga_params_default(ga_params *p)
{
    memset(p, 0, sizeof *p); /* every field, those added later included */
    p->population = 32;
    p->mutation = 0.1;
    p->selection = GA_SOFTMAX;
    p->temperature = 1.0;
    p->tournament = 3;
    p->elite = 0;
    p->generations = 0;
    p->time_budget_s = 60;
    p->threads = 1;
    p->seed = 1;
    p->pin = 1;
}

#define GENOME(base, i) ((base) + (size_t)(i) * ga->gb)

void ga_free(ga_ctx *ga)
{
    if (!ga)
        return;
    for (int i = 0; i < ga->nworkers; i++) {
        if (ga->workers && ga->workers[i] && ga->ops.worker_free)
            ga->ops.worker_free(ga->user, ga->workers[i]);
        if (ga->wrng && ga->wrng[i])
            gsl_rng_free(ga->wrng[i]);
    }
    sw_free(ga->workers);
    sw_free(ga->wrng);
    sw_free(ga->pop);
    sw_free(ga->kids);
    sw_free(ga->tmp);
    sw_free(ga->best);
    sw_free(ga->pop_fit);
    sw_free(ga->kid_fit);
    sw_free(ga->cand_fit);
    sw_free(ga->prob);
    sw_free(ga->order);
    sw_free(ga->chosen);
    sw_free(ga->mark);
    sw_free(ga->seeds);
    sw_free(ga->fam);
    sw_free(ga->fam_fit);
    if (ga->rng)
        gsl_rng_free(ga->rng);
    if (ga->topo_ok)
        hwloc_topology_destroy(ga->topo);
    sw_free(ga);
}

ga_ctx *ga_new(const ga_ops *ops, void *user, size_t genome_bytes, const ga_params *p)
{
    if (!ops || !ops->init || !ops->crossover || !ops->mutate || !ops->evaluate || !genome_bytes)
        return NULL;
    ga_ctx *ga = sw_calloc(1, sizeof *ga);
    if (!ga)
        return NULL;
    ga->ops = *ops;
    ga->user = user;
    ga->gb = genome_bytes;
    if (p)
        ga->p = *p;
    else
        ga_params_default(&ga->p);
    if (ga->p.population < 2)
        ga->p.population = 2;
    if (ga->p.population % 2)
        ga->p.population++;
    if (ga->p.threads < 1)
        ga->p.threads = 1;
    size_t N = (size_t)ga->p.population, K = 2 * N, S = N + K;
    ga->pop = sw_malloc(N * genome_bytes);
    ga->kids = sw_malloc(K * genome_bytes);
    ga->tmp = sw_malloc(N * genome_bytes);
    ga->best = sw_malloc(genome_bytes);
    ga->pop_fit = sw_malloc(N * sizeof(double));
    ga->kid_fit = sw_malloc(K * sizeof(double));
    ga->cand_fit = sw_malloc(S * sizeof(double));
    ga->prob = sw_malloc(S * sizeof(double));
    ga->order = sw_malloc(S * sizeof(int));
    ga->chosen = sw_malloc(S * sizeof(int));
    ga->mark = sw_malloc(N);
    ga->seeds = sw_malloc(N * sizeof(unsigned long));
    ga->fam = sw_malloc(N * sizeof(int));
    ga->fam_fit = sw_malloc(N * sizeof(double));
    ga->rng = gsl_rng_alloc(gsl_rng_mt19937);
    ga->nworkers = ga->p.threads;
    ga->workers = sw_calloc((size_t)ga->nworkers, sizeof(void *));
    ga->wrng = sw_calloc((size_t)ga->nworkers, sizeof(gsl_rng *));
    if (!ga->pop || !ga->kids || !ga->tmp || !ga->best || !ga->pop_fit || !ga->kid_fit ||
        !ga->cand_fit || !ga->prob || !ga->order || !ga->chosen || !ga->mark || !ga->seeds ||
        !ga->fam || !ga->fam_fit ||
        !ga->rng || !ga->workers || !ga->wrng) {
        ga_free(ga);
        return NULL;
    }
    gsl_rng_set(ga->rng, (unsigned long)ga->p.seed);
    for (int i = 0; i < ga->nworkers; i++) {
        ga->wrng[i] = gsl_rng_alloc(gsl_rng_mt19937);
        ga->workers[i] = ops->worker_new ? ops->worker_new(user) : NULL;
        if (!ga->wrng[i] || (ops->worker_new && !ga->workers[i])) {
            ga_free(ga);
            return NULL;
        }
    }
    if (ga->p.pin && ga->p.threads > 1 && hwloc_topology_init(&ga->topo) == 0) {
        if (hwloc_topology_load(ga->topo) == 0) {
            ga->topo_ok = 1;
            ga->ncores = hwloc_get_nbobjs_by_type(ga->topo, HWLOC_OBJ_CORE);
        } else {
            hwloc_topology_destroy(ga->topo);
        }
    }
    ga->best_fit = INFINITY;
    return ga;
}

void ga_set_log(ga_ctx *ga, FILE *log) { ga->log = log; }
void ga_set_progress(ga_ctx *ga, int mode) { ga->progress = mode; }

const void *ga_best(const ga_ctx *ga, double *fitness)
{
    if (fitness)
        *fitness = ga->best_fit;
    return ga->best_fit < INFINITY ? ga->best : NULL;
}

void ga_get_stats(const ga_ctx *ga, ga_stats *st) { *st = ga->st; }

const void *ga_individual(const ga_ctx *ga, int i, double *fitness)
{
    if (i < 0 || i >= ga->p.population)
        return NULL;
    if (fitness)
        *fitness = ga->pop_fit[i];
    return GENOME(ga->pop, i);
}

/* ---- parallel jobs ---- */

static void run_job(ga_ctx *ga, int w, int j)
{
    gsl_rng *r = ga->wrng[w];
    gsl_rng_set(r, ga->seeds[j]);
    if (ga->phase == 0) {
        void *g = GENOME(ga->pop, j);
        ga->ops.init(ga->user, ga->workers[w], r, g, j);
        ga->pop_fit[j] = ga->ops.evaluate(ga->user, ga->workers[w], g);
        return;
    }
    const void *a = GENOME(ga->pop, ga->order[2 * j]), *b = GENOME(ga->pop, ga->order[2 * j + 1]);
    void *const c[4] = {GENOME(ga->kids, 4 * j), GENOME(ga->kids, 4 * j + 1),
                        GENOME(ga->kids, 4 * j + 2), GENOME(ga->kids, 4 * j + 3)};
    ga->ops.crossover(ga->user, ga->workers[w], r, a, b, c);
    for (int k = 0; k < 4; k++) {
        ga->ops.mutate(ga->user, ga->workers[w], r, c[k], ga->p.mutation);
        ga->kid_fit[4 * j + k] = ga->ops.evaluate(ga->user, ga->workers[w], c[k]);
    }
}

typedef struct worker_arg {
    ga_ctx *ga;
    int w;
} worker_arg;

static void *worker_main(void *arg)
{
    worker_arg *wa = arg;
    ga_ctx *ga = wa->ga;
    if (ga->topo_ok && ga->ncores > 0) {
        hwloc_obj_t core = hwloc_get_obj_by_type(ga->topo, HWLOC_OBJ_CORE,
                                                 (unsigned)(wa->w % ga->ncores));
        if (core)
            hwloc_set_cpubind(ga->topo, core->cpuset, HWLOC_CPUBIND_THREAD);
    }
    for (;;) {
        int j = atomic_fetch_add(&ga->next_job, 1);
        if (j >= ga->n_jobs)
            break;
        run_job(ga, wa->w, j);
    }
    return NULL;
}

static int run_jobs(ga_ctx *ga, int n_jobs)
{
    ga->n_jobs = n_jobs;
    atomic_store(&ga->next_job, 0);
    int T = ga->nworkers < n_jobs ? ga->nworkers : n_jobs;
    if (T <= 1) {
        for (int j = 0; j < n_jobs; j++)
            run_job(ga, 0, j);
        return 0;
    }
    pthread_t th[256];
    worker_arg args[256];
    if (T > 256)
        T = 256;
    int started = 0;
    for (int t = 0; t < T; t++) {
        args[t].ga = ga;
        args[t].w = t;
        if (pthread_create(&th[t], NULL, worker_main, &args[t]) != 0)
            break;
        started++;
    }
    if (started == 0) /* no threads: do it here */
        worker_main(&args[0]);
    for (int t = 0; t < started; t++)
        pthread_join(th[t], NULL);
    return 0;
}

/* SW_ENOMEM with a message if an evaluation of the n fitnesses f failed
   (NAN), else 0. */
static int check_evals(const double *f, int n, sw_err *err)
{
    for (int i = 0; i < n; i++)
        if (isnan(f[i]))
            return sw_fail(err, SW_ENOMEM, "out of memory while evaluating an individual");
    return 0;
}

/* ---- selection ---- */

void ga_softmax(const double *t, int S, double t_best, double temperature, double *prob)
{
    double sum = 0, tb = t_best > 0 ? t_best : 1;
    for (int i = 0; i < S; i++) {
        double tn = isfinite(t[i]) ? (t_best - t[i]) / tb : -INFINITY;
        prob[i] = exp(tn / temperature);
        sum += prob[i];
    }
    for (int i = 0; i < S; i++)
        prob[i] = sum > 0 ? prob[i] / sum : 1.0 / S;
}

/* choose N of the S candidates into ga->chosen */
static void select_survivors(ga_ctx *ga, int S, int N)
{
    double *f = ga->cand_fit;
    for (int i = 0; i < S; i++)
        ga->order[i] = i; /* remaining candidates */
    int rem = S;
    /* elitism: the best candidates first (ties to the lower index) */
    int ne = ga->p.elite < N ? ga->p.elite : N;
    for (int n = 0; n < ne; n++) {
        int best = 0;
        for (int k = 1; k < rem; k++)
            if (f[ga->order[k]] < f[ga->order[best]] ||
                (f[ga->order[k]] == f[ga->order[best]] && ga->order[k] < ga->order[best]))
                best = k;
        ga->chosen[n] = ga->order[best];
        ga->order[best] = ga->order[--rem];
    }
    int *chosen = ga->chosen + ne; /* selection fills the rest */
    N -= ne;
    if (ga->p.selection == GA_SOFTMAX) {
        ga_softmax(f, S, ga->best_fit, ga->p.temperature, ga->prob);
        for (int n = 0; n < N; n++) {
            double sum = 0;
            for (int k = 0; k < rem; k++)
                sum += ga->prob[ga->order[k]];
            int pick = rem - 1;
            if (sum > 0) {
                double u = gsl_rng_uniform(ga->rng) * sum, acc = 0;
                for (int k = 0; k < rem; k++) {
                    acc += ga->prob[ga->order[k]];
                    if (u < acc) {
                        pick = k;
                        break;
                    }
                }
            } else {
                pick = (int)gsl_rng_uniform_int(ga->rng, (unsigned long)rem);
            }
            chosen[n] = ga->order[pick];
            ga->order[pick] = ga->order[--rem];
        }
        return;
    }
    if (ga->p.selection == GA_UNIFORM) { /* every candidate alike: fitness plays no part */
        for (int n = 0; n < N; n++) {
            int pick = (int)gsl_rng_uniform_int(ga->rng, (unsigned long)rem);
            chosen[n] = ga->order[pick];
            ga->order[pick] = ga->order[--rem];
        }
        return;
    }
    for (int n = 0; n < N; n++) {
        int k = ga->p.tournament < rem ? ga->p.tournament : rem;
        int best = -1;
        for (int i = 0; i < k; i++) {
            int at = (int)gsl_rng_uniform_int(ga->rng, (unsigned long)rem);
            if (best < 0 || f[ga->order[at]] < f[ga->order[best]] ||
                (f[ga->order[at]] == f[ga->order[best]] && ga->order[at] < ga->order[best]))
                best = at;
        }
        chosen[n] = ga->order[best];
        ga->order[best] = ga->order[--rem];
    }
}

static void note_best(ga_ctx *ga, const void *g, double fit)
{
    if (fit < ga->best_fit) {
        ga->best_fit = fit;
        memcpy(ga->best, g, ga->gb);
    }
}

/* GA_PROGRESS_LINES: one line when the first generation is in (0%), then
   one each time the search passes another tenth of its stopping rule
   (generations or time, whichever is further along) */
static void report_line(ga_ctx *ga, double el)
{
    double f = 0;
    if (ga->p.generations > 0)
        f = (double)ga->st.generations / (double)ga->p.generations;
    if (ga->p.time_budget_s > 0 && el / ga->p.time_budget_s > f)
        f = el / ga->p.time_budget_s;
    int t = f >= 1 ? 10 : (int)(f * 10 + 1e-9);
    if (t <= ga->tenths)
        return;
    ga->tenths = t;
    fprintf(stderr, "[ga] %d%%: generation %ld, best %.6f s, %ld evaluations, %.0f "
            "evaluations/s\n", 10 * t, ga->st.generations, ga->best_fit, ga->st.evaluations,
            el > 0 ? (double)ga->st.evaluations / el : 0);
    fflush(stderr);
}

static void report(ga_ctx *ga)
{
    int N = ga->p.population, nf = 0;
    double best = INFINITY, worst = -INFINITY, sum = 0;
    for (int i = 0; i < N; i++) {
        double f = ga->pop_fit[i];
        if (!isfinite(f))
            continue;
        nf++;
        sum += f;
        if (f < best)
            best = f;
        if (f > worst)
            worst = f;
    }
    double el = sw_now() - ga->t0;
    if (ga->log) {
        fprintf(ga->log, "%.3f,%ld,%ld,", el, ga->st.generations, ga->st.evaluations);
        if (nf)
            fprintf(ga->log, "%.9g,%.9g,%.9g,%.9g\n", best, sum / nf, worst, ga->best_fit);
        else
            fprintf(ga->log, ",,,\n");
        fflush(ga->log);
    }
    if (ga->progress == GA_PROGRESS_LINES)
        report_line(ga, el);
    else if (ga->progress) {
        double rate = el > 0 ? (double)ga->st.evaluations / el : 0;
        double left = ga->p.time_budget_s > 0 ? ga->p.time_budget_s - el : 0;
        fprintf(stderr, "\r[ga] generation %ld  best %.6f s  %.0f evaluations/s  %.0f s left   ",
                ga->st.generations, ga->best_fit, rate, left > 0 ? left : 0);
        fflush(stderr);
    }
}

/* the first generation: random individuals (ga_ops.init), evaluated */
static int first_generation(ga_ctx *ga, sw_err *err)
{
    int N = ga->p.population;
    for (int j = 0; j < N; j++)
        ga->seeds[j] = gsl_rng_get(ga->rng);
    ga->phase = 0;
    run_jobs(ga, N);
    if (check_evals(ga->pop_fit, N, err))
        return SW_ENOMEM;
    for (int i = 0; i < N; i++)
        note_best(ga, GENOME(ga->pop, i), ga->pop_fit[i]);
    ga->st.evaluations = N;
    ga->st.initial_best = ga->best_fit;
    report(ga);
    return 0;
}

/* survivors=children: N of the 2N children survive (they replace the
   parents); survivors=family: of each pair's two parents and four
   children, two survive in the pair's place. The same selection rule
   (softmax, tournament, uniform; elite per draw) picks them. */
static int select_readings(ga_ctx *ga)
{
    int N = ga->p.population, K = 2 * N;
    if (ga->p.survivors == GA_SURVIVE_CHILDREN) {
        memcpy(ga->cand_fit, ga->kid_fit, (size_t)K * sizeof(double));
        select_survivors(ga, K, N);
        for (int n = 0; n < N; n++) {
            memcpy(GENOME(ga->tmp, n), GENOME(ga->kids, ga->chosen[n]), ga->gb);
            ga->fam_fit[n] = ga->kid_fit[ga->chosen[n]];
        }
    } else {
        memcpy(ga->fam, ga->order, (size_t)N * sizeof(int)); /* the pairs, as shuffled */
        for (int j = 0; j < N / 2; j++) {
            int id[6] = {ga->fam[2 * j], ga->fam[2 * j + 1], N + 4 * j, N + 4 * j + 1,
                         N + 4 * j + 2, N + 4 * j + 3};
            for (int k = 0; k < 6; k++)
                ga->cand_fit[k] = id[k] < N ? ga->pop_fit[id[k]] : ga->kid_fit[id[k] - N];
            select_survivors(ga, 6, 2);
            for (int m = 0; m < 2; m++) {
                int c = id[ga->chosen[m]];
                memcpy(GENOME(ga->tmp, 2 * j + m), c < N ? GENOME(ga->pop, c)
                                                         : GENOME(ga->kids, c - N), ga->gb);
                ga->fam_fit[2 * j + m] = ga->cand_fit[ga->chosen[m]];
            }
        }
    }
    memcpy(ga->pop_fit, ga->fam_fit, (size_t)N * sizeof(double));
    unsigned char *t = ga->pop;
    ga->pop = ga->tmp;
    ga->tmp = t;
    ga->st.generations++;
    report(ga);
    return 0;
}

/* one generation: pair parents, four children per pair, select survivors */
static int next_generation(ga_ctx *ga, sw_err *err)
{
    int N = ga->p.population, K = 2 * N, S = N + K;
    for (int i = 0; i < N; i++)
        ga->order[i] = i;
    gsl_ran_shuffle(ga->rng, ga->order, (size_t)N, sizeof(int));
    for (int j = 0; j < N / 2; j++)
        ga->seeds[j] = gsl_rng_get(ga->rng);
    ga->phase = 1;
    run_jobs(ga, N / 2);
    if (check_evals(ga->kid_fit, K, err))
        return SW_ENOMEM;
    for (int i = 0; i < K; i++)
        note_best(ga, GENOME(ga->kids, i), ga->kid_fit[i]);
    ga->st.evaluations += K;
    if (ga->p.survivors != GA_SURVIVE_ALL)
        return select_readings(ga);
    /* survivors among parents and children */
    memcpy(ga->cand_fit, ga->pop_fit, (size_t)N * sizeof(double));
    memcpy(ga->cand_fit + N, ga->kid_fit, (size_t)K * sizeof(double));
    select_survivors(ga, S, N);
    for (int n = 0; n < N; n++) {
        int c = ga->chosen[n];
        const void *src = c < N ? GENOME(ga->pop, c) : GENOME(ga->kids, c - N);
        memcpy(GENOME(ga->tmp, n), src, ga->gb);
    }
    for (int n = 0; n < N; n++)
        ga->order[n] = ga->chosen[n];
    for (int n = 0; n < N; n++)
        ga->pop_fit[n] = ga->cand_fit[ga->order[n]];
    unsigned char *t = ga->pop;
    ga->pop = ga->tmp;
    ga->tmp = t;
    ga->st.generations++;
    report(ga);
    return 0;
}

int ga_begin(ga_ctx *ga, sw_err *err)
{
    if (ga->p.mutation < 0 || ga->p.mutation > 1)
        return sw_fail(err, SW_EINVAL, "mutation probability must be in [0, 1]");
    if (!(ga->p.temperature > 0))
        return sw_fail(err, SW_EINVAL, "temperature must be positive");
    ga->t0 = sw_now();
    ga->tenths = -1;
    memset(&ga->st, 0, sizeof ga->st);
    if (ga->log)
        fprintf(ga->log, "elapsed_s,generation,evaluations,best_s,mean_s,worst_s,best_ever_s\n");
    return first_generation(ga, err);
}

/* Does the stop hook end the search here? (Notes it in the statistics.) */
static int stop_asked(ga_ctx *ga)
{
    if (ga->p.stop && ga->p.stop(ga->p.stop_ud, ga->st.evaluations))
        ga->st.stopped = 1;
    return ga->st.stopped;
}

int ga_step(ga_ctx *ga, long n, sw_err *err)
{
    for (long i = 0; i < n && !stop_asked(ga); i++) {
        int rc = next_generation(ga, err);
        if (rc)
            return rc;
    }
    return 0;
}

int ga_end(ga_ctx *ga, sw_err *err)
{
    if (ga->progress == GA_PROGRESS_BAR)
        fputc('\n', stderr);
    ga->st.elapsed_s = sw_now() - ga->t0;
    ga->st.best = ga->best_fit;
    if (!isfinite(ga->best_fit))
        return sw_fail(err, SW_ENOFIT, "no feasible individual found");
    return 0;
}

int ga_run(ga_ctx *ga, sw_err *err)
{
    if (ga->p.generations <= 0 && ga->p.time_budget_s <= 0)
        return sw_fail(err, SW_EINVAL, "set a generation count or a time budget");
    int rc = ga_begin(ga, err);
    if (rc)
        return rc;
    for (;;) {
        double el = sw_now() - ga->t0;
        if (ga->p.generations > 0 && ga->st.generations >= ga->p.generations)
            break;
        if (ga->p.time_budget_s > 0 && el >= ga->p.time_budget_s)
            break;
        if (stop_asked(ga))
            break;
        if ((rc = next_generation(ga, err)))
            return rc;
    }
    return ga_end(ga, err);
}

/* ---- migration (the island model, islands.c) ---- */

/* index of the best (worst: the worst) individual of the population not
   yet marked; ties go to the lower index for the best, the higher for the
   worst, so the choice never depends on anything but the population */
static int pick(const ga_ctx *ga, int worst)
{
    int at = -1;
    for (int i = 0; i < ga->p.population; i++) {
        if (ga->mark[i])
            continue;
        double f = ga->pop_fit[i], g = at < 0 ? 0 : ga->pop_fit[at];
        if (at < 0 || (worst ? !(f < g) : f < g))
            at = i;
    }
    return at;
}

int ga_emigrants(ga_ctx *ga, int m, void *genomes, double *fit)
{
    if (m > ga->p.population)
        m = ga->p.population;
    memset(ga->mark, 0, (size_t)ga->p.population);
    for (int k = 0; k < m; k++) {
        int i = pick(ga, 0);
        ga->mark[i] = 1;
        memcpy((unsigned char *)genomes + (size_t)k * ga->gb, GENOME(ga->pop, i), ga->gb);
        fit[k] = ga->pop_fit[i];
    }
    return m;
}

void ga_immigrate(ga_ctx *ga, int m, const void *genomes, const double *fit)
{
    if (m > ga->p.population)
        m = ga->p.population;
    memset(ga->mark, 0, (size_t)ga->p.population);
    for (int k = 0; k < m; k++) {
        if (!isfinite(fit[k]))
            continue; /* an infeasible migrant brings nothing */
        int i = pick(ga, 1);
        ga->mark[i] = 1;
        const void *g = (const unsigned char *)genomes + (size_t)k * ga->gb;
        memcpy(GENOME(ga->pop, i), g, ga->gb);
        ga->pop_fit[i] = fit[k];
        note_best(ga, g, fit[k]);
    }
}
