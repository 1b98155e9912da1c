/* optimal_remat.c: the `optimal-remat` planner: Checkmate's integer program
   for rematerialisation at a memory budget (Jain et al., "Checkmate:
   Breaking the Memory Wall with Optimal Tensor Rematerialization", MLSys
   2020), solved through milp/milp.h; docs/bounds.md ("optimal-remat")
   gives the formulation and its limits.

   Stage t (0 <= t < T, T the ops of the profile's order) runs op t and may
   first re-run earlier ops, in the order's order. Binary R[t][k]: op k is
   computed in stage t (R[t][t] = 1); binary S[t][c]: storage c is resident
   when stage t begins; continuous FREE[t][c][k] (c is freed right after op
   k of stage t) and U (the bytes resident after each computation). The
   objective is the compute time of every run and re-run, which is the plan's
   simulated iteration time: a plan that only recomputes never waits for
   anything but its own compute stream. The plan replays the solution's R
   through the plan builder: the re-runs of each stage, then its op, each
   storage dropped right after its last use in the stage unless the next
   stage needs it resident (the least S the R allows).

   method=lp-round (auto above max_vars) is Checkmate's approximation: the
   LP relaxation (the program's own, or the coarse one of orm_build_coarse)
   solved by CLP gives a lower bound (lp_bound); its S and R are rounded,
   the least R derived for each S (orc_r_from_s), plans over the budget
   repaired (orc_repair), and the cheapest that fits, or the start, kept.

   This file is the planner: its options, the solve (exact, or lp-round)
   and recording the plan; the program, its state and the rounding are
   planners/lib/orm_*.c (lib/orm.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../sim/builder.h"
#include "../sim/simulate.h"
#include "../sim/bound.h"
#include "../milp/milp.h"
#include "lib/arena.h"
#include "lib/orm.h"
#include "planner.h"

static const param_def optimal_remat_params[] = {
    {"max_ops", PT_INT, "1000", "profiles with more ops that need recomputation are refused "
     "(SW_EUNSUPPORTED): the program has about T^2 variables", NULL, 1, 1e6},
    {"max_vars", PT_INT, "40000", "above this many R and S variables the exact program is not "
     "solved (CBC would not finish its first relaxation in minutes): method=auto rounds the "
     "LP relaxation instead, method=exact returns the start's plan with the gap to the lower "
     "bound of docs/bounds.md", NULL, 1, 1e9},
    {"method", PT_CHOICE, "auto", "exact: CBC's branch and bound on the integer program; "
     "lp-round: Checkmate's two-phase rounding (solve the LP relaxation, a lower bound; round "
     "its S and R, recompute what each stage then lacks, repair plans over the budget; keep "
     "the cheapest plan that fits); auto: "
     "exact up to max_vars, lp-round above", "auto|exact|lp-round", 1, 0},
    {"lp", PT_CHOICE, "auto", "lp-round's relaxation: full (the program's own), coarse (R and "
     "S only, memory at each stage's start and run, storages under cap/10^4 bytes free: "
     "far smaller, also a valid bound), or auto (full up to max_vars)", "auto|full|coarse", 1, 0},
    {"lp_method", PT_CHOICE, "dual", "how CLP solves the relaxation (lp-round)",
     "auto|dual|primal|barrier", 1, 0},
    {"rounds", PT_INT, "16", "lp-round: randomized roundings of S tried besides the "
     "thresholds (drawn from --seed)", NULL, 0, 1e6},
    {"recompute", PT_CHOICE, "all", "ops that may be re-run: all (Checkmate's program), or "
     "forward ops only (a smaller program; its optimum is optimal only among such plans)",
     "all|forward", 1, 0},
    {"start", PT_CHOICE, "heuristics", "the solver's initial solution: the cheaper of the dtr "
     "and sublinear (mode=budget) plans that fit the program's accounting, or none",
     "heuristics|none", 1, 0},
    {"max_nodes", PT_INT, "0", "branch-and-bound node limit (0: none); unlike --time-budget "
     "it makes a stopped solve repeatable", NULL, 0, 2e9},
    {"rel_gap", PT_FLOAT, "0", "stop once the relative gap on the recompute time is at most "
     "this (0: prove optimality)", NULL, 0, 1},
    {"solver", PT_CHOICE, "cbc", "the solver: COIN-OR CBC (CLP for the relaxation), or GLPK "
     "(slower on these programs; docs/bounds.md)", "cbc|glpk", 1, 0},
    {"solver_log", PT_BOOL, "false", "print the solver's own log on stdout", NULL, 1, 0},
    {"allocator", PT_CHOICE, "best-fit", "address allocator placing the plan",
     "first-fit|best-fit", 1, 0},
    {"alignment", PT_SIZE, "1", "placement alignment in bytes", NULL, 1, 1e9},
    PARAM_END};

/* ---- the planner ---- */

/* Record c->R (settled) into a plan placed in the budget. */
static int or_build(orc *c, const planner_opts *o, const char *fit_name, plan **out, sw_err *err)
{
    const graph_profile *g = c->g;
    plan_builder *b = arena_builder(g, o, fit_name);
    if (!b)
        return sw_fail(err, SW_ENOMEM, "out of memory");
    for (int32_t s = 0; s < g->n_tensors; s++)
        if (g->tensors[s].storage == s && g->tensors[s].persistent)
            pb_resident(b, s);
    or_eval r;
    int rc = orc_replay(c, b, &r);
    if (rc)
        rc = sw_fail(err, SW_EINVAL, "optimal-remat: the solution reads a storage that is not "
                     "resident (a bug)");
    else
        rc = pb_finish(b, out, err);
    pb_free(b);
    return rc;
}

/* A start from planner pl's plan at budget: 0 and *e filled if it reads
   as stages and fits the program's accounting (c->cap). */
static int start_from(orc *c, const graph_profile *g, const planner_opts *o, int64_t budget,
                      const planner *pl, const char *const *kv, or_eval *e, plan **keep)
{
    *keep = NULL;
    planner_opts po;
    sw_err ignore;
    if (planner_opts_derive(&po, pl, o, budget, kv, &ignore))
        return -1;
    plan *p = NULL;
    int rc = planner_run(pl, g, &po, &p, &ignore);
    planner_opts_free(&po);
    if (rc)
        return -1;
    rc = orc_from_plan(c, p);
    int r1 = rc ? 0 : orc_settle(c), r2 = rc || r1 ? 0 : orc_replay(c, NULL, e);
    if (rc || r1 || r2 || e->peak > c->cap) {
        plan_free(p);
        return -1;
    }
    *keep = p;
    return 0;
}

/* One solve at c->cap: the solution in c->R (settled) and *best. */
typedef struct or_solve_out {
    or_eval best;       /* the plan's figures */
    const char *how;    /* where it came from */
    int solved;         /* 1: the solver ran (mr, vars, rows valid) */
    milp_result mr;     /* its result (x not kept) */
    int vars, rows;
    int64_t size;       /* R and S variables (0: no program needed) */
    plan *start;        /* the heuristic plan the start came from (owned), or NULL */
    const char *start_name;
    int lp;             /* 1: lp-round (the fields below valid) */
    milp_status lp_status; /* the first relaxation's */
    int tried, fits;    /* roundings tried, that fit the cap */
    int lp_retries;     /* relaxations solved again for less memory */
    char how_buf[2 * OR_HOWLEN]; /* the winning rounding, or the start, and holds */
    int from_start;     /* 1: the plan is the start's (before holds) */
    double round_best;  /* the cheapest rounding's recompute time (s), -1: none fits */
    char round_how[OR_HOWLEN]; /* and which it was */
} or_solve_out;

#define OR_LP_RETRIES 4 /* relaxations at 90%, 81% ... of the cap when no rounding fits */

/* lp-round at c->cap: the relaxation (solved once, kept), its roundings, and
   Checkmate's retry at a smaller cap when none fits; the cheapest of them
   and the start (have: bestR, so->best) ends in c->R (settled). */
static int or_lpround(orc *c, const graph_profile *g, const planner_opts *o, double deadline,
                      or_solve_out *so, uint8_t *bestR, int have, sw_err *err)
{
    char h1[32], h2[32];
    so->lp = 1;
    so->lp_status = MILP_OPTIMAL;
    so->round_best = -1;
    int64_t cap = c->cap;
    int rc;
    if (!c->lpS) {
        milp_status st = MILP_NOSOLUTION;
        if ((rc = or_lp(c, o, deadline, &st, err)))
            return rc;
        so->lp_status = st;
        if (st == MILP_INFEASIBLE) {
            int64_t budget = c->cap + c->persist + g->max_workspace;
            return sw_fail(err, SW_ENOFIT, "does not fit: no rematerialisation of the profile's "
                           "order fits %s (%lld bytes; %s of it for the persistent storages and "
                           "the largest workspace): the linear relaxation is infeasible",
                           sw_fmt_bytes(budget, h1, sizeof h1), (long long)budget,
                           sw_fmt_bytes(c->persist + g->max_workspace, h2, sizeof h2));
        }
        if (st == MILP_OPTIMAL && !c->lp_bounded) {
            c->lp_bounded = 1;
            c->lp_bound = c->lp_obj;
        }
    }
    uint8_t *rbestR = sw_malloc((size_t)Tsq(c) + 1); /* the cheapest rounding's R */
    if (!rbestR)
        return sw_fail(err, SW_ENOMEM, "out of memory");
    for (int retry = 0; c->lpS; retry++) {
        int won = 0;
        so->fits += or_round(c, o, bestR, &so->best, have, so->how_buf, sizeof so->how_buf,
                             &so->tried, &won, &so->round_best, so->round_how, rbestR);
        if (won) {
            so->how = so->how_buf;
            have = 1;
        }
        if (so->fits || retry >= OR_LP_RETRIES || sw_now() > deadline)
            break;
        /* nothing fits: the relaxation again for less memory (Checkmate) */
        milp_status st = MILP_NOSOLUTION;
        c->cap = c->lp_cap - c->lp_cap / 10;
        rc = or_lp(c, o, deadline, &st, err);
        c->cap = cap;
        if (rc) {
            sw_free(rbestR);
            return rc;
        }
        so->lp_retries++;
        if (st != MILP_OPTIMAL)
            break;
    }
    if (!have)
        sw_free(rbestR);
    if (!have && c->lpS)
        return sw_fail(err, SW_ENOFIT, "does not fit: no rounding of the LP relaxation fits "
                       "%s, and neither dtr nor sublinear has a plan (the relaxation is feasible: "
                       "method=exact says whether the program is)",
                       sw_fmt_bytes(c->cap + c->persist + g->max_workspace, h1, sizeof h1));
    if (!have)
        return sw_fail(err, SW_EEXCEEDED, "exceeded: the time limit ended the LP relaxation's "
                       "solve, and there is no start");
    /* the cheapest rounding, improved by holds: the best plan if cheaper */
    or_eval ev;
    if (so->round_best >= 0) {
        memcpy(c->R, rbestR, (size_t)Tsq(c));
        int kept = orc_settle(c) || orc_replay(c, NULL, &ev) ? 0 : orc_improve(c, &ev);
        if (kept < 0) {
            sw_free(rbestR);
            return sw_fail(err, SW_ENOMEM, "out of memory");
        }
        if (kept > 0) {
            so->round_best = ev.recompute_s;
            size_t l = strlen(so->round_how);
            snprintf(so->round_how + l, OR_HOWLEN - l, ", %d held", kept);
            if (ev.recompute_s < so->best.recompute_s) {
                so->best = ev;
                memcpy(bestR, c->R, (size_t)Tsq(c));
                snprintf(so->how_buf, sizeof so->how_buf, "%s", so->round_how);
                so->how = so->how_buf;
            }
        }
    }
    sw_free(rbestR);
    memcpy(c->R, bestR, (size_t)Tsq(c));
    orc_settle(c);
    so->from_start = so->how != so->how_buf;
    if (so->from_start && !orc_replay(c, NULL, &ev)) {
        int kept = orc_improve(c, &ev);
        if (kept < 0)
            return sw_fail(err, SW_ENOMEM, "out of memory");
        if (kept > 0 && ev.recompute_s < so->best.recompute_s) {
            char h[OR_HOWLEN];
            snprintf(h, sizeof h, "%s", so->how ? so->how : "?");
            snprintf(so->how_buf, sizeof so->how_buf, "%s, %d re-run%s held instead", h, kept,
                     kept == 1 ? "" : "s");
            so->how = so->how_buf;
            so->best = ev;
        } else {
            memcpy(c->R, bestR, (size_t)Tsq(c));
            orc_settle(c);
        }
    }
    return 0;
}

static int or_solve(orc *c, const graph_profile *g, const planner_opts *o, double deadline,
                    or_solve_out *so, sw_err *err)
{
    const param_set *ps = &o->params;
    char h1[32], h2[32];
    memset(so, 0, sizeof *so);
    or_eval ev;
    memset(c->R, 0, (size_t)Tsq(c));
    if (orc_settle(c) || orc_replay(c, NULL, &ev))
        return sw_fail(err, SW_EINVAL, "optimal-remat: the profile's order does not replay "
                       "(a bug)");
    if (ev.peak <= c->cap) { /* nothing re-run: optimal at once */
        so->best = ev;
        so->how = "nothing re-run";
        return 0;
    }
    if (c->T > params_int(ps, "max_ops"))
        return sw_fail(err, SW_EUNSUPPORTED, "optimal-remat: %d ops need recomputation within "
                       "the budget, more than max_ops=%lld the integer program is built for (it "
                       "grows as the square of the ops)", c->T,
                       (long long)params_int(ps, "max_ops"));
    int64_t size = orm_size(c);
    so->size = size;
    uint8_t *bestR = NULL;
    orm q;
    memset(&q, 0, sizeof q);
    int have = 0, rc = 0;
    if (!ALLOC(bestR, Tsq(c))) {
        rc = sw_fail(err, SW_ENOMEM, "out of memory");
        goto done;
    }
    /* the start: the cheaper heuristic plan that fits the accounting */
    const char *start_name = NULL;
    if (!strcmp(params_str(ps, "start"), "heuristics")) {
        static const char *const sub_kv[] = {"mode=budget", NULL};
        const planner *cand[2] = {&planner_dtr, &planner_sublinear};
        const char *const *kvs[2] = {NULL, sub_kv};
        int64_t budget = c->cap + c->persist + g->max_workspace;
        for (int i = 0; i < 2; i++) {
            plan *hp = NULL;
            if (!start_from(c, g, o, budget, cand[i], kvs[i], &ev, &hp) &&
                (!have || ev.recompute_s < so->best.recompute_s)) {
                so->best = ev;
                have = 1;
                memcpy(bestR, c->R, (size_t)Tsq(c));
                start_name = cand[i]->name;
                plan_free(so->start);
                so->start = hp;
                so->start_name = start_name;
            } else {
                plan_free(hp);
            }
        }
    }
    if (have) {
        memcpy(c->R, bestR, (size_t)Tsq(c));
        orc_settle(c);
    }
    const char *method = params_str(ps, "method");
    if (!strcmp(method, "lp-round") ||
        (!strcmp(method, "auto") && size > params_int(ps, "max_vars"))) {
        so->how = start_name;
        rc = or_lpround(c, g, o, deadline, so, bestR, have, err);
        goto done;
    }
    if (size > params_int(ps, "max_vars")) {
        if (have)
            so->how = start_name;
        else
            rc = sw_fail(err, SW_EUNSUPPORTED, "optimal-remat: the integer program would have "
                         "%lld R and S variables, more than max_vars=%lld, and neither dtr nor "
                         "sublinear has a plan to start from", (long long)size,
                         (long long)params_int(ps, "max_vars"));
        goto done;
    }
    /* memory in units of about cap / 10^4 bytes: the solver's tolerances
       (1e-7 absolute) stay below a byte */
    q.unit = SW_MAX(1.0, (double)c->cap / 1e4);
    if (orm_build(c, &q, have)) {
        rc = sw_fail(err, SW_ENOMEM, "out of memory building the integer program");
        goto done;
    }
    milp_opts mo;
    memset(&mo, 0, sizeof mo);
    mo.time_limit_s = SW_MAX(deadline - sw_now(), 0.5);
    mo.max_nodes = params_int(ps, "max_nodes");
    mo.rel_gap = params_float(ps, "rel_gap");
    mo.log = params_bool(ps, "solver_log");
    mo.backend = milp_backend_find(params_str(ps, "solver")) == MILP_GLPK ? MILP_GLPK
                                                                         : MILP_CBC;
    milp_result *mr = &so->mr;
    rc = milp_solve(q.m, &mo, mr, err);
    if (rc)
        goto done;
    so->solved = 1;
    so->vars = milp_vars(q.m);
    so->rows = milp_rows(q.m);
    if (mr->status == MILP_INFEASIBLE) {
        int64_t budget = c->cap + c->persist + g->max_workspace;
        rc = sw_fail(err, SW_ENOFIT, "does not fit: no rematerialisation of the profile's order "
                     "fits %s (%lld bytes; %s of it for the persistent storages and the largest "
                     "workspace): the integer program is infeasible",
                     sw_fmt_bytes(budget, h1, sizeof h1), (long long)budget,
                     sw_fmt_bytes(c->persist + g->max_workspace, h2, sizeof h2));
        goto done;
    }
    if (mr->x) {
        memset(c->R, 0, (size_t)Tsq(c));
        for (int32_t t = 0; t < c->T; t++)
            for (int32_t k = 0; k < t; k++) {
                int32_t v = q.Rv[(size_t)t * (size_t)c->T + (size_t)k];
                if (v >= 0 && mr->x[v] > 0.5)
                    c->R[(size_t)t * (size_t)c->T + (size_t)k] = 1;
            }
        /* checked, not trusted: a solve stopped by its limit can return an
           iterate that breaks rows (CBC 2.10, coin-or/Cbc#353) */
        int bad = orc_settle(c) || orc_replay(c, NULL, &ev) || ev.peak > c->cap;
        if (bad && !have) {
            rc = sw_fail(err, SW_EEXCEEDED, "exceeded: the solve stopped (%.3g s) with a "
                         "solution that breaks the program's rows, and there is no start",
                         mo.time_limit_s);
            goto done;
        }
        if (!bad && (!have || ev.recompute_s <= so->best.recompute_s)) {
            so->best = ev;
            so->how = "the solver";
        } else {
            memcpy(c->R, bestR, (size_t)Tsq(c));
            orc_settle(c);
            so->how = start_name;
        }
        have = 1;
    } else if (have) {
        so->how = start_name; /* the limit came first; the start stands */
    }
    mr->x = NULL;
    if (!have)
        rc = sw_fail(err, SW_EEXCEEDED, "exceeded: the time limit (%.3g s) ended the solve "
                     "before any plan was found (proven bound: recompute >= %.6f s)",
                     mo.time_limit_s, SW_MAX(mr->bound, 0.0) / OR_US);
done:
    orm_free(&q);
    sw_free(bestR);
    return rc;
}

/* A plan's account: its iteration time, the bound and the gap, and the
   status that names how it was found (status may point into simst). */
typedef struct or_account {
    double obj, bound, gap;
    const char *status;
    char simst[128];
} or_account;

/* The account of plan p (found by so; the first solve, first; attempts:
   the solves at smaller caps; fallback: p is the start's own plan). */
static void or_account_of(const graph_profile *g, const planner_opts *o, const orc *c,
                          const or_solve_out *first, const or_solve_out *so, int attempt,
                          int fallback, const plan *p, or_account *ac)
{
    /* the account: status, objective, bound, gap (on the iteration time) */
    double total = g->total_compute_s, obj = total + so->best.recompute_s;
    double bound = obj, gap = 0;
    const char *status = "optimal";
    if (first->size > 0) {
        /* the solver's bound, or docs/bounds.md's (any plan at this budget) */
        double lb = first->solved ? total + SW_MAX(first->mr.bound, 0.0) / OR_US : total;
        if (c->lp_bounded)
            lb = SW_MAX(lb, total + c->lp_bound / OR_US);
        bound_result br;
        sw_err e5;
        if (!bound_compute(g, o->memory_budget, g->order, &br, &e5))
            lb = SW_MAX(lb, bound_for(&br, 1, 1));
        bound = SW_MIN(lb, obj);
        gap = obj > 0 ? (obj - bound) / obj : 0;
    } else if (attempt > 0) {
        bound = total; /* the first plan re-ran nothing: the bound is the compute */
        gap = obj > 0 ? (obj - bound) / obj : 0;
    }
    if (first->lp)
        status = !c->lp_bounded               ? "the relaxation stopped by the limit (the start "
                                               "stands)"
                 : obj - bound <= 1e-9 * obj ? "optimal"
                 : !so->from_start            ? "rounded from the relaxation"
                                             : "the start beats the roundings";
    else if (first->size > 0 && !first->solved)
        status = "not solved (the program is larger than max_vars): the start's plan";
    else if (so->solved && so->mr.status != MILP_OPTIMAL)
        status = so->mr.status == MILP_NOSOLUTION ? "stopped by the limit before the solver's "
                                                   "first plan (the start stands)"
                                                 : "stopped by the limit";
    else if (fallback)
        status = "the allocator fragments the solver's plans: the start's own plan";
    else if (attempt > 0)
        status = "lowered memory"; /* optimal for a smaller byte cap only (fragmentation) */
    /* "optimal" only where the simulator agrees with the program's model */
    sim_result sr;
    sw_err es;
    if (!strcmp(status, "optimal") && obj > 0 && !sim_plan(p, NULL, NULL, &sr, &es) &&
        fabs(sr.iteration_time_s - obj) > 1e-6 * obj) {
        snprintf(ac->simst, sizeof ac->simst, "optimal in the recomputation model; simulated "
                 "%.3g%% %s the objective", 100 * fabs(sr.iteration_time_s - obj) / obj,
                 sr.iteration_time_s > obj ? "above" : "below");
        status = ac->simst;
    }
    ac->obj = obj;
    ac->bound = bound;
    ac->gap = gap;
    ac->status = status;
}

/* The plan's notes: the account, the method's figures, where the plan
   came from and what was lowered (cap0: the first cap). */
static void or_notes(sw_buf *b, const graph_profile *g, const planner_opts *o, const orc *c,
                     const or_solve_out *first, const or_solve_out *so, int attempt,
                     int fallback, int own, int64_t cap0, const or_account *ac)
{
    const param_set *ps = &o->params;
    double total = g->total_compute_s, obj = ac->obj, bound = ac->bound, gap = ac->gap;
    const char *status = ac->status;
    sw_buf_printf(b, "optimal-remat: %s, objective %.12g s, bound %.12g s, gap %.4f%%; "
                  "recompute %.6f s in %d reruns; peak %lld bytes of tensors",
                  status, obj, bound, 100 * gap, so->best.recompute_s, so->best.reruns,
                  (long long)(so->best.peak + c->persist));
    if (first->lp) {
        sw_buf_printf(b, "; method lp-round: ");
        if (c->lp_bounded)
            sw_buf_printf(b, "lp_bound %.12g s, ", total + c->lp_bound / OR_US);
        sw_buf_printf(b, "%s relaxation, %s %s, %d variables, %d rows, %d solve%s in %.2f s",
                      c->lp_coarse ? "coarse" : "full", c->lp_solver ? c->lp_solver : "clp",
                      params_str(ps, "lp_method"),
                      c->lp_vars, c->lp_rows, c->lp_solves, c->lp_solves == 1 ? "" : "s", c->lp_s);
        if (first->lp_retries + so->lp_retries)
            sw_buf_printf(b, " (%d again for less memory: no rounding fit)",
                          first->lp_retries + (attempt ? so->lp_retries : 0));
        sw_buf_printf(b, "; %d of %d roundings fit", so->fits, so->tried);
        if (so->round_best >= 0)
            sw_buf_printf(b, ", the cheapest (%s) %.12g s", so->round_how,
                          total + so->round_best);
        sw_buf_printf(b, "; plan from %s", so->how);
    } else if (so->solved)
        sw_buf_printf(b, "; method exact, %s: %d variables, %d rows, %ld nodes; plan from %s",
                      so->mr.solver, so->vars, so->rows, so->mr.nodes, so->how);
    else if (first->size > 0)
        sw_buf_printf(b, "; method exact, %lld R and S variables, max_vars=%lld; plan from %s",
                      (long long)first->size, (long long)params_int(ps, "max_vars"), so->how);
    else
        sw_buf_printf(b, "; no solve needed (%s fits)", so->how);
    if (fallback && own)
        sw_buf_printf(b, " (%s's own plan: cheaper than its replay as stages)",
                      first->start_name);
    else if (fallback)
        sw_buf_printf(b, " (placed by %s itself)", first->start_name);
    else if (attempt > 0)
        sw_buf_printf(b, "; the allocator fragmented %d plan%s: planned again for %lld bytes of "
                      "tensors (memory lowered from %lld: the plan is the optimum at the "
                      "lowered memory only, not proven at the requested budget; the bound "
                      "holds at the budget)", attempt, attempt > 1 ? "s" : "",
                      (long long)(c->cap + c->persist), (long long)(cap0 + c->persist));
    if (!strcmp(params_str(ps, "recompute"), "forward"))
        sw_buf_printf(b, "; forward ops only (recompute=forward)");
}

#define OR_ATTEMPTS 6 /* solves at ever smaller byte caps when fragmentation defeats placement */

static int plan_optimal_remat(const graph_profile *g, const planner_opts *o, plan **out,
                              sw_err *err)
{
    const param_set *ps = &o->params;
    double t0 = sw_now();
    double deadline = t0 + (o->time_budget_s > 0 ? o->time_budget_s : OR_DEFAULT_TIME_S);
    int64_t arena = o->memory_budget - g->max_workspace;
    if (arena <= 0)
        return sw_fail(err, SW_ENOFIT, "does not fit: the budget does not cover the largest op "
                       "workspace (%lld bytes)", (long long)g->max_workspace);
    orc c;
    memset(&c, 0, sizeof c);
    or_solve_out so, first; /* the last solve, the first */
    memset(&so, 0, sizeof so);
    memset(&first, 0, sizeof first);
    char h1[32], h2[32];
    int rc = orc_setup(&c, g, !strcmp(params_str(ps, "recompute"), "forward"), err);
    if (rc)
        goto done;
    int64_t cap0 = arena - c.persist;
    c.cap = cap0;
    /* what every plan needs: each op's storages, the persistent ones, the workspace */
    for (int32_t t = 0; t < c.T; t++) {
        int64_t need = 0;
        for (int32_t a = c.acc_off[t]; a < c.acc_off[t + 1]; a++)
            need += c.M[c.acc_c[a]];
        if (need > c.cap) {
            int32_t op = g->order[t];
            need += c.persist + g->max_workspace;
            rc = sw_fail(err, SW_ENOFIT, "does not fit: op %d '%s' needs %s (%lld bytes) "
                         "resident with the persistent storages and the largest workspace, "
                         "budget %s (%lld bytes)", op, g->ops[op].name,
                         sw_fmt_bytes(need, h1, sizeof h1), (long long)need,
                         sw_fmt_bytes(o->memory_budget, h2, sizeof h2),
                         (long long)o->memory_budget);
            goto done;
        }
    }
    if (!ALLOC(c.R, Tsq(&c)) || !ALLOC(c.S, (int64_t)c.T * c.ns)) {
        rc = sw_fail(err, SW_ENOMEM, "out of memory");
        goto done;
    }
    /* solve; where the allocator cannot place the plan though its bytes fit,
       solve again for a smaller byte cap (the first solve's bound stays the
       bound: it holds for the budget); failing that, the heuristic plan the
       first start came from, as its planner placed it */
    const char *alloc = params_str(ps, "allocator");
    sw_err e2;
    e2.msg[0] = 0;
    int attempt, fallback = 0;
    for (attempt = 0; attempt < OR_ATTEMPTS; attempt++) {
        sw_err e4;
        rc = or_solve(&c, g, o, deadline, &so, attempt ? &e4 : err);
        if (rc && attempt) { /* a smaller cap has no plan: the first one fragments */
            rc = SW_ENOFIT;
            break;
        }
        if (rc)
            goto done;
        if (!attempt) {
            first = so;
            so.start = NULL; /* first owns it */
        } else {
            plan_free(so.start);
            so.start = NULL;
        }
        rc = or_build(&c, o, alloc, out, &e2);
        if (rc == SW_ENOFIT) {
            const char *other = strcmp(alloc, "first-fit") ? "first-fit" : "best-fit";
            sw_err e3;
            rc = or_build(&c, o, other, out, &e3);
            if (rc && rc != SW_ENOFIT && err)
                *err = e3;
        } else if (rc && err) {
            *err = e2;
        }
        if (rc != SW_ENOFIT)
            break;
        int64_t shrink = SW_MAX(cap0 / 100, 1) << attempt; /* 1%, 2%, 4% ... of the cap */
        c.cap = SW_MIN(c.cap, so.best.peak) - shrink;
        if (c.cap <= 0 || sw_now() > deadline)
            break;
    }
    /* lp-round: the start's own plan (as its planner placed it) where the
       rounding is dearer than it; the accounting's replay of it can be */
    int own = 0;
    if (!rc && first.lp && first.start) {
        double rec = 0;
        for (int32_t t = 0; t < first.start->n_tasks; t++)
            if (first.start->tasks[t].kind == TASK_RERUN)
                rec += g->ops[first.start->tasks[t].op].time_s;
        if (rec < so.best.recompute_s) {
            plan_free(*out);
            *out = NULL;
            rc = SW_ENOFIT;
            own = 1;
        }
    }
    if (rc == SW_ENOFIT && first.start) {
        *out = first.start;
        first.start = NULL;
        fallback = 1;
        plan_free(so.start);
        so = first;
        so.start = NULL;
        so.how = first.start_name;
        so.from_start = 1;
        so.best.reruns = 0;
        so.best.recompute_s = 0;
        for (int32_t t = 0; t < (*out)->n_tasks; t++)
            if ((*out)->tasks[t].kind == TASK_RERUN) {
                so.best.reruns++;
                so.best.recompute_s += g->ops[(*out)->tasks[t].op].time_s;
            }
        rc = 0;
    } else if (rc == SW_ENOFIT) {
        const char *why = e2.msg;
        if (!strncmp(why, "does not fit: ", 14))
            why += 14;
        int64_t need = first.best.peak + c.persist + g->max_workspace;
        rc = sw_fail(err, SW_ENOFIT, "does not fit: the optimal rematerialisation needs %s "
                     "(%lld bytes) and the budget is %s, but the %s allocator fragments memory "
                     "(%s)", sw_fmt_bytes(need, h1, sizeof h1), (long long)need,
                     sw_fmt_bytes(o->memory_budget, h2, sizeof h2), alloc, why);
    }
    if (rc)
        goto done;
    or_account ac;
    or_account_of(g, o, &c, &first, &so, attempt, fallback, *out, &ac);
    sw_buf b;
    sw_buf_init(&b);
    or_notes(&b, g, o, &c, &first, &so, attempt, fallback, own, cap0, &ac);
    if (b.oom || plan_set_notes(*out, b.data) ||
        plan_set_solver(*out, ac.status, ac.obj, ac.bound, ac.gap)) {
        plan_free(*out);
        *out = NULL;
        rc = sw_fail(err, SW_ENOMEM, "out of memory");
    }
    sw_buf_free(&b);
done:
    plan_free(first.start);
    plan_free(so.start);
    orc_free(&c);
    return rc;
}

const planner planner_optimal_remat = {1, "optimal-remat", "Checkmate's integer program "
                                       "(Jain et al. 2020): the least recomputation of the "
                                       "profile's order within the budget, solved by CBC under "
                                       "--time-budget (incumbent and proven gap if stopped); "
                                       "above max_vars, the rounding of its LP relaxation "
                                       "(lp_bound and gap)",
                                       optimal_remat_params, plan_optimal_remat,
                                       PLANNER_SIZE_LIMIT};
