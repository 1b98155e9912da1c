/* test_cli_dtr.c: the command line of the DTR importer, the baselines and
   `swapsim dtr-parity`: exit codes, one-line errors, JSON fields; one named
   test each (tap_run). */
#include "../common/json.h"
#include "cli_run.h"
#include "tap.h"

static void put(const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
}

#define START "{\"INSTRUCTION\":\"ANNOTATE\",\"ANNOTATION\":\"START\"}\n"
#define CONST(n, m) "{\"INSTRUCTION\":\"CONSTANT\",\"NAME\":\"" n "\"}\n" \
    "{\"INSTRUCTION\":\"MEMORY\",\"NAME\":\"" n "\",\"MEMORY\":\"" m "\"}\n"
#define REL(n) "{\"INSTRUCTION\":\"RELEASE\",\"NAME\":\"" n "\"}\n"
#define CALL(op, args, r, t, m) "{\"INSTRUCTION\":\"CALL\",\"NAME\":\"" op "\",\"ARGS\":[" args \
    "],\"RESULT\":[\"" r "\"],\"TIME\":\"" t "\"}\n" \
    "{\"INSTRUCTION\":\"MEMORY\",\"NAME\":\"" r "\",\"MEMORY\":\"" m "\"}\n" \
    "{\"INSTRUCTION\":\"ALIAS\",\"NAME\":\"" r "\",\"ALIAS\":\"-1\"}\n"

/* a chain of four ops; b and c are released, a and d kept to the end */
static void put_net(void)
{
    put("net-8-x.log", START CONST("w", "1000") CALL("f1", "\"w\"", "a", "1000000", "4000")
        CALL("f2", "\"a\"", "b", "2000000", "4000") CALL("f3", "\"b\"", "c", "1000000", "4000")
        REL("b") CALL("f4", "\"c\", \"w\"", "d", "1000000", "4000") REL("c"));
}

/* net.json for the tests that run on it, imported once (a test run alone
   imports it itself). */
static void need_net(void)
{
    char path[512];
    snprintf(path, sizeof path, "%s/net.json", dir);
    if (access(path, F_OK) == 0)
        return;
    put_net();
    if (sh("import dtr net-8-x.log --device titanv -o net.json", NULL, NULL) != 0)
        printf("# could not import net-8-x.log\n");
}

static void import_dtr_log(void)
{
    char *o = NULL, *e = NULL;
    put_net();
    IS_INT(sh("import dtr net-8-x.log --device titanv -o net.json", NULL, &e), 0,
           "import dtr exits 0 (%s)", e ? e : "");
    sw_free(e);
    IS_INT(sh("stats net.json --json", &o, NULL), 0, "stats of the imported profile");
    IS_STR_HAS(o, "\"batch\":8", "batch from the file name");
    IS_STR_HAS(o, "\"peak_memory_bytes\":13000", "peak: w + a b c at f3 (worked out by hand)");
    sw_free(o);
    IS_INT(sh("import --help", &o, NULL), 0, "import --help");
    IS_STR_HAS(o, "dtr", "import --help lists dtr");
    IS_STR_HAS(o, "--mutate", "... and its options");
    sw_free(o);
}

static void broken_log(void)
{
    char *e = NULL;
    put("bad.log", START CONST("w", "10") CALL("f1", "\"nope\"", "a", "5", "8"));
    IS_INT(sh("import dtr bad.log -o bad.json", NULL, &e), 1, "a broken log exits 1");
    IS_INT(lines(e), 1, "one line");
    IS_STR_HAS(e, "bad.log:4: CALL refers to 'nope'", "file, line and what is wrong");
    sw_free(e);
    char path[512]; /* in the scratch directory, where the command runs */
    snprintf(path, sizeof path, "%s/bad.json", dir);
    IS_INT(access(path, F_OK) != 0, 1, "no partial profile written");
}

/* dtr at 0.75x (9750 B): before f3, a goes (b is its input); the end needs
   a again: one rerun of f1 (1 ms of 5 ms) */
static void dtr_run_json(void)
{
    char *o = NULL, *e = NULL;
    need_net();
    IS_INT(sh("run net.json --planner dtr --memory 0.75x --json", &o, &e), 0,
           "run --planner dtr --memory 0.75x (%s)", e ? e : "");
    IS_STR_HAS(o, "\"iteration_time_s\":0.006", "5 ms of compute + 1 ms of recompute");
    IS_STR_HAS(o, "\"reruns\":1", "one rerun");
    IS_STR_HAS(o, "\"verified\":true", "the plan is verified");
    IS_STR_HAS(o, "\"notes\":\"dtr (dtr): overhead", "notes in the JSON");
    json_doc *d = json_doc_new();
    const json_value *v = NULL;
    sw_err je;
    OK(o && json_parse(d, o, strlen(o), "out", 1, &v, &je) == 0, "the JSON parses");
    json_doc_free(d);
    sw_free(o);
    sw_free(e);
}

static void dtr_errors(void)
{
    char *e = NULL;
    need_net();
    IS_INT(sh("run net.json --planner dtr --memory 0.1x", NULL, &e), 1, "far too small: exit 1");
    IS_STR_HAS(e, "does not fit", "does not fit");
    IS_INT(lines(e), 1, "one line");
    sw_free(e);
    IS_INT(sh("run net.json --planner dtr --memory 0.75x --set heuristic=magic", NULL, &e), 1,
           "unknown heuristic: exit 1");
    IS_STR_HAS(e, "heuristic", "names the option");
    sw_free(e);
}

static void baselines_run(void)
{
    need_net();
    const char *pl[] = {"dtr-megengine", "odswap", "tflms", "vdnn"};
    for (int i = 0; i < 4; i++) {
        char *o = NULL, *e = NULL;
        char args[256];
        snprintf(args, sizeof args, "run net.json --planner %s --memory 1x", pl[i]);
        IS_INT(sh(args, &o, &e), 0, "run --planner %s (%s)", pl[i], e ? e : "");
        IS_STR_HAS(o, "verified safe", "%s plan verified", pl[i]);
        sw_free(o);
        sw_free(e);
    }
}

static void planners_verbose(void)
{
    char *o = NULL;
    IS_INT(sh("planners --verbose", &o, NULL), 0, "planners --verbose");
    IS_STR_HAS(o, "heuristic=dtr", "lists dtr's hyperparameters");
    IS_STR_HAS(o, "exp_memory=", "and dtr-megengine's");
    IS_STR_HAS(o, "schedule=profile", "and odswap's");
    IS_STR_HAS(o, "n_tensors=", "and tflms's");
    IS_STR_HAS(o, "policy=all", "and vdnn's");
    sw_free(o);
}

static void parity_usage(void)
{
    char *o = NULL, *e = NULL;
    IS_INT(sh("dtr-parity --help", &o, NULL), 0, "dtr-parity --help");
    IS_STR_HAS(o, "usage: swapsim dtr-parity", "dtr-parity usage");
    sw_free(o);
    IS_INT(sh("dtr-parity --data /nonexistent", NULL, &e), 1, "no logs: exit 1");
    IS_INT(lines(e), 1, "one line");
    sw_free(e);
}

static void parity_resnet32(void)
{
    const char *shd = tap_data_dir();
    if (!shd) {
        tap_skip(5, "no recorded data");
        return;
    }
    char *o = NULL, *e = NULL;
    char args[600];
    snprintf(args, sizeof args, "dtr-parity --data %s --only resnet32 -o par", shd);
    IS_INT(sh(args, &o, &e), 0, "dtr-parity on ResNet-32 (%s)", e ? e : "");
    IS_STR_HAS(o, "15 of 15 cells match", "all ResNet-32 cells match simrd");
    sw_free(o);
    sw_free(e);
    char path[600];
    size_t len;
    sw_err se;
    snprintf(path, sizeof path, "%s/par.md", dir);
    char *md = NULL;
    OK(sw_read_file(path, &md, &len, &se) == 0, "markdown written");
    IS_STR_HAS(md, "| ResNet-32 (56) | 0.4 | DTR | 1.140 | 1.140 | +0.0% | yes |",
               "the 0.4 h_DTR row");
    sw_free(md);
    snprintf(path, sizeof path, "%s/par.csv", dir);
    char *csv = NULL;
    OK(sw_read_file(path, &csv, &len, &se) == 0, "CSV written");
    IS_STR_HAS(csv, "log,ratio,heuristic,budget_bytes", "CSV header");
    sw_free(csv);
}

static const tap_test tests[] = {
    {"import_dtr_log", import_dtr_log},
    {"broken_log", broken_log},
    {"dtr_run_json", dtr_run_json},
    {"dtr_errors", dtr_errors},
    {"baselines_run", baselines_run},
    {"planners_verbose", planners_verbose},
    {"parity_usage", parity_usage},
    {"parity_resnet32", parity_resnet32},
};

int main(int argc, char **argv)
{
    cli_open("cli-dtr");
    int rc = tap_run(tests, SW_ARRAY_LEN(tests), argc, argv);
    return cli_close() ? 1 : rc;
}
