/* swapadvisor.h: SwapAdvisor's chromosome (a schedule and a size-class
   allocation): the size-class (CLS, CNT) operators, exactly as the paper
   describes them (spec/swapadvisor.md); exported so tests can check each one
   on the paper's own examples. The schedule operators are shared with other
   planners: lib/schedule.h. The planner itself is `planner_swapadvisor`. */
#ifndef SWAPADVISOR_H
#define SWAPADVISOR_H

#include <gsl/gsl_rng.h>

#include "../profiles/graph.h"

/* CLS: the class of each distinct size. Monotone encoding: cls[0] = 0 and
   each step 0 or +1. Repair raises (or lowers) the offending element and
   all that follow by the least amount; returns the number of classes.
   Free encoding (monotone = 0): classes renumbered by first appearance. */
int32_t sa_cls_repair(int32_t *cls, int32_t n, int monotone);
/* CLS crossover at cr: c1 = b[0..cr) ++ a[cr..n), c2 = a[0..cr) ++ b[cr..n), repaired. */
void sa_cls_crossover(const int32_t *a, const int32_t *b, int32_t n, int32_t cr, int32_t *c1,
                      int32_t *c2, int monotone);
/* CLS mutation: each element with probability p: monotone, if cls[i] ==
   cls[i-1] raise it by 1, else lower it by 1, shifting all that follow; free,
   move it to a random class (possibly a new one). Returns the class count. */
int32_t sa_cls_mutate(int32_t *cls, int32_t n, double p, gsl_rng *r, int monotone);
/* CNT_EXT: per size, the count of its class. */
void sa_cnt_expand(const int32_t *cls, const int32_t *cnt, int32_t n, int32_t *ext);
/* Collapse CNT_EXT to the classes of cls by averaging (rounded). */
void sa_cnt_collapse(const int32_t *cls, const int32_t *ext, int32_t n, int32_t n_classes,
                     int32_t *cnt);
/* Object size of each class: the largest size mapped to it. */
void sa_class_sizes(const int32_t *cls, const int64_t *sizes, int32_t n, int32_t n_classes,
                    int64_t *csize);
/* CNT repair: while the pool exceeds capacity, every class above its
   minimum gives up an equal share of the excess bytes (so counts shrink in
   inverse proportion to object size), never below min_cnt (NULL: 0); counts
   above max_cnt (NULL: no limit; the class's number of tensors, beyond which
   objects are useless) are first cut to it. Returns 0, or -1 if even the
   minimum counts do not fit. */
int sa_cnt_repair(int32_t *cnt, const int64_t *csize, const int32_t *min_cnt,
                  const int32_t *max_cnt, int32_t n_classes, int64_t capacity);

#endif
