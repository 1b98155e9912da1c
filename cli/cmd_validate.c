/* cmd_validate.c: `swapsim replay` (run a plan for real and compare with the
   simulator) and `swapsim profile` (record op times on a GPU). */
#include <stdio.h>
#include <string.h>

#include "../profiles/profile_io.h"
#include "../sim/plan_io.h"
#include "../sim/simulate.h"
#include "../sim/verify.h"
#include "../validate/replay.h"
#include "cli.h"

static void put_replay_json(const char *path, const plan *p, const val_result *r,
                            const sim_result *s, int verified, int canaries, sw_buf *b)
{
    const graph_profile *g = p->prof;
    sw_buf_puts(b, "{\"plan\":");
    sw_buf_put_jstr(b, path);
    sw_buf_puts(b, ",\"profile\":");
    sw_buf_put_jstr(b, g->name);
    sw_buf_puts(b, ",\"device\":");
    sw_buf_put_jstr(b, g->device.name);
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
             {"ideal_time_s", r->ideal_time_s},
             {"measured_normalized_throughput",
              r->iteration_time_s > 0 ? r->ideal_time_s / r->iteration_time_s : 0},
             {"simulated_normalized_throughput", s->normalized_throughput},
             {"wall_time_s", r->wall_s}};
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
        sw_buf_printf(b, ",\"%s\":", f[i].k);
        sw_buf_put_f64(b, f[i].v);
    }
    sw_buf_printf(b, ",\"iterations\":%d,\"warmup\":%d,\"canaries\":\"%s\",\"canary_checks\":%lld,"
                  "\"canary_failures\":%lld,\"first_failure\":",
                  r->iterations, r->warmup,
                  !canaries ? "off" : r->canary_failures ? "failed" : "clean",
                  (long long)r->canary_checks, (long long)r->canary_failures);
    sw_buf_put_jstr(b, r->first_failure);
    sw_buf_printf(b, ",\"overruns\":%lld,\"timed\":%lld,\"dangling\":%d,\"tasks\":%d,"
                  "\"edges\":%d,\"events\":%d,\"swap_in_bytes\":%lld,\"swap_out_bytes\":%lld,"
                  "\"verified\":%s}\n",
                  (long long)r->overruns, (long long)r->timed, r->dangling, r->tasks, r->edges,
                  r->events, (long long)s->swap_in_bytes, (long long)s->swap_out_bytes,
                  verified ? "true" : "false");
}

int cmd_replay(int argc, char **argv)
{
    const char *path = NULL;
    int backend = 0, json = 0, unsafe = 0, no_canaries = 0, no_poison = 0, rc;
    val_opts o;
    val_opts_init(&o);
    const cli_pos args[] = {{"PLAN", "the plan (docs/plan-format.md)", 1, 1, &path},
                            {NULL, NULL, 0, 0, NULL}};
    const cli_opt opts[] = {
        {.name = "backend", .type = PT_CHOICE, .dst = &backend, .def = "cpu", .choices = "cpu|cuda",
         .help = "cpu: threads stand in for the GPU's streams, host memory for its memory, "
                 "copies paced to the plan's PCIe rates, ops wait out their profiled time; every "
                 "duration is stretched by a time scale (reported) and measured times divided by "
                 "it. cuda: a GPU; needs libswapsim_cuda.so, built by make where nvcc is present"},
        {.name = "iterations", .type = PT_INT, .dst = &o.iterations, .def = "10", .min = 1,
         .max = 100000, .help = "measured iterations"},
        {.name = "warmup", .type = PT_INT, .dst = &o.warmup, .def = "2", .min = 1, .max = 100000,
         .help = "iterations before measuring"},
        {.name = "device-index", .type = PT_INT, .dst = &o.device_index, .def = "0", .min = 0,
         .max = 1023, .help = "cuda: which GPU"},
        {.name = "ops", .type = PT_CHOICE, .dst = &o.ops_library, .def = "kernel",
         .choices = "kernel|library",
         .help = "cuda: ops as calibrated kernels of their profiled time, or cuBLAS/cuDNN where "
                 "attrs give shapes"},
        {.name = "time-scale", .type = PT_FLOAT, .dst = &o.time_scale, .min = 0, .max = 1e6,
         .flags = CLI_ABOVE_MIN,
         .help = "cpu: real seconds per plan second (default: chosen from this machine's memory "
                 "bandwidth)"},
        {.name = "wait", .type = PT_CHOICE, .dst = &o.wait_mode, .def = "hybrid",
         .choices = "hybrid|spin|sleep", .help = "cpu: how ops wait out their time"},
        {.name = "max-seconds", .type = PT_FLOAT, .dst = &o.max_seconds, .meta = "S", .min = 0,
         .max = 1e9, .flags = CLI_ABOVE_MIN,
         .help = "refuse a replay longer than S simulated seconds, all iterations and warm-up "
                 "together (default 600; the cpu backend's real time is this times its scale)"},
        {.name = "no-canaries", .type = PT_BOOL, .dst = &no_canaries,
         .help = "skip canary checks (timing only)"},
        {.name = "no-poison", .type = PT_BOOL, .dst = &no_poison,
         .help = "do not poison memory the plan releases"},
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
                 "swapped tensors. Canaries (a per-tensor, per-version pattern written when a\n"
                 "tensor is produced or mutated and checked when it is read) catch a plan that\n"
                 "reads overwritten or stale memory; the exit status is 1 if they do.\n"
                 "The plan is verified first; --unsafe replays a plan the verifier rejects.\n",
        .args = args,
        .opts = opts,
        .brief = 1};
    if (cli_parse(&cmd, argc, argv, &rc))
        return rc;
    if (no_canaries)
        o.canaries = 0;
    if (no_poison)
        o.poison = 0;
    plan *p;
    sw_err e;
    if (plan_read_file(path, &p, &e))
        return cli_error(&e);
    int verified = plan_verify(p, NULL, &e) == 0;
    if (!verified && !unsafe) {
        plan_free(p);
        return cli_fail(EXIT_USER, "%s: %s (--unsafe replays it anyway)", path, e.msg);
    }
    sim_result s;
    val_result res;
    if (sim_plan(p, NULL, NULL, &s, &e) || val_replay(p, backend ? "cuda" : "cpu", &o, &res, &e)) {
        plan_free(p);
        return cli_fail(EXIT_USER, "%s: %s", path, e.msg);
    }
    if (json) {
        sw_buf b;
        sw_buf_init(&b);
        put_replay_json(path, p, &res, &s, verified, o.canaries, &b);
        fputs(b.data ? b.data : "", stdout);
        sw_buf_free(&b);
    } else {
        printf("plan %s: profile %s on %s, planner %s (seed %llu)%s\n", path, p->prof->name,
               p->prof->device.name, p->planner ? p->planner : "?", (unsigned long long)p->seed,
               verified ? "" : ", REJECTED by the verifier");
        printf("  backend           %s: %s\n", res.backend, res.device);
        printf("  measured          %.6f s per iteration (mean of %d after %d warm-up; "
               "fastest %.6f, slowest %.6f)\n", res.iteration_time_s, res.iterations, res.warmup,
               res.iteration_min_s, res.iteration_max_s);
        printf("  simulated         %.6f s per iteration (ideal %.6f s)\n", res.simulated_time_s,
               res.ideal_time_s);
        printf("  error             %+.2f%% (measured vs simulated)\n", 100 * res.error);
        if (!o.canaries)
            printf("  canaries          off\n");
        else if (!res.canary_failures)
            printf("  canaries          clean (%lld regions checked)\n", (long long)res.canary_checks);
        else
            printf("  canaries          FAILED: %lld mismatches in %lld checks; first: %s\n",
                   (long long)res.canary_failures, (long long)res.canary_checks,
                   res.first_failure);
        printf("  overruns          %lld of %lld ops and copies ran past their modelled end\n",
               (long long)res.overruns, (long long)res.timed);
        if (res.dangling)
            printf("  dangling          %d accesses to tensors the plan does not keep resident "
                   "there\n", res.dangling);
        if (!strcmp(res.backend, "cpu"))
            printf("  note              CPU backend: this validates the executor and the timing "
                   "of copies and dependencies, not a GPU\n");
    }
    rc = 0;
    if (o.canaries && res.canary_failures)
        rc = cli_fail(EXIT_USER, "%s: canaries caught %lld mismatches: %s", path,
                      (long long)res.canary_failures, res.first_failure);
    plan_free(p);
    return rc;
}

int cmd_profile(int argc, char **argv)
{
    const char *path = NULL, *out = NULL;
    int rc, dry_run = 0, json = 0;
    val_profile_opts o = {-1, 5, 0, NULL};
    const cli_pos args[] = {{"PROFILE", "the profile whose ops are timed", 1, 1, &path},
                            {NULL, NULL, 0, 0, NULL}};
    const cli_opt opts[] = {
        {.name = "device-index", .type = PT_INT, .dst = &o.device_index, .min = 0, .max = 1023,
         .help = "the GPU (required unless --dry-run)"},
        {.name = "output", .short_name = 'o', .type = PT_STRING, .dst = &out, .meta = "RECORDED",
         .help = "the copy with the measured times (required unless --dry-run)"},
        {.name = "dry-run", .type = PT_BOOL, .dst = &dry_run,
         .help = "no GPU: print which cuBLAS/cuDNN calls or touch kernels the ops map to and "
                 "the share of FLOPs on library calls (validate/libmap.c)"},
        {.name = "json", .type = PT_BOOL, .dst = &json,
         .help = "--dry-run: one JSON object (fields in docs/cli.md)"},
        {.name = "repeats", .type = PT_INT, .dst = &o.reps, .def = "5", .meta = "R", .min = 1,
         .max = 1000, .help = "runs per op; the median is kept"},
        {.name = "unknown", .type = PT_CHOICE, .dst = &o.unknown, .def = "touch",
         .choices = "touch|calibrated|keep",
         .help = "ops whose attrs give no shapes: a kernel reading their inputs and writing "
                 "their outputs, the calibrated kernel of their profiled time, or their time kept"},
        {.name = NULL}};
    const cli_cmd cmd = {
        .name = "profile",
        .about = "Run every op of PROFILE on GPU N under CUPTI's activity API and write a copy\n"
                 "with the measured times and provenance \"recorded with swapsim profile on\n"
                 "<GPU>\". Ops whose type and attrs give shapes run as cuBLAS / cuDNN calls,\n"
                 "forward and backward (docs/validate.md lists them); others as --unknown says.\n"
                 "Needs libswapsim_cuda.so and a CUDA device, except with --dry-run, which only\n"
                 "prints the mapping.\n",
        .args = args,
        .opts = opts};
    if (cli_parse(&cmd, argc, argv, &rc))
        return rc;
    if (!dry_run && o.device_index < 0)
        return cli_usage("profile", "--device-index is required (or --dry-run)");
    if (!dry_run && !out)
        return cli_usage("profile", "--output is required (or --dry-run)");
    graph_profile *g, *rec;
    sw_err e;
    if (profile_read_file(path, &g, &e))
        return cli_error(&e);
    if (dry_run) {
        rc = cli_libmap_print(g, json);
        graph_free(g);
        return rc;
    }
    o.source_file = path;
    rc = val_profile(g, &o, &rec, &e);
    graph_free(g);
    if (rc)
        return cli_fail(EXIT_USER, "profile: %s", e.msg);
    rc = profile_write_file(rec, out, &e);
    graph_free(rec);
    return rc ? cli_error(&e) : 0;
}
