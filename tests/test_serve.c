/* test_serve.c: serving several models on one GPU (sharing/serve.c):
   an M/D/1 queue against Erlang's waiting-time formula, the service times
   of each policy worked by hand on tiny profiles, and bad input. One named
   test each (tap_run). */
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "../profiles/calibrate.h"
#include "../sharing/serve.h"
#include "../planners/planner.h"
#include "../profiles/profile_io.h"
#include "cli_run.h"

/* One op of d seconds reading a weight of wbytes and making a 1 MB output;
   PCIe 10 GB/s each way, no copy latency; batch 4. */
static graph_profile *tiny(const char *name, double d, int64_t wbytes)
{
    dev_spec dv = *dev_find("v100");
    dv.h2d_bw = dv.d2h_bw = 10e9;
    dv.duplex_bw = 20e9;
    dv.copy_latency_s = 0;
    graph_profile *g = graph_new(name, &dv);
    g->batch = 4;
    int32_t w = graph_add_tensor(g, "w", wbytes, GK_PARAMETER, 1);
    int32_t y = graph_add_tensor(g, "y", 1000000, GK_ACTIVATION, 0);
    graph_add_op(g, "op", "x", d, GP_FORWARD, &w, 1, &y, 1, NULL, 0, 0);
    sw_err e;
    if (graph_finish(g, &e, NULL, NULL)) {
        printf("# %s\n", e.msg);
        graph_free(g);
        return NULL;
    }
    return g;
}

static void test_md1_formula(void)
{
    /* Erlang: P(W <= 0) = 1 - rho; and the mean of the distribution is
       Pollaczek-Khinchine's rho d / (2 (1 - rho)) */
    IS_NUM(serve_md1_wait_cdf(50, 0.01, 0), 0.5, 1e-12, "M/D/1: P(W = 0) = 1 - rho");
    /* rho = 0.5: the tail beyond 0.3 s is below e^-37 */
    double lam = 50, d = 0.01, mean = 0, prev = serve_md1_wait_cdf(lam, d, 0);
    for (double t = 1e-5; t < 0.3; t += 1e-5) {
        double f = serve_md1_wait_cdf(lam, d, t);
        mean += (1 - f) * 1e-5;
        prev = f;
    }
    IS_NUM(mean, 0.5 * 0.01 / (2 * 0.5), 2e-5, "M/D/1: the distribution's mean is P-K's");
    IS_NUM(prev, 1, 1e-6, "M/D/1: the distribution reaches 1");
}

static void test_md1_queue(void)
{
    graph_profile *g = tiny("m", 0.01, 1000);
    const graph_profile *fleet[] = {g};
    serve_config c = {fleet, 1, 0, serve_policy_find("not_shared"), (int64_t)1 << 30, 7, 1, 0, 0, 0};
    serve_prep p;
    sw_err e;
    /* the table's order is --policy's choices (cmd_serve.c) */
    OK(serve_policy_count() == 4 && !strcmp(serve_policy_name(serve_policy_at(0)), "not_shared") &&
           !strcmp(serve_policy_name(serve_policy_at(1)), "time_shared") &&
           !strcmp(serve_policy_name(serve_policy_at(2)), "swapadvisor") &&
           !strcmp(serve_policy_name(serve_policy_at(3)), "lru") && serve_policy_at(4) == NULL &&
           serve_policy_find("magic") == NULL,
       "the policies in --policy's order; an unknown name finds none");
    c.policy = NULL;
    IS_INT(serve_prepare(&c, &p, &e), SW_EINVAL, "no policy: refused");
    c.policy = serve_policy_find("not_shared");
    IS_INT(serve_prepare(&c, &p, &e), 0, "prepare one model");
    IS_NUM(p.info[0].hot_s, 0.01, 1e-15, "service time = the op's 10 ms");
    serve_result r;
    /* rho = 0.7: 70 requests/s of batch 4 = 280 samples/s */
    IS_INT(serve_run(&p, 280, 400000, &r, &e), 0, "400,000 requests at rho = 0.7");
    double wmean = 0.7 * 0.01 / (2 * 0.3);
    IS_NUM(r.mean_s, 0.01 + wmean, 0.02 * (0.01 + wmean),
           "mean latency: 10 ms + P-K's %.4f s, within 2%%", wmean);
    double lo = 0, hi = 0.2; /* lambda t <= 14 */
    for (int i = 0; i < 200; i++) {
        double mid = (lo + hi) / 2;
        if (serve_md1_wait_cdf(70, 0.01, mid) < 0.99)
            lo = mid;
        else
            hi = mid;
    }
    IS_NUM(r.p99_s, 0.01 + hi, 0.03 * (0.01 + hi),
           "p99 latency: 10 ms + Erlang's 99th percentile wait %.4f s, within 3%%", hi);
    IS_NUM(r.utilization, 0.7, 0.01, "the GPU is busy 70%% of the time");
    IS_NUM(r.samples_per_s, 280, 280 * 0.01, "throughput = the offered load");
    serve_result r2;
    serve_run(&p, 280, 400000, &r2, &e);
    OK(r2.p99_s == r.p99_s && r2.mean_s == r.mean_s, "the same seed gives the same figures");
    serve_prep_free(&p);
    graph_free(g);
}

static void test_policies_by_hand(void)
{
    /* two models, each: 20 ms of compute, 1 GB of weights (0.1 s at 10 GB/s) */
    graph_profile *a = tiny("a", 0.02, 1000000000), *b = tiny("b", 0.02, 1000000000);
    const graph_profile *fleet[] = {a, b};
    sw_err e;
    serve_prep p;
    serve_result r;
    serve_config c = {fleet, 2, 0, serve_policy_find("time_shared"), 4000000000LL, 3, 1, 0, 0, 0};
    IS_INT(serve_prepare(&c, &p, &e), 0, "time_shared prepares");
    IS_NUM(p.info[0].cold_s, 0.12, 1e-12, "time_shared: a switch costs 1 GB / 10 GB/s + 20 ms");
    IS_NUM(p.info[0].hot_s, 0.02, 1e-12, "time_shared: the same model again: 20 ms");
    serve_run(&p, 4, 100000, &r, &e); /* 1 request/s: no queueing to speak of */
    IS_NUM((double)r.cold / 1e5, 0.5, 0.01, "two models chosen at random: half the requests "
           "switch (%lld)", (long long)r.cold);
    IS_NUM(r.weight_bytes_moved, (double)r.cold * 1e9, 0, "each switch moves 1 GB");
    serve_result ts = r;
    serve_prep_free(&p);
    c.policy = serve_policy_find("lru"); /* 4 GB: both models' weights (2 GB) and a request fit */
    IS_INT(serve_prepare(&c, &p, &e), 0, "lru prepares");
    serve_run(&p, 4, 100000, &r, &e);
    IS_INT(r.cold, 2, "lru with room for both: each model's weights are copied once");
    serve_prep_free(&p);
    c.memory = 1500000000LL; /* room for one model's weights only */
    IS_INT(serve_prepare(&c, &p, &e), 0, "lru in 1.5 GB prepares");
    serve_run(&p, 4, 100000, &r, &e);
    OK(r.cold == ts.cold && r.p99_s == ts.p99_s,
       "lru with room for one model behaves as time_shared (%lld vs %lld misses)",
       (long long)r.cold, (long long)ts.cold);
    serve_prep_free(&p);
    c.policy = serve_policy_find("not_shared");
    c.memory = 500000000LL;
    IS_INT(serve_prepare(&c, &p, &e), SW_ENOFIT, "not_shared: a model over the memory");
    IS_STR_HAS(e.msg, "model 0 'a' does not fit", "the refusal names the model");
    c.policy = serve_policy_find("swapadvisor");
    c.memory = 4000000000LL;
    c.generations = 3;
    c.population = 4;
    IS_INT(serve_prepare(&c, &p, &e), 0, "swapadvisor: 2 GB shares prepare");
    IS_NUM(p.info[0].hot_s, 0.02, 1e-9, "swapadvisor: a share that holds the model: 20 ms");
    OK(p.info[1].hot_s == p.info[0].hot_s, "identical models, identical service");
    serve_prep_free(&p);
    c.memory = 1500000000LL; /* 750 MB shares: the 1 GB weight cannot fit */
    int rc = serve_prepare(&c, &p, &e);
    OK(rc == SW_ENOFIT || rc == SW_EEXCEEDED, "swapadvisor in shares below one tensor: refused");
    OK(strstr(e.msg, "does not fit its share") != NULL, "the refusal says so: %s", e.msg);
    c.n_models = 0;
    IS_INT(serve_prepare(&c, &p, &e), SW_EINVAL, "no models: refused");
    c.n_models = 2;
    c.policy = serve_policy_find("not_shared");
    c.memory = 4000000000LL;
    serve_prepare(&c, &p, &e);
    IS_INT(serve_run(&p, 0, 10, &r, &e), SW_EINVAL, "rate 0: refused");
    IS_INT(serve_run(&p, -1, 10, &r, &e), SW_EINVAL, "negative rate: refused");
    serve_prep_free(&p);
    graph_free(a);
    graph_free(b);
}

/* Four ResNet-152 (batch 16, inference) in 900 MiB, the first model the
   most popular (Zipf 1: 0.48, 0.24, 0.16, 0.12): equal 225 MiB shares make
   every model swap; the search gives each its floor and the rest by
   popularity, and the mean service time must not be worse. */
static void test_share_search(void)
{
    const char *kv[] = {"depth=152", "batch=16", "inference=true"};
    graph_profile *g = NULL;
    sw_err e;
    if (cal_generate("resnet", kv, 3, "v100", &g, &e)) {
        OK(0, "generate resnet-152: %s", e.msg);
        return;
    }
    const graph_profile *fleet[] = {g, g, g, g};
    serve_config c = {fleet, 4, 1, serve_policy_find("swapadvisor"), 900LL << 20, 1, 1, 20, 16, 0};
    serve_prep eq, se;
    IS_INT(serve_prepare(&c, &eq, &e), 0, "equal shares prepare");
    c.share_search = 1;
    IS_INT(serve_prepare(&c, &se, &e), 0, "share search prepares");
    double m_eq = 0, m_se = 0;
    const double pop[] = {12.0 / 25, 6.0 / 25, 4.0 / 25, 3.0 / 25};
    for (int m = 0; m < 4; m++) {
        m_eq += pop[m] * eq.info[m].hot_s;
        m_se += pop[m] * se.info[m].hot_s;
    }
    OK(eq.info[0].share_bytes == eq.info[3].share_bytes, "equal: 225 MiB each");
    /* (the search includes the equal split, so "no worse" holds by
       construction and proves nothing: on this fleet it must find a split
       strictly better, favouring the popular model, within the memory) */
    OK(se.share_alpha > 0, "the search picks an unequal split (alpha %.2f)", se.share_alpha);
    OK(m_se < m_eq * 0.995, "the search's mean service %.6f s is more than 0.5%% below equal "
       "shares' %.6f s", m_se, m_eq);
    int64_t used = 0;
    for (int m = 0; m < 4; m++)
        used += se.info[m].share_bytes;
    OK(used <= 900LL << 20 && used >= (900LL << 20) * 99 / 100, "the shares use the 900 MiB "
       "(%lld bytes)", (long long)used);
    OK(se.info[0].share_bytes > se.info[1].share_bytes &&
       se.info[1].share_bytes >= se.info[2].share_bytes &&
       se.info[2].share_bytes >= se.info[3].share_bytes, "shares in popularity order: %lld, "
       "%lld, %lld, %lld", (long long)se.info[0].share_bytes, (long long)se.info[1].share_bytes,
       (long long)se.info[2].share_bytes, (long long)se.info[3].share_bytes);
    OK(se.info[0].hot_s < eq.info[0].hot_s, "the popular model, with more memory, serves "
       "faster: %.6f s against %.6f s", se.info[0].hot_s, eq.info[0].hot_s);
    serve_prep_free(&eq);
    serve_prep_free(&se);
    graph_free(g);
}

static void test_cli(void)
{
    graph_profile *g = tiny("m", 0.01, 1000);
    char path[300];
    snprintf(path, sizeof path, "%s/m.json", dir);
    sw_err e;
    IS_INT(profile_write_file(g, path, &e), 0, "write a profile");
    graph_free(g);
    char *o = NULL;
    IS_INT(sh("serve m.json --copies 3 --policy lru --rates 100,200 --requests 1000 -o s.csv", &o,
              NULL), 0, "swapsim serve with a sweep");
    IS_STR_HAS(o, "p99", "prints the percentiles");
    sw_free(o);
    char csv[300];
    snprintf(csv, sizeof csv, "%s/s.csv", dir);
    char *text = NULL;
    size_t len;
    IS_INT(sw_read_file(csv, &text, &len, &e), 0, "the CSV is written");
    IS_INT(lines(text), 3, "a header and one row per rate");
    sw_free(text);
    expect_fail("serve m.json --policy magic --rate 10", 1, "--policy: expected not_shared, time_shared, swapadvisor or lru, got 'magic'",
                "unknown policy");
    expect_fail("serve m.json --rate 0", 1, "--rate", "rate 0");
    expect_fail("serve m.json", 1, "give --rate", "no rate");
    expect_fail("serve m.json --rates 10,-5", 1, "--rates", "negative rate in a sweep");
    expect_fail("serve m.json --memory 1K --rate 10 --policy not_shared", 1, "does not fit",
                "a model over the memory");
    expect_fail("serve missing.json --rate 10", 1, "missing.json", "a missing profile");
    IS_INT(sh("bound m.json --memory 2M", &o, NULL), 0, "swapsim bound");
    IS_STR_HAS(o, "compute", "prints the compute bound");
    sw_free(o);
    expect_fail("bound m.json --memory 1K", 1, "no plan fits", "bound: an impossible budget");
    /* tradeoff: the op makes 1 MB in 10 ms; out and in at 3 GB/s (no copy
       latency) take 2 x 1e6 / 3e9 s, 0.0667 of the recompute */
    IS_INT(sh("tradeoff m.json --rate 3GB/s --csv", &o, NULL), 0, "swapsim tradeoff");
    IS_STR_HAS(o, "x,1,0.06667,0.06667,0.06667", "swap over recompute for the one activation");
    sw_free(o);
    expect_fail("tradeoff m.json --rate fast", 1, "--rate", "tradeoff: a bad rate");
}

/* the command line, in a scratch directory (skipped without the binary) */
static void cli(void)
{
    bin = getenv("SWAPSIM_BIN");
    snprintf(dir, sizeof dir, "/tmp/swapsim-serve-%d", (int)getpid());
    char cmd[600];
    snprintf(cmd, sizeof cmd, "mkdir -p %s", dir);
    if (!bin || system(cmd) != 0) {
        tap_skip(25, "SWAPSIM_BIN not set (run through make test)");
        return;
    }
    test_cli();
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        printf("# could not remove %s\n", dir);
}

static const tap_test tests[] = {
    {"md1_formula", test_md1_formula},
    {"md1_queue", test_md1_queue},
    {"policies_by_hand", test_policies_by_hand},
    {"share_search", test_share_search},
    {"cli", cli},
};

int main(int argc, char **argv) { return tap_run(tests, SW_ARRAY_LEN(tests), argc, argv); }
