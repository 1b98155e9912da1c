/* plan.h: the augmented dataflow graph a planner produces (docs/plan-format.md):
   tasks on three in-order streams, dependency edges, memory placement of
   every residency, and the persistent set resident at iteration start. */
#ifndef PLAN_H
#define PLAN_H

#include <stdint.h>
#include "../profiles/graph.h"

typedef enum {
    TASK_RUN,      /* compute: run an op (once per iteration) */
    TASK_RERUN,    /* compute: re-run an op to rematerialise its outputs */
    TASK_SWAP_IN,  /* h2d: copy a tensor host -> device */
    TASK_SWAP_OUT, /* d2h: copy a tensor device -> host, then free it */
    TASK_DROP,     /* d2h stream: free a tensor without a copy */
    TASK__COUNT
} plan_task_kind;

typedef enum { STREAM_COMPUTE, STREAM_H2D, STREAM_D2H, STREAM__COUNT } plan_stream;

typedef enum { MEM_POOL, MEM_ADDRESS } plan_mem_kind;

/* Where one residency of a storage lives. */
typedef struct plan_place {
    int32_t tensor; /* storage: a root (non-view) tensor id */
    int32_t cls;    /* pool: size class; address model: -1 */
    int32_t obj;    /* pool: object within the class; address model: -1 */
    int64_t offset; /* byte offset in the device arena (derived for pools) */
} plan_place;

typedef struct plan_task {
    uint8_t kind;           /* plan_task_kind */
    int32_t op;             /* run/rerun: the op; else -1 */
    int32_t tensor;         /* swap_in/swap_out/drop: the storage; else -1 */
    uint32_t place_at, n_place; /* plan.places: residencies this task begins */
    uint32_t free_at, n_free;   /* plan.ids: storages a compute task frees when it ends */
    uint32_t dep_at, n_dep;     /* plan.ids: tasks of the same iteration it waits for */
    uint32_t pdep_at, n_pdep;   /* plan.ids: tasks of the previous iteration it waits for */
} plan_task;

typedef struct plan_class {
    int64_t size;  /* object size in bytes */
    int32_t count; /* number of objects */
    int64_t base;  /* derived: offset of object 0 */
} plan_class;

typedef struct plan {
    graph_profile *prof; /* the profile planned (owned if owns_prof) */
    int owns_prof;
    /* memory */
    int mem_kind;             /* plan_mem_kind */
    int64_t budget;           /* the memory budget the planner was given */
    int64_t capacity;         /* arena bytes: sum of class bytes (pool) or range (address) */
    int64_t workspace_reserve;/* scratch region kept for op workspaces */
    char policy[16];          /* address model: first-fit / best-fit; pool: "pool" */
    int32_t n_classes;
    plan_class *classes;
    /* the persistent storages resident (and where) at iteration start and end */
    int32_t n_resident;
    plan_place *resident;
    /* tasks in a valid planned order; each stream's tasks run in this order */
    int32_t n_tasks;
    plan_task *tasks;
    size_t tcap;
    plan_place *places;
    size_t n_places, pcap;
    int32_t *ids;
    size_t n_ids, icap;
    /* metadata */
    char *planner;
    uint64_t seed;
    char *options_json;      /* the planner options as a JSON object text */
    double planning_time_s;
    char *notes;
    /* An exact planner's solve (optimal-swap, optimal-remat); solver_status
       NULL where the plan comes from no solve (every other planner). */
    char *solver_status;       /* the planner's word for how the solve ended ("optimal",
                                  "stopped", "lowered memory", ...) */
    double solver_objective_s; /* the plan's objective in the planner's model (s per iteration) */
    double solver_bound_s;     /* the best proven lower bound of that model (s per iteration) */
    double solver_gap;         /* (objective - bound) / objective, a fraction */
} plan;

const char *plan_task_kind_name(int kind);
int plan_task_kind_parse(const char *s);
const char *plan_stream_name(int stream);
static inline int plan_task_stream(int kind)
{
    return kind <= TASK_RERUN ? STREAM_COMPUTE : kind == TASK_SWAP_IN ? STREAM_H2D : STREAM_D2H;
}

/* A new empty plan for profile g (borrowed unless owns is set). */
plan *plan_new(graph_profile *g, int owns);
void plan_free(plan *p);
/* Append a task; returns its index or -1 on allocation failure. The lists
   are copied into the plan's shared arrays. */
int32_t plan_add_task(plan *p, int kind, int32_t op, int32_t tensor, const plan_place *places,
                      int n_places, const int32_t *frees, int n_free, const int32_t *deps,
                      int n_dep, const int32_t *pdeps, int n_pdep);
/* Set pool classes (computes bases and capacity). */
int plan_set_pool(plan *p, const int64_t *sizes, const int32_t *counts, int n);
/* Fill offset from class/object for pool placements. */
void plan_place_resolve(const plan *p, plan_place *pl);
/* Set a metadata string. */
int plan_set_meta(plan *p, const char *planner, uint64_t seed, const char *options_json);
/* Replace the plan's notes with a copy of notes (NULL: none). Returns 0 or
   SW_ENOMEM (the old notes kept). */
int plan_set_notes(plan *p, const char *notes);
/* Record an exact planner's solve (status copied; NULL clears it). Returns 0
   or SW_ENOMEM (the old record kept). */
int plan_set_solver(plan *p, const char *status, double objective_s, double bound_s, double gap);

/* A task's lists (a plan with none at all has no arrays: NULL, n 0). */
static inline const plan_place *plan_task_places(const plan *p, const plan_task *t)
{
    return p->places ? p->places + t->place_at : NULL;
}
static inline const int32_t *plan_task_frees(const plan *p, const plan_task *t)
{
    return p->ids ? p->ids + t->free_at : NULL;
}
static inline const int32_t *plan_task_deps(const plan *p, const plan_task *t)
{
    return p->ids ? p->ids + t->dep_at : NULL;
}
static inline const int32_t *plan_task_pdeps(const plan *p, const plan_task *t)
{
    return p->ids ? p->ids + t->pdep_at : NULL;
}

/* Human-readable task label for messages: "task 12 (run op 5 'conv1')". */
const char *plan_task_label(const plan *p, int32_t task, char *buf, size_t n);

#endif
