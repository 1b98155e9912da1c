/* cmd_tradeoff.c: `swapsim tradeoff`: swapping against recomputing each
   activation. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../profiles/profile_io.h"
#include "cli.h"

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int cmd_tradeoff(int argc, char **argv)
{
    const char *path = NULL, *rate_s = NULL;
    int csv = 0, rc;
    const cli_pos args[] = {{"PROFILE", "the profile (docs/profile-format.md)", 1, 1, &path},
                            {NULL, NULL, 0, 0, NULL}};
    const cli_opt opts[] = {
        {.name = "rate", .type = PT_STRING, .dst = &rate_s, .meta = "RATE",
         .help = "copy rate each way, e.g. 3GB/s (default: the profile's device, one way)"},
        {.name = "csv", .type = PT_BOOL, .dst = &csv, .help = "print CSV instead of a table"},
        {.name = NULL}};
    const cli_cmd cmd = {
        .name = "tradeoff",
        .about = "Swapping against recomputing each activation: for every storage a forward op\n"
                 "makes, the time to copy it out and back in (two copies at RATE, with the\n"
                 "device's copy latency each) over the time to re-run the op that made it;\n"
                 "the median and quartiles of that ratio per op type. MegEngine measured\n"
                 "about 100x for ResNet-50 at 3 GB/s (docs/planners.md).\n",
        .args = args,
        .opts = opts};
    if (cli_parse(&cmd, argc, argv, &rc))
        return rc;
    graph_profile *g;
    sw_err e;
    if (profile_read_file(path, &g, &e))
        return cli_error(&e);
    double rate = g->device.h2d_bw;
    if (rate_s && sw_parse_rate(rate_s, &rate, &e)) {
        graph_free(g);
        return cli_fail(EXIT_USER, "tradeoff: --rate: %s", e.msg);
    }
    /* ratios grouped by op type: collect (type index, ratio) */
    int32_t n = 0, cap = g->acc_off[g->n_ops] + 1;
    double *ratio = sw_malloc((size_t)cap * sizeof *ratio);
    int32_t *type_of = sw_malloc((size_t)cap * sizeof *type_of);
    const char **types = sw_malloc(((size_t)g->n_ops + 1) * sizeof *types);
    int32_t nt = 0;
    if (!ratio || !type_of || !types) {
        rc = cli_fail(EXIT_USER, "out of memory");
        goto done;
    }
    for (int32_t o = 0; o < g->n_ops; o++) {
        const graph_op *op = &g->ops[o];
        if (op->phase != GP_FORWARD || !(op->time_s > 0))
            continue;
        int32_t ti = -1;
        for (int32_t k = 0; k < nt && ti < 0; k++)
            if (!strcmp(types[k], op->type))
                ti = k;
        for (int32_t j = g->acc_off[o]; j < g->acc_off[o + 1]; j++) {
            int32_t s = g->acc[j];
            if (!(g->acc_flag[j] & GA_CREATE) || g->tensors[s].persistent || g->bytes[s] <= 0)
                continue;
            if (ti < 0) {
                ti = nt;
                types[nt++] = op->type;
            }
            double swap = 2 * (g->device.copy_latency_s + (double)g->bytes[s] / rate);
            ratio[n] = swap / op->time_s;
            type_of[n++] = ti;
        }
    }
    double *tmp = sw_malloc(((size_t)n + 1) * sizeof *tmp);
    if (!tmp) {
        rc = cli_fail(EXIT_USER, "out of memory");
        goto done;
    }
    if (csv)
        printf("op_type,activations,q25,median,q75\n");
    else
        printf("swap (out and in at %.3g GB/s) over recompute, per activation of %s:\n\n"
               "| op type | activations | 25%% | median | 75%% |\n|---|---:|---:|---:|---:|\n",
               rate / 1e9, g->name);
    for (int32_t k = -1; k < nt; k++) {
        int32_t m = 0;
        for (int32_t i = 0; i < n; i++)
            if (k < 0 || type_of[i] == k)
                tmp[m++] = ratio[i];
        if (!m)
            continue;
        qsort(tmp, (size_t)m, sizeof *tmp, cmp_dbl);
        const char *name = k < 0 ? "all" : types[k];
        if (csv)
            printf("%s,%d,%.4g,%.4g,%.4g\n", name, m, tmp[m / 4], tmp[m / 2], tmp[(3 * m) / 4]);
        else
            printf("| %s | %d | %.3g | %.3g | %.3g |\n", name, m, tmp[m / 4], tmp[m / 2],
                   tmp[(3 * m) / 4]);
    }
    sw_free(tmp);
    rc = 0;
done:
    sw_free(ratio);
    sw_free(type_of);
    sw_free(types);
    graph_free(g);
    return rc;
}
