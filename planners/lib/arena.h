/* arena.h: the address arena a planner places its plan in, set up in one
   place for every planner that records its plan on a plan builder over the
   budget (odswap, sublinear, zero-offload, hybrid, optimal-remat and the
   offloading planners through swap_util's swu_offload). */
#ifndef PLANNERS_ARENA_H
#define PLANNERS_ARENA_H

#include "../../sim/builder.h"
#include "../planner.h"

/* The placement o's "allocator" option names (first-fit, best-fit), or
   fit_name where not NULL; best fit where neither names one. */
mem_fit arena_fit(const planner_opts *o, const char *fit_name);

/* A plan builder for g over an address arena of its own: o->memory_budget
   less g's largest op workspace, placed by arena_fit(o, fit_name), aligned
   to o's "alignment" option (the planner must declare it); the arena is
   freed with the builder (pb_free). NULL when out of memory. */
plan_builder *arena_builder(const graph_profile *g, const planner_opts *o, const char *fit_name);

/* The "allocator" option of the planners that place offline by default. */
#define ARENA_OFFLINE_PARAM                                                                     \
    {"allocator", PT_CHOICE, "offline", "address allocator placing the plan (offline: every "    \
     "residency placed at once, greedy by size or else by breadth, knowing when each begins "    \
     "and ends and holding what a copy out frees until the copy's estimated end; best fit "     \
     "where neither fits)", "first-fit|best-fit|offline", 1, 0}

#endif
