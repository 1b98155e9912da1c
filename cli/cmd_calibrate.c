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
    int rc = sw_buf_write_file(b, out ? out : "-", &e);
    sw_buf_free(b);
    return rc ? cli_error(&e) : 0;
}

int cmd_calibrate(int argc, char **argv)
{
    cli_args a = {argc, argv, 1, "calibrate", {0}, 0};
    const char *out = NULL, *data = sw_data_dir(), *v;
    int r;
    while (a.i < argc) {
        if (cli_flag(&a, "--help")) {
            printf("usage: swapsim calibrate [--data DIR] [-o FILE]\n\n"
                   "Compare the cost model's generated profiles with recorded ones and write\n"
                   "the report (Markdown; docs/calibration.md is this command's output): DTR's\n"
                   "totals (Titan V: DenseNet-121, ResNet-32, Transformer, U-Net, LSTM) and\n"
                   "PipeDream's per-layer times (V100, batch 128: ResNet-50, Inception-v3,\n"
                   "VGG-16). DIR holds pipedream/ (default $SWAPSIM_DATA, else the data/\n"
                   "folder of the source tree); without it the PipeDream sections are skipped.\n");
            return 0;
        }
        if ((r = cli_optval(&a, "-o", &v)) != 0 || (r = cli_optval(&a, "--output", &v)) != 0) {
            if (r < 0)
                return EXIT_USAGE;
            out = v;
            continue;
        }
        if ((r = cli_optval(&a, "--data", &v)) != 0) {
            if (r < 0)
                return EXIT_USAGE;
            data = v;
            continue;
        }
        if (cli_positional(&a) > 0)
            return cli_usage("calibrate", "unexpected argument '%s'", argv[a.i - 1]);
        return cli_unknown(&a);
    }
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
    cli_args a = {argc, argv, 1, "table1", {0}, 0};
    const char *out = NULL, *v;
    int r;
    while (a.i < argc) {
        if (cli_flag(&a, "--help")) {
            printf("usage: swapsim table1 [-o FILE]\n\n"
                   "Generate the SwapAdvisor paper's five models at its batch sizes and compare\n"
                   "memory, operators and distinct tensor sizes with its Table 1 (Markdown;\n"
                   "docs/table1.md is this command's output).\n");
            return 0;
        }
        if ((r = cli_optval(&a, "-o", &v)) != 0 || (r = cli_optval(&a, "--output", &v)) != 0) {
            if (r < 0)
                return EXIT_USAGE;
            out = v;
            continue;
        }
        if (cli_positional(&a) > 0)
            return cli_usage("table1", "unexpected argument '%s'", argv[a.i - 1]);
        return cli_unknown(&a);
    }
    sw_buf b;
    sw_buf_init(&b);
    sw_err e;
    if (cal_table1_report(&b, &e)) {
        sw_buf_free(&b);
        return cli_error(&e);
    }
    return write_report(&b, out);
}
