/* test_repro.c: the inputs that once broke swapsim (tests/repro/, found by
   mutation fuzzing) and the limits that now refuse them: each reproducer
   ends with exit 1 and one line, with no sanitizer report (under
   `make test SANITIZE=1` the binary is the sanitized one, whose report would
   add lines and change the exit status) and no hang; values just inside a
   limit are still accepted. One named test each (tap_run). */
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "../common/limits.h"
#include "../profiles/graph.h"
#include "../profiles/device.h"
#include "cli_run.h"
#include "tap.h"

static char repro[PATH_MAX]; /* absolute path of tests/repro */

/* Run "timeout 120 swapsim ARGS" with the file FILE of tests/repro as the
   first argument's place holder %s; expect exit 1 and exactly one line. */
static void expect_refused(const char *file, const char *args_fmt, const char *needle)
{
    char path[PATH_MAX + 64], args[PATH_MAX + 512], *o = NULL, *e = NULL;
    snprintf(path, sizeof path, "%s/%s", repro, file);
    snprintf(args, sizeof args, args_fmt, path);
    /* a hang shows as exit 124 from timeout(1), a sanitizer abort as another code */
    char cmd[3 * PATH_MAX + 1024];
    snprintf(cmd, sizeof cmd, "cd %s && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1 "
             "timeout 120 %s %s >%s/out 2>%s/err", dir, bin, args, dir, dir);
    int st = system(cmd);
    int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
    size_t len;
    sw_err er;
    snprintf(path, sizeof path, "%s/err", dir);
    if (sw_read_file(path, &e, &len, &er))
        e = NULL;
    IS_INT(code, 1, "%s: exit 1 (not a hang, not a sanitizer abort)", file);
    IS_INT(lines(e), 1, "%s: exactly one line on stderr", file);
    IS_STR_HAS(e, needle, "%s: the message says what was expected", file);
    sw_free(o);
    sw_free(e);
}

static void test_overflowing_sizes_refused_at_load(void)
{
    expect_refused("ubsan_profiles_graph.c_828.json", "stats %s",
                   "bytes: expected an integer in [0, 1125899906842624]");
    expect_refused("ubsan_planners_basic.c_60.json", "run %s --planner dtr --memory 0.9x",
                   "bytes: expected an integer in [0, 1125899906842624]");
}

static void test_absurd_op_times_refused_at_load(void)
{
    expect_refused("ubsan_planners_dtr_engine.c_565.json", "run %s --planner dtr --memory 0.6x",
                   "time_s: expected a number <= 86400");
    expect_refused("hang_cpu_sync_validate_cpu.c.json",
                   "replay %s --backend cpu --iterations 1 --warmup 1 --time-scale 1",
                   "time_s: expected a number <= 86400");
}

static void test_experiment_errors_free_everything(void)
{
    static const char *files[] = {"leak_expand_experiments_runner.c_184.json",
                                  "leak_expand_experiments_runner.c_233.json",
                                  "leak_expand_experiments_runner.c_237.json",
                                  "leak_value_text_experiments_runner.c_84.json"};
    static const char *needles[] = {"command arguments must be strings", "unknown placeholder",
                                    "unknown placeholder", "expected a string, number or boolean"};
    char args[1024];
    /* the experiments' data directories, empty: the grids are expanded, not skipped */
    char mk[1024];
    snprintf(mk, sizeof mk, "mkdir -p %s/sh/dtr-logs %s/sh/pipedream %s/sh/pytorch-traces",
             dir, dir, dir);
    OK(system(mk) == 0, "make an empty data directory");
    snprintf(args, sizeof args, "experiment %%s --dry-run --data %s/sh --out %s/o", dir, dir);
    for (int i = 0; i < 4; i++)
        expect_refused(files[i], args, needles[i]);
}

/* A profile of n tensors of `bytes` each and one op of time_s reading them. */
static graph_profile *flat_profile(int n, int64_t bytes, double time_s)
{
    graph_profile *g = graph_new("limits", dev_find("v100"));
    int32_t *in = sw_malloc((size_t)n * sizeof *in);
    for (int i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof name, "t%d", i);
        in[i] = graph_add_tensor(g, name, bytes, GK_INPUT, 1);
    }
    graph_add_op(g, "op", "op", time_s, GP_FORWARD, in, n, NULL, 0, NULL, 0, 0);
    sw_free(in);
    return g;
}

static void test_limits_boundaries(void)
{
    sw_err e;
    int32_t bo, bt;
    graph_profile *g = flat_profile(4, SW_MAX_TENSOR_BYTES, SW_MAX_OP_SECONDS);
    IS_INT(graph_finish(g, &e, &bo, &bt), 0, "a 2^50-byte tensor and a one-day op are accepted");
    graph_free(g);
    g = flat_profile(1, SW_MAX_TENSOR_BYTES + 1, 1);
    IS_INT(graph_finish(g, &e, &bo, &bt), SW_EINVAL, "2^50 + 1 bytes is refused");
    IS_INT(bt, 0, "the error names the tensor");
    graph_free(g);
    g = flat_profile(1, 1, SW_MAX_OP_SECONDS * 1.000001);
    IS_INT(graph_finish(g, &e, &bo, &bt), SW_EINVAL, "over a day per op is refused");
    IS_INT(bo, 0, "the error names the op");
    graph_free(g);
    /* 4096 tensors of 2^50 bytes are exactly 2^62 in all: accepted; one byte more is not */
    g = flat_profile(4096, SW_MAX_TENSOR_BYTES, 1);
    IS_INT(graph_finish(g, &e, &bo, &bt), 0, "2^62 bytes in all is accepted");
    graph_stats st;
    IS_INT(graph_compute_stats(g, &st), 0, "stats of a profile at the total limit");
    OK(st.total_tensor_bytes == SW_MAX_TOTAL_BYTES, "its total is 2^62 bytes, no overflow");
    graph_free(g);
    g = flat_profile(4097, SW_MAX_TENSOR_BYTES, 1);
    IS_INT(graph_finish(g, &e, &bo, &bt), SW_EINVAL, "over 2^62 bytes in all is refused");
    IS_INT(bt, 4096, "the error names the tensor that crosses the limit");
    graph_free(g);
    int64_t s;
    OK(sw_add_sat(INT64_MAX - 1, 5) == INT64_MAX, "sw_add_sat saturates");
    OK(sw_add_checked(INT64_MAX, 1, &s) == -1, "sw_add_checked reports overflow");
    OK(sw_add_checked(INT64_MIN, -1, &s) == -1, "sw_add_checked reports underflow");
    OK(sw_add_checked(40, 2, &s) == 0 && s == 42, "sw_add_checked adds");
}

static void test_replay_states_its_longest_plan(void)
{
    char args[1024];
    snprintf(args, sizeof args, "model chain --layers 4 -o %s/c.json", dir);
    IS_INT(sh(args, NULL, NULL), 0, "make a small chain");
    snprintf(args, sizeof args, "plan %s/c.json --planner ideal -o %s/c.plan.json", dir, dir);
    IS_INT(sh(args, NULL, NULL), 0, "plan it");
    snprintf(args, sizeof args, "replay %s/c.plan.json --max-seconds 1e-9", dir);
    expect_fail(args, 1, "over the limit of 1e-09 s (--max-seconds)",
                "a replay longer than --max-seconds");
    snprintf(args, sizeof args, "replay %s/c.plan.json --max-seconds 0", dir);
    expect_fail(args, 1, "--max-seconds: expected a number in (0, 1e+09], got '0'",
                "--max-seconds 0");
    char *o = NULL;
    IS_INT(sh("replay --help", &o, NULL), 0, "replay --help");
    IS_STR_HAS(o, "--max-seconds S", "help states the limit");
    sw_free(o);
}

static const tap_test tests[] = {
    {"overflowing_sizes_refused_at_load", test_overflowing_sizes_refused_at_load},
    {"absurd_op_times_refused_at_load", test_absurd_op_times_refused_at_load},
    {"experiment_errors_free_everything", test_experiment_errors_free_everything},
    {"limits_boundaries", test_limits_boundaries},
    {"replay_states_its_longest_plan", test_replay_states_its_longest_plan},
};

int main(int argc, char **argv)
{
    bin = getenv("SWAPSIM_BIN");
    if (!bin)
        tap_skip_all("SWAPSIM_BIN not set (run through make test)");
    if (!getcwd(repro, sizeof repro - 16))
        tap_skip_all("cannot read the working directory");
    strcat(repro, "/tests/repro");
    snprintf(dir, sizeof dir, "/tmp/swapsim-repro-%d", (int)getpid());
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
