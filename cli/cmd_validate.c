/* cmd_validate.c: `swapsim replay` (run a plan for real and compare with the
   simulator), `swapsim profile` (record op times on a GPU) and `swapsim
   calibrate-device` (measure a GPU into a device file). */
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

int cmd_profile(int argc, char **argv)
{
    const char *path = NULL, *out = NULL;
    int rc, dry_run = 0, json = 0;
    val_profile_opts o = {-1, 5, 0, NULL, 0};
    const cli_pos args[] = {{"PROFILE", "the profile whose ops are timed", 1, 1, &path},
                            {NULL, NULL, 0, 0, NULL}};
    const cli_opt opts[] = {
        {.name = "device-index", .type = PT_INT, .dst = &o.device_index, .min = 0, .max = 1023,
         .help = "the GPU (required unless --dry-run)"},
        {.name = "output", .short_name = 'o', .type = PT_STRING, .dst = &out, .meta = "RECORDED",
         .flags = CLI_OUTPUT,
         .help = "the copy with the measured times (required unless --dry-run)"},
        {.name = "dry-run", .type = PT_BOOL, .dst = &dry_run,
         .help = "no GPU: print which cuBLAS/cuDNN calls or touch kernels the ops map to and "
                 "the share of FLOPs on library calls (validate/libmap.c)"},
        {.name = "json", .type = PT_BOOL, .dst = &json,
         .help = "--dry-run: one JSON object (fields in docs/cli.md)"},
        {.name = "repeats", .type = PT_INT, .dst = &o.reps, .def = "5", .meta = "R", .min = 1,
         .max = 1000, .help = "runs per op; the median is kept"},
        {.name = "precision", .type = PT_CHOICE, .dst = &o.tf32, .def = "fp32",
         .choices = "fp32|tf32",
         .help = "fp32 data computed in strict fp32 (the paper's MXNet) or with TF32 tensor "
                 "cores; fp16 comes from the profile's dtype"},
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

int cmd_calibrate_device(int argc, char **argv)
{
    const char *out = NULL, *name = NULL, *size = NULL;
    int rc;
    val_calib_opts o;
    val_calib_opts_init(&o);
    dev_spec dev;
    const cli_opt opts[] = {
        {.name = "device-index", .type = PT_INT, .dst = &o.device_index, .min = 0, .max = 1023,
         .flags = CLI_REQUIRED, .help = "the GPU to measure"},
        {.name = "output", .short_name = 'o', .type = PT_STRING, .dst = &out, .meta = "FILE",
         .flags = CLI_REQUIRED | CLI_OUTPUT, .help = "the device file to write (docs/devices.md)"},
        {.name = "name", .type = PT_STRING, .dst = &name, .meta = "NAME",
         .help = "the device's name in the file, up to 31 characters (default: the GPU's name "
                 "in lower case, such as nvidia-h100-80gb-hbm3)"},
        {.name = "copy-size", .type = PT_SIZE, .dst = &size, .def = "256MiB",
         .help = "bytes of each timed copy (pinned host memory) and of the device-to-device "
                 "copy that times memory bandwidth"},
        {.name = "repeats", .type = PT_INT, .dst = &o.repeats, .def = "5", .meta = "R", .min = 1,
         .max = 1000, .help = "timings of each figure after one warm-up; the median is kept"},
        {.name = NULL}};
    const cli_cmd cmd = {
        .name = "calibrate-device",
        .about = "Measure GPU N and write a device file that every --device takes: pinned copy\n"
                 "rates host-to-device and device-to-host one way each and both ways at once,\n"
                 "the per-copy latency, the usable memory (the largest single allocation), the\n"
                 "fp32 and fp16 GEMM rates (cuBLAS) and the memory bandwidth, all timed with\n"
                 "CUDA events. The file's \"calibration\" object records every figure, the GPU,\n"
                 "driver and CUDA versions and the date. Needs libswapsim_cuda.so and a CUDA\n"
                 "device; takes some ten seconds.\n",
        .opts = opts};
    if (cli_parse(&cmd, argc, argv, &rc))
        return rc;
    sw_err e;
    if (sw_parse_size(size, &o.copy_bytes, NULL, &e) || o.copy_bytes < 1048576)
        return cli_fail(EXIT_USER, "calibrate-device: --copy-size: expected at least 1MiB, got "
                        "'%s'", size);
    o.name = name;
    if (name && (!name[0] || strlen(name) >= sizeof dev.name))
        return cli_fail(EXIT_USER, "calibrate-device: --name: expected 1 to %d characters, got "
                        "'%s'", (int)sizeof dev.name - 1, name);
    val_calib_result res;
    rc = val_calibrate(&o, &res, &e);
    if (rc == SW_EUNSUPPORTED)
        return cli_fail(EXIT_USER, "calibrate-device needs a CUDA GPU: %s", e.msg);
    if (rc)
        return cli_fail(EXIT_USER, "calibrate-device: GPU %d: %s", o.device_index, e.msg);
    char date[32];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tm);
    if (val_calib_device(&res, o.device_index, name, date, &dev, &e))
        return cli_error(&e);
    sw_buf cal;
    sw_buf_init(&cal);
    val_calib_to_json(&o, &res, date, &cal);
    rc = cal.oom ? sw_fail(&e, SW_ENOMEM, "out of memory")
                 : device_write_file(&dev, cal.data, out, &e);
    sw_buf_free(&cal);
    if (rc)
        return cli_error(&e);
    char mem[32];
    printf("%s (GPU %d, compute capability %d.%d, driver %d.%d, CUDA %d.%d)\n", res.gpu,
           o.device_index, res.cc_major, res.cc_minor, res.driver_version / 1000,
           res.driver_version % 1000 / 10, res.runtime_version / 1000,
           res.runtime_version % 1000 / 10);
    printf("  copies            h2d %.1f GB/s, d2h %.1f GB/s, both at once %.1f GB/s; "
           "latency %.1f us\n", dev.h2d_bw / 1e9, dev.d2h_bw / 1e9, dev.duplex_bw / 1e9,
           dev.copy_latency_s * 1e6);
    printf("  memory            %s usable, %.0f GB/s\n",
           sw_fmt_bytes(dev.memory_bytes, mem, sizeof mem), dev.mem_bw / 1e9);
    printf("  GEMM (n=%d)     fp32 %.1f TFLOP/s, tf32 %.1f TFLOP/s, fp16 %.1f TFLOP/s\n",
           res.gemm_n, res.gemm_fp32_flops / 1e12, res.gemm_tf32_flops / 1e12,
           res.gemm_fp16_flops / 1e12);
    printf("  launch            %.2f us per kernel\n", dev.launch_overhead_s * 1e6);
    printf("wrote %s (device '%s')\n", out, dev.name);
    return 0;
}
