/* cmd_plan.c: `swapsim plan`, `verify`, `simulate` and `run`. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../planners/planner.h"
#include "../profiles/profile_io.h"
#include "../sim/plan_io.h"
#include "../sim/simulate.h"
#include "../sim/verify.h"
#include "cli.h"

typedef struct plan_args {
    const char *planner, *memory, *seed, *time_budget, *threads, *log, *out, *trace, *iters;
    const char *sets[64];
    int nsets, json, no_verify;
    cli_device dev;
} plan_args;

/* options of plan/run; returns 1 consumed, 0 not, -1 usage error */
static int plan_opt(cli_args *a, plan_args *p, int with_output)
{
    const char *v;
    int r;
    struct {
        const char *name;
        const char **dst;
    } o[] = {{"--planner", &p->planner}, {"--memory", &p->memory}, {"--seed", &p->seed},
             {"--time-budget", &p->time_budget}, {"--threads", &p->threads}, {"--log", &p->log}};
    for (size_t i = 0; i < sizeof o / sizeof o[0]; i++)
        if ((r = cli_optval(a, o[i].name, o[i].dst)) != 0)
            return r;
    if (with_output && ((r = cli_optval(a, "-o", &p->out)) != 0 || (r = cli_optval(a, "--output", &p->out)) != 0))
        return r;
    if ((r = cli_optval(a, "--set", &v)) != 0) {
        if (r < 0)
            return r;
        if (p->nsets >= 64) {
            cli_usage(a->cmd, "too many --set options");
            return -1;
        }
        p->sets[p->nsets++] = v;
        return 1;
    }
    return cli_device_opt(a, &p->dev);
}

static const char *plan_opts_help =
    "  --planner NAME        planner ('swapsim planners' lists them)\n"
    "  --memory SIZE         device memory budget: 16GiB, 16G (binary), 16GB (decimal),\n"
    "                        512MiB, plain bytes, or 0.4x (a fraction of the ideal plan's\n"
    "                        peak memory); default: the device's memory\n"
    "  --seed N              random seed (default 1)\n"
    "  --time-budget SECONDS search time limit for planners that search\n"
    "  --threads N           worker threads (default 1); results do not depend on it\n"
    "  --set KEY=VALUE       planner hyperparameter ('swapsim planners --verbose')\n"
    "  --log FILE            convergence log (CSV) for planners that search\n"
    "  --device NAME         plan for another built-in device (memory and PCIe)\n"
    "  --device-set KEY=VALUE override one device figure ('swapsim devices --help')\n";

/* Load the profile, apply the device, resolve the budget, run the planner. */
static int make_plan(const char *profile_path, plan_args *pa, plan **out)
{
    *out = NULL;
    sw_err e;
    graph_profile *g;
    if (!pa->planner)
        return cli_usage("plan", "missing --planner NAME");
    const planner *pl = planner_find(pa->planner);
    if (!pl) {
        char list[512] = "";
        for (size_t i = 0; i < planner_count(); i++) {
            strncat(list, i ? ", " : "", sizeof list - strlen(list) - 1);
            strncat(list, planner_at(i)->name, sizeof list - strlen(list) - 1);
        }
        return cli_fail(EXIT_USER, "unknown planner '%s' (expected one of: %s)", pa->planner, list);
    }
    if (profile_read_file(profile_path, &g, &e))
        return cli_error(&e);
    if (cli_device_any(&pa->dev) && cli_device_resolve(&pa->dev, &g->device, &g->device)) {
        graph_free(g);
        return EXIT_USER;
    }
    planner_opts o;
    if (planner_opts_init(&o, pl)) {
        graph_free(g);
        return cli_fail(EXIT_USER, "out of memory");
    }
    int rc = 0;
    int64_t v64;
    if (planner_resolve_budget(g, pa->memory, &o.memory_budget, &e)) {
        rc = e.code == SW_EINVAL ? cli_fail(EXIT_USER, "--memory: %s", e.msg) : cli_error(&e);
        goto done;
    }
    if (pa->seed) {
        if (sw_parse_i64(pa->seed, &v64) || v64 < 0) {
            rc = cli_fail(EXIT_USER, "--seed %s: expected a non-negative integer", pa->seed);
            goto done;
        }
        o.seed = (uint64_t)v64;
    }
    if (pa->threads) {
        if (sw_parse_i64(pa->threads, &v64) || v64 < 1 || v64 > 1024) {
            rc = cli_fail(EXIT_USER, "--threads %s: expected an integer from 1 to 1024", pa->threads);
            goto done;
        }
        o.threads = (int)v64;
    }
    if (pa->time_budget && sw_parse_seconds(pa->time_budget, &o.time_budget_s, &e)) {
        rc = cli_fail(EXIT_USER, "--time-budget: %s", e.msg);
        goto done;
    }
    for (int i = 0; i < pa->nsets; i++)
        if (params_set_kv(&o.params, pa->sets[i], &e)) {
            rc = cli_fail(EXIT_USER, "planner %s: %s", pl->name, e.msg);
            goto done;
        }
    o.log_path = pa->log;
    o.progress = isatty(2);
    plan *p;
    if (planner_run(pl, g, &o, &p, &e)) {
        rc = cli_fail(EXIT_USER, "planner %s: %s", pl->name, e.msg);
        goto done;
    }
    p->prof = g;
    p->owns_prof = 1;
    g = NULL;
    *out = p;
done:
    planner_opts_free(&o);
    graph_free(g);
    return rc;
}

static void put_result_json(const plan *p, const sim_result *r, int verified, sw_buf *b)
{
    const graph_profile *g = p->prof;
    sw_buf_puts(b, "{\"profile\":");
    sw_buf_put_jstr(b, g->name);
    sw_buf_puts(b, ",\"device\":");
    sw_buf_put_jstr(b, g->device.name);
    sw_buf_puts(b, ",\"planner\":");
    sw_buf_put_jstr(b, p->planner ? p->planner : "unknown");
    sw_buf_printf(b, ",\"seed\":%llu,\"memory_budget_bytes\":%lld,\"batch\":%lld",
                  (unsigned long long)p->seed, (long long)p->budget, (long long)g->batch);
    struct {
        const char *k;
        double v;
    } f[] = {{"iteration_time_s", r->iteration_time_s},
             {"ideal_time_s", r->ideal_time_s},
             {"normalized_throughput", r->normalized_throughput},
             {"samples_per_s", r->samples_per_s},
             {"recompute_time_s", r->recompute_time_s},
             {"stall_swap_in_s", r->stall_swap_in_s},
             {"stall_memory_s", r->stall_memory_s},
             {"stall_dependency_s", r->stall_dependency_s},
             {"h2d_busy_s", r->h2d_busy_s},
             {"d2h_busy_s", r->d2h_busy_s},
             {"planning_time_s", p->planning_time_s}};
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
        sw_buf_printf(b, ",\"%s\":", f[i].k);
        sw_buf_put_f64(b, f[i].v);
    }
    sw_buf_printf(b, ",\"peak_memory_bytes\":%lld,\"reserved_memory_bytes\":%lld,"
                  "\"swap_in_bytes\":%lld,\"swap_out_bytes\":%lld,\"swap_ins\":%d,"
                  "\"swap_outs\":%d,\"drops\":%d,\"reruns\":%d,\"tasks\":%d,"
                  "\"iterations_simulated\":%d,\"steady\":%s,\"verified\":%s,\"memory_model\":\"%s\"}\n",
                  (long long)r->peak_memory_bytes, (long long)r->reserved_bytes,
                  (long long)r->swap_in_bytes, (long long)r->swap_out_bytes, r->swap_ins,
                  r->swap_outs, r->drops, r->reruns, p->n_tasks, r->iterations,
                  r->steady ? "true" : "false", verified ? "true" : "false",
                  p->mem_kind == MEM_POOL ? "pool" : p->policy);
    if (p->notes) { /* the planner's own account (e.g. dtr's evictions, fragmentation) */
        b->len--; /* reopen the object */
        b->len--;
        sw_buf_puts(b, ",\"notes\":");
        sw_buf_put_jstr(b, p->notes);
        sw_buf_puts(b, "}\n");
    }
}

static void print_result(const plan *p, const sim_result *r, int verified, int json)
{
    if (json) {
        sw_buf b;
        sw_buf_init(&b);
        put_result_json(p, r, verified, &b);
        fputs(b.data, stdout);
        sw_buf_free(&b);
        return;
    }
    char h1[32], h2[32], h3[32], h4[32];
    printf("profile %s on %s, planner %s (seed %llu), budget %s\n", p->prof->name,
           p->prof->device.name, p->planner ? p->planner : "?", (unsigned long long)p->seed,
           sw_fmt_bytes(p->budget, h1, sizeof h1));
    printf("  iteration time    %.6f s  (ideal %.6f s, %.1f%% of ideal throughput)\n",
           r->iteration_time_s, r->ideal_time_s, 100 * r->normalized_throughput);
    printf("  throughput        %.2f samples/s\n", r->samples_per_s);
    printf("  peak memory       %s  (reserved %s)\n", sw_fmt_bytes(r->peak_memory_bytes, h2, sizeof h2),
           sw_fmt_bytes(r->reserved_bytes, h3, sizeof h3));
    printf("  swapped in / out  %s / %s per iteration (%d in, %d out, %d dropped)\n",
           sw_fmt_bytes(r->swap_in_bytes, h2, sizeof h2), sw_fmt_bytes(r->swap_out_bytes, h4, sizeof h4),
           r->swap_ins, r->swap_outs, r->drops);
    printf("  recompute         %.6f s (%d reruns)\n", r->recompute_time_s, r->reruns);
    printf("  compute stalls    swap-in %.6f s, memory %.6f s, dependency %.6f s\n",
           r->stall_swap_in_s, r->stall_memory_s, r->stall_dependency_s);
    printf("  plan              %d tasks, %s, planned in %.3f s, %s\n", p->n_tasks,
           p->mem_kind == MEM_POOL ? "size-class pool" : p->policy, p->planning_time_s,
           verified ? "verified safe" : "not verified");
    if (p->notes)
        printf("  planner notes     %s\n", p->notes);
    if (!r->steady)
        printf("  note: the iteration time did not converge in %d iterations; reported the mean "
               "of the last ones\n", r->iterations);
}

int cmd_plan(int argc, char **argv)
{
    cli_args a = {argc, argv, 1, "plan", {0}, 0};
    plan_args pa;
    memset(&pa, 0, sizeof pa);
    int r;
    while (a.i < argc) {
        if (cli_flag(&a, "--help")) {
            printf("usage: swapsim plan PROFILE --planner NAME [--memory SIZE] [options] -o PLAN\n\n"
                   "Make a plan and write it as JSON (docs/plan-format.md). Every plan is\n"
                   "verified before it is written; an unsafe plan is an error.\n\noptions:\n%s"
                   "  -o FILE               output plan (- for standard output)\n", plan_opts_help);
            return 0;
        }
        if ((r = plan_opt(&a, &pa, 1)) != 0) {
            if (r < 0)
                return EXIT_USAGE;
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
        return cli_usage("plan", "expected one PROFILE");
    if (!pa.out)
        return cli_usage("plan", "missing -o PLAN");
    plan *p;
    int rc = make_plan(a.pos[0], &pa, &p);
    if (rc)
        return rc;
    sw_err e;
    if (plan_verify(p, NULL, &e)) {
        plan_free(p);
        return cli_fail(EXIT_USER, "planner %s produced a plan that fails verification (a "
                        "planner bug): %s", pa.planner, e.msg);
    }
    rc = plan_write_file(p, pa.out, &e);
    plan_free(p);
    return rc ? cli_error(&e) : 0;
}

int cmd_verify(int argc, char **argv)
{
    cli_args a = {argc, argv, 1, "verify", {0}, 0};
    int r, quiet = 0;
    const char *memory = NULL;
    while (a.i < argc) {
        if (cli_flag(&a, "--help")) {
            printf("usage: swapsim verify PLAN [--memory SIZE] [--quiet]\n\n"
                   "Check that PLAN is safe under every execution order its streams and edges\n"
                   "allow: inputs resident and current when an op runs, no two residencies\n"
                   "sharing memory unless ordered, capacity kept, nothing needed dropped unless\n"
                   "its host copy is current or it is recomputed, host copies read only when\n"
                   "current, and the same persistent set resident at iteration start and end.\n"
                   "Exit 0 if safe; otherwise exit 1 naming the first violation.\n\n"
                   "  --memory SIZE  check capacity against this budget (16GiB, 16G, 16GB,\n"
                   "                 bytes, or 0.4x of the ideal plan's peak) instead of the\n"
                   "                 budget the plan itself declares\n"
                   "  --quiet, -q    print nothing when the plan is safe\n");
            return 0;
        }
        if (cli_flag(&a, "--quiet") || cli_flag(&a, "-q")) {
            quiet = 1;
            continue;
        }
        if ((r = cli_optval(&a, "--memory", &memory)) != 0) {
            if (r < 0)
                return EXIT_USAGE;
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
        return cli_usage("verify", "expected one PLAN");
    plan *p;
    sw_err e;
    if (plan_read_file(a.pos[0], &p, &e))
        return cli_error(&e);
    if (memory) { /* the budget from outside replaces the one the plan declares */
        int64_t budget;
        if (planner_resolve_budget(p->prof, memory, &budget, &e)) {
            plan_free(p);
            return cli_fail(EXIT_USER, "--memory: %s", e.msg);
        }
        p->budget = budget;
    }
    int rc = plan_verify(p, NULL, &e);
    if (rc) {
        plan_free(p);
        return cli_fail(EXIT_USER, "%s: %s", a.pos[0], e.msg);
    }
    if (!quiet)
        printf("%s: safe (%d tasks, planner %s)\n", a.pos[0], p->n_tasks,
               p->planner ? p->planner : "unknown");
    plan_free(p);
    return 0;
}

static int simulate_and_print(plan *p, plan_args *pa, int verified)
{
    sw_err e;
    sim_result r;
    sim_opts so = {0};
    if (pa->iters) {
        int64_t n;
        if (sw_parse_i64(pa->iters, &n) || n < 3 || n > 4096)
            return cli_fail(EXIT_USER, "--max-iterations %s: expected an integer from 3 to 4096",
                            pa->iters);
        so.max_iters = (int)n;
    }
    if (sim_plan(p, NULL, &so, &r, &e))
        return cli_error(&e);
    if (pa->trace && sim_write_trace(p, NULL, pa->trace, &e))
        return cli_error(&e);
    print_result(p, &r, verified, pa->json);
    return 0;
}

int cmd_simulate(int argc, char **argv)
{
    cli_args a = {argc, argv, 1, "simulate", {0}, 0};
    plan_args pa;
    memset(&pa, 0, sizeof pa);
    int r;
    while (a.i < argc) {
        if (cli_flag(&a, "--help")) {
            printf("usage: swapsim simulate PLAN [--trace FILE] [--json] [--max-iterations N]\n"
                   "                       [--device NAME] [--device-set KEY=VALUE]...\n\n"
                   "Time PLAN: iterations are repeated until the iteration time is steady. The\n"
                   "plan is verified first (--no-verify skips it). --trace writes a Chrome trace\n"
                   "of the last two iterations (open it in Perfetto or chrome://tracing). --json\n"
                   "prints one object with the fields listed in docs/cli.md. A device override\n"
                   "changes PCIe figures for a what-if; op times stay those of the profile.\n");
            return 0;
        }
        if (cli_flag(&a, "--json")) {
            pa.json = 1;
            continue;
        }
        if (cli_flag(&a, "--no-verify")) {
            pa.no_verify = 1;
            continue;
        }
        if ((r = cli_optval(&a, "--trace", &pa.trace)) != 0 ||
            (r = cli_optval(&a, "--max-iterations", &pa.iters)) != 0 ||
            (r = cli_device_opt(&a, &pa.dev)) != 0) {
            if (r < 0)
                return EXIT_USAGE;
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
        return cli_usage("simulate", "expected one PLAN");
    plan *p;
    sw_err e;
    if (plan_read_file(a.pos[0], &p, &e))
        return cli_error(&e);
    if (cli_device_any(&pa.dev) && cli_device_resolve(&pa.dev, &p->prof->device, &p->prof->device)) {
        plan_free(p);
        return EXIT_USER;
    }
    if (!pa.no_verify && plan_verify(p, NULL, &e)) {
        plan_free(p);
        return cli_fail(EXIT_USER, "%s: %s", a.pos[0], e.msg);
    }
    int rc = simulate_and_print(p, &pa, !pa.no_verify);
    plan_free(p);
    return rc;
}

int cmd_run(int argc, char **argv)
{
    cli_args a = {argc, argv, 1, "run", {0}, 0};
    plan_args pa;
    memset(&pa, 0, sizeof pa);
    int r;
    while (a.i < argc) {
        if (cli_flag(&a, "--help")) {
            printf("usage: swapsim run PROFILE --planner NAME [--memory SIZE] [options]\n\n"
                   "Plan, verify and simulate in one go and print the result (--json: one object,\n"
                   "fields in docs/cli.md).\n\noptions:\n%s"
                   "  -o FILE               also write the plan\n"
                   "  --trace FILE          write a Chrome trace of the steady state\n"
                   "  --json                print the result as one JSON object\n"
                   "  --max-iterations N    simulation iteration cap (default 64)\n",
                   plan_opts_help);
            return 0;
        }
        if (cli_flag(&a, "--json")) {
            pa.json = 1;
            continue;
        }
        if ((r = cli_optval(&a, "--trace", &pa.trace)) != 0 ||
            (r = cli_optval(&a, "--max-iterations", &pa.iters)) != 0) {
            if (r < 0)
                return EXIT_USAGE;
            continue;
        }
        if ((r = plan_opt(&a, &pa, 1)) != 0) {
            if (r < 0)
                return EXIT_USAGE;
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
        return cli_usage("run", "expected one PROFILE");
    plan *p;
    int rc = make_plan(a.pos[0], &pa, &p);
    if (rc)
        return rc;
    sw_err e;
    if (plan_verify(p, NULL, &e)) {
        plan_free(p);
        return cli_fail(EXIT_USER, "planner %s produced a plan that fails verification (a "
                        "planner bug): %s", pa.planner, e.msg);
    }
    if (pa.out && plan_write_file(p, pa.out, &e)) {
        plan_free(p);
        return cli_error(&e);
    }
    rc = simulate_and_print(p, &pa, 1);
    plan_free(p);
    return rc;
}
