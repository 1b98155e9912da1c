/* dtr_parity.c: swapsim's `dtr` planner beside the DTR authors' simulator
   (simrd) on the shared DTR logs: same budgets (floor(ratio x the ideal
   peak)), same heuristics, same give-up rule (rematerialisation beyond 1x
   the compute); overhead = the simulated iteration time of the recorded plan
   divided by the log's total compute. simrd's figures are the ones of the
   issue (simrd at commit eff53cc, run as in its paper's driver). */
#include "dtr_parity.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../planners/planner.h"
#include "../profiles/importers.h"
#include "../sim/simulate.h"
#include "../sim/verify.h"

#define R_OOM (-2.0)
#define R_EXCEEDED (-1.0)
#define R_NONE 0.0

typedef struct parity_log {
    const char *prefix, *label;
    int n;
    double ratio[5];
    double dtr[5], eq[5], lru[5]; /* overhead, R_OOM, R_EXCEEDED or R_NONE (not run) */
} parity_log;

#define X R_EXCEEDED
#define O R_OOM
static const parity_log logs[] = {
    {"resnet32-", "ResNet-32 (56)", 5, {0.2, 0.3, 0.4, 0.5, 0.7},
     {1.371, 1.178, 1.140, 1.107, 1.046}, {1.332, 1.179, 1.140, 1.107, 1.046},
     {X, X, X, X, 1.095}},
    {"tv_densenet121-", "DenseNet-121 (84)", 5, {0.2, 0.3, 0.4, 0.5, 0.7},
     {1.679, 1.446, 1.271, 1.176, 1.104}, {1.616, 1.426, 1.293, 1.176, 1.104},
     {X, X, X, X, 1.096}},
    {"transformer-", "Transformer (10)", 5, {0.2, 0.3, 0.4, 0.5, 0.7},
     {1.352, 1.123, 1.083, 1.058, 1.031}, {1.545, 1.124, 1.091, 1.058, 1.031},
     {X, X, X, X, 1.098}},
    {"unet-", "U-Net (6)", 4, {0.3, 0.4, 0.5, 0.7}, {O, O, 1.159, 1.085}, {O, O, 1.159, 1.085},
     {X, O, X, 1.104}},
    {"lstm-", "LSTM (hidden 1700)", 5, {0.2, 0.3, 0.4, 0.5, 0.7},
     {1.598, 1.301, 1.143, 1.065, 1.032}, {1.550, 1.365, 1.159, 1.071, 1.031},
     {R_NONE, R_NONE, R_NONE, R_NONE, R_NONE}},
};
#undef X
#undef O

static const char *const heur[3] = {"dtr", "dtr-eq", "lru"};
static const char *const heur_label[3] = {"DTR", "EQ", "LRU"};

static const char *verdict_of(double v)
{
    return v == R_OOM ? "OOM" : v == R_EXCEEDED ? "exceeded" : v == R_NONE ? "-" : "ok";
}

static void fmt_cell(double v, char *buf, size_t n)
{
    if (v == R_OOM)
        snprintf(buf, n, "OOM");
    else if (v == R_EXCEEDED)
        snprintf(buf, n, ">2x");
    else if (v == R_NONE)
        snprintf(buf, n, "(not run)");
    else
        snprintf(buf, n, "%.3f", v);
}

/* The log file in dir whose name starts with prefix: 0 with *out its path
   (caller frees) or NULL where there is none, or SW_ENOMEM. */
static int find_log(const char *dir, const char *prefix, char **out)
{
    *out = NULL;
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int rc = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        size_t n = strlen(de->d_name);
        if (!strncmp(de->d_name, prefix, strlen(prefix)) && n > 4 &&
            !strcmp(de->d_name + n - 4, ".log")) {
            sw_buf b;
            sw_buf_init(&b);
            sw_buf_printf(&b, "%s/%s", dir, de->d_name);
            *out = b.oom ? NULL : sw_strdup(b.data);
            rc = *out ? 0 : SW_ENOMEM;
            sw_buf_free(&b);
            break;
        }
    }
    closedir(d);
    return rc;
}

/* One cell: our verdict (R_OOM/R_EXCEEDED) or overhead, plus details. */
typedef struct cell {
    double ours, engine;
    int64_t budget, evictions, frag, remats, arena;
    double seconds;
    char note[160];
} cell;

static int run_cell(const graph_profile *g, int64_t budget, const char *h, const char *budget_on,
                    const parity_opts *o, cell *c, sw_err *err)
{
    const planner *pl = planner_find("dtr");
    planner_opts po;
    memset(c, 0, sizeof *c);
    c->budget = budget;
    if (!pl || planner_opts_init(&po, pl))
        return sw_fail(err, SW_ENOMEM, "out of memory");
    po.memory_budget = budget;
    int rc = params_set(&po.params, "heuristic", h, err);
    for (int i = 0; i < o->nsets && !rc; i++)
        rc = params_set_kv(&po.params, o->sets[i], err);
    if (!rc)
        rc = params_set(&po.params, "budget_on", budget_on, err);
    if (rc) {
        planner_opts_free(&po);
        return rc;
    }
    double t0 = sw_now();
    plan *p = NULL;
    sw_err e;
    rc = planner_run(pl, g, &po, &p, &e);
    planner_opts_free(&po);
    if (rc == SW_ENOFIT || rc == SW_EEXCEEDED) {
        c->ours = rc == SW_ENOFIT ? R_OOM : R_EXCEEDED;
        c->seconds = sw_now() - t0;
        snprintf(c->note, sizeof c->note, "%.150s", e.msg);
        return 0;
    }
    if (rc) {
        *err = e;
        return rc;
    }
    if (o->verify && (rc = plan_verify(p, NULL, &e)) != 0) {
        plan_free(p);
        return sw_fail(err, SW_EUNSAFE, "dtr plan for %s fails verification: %s", g->name, e.msg);
    }
    sim_result r;
    rc = sim_plan(p, NULL, NULL, &r, &e);
    c->seconds = sw_now() - t0;
    if (rc) {
        plan_free(p);
        *err = e;
        return rc;
    }
    c->ours = r.iteration_time_s / g->total_compute_s;
    /* the engine's own count (simrd's clock / compute) is in the notes */
    const char *ov = p->notes ? strstr(p->notes, "overhead ") : NULL;
    c->engine = ov ? atof(ov + 9) : 0;
    c->remats = r.reruns;
    c->evictions = r.drops;
    const char *fr = p->notes ? strstr(p->notes, "evictions (") : NULL;
    c->frag = fr ? atoll(fr + 11) : 0;
    c->arena = p->capacity;
    plan_free(p);
    return 0;
}

/* The comparison of one cell's two runs (budget on bytes: c, on the arena: c2)
   with simrd's figure sref. */
typedef struct cell_cmp {
    const char *sv, *ov, *av; /* verdicts: simrd's, ours on bytes, ours on the arena */
    double diff, diff2;       /* relative overhead differences from simrd */
    int match, match2;        /* same verdict, overhead within 3% */
} cell_cmp;

static void compare_cell(double sref, const cell *c, const cell *c2, int64_t budget,
                         cell_cmp *k, parity_summary *sum)
{
    memset(k, 0, sizeof *k);
    k->sv = verdict_of(sref);
    k->ov = verdict_of(c->ours);
    k->av = verdict_of(c2->ours);
    if (sref != R_NONE) {
        sum->cells++;
        if (!strcmp(k->sv, k->ov)) {
            sum->verdicts_ok++;
            if (!strcmp(k->sv, "ok")) {
                k->diff = (c->ours - sref) / sref;
                if (fabs(k->diff) > sum->max_diff)
                    sum->max_diff = fabs(k->diff);
                k->match = fabs(k->diff) <= 0.03;
            } else {
                k->match = 1;
            }
        }
        sum->matches += k->match;
        if (!strcmp(k->sv, k->av)) {
            sum->arena_verdicts_ok++;
            if (!strcmp(k->sv, "ok"))
                k->diff2 = (c2->ours - sref) / sref;
            k->match2 = fabs(k->diff2) <= 0.03;
        }
        sum->arena_matches += k->match2;
    }
    if (c->ours > 0 && budget > 0) {
        double over = (double)c->arena / (double)budget - 1;
        if (over > sum->max_arena_over)
            sum->max_arena_over = over;
    }
}

/* One cell's row of the Markdown table and line of the CSV. */
static void write_cell(const parity_log *L, int hi, double ratio, int64_t budget, double sref,
                       const cell *c, const cell *c2, const cell_cmp *k, sw_buf *csv, sw_buf *md)
{
    char a[32], b[32], d[32], ar[32], b2[64];
    fmt_cell(sref, a, sizeof a);
    fmt_cell(c->ours, b, sizeof b);
    fmt_cell(c2->ours, b2, sizeof b2);
    if (sref > 0 && c2->ours > 0)
        snprintf(b2 + strlen(b2), sizeof b2 - strlen(b2), " (%+.1f%%)", 100 * k->diff2);
    if (sref > 0 && c->ours > 0)
        snprintf(d, sizeof d, "%+.1f%%", 100 * k->diff);
    else
        snprintf(d, sizeof d, "-");
    if (c->ours > 0)
        snprintf(ar, sizeof ar, "%+.1f%%", 100 * ((double)c->arena / (double)budget - 1));
    else
        snprintf(ar, sizeof ar, "-");
    char fe[32] = "-";
    if (c2->ours > 0)
        snprintf(fe, sizeof fe, "%lld", (long long)c2->frag);
    sw_buf_printf(md, "| %s | %.1f | %s | %s | %s | %s | %s | %s | %s | %s |\n", L->label, ratio,
                  heur_label[hi], a, b, d,
                  sref == R_NONE ? "(no reference)" : k->match ? "yes" : "**no**", ar, b2, fe);
    sw_buf_printf(csv, "%s,%.1f,%s,%lld,%s,", L->prefix, ratio, heur[hi], (long long)budget,
                  k->sv);
    if (sref > 0)
        sw_buf_printf(csv, "%.4f", sref);
    sw_buf_printf(csv, ",%s,", k->ov);
    if (c->ours > 0)
        sw_buf_printf(csv, "%.6f", c->ours);
    sw_buf_putc(csv, ',');
    if (c->ours > 0)
        sw_buf_printf(csv, "%.6f", c->engine);
    sw_buf_printf(csv, ",%.3f,%s,%lld,%lld,%lld,%.4f,%s,", 100 * k->diff,
                  sref == R_NONE ? "" : k->match ? "yes" : "no", (long long)c->remats,
                  (long long)c->evictions, (long long)(c->ours > 0 ? c->arena : 0), c->seconds,
                  k->av);
    if (c2->ours > 0)
        sw_buf_printf(csv, "%.6f", c2->ours);
    sw_buf_printf(csv, ",%.3f,%s,%lld,%.4f\n", 100 * k->diff2,
                  sref == R_NONE ? "" : k->match2 ? "yes" : "no", (long long)c2->frag,
                  c2->seconds);
}

/* Every cell of log L (its profile g, ideal peak peak): each heuristic at
   each budget ratio, run twice (budget on bytes, on the arena). */
static int parity_log_cells(const parity_log *L, graph_profile *g, int64_t peak,
                            const parity_opts *o, sw_buf *csv, sw_buf *md, parity_summary *sum,
                            sw_err *err)
{
    for (int hi = 0; hi < 3; hi++)
        for (int ri = 0; ri < L->n; ri++) {
            double ratio = L->ratio[ri];
            const double *ref = hi == 0 ? L->dtr : hi == 1 ? L->eq : L->lru;
            double sref = ref[ri];
            int64_t budget = (int64_t)floor(ratio * (double)peak);
            cell c, c2;
            int rc = run_cell(g, budget, heur[hi], "bytes", o, &c, err);
            if (!rc)
                rc = run_cell(g, budget, heur[hi], "arena", o, &c2, err);
            if (rc)
                return rc;
            cell_cmp k;
            compare_cell(sref, &c, &c2, budget, &k, sum);
            write_cell(L, hi, ratio, budget, sref, &c, &c2, &k, csv, md);
        }
    return 0;
}

/* The CSV header and the Markdown document's introduction and table head. */
static void parity_heads(sw_buf *csv, sw_buf *md)
{
    sw_buf_puts(csv, "log,ratio,heuristic,budget_bytes,simrd_verdict,simrd_overhead,"
                     "swapsim_verdict,swapsim_overhead,engine_overhead,diff_pct,match,"
                     "reruns,drops,arena_bytes,seconds,"
                     "arena_verdict,arena_overhead,arena_diff_pct,arena_match,"
                     "fragmentation_evictions,arena_seconds\n");
    sw_buf_puts(md, "# swapsim's dtr beside the DTR authors' simulator (simrd)\n\n"
                    "Generated by `swapsim dtr-parity` (docs/cli.md). simrd: the DTR paper's "
                    "simulator, figures from issue 5. swapsim: `dtr` with `budget_on=bytes` "
                    "(simrd's budget: bytes of resident tensors); overhead = simulated "
                    "iteration time of the verified plan / total compute; >2x = gave up "
                    "(rematerialisation beyond 1x the compute), OOM = nothing left to evict. "
                    "arena needed: how much larger than the budget the address arena holding "
                    "those decisions is (fragmentation). Last columns: the same runs with the "
                    "arena limited to the budget (`budget_on=arena`, the default), and the "
                    "evictions fragmentation forced.\n\n");
    sw_buf_puts(md, "| log | ratio | heuristic | simrd | swapsim | diff | match | arena needed | "
                    "swapsim, arena = budget | frag. evictions |\n"
                    "|---|---|---|---|---|---|---|---|---|---|\n");
}

/* Log L (its file at path, owned and freed here): imported, its statistics
   noted, its cells run. */
static int parity_log_run(const importer *im, const parity_log *L, char *path,
                          const parity_opts *o, sw_buf *csv, sw_buf *md, sw_buf *notes,
                          parity_summary *sum, sw_err *err)
{
    param_set ps;
    graph_profile *g = NULL;
    int rc = params_init(&ps, im->params);
    if (!rc)
        rc = im->import((const char *const *)&path, 1, &ps, dev_find("titanv"), &g, err);
    params_free(&ps);
    sw_free(path);
    if (rc)
        return rc;
    graph_stats gs;
    if ((rc = graph_compute_stats(g, &gs)) != 0) {
        graph_free(g);
        return sw_fail(err, rc, "out of memory");
    }
    sw_buf_printf(notes, "- %s: ideal peak %lld bytes, compute %.3f ms, %d ops\n", L->label,
                  (long long)gs.peak_memory_bytes, g->total_compute_s * 1e3, g->n_ops);
    rc = parity_log_cells(L, g, gs.peak_memory_bytes, o, csv, md, sum, err);
    graph_free(g);
    return rc;
}

int parity_run(const parity_opts *o, sw_buf *csv, sw_buf *md, parity_summary *sum, sw_err *err)
{
    memset(sum, 0, sizeof *sum);
    double t0 = sw_now();
    const importer *im = importer_find("dtr");
    if (!im)
        return sw_fail(err, SW_EINVAL, "the dtr importer is not registered");
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/dtr-logs", o->data);
    parity_heads(csv, md);
    int found = 0;
    sw_buf notes;
    sw_buf_init(&notes);
    for (size_t li = 0; li < SW_ARRAY_LEN(logs); li++) {
        const parity_log *L = &logs[li];
        if (o->only && !strstr(L->prefix, o->only) && !strstr(L->label, o->only))
            continue;
        char *path = NULL;
        if (find_log(dir, L->prefix, &path)) {
            sw_buf_free(&notes);
            return sw_fail(err, SW_ENOMEM, "out of memory");
        }
        if (!path) {
            sw_buf_printf(&notes, "- %s: no %s*.log in %s (skipped)\n", L->label, L->prefix, dir);
            continue;
        }
        found++;
        int rc = parity_log_run(im, L, path, o, csv, md, &notes, sum, err);
        if (rc) {
            sw_buf_free(&notes);
            return rc;
        }
    }
    sum->seconds = sw_now() - t0;
    sw_buf_printf(md, "\nBudget on bytes (as simrd and the DTR prototype count it): %d of %d "
                  "cells match simrd (same verdict, and overhead within 3%% when both run); %d "
                  "of %d verdicts agree; largest overhead difference %.2f%%. Placing those "
                  "decisions needs an arena up to %.1f%% larger than the budget (the allocator "
                  "fragments). With the arena itself limited to the budget (evicting more when "
                  "no block fits): %d of %d cells match, %d verdicts agree.\n\n",
                  sum->matches, sum->cells, sum->verdicts_ok, sum->cells, 100 * sum->max_diff,
                  100 * sum->max_arena_over, sum->arena_matches, sum->cells,
                  sum->arena_verdicts_ok);
    if (notes.len)
        sw_buf_puts(md, notes.data);
    sw_buf_free(&notes);
    if (!found)
        return sw_fail(err, SW_EIO, "%s: no DTR logs found", dir);
    return 0;
}
