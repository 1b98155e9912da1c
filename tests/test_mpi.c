/* test_mpi.c: swapsim under mpirun -np 3 (--oversubscribe: this machine may
   have fewer cores): an experiment's CSV is the one a single process writes,
   and the cache is shared both ways (resume); an island search gives the
   same plan every time, and the one a single process gives; a rank that
   fails mid-run ends the run with one clear line, and a rank that dies ends
   it too, never a hang. Skips, with one line, where mpirun is missing or
   swapsim was built without MPI. One named test each (tap_run). */
#include <limits.h>
#include <unistd.h>

#include "cli_run.h"
#include "tap.h"

static char tests_dir[PATH_MAX]; /* absolute path of tests/ */
static char profile[PATH_MAX + 32];

#define MPIRUN "mpirun --allow-run-as-root --oversubscribe -np 3"

/* Run "[env] timeout 300 mpirun -np 3 swapsim ARGS" in dir (env: "" or an
   environment setting, x: the -x that passes it on); like sh() in
   cli_run.h. Under `make test SANITIZE=1` the ranks run without
   LeakSanitizer (detect_leaks=0): OpenMPI leaves allocations at exit in
   plugins it has unloaded, which LSan reports as leaks it cannot even name;
   address and undefined-behaviour checks stay on. */
static int mpi_sh(const char *env, const char *x, const char *args, char **out, char **err)
{
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "cd %s && ASAN_OPTIONS=detect_leaks=0 %s timeout 300 " MPIRUN
             " -x ASAN_OPTIONS %s %s %s >%s/out 2>%s/err", dir, env, x, bin, args, dir, dir);
    int st = system(cmd);
    int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
    char path[512];
    size_t len;
    sw_err e;
    snprintf(path, sizeof path, "%s/out", dir);
    if (out && sw_read_file(path, out, &len, &e))
        *out = NULL;
    snprintf(path, sizeof path, "%s/err", dir);
    if (err && sw_read_file(path, err, &len, &e))
        *err = NULL;
    return code;
}

static char *read_text(const char *path)
{
    char *d = NULL;
    size_t n;
    sw_err e;
    return sw_read_file(path, &d, &n, &e) ? NULL : d;
}

/* One CSV line's fields (quotes kept) into f[]; returns how many. */
static int csv_split(const char *line, size_t len, const char **f, size_t *fl, int max)
{
    int n = 0, q = 0;
    size_t start = 0;
    for (size_t i = 0; i <= len && n < max; i++) {
        if (i < len && line[i] == '"')
            q = !q;
        if (i == len || (line[i] == ',' && !q)) {
            f[n] = line + start;
            fl[n++] = i - start;
            start = i + 1;
        }
    }
    return n;
}

/* The CSV text without its measured columns (wall_s: the cell's wall time;
   planning_time_s: the planner's): what must not depend on the run. */
static char *deterministic_part(const char *csv)
{
    sw_buf b;
    sw_buf_init(&b);
    int drop[256] = {0}, header = 1;
    for (const char *p = csv; p && *p;) {
        size_t len = strcspn(p, "\n");
        const char *f[256];
        size_t fl[256];
        int n = csv_split(p, len, f, fl, 256);
        for (int i = 0; i < n; i++) {
            if (header)
                drop[i] = (fl[i] == 6 && !strncmp(f[i], "wall_s", 6)) ||
                          (fl[i] == 15 && !strncmp(f[i], "planning_time_s", 15));
            if (drop[i])
                continue;
            sw_buf_put(&b, f[i], fl[i]);
            sw_buf_putc(&b, ',');
        }
        sw_buf_putc(&b, '\n');
        header = 0;
        p += len + (p[len] == '\n');
    }
    return b.data;
}

static void test_experiment_csv_as_one_process(void)
{
    char args[PATH_MAX + 256], path[600];
    snprintf(args, sizeof args, "experiment %s/experiment_mpi.json --out one --jobs 2", tests_dir);
    IS_INT(sh(args, NULL, NULL), 0, "one process runs the experiment");
    char *err = NULL;
    snprintf(args, sizeof args, "experiment %s/experiment_mpi.json --out three", tests_dir);
    int rc = mpi_sh("", "", args, NULL, &err);
    IS_INT(rc, 0, "mpirun -np 3 runs it");
    if (rc)
        printf("# %s\n", err ? err : "");
    sw_free(err);
    snprintf(path, sizeof path, "%s/one/mpi-small.csv", dir);
    char *one = read_text(path);
    snprintf(path, sizeof path, "%s/three/mpi-small.csv", dir);
    char *three = read_text(path);
    OK(one && three, "both wrote the CSV");
    char *d1 = deterministic_part(one), *d3 = deterministic_part(three);
    OK(d1 && d3 && lines(d1) == 13 && !strcmp(d1, d3),
       "the same CSV, row for row (but the measured wall_s and planning_time_s)");
    if (d1 && d3 && strcmp(d1, d3))
        printf("# one process:\n%s# three ranks:\n%s", d1, d3);
    OK(one && three && strstr(one, ",error,") && strstr(one, ",ok,"),
       "cells that do not fit are rows too");
    /* resume: every cell cached, the CSV comes back byte for byte */
    snprintf(args, sizeof args, "experiment %s/experiment_mpi.json --out three", tests_dir);
    IS_INT(mpi_sh("", "", args, NULL, NULL), 0, "mpirun again, everything cached");
    char *again = read_text(path);
    OK(again && three && !strcmp(again, three), "byte-identical CSV from the cache");
    IS_INT(sh(args, NULL, NULL), 0, "one process on the cache mpirun filled");
    char *single = read_text(path);
    OK(single && three && !strcmp(single, three), "byte-identical CSV: the cache is shared");
    /* an interrupted run: half the cells gone from the cache, then resumed */
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "cd %s/three/cache && ls | grep -v profile | grep 'json$' | "
             "awk 'NR %% 2' | xargs rm -f", dir);
    OK(system(cmd) == 0, "half the cache removed");
    IS_INT(mpi_sh("", "", args, NULL, NULL), 0, "mpirun resumes");
    char *resumed = read_text(path), *dr = deterministic_part(resumed);
    OK(dr && d1 && !strcmp(dr, d1), "the resumed CSV is the one-process CSV");
    sw_free(one);
    sw_free(three);
    sw_free(d1);
    sw_free(d3);
    sw_free(again);
    sw_free(single);
    sw_free(resumed);
    sw_free(dr);
}

static void test_rank_failure_one_line(void)
{
    char args[PATH_MAX + 256], *err = NULL;
    snprintf(args, sizeof args, "experiment %s/experiment_mpi.json --out fail", tests_dir);
    int rc = mpi_sh("SWAPSIM_MPI_FAIL=1", "-x SWAPSIM_MPI_FAIL", args, NULL, &err);
    OK(rc != 0 && rc != 124, "a failing rank ends the run (exit %d, not a hang)", rc);
    IS_STR_HAS(err, "swapsim: rank 1: injected failure (SWAPSIM_MPI_FAIL=1)\n",
               "rank 0 says which rank failed and why");
    int ours = 0;
    for (const char *p = err; p && (p = strstr(p, "swapsim")); p++)
        ours++;
    IS_INT(ours, 1, "in one line (the rest is mpirun's own notice)");
    sw_free(err);
    err = NULL;
    rc = mpi_sh("SWAPSIM_MPI_FAIL=2:kill", "-x SWAPSIM_MPI_FAIL", args, NULL, &err);
    OK(rc != 0 && rc != 124, "a rank killed mid-run ends the run (exit %d, not a hang)", rc);
    IS_STR_HAS(err, "rank 2", "mpirun names the rank");
    sw_free(err);
    /* a cell that fails outright, on whichever rank runs it */
    char path[600];
    snprintf(path, sizeof path, "%s/bad.json", dir);
    FILE *f = fopen(path, "w");
    if (f) {
        fputs("{\"name\": \"bad\", \"command\": [\"stats\", \"{what}\", \"{flag}\"], \"vars\": {"
              "\"what\": [\"a\", \"b\", \"c\", \"d\"], \"flag\": [\"--json\", \"--bogus\"]}}\n", f);
        fclose(f);
    }
    err = NULL;
    rc = mpi_sh("", "", "experiment bad.json --out bad", NULL, &err);
    OK(rc != 0 && rc != 124, "a cell failing outright ends the run (exit %d)", rc);
    IS_STR_HAS(err, "cell failed (exit 2): swapsim stats", "naming the cell");
    sw_free(err);
}

static void test_island_search_deterministic(void)
{
    char args[PATH_MAX + 256], path[600];
    snprintf(args, sizeof args, "plan %s --planner swapadvisor --memory 0.6x --set population=6 "
             "--set generations=7 --set islands=3 --set migration_interval=2 --seed 5 -o ",
             profile);
    char a1[PATH_MAX + 300], a2[PATH_MAX + 300], a3[PATH_MAX + 300];
    snprintf(a1, sizeof a1, "%s mpi1.json", args);
    snprintf(a2, sizeof a2, "%s mpi2.json", args);
    snprintf(a3, sizeof a3, "%s one.json", args);
    char *err = NULL;
    int rc = mpi_sh("", "", a1, NULL, &err);
    IS_INT(rc, 0, "an island search on 3 ranks");
    if (rc)
        printf("# %s\n", err ? err : "");
    sw_free(err);
    IS_INT(mpi_sh("", "", a2, NULL, NULL), 0, "the same again");
    IS_INT(sh(a3, NULL, NULL), 0, "its 3 islands in one process");
    snprintf(path, sizeof path, "%s/mpi1.json", dir);
    char *p1 = read_text(path);
    snprintf(path, sizeof path, "%s/mpi2.json", dir);
    char *p2 = read_text(path);
    snprintf(path, sizeof path, "%s/one.json", dir);
    char *p3 = read_text(path);
    OK(p1 && p2 && !strcmp(p1, p2), "the same plan, byte for byte, twice");
    OK(p1 && p3 && !strcmp(p1, p3), "and the plan one process makes");
    IS_STR_HAS(p1, "GA: 3 islands (migration every 2 generations, 2 migrants), 7 generations",
               "the plan's notes say how it was searched");
    sw_free(p1);
    sw_free(p2);
    sw_free(p3);
    err = NULL;
    rc = mpi_sh("SWAPSIM_MPI_FAIL=1:kill", "-x SWAPSIM_MPI_FAIL", a1, NULL, &err);
    OK(rc != 0 && rc != 124, "a rank killed at its first migration ends the search (exit %d, "
       "not a hang)", rc);
    sw_free(err);
    snprintf(a1, sizeof a1, "plan %s --planner odswap --memory 0.6x -o x.json", profile);
    err = NULL;
    rc = mpi_sh("", "", a1, NULL, &err);
    OK(rc == 1, "a planner that does not search refuses several ranks");
    IS_STR_HAS(err, "only island searches use several ranks", "saying what does");
    sw_free(err);
}

static const tap_test tests[] = {
    {"experiment_csv_as_one_process", test_experiment_csv_as_one_process},
    {"rank_failure_one_line", test_rank_failure_one_line},
    {"island_search_deterministic", test_island_search_deterministic},
};

int main(int argc, char **argv)
{
    bin = getenv("SWAPSIM_BIN");
    if (!bin)
        tap_skip_all("SWAPSIM_BIN not set (run through make test)");
    if (system("command -v mpirun > /dev/null 2>&1") != 0)
        tap_skip_all("mpirun is not installed (Debian: openmpi-bin)");
    char cmd[PATH_MAX + 600];
    snprintf(cmd, sizeof cmd, "%s --version | grep -q 'MPI: yes'", bin);
    if (system(cmd) != 0)
        tap_skip_all("swapsim was built without MPI (Debian: libopenmpi-dev; make clean && make)");
    if (!getcwd(tests_dir, sizeof tests_dir - 16))
        tap_skip_all("cannot read the working directory");
    strcat(tests_dir, "/tests");
    snprintf(dir, sizeof dir, "/tmp/swapsim-mpi-%d", (int)getpid());
    snprintf(cmd, sizeof cmd, "mkdir -p %s", dir);
    if (system(cmd) != 0)
        tap_skip_all("cannot make a scratch directory");
    /* mpirun itself must work here (a container may lack what it needs) */
    snprintf(cmd, sizeof cmd, "cd %s && timeout 120 " MPIRUN " true > mpirun.log 2>&1", dir);
    if (system(cmd) != 0)
        tap_skip_all("mpirun cannot start 3 processes here (see its message: " MPIRUN " true)");
    snprintf(profile, sizeof profile, "%s/r18.json", dir);
    snprintf(cmd, sizeof cmd, "model resnet --depth 18 --batch 8 -o %s", profile);
    if (sh(cmd, NULL, NULL) != 0)
        tap_skip_all("cannot make the test profile");
    int rc = tap_run(tests, SW_ARRAY_LEN(tests), argc, argv);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "# could not remove %s\n", dir);
    return rc;
}
