/* test_python.c: the Python package (python/swapsim over build/pic/libswapsim.so)
   gives the command line's numbers: its sweep of two generated models equals
   swapsim sweep's cell for cell, --fit included, and its run equals swapsim
   run --json. Runs /usr/bin/python3 and the python3 on PATH where they
   differ ($SWAPSIM_PYTHON instead, when set); skips in one line without a
   python or without libswapsim.so (make lib). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/json.h"
#include "cli_run.h"

static char root[1024], lib[1200];
static const char *models[2][2] = {
    {"r18", "model resnet --depth 18 --batch 8"},
    {"gpt", "model gpt --layers 2 --hidden 256 --heads 4 --seq 64 --vocab 1000 --batch 4"}};
#define PLANNERS "odswap,dtr,sublinear,tflms"
#define BUDGETS "0.6x:1.0x:0.2x"

static const char *script =
    "import json, sys\n"
    "import swapsim\n"
    "out = {'file': swapsim.__file__}\n"
    "for name in sys.argv[1:]:\n"
    "    out[name] = swapsim.sweep(name + '.json', planners='" PLANNERS "', memory='" BUDGETS "',\n"
    "                              fit=True, fit_tol='0.02x', raw=True)\n"
    "p = swapsim.load('r18.json')\n"
    "out['run'] = swapsim.run(p, 'dtr', memory='1.0x')\n"
    "out['nofit'] = swapsim.run(p, 'dtr', memory='0.1x')\n"
    "try:\n"
    "    swapsim.run(p, 'nope')\n"
    "    out['error'] = ''\n"
    "except swapsim.SwapsimError as e:\n"
    "    out['error'] = str(e)\n"
    "print(json.dumps(out))\n";

static const json_value *parse(json_doc *d, const char *text, const char *what)
{
    const json_value *v = NULL;
    sw_err e;
    if (!text || json_parse(d, text, strlen(text), what, 1, &v, &e))
        return NULL;
    return v;
}

static double num(const json_value *o, const char *key)
{
    const json_value *v = o ? json_get(o, key) : NULL;
    return v && v->type == JSON_NUMBER ? v->u.num.d : -1;
}

/* Every cell and every fit of a (the Python's) equals b's (the CLI's). */
static void same_sweep(const json_value *a, const json_value *b, const char *what)
{
    const json_value *ca = a ? json_get(a, "cells") : NULL, *cb = b ? json_get(b, "cells") : NULL;
    OK(ca && cb && ca->n == cb->n && ca->n >= 12, "%s: as many cells (%u, %u)", what,
       ca ? ca->n : 0, cb ? cb->n : 0);
    int same = 0, fits = 0;
    for (uint32_t i = 0; ca && cb && i < ca->n && i < cb->n; i++) {
        const json_value *x = &ca->u.items[i], *y = &cb->u.items[i];
        const json_value *fx = json_get(x, "fits"), *fy = json_get(y, "fits");
        int ok = !strcmp(json_get(x, "planner")->u.str, json_get(y, "planner")->u.str) &&
                 num(x, "budget_bytes") == num(y, "budget_bytes") && fx && fy &&
                 fx->type == fy->type &&
                 num(x, "normalized_throughput") == num(y, "normalized_throughput") &&
                 num(x, "samples_per_s") == num(y, "samples_per_s");
        if (!ok)
            printf("#   cell %u differs: %s at %.0f\n", i, json_get(x, "planner")->u.str,
                   num(x, "budget_bytes"));
        same += ok;
        fits += fx && fx->type == JSON_TRUE;
    }
    IS_INT(same, ca ? (int)ca->n : -1, "%s: every cell the same (planner, budget, fits, "
           "throughput, samples/s)", what);
    OK(fits >= 4, "%s: some cells fit (%d)", what, fits);
    const json_value *fa = json_get(json_get(a, "fit"), "planners");
    const json_value *fb = json_get(json_get(b, "fit"), "planners");
    int fsame = 0;
    for (uint32_t i = 0; fa && fb && i < fa->n && i < fb->n; i++)
        fsame += num(&fa->u.items[i], "smallest_budget_bytes") ==
                     num(&fb->u.items[i], "smallest_budget_bytes") &&
                 num(&fa->u.items[i], "normalized_throughput") ==
                     num(&fb->u.items[i], "normalized_throughput");
    IS_INT(fsame, 4, "%s: the same smallest budget per planner", what);
}

static void check_python(const char *py)
{
    printf("# python: %s\n", py);
    char cmd[4096], *o = NULL, *err = NULL;
    snprintf(cmd, sizeof cmd, "cd %s && PYTHONPATH=%s/python SWAPSIM_LIB=%s %s t.py r18 gpt "
             ">py.out 2>py.err", dir, root, lib, py);
    int rc = system(cmd);
    size_t n;
    sw_err e;
    snprintf(cmd, sizeof cmd, "%s/py.out", dir);
    if (sw_read_file(cmd, &o, &n, &e))
        o = NULL;
    snprintf(cmd, sizeof cmd, "%s/py.err", dir);
    if (sw_read_file(cmd, &err, &n, &e))
        err = NULL;
    IS_INT(rc, 0, "%s runs the script: %s", py, err ? err : "");
    json_doc *d = json_doc_new();
    const json_value *v = parse(d, o, "python output");
    OK(v != NULL, "%s: its output parses", py);
    IS_STR_HAS(v ? json_get(v, "file")->u.str : NULL, "/python/swapsim/",
               "the package of this tree");
    for (int m = 0; m < 2; m++) {
        char args[600], *co = NULL;
        snprintf(args, sizeof args, "sweep %s.json --planner " PLANNERS " --memory " BUDGETS
                 " --fit --fit-tol 0.02x --threads 2 --cache cache --out s-%s --json",
                 models[m][0], models[m][0]);
        IS_INT(sh(args, &co, NULL), 0, "the CLI sweeps %s", models[m][0]);
        json_doc *dc = json_doc_new();
        same_sweep(v ? json_get(v, models[m][0]) : NULL, parse(dc, co, "cli sweep"),
                   models[m][0]);
        json_doc_free(dc);
        sw_free(co);
    }
    char *ro = NULL;
    IS_INT(sh("run r18.json --planner dtr --memory 1.0x --json", &ro, NULL), 0, "swapsim run");
    json_doc *dr = json_doc_new();
    const json_value *cli = parse(dr, ro, "run"), *pr = v ? json_get(v, "run") : NULL;
    OK(cli && pr && num(pr, "iteration_time_s") == num(cli, "iteration_time_s") &&
           num(pr, "peak_memory_bytes") == num(cli, "peak_memory_bytes"),
       "swapsim.run is swapsim run --json (%.9g s)", num(pr, "iteration_time_s"));
    const json_value *nf = v ? json_get(v, "nofit") : NULL;
    OK(nf && json_get(nf, "fits") && json_get(nf, "fits")->type == JSON_FALSE,
       "a budget that does not fit is a result with fits false");
    IS_STR_HAS(v ? json_get(v, "error")->u.str : NULL, "unknown planner 'nope'",
               "an unknown planner is a SwapsimError with the library's message");
    json_doc_free(dr);
    json_doc_free(d);
    sw_free(ro);
    sw_free(o);
    sw_free(err);
}

int main(void)
{
    cli_open("python");
    if (!getcwd(root, sizeof root))
        tap_skip_all("cannot read the working directory");
    const char *l = getenv("SWAPSIM_LIB");
    snprintf(lib, sizeof lib, "%s", l ? l : "");
    if (!l)
        snprintf(lib, sizeof lib, "%s/build/pic/libswapsim.so", root);
    if (access(lib, R_OK) != 0)
        tap_skip_all("no build/pic/libswapsim.so (make lib)");
    const char *pys[3];
    int npy = 0;
    const char *env = getenv("SWAPSIM_PYTHON");
    if (env) {
        pys[npy++] = env;
    } else {
        if (access("/usr/bin/python3", X_OK) == 0)
            pys[npy++] = "/usr/bin/python3";
        /* the first python3 on PATH, where it is another interpreter */
        if (system("command -v python3 > /dev/null 2>&1 && "
                   "[ \"$(python3 -c 'import sys; print(sys.executable)')\" != /usr/bin/python3 ]"
                   " && [ \"$(python3 -c 'import sys; print(sys.executable)')\" != "
                   "/bin/python3 ]") == 0)
            pys[npy++] = "python3";
    }
    if (!npy)
        tap_skip_all("no python3 (/usr/bin/python3 or on PATH)");
    for (int m = 0; m < 2; m++) {
        char args[600];
        snprintf(args, sizeof args, "%s -o %s.json", models[m][1], models[m][0]);
        if (sh(args, NULL, NULL) != 0)
            tap_skip_all("swapsim model failed");
    }
    char path[400];
    snprintf(path, sizeof path, "%s/t.py", dir);
    FILE *f = fopen(path, "w");
    if (!f || fputs(script, f) < 0 || fclose(f))
        tap_skip_all("cannot write the script");
    for (int i = 0; i < npy; i++)
        check_python(pys[i]);
    if (cli_close())
        printf("# could not remove %s\n", dir);
    return tap_done();
}
