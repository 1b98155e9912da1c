/* export.c: a plan turned into a PyTorch policy: per saved activation, keep,
   offload (with the module after whose backward it is fetched back) or
   recompute (a module region checkpointed); docs/apply.md says what maps. */
#include <stdio.h>
#include <string.h>

#include "export.h"

const char *export_decision_name(int d)
{
    static const char *names[] = {"keep", "offload", "recompute"};
    return d >= 0 && d <= EXP_RECOMPUTE ? names[d] : "?";
}

/* Per-storage facts gathered from the plan's task order. */
typedef struct exp_state {
    const plan *p;
    const graph_profile *g;
    int32_t n;              /* tensors */
    int32_t bwd_start;      /* index of the first backward run task */
    int32_t *first_bwd, *last_bwd, *last_fwd; /* task indices of uses, -1: none */
    int32_t *restore, *evict, *moved;         /* task indices, -1: none */
    uint8_t *restore_kind;  /* TASK_SWAP_IN or TASK_RERUN */
    uint8_t *saved, *plan_res, *swapped_other;
    int *plan_dec, *dec;    /* export_decision per saved storage */
    int32_t *region;        /* recompute: index into regions, -1 */
    char **scope;           /* per op: its module ("" none), owned */
    char **regions;         /* checkpointed module regions, owned */
    int32_t n_regions;
    char **prefetch;        /* per storage: module after whose backward it is fetched */
    int64_t res_bytes;      /* saved activations resident, during the walk */
    int64_t *res_at;        /* per task: res_bytes just before it starts */
    sw_buf lines;           /* the unexpressed lines, as JSON strings with commas */
    sw_buf *raw;            /* the caller's copy of them, one a line (NULL: none) */
    int32_t n_lines;
    int32_t n_reordered;    /* forward/backward ops the plan runs out of the recorded order */
} exp_state;

/* The module an op is named after: "layer3.2.conv1:aten::conv2d" is in
   layer3.2.conv1; "n12:aten::add" (no module record) in none (""). */
static char *op_scope(const char *name)
{
    const char *c = strchr(name, ':');
    if (!c)
        return sw_strdup("");
    int unnamed = name[0] == 'n' && c > name + 1;
    for (const char *q = name + 1; unnamed && q < c; q++)
        unnamed = *q >= '0' && *q <= '9';
    return unnamed ? sw_strdup("") : sw_strndup(name, (size_t)(c - name));
}

/* Is module m inside region a (a itself or a descendant)? "" is in nothing. */
static int within(const char *m, const char *a)
{
    size_t n = strlen(a);
    return *m && n && !strncmp(m, a, n) && (m[n] == 0 || m[n] == '.');
}

static void add_line(exp_state *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add_line(exp_state *x, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (x->n_lines++)
        sw_buf_putc(&x->lines, ',');
    sw_buf_put_jstr(&x->lines, buf);
    if (x->raw) {
        sw_buf_puts(x->raw, buf);
        sw_buf_putc(x->raw, '\n');
    }
}

static const char *tname(const exp_state *x, int32_t s) { return x->g->tensors[s].name; }

/* Uses of every storage by run tasks (reruns are the plan's own business). */
static void scan_uses(exp_state *x)
{
    const plan *p = x->p;
    const graph_profile *g = x->g;
    for (int32_t t = 0; t < p->n_tasks; t++) {
        const plan_task *k = &p->tasks[t];
        if (k->kind != TASK_RUN)
            continue;
        int ph = g->ops[k->op].phase;
        if (ph == GP_BACKWARD && x->bwd_start < 0)
            x->bwd_start = t;
        for (int32_t a = g->acc_off[k->op]; a < g->acc_off[k->op + 1]; a++) {
            int32_t s = g->acc[a];
            if (!(g->acc_flag[a] & (GA_READ | GA_MUTATE)))
                continue;
            if (ph == GP_FORWARD)
                x->last_fwd[s] = t;
            else if (ph == GP_BACKWARD) {
                if (x->first_bwd[s] < 0)
                    x->first_bwd[s] = t;
                x->last_bwd[s] = t;
            }
        }
    }
    for (int32_t s = 0; s < x->n; s++) {
        const graph_tensor *tt = &g->tensors[s];
        int32_t pr = tt->producer;
        int fwd = pr >= 0 ? g->ops[pr].phase == GP_FORWARD : tt->kind == GK_INPUT;
        /* the batch is persistent in an imported profile, yet saved like an activation */
        x->saved[s] = tt->storage == s && (!tt->persistent || tt->kind == GK_INPUT) &&
                      tt->kind != GK_GRADIENT && fwd && x->first_bwd[s] >= 0;
    }
}

/* Mark s resident or not, keeping the bytes of saved activations resident. */
static void set_res(exp_state *x, uint8_t *res, int32_t s, int v)
{
    if (x->saved[s] && res[s] != v)
        x->res_bytes += v ? x->g->tensors[s].bytes : -x->g->tensors[s].bytes;
    res[s] = (uint8_t)v;
}

/* Walk the tasks keeping the resident set: what leaves and comes back. */
static void scan_residency(exp_state *x, uint8_t *res)
{
    const plan *p = x->p;
    for (int32_t i = 0; i < p->n_resident; i++)
        set_res(x, res, p->resident[i].tensor, 1);
    for (int32_t t = 0; t < p->n_tasks; t++) {
        const plan_task *k = &p->tasks[t];
        x->res_at[t] = x->res_bytes;
        if (t == x->bwd_start)
            for (int32_t s = 0; s < x->n; s++)
                x->plan_res[s] = x->saved[s] && res[s];
        const plan_place *pl = plan_task_places(p, k);
        for (uint32_t i = 0; i < k->n_place; i++) {
            int32_t s = pl[i].tensor;
            set_res(x, res, s, 1);
            if (k->kind == TASK_RERUN && x->saved[s] && t < x->first_bwd[s]) {
                x->restore[s] = t;
                x->restore_kind[s] = TASK_RERUN;
            }
        }
        if (k->kind == TASK_SWAP_IN || k->kind == TASK_SWAP_OUT || k->kind == TASK_DROP) {
            int32_t s = k->tensor;
            set_res(x, res, s, k->kind == TASK_SWAP_IN);
            if (!x->saved[s]) {
                if (k->kind != TASK_DROP && x->swapped_other[s] == 0)
                    x->swapped_other[s] = 1;
            } else if (k->kind == TASK_SWAP_IN) {
                if (t < x->first_bwd[s]) {
                    x->restore[s] = t;
                    x->restore_kind[s] = TASK_SWAP_IN;
                }
            } else if (t < x->first_bwd[s]) {
                x->evict[s] = t;
            } else if (t < x->last_bwd[s] && x->moved[s] < 0) {
                x->moved[s] = t;
            }
        }
        const int32_t *fr = plan_task_frees(p, k);
        for (uint32_t i = 0; i < k->n_free; i++) {
            int32_t s = fr[i];
            set_res(x, res, s, 0);
            if (x->saved[s] && t < x->first_bwd[s])
                x->evict[s] = t;
            else if (x->saved[s] && t < x->last_bwd[s] && x->moved[s] < 0)
                x->moved[s] = t;
        }
    }
}

/* Does the plan run the forward and backward operators in the recorded
   order (the one PyTorch runs)? Counts those out of place, with one line. */
static void check_order(exp_state *x)
{
    const plan *p = x->p;
    const graph_profile *g = x->g;
    int32_t *rec_prev = sw_malloc(((size_t)g->n_ops + 1) * sizeof *rec_prev);
    if (!rec_prev)
        return;
    int32_t prev = -1, first = -1;
    for (int32_t i = 0; i < g->n_ops; i++) {
        int32_t o = g->order[i];
        rec_prev[o] = prev;
        if (g->ops[o].phase != GP_UPDATE)
            prev = o;
    }
    prev = -1;
    for (int32_t t = 0; t < p->n_tasks; t++) {
        const plan_task *k = &p->tasks[t];
        if (k->kind != TASK_RUN || g->ops[k->op].phase == GP_UPDATE)
            continue;
        if (rec_prev[k->op] != prev) {
            if (first < 0)
                first = k->op;
            x->n_reordered++;
        }
        prev = k->op;
    }
    sw_free(rec_prev);
    if (first >= 0)
        add_line(x, "the plan runs %d forward and backward operators after another operator "
                    "than in the recorded order (first '%s'): PyTorch runs its own order, so the "
                    "bytes held in the backward pass follow the plan's only roughly",
                 x->n_reordered, g->ops[first].name);
}

/* The plan's decision for each saved storage, and lines for what hooks on
   saved tensors cannot follow. */
static void plan_decisions(exp_state *x)
{
    const graph_profile *g = x->g;
    for (int32_t s = 0; s < x->n; s++) {
        if (x->swapped_other[s]) {
            const graph_tensor *tt = &g->tensors[s];
            add_line(x, "%s '%s' (%lld bytes) is swapped: not expressed (the policy moves saved "
                        "activations only)", graph_kind_name(tt->kind), tt->name,
                     (long long)tt->bytes);
        }
        if (!x->saved[s])
            continue;
        /* the decision is the plan's at the boundary: off the device there, it
           came back by a swap-in (offload) or a re-run (recompute) */
        int32_t r = x->restore[s];
        if (!x->plan_res[s] && r >= 0)
            x->plan_dec[s] = x->restore_kind[s] == TASK_SWAP_IN ? EXP_OFFLOAD : EXP_RECOMPUTE;
        else {
            x->plan_dec[s] = EXP_KEEP;
            if (x->evict[s] >= 0 && x->evict[s] > x->bwd_start)
                add_line(x, "'%s' (%lld bytes) leaves the device in the backward pass before "
                            "its first use (task %d): kept (hooks fetch, they do not evict, "
                            "in the backward pass)", tname(x, s),
                         (long long)g->tensors[s].bytes, x->evict[s]);
            else if (x->evict[s] >= 0)
                add_line(x, "'%s' (%lld bytes) leaves the device and comes back within the "
                            "forward pass (task %d): kept (hooks act between save and use)",
                         tname(x, s), (long long)g->tensors[s].bytes, x->evict[s]);
        }
        if (x->moved[s] >= 0)
            add_line(x, "'%s' (%lld bytes) leaves the device between its backward uses (task "
                        "%d): held from its first to its last backward use", tname(x, s),
                     (long long)g->tensors[s].bytes, x->moved[s]);
        x->dec[s] = x->plan_dec[s];
    }
}

/* The module after whose first backward operator an offloaded storage is
   fetched: that of the last backward run task before the plan's swap-in
   that names a module; "" (backward start) when none does. */
static void prefetch_points(exp_state *x)
{
    const plan *p = x->p;
    const graph_profile *g = x->g;
    for (int32_t s = 0; s < x->n; s++) {
        if (!x->saved[s] || x->plan_dec[s] != EXP_OFFLOAD)
            continue;
        const char *m = "";
        int skipped = 0;
        for (int32_t t = x->restore[s] - 1; t >= 0 && t >= x->bwd_start; t--) {
            const plan_task *k = &p->tasks[t];
            if (k->kind != TASK_RUN || g->ops[k->op].phase != GP_BACKWARD)
                continue;
            if (*x->scope[k->op]) {
                m = x->scope[k->op];
                break;
            }
            skipped++;
        }
        x->prefetch[s] = sw_strdup(m);
        if (skipped)
            add_line(x, "'%s': the plan fetches it after %d backward operator(s) named after no "
                        "module: fetched after the backward of %s instead", tname(x, s), skipped,
                     *m ? m : "(none: at backward start)");
    }
}

/* The smallest module around the producer of s holding all its forward
   uses (checkpointing it frees s), or NULL (no module does). */
static char *region_of(exp_state *x, int32_t s)
{
    const graph_profile *g = x->g;
    int32_t pr = g->tensors[s].producer;
    if (pr < 0 || !*x->scope[pr])
        return NULL;
    char *a = sw_strdup(x->scope[pr]);
    while (a && *a) {
        int ok = 1;
        for (int32_t o = 0; o < g->n_ops && ok; o++) {
            if (g->ops[o].phase != GP_FORWARD)
                continue;
            for (int32_t i = g->acc_off[o]; i < g->acc_off[o + 1] && ok; i++)
                if (g->acc[i] == s && !within(x->scope[o], a))
                    ok = 0;
        }
        if (ok)
            return a;
        char *dot = strrchr(a, '.');
        if (!dot)
            break;
        *dot = 0;
    }
    sw_free(a);
    return NULL;
}

/* Recomputed storages become checkpointed regions (outermost kept); then
   every saved storage inside a region is recomputed with it, and every one
   a region reads from outside is held by its checkpoint. */
static int recompute_regions(exp_state *x)
{
    const graph_profile *g = x->g;
    for (int32_t s = 0; s < x->n; s++) {
        if (!x->saved[s] || x->plan_dec[s] != EXP_RECOMPUTE)
            continue;
        char *a = region_of(x, s);
        if (!a) {
            x->dec[s] = EXP_KEEP;
            add_line(x, "'%s' (%lld bytes) is recomputed in the plan, but no module holds its "
                        "producer and all its forward uses: kept", tname(x, s),
                     (long long)g->tensors[s].bytes);
            continue;
        }
        int dup = 0;
        for (int32_t i = 0; i < x->n_regions && !dup; i++)
            dup = !strcmp(x->regions[i], a);
        if (dup) {
            sw_free(a);
            continue;
        }
        char **nr = sw_realloc(x->regions, (size_t)(x->n_regions + 1) * sizeof *nr);
        if (!nr) {
            sw_free(a);
            return SW_ENOMEM;
        }
        x->regions = nr;
        x->regions[x->n_regions++] = a;
    }
    /* outermost only: a region inside another is recomputed with it */
    uint8_t *inner = sw_calloc((size_t)x->n_regions + 1, 1);
    if (!inner)
        return SW_ENOMEM;
    for (int32_t i = 0; i < x->n_regions; i++)
        for (int32_t j = 0; j < x->n_regions && !inner[i]; j++)
            inner[i] = j != i && within(x->regions[i], x->regions[j]);
    int32_t k = 0;
    for (int32_t i = 0; i < x->n_regions; i++) {
        if (inner[i])
            sw_free(x->regions[i]);
        else
            x->regions[k++] = x->regions[i];
    }
    sw_free(inner);
    x->n_regions = k;
    for (int32_t s = 0; s < x->n; s++) {
        if (!x->saved[s])
            continue;
        int32_t pr = g->tensors[s].producer;
        const char *ms = pr >= 0 ? x->scope[pr] : "";
        for (int32_t r = 0; r < x->n_regions; r++) {
            const char *a = x->regions[r];
            int in_use = 0, out_use = 0;
            for (int32_t o = 0; o < g->n_ops; o++) {
                if (g->ops[o].phase != GP_FORWARD)
                    continue;
                for (int32_t i = g->acc_off[o]; i < g->acc_off[o + 1]; i++)
                    if (g->acc[i] == s && o != pr) {
                        if (within(x->scope[o], a))
                            in_use = 1;
                        else
                            out_use = 1;
                    }
            }
            if (within(ms, a) && !out_use) {
                if (x->dec[s] != EXP_RECOMPUTE)
                    add_line(x, "'%s' (%lld bytes, plan: %s) is recomputed with region %s",
                             tname(x, s), (long long)g->tensors[s].bytes,
                             export_decision_name(x->plan_dec[s]), a);
                x->dec[s] = EXP_RECOMPUTE;
                x->region[s] = r;
            } else if (!within(ms, a) && in_use && x->dec[s] != EXP_KEEP) {
                add_line(x, "'%s' (%lld bytes, plan: %s) is an input of checkpointed region %s, "
                            "which holds it on the device: kept", tname(x, s),
                         (long long)g->tensors[s].bytes, export_decision_name(x->plan_dec[s]), a);
                x->dec[s] = EXP_KEEP;
            }
        }
        if (x->dec[s] == EXP_RECOMPUTE && x->region[s] < 0) {
            /* its own region was nested in one that does not hold all its uses */
            add_line(x, "'%s' (%lld bytes) is recomputed in the plan, but its region is inside "
                        "a larger one it leaves: kept", tname(x, s),
                     (long long)g->tensors[s].bytes);
            x->dec[s] = EXP_KEEP;
        }
    }
    return 0;
}

/* Is s held on the device at the first backward operator under the policy? */
static int policy_resident(const exp_state *x, int32_t s)
{
    return x->dec[s] == EXP_KEEP || (x->dec[s] == EXP_OFFLOAD && !*x->prefetch[s]);
}

static void put_summary(exp_state *x, export_summary *m)
{
    memset(m, 0, sizeof *m);
    m->n_regions = x->n_regions;
    m->n_unexpressed = x->n_lines;
    for (int32_t s = 0; s < x->n; s++) {
        if (!x->saved[s])
            continue;
        int64_t b = x->g->tensors[s].bytes;
        m->n_saved++;
        m->saved_bytes += b;
        m->n_keep += x->dec[s] == EXP_KEEP;
        m->n_offload += x->dec[s] == EXP_OFFLOAD;
        m->n_recompute += x->dec[s] == EXP_RECOMPUTE;
        int pr = x->plan_res[s], po = policy_resident(x, s);
        m->plan_resident_bytes += pr ? b : 0;
        m->policy_resident_bytes += po ? b : 0;
        m->surviving_bytes += !pr && !po ? b : 0;
        m->rounding_bytes += pr != po ? b : 0;
    }
    int64_t grain = 0;
    for (int32_t r = 0; r < x->n_regions; r++) {
        int64_t rb = 0;
        for (int32_t s = 0; s < x->n; s++)
            rb += x->saved[s] && x->dec[s] == EXP_RECOMPUTE && x->region[s] == r
                      ? x->g->tensors[s].bytes : 0;
        grain = SW_MAX(grain, rb);
    }
    for (int32_t s = 0; s < x->n; s++)
        if (x->saved[s] && x->dec[s] == EXP_OFFLOAD)
            grain = SW_MAX(grain, x->g->tensors[s].bytes);
    int64_t moved = 0;
    for (int32_t s = 0; s < x->n; s++)
        if (x->saved[s] && x->dec[s] == EXP_KEEP &&
            (x->moved[s] >= 0 || (x->plan_res[s] && x->evict[s] > x->bwd_start)))
            moved += x->g->tensors[s].bytes;
    /* a storage is released when the last operator reading it starts (the
       plan: when it ends), and a fetch lands within one operator */
    int64_t op_grain = 0;
    for (int32_t o = 0; o < x->g->n_ops; o++) {
        int64_t rb = 0;
        if (x->g->ops[o].phase != GP_BACKWARD)
            continue;
        for (int32_t i = x->g->acc_off[o]; i < x->g->acc_off[o + 1]; i++)
            rb += x->saved[x->g->acc[i]] ? x->g->tensors[x->g->acc[i]].bytes : 0;
        op_grain = SW_MAX(op_grain, rb);
    }
    m->step_rounding_bytes = m->rounding_bytes + grain + moved + op_grain;
    m->n_reordered = x->n_reordered;
    m->plan_saved_bytes = m->saved_bytes - m->plan_resident_bytes;
    m->policy_saved_bytes = m->saved_bytes - m->policy_resident_bytes;
}

static void put_json(exp_state *x, const export_summary *m, const sim_result *sr, sw_buf *b)
{
    const plan *p = x->p;
    const graph_profile *g = x->g;
    sw_buf_puts(b, "{\"format\":\"swapsim-pytorch-policy\",\"version\":1,\"plan\":{\"planner\":");
    sw_buf_put_jstr(b, p->planner ? p->planner : "");
    sw_buf_printf(b, ",\"budget_bytes\":%lld,\"profile\":", (long long)p->budget);
    sw_buf_put_jstr(b, g->name);
    sw_buf_printf(b, ",\"batch\":%lld},\n\"summary\":{\"saved_activations\":%d,\"keep\":%d,"
                  "\"offload\":%d,\"recompute\":%d,\"regions\":%d,\"unexpressed\":%d,"
                  "\"saved_bytes\":%lld,\"plan_resident_bytes\":%lld,"
                  "\"policy_resident_bytes\":%lld,\"plan_saved_bytes\":%lld,"
                  "\"policy_saved_bytes\":%lld,\"surviving_bytes\":%lld,\"survival\":%.6g,"
                  "\"rounding_bytes\":%lld,\"step_rounding_bytes\":%lld,"
                  "\"reordered_ops\":%d},\n\"regions\":[",
                  (long long)g->batch, m->n_saved, m->n_keep, m->n_offload, m->n_recompute,
                  m->n_regions, m->n_unexpressed, (long long)m->saved_bytes,
                  (long long)m->plan_resident_bytes, (long long)m->policy_resident_bytes,
                  (long long)m->plan_saved_bytes, (long long)m->policy_saved_bytes,
                  (long long)m->surviving_bytes,
                  m->plan_saved_bytes ? (double)m->surviving_bytes / (double)m->plan_saved_bytes
                                      : 1.0,
                  (long long)m->rounding_bytes, (long long)m->step_rounding_bytes,
                  m->n_reordered);
    for (int32_t r = 0; r < x->n_regions; r++) {
        if (r)
            sw_buf_putc(b, ',');
        sw_buf_put_jstr(b, x->regions[r]);
    }
    sw_buf_puts(b, "],\n\"tensors\":[");
    int first = 1;
    for (int32_t s = 0; s < x->n; s++) {
        if (!x->saved[s])
            continue;
        int32_t pr = g->tensors[s].producer;
        sw_buf_puts(b, first ? "\n" : ",\n");
        first = 0;
        sw_buf_printf(b, "{\"storage\":%d,\"name\":", s);
        sw_buf_put_jstr(b, g->tensors[s].name);
        sw_buf_puts(b, ",\"scope\":");
        sw_buf_put_jstr(b, pr >= 0 ? x->scope[pr] : "");
        sw_buf_printf(b, ",\"bytes\":%lld,\"plan\":\"%s\",\"decision\":\"%s\","
                      "\"plan_resident\":%s,\"policy_resident\":%s,"
                      "\"plan_resident_bytes_at_first_use\":%lld,\"first_backward_op\":",
                      (long long)g->tensors[s].bytes, export_decision_name(x->plan_dec[s]),
                      export_decision_name(x->dec[s]), x->plan_res[s] ? "true" : "false",
                      policy_resident(x, s) ? "true" : "false",
                      (long long)x->res_at[x->first_bwd[s]]);
        sw_buf_put_jstr(b, g->ops[p->tasks[x->first_bwd[s]].op].name);
        if (x->dec[s] == EXP_OFFLOAD) {
            sw_buf_puts(b, ",\"prefetch_after\":");
            sw_buf_put_jstr(b, x->prefetch[s]);
        }
        if (x->dec[s] == EXP_RECOMPUTE) {
            sw_buf_puts(b, ",\"region\":");
            sw_buf_put_jstr(b, x->regions[x->region[s]]);
        }
        sw_buf_putc(b, '}');
    }
    sw_buf_puts(b, "],\n\"unexpressed\":[");
    if (x->lines.data)
        sw_buf_puts(b, x->lines.data);
    sw_buf_puts(b, "]");
    if (sr)
        sw_buf_printf(b, ",\n\"simulated\":{\"iteration_time_s\":%.9g,\"ideal_time_s\":%.9g,"
                      "\"peak_memory_bytes\":%lld,\"swap_in_bytes\":%lld,"
                      "\"swap_out_bytes\":%lld,\"reruns\":%d,\"device\":",
                      sr->iteration_time_s, sr->ideal_time_s, (long long)sr->peak_memory_bytes,
                      (long long)sr->swap_in_bytes, (long long)sr->swap_out_bytes, sr->reruns);
    if (sr) {
        sw_buf_put_jstr(b, x->g->device.name);
        sw_buf_putc(b, '}');
    }
    sw_buf_puts(b, "}\n");
}

static void state_free(exp_state *x)
{
    sw_free(x->first_bwd);
    sw_free(x->res_at);
    sw_free(x->saved);
    sw_free(x->plan_dec);
    sw_free(x->restore_kind);
    for (int32_t o = 0; x->scope && o < x->g->n_ops; o++)
        sw_free(x->scope[o]);
    sw_free(x->scope);
    for (int32_t s = 0; x->prefetch && s < x->n; s++)
        sw_free(x->prefetch[s]);
    sw_free(x->prefetch);
    for (int32_t r = 0; r < x->n_regions; r++)
        sw_free(x->regions[r]);
    sw_free(x->regions);
    sw_buf_free(&x->lines);
}

int export_pytorch(const plan *p, const sim_result *simulated, sw_buf *out, sw_buf *lines,
                   export_summary *sum, sw_err *err)
{
    exp_state x;
    memset(&x, 0, sizeof x);
    x.p = p;
    x.g = p->prof;
    x.n = x.g->n_tensors;
    x.bwd_start = -1;
    x.raw = lines;
    sw_buf_init(&x.lines);
    size_t n = (size_t)x.n;
    /* one block per element type: int32 arrays, bytes, ints */
    x.first_bwd = sw_malloc(7 * n * sizeof(int32_t) + 1);
    x.saved = sw_calloc(4 * n + 1, 1);
    x.plan_dec = sw_calloc(2 * n + 1, sizeof(int));
    x.restore_kind = sw_calloc(n + 1, 1);
    x.scope = sw_calloc((size_t)x.g->n_ops + 1, sizeof *x.scope);
    x.prefetch = sw_calloc(n + 1, sizeof *x.prefetch);
    x.res_at = sw_calloc((size_t)p->n_tasks + 1, sizeof *x.res_at);
    int rc = SW_ENOMEM;
    if (!x.res_at || !x.first_bwd || !x.saved || !x.plan_dec || !x.restore_kind || !x.scope ||
        !x.prefetch)
        goto done;
    for (size_t i = 0; i < 7 * n; i++)
        x.first_bwd[i] = -1;
    x.last_bwd = x.first_bwd + n;
    x.last_fwd = x.first_bwd + 2 * n;
    x.restore = x.first_bwd + 3 * n;
    x.evict = x.first_bwd + 4 * n;
    x.moved = x.first_bwd + 5 * n;
    x.region = x.first_bwd + 6 * n;
    x.plan_res = x.saved + n;
    x.swapped_other = x.saved + 2 * n;
    uint8_t *res = x.saved + 3 * n;
    x.dec = x.plan_dec + n;
    for (int32_t o = 0; o < x.g->n_ops; o++)
        if (!(x.scope[o] = op_scope(x.g->ops[o].name)))
            goto done;
    scan_uses(&x);
    if (x.bwd_start < 0) {
        rc = sw_fail(err, SW_EINVAL, "profile '%s': no backward operator, so no activation is "
                     "saved for a backward pass (export needs a training iteration)", x.g->name);
        goto done;
    }
    scan_residency(&x, res);
    check_order(&x);
    plan_decisions(&x);
    prefetch_points(&x);
    if ((rc = recompute_regions(&x)))
        goto done;
    export_summary m;
    put_summary(&x, &m);
    put_json(&x, &m, simulated, out);
    if (sum)
        *sum = m;
    rc = 0;
done:
    if (rc == SW_ENOMEM)
        sw_fail(err, SW_ENOMEM, "out of memory exporting the plan");
    state_free(&x);
    return rc;
}
