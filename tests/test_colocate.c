/* test_colocate.c: several jobs on one GPU (experiments/colocate.c). A
   two-job case worked by hand for each policy (the timelines are in the
   comments), and random workloads where the combined memory never exceeds
   the GPU's under time slicing and Zico. One named test each (tap_run). */
#include <math.h>
#include <string.h>

#include "../experiments/calibrate.h"
#include "../experiments/colocate.h"
#include "../profiles/profile_io.h"
#include "cli_run.h"

/* Each job: 6 GB for its first second, 2 GB for its second (2 s alone), 1 GB
   held between iterations, two iterations, arriving at 0. GPU: 10 GB;
   copies 10 GB/s each way. */
static void two_jobs(co_job *j, double util)
{
    static const double at[] = {0, 1, 2};
    static const int64_t lv[] = {6000000000LL, 2000000000LL};
    for (int i = 0; i < 2; i++) {
        co_job_from_curve(&j[i], i ? "B" : "A", at, lv, 2, 1000000000LL);
        j[i].iterations = 2;
        j[i].util = util;
    }
}

static void test_hand_worked(void)
{
    co_job j[2];
    co_result r;
    sw_err e;
    two_jobs(j, 1);
    /* spatial: at 0 both start: 6 + 6 > 10, so B fails; A runs alone 0-4 */
    IS_INT(co_run(j, 2, 10000000000LL, CO_SPATIAL, 10e9, 10e9, 1, &r, &e), 0, "spatial runs");
    OK(r.jobs[1].failed && strstr(r.jobs[1].why, "out of memory"), "spatial: B fails (%s)",
       r.jobs[1].why);
    IS_NUM(r.jobs[0].finish_s, 4, 1e-9, "spatial: A alone finishes at 4 s");
    IS_NUM(r.jobs[0].normalized, 1, 1e-9, "spatial: A at full speed");
    co_result_free(&r);
    /* time: 6 + 6 > 10, so a switch swaps the persistent 1 GB out and the
       next job's in (0.1 + 0.1 s): A 0-2, switch, B 2.2-4.2, switch, A
       4.4-6.4, switch, B 6.6-8.6 */
    IS_INT(co_run(j, 2, 10000000000LL, CO_TIME, 10e9, 10e9, 1, &r, &e), 0, "time runs");
    IS_NUM(r.jobs[0].finish_s, 6.4, 1e-9, "time: A finishes at 6.4 s");
    IS_NUM(r.jobs[1].finish_s, 8.6, 1e-9, "time: B finishes at 8.6 s");
    IS_NUM(r.jobs[1].switch_s, 0.4, 1e-9, "time: two switches into B");
    IS_NUM(r.jobs[0].stall_s, 2.4, 1e-9, "time: A waits 2-4.4");
    IS_NUM(r.jobs[1].stall_s, 4.6, 1e-9, "time: B waits 0-2.2 and 4.2-6.6");
    OK(r.peak_bytes <= 10000000000LL, "time: within memory (%lld)", (long long)r.peak_bytes);
    co_result_free(&r);
    /* zico, each job using the whole GPU alone (util 1): A 0-1 alone at 6
       GB; B would make 12, so it waits until A drops to 2 GB at 1; then both
       at half speed: A's second second and B's first take 1-3; at 3 A
       starts again (6 + B's 2 = 8), both halves take 3-5; at 5 B starts its
       second (A at 2); A ends at 7, B alone runs its last second 7-8 */
    IS_INT(co_run(j, 2, 10000000000LL, CO_ZICO, 10e9, 10e9, 1, &r, &e), 0, "zico runs");
    IS_NUM(r.jobs[0].finish_s, 7, 1e-9, "zico util 1: A finishes at 7 s");
    IS_NUM(r.jobs[1].finish_s, 8, 1e-9, "zico util 1: B finishes at 8 s");
    IS_NUM(r.jobs[1].stall_s, 1, 1e-9, "zico util 1: B stalls 1 s");
    IS_NUM(r.jobs[0].stall_s, 0, 1e-9, "zico util 1: A never stalls");
    IS_INT(r.peak_bytes, 8000000000LL, "zico util 1: peak 8 GB");
    co_result_free(&r);
    co_job_free(&j[0]);
    co_job_free(&j[1]);
    /* zico with each job using half the GPU: running together costs nothing:
       A 0-2 and 2-4; B waits until 1, runs 1-3 and 3-5 */
    two_jobs(j, 0.5);
    IS_INT(co_run(j, 2, 10000000000LL, CO_ZICO, 10e9, 10e9, 1, &r, &e), 0, "zico util 0.5 runs");
    IS_NUM(r.jobs[0].finish_s, 4, 1e-9, "zico util 0.5: A finishes at 4 s");
    IS_NUM(r.jobs[1].finish_s, 5, 1e-9, "zico util 0.5: B finishes at 5 s");
    IS_NUM(r.total_normalized, 1.0 + 0.8, 1e-9, "zico util 0.5: 1.8 jobs' worth of throughput");
    co_result_free(&r);
    /* spatial with room for both (12 GB): both at full speed, 0-4 */
    IS_INT(co_run(j, 2, 12000000000LL, CO_SPATIAL, 10e9, 10e9, 1, &r, &e), 0, "spatial 12 GB");
    OK(!r.jobs[0].failed && !r.jobs[1].failed, "spatial 12 GB: nobody fails");
    IS_NUM(r.jobs[1].finish_s, 4, 1e-9, "spatial 12 GB: B finishes at 4 s");
    co_result_free(&r);
    /* the PCIe link shared too: each job keeps it busy 80% of the time
       alone, so together they run at 1 / 1.6 = 0.625 of their speed: two
       iterations of 2 s take 6.4 s */
    j[0].pcie = j[1].pcie = 0.8;
    IS_INT(co_run(j, 2, 12000000000LL, CO_SPATIAL, 10e9, 10e9, 1, &r, &e), 0, "spatial, PCIe shared");
    IS_NUM(r.jobs[0].finish_s, 6.4, 1e-9, "PCIe shared: A finishes at 6.4 s");
    IS_NUM(r.jobs[1].finish_s, 6.4, 1e-9, "PCIe shared: B finishes at 6.4 s");
    co_result_free(&r);
    j[0].pcie = j[1].pcie = 0;
    /* time with room for both: no switches, A 0-2, B 2-4, A 4-6, B 6-8 */
    IS_INT(co_run(j, 2, 12000000000LL, CO_TIME, 10e9, 10e9, 1, &r, &e), 0, "time 12 GB");
    IS_NUM(r.jobs[1].finish_s, 8, 1e-9, "time 12 GB: no switch cost: B at 8 s");
    co_result_free(&r);
    IS_INT(co_run(j, 0, 1, CO_TIME, 1, 1, 1, &r, &e), SW_EINVAL, "no jobs: refused");
    IS_INT(co_run(j, 2, 10000000000LL, 7, 1, 1, 1, &r, &e), SW_EINVAL, "unknown policy: refused");
    co_job_free(&j[0]);
    co_job_free(&j[1]);
}

/* without recording, the results are the same and memory does not grow
   with the iterations (no spans, one memory sample) */
static void test_no_record(void)
{
    co_job j[2];
    sw_err e;
    two_jobs(j, 0.5);
    for (int pol = 0; pol < CO__COUNT; pol++) {
        j[0].iterations = j[1].iterations = 50;
        co_result a, b;
        if (co_run(j, 2, 10000000000LL, pol, 10e9, 10e9, 1, &a, &e) ||
            co_run(j, 2, 10000000000LL, pol, 10e9, 10e9, 0, &b, &e)) {
            OK(0, "%s: co_run: %s", co_policy_name(pol), e.msg);
            continue;
        }
        OK(a.n_spans >= 50 && a.n_samples > 50, "%s: recorded: %d spans, %d samples",
           co_policy_name(pol), (int)a.n_spans, (int)a.n_samples);
        OK(b.n_spans == 0 && b.n_samples <= 1, "%s: not recorded: %d spans, %d samples",
           co_policy_name(pol), (int)b.n_spans, (int)b.n_samples);
        int same = a.makespan_s == b.makespan_s && a.peak_bytes == b.peak_bytes &&
                   a.total_normalized == b.total_normalized;
        for (int k = 0; k < 2; k++)
            same &= a.jobs[k].done == b.jobs[k].done && a.jobs[k].failed == b.jobs[k].failed &&
                    a.jobs[k].stall_s == b.jobs[k].stall_s;
        OK(same, "%s: the same results (makespan %.6f / %.6f s, peak %lld / %lld)",
           co_policy_name(pol), a.makespan_s, b.makespan_s, (long long)a.peak_bytes,
           (long long)b.peak_bytes);
        co_result_free(&a);
        co_result_free(&b);
    }
    co_job_free(&j[0]);
    co_job_free(&j[1]);
}

static void test_random_workloads(void)
{
    int checked = 0, over = 0, done_all = 1;
    for (int seed = 1; seed <= 6; seed++) {
        co_job j[3];
        int nj = 0;
        for (int k = 0; k < 3; k++) {
            char s_seed[16];
            snprintf(s_seed, sizeof s_seed, "seed=%d", seed * 7 + k);
            const char *kv[] = {"ops=30", s_seed, "unit=4MiB"};
            graph_profile *g = NULL;
            sw_err e;
            if (cal_generate("random", kv, 3, "v100", &g, &e))
                continue;
            int rc = co_job_from_profile(&j[nj], "job", g, k == 2 ? "odswap" : "none", 0, 0, &e);
            if (rc == 0 && k == 2) {
                co_job_free(&j[nj]);
                int64_t peak = graph_peak_memory(g, g->order);
                rc = co_job_from_profile(&j[nj], "job", g, "odswap", peak * 7 / 10, 0, &e);
            }
            graph_free(g);
            if (rc) {
                printf("# %s\n", e.msg);
                continue;
            }
            j[nj].iterations = 3;
            j[nj].arrival_s = 0.01 * k;
            j[nj].util = 0.3 + 0.2 * k;
            nj++;
        }
        int64_t sum = 0;
        for (int k = 0; k < nj; k++) {
            int64_t pk = 0;
            for (int32_t s = 0; s < j[k].n; s++)
                pk = SW_MAX(pk, j[k].level[s]);
            sum += pk;
        }
        for (int pol = 0; pol < CO__COUNT; pol++) {
            co_result r;
            sw_err e;
            int64_t mem = sum * 6 / 10;
            if (co_run(j, nj, mem, pol, 12e9, 12e9, 1, &r, &e)) {
                OK(0, "co_run: %s", e.msg);
                continue;
            }
            checked++;
            over += r.peak_bytes > mem;
            for (int k = 0; k < nj && pol != CO_SPATIAL; k++)
                done_all &= r.jobs[k].failed || r.jobs[k].done == 3;
            co_result_free(&r);
        }
        for (int k = 0; k < nj; k++)
            co_job_free(&j[k]);
    }
    OK(checked >= 12 && over == 0, "%d random workloads at 60%% of the summed peaks: the "
       "combined memory never exceeds the GPU's (%d over)", checked, over);
    OK(done_all, "time and zico: every job that did not fail ran all its iterations");
}

static void put_file(const char *name, const char *text)
{
    char path[400];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static void test_cli(void)
{
    const char *kv[] = {"ops=12", "seed=3", "unit=64MiB"};
    graph_profile *g = NULL;
    sw_err e;
    if (cal_generate("random", kv, 3, "v100", &g, &e)) {
        OK(0, "generate: %s", e.msg);
        return;
    }
    char path[400];
    snprintf(path, sizeof path, "%s/p.json", dir);
    IS_INT(profile_write_file(g, path, &e), 0, "write a profile");
    int64_t peak = graph_peak_memory(g, g->order);
    graph_free(g);
    char w[600];
    snprintf(w, sizeof w, "{\"memory\": \"%lld\", \"jobs\": [{\"profile\": \"p.json\", "
             "\"iterations\": 3}, {\"profile\": \"p.json\", \"iterations\": 3, "
             "\"arrival\": 0.001}]}", (long long)(peak * 3 / 2));
    put_file("w.json", w);
    char *o = NULL;
    IS_INT(sh("colocate w.json --policy zico --csv rows.csv --memory-csv mem.csv", &o, NULL), 0,
           "swapsim colocate");
    IS_STR_HAS(o, "total normalised throughput", "prints the total");
    sw_free(o);
    IS_INT(sh("colocate w.json --policy time --csv rows.csv --json", &o, NULL), 0,
           "colocate --json");
    IS_STR_HAS(o, "\"policy\":\"time\"", "JSON output");
    sw_free(o);
    char *text = NULL;
    size_t len;
    snprintf(path, sizeof path, "%s/rows.csv", dir);
    IS_INT(sw_read_file(path, &text, &len, &e), 0, "the row CSV is written");
    IS_INT(lines(text), 3, "a header and one row per run");
    sw_free(text);
    IS_INT(sh("colocate w.json --policy spatial --on-oom swap --json --trace t.json", &o, NULL),
           0, "spatial with --on-oom swap");
    OK(o && (strstr(o, "\"fell_back\":true") || !strstr(o, "\"failed\":true")),
       "a job out of memory goes on swapping instead of failing");
    sw_free(o);
    snprintf(path, sizeof path, "%s/t.json", dir);
    IS_INT(sw_read_file(path, &text, &len, &e), 0, "the trace is written");
    IS_STR_HAS(text, "\"name\":\"iteration\"", "the trace has the jobs' iterations");
    sw_free(text);
    expect_fail("colocate w.json --on-oom later", 1, "expected fail or swap", "bad --on-oom");
    expect_fail("colocate w.json --policy magic", 1, "--policy: expected time, spatial or zico, got 'magic'",
                "unknown policy");
    put_file("empty.json", "{\"jobs\": []}");
    expect_fail("colocate empty.json", 1, "expected at least one job", "an empty job list");
    put_file("missing.json", "{\"jobs\": [{\"profile\": \"nope.json\"}]}");
    expect_fail("colocate missing.json", 1, "nope.json", "a missing profile");
    snprintf(w, sizeof w, "{\"memory\": \"%lld\", \"jobs\": [{\"profile\": \"p.json\"}]}",
             (long long)(peak / 2));
    put_file("small.json", w);
    expect_fail("colocate small.json", 1, "does not fit",
                "a job whose peak exceeds the memory, with no swapping");
    put_file("badjob.json", "{\"jobs\": [{\"profile\": \"p.json\", \"iterations\": 0}]}");
    expect_fail("colocate badjob.json", 1, "$.jobs[0].iterations", "zero iterations");
    put_file("badpl.json", "{\"jobs\": [{\"profile\": \"p.json\", \"planner\": \"x\"}]}");
    expect_fail("colocate badpl.json", 1, "unknown planner 'x'", "an unknown planner");
}

/* the command line, in a scratch directory (skipped without the binary) */
static void cli(void)
{
    bin = getenv("SWAPSIM_BIN");
    snprintf(dir, sizeof dir, "/tmp/swapsim-colocate-%d", (int)getpid());
    char cmd[600];
    snprintf(cmd, sizeof cmd, "mkdir -p %s", dir);
    if (!bin || system(cmd) != 0) {
        tap_skip(29, "SWAPSIM_BIN not set (run through make test)");
        return;
    }
    test_cli();
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        printf("# could not remove %s\n", dir);
}

static const tap_test tests[] = {
    {"hand_worked", test_hand_worked},
    {"no_record", test_no_record},
    {"random_workloads", test_random_workloads},
    {"cli", cli},
};

int main(int argc, char **argv) { return tap_run(tests, SW_ARRAY_LEN(tests), argc, argv); }
