/* cmd_stats.c: `swapsim stats`: a profile's statistics (memory, operators,
   sizes). */
#include <stdio.h>
#include <string.h>

#include "../profiles/opattr.h"
#include "../profiles/profile_io.h"
#include "cli.h"

/* Operators by where their time came from (OA_TIME_SRC): [0] no time, [1]
   the recording's kernels, [2] the cost model, [3] given in the profile. */
static void time_sources(const graph_profile *g, int32_t n[4])
{
    n[0] = n[1] = n[2] = n[3] = 0;
    for (int32_t i = 0; i < g->n_ops; i++) {
        const graph_op *o = &g->ops[i];
        int src = 3;
        for (int32_t k = 0; k < o->n_attr; k++)
            if (!strcmp(o->attr[k].key, OA_TIME_SRC))
                src = (int)o->attr[k].value == OA_TIME_MODEL ? 2 : 1;
        n[o->time_s > 0 ? src : 0]++;
    }
}

int cmd_stats(int argc, char **argv)
{
    const char *path = NULL;
    int json = 0, rc;
    const cli_pos args[] = {{"PROFILE", "the profile (docs/profile-format.md)", 1, 1, &path},
                            {NULL, NULL, 0, 0, NULL}};
    const cli_opt opts[] = {
        {.name = "json", .type = PT_BOOL, .dst = &json,
         .help = "print one JSON object (fields in docs/cli.md)"},
        {.name = NULL}};
    const cli_cmd cmd = {
        .name = "stats",
        .about = "Model statistics. Memory is reported two ways: peak_memory_bytes, the peak of\n"
                 "the ideal execution in the profile's operator order with every tensor freed\n"
                 "after its last use (persistent tensors always resident, plus the largest\n"
                 "workspace, reserved throughout as the simulator and planners hold it);\n"
                 "peak_op_workspace_bytes, the same with each operator's workspace held only\n"
                 "while it runs (a caching allocator's view, as torch.cuda.max_memory_allocated\n"
                 "sees cuDNN's workspaces; docs/pytorch-import.md); total_tensor_bytes, the\n"
                 "sum of every storage (views count 0).\n"
                 "footprint_bytes: persistent storages, every storage the forward pass makes and\n"
                 "the parameter gradients (an iteration that frees nothing before the backward\n"
                 "pass; the definition that reproduces the SwapAdvisor paper's Table 1, see\n"
                 "docs/table1.md).\n"
                 "distinct_tensor_sizes counts distinct non-zero storage sizes (the size\n"
                 "classes SwapAdvisor's allocator chooses among).\n",
        .args = args,
        .opts = opts};
    if (cli_parse(&cmd, argc, argv, &rc))
        return rc;
    graph_profile *g;
    sw_err e;
    if (profile_read_file(path, &g, &e))
        return cli_error(&e);
    graph_stats st;
    if (graph_compute_stats(g, &st)) {
        graph_free(g);
        return cli_fail(EXIT_USER, "out of memory");
    }
    if (json) {
        sw_buf b;
        sw_buf_init(&b);
        sw_buf_puts(&b, "{\"profile\":");
        sw_buf_put_jstr(&b, g->name);
        sw_buf_puts(&b, ",\"device\":");
        sw_buf_put_jstr(&b, g->device.name);
        sw_buf_printf(&b, ",\"batch\":%lld,\"operators\":%d,\"tensors\":%d,\"storages\":%d,"
                      "\"distinct_tensor_sizes\":%d,\"peak_memory_bytes\":%lld,"
                      "\"peak_op_workspace_bytes\":%lld,"
                      "\"total_tensor_bytes\":%lld,\"footprint_bytes\":%lld,"
                      "\"parameter_bytes\":%lld,"
                      "\"optimizer_state_bytes\":%lld,\"persistent_bytes\":%lld,"
                      "\"max_workspace_bytes\":%lld,\"total_compute_s\":",
                      (long long)g->batch, st.operators, st.tensors, st.storages,
                      st.distinct_tensor_sizes, (long long)st.peak_memory_bytes,
                      (long long)st.peak_op_workspace_bytes, (long long)st.total_tensor_bytes, (long long)st.footprint_bytes,
                      (long long)st.parameter_bytes,
                      (long long)st.optimizer_bytes, (long long)st.persistent_bytes,
                      (long long)st.max_workspace_bytes);
        sw_buf_put_f64(&b, st.total_compute_s);
        int32_t ts[4];
        time_sources(g, ts);
        sw_buf_printf(&b, ",\"forward_ops\":%d,\"backward_ops\":%d,\"update_ops\":%d,"
                      "\"op_time_sources\":{\"none\":%d,\"recorded\":%d,\"cost_model\":%d,"
                      "\"profile\":%d}}\n",
                      st.ops_per_phase[GP_FORWARD], st.ops_per_phase[GP_BACKWARD],
                      st.ops_per_phase[GP_UPDATE], ts[0], ts[1], ts[2], ts[3]);
        fputs(b.data, stdout);
        sw_buf_free(&b);
    } else {
        char h1[32], h2[32], h3[32], h4[32], h5[32];
        printf("profile %s (batch %lld, device %s)\n", g->name, (long long)g->batch,
               g->device.name);
        printf("  operators            %d (forward %d, backward %d, update %d)\n", st.operators,
               st.ops_per_phase[GP_FORWARD], st.ops_per_phase[GP_BACKWARD],
               st.ops_per_phase[GP_UPDATE]);
        printf("  tensors              %d (%d storages, %d distinct sizes)\n", st.tensors,
               st.storages, st.distinct_tensor_sizes);
        printf("  peak memory (ideal)  %s\n", sw_fmt_bytes(st.peak_memory_bytes, h1, sizeof h1));
        if (st.peak_op_workspace_bytes != st.peak_memory_bytes)
            printf("  peak, op workspaces  %s (each only while its op runs; the simulator reserves the "
                   "largest, %s, throughout)\n",
                   sw_fmt_bytes(st.peak_op_workspace_bytes, h2, sizeof h2),
                   sw_fmt_bytes(st.max_workspace_bytes, h3, sizeof h3));
        printf("  all tensors          %s\n", sw_fmt_bytes(st.total_tensor_bytes, h2, sizeof h2));
        printf("  footprint            %s (forward tensors + persistent + parameter gradients)\n",
               sw_fmt_bytes(st.footprint_bytes, h5, sizeof h5));
        printf("  parameters           %s (optimizer state %s)\n",
               sw_fmt_bytes(st.parameter_bytes, h3, sizeof h3),
               sw_fmt_bytes(st.optimizer_bytes, h4, sizeof h4));
        printf("  compute / iteration  %.6f s\n", st.total_compute_s);
        int32_t ts[4];
        time_sources(g, ts);
        if (ts[1] || ts[2])
            printf("  operator times       %d from the recording's kernels, %d from the cost "
                   "model, %d with none\n", ts[1], ts[2], ts[0]);
        if (!(st.total_compute_s > 0))
            printf("  warning              every operator takes 0 s (a recording without GPU "
                   "times?): times and throughput mean nothing; 'swapsim import pytorch "
                   "--times model' fills them from the cost model\n");
        if (g->prov.source)
            printf("  provenance           %s: %s\n", g->prov.source, g->prov.tool ? g->prov.tool : "");
    }
    graph_free(g);
    return 0;
}
