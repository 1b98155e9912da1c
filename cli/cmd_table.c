/* cmd_table.c: `swapsim table CSV KEY=VALUE...` and `swapsim report TEMPLATE`. */
#include <stdio.h>
#include <string.h>

#include "../experiments/table.h"
#include "cli.h"

int cmd_table(int argc, char **argv)
{
    const char *csv = NULL;
    cli_list keys;
    memset(&keys, 0, sizeof keys);
    int rc;
    const cli_pos args[] = {
        {"CSV", "an experiment CSV (swapsim experiment)", 1, 1, &csv},
        {"KEY=VALUE", "value=COL[,COL...] (required)\nrows=COL,... cols=COL\n"
                      "where=COL:V1|V2 (repeatable)\nstat=first|mean|mean_ci|ci95|n|min|max\n"
                      "fmt=%.3g format=md|csv|dat na=TEXT scale=X all=1",
         1, CLI_MANY, &keys},
        {NULL, NULL, 0, 0, NULL}};
    const cli_cmd cmd = {
        .name = "table",
        .about = "Tabulate an experiment CSV: keep the rows matching every where= filter (and\n"
                 "status ok unless all=1), group them by the rows= columns, spread cols= into\n"
                 "columns, and show value= aggregated by stat= (mean_ci: mean and the 95%\n"
                 "confidence interval from Student's t). format=dat writes a gnuplot data file.\n"
                 "Cells with no successful row show na= (default N/A).\n",
        .args = args};
    if (cli_parse(&cmd, argc, argv, &rc))
        return rc;
    table_spec t;
    table_spec_init(&t);
    t.file = csv;
    sw_err e;
    for (int i = 0; i < keys.n; i++)
        if (table_spec_set(&t, keys.item[i], &e))
            return cli_fail(EXIT_USAGE, "%s", e.msg);
    sw_buf b;
    sw_buf_init(&b);
    rc = table_render(&t, &b, &e);
    if (!rc)
        fputs(b.data ? b.data : "", stdout);
    sw_buf_free(&b);
    return rc ? cli_error(&e) : 0;
}

int cmd_report(int argc, char **argv)
{
    const char *template = NULL, *data = NULL, *out = NULL;
    int rc;
    const cli_pos args[] = {{"TEMPLATE", "the template (paper_results.md.in)", 1, 1, &template},
                            {NULL, NULL, 0, 0, NULL}};
    const cli_opt opts[] = {
        {.name = "data", .type = PT_STRING, .dst = &data, .def = "out", .meta = "DIR",
         .help = "where the tables' CSV files are"},
        {.name = "output", .short_name = 'o', .type = PT_STRING, .dst = &out, .def = "-",
         .meta = "FILE", .help = "the expanded copy (- for standard output)"},
        {.name = NULL}};
    const cli_cmd cmd = {
        .name = "report",
        .about = "Copy TEMPLATE, replacing every {{table FILE KEY=VALUE...}} with the table\n"
                 "'swapsim table DIR/FILE KEY=VALUE...' renders (markdown). A table whose CSV is\n"
                 "missing becomes a note saying so. {{include FILE}} copies a file (DIR/FILE,\n"
                 "else FILE; FILE#Section: only that section). {{compare FILE rows=... cols=COL\n"
                 "value=V a=A b=B [names=NameA,NameB]}} writes a sentence computed from that\n"
                 "table: in how many cells A is ahead of B by more than 1%, level within 1%,\n"
                 "or behind (naming those cells), and the range of A's lead; commentary that\n"
                 "states a comparison uses it, so it cannot contradict the table.\n"
                 "{{number FILE [rows=...] [cols=COL] value=V [where=COL:V] [a=A b=B]\n"
                 "pick=min|max [fmt=F] [scale=X] [cell=1]}} writes one number from the table:\n"
                 "its smallest or largest cell, or the smallest or largest ratio A/B over the\n"
                 "rows where both ran (cell=1 names the row).\n"
                 "paper_results.md is made this way from paper_results.md.in\n"
                 "(make paper_results.md).\n",
        .args = args,
        .opts = opts};
    if (cli_parse(&cmd, argc, argv, &rc))
        return rc;
    sw_buf b;
    sw_buf_init(&b);
    sw_err e;
    rc = report_expand(template, data, &b, &e);
    if (!rc)
        rc = sw_buf_write_file(&b, out, &e);
    sw_buf_free(&b);
    return rc ? cli_error(&e) : 0;
}
