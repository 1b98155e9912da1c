/* cmd_dtr_parity.c: `swapsim dtr-parity`: the dtr planner beside the DTR
   authors' simulator on the shared DTR logs (experiments/dtr_parity.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../experiments/dtr_parity.h"
#include "cli.h"

int cmd_dtr_parity(int argc, char **argv)
{
    parity_opts o;
    memset(&o, 0, sizeof o);
    o.data = sw_data_dir();
    const char *out = NULL;
    cli_list sets;
    memset(&sets, 0, sizeof sets);
    int no_verify = 0, rc;
    const cli_opt opts[] = {
        {.name = "data", .type = PT_STRING, .dst = &o.data, .meta = "DIR",
         .help = "holds dtr-logs/ (default $SWAPSIM_DATA, else the source tree's data/)"},
        {.name = "output", .short_name = 'o', .type = PT_STRING, .dst = &out, .meta = "PREFIX",
         .help = "write PREFIX.csv and PREFIX.md (default: markdown to standard output)"},
        {.name = "only", .type = PT_STRING, .dst = &o.only, .meta = "NAME",
         .help = "only the logs whose name contains NAME (resnet32, ...)"},
        {.name = "set", .type = PT_STRING, .dst = &sets, .flags = CLI_MULTI | CLI_KEYVAL,
         .help = "a dtr planner option for every run (allocator=first-fit)"},
        {.name = "no-verify", .type = PT_BOOL, .dst = &no_verify,
         .help = "skip plan verification"},
        {.name = NULL}};
    const cli_cmd cmd = {
        .name = "dtr-parity",
        .about = "Import the five DTR logs (DIR/dtr-logs), run the dtr planner with heuristics\n"
                 "dtr, dtr-eq and lru at the ratios of the DTR authors' simulator's table\n"
                 "(budget = floor(ratio x the ideal peak)), verify and simulate every plan, and\n"
                 "write the table beside simrd's figures: verdict (ok / OOM / exceeded) and\n"
                 "overhead = simulated iteration time / total compute. A cell matches when the\n"
                 "verdicts agree and, if both ran, the overheads are within 3%. Each cell\n"
                 "runs twice: budget_on=bytes (simrd's budget: resident bytes; the arena the\n"
                 "plan needed is reported) and budget_on=arena (the plan fits the budget;\n"
                 "fragmentation costs extra evictions, counted).\n",
        .opts = opts};
    if (cli_parse(&cmd, argc, argv, &rc))
        return rc;
    o.verify = !no_verify;
    o.sets = sets.item;
    o.nsets = sets.n;
    sw_buf csv, md;
    sw_buf_init(&csv);
    sw_buf_init(&md);
    parity_summary sum;
    sw_err e;
    rc = parity_run(&o, &csv, &md, &sum, &e);
    if (!rc && (csv.oom || md.oom))
        rc = sw_fail(&e, SW_ENOMEM, "out of memory");
    if (!rc && out) {
        char path[1024];
        snprintf(path, sizeof path, "%s.csv", out);
        rc = sw_buf_write_file(&csv, path, &e);
        snprintf(path, sizeof path, "%s.md", out);
        if (!rc)
            rc = sw_buf_write_file(&md, path, &e);
        if (!rc)
            printf("dtr-parity: budget on bytes: %d of %d cells match (%d verdicts agree, "
                   "largest overhead difference %.2f%%, arena up to %+.1f%%); arena = budget: "
                   "%d match (%d verdicts agree); %.2f s; wrote %s.csv and %s.md\n",
                   sum.matches, sum.cells, sum.verdicts_ok, 100 * sum.max_diff,
                   100 * sum.max_arena_over, sum.arena_matches, sum.arena_verdicts_ok,
                   sum.seconds, out, out);
    } else if (!rc) {
        fputs(md.data, stdout);
    }
    sw_buf_free(&csv);
    sw_buf_free(&md);
    return rc ? cli_error(&e) : 0;
}
