/* plan_io.c: the plan JSON reader and writer. */
#include "plan_io.h"
#include "../common/limits.h"

#include <stdio.h>
#include <string.h>

#include "../common/json.h"
#include "../profiles/profile_io.h"

#define PLAN_FORMAT "swapsim-plan"
#define PLAN_VERSION 1

static void put_place(const plan *p, const plan_place *pl, sw_buf *b)
{
    sw_buf_puts(b, "{\"tensor\":");
    sw_buf_put_i64(b, pl->tensor);
    if (p->mem_kind == MEM_POOL) {
        sw_buf_puts(b, ",\"class\":");
        sw_buf_put_i64(b, pl->cls);
        sw_buf_puts(b, ",\"object\":");
        sw_buf_put_i64(b, pl->obj);
    } else {
        sw_buf_puts(b, ",\"offset\":");
        sw_buf_put_i64(b, pl->offset);
    }
    sw_buf_putc(b, '}');
}

static void put_list(sw_buf *b, const char *key, const int32_t *v, uint32_t n)
{
    sw_buf_putc(b, ',');
    sw_buf_put_jstr(b, key);
    sw_buf_puts(b, ":[");
    for (uint32_t i = 0; i < n; i++) {
        if (i)
            sw_buf_putc(b, ',');
        sw_buf_put_i64(b, v[i]);
    }
    sw_buf_putc(b, ']');
}

void plan_to_json(const plan *p, sw_buf *b)
{
    sw_buf_printf(b, "{\n  \"format\":\"%s\",\n  \"version\":%d,\n  \"planner\":{\"name\":",
                  PLAN_FORMAT, PLAN_VERSION);
    sw_buf_put_jstr(b, p->planner ? p->planner : "unknown");
    sw_buf_puts(b, ",\"seed\":");
    sw_buf_put_i64(b, (int64_t)p->seed);
    sw_buf_puts(b, ",\"options\":");
    sw_buf_puts(b, p->options_json ? p->options_json : "{}");
    /* planning time is a measurement, not part of the plan: left out so the
       same inputs and seed give the same bytes */
    if (p->notes) {
        sw_buf_puts(b, ",\"notes\":");
        sw_buf_put_jstr(b, p->notes);
    }
    if (p->solver_status) {
        sw_buf_puts(b, ",\"solver\":{\"status\":");
        sw_buf_put_jstr(b, p->solver_status);
        sw_buf_puts(b, ",\"objective_s\":");
        sw_buf_put_f64(b, p->solver_objective_s);
        sw_buf_puts(b, ",\"bound_s\":");
        sw_buf_put_f64(b, p->solver_bound_s);
        sw_buf_puts(b, ",\"gap\":");
        sw_buf_put_f64(b, p->solver_gap);
        sw_buf_putc(b, '}');
    }
    sw_buf_puts(b, "},\n  \"memory\":{\"model\":");
    sw_buf_puts(b, p->mem_kind == MEM_POOL ? "\"pool\"" : "\"address\"");
    sw_buf_puts(b, ",\"budget_bytes\":");
    sw_buf_put_i64(b, p->budget);
    sw_buf_puts(b, ",\"workspace_reserve_bytes\":");
    sw_buf_put_i64(b, p->workspace_reserve);
    if (p->mem_kind == MEM_POOL) {
        sw_buf_puts(b, ",\"classes\":[");
        for (int32_t c = 0; c < p->n_classes; c++) {
            sw_buf_puts(b, c ? ",{\"size\":" : "{\"size\":");
            sw_buf_put_i64(b, p->classes[c].size);
            sw_buf_puts(b, ",\"count\":");
            sw_buf_put_i64(b, p->classes[c].count);
            sw_buf_putc(b, '}');
        }
        sw_buf_putc(b, ']');
    } else {
        sw_buf_puts(b, ",\"policy\":");
        sw_buf_put_jstr(b, p->policy);
        sw_buf_puts(b, ",\"capacity_bytes\":");
        sw_buf_put_i64(b, p->capacity);
    }
    sw_buf_puts(b, "},\n  \"resident_at_start\":[");
    for (int32_t i = 0; i < p->n_resident; i++) {
        if (i)
            sw_buf_putc(b, ',');
        put_place(p, &p->resident[i], b);
    }
    sw_buf_puts(b, "],\n  \"tasks\":[");
    for (int32_t t = 0; t < p->n_tasks; t++) {
        const plan_task *x = &p->tasks[t];
        sw_buf_puts(b, t ? ",\n    {\"id\":" : "\n    {\"id\":");
        sw_buf_put_i64(b, t);
        sw_buf_puts(b, ",\"kind\":\"");
        sw_buf_puts(b, plan_task_kind_name(x->kind));
        sw_buf_puts(b, "\",\"stream\":\"");
        sw_buf_puts(b, plan_stream_name(plan_task_stream(x->kind)));
        sw_buf_putc(b, '"');
        if (x->kind <= TASK_RERUN) {
            sw_buf_puts(b, ",\"op\":");
            sw_buf_put_i64(b, x->op);
        } else {
            sw_buf_puts(b, ",\"tensor\":");
            sw_buf_put_i64(b, x->tensor);
        }
        if (x->n_place) {
            sw_buf_puts(b, ",\"place\":[");
            for (uint32_t k = 0; k < x->n_place; k++) {
                if (k)
                    sw_buf_putc(b, ',');
                put_place(p, &p->places[x->place_at + k], b);
            }
            sw_buf_putc(b, ']');
        }
        if (x->n_free)
            put_list(b, "free", plan_task_frees(p, x), x->n_free);
        if (x->n_dep)
            put_list(b, "deps", plan_task_deps(p, x), x->n_dep);
        if (x->n_pdep)
            put_list(b, "prev_deps", plan_task_pdeps(p, x), x->n_pdep);
        sw_buf_putc(b, '}');
    }
    sw_buf_puts(b, "\n  ],\n  \"profile\":");
    profile_to_json(p->prof, b, 0);
    sw_buf_puts(b, "\n}\n");
}

int plan_write_file(const plan *p, const char *path, sw_err *err)
{
    sw_buf b;
    sw_buf_init(&b);
    plan_to_json(p, &b);
    int rc = sw_buf_write_file(&b, path, err);
    sw_buf_free(&b);
    return rc;
}

/* ---- reader ---- */

static int read_place(jr *r, const json_value *v, const plan *p, plan_place *pl)
{
    int64_t t, c = -1, o = -1, off = -1;
    int rc;
    if ((rc = jr_i64(r, v, "tensor", 1, 0, 0, p->prof->n_tensors - 1, &t)))
        return rc;
    /* a storage of 0 bytes takes no memory: planners leave it unplaced (-1) */
    int64_t lo = p->prof->tensors[t].bytes == 0 ? -1 : 0;
    if (p->mem_kind == MEM_POOL) {
        if ((rc = jr_i64(r, v, "class", 1, 0, lo, INT32_MAX, &c)) ||
            (rc = jr_i64(r, v, "object", 1, 0, lo, INT32_MAX, &o)))
            return rc;
    } else if ((rc = jr_i64(r, v, "offset", 1, 0, lo, SW_MAX_TOTAL_BYTES, &off))) {
        return rc;
    }
    pl->tensor = (int32_t)t;
    pl->cls = (int32_t)c;
    pl->obj = (int32_t)o;
    pl->offset = off;
    plan_place_resolve(p, pl);
    return 0;
}

static int read_id_list(jr *r, const json_value *obj, const char *key, int64_t max, int32_t **out,
                        int *n, const char *what)
{
    const json_value *a;
    *out = NULL;
    *n = 0;
    int rc = jr_field(r, obj, key, JSON_ARRAY, 0, &a);
    if (rc || !a || !a->n)
        return rc;
    int32_t *v = sw_malloc(a->n * sizeof *v);
    if (!v)
        return sw_fail(r->err, SW_ENOMEM, "%s: out of memory", r->file);
    size_t s = jr_push_key(r, key);
    for (uint32_t i = 0; i < a->n; i++) {
        size_t s2 = jr_push_idx(r, i);
        int64_t x;
        rc = jr_as_i64(r, &a->u.items[i], 0, INT32_MAX, &x);
        if (!rc && x > max)
            rc = jr_error(r, &a->u.items[i], NULL, "dangling %s id %lld (expected an id below "
                          "%lld)", what, (long long)x, (long long)max + 1);
        jr_pop(r, s2);
        if (rc) {
            sw_free(v);
            return rc;
        }
        v[i] = (int32_t)x;
    }
    jr_pop(r, s);
    *out = v;
    *n = (int)a->n;
    return 0;
}

static void options_text(const json_value *v, sw_buf *b)
{
    switch (v->type) {
    case JSON_OBJECT:
        sw_buf_putc(b, '{');
        for (uint32_t i = 0; i < v->n; i++) {
            if (i)
                sw_buf_putc(b, ',');
            sw_buf_put_jstr(b, v->u.members[i].key);
            sw_buf_putc(b, ':');
            options_text(&v->u.members[i].val, b);
        }
        sw_buf_putc(b, '}');
        break;
    case JSON_ARRAY:
        sw_buf_putc(b, '[');
        for (uint32_t i = 0; i < v->n; i++) {
            if (i)
                sw_buf_putc(b, ',');
            options_text(&v->u.items[i], b);
        }
        sw_buf_putc(b, ']');
        break;
    case JSON_STRING: sw_buf_put_jstr(b, v->u.str); break;
    case JSON_NUMBER:
        if (v->is_int)
            sw_buf_put_i64(b, v->u.num.i);
        else
            sw_buf_put_f64(b, v->u.num.d);
        break;
    case JSON_TRUE: sw_buf_puts(b, "true"); break;
    case JSON_FALSE: sw_buf_puts(b, "false"); break;
    default: sw_buf_puts(b, "null");
    }
}

/* The "planner" object (metadata: name, seed, planning time, options, notes,
   the solver's status) into p. */
static int read_planner_meta(jr *r, const json_value *plv, plan *p)
{
    const char *pname = "unknown";
    int64_t seed = 0;
    double pt = 0;
    const json_value *opts = NULL;
    const char *notes = NULL, *sstatus = NULL;
    double sobj = 0, sbound = 0, sgap = 0;
    int rc;
    if (plv) {
        size_t s = jr_push_key(r, "planner");
        if ((rc = jr_str(r, plv, "name", 0, "unknown", &pname)) ||
            (rc = jr_i64(r, plv, "seed", 0, 0, 0, INT64_MAX, &seed)) ||
            (rc = jr_f64(r, plv, "planning_time_s", 0, 0, 0, &pt)) ||
            (rc = jr_field(r, plv, "options", JSON_OBJECT, 0, &opts)) ||
            (rc = jr_str(r, plv, "notes", 0, NULL, &notes)))
            return rc;
        const json_value *sv = NULL;
        if ((rc = jr_field(r, plv, "solver", JSON_OBJECT, 0, &sv)))
            return rc;
        if (sv) {
            size_t s2 = jr_push_key(r, "solver");
            if ((rc = jr_str(r, sv, "status", 1, NULL, &sstatus)) ||
                (rc = jr_f64(r, sv, "objective_s", 1, 0, 0, &sobj)) ||
                (rc = jr_f64(r, sv, "bound_s", 1, 0, 0, &sbound)) ||
                (rc = jr_f64_range(r, sv, "gap", 1, 0, 0, 1, &sgap)))
                return rc;
            jr_pop(r, s2);
        }
        jr_pop(r, s);
    }
    sw_buf ob;
    sw_buf_init(&ob);
    if (opts)
        options_text(opts, &ob);
    rc = ob.oom ? SW_ENOMEM : plan_set_meta(p, pname, (uint64_t)seed, opts ? ob.data : "{}");
    sw_buf_free(&ob);
    if (rc || plan_set_notes(p, notes) || plan_set_solver(p, sstatus, sobj, sbound, sgap))
        return sw_fail(r->err, SW_ENOMEM, "%s: out of memory", r->file);
    p->planning_time_s = pt;
    return 0;
}

/* The size classes of a pool memory ("classes": [{size, count}...]) into p. */
static int read_pool_classes(jr *r, const json_value *mv, plan *p)
{
    const json_value *cv;
    int rc;
    if ((rc = jr_field(r, mv, "classes", JSON_ARRAY, 1, &cv)))
        return rc;
    int64_t *sizes = sw_malloc((cv->n + 1) * sizeof *sizes);
    int32_t *counts = sw_malloc((cv->n + 1) * sizeof *counts);
    if (!sizes || !counts) {
        sw_free(sizes);
        sw_free(counts);
        return sw_fail(r->err, SW_ENOMEM, "%s: out of memory", r->file);
    }
    size_t s1 = jr_push_key(r, "classes");
    int64_t pool_bytes = 0;
    for (uint32_t i = 0; i < cv->n && !rc; i++) {
        size_t s2 = jr_push_idx(r, i);
        int64_t c = 0;
        rc = jr_i64(r, &cv->u.items[i], "size", 1, 0, 1, SW_MAX_TENSOR_BYTES, &sizes[i]);
        if (!rc)
            rc = jr_i64(r, &cv->u.items[i], "count", 1, 0, 0, INT32_MAX, &c);
        /* sizes[i] <= 2^50 and the sum so far <= 2^62: compare by division */
        if (!rc && c > (SW_MAX_TOTAL_BYTES - pool_bytes) / sizes[i])
            rc = jr_error(r, &cv->u.items[i], NULL, "the classes declare over 2^62 bytes "
                          "in all (the limit of a plan's memory)");
        if (!rc)
            pool_bytes += c * sizes[i];
        counts[i] = (int32_t)c;
        jr_pop(r, s2);
    }
    jr_pop(r, s1);
    if (!rc && plan_set_pool(p, sizes, counts, (int)cv->n))
        rc = sw_fail(r->err, SW_ENOMEM, "%s: out of memory", r->file);
    sw_free(sizes);
    sw_free(counts);
    return rc;
}

/* The "memory" object: budget, reserve and the model (pool or address). */
static int read_memory(jr *r, const json_value *mv, plan *p)
{
    size_t s = jr_push_key(r, "memory");
    const char *model;
    int rc;
    if ((rc = jr_str(r, mv, "model", 1, NULL, &model)) ||
        (rc = jr_i64(r, mv, "budget_bytes", 1, 0, 0, SW_MAX_TOTAL_BYTES, &p->budget)) ||
        (rc = jr_i64(r, mv, "workspace_reserve_bytes", 0, 0, 0, SW_MAX_TENSOR_BYTES, &p->workspace_reserve)))
        return rc;
    if (!strcmp(model, "pool")) {
        if ((rc = read_pool_classes(r, mv, p)))
            return rc;
    } else if (!strcmp(model, "address")) {
        const char *policy;
        p->mem_kind = MEM_ADDRESS;
        if ((rc = jr_i64(r, mv, "capacity_bytes", 1, 0, 0, SW_MAX_TOTAL_BYTES, &p->capacity)) ||
            (rc = jr_str(r, mv, "policy", 0, "first-fit", &policy)))
            return rc;
        snprintf(p->policy, sizeof p->policy, "%s", policy);
    } else {
        return jr_error(r, json_get(mv, "model"), NULL, "unknown memory model '%s' (expected "
                        "pool or address)", model);
    }
    jr_pop(r, s);
    return 0;
}

/* The resident set ("resident_at_start", may be NULL) into p. */
static int read_resident(jr *r, const json_value *rv, plan *p)
{
    if (!rv || !rv->n)
        return 0;
    p->resident = sw_malloc(rv->n * sizeof *p->resident);
    if (!p->resident)
        return sw_fail(r->err, SW_ENOMEM, "%s: out of memory", r->file);
    size_t s = jr_push_key(r, "resident_at_start");
    for (uint32_t i = 0; i < rv->n; i++) {
        size_t s2 = jr_push_idx(r, i);
        int rc = read_place(r, &rv->u.items[i], p, &p->resident[i]);
        jr_pop(r, s2);
        if (rc)
            return rc;
        p->n_resident++;
    }
    jr_pop(r, s);
    return 0;
}

/* A task's kind (checked against its stream, if given) and its op or tensor. */
static int read_task_head(jr *r, const json_value *t, uint32_t i, const plan *p, int *kind,
                          int64_t *op, int64_t *tensor)
{
    const char *kind_s, *stream_s;
    int64_t id;
    int rc;
    if ((rc = jr_i64(r, t, "id", 0, i, 0, INT32_MAX, &id)))
        return rc;
    if (id != (int64_t)i)
        return jr_error(r, json_get(t, "id"), NULL, "expected id %u (ids are positions in the "
                        "tasks array), got %lld", i, (long long)id);
    if ((rc = jr_str(r, t, "kind", 1, NULL, &kind_s)))
        return rc;
    *kind = plan_task_kind_parse(kind_s);
    if (*kind < 0)
        return jr_error(r, json_get(t, "kind"), NULL, "unknown task kind '%s' (expected run, "
                        "rerun, swap_in, swap_out or drop)", kind_s);
    if ((rc = jr_str(r, t, "stream", 0, NULL, &stream_s)))
        return rc;
    if (stream_s && strcmp(stream_s, plan_stream_name(plan_task_stream(*kind))) != 0)
        return jr_error(r, json_get(t, "stream"), NULL, "a %s task runs on the %s stream, not "
                        "'%s'", kind_s, plan_stream_name(plan_task_stream(*kind)), stream_s);
    if (*kind <= TASK_RERUN)
        return jr_i64(r, t, "op", 1, -1, 0, p->prof->n_ops - 1, op);
    return jr_i64(r, t, "tensor", 1, -1, 0, p->prof->n_tensors - 1, tensor);
}

/* Task i of the "tasks" array tv, appended to p. */
static int read_task(jr *r, const json_value *tv, uint32_t i, plan *p)
{
    const json_value *t = &tv->u.items[i];
    int kind = 0;
    int64_t op = -1, tensor = -1;
    int rc;
    if ((rc = read_task_head(r, t, i, p, &kind, &op, &tensor)))
        return rc;
    const json_value *plist;
    if ((rc = jr_field(r, t, "place", JSON_ARRAY, 0, &plist)))
        return rc;
    plan_place *pls = NULL;
    int npl = plist ? (int)plist->n : 0;
    if (npl) {
        pls = sw_malloc((size_t)npl * sizeof *pls);
        if (!pls)
            return sw_fail(r->err, SW_ENOMEM, "%s: out of memory", r->file);
        size_t s3 = jr_push_key(r, "place");
        for (int k = 0; k < npl && !rc; k++) {
            size_t s4 = jr_push_idx(r, (size_t)k);
            rc = read_place(r, &plist->u.items[k], p, &pls[k]);
            jr_pop(r, s4);
        }
        jr_pop(r, s3);
        if (rc) {
            sw_free(pls);
            return rc;
        }
    }
    int32_t *fr = NULL, *dp = NULL, *pdp = NULL;
    int nfr = 0, ndp = 0, npdp = 0;
    if ((rc = read_id_list(r, t, "free", p->prof->n_tensors - 1, &fr, &nfr, "tensor")) ||
        (rc = read_id_list(r, t, "deps", (int64_t)tv->n - 1, &dp, &ndp, "task")) ||
        (rc = read_id_list(r, t, "prev_deps", (int64_t)tv->n - 1, &pdp, &npdp, "task"))) {
        sw_free(pls);
        sw_free(fr);
        sw_free(dp);
        return rc;
    }
    int32_t got = plan_add_task(p, kind, (int32_t)op, (int32_t)tensor, pls, npl, fr, nfr, dp,
                                ndp, pdp, npdp);
    sw_free(pls);
    sw_free(fr);
    sw_free(dp);
    sw_free(pdp);
    if (got < 0)
        return sw_fail(r->err, SW_ENOMEM, "%s: out of memory", r->file);
    return 0;
}

static int read_plan(jr *r, const json_value *root, plan **out)
{
    *out = NULL;
    if (root->type != JSON_OBJECT)
        return jr_error(r, root, NULL, "expected a plan object");
    const char *fmt;
    int64_t version;
    int rc;
    if ((rc = jr_str(r, root, "format", 1, NULL, &fmt)))
        return rc;
    if (strcmp(fmt, PLAN_FORMAT) != 0)
        return jr_error(r, json_get(root, "format"), NULL, "expected format \"%s\", got \"%s\"",
                        PLAN_FORMAT, fmt);
    if ((rc = jr_i64(r, root, "version", 0, PLAN_VERSION, 1, PLAN_VERSION, &version)))
        return rc;
    const json_value *pv, *mv, *rv, *tv, *plv;
    if ((rc = jr_field(r, root, "profile", JSON_OBJECT, 1, &pv)) ||
        (rc = jr_field(r, root, "memory", JSON_OBJECT, 1, &mv)) ||
        (rc = jr_field(r, root, "resident_at_start", JSON_ARRAY, 0, &rv)) ||
        (rc = jr_field(r, root, "tasks", JSON_ARRAY, 1, &tv)) ||
        (rc = jr_field(r, root, "planner", JSON_OBJECT, 0, &plv)))
        return rc;
    graph_profile *g;
    size_t s = jr_push_key(r, "profile");
    rc = profile_from_json(r, pv, &g);
    jr_pop(r, s);
    if (rc)
        return rc;
    plan *p = plan_new(g, 1);
    if (!p) {
        graph_free(g);
        return sw_fail(r->err, SW_ENOMEM, "%s: out of memory", r->file);
    }
    if ((rc = read_planner_meta(r, plv, p)) || (rc = read_memory(r, mv, p)) ||
        (rc = read_resident(r, rv, p)))
        goto fail;
    s = jr_push_key(r, "tasks");
    for (uint32_t i = 0; i < tv->n; i++) {
        size_t s2 = jr_push_idx(r, i);
        if ((rc = read_task(r, tv, i, p)))
            goto fail;
        jr_pop(r, s2);
    }
    jr_pop(r, s);
    *out = p;
    return 0;
fail:
    plan_free(p);
    return rc;
}

static int plan_reader(jr *r, const json_value *root, void *out)
{
    return read_plan(r, root, (plan **)out);
}

int plan_read_text(const char *text, size_t len, const char *file, plan **out, sw_err *err)
{
    return jr_read_text(text, len, file, plan_reader, out, err);
}

int plan_read_file(const char *path, plan **out, sw_err *err)
{
    return jr_read_file(path, plan_reader, out, err);
}
