/* gen_decoder.c: the `decoder` generator: a Llama-style decoder-only
   transformer (pre-norm RMSNorm, rotary position embedding, grouped-query
   attention run as one fused FlashAttention operator, SwiGLU MLP, no
   biases, no dropout), trained in 16-bit with Adam's two fp32 states and an
   fp32 master copy per parameter. Sizes from 125M to 8B parameters as
   presets; the formula its FLOPs and activation bytes follow is derived in
   docs/models.md ("decoder") and checked by tests/test_decoder.c.

   Operator names: embed.*, layerN.* (one transformer block per scope: the
   block rule of the checkpoint-blocks planner), head.*. */
#include <stdio.h>
#include <string.h>

#include "models.h"
#include "nn.h"

static const param_def decoder_params[] = {
    {"size", PT_CHOICE, "125m", "preset (layers, hidden, heads, kv_heads, ffn, vocab, tie): "
     "125m (12x768, 12/4 heads, ffn 2048, vocab 32000), 350m (24x1024, 16/4, 2816, 32000), "
     "1b (Llama-3.2-1B: 16x2048, 32/8, 8192, 128256, tied), 3b (Llama-3.2-3B: 28x3072, 24/8, "
     "8192, 128256, tied), 8b (Llama-3.1-8B: 32x4096, 32/8, 14336, 128256)",
     "125m|350m|1b|3b|8b", 1, 0},
    {"layers", PT_INT, "0", "decoder blocks (0: the preset's)", NULL, 0, 1e5},
    {"hidden", PT_INT, "0", "model dimension (0: the preset's)", NULL, 0, 1e6},
    {"heads", PT_INT, "0", "query heads, dividing the hidden size (0: the preset's)", NULL, 0,
     1e4},
    {"kv_heads", PT_INT, "0", "key/value heads, dividing the query heads (grouped-query "
     "attention; = heads: multi-head; 0: the preset's)", NULL, 0, 1e4},
    {"ffn", PT_INT, "0", "SwiGLU inner size (0: the preset's)", NULL, 0, 1e7},
    {"vocab", PT_INT, "0", "vocabulary (0: the preset's)", NULL, 0, 1e8},
    {"tie", PT_CHOICE, "auto", "output layer tied to the token embedding (auto: the preset's)",
     "auto|true|false", 1, 0},
    {"seq", PT_INT, "2048", "sequence length (1k to 8k in the experiments)", NULL, 1, 1e6},
    {"batch", PT_INT, "1", "sequences per iteration", NULL, 1, 1e9},
    {"causal", PT_BOOL, "true", "causal attention: the kernel skips the scores above the "
     "diagonal (half the attention FLOPs)", NULL, 1, 0},
    {"dtype", PT_CHOICE, "bf16", "element type of parameters and activations (bf16 and fp16: "
     "2 bytes, tensor-core peak; fp32: 4 bytes)", "bf16|fp16|fp32", 1, 0},
    {"optimizer", PT_CHOICE, "adam", "optimizer (adam: two state tensors per parameter)",
     "sgd|momentum|adam", 1, 0},
    {"master", PT_BOOL, "true", "16-bit dtypes: fp32 optimizer states and an fp32 master copy "
     "of each parameter (mixed precision, 16 bytes per parameter with Adam); false: states in "
     "the parameters' dtype", NULL, 1, 0},
    {"inference", PT_BOOL, "false", "forward pass only", NULL, 1, 0},
    PARAM_END};

typedef struct dec_preset {
    const char *name;
    int64_t layers, hidden, heads, kv_heads, ffn, vocab;
    int tie;
} dec_preset;

static const dec_preset presets[] = {
    {"125m", 12, 768, 12, 4, 2048, 32000, 0},
    {"350m", 24, 1024, 16, 4, 2816, 32000, 0},
    {"1b", 16, 2048, 32, 8, 8192, 128256, 1},
    {"3b", 28, 3072, 24, 8, 8192, 128256, 1},
    {"8b", 32, 4096, 32, 8, 14336, 128256, 0},
};

/* The preset with the explicit options over it. */
static int dec_config(const param_set *ps, dec_preset *c, sw_err *err)
{
    const char *size = params_str(ps, "size");
    *c = presets[0];
    for (size_t i = 0; i < SW_ARRAY_LEN(presets); i++)
        if (!strcmp(presets[i].name, size))
            *c = presets[i];
    static const char *const keys[] = {"layers", "hidden", "heads", "kv_heads", "ffn", "vocab"};
    int64_t *fields[] = {&c->layers, &c->hidden, &c->heads, &c->kv_heads, &c->ffn, &c->vocab};
    for (size_t i = 0; i < SW_ARRAY_LEN(keys); i++)
        if (params_int(ps, keys[i]) > 0)
            *fields[i] = params_int(ps, keys[i]);
    const char *tie = params_str(ps, "tie");
    if (strcmp(tie, "auto"))
        c->tie = !strcmp(tie, "true");
    if (c->hidden % c->heads)
        return sw_fail(err, SW_EINVAL, "model decoder: --heads %lld does not divide the hidden "
                       "size %lld", (long long)c->heads, (long long)c->hidden);
    if (c->heads % c->kv_heads)
        return sw_fail(err, SW_EINVAL, "model decoder: --kv-heads %lld does not divide the "
                       "query heads %lld", (long long)c->kv_heads, (long long)c->heads);
    return 0;
}

/* One pre-norm block: x + attn(norm(x)), then + mlp(norm(.)). */
static nn_t block(nn_net *n, const dec_preset *c, int64_t B, int64_t S, int causal, nn_t x)
{
    int64_t hd = c->hidden / c->heads, kvd = c->kv_heads * hd;
    nn_t h = nn_rmsnorm(n, "attn_norm", x);
    nn_t q = nn_linear(n, "q_proj", h, c->hidden, 0);
    nn_t k = nn_linear(n, "k_proj", h, kvd, 0);
    nn_t v = nn_linear(n, "v_proj", h, kvd, 0);
    q = nn_rope(n, "q_rope", q);
    k = nn_rope(n, "k_rope", k);
    nn_t o = nn_flash_attention(n, "attn", q, k, v, B, S, c->heads, causal);
    x = nn_add(n, "attn_add", x, nn_linear(n, "o_proj", o, c->hidden, 0), 0);
    h = nn_rmsnorm(n, "mlp_norm", x);
    nn_t gate = nn_linear(n, "gate_proj", h, c->ffn, 0);
    nn_t up = nn_linear(n, "up_proj", h, c->ffn, 0);
    nn_t a = nn_swiglu(n, "swiglu", gate, up);
    return nn_add(n, "mlp_add", x, nn_linear(n, "down_proj", a, c->hidden, 0), 0);
}

static int gen_decoder(const param_set *ps, const dev_spec *dev, graph_profile **out,
                       sw_err *err)
{
    nn_common nc;
    nn_common_get(ps, &nc);
    const char *dtype = params_str(ps, "dtype");
    nc.fp16 = strcmp(dtype, "fp32") != 0;
    dec_preset c;
    if (dec_config(ps, &c, err))
        return SW_EINVAL;
    int64_t B = params_int(ps, "batch"), S = params_int(ps, "seq");
    int causal = params_bool(ps, "causal");
    char name[64];
    snprintf(name, sizeof name, "decoder-%lld-%lld", (long long)c.layers, (long long)c.hidden);
    nn_net n;
    if (nn_init(&n, name, dev, nc.fp16, B))
        return sw_fail(err, SW_ENOMEM, "out of memory");
    n.dtype = dtype;
    if (nc.fp16 && params_bool(ps, "master")) {
        n.a.state_mult = 2;
        n.a.master_copy = 1;
    }
    int64_t idd[2] = {B, S};
    nn_t ids = nn_input(&n, "tokens", 2, idd);
    nn_scope(&n, "embed");
    int32_t wte = -1;
    nn_t x = nn_embedding(&n, "tok", ids, c.vocab, c.hidden, &wte);
    int64_t d[2] = {B * S, c.hidden};
    x = nn_view(&n, "flatten", x, 2, d);
    for (int64_t l = 0; l < c.layers; l++) {
        nn_scope(&n, "layer%lld", (long long)l);
        x = block(&n, &c, B, S, causal, x);
    }
    nn_scope(&n, "head");
    x = nn_rmsnorm(&n, "norm", x);
    x = c.tie ? nn_linear_shared(&n, "lm_head", x, wte, c.vocab)
              : nn_linear(&n, "lm_head", x, c.vocab, 0);
    nn_t loss = nc.inference ? x : nn_loss(&n, "loss", x);
    return nn_finish(&n, "decoder", ps, loss, &nc, out, err);
}

const model_def model_decoder = {"decoder", "Llama-style decoder (RMSNorm, SwiGLU, rotary, "
                                 "grouped-query FlashAttention; --size 125m|350m|1b|3b|8b "
                                 "--seq --batch)", decoder_params, gen_decoder};
