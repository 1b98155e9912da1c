/* test_replay_cli.c: `swapsim replay`, `swapsim profile` and `swapsim
   calibrate-device` end to end: exit codes, one-line errors, the JSON
   fields, the canary pass, --device with a hand-written device file,
   unsafe plans, and the CUDA paths failing cleanly without a device; one
   named test each (tap_run). */
#include "../common/json.h"
#include "../profiles/profile_io.h"
#include "../sim/plan_io.h"
#include "../validate/replay.h"
#include "fixtures.h"
#include "cli_run.h"
#include "tap.h"


static char ok_path[300], bad_path[300], dev_path[300]; /* in the scratch directory */

/* the figure 3 plan and a broken one (A3 placed on live A2) */
static void write_plans(void)
{
    sw_err e;
    graph_profile *g = fig3_profile();
    plan *p = fig3_plan(g, F3_OK);
    OK(plan_write_file(p, ok_path, &e) == 0, "write the figure 3 plan");
    plan_free(p);
    p = fig3_plan(g, F3_OVERLAP_LIVE);
    OK(plan_write_file(p, bad_path, &e) == 0, "write a broken plan");
    plan_free(p);
    graph_free(g);
}

/* the plans, written when missing (a test run alone) */
static void need_plans(void)
{
    if (access(ok_path, F_OK) == 0 && access(bad_path, F_OK) == 0)
        return;
    sw_err e;
    graph_profile *g = fig3_profile();
    plan *p = fig3_plan(g, F3_OK), *q = fig3_plan(g, F3_OVERLAP_LIVE);
    if (plan_write_file(p, ok_path, &e) || plan_write_file(q, bad_path, &e))
        printf("# %s\n", e.msg);
    plan_free(p);
    plan_free(q);
    graph_free(g);
}

static void replay_help(void)
{
    char *o = NULL;
    IS_INT(sh("replay --help", &o, NULL), 0, "replay --help");
    IS_STR_HAS(o, "--backend cpu|cuda", "help names the backends");
    sw_free(o);
}

static void replay_json_fields(void)
{
    need_plans();
    char args[1024], *o = NULL, *er = NULL;
    sw_err e;
    snprintf(args, sizeof args, "replay %s --iterations 3 --warmup 1 --json", ok_path);
    IS_INT(sh(args, &o, &er), 0, "replay a safe plan: exit 0");
    json_doc *d = json_doc_new();
    const json_value *v = NULL;
    OK(o && json_parse(d, o, strlen(o), "out", 1, &v, &e) == 0, "replay --json is one JSON object");
    if (v) {
        static const char *fields[] = {"measured_iteration_time_s", "simulated_iteration_time_s",
                                       "error", "canaries", "canary_checks", "canary_violations",
                                       "canary_iterations", "canary_iteration_time_s",
                                       "first_violation", "simulated_device",
                                       "profile_device_simulated_iteration_time_s",
                                       "profile_device_error", "time_scale", "backend",
                                       "backend_device", "overruns", "verified", "ideal_time_s",
                                       "iterations", "warmup"};
        int all = 1;
        for (size_t i = 0; i < SW_ARRAY_LEN(fields); i++)
            if (!json_get(v, fields[i])) {
                printf("# missing %s\n", fields[i]);
                all = 0;
            }
        OK(all, "every documented field is there");
        const json_value *c = json_get(v, "canaries");
        OK(c && c->type == JSON_STRING && !strcmp(c->u.str, "clean"), "canaries clean");
        const json_value *ci = json_get(v, "canary_iterations"), *cc = json_get(v, "canary_checks");
        OK(ci && ci->u.num.d == 3 && cc && cc->u.num.d > 0,
           "a canary pass of 3 iterations (the default) checked them");
        const json_value *sd = json_get(v, "simulated_device"), *dd = json_get(v, "device");
        OK(sd && dd && sd->type == JSON_STRING && !strcmp(sd->u.str, dd->u.str),
           "without --device the profile's device is simulated");
    }
    sw_free(o);
    sw_free(er);
    json_doc_free(d);
}

/* --device: a hand-written device file with a PCIe four times slower */
static void write_device_file(void)
{
    FILE *f = fopen(dev_path, "w");
    OK(f != NULL, "write a device file");
    if (f) {
        fputs("{\"format\": \"swapsim-device\", \"version\": 1, \"name\": \"slow-pcie\",\n"
              " \"description\": \"hand-written for the tests\",\n"
              " \"memory_bytes\": 17179869184, \"h2d_bytes_per_s\": 3e9,\n"
              " \"d2h_bytes_per_s\": 3e9, \"duplex_bytes_per_s\": 5e9, \"copy_latency_s\": 0,\n"
              " \"peak_flops_fp32\": 15.7e12, \"peak_flops_fp16\": 125e12,\n"
              " \"memory_bytes_per_s\": 900e9, \"launch_overhead_s\": 5e-6,\n"
              " \"calibration\": {\"note\": \"not read\"}}\n", f);
        fclose(f);
    }
}

static void need_device_file(void)
{
    if (access(dev_path, F_OK) != 0)
        write_device_file();
}

static void device_file_json(void)
{
    need_plans();
    need_device_file();
    char args[1024], *o = NULL, *er = NULL;
    sw_err e;
    json_doc *d = json_doc_new();
    snprintf(args, sizeof args, "replay %s --iterations 3 --warmup 1 --device %s --json", ok_path,
             dev_path);
    IS_INT(sh(args, &o, &er), 0, "replay --device FILE");
    const json_value *v = NULL;
    OK(o && json_parse(d, o, strlen(o), "out", 1, &v, &e) == 0, "one JSON object");
    if (v) {
        const json_value *sd = json_get(v, "simulated_device"), *dd = json_get(v, "device");
        OK(sd && sd->type == JSON_STRING && !strcmp(sd->u.str, "slow-pcie"),
           "simulated on the given device");
        OK(dd && dd->type == JSON_STRING && strcmp(dd->u.str, "slow-pcie") != 0,
           "device stays the profile's");
        const json_value *s1 = json_get(v, "simulated_iteration_time_s"),
                         *s2 = json_get(v, "profile_device_simulated_iteration_time_s"),
                         *e1 = json_get(v, "error"), *e2 = json_get(v, "profile_device_error");
        OK(s1 && s2 && s1->u.num.d > 2 * s2->u.num.d,
           "both predictions: %.6f s on the given device, %.6f s on the profile's",
           s1 ? s1->u.num.d : 0, s2 ? s2->u.num.d : 0);
        OK(e1 && e2 && fabs(e1->u.num.d) < 0.25 && e2->u.num.d > 0.5,
           "the measured time follows the given device (error %+.3f; profile device's %+.3f)",
           e1 ? e1->u.num.d : 0, e2 ? e2->u.num.d : 0);
    }
    sw_free(o);
    sw_free(er);
    json_doc_free(d);
}

static void device_file_text(void)
{
    need_plans();
    need_device_file();
    char args[1024], *o = NULL;
    snprintf(args, sizeof args, "replay %s --iterations 2 --warmup 1 --device %s", ok_path,
             dev_path);
    IS_INT(sh(args, &o, NULL), 0, "replay --device FILE, text output");
    IS_STR_HAS(o, "on slow-pcie", "prints the given device's prediction");
    IS_STR_HAS(o, "profile device", "and the profile's device's");
    sw_free(o);
}

static void device_errors(void)
{
    need_plans();
    char args[1024];
    snprintf(args, sizeof args, "replay %s --device %s/missing.json", ok_path, dir);
    expect_fail(args, 1, "missing.json: cannot open", "a missing device file");
    snprintf(args, sizeof args, "replay %s --device tpu9", ok_path);
    expect_fail(args, 1, "unknown device 'tpu9'", "an unknown device name");
}

static void no_canaries(void)
{
    need_plans();
    char args[1024], *o = NULL;
    snprintf(args, sizeof args, "replay %s --iterations 2 --warmup 1 --no-canaries --json",
             ok_path);
    IS_INT(sh(args, &o, NULL), 0, "replay --no-canaries");
    IS_STR_HAS(o, "\"canaries\":\"off\",\"canary_iterations\":0,\"canary_checks\":0",
               "no canary pass, no checks");
    sw_free(o);
}

static void text_output(void)
{
    need_plans();
    char args[1024], *o = NULL;
    snprintf(args, sizeof args, "replay %s --iterations 2 --warmup 1", ok_path);
    IS_INT(sh(args, &o, NULL), 0, "replay, text output");
    IS_STR_HAS(o, "error", "prints the error");
    IS_STR_HAS(o, "CPU backend", "labels CPU results as such");
    sw_free(o);
}

static void unsafe_plan(void)
{
    need_plans();
    char args[1024], *o = NULL, *er = NULL;
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
}

/* the CUDA paths fail cleanly without a device; bad options */
static void backend_and_options(void)
{
    need_plans();
    char args[1024];
    snprintf(args, sizeof args, "replay %s --backend cuda", ok_path);
    expect_fail(args, 1, "CUDA", "--backend cuda without a device fails cleanly");
    snprintf(args, sizeof args, "replay %s --backend tpu", ok_path);
    expect_fail(args, 1, "swapsim replay: --backend: expected cpu or cuda, got 'tpu'",
                "an unknown backend");
    snprintf(args, sizeof args, "replay %s --backend cuda --ops library --precision tf32", ok_path);
    expect_fail(args, 1, "CUDA", "--precision tf32 is accepted (and cuda fails cleanly here)");
    snprintf(args, sizeof args, "replay %s --precision fp64", ok_path);
    expect_fail(args, 1, "swapsim replay: --precision: expected fp32 or tf32, got 'fp64'",
                "an unknown precision");
    snprintf(args, sizeof args, "replay %s --iterations 0", ok_path);
    expect_fail(args, 1, "--iterations: expected an integer from 1 to 100000, got '0'",
                "zero iterations");
    expect_fail("replay", 2, "expected one PLAN", "no plan");
    expect_fail("replay /nonexistent.json", 1, "nonexistent", "a missing file");
}

static void profile_command(void)
{
    char prof_path[300], args[1024], *o = NULL;
    sw_err e;
    snprintf(prof_path, sizeof prof_path, "%s/fig3.json", dir);
    graph_profile *g = fig3_profile();
    OK(profile_write_file(g, prof_path, &e) == 0, "write a profile");
    snprintf(args, sizeof args, "profile %s -o %s/rec.json", prof_path, dir);
    expect_fail(args, 2, "--device-index", "profile needs --device-index");
    snprintf(args, sizeof args, "profile %s --device-index 0 -o %s/rec.json", prof_path, dir);
    expect_fail(args, 1, "CUDA", "profile without a device fails cleanly");
    IS_INT(sh("profile --help", &o, NULL), 0, "profile --help");
    IS_STR_HAS(o, "CUPTI", "help says how it measures");
    sw_free(o);
    graph_free(g);
}

static const tap_test tests[] = {
    {"write_plans", write_plans},
    {"replay_help", replay_help},
    {"replay_json_fields", replay_json_fields},
    {"device_file_json", device_file_json},
    {"device_file_text", device_file_text},
    {"device_errors", device_errors},
    {"no_canaries", no_canaries},
    {"text_output", text_output},
    {"unsafe_plan", unsafe_plan},
    {"backend_and_options", backend_and_options},
    {"profile_command", profile_command},
};

int main(int argc, char **argv)
{
    cli_open("replay");
    snprintf(ok_path, sizeof ok_path, "%s/ok.plan.json", dir);
    snprintf(bad_path, sizeof bad_path, "%s/overlap.plan.json", dir);
    snprintf(dev_path, sizeof dev_path, "%s/slow.json", dir);
    int rc = tap_run(tests, SW_ARRAY_LEN(tests), argc, argv);
    if (cli_close())
        printf("# could not remove %s\n", dir);
    return rc;
}
