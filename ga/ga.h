/* ga.h: a generic genetic algorithm engine (PGAPack style: one context owns
   parameters, operator table and random state). It knows nothing about
   GPUs: a client plugs in its chromosome (fixed-size genome bytes) and
   fitness (lower is better; INFINITY = infeasible). Each crossover makes
   four children; survivors are selected by softmax over normalised fitness
   (SwapAdvisor's rule) or by tournament. Evaluation runs on threads pinned
   with hwloc; every job's random seed is drawn up front, so the result is
   the same for any thread count. */
#ifndef GA_H
#define GA_H

#include <gsl/gsl_rng.h>
#include <stdio.h>

#include "../common/sw.h"

typedef struct ga_ops {
    int version; /* 1 */
    /* Fill genome g of first-generation individual number index. w is the
       calling thread's worker state (scratch), as for every operator. */
    void (*init)(void *user, void *w, gsl_rng *r, void *g, int index);
    /* Cross parents a and b into four children c[0..3]. */
    void (*crossover)(void *user, void *w, gsl_rng *r, const void *a, const void *b,
                      void *const c[4]);
    /* Mutate g in place; p is the per-element mutation probability. */
    void (*mutate)(void *user, void *w, gsl_rng *r, void *g, double p);
    /* Fitness of g (lower is better, INFINITY if infeasible), using the
       calling thread's worker state w. Must not use shared mutable state.
       NAN: the evaluation could not be done (out of memory); ga_run then
       ends with SW_ENOMEM rather than count g as infeasible. */
    double (*evaluate)(void *user, void *w, const void *g);
    /* Per-thread state for evaluate (NULL slots: none). */
    void *(*worker_new)(void *user);
    void (*worker_free)(void *user, void *w);
} ga_ops;

typedef enum { GA_SOFTMAX, GA_TOURNAMENT, GA_UNIFORM } ga_selection;

/* Who competes for survival (readings of the paper's "the GA selects N_p
   individuals of the current population", docs/swapadvisor.md): parents
   and children together (ours, the default), the children only (they
   replace their parents), or each pair's family alone (its two parents and
   four children, two of whom survive). */
typedef enum { GA_SURVIVE_ALL, GA_SURVIVE_CHILDREN, GA_SURVIVE_FAMILY } ga_survivors;

typedef struct ga_params {
    int population;      /* N_p, survivors per generation (even, >= 2) */
    double mutation;     /* per-element mutation probability P */
    ga_selection selection;
    ga_survivors survivors; /* the candidates selection draws from (0: all) */
    double temperature;  /* softmax over t_norm / temperature (1: the paper's) */
    int tournament;      /* tournament size */
    int elite;           /* the best this many candidates survive every generation before
                            selection picks the rest (0: none, the paper's rule) */
    long generations;    /* stop after this many generations (0: no limit) */
    double time_budget_s;/* stop when this much time has passed (0: no limit) */
    int threads;
    uint64_t seed;
    int pin;             /* pin threads to cores with hwloc */
    /* Asked between generations with the evaluations so far: nonzero ends the
       search there, as the stopping rule would (an interrupt; NULL: never).
       Called on the thread that runs the search; must not block. */
    int (*stop)(void *ud, long evaluations);
    void *stop_ud;
} ga_params;

typedef struct ga_stats {
    long generations;
    long evaluations;
    double elapsed_s;
    double initial_best;  /* best fitness of the first generation */
    double best;          /* best fitness ever seen */
    int stopped;          /* 1: ga_params.stop ended the search before its stopping rule */
} ga_stats;

typedef struct ga_ctx ga_ctx;

/* Defaults: population 32, mutation 0.1, softmax, temperature 1,
   tournament 3, no elite, no generation limit, 60 s, 1 thread, seed 1, pinning on. */
void ga_params_default(ga_params *p);

/* Create an engine for genomes of genome_bytes. Returns NULL on failure. */
ga_ctx *ga_new(const ga_ops *ops, void *user, size_t genome_bytes, const ga_params *p);
void ga_free(ga_ctx *ga);
/* Convergence log (CSV, one line per generation) and progress on stderr:
   GA_PROGRESS_BAR, one line rewritten in place (for a terminal), or
   GA_PROGRESS_LINES, one line at every tenth of the stopping rule (for a
   log); 0: none. */
#define GA_PROGRESS_BAR 1
#define GA_PROGRESS_LINES 2
void ga_set_log(ga_ctx *ga, FILE *log);
void ga_set_progress(ga_ctx *ga, int mode);
/* Run to the stopping rule. Errors: SW_EINVAL (bad parameters), SW_ENOMEM,
   SW_ENOFIT (no feasible individual was ever found). */
int ga_run(ga_ctx *ga, sw_err *err);
/* ga_run in steps, for a driver with its own stopping rule (the island
   model, islands.h): ga_begin checks the parameters and makes and evaluates
   the first generation; ga_step runs n more generations; ga_end fills the
   statistics. ga_run is ga_begin, ga_step until the stopping rule, ga_end:
   the same seed gives the same individuals either way. Errors as ga_run's. */
int ga_begin(ga_ctx *ga, sw_err *err);
int ga_step(ga_ctx *ga, long n, sw_err *err);
int ga_end(ga_ctx *ga, sw_err *err);
/* Migration. ga_emigrants copies the m best individuals of the current
   population (ties: the lower index) into genomes (m genomes, back to back)
   and their fitness into fit; returns how many (m, or the population if
   smaller). ga_immigrate puts m individuals in place of the m worst (ties:
   the higher index), skipping infeasible ones; no random number is drawn,
   so the search stays deterministic. */
int ga_emigrants(ga_ctx *ga, int m, void *genomes, double *fit);
void ga_immigrate(ga_ctx *ga, int m, const void *genomes, const double *fit);
/* The best genome ever evaluated (owned by the context) and its fitness. */
const void *ga_best(const ga_ctx *ga, double *fitness);
void ga_get_stats(const ga_ctx *ga, ga_stats *st);
/* Genome i (0 <= i < population) of the current population (after ga_run:
   the final one; owned by the context) and its fitness, or NULL if i is out
   of range. */
const void *ga_individual(const ga_ctx *ga, int i, double *fitness);

/* Softmax survival probabilities (exported for tests): prob[i] for the S
   candidates with times t[i], t_best the best time seen so far. */
void ga_softmax(const double *t, int S, double t_best, double temperature, double *prob);

#endif
