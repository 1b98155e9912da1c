/* test_apply_plan.c: `swapsim export --format pytorch` and tools/apply_plan.py
   run plans of imported models in PyTorch on the CPU: a 2-layer transformer
   and ResNet-18 recorded with tools/record_pytorch.py, planned by hybrid,
   swapadvisor and sublinear, exported and applied; the gradients equal those
   without the policy, every saved tensor is decided once, and the bytes the
   hooks hold follow the plan's resident set within the export's rounding
   (docs/apply.md). The export's decisions on a hand-made plan need no
   Python; the rest skips where no Python has PyTorch. */
#include <unistd.h>

#include "../common/json.h"
#include "../sim/export.h"
#include "../sim/plan_io.h"
#include "../sim/verify.h"
#include "cli_run.h"
#include "fixtures.h"

static char py[256], root[512];
static int have_py;

/* The first of $SWAPSIM_PYTHON, /usr/bin/python3 and python3 that imports torch. */
static int find_python(void)
{
    const char *cand[] = {getenv("SWAPSIM_PYTHON"), "/usr/bin/python3", "python3"};
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

/* Run tools/SCRIPT ARGS with Python in dir; stdout to dir/OUT, *err its stderr. */
static int tool(const char *script, const char *args, const char *out, char **err)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "cd %s && %s %s/tools/%s %s >%s/%s 2>%s/perr", dir, py, root,
             script, args, dir, out, dir);
    int st = system(cmd);
    char path[600];
    size_t len;
    sw_err e;
    snprintf(path, sizeof path, "%s/perr", dir);
    if (err && sw_read_file(path, err, &len, &e))
        *err = NULL;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static double num(const json_value *o, const char *key)
{
    const json_value *v = o ? json_get(o, key) : NULL;
    if (!v)
        printf("# no '%s' in the output\n", key);
    return v && v->type == JSON_NUMBER ? v->u.num.d : v && v->type == JSON_TRUE ? 1 : -1e300;
}

/* Record MODEL with the recorder's ARGS, import it as NAME.json. */
static int record(const char *name, const char *model_args, int batch)
{
    char args[1024], *e = NULL;
    snprintf(args, sizeof args, "%s --batch %d --device cpu --warmup 0 -o %s/%s", model_args,
             batch, dir, name);
    int rc = tool("record_pytorch.py", args, "rout", &e);
    OK(rc == 0, "record %s on the CPU %s", name, rc && e ? e : "");
    sw_free(e);
    snprintf(args, sizeof args, "import pytorch %s_et.json --batch %d -o %s.json", name, batch,
             name);
    int ok = rc == 0 && sh(args, NULL, NULL) == 0;
    OK(ok, "%s imports", name);
    return ok;
}

/* Plan NAME.json with PLANNER and SETTINGS, export it to NAME.TAG.policy.json;
   when want is not NULL, some line left out must contain it. */
static void plan_export(const char *name, const char *tag, const char *planner_args,
                        const char *want)
{
    char args[1024], *o = NULL, *e = NULL;
    snprintf(args, sizeof args, "run %s.json %s -o %s.%s.plan.json", name, planner_args, name,
             tag);
    IS_INT(sh(args, NULL, &e), 0, "%s: %s plans %s", name, tag, e ? e : "");
    sw_free(e);
    e = NULL;
    snprintf(args, sizeof args, "export %s.%s.plan.json --format pytorch -o %s.%s.policy.json",
             name, tag, name, tag);
    IS_INT(sh(args, &o, &e), 0, "%s.%s: exports", name, tag);
    IS_STR_HAS(o, "saved activations", "%s.%s: the export says what it kept", name, tag);
    printf("# %s", o ? o : "");
    /* every line on stderr names one decision left out */
    int bad = 0;
    for (const char *l = e; l && *l;) {
        const char *nl = strchr(l, '\n');
        bad += strncmp(l, "swapsim export: not expressed: ", 31) != 0;
        l = nl ? nl + 1 : l + strlen(l);
    }
    OK(!bad, "%s.%s: each line on stderr is one decision not expressed (%d %s)", name, tag,
       lines(e), "lines");
    if (want)
        IS_STR_HAS(e, want, "%s.%s: a decision left out is named", name, tag);
    sw_free(o);
    sw_free(e);
}

/* Apply the policies with apply_plan.py --check; check each one's result. */
static void apply_check(const char *model_args, int batch, const char *name, const char **tags,
                        int n, int64_t *offloaded, int *regions)
{
    char args[2048], *e = NULL;
    int len = snprintf(args, sizeof args, "%s --batch %d --device cpu --check --json", model_args,
                       batch);
    for (int i = 0; i < n; i++)
        len += snprintf(args + len, sizeof args - (size_t)len, " --policy %s.%s.policy.json",
                        name, tags[i]);
    int rc = tool("apply_plan.py", args, "apply.json", &e);
    IS_INT(rc, 0, "%s: apply_plan.py --check: equal gradients %s", name, e ? e : "");
    sw_free(e);
    char path[600], *text = NULL;
    size_t tl;
    sw_err err;
    snprintf(path, sizeof path, "%s/apply.json", dir);
    json_doc *d = json_doc_new();
    const json_value *root_v = NULL;
    if (sw_read_file(path, &text, &tl, &err) ||
        json_parse(d, text, tl, path, 1, &root_v, &err))
        printf("# %s\n", err.msg);
    const json_value *checks = root_v ? json_get(root_v, "checks") : NULL;
    OK(checks && checks->type == JSON_ARRAY && (int)checks->n == n, "%s: %d checks", name, n);
    for (uint32_t i = 0; checks && checks->type == JSON_ARRAY && i < checks->n; i++) {
        const json_value *c = &checks->u.items[i], *s = json_get(c, "stats"),
                         *m = json_get(c, "summary");
        const char *tag = tags[i];
        OK(num(c, "equal") == 1, "%s.%s: loss and gradients equal with and without the policy "
           "(largest difference %g)", name, tag, num(c, "max_abs_diff"));
        double unmatched = num(s, "unmatched_bytes"), missed = num(s, "entries_not_seen_bytes");
        double saved = num(m, "saved_bytes");
        IS_INT((int64_t)num(s, "entries_matched_twice"), 0,
               "%s.%s: no policy entry is decided twice", name, tag);
        IS_INT((int64_t)num(s, "recompute_entries_seen"), 0,
               "%s.%s: no recomputed entry reaches the hooks (its region's checkpoint has it)",
               name, tag);
        OK(num(s, "entries_not_seen_max_bytes") < 4096,
           "%s.%s: every entry of 4 KiB or more is decided exactly once (%g of %g expected; "
           "the largest missed %g bytes)", name, tag, num(s, "entries_matched_once"),
           num(s, "entries_expected"), num(s, "entries_not_seen_max_bytes"));
        OK(unmatched <= 0.05 * saved, "%s.%s: saved storages not in the policy %g bytes, at "
           "most 5%% of the %g saved", name, tag, unmatched, saved);
        double held = num(s, "held_start_bytes");
        IS_INT((int64_t)held, (int64_t)(num(m, "policy_resident_bytes") -
                                        num(s, "entries_not_seen_resident_bytes") + unmatched),
               "%s.%s: held at the first backward operator = the policy's resident bytes "
               "(less entries not seen, plus storages not in the policy)", name, tag);
        double dev = held - num(m, "plan_resident_bytes");
        double tol = num(m, "rounding_bytes") + unmatched + missed;
        OK(dev <= tol && -dev <= tol, "%s.%s: held %g bytes there, the plan %g: within the "
           "export's rounding %g (+ %g not matched)", name, tag, held,
           num(m, "plan_resident_bytes"), num(m, "rounding_bytes"), unmatched + missed);
        double over = num(s, "step_max_over_plan_bytes");
        double under = num(s, "step_max_under_plan_bytes");
        double stol = num(m, "step_rounding_bytes") + unmatched + missed;
        if (num(m, "reordered_ops") == 0)
            OK(over <= stol && under <= stol, "%s.%s: at each backward step the bytes held are "
               "within %g above and %g below the plan's, inside the step rounding %g", name, tag,
               over, under, stol);
        else
            printf("# %s.%s: the plan reorders %g operators: at each backward step %g above, "
                   "%g below the plan's (not checked)\n", name, tag, num(m, "reordered_ops"),
                   over, under);
        IS_INT((int64_t)num(s, "fetched_bytes"), (int64_t)num(s, "offloaded_bytes"),
               "%s.%s: every byte offloaded comes back once", name, tag);
        *offloaded += (int64_t)num(s, "offloaded_bytes");
        *regions += (int)num(s, "regions");
    }
    json_doc_free(d);
    sw_free(text);
}

/* blk.m1 makes A from the batch X and W; blk.m2 makes B; the loss (no
   module) makes L; the backward reads L, B and A. Tensors: X W A B L gL gB gW. */
enum { TX, TW, TA, TB, TL, TGL, TGB, TGW };

static graph_profile *hand_profile(void)
{
    dev_spec d = fixture_device();
    graph_profile *g = graph_new("hand", &d);
    graph_add_tensor(g, "X", 1000, GK_INPUT, 0);
    graph_add_tensor(g, "W", 400, GK_PARAMETER, 1);
    graph_add_tensor(g, "A", 3000, GK_ACTIVATION, 0);
    graph_add_tensor(g, "B", 2000, GK_ACTIVATION, 0);
    graph_add_tensor(g, "L", 4, GK_ACTIVATION, 0);
    graph_add_tensor(g, "gL", 4, GK_GRADIENT, 0);
    graph_add_tensor(g, "gB", 2000, GK_GRADIENT, 0);
    graph_add_tensor(g, "gW", 400, GK_GRADIENT, 0);
    graph_add_op(g, "blk.m1:aten::linear", "linear", 0.001, GP_FORWARD, IDS(TX, TW), IDS(TA),
                 NOIDS, 0);
    graph_add_op(g, "blk.m2:aten::relu", "relu", 0.001, GP_FORWARD, IDS(TA), IDS(TB), NOIDS, 0);
    graph_add_op(g, "n9:aten::sum", "sum", 0.001, GP_FORWARD, IDS(TB), IDS(TL), NOIDS, 0);
    graph_add_op(g, "n10:SumBackward0", "sum_bw", 0.001, GP_BACKWARD, IDS(TL), IDS(TGL), NOIDS,
                 0);
    graph_add_op(g, "blk.m2:ReluBackward0", "relu_bw", 0.001, GP_BACKWARD, IDS(TB, TGL),
                 IDS(TGB), NOIDS, 0);
    graph_add_op(g, "blk.m1:AddmmBackward0", "linear_bw", 0.001, GP_BACKWARD, IDS(TA, TW, TGB),
                 IDS(TGW), NOIDS, 0);
    graph_add_op(g, "n12:aten::add_", "sgd", 0.001, GP_UPDATE, IDS(TGW), NOIDS, IDS(TW), 0);
    sw_err e;
    if (graph_finish(g, &e, NULL, NULL))
        printf("# %s\n", e.msg);
    return g;
}

/* The plan: swap W out and in around the forward pass; A leaves after the
   forward pass by a swap-out (offload) or a drop and a re-run (recompute). */
static plan *hand_plan(graph_profile *g, int recompute)
{
    plan *p = plan_new(g, 0);
    p->budget = p->capacity = 1 << 20;
    plan_set_meta(p, "hand", 0, "{}");
    p->resident = sw_malloc(2 * sizeof *p->resident);
    p->resident[0] = (plan_place){TW, -1, -1, 0};
    p->resident[1] = (plan_place){TX, -1, -1, 400};
    p->n_resident = 2;
    plan_add_task(p, TASK_RUN, 0, -1, PL(TA, 2000), NOIDS, NOIDS, NOIDS);
    plan_add_task(p, TASK_SWAP_OUT, -1, TW, NOPL, NOIDS, NOIDS, NOIDS);
    plan_add_task(p, TASK_RUN, 1, -1, PL(TB, 6000), NOIDS, NOIDS, NOIDS);
    plan_add_task(p, recompute ? TASK_DROP : TASK_SWAP_OUT, -1, TA, NOPL, NOIDS, NOIDS, NOIDS);
    plan_add_task(p, TASK_RUN, 2, -1, PL(TL, 9000), NOIDS, NOIDS, NOIDS);
    plan_add_task(p, TASK_RUN, 3, -1, PL(TGL, 9100), IDS(TL), NOIDS, NOIDS);
    plan_add_task(p, TASK_SWAP_IN, -1, TW, PL(TW, 0), NOIDS, NOIDS, NOIDS);
    plan_add_task(p, TASK_RUN, 4, -1, PL(TGB, 10000), IDS(TB, TGL), NOIDS, NOIDS);
    if (recompute)
        plan_add_task(p, TASK_RERUN, 0, -1, PL(TA, 2000), NOIDS, NOIDS, NOIDS);
    else
        plan_add_task(p, TASK_SWAP_IN, -1, TA, PL(TA, 2000), NOIDS, NOIDS, NOIDS);
    plan_add_task(p, TASK_RUN, 5, -1, PL(TGW, 13000), IDS(TA, TGB), NOIDS, NOIDS);
    plan_add_task(p, TASK_RUN, 6, -1, NOPL, IDS(TGW), NOIDS, NOIDS);
    return p;
}

static void test_export_decisions(void)
{
    graph_profile *g = hand_profile();
    for (int rec = 0; rec < 2; rec++) {
        plan *p = hand_plan(g, rec);
        sw_buf b, lines;
        sw_buf_init(&b);
        sw_buf_init(&lines);
        export_summary m;
        sw_err e;
        int rc = export_pytorch(p, NULL, &b, &lines, &m, &e);
        IS_INT(rc, 0, "%s plan exports %s", rec ? "recompute" : "offload", rc ? e.msg : "");
        const char *what = rec ? "recompute" : "offload";
        IS_INT(m.n_saved, 3, "%s: A, B and L are saved activations (X: no backward reads it)",
               what);
        IS_INT(m.plan_saved_bytes, 3000, "%s: the plan keeps A (3000 bytes) off the device at "
               "the first backward operator", what);
        IS_INT(m.surviving_bytes, 3000, "%s: and so does the policy", what);
        IS_INT(m.rounding_bytes, 0, "%s: no rounding", what);
        IS_INT(rec ? m.n_recompute : m.n_offload, 1, "%s: A is the one %s", what, what);
        IS_STR_HAS(lines.data, "parameter 'W' (400 bytes) is swapped",
                   "%s: W's swap is named as not expressed", what);
        char want[200];
        snprintf(want, sizeof want, rec ? "\"decision\":\"recompute\",%s"
                                        : "\"decision\":\"offload\",%s",
                 "\"plan_resident\":false");
        IS_STR_HAS(b.data, want, "%s: A's entry", what);
        IS_STR_HAS(b.data, rec ? "\"region\":\"blk\"" : "\"prefetch_after\":\"blk.m2\"",
                   rec ? "recompute: the region is blk, the module around A's producer and "
                         "its forward uses"
                       : "offload: fetched after blk.m2's backward (the last before the "
                         "plan's swap-in)");
        IS_STR_HAS(b.data, "\"scope\":\"blk.m1\"", "%s: A's scope is its producer's module",
                   what);
        sw_buf_free(&b);
        sw_buf_free(&lines);
        plan_free(p);
    }
    graph_free(g);
    /* an inference iteration saves nothing for a backward pass */
    dev_spec d = fixture_device();
    graph_profile *f = graph_new("forward-only", &d);
    graph_add_tensor(f, "X", 100, GK_INPUT, 0);
    graph_add_tensor(f, "Y", 100, GK_ACTIVATION, 0);
    graph_add_op(f, "m:aten::relu", "relu", 0.001, GP_FORWARD, IDS(0), IDS(1), NOIDS, 0);
    sw_err e;
    graph_finish(f, &e, NULL, NULL);
    plan *p = plan_new(f, 0);
    plan_add_task(p, TASK_RUN, 0, -1, PL(1, 0), IDS(0, 1), NOIDS, NOIDS);
    sw_buf b;
    sw_buf_init(&b);
    IS_INT(export_pytorch(p, NULL, &b, NULL, NULL, &e), SW_EINVAL,
           "a plan with no backward operator is refused");
    IS_STR_HAS(e.msg, "no backward operator", "saying why: %s", e.msg);
    sw_buf_free(&b);
    plan_free(p);
    graph_free(f);
}

/* A pool plan places a storage of 0 bytes in no object (class -1): it
   must read back (a swapadvisor plan of an imported profile did not). */
static void test_pool_empty_storage_reads_back(void)
{
    dev_spec d = fixture_device();
    graph_profile *g = graph_new("empty", &d);
    graph_add_tensor(g, "A", 1000, GK_ACTIVATION, 0);
    graph_add_tensor(g, "E", 0, GK_ACTIVATION, 0);
    graph_add_op(g, "op", "op", 0.001, GP_FORWARD, NOIDS, IDS(0, 1), NOIDS, 0);
    sw_err e;
    OK(graph_finish(g, &e, NULL, NULL) == 0, "profile with an empty tensor");
    plan *p = plan_new(g, 0);
    plan_set_meta(p, "hand", 0, "{}");
    plan_set_pool(p, (int64_t[]){1000}, (int32_t[]){1}, 1);
    p->budget = 1000;
    plan_add_task(p, TASK_RUN, 0, -1,
                  (plan_place[]){{0, 0, 0, 0}, {1, -1, -1, 0}}, 2, IDS(0, 1), NOIDS, NOIDS);
    sw_buf b;
    sw_buf_init(&b);
    plan_to_json(p, &b);
    plan *q = NULL;
    int rc = plan_read_text(b.data, b.len, "empty.json", &q, &e);
    OK(rc == 0, "the plan reads back %s", rc ? e.msg : "");
    OK(q && plan_verify(q, NULL, &e) == 0, "and verifies");
    plan_free(q);
    sw_buf_free(&b);
    plan_free(p);
    graph_free(g);
}

static void test_transformer(void)
{
    if (!have_py) {
        tap_skip(1, "PyTorch is not installed for $SWAPSIM_PYTHON, /usr/bin/python3 or "
                    "python3 (apt-get install python3-torch)");
        return;
    }
    char model[600];
    snprintf(model, sizeof model, "%s/tests/record/transformer_model.py:transformer", root);
    if (!record("tf", model, 16))
        return;
    plan_export("tf", "hybrid", "--planner hybrid --set search=false --set schedule=profile "
                "--memory 0.7x", NULL);
    plan_export("tf", "swapadvisor", "--planner swapadvisor --set generations=3 --set "
                "population=8 --seed 1 --memory 0.7x", "the plan runs");
    plan_export("tf", "sublinear", "--planner sublinear --set mode=budget --memory 0.7x",
                "is recomputed with region");
    const char *tags[] = {"hybrid", "swapadvisor", "sublinear"};
    int64_t off = 0;
    int regions = 0;
    apply_check(model, 16, "tf", tags, 3, &off, &regions);
    OK(off > 0, "the transformer's policies offload (%lld bytes)", (long long)off);
    OK(regions > 0, "and recompute in checkpointed regions (%d)", regions);
}

static void test_resnet18(void)
{
    if (!have_py) {
        tap_skip(1, "PyTorch is not installed");
        return;
    }
    char cmd[600];
    snprintf(cmd, sizeof cmd, "%s -c 'import torchvision' >/dev/null 2>&1", py);
    if (system(cmd) != 0) {
        tap_skip(1, "torchvision is not installed for this Python");
        return;
    }
    if (!record("r18", "resnet18 --image-size 96", 8))
        return;
    plan_export("r18", "hybrid", "--planner hybrid --set search=false --set schedule=profile "
                "--memory 0.7x", NULL);
    plan_export("r18", "swapadvisor", "--planner swapadvisor --set generations=3 --set "
                "population=8 --seed 1 --memory 0.7x", "parameter '");
    const char *tags[] = {"hybrid", "swapadvisor"};
    int64_t off = 0;
    int regions = 0;
    apply_check("resnet18 --image-size 96", 8, "r18", tags, 2, &off, &regions);
    OK(off > 0, "ResNet-18's policies offload (%lld bytes)", (long long)off);
}

static void test_bad_input_one_line(void)
{
    char *e = NULL;
    if (!have_py) {
        tap_skip(1, "PyTorch is not installed");
        return;
    }
    IS_INT(sh("export nothing.plan.json --format pytorch -o x.json", NULL, &e), 1,
           "export of a missing plan: exit 1");
    OK(lines(e) == 1 && e && strstr(e, "nothing.plan.json"), "one line naming it: %s",
       e ? e : "");
    sw_free(e);
    e = NULL;
    IS_INT(sh("export tf.hybrid.plan.json --format tensorflow -o x.json", NULL, &e), 1,
           "an unknown format: exit 1");
    OK(lines(e) == 1 && e && strstr(e, "--format"), "one line naming the option: %s",
       e ? e : "");
    sw_free(e);
    e = NULL;
    char path[600];
    snprintf(path, sizeof path, "%s/bad.policy.json", dir);
    FILE *f = fopen(path, "w");
    if (f) {
        fputs("{\"format\":\"swapsim-pytorch-policy\",\"version\":1,\"tensors\":"
              "[{\"decision\":\"swap\"}]}\n", f);
        fclose(f);
    }
    char args[1024];
    snprintf(args, sizeof args, "%s/tests/record/tiny_model.py:tiny --batch 2 --device cpu "
             "--policy bad.policy.json", root);
    IS_INT(tool("apply_plan.py", args, "bout", &e), 1, "apply_plan.py: a bad policy: exit 1");
    OK(lines(e) == 1 && e && strstr(e, "$.tensors[0].decision"),
       "one line naming the place: %s", e ? e : "");
    sw_free(e);
}

static const tap_test tests[] = {
    {"export_decisions", test_export_decisions},
    {"pool_empty_storage_reads_back", test_pool_empty_storage_reads_back},
    {"transformer", test_transformer},
    {"resnet18", test_resnet18},
    {"bad_input_one_line", test_bad_input_one_line},
};

int main(int argc, char **argv)
{
    bin = getenv("SWAPSIM_BIN");
    if (!bin)
        tap_skip_all("SWAPSIM_BIN not set (run through make test)");
    have_py = find_python();
    if (!getcwd(root, sizeof root))
        tap_skip_all("cannot read the working directory");
    snprintf(dir, sizeof dir, "/tmp/swapsim-apply-%d", (int)getpid());
    char cmd[600];
    snprintf(cmd, sizeof cmd, "mkdir -p %s", dir);
    if (system(cmd) != 0)
        tap_skip_all("cannot make a scratch directory");
    printf("# python: %s\n", have_py ? py : "none with PyTorch");
    int rc = tap_run(tests, SW_ARRAY_LEN(tests), argc, argv);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        printf("# could not remove %s\n", dir);
    return rc;
}
