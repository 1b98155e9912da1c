/* cmd_serve.c: `swapsim serve`: serving several models on one GPU
   (docs/serving.md). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../planners/planner.h"
#include "../profiles/profile_io.h"
#include "../sharing/serve.h"
#include "cli.h"

/* --rates R1,R2,... (or the one --rate) into sweep[0..*nr). 0, or 1 after
   the message. */
static int parse_rates(const char *rates, double rate, double sweep[256], int *nr)
{
    *nr = 0;
    if (!rates) {
        sweep[(*nr)++] = rate;
        return 0;
    }
    const char *s = rates;
    while (*s && *nr < 256) {
        char *end;
        double v = strtod(s, &end);
        if (end == s || !(v > 0) || !isfinite(v) || (*end && *end != ',')) {
            cli_fail(EXIT_USER, "serve: --rates: expected positive numbers separated by commas, "
                     "got '%s'", rates);
            return 1;
        }
        sweep[(*nr)++] = v;
        s = *end ? end + 1 : end;
    }
    return 0;
}

/* One rate's result: a JSON object or a line on stdout, and a CSV row. */
static void put_rate(const serve_prep *prep, const serve_result *r, int json, FILE *csv)
{
    const char *pol = serve_policy_name(prep->cfg.policy);
    int n = (int)prep->cfg.n_models;
    long long memory = (long long)prep->cfg.memory;
    if (json)
        printf("{\"policy\":\"%s\",\"models\":%d,\"memory_bytes\":%lld,\"rate\":%.9g,"
               "\"requests\":%lld,\"p50_s\":%.9g,\"p90_s\":%.9g,\"p99_s\":%.9g,\"mean_s\":"
               "%.9g,\"max_s\":%.9g,\"throughput\":%.9g,\"samples_per_s\":%.9g,"
               "\"utilization\":%.9g,\"cold\":%lld,\"weight_bytes_moved\":%.9g}\n",
               pol, n, memory, r->rate, (long long)r->requests, r->p50_s, r->p90_s, r->p99_s,
               r->mean_s, r->max_s, r->throughput, r->samples_per_s, r->utilization,
               (long long)r->cold, r->weight_bytes_moved);
    else
        printf("  %8.1f samples/s offered: p50 %.4f s  p90 %.4f s  p99 %.4f s  served %.1f "
               "samples/s (%.2f requests/s)  GPU busy %.1f%%  cold %lld\n", r->rate, r->p50_s,
               r->p90_s, r->p99_s, r->samples_per_s, r->throughput, 100 * r->utilization,
               (long long)r->cold);
    if (csv)
        fprintf(csv, "%s,%d,%lld,%.9g,%lld,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%lld,%.9g,"
                     "%.9g,%.9g\n", pol, n, memory, r->rate, (long long)r->requests, r->p50_s,
                r->p90_s, r->p99_s, r->mean_s, r->max_s, r->throughput, r->samples_per_s,
                r->utilization, (long long)r->cold, r->weight_bytes_moved, prep->info[0].hot_s,
                prep->info[0].cold_s);
}

int cmd_serve(int argc, char **argv)
{
    cli_list models;
    memset(&models, 0, sizeof models);
    const char *memory = NULL, *rates = NULL, *out = NULL;
    int pol_ix = 0, share_search = 0; /* pol_ix: an index into serve_policy_at */
    int copies = 1, json = 0, threads = 1, generations = 20, population = 16, rc;
    int64_t requests = 20000, seed = 1;
    double rate = 0, zipf = 0;
    const cli_pos args[] = {{"PROFILE", "inference profiles, one per model (e.g. swapsim model "
                             "resnet --depth 152 --batch 16 --inference)", 1, CLI_MANY, &models},
                            {NULL, NULL, 0, 0, NULL}};
    const cli_opt opts[] = {
        {.name = "policy", .type = PT_CHOICE, .dst = &pol_ix, .def = "swapadvisor",
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
    if (parse_rates(rates, rate, sweep, &nr))
        return EXIT_USER;
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
    const serve_policy *pol = serve_policy_at((size_t)pol_ix);
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
               "(model 0)%s\n", n, n == 1 ? "" : "s", serve_policy_name(pol), cli_gib(cfg.memory),
               prep.info[0].hot_s,
               prep.info[0].cold_s,
               !pol->swaps              ? ""
               : prep.share_alpha == 0  ? "; equal shares"
               : prep.share_alpha == 1  ? "; shares by popularity"
                                        : "; shares by the square root of popularity");
    for (int i = 0; i < nr; i++) {
        serve_result r;
        if (serve_run(&prep, sweep[i], requests, &r, &e)) {
            rc = cli_fail(EXIT_USER, "serve: %s", e.msg);
            goto done;
        }
        put_rate(&prep, &r, json, csv);
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
