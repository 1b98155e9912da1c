/* cmd_colocate.c: `swapsim colocate`: several training jobs on one GPU
   (docs/colocate.md). */
#include <stdio.h>
#include <string.h>

#include "../sharing/colocate.h"
#include "cli.h"

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

/* The run's result on stdout: one JSON object, or a line per job. */
static void print_run(const co_workload *w, const co_result *r, const co_policy *pol, int json)
{
    if (json) {
        printf("{\"policy\":\"%s\",\"memory_bytes\":%lld,\"makespan_s\":%.9g,\"peak_bytes\":%lld,"
               "\"total_normalized\":%.9g,\"jobs\":[", co_policy_name(pol), (long long)w->memory, r->makespan_s,
               (long long)r->peak_bytes, r->total_normalized);
        for (int32_t i = 0; i < w->n_jobs; i++) {
            const co_job_result *x = &r->jobs[i];
            sw_buf b;
            sw_buf_init(&b);
            sw_buf_put_jstr(&b, w->jobs[i].name);
            sw_buf_puts(&b, "");
            printf("%s{\"name\":%s,\"iteration_alone_s\":%.9g,\"utilization\":%.6g,"
                   "\"pcie\":%.6g,\"done\":%d,"
                   "\"failed\":%s,\"finish_s\":%.9g,\"iter_per_s\":%.9g,\"normalized\":%.9g,"
                   "\"stall_s\":%.9g,\"switch_s\":%.9g,\"fell_back\":%s}", i ? "," : "",
                   b.data ? b.data : "\"\"", w->jobs[i].iter_s, w->jobs[i].util, w->jobs[i].pcie, x->done,
                   x->failed ? "true" : "false", x->finish_s, x->iter_per_s, x->normalized,
                   x->stall_s, x->switch_s, x->fell_back ? "true" : "false");
            sw_buf_free(&b);
        }
        printf("]}\n");
    } else {
        printf("colocate: %d jobs, policy %s, %.3f GiB shared\n", (int)w->n_jobs, co_policy_name(pol),
               cli_gib(w->memory));
        for (int32_t i = 0; i < w->n_jobs; i++) {
            const co_job_result *x = &r->jobs[i];
            printf("  %-16s alone %.4f s/iter, util %.2f, PCIe %.2f: %d iterations, %.3f iter/s, "
                   "normalised %.3f, stalled %.3f s%s%s%s\n", w->jobs[i].name, w->jobs[i].iter_s,
                   w->jobs[i].util, w->jobs[i].pcie, x->done, x->iter_per_s, x->normalized, x->stall_s,
                   x->fell_back ? ", out of memory: went on swapping" : "",
                   x->failed ? ", FAILED: " : "", x->failed ? x->why : "");
        }
        printf("  total normalised throughput %.3f; makespan %.3f s; peak combined memory "
               "%.3f GiB\n", r->total_normalized, r->makespan_s, cli_gib(r->peak_bytes));
    }
}

int cmd_colocate(int argc, char **argv)
{
    const char *path = NULL, *mem_csv = NULL, *row_csv = NULL, *trace = NULL;
    int pol_ix = 0, oom_swap = 0; /* pol_ix: an index into co_policy_at */
    int json = 0, rc;
    double time_budget = 0;
    const cli_pos args[] = {{"WORKLOAD", "the workload file (docs/colocate.md)", 1, 1, &path},
                            {NULL, NULL, 0, 0, NULL}};
    const cli_opt opts[] = {
        {.name = "policy", .type = PT_CHOICE, .dst = &pol_ix, .def = "zico",
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
    const co_policy *pol = co_policy_at((size_t)pol_ix);
    co_workload w;
    sw_err e;
    if (co_workload_read(path, pol->oom_fallback && oom_swap, time_budget, &w, &e))
        return cli_fail(EXIT_USER, "colocate: %s", e.msg);
    co_result r;
    if (co_run(w.jobs, w.n_jobs, w.memory, pol, w.device.h2d_bw, w.device.d2h_bw,
               trace || mem_csv, &r, &e)) {
        co_workload_free(&w);
        return cli_fail(EXIT_USER, "colocate: %s", e.msg);
    }
    print_run(&w, &r, pol, json);
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
                    pol->oom_fallback && oom_swap ? "+swap" : "", (long long)w.memory,
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
