/* selective.c: the `selective` planner: Megatron-LM's selective activation
   recomputation (Korthikanti et al. 2022, "selective activation
   recomputation"): only the attention core is recomputed. Megatron
   checkpoints the core (QK^T, softmax, softmax dropout, attention over V)
   because its stored tensors grow with s^2 (the 5as/h term) while it costs
   few FLOPs to redo.

   With FlashAttention as one fused operator (the decoder generator's
   `flash_attention`) the core stores no s^2 tensor; what selective
   recompute still drops is the fused operator's output and its softmax
   statistics (2sbh + 4abs bytes per layer in 16-bit), re-running the
   operator from its saved q, k, v (which its own backward keeps anyway)
   before the first backward op reading either output (the output
   projection's backward): one more attention forward per layer, the same
   trade Megatron makes with Transformer Engine's fused attention.

   Only fused attention operators are recomputed: profiles with unfused
   attention (gpt, transformer: bmm, softmax, dropout) or none get a plan
   that recomputes nothing (docs/planners.md). An operator is skipped if
   it mutates anything, if an output is not read by the backward pass, or
   if an input is freed before the re-run would read it. The plan does not
   adapt to the budget: it fits or is refused. */
#include <stdio.h>
#include <string.h>

#include "../sim/builder.h"
#include "planner.h"

static const param_def selective_params[] = {
    {"allocator", PT_CHOICE, "best-fit", "address allocator placing the plan",
     "first-fit|best-fit", 1, 0},
    {"alignment", PT_SIZE, "1", "placement alignment in bytes", NULL, 1, 1e9},
    PARAM_END};

static int plan_selective(const graph_profile *g, const planner_opts *o, plan **out,
                          sw_err *err)
{
    const param_set *ps = &o->params;
    mem_fit fit = MEM_BEST_FIT;
    mem_fit_parse(params_str(ps, "allocator"), &fit);
    if (o->memory_budget - g->max_workspace <= 0)
        return sw_fail(err, SW_ENOFIT, "does not fit: the budget does not cover the largest op "
                       "workspace (%lld bytes)", (long long)g->max_workspace);
    int32_t no = g->n_ops, nt = g->n_tensors;
    int32_t *pos = sw_malloc(((size_t)no + 1) * sizeof *pos);
    int32_t *death = sw_malloc(((size_t)nt + 1) * sizeof *death);
    int32_t *lf = sw_malloc(((size_t)nt + 1) * sizeof *lf);  /* last forward access */
    int32_t *fb = sw_malloc(((size_t)nt + 1) * sizeof *fb);  /* first backward read */
    int32_t *rerun_at = sw_malloc(((size_t)no + 1) * sizeof *rerun_at); /* per position: op */
    int32_t *drop_at = sw_malloc(((size_t)nt + 1) * sizeof *drop_at);
    plan_builder *b = pb_new_arena(g, o->memory_budget, g->max_workspace, fit,
                                   params_size(ps, "alignment"));
    int rc = 0;
    if (!pos || !death || !lf || !fb || !rerun_at || !drop_at || !b ||
        graph_lifetimes(g, g->order, pos, death, NULL, NULL, NULL)) {
        rc = sw_fail(err, SW_ENOMEM, "out of memory");
        goto done;
    }
    for (int32_t s = 0; s < nt; s++)
        lf[s] = fb[s] = drop_at[s] = -1;
    for (int32_t i = 0; i < no; i++) {
        int32_t op = g->order[i];
        rerun_at[i] = -1;
        for (int32_t k = g->acc_off[op]; k < g->acc_off[op + 1]; k++) {
            int32_t s = g->acc[k];
            if (g->ops[op].phase == GP_FORWARD)
                lf[s] = i;
            else if (fb[s] < 0 && !(g->acc_flag[k] & GA_CREATE))
                fb[s] = i;
        }
    }
    int32_t n_rerun = 0;
    for (int32_t i = 0; i < no; i++) {
        int32_t op = g->order[i];
        const graph_op *x = &g->ops[op];
        if (x->phase != GP_FORWARD || x->n_mut || !x->type ||
            strcmp(x->type, "flash_attention"))
            continue;
        int ok = x->n_out > 0;
        int32_t at = INT32_MAX;
        for (int32_t k = 0; k < x->n_out && ok; k++) {
            int32_t s = g->tensors[x->out[k]].storage;
            ok = s == x->out[k] && fb[s] > lf[s] && !g->n_mutations[s] &&
                 !g->tensors[s].persistent;
            if (ok)
                at = SW_MIN(at, fb[s]);
        }
        for (int32_t k = 0; k < x->n_in && ok; k++) { /* inputs alive at the re-run */
            int32_t s = g->tensors[x->in[k]].storage;
            ok = g->tensors[s].persistent || death[s] >= at;
        }
        if (!ok || rerun_at[at] >= 0)
            continue;
        rerun_at[at] = op;
        for (int32_t k = 0; k < x->n_out; k++)
            drop_at[x->out[k]] = lf[x->out[k]];
        n_rerun++;
    }
    pb_resident_persistent(b);
    double recompute = 0;
    int64_t dropped = 0;
    for (int32_t i = 0; i < no; i++) {
        int32_t op = g->order[i];
        if (rerun_at[i] >= 0) {
            pb_rerun(b, rerun_at[i]);
            recompute += g->ops[rerun_at[i]].time_s;
        }
        pb_run(b, op);
        for (int32_t k = 0; k < g->ops[op].n_out; k++) {
            int32_t s = g->ops[op].out[k];
            if (drop_at[s] == i) {
                pb_drop(b, s);
                dropped += g->tensors[s].bytes;
            }
        }
        for (int32_t k = g->acc_off[op]; k < g->acc_off[op + 1]; k++) {
            int32_t s = g->acc[k];
            if (drop_at[s] == i && g->tensors[s].producer != op) {
                pb_drop(b, s);
                dropped += g->tensors[s].bytes;
            }
        }
    }
    rc = pb_finish(b, out, err);
    if (!rc) {
        char note[200];
        snprintf(note, sizeof note, "selective: %d fused attention operators re-run "
                 "(recompute %.6f s), %lld bytes dropped", n_rerun, recompute,
                 (long long)dropped);
        if (plan_set_notes(*out, note)) {
            plan_free(*out);
            *out = NULL;
            rc = sw_fail(err, SW_ENOMEM, "out of memory");
        }
    }
done:
    pb_free(b);
    sw_free(pos);
    sw_free(death);
    sw_free(lf);
    sw_free(fb);
    sw_free(rerun_at);
    sw_free(drop_at);
    return rc;
}

const planner planner_selective = {
    1, "selective", "Megatron selective recompute: only the attention core (with FlashAttention "
    "as one fused op: its output and softmax statistics) dropped and re-run before its "
    "backward", selective_params, plan_selective, 0};
