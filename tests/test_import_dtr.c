/* test_import_dtr.c: the DTR-log importer: a hand-made log whose profile and
   peak were worked out by hand, broken logs (one-line errors with file and
   line, never a partial profile), and the five shared logs against the DTR
   authors' simulator's baselines (skipped when the shared data is absent);
   one named test each (tap_run). */
#include <dirent.h>
#include <unistd.h>
#include <zlib.h>

#include "../planners/planner.h"
#include "../profiles/importers.h"
#include "../profiles/profile_io.h"
#include "tap.h"

static char dir[256];

static const char *write_log(const char *name, const char *text)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    fputs(text, f);
    fclose(f);
    return path;
}

static int import(const char *path, const char *mutate, graph_profile **g, sw_err *e)
{
    const importer *im = importer_find("dtr");
    param_set ps;
    params_init(&ps, im->params);
    if (mutate)
        params_set(&ps, "mutate", mutate, e);
    int rc = im->import(&path, 1, &ps, dev_find("titanv"), g, e);
    params_free(&ps);
    return rc;
}

#define L(...) "{" __VA_ARGS__ "}\n"
#define START L("\"INSTRUCTION\":\"ANNOTATE\",\"ANNOTATION\":\"START\"")
#define CONST(n, m) L("\"INSTRUCTION\":\"CONSTANT\",\"NAME\":\"" n "\"") \
    L("\"INSTRUCTION\":\"MEMORY\",\"NAME\":\"" n "\",\"MEMORY\":\"" m "\"")
#define MEM(n, m) L("\"INSTRUCTION\":\"MEMORY\",\"NAME\":\"" n "\",\"MEMORY\":\"" m "\"")
#define ALIAS(n, a) L("\"INSTRUCTION\":\"ALIAS\",\"NAME\":\"" n "\",\"ALIAS\":\"" a "\"")
#define CALL1(op, args, r, t) \
    L("\"INSTRUCTION\":\"CALL\",\"NAME\":\"" op "\",\"ARGS\":[" args "],\"RESULT\":[\"" r "\"],\"TIME\":\"" t "\"")
#define REL(n) L("\"INSTRUCTION\":\"RELEASE\",\"NAME\":\"" n "\"")
#define COPY(d, s) L("\"INSTRUCTION\":\"COPY\",\"DST\":\"" d "\",\"SRC\":\"" s "\"")

/* The hand-made log (see the profile worked out below). */
static const char *hand_log =
    L("\"INSTRUCTION\":\"ANNOTATE\",\"ANNOTATION\":\"ignored\"")
    CONST("junk", "7")
    START
    CONST("w", "100") CONST("x", "1000")
    CALL1("mm", "\"x\",\"w\"", "a", "2000") MEM("a", "4000") ALIAS("a", "-1")
    CALL1("view", "\"a\"", "v", "10") MEM("v", "4000") ALIAS("v", "0")
    L("\"INSTRUCTION\":\"MUTATE\",\"NAME\":\"relu_\",\"ARGS\":[\"v\"],\"MUTATE\":[\"0\"],\"TIME\":\"500\"")
    COPY("k", "a") REL("a")
    CALL1("sum", "\"v\"", "s", "300") MEM("s", "8") ALIAS("s", "-1")
    REL("v") REL("never_defined")
    L("\"INSTRUCTION\":\"ANNOTATE\",\"ANNOTATION\":\"BACKWARD\"")
    CALL1("mm_backward", "\"s\",\"x\"", "g", "4000") MEM("g", "100") ALIAS("g", "-1")
    REL("k") REL("s")
    CONST("c", "50");

static void test_hand(void)
{
    const char *path = write_log("hand.log", hand_log);
    graph_profile *g = NULL;
    sw_err e;
    int rc = import(path, NULL, &g, &e);
    IS_INT(rc, 0, "hand-made log imports (%s)", rc ? e.msg : "ok");
    if (rc)
        return;
    /* ops: mm, view, relu_ (a fresh copy), sum, mm_backward, constant, end_of_log */
    IS_INT(g->n_ops, 7, "7 ops: 5 recorded, the late constant's op and end_of_log");
    IS_INT(g->n_tensors, 8, "8 tensors: w x a v v$1 s g c");
    IS_STR_HAS(g->ops[2].name, "relu_", "MUTATE is op 2");
    IS_INT(g->ops[2].n_mut, 0, "mutate=copy records no in-place mutation");
    IS_INT(g->ops[2].n_out, 1, "... but a fresh output");
    IS_INT(g->tensors[g->ops[2].out[0]].bytes, 4000, "of the whole storage (the view's root)");
    IS_STR_HAS(g->tensors[g->ops[2].out[0]].name, "v$1", "named after the argument");
    IS_INT(g->tensors[0].persistent, 1, "a constant before the first op is persistent");
    IS_INT(g->tensors[0].kind, GK_PARAMETER, "... a parameter");
    IS_INT(g->tensors[3].view_of, 2, "ALIAS 0 makes v a view of a");
    IS_STR_HAS(g->ops[5].type, "constant", "a constant after the first op is produced by an op");
    IS_INT(g->tensors[7].kind, GK_INPUT, "... of kind input");
    IS_INT(g->tensors[7].persistent, 0, "... not persistent");
    IS_STR_HAS(g->ops[6].name, "end_of_log", "the last op reads what is still referenced");
    IS_INT(g->ops[6].n_in, 2, "g and c are still referenced at the end");
    IS_INT(g->tensors[2].held_until, 4, "a is held (through the COPY k) until mm_backward");
    IS_INT(g->tensors[4].held_until, 3, "v$1 is released after sum");
    IS_INT(g->ops[4].phase, GP_BACKWARD, "ANNOTATE BACKWARD switches the phase");
    IS_INT(g->ops[3].phase, GP_FORWARD, "ops before it are forward");
    IS_NUM(g->total_compute_s, 6810e-9, 1e-15, "compute = sum of TIME (ns)");
    IS_INT(g->batch, 1, "no batch in the file name: 1");
    /* peak by hand: 1100 persistent + a 4000 + v$1 4000 (a still held) + s 8 */
    graph_stats st;
    graph_compute_stats(g, &st);
    IS_INT(st.peak_memory_bytes, 9108, "ideal peak worked out by hand");
    int64_t peak = 0;
    rc = planner_ideal_peak(g, &peak, &e);
    IS_INT(peak, 9108, "the ideal plan (builder frees at held_until) agrees");
    /* round trip through the profile format keeps held_until */
    sw_buf b;
    sw_buf_init(&b);
    profile_to_json(g, &b, 0);
    graph_profile *h = NULL;
    rc = profile_read_text(b.data, b.len, "rt.json", &h, &e);
    char why[128] = "";
    OK(!rc && graph_equal(g, h, why, sizeof why), "profile JSON round trip (%s)", why);
    sw_buf_free(&b);
    graph_free(h);
    graph_free(g);
}

/* in place: MUTATE records mutates and no copy */
static void test_hand_inplace(void)
{
    const char *path = write_log("hand.log", hand_log);
    graph_profile *g = NULL;
    sw_err e;
    graph_stats st;
    int rc = import(path, "inplace", &g, &e);
    IS_INT(rc, 0, "mutate=inplace imports (%s)", rc ? e.msg : "ok");
    if (!rc) {
        IS_INT(g->ops[2].n_mut, 1, "in place: the op mutates v");
        IS_INT(g->ops[2].n_out, 0, "in place: no copy");
        graph_compute_stats(g, &st);
        IS_INT(st.peak_memory_bytes, 5208, "in place: no second copy (peak at mm_backward)");
        graph_free(g);
    }
}

static void expect_bad(const char *name, const char *text, const char *needle, const char *what)
{
    const char *path = write_log(name, text);
    graph_profile *g = (graph_profile *)1;
    sw_err e;
    e.msg[0] = 0;
    int rc = import(path, NULL, &g, &e);
    OK(rc != 0 && g == NULL, "%s: rejected", what);
    IS_STR_HAS(e.msg, needle, "%s: message", what);
    OK(!strchr(e.msg, '\n'), "%s: one line", what);
}

static void test_bad(void)
{
    char loc[400];
    snprintf(loc, sizeof loc, "%s/t1.log:5: the log ends inside CALL mm (line 4)", dir);
    expect_bad("t1.log", START CONST("w", "100") CALL1("mm", "\"w\"", "a", "5") MEM("a", "8"),
               loc, "truncated inside a CALL (file:line)");
    expect_bad("t2.log", START CONST("w", "100") CALL1("mm", "\"w\"", "a", "5") MEM("b", "8"),
               "names 'b', expected 'a'", "MEMORY for the wrong result");
    expect_bad("t3.log", START CALL1("mm", "\"nope\"", "a", "5") MEM("a", "8") ALIAS("a", "-1"),
               ":2: CALL refers to 'nope', which is not a known tensor", "unknown tensor");
    expect_bad("t4.log", START L("\"INSTRUCTION\":\"FROB\""), ":2: unknown instruction 'FROB'",
               "unknown instruction");
    expect_bad("t5.log", START "{\"INSTRUCTION\":\"CONSTANT\",\"NAME\":\n", "t5.log:2:",
               "malformed JSON");
    expect_bad("t6.log", START CONST("w", "1") REL("w") REL("w"), ":5: RELEASE of 'w', which has "
               "no references left", "released too often");
    expect_bad("t7.log", START CONST("w", "1") CALL1("t", "\"w\"", "a", "5") MEM("a", "8")
               ALIAS("a", "3"), "ALIAS of 'a'", "alias index out of range");
    expect_bad("t8.log", CONST("w", "1"), "no ANNOTATE START", "no START line");
    expect_bad("t9.log", START CONST("w", "1") COPY("k", "w") COPY("k", "w"), "already defined",
               "COPY into an existing name");
    expect_bad("t10.log", START CONST("w", "x1"), ":3: field MEMORY: expected an integer",
               "non-numeric MEMORY");
    expect_bad("t11.log", START CONST("w", "1") CALL1("t", "\"w\"", "a", "-5") MEM("a", "8")
               ALIAS("a", "-1"), "field TIME", "negative TIME");
    expect_bad("t12.log", START CONST("w", "1") REL("w") CALL1("t", "\"w\"", "a", "5") MEM("a", "8")
               ALIAS("a", "-1"), "after its last reference was released (line 4)",
               "use after release");
    expect_bad("t13.log", START CONST("w", "1"), "has no CALL or MUTATE", "no ops");
}

static void test_gzip(void)
{
    /* a gzip error */
    const char *gz = write_log("t14.log", "\x1f\x8b\x08garbage-not-deflate");
    graph_profile *g = NULL;
    sw_err e;
    int rc = import(gz, NULL, &g, &e);
    OK(rc != 0 && g == NULL, "corrupt gzip: rejected");
    IS_STR_HAS(e.msg, "t14.log", "corrupt gzip: the message names the file");
    /* a gzip-compressed good log imports */
    char path[512];
    snprintf(path, sizeof path, "%s/hand.log.gz", dir);
    gzFile z = gzopen(path, "wb");
    gzputs(z, hand_log);
    gzclose(z);
    rc = import(path, NULL, &g, &e);
    IS_INT(rc, 0, "a gzip-compressed log imports (%s)", rc ? e.msg : "ok");
    graph_free(g);
}

static const struct {
    const char *prefix;
    int64_t simrd_peak, compute_ns;
} shared[] = {{"resnet32-", 10061179152, 291905487},
              {"tv_densenet121-", 11020749360, 355299140},
              {"transformer-", 9864405000, 276259118},
              {"unet-", 8415764640, 435278292},
              {"lstm-", 5595127736, 769458833}};

static void test_shared(void)
{
    const char *sh = tap_data_dir();
    char ddir[512];
    snprintf(ddir, sizeof ddir, "%s/dtr-logs", sh ? sh : "");
    DIR *d = sh ? opendir(ddir) : NULL;
    if (!d) {
        tap_skip(3 * (int)(sizeof shared / sizeof shared[0]), "no shared DTR logs");
        return;
    }
    closedir(d);
    for (size_t i = 0; i < sizeof shared / sizeof shared[0]; i++) {
        char path[1024] = "";
        d = opendir(ddir);
        struct dirent *de;
        while ((de = readdir(d)) != NULL)
            if (!strncmp(de->d_name, shared[i].prefix, strlen(shared[i].prefix)))
                snprintf(path, sizeof path, "%s/%s", ddir, de->d_name);
        closedir(d);
        if (!path[0]) {
            tap_skip(3, "log missing");
            continue;
        }
        graph_profile *g = NULL;
        sw_err e;
        int rc = import(path, NULL, &g, &e);
        IS_INT(rc, 0, "%s imports (%s)", shared[i].prefix, rc ? e.msg : "ok");
        if (rc) {
            tap_skip(2, "import failed");
            continue;
        }
        graph_stats st;
        graph_compute_stats(g, &st);
        /* simrd frees the few early constants whose references all go
           mid-log; they are persistent here: at most 1 KB apart */
        IS_NUM((double)st.peak_memory_bytes, (double)shared[i].simrd_peak, 1024,
               "%s: ideal peak = simrd's baseline peak", shared[i].prefix);
        IS_NUM(g->total_compute_s * 1e9, (double)shared[i].compute_ns, 1e-3,
               "%s: total compute = simrd's baseline compute", shared[i].prefix);
        graph_free(g);
    }
}

static const tap_test tests[] = {
    {"hand_log", test_hand},
    {"hand_log_inplace", test_hand_inplace},
    {"broken_logs", test_bad},
    {"gzip", test_gzip},
    {"shared_logs", test_shared},
};

int main(int argc, char **argv)
{
    snprintf(dir, sizeof dir, "/tmp/swapsim-test-import-dtr-%d", (int)getpid());
    char cmd[300];
    snprintf(cmd, sizeof cmd, "mkdir -p %s", dir);
    if (system(cmd))
        return 1;
    int rc = tap_run(tests, SW_ARRAY_LEN(tests), argc, argv);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd))
        return 1;
    return rc;
}
