/* test_record_pytorch.c: tools/record_pytorch.py records a training
   iteration that `swapsim import pytorch` takes, on the CPU, with operators
   named after the user's modules. Skips where no Python has PyTorch. One
   named test each (tap_run). */
#include <unistd.h>

#include "../profiles/graph.h"
#include "../profiles/profile_io.h"
#include "cli_run.h"

static char py[256], root[512];

/* The first of $SWAPSIM_PYTHON, python3 and /usr/bin/python3 that imports torch. */
static int find_python(void)
{
    const char *cand[] = {getenv("SWAPSIM_PYTHON"), "python3", "/usr/bin/python3"};
    for (size_t i = 0; i < SW_ARRAY_LEN(cand); i++) {
        if (!cand[i] || !*cand[i])
            continue;
        char cmd[512];
        snprintf(cmd, sizeof cmd, "%s -c 'import torch' >/dev/null 2>&1", cand[i]);
        if (system(cmd) == 0) {
            snprintf(py, sizeof py, "%s", cand[i]);
            return 1;
        }
    }
    return 0;
}

/* Run the recorder with ARGS in dir; returns its exit status, *err its stderr. */
static int rec(const char *args, char **err)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "cd %s && %s %s/tools/record_pytorch.py %s >%s/rout 2>%s/rerr",
             dir, py, root, args, dir, dir);
    int st = system(cmd);
    char path[600];
    size_t len;
    sw_err e;
    snprintf(path, sizeof path, "%s/rerr", dir);
    if (err && sw_read_file(path, err, &len, &e))
        *err = NULL;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static int has_op(const graph_profile *g, const char *name, int phase)
{
    for (int32_t o = 0; o < g->n_ops; o++)
        if (!strcmp(g->ops[o].name, name) && g->ops[o].phase == phase)
            return 1;
    return 0;
}

static graph_profile *load(const char *file)
{
    char path[600];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    graph_profile *g = NULL;
    sw_err e;
    if (profile_read_file(path, &g, &e))
        printf("# %s\n", e.msg);
    return g;
}

static void test_user_model_records_and_imports(void)
{
    char *e = NULL, args[1024];
    snprintf(args, sizeof args, "%s/tests/record/tiny_model.py:tiny --batch 8 --device cpu "
             "--warmup 1 -o %s/tiny", root, dir);
    IS_INT(rec(args, &e), 0, "record a user model (FILE.py:FUNC) on the CPU %s", e ? e : "");
    sw_free(e);
    /* Kineto is optional: Debian's PyTorch has none, and then only the ET is written */
    char kpath[600];
    snprintf(kpath, sizeof kpath, "%s/tiny_kineto.json", dir);
    int kineto = access(kpath, R_OK) == 0;
    printf("# Kineto trace %s\n", kineto ? "written" : "not written (this PyTorch has no Kineto)");
    /* what the run measured, beside the traces (on the CPU: the device only) */
    char mpath[600], *mem = NULL;
    size_t mlen;
    sw_err me;
    snprintf(mpath, sizeof mpath, "%s/tiny_memory.json", dir);
    OK(sw_read_file(mpath, &mem, &mlen, &me) == 0 && strstr(mem, "\"device\": \"cpu\""),
       "the recorder writes OUT_memory.json");
    sw_free(mem);
    snprintf(args, sizeof args, "import pytorch tiny_et.json %s --batch 8 -o tiny.json",
             kineto ? "tiny_kineto.json" : "");
    char *o = NULL;
    e = NULL;
    IS_INT(sh(args, &o, &e), 0, "the recorded pair imports %s", e ? e : "");
    sw_free(o);
    sw_free(e);
    graph_profile *g = load("tiny.json");
    OK(g != NULL, "the imported profile reads back");
    if (!g)
        return;
    int64_t params = 0;
    int nph[GP__COUNT] = {0};
    for (int32_t t = 0; t < g->n_tensors; t++)
        if (g->tensors[t].kind == GK_PARAMETER)
            params += g->tensors[t].bytes;
    for (int32_t o2 = 0; o2 < g->n_ops; o2++)
        nph[g->ops[o2].phase]++;
    IS_INT(params, 2704, "parameters: (16*32 + 32 + 32*4 + 4) * 4 bytes");
    OK(nph[GP_FORWARD] > 0 && nph[GP_BACKWARD] > 0 && nph[GP_UPDATE] > 0,
       "forward %d, backward %d and update %d operators (the CPU's backward runs on the "
       "caller's thread)", nph[GP_FORWARD], nph[GP_BACKWARD], nph[GP_UPDATE]);
    OK(has_op(g, "encoder:aten::linear", GP_FORWARD), "forward op named after its module");
    OK(has_op(g, "act:aten::relu", GP_FORWARD), "forward op of the activation module");
    OK(has_op(g, "head:AddmmBackward0", GP_BACKWARD),
       "backward op named after its forward op's module");
    OK(has_op(g, "encoder:AddmmBackward0", GP_BACKWARD), "backward op of the first layer");
    IS_STR_HAS(g->prov.notes, "recorded on the CPU", "provenance says the model ran on the CPU");
    graph_free(g);
    o = NULL;
    IS_INT(sh("run tiny.json --planner odswap --memory 0.8x -o tiny.plan.json", &o, NULL), 0,
           "a plan from the recorded profile at 0.8x");
    sw_free(o);
    IS_INT(sh("verify tiny.plan.json", &o, NULL), 0, "the plan verifies");
    sw_free(o);
}

static void test_module_names_can_be_left_out(void)
{
    char *e = NULL, args[1024];
    snprintf(args, sizeof args, "%s/tests/record/tiny_model.py:tiny --batch 4 --device cpu "
             "--warmup 0 --no-module-names -o %s/plain", root, dir);
    IS_INT(rec(args, &e), 0, "record without module records %s", e ? e : "");
    sw_free(e);
    IS_INT(sh("import pytorch plain_et.json --batch 4 -o plain.json", NULL, NULL), 0,
           "imports");
    graph_profile *g = load("plain.json");
    int named = 0;
    for (int32_t o = 0; g && o < g->n_ops; o++)
        named += g->ops[o].name[0] != 'n';
    OK(g && named == 0, "without module records every op is named n<ET id>:type (%d not)", named);
    graph_free(g);
}

static void test_torchvision_model(void)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "%s -c 'import torchvision' >/dev/null 2>&1", py);
    if (system(cmd) != 0) {
        tap_skip(3, "torchvision is not installed for this Python");
        return;
    }
    char *e = NULL, args[1024];
    snprintf(args, sizeof args, "resnet18 --batch 2 --image-size 32 --device cpu --warmup 0 "
             "-o %s/r18", dir);
    IS_INT(rec(args, &e), 0, "record torchvision resnet18 by name %s", e ? e : "");
    sw_free(e);
    IS_INT(sh("import pytorch r18_et.json --batch 2 -o r18.json", NULL, NULL), 0, "imports");
    graph_profile *g = load("r18.json");
    int64_t params = 0;
    for (int32_t t = 0; g && t < g->n_tensors; t++)
        if (g->tensors[t].kind == GK_PARAMETER)
            params += g->tensors[t].bytes;
    /* ResNet-18 (1000 classes) has 11,689,512 parameters; the batch-norm
       running statistics are buffers, not parameters */
    IS_INT(params, 11689512LL * 4, "ResNet-18's parameters: 11,689,512 fp32");
    graph_free(g);
}

static void test_bad_input_one_line(void)
{
    char *e = NULL, args[1024];
    struct {
        const char *args, *needle, *what;
    } cases[] = {
        {"no_such_model -o x", "not a torchvision model", "unknown model name"},
        {"/nonexistent.py:f -o x", "is not a file", "missing model file"},
        {"%s/tests/record/tiny_model.py:nothing -o x", "defines no function", "missing function"},
        {"%s/tests/record/tiny_model.py:broken -o x", "must return a dict", "wrong return"},
        {"%s/tests/record/tiny_model.py:tiny --batch 0 -o x", "--batch", "zero batch"},
    };
    for (size_t i = 0; i < SW_ARRAY_LEN(cases); i++) {
        if (strstr(cases[i].args, "%s"))
            snprintf(args, sizeof args, cases[i].args, root);
        else
            snprintf(args, sizeof args, "%s", cases[i].args);
        int rc = rec(args, &e);
        if (i == 0 && rc == 1 && e && strstr(e, "torchvision is not installed")) {
            tap_skip(2, "torchvision is not installed");
            sw_free(e);
            e = NULL;
            continue;
        }
        IS_INT(rc, 1, "%s: exit 1", cases[i].what);
        OK(lines(e) == 1 && e && strstr(e, cases[i].needle), "%s: one line naming it: %s",
           cases[i].what, e ? e : "(none)");
        sw_free(e);
        e = NULL;
    }
}

static const tap_test tests[] = {
    {"user_model_records_and_imports", test_user_model_records_and_imports},
    {"module_names_can_be_left_out", test_module_names_can_be_left_out},
    {"torchvision_model", test_torchvision_model},
    {"bad_input_one_line", test_bad_input_one_line},
};

int main(int argc, char **argv)
{
    bin = getenv("SWAPSIM_BIN");
    if (!bin)
        tap_skip_all("SWAPSIM_BIN not set (run through make test)");
    if (!find_python())
        tap_skip_all("PyTorch is not installed for $SWAPSIM_PYTHON, python3 or /usr/bin/python3 "
                     "(apt-get install python3-torch)");
    if (!getcwd(root, sizeof root))
        tap_skip_all("cannot read the working directory");
    snprintf(dir, sizeof dir, "/tmp/swapsim-record-%d", (int)getpid());
    char cmd[600];
    snprintf(cmd, sizeof cmd, "mkdir -p %s", dir);
    if (system(cmd) != 0)
        tap_skip_all("cannot make a scratch directory");
    printf("# python: %s\n", py);
    int rc = tap_run(tests, SW_ARRAY_LEN(tests), argc, argv);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        printf("# could not remove %s\n", dir);
    return rc;
}
