/* test_decoder.c: the `decoder` generator (Llama-style) against the
   published formulas it is built to follow (docs/models.md, "decoder"):
   per-layer forward and backward FLOPs (Narayanan et al. 2021, adapted to
   grouped-query attention, SwiGLU and a causal FlashAttention kernel), the
   activation bytes one layer saves for its backward pass (Korthikanti et
   al. 2022, adapted likewise, FlashAttention dropping the 5as/h term), and
   the parameter count of the presets; at three sizes and two sequence
   lengths, within 2%. One named test each (tap_run). */
#include <math.h>

#include "../profiles/calibrate.h"
#include "../profiles/models.h"
#include "../profiles/opattr.h"
#include "tap.h"

typedef struct shape {
    const char *size;
    double L, h, a, kv, f, V;
    int tie;
} shape;

/* the presets, as their documentation states them */
static const shape shapes[] = {
    {"125m", 12, 768, 12, 4, 2048, 32000, 0},
    {"1b", 16, 2048, 32, 8, 8192, 128256, 1},
    {"8b", 32, 4096, 32, 8, 14336, 128256, 0},
};
static const int seqs[] = {1024, 4096};

static graph_profile *gen(const char *size, int seq, int batch)
{
    char k1[32], k2[32], k3[32];
    snprintf(k1, sizeof k1, "size=%s", size);
    snprintf(k2, sizeof k2, "seq=%d", seq);
    snprintf(k3, sizeof k3, "batch=%d", batch);
    const char *kv[] = {k1, k2, k3};
    graph_profile *g = NULL;
    sw_err e;
    if (cal_generate("decoder", kv, 3, "h100", &g, &e))
        printf("# generate decoder %s: %s\n", size, e.msg);
    return g;
}

static double attr(const graph_op *o, const char *k)
{
    for (int32_t i = 0; i < o->n_attr; i++)
        if (!strcmp(o->attr[i].key, k))
            return o->attr[i].value;
    return 0;
}

static int in_layer(const char *name, const char *prefix)
{
    return !strncmp(name, prefix, strlen(prefix));
}

/* Layer `prefix`'s forward FLOPs, backward FLOPs, and the bytes of the
   storages its forward ops make that a backward op reads. */
static void layer_figures(const graph_profile *g, const char *prefix, double *fwd, double *bwd,
                          double *saved, int64_t *largest)
{
    *fwd = *bwd = *saved = 0;
    *largest = 0;
    uint8_t *read_bwd = calloc((size_t)g->n_tensors + 1, 1);
    for (int32_t o = 0; o < g->n_ops; o++)
        if (g->ops[o].phase == GP_BACKWARD)
            for (int32_t k = 0; k < g->ops[o].n_in; k++)
                read_bwd[g->tensors[g->ops[o].in[k]].storage] = 1;
    for (int32_t o = 0; o < g->n_ops; o++) {
        const graph_op *op = &g->ops[o];
        if (!in_layer(op->name, prefix))
            continue;
        if (op->phase == GP_FORWARD) {
            *fwd += attr(op, OA_FLOPS);
            for (int32_t k = 0; k < op->n_out; k++) {
                int32_t s = op->out[k];
                if (g->tensors[s].storage != s)
                    continue;
                *largest = SW_MAX(*largest, g->tensors[s].bytes);
                if (read_bwd[s])
                    *saved += (double)g->tensors[s].bytes;
            }
        } else if (op->phase == GP_BACKWARD) {
            *bwd += attr(op, OA_FLOPS);
        }
    }
    free(read_bwd);
}

static double rel(double got, double want) { return fabs(got - want) / want; }

/* Per layer, s tokens per sequence, b sequences, h hidden, a query heads,
   kvd = kv_heads * h / a, f the SwiGLU width, 2-byte elements:
     forward FLOPs  = 2sb(2h^2 + 2h kvd + 3hf) + 2bs^2h  (causal: half of 4bs^2h)
     backward FLOPs = 2 * 2sb(2h^2 + 2h kvd + 3hf) + 2.5 * 2bs^2h
     saved bytes    = sb(12h + 4kvd + 6f) + 4abs */
static void formula_at(size_t i, int seq)
{
    const shape *x = &shapes[i];
    int b = 2;
    graph_profile *g = gen(x->size, seq, b);
    OK(g != NULL, "decoder %s at seq %d generates", x->size, seq);
    if (!g)
        return;
    double s = seq, h = x->h, kvd = x->kv * x->h / x->a, f = x->f, a = x->a;
    double mm = 2 * s * b * (2 * h * h + 2 * h * kvd + 3 * h * f);
    double at = 2 * b * s * s * h;
    double want_fwd = mm + at, want_bwd = 2 * mm + 2.5 * at;
    double want_saved = s * b * (12 * h + 4 * kvd + 6 * f) + 4 * a * b * s;
    static const char *const layers[] = {"layer0.", "layer1."};
    for (size_t l = 0; l < 2; l++) {
        double fwd, bwd, saved;
        int64_t largest;
        layer_figures(g, layers[l], &fwd, &bwd, &saved, &largest);
        OK(rel(fwd, want_fwd) < 0.02, "%s seq %d %s forward FLOPs %.4g within 2%% of %.4g",
           x->size, seq, layers[l], fwd, want_fwd);
        OK(rel(bwd, want_bwd) < 0.02, "%s seq %d %s backward FLOPs %.4g within 2%% of %.4g",
           x->size, seq, layers[l], bwd, want_bwd);
        OK(rel(saved, want_saved) < 0.02,
           "%s seq %d %s saved activations %.4g bytes within 2%% of %.4g", x->size, seq,
           layers[l], saved, want_saved);
        /* FlashAttention: no sequence-squared scores anywhere in the layer */
        OK((double)largest < 2 * a * b * s * s, "%s seq %d %s: largest tensor %lld bytes, no "
           "seq x seq scores (%.4g)", x->size, seq, layers[l], (long long)largest,
           2 * a * b * s * s);
    }
    /* parameters: L(2h^2 + 2h kvd + 3hf + 2h) + Vh(1 or 2) + h, 2 bytes each;
       Adam's two fp32 states and the fp32 master copy: 12 bytes each */
    double want_p = x->L * (2 * h * h + 2 * h * kvd + 3 * h * f + 2 * h) +
                    x->V * h * (x->tie ? 1 : 2) + h;
    double pbytes = 0, sbytes = 0;
    for (int32_t t = 0; t < g->n_tensors; t++) {
        if (g->tensors[t].kind == GK_PARAMETER)
            pbytes += (double)g->tensors[t].bytes;
        if (g->tensors[t].kind == GK_OPTIMIZER_STATE)
            sbytes += (double)g->tensors[t].bytes;
    }
    IS_NUM(pbytes / 2, want_p, 0.5, "%s: %.4g parameters", x->size, want_p);
    IS_NUM(sbytes, 12 * want_p, 0.5, "%s: fp32 master copy and two fp32 Adam states",
           x->size);
    graph_free(g);
}

static void size125m(void)
{
    for (size_t k = 0; k < SW_ARRAY_LEN(seqs); k++)
        formula_at(0, seqs[k]);
}
static void size1b(void)
{
    for (size_t k = 0; k < SW_ARRAY_LEN(seqs); k++)
        formula_at(1, seqs[k]);
}
static void size8b(void)
{
    for (size_t k = 0; k < SW_ARRAY_LEN(seqs); k++)
        formula_at(2, seqs[k]);
}

/* explicit options override the preset; bad head counts are refused in one line */
static void options(void)
{
    const char *kv[] = {"size=125m", "layers=4", "hidden=256", "heads=8", "kv_heads=8",
                        "ffn=512", "vocab=1000", "seq=64"};
    graph_profile *g = NULL;
    sw_err e;
    IS_INT(cal_generate("decoder", kv, 8, "h100", &g, &e), 0, "a 4-layer decoder");
    int layers = 0;
    for (int32_t o = 0; g && o < g->n_ops; o++)
        if (g->ops[o].phase == GP_FORWARD && strstr(g->ops[o].name, ".attn") &&
            !strstr(g->ops[o].name, "_"))
            layers++;
    IS_INT(layers, 4, "four attention operators");
    graph_free(g);
    const char *bad[] = {"heads=8", "kv_heads=3"};
    g = NULL;
    int rc = cal_generate("decoder", bad, 2, "h100", &g, &e);
    OK(rc == SW_EINVAL && strstr(e.msg, "kv-heads") && !strchr(e.msg, '\n'),
       "kv_heads not dividing heads is refused (%s)", rc ? e.msg : "accepted");
    graph_free(g);
}

static const tap_test tests[] = {
    {"size125m", size125m},
    {"size1b", size1b},
    {"size8b", size8b},
    {"options", options},
};

int main(int argc, char **argv) { return tap_run(tests, SW_ARRAY_LEN(tests), argc, argv); }
