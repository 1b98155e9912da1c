/* solve.c: the dispatcher of milp.h: hands a model to the backend its
   options name, from one table of backends (backend.h's method tables, in
   milp_backend order). The only file that knows every backend. */
#include "backend.h"

#include <string.h>

static const milp_backend_ops *const backends[] = {
    [MILP_CBC] = &milp_backend_cbc,
    [MILP_GLPK] = &milp_backend_glpk,
};

int milp_backend_find(const char *name)
{
    for (int b = 0; b < (int)SW_ARRAY_LEN(backends); b++)
        if (name && strcmp(name, backends[b]->name) == 0)
            return b;
    return -1;
}

/* The backend for b; CBC (the default) for an unknown value. */
static const milp_backend_ops *backend_of(milp_backend b)
{
    return (unsigned)b < SW_ARRAY_LEN(backends) ? backends[b] : backends[MILP_CBC];
}

const char *milp_backend_name(milp_backend b) { return backend_of(b)->name; }

int milp_solve(milp *m, const milp_opts *o, milp_result *r, sw_err *err)
{
    return backend_of(o ? o->backend : MILP_CBC)->solve(m, o, r, err);
}

int milp_solve_lp(milp *m, const milp_opts *o, milp_lp_method method, milp_result *r,
                  sw_err *err)
{
    return backend_of(o ? o->backend : MILP_CBC)->solve_lp(m, o, method, r, err);
}
