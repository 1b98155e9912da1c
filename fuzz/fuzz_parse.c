/* fuzz_parse.c: one AFL++ harness for every parser swapsim has, chosen by
   the first argument: profile JSON, plan JSON (then verified and
   simulated, as `swapsim simulate` does), the dtr, pipedream and pytorch
   importers, and experiment files (expanded with --dry-run). It calls the
   same load functions the command line does; a bad input must end in an
   error status, never a crash, a sanitizer report or a hang.

     fuzz_parse profile|plan|dtr|pipedream|pytorch|experiment FILE */
#include <stdio.h>
#include <string.h>

#include "../experiments/runner.h"
#include "../profiles/importers.h"
#include "../profiles/profile_io.h"
#include "../sim/plan_io.h"
#include "../sim/simulate.h"
#include "../sim/verify.h"

static int run(const char *what, const char *path)
{
    sw_err e;
    if (!strcmp(what, "profile")) {
        graph_profile *g;
        if (profile_read_file(path, &g, &e))
            return 1;
        graph_stats st;
        graph_compute_stats(g, &st);
        graph_free(g);
        return 0;
    }
    if (!strcmp(what, "plan")) {
        plan *p;
        if (plan_read_file(path, &p, &e))
            return 1;
        sim_result r;
        if (plan_verify(p, NULL, &e) == 0)
            sim_plan(p, NULL, NULL, &r, &e);
        plan_free(p);
        return 0;
    }
    if (!strcmp(what, "experiment")) {
        exp_opts o;
        memset(&o, 0, sizeof o);
        o.file = path;
        o.out_dir = "/tmp/swapsim-fuzz-out";
        o.swapsim = "swapsim";
        o.data = "/nonexistent";
        o.jobs = 1;
        o.dry_run = 1;
        FILE *devnull = freopen("/dev/null", "w", stdout);
        (void)devnull;
        return exp_run(&o, &e) ? 1 : 0;
    }
    const importer *im = importer_find(what);
    if (!im) {
        fprintf(stderr, "fuzz_parse: unknown parser '%s' (expected profile, plan, dtr, "
                "pipedream, pytorch or experiment)\n", what);
        return 2;
    }
    param_set ps;
    params_init(&ps, im->params);
    if (!strcmp(what, "pytorch")) /* reach past the completeness check */
        params_set(&ps, "partial", "true", &e);
    graph_profile *g = NULL;
    int rc = im->import(&path, 1, &ps, dev_find("v100"), &g, &e);
    params_free(&ps);
    graph_free(g);
    return rc ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: fuzz_parse profile|plan|dtr|pipedream|pytorch|experiment FILE\n");
        return 2;
    }
    return run(argv[1], argv[2]);
}
