/* test_replay_cli.c: `swapsim replay` and `swapsim profile` end to end:
   exit codes, one-line errors, the JSON fields, unsafe plans, and the CUDA
   paths failing cleanly without a device. */
#include "../common/json.h"
#include "../profiles/profile_io.h"
#include "../sim/plan_io.h"
#include "../validate/replay.h"
#include "fixtures.h"
#include "cli_run.h"
#include "tap.h"


int main(void)
{
    bin = getenv("SWAPSIM_BIN");
    if (!bin)
        tap_skip_all("SWAPSIM_BIN not set (run through make test)");
    snprintf(dir, sizeof dir, "/tmp/swapsim-replay-%d", (int)getpid());
    char cmd[600];
    snprintf(cmd, sizeof cmd, "mkdir -p %s", dir);
    if (system(cmd) != 0)
        tap_skip_all("cannot make a scratch directory");
    sw_err e;
    graph_profile *g = fig3_profile();
    char ok_path[300], bad_path[300], prof_path[300], args[1024];
    snprintf(ok_path, sizeof ok_path, "%s/ok.plan.json", dir);
    snprintf(bad_path, sizeof bad_path, "%s/overlap.plan.json", dir);
    snprintf(prof_path, sizeof prof_path, "%s/fig3.json", dir);
    plan *p = fig3_plan(g, F3_OK);
    OK(plan_write_file(p, ok_path, &e) == 0, "write the figure 3 plan");
    plan_free(p);
    p = fig3_plan(g, F3_OVERLAP_LIVE);
    OK(plan_write_file(p, bad_path, &e) == 0, "write a broken plan");
    plan_free(p);

    char *o = NULL, *er = NULL;
    IS_INT(sh("replay --help", &o, NULL), 0, "replay --help");
    IS_STR_HAS(o, "--backend cpu|cuda", "help names the backends");
    sw_free(o);

    snprintf(args, sizeof args, "replay %s --iterations 3 --warmup 1 --json", ok_path);
    IS_INT(sh(args, &o, &er), 0, "replay a safe plan: exit 0");
    json_doc *d = json_doc_new();
    const json_value *v = NULL;
    OK(o && json_parse(d, o, strlen(o), "out", 1, &v, &e) == 0, "replay --json is one JSON object");
    if (v) {
        static const char *fields[] = {"measured_iteration_time_s", "simulated_iteration_time_s",
                                       "error", "canaries", "canary_checks", "canary_failures",
                                       "time_scale", "backend", "backend_device", "overruns",
                                       "verified", "ideal_time_s", "iterations", "warmup"};
        int all = 1;
        for (size_t i = 0; i < SW_ARRAY_LEN(fields); i++)
            if (!json_get(v, fields[i])) {
                printf("# missing %s\n", fields[i]);
                all = 0;
            }
        OK(all, "every documented field is there");
        const json_value *c = json_get(v, "canaries");
        OK(c && c->type == JSON_STRING && !strcmp(c->u.str, "clean"), "canaries clean");
    }
    sw_free(o);
    sw_free(er);

    snprintf(args, sizeof args, "replay %s --iterations 2 --warmup 1", ok_path);
    IS_INT(sh(args, &o, NULL), 0, "replay, text output");
    IS_STR_HAS(o, "error", "prints the error");
    IS_STR_HAS(o, "CPU backend", "labels CPU results as such");
    sw_free(o);

    snprintf(args, sizeof args, "replay %s", bad_path);
    expect_fail(args, 1, "--unsafe", "an unsafe plan is refused");
    snprintf(args, sizeof args, "replay %s --unsafe --iterations 2 --warmup 1 --json", bad_path);
    int rc = sh(args, &o, &er);
    IS_INT(rc, 1, "--unsafe replays it, and the canaries fail it");
    IS_INT(lines(er), 1, "one line on stderr");
    IS_STR_HAS(er, "canaries caught", "saying what caught it");
    IS_STR_HAS(o, "\"canaries\":\"failed\"", "the JSON says failed");
    IS_STR_HAS(o, "\"verified\":false", "and not verified");
    sw_free(o);
    sw_free(er);

    snprintf(args, sizeof args, "replay %s --backend cuda", ok_path);
    expect_fail(args, 1, "CUDA", "--backend cuda without a device fails cleanly");
    snprintf(args, sizeof args, "replay %s --backend tpu", ok_path);
    expect_fail(args, 1, "swapsim replay: --backend: expected cpu or cuda, got 'tpu'",
                "an unknown backend");
    snprintf(args, sizeof args, "replay %s --iterations 0", ok_path);
    expect_fail(args, 1, "--iterations: expected an integer from 1 to 100000, got '0'",
                "zero iterations");
    expect_fail("replay", 2, "expected one PLAN", "no plan");
    expect_fail("replay /nonexistent.json", 1, "nonexistent", "a missing file");

    OK(profile_write_file(g, prof_path, &e) == 0, "write a profile");
    snprintf(args, sizeof args, "profile %s -o %s/rec.json", prof_path, dir);
    expect_fail(args, 2, "--device-index", "profile needs --device-index");
    snprintf(args, sizeof args, "profile %s --device-index 0 -o %s/rec.json", prof_path, dir);
    expect_fail(args, 1, "CUDA", "profile without a device fails cleanly");
    IS_INT(sh("profile --help", &o, NULL), 0, "profile --help");
    IS_STR_HAS(o, "CUPTI", "help says how it measures");
    sw_free(o);

    json_doc_free(d);
    graph_free(g);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        printf("# could not remove %s\n", dir);
    return tap_done();
}
