/* glpk.c: the GLPK backend of milp.h (glpk.h; the only file that
   includes it), reached through the dispatcher's table (solve.c). The
   integer program: GLPK's dual simplex on the relaxation, then its branch
   and cut (glp_intopt) from that basis, with a callback
   that offers the start as a heuristic solution, follows the proven bound
   (the best active node's) and enforces the node limit. The relaxation
   alone: GLPK's simplex with its LP presolver, or its interior point.
   GLPK aborts the process on invalid input, so the model is checked and
   normalised first (no NaN, duplicate entries of a row summed, zeros left
   out, a variable or row with crossed bounds reported infeasible). */
#include "backend.h"

#include <glpk.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* GLPK's name and version, for milp_result.solver */
static const char *glpk_name(void)
{
    static _Thread_local char name[32];
    snprintf(name, sizeof name, "glpk %s", glp_version());
    return name;
}

/* a time limit in GLPK's milliseconds: what is left of limit_s after
   spent_s (at least 1 ms), or INT_MAX for none */
static int glpk_ms(double limit_s, double spent_s)
{
    if (!(limit_s > 0))
        return INT_MAX;
    double ms = (limit_s - spent_s) * 1000;
    return ms >= (double)INT_MAX ? INT_MAX : ms < 1 ? 1 : (int)ms;
}

/* GLPK's bound type for lo <= v <= hi (MILP_INF: none); -1 when no value
   can satisfy them */
static int glpk_type(double lo, double hi)
{
    int l = lo > -MILP_INF, h = hi < MILP_INF;
    if (lo >= MILP_INF || hi <= -MILP_INF || (l && h && lo > hi))
        return -1;
    if (!l && !h)
        return GLP_FR;
    if (!h)
        return GLP_LO;
    if (!l)
        return GLP_UP;
    return lo == hi ? GLP_FX : GLP_DB;
}

/* Load m into a new GLPK problem. Returns 0 (*P set; *crossed 1 when some
   variable or row has bounds nothing satisfies: the program is infeasible,
   and *P is NULL), or an error. Always at least one column and one row
   (free and empty ones are added to an empty program: GLPK's solvers
   refuse a program without either). */
static int glpk_load(const milp *m, glp_prob **P, int *crossed, sw_err *err)
{
    *P = NULL;
    *crossed = 0;
    int rc = milp_check(m, err);
    if (rc)
        return rc;
    int n = m->nvar;
    for (int j = 0; j < n; j++)
        if (glpk_type(m->lb[j], m->ub[j]) < 0)
            *crossed = 1;
    for (int r = 0; r < m->nrow; r++)
        if (glpk_type(m->rlo[r], m->rhi[r]) < 0)
            *crossed = 1;
    if (*crossed)
        return 0;
    int *ind = sw_malloc(((size_t)n + 2) * sizeof *ind);
    int *at = sw_malloc(((size_t)n + 2) * sizeof *at);
    double *val = sw_malloc(((size_t)n + 2) * sizeof *val);
    if (!ind || !at || !val) {
        sw_free(ind);
        sw_free(at);
        sw_free(val);
        return sw_fail(err, SW_ENOMEM, "out of memory loading the integer program into GLPK");
    }
    glp_prob *p = glp_create_prob();
    glp_set_obj_dir(p, GLP_MIN);
    glp_add_cols(p, n > 0 ? n : 1);
    if (n == 0)
        glp_set_col_bnds(p, 1, GLP_FX, 0, 0);
    for (int j = 0; j < n; j++) {
        int t = glpk_type(m->lb[j], m->ub[j]);
        glp_set_col_bnds(p, j + 1, t, t == GLP_FR || t == GLP_UP ? 0 : m->lb[j],
                         t == GLP_FR || t == GLP_LO ? 0 : m->ub[j]);
        glp_set_obj_coef(p, j + 1, m->cost[j]);
        if (m->integer[j])
            glp_set_col_kind(p, j + 1, GLP_IV);
        at[j] = 0;
    }
    glp_add_rows(p, m->nrow > 0 ? m->nrow : 1);
    if (m->nrow == 0)
        glp_set_row_bnds(p, 1, GLP_FR, 0, 0);
    for (int r = 0; r < m->nrow; r++) {
        int t = glpk_type(m->rlo[r], m->rhi[r]);
        glp_set_row_bnds(p, r + 1, t, t == GLP_FR || t == GLP_UP ? 0 : m->rlo[r],
                         t == GLP_FR || t == GLP_LO ? 0 : m->rhi[r]);
        /* one entry per column (GLPK refuses duplicates): sum them */
        int len = 0;
        for (int k = m->rstart[r]; k < m->rstart[r + 1]; k++) {
            int j = m->ridx[k];
            if (at[j]) {
                val[at[j]] += m->rval[k];
            } else {
                at[j] = ++len;
                ind[len] = j + 1;
                val[len] = m->rval[k];
            }
        }
        int kept = 0;
        for (int k = 1; k <= len; k++) {
            at[ind[k] - 1] = 0;
            if (val[k] != 0) {
                kept++;
                ind[kept] = ind[k];
                val[kept] = val[k];
            }
        }
        glp_set_mat_row(p, r + 1, kept, ind, val);
    }
    sw_free(ind);
    sw_free(at);
    sw_free(val);
    /* scale rows and columns as glpsol does (the optimal planners' big-M
       rows leave the unscaled basis ill-conditioned) */
    glp_scale_prob(p, GLP_SF_AUTO);
    *P = p;
    return 0;
}

/* the branch-and-cut callback's state */
typedef struct glpk_cb {
    const double *start1; /* the start, 1-based (GLPK's columns), or NULL */
    int offered;          /* the start was offered */
    long max_nodes;       /* node limit, <= 0 none */
    long nodes;           /* subproblems created so far */
    double bound;         /* the best proven lower bound seen */
} glpk_cb;

static void glpk_callback(glp_tree *T, void *info)
{
    glpk_cb *s = info;
    int a_cnt, n_cnt, t_cnt;
    glp_ios_tree_size(T, &a_cnt, &n_cnt, &t_cnt);
    s->nodes = t_cnt;
    switch (glp_ios_reason(T)) {
    case GLP_IHEUR:
        if (s->start1 && !s->offered) {
            s->offered = 1;
            glp_ios_heur_sol(T, s->start1);
        }
        break;
    case GLP_ISELECT:
    case GLP_IBINGO: {
        /* the best local bound among the active subproblems bounds every
           solution still to be found */
        int b = glp_ios_best_node(T);
        if (b) {
            double v = glp_ios_node_bound(T, b);
            if (v > s->bound)
                s->bound = v;
        }
        break;
    }
    default:
        break;
    }
    if (s->max_nodes > 0 && t_cnt >= s->max_nodes)
        glp_ios_terminate(T);
}

/* the objective of x under m */
static double objective_of(const milp *m, const double *x)
{
    double v = 0;
    for (int j = 0; j < m->nvar; j++)
        v += m->cost[j] * x[j];
    return v;
}

/* What both solves begin with: r cleared and named, GLPK's terminal
   output set, m loaded into *P and m->x allocated. Returns 0 with *P set,
   0 with *P NULL when some bounds cross (r says infeasible), or an error;
   on either of the last two nothing of GLPK's is left. */
static int glpk_begin(milp *m, const milp_opts *o, milp_result *r, glp_prob **P, sw_err *err)
{
    memset(r, 0, sizeof *r);
    r->solver = glpk_name();
    r->bound = -MILP_INF;
    glp_term_out(o && o->log ? GLP_ON : GLP_OFF);
    int crossed, rc = glpk_load(m, P, &crossed, err);
    if (!rc && crossed)
        r->status = MILP_INFEASIBLE;
    if (!rc && !crossed) {
        sw_free(m->x);
        m->x = sw_malloc((size_t)(m->nvar ? m->nvar : 1) * sizeof *m->x);
        if (!m->x) {
            glp_delete_prob(*P);
            *P = NULL;
            rc = sw_fail(err, SW_ENOMEM, "out of memory solving the program");
        }
    }
    if (!*P)
        glp_free_env();
    return rc;
}

static int glpk_solve(milp *m, const milp_opts *o, milp_result *r, sw_err *err)
{
    int n = m->nvar;
    glp_prob *P = NULL;
    int rc = glpk_begin(m, o, r, &P, err);
    if (rc || !P)
        return rc;
    double *start1 = NULL;
    int start_ok = m->start && milp_start_feasible(m);
    if (start_ok)
        start1 = sw_malloc(((size_t)glp_get_num_cols(P) + 1) * sizeof *start1);
    if (start_ok && !start1) {
        rc = sw_fail(err, SW_ENOMEM, "out of memory solving the integer program");
        goto done;
    }
    if (start1) {
        start1[0] = 0;
        for (int j = 0; j < glp_get_num_cols(P); j++)
            start1[j + 1] = j < n ? m->start[j] : 0;
    }
    double limit = o ? o->time_limit_s : 0, t0 = sw_now();
    /* the relaxation, for glp_intopt's starting basis (its presolver off:
       the basis must be the program's own) */
    glp_smcp sm;
    glp_init_smcp(&sm);
    sm.msg_lev = o && o->log ? GLP_MSG_ON : GLP_MSG_OFF;
    sm.meth = GLP_DUALP;
    sm.tm_lim = glpk_ms(limit, 0);
    int src = glp_simplex(P, &sm);
    int lp = glp_get_status(P), found = 0, proven = 0;
    glpk_cb cb = {start1, 0, o ? o->max_nodes : 0, 0, -MILP_INF};
    if (src == 0 && lp == GLP_NOFEAS) {
        r->status = MILP_INFEASIBLE;
        r->solve_s = sw_now() - t0;
        goto done;
    }
    if (src == 0 && lp == GLP_UNBND) {
        rc = sw_fail(err, SW_EUNSUPPORTED, "GLPK: the relaxation is unbounded");
        goto done;
    }
    if (src != 0 && src != GLP_ETMLIM) {
        rc = sw_fail(err, SW_EUNSUPPORTED, "GLPK's simplex gave up on the relaxation (code %d)",
                     src);
        goto done;
    }
    if (src == 0 && lp == GLP_OPT) {
        cb.bound = glp_get_obj_val(P); /* the relaxation bounds the program */
        glp_iocp io;
        glp_init_iocp(&io);
        io.msg_lev = sm.msg_lev;
        io.tm_lim = glpk_ms(limit, sw_now() - t0);
        io.mip_gap = o && o->rel_gap > 0 ? o->rel_gap : 0;
        io.cb_func = glpk_callback;
        io.cb_info = &cb;
        int irc = glp_intopt(P, &io);
        int ms = glp_mip_status(P);
        if (irc != 0 && irc != GLP_ETMLIM && irc != GLP_ESTOP && irc != GLP_EMIPGAP) {
            rc = sw_fail(err, SW_EUNSUPPORTED, "GLPK's branch and cut gave up (code %d)", irc);
            goto done;
        }
        if (irc == 0 && ms == GLP_NOFEAS && !start_ok) {
            r->status = MILP_INFEASIBLE;
            r->solve_s = sw_now() - t0;
            r->nodes = cb.nodes;
            goto done;
        }
        if (ms == GLP_OPT || ms == GLP_FEAS) {
            found = 1;
            proven = irc == 0 || irc == GLP_EMIPGAP; /* within the gap asked for */
            for (int j = 0; j < n; j++)
                m->x[j] = glp_mip_col_val(P, j + 1);
            r->objective = glp_mip_obj_val(P);
        }
    }
    r->solve_s = sw_now() - t0;
    r->nodes = cb.nodes;
    if (!found && start_ok) {
        /* a feasible start GLPK never took (the limit struck first): the
           incumbent, as with CBC */
        memcpy(m->x, m->start, (size_t)n * sizeof *m->x);
        r->objective = objective_of(m, m->x);
        found = 1;
    }
    if (!found) {
        r->status = MILP_NOSOLUTION;
        r->bound = cb.bound;
        goto done;
    }
    r->x = m->x;
    r->status = proven ? MILP_OPTIMAL : MILP_FEASIBLE;
    r->bound = cb.bound;
    if (r->status == MILP_OPTIMAL && !(o && o->rel_gap > 0))
        r->bound = r->objective;
    if (r->bound > r->objective)
        r->bound = r->objective;
    double d = fabs(r->objective) > 1e-12 ? fabs(r->objective) : 1e-12;
    if (r->bound <= -MILP_INF)
        r->gap = MILP_INF; /* no bound proven (the limit struck in the relaxation) */
    else
        r->gap = r->objective > r->bound ? (r->objective - r->bound) / d : 0;
done:
    sw_free(start1);
    if (P)
        glp_delete_prob(P);
    glp_free_env(); /* GLPK's per-thread memory: nothing of it outlives a solve */
    return rc;
}

static int glpk_solve_lp(milp *m, const milp_opts *o, milp_lp_method method, milp_result *r,
                         sw_err *err)
{
    int n = m->nvar;
    glp_prob *P = NULL;
    int rc = glpk_begin(m, o, r, &P, err);
    if (rc || !P)
        return rc;
    double t0 = sw_now();
    int msg = o && o->log ? GLP_MSG_ON : GLP_MSG_OFF;
    if (method == MILP_LP_BARRIER) {
        glp_iptcp ip;
        glp_init_iptcp(&ip);
        ip.msg_lev = msg;
        int irc = glp_interior(P, &ip); /* no time limit in GLPK's interior point */
        r->solve_s = sw_now() - t0;
        int st = glp_ipt_status(P);
        if (irc == 0 && st == GLP_OPT) {
            for (int j = 0; j < n; j++)
                m->x[j] = glp_ipt_col_prim(P, j + 1);
            r->objective = r->bound = glp_ipt_obj_val(P);
            r->x = m->x;
            r->status = MILP_OPTIMAL;
        } else if (irc == 0 && st == GLP_NOFEAS) {
            r->status = MILP_INFEASIBLE;
        } else {
            rc = sw_fail(err, SW_EUNSUPPORTED, "GLPK's interior point gave up (code %d, "
                         "status %d)", irc, st);
        }
        goto done;
    }
    glp_smcp sm;
    glp_init_smcp(&sm);
    sm.msg_lev = msg;
    sm.meth = method == MILP_LP_PRIMAL ? GLP_PRIMAL : GLP_DUALP;
    sm.presolve = GLP_ON;
    sm.tm_lim = glpk_ms(o ? o->time_limit_s : 0, 0);
    int src = glp_simplex(P, &sm);
    r->solve_s = sw_now() - t0;
    int st = glp_get_status(P);
    if (src == 0 && st == GLP_OPT) {
        for (int j = 0; j < n; j++)
            m->x[j] = glp_get_col_prim(P, j + 1);
        r->objective = r->bound = glp_get_obj_val(P);
        r->x = m->x;
        r->status = MILP_OPTIMAL;
    } else if (src == GLP_ENOPFS || (src == 0 && st == GLP_NOFEAS)) {
        r->status = MILP_INFEASIBLE;
    } else if (src == GLP_ETMLIM) {
        r->status = MILP_NOSOLUTION;
    } else if (src == GLP_ENODFS || (src == 0 && st == GLP_UNBND)) {
        rc = sw_fail(err, SW_EUNSUPPORTED, "the LP solver gave up (unbounded)");
    } else {
        rc = sw_fail(err, SW_EUNSUPPORTED, "GLPK's simplex gave up (code %d, status %d)", src,
                     st);
    }
done:
    if (P)
        glp_delete_prob(P);
    glp_free_env();
    return rc;
}

const milp_backend_ops milp_backend_glpk = {
    .name = "glpk",
    .solve = glpk_solve,
    .solve_lp = glpk_solve_lp,
};
