/* cmd_calibrate.c: `swapsim calibrate` and `swapsim table1`: the generated
   reports docs/calibration.md and docs/table1.md. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../profiles/calibrate.h"
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
    cli_list recorded = {0};
    cli_device dv = {0};
    int rc;
    const cli_opt opts[] = {
        {.name = "data", .type = PT_STRING, .dst = &data, .meta = "DIR",
         .help = "holds pipedream/ and pytorch-traces/ (default $SWAPSIM_DATA, else the data/ "
                 "folder of the source tree); without it those sections are skipped"},
        {.name = "recorded", .type = PT_STRING, .dst = &recorded, .meta = "FILE",
         .help = "a recorded profile ('swapsim profile', 'swapsim import ... -o'): every "
                 "operator timed by the cost model on the same device, the error per operator "
                 "class, and the efficiency figures fitted to it, in a section of its own "
                 "(repeat for more; fitted together)",
         .flags = CLI_MULTI},
        {.name = "device", .type = PT_STRING, .dst = &dv.name, .meta = "NAME",
         .help = "time the recorded operators on this device (default: each profile's; "
                 "for the H100 traces the built-in h100)"},
        {.name = "device-set", .type = PT_STRING, .dst = &dv.sets, .meta = "KEY=VALUE",
         .help = "override one figure of that device (repeatable)",
         .flags = CLI_MULTI | CLI_KEYVAL},
        {.name = "output", .short_name = 'o', .type = PT_STRING, .dst = &out, .meta = "FILE",
         .flags = CLI_OUTPUT, .help = "the report (default: standard output)"},
        {.name = NULL}};
    const cli_cmd cmd = {
        .name = "calibrate",
        .about = "Compare the cost model's generated profiles with recorded ones and write\n"
                 "the report (Markdown; docs/calibration.md is this command's output): DTR's\n"
                 "totals (Titan V: DenseNet-121, ResNet-32, Transformer, U-Net, LSTM),\n"
                 "PipeDream's per-layer times (V100, batch 128: ResNet-50, Inception-v3,\n"
                 "VGG-16), and every operator of the H100 PyTorch traces (and of the profiles\n"
                 "given with --recorded) against the cost model, per operator class, with the\n"
                 "efficiency figures fitted to them.\n",
        .opts = opts};
    if (cli_parse(&cmd, argc, argv, &rc))
        return rc;
    dev_spec dspec;
    const dev_spec *dev = NULL;
    if (cli_device_any(&dv)) {
        const dev_spec *h100 = dev_find("h100");
        if (!h100)
            return cli_fail(EXIT_USER, "no built-in device h100");
        if (cli_device_resolve(&dv, h100, &dspec))
            return EXIT_USER;
        dev = &dspec;
    }
    sw_buf b;
    sw_buf_init(&b);
    sw_err e;
    if (cal_calibration_report_with(data, recorded.item, recorded.n, dev, &b, &e)) {
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
         .flags = CLI_OUTPUT, .help = "the report (default: standard output)"},
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
