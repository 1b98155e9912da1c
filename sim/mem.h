/* mem.h: device memory models behind one interface (SQLite VFS style): a
   size-class pool (SwapAdvisor's) and an address allocator over one
   contiguous range (first-fit or best-fit), where fragmentation is real. */
#ifndef MEM_H
#define MEM_H

#include "plan.h"

typedef struct mem_stats {
    int64_t capacity;     /* bytes managed */
    int64_t in_use;       /* bytes of tensors placed (requested sizes) */
    int64_t reserved;     /* bytes taken from the arena (rounded, whole objects) */
    int64_t free_bytes;   /* capacity - reserved */
    int64_t largest_free; /* largest single request that would succeed */
    int64_t high_water;   /* highest arena offset ever used (address) / capacity (pool) */
    int64_t peak_in_use;
    int64_t allocs, failures;
    int64_t frag_failures; /* failures although free_bytes >= the request */
} mem_stats;

typedef struct mem_model mem_model;

typedef struct mem_methods {
    int version; /* 1 */
    const char *name;
    /* Place bytes for tensor; SW_ENOFIT when no room (out unchanged). */
    int (*alloc)(mem_model *m, int32_t tensor, int64_t bytes, plan_place *out);
    /* Place at a given placement if free; SW_ENOFIT otherwise. NULL: unsupported. */
    int (*alloc_at)(mem_model *m, int32_t tensor, int64_t bytes, const plan_place *want);
    void (*release)(mem_model *m, const plan_place *pl, int64_t bytes);
    void (*reset)(mem_model *m); /* everything free again */
    void (*stats)(const mem_model *m, mem_stats *st);
    /* Write the model's configuration into a plan (classes or range). */
    int (*describe)(const mem_model *m, plan *p);
    void (*destroy)(mem_model *m);
} mem_methods;

struct mem_model {
    const mem_methods *methods;
};

/* Wrappers: the one place for asserts. */
int mem_alloc(mem_model *m, int32_t tensor, int64_t bytes, plan_place *out);
int mem_alloc_at(mem_model *m, int32_t tensor, int64_t bytes, const plan_place *want);
void mem_release(mem_model *m, const plan_place *pl, int64_t bytes);
void mem_reset(mem_model *m);
void mem_get_stats(const mem_model *m, mem_stats *st);
int mem_describe(const mem_model *m, plan *p);
void mem_destroy(mem_model *m);

/* Size-class pool. sizes[0..n_sizes) are the distinct tensor sizes in
   ascending order, size_cls[i] the class (0-based) of sizes[i]; counts[c]
   the objects of class c. A class's object size is the largest size mapped
   to it. A request of a size not in sizes uses the smallest class whose
   object size fits. Returns NULL on allocation failure or bad arguments. */
mem_model *mem_pool_new(const int64_t *sizes, const int32_t *size_cls, int n_sizes,
                        const int32_t *counts, int n_classes);
/* Class serving a request of bytes, or -1. */
int mem_pool_class_of(const mem_model *m, int64_t bytes);
int32_t mem_pool_free_objects(const mem_model *m, int cls);

/* MEM_OFFLINE: the plan builder places every residency at once, knowing
   when each begins and ends (greedy by size, else by breadth,
   sim/builder.c); a request made
   to the allocator itself is served best fit. */
typedef enum { MEM_FIRST_FIT, MEM_BEST_FIT, MEM_OFFLINE } mem_fit;
/* Address allocator over [0, capacity); requests rounded up to align. */
mem_model *mem_address_new(int64_t capacity, mem_fit fit, int64_t align);
/* An address allocator's fit and alignment: 0, or SW_EINVAL for another model. */
int mem_address_config(const mem_model *m, mem_fit *fit, int64_t *align);
/* Address allocator: bytes of the free blocks that touch placement pl (of
   bytes) on either side (what freeing it would coalesce with); 0 for other
   models. */
int64_t mem_adjacent_free(const mem_model *m, const plan_place *pl, int64_t bytes);
/* Parse "first-fit" / "best-fit" / "offline". */
int mem_fit_parse(const char *s, mem_fit *out);

#endif
