/* test_milp.c: the integer-program interface (milp/milp.h) on programs
   solved by hand: a knapsack, an infeasible system, an LP, a relaxation by
   each of the LP methods, a node-limited solve's bound, the LP writer,
   malformed rows; each with both backends (CBC/CLP and GLPK), and the two
   backends against each other on random programs. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <unistd.h>

#include "../milp/milp.h"
#include "tap.h"

/* max 10a + 13b + 7c  s.t. 4a + 6b + 3c <= 9, binary: by hand the best sets
   are {a, c} (value 17, weight 7) and {b, c} (20, weight 9): 20, so the
   minimisation of the negated values gives -20 at b = c = 1, a = 0. */
static void knapsack_on(milp_backend be)
{
    milp *m = milp_new();
    int a = milp_var(m, 0, 1, -10, 1);
    int b = milp_var(m, 0, 1, -13, 1);
    int c = milp_var(m, 0, 1, -7, 1);
    int idx[3] = {a, b, c};
    double w[3] = {4, 6, 3};
    milp_row(m, -MILP_INF, 9, 3, idx, w);
    milp_result r;
    sw_err e = {0};
    IS_INT(milp_solve(m, &(milp_opts){.backend = be}, &r, &e), 0, "solves (%s)", e.msg);
    IS_INT(r.status, MILP_OPTIMAL, "proven optimal");
    IS_NUM(r.objective, -20, 1e-9, "objective -20 (b and c)");
    IS_NUM(r.x[a], 0, 1e-9, "a = 0");
    IS_NUM(r.x[b], 1, 1e-9, "b = 1");
    IS_NUM(r.x[c], 1, 1e-9, "c = 1");
    IS_NUM(r.gap, 0, 1e-12, "no gap");
    OK(r.bound <= r.objective + 1e-9, "the bound is below the objective");
    IS_STR_HAS(r.solver, be == MILP_GLPK ? "glpk" : "cbc", "names the solver");
    milp_free(m);
}

/* x + y >= 3 and x + y <= 2: infeasible. */
static void infeasible_on(milp_backend be)
{
    milp *m = milp_new();
    int x = milp_var(m, 0, 10, 1, 1);
    int y = milp_var(m, 0, 10, 1, 1);
    milp_row2(m, 3, MILP_INF, x, 1, y, 1);
    milp_row2(m, -MILP_INF, 2, x, 1, y, 1);
    milp_result r;
    sw_err e = {0};
    IS_INT(milp_solve(m, &(milp_opts){.backend = be}, &r, &e), 0, "solves");
    IS_INT(r.status, MILP_INFEASIBLE, "infeasible");
    OK(r.x == NULL, "no solution vector");
    milp_free(m);
}

/* An LP: min x + 2y s.t. x + y >= 1.5, x <= 1, y <= 1 (continuous): the
   cheaper x to its bound, y = 0.5: 2.0. Made integer, y must be 1: 3.0. */
static void continuous_and_integer_on(milp_backend be)
{
    for (int integer = 0; integer < 2; integer++) {
        milp *m = milp_new();
        int x = milp_var(m, 0, 1, 1, integer);
        int y = milp_var(m, 0, 1, 2, integer);
        milp_row2(m, 1.5, MILP_INF, x, 1, y, 1);
        milp_result r;
        sw_err e = {0};
        IS_INT(milp_solve(m, &(milp_opts){.backend = be}, &r, &e), 0, "solves");
        IS_INT(r.status, MILP_OPTIMAL, "optimal");
        IS_NUM(r.objective, integer ? 3.0 : 2.0, 1e-9, "%s objective",
               integer ? "integer" : "continuous");
        milp_free(m);
    }
}

/* The relaxation of the integer program above, by each of CLP's methods:
   min x + 2y s.t. x + y >= 1.5 on [0, 1]^2, integrality dropped: x = 1,
   y = 0.5, 2.0 (below the integer optimum 3.0). With x + y <= 1 added no
   point is feasible; a row naming a missing variable is refused. */
static void relaxation_on(milp_backend be)
{
    static const milp_lp_method meth[] = {MILP_LP_AUTO, MILP_LP_DUAL, MILP_LP_PRIMAL,
                                          MILP_LP_BARRIER};
    for (size_t i = 0; i < SW_ARRAY_LEN(meth); i++) {
        milp *m = milp_new();
        int x = milp_var(m, 0, 1, 1, 1);
        int y = milp_var(m, 0, 1, 2, 1);
        milp_row2(m, 1.5, MILP_INF, x, 1, y, 1);
        milp_result r;
        sw_err e = {0};
        IS_INT(milp_solve_lp(m, &(milp_opts){.backend = be}, meth[i], &r, &e), 0, "method %d: solves (%s)",
               (int)meth[i], e.msg);
        IS_INT(r.status, MILP_OPTIMAL, "method %d: optimal", (int)meth[i]);
        IS_NUM(r.objective, 2.0, 1e-7, "method %d: the relaxation's 2.0", (int)meth[i]);
        IS_NUM(r.bound, r.objective, 1e-12, "method %d: its bound is its objective",
               (int)meth[i]);
        OK(r.x && r.x[x] > 1 - 1e-7 && r.x[y] > 0.5 - 1e-7 && r.x[y] < 0.5 + 1e-7,
           "method %d: x = 1, y = 0.5", (int)meth[i]);
        IS_STR_HAS(r.solver, be == MILP_GLPK ? "glpk" : "clp", "names the solver");
        milp_row2(m, -MILP_INF, 1, x, 1, y, 1);
        IS_INT(milp_solve_lp(m, &(milp_opts){.backend = be}, meth[i], &r, &e), 0, "method %d: solves again",
               (int)meth[i]);
        IS_INT(r.status, MILP_INFEASIBLE, "method %d: x + y <= 1 makes it infeasible",
               (int)meth[i]);
        OK(r.x == NULL, "method %d: no solution vector", (int)meth[i]);
        milp_row2(m, 0, 1, x, 1, 7, 1);
        IS_INT(milp_solve_lp(m, &(milp_opts){.backend = be}, meth[i], &r, &e), SW_EINVAL,
               "method %d: a row naming a missing variable", (int)meth[i]);
        milp_free(m);
    }
}

/* An initial solution is accepted and a node limit of 1 still returns an
   incumbent no worse than it, with a bound below it. A 30-item knapsack with
   correlated weights keeps the root from closing. */
static void limits_keep_incumbent_on(milp_backend be)
{
    milp *m = milp_new();
    enum { N = 30 };
    int idx[N];
    double w[N], start[N];
    double cap = 0;
    for (int i = 0; i < N; i++) {
        w[i] = 100 + (double)((i * 37) % 23);
        idx[i] = milp_var(m, 0, 1, -(w[i] + 7 + (double)(i % 5)), 1);
        cap += w[i];
        start[i] = i < 3 ? 1 : 0;
    }
    milp_row(m, -MILP_INF, cap / 2 + 0.5, N, idx, w);
    milp_start(m, start);
    double start_obj = 0;
    for (int i = 0; i < 3; i++)
        start_obj += -(w[i] + 7 + (double)(i % 5));
    milp_opts o = {.max_nodes = 1, .backend = be};
    milp_result r;
    sw_err e = {0};
    IS_INT(milp_solve(m, &o, &r, &e), 0, "solves under a node limit");
    OK(r.status == MILP_OPTIMAL || r.status == MILP_FEASIBLE, "has an incumbent (status %d)",
       (int)r.status);
    OK(r.objective <= start_obj + 1e-9, "no worse than the start (%g vs %g)", r.objective,
       start_obj);
    OK(r.bound <= r.objective + 1e-9, "bound %g <= objective %g", r.bound, r.objective);
    OK(r.gap >= 0, "gap non-negative");
    milp_free(m);
}

static void bad_rows_on(milp_backend be)
{
    milp *m = milp_new();
    milp_var(m, 0, 1, 1, 0);
    milp_row2(m, 0, 1, 0, 1, 5, 1);
    milp_result r;
    sw_err e = {0};
    IS_INT(milp_solve(m, &(milp_opts){.backend = be}, &r, &e), SW_EINVAL, "a row naming a missing variable");
    IS_STR_HAS(e.msg, "variable 5 of 1", "says which");
    milp_free(m);
}

static void lp_writer(void)
{
    milp *m = milp_new();
    int x = milp_var(m, 0, 1, 1, 1);
    int y = milp_var(m, -MILP_INF, MILP_INF, -2, 0);
    milp_row2(m, 1, 1, x, 1, y, -1);
    char path[] = "/tmp/test_milp_XXXXXX";
    int fd = mkstemp(path);
    OK(fd >= 0, "temporary file");
    if (fd < 0)
        return;
    close(fd);
    sw_err e = {0};
    IS_INT(milp_write_lp(m, path, &e), 0, "writes");
    FILE *f = fopen(path, "r");
    char buf[1024] = {0};
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f)
        fclose(f);
    buf[n] = 0;
    IS_STR_HAS(buf, "Minimize\n obj: 1 x0 - 2 x1\n", "objective");
    IS_STR_HAS(buf, " r0l: 1 x0 - 1 x1 = 1\n", "equality row");
    IS_STR_HAS(buf, " x1 free\n", "free variable");
    IS_STR_HAS(buf, "General\n x0\n", "integer section");
    remove(path);
    milp_free(m);
}

/* More variables, rows and nonzeros than the first allocation holds (64):
   a minimum vertex cover of a path of 200 vertices (x_i + x_(i+1) >= 1),
   by hand every other vertex: 100. */
static void grows_on(milp_backend be)
{
    milp *m = milp_new();
    enum { N = 200 };
    for (int i = 0; i < N; i++)
        milp_var(m, 0, 1, 1, 1);
    for (int i = 0; i + 1 < N; i++)
        milp_row2(m, 1, MILP_INF, i, 1, i + 1, 1);
    IS_INT(milp_vars(m), N, "200 variables");
    IS_INT(milp_rows(m), N - 1, "199 rows");
    milp_result r;
    sw_err e = {0};
    IS_INT(milp_solve(m, &(milp_opts){.backend = be}, &r, &e), 0, "solves (%s)", e.msg);
    IS_INT(r.status, MILP_OPTIMAL, "optimal");
    IS_NUM(r.objective, 100, 1e-9, "every other vertex: 100");
    milp_free(m);
}

/* A start that is already optimal: the result is optimal with the bound
   equal to the objective. The knapsack above with its optimum {b, c} (-20)
   as the start; its LP relaxation is lower (-22). (On optimal-remat's
   programs CBC stopped at the root with such a start and reported the root
   LP's bound, or no solution at all: tests/test_optimal_remat's random
   graphs are the case that failed.) */
static void optimal_start_on(milp_backend be)
{
    milp *m = milp_new();
    int a = milp_var(m, 0, 1, -10, 1);
    int b = milp_var(m, 0, 1, -13, 1);
    int c = milp_var(m, 0, 1, -7, 1);
    int idx[3] = {a, b, c};
    double w[3] = {4, 6, 3};
    milp_row(m, -MILP_INF, 9, 3, idx, w);
    double start[3] = {0, 1, 1};
    milp_start(m, start);
    milp_result r;
    sw_err e = {0};
    IS_INT(milp_solve(m, &(milp_opts){.backend = be}, &r, &e), 0, "solves (%s)", e.msg);
    IS_INT(r.status, MILP_OPTIMAL, "optimal");
    IS_NUM(r.objective, -20, 1e-9, "the start's -20");
    IS_NUM(r.bound, -20, 1e-9, "bound = objective");
    IS_NUM(r.gap, 0, 1e-12, "no gap");
    milp_free(m);
}

static void knapsack(void)
{
    knapsack_on(MILP_CBC);
    knapsack_on(MILP_GLPK);
}

static void infeasible(void)
{
    infeasible_on(MILP_CBC);
    infeasible_on(MILP_GLPK);
}

static void continuous_and_integer(void)
{
    continuous_and_integer_on(MILP_CBC);
    continuous_and_integer_on(MILP_GLPK);
}

static void relaxation(void)
{
    relaxation_on(MILP_CBC);
    relaxation_on(MILP_GLPK);
}

static void limits_keep_incumbent(void)
{
    limits_keep_incumbent_on(MILP_CBC);
    limits_keep_incumbent_on(MILP_GLPK);
}

static void bad_rows(void)
{
    bad_rows_on(MILP_CBC);
    bad_rows_on(MILP_GLPK);
}

static void grows(void)
{
    grows_on(MILP_CBC);
    grows_on(MILP_GLPK);
}

static void optimal_start(void)
{
    optimal_start_on(MILP_CBC);
    optimal_start_on(MILP_GLPK);
}

/* Rows as the planners may write them: a column named twice in a row (the
   entries add up), a zero coefficient, a crossed variable bound (no
   solution). min x s.t. x + x >= 1.5, 0 <= x <= 1: 0.75; integer: 1. */
static void normalised_rows_on(milp_backend be)
{
    for (int integer = 0; integer < 2; integer++) {
        milp *m = milp_new();
        int x = milp_var(m, 0, 1, 1, integer);
        int y = milp_var(m, 0, 1, 0, 0);
        int idx[3] = {x, y, x};
        double val[3] = {1, 0, 1};
        milp_row(m, 1.5, MILP_INF, 3, idx, val);
        milp_result r;
        sw_err e = {0};
        IS_INT(milp_solve(m, &(milp_opts){.backend = be}, &r, &e), 0, "%s: solves (%s)",
               milp_backend_name(be), e.msg);
        IS_INT(r.status, MILP_OPTIMAL, "%s: optimal", milp_backend_name(be));
        IS_NUM(r.objective, integer ? 1.0 : 0.75, 1e-7, "%s: the duplicate entries add up "
               "(%s)", milp_backend_name(be), integer ? "integer" : "continuous");
        milp_free(m);
    }
    milp *m = milp_new();
    milp_var(m, 1, 0, 1, 0);
    milp_result r;
    sw_err e = {0};
    IS_INT(milp_solve(m, &(milp_opts){.backend = be}, &r, &e), 0, "%s: solves (%s)",
           milp_backend_name(be), e.msg);
    IS_INT(r.status, MILP_INFEASIBLE, "%s: a variable bounded 1 <= x <= 0 is infeasible",
           milp_backend_name(be));
    milp_free(m);
}

static void normalised_rows(void)
{
    normalised_rows_on(MILP_CBC);
    normalised_rows_on(MILP_GLPK);
}

/* The backends agree: 40 random programs (knapsacks with side rows, mixed
   integer and continuous variables, some infeasible), each solved to
   optimality by both: the same status and, where optimal, the same
   objective (1e-6 relative), each within its own bound. */
static void backends_agree(void)
{
    unsigned seed = 12345;
#define RND() ((seed = seed * 1103515245u + 12345u) >> 16 & 0x7fff)
    int same = 0, optimal = 0, infeasible = 0, n_prog = 40;
    char first[256] = "";
    for (int p = 0; p < n_prog; p++) {
        milp *m[2] = {milp_new(), milp_new()};
        int nv = 4 + (int)(RND() % 9), nr = 1 + (int)(RND() % 4);
        double lo[16], hi[16], cost[16];
        int integer[16];
        for (int j = 0; j < nv; j++) {
            lo[j] = 0;
            hi[j] = 1 + (double)(RND() % 3);
            cost[j] = -(double)(1 + RND() % 20);
            integer[j] = RND() % 4 != 0;
        }
        for (int k = 0; k < 2; k++)
            for (int j = 0; j < nv; j++)
                milp_var(m[k], lo[j], hi[j], cost[j], integer[j]);
        for (int i = 0; i < nr; i++) {
            int idx[16];
            double val[16], cap = 0;
            for (int j = 0; j < nv; j++) {
                idx[j] = j;
                val[j] = (double)(1 + RND() % 9);
                cap += val[j];
            }
            double rhi = cap * (0.2 + 0.1 * (double)(RND() % 5));
            /* every fifth program also demands more than the capacity allows */
            double rlo = p % 5 == 4 && i == 0 ? cap * 2 : -MILP_INF;
            for (int k = 0; k < 2; k++)
                milp_row(m[k], rlo, rhi, nv, idx, val);
        }
        milp_result r[2];
        int rc[2];
        for (int k = 0; k < 2; k++) {
            sw_err e = {0};
            rc[k] = milp_solve(m[k], &(milp_opts){.backend = k ? MILP_GLPK : MILP_CBC}, &r[k],
                               &e);
        }
        int ok = rc[0] == 0 && rc[1] == 0 && r[0].status == r[1].status;
        if (ok && r[0].status == MILP_OPTIMAL)
            ok = fabs(r[0].objective - r[1].objective) <=
                     1e-6 * (fabs(r[0].objective) > 1 ? fabs(r[0].objective) : 1) &&
                 r[0].bound <= r[0].objective + 1e-9 && r[1].bound <= r[1].objective + 1e-9;
        same += ok;
        optimal += ok && r[0].status == MILP_OPTIMAL;
        infeasible += ok && r[0].status == MILP_INFEASIBLE;
        if (!ok && !first[0])
            snprintf(first, sizeof first, "program %d: rc %d/%d, status %d/%d, objective %.9g/%.9g",
                     p, rc[0], rc[1], (int)r[0].status, (int)r[1].status, r[0].objective,
                     r[1].objective);
        milp_free(m[0]);
        milp_free(m[1]);
    }
#undef RND
    IS_INT(same, n_prog, "CBC and GLPK agree on %d random programs%s%s", n_prog,
           first[0] ? ": " : "", first);
    OK(optimal >= 20 && infeasible >= 4, "both kinds occur: %d optimal, %d infeasible", optimal,
       infeasible);
}

/* The solve cache (milp/cache.c, SWAPSIM_MILP_CACHE): the knapsack solved
   with a cache directory is stored; solved again (a new model, the same
   program) it is read back with the same result, and the solver is not
   run (the record's solve time, altered on disk, comes back); a changed
   program is not a hit; a corrupt record is a miss, solved again; a solve a
   clock could stop (a time limit under an hour) is not stored; without the
   variable nothing is written. */
static milp *knap(double cap)
{
    milp *m = milp_new();
    int idx[3] = {milp_var(m, 0, 1, -10, 1), milp_var(m, 0, 1, -13, 1), milp_var(m, 0, 1, -7, 1)};
    double w[3] = {4, 6, 3};
    milp_row(m, -MILP_INF, cap, 3, idx, w);
    return m;
}

static int files_in(const char *dir)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "ls %s | wc -l", dir);
    FILE *p = popen(cmd, "r");
    int n = -1;
    if (p) {
        if (fscanf(p, "%d", &n) != 1)
            n = -1;
        pclose(p);
    }
    return n;
}

static void solve_cache(void)
{
    char dir[] = "/tmp/swapsim-milp-cache-XXXXXX";
    if (!mkdtemp(dir)) {
        OK(0, "a scratch directory");
        return;
    }
    setenv("SWAPSIM_MILP_CACHE", dir, 1);
    setenv("SWAPSIM_MILP_CACHE_SALT", "test", 1);
    milp_opts o = {.backend = MILP_CBC};
    milp_result r;
    sw_err e = {0};
    milp *m = knap(9);
    IS_INT(milp_solve(m, &o, &r, &e), 0, "solves (%s)", e.msg);
    IS_NUM(r.objective, -20, 1e-9, "objective -20");
    IS_INT(files_in(dir), 1, "one record stored");
    milp_free(m);
    /* the record's solve time altered: a hit returns it, a solve would not */
    char cmd[700], path[600] = "";
    snprintf(cmd, sizeof cmd, "ls %s", dir);
    FILE *p = popen(cmd, "r");
    char name[128] = "";
    if (p) {
        if (!fgets(name, sizeof name, p))
            name[0] = 0;
        pclose(p);
    }
    name[strcspn(name, "\n")] = 0;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "r+b");
    double t = 1234.5;
    /* (the record: magic 4, status 4, objective, bound, gap, solve_s) */
    OK(f && fseek(f, 4 + 4 + 3 * 8, SEEK_SET) == 0 && fwrite(&t, sizeof t, 1, f) == 1,
       "the record's solve time rewritten");
    if (f)
        fclose(f);
    m = knap(9);
    IS_INT(milp_solve(m, &o, &r, &e), 0, "solves again (%s)", e.msg);
    IS_NUM(r.solve_s, 1234.5, 0, "from the cache: the stored solve time");
    IS_NUM(r.objective, -20, 1e-9, "the same objective");
    IS_INT(r.status, MILP_OPTIMAL, "the same status");
    OK(r.x && fabs(r.x[0]) < 1e-9 && fabs(r.x[1] - 1) < 1e-9 && fabs(r.x[2] - 1) < 1e-9,
       "the same incumbent");
    IS_STR_HAS(r.solver, "cbc", "names the solver");
    milp_free(m);
    m = knap(7); /* another program: {a, c}, -17 */
    IS_INT(milp_solve(m, &o, &r, &e), 0, "another program solves (%s)", e.msg);
    IS_NUM(r.objective, -17, 1e-9, "its own optimum, not the cached one");
    IS_INT(files_in(dir), 2, "a second record");
    milp_free(m);
    f = fopen(path, "wb");
    OK(f && fputs("garbage", f) >= 0, "a record corrupted");
    if (f)
        fclose(f);
    m = knap(9);
    IS_INT(milp_solve(m, &o, &r, &e), 0, "solves (%s)", e.msg);
    OK(r.objective < -19.999 && r.solve_s != 1234.5, "a corrupt record is a miss: solved "
       "(%g, %g s)", r.objective, r.solve_s);
    milp_free(m);
    m = knap(8);
    o.time_limit_s = 10;
    IS_INT(milp_solve(m, &o, &r, &e), 0, "a time-limited solve (%s)", e.msg);
    IS_INT(files_in(dir), 2, "is not stored (a clock could stop it)");
    milp_free(m);
    unsetenv("SWAPSIM_MILP_CACHE");
    o.time_limit_s = 0;
    m = knap(6);
    IS_INT(milp_solve(m, &o, &r, &e), 0, "without the variable (%s)", e.msg);
    IS_INT(files_in(dir), 2, "nothing is written");
    milp_free(m);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        printf("# could not remove %s\n", dir);
}

static const tap_test tests[] = {
    {"solve_cache", solve_cache},
    {"optimal_start", optimal_start},
    {"grows", grows},
    {"knapsack", knapsack},
    {"infeasible", infeasible},
    {"continuous_and_integer", continuous_and_integer},
    {"relaxation", relaxation},
    {"limits_keep_incumbent", limits_keep_incumbent},
    {"bad_rows", bad_rows},
    {"lp_writer", lp_writer},
    {"normalised_rows", normalised_rows},
    {"backends_agree", backends_agree},
};

int main(int argc, char **argv)
{
    /* this program tests the solvers themselves: never the tests' cache of
       solves (make test's SWAPSIM_MILP_CACHE), but in solve_cache */
    unsetenv("SWAPSIM_MILP_CACHE");
    return tap_run(tests, SW_ARRAY_LEN(tests), argc, argv);
}
