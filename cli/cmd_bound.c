/* cmd_bound.c: `swapsim bound`: lower bounds on any plan's iteration time
   (docs/bounds.md). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../sim/bound.h"
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
                  "\"order_swap_bound_s\":%.9g,\"order_any_bound_s\":%.9g,\"d2h_rate\":%.9g,"
                  "\"window_swap_bound_s\":%.9g,\"window_any_bound_s\":%.9g,\"window_op\":%d,"
                  "\"order_window_swap_bound_s\":%.9g,\"order_window_any_bound_s\":%.9g}\n",
                  (long long)r->budget_bytes, r->compute_s, r->h2d_rate,
                  (long long)r->persistent_bytes, (long long)r->resident_bytes, r->resident_op,
                  r->exact_dag ? "true" : "false", (long long)r->live_bytes, r->live_op,
                  (long long)r->excess_bytes, r->swap_s,
                  isfinite(r->recompute_s_per_byte) ? r->recompute_s_per_byte : -1, r->any_s,
                  (long long)r->order_live_bytes, (long long)r->order_excess_bytes,
                  r->order_swap_s, r->order_any_s, r->d2h_rate, r->window_swap_s, r->window_any_s,
                  r->window_op, r->order_window_swap_s, r->order_window_any_s);
}

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
                 "recomputed: in all, and in their windows (copied out between their making\n"
                 "or last mutation and the cut - a persistent storage mutated later, after\n"
                 "that mutation in the previous iteration - back in between the cut and\n"
                 "their next use, or re-run at their own producer's cost); for plans that\n"
                 "only swap, for plans that also recompute, and for plans that keep the\n"
                 "profile's order. No plan is faster (docs/bounds.md).\n"
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
           cli_gib(budget), (long long)budget);
    printf("  compute                  %.6f s (every op runs once)\n", r.compute_s);
    printf("  resident while one op runs  %.3f GiB at most (op %d '%s')\n", cli_gib(r.resident_bytes),
           r.resident_op, r.resident_op >= 0 ? g->ops[r.resident_op].name : "");
    printf("  live in every schedule   %.3f GiB at op %d '%s'%s: %.3f GiB off the GPU there\n",
           cli_gib(r.live_bytes), r.live_op, r.live_op >= 0 ? g->ops[r.live_op].name : "",
           r.exact_dag ? "" : " (per-op bound: the DAG is too large for reachability)",
           cli_gib(r.excess_bytes));
    printf("  plans that only swap     >= %.6f s (%.3f GiB back at %.1f GB/s = %.6f s, hidden "
           "behind compute at best; out and back in their windows: %.6f s)\n", r.swap_s,
           cli_gib(r.excess_bytes), r.h2d_rate / 1e9, (double)r.excess_bytes / r.h2d_rate,
           r.window_swap_s);
    printf("  plans that also recompute >= %.6f s (each storage re-run at its producer's cost, "
           "the cheapest %.3g s per MB)\n", r.any_s,
           isfinite(r.recompute_s_per_byte) ? r.recompute_s_per_byte * 1e6 : INFINITY);
    if (!r.exact_dag)
        printf("  the windows: not computed (the DAG is too large for reachability)\n");
    else if (r.window_op >= 0)
        printf("  the windows bind at op %d '%s'\n", r.window_op, g->ops[r.window_op].name);
    printf("  keeping the profile's order: %.3f GiB live at op %d, so >= %.6f s (swap only), "
           ">= %.6f s (with recompute)\n", cli_gib(r.order_live_bytes), r.order_live_op,
           r.order_swap_s, r.order_any_s);
    printf("  ideal / bound            %.4f (the best normalised throughput any swap-only plan "
           "can reach), %.4f (any plan)\n", r.compute_s / r.swap_s, r.compute_s / r.any_s);
    graph_free(g);
    return 0;
}
