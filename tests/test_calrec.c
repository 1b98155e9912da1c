/* test_calrec.c: the cost model against recorded operator times
   (profiles/calrec.c): a hand-made recorded profile with known times
   gives known errors per class, the fit recovers known efficiency figures
   from synthetic times, generated profiles are timed as the generators time
   them, the PyTorch importer's shape attributes, and `swapsim calibrate
   --recorded`. */
#include <unistd.h>

#include "../profiles/calibrate.h"
#include "../profiles/calrec.h"
#include "../profiles/importers.h"
#include "../profiles/profile_io.h"
#include "cli_run.h"
#include "tap.h"

/* a device with round figures: 10 TFLOP/s, 1 TB/s, 2 us per kernel */
static dev_spec round_dev(void)
{
    dev_spec d = *dev_find("v100");
    snprintf(d.name, sizeof d.name, "round");
    d.peak_flops_fp32 = 10e12;
    d.peak_flops_fp16 = 40e12;
    d.mem_bw = 1e12;
    d.launch_overhead_s = 2e-6;
    return d;
}

static int32_t add_op(graph_profile *g, const char *name, const char *type, double t, int phase,
                      int32_t x, int32_t y, const char *const *k, const double *v, int n)
{
    int32_t op = graph_add_op(g, name, type, t, phase, &x, 1, &y, 1, NULL, 0, 0);
    for (int i = 0; op >= 0 && i < n; i++)
        graph_op_attr(g, op, k[i], v[i]);
    return op;
}

/* a recorded profile of one convolution (forward, backward), one product,
   one batch norm, one ReLU and one pooling, each recorded at factor[class]
   times the cost model's time on round_dev */
static graph_profile *tiny_recorded(const double *factor)
{
    dev_spec d = round_dev();
    graph_profile *g = graph_new("tiny", &d);
    cm_ctx c;
    cm_init(&c, &g->device, 0);
    int32_t t[8];
    for (int i = 0; i < 8; i++) {
        char nm[16];
        snprintf(nm, sizeof nm, "t%d", i);
        t[i] = graph_add_tensor(g, nm, 1 << 20, i ? GK_ACTIVATION : GK_INPUT, 0);
    }
    static const char *const ck[] = {"n", "c", "h", "w", "k", "r", "s", "stride", "pad",
                                     "pad_w", "groups", "ho", "wo"};
    const double cv[] = {32, 64, 56, 56, 128, 3, 3, 1, 1, 1, 1, 56, 56};
    cm_cost cc;
    cm_conv(&c, 32, 64, 56, 56, 128, 3, 3, 1, 56, 56, 1, &cc);
    add_op(g, "conv", "aten::conv2d", cc.fwd_s * factor[CR_CONV_FWD], GP_FORWARD, t[1], t[2], ck,
           cv, 13);
    static const char *const mk[] = {"m", "n", "k", "batch"};
    const double mv[] = {512, 1024, 2048, 1};
    cm_cost mc;
    cm_matmul(&c, 1, 512, 1024, 2048, 1, &mc);
    add_op(g, "fc", "aten::linear", mc.fwd_s * factor[CR_GEMM], GP_FORWARD, t[2], t[3], mk, mv,
           4);
    static const char *const bk[] = {"n", "c", "h", "w"};
    const double bv[] = {32, 128, 56, 56};
    double e = 32.0 * 128 * 56 * 56;
    cm_cost bc;
    cm_simple(&c, CM_NORM, 2 * e, e, 8, 3 * e, e, &bc);
    add_op(g, "bn", "aten::batch_norm", bc.fwd_s * factor[CR_NORM], GP_FORWARD, t[3], t[4], bk,
           bv, 4);
    static const char *const ek[] = {"in_elems", "out_elems"};
    const double ev[] = {e, e};
    cm_cost ec;
    cm_simple(&c, CM_ELEMWISE, e, e, 0, 0, 0, &ec);
    add_op(g, "relu", "aten::relu_", ec.fwd_s * factor[CR_ELEMWISE], GP_FORWARD, t[4], t[5], ek,
           ev, 2);
    static const char *const pk[] = {"n", "c", "h", "w", "r", "s", "stride", "pad", "ho", "wo"};
    const double pv[] = {32, 128, 56, 56, 2, 2, 2, 0, 28, 28};
    cm_cost pc;
    cm_simple(&c, CM_POOL, e, e / 4, 4, 2 * e / 4 + e, e, &pc);
    add_op(g, "pool", "aten::max_pool2d", pc.fwd_s * factor[CR_POOL], GP_FORWARD, t[5], t[6], pk,
           pv, 10);
    /* the convolution's backward: the forward's attributes and need_dx */
    double cbv[14];
    memcpy(cbv, cv, sizeof cv);
    const char *cbk[14];
    memcpy(cbk, ck, sizeof ck);
    cbk[13] = "need_dx";
    cbv[13] = 1;
    add_op(g, "conv_bwd", "ConvolutionBackward0", cc.bwd_s * factor[CR_CONV_BWD], GP_BACKWARD,
           t[2], t[7], cbk, cbv, 14);
    graph_set_str(&g->prov.source, "recorded");
    graph_set_str(&g->prov.device, "Round GPU (made up)");
    sw_err err;
    if (graph_finish(g, &err, NULL, NULL)) {
        printf("# %s\n", err.msg);
        graph_free(g);
        return NULL;
    }
    return g;
}

static void known_errors(void)
{
    double factor[CR__COUNT] = {2, 0.5, 1, 1.25, 4, 1, 1};
    graph_profile *g = tiny_recorded(factor);
    OK(g != NULL, "the tiny recorded profile builds");
    if (!g)
        return;
    cr_set s;
    cr_set_init(&s);
    sw_err err;
    IS_INT(cr_add_profile(&s, g, NULL, NULL, &err), 0, "it is added");
    IS_INT(s.n_ops, 6, "six operators timed");
    IS_INT(s.src[0].n_unmodelled, 0, "none without shapes");
    IS_STR_HAS(s.src[0].gpu, "Round GPU", "the recording GPU from the provenance");
    cr_figures bi;
    cr_figures_builtin(NULL, &bi);
    cr_class_sum cs[CR__COUNT + 1];
    IS_INT(cr_summarise(&s, &bi, -1, cs), 0, "summarised");
    for (int c = 0; c < CR__COUNT; c++) {
        if (c == CR_OTHER)
            continue;
        IS_INT(cs[c].n, 1, "%s: one operator", cr_class_name(c));
        /* recorded = factor x model: error = 1 / factor - 1 */
        IS_NUM(cs[c].model_s / cs[c].measured_s - 1, 1 / factor[c] - 1, 1e-9,
               "%s: error %+.0f%%", cr_class_name(c), 100 * (1 / factor[c] - 1));
        IS_NUM(cs[c].median_abs_err, fabs(1 / factor[c] - 1), 1e-9, "%s: median |error|",
               cr_class_name(c));
    }
    IS_INT(cs[CR__COUNT].n, 6, "all: six operators");
    /* a profile recorded with `swapsim profile` keeps the device it was
       generated for: it is timed on the GPU its provenance names */
    graph_set_str(&g->prov.device, "NVIDIA H100 80GB HBM3");
    cr_add_profile(&s, g, "on-h100", NULL, &err);
    IS_STR_HAS(s.src[s.n_src - 1].dev.name, "h100", "timed on the GPU it was recorded on");
    dev_spec d = round_dev();
    cr_add_profile(&s, g, "on-round", &d, &err);
    IS_STR_HAS(s.src[s.n_src - 1].dev.name, "round", "unless a device is given");
    /* a profile that is not recorded is refused */
    graph_set_str(&g->prov.source, "generated");
    IS_INT(cr_add_profile(&s, g, "gen.json", NULL, &err), SW_EINVAL, "a generated profile is refused");
    IS_STR_HAS(err.msg, "gen.json: not a recorded profile", "the refusal names it");
    cr_set_free(&s);
    graph_free(g);
}

/* recorded times made with known figures: the fit finds them again */
static void fit_recovers(void)
{
    double factor[CR__COUNT] = {1, 1, 1, 1, 1, 1, 1};
    cr_set s;
    cr_set_init(&s);
    sw_err err;
    /* several profiles of different sizes, so every figure is determined */
    for (int rep = 0; rep < 4; rep++) {
        graph_profile *g = tiny_recorded(factor);
        if (!g)
            break;
        /* batch 32 / 2^rep: the batch dimension of every operator (a
           product's m, the others' n) and the elements */
        for (int32_t i = 0; i < g->n_ops; i++) {
            const char *batch_key = strcmp(g->ops[i].type, "aten::linear") ? "n" : "m";
            for (int32_t k = 0; k < g->ops[i].n_attr; k++) {
                graph_attr *a = &g->ops[i].attr[k];
                if (!strcmp(a->key, batch_key) || !strcmp(a->key, "in_elems") ||
                    !strcmp(a->key, "out_elems"))
                    a->value /= (double)(1 << rep);
            }
        }
        cr_add_profile(&s, g, NULL, NULL, &err);
        graph_free(g);
    }
    IS_INT(s.n_src, 4, "four synthetic profiles");
    cr_figures truth;
    cr_figures_builtin(NULL, &truth);
    truth.builtin = 0;
    truth.eff[CM_WINOGRAD] = 1.3;
    truth.eff[CM_MATMUL] = 0.6;
    truth.eff_bw[CM_NORM] = 0.8;
    truth.eff_bw[CM_ELEMWISE] = 0.9;
    truth.eff_bw[CM_POOL] = 0.4;
    truth.launch_s = 4e-6;
    for (int32_t i = 0; i < s.n_ops; i++)
        s.ops[i].measured_s = cr_op_time(&s, &truth, &s.ops[i]);
    cr_fit_result fr;
    IS_INT(cr_fit(&s, -1, &fr, &err), 0, "the fit runs");
    OK(fr.free_eff[CM_WINOGRAD] && fr.free_eff[CM_MATMUL] && fr.free_bw[CM_NORM] &&
           fr.free_bw[CM_ELEMWISE] && fr.free_bw[CM_POOL] && fr.free_launch,
       "the figures with data are fitted");
    IS_NUM(fr.fig.eff[CM_WINOGRAD], 1.3, 0.013, "conv3x3 compute efficiency recovered (1.3)");
    IS_NUM(fr.fig.eff[CM_MATMUL], 0.6, 0.006, "matmul compute efficiency recovered (0.6)");
    IS_NUM(fr.fig.eff_bw[CM_NORM], 0.8, 0.008, "norm bandwidth efficiency recovered (0.8)");
    IS_NUM(fr.fig.eff_bw[CM_ELEMWISE], 0.9, 0.009, "elementwise bandwidth efficiency (0.9)");
    IS_NUM(fr.fig.eff_bw[CM_POOL], 0.4, 0.004, "pool bandwidth efficiency recovered (0.4)");
    IS_NUM(fr.fig.launch_s, 4e-6, 4e-8, "fixed cost per kernel recovered (4 us)");
    OK(fr.rms_before > 0.05 && fr.rms_after < 1e-3, "the misfit drops (%.3f to %.5f)",
       fr.rms_before, fr.rms_after);
    IS_NUM(fr.fig.eff[CM_CONV1X1], cm_constants(CM_CONV1X1)->eff_fp32, 0,
           "a kind without operators keeps its built-in figure");
    cr_fit_result again;
    cr_fit(&s, -1, &again, &err);
    OK(!memcmp(&again.fig, &fr.fig, sizeof fr.fig), "the fit is deterministic");
    /* leaving a source out still fits the rest */
    IS_INT(cr_fit(&s, 0, &again, &err), 0, "the fit without the first source runs");
    IS_NUM(again.fig.eff[CM_MATMUL], 0.6, 0.006, "and finds the same figure");
    cr_set_free(&s);
}

/* a generated profile passed off as recorded: the model times every
   convolution, product, batch norm and pooling as the generator did */
static void generated_agree(void)
{
    static const struct {
        const char *model;
        const char *kv[3];
        int nkv;
    } m[] = {{"resnet", {"depth=50", "batch=4"}, 2},
             {"inception", {"width=1", "batch=2"}, 2},
             {"vgg", {"depth=16", "batch=2"}, 2},
             {"transformer", {"layers=2", "batch=2"}, 2}};
    for (size_t i = 0; i < SW_ARRAY_LEN(m); i++) {
        graph_profile *g;
        sw_err err;
        if (cal_generate(m[i].model, m[i].kv, m[i].nkv, "v100", &g, &err)) {
            OK(0, "%s generates: %s", m[i].model, err.msg);
            continue;
        }
        graph_set_str(&g->prov.source, "recorded");
        cr_set s;
        cr_set_init(&s);
        IS_INT(cr_add_profile(&s, g, NULL, NULL, &err), 0, "%s added", m[i].model);
        int n = 0, differ = 0;
        for (int32_t k = 0; k < s.n_ops; k++) {
            const cr_op *o = &s.ops[k];
            if (o->cls > CR_POOL)
                continue;
            n++;
            differ += fabs(o->model_s / o->measured_s - 1) > 1e-9;
        }
        OK(n > 0 && differ == 0, "%s: %d convolutions, products, norms and poolings timed as "
           "generated (%d differ)", m[i].model, n, differ);
        IS_INT(s.src[0].n_unmodelled, 0, "%s: every operator timed", m[i].model);
        cr_set_free(&s);
        graph_free(g);
    }
}

static double attr_of(const graph_op *o, const char *k)
{
    for (int32_t i = 0; i < o->n_attr; i++)
        if (!strcmp(o->attr[i].key, k))
            return o->attr[i].value;
    return -1;
}

/* the PyTorch importer gives the H100 ResNet-50's operators their shapes */
static void pytorch_shapes(void)
{
    const char *data = tap_data_dir();
    char et[1024], k[1024];
    snprintf(et, sizeof et, "%s/pytorch-traces/h100_resnet50_b64_et.json.gz", data ? data : ".");
    snprintf(k, sizeof k, "%s/pytorch-traces/h100_resnet50_b64_kineto.json.gz", data ? data : ".");
    if (!data || access(et, R_OK) || access(k, R_OK)) {
        tap_skip(9, "the H100 ResNet-50 trace is absent");
        return;
    }
    const importer *im = importer_find("pytorch");
    param_set ps;
    params_init(&ps, im->params);
    sw_err err;
    params_set_kv(&ps, "batch=64", &err);
    const char *files[2] = {et, k};
    graph_profile *g = NULL;
    int rc = im->import(files, 2, &ps, dev_find("h100"), &g, &err);
    params_free(&ps);
    IS_INT(rc, 0, "the H100 ResNet-50 imports %s", rc ? err.msg : "");
    if (rc)
        return;
    const graph_op *conv1 = NULL, *conv1b = NULL, *fc = NULL, *bnb = NULL;
    for (int32_t i = 0; i < g->n_ops; i++) {
        const graph_op *o = &g->ops[i];
        if (!conv1 && !strcmp(o->type, "aten::conv2d"))
            conv1 = o;
        if (!strcmp(o->type, "ConvolutionBackward0"))
            conv1b = o; /* the last one: the first layer's */
        if (!fc && !strcmp(o->type, "aten::linear"))
            fc = o;
        if (!bnb && !strcmp(o->type, "CudnnBatchNormBackward0"))
            bnb = o;
    }
    OK(conv1 && attr_of(conv1, "n") == 64 && attr_of(conv1, "c") == 3 &&
           attr_of(conv1, "h") == 224 && attr_of(conv1, "k") == 64 && attr_of(conv1, "r") == 7 &&
           attr_of(conv1, "s") == 7 && attr_of(conv1, "stride") == 2 &&
           attr_of(conv1, "pad") == 3 && attr_of(conv1, "ho") == 112,
       "the first convolution: n 64, c 3, h 224, k 64, 7x7, stride 2, pad 3, ho 112");
    OK(conv1b && attr_of(conv1b, "c") == 3 && attr_of(conv1b, "need_dx") == 0,
       "its backward has its shapes and computes no input gradient");
    OK(fc && attr_of(fc, "m") == 64 && attr_of(fc, "n") == 1000 && attr_of(fc, "k") == 2048 &&
           attr_of(fc, "batch") == 1,
       "the linear layer: m 64, n 1000, k 2048");
    OK(bnb && attr_of(bnb, "n") == 64 && attr_of(bnb, "c") > 0,
       "a batch norm's backward has its forward's shapes (not num_batches_tracked's)");
    cr_set s;
    cr_set_init(&s);
    IS_INT(cr_add_profile(&s, g, "resnet50", NULL, &err), 0, "the import is a recorded profile");
    IS_INT(s.src[0].n_unmodelled, 0, "every timed operator has what the model needs");
    IS_STR_HAS(s.src[0].gpu, "H100", "the GPU from the Kineto trace");
    cr_class_sum cs[CR__COUNT + 1];
    cr_figures bi;
    cr_figures_builtin(NULL, &bi);
    cr_summarise(&s, &bi, -1, cs);
    IS_INT(cs[CR_CONV_FWD].n, 53, "53 convolutions forward");
    cr_set_free(&s);
    graph_free(g);
}

static void cli(void)
{
    bin = getenv("SWAPSIM_BIN");
    if (!bin || access(bin, X_OK) != 0) {
        tap_skip(8, "SWAPSIM_BIN not set (run through make test)");
        return;
    }
    snprintf(dir, sizeof dir, "/tmp/swapsim-calrec-%d", (int)getpid());
    char cmd[512];
    snprintf(cmd, sizeof cmd, "mkdir -p %s", dir);
    if (system(cmd) != 0) {
        tap_skip(8, "cannot create a scratch directory");
        return;
    }
    double factor[CR__COUNT] = {2, 0.5, 1, 1.25, 4, 1, 1};
    graph_profile *g = tiny_recorded(factor);
    char path[600];
    snprintf(path, sizeof path, "%s/tiny.json", dir);
    sw_err err;
    OK(g && !profile_write_file(g, path, &err), "the tiny recorded profile is written");
    graph_set_str(&g->prov.source, "generated");
    snprintf(path, sizeof path, "%s/gen.json", dir);
    profile_write_file(g, path, &err);
    graph_free(g);
    char *o = NULL;
    IS_INT(sh("calibrate --data /nonexistent --recorded tiny.json", &o, NULL), 0,
           "calibrate --recorded runs");
    IS_STR_HAS(o, "## Recorded profiles", "it adds a section for the recorded profiles");
    IS_STR_HAS(o, "| conv forward | 1 |", "with the error per class");
    IS_STR_HAS(o, "| conv backward | 1 |", "conv backward has its row");
    IS_STR_HAS(o, "+100%", "recorded at half the model's time: +100%%");
    sw_free(o);
    expect_fail("calibrate --data /nonexistent --recorded gen.json", 1, "not a recorded profile",
                "calibrate --recorded with a generated profile");
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        printf("# could not remove %s\n", dir);
}

int main(int argc, char **argv)
{
    static const tap_test tests[] = {{"known_errors", known_errors},
                                     {"fit_recovers", fit_recovers},
                                     {"generated_agree", generated_agree},
                                     {"pytorch_shapes", pytorch_shapes},
                                     {"cli", cli}};
    return tap_run(tests, SW_ARRAY_LEN(tests), argc, argv);
}
