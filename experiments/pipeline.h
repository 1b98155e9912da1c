/* pipeline.h: the one plan, verify and simulate path that `swapsim plan`,
   `run` and `simulate` (cli/cmd_plan.c) and swapsim_run (api/) share:
   run a planner on a profile, verify its plan, time it. */
#ifndef PIPELINE_H
#define PIPELINE_H

#include "../planners/planner.h"
#include "../sim/simulate.h"

/* Which step of the path failed. */
enum { PIPE_OK, PIPE_PLAN, PIPE_VERIFY, PIPE_SIMULATE };

/* Run planner pl on *g under o into *out. A plan that borrows its profile
   takes *g over (*g becomes NULL), so the plan outlives the caller's
   profile; a planner that gives the plan its own copy leaves *g as it was.
   Returns planner_run's code (err set), *out NULL on error. */
int pipe_plan(const planner *pl, graph_profile **g, const planner_opts *o, plan **out,
              sw_err *err);

/* Verify p (when verify is non-zero), then simulate it to its steady state
   (at most max_iters iterations; 0: the simulator's default) into r.
   Returns 0, or the failing step's code with err set and *stage (may be
   NULL) PIPE_VERIFY or PIPE_SIMULATE. */
int pipe_verify_simulate(const plan *p, int verify, int max_iters, sim_result *r, int *stage,
                         sw_err *err);

/* pipe_plan, then pipe_verify_simulate with verify on: `swapsim run`.
   On error *stage names the step (PIPE_PLAN: *out NULL); on a verify or
   simulate error *out is still the plan (the caller frees it). */
int pipe_run(const planner *pl, graph_profile **g, const planner_opts *o, int max_iters,
             plan **out, sim_result *r, int *stage, sw_err *err);

#endif
