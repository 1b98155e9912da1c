/* cmd_calibrate.c: `swapsim calibrate` and `swapsim table1`: the generated
   reports docs/calibration.md and docs/table1.md. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../experiments/calibrate.h"
#include "cli.h"

static int write_report(sw_buf *b, const char *out)
{
    sw_err e;
    if (b->oom) {
        sw_buf_free(b);
        return cli_fail(EXIT_USER, "out of memory");
    }
    int rc = sw_buf_write_file(b, out, &e);
    sw_buf_free(b);
    return rc ? cli_error(&e) : 0;
}

int cmd_calibrate(int argc, char **argv)
{
    const char *out = "-", *data = sw_data_dir();
    int rc;
    const cli_opt opts[] = {
        {.name = "data", .type = PT_STRING, .dst = &data, .meta = "DIR",
         .help = "holds pipedream/ (default $SWAPSIM_DATA, else the data/ folder of the source "
                 "tree); without it the PipeDream sections are skipped"},
        {.name = "output", .short_name = 'o', .type = PT_STRING, .dst = &out, .meta = "FILE",
         .help = "the report (default: standard output)"},
        {.name = NULL}};
    const cli_cmd cmd = {
        .name = "calibrate",
        .about = "Compare the cost model's generated profiles with recorded ones and write\n"
                 "the report (Markdown; docs/calibration.md is this command's output): DTR's\n"
                 "totals (Titan V: DenseNet-121, ResNet-32, Transformer, U-Net, LSTM) and\n"
                 "PipeDream's per-layer times (V100, batch 128: ResNet-50, Inception-v3,\n"
                 "VGG-16).\n",
        .opts = opts};
    if (cli_parse(&cmd, argc, argv, &rc))
        return rc;
    sw_buf b;
    sw_buf_init(&b);
    sw_err e;
    if (cal_calibration_report(data, &b, &e)) {
        sw_buf_free(&b);
        return cli_error(&e);
    }
    return write_report(&b, out);
}

int cmd_table1(int argc, char **argv)
{
    const char *out = "-";
    int rc;
    const cli_opt opts[] = {
        {.name = "output", .short_name = 'o', .type = PT_STRING, .dst = &out, .meta = "FILE",
         .help = "the report (default: standard output)"},
        {.name = NULL}};
    const cli_cmd cmd = {
        .name = "table1",
        .about = "Generate the SwapAdvisor paper's five models at its batch sizes and compare\n"
                 "memory, operators and distinct tensor sizes with its Table 1 (Markdown;\n"
                 "docs/table1.md is this command's output).\n",
        .opts = opts};
    if (cli_parse(&cmd, argc, argv, &rc))
        return rc;
    sw_buf b;
    sw_buf_init(&b);
    sw_err e;
    if (cal_table1_report(&b, &e)) {
        sw_buf_free(&b);
        return cli_error(&e);
    }
    return write_report(&b, out);
}
