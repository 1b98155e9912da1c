/* cmd_parity.c: `swapsim dtr-parity`: the dtr planner beside the DTR
   authors' simulator on the shared DTR logs (experiments/dtr_parity.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../experiments/dtr_parity.h"
#include "cli.h"

int cmd_dtr_parity(int argc, char **argv)
{
    cli_args a = {argc, argv, 1, "dtr-parity", {0}, 0};
    parity_opts o;
    memset(&o, 0, sizeof o);
    o.verify = 1;
    const char *out = NULL, *sets[32], *v;
    int r;
    while (a.i < argc) {
        if (cli_flag(&a, "--help")) {
            printf("usage: swapsim dtr-parity [--data DIR] [-o PREFIX] [--only NAME]\n"
                   "                          [--set KEY=VALUE]... [--no-verify]\n\n"
                   "Import the five DTR logs (DIR/dtr-logs; DIR: $SWAPSIM_DATA, else the\n"
                   "source tree's data/), run the dtr planner with heuristics dtr, dtr-eq and lru\n"
                   "at the ratios of the DTR authors' simulator's table (budget = floor(ratio x\n"
                   "the ideal peak)), verify and simulate every plan, and write the table\n"
                   "beside simrd's figures: verdict (ok / OOM / exceeded) and overhead =\n"
                   "simulated iteration time / total compute. A cell matches when the\n"
                   "verdicts agree and, if both ran, the overheads are within 3%%. Each cell\n"
                   "runs twice: budget_on=bytes (simrd's budget: resident bytes; the arena the\n"
                   "plan needed is reported) and budget_on=arena (the plan fits the budget;\n"
                   "fragmentation costs extra evictions, counted).\n\n"
                   "  -o PREFIX        write PREFIX.csv and PREFIX.md (default: markdown to\n"
                   "                   standard output)\n"
                   "  --only NAME      only the logs whose name contains NAME (resnet32, ...)\n"
                   "  --set KEY=VALUE  a dtr planner option for every run (allocator=first-fit)\n"
                   "  --no-verify      skip plan verification\n");
            return 0;
        }
        if (cli_flag(&a, "--no-verify")) {
            o.verify = 0;
            continue;
        }
        if ((r = cli_optval(&a, "--data", &o.data)) != 0 || (r = cli_optval(&a, "-o", &out)) != 0 ||
            (r = cli_optval(&a, "--only", &o.only)) != 0) {
            if (r < 0)
                return EXIT_USAGE;
            continue;
        }
        if ((r = cli_optval(&a, "--set", &v)) != 0) {
            if (r < 0)
                return EXIT_USAGE;
            if (o.nsets >= 32)
                return cli_usage("dtr-parity", "too many --set options");
            sets[o.nsets++] = v;
            continue;
        }
        return cli_unknown(&a);
    }
    o.sets = sets;
    if (!o.data)
        o.data = sw_data_dir();
    sw_buf csv, md;
    sw_buf_init(&csv);
    sw_buf_init(&md);
    parity_summary sum;
    sw_err e;
    int rc = parity_run(&o, &csv, &md, &sum, &e);
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
