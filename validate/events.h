/* events.h: the event graph a replay enqueues (both backends): for every
   task the tasks it must wait for, as (task, iterations back) pairs built
   from deps, prev_deps and the simulator's run-ahead bound, minus what
   stream order already implies; which tasks record an event and how many
   event slots each needs; and an order to enqueue one iteration in. */
#ifndef VAL_EVENTS_H
#define VAL_EVENTS_H

#include "../sim/plan.h"

/* The simulator lets a stream run at most this many iterations ahead of
   the slowest one (LEAD in sim/simulate.c); the replay imposes the same
   bound so both execute the same set of orders. */
#define VAL_LEAD 2

typedef struct val_edge {
    int32_t task; /* the task waited for */
    int32_t dist; /* of iteration k - dist (0: same iteration) */
} val_edge;

typedef struct val_events {
    int32_t n_tasks;
    int32_t *in_off;   /* CSR over tasks: in[in_off[t] .. in_off[t+1]) */
    val_edge *in;
    int32_t *ev_base;  /* per task: first event id, or -1 if nothing waits for it */
    int32_t *ev_ring;  /* per task: event slots (largest distance waited across + 1) */
    int32_t n_events;
    int32_t *order;    /* enqueue order of one iteration: topological in deps and stream order */
    int32_t last_compute; /* the iteration's last compute task (timing mark) */
    int32_t n_edges;   /* edges kept */
    int32_t n_implied; /* deps and prev_deps dropped as implied by stream order */
} val_events;

/* Build the graph; lead is the run-ahead bound (VAL_LEAD; < 0: none).
   SW_EDEADLOCK if deps and stream order form a cycle (naming a task on
   it), SW_EINVAL for a dependency on a task that does not exist or a plan
   without compute tasks. Free with val_events_free. */
int val_events_build(const plan *p, int lead, val_events *E, sw_err *err);
void val_events_free(val_events *E);

/* The event slot task t records in iteration k (t must have an event). */
static inline int32_t val_events_slot(const val_events *E, int32_t t, int64_t k)
{
    return E->ev_base[t] + (int32_t)(k % E->ev_ring[t]);
}

#endif
