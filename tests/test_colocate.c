/* test_colocate.c: several jobs on one GPU (sharing/colocate.c). A
   two-job case worked by hand for each policy (the timelines are in the
   comments), and random workloads where the combined memory never exceeds
   the GPU's under time slicing and Zico. One named test each (tap_run). */
#include <math.h>
#include <string.h>

#include "../common/json.h"
#include "../profiles/calibrate.h"
#include "../sharing/colocate.h"
#include "../planners/planner.h"
#include "../profiles/importers.h"
#include "../profiles/profile_io.h"
#include "../sim/simulate.h"
#include "cli_run.h"

/* The peak of g planned by planner_name within budget as co_job_from_profile
   plans it (seed 1, one thread), from the simulator itself: what `swapsim
   run` prints as the peak; -1 where it does not plan or simulate. */
static int64_t own_peak(const graph_profile *g, const char *planner_name, int64_t budget)
{
    const planner *pl = planner_find(planner_name);
    planner_opts o;
    if (!pl || planner_opts_init(&o, pl))
        return -1;
    o.memory_budget = budget;
    o.seed = 1;
    o.threads = 1;
    plan *p = NULL;
    sim_result r;
    sw_err e;
    int64_t pk = -1;
    if (!planner_run(pl, g, &o, &p, &e) && !sim_plan(p, NULL, NULL, &r, &e))
        pk = r.peak_memory_bytes;
    plan_free(p);
    planner_opts_free(&o);
    return pk;
}

/* Checks a recorded run against the jobs' own simulations: the total
   column is the jobs' sum and its largest value the run's peak; no job
   ever holds more than its own simulated peak, and a job that completed an
   iteration on its own curve reached exactly that peak. Returns the number
   of failed checks (each printed). */
static int against_own(const co_job *j, int32_t nj, const int64_t *own, const co_result *r,
                       const char *what)
{
    int bad = 0;
    int64_t top = 0;
    for (int32_t s = 0; s < r->n_samples; s++) {
        const int64_t *row = r->bytes + (size_t)s * ((size_t)nj + 1);
        int64_t sum = 0;
        for (int32_t k = 0; k < nj; k++)
            sum += row[k];
        bad += sum != row[nj];
        top = SW_MAX(top, row[nj]);
    }
    if (top != r->peak_bytes) {
        printf("# %s: the timeline's largest total %lld, the run's peak %lld\n", what,
               (long long)top, (long long)r->peak_bytes);
        bad++;
    }
    for (int32_t k = 0; k < nj; k++) {
        int64_t mx = 0;
        for (int32_t s = 0; s < r->n_samples; s++)
            mx = SW_MAX(mx, r->bytes[(size_t)s * ((size_t)nj + 1) + (size_t)k]);
        int reached = !r->jobs[k].failed && !r->jobs[k].fell_back && r->jobs[k].done >= 1;
        if (mx > own[k] || (reached && mx != own[k])) {
            printf("# %s: job %d held at most %lld bytes, its own simulation's peak %lld\n",
                   what, (int)k, (long long)mx, (long long)own[k]);
            bad++;
        }
    }
    (void)j;
    return bad;
}

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
    IS_INT(co_run(j, 2, 10000000000LL, co_policy_find("spatial"), 10e9, 10e9, 1, &r, &e), 0, "spatial runs");
    OK(r.jobs[1].failed && strstr(r.jobs[1].why, "out of memory"), "spatial: B fails (%s)",
       r.jobs[1].why);
    IS_NUM(r.jobs[0].finish_s, 4, 1e-9, "spatial: A alone finishes at 4 s");
    IS_NUM(r.jobs[0].normalized, 1, 1e-9, "spatial: A at full speed");
    co_result_free(&r);
    /* time: 6 + 6 > 10, so a switch swaps the persistent 1 GB out and the
       next job's in (0.1 + 0.1 s): A 0-2, switch, B 2.2-4.2, switch, A
       4.4-6.4, switch, B 6.6-8.6 */
    IS_INT(co_run(j, 2, 10000000000LL, co_policy_find("time"), 10e9, 10e9, 1, &r, &e), 0, "time runs");
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
    IS_INT(co_run(j, 2, 10000000000LL, co_policy_find("zico"), 10e9, 10e9, 1, &r, &e), 0, "zico runs");
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
    IS_INT(co_run(j, 2, 10000000000LL, co_policy_find("zico"), 10e9, 10e9, 1, &r, &e), 0, "zico util 0.5 runs");
    IS_NUM(r.jobs[0].finish_s, 4, 1e-9, "zico util 0.5: A finishes at 4 s");
    IS_NUM(r.jobs[1].finish_s, 5, 1e-9, "zico util 0.5: B finishes at 5 s");
    /* over the common window 0-5 s: 2 + 2 iterations of 2 s each: 8 / 5 */
    IS_NUM(r.total_normalized, 8.0 / 5, 1e-9, "zico util 0.5: 1.6 jobs' worth of throughput");
    co_result_free(&r);
    /* spatial with room for both (12 GB): both at full speed, 0-4 */
    IS_INT(co_run(j, 2, 12000000000LL, co_policy_find("spatial"), 10e9, 10e9, 1, &r, &e), 0, "spatial 12 GB");
    OK(!r.jobs[0].failed && !r.jobs[1].failed, "spatial 12 GB: nobody fails");
    IS_NUM(r.jobs[1].finish_s, 4, 1e-9, "spatial 12 GB: B finishes at 4 s");
    co_result_free(&r);
    /* the PCIe link shared too: each job keeps it busy 80% of the time
       alone, so together they run at 1 / 1.6 = 0.625 of their speed: two
       iterations of 2 s take 6.4 s */
    j[0].pcie = j[1].pcie = 0.8;
    IS_INT(co_run(j, 2, 12000000000LL, co_policy_find("spatial"), 10e9, 10e9, 1, &r, &e), 0, "spatial, PCIe shared");
    IS_NUM(r.jobs[0].finish_s, 6.4, 1e-9, "PCIe shared: A finishes at 6.4 s");
    IS_NUM(r.jobs[1].finish_s, 6.4, 1e-9, "PCIe shared: B finishes at 6.4 s");
    co_result_free(&r);
    j[0].pcie = j[1].pcie = 0;
    /* time with room for both: no switches, A 0-2, B 2-4, A 4-6, B 6-8 */
    IS_INT(co_run(j, 2, 12000000000LL, co_policy_find("time"), 10e9, 10e9, 1, &r, &e), 0, "time 12 GB");
    IS_NUM(r.jobs[1].finish_s, 8, 1e-9, "time 12 GB: no switch cost: B at 8 s");
    /* two identical jobs, one at a time, no switch: as much work as one job
       alone over the same time (each over its own lifetime, 2/6 x 2 + 2/8 x
       2 = 1.17) */
    IS_NUM(r.total_normalized, 1.0, 1e-9, "time 12 GB: two identical jobs score 1.0 (%.4f)",
           r.total_normalized);
    co_result_free(&r);
    IS_INT(co_run(j, 0, 1, co_policy_find("time"), 1, 1, 1, &r, &e), SW_EINVAL, "no jobs: refused");
    IS_INT(co_run(j, 2, 10000000000LL, NULL, 1, 1, 1, &r, &e), SW_EINVAL, "no policy: refused");
    OK(co_policy_find("magic") == NULL, "an unknown policy name finds none");
    /* the table's order is --policy's choices (cmd_colocate.c: "time|spatial|zico") */
    OK(co_policy_count() == 3 && !strcmp(co_policy_name(co_policy_at(0)), "time") &&
           !strcmp(co_policy_name(co_policy_at(1)), "spatial") &&
           !strcmp(co_policy_name(co_policy_at(2)), "zico") && co_policy_at(3) == NULL,
       "the policies in --policy's order");
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
    for (size_t pi = 0; pi < co_policy_count(); pi++) {
        const co_policy *pol = co_policy_at(pi);
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
    int checked = 0, over = 0, done_all = 1, replay_bad = 0;
    for (int seed = 1; seed <= 6; seed++) {
        co_job j[3];
        int64_t own[3];
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
            int64_t budget = g->device.memory_bytes;
            if (rc == 0 && k == 2) {
                co_job_free(&j[nj]);
                budget = graph_peak_memory(g, g->order) * 7 / 10;
                rc = co_job_from_profile(&j[nj], "job", g, "odswap", budget, 0, &e);
            }
            if (!rc)
                own[nj] = own_peak(g, k == 2 ? "odswap" : "none", budget);
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
        for (size_t pi = 0; pi < co_policy_count(); pi++) {
            const co_policy *pol = co_policy_at(pi);
            co_result r;
            sw_err e;
            int64_t mem = sum * 6 / 10;
            if (co_run(j, nj, mem, pol, 12e9, 12e9, 1, &r, &e)) {
                OK(0, "co_run: %s", e.msg);
                continue;
            }
            checked++;
            over += r.peak_bytes > mem;
            char what[64];
            snprintf(what, sizeof what, "seed %d, %s", seed, co_policy_name(pol));
            replay_bad += against_own(j, nj, own, &r, what);
            for (int k = 0; k < nj && pol != co_policy_find("spatial"); k++)
                done_all &= r.jobs[k].failed || r.jobs[k].done == 3;
            co_result_free(&r);
        }
        for (int k = 0; k < nj; k++)
            co_job_free(&j[k]);
    }
    OK(checked >= 12 && over == 0, "%d random workloads at 60%% of the summed peaks: the "
       "combined memory never exceeds the GPU's (%d over)", checked, over);
    OK(done_all, "time and zico: every job that did not fail ran all its iterations");
    IS_INT(replay_bad, 0, "every policy: each job's memory in the timeline stays within its own "
           "simulation's peak and reaches it, the total is their sum and its top the peak");
}

/* One job alone: its colocate peak, under every policy, is exactly the peak
   of its own simulation (`swapsim run --planner none`), and the timeline
   checks against that simulation (against_own). The curve is built from
   the simulator's events; a curve sampled at task starts with the level
   after each task's frees lost the peak inside tasks (issue 34: imported
   ResNet-50 5.34 against 5.41 GiB, GPT-2 small 7.24 against 8.01). */
static int one_job(const graph_profile *g, const char *what)
{
    const int64_t big = 4LL << 40; /* room for any of them, no swapping */
    int64_t own = own_peak(g, "none", big);
    co_job j;
    sw_err e;
    if (own <= 0 || co_job_from_profile(&j, what, g, "none", big, 0, &e)) {
        OK(0, "%s: plans and simulates alone", what);
        return 0;
    }
    j.iterations = 2;
    int bad = 0;
    for (size_t pi = 0; pi < co_policy_count(); pi++) {
        const co_policy *pol = co_policy_at(pi);
        co_result r;
        if (co_run(&j, 1, big, pol, 12e9, 12e9, 1, &r, &e)) {
            OK(0, "%s, %s: co_run: %s", what, co_policy_name(pol), e.msg);
            continue;
        }
        if (r.peak_bytes != own) {
            printf("# %s, %s: colocate peak %lld, run peak %lld\n", what, co_policy_name(pol),
                   (long long)r.peak_bytes, (long long)own);
            bad++;
        }
        char w[160];
        snprintf(w, sizeof w, "%s, %s", what, co_policy_name(pol));
        bad += against_own(&j, 1, &own, &r, w);
        co_result_free(&r);
    }
    IS_INT(bad, 0, "%s: one job's colocate peak is its run peak, %.4f GiB, under every policy",
           what, (double)own / (1024.0 * 1024 * 1024));
    co_job_free(&j);
    return 1;
}

/* Two identical jobs of a generated profile, time-sliced with room for both
   (no switch): the GPU does one job's work all the time, so the total over
   the common window is 1.0 (each job over its own lifetime gave 1.029 on
   ten iterations) */
static void test_time_pair(void)
{
    static const char *const kv[] = {"ops=30", "seed=5", "unit=4MiB"};
    graph_profile *g = NULL;
    sw_err e;
    co_job j[2];
    if (cal_generate("random", kv, 3, "v100", &g, &e) ||
        co_job_from_profile(&j[0], "a", g, "none", 0, 0, &e)) {
        OK(0, "a job: %s", e.msg);
        graph_free(g);
        return;
    }
    co_job_from_profile(&j[1], "b", g, "none", 0, 0, &e);
    j[0].iterations = j[1].iterations = 10;
    j[1].arrival_s = 1e-4;
    int64_t pk = graph_peak_memory(g, g->order);
    co_result r;
    IS_INT(co_run(j, 2, 3 * pk, co_policy_find("time"), 12e9, 12e9, 0, &r, &e), 0, "time runs");
    IS_NUM(r.total_normalized, 1.0, 1e-9, "two identical jobs time-sliced: total %.6f",
           r.total_normalized);
    OK(r.jobs[0].normalized + r.jobs[1].normalized > 1.0 + 1e-3, "(each over its own lifetime: "
       "%.4f, which the total no longer is)", r.jobs[0].normalized + r.jobs[1].normalized);
    co_result_free(&r);
    co_job_free(&j[0]);
    co_job_free(&j[1]);
    graph_free(g);
}

static void gen_one(const char *model, const char *const *kv, int nkv, const char *what)
{
    graph_profile *g = NULL;
    sw_err e;
    if (cal_generate(model, kv, nkv, "v100", &g, &e)) {
        OK(0, "%s: generate: %s", what, e.msg);
        return;
    }
    one_job(g, what);
    graph_free(g);
}

static void test_one_job_generated(void)
{
    static const char *const tr8[] = {"layers=8", "batch=16"};
    static const char *const gpt[] = {"batch=8"};
    static const char *const chain[] = {"layers=6", "batch=64", "hidden=2048"};
    gen_one("transformer", tr8, 2, "Transformer-8 batch 16");
    gen_one("gpt", gpt, 1, "GPT-2 small batch 8");
    gen_one("chain", chain, 3, "chain of 6");
    for (int seed = 1; seed <= 3; seed++) {
        char s_seed[32];
        snprintf(s_seed, sizeof s_seed, "seed=%d", seed);
        const char *kv[] = {"ops=30", s_seed, "unit=4MiB"};
        char what[32];
        snprintf(what, sizeof what, "random seed %d", seed);
        gen_one("random", kv, 3, what);
    }
    /* the paper's five models at the paper's batch sizes (`swapsim models`) */
    static const char *const wr[] = {"depth=152", "width=10", "batch=64"};
    static const char *const inc[] = {"width=4", "batch=64"};
    static const char *const nas[] = {"repeat=25", "batch=64"};
    static const char *const rnn[] = {"layers=8", "hidden=8192", "batch=256"};
    static const char *const brnn[] = {"layers=4", "hidden=8192", "batch=128"};
    gen_one("wresnet", wr, 3, "WResNet-152-10 batch 64");
    gen_one("inception", inc, 2, "Inception-4 batch 64");
    gen_one("nasnet", nas, 2, "NasNet-25 batch 64");
    gen_one("rnn", rnn, 3, "RNN-8-8K batch 256");
    gen_one("brnn", brnn, 3, "BRNN-4-8K batch 128");
}

/* every recorded profile in data/: the PyTorch traces (as `swapsim import
   pytorch ET KINETO --batch B`, B from the file's name), the DTR logs and the
   PipeDream profiles */
static void test_one_job_imported(void)
{
    const char *d = tap_data_dir();
    if (!d) {
        tap_skip(1, "the data directory is absent (SWAPSIM_DATA)");
        return;
    }
    static const char *const pt[] = {"h100_resnet50_b64", "h100_vgg16_b64",
                                     "h100_inception3_b64", "h100_densenet121_b64", "linear",
                                     "h100_lstm2x1024_b64s128",
                                     "h200_lstm_lm_b64s128", "h200_gru_lm_b64s128",
                                     "h200_vgg16_b64", "h200_resnet50_b64",
                                     "h200_mobilenet_v3_large_b64", "h200_vit_b_16_b64",
                                     "h200_unet_b16", "h200_llama_small_b8s1024",
                                     "h200_gpt2_b8s1024", "h200_bert_base_b32s128"};
    static const char *const dtr[] = {
        "lstm-128-11000000000.0-2020-10-1-16-38-52-default.log",
        "resnet32-56-9000000000.0-2020-10-1-13-3-30-default.log",
        "transformer-10-8000000000.0-2020-10-1-10-56-5-default.log",
        "tv_densenet121-84-10000000000.0-2020-10-1-13-41-18-default.log",
        "unet-6-8000000000.0-2020-10-1-10-57-18-default.log"};
    static const char *const pd[] = {"alexnet", "gnmt", "inception_v3", "resnet101", "resnet18",
                                     "resnet50", "squeezenet1_0", "vgg16"};
    int n = 0;
    /* (the ResNet-50 execution trace alone has no durations: no iteration
       to run; every other recorded profile is checked) */
    for (size_t i = 0; i < SW_ARRAY_LEN(pt) + SW_ARRAY_LEN(dtr) + SW_ARRAY_LEN(pd); i++) {
        char f1[1024], f2[1024], what[160];
        const char *fmt;
        const char *files[2] = {f1, f2};
        int nf = 1, h100 = 0;
        char batch[32] = "batch=64";
        if (i < SW_ARRAY_LEN(pt)) {
            fmt = "pytorch";
            snprintf(f1, sizeof f1, "%s/pytorch-traces/%s_et.json.gz", d, pt[i]);
            snprintf(f2, sizeof f2, "%s/pytorch-traces/%s_kineto.json.gz", d, pt[i]);
            snprintf(what, sizeof what, "pytorch %s", pt[i]);
            nf = 2;
            h100 = !strncmp(pt[i], "h100", 4) || !strncmp(pt[i], "h200", 4);
            const char *b = strstr(pt[i], "_b");
            while (b && !(b[2] >= '0' && b[2] <= '9'))
                b = strstr(b + 1, "_b");
            if (b)
                snprintf(batch, sizeof batch, "batch=%d", atoi(b + 2));
        } else if (i < SW_ARRAY_LEN(pt) + SW_ARRAY_LEN(dtr)) {
            const char *x = dtr[i - SW_ARRAY_LEN(pt)];
            fmt = "dtr";
            snprintf(f1, sizeof f1, "%s/dtr-logs/%s", d, x);
            snprintf(what, sizeof what, "dtr %.40s", x);
        } else {
            const char *x = pd[i - SW_ARRAY_LEN(pt) - SW_ARRAY_LEN(dtr)];
            fmt = "pipedream";
            snprintf(f1, sizeof f1, "%s/pipedream/%s.txt", d, x);
            snprintf(what, sizeof what, "pipedream %s", x);
        }
        const importer *im = importer_find(fmt);
        param_set ps;
        params_init(&ps, im->params);
        sw_err e;
        if (h100)
            params_set_kv(&ps, batch, &e);
        graph_profile *g = NULL;
        int rc = im->import(files, nf, &ps, dev_find(h100 ? "h100" : "v100"), &g, &e);
        params_free(&ps);
        if (rc) {
            OK(0, "%s imports: %s", what, e.msg);
            continue;
        }
        n += one_job(g, what);
        graph_free(g);
    }
    IS_INT(n, 29, "%d recorded profiles checked", n);
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

/* From `colocate --json` of two jobs: each job's failed, fell_back and
   done, the total normalised throughput, the makespan and the first job's
   iteration time alone (-1 where absent). */
static void colo_json(const char *o, int *failed, int *fell, int *done, double *total,
                      double *make, double *it)
{
    json_doc *d = json_doc_new();
    const json_value *v = NULL, *jobs = NULL, *x;
    sw_err e;
    if (!o || !d || json_parse(d, o, strlen(o), "colocate --json", 1, &v, &e) ||
        !(jobs = json_get(v, "jobs")) || jobs->type != JSON_ARRAY || jobs->n != 2) {
        json_doc_free(d);
        return;
    }
    if ((x = json_get(v, "total_normalized")))
        *total = x->u.num.d;
    if ((x = json_get(v, "makespan_s")))
        *make = x->u.num.d;
    if ((x = json_get(&jobs->u.items[0], "iteration_alone_s")))
        *it = x->u.num.d;
    for (int k = 0; k < 2; k++) {
        const json_value *j = &jobs->u.items[k];
        if ((x = json_get(j, "failed")))
            failed[k] = x->type == JSON_TRUE;
        if ((x = json_get(j, "fell_back")))
            fell[k] = x->type == JSON_TRUE;
        if ((x = json_get(j, "done")))
            done[k] = (int)x->u.num.d;
    }
    json_doc_free(d);
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
    /* the two jobs' peaks (1.5x one job's memory together) coincide:
       without --on-oom the second runs out of memory and fails, having done
       nothing; with --on-oom swap that job goes on with its swapping plan
       and completes its 3 iterations, and the total is the 6 iterations'
       time alone over the makespan (the common window, from 0) */
    int failed0[2] = {-1, -1}, failed1[2] = {-1, -1}, fell[2] = {-1, -1}, done1[2] = {-1, -1};
    double total = -1, make = -1, it = -1;
    IS_INT(sh("colocate w.json --policy spatial --json", &o, NULL), 0, "spatial");
    colo_json(o, failed0, fell, done1, &total, &make, &it);
    sw_free(o);
    IS_INT(failed0[0] + failed0[1], 1, "spatial without --on-oom: one job runs out of memory");
    IS_INT(sh("colocate w.json --policy spatial --on-oom swap --json --trace t.json", &o, NULL),
           0, "spatial with --on-oom swap");
    colo_json(o, failed1, fell, done1, &total, &make, &it);
    sw_free(o);
    int k = failed0[1] == 1 ? 1 : 0;
    OK(failed1[0] == 0 && failed1[1] == 0 && fell[k] == 1 && done1[k] == 3,
       "--on-oom swap: the job that failed goes on swapping and does its 3 iterations "
       "(failed %d/%d, fell back %d, done %d)", failed1[0], failed1[1], fell[k], done1[k]);
    IS_NUM(total, 6 * it / make, 1e-6, "--on-oom swap: total %.6f = 6 x %.6f s / makespan "
           "%.6f s", total, it, make);
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
        tap_skip(35, "SWAPSIM_BIN not set (run through make test)");
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
    {"time_pair", test_time_pair},
    {"one_job_generated", test_one_job_generated},
    {"one_job_imported", test_one_job_imported},
    {"cli", cli},
};

int main(int argc, char **argv) { return tap_run(tests, SW_ARRAY_LEN(tests), argc, argv); }
