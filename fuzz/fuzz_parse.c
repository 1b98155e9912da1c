/* fuzz_parse.c: one AFL++ harness for every parser swapsim has, chosen by
   the first argument: profile JSON (then mapped to library calls, as
   `swapsim profile --dry-run` does), plan JSON (then verified and
   simulated, as `swapsim simulate` does), the dtr, pipedream and pytorch
   importers, experiment files (expanded with --dry-run), and colocate
   workloads (read, planned and run under Zico beside a small valid profile,
   p.json, that the harness writes once). It calls the same load functions
   the command line does; a bad input must end in an error status, never a
   crash, a sanitizer report or a hang.

     fuzz_parse profile|plan|dtr|pipedream|pytorch|experiment|workload FILE */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../profiles/calibrate.h"
#include "../sharing/colocate.h"
#include "../experiments/runner.h"
#include "../profiles/importers.h"
#include "../profiles/profile_io.h"
#include "../sim/plan_io.h"
#include "../sim/simulate.h"
#include "../sim/verify.h"
#include "../validate/libmap.h"

static int run(const char *what, const char *path)
{
    sw_err e;
    if (!strcmp(what, "profile")) {
        graph_profile *g;
        if (profile_read_file(path, &g, &e))
            return 1;
        graph_stats st;
        graph_compute_stats(g, &st);
        lm_summary ls;
        lm_summarize(g, &ls);
        graph_free(g);
        return 0;
    }
    if (!strcmp(what, "plan")) {
        plan *p;
        if (plan_read_file(path, &p, &e))
            return 1;
        sim_result r;
        if (plan_verify(p, NULL, &e) == 0)
            sim_plan(p, NULL, NULL, &r, &e);
        plan_free(p);
        return 0;
    }
    if (!strcmp(what, "experiment")) {
        exp_opts o;
        memset(&o, 0, sizeof o);
        o.file = path;
        o.out_dir = "/tmp/swapsim-fuzz-out";
        o.swapsim = "swapsim";
        o.data = "/nonexistent";
        o.jobs = 1;
        o.dry_run = 1;
        FILE *devnull = freopen("/dev/null", "w", stdout);
        (void)devnull;
        return exp_run(&o, &e) ? 1 : 0;
    }
    if (!strcmp(what, "workload")) {
        /* the workload is read from a directory that holds p.json */
        static const char *dir = "/tmp/swapsim-fuzz-workload";
        char pp[256], wp[256];
        snprintf(pp, sizeof pp, "%s/p.json", dir);
        snprintf(wp, sizeof wp, "%s/w.json", dir);
        FILE *f = fopen(pp, "r");
        if (f)
            fclose(f);
        else {
            const char *kv[] = {"ops=6", "seed=1", "unit=1MiB"};
            graph_profile *g;
            char cmd[300];
            snprintf(cmd, sizeof cmd, "mkdir -p %s", dir);
            if (system(cmd) != 0 || cal_generate("random", kv, 3, "v100", &g, &e))
                return 2;
            int rc = profile_write_file(g, pp, &e);
            graph_free(g);
            if (rc)
                return 2;
        }
        char *text;
        size_t len;
        if (sw_read_file(path, &text, &len, &e))
            return 1;
        f = fopen(wp, "wb");
        if (!f) {
            sw_free(text);
            return 2;
        }
        fwrite(text, 1, len, f);
        fclose(f);
        sw_free(text);
        /* a planner that searches gets 0.1 s, and the first 4 jobs run at
           most 100 iterations each: a run's time grows with all three (zico
           plans each start against every other job's predicted steps), and
           the fuzzer's limit of 2 s per input is for finding loops, not long
           workloads */
        co_workload w;
        if (co_workload_read(wp, 1, 0.1, &w, &e)) {
            if (getenv("FUZZ_VERBOSE"))
                fprintf(stderr, "%s\n", e.msg);
            return 1;
        }
        for (int32_t i = 0; i < w.n_jobs; i++) {
            w.jobs[i].iterations = SW_MIN(w.jobs[i].iterations, 100);
            if (w.jobs[i].fallback)
                w.jobs[i].fallback->iterations = w.jobs[i].iterations;
        }
        co_result r;
        for (size_t p = 0; p < co_policy_count(); p++)
            if (co_run(w.jobs, SW_MIN(w.n_jobs, 4), w.memory, co_policy_at(p), w.device.h2d_bw,
                       w.device.d2h_bw, (int)(p & 1), &r, &e) == 0)
                co_result_free(&r);
        co_workload_free(&w);
        return 0;
    }
    const importer *im = importer_find(what);
    if (!im) {
        fprintf(stderr, "fuzz_parse: unknown parser '%s' (expected profile, plan, dtr, "
                "pipedream, pytorch, experiment or workload)\n", what);
        return 2;
    }
    param_set ps;
    params_init(&ps, im->params);
    if (!strcmp(what, "pytorch")) /* reach past the completeness check */
        params_set(&ps, "partial", "true", &e);
    graph_profile *g = NULL;
    int rc = im->import(&path, 1, &ps, dev_find("v100"), &g, &e);
    params_free(&ps);
    lm_summary ls;
    if (!rc)
        lm_summarize(g, &ls);
    graph_free(g);
    return rc ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: fuzz_parse profile|plan|dtr|pipedream|pytorch|experiment|workload "
                "FILE\n");
        return 2;
    }
#ifdef __AFL_HAVE_MANUAL_CONTROL
    /* AFL++'s persistent mode: up to 1000 inputs per process, each read from
       the same file again, so the parsers must leave no state behind (the
       fuzzer's stability figure checks it). */
    int rc = 0;
    __AFL_INIT();
    while (__AFL_LOOP(1000))
        rc = run(argv[1], argv[2]);
    return rc;
#else
    return run(argv[1], argv[2]);
#endif
}
