/* cmd_export.c: `swapsim export PLAN --format pytorch -o POLICY`: a plan of
   a profile imported from a PyTorch trace as a policy tools/apply_plan.py
   applies to the model (docs/apply.md). */
#include <stdio.h>
#include <string.h>

#include "../sim/export.h"
#include "../sim/plan_io.h"
#include "cli.h"

int cmd_export(int argc, char **argv)
{
    const char *path = NULL, *out = NULL;
    int format = 0, quiet = 0, rc;
    const cli_pos args[] = {{"PLAN", "the plan (docs/plan-format.md) of a profile imported from "
                             "a PyTorch trace", 1, 1, &path},
                            {NULL, NULL, 0, 0, NULL}};
    const cli_opt opts[] = {
        {.name = "format", .type = PT_CHOICE, .dst = &format, .def = "pytorch",
         .choices = "pytorch", .help = "what to export to: pytorch (tools/apply_plan.py)"},
        {.name = "out", .short_name = 'o', .type = PT_STRING, .dst = &out, .meta = "POLICY",
         .flags = CLI_REQUIRED, .help = "the policy file to write (JSON)"},
        {.name = "quiet", .type = PT_BOOL, .dst = &quiet,
         .help = "print neither the summary nor the decisions left out"},
        {.name = NULL}};
    const cli_cmd cmd = {
        .name = "export",
        .about = "Turn PLAN into a policy PyTorch follows: per saved activation (a forward\n"
                 "tensor a backward operator reads), keep it, offload it to host memory and\n"
                 "fetch it back after a named module's backward, or recompute it in a\n"
                 "checkpointed module region. Decisions a policy of that kind cannot express\n"
                 "are printed one per line (and kept in the policy's \"unexpressed\"), with how\n"
                 "much of the plan's saving survives (docs/apply.md).\n",
        .args = args,
        .opts = opts};
    if (cli_parse(&cmd, argc, argv, &rc))
        return rc;
    (void)format; /* one format so far */
    plan *p;
    sw_err e;
    if (plan_read_file(path, &p, &e))
        return cli_error(&e);
    sim_result r;
    sim_opts so = {0};
    int have_sim = sim_plan(p, NULL, &so, &r, &e) == 0;
    if (!have_sim)
        fprintf(stderr, "swapsim export: warning: %s: not simulated (%s)\n", path, e.msg);
    sw_buf b, lines;
    sw_buf_init(&b);
    sw_buf_init(&lines);
    export_summary m;
    if (export_pytorch(p, have_sim ? &r : NULL, &b, &lines, &m, &e)) {
        rc = cli_fail(EXIT_USER, "%s: %s", path, e.msg);
        goto done;
    }
    if (sw_buf_write_file(&b, out, &e)) {
        rc = cli_error(&e);
        goto done;
    }
    if (!quiet) {
        for (const char *l = lines.data; l && *l;) {
            const char *nl = strchr(l, '\n');
            fprintf(stderr, "swapsim export: not expressed: %.*s\n", (int)(nl - l), l);
            l = nl + 1;
        }
        printf("%s: %d saved activations (%lld bytes): keep %d, offload %d, recompute %d in %d "
               "region(s); %d decision(s) not expressed\n", out, m.n_saved,
               (long long)m.saved_bytes, m.n_keep, m.n_offload, m.n_recompute, m.n_regions,
               m.n_unexpressed);
        printf("at the first backward operator the plan holds %lld bytes of them, the policy "
               "%lld; of the %lld bytes the plan saves, %lld survive (%.1f%%); rounding %lld "
               "bytes\n", (long long)m.plan_resident_bytes, (long long)m.policy_resident_bytes,
               (long long)m.plan_saved_bytes, (long long)m.surviving_bytes,
               m.plan_saved_bytes ? 100.0 * (double)m.surviving_bytes / (double)m.plan_saved_bytes
                                  : 100.0,
               (long long)m.rounding_bytes);
    }
    rc = 0;
done:
    sw_buf_free(&b);
    sw_buf_free(&lines);
    plan_free(p);
    return rc;
}
