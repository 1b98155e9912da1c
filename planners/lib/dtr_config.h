/* dtr_config.h: what the planners on the DTR runtime (dtr, dtr-megengine)
   share: their options turned into the runtime's configuration, and the
   run itself with its statistics in the plan's notes. */
#ifndef PLANNERS_DTR_CONFIG_H
#define PLANNERS_DTR_CONFIG_H

#include "dtr_engine.h"

/* Fill cfg from the options of a planner running this runtime (dtr,
   dtr-megengine): the shared options (dtr_engine.h's DTR_PARAM_*), and
   whichever of the others its table declares; an option it does not declare
   keeps the value that planner fixes: without "heuristic" the MegEngine
   score (exp_compute, exp_staleness, exp_memory, recompute_base; else 0, 0,
   0, 1), without "budget_on" the arena, without "frag_evict" the heuristic's
   next pick. */
void dtr_config_from(const planner_opts *o, dtr_config *cfg);

/* Plan g with the runtime configured from o (dtr_config_from) within
   o->memory_budget; the plan's notes are "<label>: " and the runtime's
   statistics (dtr_stats_note). Errors: dtr_run's, SW_ENOMEM. */
int dtr_plan(const graph_profile *g, const planner_opts *o, const char *label, plan **out,
             sw_err *err);

#endif
