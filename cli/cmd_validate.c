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

static int parse_int(const char *opt, const char *v, int lo, int hi, int *out)
{
    int64_t n;
    if (sw_parse_i64(v, &n) || n < lo || n > hi)
        return cli_fail(EXIT_USER, "%s %s: expected an integer from %d to %d", opt, v, lo, hi);
    *out = (int)n;
    return 0;
}

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
    cli_args a = {argc, argv, 1, "replay", {0}, 0};
    const char *backend = "cpu", *v;
    int json = 0, unsafe = 0, r;
    val_opts o;
    val_opts_init(&o);
    while (a.i < argc) {
        if (cli_flag(&a, "--help")) {
            printf(
                "usage: swapsim replay PLAN [--backend cpu|cuda] [--iterations N] [--json]\n"
                "                     [options]\n\n"
                "Run PLAN for real and compare its iteration time with the simulator's. Both\n"
                "backends execute the same event graph: three streams, one event per task\n"
                "others wait for, the arena laid out as the plan places it, host buffers for\n"
                "swapped tensors. Canaries (a per-tensor, per-version pattern written when a\n"
                "tensor is produced or mutated and checked when it is read) catch a plan that\n"
                "reads overwritten or stale memory; the exit status is 1 if they do.\n"
                "The plan is verified first; --unsafe replays a plan the verifier rejects.\n\n"
                "  --backend cpu|cuda    cpu (default): threads stand in for the GPU's streams,\n"
                "                        host memory for its memory, copies paced to the\n"
                "                        plan's PCIe rates, ops wait out their profiled time;\n"
                "                        every duration is stretched by a time scale (reported)\n"
                "                        and measured times divided by it. cuda: a GPU (needs\n"
                "                        libswapsim_cuda.so, built by make where nvcc is present)\n"
                "  --iterations N        measured iterations (default 10)\n"
                "  --warmup N            iterations before measuring (default 2)\n"
                "  --device-index N      cuda: which GPU (default 0)\n"
                "  --ops kernel|library  cuda: ops as calibrated kernels of their profiled time\n"
                "                        (default), or cuBLAS/cuDNN where attrs give shapes\n"
                "  --time-scale X        cpu: real seconds per plan second (default: chosen\n"
                "                        from this machine's memory bandwidth)\n"
                "  --wait hybrid|spin|sleep  cpu: how ops wait out their time (default hybrid)\n"
                "  --max-seconds S       refuse a replay longer than S simulated seconds, all\n"
                "                        iterations and warm-up together (default 600; the\n"
                "                        cpu backend's real time is this times its scale)\n"
                "  --no-canaries         skip canary checks (timing only)\n"
                "  --no-poison           do not poison memory the plan releases\n"
                "  --unsafe              replay even if the verifier rejects the plan\n"
                "  --json                one JSON object (fields in docs/cli.md)\n");
            return 0;
        }
        if (cli_flag(&a, "--json")) {
            json = 1;
            continue;
        }
        if (cli_flag(&a, "--unsafe")) {
            unsafe = 1;
            continue;
        }
        if (cli_flag(&a, "--no-canaries")) {
            o.canaries = 0;
            continue;
        }
        if (cli_flag(&a, "--no-poison")) {
            o.poison = 0;
            continue;
        }
        if ((r = cli_optval(&a, "--backend", &backend)) != 0) {
            if (r < 0)
                return EXIT_USAGE;
            if (strcmp(backend, "cpu") && strcmp(backend, "cuda"))
                return cli_usage("replay", "--backend %s: expected cpu or cuda", backend);
            continue;
        }
        if ((r = cli_optval(&a, "--iterations", &v)) != 0) {
            if (r < 0 || parse_int("--iterations", v, 1, 100000, &o.iterations))
                return r < 0 ? EXIT_USAGE : EXIT_USER;
            continue;
        }
        if ((r = cli_optval(&a, "--warmup", &v)) != 0) {
            if (r < 0 || parse_int("--warmup", v, 1, 100000, &o.warmup))
                return r < 0 ? EXIT_USAGE : EXIT_USER;
            continue;
        }
        if ((r = cli_optval(&a, "--device-index", &v)) != 0) {
            if (r < 0 || parse_int("--device-index", v, 0, 1023, &o.device_index))
                return r < 0 ? EXIT_USAGE : EXIT_USER;
            continue;
        }
        if ((r = cli_optval(&a, "--time-scale", &v)) != 0) {
            if (r < 0)
                return EXIT_USAGE;
            if (sw_parse_f64(v, &o.time_scale) || !(o.time_scale > 0) || o.time_scale > 1e6)
                return cli_fail(EXIT_USER, "--time-scale %s: expected a number > 0", v);
            continue;
        }
        if ((r = cli_optval(&a, "--max-seconds", &v)) != 0) {
            if (r < 0)
                return EXIT_USAGE;
            if (sw_parse_f64(v, &o.max_seconds) || !(o.max_seconds > 0) || o.max_seconds > 1e9)
                return cli_fail(EXIT_USER, "--max-seconds %s: expected a number of seconds in "
                                "(0, 1e9]", v);
            continue;
        }
        if ((r = cli_optval(&a, "--ops", &v)) != 0) {
            if (r < 0)
                return EXIT_USAGE;
            if ((o.ops_library = cli_choice(v, "kernel|library")) < 0)
                return cli_usage("replay", "--ops %s: expected kernel or library", v);
            continue;
        }
        if ((r = cli_optval(&a, "--wait", &v)) != 0) {
            if (r < 0)
                return EXIT_USAGE;
            if ((o.wait_mode = cli_choice(v, "hybrid|spin|sleep")) < 0)
                return cli_usage("replay", "--wait %s: expected hybrid, spin or sleep", v);
            continue;
        }
        if ((r = cli_positional(&a)) != 0) {
            if (r < 0)
                return EXIT_USAGE;
            continue;
        }
        return cli_unknown(&a);
    }
    if (a.npos != 1)
        return cli_usage("replay", "expected one PLAN");
    plan *p;
    sw_err e;
    if (plan_read_file(a.pos[0], &p, &e))
        return cli_error(&e);
    int verified = plan_verify(p, NULL, &e) == 0;
    if (!verified && !unsafe) {
        plan_free(p);
        return cli_fail(EXIT_USER, "%s: %s (--unsafe replays it anyway)", a.pos[0], e.msg);
    }
    sim_result s;
    val_result res;
    if (sim_plan(p, NULL, NULL, &s, &e) || val_replay(p, backend, &o, &res, &e)) {
        plan_free(p);
        return cli_fail(EXIT_USER, "%s: %s", a.pos[0], e.msg);
    }
    if (json) {
        sw_buf b;
        sw_buf_init(&b);
        put_replay_json(a.pos[0], p, &res, &s, verified, o.canaries, &b);
        fputs(b.data ? b.data : "", stdout);
        sw_buf_free(&b);
    } else {
        printf("plan %s: profile %s on %s, planner %s (seed %llu)%s\n", a.pos[0], p->prof->name,
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
    int rc = 0;
    if (o.canaries && res.canary_failures)
        rc = cli_fail(EXIT_USER, "%s: canaries caught %lld mismatches: %s", a.pos[0],
                      (long long)res.canary_failures, res.first_failure);
    plan_free(p);
    return rc;
}

int cmd_profile(int argc, char **argv)
{
    cli_args a = {argc, argv, 1, "profile", {0}, 0};
    const char *out = NULL, *v;
    int r, have_index = 0;
    val_profile_opts o = {0, 5, 0, NULL};
    while (a.i < argc) {
        if (cli_flag(&a, "--help")) {
            printf("usage: swapsim profile PROFILE --device-index N -o RECORDED [--repeats R]\n"
                   "                      [--unknown touch|calibrated|keep]\n\n"
                   "Run every op of PROFILE on GPU N under CUPTI's activity API and write a copy\n"
                   "with the measured times (median of R runs, default 5) and provenance\n"
                   "\"recorded with swapsim profile on <GPU>\". Ops whose attrs give shapes run\n"
                   "as cuBLAS GEMMs or cuDNN convolutions (docs/validate.md lists the attrs);\n"
                   "others as a kernel reading their inputs and writing their outputs (touch,\n"
                   "default), as the calibrated kernel of their profiled time, or keep their\n"
                   "time. Needs libswapsim_cuda.so and a CUDA device.\n");
            return 0;
        }
        if ((r = cli_optval(&a, "-o", &out)) != 0 || (r = cli_optval(&a, "--output", &out)) != 0) {
            if (r < 0)
                return EXIT_USAGE;
            continue;
        }
        if ((r = cli_optval(&a, "--device-index", &v)) != 0) {
            if (r < 0 || parse_int("--device-index", v, 0, 1023, &o.device_index))
                return r < 0 ? EXIT_USAGE : EXIT_USER;
            have_index = 1;
            continue;
        }
        if ((r = cli_optval(&a, "--repeats", &v)) != 0) {
            if (r < 0 || parse_int("--repeats", v, 1, 1000, &o.reps))
                return r < 0 ? EXIT_USAGE : EXIT_USER;
            continue;
        }
        if ((r = cli_optval(&a, "--unknown", &v)) != 0) {
            if (r < 0)
                return EXIT_USAGE;
            if ((o.unknown = cli_choice(v, "touch|calibrated|keep")) < 0)
                return cli_usage("profile", "--unknown %s: expected touch, calibrated or keep", v);
            continue;
        }
        if ((r = cli_positional(&a)) != 0) {
            if (r < 0)
                return EXIT_USAGE;
            continue;
        }
        return cli_unknown(&a);
    }
    if (a.npos != 1)
        return cli_usage("profile", "expected one PROFILE");
    if (!out)
        return cli_usage("profile", "missing -o RECORDED");
    if (!have_index)
        return cli_usage("profile", "missing --device-index N");
    graph_profile *g, *rec;
    sw_err e;
    if (profile_read_file(a.pos[0], &g, &e))
        return cli_error(&e);
    o.source_file = a.pos[0];
    int rc = val_profile(g, &o, &rec, &e);
    graph_free(g);
    if (rc)
        return cli_fail(EXIT_USER, "profile: %s", e.msg);
    rc = profile_write_file(rec, out, &e);
    graph_free(rec);
    return rc ? cli_error(&e) : 0;
}
