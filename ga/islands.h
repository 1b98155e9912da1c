/* islands.h: the island model over ga.h's engine: several populations
   evolve side by side, and every K generations each sends copies of its M
   best individuals to the next one (a ring), where they replace the worst.
   The islands live in one process, or are spread over processes (MPI ranks)
   through a ga_comm; either way the search depends only on the seed and the
   generation count, never on timing or on how the islands are spread. */
#ifndef GA_ISLANDS_H
#define GA_ISLANDS_H

#include "ga.h"

/* How the processes of one island search talk (experiments/mpi.c makes one
   over MPI ranks). Every process calls the operations in the same order;
   a failure of the transport itself may end the job (MPI's default). */
typedef struct ga_comm {
    int version;    /* 1 */
    int rank, size; /* this process, and how many take part */
    void *ctx;      /* the transport's state */
    /* Ring shift: send n bytes to rank + 1 (mod size) and receive n bytes
       from rank - 1 into recv. */
    int (*shift)(void *ctx, const void *send, void *recv, size_t n, sw_err *err);
    /* Every rank's n bytes, in rank order, into recv (size * n bytes). */
    int (*allgather)(void *ctx, const void *send, void *recv, size_t n, sw_err *err);
} ga_comm;

typedef struct ga_island_params {
    int islands;  /* populations, each of ga_params.population (>= 1) */
    int interval; /* K: generations between migrations (>= 1) */
    int migrants; /* M: individuals each island sends on (>= 1, < population) */
} ga_island_params;

typedef struct ga_islands ga_islands;

/* Island seeds: island i's own seed, from the search's seed (exported for
   tests and docs). */
uint64_t ga_island_seed(uint64_t seed, int island);

/* Create an island search: p as for ga_new (its seed is the search's; its
   generations and time budget the stopping rule, checked on rank 0 between
   migrations so every rank stops together), ip the islands, comm the
   processes (NULL: every island in this one). With comm, this process runs
   islands rank * (islands / size) ... onwards: islands must be a multiple
   of comm->size. Errors: SW_EINVAL (named), SW_ENOMEM. *out is owned by
   the caller (ga_islands_free). */
int ga_islands_new(const ga_ops *ops, void *user, size_t genome_bytes, const ga_params *p,
                   const ga_island_params *ip, const ga_comm *comm, ga_islands **out,
                   sw_err *err);
void ga_islands_free(ga_islands *gi);
/* Convergence log and progress line of island 0 (only on the process that
   runs it). */
void ga_islands_set_log(ga_islands *gi, FILE *log);
void ga_islands_set_progress(ga_islands *gi, int on);
/* Run to the stopping rule. Every process ends with the same result, or
   the same error: a failure on one rank (SW_ENOMEM...) is reported on every
   rank as "rank R: message", so none waits for another that has stopped.
   Errors: as ga_run's, and SW_EINVAL if the ranks disagree on the genome. */
int ga_islands_run(ga_islands *gi, sw_err *err);
/* The best genome of all islands (ties: the lowest island), owned by gi,
   or NULL if none was feasible; *fitness its fitness. */
const void *ga_islands_best(const ga_islands *gi, double *fitness);
/* Statistics of the whole search: generations per island; evaluations of
   every island together; initial_best the best of all first generations. */
void ga_islands_stats(const ga_islands *gi, ga_stats *st);

#endif
