/* cmd_profile.c: `swapsim profile`: record op times on a GPU (CUDA, CUPTI);
   --dry-run prints how the ops map to library calls. */
#include <stdio.h>
#include <string.h>

#include "../profiles/profile_io.h"
#include "../validate/libmap.h"
#include "../validate/replay.h"
#include "cli.h"

/* The mapping of g's ops to library calls that --dry-run prints. */
static int libmap_print(const graph_profile *g, int json)
{
    lm_summary s;
    int rc = lm_summarize(g, &s);
    if (rc)
        return cli_fail(EXIT_USER, "profile %s: %s", g->name ? g->name : "",
                        rc == SW_ENOMEM ? "out of memory" : "cannot map its ops");
    sw_buf b;
    sw_buf_init(&b);
    if (json)
        lm_summary_json(&s, g->name, &b);
    else
        lm_summary_text(&s, g->name, &b);
    if (b.oom) {
        sw_buf_free(&b);
        return cli_fail(EXIT_USER, "out of memory");
    }
    fputs(b.data, stdout);
    sw_buf_free(&b);
    return 0;
}

int cmd_profile(int argc, char **argv)
{
    const char *path = NULL, *out = NULL;
    int rc, dry_run = 0, json = 0;
    val_profile_opts o = {-1, 5, 0, NULL, 0};
    const cli_pos args[] = {{"PROFILE", "the profile whose ops are timed", 1, 1, &path},
                            {NULL, NULL, 0, 0, NULL}};
    const cli_opt opts[] = {
        {.name = "device-index", .type = PT_INT, .dst = &o.device_index, .min = 0, .max = 1023,
         .help = "the GPU (required unless --dry-run)"},
        {.name = "output", .short_name = 'o', .type = PT_STRING, .dst = &out, .meta = "RECORDED",
         .flags = CLI_OUTPUT,
         .help = "the copy with the measured times (required unless --dry-run)"},
        {.name = "dry-run", .type = PT_BOOL, .dst = &dry_run,
         .help = "no GPU: print which cuBLAS/cuDNN calls or touch kernels the ops map to and "
                 "the share of FLOPs on library calls (validate/libmap.c)"},
        {.name = "json", .type = PT_BOOL, .dst = &json,
         .help = "--dry-run: one JSON object (fields in docs/cli.md)"},
        {.name = "repeats", .type = PT_INT, .dst = &o.reps, .def = "5", .meta = "R", .min = 1,
         .max = 1000, .help = "runs per op; the median is kept"},
        {.name = "precision", .type = PT_CHOICE, .dst = &o.tf32, .def = "fp32",
         .choices = "fp32|tf32",
         .help = "fp32 data computed in strict fp32 (the paper's MXNet) or with TF32 tensor "
                 "cores; fp16 comes from the profile's dtype"},
        {.name = "unknown", .type = PT_CHOICE, .dst = &o.unknown, .def = "touch",
         .choices = "touch|calibrated|keep",
         .help = "ops whose attrs give no shapes: a kernel reading their inputs and writing "
                 "their outputs, the calibrated kernel of their profiled time, or their time kept"},
        {.name = NULL}};
    const cli_cmd cmd = {
        .name = "profile",
        .about = "Run every op of PROFILE on GPU N under CUPTI's activity API and write a copy\n"
                 "with the measured times and provenance \"recorded with swapsim profile on\n"
                 "<GPU>\". Ops whose type and attrs give shapes run as cuBLAS / cuDNN calls,\n"
                 "forward and backward (docs/validate.md lists them); others as --unknown says.\n"
                 "Needs libswapsim_cuda.so and a CUDA device, except with --dry-run, which only\n"
                 "prints the mapping.\n",
        .args = args,
        .opts = opts};
    if (cli_parse(&cmd, argc, argv, &rc))
        return rc;
    if (!dry_run && o.device_index < 0)
        return cli_usage("profile", "--device-index is required (or --dry-run)");
    if (!dry_run && !out)
        return cli_usage("profile", "--output is required (or --dry-run)");
    graph_profile *g, *rec;
    sw_err e;
    if (profile_read_file(path, &g, &e))
        return cli_error(&e);
    if (dry_run) {
        rc = libmap_print(g, json);
        graph_free(g);
        return rc;
    }
    o.source_file = path;
    rc = val_profile(g, &o, &rec, &e);
    graph_free(g);
    if (rc)
        return cli_fail(EXIT_USER, "profile: %s", e.msg);
    rc = profile_write_file(rec, out, &e);
    graph_free(rec);
    return rc ? cli_error(&e) : 0;
}
