/* bench_dtr.c: `make bench` figures of the DTR-log importer and of the dtr
   planner end to end (import, plan, verify, simulate), beside the times of
   the DTR authors' simulator (simrd, Python) on the same log, heuristic and
   ratio, run alone on a 2-core machine of this kind (the figures).
   The dtr planner runs with budget_on=bytes, simrd's budget semantics. */
#include <dirent.h>
#include <unistd.h>

#include "../planners/planner.h"
#include "../profiles/importers.h"
#include "../profiles/profile_io.h"
#include "../sim/simulate.h"
#include "../sim/verify.h"
#include "tap.h"

static char *find_log(const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    if (!d)
        return NULL;
    char *found = NULL;
    struct dirent *de;
    while ((de = readdir(d)) != NULL)
        if (!strncmp(de->d_name, prefix, strlen(prefix))) {
            size_t n = strlen(dir) + strlen(de->d_name) + 2;
            found = malloc(n);
            snprintf(found, n, "%s/%s", dir, de->d_name);
            break;
        }
    closedir(d);
    return found;
}

static int import(const char *path, graph_profile **g, sw_err *e)
{
    const importer *im = importer_find("dtr");
    param_set ps;
    params_init(&ps, im->params);
    int rc = im->import(&path, 1, &ps, dev_find("titanv"), g, e);
    params_free(&ps);
    return rc;
}

/* import + plan + verify + simulate; seconds, or < 0 on error */
static double end_to_end(const char *path, const char *heur, double ratio, double *overhead)
{
    sw_err e;
    double t0 = sw_now();
    graph_profile *g;
    if (import(path, &g, &e)) {
        fprintf(stderr, "bench_dtr: %s\n", e.msg);
        return -1;
    }
    graph_stats gs;
    graph_compute_stats(g, &gs);
    const planner *pl = planner_find("dtr");
    planner_opts o;
    planner_opts_init(&o, pl);
    o.memory_budget = (int64_t)(ratio * (double)gs.peak_memory_bytes);
    params_set(&o.params, "heuristic", heur, &e);
    params_set(&o.params, "budget_on", "bytes", &e); /* simrd's semantics */
    plan *p = NULL;
    int rc = planner_run(pl, g, &o, &p, &e);
    planner_opts_free(&o);
    sim_result r;
    if (!rc)
        rc = plan_verify(p, NULL, &e);
    if (!rc)
        rc = sim_plan(p, NULL, NULL, &r, &e);
    double t = sw_now() - t0;
    if (rc) {
        fprintf(stderr, "bench_dtr: %s: %s\n", path, e.msg);
        t = -1;
    } else {
        *overhead = r.iteration_time_s / g->total_compute_s;
    }
    plan_free(p);
    graph_free(g);
    return t;
}

/* The command as a user runs it, a whole process: `swapsim run PROFILE
   --planner dtr ...` on the imported profile (the import excluded: the
   profile JSON is written first), best of 3; seconds, or < 0 on error. */
static double process_run(const char *bin, const char *path, const char *heur, double ratio,
                          const char *tmp)
{
    sw_err e;
    graph_profile *g;
    if (import(path, &g, &e)) {
        fprintf(stderr, "bench_dtr: %s\n", e.msg);
        return -1;
    }
    graph_stats gs;
    graph_compute_stats(g, &gs);
    int64_t budget = (int64_t)(ratio * (double)gs.peak_memory_bytes);
    int rc = profile_write_file(g, tmp, &e);
    graph_free(g);
    if (rc) {
        fprintf(stderr, "bench_dtr: %s\n", e.msg);
        return -1;
    }
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s run %s --planner dtr --set heuristic=%s --set budget_on=bytes "
             "--memory %lldB --json > /dev/null", bin, tmp, heur, (long long)budget);
    double best = 1e30;
    for (int k = 0; k < 3; k++) {
        double t0 = sw_now();
        if (system(cmd) != 0) {
            fprintf(stderr, "bench_dtr: failed: %s\n", cmd);
            return -1;
        }
        double t = sw_now() - t0;
        if (t < best)
            best = t;
    }
    return best;
}

int main(void)
{
    const char *sh = tap_data_dir();
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/dtr-logs", sh ? sh : ".");
    char *lstm = find_log(dir, "lstm-");
    if (!sh || !lstm) {
        printf("# bench_dtr: no DTR logs (set SWAPSIM_DATA); skipped\n");
        free(lstm);
        return 0;
    }
    /* importer: the largest log (best of 5) */
    double best = 1e30;
    for (int i = 0; i < 5; i++) {
        sw_err e;
        graph_profile *g;
        double t0 = sw_now();
        if (import(lstm, &g, &e)) {
            fprintf(stderr, "bench_dtr: %s\n", e.msg);
            return 1;
        }
        double t = sw_now() - t0;
        if (t < best)
            best = t;
        graph_free(g);
    }
    printf("bench: import_dtr_lstm_s %.4f s (target < 0.5 s)\n", best);
    free(lstm);
    static const struct {
        const char *prefix, *label, *heur;
        double ratio, simrd_s;
    } figs[] = {{"resnet32-", "resnet32", "dtr", 0.4, 0.67},
                {"tv_densenet121-", "densenet121", "dtr", 0.4, 8.8},
                {"tv_densenet121-", "densenet121", "dtr", 0.2, 39.1},
                {"transformer-", "transformer", "dtr", 0.4, 8.1},
                {"lstm-", "lstm", "dtr", 0.4, 31.8}};
    for (size_t i = 0; i < sizeof figs / sizeof figs[0]; i++) {
        char *path = find_log(dir, figs[i].prefix);
        if (!path)
            continue;
        double t = 1e30, ov = 0;
        for (int k = 0; k < 3; k++) {
            double x = end_to_end(path, figs[i].heur, figs[i].ratio, &ov);
            if (x < 0) {
                free(path);
                return 1;
            }
            if (x < t)
                t = x;
        }
        printf("bench: dtr_end_to_end_%s_%.1f_s %.4f s (h_DTR, overhead %.3f; simrd %.2f s: "
               "%.0fx faster)\n", figs[i].label, figs[i].ratio, t, ov, figs[i].simrd_s,
               figs[i].simrd_s / t);
        /* the same cell as a process, where simrd needs over 2 s (target: 100x) */
        const char *bin = getenv("SWAPSIM_BIN");
        if (bin && figs[i].simrd_s > 2) {
            char tmp[256];
            snprintf(tmp, sizeof tmp, "/tmp/bench-dtr-%d.json", (int)getpid());
            double pt = process_run(bin, path, figs[i].heur, figs[i].ratio, tmp);
            remove(tmp);
            if (pt < 0) {
                free(path);
                return 1;
            }
            printf("bench: dtr_process_%s_%.1f_s %.4f s (swapsim run as a process, import "
                   "excluded; simrd %.2f s: %.0fx faster; target 100x)\n", figs[i].label,
                   figs[i].ratio, pt, figs[i].simrd_s, figs[i].simrd_s / pt);
        }
        free(path);
    }
    return 0;
}
