/* schedule.h: operators on schedules (topological orders of a profile's
   ops), shared by the planners that search schedules: SwapAdvisor's
   crossover and mutation exactly as the paper describes them
   (spec/swapadvisor.md), ours (each marked OURS), and the readings of the
   paper's search. Used by swapadvisor.c (its GA) and optimal_swap.c (its
   schedule set); exported so tests can check each one on the paper's own
   examples. */
#ifndef PLANNERS_SCHEDULE_H
#define PLANNERS_SCHEDULE_H

#include <gsl/gsl_rng.h>

#include "../../profiles/graph.h"

/* Schedule crossover (Sinnen): child1 = s2[0..cr) then the other nodes in
   s1's order; child2 = s1[0..cr) then the rest in s2's order. mark is
   scratch of n_ops bytes. Topological parents give topological children. */
void sa_schedule_crossover(const int32_t *s1, const int32_t *s2, int32_t n, int32_t cr,
                           int32_t *c1, int32_t *c2, uint8_t *mark);

/* Scratch for schedule mutation over g (an indexed heap and in-degrees). */
typedef struct sa_sched_scratch sa_sched_scratch;
sa_sched_scratch *sa_sched_scratch_new(const graph_profile *g);
void sa_sched_scratch_free(sa_sched_scratch *s);
/* Schedule mutation: a dataflow scheduler over the ready set; with
   probability p it issues a random ready node, otherwise the ready node
   earliest in `in`. p = 1 gives a uniformly random topological order. */
void sa_schedule_mutate(const graph_profile *g, sa_sched_scratch *s, const int32_t *in, double p,
                        gsl_rng *r, int32_t *out);
/* OURS, not the paper's: a dataflow pass like sa_schedule_mutate whose
   random picks (each step with probability p) each start a run: for the
   next L choices (L geometric with mean mean_run, at least 1; a step with
   one ready op is no choice and does not count; the run ends early when
   nothing qualifies) the pass issues, instead of the ready op earliest in
   `in`, one that follows the op just issued:
   SA_RUN_CHAIN a uniformly drawn ready successor of it (depth-first
   drift along a dependent chain), SA_RUN_REUSE the ready op sharing the
   most storage bytes with it (ties: earliest in `in`; runs ops that use
   the same tensors back to back). Uses only the graph, never op names.
   Returns the number of positions whose op changed. */
enum { SA_RUN_CHAIN = 1, SA_RUN_REUSE = 2 };
int sa_schedule_mutate_runs(const graph_profile *g, sa_sched_scratch *s, const int32_t *in,
                            double p, double mean_run, int mode, gsl_rng *r, int32_t *out);
/* OURS, not the paper's: the cone move. sink = 0 (hoist): v and all its
   ancestors first, in the order of `in`, then every other op in the order
   of `in`; sink = 1: every op that is not v or a descendant of v, then v
   and its descendants, each part in the order of `in`. Both are
   topological when `in` is. Uses s's ready and cand arrays as scratch.
   Returns the size of the cone (v included). */
int32_t sa_schedule_cone(const graph_profile *g, sa_sched_scratch *s, const int32_t *in,
                         int32_t v, int sink, int32_t *out);
/* The alternative the paper found weaker: out = in with one op, drawn
   uniformly among those that have another legal position, moved to a
   uniformly drawn other position after its last predecessor and before its
   first successor. Returns 1, or 0 (out = in) if no op can move. */
int sa_schedule_move_one(const graph_profile *g, sa_sched_scratch *s, const int32_t *in,
                         gsl_rng *r, int32_t *out);

/* Readings of the paper's search (docs/swapadvisor.md, "Readings of the
   paper's search"). sa_dfs_order: MXNet's executor order (nnvm's
   DFSVisit), a depth-first post-order from the graph's outputs (ops
   without successors, in id order), each op's predecessors visited in the
   profile's order; returns n_ops op ids (the caller frees them with
   sw_free), or NULL (out of memory). */
int32_t *sa_dfs_order(const graph_profile *g);
/* The paper's dataflow pass with exactly k random picks, at k steps drawn
   uniformly without replacement (a step with one ready op cannot move it),
   instead of one chance P per step: "K nodes moved per mutation". */
void sa_schedule_mutate_k(const graph_profile *g, sa_sched_scratch *s, const int32_t *in,
                          long k, gsl_rng *r, int32_t *out);
/* steps random adjacent transpositions of order (n ops, topological, in
   place), each of two ops with no edge between them, with probability 1/2:
   the Karzanov-Khachiyan chain, whose stationary law is the uniform one
   over topological orders (it mixes in O(n^3 log n) steps: far more than
   any affordable step count, so this only approaches uniform). */
void sa_schedule_shuffle(const graph_profile *g, int32_t *order, long steps, gsl_rng *r);

#endif
