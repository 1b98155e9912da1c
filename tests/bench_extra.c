/* bench_extra.c: `make bench` figures of the lower bounds (swapsim bound on
   the paper's RNN-8-8K and NASNet-25), the serving queue (requests
   simulated per second), the colocation engine (two ResNet-50s under
   Zico) and optimal-swap's solve on a 40-op random DAG at 0.6x. Best of
   three, wall clock (the solve: one run). */
#include "../profiles/calibrate.h"
#include "../sharing/colocate.h"
#include "../sharing/serve.h"
#include "../sim/bound.h"
#include "../planners/planner.h"
#include "../profiles/importers.h"
#include <dirent.h>
#include <string.h>
#include "tap.h"

static graph_profile *gen(const char *model, const char *const *kv, int n)
{
    graph_profile *g = NULL;
    sw_err e;
    if (cal_generate(model, kv, n, "v100", &g, &e))
        fprintf(stderr, "bench_extra: %s\n", e.msg);
    return g;
}

static double bound_time(const graph_profile *g)
{
    double best = 1e30;
    for (int i = 0; i < 3; i++) {
        bound_result r;
        sw_err e;
        double t0 = sw_now();
        if (bound_compute(g, g->device.memory_bytes, g->order, &r, &e) &&
            e.code != SW_ENOFIT)
            return -1;
        best = SW_MIN(best, sw_now() - t0);
    }
    return best;
}

/* One optimal-remat run of bench_optimal_remat (glpk: --set solver=glpk),
   its figures printed. */
static int remat_once(const graph_profile *g, int glpk, sw_err *e)
{
    const char *sfx = glpk ? "_glpk" : "";
    planner_opts o;
    plan *p = NULL;
    int rc = planner_opts_init(&o, &planner_optimal_remat);
    if (rc)
        return sw_fail(e, rc, "out of memory");
    if (glpk)
        rc = params_set(&o.params, "solver", "glpk", e);
    o.time_budget_s = 60;
    if (!rc)
        rc = planner_resolve_budget(g, "0.4x", &o.memory_budget, e);
    double t0 = sw_now();
    if (!rc)
        rc = planner_run(&planner_optimal_remat, g, &o, &p, e);
    double dt = sw_now() - t0;
    planner_opts_free(&o);
    if (rc)
        return rc;
    printf("# optimal-remat%s on ResNet-32 (DTR log, %d ops) at 0.4x, --time-budget 60: %s\n",
           glpk ? " --set solver=glpk" : "", g->n_ops, p->notes);
    printf("bench: optimal_remat_resnet32_0.4x%s_solve_s %.2f s\n", sfx, dt);
    const char *gp = strstr(p->notes, "gap ");
    double gap = 0;
    if (gp && sscanf(gp + 4, "%lf", &gap) == 1 && !strstr(p->notes, "optimal-remat: optimal,"))
        printf("bench: optimal_remat_resnet32_0.4x%s_gap_pct %.2f %%\n", sfx, gap);
    const char *lb = strstr(p->notes, "lp_bound ");
    double lpb = 0;
    if (lb && sscanf(lb + 9, "%lf", &lpb) == 1)
        printf("bench: optimal_remat_resnet32_0.4x%s_lp_bound_s %.6f s\n", sfx, lpb);
    plan_free(p);
    return 0;
}

/* optimal-remat on the DTR log of ResNet-32 at 0.4x of its ideal peak:
   the planning's wall time under a 60 s limit (method=auto: lp-round, the
   program being over max_vars), the gap where the plan is not proven
   optimal, and the LP relaxation's bound; then the same with GLPK
   (--set solver=glpk) solving the relaxation. 0 if the log is absent
   (skipped), -1 on error. */
static int bench_optimal_remat(void)
{
    char dir[1024], path[1300] = "";
    snprintf(dir, sizeof dir, "%s/dtr-logs", sw_data_dir());
    DIR *d = opendir(dir);
    struct dirent *de;
    while (d && (de = readdir(d)) != NULL)
        if (!strncmp(de->d_name, "resnet32-", 9))
            snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
    if (d)
        closedir(d);
    if (!path[0]) {
        printf("# optimal-remat on ResNet-32: skipped (no %s/resnet32-*.log)\n", dir);
        return 0;
    }
    const importer *im = importer_find("dtr");
    param_set ps;
    params_init(&ps, im->params);
    graph_profile *g = NULL;
    sw_err e;
    const char *files[1] = {path};
    int rc = im->import(files, 1, &ps, dev_find("titanv"), &g, &e);
    params_free(&ps);
    for (int k = 0; k < 2 && !rc; k++)
        rc = remat_once(g, k, &e);
    graph_free(g);
    if (rc)
        fprintf(stderr, "bench_extra: optimal-remat: %s\n", e.msg);
    return rc ? -1 : 0;
}

int main(void)
{
    if (bench_optimal_remat())
        return 1;
    const char *rnn[] = {"layers=8", "hidden=8192", "batch=256"};
    const char *nas[] = {"repeat=25", "batch=64"};
    graph_profile *g = gen("rnn", rnn, 3);
    if (!g)
        return 1;
    printf("# swapsim bound on rnn-8-8K (%d ops, reachability bitsets)\n", g->n_ops);
    printf("bench: bound_rnn88k_s %.4f s\n", bound_time(g));
    graph_free(g);
    if (!(g = gen("nasnet", nas, 2)))
        return 1;
    printf("# swapsim bound on nasnet-25 (%d ops)\n", g->n_ops);
    printf("bench: bound_nasnet25_s %.4f s\n", bound_time(g));
    graph_free(g);

    const char *r152[] = {"depth=152", "batch=16", "inference=true"};
    if (!(g = gen("resnet", r152, 3)))
        return 1;
    const graph_profile *fleet[16];
    for (int i = 0; i < 16; i++)
        fleet[i] = g;
    serve_config c = {fleet, 16, 0, serve_policy_find("time_shared"), (int64_t)16 << 30, 1, 1, 0, 0, 0};
    serve_prep p;
    sw_err e;
    if (serve_prepare(&c, &p, &e)) {
        fprintf(stderr, "bench_extra: %s\n", e.msg);
        return 1;
    }
    double best = 1e30;
    for (int i = 0; i < 3; i++) {
        serve_result r;
        double t0 = sw_now();
        serve_run(&p, 200, 1000000, &r, &e);
        best = SW_MIN(best, sw_now() - t0);
    }
    serve_prep_free(&p);
    graph_free(g);
    printf("# swapsim serve: 16 ResNet-152, time_shared, 1,000,000 requests\n");
    printf("bench: serve_requests_per_s %.0f requests/s\n", 1e6 / best);

    const char *r50[] = {"depth=50", "batch=128"};
    if (!(g = gen("resnet", r50, 2)))
        return 1;
    co_job j[2];
    for (int i = 0; i < 2; i++) {
        if (co_job_from_profile(&j[i], "r50", g, "none", 0, 0, &e)) {
            fprintf(stderr, "bench_extra: %s\n", e.msg);
            return 1;
        }
        j[i].iterations = 100;
        j[i].arrival_s = 0.05 * i;
    }
    graph_free(g);
    best = 1e30;
    for (int i = 0; i < 3; i++) {
        co_result r;
        double t0 = sw_now();
        if (co_run(j, 2, (int64_t)16 << 30, co_policy_find("zico"), 12e9, 12e9, 1, &r, &e)) {
            fprintf(stderr, "bench_extra: %s\n", e.msg);
            return 1;
        }
        best = SW_MIN(best, sw_now() - t0);
        co_result_free(&r);
    }
    co_job_free(&j[0]);
    co_job_free(&j[1]);
    printf("# swapsim colocate: two ResNet-50 (batch 128) under zico, 100 iterations each, 16 GiB\n");
    printf("bench: colocate_zico_200_iterations_s %.3f s\n", best);
    /* optimal-swap: the random DAG of 15 forward ops, seed 4 (40 ops with
       backward and update), at 0.6x of its ideal peak, 120 s at most */
    const char *rnd[] = {"ops=15", "seed=4", "unit=1MiB"};
    g = gen("random", rnd, 3);
    int64_t peak = 0, budget = 0;
    sw_err e2;
    if (!g || planner_ideal_peak(g, &peak, &e2))
        return 1;
    budget = (int64_t)((double)peak * 0.6);
    /* the default (model=auto: both models, 60 s each at most), then the
       stage model alone, which ends here in seconds, and the stage model
       solved by GLPK (--set solver=glpk) */
    const planner *pl = planner_find("optimal-swap");
    static const char *const tag[] = {"", "_stage", "_stage_glpk"};
    for (int m = 0; m < 3; m++) {
        planner_opts o;
        planner_opts_init(&o, pl);
        o.memory_budget = budget;
        o.time_budget_s = 120;
        if (m >= 1)
            params_set(&o.params, "model", "stage", &e2);
        if (m == 2)
            params_set(&o.params, "solver", "glpk", &e2);
        plan *op = NULL;
        int rc = planner_run(pl, g, &o, &op, &e2);
        planner_opts_free(&o);
        if (rc) {
            fprintf(stderr, "bench_extra: optimal-swap: %s\n", e2.msg);
            graph_free(g);
            return 1;
        }
        printf("# optimal-swap%s%s, random DAG of %d ops at 0.6x (%lld bytes): %s\n",
               m ? " --set model=stage" : "", m == 2 ? " --set solver=glpk" : "", g->n_ops,
               (long long)budget, op->notes ? op->notes : "");
        printf("bench: optimal_swap_40op_0.6x%s_solve_s %.3f s\n", tag[m], op->planning_time_s);
        plan_free(op);
    }
    graph_free(g);
    return 0;
}
