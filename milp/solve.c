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

/* (a model that fails milp_check is never looked up: the backend reports
   it) */
int milp_solve(milp *m, const milp_opts *o, milp_result *r, sw_err *err)
{
    const milp_backend_ops *b = backend_of(o ? o->backend : MILP_CBC);
    int cached = milp_cache_dir(o) && !milp_check(m, err);
    if (cached && milp_cache_get(m, o, b->name, -1, r))
        return 0;
    int rc = b->solve(m, o, r, err);
    if (cached && !rc)
        milp_cache_put(m, o, b->name, -1, r);
    return rc;
}

int milp_solve_lp(milp *m, const milp_opts *o, milp_lp_method method, milp_result *r,
                  sw_err *err)
{
    const milp_backend_ops *b = backend_of(o ? o->backend : MILP_CBC);
    int cached = milp_cache_dir(o) && !milp_check(m, err);
    if (cached && milp_cache_get(m, o, b->name, (int)method, r))
        return 0;
    int rc = b->solve_lp(m, o, method, r, err);
    if (cached && !rc)
        milp_cache_put(m, o, b->name, (int)method, r);
    return rc;
}
