/* cmd_plan.c: `swapsim plan`, `verify`, `simulate` and `run`. */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../experiments/mpi.h"
#include "../experiments/pipeline.h"
#include "../planners/planner.h"
#include "../profiles/profile_io.h"
#include "../sim/plan_io.h"
#include "../sim/simulate.h"
#include "../sim/verify.h"
#include "cli.h"

typedef struct plan_args {
    const char *planner, *memory, *log, *out, *trace;
    int64_t seed;
    double time_budget;
    int threads, iters, json, no_verify;
    int oversubscribe, progress; /* --allow-oversubscribe; --progress (choice index) */
    cli_list sets;
    cli_device dev;
} plan_args;

/* the options of plan and run (and of simulate: trace, json, iterations) */
#define PLAN_OPTIONS(pa)                                                                          \
    {.name = "planner", .type = PT_STRING, .dst = &(pa).planner, .meta = "NAME",                 \
     .flags = CLI_REQUIRED, .help = "planner ('swapsim planners' lists them)"},                  \
    {.name = "memory", .type = PT_SIZE, .dst = &(pa).memory, .flags = CLI_FRACTION,              \
     .help = "device memory budget: 16GiB, 16G (binary), 16GB (decimal), 512MiB, 4096B, or "    \
             "0.4x (a fraction of the ideal plan's peak memory); a number needs its unit; a "   \
             "size above the device's memory needs --allow-oversubscribe; default: the "        \
             "device's memory"},                                                                 \
    {.name = "allow-oversubscribe", .type = PT_BOOL, .dst = &(pa).oversubscribe,                 \
     .help = "accept a --memory above the device's memory (a what-if for a larger GPU)"},       \
    {.name = "seed", .type = PT_INT, .dst = &(pa).seed, .def = "1", .min = 0, .max = INFINITY,   \
     .flags = CLI_INT64, .help = "random seed"},                                                 \
    {.name = "time-budget", .type = PT_SECONDS, .dst = &(pa).time_budget,                        \
     .help = "search time limit for planners that search"},                                      \
    {.name = "threads", .type = PT_INT, .dst = &(pa).threads, .def = "1", .min = 1, .max = 1024, \
     .help = "worker threads; results do not depend on it"},                                     \
    {.name = "set", .type = PT_STRING, .dst = &(pa).sets, .flags = CLI_MULTI | CLI_KEYVAL,       \
     .help = "planner hyperparameter ('swapsim planners --verbose')"},                           \
    {.name = "log", .type = PT_STRING, .dst = &(pa).log, .meta = "FILE", .flags = CLI_OUTPUT,    \
     .help = "convergence log (CSV) for planners that search"},                                  \
    {.name = "progress", .type = PT_CHOICE, .dst = &(pa).progress, .def = "auto",               \
     .choices = CLI_PROGRESS_CHOICES, .help = "search progress on standard error: a bar "        \
     "rewritten in place, a line at every tenth of the search, or none; auto: a bar on a "       \
     "terminal, lines elsewhere ($SWAPSIM_PROGRESS=none|bar|lines changes what auto means)"},    \
    {.name = "device", .type = PT_STRING, .dst = &(pa).dev.name, .meta = CLI_DEVICE_META,       \
     .help = "plan for another device, built-in or a device file (memory and PCIe)"},            \
    {.name = "device-set", .type = PT_STRING, .dst = &(pa).dev.sets,                             \
     .flags = CLI_MULTI | CLI_KEYVAL, .help = "override one device figure ('swapsim devices --help')"}

#define SIM_OPTIONS(pa, trace_help)                                                               \
    {.name = "trace", .type = PT_STRING, .dst = &(pa).trace, .meta = "FILE", .help = trace_help, \
     .flags = CLI_OUTPUT},                                                                       \
    {.name = "json", .type = PT_BOOL, .dst = &(pa).json,                                         \
     .help = "print the result as one JSON object (fields in docs/cli.md)"},                     \
    {.name = "max-iterations", .type = PT_INT, .dst = &(pa).iters, .def = "64", .min = 3,        \
     .max = 4096, .help = "simulation iteration cap"}

/* seconds a planner has to stop after SIGINT or SIGTERM (those that search
   stop within a generation; the others are given this long) */
#define INTERRUPT_GRACE_S 5

static const char *planner_name(size_t i) { return planner_at(i)->name; }

/* Load the profile, apply the device, resolve the budget, run the planner. */
static int make_plan(const char *profile_path, plan_args *pa, plan **out)
{
    *out = NULL;
    sw_err e;
    graph_profile *g;
    const planner *pl = planner_find(pa->planner);
    if (!pl)
        return cli_unknown_name("planner", pa->planner, planner_count(), planner_name);
    /* under mpirun: the ranks search one problem together (island searches) */
    struct swmpi *m;
    int rc = cli_mpi_start("plan and run", &m), spread = m && swmpi_size(m) > 1;
    if (rc)
        return rc;
    if (spread) {
        int islands = 0;
        for (const param_def *d = pl->params; d && d->key && !islands; d++)
            islands = !strcmp(d->key, "islands");
        if (!islands)
            return cli_fail(EXIT_USER, "planner %s: under mpirun -np %d: only island searches "
                            "use several ranks (--planner swapadvisor --set islands=N; "
                            "docs/cluster.md)", pl->name, swmpi_size(m));
    }
    int lrc = profile_read_file(profile_path, &g, &e);
    /* a profile missing on one node fails every rank: none waits for it */
    rc = spread ? swmpi_agree(m, lrc, &e, &e) : lrc;
    if (rc) {
        if (!lrc) /* read here, failed on another rank */
            graph_free(g);
        return cli_error(&e);
    }
    if (cli_device_any(&pa->dev) && cli_device_resolve(&pa->dev, &g->device, &g->device)) {
        graph_free(g);
        return EXIT_USER;
    }
    cli_warn_no_times(g, profile_path);
    planner_opts o;
    if (planner_opts_init(&o, pl)) {
        graph_free(g);
        return cli_fail(EXIT_USER, "out of memory");
    }
    if (spread)
        o.comm = swmpi_ga_comm(m);
    if (planner_resolve_budget(g, pa->memory, &o.memory_budget, &e)) {
        rc = e.code == SW_EINVAL ? cli_fail(EXIT_USER, "--memory: %s", e.msg) : cli_error(&e);
        goto done;
    }
    if (cli_over_device(pa->memory, o.memory_budget, &g->device) && !pa->oversubscribe) {
        char h1[32], h2[32];
        rc = cli_fail(EXIT_USER, "--memory %s: %s is above the %s's memory (%s); "
                      "--allow-oversubscribe plans for it anyway", pa->memory,
                      sw_fmt_bytes(o.memory_budget, h1, sizeof h1), g->device.name,
                      sw_fmt_bytes(g->device.memory_bytes, h2, sizeof h2));
        goto done;
    }
    o.seed = (uint64_t)pa->seed;
    o.threads = pa->threads;
    o.time_budget_s = pa->time_budget;
    for (int i = 0; i < pa->sets.n; i++)
        if (params_set_kv(&o.params, pa->sets.item[i], &e)) {
            rc = cli_fail(EXIT_USER, "planner %s: %s", pl->name, e.msg);
            goto done;
        }
    o.log_path = pa->log;
    o.progress = cli_progress_mode(pa->progress);
    o.stop = cli_stop_hook; /* SIGINT, SIGTERM: the best plan so far */
    cli_interrupt_install(pl->name, INTERRUPT_GRACE_S);
    plan *p;
    int prc = pipe_plan(pl, &g, &o, &p, &e); /* p takes g over */
    cli_interrupt_done();
    if (prc && cli_interrupted()) {
        char why[sizeof e.msg + 16];
        snprintf(why, sizeof why, "no plan: %s", e.msg);
        rc = cli_interrupt_end(why);
        goto done;
    }
    if (prc) {
        if (e.code == SW_ENOFIT)
            cli_json_nofit();
        rc = cli_fail(EXIT_USER, "planner %s: %s", pl->name, e.msg);
        goto done;
    }
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
    if (verified) { /* safe within its budget */
        b->len -= 2; /* reopen the object */
        sw_buf_puts(b, ",\"fits\":true}\n");
    }
    if (cli_interrupted()) { /* the best plan found before SIGINT or SIGTERM */
        b->len -= 2;
        sw_buf_printf(b, ",\"interrupted\":\"%s\",\"evaluations\":%ld}\n",
                      cli_interrupted() == SIGTERM ? "SIGTERM" : "SIGINT", cli_interrupt_work());
    }
    if (p->solver_status) { /* an exact planner's solve */
        b->len -= 2; /* reopen the object */
        sw_buf_puts(b, ",\"solver_status\":");
        sw_buf_put_jstr(b, p->solver_status);
        sw_buf_puts(b, ",\"solver_objective_s\":");
        sw_buf_put_f64(b, p->solver_objective_s);
        sw_buf_puts(b, ",\"solver_bound_s\":");
        sw_buf_put_f64(b, p->solver_bound_s);
        sw_buf_puts(b, ",\"solver_gap_pct\":");
        sw_buf_put_f64(b, 100 * p->solver_gap);
        sw_buf_puts(b, "}\n");
    }
    if (p->notes && !strncmp(p->notes, "hybrid: member ", 15)) {
        /* a portfolio's winning member (planners/hybrid.c writes it first) */
        const char *m = p->notes + 15;
        char member[64];
        snprintf(member, sizeof member, "%.*s", (int)strcspn(m, "; "), m);
        b->len -= 2; /* reopen the object */
        sw_buf_puts(b, ",\"portfolio_member\":");
        sw_buf_put_jstr(b, member);
        sw_buf_puts(b, "}\n");
    }
    if (p->notes) { /* the planner's own account (e.g. dtr's evictions, fragmentation) */
        b->len -= 2; /* reopen the object */
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
        fflush(stdout);
        sw_buf_free(&b);
        cli_json_said();
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
    plan_args pa;
    memset(&pa, 0, sizeof pa);
    const char *profile = NULL;
    int rc;
    const cli_pos args[] = {{"PROFILE", "the profile (docs/profile-format.md)", 1, 1, &profile},
                            {NULL, NULL, 0, 0, NULL}};
    const cli_opt opts[] = {
        PLAN_OPTIONS(pa),
        {.name = "output", .short_name = 'o', .type = PT_STRING, .dst = &pa.out, .meta = "PLAN",
         .flags = CLI_REQUIRED | CLI_OUTPUT, .help = "output plan (- for standard output)"},
        {.name = NULL}};
    const cli_cmd cmd = {
        .name = "plan",
        .about = "Make a plan and write it as JSON (docs/plan-format.md). Every plan is\n"
                 "verified before it is written; an unsafe plan is an error.\n",
        .args = args,
        .opts = opts,
        .brief = 1};
    if (cli_parse(&cmd, argc, argv, &rc))
        return rc;
    plan *p;
    rc = make_plan(profile, &pa, &p);
    if (rc)
        return rc;
    if (cli_mpi_rank() > 0) { /* every rank has the plan; rank 0 writes it */
        plan_free(p);
        return 0;
    }
    sw_err e;
    if (plan_verify(p, NULL, &e)) {
        plan_free(p);
        return cli_fail(EXIT_USER, "planner %s produced a plan that fails verification (a "
                        "planner bug): %s", pa.planner, e.msg);
    }
    rc = plan_write_file(p, pa.out, &e);
    plan_free(p);
    if (rc)
        return cli_error(&e);
    if (cli_interrupted()) {
        char done[1200];
        snprintf(done, sizeof done, "wrote the best plan found so far (verified) to %s",
                 strcmp(pa.out, "-") ? pa.out : "standard output");
        return cli_interrupt_end(done);
    }
    return 0;
}

int cmd_verify(int argc, char **argv)
{
    const char *path = NULL, *memory = NULL;
    int quiet = 0, rc;
    const cli_pos args[] = {{"PLAN", "the plan (docs/plan-format.md)", 1, 1, &path},
                            {NULL, NULL, 0, 0, NULL}};
    const cli_opt opts[] = {
        {.name = "memory", .type = PT_SIZE, .dst = &memory, .flags = CLI_FRACTION,
         .help = "check capacity against this budget (16GiB, 16G, 16GB, bytes, or 0.4x of the "
                 "ideal plan's peak) instead of the budget the plan itself declares"},
        {.name = "quiet", .short_name = 'q', .type = PT_BOOL, .dst = &quiet,
         .help = "print nothing when the plan is safe"},
        {.name = NULL}};
    const cli_cmd cmd = {
        .name = "verify",
        .about = "Check that PLAN is safe under every execution order its streams and edges\n"
                 "allow: inputs resident and current when an op runs, no two residencies\n"
                 "sharing memory unless ordered, capacity kept, nothing needed dropped unless\n"
                 "its host copy is current or it is recomputed, host copies read only when\n"
                 "current, and the same persistent set resident at iteration start and end.\n"
                 "Exit 0 if safe; otherwise exit 1 naming the first violation.\n",
        .args = args,
        .opts = opts};
    if (cli_parse(&cmd, argc, argv, &rc))
        return rc;
    plan *p;
    sw_err e;
    if (plan_read_file(path, &p, &e))
        return cli_error(&e);
    if (memory) { /* the budget from outside replaces the one the plan declares */
        int64_t budget;
        if (planner_resolve_budget(p->prof, memory, &budget, &e)) {
            plan_free(p);
            return cli_fail(EXIT_USER, "--memory: %s", e.msg);
        }
        p->budget = budget;
    }
    rc = plan_verify(p, NULL, &e);
    if (rc) {
        plan_free(p);
        return cli_fail(EXIT_USER, "%s: %s", path, e.msg);
    }
    if (!quiet)
        printf("%s: safe (%d tasks, planner %s)\n", path, p->n_tasks,
               p->planner ? p->planner : "unknown");
    plan_free(p);
    return 0;
}

/* Verify p (verify: with the message of a planner bug when pl_name is not
   NULL, else naming path), simulate it, write the plan (--output) and the
   trace, print the result. */
static int simulate_and_print(plan *p, plan_args *pa, int verify, const char *path,
                              const char *pl_name)
{
    sw_err e;
    sim_result r;
    int stage;
    if (pipe_verify_simulate(p, verify, pa->iters, &r, &stage, &e)) {
        if (stage != PIPE_VERIFY)
            return cli_error(&e);
        if (pl_name)
            return cli_fail(EXIT_USER, "planner %s produced a plan that fails verification (a "
                            "planner bug): %s", pl_name, e.msg);
        return cli_fail(EXIT_USER, "%s: %s", path, e.msg);
    }
    if (pa->out && plan_write_file(p, pa->out, &e))
        return cli_error(&e);
    if (pa->trace && sim_write_trace(p, NULL, pa->trace, &e))
        return cli_error(&e);
    print_result(p, &r, verify, pa->json);
    return 0;
}

int cmd_simulate(int argc, char **argv)
{
    plan_args pa;
    memset(&pa, 0, sizeof pa);
    const char *path = NULL;
    int rc;
    const cli_pos args[] = {{"PLAN", "the plan (docs/plan-format.md)", 1, 1, &path},
                            {NULL, NULL, 0, 0, NULL}};
    const cli_opt opts[] = {
        SIM_OPTIONS(pa, "write a Chrome trace of the last two iterations (open it in Perfetto or "
                        "chrome://tracing)"),
        {.name = "no-verify", .type = PT_BOOL, .dst = &pa.no_verify,
         .help = "skip verifying the plan first"},
        {.name = "device", .type = PT_STRING, .dst = &pa.dev.name, .meta = CLI_DEVICE_META,
         .help = "another device's PCIe figures (built-in or a device file), for a what-if; op "
                 "times stay those of the profile"},
        {.name = "device-set", .type = PT_STRING, .dst = &pa.dev.sets,
         .flags = CLI_MULTI | CLI_KEYVAL, .help = "override one device figure ('swapsim devices "
                                                  "--help')"},
        {.name = NULL}};
    const cli_cmd cmd = {
        .name = "simulate",
        .about = "Time PLAN: iterations are repeated until the iteration time is steady. The\n"
                 "plan is verified first (--no-verify skips it).\n",
        .args = args,
        .opts = opts};
    if (cli_parse(&cmd, argc, argv, &rc))
        return rc;
    plan *p;
    sw_err e;
    if (plan_read_file(path, &p, &e))
        return cli_error(&e);
    if (cli_device_any(&pa.dev) && cli_device_resolve(&pa.dev, &p->prof->device, &p->prof->device)) {
        plan_free(p);
        return EXIT_USER;
    }
    rc = simulate_and_print(p, &pa, !pa.no_verify, path, NULL);
    plan_free(p);
    return rc;
}

int cmd_run(int argc, char **argv)
{
    plan_args pa;
    memset(&pa, 0, sizeof pa);
    const char *profile = NULL;
    int rc;
    const cli_pos args[] = {{"PROFILE", "the profile (docs/profile-format.md)", 1, 1, &profile},
                            {NULL, NULL, 0, 0, NULL}};
    const cli_opt opts[] = {
        PLAN_OPTIONS(pa),
        {.name = "output", .short_name = 'o', .type = PT_STRING, .dst = &pa.out, .meta = "FILE",
         .flags = CLI_OUTPUT, .help = "also write the plan"},
        SIM_OPTIONS(pa, "write a Chrome trace of the steady state"),
        {.name = NULL}};
    const cli_cmd cmd = {.name = "run",
                         .about = "Plan, verify and simulate in one go and print the result.\n",
                         .args = args,
                         .opts = opts,
                         .brief = 1};
    if (cli_parse(&cmd, argc, argv, &rc))
        return rc;
    plan *p;
    rc = make_plan(profile, &pa, &p);
    if (rc)
        return rc;
    if (cli_mpi_rank() > 0) { /* every rank has the plan; rank 0 reports it */
        plan_free(p);
        return 0;
    }
    rc = simulate_and_print(p, &pa, 1, NULL, pa.planner);
    plan_free(p);
    if (!rc && cli_interrupted()) {
        char done[2400];
        snprintf(done, sizeof done, "the result printed is that of the best plan found "
                 "so far (verified)%s%s%s%s", pa.out ? "; plan in " : "", pa.out ? pa.out : "",
                 pa.trace ? "; trace in " : "", pa.trace ? pa.trace : "");
        return cli_interrupt_end(done);
    }
    return rc;
}
