/* test_devfile.c: device files (docs/devices.md) on the CPU: the reader
   (hand-written files, built-in overrides, every kind of bad file giving
   one line with the file, position and JSON path), name-or-file
   resolution, the writer's round trip, calibrate-device's conversion of a
   measurement into a device (a made-up measurement: no GPU here), and the
   command line: --device FILE on model, plan, simulate and devices, and
   calibrate-device failing with one line without a GPU. One named test each
   (tap_run). */
#include "../common/json.h"
#include "../profiles/profile_io.h"
#include "../validate/replay.h"
#include "cli_run.h"
#include "tap.h"

#define GOOD                                                                                      \
    "{\"format\": \"swapsim-device\", \"version\": 1, \"name\": \"lab-gpu\",\n"                     \
    " \"description\": \"the lab's GPU\", \"memory_bytes\": 25769803776,\n"                        \
    " \"h2d_bytes_per_s\": 25e9, \"d2h_bytes_per_s\": 26e9, \"duplex_bytes_per_s\": 41e9,\n"        \
    " \"copy_latency_s\": 7e-6, \"peak_flops_fp32\": 30e12, \"peak_flops_fp16\": 200e12,\n"         \
    " \"memory_bytes_per_s\": 1.2e12, \"launch_overhead_s\": 4e-6,\n"                              \
    " \"calibration\": {\"tool\": \"by hand\"}}\n"

static int read_dev(const char *text, dev_spec *d, sw_err *e)
{
    e->msg[0] = 0;
    return dev_read_text(text, strlen(text), "dev.json", d, e);
}

/* A bad file: SW_EINVAL, one line naming the file and containing needle. */
static void bad(const char *text, const char *needle, const char *what)
{
    dev_spec d;
    sw_err e;
    int rc = read_dev(text, &d, &e);
    IS_INT(rc, SW_EINVAL, "%s: rejected", what);
    OK(!strchr(e.msg, '\n') && !strncmp(e.msg, "dev.json:", 9), "%s: one line naming the file: %s",
       what, e.msg);
    IS_STR_HAS(e.msg, needle, "%s: says where and what", what);
}

static void test_reader(void)
{
    dev_spec d;
    sw_err e;
    IS_INT(read_dev(GOOD, &d, &e), 0, "a hand-written device file%s%s", e.msg[0] ? ": " : "",
           e.msg);
    OK(!strcmp(d.name, "lab-gpu") && !strcmp(d.desc, "the lab's GPU") &&
           d.memory_bytes == 25769803776LL && d.h2d_bw == 25e9 && d.d2h_bw == 26e9 &&
           d.duplex_bw == 41e9 && d.copy_latency_s == 7e-6 && d.peak_flops_fp32 == 30e12 &&
           d.peak_flops_fp16 == 200e12 && d.mem_bw == 1.2e12 && d.launch_overhead_s == 4e-6,
       "every figure read");
    IS_INT(read_dev("{\"name\": \"V100\", \"h2d_bytes_per_s\": 13e9}", &d, &e), 0,
           "a built-in's name: the file overrides some figures");
    OK(d.h2d_bw == 13e9 && d.d2h_bw == 12e9 && d.memory_bytes == dev_find("v100")->memory_bytes,
       "the rest are the built-in's");
    IS_INT(read_dev("{\"name\": \"bare\", \"memory_bytes\": 1e9, \"h2d_bytes_per_s\": 1e9,"
                    "\"d2h_bytes_per_s\": 1e9, \"duplex_bytes_per_s\": 2e9,"
                    "\"copy_latency_s\": 0, \"peak_flops_fp32\": 1e12, \"peak_flops_fp16\": 2e12,"
                    "\"memory_bytes_per_s\": 1e11, \"launch_overhead_s\": 0}",
                    &d, &e),
           0, "no format, version or description: optional");

    bad("{\"name\": \"lab\", \"h2d_bytes_per_sec\": 1e9}", "at $.h2d_bytes_per_sec: unknown field",
        "a misspelt field");
    bad("{\"name\": \"lab\", \"memory_bytes\": 1e9}", "missing required field \"h2d_bytes_per_s\"",
        "a new device without its copy rates");
    bad("{\"name\": \"v100\", \"h2d_bytes_per_s\": \"fast\"}",
        "dev.json:1:37: at $.h2d_bytes_per_s: expected a number", "a rate as text");
    bad("{\"name\": \"v100\", \"d2h_bytes_per_s\": -5}", "at $.d2h_bytes_per_s: expected a number >=",
        "a negative rate");
    bad("{\"name\": \"v100\", \"memory_bytes\": 1.5}", "at $.memory_bytes: expected an integer",
        "fractional memory");
    bad("{\"name\": \"v100\", \"peak_flops_fp32\": 0}", "at $.peak_flops_fp32: expected a positive",
        "a zero peak");
    bad("{\"format\": \"swapsim-profile\", \"name\": \"v100\"}",
        "at $.format: expected \"swapsim-device\"", "a profile is not a device file");
    bad("{\"version\": 2, \"name\": \"v100\"}", "at $.version: expected an integer in [1, 1]",
        "a later version");
    bad("{\"name\": \"v100\", \"calibration\": 3}", "at $.calibration: expected an object",
        "calibration not an object");
    bad("{\"name\": \"a-name-far-longer-than-thirty-one-characters\"}", "at $.name: expected a name "
        "of 1 to 31 characters", "a long name");
    bad("{\"h2d_bytes_per_s\": 1e9}", "missing required field \"name\"", "no name");
    bad("[{\"name\": \"v100\"}]", "got an array", "the devices --json array");
    bad("\"v100\"", "expected a device object", "a bare name");
    bad("{\"name\": \"v100\",}", "dev.json:1:", "not JSON");
}

static void test_resolve_and_write(const char *tmp)
{
    dev_spec d, d2;
    sw_err e;
    IS_INT(dev_resolve("H100", &d, &e), 0, "a built-in name, any case");
    IS_STR_HAS(d.name, "h100", "is the built-in");
    IS_INT(dev_resolve("tpu", &d, &e), SW_ENOTFOUND, "an unknown name");
    IS_STR_HAS(e.msg, "unknown device 'tpu' (expected a built-in name, one of: v100", "lists them");
    IS_STR_HAS(e.msg, "or a device file", "and says a file would do");
    char path[512];
    snprintf(path, sizeof path, "%s/missing.json", tmp);
    IS_INT(dev_resolve(path, &d, &e), SW_EIO, "a .json that is not there: read, and fails");
    IS_STR_HAS(e.msg, "missing.json: cannot open", "naming it");

    /* the writer: a file that reads back as the same device */
    d = *dev_find("a100");
    snprintf(d.name, sizeof d.name, "a100-lab");
    sw_buf b;
    sw_buf_init(&b);
    dev_file_to_json(&d, "{\"note\": \"x\"}", &b);
    OK(!b.oom && read_dev(b.data, &d2, &e) == 0, "dev_file_to_json reads back%s%s",
       e.msg[0] ? ": " : "", e.msg);
    OK(!memcmp(&d, &d2, sizeof d), "as the same device");
    IS_STR_HAS(b.data, "\"format\": \"swapsim-device\"", "with its format");
    sw_buf_free(&b);
    snprintf(path, sizeof path, "%s/lab", tmp); /* no .json: found because it is readable */
    OK(dev_write_file(&d, NULL, path, &e) == 0, "dev_write_file");
    IS_INT(dev_resolve(path, &d2, &e), 0, "a readable file without .json is a device file");
    OK(!memcmp(&d, &d2, sizeof d), "the same device");
}

/* A made-up measurement of an H100-like GPU. */
static val_calib_result fake_measurement(void)
{
    val_calib_result r;
    memset(&r, 0, sizeof r);
    snprintf(r.gpu, sizeof r.gpu, "NVIDIA H100 80GB HBM3");
    r.cc_major = 9;
    r.driver_version = 13000;
    r.runtime_version = 12080;
    r.memory_total_bytes = 85520809984LL;
    r.memory_free_bytes = 84900000000LL;
    r.memory_usable_bytes = 84800000000LL;
    r.h2d_bw = 52.5e9;
    r.d2h_bw = 55.1e9;
    r.duplex_bw = 92.8e9;
    r.h2d_latency_s = 2e-6;
    r.d2h_latency_s = 3e-6;
    r.gemm_n = 8192;
    r.gemm_fp32_flops = 49e12;
    r.gemm_tf32_flops = 350e12;
    r.gemm_fp16_flops = 700e12;
    r.mem_bw = 2.9e12;
    r.launch_s = 2.5e-6;
    return r;
}

static void test_calibration(void)
{
    val_calib_result r = fake_measurement();
    val_calib_opts o;
    val_calib_opts_init(&o);
    dev_spec d;
    sw_err e;
    IS_INT(val_calib_device(&r, 0, NULL, "2025-01-31T12:00:00Z", &d, &e), 0,
           "a measurement makes a device");
    IS_STR_HAS(d.name, "nvidia-h100-80gb-hbm3", "named after the GPU");
    IS_STR_HAS(d.desc, "NVIDIA H100 80GB HBM3 (GPU 0), measured by swapsim calibrate-device on "
               "2025-01-31", "described with the GPU, index and date");
    OK(d.h2d_bw == 52.5e9 && d.d2h_bw == 55.1e9 && d.duplex_bw == 92.8e9 &&
           fabs(d.copy_latency_s - 2.5e-6) < 1e-12 && d.peak_flops_fp32 == 49e12 &&
           d.peak_flops_fp16 == 700e12 && d.mem_bw == 2.9e12 && d.launch_overhead_s == 2.5e-6,
       "with the measured figures (latency: the mean of both directions)");
    IS_INT(d.memory_bytes % 1048576, 0, "usable memory rounded down to MiB");
    OK(d.memory_bytes <= r.memory_usable_bytes && d.memory_bytes > r.memory_usable_bytes - 1048576,
       "by less than one MiB");
    IS_INT(val_calib_device(&r, 1, "h100-lab", NULL, &d, &e), 0, "with a name");
    IS_STR_HAS(d.name, "h100-lab", "named so");
    sw_buf b;
    sw_buf_init(&b);
    val_calib_to_json(&o, &r, "2025-01-31T12:00:00Z", &b);
    json_doc *doc = json_doc_new();
    const json_value *v = NULL;
    OK(!b.oom && json_parse(doc, b.data, b.len, "calibration", 1, &v, &e) == 0,
       "the calibration object is JSON");
    if (v) {
        const json_value *f = json_get(v, "driver_version");
        OK(f && f->type == JSON_STRING && !strcmp(f->u.str, "13.0"), "driver 13.0");
        f = json_get(v, "runtime_version");
        OK(f && f->type == JSON_STRING && !strcmp(f->u.str, "12.8"), "CUDA 12.8");
        f = json_get(v, "gemm_tf32_flops");
        OK(f && f->type == JSON_NUMBER && f->u.num.d == 350e12, "the tf32 rate is kept there");
    }
    json_doc_free(doc);
    sw_buf f;
    sw_buf_init(&f);
    dev_file_to_json(&d, b.data, &f);
    dev_spec d2;
    OK(!f.oom && read_dev(f.data, &d2, &e) == 0 && !memcmp(&d, &d2, sizeof d),
       "the device file calibrate-device writes reads back%s%s", e.msg[0] ? ": " : "", e.msg);
    sw_buf_free(&f);
    sw_buf_free(&b);

    r.h2d_bw = 0;
    IS_INT(val_calib_device(&r, 0, NULL, NULL, &d, &e), SW_EINVAL, "a zero rate is refused");
    IS_STR_HAS(e.msg, "host-to-device rate", "naming the figure");
    r = fake_measurement();
    r.gemm_fp16_flops = NAN;
    IS_INT(val_calib_device(&r, 0, NULL, NULL, &d, &e), SW_EINVAL, "a NaN peak is refused");
    r = fake_measurement();
    r.memory_usable_bytes = 1000;
    IS_INT(val_calib_device(&r, 0, NULL, NULL, &d, &e), SW_EINVAL, "less than a MiB is refused");
    r = fake_measurement();
    snprintf(r.gpu, sizeof r.gpu, "  ");
    IS_INT(val_calib_device(&r, 0, NULL, NULL, &d, &e), 0, "a GPU without a name");
    IS_STR_HAS(d.name, "gpu", "gets one");

    /* without a GPU (and here without the shared object next to the test) */
    val_calib_result res;
    int rc = val_calibrate(&o, &res, &e);
    IS_INT(rc, SW_EUNSUPPORTED, "val_calibrate without a GPU: SW_EUNSUPPORTED");
    OK(!strchr(e.msg, '\n') && e.msg[0], "with a one-line reason: %s", e.msg);
}

static void test_cli(void)
{
    char path[512];
    snprintf(path, sizeof path, "%s/lab.json", dir);
    FILE *f = fopen(path, "w");
    OK(f != NULL, "write a device file");
    if (!f)
        return;
    fputs(GOOD, f);
    fclose(f);
    char *o = NULL, *er = NULL;
    IS_INT(sh("devices lab.json v100", &o, NULL), 0, "devices FILE NAME");
    IS_STR_HAS(o, "lab-gpu", "shows the file's device");
    IS_STR_HAS(o, "25.0GB/s", "with its figures");
    IS_STR_HAS(o, "v100", "and the built-in");
    sw_free(o);
    IS_INT(sh("devices --json lab.json", &o, NULL), 0, "devices --json FILE");
    IS_STR_HAS(o, "[{\"name\":\"lab-gpu\",\"description\":\"the lab's GPU\",\"memory_bytes\":25769803776,",
               "prints its fields");
    sw_free(o);
    IS_INT(sh("model chain --layers 4 --device lab.json -o c.json", NULL, &er), 0,
           "model --device FILE");
    sw_free(er);
    snprintf(path, sizeof path, "%s/c.json", dir);
    graph_profile *g = NULL;
    sw_err e;
    OK(profile_read_file(path, &g, &e) == 0 && !strcmp(g->device.name, "lab-gpu") &&
           g->device.h2d_bw == 25e9,
       "the profile carries the file's device");
    graph_free(g);
    IS_INT(sh("model chain --layers 4 --device lab.json --device-set h2d=30GB/s -o c2.json", NULL,
              NULL), 0, "--device FILE with --device-set");
    snprintf(path, sizeof path, "%s/c2.json", dir);
    g = NULL;
    OK(profile_read_file(path, &g, &e) == 0 && g->device.h2d_bw == 30e9 &&
           g->device.d2h_bw == 26e9, "the override applies on top of the file");
    graph_free(g);
    IS_INT(sh("plan c.json --planner none --device v100 -o p.json", NULL, NULL), 0,
           "plan for a built-in");
    IS_INT(sh("simulate p.json --device lab.json", &o, NULL), 0, "simulate --device FILE");
    IS_STR_HAS(o, "on lab-gpu", "simulates on the file's device");
    sw_free(o);
    IS_INT(sh("plan c2.json --planner none --device lab.json -o p2.json", NULL, NULL), 0,
           "plan --device FILE");
    IS_INT(sh("simulate p2.json", &o, NULL), 0, "simulate that plan");
    IS_STR_HAS(o, "on lab-gpu", "planned for the file's device");
    sw_free(o);

    snprintf(path, sizeof path, "%s/typo.json", dir);
    f = fopen(path, "w");
    if (f) {
        fputs("{\"name\": \"lab\",\n \"h2d_bytes_per_sec\": 1e9}\n", f);
        fclose(f);
    }
    expect_fail("model chain --device typo.json -o x.json", 1,
                "typo.json:2:23: at $.h2d_bytes_per_sec: unknown field", "a bad device file");
    expect_fail("devices typo.json", 1, "typo.json:2:23", "devices checks a file");
    expect_fail("plan c.json --planner none --device nofile.json -o x.json", 1,
                "nofile.json: cannot open", "a missing device file");
    expect_fail("bound c.json --device tpu", 1, "unknown device 'tpu'", "an unknown name");

    IS_INT(sh("calibrate-device --help", &o, NULL), 0, "calibrate-device --help");
    IS_STR_HAS(o, "--device-index N -o FILE", "shows the usage");
    sw_free(o);
    expect_fail("calibrate-device -o dev.json", 2, "missing --device-index", "no device index");
    expect_fail("calibrate-device --device-index 0", 2, "missing -o", "no output");
    expect_fail("calibrate-device --device-index 0 -o dev.json", 1,
                "calibrate-device needs a CUDA GPU: ", "without a GPU: one line saying so");
    snprintf(path, sizeof path, "%s/dev.json", dir);
    OK(access(path, F_OK) != 0, "and no file written");
    expect_fail("calibrate-device --device-index 0 -o dev.json --copy-size 1KiB", 1,
                "--copy-size: expected at least 1MiB", "a tiny copy size");
}

static void resolve_and_write(void) { test_resolve_and_write(dir); }

static void cli(void)
{
    if (bin)
        test_cli();
    else
        tap_skip(1, "SWAPSIM_BIN not set (run through make test): command-line tests");
}

static const tap_test tests[] = {
    {"reader", test_reader},
    {"resolve_and_write", resolve_and_write},
    {"calibration", test_calibration},
    {"cli", cli},
};

int main(int argc, char **argv)
{
    bin = getenv("SWAPSIM_BIN");
    snprintf(dir, sizeof dir, "/tmp/swapsim-devfile-%d", (int)getpid());
    char cmd[600];
    snprintf(cmd, sizeof cmd, "mkdir -p %s", dir);
    if (system(cmd) != 0)
        tap_skip_all("cannot make a scratch directory");
    int rc = tap_run(tests, SW_ARRAY_LEN(tests), argc, argv);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        printf("# could not remove %s\n", dir);
    return rc;
}
