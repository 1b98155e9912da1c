/* heap.h: one binary min-heap of int32 ids and the topological sort built on it
   (Kahn's algorithm, lowest ready id first). Allocation-free: the caller gives
   the storage. */
#ifndef SW_HEAP_H
#define SW_HEAP_H

#include <stdint.h>

/* A min-heap of int32 values (op ids, task ids, positions). Equal values are
   indistinguishable, so the order of pops depends on the values alone: any two
   correct heaps give the same sequence. */
typedef struct sw_heap {
    int32_t *a; /* the heap array, caller-owned, room for every value pushed */
    int32_t n;  /* values in the heap */
} sw_heap;

/* Add v; h->a must have room for h->n + 1 values. */
void sw_heap_push(sw_heap *h, int32_t v);
/* Remove and return the smallest value; h->n must be > 0. */
int32_t sw_heap_pop(sw_heap *h);
/* Remove and return the value at index i (0 <= i < h->n) of h->a. */
int32_t sw_heap_remove_at(sw_heap *h, int32_t i);

/* Kahn's topological sort of nodes 0..n-1 whose successors of node x are
   succ[succ_off[x] .. succ_off[x+1]); among ready nodes the lowest id goes first.
   indeg (n values) holds each node's number of predecessors on entry and is
   consumed: on return, the nodes left unordered (on or behind a cycle) are
   exactly those with indeg > 0. heap gives room for n values; order receives
   the ordered nodes. Returns how many were ordered (n when acyclic). */
int32_t sw_topo_order(int32_t n, const int32_t *succ_off, const int32_t *succ, int32_t *indeg,
                      int32_t *heap, int32_t *order);

#endif
