/* sweep.c: planners x budgets of one profile, --fit bisections and the
   largest batch (see sweep.h); the evaluator of this process; CSV, JSON and
   the table. */
#include "sweep.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../sim/bound.h"
#include "../planners/planner.h"
#include "../profiles/models.h"
#include "../profiles/profile_io.h"
#include "../sim/simulate.h"
#include "../sim/verify.h"

/* ---- setup ---- */

static int add_planner(sweep *s, const char *name, sw_err *err)
{
    for (int i = 0; i < s->npl; i++)
        if (!strcmp(s->planners[i], name))
            return 0; /* named twice: once */
    if (s->npl >= SWEEP_MAX_PLANNERS)
        return sw_fail(err, SW_EINVAL, "--planner: more than %d planners", SWEEP_MAX_PLANNERS);
    s->planners[s->npl++] = name;
    return 0;
}

static int setup_planners(sweep *s, const char *list, sw_err *err)
{
    if (!list || !strcmp(list, "all")) {
        sw_buf b;
        sw_buf_init(&b);
        for (size_t i = 0; i < planner_count(); i++) {
            const planner *p = planner_at(i);
            const char *why = NULL;
            if (p->flags & PLANNER_UNBOUNDED)
                why = "the reference: 1 by definition";
            else if (!strcmp(p->name, "random"))
                why = "a test planner";
            else if (p->flags & PLANNER_SIZE_LIMIT)
                why = "an exact solver for small profiles: name it to run it";
            if (why) {
                sw_buf_printf(&b, "%s%s (%s)", b.len ? "; " : "", p->name, why);
                continue;
            }
            int rc = add_planner(s, p->name, err);
            if (rc) {
                sw_buf_free(&b);
                return rc;
            }
        }
        snprintf(s->skipped, sizeof s->skipped, "%s", b.data ? b.data : "");
        sw_buf_free(&b);
        return 0;
    }
    const char *p = list;
    while (*p) {
        size_t n = strcspn(p, ",");
        char name[64];
        if (n == 0 || n >= sizeof name)
            return sw_fail(err, SW_EINVAL, "--planner %s: expected names separated by commas, "
                           "or all", list);
        memcpy(name, p, n);
        name[n] = 0;
        const planner *pl = planner_find(name);
        if (!pl) {
            sw_buf b;
            sw_buf_init(&b);
            for (size_t i = 0; i < planner_count(); i++)
                sw_buf_printf(&b, "%s%s", i ? ", " : "", planner_at(i)->name);
            int rc = sw_fail(err, SW_ENOTFOUND, "--planner: unknown planner '%s' (expected one "
                             "of: %s, or all)", name, b.data ? b.data : "");
            sw_buf_free(&b);
            return rc;
        }
        int rc = add_planner(s, pl->name, err);
        if (rc)
            return rc;
        p += n;
        if (*p == ',')
            p++;
    }
    return 0;
}

/* One budget: its label as given and its bytes (what --memory LABEL means;
   NULL: the device's memory). */
static int add_budget(sweep *s, const char *label, sw_err *err)
{
    if (s->nb >= SWEEP_MAX_BUDGETS)
        return sw_fail(err, SW_EINVAL, "--memory: more than %d budgets", SWEEP_MAX_BUDGETS);
    int64_t b;
    sw_err e;
    if (planner_resolve_budget(s->g, label, &b, &e))
        return sw_fail(err, SW_EINVAL, "--memory: %s", e.msg);
    for (int i = 0; i < s->nb; i++)
        if (s->budgets[i] == b)
            return 0;
    int at = s->nb++; /* kept in increasing order */
    while (at > 0 && s->budgets[at - 1] > b) {
        s->budgets[at] = s->budgets[at - 1];
        memcpy(s->labels[at], s->labels[at - 1], sizeof s->labels[at]);
        at--;
    }
    s->budgets[at] = b;
    snprintf(s->labels[at], sizeof s->labels[at], "%s", label ? label : "device");
    return 0;
}

/* The number of a size or fraction and its unit ("x", "GiB", ""). */
static int split_size(const char *t, double *v, const char **unit)
{
    char *end;
    *v = strtod(t, &end);
    *unit = end;
    return end == t || !isfinite(*v) || *v < 0;
}

/* FROM:TO:STEP, all three in the same unit (x, or one size unit). */
static int add_range(sweep *s, char *item, sw_err *err)
{
    char *c1 = strchr(item, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    if (!c2 || strchr(c2 + 1, ':'))
        return sw_fail(err, SW_EINVAL, "--memory %s: a range is FROM:TO:STEP, e.g. "
                       "0.3x:1.0x:0.1x or 4GiB:16GiB:2GiB", item);
    *c1 = *c2 = 0;
    const char *part[3] = {item, c1 + 1, c2 + 1}, *unit[3];
    double v[3];
    for (int i = 0; i < 3; i++)
        if (split_size(part[i], &v[i], &unit[i]) || strcmp(unit[i], unit[0]))
            return sw_fail(err, SW_EINVAL, "--memory %s:%s:%s: a range is FROM:TO:STEP with one "
                           "unit for all three, e.g. 0.3x:1.0x:0.1x", part[0], part[1], part[2]);
    if (!(v[2] > 0) || v[1] < v[0])
        return sw_fail(err, SW_EINVAL, "--memory %s:%s:%s: expected FROM <= TO and a positive "
                       "STEP", part[0], part[1], part[2]);
    double n = floor((v[1] - v[0]) / v[2] + 1e-9);
    if (n + 1 > SWEEP_MAX_BUDGETS)
        return sw_fail(err, SW_EINVAL, "--memory %s:%s:%s: more than %d budgets", part[0],
                       part[1], part[2], SWEEP_MAX_BUDGETS);
    for (int i = 0; i <= (int)n; i++) {
        char label[32];
        double x = v[0] + v[2] * i;
        snprintf(label, sizeof label, "%.6g%s", x, unit[0]);
        int rc = add_budget(s, label, err);
        if (rc)
            return rc;
    }
    return 0;
}

static int setup_budgets(sweep *s, const char *list, sw_err *err)
{
    char *copy = sw_strdup(list), *save = NULL;
    if (!copy)
        return sw_fail(err, SW_ENOMEM, "out of memory");
    int rc = 0;
    for (char *t = strtok_r(copy, ",", &save); t && !rc; t = strtok_r(NULL, ",", &save))
        rc = strchr(t, ':') ? add_range(s, t, err) : add_budget(s, t, err);
    sw_free(copy);
    if (!rc && s->nb == 0)
        rc = sw_fail(err, SW_EINVAL, "--memory '%s': no budget", list);
    return rc;
}

static int setup_batches(sweep *s, const char *text, sw_err *err)
{
    char *end;
    long long lo = strtoll(text, &end, 10), hi = lo;
    if (*end == ':')
        hi = strtoll(end + 1, &end, 10);
    if (*end || lo < 1 || hi < lo)
        return sw_fail(err, SW_EINVAL, "--batch %s: expected LO:HI (1 <= LO <= HI), e.g. "
                       "16:512", text);
    s->batch_lo = lo;
    s->batch_hi = hi;
    return 0;
}

int sweep_setup(sweep *s, const char *planners, const char *budgets, const char *fit_tol,
                const char *batches, sw_err *err)
{
    s->npl = s->nb = 0;
    s->skipped[0] = 0;
    if (s->threads < 1)
        s->threads = 1;
    int rc = setup_planners(s, planners, err);
    if (!rc)
        rc = planner_ideal_peak(s->g, &s->ideal_peak, err);
    if (!rc && batches) {
        rc = setup_batches(s, batches, err);
        double frac = 0;
        int64_t b = 0;
        if (!rc && budgets && strchr(budgets, ','))
            rc = sw_fail(err, SW_EINVAL, "--memory %s: with --batch, one budget", budgets);
        if (!rc && budgets && !sw_parse_size(budgets, &b, &frac, err) && frac > 0)
            rc = sw_fail(err, SW_EINVAL, "--memory %s: with --batch, a size (16GiB): a fraction "
                         "of the peak changes with the batch", budgets);
        if (!rc && fit_tol)
            rc = sw_fail(err, SW_EINVAL, "--fit and --batch: --batch finds the largest batch "
                         "at one budget; --fit the smallest budget at one batch");
        if (!rc)
            rc = add_budget(s, budgets, err); /* NULL: the device's memory */
        return rc;
    }
    if (!rc)
        rc = setup_budgets(s, budgets ? budgets : "0.3x:1.0x:0.1x", err);
    if (!rc && fit_tol) {
        double frac = 0;
        int64_t b = 0;
        rc = sw_parse_size(fit_tol, &b, &frac, err);
        if (!rc && frac > 0)
            b = (int64_t)((double)s->ideal_peak * frac);
        if (!rc && b < 1)
            rc = sw_fail(err, SW_EINVAL, "--fit-tol %s: the tolerance must be at least one byte",
                         fit_tol);
        s->tol = b;
        snprintf(s->tol_label, sizeof s->tol_label, "%s", fit_tol);
    }
    return rc;
}

/* ---- running ---- */

static void cell_init(sweep_cell *c, const char *name, int64_t budget, int64_t batch)
{
    memset(c, 0, sizeof *c);
    c->planner = name;
    c->budget = budget;
    c->batch = batch;
}

static int log_cells(sweep *s, const sweep_cell *c, size_t n, sw_err *err)
{
    if (sw_grow((void **)&s->log, &s->caplog, s->nlog + n, sizeof *s->log))
        return sw_fail(err, SW_ENOMEM, "out of memory");
    memcpy(s->log + s->nlog, c, n * sizeof *c);
    s->nlog += n;
    return 0;
}

static int eval_cells(sweep *s, sweep_eval_fn eval, void *ud, sweep_cell *c, size_t n,
                      sw_err *err)
{
    if (n == 0)
        return 0;
    int rc = eval(ud, c, n, err);
    for (size_t i = 0; !rc && i < n; i++)
        c[i].done = 1;
    return rc ? rc : log_cells(s, c, n, err);
}

/* A bracketed search per planner: lo is known not to fit, hi to fit (for
   budgets; for batches the other way round); each round evaluates the
   midpoint of every open bracket (together, so they run in parallel) until
   hi - lo <= tol. at is the cell at the fitting end. */
typedef struct bracket {
    int64_t lo, hi;
    int open;
    sweep_cell at;
} bracket;

static int search(sweep *s, bracket *br, int batch_mode, int64_t tol, sweep_eval_fn eval,
                  void *ud, sw_err *err)
{
    for (;;) {
        int open = 0;
        for (int p = 0; p < s->npl; p++) {
            br[p].open = br[p].open && br[p].hi - br[p].lo > tol;
            open += br[p].open;
        }
        if (!open)
            return 0;
        int m = 1; /* bisection: the points, and so the results, do not depend on how
                      many cells run at once (planners run side by side) */
        sweep_cell *c = sw_calloc((size_t)(open * m), sizeof *c);
        int *owner = sw_calloc((size_t)(open * m), sizeof *owner);
        if (!c || !owner) {
            sw_free(c);
            sw_free(owner);
            return sw_fail(err, SW_ENOMEM, "out of memory");
        }
        size_t n = 0;
        for (int p = 0; p < s->npl; p++) {
            int64_t prev = br[p].lo;
            for (int j = 1; br[p].open && j <= m; j++) {
                int64_t d = br[p].hi - br[p].lo;
                int64_t v = br[p].lo + (int64_t)((double)d * j / (m + 1));
                if (v <= prev || v >= br[p].hi)
                    continue;
                prev = v;
                if (batch_mode)
                    cell_init(&c[n], s->planners[p], s->budgets[0], v);
                else
                    cell_init(&c[n], s->planners[p], v, 0);
                owner[n++] = p;
            }
        }
        int rc = eval_cells(s, eval, ud, c, n, err);
        /* budgets: the smallest point that fits closes hi, the largest below it that does
           not, lo; batches: the largest that fits is lo (the fitting end), the smallest
           above it that does not, hi */
        for (size_t i = 0; !rc && i < n; i++) {
            bracket *b = &br[owner[i]];
            int64_t v = batch_mode ? c[i].batch : c[i].budget;
            s->fit[owner[i]].evals++;
            if (c[i].fits && (batch_mode ? v > b->lo : v < b->hi)) {
                if (batch_mode)
                    b->lo = v;
                else
                    b->hi = v;
                b->at = c[i];
            }
        }
        for (size_t i = 0; !rc && i < n; i++) {
            bracket *b = &br[owner[i]];
            int64_t v = batch_mode ? c[i].batch : c[i].budget;
            if (!c[i].fits && v > b->lo && v < b->hi) {
                if (batch_mode)
                    b->hi = v;
                else
                    b->lo = v;
            }
        }
        sw_free(c);
        sw_free(owner);
        if (rc)
            return rc;
    }
}

/* A planner that fits at no budget of the grid is tried at the device's
   memory, when that is larger: if it fits there, its bracket is the grid's
   largest budget to the device's memory (`none` at 1x of the ideal peak may
   not fit for the allocator's fragmentation, and fit a little above). */
static int fit_above(sweep *s, bracket *br, sweep_eval_fn eval, void *ud, sw_err *err)
{
    int64_t top = s->budgets[s->nb - 1], dev = s->g->device.memory_bytes;
    sweep_cell c[SWEEP_MAX_PLANNERS];
    int owner[SWEEP_MAX_PLANNERS];
    size_t n = 0;
    for (int p = 0; p < s->npl && dev > top; p++)
        if (s->fit[p].status == SWEEP_FIT_NEVER) {
            cell_init(&c[n], s->planners[p], dev, 0);
            owner[n++] = p;
        }
    int rc = eval_cells(s, eval, ud, c, n, err);
    for (size_t i = 0; !rc && i < n; i++) {
        int p = owner[i];
        s->fit[p].evals++;
        if (c[i].fits) {
            s->fit[p].status = SWEEP_FIT_FOUND;
            br[p] = (bracket){top, dev, 1, c[i]};
        }
    }
    return rc;
}

/* --fit: bracket each planner from the grid (the smallest budget that fits,
   the largest below it that does not, else 0), then bisect. */
static int run_fit(sweep *s, sweep_eval_fn eval, void *ud, sw_err *err)
{
    bracket br[SWEEP_MAX_PLANNERS];
    memset(br, 0, sizeof br);
    for (int p = 0; p < s->npl; p++) {
        sweep_fit *f = &s->fit[p];
        f->status = SWEEP_FIT_NEVER;
        f->other = -1;
        for (int b = s->nb - 1; b >= 0; b--) {
            const sweep_cell *c = &s->grid[b * (s->npl + 1) + p + 1];
            if (c->fits) {
                br[p].hi = c->budget;
                br[p].at = *c;
                br[p].lo = 0;
                f->status = SWEEP_FIT_FOUND;
            } else if (f->status == SWEEP_FIT_FOUND) {
                br[p].lo = c->budget;
                break;
            }
        }
        br[p].open = f->status == SWEEP_FIT_FOUND;
    }
    int rc = fit_above(s, br, eval, ud, err);
    if (!rc)
        rc = search(s, br, 0, s->tol, eval, ud, err);
    for (int p = 0; !rc && p < s->npl; p++) {
        sweep_fit *f = &s->fit[p];
        if (f->status == SWEEP_FIT_FOUND) {
            f->value = br[p].hi;
            f->other = br[p].lo;
            f->at = br[p].at;
        }
    }
    s->did_fit = 1;
    return rc;
}

/* --batch: each planner at the range's ends, then bisection over batches. */
static int run_batch(sweep *s, sweep_eval_fn eval, void *ud, sw_err *err)
{
    int two = s->batch_hi > s->batch_lo;
    size_t n = (size_t)s->npl * (two ? 2 : 1);
    sweep_cell *c = sw_calloc(n, sizeof *c);
    if (!c)
        return sw_fail(err, SW_ENOMEM, "out of memory");
    for (int p = 0; p < s->npl; p++) {
        cell_init(&c[p], s->planners[p], s->budgets[0], s->batch_lo);
        if (two)
            cell_init(&c[s->npl + p], s->planners[p], s->budgets[0], s->batch_hi);
    }
    int rc = eval_cells(s, eval, ud, c, n, err);
    bracket br[SWEEP_MAX_PLANNERS];
    memset(br, 0, sizeof br);
    for (int p = 0; !rc && p < s->npl; p++) {
        sweep_fit *f = &s->fit[p];
        const sweep_cell *top = two ? &c[s->npl + p] : &c[p];
        f->evals = two ? 2 : 1;
        f->other = -1;
        if (!c[p].fits) {
            f->status = SWEEP_FIT_NEVER;
            f->other = s->batch_lo;
        } else if (top->fits) {
            f->status = SWEEP_FIT_ALWAYS;
            f->value = s->batch_hi;
            f->at = *top;
        } else {
            f->status = SWEEP_FIT_FOUND;
            br[p] = (bracket){s->batch_lo, s->batch_hi, 1, c[p]};
        }
    }
    sw_free(c);
    if (!rc)
        rc = search(s, br, 1, 1, eval, ud, err);
    for (int p = 0; !rc && p < s->npl; p++)
        if (s->fit[p].status == SWEEP_FIT_FOUND) {
            s->fit[p].value = br[p].lo;
            s->fit[p].other = br[p].hi;
            s->fit[p].at = br[p].at;
        }
    s->did_batch = 1;
    return rc;
}

int sweep_run(sweep *s, sweep_eval_fn eval, void *ud, sw_err *err)
{
    if (s->batch_lo > 0)
        return run_batch(s, eval, ud, err);
    size_t w = (size_t)s->npl + 1, n = (size_t)s->nb * w;
    s->grid = sw_calloc(n, sizeof *s->grid);
    if (!s->grid)
        return sw_fail(err, SW_ENOMEM, "out of memory");
    for (int b = 0; b < s->nb; b++)
        for (size_t p = 0; p < w; p++)
            cell_init(&s->grid[(size_t)b * w + p], p ? s->planners[p - 1] : NULL,
                      s->budgets[b], 0);
    int rc = eval_cells(s, eval, ud, s->grid, n, err);
    if (!rc && s->tol > 0)
        rc = run_fit(s, eval, ud, err);
    return rc;
}

/* ---- the evaluator of this process ---- */

int sweep_make_model(const sweep *s, int64_t batch, graph_profile **g, sw_err *err)
{
    const model_def *m = model_find(s->model);
    if (!m)
        return sw_fail(err, SW_ENOTFOUND, "--model: unknown model '%s'", s->model);
    param_set ps;
    dev_spec dev = *dev_find("v100");
    if (params_init(&ps, m->params))
        return sw_fail(err, SW_ENOMEM, "out of memory");
    char *copy = sw_strdup(s->model_opts ? s->model_opts : ""), *save = NULL, bs[32];
    int rc = copy ? 0 : sw_fail(err, SW_ENOMEM, "out of memory");
    for (char *t = copy ? strtok_r(copy, ",", &save) : NULL; t && !rc;
         t = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(t, '=');
        for (char *q = t; *q && q != eq; q++)
            if (*q == '-')
                *q = '_';
        if (eq && !strncmp(t, "device=", 7))
            rc = dev_resolve(eq + 1, &dev, err);
        else
            rc = params_set_kv(&ps, t, err);
    }
    snprintf(bs, sizeof bs, "%lld", (long long)batch);
    if (!rc && batch > 0)
        rc = params_set(&ps, "batch", bs, err);
    if (!rc)
        rc = m->generate(&ps, &dev, g, err);
    sw_free(copy);
    params_free(&ps);
    return rc;
}

/* A number as `swapsim bound --json` prints it (%.9g), read back. */
static double as_printed(double v)
{
    char t[64];
    snprintf(t, sizeof t, "%.9g", v);
    return strtod(t, NULL);
}

/* "planner NAME: " (as swapsim run says it) and msg, cut to fit */
static void set_message(sweep_cell *c, const char *planner_name, const char *msg)
{
    size_t n = 0, cap = sizeof c->message - 1;
    if (*planner_name)
        n = (size_t)snprintf(c->message, sizeof c->message, "planner %.64s: ", planner_name);
    size_t m = strlen(msg);
    if (m > cap - n)
        m = cap - n;
    memcpy(c->message + n, msg, m);
    c->message[n + m] = 0;
}

static int eval_one(const sweep *s, const graph_profile *g, sweep_cell *c, sw_err *err)
{
    sw_err e;
    if (!c->planner) {
        bound_result r;
        int rc = bound_compute(g, c->budget, g->order, &r, &e);
        if (rc == SW_ENOFIT) {
            set_message(c, "", e.msg);
            return 0;
        }
        if (rc)
            return sw_fail(err, rc, "%s", e.msg);
        c->fits = 1;
        c->iter_s = as_printed(r.any_s);
        c->ntp = as_printed(r.compute_s) / c->iter_s;
        return 0;
    }
    const planner *pl = planner_find(c->planner);
    planner_opts o;
    if (!pl || planner_opts_init(&o, pl))
        return sw_fail(err, SW_ENOMEM, "out of memory");
    o.memory_budget = c->budget;
    o.seed = s->seed;
    o.threads = 1;
    o.time_budget_s = s->time_budget_s;
    plan *p = NULL;
    int rc = planner_run(pl, g, &o, &p, &e);
    planner_opts_free(&o);
    if (rc == SW_ENOMEM)
        return sw_fail(err, rc, "%s", e.msg);
    if (rc) { /* does not fit, refused, gave up: a result (swapsim run exits 1) */
        set_message(c, c->planner, e.msg);
        return 0;
    }
    rc = plan_verify(p, NULL, &e);
    sim_result r;
    sim_opts so = {0};
    so.max_iters = 64;
    if (!rc)
        rc = sim_plan(p, NULL, &so, &r, &e);
    plan_free(p);
    if (rc) {
        set_message(c, c->planner, e.msg);
        return rc == SW_ENOMEM ? sw_fail(err, rc, "%s", e.msg) : 0;
    }
    c->fits = 1;
    c->ntp = r.normalized_throughput;
    c->iter_s = r.iteration_time_s;
    c->sps = r.samples_per_s;
    c->peak = r.peak_memory_bytes;
    return 0;
}

int sweep_eval_local(void *ud, sweep_cell *cells, size_t n, sw_err *err)
{
    const sweep *s = ud;
    for (size_t i = 0; i < n; i++) {
        graph_profile *g = NULL;
        int rc = cells[i].batch > 0 && s->model ? sweep_make_model(s, cells[i].batch, &g, err) : 0;
        if (!rc)
            rc = eval_one(s, g ? g : s->g, &cells[i], err);
        graph_free(g);
        if (rc)
            return rc;
    }
    return 0;
}

/* ---- output ---- */

/* A budget as a multiple of the ideal peak (under --batch there is none: the
   peak changes with the batch; 0) */
static double budget_x(const sweep *s, int64_t b)
{
    return s->ideal_peak > 0 && !s->batch_lo ? (double)b / (double)s->ideal_peak : 0;
}

static const char *fit_status(const sweep *s, int st)
{
    if (st == SWEEP_FIT_FOUND)
        return "found";
    if (st == SWEEP_FIT_NEVER)
        return s->did_batch ? "none fits" : "does not fit";
    return "fits at the largest batch";
}

static void cell_json(const sweep *s, const sweep_cell *c, sw_buf *b)
{
    sw_buf_puts(b, "{\"planner\":");
    sw_buf_put_jstr(b, c->planner ? c->planner : "bound");
    sw_buf_printf(b, ",\"budget_bytes\":%lld", (long long)c->budget);
    if (!s->batch_lo) {
        sw_buf_puts(b, ",\"budget_x\":");
        sw_buf_put_f64(b, budget_x(s, c->budget));
    }
    if (c->batch)
        sw_buf_printf(b, ",\"batch\":%lld", (long long)c->batch);
    sw_buf_printf(b, ",\"fits\":%s", c->fits ? "true" : "false");
    if (c->fits) {
        sw_buf_puts(b, ",\"normalized_throughput\":");
        sw_buf_put_f64(b, c->ntp);
        sw_buf_puts(b, ",\"iteration_time_s\":");
        sw_buf_put_f64(b, c->iter_s);
        if (c->planner) {
            sw_buf_puts(b, ",\"samples_per_s\":");
            sw_buf_put_f64(b, c->sps);
            sw_buf_printf(b, ",\"peak_memory_bytes\":%lld", (long long)c->peak);
        }
    } else {
        sw_buf_puts(b, ",\"message\":");
        sw_buf_put_jstr(b, c->message);
    }
    sw_buf_putc(b, '}');
}

void sweep_json(const sweep *s, sw_buf *b)
{
    sw_buf_puts(b, "{\"profile\":");
    sw_buf_put_jstr(b, s->g->name);
    sw_buf_puts(b, ",\"device\":");
    sw_buf_put_jstr(b, s->g->device.name);
    if (s->model) {
        sw_buf_puts(b, ",\"model\":");
        sw_buf_put_jstr(b, s->model);
        sw_buf_puts(b, ",\"model_options\":");
        sw_buf_put_jstr(b, s->model_opts ? s->model_opts : "");
    }
    sw_buf_printf(b, ",\"batch\":%lld,\"ideal_peak_bytes\":%lld,\"seed\":%llu,\"time_budget_s\":",
                  (long long)s->g->batch, (long long)s->ideal_peak, (unsigned long long)s->seed);
    sw_buf_put_f64(b, s->time_budget_s);
    sw_buf_puts(b, ",\"planners\":[");
    for (int p = 0; p < s->npl; p++) {
        sw_buf_puts(b, p ? "," : "");
        sw_buf_put_jstr(b, s->planners[p]);
    }
    sw_buf_puts(b, "],\"skipped\":");
    sw_buf_put_jstr(b, s->skipped);
    sw_buf_puts(b, ",\"budgets\":[");
    for (int i = 0; i < s->nb; i++) {
        sw_buf_puts(b, i ? ",{\"label\":" : "{\"label\":");
        sw_buf_put_jstr(b, s->labels[i]);
        sw_buf_printf(b, ",\"bytes\":%lld}", (long long)s->budgets[i]);
    }
    sw_buf_puts(b, "],\"cells\":[");
    for (size_t i = 0; i < s->nlog; i++) {
        sw_buf_puts(b, i ? "," : "");
        cell_json(s, &s->log[i], b);
    }
    sw_buf_putc(b, ']');
    if (s->did_fit || s->did_batch) {
        sw_buf_puts(b, s->did_fit ? ",\"fit\":{\"tolerance\":" : ",\"largest_batch\":{");
        if (s->did_fit) {
            sw_buf_put_jstr(b, s->tol_label);
            sw_buf_printf(b, ",\"tolerance_bytes\":%lld,", (long long)s->tol);
        }
        sw_buf_puts(b, "\"planners\":[");
        for (int p = 0; p < s->npl; p++) {
            const sweep_fit *f = &s->fit[p];
            sw_buf_puts(b, p ? ",{\"planner\":" : "{\"planner\":");
            sw_buf_put_jstr(b, s->planners[p]);
            sw_buf_puts(b, ",\"status\":");
            sw_buf_put_jstr(b, fit_status(s, f->status));
            if (f->status != SWEEP_FIT_NEVER) {
                sw_buf_printf(b, s->did_fit ? ",\"smallest_budget_bytes\":%lld"
                                            : ",\"largest_batch\":%lld", (long long)f->value);
                if (s->did_fit) {
                    sw_buf_puts(b, ",\"smallest_budget_x\":");
                    sw_buf_put_f64(b, budget_x(s, f->value));
                }
                sw_buf_puts(b, ",\"normalized_throughput\":");
                sw_buf_put_f64(b, f->at.ntp);
                sw_buf_puts(b, ",\"samples_per_s\":");
                sw_buf_put_f64(b, f->at.sps);
            }
            if (f->other >= 0)
                sw_buf_printf(b, s->did_fit ? ",\"largest_not_fitting_bytes\":%lld"
                                            : ",\"smallest_not_fitting_batch\":%lld",
                              (long long)f->other);
            sw_buf_printf(b, ",\"evaluations\":%d}", f->evals);
        }
        sw_buf_puts(b, "]}");
    }
    sw_buf_puts(b, "}\n");
}

static void csv_text(sw_buf *b, const char *t)
{
    if (!strpbrk(t, ",\"\n")) {
        sw_buf_puts(b, t);
        return;
    }
    sw_buf_putc(b, '"');
    for (; *t; t++) {
        if (*t == '"')
            sw_buf_putc(b, '"');
        sw_buf_putc(b, *t == '\n' ? ' ' : *t);
    }
    sw_buf_putc(b, '"');
}

static void csv_num(sw_buf *b, int have, double v)
{
    sw_buf_putc(b, ',');
    if (have)
        sw_buf_put_f64(b, v);
}

void sweep_csv(const sweep *s, sw_buf *b)
{
    sw_buf_puts(b, "kind,planner,budget_bytes,budget_x,batch,fits,normalized_throughput,"
                   "iteration_time_s,samples_per_s,peak_memory_bytes,message\n");
    for (size_t i = 0; i < s->nlog; i++) {
        const sweep_cell *c = &s->log[i];
        sw_buf_printf(b, "cell,%s,%lld", c->planner ? c->planner : "bound", (long long)c->budget);
        csv_num(b, !s->batch_lo, budget_x(s, c->budget));
        sw_buf_printf(b, ",%lld,%d", (long long)(c->batch ? c->batch : s->g->batch), c->fits);
        csv_num(b, c->fits, c->ntp);
        csv_num(b, c->fits, c->iter_s);
        csv_num(b, c->fits && c->planner, c->sps);
        sw_buf_putc(b, ',');
        if (c->fits && c->planner)
            sw_buf_printf(b, "%lld", (long long)c->peak);
        sw_buf_putc(b, ',');
        csv_text(b, c->message);
        sw_buf_putc(b, '\n');
    }
    for (int p = 0; (s->did_fit || s->did_batch) && p < s->npl; p++) {
        const sweep_fit *f = &s->fit[p];
        int ok = f->status != SWEEP_FIT_NEVER;
        sw_buf_printf(b, "%s,%s,", s->did_fit ? "fit" : "largest_batch", s->planners[p]);
        int64_t budget = s->did_fit ? (ok ? f->value : 0) : s->budgets[0];
        if (budget)
            sw_buf_printf(b, "%lld", (long long)budget);
        csv_num(b, budget > 0 && !s->batch_lo, budget_x(s, budget));
        sw_buf_putc(b, ',');
        if (s->did_batch && ok)
            sw_buf_printf(b, "%lld", (long long)f->value);
        sw_buf_printf(b, ",%d", ok);
        csv_num(b, ok, f->at.ntp);
        csv_num(b, ok, f->at.iter_s);
        csv_num(b, ok, f->at.sps);
        sw_buf_putc(b, ',');
        if (ok)
            sw_buf_printf(b, "%lld", (long long)f->at.peak);
        sw_buf_putc(b, ',');
        char msg[96] = "";
        if (s->did_fit)
            snprintf(msg, sizeof msg, "tolerance %s", s->tol_label);
        csv_text(b, ok ? msg : fit_status(s, f->status));
        sw_buf_putc(b, '\n');
    }
}

static void table_grid(const sweep *s, sw_buf *b)
{
    char h[32];
    size_t w = (size_t)s->npl + 1;
    sw_buf_printf(b, "%-9s %10s  %6s", "budget", "bytes", "bound");
    for (int p = 0; p < s->npl; p++)
        sw_buf_printf(b, " %*s", (int)SW_MAX(6, strlen(s->planners[p])), s->planners[p]);
    sw_buf_putc(b, '\n');
    for (int i = 0; i < s->nb; i++) {
        const sweep_cell *row = &s->grid[(size_t)i * w];
        sw_buf_printf(b, "%-9s %10s  ", s->labels[i], sw_fmt_bytes(s->budgets[i], h, sizeof h));
        if (row[0].fits)
            sw_buf_printf(b, "%6.3f", row[0].ntp);
        else
            sw_buf_printf(b, "%6s", "0");
        for (int p = 0; p < s->npl; p++) {
            int wd = (int)SW_MAX(6, strlen(s->planners[p]));
            if (row[p + 1].fits)
                sw_buf_printf(b, " %*.3f", wd, row[p + 1].ntp);
            else
                sw_buf_printf(b, " %*s", wd, "-");
        }
        sw_buf_putc(b, '\n');
    }
}

static void table_fit(const sweep *s, sw_buf *b)
{
    char h[32], h2[32];
    if (s->did_fit)
        sw_buf_printf(b, "\nsmallest budget that fits, by bisection to within %s (%s):\n",
                      s->tol_label, sw_fmt_bytes(s->tol, h, sizeof h));
    else
        sw_buf_printf(b, "largest batch that fits in %s (%s), by bisection over batches %lld to "
                      "%lld:\n", s->labels[0], sw_fmt_bytes(s->budgets[0], h, sizeof h),
                      (long long)s->batch_lo, (long long)s->batch_hi);
    for (int p = 0; p < s->npl; p++) {
        const sweep_fit *f = &s->fit[p];
        sw_buf_printf(b, "  %-14s ", s->planners[p]);
        if (s->did_fit && f->status == SWEEP_FIT_FOUND)
            sw_buf_printf(b, "%5.3fx  %10s  (throughput %.3f there; %d evaluations)\n",
                          budget_x(s, f->value), sw_fmt_bytes(f->value, h, sizeof h), f->at.ntp,
                          f->evals);
        else if (s->did_fit)
            sw_buf_printf(b, "does not fit at up to %s\n",
                          sw_fmt_bytes(SW_MAX(s->budgets[s->nb - 1], s->g->device.memory_bytes),
                                       h, sizeof h));
        else if (f->status == SWEEP_FIT_NEVER)
            sw_buf_printf(b, "does not fit at batch %lld\n", (long long)s->batch_lo);
        else
            sw_buf_printf(b, "batch %5lld%s  %10.1f samples/s  (throughput %.3f; %s)\n",
                          (long long)f->value, f->status == SWEEP_FIT_ALWAYS ? "+" : " ",
                          f->at.sps, f->at.ntp,
                          f->status == SWEEP_FIT_ALWAYS ? "the range's top fits" :
                          (snprintf(h2, sizeof h2, "batch %lld does not",
                                    (long long)f->other), h2));
    }
}

void sweep_table(const sweep *s, sw_buf *b)
{
    char h[32];
    if (s->batch_lo)
        sw_buf_printf(b, "sweep %s (generated by %s%s%s, batch %lld to %lld) on %s\n", s->g->name,
                      s->model, s->model_opts ? " " : "", s->model_opts ? s->model_opts : "",
                      (long long)s->batch_lo, (long long)s->batch_hi, s->g->device.name);
    else
        sw_buf_printf(b, "sweep %s on %s: normalised throughput (1 = everything resident; 1x = "
                      "the ideal peak, %s); '-' does not fit; bound: the most any plan "
                      "reaches\n", s->g->name, s->g->device.name,
                      sw_fmt_bytes(s->ideal_peak, h, sizeof h));
    sw_buf_printf(b, "seed %llu; planners that search stop after %g s\n",
                  (unsigned long long)s->seed, s->time_budget_s);
    if (s->skipped[0])
        sw_buf_printf(b, "not in 'all': %s\n", s->skipped);
    if (s->grid)
        table_grid(s, b);
    if (s->did_fit || s->did_batch)
        table_fit(s, b);
}

void sweep_free(sweep *s)
{
    sw_free(s->grid);
    sw_free(s->log);
    s->grid = s->log = NULL;
    s->nlog = s->caplog = 0;
}
