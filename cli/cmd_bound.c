/* cmd_bound.c: `swapsim bound` (lower bounds on any plan's iteration time,
   docs/bounds.md), `swapsim serve` (serving several models on one GPU,
   docs/serving.md) and `swapsim colocate` (several training jobs on one
   GPU, docs/colocate.md). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../sharing/colocate.h"
#include "../sharing/serve.h"
#include "../planners/bound.h"
#include "../planners/planner.h"
#include "../profiles/profile_io.h"
#include "cli.h"

static void put_bound_json(const graph_profile *g, const bound_result *r, sw_buf *b)
{
    sw_buf_puts(b, "{\"profile\":");
    sw_buf_put_jstr(b, g->name);
    sw_buf_puts(b, ",\"device\":");
    sw_buf_put_jstr(b, g->device.name);
    sw_buf_printf(b, ",\"memory_budget_bytes\":%lld,\"compute_s\":%.9g,\"h2d_rate\":%.9g,"
                  "\"persistent_bytes\":%lld,\"resident_bytes\":%lld,\"resident_op\":%d,"
                  "\"exact_dag\":%s,\"live_bytes\":%lld,\"live_op\":%d,\"excess_bytes\":%lld,"
                  "\"swap_bound_s\":%.9g,\"recompute_s_per_byte\":%.9g,\"any_bound_s\":%.9g,"
                  "\"order_live_bytes\":%lld,\"order_excess_bytes\":%lld,"
                  "\"order_swap_bound_s\":%.9g,\"order_any_bound_s\":%.9g}\n",
                  (long long)r->budget_bytes, r->compute_s, r->h2d_rate,
                  (long long)r->persistent_bytes, (long long)r->resident_bytes, r->resident_op,
                  r->exact_dag ? "true" : "false", (long long)r->live_bytes, r->live_op,
                  (long long)r->excess_bytes, r->swap_s,
                  isfinite(r->recompute_s_per_byte) ? r->recompute_s_per_byte : -1, r->any_s,
                  (long long)r->order_live_bytes, (long long)r->order_excess_bytes,
                  r->order_swap_s, r->order_any_s);
}

static double gib(int64_t b) { return (double)b / (1024.0 * 1024.0 * 1024.0); }

int cmd_bound(int argc, char **argv)
{
    const char *path = NULL, *memory = NULL;
    int json = 0, over = 0, rc;
    cli_device dev;
    memset(&dev, 0, sizeof dev);
    const cli_pos args[] = {{"PROFILE", "the profile (docs/profile-format.md)", 1, 1, &path},
                            {NULL, NULL, 0, 0, NULL}};
    const cli_opt opts[] = {
        {.name = "memory", .type = PT_SIZE, .dst = &memory, .flags = CLI_FRACTION,
         .help = "device memory budget: 16GiB, 16G, 16GB, 4096B, or 0.4x of the ideal plan's "
                 "peak (a size above the device's memory needs --allow-oversubscribe); default: "
                 "the device's memory"},
        {.name = "allow-oversubscribe", .type = PT_BOOL, .dst = &over,
         .help = "accept a --memory above the device's memory"},
        {.name = "json", .type = PT_BOOL, .dst = &json,
         .help = "print the bounds as one JSON object"},
        {.name = "device", .type = PT_STRING, .dst = &dev.name, .meta = CLI_DEVICE_META,
         .help = "bound for another device, built-in or a device file (memory and PCIe)"},
        {.name = "device-set", .type = PT_STRING, .dst = &dev.sets,
         .flags = CLI_MULTI | CLI_KEYVAL, .help = "override one device figure"},
        {.name = NULL}};
    const cli_cmd cmd = {
        .name = "bound",
        .about = "Lower bounds on the steady-state iteration time of every plan of PROFILE\n"
                 "within the budget: compute (every op once), and the bytes that are live in\n"
                 "every schedule beyond the budget, which must come back by PCIe or be\n"
                 "recomputed; for plans that only swap, for plans that also recompute, and\n"
                 "for plans that keep the profile's order. No plan is faster (docs/bounds.md).\n"
                 "Exit 1 when some op alone needs more than the budget resident.\n",
        .args = args,
        .opts = opts};
    if (cli_parse(&cmd, argc, argv, &rc))
        return rc;
    graph_profile *g;
    sw_err e;
    if (profile_read_file(path, &g, &e))
        return cli_error(&e);
    if (cli_device_any(&dev) && cli_device_resolve(&dev, &g->device, &g->device)) {
        graph_free(g);
        return EXIT_USER;
    }
    int64_t budget;
    if (planner_resolve_budget(g, memory, &budget, &e)) {
        rc = e.code == SW_EINVAL ? cli_fail(EXIT_USER, "--memory: %s", e.msg) : cli_error(&e);
        graph_free(g);
        return rc;
    }
    if (cli_over_device(memory, budget, &g->device) && !over) {
        char h1[32], h2[32];
        rc = cli_fail(EXIT_USER, "--memory %s: %s is above the %s's memory (%s); "
                      "--allow-oversubscribe bounds it anyway", memory,
                      sw_fmt_bytes(budget, h1, sizeof h1), g->device.name,
                      sw_fmt_bytes(g->device.memory_bytes, h2, sizeof h2));
        graph_free(g);
        return rc;
    }
    bound_result r;
    if (bound_compute(g, budget, g->order, &r, &e)) {
        rc = cli_fail(EXIT_USER, "%s: %s", path, e.msg);
        graph_free(g);
        return rc;
    }
    if (json) {
        sw_buf b;
        sw_buf_init(&b);
        put_bound_json(g, &r, &b);
        fputs(b.data ? b.data : "", stdout);
        sw_buf_free(&b);
        graph_free(g);
        return 0;
    }
    printf("bounds: %s on %s within %.3f GiB (%lld bytes)\n", g->name, g->device.name,
           gib(budget), (long long)budget);
    printf("  compute                  %.6f s (every op runs once)\n", r.compute_s);
    printf("  resident while one op runs  %.3f GiB at most (op %d '%s')\n", gib(r.resident_bytes),
           r.resident_op, r.resident_op >= 0 ? g->ops[r.resident_op].name : "");
    printf("  live in every schedule   %.3f GiB at op %d '%s'%s: %.3f GiB off the GPU there\n",
           gib(r.live_bytes), r.live_op, r.live_op >= 0 ? g->ops[r.live_op].name : "",
           r.exact_dag ? "" : " (per-op bound: the DAG is too large for reachability)",
           gib(r.excess_bytes));
    printf("  plans that only swap     >= %.6f s (%.3f GiB back at %.1f GB/s = %.6f s, hidden "
           "behind compute at best)\n", r.swap_s, gib(r.excess_bytes), r.h2d_rate / 1e9,
           (double)r.excess_bytes / r.h2d_rate);
    printf("  plans that also recompute >= %.6f s (cheapest recompute %.3g s per MB)\n", r.any_s,
           isfinite(r.recompute_s_per_byte) ? r.recompute_s_per_byte * 1e6 : INFINITY);
    printf("  keeping the profile's order: %.3f GiB live at op %d, so >= %.6f s (swap only), "
           ">= %.6f s (with recompute)\n", gib(r.order_live_bytes), r.order_live_op,
           r.order_swap_s, r.order_any_s);
    printf("  ideal / bound            %.4f (the best normalised throughput any swap-only plan "
           "can reach)\n", r.compute_s / r.swap_s);
    graph_free(g);
    return 0;
}

int cmd_serve(int argc, char **argv)
{
    cli_list models;
    memset(&models, 0, sizeof models);
    const char *memory = NULL, *rates = NULL, *out = NULL;
    int pol = SERVE_SWAPADVISOR, share_search = 0;
    int copies = 1, json = 0, threads = 1, generations = 20, population = 16, rc;
    int64_t requests = 20000, seed = 1;
    double rate = 0, zipf = 0;
    const cli_pos args[] = {{"PROFILE", "inference profiles, one per model (e.g. swapsim model "
                             "resnet --depth 152 --batch 16 --inference)", 1, CLI_MANY, &models},
                            {NULL, NULL, 0, 0, NULL}};
    const cli_opt opts[] = {
        {.name = "policy", .type = PT_CHOICE, .dst = &pol, .def = "swapadvisor",
         .choices = "not_shared|time_shared|swapadvisor|lru", .help = "not_shared (weights of every model resident: one model alone), "
                              "time_shared (the running model has the whole memory; a switch "
                              "copies the next model's weights in first), swapadvisor (memory "
                              "split equally, each model planned by swapadvisor in its share), "
                              "lru (weights cached in the whole memory)"},
        {.name = "shares", .type = PT_CHOICE, .dst = &share_search, .def = "equal",
         .choices = "equal|search", .help = "swapadvisor: split the memory equally, or search the "
                                         "split by the request mix (shares proportional to "
                                         "popularity^a, a = 0, 1/2, 1: the least mean service "
                                         "time)"},
        {.name = "copies", .type = PT_INT, .dst = &copies, .def = "1", .min = 1, .max = 4096,
         .help = "serve this many instances of each PROFILE (each with its own weights)"},
        {.name = "memory", .type = PT_SIZE, .dst = &memory,
         .help = "GPU memory shared by all models (default: the first profile's device)"},
        {.name = "rate", .type = PT_FLOAT, .dst = &rate, .min = 0, .max = INFINITY,
         .flags = CLI_ABOVE_MIN, .help = "arrival rate in samples per second (requests of one batch arrive at "
                 "rate / batch per second)"},
        {.name = "rates", .type = PT_STRING, .dst = &rates, .meta = "R1,R2,...",
         .help = "a sweep of arrival rates, samples per second (one CSV row each)"},
        {.name = "requests", .type = PT_INT, .dst = &requests, .def = "20000", .min = 1,
         .max = 2147483648.0, .flags = CLI_INT64, .help = "requests simulated per rate"},
        {.name = "zipf", .type = PT_FLOAT, .dst = &zipf, .def = "0", .min = 0, .max = 100,
         .help = "model popularity ~ 1/rank^S (0: uniform)"},
        {.name = "seed", .type = PT_INT, .dst = &seed, .def = "1", .min = 0, .max = INFINITY,
         .flags = CLI_INT64, .help = "arrivals, model choices and the planner's seed"},
        {.name = "generations", .type = PT_INT, .dst = &generations, .def = "20", .min = 1,
         .max = 100000, .help = "swapadvisor: GA generations per distinct model"},
        {.name = "population", .type = PT_INT, .dst = &population, .def = "16", .min = 2,
         .max = 100000, .help = "swapadvisor: GA population"},
        {.name = "threads", .type = PT_INT, .dst = &threads, .def = "1", .min = 1, .max = 1024,
         .help = "planner threads; results do not depend on it"},
        {.name = "json", .type = PT_BOOL, .dst = &json, .help = "one JSON object per rate"},
        {.name = "output", .short_name = 'o', .type = PT_STRING, .dst = &out, .meta = "CSV",
         .flags = CLI_OUTPUT, .help = "write one CSV row per rate here (with --rates)"},
        {.name = NULL}};
    const cli_cmd cmd = {
        .name = "serve",
        .about = "Serve several models on one GPU (the SwapAdvisor paper's Figure 8): requests\n"
                 "(one batch of the profile's batch size, for one model chosen by popularity)\n"
                 "arrive as a Poisson process and run one at a time, first come first served;\n"
                 "the policy decides what a request costs the GPU (docs/serving.md). Prints\n"
                 "latency percentiles (p50, p90, p99), throughput and weight traffic.\n",
        .args = args,
        .opts = opts};
    if (cli_parse(&cmd, argc, argv, &rc))
        return rc;
    if (!rates && !(rate > 0))
        return cli_fail(EXIT_USER, "serve: give --rate R or --rates R1,R2,...");
    double sweep[256];
    int nr = 0;
    if (rates) {
        const char *s = rates;
        while (*s && nr < 256) {
            char *end;
            double v = strtod(s, &end);
            if (end == s || !(v > 0) || !isfinite(v) || (*end && *end != ','))
                return cli_fail(EXIT_USER, "serve: --rates: expected positive numbers separated "
                                "by commas, got '%s'", rates);
            sweep[nr++] = v;
            s = *end ? end + 1 : end;
        }
    } else
        sweep[nr++] = rate;
    int32_t n = models.n * copies;
    graph_profile **gs = sw_calloc((size_t)models.n, sizeof *gs);
    const graph_profile **fleet = sw_calloc((size_t)n, sizeof *fleet);
    serve_prep prep;
    memset(&prep, 0, sizeof prep);
    FILE *csv = NULL;
    sw_err e;
    rc = 0;
    if (!gs || !fleet) {
        rc = cli_fail(EXIT_USER, "out of memory");
        goto done;
    }
    for (int i = 0; i < models.n; i++) {
        if (profile_read_file(models.item[i], &gs[i], &e)) {
            rc = cli_error(&e);
            goto done;
        }
        for (int k = 0; k < copies; k++)
            fleet[k * models.n + i] = gs[i]; /* instances interleaved: popularity ranks mix */
    }
    serve_config cfg = {fleet, n, zipf, pol, 0, (uint64_t)seed, threads, generations, population,
                        share_search};
    if (planner_resolve_budget(gs[0], memory, &cfg.memory, &e)) {
        rc = cli_fail(EXIT_USER, "serve: --memory: %s", e.msg);
        goto done;
    }
    if (serve_prepare(&cfg, &prep, &e)) {
        rc = cli_fail(EXIT_USER, "serve: %s", e.msg);
        goto done;
    }
    if (out && !(csv = fopen(out, "w"))) {
        rc = cli_fail(EXIT_USER, "serve: cannot write %s", out);
        goto done;
    }
    if (csv)
        fprintf(csv, "policy,models,memory_bytes,rate,requests,p50_s,p90_s,p99_s,mean_s,max_s,"
                     "throughput,samples_per_s,utilization,cold,weight_bytes_moved,hot_s,cold_s\n");
    if (!json)
        printf("serve: %d model%s, policy %s, %.3f GiB; service %.6f s hot, %.6f s cold "
               "(model 0)%s\n", n, n == 1 ? "" : "s", serve_policy_name(pol), gib(cfg.memory),
               prep.info[0].hot_s,
               prep.info[0].cold_s,
               pol != SERVE_SWAPADVISOR ? ""
               : prep.share_alpha == 0  ? "; equal shares"
               : prep.share_alpha == 1  ? "; shares by popularity"
                                        : "; shares by the square root of popularity");
    for (int i = 0; i < nr; i++) {
        serve_result r;
        if (serve_run(&prep, sweep[i], requests, &r, &e)) {
            rc = cli_fail(EXIT_USER, "serve: %s", e.msg);
            goto done;
        }
        if (json)
            printf("{\"policy\":\"%s\",\"models\":%d,\"memory_bytes\":%lld,\"rate\":%.9g,"
                   "\"requests\":%lld,\"p50_s\":%.9g,\"p90_s\":%.9g,\"p99_s\":%.9g,\"mean_s\":"
                   "%.9g,\"max_s\":%.9g,\"throughput\":%.9g,\"samples_per_s\":%.9g,"
                   "\"utilization\":%.9g,\"cold\":%lld,\"weight_bytes_moved\":%.9g}\n",
                   serve_policy_name(pol), n, (long long)cfg.memory, r.rate, (long long)r.requests, r.p50_s,
                   r.p90_s, r.p99_s, r.mean_s, r.max_s, r.throughput, r.samples_per_s,
                   r.utilization, (long long)r.cold, r.weight_bytes_moved);
        else
            printf("  %8.1f samples/s offered: p50 %.4f s  p90 %.4f s  p99 %.4f s  served %.1f "
                   "samples/s (%.2f requests/s)  GPU busy %.1f%%  cold %lld\n", r.rate, r.p50_s,
                   r.p90_s, r.p99_s, r.samples_per_s, r.throughput, 100 * r.utilization,
                   (long long)r.cold);
        if (csv)
            fprintf(csv, "%s,%d,%lld,%.9g,%lld,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%lld,%.9g,"
                         "%.9g,%.9g\n", serve_policy_name(pol), n, (long long)cfg.memory, r.rate,
                    (long long)r.requests, r.p50_s, r.p90_s, r.p99_s, r.mean_s, r.max_s,
                    r.throughput, r.samples_per_s, r.utilization, (long long)r.cold,
                    r.weight_bytes_moved, prep.info[0].hot_s, prep.info[0].cold_s);
    }
done:
    if (csv && fclose(csv) && !rc)
        rc = cli_fail(EXIT_USER, "serve: cannot write %s", out);
    serve_prep_free(&prep);
    for (int i = 0; gs && i < models.n; i++)
        graph_free(gs[i]);
    sw_free(gs);
    sw_free(fleet);
    return rc;
}

/* Chrome trace of a colocated run: one process per job (iterations, waits,
   switches, its memory), process 0 the total memory. */
static int write_co_trace(const char *path, const co_workload *w, const co_result *r)
{
    static const char *const kinds[] = {"iteration", "waiting", "switch", "lost (out of memory)"};
    sw_buf b;
    sw_buf_init(&b);
    sw_buf_puts(&b, "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n");
    sw_buf_puts(&b, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":0,\"args\":{\"name\":"
                    "\"GPU memory (all jobs)\"}}");
    for (int32_t i = 0; i < w->n_jobs; i++) {
        sw_buf_printf(&b, ",\n{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"args\":"
                          "{\"name\":", (int)i + 1);
        sw_buf_put_jstr(&b, w->jobs[i].name);
        sw_buf_puts(&b, "}}");
    }
    for (int32_t k = 0; k < r->n_spans; k++) {
        const co_span *x = &r->spans[k];
        sw_buf_printf(&b, ",\n{\"name\":\"%s\",\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":%.3f,"
                          "\"dur\":%.3f}", kinds[x->kind], (int)x->job + 1,
                      x->kind == CO_SPAN_ITERATION || x->kind == CO_SPAN_LOST ? 1 : 2,
                      x->start * 1e6, (x->end - x->start) * 1e6);
    }
    size_t stride = (size_t)w->n_jobs + 1;
    for (int32_t s = 0; s < r->n_samples; s++) {
        for (int32_t i = 0; i <= w->n_jobs; i++)
            sw_buf_printf(&b, ",\n{\"name\":\"memory\",\"ph\":\"C\",\"pid\":%d,\"ts\":%.3f,"
                              "\"args\":{\"bytes\":%lld}}", i == w->n_jobs ? 0 : (int)i + 1,
                          r->t[s] * 1e6, (long long)r->bytes[(size_t)s * stride + (size_t)i]);
    }
    sw_buf_puts(&b, "\n]}\n");
    sw_err e;
    int rc = sw_buf_write_file(&b, path, &e);
    sw_buf_free(&b);
    return rc ? cli_fail(EXIT_USER, "colocate: %s", e.msg) : 0;
}

int cmd_colocate(int argc, char **argv)
{
    const char *path = NULL, *mem_csv = NULL, *row_csv = NULL, *trace = NULL;
    int pol = CO_ZICO, oom_swap = 0;
    int json = 0, rc;
    double time_budget = 0;
    const cli_pos args[] = {{"WORKLOAD", "the workload file (docs/colocate.md)", 1, 1, &path},
                            {NULL, NULL, 0, 0, NULL}};
    const cli_opt opts[] = {
        {.name = "policy", .type = PT_CHOICE, .dst = &pol, .def = "zico",
         .choices = "time|spatial|zico",
         .help = "time (one job's iteration at a time on the whole GPU), spatial (all at once; "
                 "a job whose memory does not fit fails), zico (all at once; each iteration "
                 "starts after the smallest stall that keeps the predicted combined memory "
                 "within the GPU's)"},
        {.name = "on-oom", .type = PT_CHOICE, .dst = &oom_swap, .def = "fail",
         .choices = "fail|swap",
         .help = "spatial: a job that runs out of memory fails (fail), or starts its iteration "
                 "over with an ODSwap plan within an equal share of the memory (swap)"},
        {.name = "time-budget", .type = PT_SECONDS, .dst = &time_budget,
         .help = "search time limit for the jobs' planners that search (default: each "
                 "planner's own)"},
        {.name = "trace", .type = PT_STRING, .dst = &trace, .meta = "FILE", .flags = CLI_OUTPUT,
         .help = "write a Chrome trace (one track group per job: iterations, waits, switches, "
                 "and its memory; the total memory) for https://ui.perfetto.dev"},
        {.name = "json", .type = PT_BOOL, .dst = &json, .help = "print one JSON object"},
        {.name = "memory-csv", .type = PT_STRING, .dst = &mem_csv, .meta = "FILE",
         .flags = CLI_OUTPUT, .help = "write each job's memory and the total over time as CSV"},
        {.name = "csv", .type = PT_STRING, .dst = &row_csv, .meta = "FILE", .flags = CLI_OUTPUT,
         .help = "append one CSV row (policy, memory, makespan, peak, total normalised "
                 "throughput, failed jobs, each job's normalised throughput joined by ';'); a "
                 "header is written first when FILE is new"},
        {.name = NULL}};
    const cli_cmd cmd = {
        .name = "colocate",
        .about = "Run several training jobs together on one GPU (Zico, USENIX ATC '21): each\n"
                 "job's plan gives its memory over an iteration, the policy decides when its\n"
                 "iterations run and what they share. Prints each job's throughput (also\n"
                 "normalised to the job alone on the GPU), stalls, failures, and the peak\n"
                 "combined memory (docs/colocate.md).\n",
        .args = args,
        .opts = opts};
    if (cli_parse(&cmd, argc, argv, &rc))
        return rc;
    co_workload w;
    sw_err e;
    if (co_workload_read(path, pol == CO_SPATIAL && oom_swap, time_budget, &w, &e))
        return cli_fail(EXIT_USER, "colocate: %s", e.msg);
    co_result r;
    if (co_run(w.jobs, w.n_jobs, w.memory, pol, w.device.h2d_bw, w.device.d2h_bw,
               trace || mem_csv, &r, &e)) {
        co_workload_free(&w);
        return cli_fail(EXIT_USER, "colocate: %s", e.msg);
    }
    if (json) {
        printf("{\"policy\":\"%s\",\"memory_bytes\":%lld,\"makespan_s\":%.9g,\"peak_bytes\":%lld,"
               "\"total_normalized\":%.9g,\"jobs\":[", co_policy_name(pol), (long long)w.memory, r.makespan_s,
               (long long)r.peak_bytes, r.total_normalized);
        for (int32_t i = 0; i < w.n_jobs; i++) {
            const co_job_result *x = &r.jobs[i];
            sw_buf b;
            sw_buf_init(&b);
            sw_buf_put_jstr(&b, w.jobs[i].name);
            sw_buf_puts(&b, "");
            printf("%s{\"name\":%s,\"iteration_alone_s\":%.9g,\"utilization\":%.6g,"
                   "\"pcie\":%.6g,\"done\":%d,"
                   "\"failed\":%s,\"finish_s\":%.9g,\"iter_per_s\":%.9g,\"normalized\":%.9g,"
                   "\"stall_s\":%.9g,\"switch_s\":%.9g,\"fell_back\":%s}", i ? "," : "",
                   b.data ? b.data : "\"\"", w.jobs[i].iter_s, w.jobs[i].util, w.jobs[i].pcie, x->done,
                   x->failed ? "true" : "false", x->finish_s, x->iter_per_s, x->normalized,
                   x->stall_s, x->switch_s, x->fell_back ? "true" : "false");
            sw_buf_free(&b);
        }
        printf("]}\n");
    } else {
        printf("colocate: %d jobs, policy %s, %.3f GiB shared\n", (int)w.n_jobs, co_policy_name(pol),
               gib(w.memory));
        for (int32_t i = 0; i < w.n_jobs; i++) {
            const co_job_result *x = &r.jobs[i];
            printf("  %-16s alone %.4f s/iter, util %.2f, PCIe %.2f: %d iterations, %.3f iter/s, "
                   "normalised %.3f, stalled %.3f s%s%s%s\n", w.jobs[i].name, w.jobs[i].iter_s,
                   w.jobs[i].util, w.jobs[i].pcie, x->done, x->iter_per_s, x->normalized, x->stall_s,
                   x->fell_back ? ", out of memory: went on swapping" : "",
                   x->failed ? ", FAILED: " : "", x->failed ? x->why : "");
        }
        printf("  total normalised throughput %.3f; makespan %.3f s; peak combined memory "
               "%.3f GiB\n", r.total_normalized, r.makespan_s, gib(r.peak_bytes));
    }
    rc = 0;
    if (row_csv) {
        FILE *f = fopen(row_csv, "r");
        int fresh = !f;
        if (f)
            fclose(f);
        f = fopen(row_csv, "a");
        if (!f)
            rc = cli_fail(EXIT_USER, "colocate: cannot write %s", row_csv);
        else {
            int failed = 0;
            int64_t sum_peaks = 0;
            for (int32_t i = 0; i < w.n_jobs; i++) {
                failed += r.jobs[i].failed;
                int64_t pk = 0;
                for (int32_t k = 0; k < w.jobs[i].n; k++)
                    pk = SW_MAX(pk, w.jobs[i].level[k]);
                sum_peaks += pk;
            }
            if (fresh)
                fprintf(f, "workload,policy,memory_bytes,sum_of_peaks_bytes,makespan_s,peak_bytes,"
                           "total_normalized,failed,jobs_normalized\n");
            fprintf(f, "%s,%s%s,%lld,%lld,%.9g,%lld,%.9g,%d,", path, co_policy_name(pol),
                    pol == CO_SPATIAL && oom_swap ? "+swap" : "", (long long)w.memory,
                    (long long)sum_peaks, r.makespan_s, (long long)r.peak_bytes,
                    r.total_normalized, failed);
            for (int32_t i = 0; i < w.n_jobs; i++)
                fprintf(f, "%s%.6f", i ? ";" : "", r.jobs[i].normalized);
            fprintf(f, "\n");
            if (fclose(f))
                rc = cli_fail(EXIT_USER, "colocate: cannot write %s", row_csv);
        }
    }
    if (trace && !rc)
        rc = write_co_trace(trace, &w, &r);
    if (mem_csv) {
        FILE *f = fopen(mem_csv, "w");
        if (!f)
            rc = cli_fail(EXIT_USER, "colocate: cannot write %s", mem_csv);
        else {
            fprintf(f, "t_s");
            for (int32_t i = 0; i < w.n_jobs; i++)
                fprintf(f, ",%s", w.jobs[i].name);
            fprintf(f, ",total\n");
            for (int32_t s = 0; s < r.n_samples; s++) {
                fprintf(f, "%.9g", r.t[s]);
                for (int32_t i = 0; i <= w.n_jobs; i++)
                    fprintf(f, ",%lld", (long long)r.bytes[(size_t)s * ((size_t)w.n_jobs + 1) + (size_t)i]);
                fprintf(f, "\n");
            }
            if (fclose(f))
                rc = cli_fail(EXIT_USER, "colocate: cannot write %s", mem_csv);
        }
    }
    co_result_free(&r);
    co_workload_free(&w);
    return rc;
}

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int cmd_tradeoff(int argc, char **argv)
{
    const char *path = NULL, *rate_s = NULL;
    int csv = 0, rc;
    const cli_pos args[] = {{"PROFILE", "the profile (docs/profile-format.md)", 1, 1, &path},
                            {NULL, NULL, 0, 0, NULL}};
    const cli_opt opts[] = {
        {.name = "rate", .type = PT_STRING, .dst = &rate_s, .meta = "RATE",
         .help = "copy rate each way, e.g. 3GB/s (default: the profile's device, one way)"},
        {.name = "csv", .type = PT_BOOL, .dst = &csv, .help = "print CSV instead of a table"},
        {.name = NULL}};
    const cli_cmd cmd = {
        .name = "tradeoff",
        .about = "Swapping against recomputing each activation: for every storage a forward op\n"
                 "makes, the time to copy it out and back in (two copies at RATE, with the\n"
                 "device's copy latency each) over the time to re-run the op that made it;\n"
                 "the median and quartiles of that ratio per op type. MegEngine measured\n"
                 "about 100x for ResNet-50 at 3 GB/s (docs/planners.md).\n",
        .args = args,
        .opts = opts};
    if (cli_parse(&cmd, argc, argv, &rc))
        return rc;
    graph_profile *g;
    sw_err e;
    if (profile_read_file(path, &g, &e))
        return cli_error(&e);
    double rate = g->device.h2d_bw;
    if (rate_s && sw_parse_rate(rate_s, &rate, &e)) {
        graph_free(g);
        return cli_fail(EXIT_USER, "tradeoff: --rate: %s", e.msg);
    }
    /* ratios grouped by op type: collect (type index, ratio) */
    int32_t n = 0, cap = g->acc_off[g->n_ops] + 1;
    double *ratio = sw_malloc((size_t)cap * sizeof *ratio);
    int32_t *type_of = sw_malloc((size_t)cap * sizeof *type_of);
    const char **types = sw_malloc(((size_t)g->n_ops + 1) * sizeof *types);
    int32_t nt = 0;
    if (!ratio || !type_of || !types) {
        rc = cli_fail(EXIT_USER, "out of memory");
        goto done;
    }
    for (int32_t o = 0; o < g->n_ops; o++) {
        const graph_op *op = &g->ops[o];
        if (op->phase != GP_FORWARD || !(op->time_s > 0))
            continue;
        int32_t ti = -1;
        for (int32_t k = 0; k < nt && ti < 0; k++)
            if (!strcmp(types[k], op->type))
                ti = k;
        for (int32_t j = g->acc_off[o]; j < g->acc_off[o + 1]; j++) {
            int32_t s = g->acc[j];
            if (!(g->acc_flag[j] & GA_CREATE) || g->tensors[s].persistent || g->bytes[s] <= 0)
                continue;
            if (ti < 0) {
                ti = nt;
                types[nt++] = op->type;
            }
            double swap = 2 * (g->device.copy_latency_s + (double)g->bytes[s] / rate);
            ratio[n] = swap / op->time_s;
            type_of[n++] = ti;
        }
    }
    double *tmp = sw_malloc(((size_t)n + 1) * sizeof *tmp);
    if (!tmp) {
        rc = cli_fail(EXIT_USER, "out of memory");
        goto done;
    }
    if (csv)
        printf("op_type,activations,q25,median,q75\n");
    else
        printf("swap (out and in at %.3g GB/s) over recompute, per activation of %s:\n\n"
               "| op type | activations | 25%% | median | 75%% |\n|---|---:|---:|---:|---:|\n",
               rate / 1e9, g->name);
    for (int32_t k = -1; k < nt; k++) {
        int32_t m = 0;
        for (int32_t i = 0; i < n; i++)
            if (k < 0 || type_of[i] == k)
                tmp[m++] = ratio[i];
        if (!m)
            continue;
        qsort(tmp, (size_t)m, sizeof *tmp, cmp_dbl);
        const char *name = k < 0 ? "all" : types[k];
        if (csv)
            printf("%s,%d,%.4g,%.4g,%.4g\n", name, m, tmp[m / 4], tmp[m / 2], tmp[(3 * m) / 4]);
        else
            printf("| %s | %d | %.3g | %.3g | %.3g |\n", name, m, tmp[m / 4], tmp[m / 2],
                   tmp[(3 * m) / 4]);
    }
    sw_free(tmp);
    rc = 0;
done:
    sw_free(ratio);
    sw_free(type_of);
    sw_free(types);
    graph_free(g);
    return rc;
}
