/* segments.c: the block rule of the planners that checkpoint or offload by
   block, and the recompute-by-op-kind plan of selective and sac
   (segments.h). */
#include "segments.h"

#include <stdio.h>
#include <string.h>

#include "../../profiles/opattr.h"
#include "../../sim/builder.h"
#include "../../sim/mem.h"

typedef struct seg_rerun {
    int32_t at; /* position before which the op is re-run */
    int32_t op;
} seg_rerun;

/* The length of an imported op name's module path up to the end of its
   first component that is a decimal number ("inner.transformer.h.3" of
   "inner.transformer.h.3.attn:aten::addmm", "layers.3" of
   "layers.3.q:aten::linear": an nn.ModuleList or nn.Sequential index, one
   repeated layer), or -1 if the name has no ':' or its path no such
   component. */
static int layer_len(const char *name)
{
    const char *colon = name ? strchr(name, ':') : NULL;
    if (!colon)
        return -1;
    for (const char *c = name; c < colon;) { /* c: start of a path component */
        const char *e = c;
        while (e < colon && *e != '.')
            e++;
        int digits = e > c;
        for (const char *d = c; d < e && digits; d++)
            digits = *d >= '0' && *d <= '9';
        if (digits)
            return (int)(e - name);
        c = e + 1;
    }
    return -1;
}

/* Length of a name's block prefix, or -1 if none. In a profile imported
   with module scopes and indexed layers (layered: some forward op has a
   layer_len; docs/pytorch-import.md, "Module names"), the prefix of an op
   in a layer is its layer_len, and that of an op outside the layers
   (embeddings; the final norm, output layer and loss) is empty (length
   0), so that the ops between two layers form one block. Otherwise the
   prefix runs up to the name's first '.' (the generators' scopes, "layer3"
   of "layer3.q_proj"). */
static int prefix_len(const char *name, int layered)
{
    if (!name)
        return -1;
    if (layered && strchr(name, ':')) {
        int l = layer_len(name);
        return l >= 0 ? l : 0;
    }
    const char *dot = strchr(name, '.');
    return dot ? (int)(dot - name) : -1;
}

static int same_prefix(const char *a, const char *b, int layered)
{
    int la = prefix_len(a, layered), lb = prefix_len(b, layered);
    return la >= 0 && la == lb && !strncmp(a, b, (size_t)la);
}

static int32_t fwd_op_of(const graph_op *op)
{
    for (int32_t i = 0; i < op->n_attr; i++)
        if (!strcmp(op->attr[i].key, OA_FWD_OP))
            return (int32_t)op->attr[i].value;
    return -1;
}

int seg_fused_attention(const char *type)
{
    return type && (!strcmp(type, "flash_attention") || strstr(type, "scaled_dot_product") ||
                    strstr(type, "_flash_attention") || strstr(type, "_efficient_attention"));
}

int32_t seg_blocks(const graph_profile *g, int32_t *block)
{
    int32_t n = 0, prev = -1;
    int32_t *first = sw_malloc(((size_t)g->n_ops + 1) * sizeof *first); /* per block: an op */
    if (!first)
        return SW_ENOMEM;
    int layered = 0;
    for (int32_t o = 0; o < g->n_ops; o++) {
        block[o] = -1;
        layered |= g->ops[o].phase == GP_FORWARD && layer_len(g->ops[o].name) >= 0;
    }
    for (int32_t i = 0; i < g->n_ops; i++) {
        int32_t o = g->order[i];
        if (g->ops[o].phase != GP_FORWARD)
            continue;
        if (prev < 0 || !same_prefix(g->ops[prev].name, g->ops[o].name, layered))
            first[n++] = o;
        block[o] = n - 1;
        prev = o;
    }
    for (int32_t o = 0; o < g->n_ops; o++) {
        if (g->ops[o].phase != GP_BACKWARD)
            continue;
        int32_t f = fwd_op_of(&g->ops[o]);
        if (f >= 0 && f < g->n_ops && g->ops[f].phase == GP_FORWARD) {
            block[o] = block[f];
            continue;
        }
        for (int32_t b = n - 1; b >= 0; b--)
            if (same_prefix(g->ops[first[b]].name, g->ops[o].name, layered)) {
                block[o] = b;
                break;
            }
    }
    sw_free(first);
    return n;
}

/* Record the plan of seg_plan_recompute on b: the profile's order, each
   re-run just before its position, each dropped storage dropped at its
   drop_at. *recompute and *dropped receive the re-runs' time and the
   dropped bytes. */
static void seg_emit(plan_builder *b, const graph_profile *g, const seg_rerun *reruns,
                     int32_t n_rerun, const int32_t *drop_at, double *recompute, int64_t *dropped)
{
    pb_resident_persistent(b);
    *recompute = 0;
    *dropped = 0;
    for (int32_t i = 0, r = 0; i < g->n_ops; i++) {
        int32_t op = g->order[i];
        for (; r < n_rerun && reruns[r].at == i; r++) {
            pb_rerun(b, reruns[r].op);
            *recompute += g->ops[reruns[r].op].time_s;
        }
        pb_run(b, op);
        for (int32_t k = 0; k < g->ops[op].n_out; k++) {
            int32_t s = g->ops[op].out[k];
            if (drop_at[s] == i) {
                pb_drop(b, s);
                *dropped += g->tensors[s].bytes;
            }
        }
        for (int32_t k = g->acc_off[op]; k < g->acc_off[op + 1]; k++) {
            int32_t s = g->acc[k];
            if (drop_at[s] == i && g->tensors[s].producer != op) {
                pb_drop(b, s);
                *dropped += g->tensors[s].bytes;
            }
        }
    }
}

plan_builder *seg_roomy_builder(const graph_profile *g, const planner_opts *o, mem_fit fit,
                               int64_t *pers)
{
    int64_t all = 0;
    *pers = 0;
    for (int32_t s = 0; s < g->n_tensors; s++) {
        if (g->tensors[s].storage != s)
            continue;
        all += g->tensors[s].bytes;
        if (g->tensors[s].persistent)
            *pers += g->tensors[s].bytes;
    }
    int64_t align = params_size(&o->params, "alignment");
    int64_t cap = all + (int64_t)g->n_tensors * align + g->max_workspace;
    return pb_new_arena(g, cap, g->max_workspace, fit, align);
}

int seg_refusal(const graph_profile *g, const planner_opts *o, plan_builder *b, int rc,
                int64_t pers, const char *what, const char *who, const sw_err *e2, sw_err *err)
{
    mem_stats st;
    mem_get_stats(pb_memory(b), &st);
    pb_free(b);
    if (rc) /* not a matter of bytes: pass the first refusal on */
        return sw_fail(err, e2->code, "%s", e2->msg);
    int64_t need = st.peak_in_use + g->max_workspace;
    char h1[32], h2[32], h3[32];
    if (need > o->memory_budget)
        return sw_fail(err, SW_ENOFIT, "does not fit: %s keeps %s at its peak (%lld bytes: %s "
                       "persistent, the rest saved activations and gradients; the largest "
                       "workspace included), budget %s (%lld bytes)", what,
                       sw_fmt_bytes(need, h1, sizeof h1), (long long)need,
                       sw_fmt_bytes(pers, h3, sizeof h3), sw_fmt_bytes(o->memory_budget, h2,
                       sizeof h2), (long long)o->memory_budget);
    const char *why = e2->msg;
    if (!strncmp(why, "does not fit: ", 14))
        why += 14;
    return sw_fail(err, SW_ENOFIT, "does not fit: %s keeps %s at its peak (%lld bytes) and the "
                   "budget is %s, but the %s allocator fragments memory (%s)", who,
                   sw_fmt_bytes(need, h1, sizeof h1), (long long)need,
                   sw_fmt_bytes(o->memory_budget, h2, sizeof h2),
                   params_str(&o->params, "allocator"), why);
}

/* The refusal of a plan pb_finish could not place (e2): the same tasks
   placed in a roomy arena, then seg_refusal. */
static int seg_refuse(const graph_profile *g, const planner_opts *o, mem_fit fit,
                      const char *who, const seg_rerun *reruns, int32_t n_rerun,
                      const int32_t *drop_at, const sw_err *e2, sw_err *err)
{
    int64_t pers;
    plan_builder *b = seg_roomy_builder(g, o, fit, &pers);
    plan *p = NULL;
    sw_err e3;
    double rec;
    int64_t dropped;
    if (!b)
        return sw_fail(err, SW_ENOMEM, "out of memory");
    seg_emit(b, g, reruns, n_rerun, drop_at, &rec, &dropped);
    int rc = pb_finish(b, &p, &e3);
    plan_free(p);
    char what[256];
    snprintf(what, sizeof what, "%s (%d ops re-run, %lld bytes dropped)", who, n_rerun,
             (long long)dropped);
    return seg_refusal(g, o, b, rc, pers, what, who, e2, err);
}

int seg_plan_recompute(const graph_profile *g, const planner_opts *o, const uint8_t *cand,
                       const char *who, plan **out, sw_err *err)
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
    seg_rerun *reruns = sw_malloc(((size_t)no + 1) * sizeof *reruns);
    int32_t *drop_at = sw_malloc(((size_t)nt + 1) * sizeof *drop_at);
    plan_builder *b = pb_new_arena(g, o->memory_budget, g->max_workspace, fit,
                                   params_size(ps, "alignment"));
    int rc = 0;
    if (!pos || !death || !lf || !fb || !reruns || !drop_at || !b ||
        graph_lifetimes(g, g->order, pos, death, NULL, NULL, NULL)) {
        rc = sw_fail(err, SW_ENOMEM, "out of memory");
        goto done;
    }
    for (int32_t s = 0; s < nt; s++)
        lf[s] = fb[s] = drop_at[s] = -1;
    for (int32_t i = 0; i < no; i++) {
        int32_t op = g->order[i];
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
        if (x->phase != GP_FORWARD || x->n_mut || !cand[op])
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
        for (int32_t k = 0; k < x->n_in && ok; k++) { /* inputs alive and kept at the re-run */
            int32_t s = g->tensors[x->in[k]].storage;
            ok = g->tensors[s].persistent || (death[s] >= at && drop_at[s] < 0);
        }
        if (!ok)
            continue;
        reruns[n_rerun].at = at;
        reruns[n_rerun].op = op;
        for (int32_t k = 0; k < x->n_out; k++)
            drop_at[x->out[k]] = lf[x->out[k]];
        n_rerun++;
    }
    /* re-runs by position, then forward order (a stable sort of few) */
    for (int32_t a = 1; a < n_rerun; a++) {
        seg_rerun x = reruns[a];
        int32_t c = a;
        while (c > 0 && reruns[c - 1].at > x.at) {
            reruns[c] = reruns[c - 1];
            c--;
        }
        reruns[c] = x;
    }
    double recompute = 0;
    int64_t dropped = 0;
    seg_emit(b, g, reruns, n_rerun, drop_at, &recompute, &dropped);
    sw_err e2;
    rc = pb_finish(b, out, &e2);
    if (rc == SW_ENOFIT)
        rc = seg_refuse(g, o, fit, who, reruns, n_rerun, drop_at, &e2, err);
    else if (rc)
        rc = sw_fail(err, e2.code, "%s", e2.msg);
    if (!rc) {
        char note[200];
        snprintf(note, sizeof note, "%s: %d ops re-run (recompute %.6f s), %lld bytes dropped",
                 who, n_rerun, recompute, (long long)dropped);
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
    sw_free(reruns);
    sw_free(drop_at);
    return rc;
}
