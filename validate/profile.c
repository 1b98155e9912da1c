/* profile.c: `swapsim profile`: time every operator of a profile on a GPU
   through the CUDA backend's CUPTI-based time_op, and write a copy of the
   profile with the measured times and provenance "recorded with swapsim
   profile on <GPU>". */
#include <stdio.h>
#include <string.h>

#include "../profiles/profile_io.h"
#include "libmap.h"
#include "replay.h"

#define ALIGN 256

static int64_t round_up(int64_t x) { return (x + ALIGN - 1) / ALIGN * ALIGN; }

int val_profile(const graph_profile *g, const val_profile_opts *o, graph_profile **out,
                sw_err *err)
{
    *out = NULL;
    const val_backend_methods *m = val_backend_find("cuda", err);
    if (!m)
        return err ? err->code : SW_EUNSUPPORTED;
    if (!m->time_op)
        return sw_fail(err, SW_EUNSUPPORTED, "the %s backend cannot time operators", m->name);
    int reps = o->reps > 0 ? o->reps : 5;
    /* one scratch arena big enough for any op's tensors and workspace */
    int64_t arena = ALIGN, ws = 0;
    int32_t max_acc = 1, max_attr = 1;
    for (int32_t i = 0; i < g->n_ops; i++) {
        int64_t need = 0;
        for (int32_t k = g->acc_off[i]; k < g->acc_off[i + 1]; k++)
            need += round_up(SW_MAX(g->tensors[g->acc[k]].bytes, 1));
        arena = SW_MAX(arena, need);
        ws = SW_MAX(ws, g->ops[i].workspace_bytes);
        max_acc = SW_MAX(max_acc, g->acc_off[i + 1] - g->acc_off[i]);
        max_attr = SW_MAX(max_attr, g->ops[i].n_attr);
    }
    val_backend_cfg c;
    memset(&c, 0, sizeof c);
    c.abi = VAL_ABI_VERSION;
    c.arena_bytes = arena + round_up(ws);
    c.host_bytes = 8;
    c.n_events = 1;
    c.n_marks = 1;
    c.device_index = o->device_index;
    c.canaries = 0;
    c.sample_words = 64;
    c.ops_library = 1;
    c.tf32 = o->tf32;
    c.time_scale = 1;
    dev_rates(&g->device, &c.h2d_alone, &c.d2h_alone, &c.h2d_both, &c.d2h_both);
    val_backend *b = NULL;
    char ebuf[512] = "";
    int rc = m->open(&c, &b, ebuf, sizeof ebuf);
    if (rc)
        return sw_fail(err, rc == SW_ENOMEM ? SW_ENOMEM : SW_EUNSUPPORTED, "%s backend: %s",
                       m->name, ebuf[0] ? ebuf : "cannot open");
    graph_profile *cp = NULL;
    val_region *reg = sw_malloc((size_t)max_acc * sizeof *reg);
    const char **akey = sw_malloc((size_t)max_attr * sizeof *akey);
    double *aval = sw_malloc((size_t)max_attr * sizeof *aval);
    sw_buf jb;
    sw_buf_init(&jb);
    profile_to_json(g, &jb, 0);
    if (!reg || !akey || !aval || jb.oom) {
        rc = sw_fail(err, SW_ENOMEM, "out of memory");
        goto out;
    }
    if ((rc = profile_read_text(jb.data, jb.len, "profile", &cp, err)))
        goto out;
    int64_t counts[5] = {0, 0, 0, 0, 0}; /* touch, calibrated, cublas, cudnn, kept */
    double total = 0;
    for (int32_t i = 0; i < g->n_ops; i++) {
        const graph_op *op = &g->ops[i];
        int32_t nr = 0;
        int64_t off = 0;
        for (int32_t k = g->acc_off[i]; k < g->acc_off[i + 1]; k++) {
            int32_t s = g->acc[k];
            uint8_t f = g->acc_flag[k];
            val_region *r = &reg[nr++];
            memset(r, 0, sizeof *r);
            r->off = off;
            r->bytes = g->tensors[s].bytes;
            r->tensor = s;
            r->mode = (f & GA_CREATE) ? VAL_R_FILL : (f & GA_MUTATE) ? VAL_R_CHECK | VAL_R_FILL
                                                                      : VAL_R_CHECK;
            off += round_up(SW_MAX(r->bytes, 1));
        }
        for (int32_t j = 0; j < op->n_attr; j++) {
            akey[j] = op->attr[j].key;
            aval[j] = op->attr[j].value;
        }
        val_call calls[LM_MAX_CALLS];
        int nc = 0;
        if (lm_match(g, i, calls, LM_MAX_CALLS, &nc) == 0)
            lm_bind(calls, &nc, reg, nr);
        val_op_work w = {-1, i, 0, op->time_s, nr, reg, arena, op->workspace_bytes, op->name,
                         op->type, op->n_attr, akey, aval, nc, calls};
        double sec = op->time_s;
        int method = -1;
        if (m->time_op(b, &w, reps, o->unknown, &sec, &method, ebuf, sizeof ebuf)) {
            rc = sw_fail(err, SW_EUNSUPPORTED, "op %d '%s': %s", i, op->name, ebuf);
            goto out;
        }
        if (method < 0 || method > VAL_METHOD_CUDNN) {
            counts[4]++;
            sec = op->time_s;
        } else {
            counts[method]++;
        }
        cp->ops[i].time_s = sec;
        total += sec;
    }
    cp->total_compute_s = total;
    {
        char tool[256], notes[512];
        const char *gpu = m->device_name(b);
        snprintf(tool, sizeof tool, "recorded with swapsim profile on %s", gpu);
        snprintf(notes, sizeof notes, "operator times measured under CUPTI (median of %d runs): "
                 "%lld with cuBLAS, %lld with cuDNN, %lld with a kernel reading the inputs and "
                 "writing the outputs, %lld with the calibrated kernel, %lld kept from the input",
                 reps, (long long)counts[2], (long long)counts[3], (long long)counts[0],
                 (long long)counts[1], (long long)counts[4]);
        if (graph_set_str(&cp->prov.source, "recorded") || graph_set_str(&cp->prov.tool, tool) ||
            graph_set_str(&cp->prov.device, gpu) ||
            graph_set_str(&cp->prov.file, o->source_file) ||
            graph_set_str(&cp->prov.cost_model, NULL) || graph_set_str(&cp->prov.notes, notes)) {
            rc = sw_fail(err, SW_ENOMEM, "out of memory");
            goto out;
        }
    }
    *out = cp;
    cp = NULL;
out:
    m->close(b);
    graph_free(cp);
    sw_free(reg);
    sw_free(akey);
    sw_free(aval);
    sw_buf_free(&jb);
    return rc;
}
