/* cmd_calibrate_device.c: `swapsim calibrate-device`: measure a GPU into a
   device file (docs/devices.md). */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "../profiles/profile_io.h"
#include "../validate/replay.h"
#include "cli.h"

int cmd_calibrate_device(int argc, char **argv)
{
    const char *out = NULL, *name = NULL, *size = NULL;
    int rc;
    val_calib_opts o;
    val_calib_opts_init(&o);
    dev_spec dev;
    const cli_opt opts[] = {
        {.name = "device-index", .type = PT_INT, .dst = &o.device_index, .min = 0, .max = 1023,
         .flags = CLI_REQUIRED, .help = "the GPU to measure"},
        {.name = "output", .short_name = 'o', .type = PT_STRING, .dst = &out, .meta = "FILE",
         .flags = CLI_REQUIRED | CLI_OUTPUT, .help = "the device file to write (docs/devices.md)"},
        {.name = "name", .type = PT_STRING, .dst = &name, .meta = "NAME",
         .help = "the device's name in the file, up to 31 characters (default: the GPU's name "
                 "in lower case, such as nvidia-h100-80gb-hbm3)"},
        {.name = "copy-size", .type = PT_SIZE, .dst = &size, .def = "256MiB",
         .help = "bytes of each timed copy (pinned host memory) and of the device-to-device "
                 "copy that times memory bandwidth"},
        {.name = "repeats", .type = PT_INT, .dst = &o.repeats, .def = "5", .meta = "R", .min = 1,
         .max = 1000, .help = "timings of each figure after one warm-up; the median is kept"},
        {.name = NULL}};
    const cli_cmd cmd = {
        .name = "calibrate-device",
        .about = "Measure GPU N and write a device file that every --device takes: pinned copy\n"
                 "rates host-to-device and device-to-host one way each and both ways at once,\n"
                 "the per-copy latency, the usable memory (the largest single allocation), the\n"
                 "fp32 and fp16 GEMM rates (cuBLAS) and the memory bandwidth, all timed with\n"
                 "CUDA events. The file's \"calibration\" object records every figure, the GPU,\n"
                 "driver and CUDA versions and the date. Needs libswapsim_cuda.so and a CUDA\n"
                 "device; takes some ten seconds.\n",
        .opts = opts};
    if (cli_parse(&cmd, argc, argv, &rc))
        return rc;
    sw_err e;
    if (sw_parse_size(size, &o.copy_bytes, NULL, &e) || o.copy_bytes < 1048576)
        return cli_fail(EXIT_USER, "calibrate-device: --copy-size: expected at least 1MiB, got "
                        "'%s'", size);
    o.name = name;
    if (name && (!name[0] || strlen(name) >= sizeof dev.name))
        return cli_fail(EXIT_USER, "calibrate-device: --name: expected 1 to %d characters, got "
                        "'%s'", (int)sizeof dev.name - 1, name);
    val_calib_result res;
    rc = val_calibrate(&o, &res, &e);
    if (rc == SW_EUNSUPPORTED)
        return cli_fail(EXIT_USER, "calibrate-device needs a CUDA GPU: %s", e.msg);
    if (rc)
        return cli_fail(EXIT_USER, "calibrate-device: GPU %d: %s", o.device_index, e.msg);
    char date[32];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tm);
    if (val_calib_device(&res, o.device_index, name, date, &dev, &e))
        return cli_error(&e);
    sw_buf cal;
    sw_buf_init(&cal);
    val_calib_to_json(&o, &res, date, &cal);
    rc = cal.oom ? sw_fail(&e, SW_ENOMEM, "out of memory")
                 : dev_write_file(&dev, cal.data, out, &e);
    sw_buf_free(&cal);
    if (rc)
        return cli_error(&e);
    char mem[32];
    printf("%s (GPU %d, compute capability %d.%d, driver %d.%d, CUDA %d.%d)\n", res.gpu,
           o.device_index, res.cc_major, res.cc_minor, res.driver_version / 1000,
           res.driver_version % 1000 / 10, res.runtime_version / 1000,
           res.runtime_version % 1000 / 10);
    printf("  copies            h2d %.1f GB/s, d2h %.1f GB/s, both at once %.1f GB/s; "
           "latency %.1f us\n", dev.h2d_bw / 1e9, dev.d2h_bw / 1e9, dev.duplex_bw / 1e9,
           dev.copy_latency_s * 1e6);
    printf("  memory            %s usable, %.0f GB/s\n",
           sw_fmt_bytes(dev.memory_bytes, mem, sizeof mem), dev.mem_bw / 1e9);
    printf("  GEMM (n=%d)     fp32 %.1f TFLOP/s, tf32 %.1f TFLOP/s, fp16 %.1f TFLOP/s\n",
           res.gemm_n, res.gemm_fp32_flops / 1e12, res.gemm_tf32_flops / 1e12,
           res.gemm_fp16_flops / 1e12);
    printf("  launch            %.2f us per kernel\n", dev.launch_overhead_s * 1e6);
    printf("wrote %s (device '%s')\n", out, dev.name);
    return 0;
}
