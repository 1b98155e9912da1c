/* builder.h: turn a planner's decisions, given as one sequence of tasks in
   the order the planner intends, into a plan: memory placement through a
   memory model, implicit frees after last use, and the minimal dependency
   edges (data, memory reuse, host copies, across iterations) that make the
   plan safe. Every planner records through this; the verifier re-checks. */
#ifndef BUILDER_H
#define BUILDER_H

#include "mem.h"
#include "plan.h"

typedef struct plan_builder plan_builder;

/* A builder for profile g (borrowed) placing through mem (borrowed; it is
   reset by pb_finish). budget and workspace_reserve go into the plan.
   Returns NULL on allocation failure. */
plan_builder *pb_new(const graph_profile *g, mem_model *mem, int64_t budget,
                     int64_t workspace_reserve);
/* pb_new over an address arena of its own: mem_address_new(budget -
   workspace_reserve, fit, align), freed by pb_free. NULL on allocation failure. */
plan_builder *pb_new_arena(const graph_profile *g, int64_t budget, int64_t workspace_reserve,
                           mem_fit fit, int64_t align);
/* The memory model the builder places through now. */
mem_model *pb_memory(const plan_builder *b);
void pb_free(plan_builder *b);
/* Forget every recorded task and resident tensor (reuse for a new plan). */
void pb_reset(plan_builder *b);
/* Place through another memory model from now on (borrowed). */
void pb_set_memory(plan_builder *b, mem_model *mem);

/* The persistent storage s is resident when the iteration starts (placed in
   call order, or at *where). Must precede the first task. */
void pb_resident(plan_builder *b, int32_t s);
void pb_resident_at(plan_builder *b, int32_t s, const plan_place *where);
/* pb_resident for every persistent storage of the profile, in storage order. */
void pb_resident_persistent(plan_builder *b);

/* Tasks, in the planner's intended order. Errors are remembered and
   reported by pb_finish. */
void pb_run(plan_builder *b, int32_t op);
/* Re-run op: places every storage it creates that is not resident. */
void pb_rerun(plan_builder *b, int32_t op);
void pb_swap_in(plan_builder *b, int32_t s);
void pb_swap_out(plan_builder *b, int32_t s);
void pb_drop(plan_builder *b, int32_t s);
/* Swap out (if its host copy is stale) or drop every persistent storage
   resident now but not resident at start, and swap in every one resident
   at start but not now, so the iteration ends as it began. */
void pb_end_iteration(plan_builder *b);

/* State queries while recording. */
int pb_is_resident(const plan_builder *b, int32_t s);
/* 1 if the host holds the current version of s. */
int pb_host_valid(const plan_builder *b, int32_t s);
int pb_in_resident_set(const plan_builder *b, int32_t s);
int32_t pb_task_count(const plan_builder *b);

/* Place, infer edges and emit the plan (borrowing the profile). Errors:
   SW_ENOFIT (a placement failed: "does not fit ..."), SW_EINVAL (the task
   sequence is inconsistent, naming the task), SW_ENOMEM. */
int pb_finish(plan_builder *b, plan **out, sw_err *err);

#endif
