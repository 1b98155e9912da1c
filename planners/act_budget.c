/* act_budget.c: the `act-budget` planner: torch.compile's activation
   memory budget (torch._functorch.config.activation_memory_budget), from
   its published description (the PyTorch blog "Current and New Activation
   Checkpointing Techniques in PyTorch", 2025, and the config's
   documentation): the partitioner of each compiled region chooses which of
   the region's activations to save for the backward pass and which to
   recompute in it, as a 0/1 knapsack whose items are the recomputable
   nodes, each weighing the bytes it would save and worth the runtime its
   recomputation would cost; the budget is a fraction of the region's saved
   activations, 0 meaning recompute everything recomputable (full
   activation checkpointing of the region) and 1 the runtime-optimal
   policy. The knapsack is solved by dynamic programming over the budget
   cut into units (torch's default solver is a DP too).

   Here, per region:
   - an item is a forward op that can be re-run (it mutates nothing, its
     new storages are neither persistent, inputs nor mutated in the
     iteration) and makes at least one storage the backward pass reads
     after its last forward use; an op one of whose storages a forward op
     of another region reads (the region's output) is not an item: autograd
     saves a compiled region's inputs;
   - its weight is the bytes of those storages; its worth the op's time
     plus the time of re-running the ops that make its inputs which the
     forward pass has already freed (q_proj under q_rope), a chain the
     re-run needs;
   - fraction 1 keeps every item (in swapsim's cost model every re-run
     costs its time, so saving all is the runtime-optimal policy; torch's
     budget 1 is its min-cut default, which also recomputes the pointwise
     ops it would fuse into backward kernels for free, docs/planners.md);
   - the kept items' weight is at most fraction x the region's item weight
     (weights rounded up to units of 1/1000 of it).
   The items not kept have their storages dropped after their last forward
   use; just before the first op that then reads one of them, the op is
   re-run, after re-running whatever it needs that is gone (a chain), and
   the remade storages live until their last use. A re-run that would read
   another version of an input than the forward op read, need an input no
   op can remake, or remake a storage still resident (an op's other output,
   kept: a re-run places all of them), makes its item kept instead (the
   plan is retried).

   Regions: `block` takes each block of the block rule (segments.h: the
   generators' scopes, one transformer layer) as a compiled region, as
   torch.compile applied per layer does; `graph` one region for the whole
   iteration; `auto` blocks when the names have scopes (fewer blocks than
   half the forward ops), else the graph.

   The budget: mode=fraction takes the fraction as torch does; mode=bytes
   (the default) maps swapsim's byte budget onto it: the largest fraction,
   to 1/2^steps, whose plan fits the budget. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../sim/builder.h"
#include "../sim/mem.h"
#include "lib/segments.h"

#define AB_UNITS 1000

static const param_def act_budget_params[] = {
    {"mode", PT_CHOICE, "bytes", "bytes: the largest fraction whose plan fits the byte budget "
     "(--memory); fraction: the fraction given, as torch's activation_memory_budget",
     "bytes|fraction", 1, 0},
    {"fraction", PT_FLOAT, "0.5", "mode=fraction: the share of each region's recomputable "
     "saved activations kept (0: recompute all of them, 1: keep all)", NULL, 0, 1},
    {"steps", PT_INT, "8", "mode=bytes: bisection steps over the fraction (resolution "
     "1/2^steps)", NULL, 1, 30},
    {"regions", PT_CHOICE, "auto", "compiled regions: block (each scope block, torch.compile "
     "per layer), graph (one region), auto (block when the op names have scopes)",
     "auto|block|graph", 1, 0},
    {"allocator", PT_CHOICE, "best-fit", "address allocator placing the plan",
     "first-fit|best-fit", 1, 0},
    {"alignment", PT_SIZE, "1", "placement alignment in bytes", NULL, 1, 1e9},
    PARAM_END};

typedef struct ab {
    const graph_profile *g;
    const planner_opts *o;
    int32_t no, nt, first_bwd; /* position of the first non-forward op */
    int32_t *pos, *death, *lf, *fb, *region;
    uint8_t *elig;     /* per op: can be re-run */
    uint8_t *saved;    /* per storage: read by a later non-forward op after its last forward use */
    uint8_t *boundary; /* per storage: read by a forward op of another region */
    int32_t *items;    /* item ops, by region then order */
    int32_t n_items, n_regions;
    int32_t *reg_off;  /* items of region r: items[reg_off[r] .. reg_off[r+1]) */
    int64_t *weight;   /* per item */
    double *worth;     /* per item */
    double *chain;     /* per op: memo of the chain time, < 0 unknown */
    uint8_t *forced;   /* per item: kept after a failed re-run */
    uint8_t *drop;     /* per item: recomputed */
    /* the walk */
    uint8_t *made, *dropped, *rer;
    uint8_t *chained;  /* per storage: a dropped item's re-run needs it remade */
    int32_t *ver;      /* per storage: mutations so far */
    int32_t *item_of;  /* per op: its item index or -1 */
    int32_t n_rerun;
    double recompute_s;
    int64_t kept_bytes, item_bytes;
} ab;

static int32_t fwd_count(const graph_profile *g)
{
    int32_t n = 0;
    for (int32_t o = 0; o < g->n_ops; o++)
        n += g->ops[o].phase == GP_FORWARD;
    return n;
}

/* The op can be re-run: a forward op that mutates nothing and whose new
   storages are plain activations never mutated. */
static int rerunnable(const graph_profile *g, int32_t op)
{
    const graph_op *x = &g->ops[op];
    if (x->phase != GP_FORWARD || x->n_mut)
        return 0;
    int made = 0;
    for (int32_t k = g->acc_off[op]; k < g->acc_off[op + 1]; k++) {
        int32_t s = g->acc[k];
        if (g->acc_flag[k] & GA_MUTATE)
            return 0;
        if (!(g->acc_flag[k] & GA_CREATE))
            continue;
        if (g->tensors[s].persistent || g->tensors[s].kind == GK_INPUT || g->n_mutations[s])
            return 0;
        made = 1;
    }
    return made;
}

/* Time of re-running what op's inputs need that the forward pass freed
   (memoised; -1: an input cannot be remade). */
static double chain_time(ab *a, int32_t op, int depth)
{
    const graph_profile *g = a->g;
    if (a->chain[op] >= 0 || a->chain[op] == -1)
        return a->chain[op];
    if (depth > 10000)
        return -1;
    double t = 0;
    for (int32_t k = g->acc_off[op]; k < g->acc_off[op + 1] && t >= 0; k++) {
        int32_t s = g->acc[k];
        if ((g->acc_flag[k] & GA_CREATE) || g->tensors[s].persistent)
            continue;
        if (a->death[s] >= a->first_bwd)
            continue; /* alive into the backward pass: kept or an item */
        int32_t p = g->tensors[s].producer;
        if (p < 0 || !a->elig[p] || a->region[p] != a->region[op]) {
            t = -1;
            break;
        }
        double c = chain_time(a, p, depth + 1);
        t = c < 0 ? -1 : t + g->ops[p].time_s + c;
    }
    a->chain[op] = t < 0 ? -1 : t;
    return a->chain[op];
}

static void ab_free(ab *a)
{
    void *p[] = {a->pos,    a->death,   a->lf,     a->fb,     a->region, a->elig,
                 a->saved,  a->boundary, a->items, a->reg_off, a->weight, a->worth,
                 a->chain,  a->forced,  a->drop,   a->made,   a->dropped, a->rer,
                 a->ver,    a->item_of, a->chained};
    for (size_t i = 0; i < SW_ARRAY_LEN(p); i++)
        sw_free(p[i]);
}

/* Regions, lifetimes, the items with their weights and worths. */
static int ab_init(ab *a, const graph_profile *g, const planner_opts *o)
{
    memset(a, 0, sizeof *a);
    a->g = g;
    a->o = o;
    int32_t no = a->no = g->n_ops, nt = a->nt = g->n_tensors;
    size_t so = (size_t)no + 1, st = (size_t)nt + 1;
    a->pos = sw_malloc(so * sizeof *a->pos);
    a->death = sw_malloc(st * sizeof *a->death);
    a->lf = sw_malloc(st * sizeof *a->lf);
    a->fb = sw_malloc(st * sizeof *a->fb);
    a->region = sw_malloc(so * sizeof *a->region);
    a->elig = sw_calloc(so, 1);
    a->saved = sw_calloc(st, 1);
    a->boundary = sw_calloc(st, 1);
    a->items = sw_malloc(so * sizeof *a->items);
    a->weight = sw_calloc(so, sizeof *a->weight);
    a->worth = sw_calloc(so, sizeof *a->worth);
    a->chain = sw_malloc(so * sizeof *a->chain);
    a->forced = sw_calloc(so, 1);
    a->drop = sw_calloc(so, 1);
    a->made = sw_calloc(st, 1);
    a->dropped = sw_calloc(st, 1);
    a->rer = sw_calloc(st, 1);
    a->chained = sw_calloc(st, 1);
    a->ver = sw_calloc(st, sizeof *a->ver);
    a->item_of = sw_malloc(so * sizeof *a->item_of);
    if (!a->pos || !a->death || !a->lf || !a->fb || !a->region || !a->elig || !a->saved ||
        !a->boundary || !a->items || !a->weight || !a->worth || !a->chain || !a->forced ||
        !a->drop || !a->made || !a->dropped || !a->rer || !a->ver || !a->item_of || !a->chained ||
        graph_lifetimes(g, g->order, a->pos, a->death, NULL, NULL, NULL))
        return SW_ENOMEM;
    const char *rmode = params_str(&o->params, "regions");
    int32_t nb = seg_blocks(g, a->region);
    if (nb < 0)
        return SW_ENOMEM;
    int blocks = !strcmp(rmode, "block") ||
                 (!strcmp(rmode, "auto") && 2 * (int64_t)nb < fwd_count(g));
    a->first_bwd = no;
    for (int32_t i = 0; i < no; i++) {
        int32_t op = g->order[i];
        if (!blocks)
            a->region[op] = g->ops[op].phase == GP_FORWARD ? 0 : -1;
        if (g->ops[op].phase != GP_FORWARD && a->first_bwd == no)
            a->first_bwd = i;
    }
    for (int32_t s = 0; s < nt; s++)
        a->lf[s] = a->fb[s] = -1;
    for (int32_t i = 0; i < no; i++) {
        int32_t op = g->order[i];
        a->elig[op] = (uint8_t)rerunnable(g, op);
        a->chain[op] = -2;
        a->item_of[op] = -1;
        for (int32_t k = g->acc_off[op]; k < g->acc_off[op + 1]; k++) {
            int32_t s = g->acc[k];
            int32_t p = g->tensors[s].producer;
            if (g->ops[op].phase == GP_FORWARD) {
                a->lf[s] = i;
                if (p >= 0 && p != op && a->region[p] != a->region[op])
                    a->boundary[s] = 1;
            } else if (a->fb[s] < 0 && !(g->acc_flag[k] & GA_CREATE)) {
                a->fb[s] = i;
            }
        }
    }
    for (int32_t s = 0; s < nt; s++)
        a->saved[s] = a->fb[s] >= 0 && a->fb[s] > a->lf[s] && !g->tensors[s].persistent;
    /* items, grouped by region (regions number forward ops in order) */
    a->n_regions = 0;
    for (int32_t op = 0; op < no; op++)
        a->n_regions = SW_MAX(a->n_regions, a->region[op] + 1);
    a->reg_off = sw_calloc((size_t)a->n_regions + 2, sizeof *a->reg_off);
    if (!a->reg_off)
        return SW_ENOMEM;
    for (int32_t i = 0; i < no; i++) {
        int32_t op = g->order[i];
        if (!a->elig[op])
            continue;
        int64_t w = 0;
        int ok = 1;
        for (int32_t k = g->acc_off[op]; k < g->acc_off[op + 1]; k++) {
            int32_t s = g->acc[k];
            if (!(g->acc_flag[k] & GA_CREATE))
                continue;
            ok &= !a->boundary[s];
            if (a->saved[s])
                w += g->tensors[s].bytes;
        }
        double c = ok && w > 0 ? chain_time(a, op, 0) : -1;
        if (c < 0)
            continue;
        a->weight[op] = w;
        a->worth[op] = g->ops[op].time_s + c;
        a->item_bytes += w;
        a->reg_off[a->region[op] + 1]++;
    }
    for (int32_t r = 0; r < a->n_regions; r++)
        a->reg_off[r + 1] += a->reg_off[r];
    int32_t *fill = sw_malloc(((size_t)a->n_regions + 1) * sizeof *fill);
    if (!fill)
        return SW_ENOMEM;
    memcpy(fill, a->reg_off, (size_t)a->n_regions * sizeof *fill);
    for (int32_t i = 0; i < no; i++) {
        int32_t op = g->order[i];
        if (a->weight[op] > 0)
            a->items[fill[a->region[op]]++] = op;
    }
    sw_free(fill);
    a->n_items = a->reg_off[a->n_regions];
    for (int32_t j = 0; j < a->n_items; j++)
        a->item_of[a->items[j]] = j;
    return 0;
}

/* The knapsack of one region: keep the items of greatest total worth whose
   weight, in units of 1/AB_UNITS of the region's, is at most f of it;
   forced items are kept first. Sets drop[] for the others. */
static int knapsack(ab *a, int32_t r, double f)
{
    int32_t lo = a->reg_off[r], n = a->reg_off[r + 1] - lo;
    int64_t total = 0;
    for (int32_t j = 0; j < n; j++)
        total += a->weight[a->items[lo + j]];
    for (int32_t j = 0; j < n; j++)
        a->drop[lo + j] = 0;
    if (n == 0 || f >= 1)
        return 0;
    int64_t unit = (total + AB_UNITS - 1) / AB_UNITS;
    int64_t cap = (int64_t)floor(f * (double)total / (double)unit + 1e-9);
    for (int32_t j = 0; j < n; j++)
        if (a->forced[lo + j])
            cap -= (a->weight[a->items[lo + j]] + unit - 1) / unit;
    if (cap < 0)
        cap = 0;
    size_t C = (size_t)cap + 1;
    double *best = sw_calloc(C, sizeof *best);
    uint8_t *take = sw_calloc((size_t)n * C + 1, 1);
    if (!best || !take) {
        sw_free(best);
        sw_free(take);
        return SW_ENOMEM;
    }
    for (int32_t j = 0; j < n; j++) {
        if (a->forced[lo + j])
            continue;
        int32_t op = a->items[lo + j];
        int64_t w = (a->weight[op] + unit - 1) / unit;
        double v = a->worth[op];
        for (int64_t c = cap; c >= w; c--)
            if (best[c - w] + v > best[c]) {
                best[c] = best[c - w] + v;
                take[(size_t)j * C + (size_t)c] = 1;
            }
    }
    int64_t c = cap;
    for (int32_t j = n - 1; j >= 0; j--) {
        if (a->forced[lo + j])
            continue;
        if (take[(size_t)j * C + (size_t)c])
            c -= (a->weight[a->items[lo + j]] + unit - 1) / unit;
        else
            a->drop[lo + j] = 1;
    }
    sw_free(best);
    sw_free(take);
    return 0;
}

/* Resident for the plan builder: a storage stays so from its making until
   it is dropped (an implicit free at its last use moves with the uses the
   plan adds: reading it later lengthens its life), or from its re-run on. */
static int resident(const ab *a, int32_t s)
{
    const graph_profile *g = a->g;
    if (g->tensors[s].persistent || a->rer[s] || g->tensors[s].producer < 0)
        return 1;
    return a->made[s] && !a->dropped[s];
}

/* Mark the storages the re-run of op needs remade: its inputs the forward
   pass is done with (read by no later op but forward ones), made by an op
   that can be re-run, and theirs in turn (the chain of chain_time). */
static void mark_chain(ab *a, int32_t op, int depth)
{
    const graph_profile *g = a->g;
    if (depth > 10000)
        return;
    for (int32_t k = g->acc_off[op]; k < g->acc_off[op + 1]; k++) {
        int32_t s = g->acc[k];
        if ((g->acc_flag[k] & GA_CREATE) || g->tensors[s].persistent ||
            a->death[s] >= a->first_bwd || a->chained[s])
            continue;
        int32_t p = g->tensors[s].producer;
        if (p < 0 || !a->elig[p])
            continue;
        a->chained[s] = 1;
        mark_chain(a, p, depth + 1);
    }
}

/* Make storage s resident before the next op by re-running its producer
   (and first what that needs). Returns 0, or 1 if it cannot. */
static int materialize(ab *a, plan_builder *b, int32_t s, int depth)
{
    const graph_profile *g = a->g;
    if (resident(a, s))
        return 0;
    int32_t p = g->tensors[s].producer;
    if (p < 0 || !a->elig[p] || depth > 10000)
        return 1;
    /* a re-run places every storage its op makes: none may be resident */
    for (int32_t k = g->acc_off[p]; k < g->acc_off[p + 1]; k++)
        if ((g->acc_flag[k] & GA_CREATE) && resident(a, g->acc[k]))
            return 1;
    for (int32_t k = g->acc_off[p]; k < g->acc_off[p + 1]; k++) {
        int32_t t = g->acc[k];
        if (g->acc_flag[k] & GA_CREATE)
            continue;
        if (materialize(a, b, t, depth + 1) || a->ver[t] != g->acc_ver[k])
            return 1;
    }
    pb_rerun(b, p);
    a->n_rerun++;
    a->recompute_s += g->ops[p].time_s;
    for (int32_t k = g->acc_off[p]; k < g->acc_off[p + 1]; k++)
        if (g->acc_flag[k] & GA_CREATE)
            a->rer[g->acc[k]] = 1;
    return 0;
}

/* Record the plan of the current decisions. Returns 0, SW_ENOMEM, or 1
   with *bad the item whose storage could not be remade. */
static int walk(ab *a, plan_builder *b, int32_t *bad)
{
    const graph_profile *g = a->g;
    pb_reset(b);
    memset(a->made, 0, (size_t)a->nt);
    memset(a->dropped, 0, (size_t)a->nt);
    memset(a->rer, 0, (size_t)a->nt);
    memset(a->ver, 0, (size_t)a->nt * sizeof *a->ver);
    memset(a->chained, 0, (size_t)a->nt);
    for (int32_t j = 0; j < a->n_items; j++)
        if (a->drop[j])
            mark_chain(a, a->items[j], 0);
    a->n_rerun = 0;
    a->recompute_s = 0;
    a->kept_bytes = 0;
    for (int32_t j = 0; j < a->n_items; j++)
        if (!a->drop[j])
            a->kept_bytes += a->weight[a->items[j]];
    pb_resident_persistent(b);
    for (int32_t i = 0; i < a->no; i++) {
        int32_t op = g->order[i];
        for (int32_t k = g->acc_off[op]; k < g->acc_off[op + 1]; k++) {
            int32_t s = g->acc[k];
            if (g->acc_flag[k] & GA_CREATE)
                continue;
            if (materialize(a, b, s, 0)) {
                int32_t p = g->tensors[s].producer;
                *bad = p >= 0 ? a->item_of[p] : -1;
                return 1;
            }
        }
        pb_run(b, op);
        for (int32_t k = g->acc_off[op]; k < g->acc_off[op + 1]; k++) {
            int32_t s = g->acc[k];
            if (g->acc_flag[k] & GA_CREATE)
                a->made[s] = 1;
            if (g->acc_flag[k] & GA_MUTATE)
                a->ver[s]++;
        }
        /* drop the recomputed items' saved storages after their last forward
           use, and what their re-runs need remade (the builder remakes only
           what was dropped) */
        for (int32_t k = g->acc_off[op]; k < g->acc_off[op + 1]; k++) {
            int32_t s = g->acc[k], p = g->tensors[s].producer;
            int item = p >= 0 && a->item_of[p] >= 0 && a->drop[a->item_of[p]] && a->saved[s];
            if ((!item && !a->chained[s]) || a->lf[s] != i || a->dropped[s] || a->rer[s])
                continue;
            pb_drop(b, s);
            a->dropped[s] = 1;
        }
    }
    return 0;
}

/* The plan at fraction f (knapsacks, then walks until every re-run can be
   made). */
static int plan_at(ab *a, plan_builder *b, double f, plan **out, sw_err *err)
{
    memset(a->forced, 0, (size_t)a->n_items + 1);
    int walked = 0;
    for (int32_t tries = 0; tries <= a->n_items && !walked; tries++) {
        for (int32_t r = 0; r < a->n_regions; r++)
            if (knapsack(a, r, f))
                return sw_fail(err, SW_ENOMEM, "out of memory");
        int32_t bad = -1;
        int rc = walk(a, b, &bad);
        if (rc == 0) {
            walked = 1;
            break;
        }
        if (bad < 0 || a->forced[bad]) /* cannot happen: the walk with nothing dropped works */
            return sw_fail(err, SW_EINVAL, "act-budget: a re-run cannot be made (a storage "
                           "whose producer cannot be re-run)");
        a->forced[bad] = 1;
    }
    if (!walked)
        return sw_fail(err, SW_EINVAL, "act-budget: no plan whose re-runs can all be made");
    int rc = pb_finish(b, out, err);
    if (rc)
        return rc;
    char note[240];
    snprintf(note, sizeof note, "act-budget: fraction %.4f, %d ops re-run (recompute %.6f s), "
             "%lld of %lld recomputable saved bytes kept", f, a->n_rerun, a->recompute_s,
             (long long)a->kept_bytes, (long long)a->item_bytes);
    if (plan_set_notes(*out, note)) {
        plan_free(*out);
        *out = NULL;
        return sw_fail(err, SW_ENOMEM, "out of memory");
    }
    return 0;
}

/* The refusal of fraction f's plan, whose placement failed (e2): the same
   plan placed in a roomy arena, then seg_refusal (segments.h). */
static int refuse(ab *a, const planner_opts *o, mem_fit fit, double f, const sw_err *e2,
                  sw_err *err)
{
    int64_t pers;
    plan_builder *b = seg_roomy_builder(a->g, o, fit, &pers);
    if (!b)
        return sw_fail(err, SW_ENOMEM, "out of memory");
    plan *p = NULL;
    sw_err e3;
    int rc = plan_at(a, b, f, &p, &e3);
    plan_free(p);
    char what[256], who[64];
    snprintf(what, sizeof what, "act-budget at fraction %.4f (%d ops re-run, %lld of %lld "
             "recomputable saved bytes kept)", f, a->n_rerun, (long long)a->kept_bytes,
             (long long)a->item_bytes);
    snprintf(who, sizeof who, "act-budget at fraction %.4f", f);
    return seg_refusal(a->g, o, b, rc, pers, what, who, e2, err);
}

static int plan_act_budget(const graph_profile *g, const planner_opts *o, plan **out,
                           sw_err *err)
{
    const param_set *ps = &o->params;
    if (o->memory_budget - g->max_workspace <= 0)
        return sw_fail(err, SW_ENOFIT, "does not fit: the budget does not cover the largest op "
                       "workspace (%lld bytes)", (long long)g->max_workspace);
    mem_fit fit = MEM_BEST_FIT;
    mem_fit_parse(params_str(ps, "allocator"), &fit);
    ab a;
    int rc = ab_init(&a, g, o);
    plan_builder *b = rc ? NULL : pb_new_arena(g, o->memory_budget, g->max_workspace, fit,
                                               params_size(ps, "alignment"));
    if (rc || !b) {
        rc = sw_fail(err, SW_ENOMEM, "out of memory");
        goto done;
    }
    sw_err e2;
    if (!strcmp(params_str(ps, "mode"), "fraction")) {
        double f = params_float(ps, "fraction");
        rc = plan_at(&a, b, f, out, &e2);
        if (rc == SW_ENOFIT)
            rc = refuse(&a, o, fit, f, &e2, err);
        else if (rc)
            *err = e2;
        goto done;
    }
    /* bytes: fraction 1 if it fits, else the largest fitting one by bisection */
    rc = plan_at(&a, b, 1.0, out, err);
    if (rc != SW_ENOFIT)
        goto done;
    rc = plan_at(&a, b, 0.0, out, &e2);
    if (rc == SW_ENOFIT)
        rc = refuse(&a, o, fit, 0.0, &e2, err);
    else if (rc)
        *err = e2;
    if (rc)
        goto done;
    double lo = 0, hi = 1;
    for (int64_t k = 0; k < params_int(ps, "steps"); k++) {
        double mid = (lo + hi) / 2;
        plan *p = NULL;
        int r2 = plan_at(&a, b, mid, &p, &e2);
        if (r2 == 0) {
            plan_free(*out);
            *out = p;
            lo = mid;
        } else if (r2 == SW_ENOFIT) {
            hi = mid;
        } else {
            *err = e2;
            rc = r2;
            plan_free(*out);
            *out = NULL;
            goto done;
        }
    }
done:
    pb_free(b);
    ab_free(&a);
    return rc;
}

const planner planner_act_budget = {
    1, "act-budget", "torch.compile's activation memory budget: per region a knapsack keeps "
    "the saved activations worth most recompute time within a fraction of them, recomputing "
    "the rest before their backward; mode=bytes maps the byte budget onto the fraction",
    act_budget_params, plan_act_budget, 0};
