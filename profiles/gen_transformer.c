/* gen_transformer.c: attention model generators: transformer (encoder-decoder,
   Vaswani et al. 2017, post-norm) and gpt (decoder-only, pre-norm, GPT-2
   style, the output projection tied to the token embedding).

   Multi-head attention is recorded as PyTorch runs it: an input projection,
   its split into queries, keys and values, copies into the per-head layout,
   two batched products around a softmax (and its dropout), a copy back and
   the output projection. */
#include <stdio.h>
#include <string.h>

#include "models.h"
#include "nn.h"

#define ATTN_COMMON                                                                               \
    {"width", PT_FLOAT, "1", "multiplier of the hidden size", NULL, 0.01, 1e3},                  \
        {"dtype", PT_CHOICE, "fp32", "element type (fp16: tensor-core peak for matmul)",        \
         "fp32|fp16", 1, 0},                                                                       \
        {"optimizer", PT_CHOICE, "sgd", "optimizer (momentum and adam add state tensors)",        \
         "sgd|momentum|adam", 1, 0},                                                               \
        {"inference", PT_BOOL, "false", "forward pass only", NULL, 1, 0}

typedef struct tcfg {
    int64_t B, S, D, heads, ffn;
    int dropout;
} tcfg;

static nn_t dropout(nn_net *n, const tcfg *c, const char *name, nn_t x)
{
    return c->dropout ? nn_unary(n, name, "dropout", x, 1) : x;
}

/* [B*S, D] -> [B*heads, S, D/heads] (a contiguous copy, as .transpose().contiguous()) */
static nn_t to_heads(nn_net *n, const tcfg *c, const char *name, nn_t x, int64_t S)
{
    int64_t d[3] = {c->B * c->heads, S, c->D / c->heads};
    return nn_copy(n, name, "transpose", x, 3, d);
}

/* attention of queries q_in [B*Sq, D] over memory kv_in [B*Sk, D]
   (kv_in.id == q_in.id: self-attention with one fused input projection) */
static nn_t attention(nn_net *n, const tcfg *c, nn_t q_in, int64_t Sq, nn_t kv_in, int64_t Sk)
{
    nn_t q, k, v;
    if (q_in.id == kv_in.id) {
        nn_t qkv = nn_linear(n, "in_proj", q_in, 3 * c->D, NN_BIAS), parts[3];
        nn_split(n, "split", qkv, 3, 1, parts);
        q = parts[0];
        k = parts[1];
        v = parts[2];
    } else {
        q = nn_linear(n, "q_proj", q_in, c->D, NN_BIAS);
        nn_t kv = nn_linear(n, "kv_proj", kv_in, 2 * c->D, NN_BIAS), parts[2];
        nn_split(n, "split", kv, 2, 1, parts);
        k = parts[0];
        v = parts[1];
    }
    q = to_heads(n, c, "q_heads", q, Sq);
    k = to_heads(n, c, "k_heads", k, Sk);
    v = to_heads(n, c, "v_heads", v, Sk);
    nn_t scores = nn_bmm(n, "scores", q, k, 1);
    nn_t p = nn_softmax(n, "softmax", scores);
    p = dropout(n, c, "attn", p);
    nn_t ctx = nn_bmm(n, "context", p, v, 0);
    int64_t d[2] = {c->B * Sq, c->D};
    ctx = nn_copy(n, "merge_heads", "transpose", ctx, 2, d);
    return nn_linear(n, "out_proj", ctx, c->D, NN_BIAS);
}

static nn_t ffn(nn_net *n, const tcfg *c, nn_t x, const char *act)
{
    nn_t h = nn_linear(n, "ffn1", x, c->ffn, NN_BIAS);
    h = nn_unary(n, "ffn", act, h, strcmp(act, "relu") == 0);
    h = dropout(n, c, "ffn", h);
    return nn_linear(n, "ffn2", h, c->D, NN_BIAS);
}

/* post-norm residual: LN(x + dropout(f)) */
static nn_t residual(nn_net *n, const tcfg *c, const char *name, nn_t x, nn_t f)
{
    char nm[32];
    snprintf(nm, sizeof nm, "%s.drop", name);
    f = dropout(n, c, nm, f);
    snprintf(nm, sizeof nm, "%s.add", name);
    nn_t y = nn_add(n, nm, x, f, 0);
    snprintf(nm, sizeof nm, "%s.norm", name);
    return nn_layernorm(n, nm, y);
}

/* ---- transformer ---- */

static const param_def transformer_params[] = {
    {"layers", PT_INT, "6", "encoder layers (and as many decoder layers)", NULL, 1, 1e5},
    {"hidden", PT_INT, "512", "model dimension d_model", NULL, 8, 1e6},
    {"heads", PT_INT, "8", "attention heads (must divide the hidden size)", NULL, 1, 1e4},
    {"ffn", PT_INT, "0", "feed-forward inner size (0: 4 x hidden)", NULL, 0, 1e7},
    {"seq", PT_INT, "512", "source and target sequence length", NULL, 1, 1e6},
    {"vocab", PT_INT, "0", "output vocabulary (0: no projection; inputs are embedded "
     "vectors)", NULL, 0, 1e8},
    {"dropout", PT_BOOL, "true", "dropout after attention, feed-forward and residual branches",
     NULL, 1, 0},
    {"batch", PT_INT, "10", "samples (sequence pairs) per iteration", NULL, 1, 1e9},
    ATTN_COMMON,
    PARAM_END};

static int attn_cfg(const char *model, const param_set *ps, tcfg *c, sw_err *err)
{
    c->B = params_int(ps, "batch");
    c->S = params_int(ps, "seq");
    c->D = (int64_t)((double)params_int(ps, "hidden") * params_float(ps, "width") + 0.5);
    c->heads = params_int(ps, "heads");
    c->ffn = params_int(ps, "ffn");
    if (!c->ffn)
        c->ffn = 4 * c->D;
    if (c->D % c->heads)
        return sw_fail(err, SW_EINVAL, "model %s: --heads %lld does not divide the hidden size "
                       "%lld", model, (long long)c->heads, (long long)c->D);
    return 0;
}

static int gen_transformer(const param_set *ps, const dev_spec *dev, graph_profile **out,
                           sw_err *err)
{
    nn_common nc;
    nn_common_get(ps, &nc);
    tcfg c;
    if (attn_cfg("transformer", ps, &c, err))
        return SW_EINVAL;
    c.dropout = params_bool(ps, "dropout");
    int64_t L = params_int(ps, "layers"), V = params_int(ps, "vocab");
    char name[64];
    snprintf(name, sizeof name, "transformer-%lld-%lld", (long long)L, (long long)c.D);
    nn_net n;
    if (nn_init(&n, name, dev, nc.fp16, c.B))
        return sw_fail(err, SW_ENOMEM, "out of memory");
    int64_t d[2] = {c.B * c.S, c.D};
    nn_t src = nn_input(&n, "src", 2, d), tgt = nn_input(&n, "tgt", 2, d);
    nn_t x = src;
    for (int64_t l = 0; l < L; l++) {
        nn_scope(&n, "enc%lld", (long long)l);
        x = residual(&n, &c, "attn", x, attention(&n, &c, x, c.S, x, c.S));
        x = residual(&n, &c, "ffn", x, ffn(&n, &c, x, "relu"));
    }
    nn_scope(&n, "enc");
    nn_t memory = nn_layernorm(&n, "norm", x);
    nn_t y = tgt;
    for (int64_t l = 0; l < L; l++) {
        nn_scope(&n, "dec%lld", (long long)l);
        y = residual(&n, &c, "self", y, attention(&n, &c, y, c.S, y, c.S));
        y = residual(&n, &c, "cross", y, attention(&n, &c, y, c.S, memory, c.S));
        y = residual(&n, &c, "ffn", y, ffn(&n, &c, y, "relu"));
    }
    nn_scope(&n, "dec");
    y = nn_layernorm(&n, "norm", y);
    if (V > 0)
        y = nn_linear(&n, "generator", y, V, NN_BIAS);
    nn_t loss = nc.inference ? y : nn_loss(&n, "loss", y);
    return nn_finish(&n, "transformer", ps, loss, &nc, out, err);
}

const model_def model_transformer = {"transformer", "encoder-decoder Transformer (DTR's run: "
                                     "--layers 8 --batch 10 --device titanv)",
                                     transformer_params, gen_transformer};

/* ---- gpt ---- */

static const param_def gpt_params[] = {
    {"layers", PT_INT, "12", "decoder blocks", NULL, 1, 1e5},
    {"hidden", PT_INT, "768", "model dimension", NULL, 8, 1e6},
    {"heads", PT_INT, "12", "attention heads (must divide the hidden size)", NULL, 1, 1e4},
    {"ffn", PT_INT, "0", "MLP inner size (0: 4 x hidden)", NULL, 0, 1e7},
    {"seq", PT_INT, "1024", "context length", NULL, 1, 1e6},
    {"vocab", PT_INT, "50257", "vocabulary (token embedding tied to the output layer)", NULL, 1,
     1e8},
    {"dropout", PT_BOOL, "false", "dropout layers (GPT-2 style training without: false)", NULL,
     1, 0},
    {"batch", PT_INT, "8", "sequences per iteration", NULL, 1, 1e9},
    ATTN_COMMON,
    PARAM_END};

static int gen_gpt(const param_set *ps, const dev_spec *dev, graph_profile **out, sw_err *err)
{
    nn_common nc;
    nn_common_get(ps, &nc);
    tcfg c;
    if (attn_cfg("gpt", ps, &c, err))
        return SW_EINVAL;
    c.dropout = params_bool(ps, "dropout");
    int64_t L = params_int(ps, "layers"), V = params_int(ps, "vocab");
    char name[64];
    snprintf(name, sizeof name, "gpt-%lld-%lld", (long long)L, (long long)c.D);
    nn_net n;
    if (nn_init(&n, name, dev, nc.fp16, c.B))
        return sw_fail(err, SW_ENOMEM, "out of memory");
    int64_t idd[2] = {c.B, c.S};
    nn_t ids = nn_input(&n, "tokens", 2, idd);
    nn_scope(&n, "embed");
    int32_t wte = -1;
    nn_t tok = nn_embedding(&n, "wte", ids, V, c.D, &wte);
    int64_t pd[2] = {1, c.S};
    nn_t pos = nn_embedding(&n, "wpe", nn_input(&n, "positions", 2, pd), c.S, c.D, NULL);
    nn_t x = nn_add(&n, "add", tok, pos, 0);
    int64_t d[2] = {c.B * c.S, c.D};
    x = nn_view(&n, "flatten", x, 2, d);
    x = dropout(&n, &c, "embed", x);
    for (int64_t l = 0; l < L; l++) {
        nn_scope(&n, "block%lld", (long long)l);
        nn_t h = nn_layernorm(&n, "ln1", x);
        h = dropout(&n, &c, "attn.resid", attention(&n, &c, h, c.S, h, c.S));
        x = nn_add(&n, "attn.add", x, h, 0);
        h = nn_layernorm(&n, "ln2", x);
        h = dropout(&n, &c, "mlp.resid", ffn(&n, &c, h, "gelu"));
        x = nn_add(&n, "mlp.add", x, h, 0);
    }
    nn_scope(&n, "head");
    x = nn_layernorm(&n, "ln_f", x);
    x = nn_linear_shared(&n, "lm_head", x, wte, V);
    nn_t loss = nc.inference ? x : nn_loss(&n, "loss", x);
    return nn_finish(&n, "gpt", ps, loss, &nc, out, err);
}

const model_def model_gpt = {"gpt", "decoder-only transformer, GPT-2 style (--layers --hidden "
                             "--heads --seq)", gpt_params, gen_gpt};
