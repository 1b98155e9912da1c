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
    const char *template = NULL, *data = NULL, *out = NULL, *allow = NULL;
    int rc, check = 0, list_bare = 0;
    const cli_pos args[] = {{"TEMPLATE", "the template (paper_results.md.in)", 1, 1, &template},
                            {NULL, NULL, 0, 0, NULL}};
    const cli_opt opts[] = {
        {.name = "data", .type = PT_STRING, .dst = &data, .def = "out", .meta = "DIR",
         .help = "where the tables' CSV files are"},
        {.name = "output", .short_name = 'o', .type = PT_STRING, .dst = &out, .def = "-",
         .meta = "FILE", .help = "the expanded copy (- for standard output)"},
        {.name = "check", .type = PT_BOOL, .dst = &check,
         .help = "write nothing; fail on a bare number in the template's prose that the "
                 "--allow list does not hold, or a false claim= (make docs-check)"},
        {.name = "allow", .type = PT_STRING, .dst = &allow, .meta = "FILE",
         .help = "--check: the figures still typed in, one context a line"},
        {.name = "list-bare", .type = PT_BOOL, .dst = &list_bare,
         .help = "print the context of every bare number in the prose (an --allow list)"},
        {.name = NULL}};
    const cli_cmd cmd = {
        .name = "report",
        .about = "Copy TEMPLATE, replacing every {{table FILE KEY=VALUE...}} with the table\n"
                 "'swapsim table DIR/FILE KEY=VALUE...' renders (markdown); a FILE with a folder\n"
                 "in its name that is not under DIR is read where it is (results committed with\n"
                 "the repository). A table whose CSV is missing becomes a note saying so.\n"
                 "{{include FILE}} copies a file (DIR/FILE,\n"
                 "else FILE; FILE#Section: only that section). {{compare FILE rows=... cols=COL\n"
                 "value=V a=A b=B [names=NameA,NameB]}} writes a sentence computed from that\n"
                 "table: in how many cells A is ahead of B by more than 1%, level within 1%,\n"
                 "or behind (naming those cells), and the range of A's lead; commentary that\n"
                 "states a comparison uses it, so it cannot contradict the table.\n"
                 "{{number FILE [rows=...] [cols=COL] value=V [where=COL:V] [a=A b=B]\n"
                 "pick=min|max [fmt=F] [scale=X] [cell=1]}} writes one number from the table:\n"
                 "its smallest or largest cell, or the smallest or largest ratio A/B over the\n"
                 "rows where both ran (cell=1 names the row). compare and number take a\n"
                 "cell's mean, or with stat=max|min its largest or smallest row (the best\n"
                 "of several planners under one column). {{argmax ...}} and\n"
                 "{{argmin ...}} (the same words) write the row the number comes from;\n"
                 "{{within FILE rows=... cols=COL value=V a=A b=B [tol=P]}} the rows where A\n"
                 "differs from B by more than P% (default 1), or \"none\"; claim=K (K1|K2 for\n"
                 "within; ahead, not-behind, level or behind in every cell for compare)\n"
                 "states what the sentence says, and --check fails when the table\n"
                 "disagrees. {{device NAME FIELD [fmt=F]}} writes a built-in device's figure\n"
                 "(memory GiB; h2d, d2h, duplex, mem_bw GB/s; latency, launch us; fp32, fp16\n"
                 "TFLOP/s); {{budget FILE VAR [full] [n=1]}} an experiment file's setting\n"
                 "(vars.VAR, quick mode's or FULL=1's; n=1: how many values; else VAR=VALUE\n"
                 "in its command; of=FIELD:VALUE set=NAME: NAME=N in the \"opts\" of the\n"
                 "variable's object whose FIELD is VALUE). --check also fails on a number typed into the prose (not in a\n"
                 "directive, code, a link, \"(paper: ...)\", a name such as ResNet-50, a year, a\n"
                 "confidence level, or\n"
                 "after Figure, section, batch...) unless --allow lists it.\n"
                 "paper_results.md is made this way from paper_results.md.in\n"
                 "(make paper_results.md).\n",
        .args = args,
        .opts = opts};
    if (cli_parse(&cmd, argc, argv, &rc))
        return rc;
    sw_buf b;
    sw_buf_init(&b);
    sw_err e;
    if (check || list_bare) {
        rc = report_check(template, data, allow, list_bare, &b, &e);
        fputs(b.data ? b.data : "", stdout);
        sw_buf_free(&b);
        return rc ? cli_error(&e) : 0;
    }
    rc = report_expand(template, data, &b, &e);
    if (!rc)
        rc = sw_buf_write_file(&b, out, &e);
    sw_buf_free(&b);
    return rc ? cli_error(&e) : 0;
}
