/* pipeline.c: plan, verify, simulate: the path the command line and the
   library interface share (see pipeline.h). */
#include "pipeline.h"

#include <stddef.h>

#include "../sim/verify.h"

int pipe_plan(const planner *pl, graph_profile **g, const planner_opts *o, plan **out,
              sw_err *err)
{
    *out = NULL;
    plan *p;
    int rc = planner_run(pl, *g, o, &p, err);
    if (rc)
        return rc;
    if (!p->owns_prof) { /* the plan borrows g: it takes it over (a planner that rewrites
                            the profile, zero-offload, gives the plan its own copy) */
        p->prof = *g;
        p->owns_prof = 1;
        *g = NULL;
    }
    *out = p;
    return 0;
}

int pipe_verify_simulate(const plan *p, int verify, int max_iters, sim_result *r, int *stage,
                         sw_err *err)
{
    int rc = verify ? plan_verify(p, NULL, err) : 0;
    if (rc) {
        if (stage)
            *stage = PIPE_VERIFY;
        return rc;
    }
    sim_opts so = {0};
    so.max_iters = max_iters;
    rc = sim_plan(p, NULL, &so, r, err);
    if (stage)
        *stage = rc ? PIPE_SIMULATE : PIPE_OK;
    return rc;
}

int pipe_run(const planner *pl, graph_profile **g, const planner_opts *o, int max_iters,
             plan **out, sim_result *r, int *stage, sw_err *err)
{
    int rc = pipe_plan(pl, g, o, out, err);
    if (rc) {
        if (stage)
            *stage = PIPE_PLAN;
        return rc;
    }
    return pipe_verify_simulate(*out, 1, max_iters, r, stage, err);
}
