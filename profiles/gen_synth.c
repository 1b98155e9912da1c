/* gen_synth.c: synthetic generators for tests and benchmarks: `chain` (N
   identical layers) and `random` (a seeded random training DAG with
   branches, joins and parameters). */
#include <gsl/gsl_rng.h>
#include <stdio.h>
#include <string.h>

#include "autograd.h"
#include "models.h"

static int set_provenance(graph_profile *g, const char *tool, const param_set *ps,
                          const dev_spec *dev)
{
    sw_buf b;
    sw_buf_init(&b);
    sw_buf_printf(&b, "swapsim model %s ", tool);
    params_to_json(ps, &b);
    int rc = b.oom || graph_set_str(&g->prov.source, "generated") ||
             graph_set_str(&g->prov.tool, b.data) ||
             graph_set_str(&g->prov.device, dev->name) ||
             graph_set_str(&g->prov.cost_model, "synthetic: times and sizes set by options");
    sw_buf_free(&b);
    return rc ? SW_ENOMEM : 0;
}

/* ---- chain ---- */

static const param_def chain_params[] = {
    {"layers", PT_INT, "8", "number of layers", NULL, 1, 1e7},
    {"batch", PT_INT, "32", "samples per iteration", NULL, 1, 1e9},
    {"hidden", PT_INT, "1024", "features per sample (activation = batch*hidden*4 bytes, "
     "parameter = hidden*hidden*4 bytes)", NULL, 1, 1e9},
    {"activation_bytes", PT_SIZE, "0", "activation size per layer (0: from batch and hidden)",
     NULL, 0, 9e18},
    {"param_bytes", PT_SIZE, "0", "parameter size per layer (0: from hidden)", NULL, 0, 9e18},
    {"op_time", PT_SECONDS, "0", "forward time per layer, backward twice that (0: from FLOPs "
     "at half the device's fp32 peak)", NULL, 1, 0},
    {"inference", PT_BOOL, "false", "forward pass only", NULL, 1, 0},
    {"optimizer", PT_CHOICE, "sgd", "optimizer state added per parameter", "sgd|momentum|adam",
     1, 0},
    PARAM_END};

static int gen_chain(const param_set *ps, const dev_spec *dev, graph_profile **out, sw_err *err)
{
    int64_t L = params_int(ps, "layers"), B = params_int(ps, "batch"), H = params_int(ps, "hidden");
    int64_t act = params_size(ps, "activation_bytes"), par = params_size(ps, "param_bytes");
    double t = params_seconds(ps, "op_time");
    if (!act)
        act = B * H * 4;
    if (!par)
        par = H * H * 4;
    if (t <= 0)
        t = 2.0 * (double)B * (double)H * (double)H / (0.5 * dev->peak_flops_fp32);
    ag_optimizer opt = AG_SGD;
    ag_parse_optimizer(params_str(ps, "optimizer"), &opt);
    char name[64];
    snprintf(name, sizeof name, "chain-%lld", (long long)L);
    ag_graph a;
    if (ag_init(&a, name, dev))
        return sw_fail(err, SW_ENOMEM, "out of memory");
    a.launch_s = 0;
    a.g->batch = B;
    int32_t x = ag_input(&a, "x", act);
    int32_t label = ag_input(&a, "label", B * 4);
    if (x < 0 || label < 0)
        goto oom;
    for (int64_t i = 1; i <= L; i++) {
        char n[32], wn[32];
        snprintf(wn, sizeof wn, "w%lld", (long long)i);
        snprintf(n, sizeof n, "layer%lld", (long long)i);
        int32_t w = ag_param(&a, wn, par);
        int32_t in[2] = {x, w};
        if (w < 0 || ag_op(&a, n, "linear", t, 2 * t, in, 2, &act, 1, &x,
                           AG_SAVE_IN(0) | AG_SAVE_IN(1), 0) < 0)
            goto oom;
    }
    if (params_bool(ps, "inference")) {
        int rc = set_provenance(a.g, "chain", ps, dev);
        if (rc) {
            ag_release(&a);
            return sw_fail(err, rc, "out of memory");
        }
        return ag_finish_inference(&a, out, err);
    }
    int32_t in[2] = {x, label}, loss;
    int64_t four = 4;
    if (ag_op(&a, "loss", "loss", t * 0.01, t * 0.01, in, 2, &four, 1, &loss,
              AG_SAVE_IN(0) | AG_SAVE_IN(1), 0) < 0)
        goto oom;
    if (set_provenance(a.g, "chain", ps, dev))
        goto oom;
    return ag_finish_training(&a, loss, opt, out, err);
oom:
    ag_release(&a);
    return sw_fail(err, SW_ENOMEM, "out of memory");
}

const model_def model_chain = {"chain", "N identical fully connected layers (synthetic)",
                               chain_params, gen_chain};

/* ---- random ---- */

static const param_def random_params[] = {
    {"ops", PT_INT, "40", "forward operators", NULL, 1, 1e7},
    {"seed", PT_INT, "1", "random seed", NULL, 0, 9e18},
    {"batch", PT_INT, "16", "samples per iteration (throughput only)", NULL, 1, 1e9},
    {"unit", PT_SIZE, "1MiB", "size unit: activations are 1-16 units, parameters 1-8", NULL, 1,
     9e18},
    {"param_prob", PT_FLOAT, "0.6", "probability that an operator has a parameter", NULL, 0, 1},
    {"join_prob", PT_FLOAT, "0.3", "probability that an operator joins two branches", NULL, 0,
     1},
    {"op_time", PT_SECONDS, "1ms", "mean forward time (each op 0.25x-1.75x, backward 2x)",
     NULL, 1, 0},
    {"inference", PT_BOOL, "false", "forward pass only", NULL, 1, 0},
    {"optimizer", PT_CHOICE, "sgd", "optimizer", "sgd|momentum|adam", 1, 0},
    PARAM_END};

static int gen_random(const param_set *ps, const dev_spec *dev, graph_profile **out, sw_err *err)
{
    int64_t n = params_int(ps, "ops"), unit = params_size(ps, "unit");
    double pp = params_float(ps, "param_prob"), jp = params_float(ps, "join_prob");
    double mt = params_seconds(ps, "op_time");
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (!rng)
        return sw_fail(err, SW_ENOMEM, "out of memory");
    gsl_rng_set(rng, (unsigned long)params_int(ps, "seed"));
    char name[64];
    snprintf(name, sizeof name, "random-%lld-s%lld", (long long)n, (long long)params_int(ps, "seed"));
    ag_graph a;
    int32_t *acts = sw_malloc(((size_t)n + 1) * sizeof *acts);
    if (!acts || ag_init(&a, name, dev)) {
        sw_free(acts);
        gsl_rng_free(rng);
        return sw_fail(err, SW_ENOMEM, "out of memory");
    }
    a.launch_s = 0;
    a.g->batch = params_int(ps, "batch");
    int32_t x = ag_input(&a, "x", unit * 2);
    if (x < 0)
        goto oom;
    int32_t nacts = 0;
    acts[nacts++] = x;
    int32_t last = x;
    for (int64_t i = 0; i < n; i++) {
        int32_t in[3];
        int nin = 0;
        /* first input: one of the last 4 activations (branches) */
        int32_t window = nacts < 4 ? nacts : 4;
        in[nin++] = acts[nacts - 1 - (int32_t)gsl_rng_uniform_int(rng, (unsigned long)window)];
        if (nacts > 1 && gsl_rng_uniform(rng) < jp) {
            int32_t other = acts[(int32_t)gsl_rng_uniform_int(rng, (unsigned long)nacts)];
            if (other != in[0])
                in[nin++] = other;
        }
        char nm[32];
        snprintf(nm, sizeof nm, "op%lld", (long long)i);
        if (gsl_rng_uniform(rng) < pp) {
            char wn[32];
            snprintf(wn, sizeof wn, "w%lld", (long long)i);
            in[nin] = ag_param(&a, wn, unit * (int64_t)(1 + gsl_rng_uniform_int(rng, 8)));
            if (in[nin++] < 0)
                goto oom;
        }
        int64_t ob = unit * (int64_t)(1 + gsl_rng_uniform_int(rng, 16));
        double t = mt * (0.25 + 1.5 * gsl_rng_uniform(rng));
        int32_t o;
        if (ag_op(&a, nm, nin > 1 ? "mixed" : "unary", t, 2 * t, in, nin, &ob, 1, &o,
                  AG_SAVE_ALL_IN, 0) < 0)
            goto oom;
        acts[nacts++] = o;
        last = o;
    }
    /* join every dangling branch into the loss so all ops reach it */
    {
        int32_t *used = sw_calloc((size_t)a.g->n_tensors + 1, sizeof *used);
        if (!used)
            goto oom;
        for (int32_t o = 0; o < a.g->n_ops; o++)
            for (int32_t k = 0; k < a.g->ops[o].n_in; k++)
                used[a.g->ops[o].in[k]] = 1;
        int32_t lin[64];
        int nl = 0;
        lin[nl++] = last;
        for (int32_t i = 1; i < nacts && nl < 64; i++)
            if (!used[acts[i]] && acts[i] != last)
                lin[nl++] = acts[i];
        sw_free(used);
        int32_t loss;
        int64_t four = 4;
        if (params_bool(ps, "inference")) {
            if (set_provenance(a.g, "random", ps, dev))
                goto oom;
            sw_free(acts);
            gsl_rng_free(rng);
            return ag_finish_inference(&a, out, err);
        }
        if (ag_op(&a, "loss", "loss", mt * 0.05, mt * 0.05, lin, nl, &four, 1, &loss,
                  AG_SAVE_ALL_IN, 0) < 0)
            goto oom;
        ag_optimizer opt = AG_SGD;
        ag_parse_optimizer(params_str(ps, "optimizer"), &opt);
        if (set_provenance(a.g, "random", ps, dev))
            goto oom;
        sw_free(acts);
        gsl_rng_free(rng);
        return ag_finish_training(&a, loss, opt, out, err);
    }
oom:
    sw_free(acts);
    gsl_rng_free(rng);
    ag_release(&a);
    return sw_fail(err, SW_ENOMEM, "out of memory");
}

const model_def model_random = {"random", "seeded random training DAG with branches, joins "
                                "and parameters (synthetic)", random_params, gen_random};
