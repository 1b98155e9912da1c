/* test_readings.c: the readings of the SwapAdvisor paper's search (issue 36,
   docs/swapadvisor.md "Readings of the paper's search"): MXNet's
   depth-first executor order, the dataflow pass with K random picks, the
   shuffle toward uniformly random topological orders, and the GA's
   survivor rules (children only, per family, uniform selection), each by
   an exact outcome or a probability on a tiny case; then every reading
   through the planner: safe plans, the same for 1 and 2 threads. */
#include <gsl/gsl_rng.h>

#include "../ga/ga.h"
#include "../planners/lib/schedule.h"
#include "../planners/swapadvisor.h"
#include "../sim/plan_io.h"
#include "../sim/verify.h"
#include "random_plans.h"
#include "tap.h"

/* n_ops ops, each making its own tensor; edges[2k] -> edges[2k+1] */
static graph_profile *small_dag(int n_ops, const int *edges, int n_edges)
{
    graph_profile *g = graph_new("dag", dev_find("v100"));
    int32_t t[8];
    char nm[16];
    for (int o = 0; o < n_ops; o++) {
        snprintf(nm, sizeof nm, "t%d", o);
        t[o] = graph_add_tensor(g, nm, 100, GK_ACTIVATION, 0);
    }
    for (int o = 0; o < n_ops; o++) {
        int32_t in[8];
        int n_in = 0;
        for (int k = 0; k < n_edges; k++)
            if (edges[2 * k + 1] == o)
                in[n_in++] = t[edges[2 * k]];
        snprintf(nm, sizeof nm, "op%d", o);
        graph_add_op(g, nm, "relu", 1e-3, GP_FORWARD, in, n_in, &t[o], 1, NULL, 0, 0);
    }
    sw_err e;
    if (graph_finish(g, &e, NULL, NULL)) {
        printf("# %s\n", e.msg);
        graph_free(g);
        return NULL;
    }
    return g;
}

/* MXNet's order: 0 -> 3, 2 -> 3, 1 -> 4, 3 -> 4; the one output is op 4,
   whose inputs are visited in order (op 1, then op 3 and its inputs 0, 2),
   each op issued after its inputs: 1, 0, 2, 3, 4 (the profile's order is
   0..4 and a ready-set order issues 0 first) */
static void dfs_order(void)
{
    int e[8] = {0, 3, 2, 3, 1, 4, 3, 4};
    graph_profile *g = small_dag(5, e, 4);
    int32_t *o = g ? sa_dfs_order(g) : NULL;
    int32_t want[5] = {1, 0, 2, 3, 4};
    OK(o && !memcmp(o, want, sizeof want), "depth-first post-order from the output: 1 0 2 3 4 "
       "(got %d %d %d %d %d)", o ? o[0] : -1, o ? o[1] : -1, o ? o[2] : -1, o ? o[3] : -1,
       o ? o[4] : -1);
    sw_free(o);
    graph_free(g);
    graph_profile *rg = random_profile(7, 60, "momentum");
    o = sa_dfs_order(rg);
    OK(o && graph_is_topological(rg, o, NULL, NULL) == 1,
       "MXNet's order of a random 60-op training graph is topological");
    sw_free(o);
    graph_free(rg);
}

/* K random picks per pass: on three independent ops [0,1,2] with K = 1 the
   random pick lands on step 0, 1 or 2 (1/3 each), keeping the parent with
   probability 1/3, 1/2, 1: 11/18 in all; K = 0 keeps it always */
static void mutate_k(void)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 5);
    graph_profile *g = small_dag(3, NULL, 0);
    sa_sched_scratch *ss = sa_sched_scratch_new(g);
    int32_t par[3] = {0, 1, 2}, out[4];
    int draws = 40000, kept = 0;
    sa_schedule_mutate_k(g, ss, par, 0, r, out);
    OK(!memcmp(out, par, sizeof par), "K = 0: the parent's order");
    for (int i = 0; i < draws; i++) {
        sa_schedule_mutate_k(g, ss, par, 1, r, out);
        kept += !memcmp(out, par, sizeof par);
    }
    IS_NUM((double)kept / draws, 11.0 / 18, 0.01, "K = 1: the parent survives with 11/18");
    sa_sched_scratch_free(ss);
    graph_free(g);
    graph_profile *rg = random_profile(3, 60, "momentum");
    ss = sa_sched_scratch_new(rg);
    int32_t *o = sw_malloc(((size_t)rg->n_ops + 1) * sizeof *o);
    int valid = 1, moved = 0;
    for (int i = 0; i < 200; i++) {
        sa_schedule_mutate_k(rg, ss, rg->order, 1 + i % 20, r, o);
        valid &= graph_is_topological(rg, o, NULL, NULL) == 1;
        moved += memcmp(o, rg->order, (size_t)rg->n_ops * sizeof *o) != 0;
    }
    OK(valid, "K = 1..20 on a random graph: every child is topological");
    OK(moved > 100, "and most differ from the parent (%d of 200)", moved);
    sw_free(o);
    sa_sched_scratch_free(ss);
    graph_free(rg);
    gsl_rng_free(r);
}

/* the shuffle: on three independent ops it reaches the six orders alike;
   on a chain it never moves anything */
static void shuffle(void)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 8);
    graph_profile *g = small_dag(3, NULL, 0);
    int hits[9] = {0}, draws = 30000;
    for (int i = 0; i < draws; i++) {
        int32_t o[3] = {0, 1, 2};
        sa_schedule_shuffle(g, o, 100, r);
        hits[o[0] * 3 + o[1]]++; /* the first two name the order */
    }
    int ok = 1;
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++)
            if (a != b)
                ok &= fabs((double)hits[a * 3 + b] / draws - 1.0 / 6) < 0.01;
    OK(ok, "three independent ops: each of the six orders with probability 1/6 (%d %d %d %d %d "
       "%d)", hits[1], hits[2], hits[3], hits[5], hits[6], hits[7]);
    graph_free(g);
    int chain[4] = {0, 1, 1, 2};
    g = small_dag(3, chain, 2);
    int32_t o[3] = {0, 1, 2};
    sa_schedule_shuffle(g, o, 1000, r);
    OK(o[0] == 0 && o[1] == 1 && o[2] == 2, "a chain stays as it is");
    graph_free(g);
    graph_profile *rg = random_profile(4, 60, "momentum");
    int32_t *ro = sw_malloc(((size_t)rg->n_ops + 1) * sizeof *ro);
    memcpy(ro, rg->order, (size_t)rg->n_ops * sizeof *ro);
    sa_schedule_shuffle(rg, ro, 5000, r);
    OK(graph_is_topological(rg, ro, NULL, NULL) == 1, "a shuffled random graph stays topological");
    sw_free(ro);
    graph_free(rg);
    gsl_rng_free(r);
}

/* a toy chromosome: one double, fitness x + 1; individual i starts at i;
   children copy their parents and every mutation adds 1000, so a child is
   always worse than both its parents */
static void toy_init(void *u, void *w, gsl_rng *r, void *g, int index)
{
    (void)u, (void)w, (void)r;
    *(double *)g = index;
}

static void toy_cross(void *u, void *w, gsl_rng *r, const void *a, const void *b,
                      void *const c[4])
{
    (void)u, (void)w, (void)r;
    for (int k = 0; k < 4; k++)
        *(double *)c[k] = *(const double *)(k % 2 ? b : a);
}

static void toy_mutate(void *u, void *w, gsl_rng *r, void *g, double p)
{
    (void)u, (void)w, (void)r, (void)p;
    *(double *)g += 1000;
}

static double toy_eval(void *u, void *w, const void *g)
{
    (void)u, (void)w;
    return *(const double *)g + 1;
}

static const ga_ops toy_ops = {1, toy_init, toy_cross, toy_mutate, toy_eval, NULL, NULL};

/* after one generation of 32: how many parents (fitness < 1000) survive */
static int parents_left(ga_selection sel, ga_survivors sv, int elite, int *sorted_ok)
{
    ga_params p;
    ga_params_default(&p);
    p.population = 32;
    p.selection = sel;
    p.survivors = sv;
    p.elite = elite;
    p.temperature = 0.05;
    p.generations = 1;
    p.time_budget_s = 0;
    p.pin = 0;
    p.seed = 4;
    ga_ctx *ga = ga_new(&toy_ops, NULL, sizeof(double), &p);
    sw_err e;
    int n = 0, rc = ga ? ga_run(ga, &e) : -1;
    int seen[32] = {0};
    for (int i = 0; !rc && i < 32; i++) {
        double f;
        ga_individual(ga, i, &f);
        n += f < 1000;
        if (f < 1000 && f >= 1 && f <= 32)
            seen[(int)f - 1] = 1;
    }
    if (sorted_ok) { /* every parent still there, once */
        *sorted_ok = 1;
        for (int i = 0; i < 32; i++)
            *sorted_ok = *sorted_ok && seen[i];
    }
    ga_free(ga);
    return rc ? -1 : n;
}

static void survivors(void)
{
    int all_there = 0;
    IS_INT(parents_left(GA_SOFTMAX, GA_SURVIVE_CHILDREN, 0, NULL), 0,
           "survivors=children: no parent survives, though every child is worse");
    int soft = parents_left(GA_SOFTMAX, GA_SURVIVE_ALL, 0, NULL);
    OK(soft >= 30, "survivors=all, softmax at 0.05: the parents survive (%d of 32)", soft);
    int uni = parents_left(GA_UNIFORM, GA_SURVIVE_ALL, 0, NULL);
    OK(uni >= 3 && uni <= 20, "selection=uniform ignores fitness: about a third of the "
       "survivors are parents (%d of 32; 10.7 expected)", uni);
    int fam = parents_left(GA_UNIFORM, GA_SURVIVE_FAMILY, 2, &all_there);
    OK(fam == 32 && all_there, "survivors=family, elite 2: each pair's two parents take its "
       "two places (%d of 32, each once: %s)", fam, all_there ? "yes" : "no");
    int fam0 = parents_left(GA_UNIFORM, GA_SURVIVE_FAMILY, 0, NULL);
    OK(fam0 < 32, "and without elite, uniform draws in each family let children in (%d)", fam0);
}

/* every reading through the planner: a safe plan, the same for 1 and 2
   threads */
static void planner_readings(void)
{
    graph_profile *rg = random_profile(4, 40, "momentum");
    int64_t peak;
    sw_err e;
    planner_ideal_peak(rg, &peak, &e);
    const planner *pl = planner_find("swapadvisor");
    static const char *const rd[][2] = {
        {"survivors=children", NULL},           {"survivors=family", NULL},
        {"selection=uniform", NULL},            {"first_generation=framework", NULL},
        {"first_generation=dfs", NULL},         {"first_generation=shuffled", NULL},
        {"mutation_nodes=3", NULL},             {"search=allocation", "unsearched=dfs"}};
    for (size_t k = 0; k < SW_ARRAY_LEN(rd); k++) {
        sw_buf out[2];
        for (int th = 1; th <= 2; th++) {
            planner_opts o;
            planner_opts_init(&o, pl);
            o.memory_budget = peak * 6 / 10;
            o.threads = th;
            o.seed = 9;
            params_set_kv(&o.params, "generations=4", &e);
            params_set_kv(&o.params, "population=8", &e);
            params_set_kv(&o.params, "seed_default=false", &e);
            params_set_kv(&o.params, "schedule_mutation=dataflow", &e);
            int rc = params_set_kv(&o.params, rd[k][0], &e);
            if (!rc && rd[k][1])
                rc = params_set_kv(&o.params, rd[k][1], &e);
            plan *q = NULL;
            if (!rc)
                rc = planner_run(pl, rg, &o, &q, &e);
            OK(rc == 0, "swapadvisor %s plans with %d thread(s) (%s)", rd[k][0], th,
               rc ? e.msg : "ok");
            sw_buf_init(&out[th - 1]);
            if (q) {
                OK(plan_verify(q, NULL, &e) == 0, "its plan is safe");
                plan_to_json(q, &out[th - 1]);
                plan_free(q);
            }
            planner_opts_free(&o);
        }
        OK(out[0].len > 0 && out[0].len == out[1].len &&
               !memcmp(out[0].data, out[1].data, out[0].len),
           "identical plans for 1 and 2 threads (%s)", rd[k][0]);
        sw_buf_free(&out[0]);
        sw_buf_free(&out[1]);
    }
    graph_free(rg);
}

static const tap_test tests[] = {
    {"dfs_order", dfs_order},   {"mutate_k", mutate_k},
    {"shuffle", shuffle},       {"survivors", survivors},
    {"planner_readings", planner_readings},
};

int main(int argc, char **argv) { return tap_run(tests, SW_ARRAY_LEN(tests), argc, argv); }
