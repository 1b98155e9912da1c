/* cmd_replay.c: `swapsim replay`: run a plan for real and compare with the
   simulator. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "../profiles/profile_io.h"
#include "../sim/plan_io.h"
#include "../sim/simulate.h"
#include "../sim/verify.h"
#include "../validate/replay.h"
#include "cli.h"

static void put_replay_json(const char *path, const plan *p, const char *profile_device,
                            const val_result *r, const sim_result *s, int verified, sw_buf *b)
{
    const graph_profile *g = p->prof;
    sw_buf_puts(b, "{\"plan\":");
    sw_buf_put_jstr(b, path);
    sw_buf_puts(b, ",\"profile\":");
    sw_buf_put_jstr(b, g->name);
    sw_buf_puts(b, ",\"device\":");
    sw_buf_put_jstr(b, profile_device);
    sw_buf_puts(b, ",\"simulated_device\":");
    sw_buf_put_jstr(b, r->sim_device);
    sw_buf_puts(b, ",\"planner\":");
    sw_buf_put_jstr(b, p->planner ? p->planner : "unknown");
    sw_buf_printf(b, ",\"seed\":%llu,\"memory_budget_bytes\":%lld,\"batch\":%lld,\"backend\":",
                  (unsigned long long)p->seed, (long long)p->budget, (long long)g->batch);
    sw_buf_put_jstr(b, r->backend);
    sw_buf_puts(b, ",\"backend_device\":");
    sw_buf_put_jstr(b, r->device);
    struct {
        const char *k;
        double v;
    } f[] = {{"time_scale", r->time_scale},
             {"measured_iteration_time_s", r->iteration_time_s},
             {"measured_min_s", r->iteration_min_s},
             {"measured_max_s", r->iteration_max_s},
             {"simulated_iteration_time_s", r->simulated_time_s},
             {"error", r->error},
             {"profile_device_simulated_iteration_time_s", r->profile_simulated_time_s},
             {"profile_device_error", r->profile_error},
             {"ideal_time_s", r->ideal_time_s},
             {"measured_normalized_throughput",
              r->iteration_time_s > 0 ? r->ideal_time_s / r->iteration_time_s : 0},
             {"simulated_normalized_throughput", s->normalized_throughput},
             {"canary_iteration_time_s", r->canary_iteration_time_s},
             {"wall_time_s", r->wall_s}};
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
        sw_buf_printf(b, ",\"%s\":", f[i].k);
        sw_buf_put_f64(b, f[i].v);
    }
    sw_buf_printf(b, ",\"iterations\":%d,\"warmup\":%d,\"canaries\":\"%s\","
                  "\"canary_iterations\":%d,\"canary_checks\":%lld,\"canary_violations\":%lld,"
                  "\"first_violation\":",
                  r->iterations, r->warmup,
                  !r->canary_iterations ? "off" : r->canary_violations ? "failed" : "clean",
                  r->canary_iterations, (long long)r->canary_checks,
                  (long long)r->canary_violations);
    sw_buf_put_jstr(b, r->first_violation);
    sw_buf_printf(b, ",\"overruns\":%lld,\"timed\":%lld,\"dangling\":%d,\"tasks\":%d,"
                  "\"edges\":%d,\"events\":%d,\"swap_in_bytes\":%lld,\"swap_out_bytes\":%lld,"
                  "\"verified\":%s}\n",
                  (long long)r->overruns, (long long)r->timed, r->dangling, r->tasks, r->edges,
                  r->events, (long long)s->swap_in_bytes, (long long)s->swap_out_bytes,
                  verified ? "true" : "false");
}

static void print_replay(const char *path, const plan *p, const char *profile_device,
                         const val_result *res, int verified, int other_device)
{
    printf("plan %s: profile %s on %s, planner %s (seed %llu)%s\n", path, p->prof->name,
           profile_device, p->planner ? p->planner : "?", (unsigned long long)p->seed,
           verified ? "" : ", REJECTED by the verifier");
    printf("  backend           %s: %s\n", res->backend, res->device);
    printf("  measured          %.6f s per iteration (mean of %d after %d warm-up, without "
           "canary work; fastest %.6f, slowest %.6f)\n", res->iteration_time_s, res->iterations,
           res->warmup, res->iteration_min_s, res->iteration_max_s);
    printf("  simulated         %.6f s per iteration on %s (ideal %.6f s)\n",
           res->simulated_time_s, res->sim_device, res->ideal_time_s);
    printf("  error             %+.2f%% (measured vs simulated on %s)\n", 100 * res->error,
           res->sim_device);
    if (other_device)
        printf("  profile device    %.6f s per iteration simulated on %s: error %+.2f%%\n",
               res->profile_simulated_time_s, profile_device, 100 * res->profile_error);
    if (!res->canary_iterations)
        printf("  canaries          off\n");
    else if (!res->canary_violations)
        printf("  canaries          clean (%d more iterations with canaries: %lld regions checked, "
               "%.6f s per iteration with their work)\n", res->canary_iterations,
               (long long)res->canary_checks, res->canary_iteration_time_s);
    else
        printf("  canaries          FAILED: %lld mismatches in %lld checks over %d iterations; "
               "first: %s\n", (long long)res->canary_violations, (long long)res->canary_checks,
               res->canary_iterations, res->first_violation);
    printf("  overruns          %lld of %lld ops and copies ran past their modelled end\n",
           (long long)res->overruns, (long long)res->timed);
    if (res->dangling)
        printf("  dangling          %d accesses to tensors the plan does not keep resident "
               "there\n", res->dangling);
    if (!strcmp(res->backend, "cpu"))
        printf("  note              CPU backend: this validates the executor and the timing "
               "of copies and dependencies, not a GPU\n");
}

int cmd_replay(int argc, char **argv)
{
    const char *path = NULL;
    int backend = 0, json = 0, unsafe = 0, no_canaries = 0, no_poison = 0, rc;
    cli_device dv;
    memset(&dv, 0, sizeof dv);
    val_opts o;
    val_opts_init(&o);
    const cli_pos args[] = {{"PLAN", "the plan (docs/plan-format.md)", 1, 1, &path},
                            {NULL, NULL, 0, 0, NULL}};
    const cli_opt opts[] = {
        {.name = "backend", .type = PT_CHOICE, .dst = &backend, .def = "cpu", .choices = "cpu|cuda",
         .help = "cpu: threads stand in for the GPU's streams, host memory for its memory, "
                 "copies paced to the device's PCIe rates, ops wait out their profiled time; every "
                 "duration is stretched by a time scale (reported) and measured times divided by "
                 "it. cuda: a GPU; needs libswapsim_cuda.so, built by make where nvcc is present"},
        {.name = "device", .type = PT_STRING, .dst = &dv.name, .meta = CLI_DEVICE_META,
         .help = "the GPU the replay runs on (a built-in name or a device file, such as "
                 "calibrate-device writes): the simulation and the error use it, and the cpu "
                 "backend paces copies to it; the profile's device's prediction is printed too "
                 "(default: the profile's device)"},
        {.name = "device-set", .type = PT_STRING, .dst = &dv.sets, .flags = CLI_MULTI | CLI_KEYVAL,
         .help = "override one figure of that device ('swapsim devices --help')"},
        {.name = "iterations", .type = PT_INT, .dst = &o.iterations, .def = "10", .min = 1,
         .max = 100000, .help = "measured iterations (without canary work)"},
        {.name = "warmup", .type = PT_INT, .dst = &o.warmup, .def = "2", .min = 1, .max = 100000,
         .help = "iterations before measuring"},
        {.name = "canary-iterations", .type = PT_INT, .dst = &o.canary_iterations, .def = "3",
         .min = 0, .max = 100000,
         .help = "iterations of the canary pass, run after the timed ones with every buffer's "
                 "canaries filled and checked (0: none)"},
        {.name = "device-index", .type = PT_INT, .dst = &o.device_index, .def = "0", .min = 0,
         .max = 1023, .help = "cuda: which GPU"},
        {.name = "ops", .type = PT_CHOICE, .dst = &o.ops_library, .def = "kernel",
         .choices = "kernel|library",
         .help = "cuda: ops as calibrated kernels of their profiled time, or cuBLAS/cuDNN where "
                 "attrs give shapes"},
        {.name = "precision", .type = PT_CHOICE, .dst = &o.tf32, .def = "fp32",
         .choices = "fp32|tf32",
         .help = "cuda, --ops library: fp32 data computed in strict fp32 (the paper's MXNet) or "
                 "with TF32 tensor cores; fp16 comes from the profile's dtype (swapsim model "
                 "... --dtype fp16)"},
        {.name = "time-scale", .type = PT_FLOAT, .dst = &o.time_scale, .min = 0, .max = 1e6,
         .flags = CLI_ABOVE_MIN,
         .help = "cpu: real seconds per plan second (default: chosen from this machine's memory "
                 "bandwidth)"},
        {.name = "wait", .type = PT_CHOICE, .dst = &o.wait_mode, .def = "hybrid",
         .choices = "hybrid|spin|sleep", .help = "cpu: how ops wait out their time"},
        {.name = "max-seconds", .type = PT_FLOAT, .dst = &o.max_seconds, .meta = "S", .min = 0,
         .max = 1e9, .flags = CLI_ABOVE_MIN,
         .help = "refuse a replay longer than S simulated seconds, all iterations, warm-up and "
                 "canary pass together (default 600; the cpu backend's real time is this times "
                 "its scale)"},
        {.name = "no-canaries", .type = PT_BOOL, .dst = &no_canaries,
         .help = "no canary pass (--canary-iterations 0)"},
        {.name = "no-poison", .type = PT_BOOL, .dst = &no_poison,
         .help = "canary pass: do not poison memory the plan releases"},
        {.name = "unsafe", .type = PT_BOOL, .dst = &unsafe,
         .help = "replay even if the verifier rejects the plan"},
        {.name = "json", .type = PT_BOOL, .dst = &json,
         .help = "one JSON object (fields in docs/cli.md)"},
        {.name = NULL}};
    const cli_cmd cmd = {
        .name = "replay",
        .about = "Run PLAN for real and compare its iteration time with the simulator's. Both\n"
                 "backends execute the same event graph: three streams, one event per task\n"
                 "others wait for, the arena laid out as the plan places it, host buffers for\n"
                 "swapped tensors. The timed iterations do the plan's work only; a separate\n"
                 "canary pass (more iterations) writes a per-tensor, per-version pattern when a\n"
                 "tensor is produced or mutated and checks it when it is read, catching a plan\n"
                 "that reads overwritten or stale memory; the exit status is 1 if it does.\n"
                 "The plan is verified first; --unsafe replays a plan the verifier rejects.\n",
        .args = args,
        .opts = opts,
        .brief = 1};
    if (cli_parse(&cmd, argc, argv, &rc))
        return rc;
    if (no_canaries)
        o.canary_iterations = 0;
    if (no_poison)
        o.poison = 0;
    plan *p;
    sw_err e;
    if (plan_read_file(path, &p, &e))
        return cli_error(&e);
    char profile_device[sizeof p->prof->device.name];
    snprintf(profile_device, sizeof profile_device, "%s", p->prof->device.name);
    dev_spec dev;
    if (cli_device_any(&dv)) {
        if (cli_device_resolve(&dv, &p->prof->device, &dev)) {
            plan_free(p);
            return EXIT_USER;
        }
        o.device = &dev;
    }
    int verified = plan_verify(p, NULL, &e) == 0;
    if (!verified && !unsafe) {
        plan_free(p);
        return cli_fail(EXIT_USER, "%s: %s (--unsafe replays it anyway)", path, e.msg);
    }
    sim_result s;
    val_result res;
    if (sim_plan(p, o.device, NULL, &s, &e) ||
        val_replay(p, backend ? "cuda" : "cpu", &o, &res, &e)) {
        plan_free(p);
        return cli_fail(EXIT_USER, "%s: %s", path, e.msg);
    }
    if (json) {
        sw_buf b;
        sw_buf_init(&b);
        put_replay_json(path, p, profile_device, &res, &s, verified, &b);
        fputs(b.data ? b.data : "", stdout);
        sw_buf_free(&b);
        cli_json_said(); /* a canary mismatch below: the object above says it */
    } else {
        print_replay(path, p, profile_device, &res, verified, o.device != NULL);
    }
    rc = 0;
    if (res.canary_violations)
        rc = cli_fail(EXIT_USER, "%s: canaries caught %lld mismatches: %s", path,
                      (long long)res.canary_violations, res.first_violation);
    plan_free(p);
    return rc;
}
