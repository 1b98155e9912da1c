/* test_roundtrip.c: every plan reloads. Every registered planner, on every
   recorded profile in data/ (PyTorch traces, DTR logs, PipeDream profiles),
   at a roomy and a tight budget: where it plans, the plan is written to a
   file (plan_write_file, what `swapsim plan -o` does), read back
   (plan_read_file, what `verify` and `simulate` do), verifies, and simulates
   to the same iteration time and peak as the plan the planner returned. Zero-byte
   storages (empty tensors of the PyTorch traces) are placed nowhere (class
   and object -1) and must read back. Through the command line, the reproducer
   of the issue: swapadvisor on the imported ResNet-50 at 0.5x, plan -o, then
   verify. */
#include <string.h>
#include <unistd.h>

#include "../planners/planner.h"
#include "../profiles/importers.h"
#include "../profiles/profile_io.h"
#include "../sim/plan_io.h"
#include "../sim/simulate.h"
#include "../sim/verify.h"
#include "cli_run.h"
#include "tap.h"

/* The recorded profiles: format, files, importer options. */
static const struct {
    const char *name, *fmt, *f1, *f2, *kv;
} recs[] = {
    {"h100-resnet50", "pytorch", "pytorch-traces/h100_resnet50_b64_et.json.gz",
     "pytorch-traces/h100_resnet50_b64_kineto.json.gz", "batch=64"},
    {"h100-vgg16", "pytorch", "pytorch-traces/h100_vgg16_b64_et.json.gz",
     "pytorch-traces/h100_vgg16_b64_kineto.json.gz", "batch=64"},
    {"h100-inception3", "pytorch", "pytorch-traces/h100_inception3_b64_et.json.gz",
     "pytorch-traces/h100_inception3_b64_kineto.json.gz", "batch=64"},
    {"h100-densenet121", "pytorch", "pytorch-traces/h100_densenet121_b64_et.json.gz",
     "pytorch-traces/h100_densenet121_b64_kineto.json.gz", "batch=64"},
    {"h100-lstm", "pytorch", "pytorch-traces/h100_lstm2x1024_b64s128_et.json.gz",
     "pytorch-traces/h100_lstm2x1024_b64s128_kineto.json.gz", "batch=64"},
    {"h200-lstm-lm", "pytorch", "pytorch-traces/h200_lstm_lm_b64s128_et.json.gz",
     "pytorch-traces/h200_lstm_lm_b64s128_kineto.json.gz", "batch=64"},
    {"h200-gru-lm", "pytorch", "pytorch-traces/h200_gru_lm_b64s128_et.json.gz",
     "pytorch-traces/h200_gru_lm_b64s128_kineto.json.gz", "batch=64"},
    {"h200-vgg16", "pytorch", "pytorch-traces/h200_vgg16_b64_et.json.gz",
     "pytorch-traces/h200_vgg16_b64_kineto.json.gz", "batch=64"},
    {"h200-resnet50", "pytorch", "pytorch-traces/h200_resnet50_b64_et.json.gz",
     "pytorch-traces/h200_resnet50_b64_kineto.json.gz", "batch=64"},
    {"h200-mobilenet-v3-large", "pytorch", "pytorch-traces/h200_mobilenet_v3_large_b64_et.json.gz",
     "pytorch-traces/h200_mobilenet_v3_large_b64_kineto.json.gz", "batch=64"},
    {"h200-vit", "pytorch", "pytorch-traces/h200_vit_b_16_b64_et.json.gz",
     "pytorch-traces/h200_vit_b_16_b64_kineto.json.gz", "batch=64"},
    {"h200-unet", "pytorch", "pytorch-traces/h200_unet_b16_et.json.gz",
     "pytorch-traces/h200_unet_b16_kineto.json.gz", "batch=16"},
    {"h200-llama-small", "pytorch", "pytorch-traces/h200_llama_small_b8s1024_et.json.gz",
     "pytorch-traces/h200_llama_small_b8s1024_kineto.json.gz", "batch=8"},
    {"h200-gpt2", "pytorch", "pytorch-traces/h200_gpt2_b8s1024_et.json.gz",
     "pytorch-traces/h200_gpt2_b8s1024_kineto.json.gz", "batch=8"},
    {"h200-bert", "pytorch", "pytorch-traces/h200_bert_base_b32s128_et.json.gz",
     "pytorch-traces/h200_bert_base_b32s128_kineto.json.gz", "batch=32"},
    {"pytorch-linear", "pytorch", "pytorch-traces/linear_et.json.gz",
     "pytorch-traces/linear_kineto.json.gz", NULL},
    {"pytorch-resnet-et", "pytorch", "pytorch-traces/resnet_et.json.gz", NULL, NULL},
    {"dtr-lstm", "dtr", "dtr-logs/lstm-128-11000000000.0-2020-10-1-16-38-52-default.log", NULL,
     NULL},
    {"dtr-resnet32", "dtr", "dtr-logs/resnet32-56-9000000000.0-2020-10-1-13-3-30-default.log",
     NULL, NULL},
    {"dtr-transformer", "dtr",
     "dtr-logs/transformer-10-8000000000.0-2020-10-1-10-56-5-default.log", NULL, NULL},
    {"dtr-densenet121", "dtr",
     "dtr-logs/tv_densenet121-84-10000000000.0-2020-10-1-13-41-18-default.log", NULL, NULL},
    {"dtr-unet", "dtr", "dtr-logs/unet-6-8000000000.0-2020-10-1-10-57-18-default.log", NULL,
     NULL},
    {"pipedream-alexnet", "pipedream", "pipedream/alexnet.txt", NULL, NULL},
    {"pipedream-gnmt", "pipedream", "pipedream/gnmt.txt", NULL, NULL},
    {"pipedream-inception3", "pipedream", "pipedream/inception_v3.txt", NULL, NULL},
    {"pipedream-resnet101", "pipedream", "pipedream/resnet101.txt", NULL, NULL},
    {"pipedream-resnet18", "pipedream", "pipedream/resnet18.txt", NULL, NULL},
    {"pipedream-resnet50", "pipedream", "pipedream/resnet50.txt", NULL, NULL},
    {"pipedream-squeezenet", "pipedream", "pipedream/squeezenet1_0.txt", NULL, NULL},
    {"pipedream-vgg16", "pipedream", "pipedream/vgg16.txt", NULL, NULL},
};
static const double fracs[] = {0.9, 0.6};

static int import_rec(const char *data, size_t i, graph_profile **g, sw_err *e)
{
    const importer *im = importer_find(recs[i].fmt);
    char p1[1024], p2[1024];
    snprintf(p1, sizeof p1, "%s/%s", data, recs[i].f1);
    if (recs[i].f2)
        snprintf(p2, sizeof p2, "%s/%s", data, recs[i].f2);
    const char *files[2] = {p1, p2};
    param_set ps;
    if (params_init(&ps, im->params))
        return SW_ENOMEM;
    int rc = recs[i].kv ? params_set_kv(&ps, recs[i].kv, e) : 0;
    if (!rc)
        rc = im->import(files, recs[i].f2 ? 2 : 1, &ps, dev_find("v100"), g, e);
    params_free(&ps);
    return rc;
}

/* Plans g with pl at budget (seed 7, one thread, short searches and node
   limits so the test does not depend on timing). */
static int plan_once(const planner *pl, const graph_profile *g, int64_t budget, plan **out,
                     sw_err *e)
{
    planner_opts o;
    if (planner_opts_init(&o, pl))
        return SW_ENOMEM;
    o.memory_budget = budget;
    o.seed = 7;
    o.threads = 1;
    o.time_budget_s = 30;
    sw_err ignore;
    params_set(&o.params, "generations", "2", &ignore);
    params_set(&o.params, "population", "6", &ignore);
    params_set(&o.params, "max_ops", "24", &ignore);
    params_set(&o.params, "max_nodes", "300", &ignore);
    if (!strcmp(pl->name, "belady")) /* one of its variants: the same recording path */
        params_set(&o.params, "search", "false", &ignore);
    int rc = planner_run(pl, g, &o, out, e);
    planner_opts_free(&o);
    return rc;
}

static void roundtrip(const planner *pl, const graph_profile *g, const char *gname, double frac,
                      int64_t peak)
{
    int64_t budget = (int64_t)((double)peak * frac);
    plan *p = NULL, *q = NULL;
    sw_err e;
    int rc = plan_once(pl, g, budget, &p, &e);
    if (rc) {
        /* a refusal (too tight, above a size limit) has nothing to reload */
        OK(rc == SW_ENOFIT || rc == SW_EEXCEEDED || rc == SW_EUNSUPPORTED,
           "%s on %s at %.1fx: a plan or a refusal (%s)", pl->name, gname, frac, e.msg);
        return;
    }
    sim_result r1, r2;
    rc = sim_plan(p, NULL, NULL, &r1, &e);
    IS_INT(rc, 0, "%s on %s at %.1fx: the planner's plan simulates", pl->name, gname, frac);
    char path[400];
    snprintf(path, sizeof path, "%s/plan.json", dir);
    rc = plan_write_file(p, path, &e);
    IS_INT(rc, 0, "%s on %s at %.1fx: written", pl->name, gname, frac);
    rc = rc ? rc : plan_read_file(path, &q, &e);
    IS_INT(rc, 0, "%s on %s at %.1fx: reads back (%s)", pl->name, gname, frac,
           rc ? e.msg : "ok");
    if (!rc) {
        IS_INT(plan_verify(q, NULL, &e), 0, "%s on %s at %.1fx: the read plan verifies (%s)",
               pl->name, gname, frac, e.msg);
        rc = sim_plan(q, NULL, NULL, &r2, &e);
        OK(rc == 0 && r2.iteration_time_s == r1.iteration_time_s &&
               r2.peak_memory_bytes == r1.peak_memory_bytes,
           "%s on %s at %.1fx: the same time (%.9g s, %.9g s) and peak (%lld, %lld)", pl->name,
           gname, frac, r1.iteration_time_s, rc ? -1.0 : r2.iteration_time_s,
           (long long)r1.peak_memory_bytes, rc ? -1LL : (long long)r2.peak_memory_bytes);
    }
    plan_free(p);
    plan_free(q);
}

static const char *data_dir(void)
{
    const char *d = tap_data_dir();
    char probe[1024];
    snprintf(probe, sizeof probe, "%s/pipedream/resnet50.txt", d ? d : "");
    return d && access(probe, R_OK) == 0 ? d : NULL;
}

static void every_planner_every_recording(void)
{
    const char *d = data_dir();
    if (!d) {
        tap_skip(1, "recorded data not found ($SWAPSIM_DATA)");
        return;
    }
    for (size_t i = 0; i < SW_ARRAY_LEN(recs); i++) {
        graph_profile *g = NULL;
        sw_err e;
        int rc = import_rec(d, i, &g, &e);
        IS_INT(rc, 0, "%s imports (%s)", recs[i].name, rc ? e.msg : "ok");
        if (rc)
            continue;
        int64_t peak = 0;
        IS_INT(planner_ideal_peak(g, &peak, &e), 0, "%s: ideal peak", recs[i].name);
        for (size_t k = 0; k < planner_count(); k++)
            for (size_t f = 0; f < SW_ARRAY_LEN(fracs); f++)
                roundtrip(planner_at(k), g, recs[i].name, fracs[f], peak);
        graph_free(g);
    }
}

/* Refusals that help: on the H100 ResNet-50, each refusal names its cause
   and what gets further, and dtr's advice (budget_on=bytes) does get further. */
static void refusals_say_what_gets_further(void)
{
    const char *d = data_dir();
    if (!d) {
        tap_skip(1, "recorded data not found ($SWAPSIM_DATA)");
        return;
    }
    graph_profile *g = NULL;
    sw_err e;
    int64_t peak = 0;
    if (import_rec(d, 0, &g, &e) || planner_ideal_peak(g, &peak, &e)) {
        OK(0, "import the H100 ResNet-50 (%s)", e.msg);
        graph_free(g);
        return;
    }
    static const struct {
        const char *planner;
        double frac;
        const char *cause, *advice;
    } cases[] = {{"dtr", 0.5, "cause: fragmentation", "--set budget_on=bytes"},
                 {"dtr", 0.15, "cause: the persistent set", "swap them to the host"},
                 {"odswap", 0.15, "cause: a single operator's need", "swapsim bound"},
                 {"swapadvisor", 0.15, "cause: the size-class pool", "address allocator"},
                 {"tflms", 0.15, "cause: the persistent set", "swap parameters too"},
                 {"none", 0.5, "cause: every tensor resident", "swaps or recomputes"}};
    for (size_t i = 0; i < SW_ARRAY_LEN(cases); i++) {
        const planner *pl = planner_find(cases[i].planner);
        plan *p = NULL;
        int rc = plan_once(pl, g, (int64_t)((double)peak * cases[i].frac), &p, &e);
        IS_INT(rc, SW_ENOFIT, "%s at %.2fx refuses", cases[i].planner, cases[i].frac);
        plan_free(p);
        if (rc != SW_ENOFIT)
            continue;
        IS_STR_HAS(e.msg, cases[i].cause, "%s at %.2fx: the refusal names its cause",
                   cases[i].planner, cases[i].frac);
        IS_STR_HAS(e.msg, cases[i].advice, "%s at %.2fx: and what gets further",
                   cases[i].planner, cases[i].frac);
        OK(!strchr(e.msg, '\n'), "%s at %.2fx: in one line", cases[i].planner, cases[i].frac);
    }
    /* the advice holds: dtr deciding on bytes plans ResNet-50 at 0.5x */
    planner_opts o;
    plan *p = NULL;
    planner_opts_init(&o, planner_find("dtr"));
    o.memory_budget = (int64_t)((double)peak * 0.5);
    params_set(&o.params, "budget_on", "bytes", &e);
    int rc = planner_run(planner_find("dtr"), g, &o, &p, &e);
    IS_INT(rc, 0, "dtr --set budget_on=bytes plans ResNet-50 at 0.5x (%s)", rc ? e.msg : "ok");
    plan_free(p);
    planner_opts_free(&o);
    graph_free(g);
}

static void expect_ok(const char *args, const char *what)
{
    char *o = NULL, *e = NULL;
    int rc = sh(args, &o, &e);
    IS_INT(rc, 0, "%s (%s)", what, e ? e : "");
    sw_free(o);
    sw_free(e);
}

/* the reproducer, through the command line */
static void cli_swapadvisor_resnet50(void)
{
    const char *d = data_dir();
    if (!d || !bin) {
        tap_skip(1, d ? "SWAPSIM_BIN not set" : "recorded data not found ($SWAPSIM_DATA)");
        return;
    }
    char args[2400];
    snprintf(args, sizeof args, "import pytorch %s/%s %s/%s --batch 64 -o %s/r50.json", d,
             recs[0].f1, d, recs[0].f2, dir);
    expect_ok(args, "import the H100 ResNet-50");
    snprintf(args, sizeof args, "plan %s/r50.json --planner swapadvisor --memory 0.5x --set "
             "generations=2 -o %s/p.json", dir, dir);
    expect_ok(args, "swapadvisor plans it at 0.5x");
    snprintf(args, sizeof args, "verify %s/p.json", dir);
    expect_ok(args, "swapsim verify reads the plan back");
    snprintf(args, sizeof args, "simulate %s/p.json", dir);
    expect_ok(args, "swapsim simulate reads it back");
}

static const tap_test tests[] = {
    {"every_planner_every_recording", every_planner_every_recording},
    {"refusals_say_what_gets_further", refusals_say_what_gets_further},
    {"cli_swapadvisor_resnet50", cli_swapadvisor_resnet50},
};

int main(int argc, char **argv)
{
    bin = getenv("SWAPSIM_BIN");
    snprintf(dir, sizeof dir, "/tmp/swapsim-roundtrip-%d", (int)getpid());
    char cmd[600];
    snprintf(cmd, sizeof cmd, "mkdir -p %s", dir);
    if (system(cmd) != 0)
        tap_skip_all("cannot make a scratch directory");
    int rc = tap_run(tests, SW_ARRAY_LEN(tests), argc, argv);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "# could not remove %s\n", dir);
    return rc;
}
