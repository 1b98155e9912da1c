/* test_alloc.c: running out of memory is handled (Lua's ltests style). A
   counting allocator, installed with sw_set_allocator, tracks every live
   byte the library holds and refuses chosen requests. Small end-to-end
   cases (generate a profile, write it, read a gzipped copy back; generate
   with the layer library; import each recorded format; plan with every
   registered planner, verify, simulate, trace, write the plan as JSON and
   parse it back) each run once without failures, then again with request
   N refused, for every N from 1 to the number the case makes, and with
   requests N and on refused for a sample of N. Each run must end with
   SW_ENOMEM and a one-line message, or succeed with the same results as the
   run without failures, and must give back every byte. The GA runs with
   one thread, so that request N is the same call in every run, and once
   with two, for the hook's thread safety. One named test per kind of case
   (tap_run; nothing_held last). ALLOC_CASE=NAME sweeps one case,
   ALLOC_FROM=N starts there, ALLOC_VERBOSE=1 says each N on stderr, and a
   breakpoint on alloc_refused stops where a request is refused. */
#include <pthread.h>
#include <stdalign.h>
#include <stddef.h>
#include <unistd.h>
#include <zlib.h>

#include "../profiles/calibrate.h"
#include "../planners/planner.h"
#include "../profiles/importers.h"
#include "../profiles/profile_io.h"
#include "../sim/plan_io.h"
#include "../sim/simulate.h"
#include "../sim/verify.h"
#include "tap.h"

/* ---- the counting, failing allocator ---- */

/* Every block carries its size in a header, since sw_free passes no old
   size. The mutex makes the hook safe for the GA's worker threads. */
typedef union blk_hdr {
    size_t size;
    max_align_t align; /* keeps the block after the header aligned */
} blk_hdr;

typedef struct counter {
    pthread_mutex_t mu;
    size_t live;     /* bytes held by the library now */
    size_t blocks;   /* blocks held now */
    size_t calls;    /* allocation requests (malloc and realloc) so far */
    size_t fail_at;  /* the first request to refuse (1-based; 0: none) */
    int fail_rest;   /* 1: refuse every request after fail_at too (memory stays short) */
    int failed;      /* 1 once fail_at was refused */
    int stage;       /* the run's stage now (ST_*) */
    int failed_stage;/* the stage fail_at was refused in */
} counter;

static counter cnt = {PTHREAD_MUTEX_INITIALIZER, 0, 0, 0, 0, 0, 0, 0, 0};

/* Called where an allocation is refused: a place for a debugger's
   breakpoint (ALLOC_FROM=N gdb -ex 'break alloc_refused' ...). */
static void __attribute__((noinline)) alloc_refused(void) { __asm__ volatile(""); }

static void *counting_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    counter *c = ud;
    (void)osize;
    blk_hdr *h = ptr ? (blk_hdr *)ptr - 1 : NULL;
    pthread_mutex_lock(&c->mu);
    if (nsize == 0) {
        if (h) {
            c->live -= h->size;
            c->blocks--;
        }
        pthread_mutex_unlock(&c->mu);
        free(h);
        return NULL;
    }
    if (++c->calls == c->fail_at || (c->fail_rest && c->failed)) {
        if (!c->failed)
            c->failed_stage = c->stage;
        c->failed = 1;
        pthread_mutex_unlock(&c->mu);
        alloc_refused();
        return NULL;
    }
    size_t old = h ? h->size : 0;
    blk_hdr *n = nsize > SIZE_MAX - sizeof *n ? NULL : realloc(h, sizeof *n + nsize);
    if (n) {
        c->live = c->live - old + nsize;
        c->blocks += h ? 0 : 1;
        n->size = nsize;
    }
    pthread_mutex_unlock(&c->mu);
    return n ? n + 1 : NULL;
}

static void counter_arm(size_t fail_at, int fail_rest)
{
    pthread_mutex_lock(&cnt.mu);
    cnt.calls = 0;
    cnt.fail_at = fail_at;
    cnt.fail_rest = fail_rest;
    cnt.failed = 0;
    pthread_mutex_unlock(&cnt.mu);
}

/* ---- the end-to-end run ---- */

/* Say which stage (ST_*) of the run comes next. */
static void at(int stage)
{
    pthread_mutex_lock(&cnt.mu);
    cnt.stage = stage;
    pthread_mutex_unlock(&cnt.mu);
}

enum { ST_GENERATE, ST_PROFILE_IO, ST_PEAK, ST_PLAN, ST_VERIFY, ST_SIMULATE, ST_TRACE,
       ST_PLAN_IO, ST_COUNT };
static const char *const stage_names[ST_COUNT] = {
    "generate or import a profile", "write a profile and read it back (gzip)", "ideal peak",
    "plan", "verify", "simulate", "write a trace", "write a plan and read it back"};

/* The planner cases: budgets as a fraction of the ideal peak, each below
   the peak (so the plans swap or recompute) except for the planners that
   keep everything resident; two budgets too tight to plan, for the refusal
   paths. */
static const struct {
    const char *planner;
    double frac;
    int refuses; /* 1: the planner says "does not fit" at this budget */
} cases[] = {{"ideal", 1.0, 0},  {"none", 2.0, 0},         {"odswap", 0.8, 0},
             {"tflms", 0.8, 0},  {"vdnn", 0.8, 0},         {"dtr", 0.8, 0},
             {"dtr-megengine", 0.8, 0}, {"swapadvisor", 0.8, 0}, {"random", 0.8, 0},
             {"dtr", 0.5, 1},    {"odswap", 0.4, 1}};

static char dir[256];
static int plan_threads = 1; /* the GA's worker threads */

/* Fold the plan's JSON (planning time zeroed) and its simulated figures
   into *digest. */
static int digest_plan(plan *p, const sim_result *r, uint64_t *digest, sw_err *e)
{
    p->planning_time_s = 0;
    sw_buf b;
    sw_buf_init(&b);
    plan_to_json(p, &b);
    if (b.oom) {
        sw_buf_free(&b);
        return sw_fail(e, SW_ENOMEM, "out of memory writing the plan");
    }
    *digest = sw_hash64(b.data, b.len, *digest);
    sw_buf_free(&b);
    double f[3] = {r->iteration_time_s, r->normalized_throughput, r->recompute_time_s};
    int64_t m[3] = {r->peak_memory_bytes, r->swap_in_bytes, r->swap_out_bytes};
    *digest = sw_hash64(f, sizeof f, *digest);
    *digest = sw_hash64(m, sizeof m, *digest);
    return 0;
}

/* Plan g with planner name at budget, then check and round-trip the plan. */
static int plan_one(const graph_profile *g, const char *name, int64_t budget, uint64_t *digest,
                    int *refused, sw_err *e)
{
    const planner *pl = planner_find(name);
    if (!pl)
        return sw_fail(e, SW_ENOTFOUND, "no planner %s", name);
    at(ST_PLAN);
    planner_opts o;
    if (planner_opts_init(&o, pl))
        return sw_fail(e, SW_ENOMEM, "out of memory");
    o.memory_budget = budget;
    o.seed = 7;
    o.threads = plan_threads;
    o.time_budget_s = 60;
    sw_err ignore;
    int rc = 0;
    if (strcmp(name, "swapadvisor") == 0) {
        rc = params_set(&o.params, "population", "2", &ignore);
        rc = rc ? rc : params_set(&o.params, "generations", "1", &ignore);
        rc = rc ? rc : params_set(&o.params, "pin", "false", &ignore);
        if (rc) {
            planner_opts_free(&o);
            return sw_fail(e, rc, "%s", ignore.msg);
        }
    }
    plan *p = NULL, *q = NULL;
    rc = planner_run(pl, g, &o, &p, e);
    planner_opts_free(&o);
    if (rc == SW_ENOFIT || rc == SW_EEXCEEDED) { /* a refusal is a result too */
        *digest = sw_hash64(&rc, sizeof rc, *digest);
        *refused = 1;
        return 0;
    }
    if (rc)
        return rc;
    sim_result r;
    char path[400];
    at(ST_VERIFY);
    if ((rc = plan_verify(p, NULL, e)))
        goto out;
    at(ST_SIMULATE);
    if ((rc = sim_plan(p, NULL, NULL, &r, e)))
        goto out;
    at(ST_TRACE);
    snprintf(path, sizeof path, "%s/trace.json", dir);
    if ((rc = sim_write_trace(p, NULL, path, e)))
        goto out;
    at(ST_PLAN_IO);
    if ((rc = digest_plan(p, &r, digest, e)))
        goto out;
    snprintf(path, sizeof path, "%s/plan.json", dir);
    if ((rc = plan_write_file(p, path, e)) || (rc = plan_read_file(path, &q, e)))
        goto out;
    if ((rc = plan_verify(q, NULL, e)))
        goto out;
    if ((rc = digest_plan(q, &r, digest, e)))
        goto out;
out:
    plan_free(p);
    plan_free(q);
    return rc;
}

/* The load case: generate a profile, write it, read a gzipped copy back,
   and find its ideal peak. On success *out is the profile. */
static int load(graph_profile **out, int64_t *peak, uint64_t *digest, sw_err *e)
{
    static const char *const kv[] = {"ops=10", "seed=6", "unit=1MiB"};
    graph_profile *g = NULL;
    *out = NULL;
    at(ST_GENERATE);
    int rc = cal_generate("random", kv, 3, "v100", &g, e);
    if (rc)
        return rc;
    at(ST_PROFILE_IO);
    char path[400];
    snprintf(path, sizeof path, "%s/profile.json", dir);
    rc = profile_write_file(g, path, e);
    graph_free(g);
    g = NULL;
    if (rc)
        return rc;
    /* read back a gzipped copy, so the decoder's allocations count too */
    char *text = NULL;
    size_t len = 0;
    if ((rc = sw_read_file(path, &text, &len, e)))
        return rc;
    snprintf(path, sizeof path, "%s/profile.json.gz", dir);
    gzFile z = gzopen(path, "wb");
    int zok = z && gzwrite(z, text, (unsigned)len) == (int)len;
    zok = (z && gzclose(z) == Z_OK) && zok;
    sw_free(text);
    if (!zok)
        return sw_fail(e, SW_EIO, "%s: cannot write", path);
    if ((rc = profile_read_file(path, &g, e)))
        return rc;
    at(ST_PEAK);
    if ((rc = planner_ideal_peak(g, peak, e))) {
        graph_free(g);
        return rc;
    }
    sw_buf b;
    sw_buf_init(&b);
    profile_to_json(g, &b, 0);
    if (b.oom) {
        sw_buf_free(&b);
        graph_free(g);
        return sw_fail(e, SW_ENOMEM, "out of memory writing the profile");
    }
    *digest = sw_hash64(b.data, b.len, *digest);
    *digest = sw_hash64(peak, sizeof *peak, *digest);
    sw_buf_free(&b);
    *out = g;
    return 0;
}

/* The cases: load, then each planner on the loaded profile. Sweeping each
   on its own keeps the test quick: a failure in one planner does not rerun
   the others. */
static graph_profile *prof; /* the loaded profile, for the planner cases */
static int64_t prof_peak;

/* A case: one run from a fresh start, its results folded into *digest;
   *refused set where a planner said "does not fit". */
typedef int (*case_fn)(const void *arg, uint64_t *digest, int *refused, sw_err *e);

static int load_case(const void *arg, uint64_t *digest, int *refused, sw_err *e)
{
    (void)arg;
    (void)refused;
    graph_profile *g = NULL;
    int64_t peak = 0;
    int rc = load(&g, &peak, digest, e);
    graph_free(g);
    return rc;
}

static int plan_case(const void *arg, uint64_t *digest, int *refused, sw_err *e)
{
    size_t i = *(const size_t *)arg;
    int64_t budget = (int64_t)((double)prof_peak * cases[i].frac);
    int rc = plan_one(prof, cases[i].planner, budget, digest, refused, e);
    if (rc)
        sw_err_prefix(e, "%s: ", cases[i].planner);
    return rc;
}

/* A DTR log in the authors' format (test_import_dtr.c's hand-made one),
   written to the scratch directory at the start. */
#define L(...) "{" __VA_ARGS__ "}\n"
#define DTR_CONST(n, m) L("\"INSTRUCTION\":\"CONSTANT\",\"NAME\":\"" n "\"") DTR_MEM(n, m)
#define DTR_MEM(n, m) L("\"INSTRUCTION\":\"MEMORY\",\"NAME\":\"" n "\",\"MEMORY\":\"" m "\"")
#define DTR_ALIAS(n, a) L("\"INSTRUCTION\":\"ALIAS\",\"NAME\":\"" n "\",\"ALIAS\":\"" a "\"")
#define DTR_CALL(op, args, r, t)                                                                   \
    L("\"INSTRUCTION\":\"CALL\",\"NAME\":\"" op "\",\"ARGS\":[" args "],\"RESULT\":[\"" r      \
      "\"],\"TIME\":\"" t "\"")
#define DTR_REL(n) L("\"INSTRUCTION\":\"RELEASE\",\"NAME\":\"" n "\"")
static const char dtr_log_text[] =
    L("\"INSTRUCTION\":\"ANNOTATE\",\"ANNOTATION\":\"START\"")
    DTR_CONST("w", "100") DTR_CONST("x", "1000")
    DTR_CALL("mm", "\"x\",\"w\"", "a", "2000") DTR_MEM("a", "4000") DTR_ALIAS("a", "-1")
    DTR_CALL("view", "\"a\"", "v", "10") DTR_MEM("v", "4000") DTR_ALIAS("v", "0")
    L("\"INSTRUCTION\":\"MUTATE\",\"NAME\":\"relu_\",\"ARGS\":[\"v\"],\"MUTATE\":[\"0\"],"
      "\"TIME\":\"500\"")
    L("\"INSTRUCTION\":\"COPY\",\"DST\":\"k\",\"SRC\":\"a\"") DTR_REL("a")
    DTR_CALL("sum", "\"v\"", "s", "300") DTR_MEM("s", "8") DTR_ALIAS("s", "-1")
    DTR_REL("v")
    L("\"INSTRUCTION\":\"ANNOTATE\",\"ANNOTATION\":\"BACKWARD\"")
    DTR_CALL("mm_backward", "\"s\",\"x\"", "g", "4000") DTR_MEM("g", "100") DTR_ALIAS("g", "-1")
    DTR_REL("s") DTR_CONST("c", "50");
static char dtr_log[300]; /* its path */

/* More sources of profiles: generators built on the layer library (nn.c,
   the cost model, autograd with optimizer state) and the importers, on the
   fuzzers' small seed files. */
static const struct source {
    const char *what;   /* a model name, or "import" */
    const char *name;   /* the importer, for "import" */
    const char *file;   /* the importer's input */
    const char *kv[6];  /* options */
    int nkv;
} sources[] = {
    {"resnet", NULL, NULL, {"depth=8", "batch=2", "optimizer=adam"}, 3},
    {"rnn", NULL, NULL, {"layers=1", "hidden=64", "seq=3", "vocab=16", "batch=2"}, 5},
    {"transformer", NULL, NULL, {"layers=1", "hidden=32", "heads=2", "seq=8", "batch=2",
                                 "optimizer=momentum"}, 6},
    {"import", "dtr", dtr_log, {"mutate=copy"}, 1},
    {"import", "pipedream", "fuzz/corpus/pipedream/alexnet.txt", {NULL}, 0},
    {"import", "pytorch", "fuzz/corpus/pytorch/linear-et-head.json", {"partial=true"}, 1},
};

static int source_case(const void *arg, uint64_t *digest, int *refused, sw_err *e)
{
    const struct source *src = arg;
    (void)refused;
    graph_profile *g = NULL;
    int rc;
    at(ST_GENERATE);
    if (strcmp(src->what, "import") == 0) {
        const importer *im = importer_find(src->name);
        if (!im)
            return sw_fail(e, SW_ENOTFOUND, "no importer %s", src->name);
        param_set ps;
        if (params_init(&ps, im->params))
            return sw_fail(e, SW_ENOMEM, "out of memory");
        rc = 0;
        for (int i = 0; i < src->nkv && !rc; i++)
            rc = params_set_kv(&ps, src->kv[i], e);
        if (!rc)
            rc = im->import(&src->file, 1, &ps, dev_find("v100"), &g, e);
        params_free(&ps);
    } else {
        rc = cal_generate(src->what, src->kv, src->nkv, "v100", &g, e);
    }
    if (rc)
        return rc;
    sw_buf b;
    sw_buf_init(&b);
    profile_to_json(g, &b, 0);
    graph_free(g);
    if (b.oom) {
        sw_buf_free(&b);
        return sw_fail(e, SW_ENOMEM, "out of memory writing the profile");
    }
    *digest = sw_hash64(b.data, b.len, *digest);
    sw_buf_free(&b);
    return 0;
}

/* How allocation requests are refused in a sweep. */
typedef struct sweep_mode {
    const char *name;
    int fail_rest; /* 0: only request N; 1: N and every one after it */
    size_t stride; /* try N = 1, 1 + stride, ... (1: every N) */
    int threads;   /* the GA's worker threads */
} sweep_mode;

/* Every N with one request refused; a sample of N with memory short from N
   on (each run stops soon after N, but reruns everything before it). */
static const sweep_mode modes[] = {{"refusing allocation N", 0, 1, 1},
                                   {"refusing allocations N and on", 1, 3, 1}};

/* Run case fn(arg) once without failures, then once with allocation
   requests refused from each N in turn; print TAP lines named cname.
   refuses: whether a planner case refuses its budget (-1: not a planner). */
static void sweep(case_fn fn, const void *arg, const char *cname, int refuses,
                  const sweep_mode *m)
{
    int verbose = getenv("ALLOC_VERBOSE") != NULL;
    size_t maxshown = verbose ? SIZE_MAX : 5;
    plan_threads = m->threads;
    uint64_t want = 0;
    sw_err e;
    e.msg[0] = 0;
    size_t live0 = cnt.live;
    counter_arm(0, 0);
    int refused = 0;
    int rc = fn(arg, &want, &refused, &e);
    size_t total = cnt.calls;
    IS_INT(rc, 0, "%s: the run without failures succeeds (%s)", cname, rc ? e.msg : "ok");
    if (refuses >= 0)
        IS_INT(refused, refuses, "%s: %s", cname, refuses ? "the budget is refused" : "a plan");
    IS_INT(cnt.live - live0, 0, "%s: it makes %zu allocation requests and gives back every byte",
           cname, total);
    if (rc || total == 0)
        return;
    size_t bad_status = 0, leaks = 0, wrong_result = 0, not_reached = 0, tried = 0, shown = 0;
    double t0 = sw_now();
    const char *from = getenv("ALLOC_FROM"); /* debugging: start at this failure point */
    for (size_t n = from ? (size_t)atol(from) : 1; n <= total; n += m->stride) {
        uint64_t got = 0;
        e.code = 0;
        e.msg[0] = 0;
        counter_arm(n, m->fail_rest);
        if (verbose)
            fprintf(stderr, "# %s, %s: N = %zu\n", cname, m->name, n);
        rc = fn(arg, &got, &refused, &e);
        int failed = cnt.failed, stage = cnt.failed_stage;
        size_t live = cnt.live - live0, blocks = cnt.blocks;
        counter_arm(0, 0);
        tried++;
        if (!failed) {
            not_reached++;
            continue;
        }
        int clean = rc == 0 ? got == want : rc == SW_ENOMEM && e.msg[0] && !strchr(e.msg, '\n');
        if (!clean) {
            if (rc == 0)
                wrong_result++;
            else
                bad_status++;
            if (shown++ < maxshown)
                printf("# %s, %s: N = %zu, in '%s': %s %d (%s) '%s'\n", cname, m->name, n,
                       stage_names[stage], rc ? "status" : "the results differ; status", rc,
                       sw_strerror(rc), rc ? e.msg : "");
        }
        if (live) {
            leaks++;
            if (shown++ < maxshown)
                printf("# %s, %s: N = %zu, in '%s': %zu bytes leaked (%zu blocks held)\n", cname,
                       m->name, n, stage_names[stage], live, blocks);
            cnt.live = live0; /* the next run starts from the same level */
        }
    }
    IS_INT(bad_status, 0, "%s, %s, for %zu values of N: SW_ENOMEM with a one-line message, or "
           "the same results", cname, m->name, tried);
    IS_INT(leaks, 0, "%s, %s: no bytes leaked", cname, m->name);
    IS_INT(wrong_result, 0, "%s, %s: a run that survives gives the same results", cname, m->name);
    if (m->threads == 1)
        IS_INT(not_reached, 0, "%s, %s: each run reaches request N", cname, m->name);
    else /* how far each worker's scratch buffers grow depends on what it evaluated */
        tap_skip(1, "with worker threads the number of requests varies from run to run");
    plan_threads = 1;
    printf("# %s, %s: %zu runs in %.2f s\n", cname, m->name, tried, sw_now() - t0);
}

static const char *only; /* ALLOC_CASE (debugging): sweep only this case */

static void load_sweep(void)
{
    for (size_t m = 0; m < SW_ARRAY_LEN(modes); m++)
        if (!only || !strcmp(only, "load"))
            sweep(load_case, NULL, "load", -1, &modes[m]);
}

static void sources_sweep(void)
{
    for (size_t i = 0; i < SW_ARRAY_LEN(sources); i++) {
        const char *sname = sources[i].name ? sources[i].name : sources[i].what;
        char cname[64];
        snprintf(cname, sizeof cname, "%s %s", sources[i].name ? "import" : "generate", sname);
        for (size_t m = 0; m < SW_ARRAY_LEN(modes); m++)
            if (!only || !strcmp(only, sname))
                sweep(source_case, &sources[i], cname, -1, &modes[m]);
    }
}

/* the planner cases run on prof, loaded once (without failures) */
static int need_prof(void)
{
    if (prof)
        return 0;
    uint64_t d = 1;
    sw_err e;
    int rc = load(&prof, &prof_peak, &d, &e);
    IS_INT(rc, 0, "the profile for the planners loads (%s)", rc ? e.msg : "ok");
    return rc;
}

static void planners_sweep(void)
{
    int rc = need_prof();
    for (size_t i = 0; i < SW_ARRAY_LEN(cases) && !rc; i++) {
        char cname[64];
        snprintf(cname, sizeof cname, "%s at %.1fx", cases[i].planner, cases[i].frac);
        for (size_t m = 0; m < SW_ARRAY_LEN(modes); m++)
            if (!only || !strcmp(only, cases[i].planner))
                sweep(plan_case, &i, cname, cases[i].refuses, &modes[m]);
    }
}

/* The hook serialises with a mutex, so the GA's worker threads may allocate
   at once. With 2 threads the order of requests varies from run to run, so
   the sweep samples N; whichever request is refused, the outcome must still
   be clean. */
static void threaded_sweep(void)
{
    static const sweep_mode threaded = {"2 threads, refusing allocation N", 0, 5, 2};
    int rc = need_prof();
    for (size_t i = 0; i < SW_ARRAY_LEN(cases) && !rc; i++)
        if (!strcmp(cases[i].planner, "swapadvisor") && (!only || !strcmp(only, "swapadvisor")))
            sweep(plan_case, &i, "swapadvisor at 0.8x", 0, &threaded);
}

/* last: after the others, nothing allocated through the hook is still held */
static void nothing_held(void)
{
    graph_free(prof);
    prof = NULL;
    IS_INT(cnt.live, 0, "every byte is given back at the end (%zu blocks held)", cnt.blocks);
}

static const tap_test tests[] = {
    {"load_sweep", load_sweep},
    {"sources_sweep", sources_sweep},
    {"planners_sweep", planners_sweep},
    {"threaded_sweep", threaded_sweep},
    {"nothing_held", nothing_held},
};

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0); /* diagnostics survive a crash */
    sw_set_allocator(counting_alloc, &cnt);
    snprintf(dir, sizeof dir, "/tmp/swapsim-alloc-%d", (int)getpid());
    char cmd[600];
    snprintf(cmd, sizeof cmd, "mkdir -p %s", dir);
    if (system(cmd) != 0)
        tap_skip_all("cannot make a scratch directory");
    snprintf(dtr_log, sizeof dtr_log, "%s/hand.log", dir);
    FILE *f = fopen(dtr_log, "w");
    if (!f || fputs(dtr_log_text, f) < 0 || fclose(f) != 0)
        tap_skip_all("cannot write a DTR log in the scratch directory");
    only = getenv("ALLOC_CASE");
    double t0 = sw_now();
    int rc = tap_run(tests, SW_ARRAY_LEN(tests), argc, argv);
    graph_free(prof);
    printf("# %.1f s in all\n", sw_now() - t0);
    sw_set_allocator(NULL, NULL);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "# could not remove %s\n", dir);
    return rc;
}
