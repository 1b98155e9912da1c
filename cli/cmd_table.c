/* cmd_table.c: `swapsim table CSV KEY=VALUE...` and `swapsim report TEMPLATE`. */
#include <stdio.h>
#include <string.h>

#include "../experiments/table.h"
#include "cli.h"

int cmd_table(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "--help")) {
        printf("usage: swapsim table CSV [rows=COL,...] [cols=COL] value=COL[,COL...]\n"
               "                     [where=COL:V1|V2]... [stat=first|mean|mean_ci|ci95|n|min|max]\n"
               "                     [fmt=%%.3g] [format=md|csv|dat] [na=TEXT] [scale=X] [all=1]\n\n"
               "Tabulate an experiment CSV: keep the rows matching every where= filter (and\n"
               "status ok unless all=1), group them by the rows= columns, spread cols= into\n"
               "columns, and show value= aggregated by stat= (mean_ci: mean and the 95%%\n"
               "confidence interval from Student's t). format=dat writes a gnuplot data file.\n"
               "Cells with no successful row show na= (default N/A).\n");
        return 0;
    }
    if (argc < 3)
        return cli_usage("table", "expected a CSV file and options");
    table_spec t;
    table_spec_init(&t);
    t.file = argv[1];
    sw_err e;
    for (int i = 2; i < argc; i++)
        if (table_spec_set(&t, argv[i], &e))
            return cli_fail(EXIT_USAGE, "%s", e.msg);
    sw_buf b;
    sw_buf_init(&b);
    int rc = table_render(&t, &b, &e);
    if (!rc)
        fputs(b.data ? b.data : "", stdout);
    sw_buf_free(&b);
    return rc ? cli_error(&e) : 0;
}

int cmd_report(int argc, char **argv)
{
    cli_args a = {argc, argv, 1, "report", {0}, 0};
    const char *data = "out", *out = "-";
    int r;
    while (a.i < argc) {
        if (cli_flag(&a, "--help")) {
            printf("usage: swapsim report TEMPLATE [--data DIR] [-o FILE]\n\n"
                   "Copy TEMPLATE, replacing every {{table FILE KEY=VALUE...}} with the table\n"
                   "'swapsim table DIR/FILE KEY=VALUE...' renders (markdown). A table whose CSV is\n"
                   "missing becomes a note saying so. {{include FILE}} copies a file (DIR/FILE,\n"
                   "else FILE; FILE#Section: only that section). {{compare FILE rows=... cols=COL\n"
                   "value=V a=A b=B [names=NameA,NameB]}} writes a sentence computed from that\n"
                   "table: in how many cells A is ahead of B by more than 1%%, level within 1%%,\n"
                   "or behind (naming those cells), and the range of A's lead; commentary that\n"
                   "states a comparison uses it, so it cannot contradict the table.\n"
                   "paper_results.md is made this way from paper_results.md.in\n"
                   "(make paper_results.md).\n");
            return 0;
        }
        if ((r = cli_optval(&a, "--data", &data)) != 0 || (r = cli_optval(&a, "-o", &out)) != 0) {
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
        return cli_usage("report", "expected one TEMPLATE");
    sw_buf b;
    sw_buf_init(&b);
    sw_err e;
    int rc = report_expand(a.pos[0], data, &b, &e);
    if (!rc)
        rc = sw_buf_write_file(&b, out, &e);
    sw_buf_free(&b);
    return rc ? cli_error(&e) : 0;
}
