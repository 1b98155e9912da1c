/* optimal_swap.c: the `optimal-swap` planner: the best swapping plan for the
   profile's schedule, as a mixed-integer program (milp/milp.h) over
   stages, one stage per op of the schedule (docs/bounds.md, "optimal-swap").

   In stage j op j runs while the host-to-device stream copies what later
   ops need and then the device-to-host stream copies out (or drops) what
   they do not; the plan's extra edges make every stage start when the
   previous one has finished, so stage j lasts exactly
       max(time of op j, sum over its swap-ins (latency + bytes / h2d rate)
                       + sum over its swap-outs (latency + bytes / d2h rate))
   in the simulator, and the simulated iteration time equals the program's
   objective, the sum of the stage lengths. Every storage may leave the GPU
   once in each gap between two of its accesses (persistent storages also
   in the gap around the iteration's end): copied out (or dropped, where
   the host copy is current) in one stage of the gap, brought back in a
   later one; memory is counted per stage as the simulator and the verifier
   count it, against the budget less the largest workspace. The decisions
   are placed by an offline packing of the residencies into one address
   range (fragmentation is the packer's: when it overflows the range, the
   program is solved again with less memory, and the notes say so).

   This file is the planner: its options, the solve loop, the schedule set
   and the offline memory model the builder places through; the models,
   the packing and the recording are planners/lib/osw_*.c (lib/osw.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_rng.h>

#include "../sim/builder.h"
#include "../sim/simulate.h"
#include "../milp/milp.h"
#include "lib/osw.h"
#include "planner.h"
#include "lib/swap_util.h"
#include "lib/schedule.h"

static const param_def osw_params[] = {
    {"max_ops", PT_INT, "60", "refuse profiles with more ops than this (the program grows with "
     "ops x storages x gap lengths)", NULL, 1, 1e6},
    {"gap", PT_FLOAT, "0", "relative optimality gap at which the solver may stop (0: prove the "
     "optimum)", NULL, 0, 1},
    {"time_limit", PT_SECONDS, "120s", "solver time limit when no --time-budget is given", NULL,
     0, 1e9},
    {"max_nodes", PT_INT, "0", "branch-and-bound node limit (0: none); unlike a time limit, a "
     "node limit stops the solve at the same incumbent every run", NULL, 0, 1e12},
    {"model", PT_CHOICE, "auto", "span: copies may span ops, op and copy times continuous "
     "(event model); stage: no copy spans a stage (the older model); auto: solve both, each "
     "with half the time, and keep the plan that simulates faster", "auto|span|stage", 1, 0},
    {"solver", PT_CHOICE, "cbc", "the integer-program solver: COIN-OR CBC, or GLPK (slower on "
     "these programs; docs/bounds.md)", "cbc|glpk", 1, 0},
    {"schedules", PT_INT, "1", "solve for this many distinct schedules, each with an equal share "
     "of the time, and keep the plan that simulates fastest: the profile's order, then the "
     "framework's (a dataflow engine, first-in first-out), then random topological orders (each "
     "step a uniformly drawn ready op) from --seed; the bound reported is the least over them", NULL, 1, 64},
    PARAM_END};

/* The memory model the builder places through: the packing's offsets, in
   the order the builder asks (per storage, its residencies by start; the
   one kept around the iteration's end first, as the resident set, and again
   when it is brought home). */
typedef struct oracle {
    mem_model base;
    osw *x;
    int64_t capacity;
} oracle;

/* the item of storage s the next placement takes */
static osw_item *oracle_next(oracle *o, int32_t s)
{
    osw *x = o->x;
    if (s < 0 || s >= x->g->n_tensors || x->qcur[s] >= x->qoff[s + 1])
        return NULL;
    return &x->item[x->qitem[x->qcur[s]++]];
}

static int oracle_alloc(mem_model *m, int32_t tensor, int64_t bytes, plan_place *out)
{
    osw_item *it = oracle_next((oracle *)m, tensor);
    if (!it || it->bytes != bytes)
        return SW_ENOFIT;
    out->tensor = tensor;
    out->cls = out->obj = -1;
    out->offset = it->off;
    return 0;
}

static int oracle_alloc_at(mem_model *m, int32_t tensor, int64_t bytes, const plan_place *want)
{
    osw_item *it = oracle_next((oracle *)m, tensor);
    return it && it->bytes == bytes && it->off == want->offset ? 0 : SW_ENOFIT;
}

static void oracle_release(mem_model *m, const plan_place *pl, int64_t bytes)
{
    (void)m;
    (void)pl;
    (void)bytes;
}

static void oracle_reset(mem_model *m)
{
    osw *x = ((oracle *)m)->x;
    for (int32_t s = 0; s < x->g->n_tensors; s++)
        x->qcur[s] = x->qoff[s];
}

static void oracle_stats(const mem_model *m, mem_stats *st)
{
    memset(st, 0, sizeof *st);
    st->capacity = ((const oracle *)m)->capacity;
    st->high_water = st->capacity;
}

static int oracle_describe(const mem_model *m, plan *p)
{
    sw_free(p->classes);
    p->classes = NULL;
    p->n_classes = 0;
    p->mem_kind = MEM_ADDRESS;
    p->capacity = ((const oracle *)m)->capacity;
    snprintf(p->policy, sizeof p->policy, "offline");
    return 0;
}

static void oracle_destroy(mem_model *m) { (void)m; }

static const mem_methods oracle_methods = {1, "offline", oracle_alloc, oracle_alloc_at,
                                           oracle_release, oracle_reset, oracle_stats,
                                           oracle_describe, oracle_destroy};

static const char *status_name(milp_status s)
{
    return s == MILP_OPTIMAL ? "optimal" : s == MILP_FEASIBLE ? "stopped" : s == MILP_INFEASIBLE
           ? "infeasible" : "no solution";
}

/* One model's solves (plan_model): the program at the budget, then, while
   the packing of its decisions overflows the arena, with no-good rows (span
   model) or less memory. */
typedef struct osw_solve {
    osw *x;
    milp *m;             /* the program last solved */
    milp_opts mo;
    milp_result r;       /* its result */
    double tl;           /* the time limit of all the solves together (s) */
    int64_t cap;         /* tensor bytes at the budget (budget - largest workspace) */
    int64_t limit;       /* the memory the last program was built for */
    int64_t high;        /* the packing's highest byte */
    int shrinks;         /* times the memory was lowered */
    double first_bound;  /* the first solve's bound (s), at the budget */
    double *fixed;       /* span model: the last incumbent's values */
} osw_solve;

/* Solve until the decisions pack within the arena (the windows are set).
   0, or an error (SW_ENOFIT with what was tried). */
static int osw_solve_run(osw_solve *v, const planner_opts *o, sw_err *err)
{
    osw *x = v->x;
    double tl = v->tl;
    int rc = 0, tries = 0, cuts = 0, rebuild = 1;
    for (;;) {
        if (rebuild) {
            milp_free(v->m);
            v->m = milp_new();
            if (!v->m)
                return sw_fail(err, SW_ENOMEM, "out of memory");
            x->cap = v->limit;
            if ((rc = x->span ? osw_build_span(x, v->m, v->limit, NULL, err)
                             : osw_build(x, v->m, v->limit, err)))
                return rc;
            rebuild = 0;
        }
        /* the time limit is for all the solves together, split by a fixed
           rule (never by the time measured, so that a plan does not depend
           on the machine's load): 3/4 to the first memory limit, then 1/8,
           1/16, ...; the span model's solve gets 3/4 of a limit's share,
           each solve after a no-good row 1/8 */
        double share = v->shrinks ? tl / (double)(4 << SW_MIN(v->shrinks, 20)) : 0.75 * tl;
        v->mo.time_limit_s = x->span ? share * (cuts ? 0.125 : 0.75) : share;
        if ((rc = milp_solve(v->m, &v->mo, &v->r, err)))
            return rc;
        if (v->r.status == MILP_INFEASIBLE && cuts) {
            /* every decision set left over packs badly: less memory */
            cuts = 0;
            goto shrink;
        }
        if (v->r.status == MILP_INFEASIBLE && !v->shrinks) {
            char h1[32], h2[32];
            return sw_fail(err, SW_ENOFIT, "does not fit: no swapping plan of the profile's "
                           "schedule keeps within the requested %s (%s for tensors after the "
                           "largest workspace; optimal-swap's %s model, proven by %s)",
                           sw_fmt_bytes(o->memory_budget, h1, sizeof h1),
                           sw_fmt_bytes(v->limit, h2, sizeof h2), x->span ? "span" : "stage",
                           v->r.solver);
        }
        if (v->r.status == MILP_INFEASIBLE) {
            /* infeasible only at a lowered limit: nothing is proven at the
               budget asked for (another planner may find a plan there) */
            char h1[32], h2[32], h3[32];
            return sw_fail(err, SW_ENOFIT, "does not fit: optimal-swap found no plan that packs "
                           "(not proven: a plan within the requested %s may exist); its decisions "
                           "for %s of tensors overflowed the arena in the offline packing, so it "
                           "lowered the memory %d time%s to %s, where %s finds no plan of the "
                           "profile's schedule in the %s model", sw_fmt_bytes(o->memory_budget, h1,
                           sizeof h1), sw_fmt_bytes(v->cap, h2, sizeof h2), v->shrinks,
                           v->shrinks == 1 ? "" : "s", sw_fmt_bytes(v->limit, h3, sizeof h3),
                           v->r.solver, x->span ? "span" : "stage");
        }
        if (v->r.status == MILP_NOSOLUTION && cuts) {
            cuts = 0; /* nothing else found in its time: less memory */
            goto shrink;
        }
        if (v->r.status == MILP_NOSOLUTION) {
            char h1[32];
            return sw_fail(err, SW_ENOFIT, "does not fit: optimal-swap found no plan within the "
                           "solver's limits (%.3g s, %ld nodes%s%s); nothing is proven; give it "
                           "more --time-budget", v->r.solve_s, v->r.nodes,
                           v->shrinks ? ", at memory lowered for the packing to " : "",
                           v->shrinks ? sw_fmt_bytes(v->limit, h1, sizeof h1) : "");
        }
        if (!tries)
            v->first_bound = v->r.bound * x->tau;
        if (x->span) {
            sw_free(v->fixed);
            v->fixed = sw_malloc(((size_t)milp_vars(v->m) + 1) * sizeof *v->fixed);
            if (!v->fixed) {
                return sw_fail(err, SW_ENOMEM, "out of memory");
            }
            memcpy(v->fixed, v->r.x, (size_t)milp_vars(v->m) * sizeof *v->fixed);
            osw_read_span(x, v->r.x);
        } else {
            osw_read(x, v->r.x);
        }
        if ((rc = osw_pack(x, &v->high, err)))
            return rc;
        if (v->high <= v->cap)
            break;
        if (x->span && cuts < OSW_CUTS) {
            /* the span model first excludes the decisions that do not pack
               (a no-good row over the binaries) and solves again with the
               same memory: another optimum, or the next best, may pack */
            tries++;
            cuts++;
            osw_nogood(x, v->m, v->r.x);
            continue;
        }
    shrink:
        tries++;
        if (++v->shrinks > 8) {
            char h1[32], h2[32];
            return sw_fail(err, SW_ENOFIT, "does not fit: optimal-swap's offline packing of the "
                           "optimal decisions overflows the arena (%lld > %lld bytes) after 8 "
                           "tries with less memory (down to %s); not proven: a plan within the "
                           "requested %s may exist", (long long)v->high, (long long)v->cap,
                           sw_fmt_bytes(v->limit, h1, sizeof h1), sw_fmt_bytes(o->memory_budget,
                           h2, sizeof h2));
        }
        rebuild = 1;
        cuts = 0;
        /* (the span model steps down by 2%: its overflows come from
           circular conflicts, which a little less memory often undoes) */
        v->limit -= x->span ? v->limit / 50 : SW_MAX(v->high - v->cap, v->limit / 100);
    }
    return 0;
}

/* The iteration time of the decisions taken (s) in *model. 0, or SW_ENOMEM. */
static int osw_model_time(osw *x, const osw_solve *v, milp_backend be, double *stage_t,
                          double *model, sw_err *err)
{
    if (x->span) {
        /* the iteration time of the decisions taken: the program again with
           every binary fixed (a linear program), whose optimum is the
           schedule's exact time where the solver's incumbent is not tight */
        milp *m2 = milp_new();
        milp_result r2;
        milp_opts mo2 = {0, 0, 0, 0, be};
        *model = v->r.objective * x->tau;
        if (!m2)
            return sw_fail(err, SW_ENOMEM, "out of memory");
        if (!osw_build_span(x, m2, v->limit, v->fixed, err) && !milp_solve(m2, &mo2, &r2, err) &&
            r2.status == MILP_OPTIMAL)
            *model = SW_MIN(*model, r2.objective * x->tau);
        milp_free(m2);
    } else {
        *model = osw_time(x, stage_t);
    }
    return 0;
}

/* q's notes and solver fields: the status, the objective, the bound and
   gap, the program's size and the decisions. 0, or SW_ENOMEM. */
static int osw_notes(plan *q, const osw *x, const osw_solve *v, double model, int32_t n)
{
    int32_t trips = 0, drops = 0;
    for (int32_t i = 0; i < x->n_win; i++)
        if (x->win[i].out_at >= 0) {
            trips++;
            drops += x->win[i].drop;
        }
    double bound = SW_MIN(v->first_bound, model);
    double gap = model > 0 ? (model - bound) / model : 0;
    if (v->r.status == MILP_OPTIMAL && !v->shrinks)
        gap = SW_MAX(0.0, SW_MIN(gap, v->r.gap));
    char note[768], low[256] = "", h1[32], h2[32];
    if (v->shrinks) /* what was lowered, and what the solve proves (not the budget's optimum) */
        snprintf(low, sizeof low, "; memory lowered for the packing: %s of tensors lowered to "
                 "%s in %d step%s, the solve's %s at the lowered memory only, not at the "
                 "requested budget (the best bound is the first solve's, at the budget)",
                 sw_fmt_bytes(v->cap, h1, sizeof h1), sw_fmt_bytes(v->limit, h2, sizeof h2),
                 v->shrinks, v->shrinks == 1 ? "" : "s",
                 v->r.status == MILP_OPTIMAL ? "optimum" : "incumbent");
    snprintf(note, sizeof note, "optimal-swap: %s (%s); objective %.9g s, best bound %.9g s, "
             "gap %.4g%%; %d vars, %d rows; %d round trips (%d drops) in the %s model (%d "
             "stages)%s", v->shrinks ? "lowered memory" : status_name(v->r.status), v->r.solver,
             model, bound, 100 * gap, milp_vars(v->m), milp_rows(v->m), trips, drops,
             x->span ? "span" : "stage", 2 * n, low);
    if (plan_set_notes(q, note) ||
        plan_set_solver(q, v->shrinks ? "lowered memory" : status_name(v->r.status), model, bound,
                        gap))
        return SW_ENOMEM;
    return 0;
}

/* optimal-swap in one model (use_span: 1, stage: 0) with a fraction of the time limit */
static int plan_model(const graph_profile *g, const planner_opts *o, const int32_t *order,
                      int use_span, double fraction, plan **out, sw_err *err)
{
    const param_set *ps = &o->params;
    int32_t n = g->n_ops;
    *out = NULL;
    if (n > params_int(ps, "max_ops"))
        return sw_fail(err, SW_EUNSUPPORTED, "optimal-swap: %d ops exceed max_ops=%lld (the "
                       "integer program grows with ops x storages; raise max_ops to try)", n,
                       (long long)params_int(ps, "max_ops"));
    int64_t cap = o->memory_budget - g->max_workspace;
    if (cap <= 0)
        return sw_fail(err, SW_ENOFIT, "does not fit: the budget does not cover the largest op "
                       "workspace");
    osw x;
    memset(&x, 0, sizeof x);
    x.g = g;
    x.n = 2 * n;
    x.n_ops = n;
    x.order = sw_malloc(((size_t)n + 1) * sizeof *x.order);
    x.pos = sw_malloc(((size_t)n + 1) * sizeof *x.pos);
    int32_t nt = g->n_tensors;
    uint8_t *resident = sw_calloc((size_t)nt + 1, 1);
    double *stage_t = sw_malloc((2 * (size_t)n + 1) * sizeof *stage_t);
    osw_solve v;
    memset(&v, 0, sizeof v);
    plan_builder *b = NULL;
    int32_t *stage = NULL, *t_task = NULL;
    oracle orc;
    memset(&orc, 0, sizeof orc);
    orc.base.methods = &oracle_methods;
    orc.x = &x;
    int rc = 0;
    if (!x.order || !x.pos || !resident || !stage_t) {
        rc = sw_fail(err, SW_ENOMEM, "out of memory");
        goto done;
    }
    memcpy(x.order, order, (size_t)n * sizeof *x.order);
    double lat = g->device.copy_latency_s, rh_b, rd_b;
    dev_rates(&g->device, &x.rate_h, &x.rate_d, &rh_b, &rd_b);
    x.lat = lat;
    x.tau = g->total_compute_s > 0 ? g->total_compute_s / n : 1e-3;
    x.span = use_span;
    if ((rc = osw_accesses(&x, err)) || (rc = osw_windows(&x, err)))
        goto done;
    /* solve, and again with less memory while the packing overflows */
    double tl = fraction * (o->time_budget_s > 0 ? o->time_budget_s
                                                 : params_seconds(ps, "time_limit"));
    milp_backend be = milp_backend_find(params_str(ps, "solver")) == MILP_GLPK ? MILP_GLPK
                                                                               : MILP_CBC;
    milp_opts mo = {tl, (long)params_int(ps, "max_nodes"), params_float(ps, "gap"), 0, be};
    v.x = &x;
    v.mo = mo;
    v.tl = tl;
    v.cap = v.limit = cap;
    if ((rc = osw_solve_run(&v, o, err)))
        goto done;
    int64_t high = v.high;
    /* the resident set: persistent storages accessed and not away over the end */
    for (int32_t s = 0; s < nt; s++)
        resident[s] = is_storage(g, s) && osw_persistent(&x, s);
    for (int32_t i = 0; i < x.n_win; i++) {
        const osw_win *w = &x.win[i];
        if (w->wrap && w->out_at >= 0 && (x.span || (w->out_at < x.n && w->in_at >= x.n)))
            resident[w->s] = 0; /* (span: the in is issued in the next iteration) */
    }
    if (osw_queues(&x, resident)) {
        rc = sw_fail(err, SW_ENOMEM, "out of memory");
        goto done;
    }
    orc.capacity = SW_MAX(high, 1);
    b = pb_new(g, &orc.base, o->memory_budget, g->max_workspace);
    stage = sw_malloc(((size_t)n + 2 * (size_t)x.n_win + 1) * sizeof *stage);
    t_task = sw_malloc((2 * (size_t)x.n_win + (size_t)n + 1) * sizeof *t_task);
    if (!b || !stage || !t_task) {
        rc = sw_fail(err, SW_ENOMEM, "out of memory");
        goto done;
    }
    int32_t n_ev = 0;
    if (x.span) {
        if (osw_record_span(&x, b, resident, t_task, t_task + x.n_win, t_task + 2 * x.n_win,
                            &n_ev)) {
            rc = sw_fail(err, SW_ENOMEM, "out of memory");
            goto done;
        }
    } else {
        osw_record(&x, b, resident, stage, &n_ev);
    }
    plan *p = NULL;
    if ((rc = pb_finish(b, &p, err)))
        goto done;
    if (p->n_tasks != n_ev) {
        plan_free(p);
        rc = sw_fail(err, SW_EINVAL, "optimal-swap: the builder added tasks (%d recorded, %d in "
                     "the plan)", n_ev, p->n_tasks);
        goto done;
    }
    plan *q = x.span ? osw_span_edges(&x, p, t_task, t_task + x.n_win, t_task + 2 * x.n_win)
                     : osw_stage_edges(p, stage);
    plan_free(p);
    if (!q) {
        rc = sw_fail(err, SW_ENOMEM, "out of memory");
        goto done;
    }
    double model = 0;
    if ((rc = osw_model_time(&x, &v, be, stage_t, &model, err))) {
        plan_free(q);
        goto done;
    }
    if (osw_notes(q, &x, &v, model, n)) {
        plan_free(q);
        rc = sw_fail(err, SW_ENOMEM, "out of memory");
        goto done;
    }
    *out = q;
done:
    milp_free(v.m);
    pb_free(b);
    sw_free(stage);
    sw_free(t_task);
    sw_free(v.fixed);
    sw_free(stage_t);
    sw_free(resident);
    osw_free(&x);
    return rc;
}

/* "optimal" only where the simulator agrees with the solver's model: a
   plan whose simulated time t is not its objective (PCIe contention, which
   both models count at one-way rates: docs/bounds.md) is optimal in the
   model only, and its status and notes say so and by how much. 0, or
   SW_ENOMEM (p unchanged). */
static int osw_label_sim(plan *p, double t)
{
    const char *st = p->solver_status, *n = p->notes ? p->notes : "";
    double obj = p->solver_objective_s;
    if (!st || strcmp(st, "optimal") || !(obj > 0) || fabs(t - obj) <= 1e-6 * obj)
        return 0;
    char status[128];
    snprintf(status, sizeof status, "optimal in the %s model; simulated %.3g%% %s the objective",
             strstr(n, "in the span model") ? "span" : "stage", 100 * fabs(t - obj) / obj,
             t > obj ? "above" : "below");
    const char *rest = !strncmp(n, "optimal-swap: optimal", 21) ? n + 21 : "";
    size_t len = strlen(status) + strlen(rest) + 32;
    char *note = sw_malloc(len);
    if (!note)
        return SW_ENOMEM;
    snprintf(note, len, "optimal-swap: %s%s", status, rest);
    int rc = plan_set_notes(p, note);
    sw_free(note);
    if (!rc)
        rc = plan_set_solver(p, status, obj, p->solver_bound_s, p->solver_gap);
    return rc;
}

/* One schedule with `fraction` of the time. model=auto: both models, half
   of it each (a fixed split, so the plan does not depend on the machine's
   load); the plan that simulates faster, its notes saying what the other
   model gave */
static int plan_schedule(const graph_profile *g, const planner_opts *o, const int32_t *order,
                         double fraction, plan **out, sw_err *err)
{
    const char *model = params_str(&o->params, "model");
    if (strcmp(model, "auto")) {
        int rc = plan_model(g, o, order, strcmp(model, "stage") != 0, fraction, out, err);
        sim_result r;
        sw_err es;
        if (!rc && !sim_plan(*out, NULL, NULL, &r, &es) && osw_label_sim(*out, r.iteration_time_s)) {
            plan_free(*out);
            *out = NULL;
            rc = sw_fail(err, SW_ENOMEM, "out of memory");
        }
        return rc;
    }
    *out = NULL;
    plan *p[2] = {NULL, NULL};
    sw_err e[2];
    double t[2] = {HUGE_VAL, HUGE_VAL};
    int rc[2];
    for (int k = 0; k < 2; k++) { /* 0: span, 1: stage */
        rc[k] = plan_model(g, o, order, k == 0, 0.5 * fraction, &p[k], &e[k]);
        if (rc[k] == SW_ENOMEM || rc[k] == SW_EUNSUPPORTED) {
            plan_free(p[0]);
            *err = e[k];
            return rc[k];
        }
        sim_result r;
        sw_err es;
        if (!rc[k] && sim_plan(p[k], NULL, NULL, &r, &es) == 0)
            t[k] = r.iteration_time_s;
    }
    if (!p[0] && !p[1]) {
        *err = e[0];
        return rc[0];
    }
    int pick = t[1] < t[0] ? 1 : 0; /* ties: the span model's */
    if (!p[pick])
        pick = 1 - pick;
    char note[768], other[96];
    if (p[1 - pick])
        snprintf(other, sizeof other, "%.9g s", t[1 - pick]);
    else
        snprintf(other, sizeof other, "no plan");
    snprintf(note, sizeof note, "%s; model=auto: the %s model's plan (%.9g s simulated), the %s "
             "model's %s", p[pick]->notes ? p[pick]->notes : "", pick ? "stage" : "span", t[pick],
             pick ? "span" : "stage", other);
    plan_free(p[1 - pick]);
    if (plan_set_notes(p[pick], note) || osw_label_sim(p[pick], t[pick])) {
        plan_free(p[pick]);
        return sw_fail(err, SW_ENOMEM, "out of memory");
    }
    *out = p[pick];
    return 0;
}

/* schedules=N: up to N distinct schedules (the profile's order, the
   framework's, then uniform random topological orders from the seed;
   duplicates are skipped, at most 8N draws), rows of n ops in *orders;
   the number found, or -1 out of memory. names[k]: 'p', 'f' or 'r'. */
static int osw_schedules(const graph_profile *g, const planner_opts *o, int want,
                         int32_t **orders, char *names)
{
    int32_t n = g->n_ops;
    size_t row = (size_t)n * sizeof(int32_t);
    int32_t *a = sw_malloc((size_t)want * row + 1), *fw = NULL;
    int k = 0;
    if (!a)
        return -1;
    memcpy(a, g->order, row);
    names[k++] = 'p';
    if (k < want) {
        if (!(fw = swu_framework_order(g))) {
            sw_free(a);
            return -1;
        }
        if (memcmp(fw, a, row)) {
            memcpy(a + (size_t)k * (size_t)n, fw, row);
            names[k++] = 'f';
        }
        sw_free(fw);
    }
    if (k < want) {
        gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
        sa_sched_scratch *sc = r ? sa_sched_scratch_new(g) : NULL;
        if (!sc) {
            if (r)
                gsl_rng_free(r);
            sw_free(a);
            return -1;
        }
        gsl_rng_set(r, (unsigned long)o->seed);
        for (int d = 0; d < 8 * want && k < want; d++) {
            int32_t *c = a + (size_t)k * (size_t)n;
            sa_schedule_mutate(g, sc, g->order, 1.0, r, c);
            int dup = 0;
            for (int j = 0; j < k && !dup; j++)
                dup = !memcmp(c, a + (size_t)j * (size_t)n, row);
            if (!dup)
                names[k++] = 'r';
        }
        sa_sched_scratch_free(sc);
        gsl_rng_free(r);
    }
    *orders = a;
    return k;
}

/* schedules=1: the profile's schedule; more: each distinct schedule with
   an equal share of the time (a fixed split), the plan that simulates
   fastest kept; its bound the least over the schedules (a schedule
   without a plan counts with the compute time, a bound of every plan) */
static int plan_optimal_swap(const graph_profile *g, const planner_opts *o, plan **out,
                             sw_err *err)
{
    int want = (int)params_int(&o->params, "schedules");
    if (want <= 1)
        return plan_schedule(g, o, g->order, 1.0, out, err);
    *out = NULL;
    int32_t *orders = NULL;
    char names[65];
    int k = osw_schedules(g, o, want, &orders, names);
    if (k < 0)
        return sw_fail(err, SW_ENOMEM, "out of memory");
    plan *best = NULL;
    double best_t = HUGE_VAL, bound = HUGE_VAL;
    int best_k = -1, all_optimal = 1, rc = 0;
    sw_err first;
    first.code = 0;
    first.msg[0] = 0;
    char list[1024];
    size_t used = 0;
    list[0] = 0;
    for (int j = 0; j < k && !rc; j++) {
        plan *p = NULL;
        sw_err e;
        int r = plan_schedule(g, o, orders + (size_t)j * (size_t)g->n_ops, 1.0 / k, &p, &e);
        if (r == SW_ENOMEM || r == SW_EUNSUPPORTED) {
            *err = e;
            rc = r;
            break;
        }
        sim_result sr;
        sw_err es;
        double t = HUGE_VAL;
        if (!r && sim_plan(p, NULL, NULL, &sr, &es) == 0)
            t = sr.iteration_time_s;
        const char *nm = names[j] == 'p' ? "profile" : names[j] == 'f' ? "framework" : "random";
        if (p && t < HUGE_VAL) {
            bound = SW_MIN(bound, p->solver_bound_s);
            all_optimal &= p->solver_status && !strcmp(p->solver_status, "optimal");
            if (used < sizeof list)
                used += (size_t)snprintf(list + used, sizeof list - used, "%s%d %s %.9g s",
                                         j ? ", " : "", j + 1, nm, t);
        } else {
            bound = SW_MIN(bound, g->total_compute_s);
            all_optimal = 0;
            if (!first.code)
                first = r ? e : es;
            if (used < sizeof list)
                used += (size_t)snprintf(list + used, sizeof list - used, "%s%d %s no plan",
                                         j ? ", " : "", j + 1, nm);
        }
        if (p && t < best_t) { /* ties: the earlier schedule */
            plan_free(best);
            best = p;
            best_t = t;
            best_k = j;
        } else {
            plan_free(p);
        }
    }
    sw_free(orders);
    if (rc)
        goto fail;
    if (!best) {
        rc = sw_fail(err, first.code ? first.code : SW_ENOFIT, "none of %d distinct schedules "
                     "(schedules=%d) has a plan; the first: %s", k, want,
                     first.code ? first.msg : "its plan does not simulate");
        goto fail;
    }
    double obj = best->solver_objective_s;
    bound = SW_MIN(bound, obj);
    double gap = obj > 0 ? (obj - bound) / obj : 0;
    /* optimal: every solve proved its optimum, or the plan meets the set's
       bound (which holds at the real budget) */
    int lowered = best->solver_status && !strcmp(best->solver_status, "lowered memory");
    const char *st = all_optimal || gap <= 1e-9 ? "optimal" : lowered ? "lowered memory"
                                                                       : "stopped";
    const char *bn = best->notes ? best->notes : "";
    if (!strncmp(bn, "optimal-swap: ", 14))
        bn += 14;
    char note[2048];
    snprintf(note, sizeof note, "optimal-swap: %s over %d distinct schedules (schedules=%d, "
             "each with 1/%d of the time); objective %.9g s, best bound %.9g s, gap %.4g%%; the "
             "plan of schedule %d (%.9g s simulated); simulated: %s%s; that schedule's solve: %s",
             st, k, want, k, obj, bound, 100 * gap, best_k + 1, best_t, list,
             used >= sizeof list ? "..." : "", bn);
    if (plan_set_notes(best, note) || plan_set_solver(best, st, obj, bound, gap) ||
        osw_label_sim(best, best_t)) {
        plan_free(best);
        return sw_fail(err, SW_ENOMEM, "out of memory");
    }
    *out = best;
    return 0;
fail:
    plan_free(best);
    return rc;
}

const planner planner_optimal_swap = {1, "optimal-swap", "the optimal swapping plan for the "
                                      "profile's schedule (or the best over a small set of "
                                      "schedules, schedules=N) as a mixed-integer program solved "
                                      "by CBC, in two models (copies spanning ops, or one stage "
                                      "per op; by default both, the faster plan kept); refuses "
                                      "above max_ops", osw_params, plan_optimal_swap,
                                      PLANNER_SIZE_LIMIT};
