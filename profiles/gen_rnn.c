/* gen_rnn.c: recurrent model generators: rnn (RNN-L-XK: L LSTM layers of
   hidden size X K, unrolled over the sequence, each layer's parameters shared
   by all its cells) and brnn (bidirectional: per layer a forward and a
   reversed sub-layer with separate parameters, outputs concatenated; with
   concat=top two stacks of L layers, concatenated after the last).

   An LSTM cell is 13 operators, as MXNet's LSTMCell unrolls it: i2h and h2h
   fully connected layers, their sum, a split into four gates, three
   sigmoids and a tanh, c = f*c' + i*g (two products and a sum), tanh(c) and
   h = o*tanh(c). The sequence's steps are separate input tensors (the data
   loader's buffers); the last layer's outputs are concatenated, projected to
   the vocabulary and fed to a softmax loss. */
#include <stdio.h>
#include <string.h>

#include "models.h"
#include "nn.h"

#define RNN_PARAMS(layers, hidden, batch)                                                          \
    {"layers", PT_INT, layers, "LSTM layers (L)", NULL, 1, 1e5},                                  \
        {"hidden", PT_INT, hidden, "hidden size (X K)", NULL, 1, 1e7},                            \
        {"seq", PT_INT, "41", "sequence length (unrolled steps); 41 reproduces Table 1's "        \
         "operator counts", NULL, 1, 1e6},                                                         \
        {"input", PT_INT, "0", "input features per step (0: the hidden size)", NULL, 0, 1e7},    \
        {"vocab", PT_INT, "10000", "output classes per step (0: no projection, loss on the "      \
         "hidden state)", NULL, 0, 1e8},                                                           \
        {"width", PT_FLOAT, "1", "multiplier of the hidden size", NULL, 0.01, 1e3},               \
        {"batch", PT_INT, batch, "samples per iteration", NULL, 1, 1e9},                          \
        {"dtype", PT_CHOICE, "fp32", "element type", "fp32|fp16", 1, 0},                          \
        {"optimizer", PT_CHOICE, "sgd", "optimizer (momentum and adam add state tensors)",        \
         "sgd|momentum|adam", 1, 0},                                                               \
        {"inference", PT_BOOL, "false", "forward pass only", NULL, 1, 0}

static const param_def rnn_params[] = {RNN_PARAMS("8", "8192", "256"), PARAM_END};
static const param_def brnn_params[] = {
    RNN_PARAMS("4", "8192", "128"),
    {"concat", PT_CHOICE, "layer", "layer: each layer's two directions concatenated per step, "
     "the next layer reading both (MXNet's BidirectionalCell stacked); top: two stacks of L "
     "layers, one over the sequence and one over the reversed sequence, concatenated per step "
     "after the last layer", "layer|top", 1, 0},
    PARAM_END};

typedef struct lstm_layer {
    int32_t wi, wh; /* shared parameters: [in + 1, 4H] and [H + 1, 4H] (bias packed) */
    int64_t in, H;
} lstm_layer;

/* One LSTM cell: returns h, updates *c. */
static nn_t lstm_cell(nn_net *n, const lstm_layer *L, nn_t x, nn_t h, nn_t *c)
{
    nn_t i2h = nn_linear_shared(n, "i2h", x, L->wi, 4 * L->H);
    nn_t h2h = nn_linear_shared(n, "h2h", h, L->wh, 4 * L->H);
    nn_t gates = nn_add(n, "gates", i2h, h2h, 0);
    nn_t g[4];
    nn_split(n, "split", gates, 4, 1, g);
    nn_t in_gate = nn_unary(n, "in", "sigmoid", g[0], 1);
    nn_t forget = nn_unary(n, "forget", "sigmoid", g[1], 1);
    nn_t transform = nn_unary(n, "transform", "tanh", g[2], 1);
    nn_t out_gate = nn_unary(n, "out", "sigmoid", g[3], 1);
    nn_t fc = nn_binary(n, "f_c", "mul", forget, *c);
    nn_t ig = nn_binary(n, "i_g", "mul", in_gate, transform);
    *c = nn_binary(n, "c", "add", fc, ig);
    nn_t tc = nn_unary(n, "c", "tanh", *c, 1);
    return nn_binary(n, "h", "mul", out_gate, tc);
}

static int gen_rnn_impl(const char *model, int bidir, const param_set *ps, const dev_spec *dev,
                        graph_profile **out, sw_err *err)
{
    nn_common c;
    nn_common_get(ps, &c);
    int64_t L = params_int(ps, "layers"), S = params_int(ps, "seq");
    int64_t H = (int64_t)((double)params_int(ps, "hidden") * params_float(ps, "width") + 0.5);
    int64_t I = params_int(ps, "input"), V = params_int(ps, "vocab"), B = c.batch;
    if (H < 1)
        H = 1;
    if (!I)
        I = H;
    char name[96];
    snprintf(name, sizeof name, "%s-%lld-%lld", model, (long long)L, (long long)H);
    nn_net n;
    nn_t *xs = sw_calloc((size_t)S, sizeof *xs), *ys = sw_calloc((size_t)S, sizeof *ys);
    if (!xs || !ys || nn_init(&n, name, dev, c.fp16, B)) {
        sw_free(xs);
        sw_free(ys);
        return sw_fail(err, SW_ENOMEM, "out of memory");
    }
    for (int64_t t = 0; t < S; t++) {
        char nm[32];
        int64_t d[2] = {B, I};
        snprintf(nm, sizeof nm, "x%lld", (long long)t);
        xs[t] = nn_input(&n, nm, 2, d);
    }
    int64_t zd[2] = {B, H};
    nn_t zero = nn_input(&n, "begin_state", 2, zd); /* zeros: h and c of step -1 */
    int dirs = bidir ? 2 : 1;
    int top = bidir && !strcmp(params_str(ps, "concat"), "top");
    nn_t *rs = top ? sw_calloc((size_t)S, sizeof *rs) : NULL; /* top: the reversed stack's */
    if (top && !rs) {
        nn_release(&n);
        sw_free(xs);
        sw_free(ys);
        return sw_fail(err, SW_ENOMEM, "out of memory");
    }
    for (int64_t t = 0; top && t < S; t++)
        rs[t] = xs[t];
    for (int64_t l = 0; l < L; l++) {
        for (int dir = 0; dir < dirs; dir++) {
            nn_t *src = top && dir ? rs : xs;
            int64_t in = src[0].d[1];
            lstm_layer ly = {-1, -1, in, H};
            char pn[48];
            nn_scope(&n, "l%lld%s", (long long)l, bidir ? (dir ? "r" : "f") : "");
            snprintf(pn, sizeof pn, "i2h");
            ly.wi = nn_param(&n, pn, (in + 1) * 4 * H);
            snprintf(pn, sizeof pn, "h2h");
            ly.wh = nn_param(&n, pn, (H + 1) * 4 * H);
            nn_t h = zero, cell = zero;
            for (int64_t k = 0; k < S; k++) {
                int64_t t = dir ? S - 1 - k : k;
                nn_scope(&n, "l%lld%s.t%lld", (long long)l, bidir ? (dir ? "r" : "f") : "",
                         (long long)t);
                h = lstm_cell(&n, &ly, src[t], h, &cell);
                if (dir == 0)
                    ys[t] = h;
                else if (top) /* the reversed stack's next layer reads this */
                    rs[t] = h;
                else { /* outputs of both directions concatenated per step */
                    nn_t pair[2] = {ys[t], h};
                    ys[t] = nn_concat(&n, "concat", pair, 2, 1);
                }
            }
        }
        for (int64_t t = 0; t < S; t++)
            xs[t] = ys[t];
    }
    if (top) { /* both stacks' last layers, concatenated per step */
        nn_scope(&n, "concat");
        for (int64_t t = 0; t < S; t++) {
            char nm[32];
            snprintf(nm, sizeof nm, "t%lld", (long long)t);
            nn_t pair[2] = {xs[t], rs[t]};
            xs[t] = nn_concat(&n, nm, pair, 2, 1);
        }
        sw_free(rs);
    }
    /* head: the last layer's outputs, concatenated in chunks of at most 64
       (autograd bounds an operator's inputs), projected and scored */
    nn_scope(&n, "head");
    nn_t chunks[64];
    int nch = 0;
    for (int64_t t0 = 0; t0 < S && nch < 64; t0 += 64) {
        int k = (int)(S - t0 < 64 ? S - t0 : 64);
        char nm[32];
        snprintf(nm, sizeof nm, "concat%d", nch);
        chunks[nch++] = k > 1 ? nn_concat(&n, nm, xs + t0, k, 0) : xs[t0];
    }
    nn_t y = nch > 1 ? nn_concat(&n, "concat", chunks, nch, 0) : chunks[0];
    if (S > 64 * 64)
        n.failed = 1;
    if (V > 0)
        y = nn_linear(&n, "proj", y, V, NN_BIAS);
    nn_t loss = c.inference ? y : nn_loss(&n, "loss", y);
    sw_free(xs);
    sw_free(ys);
    if (S > 64 * 64) {
        nn_release(&n);
        return sw_fail(err, SW_EINVAL, "model %s: --seq %lld is too long (at most 4096)", model,
                       (long long)S);
    }
    return nn_finish(&n, model, ps, loss, &c, out, err);
}

static int gen_rnn(const param_set *ps, const dev_spec *dev, graph_profile **out, sw_err *err)
{
    return gen_rnn_impl("rnn", 0, ps, dev, out, err);
}

static int gen_brnn(const param_set *ps, const dev_spec *dev, graph_profile **out, sw_err *err)
{
    return gen_rnn_impl("brnn", 1, ps, dev, out, err);
}

const model_def model_rnn = {"rnn", "RNN-L-XK: L LSTM layers unrolled over --seq, parameters "
                             "shared per layer (paper: --layers 8 --hidden 8192 --batch 256)",
                             rnn_params, gen_rnn};
const model_def model_brnn = {"brnn", "bidirectional LSTM, BRNN-L-XK (paper: --layers 4 "
                              "--hidden 8192 --batch 128)", brnn_params, gen_brnn};
