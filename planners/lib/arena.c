/* arena.c: the planners' address arena (arena.h). */
#include "arena.h"

mem_fit arena_fit(const planner_opts *o, const char *fit_name)
{
    mem_fit fit = MEM_BEST_FIT;
    mem_fit_parse(fit_name ? fit_name : params_str(&o->params, "allocator"), &fit);
    return fit;
}

plan_builder *arena_builder(const graph_profile *g, const planner_opts *o, const char *fit_name)
{
    return pb_new_arena(g, o->memory_budget, g->max_workspace, arena_fit(o, fit_name),
                        params_size(&o->params, "alignment"));
}
