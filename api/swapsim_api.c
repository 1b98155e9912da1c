/* swapsim_api.c: the JSON-in, JSON-out C interface of libswapsim.so (see
   swapsim_api.h), for the Python package and other languages. */
#include "swapsim_api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/json.h"
#include "../experiments/pipeline.h"
#include "../experiments/sweep.h"
#include "../planners/planner.h"
#include "../profiles/importers.h"
#include "../profiles/models.h"
#include "../profiles/profile_io.h"
#include "../sim/simulate.h"
#include "../sim/verify.h"

int swapsim_api_version(void) { return SWAPSIM_API_VERSION; }

void swapsim_free(void *p) { sw_free(p); }

/* NULL, with *err the message (when err is not NULL) */
static char *fail(char **err, const sw_err *e)
{
    if (err)
        *err = sw_strdup(e->msg[0] ? e->msg : sw_strerror(e->code));
    return NULL;
}

/* b's text handed to the caller (NULL and a message when it ran out of memory) */
static char *take(sw_buf *b, char **err)
{
    if (b->oom || !b->data) {
        sw_buf_free(b);
        sw_err e;
        sw_fail(&e, SW_ENOMEM, "out of memory");
        return fail(err, &e);
    }
    return b->data;
}

static char *profile_text(graph_profile *g, char **err)
{
    sw_buf b;
    sw_buf_init(&b);
    profile_to_json(g, &b, 0);
    graph_free(g);
    return take(&b, err);
}

/* The text of a JSON scalar as a command-line value ("50", "true", "h100"). */
static int scalar_text(const json_value *v, char *buf, size_t n)
{
    switch (v->type) {
    case JSON_STRING: snprintf(buf, n, "%s", v->u.str); return 0;
    case JSON_TRUE: snprintf(buf, n, "true"); return 0;
    case JSON_FALSE: snprintf(buf, n, "false"); return 0;
    case JSON_NUMBER:
        if (v->is_int)
            snprintf(buf, n, "%lld", (long long)v->u.num.i);
        else
            snprintf(buf, n, "%.17g", v->u.num.d);
        return 0;
    default: return -1;
    }
}

/* options (a JSON object, or NULL) into ps and dev ("device"), as
   swapsim model --KEY VALUE and --device do; "k=v,..." into opts_out when
   not NULL (what sweep_make_model takes). */
static int apply_options(const char *options, const char *what, param_set *ps, dev_spec *dev,
                         sw_buf *opts_out, sw_err *e)
{
    if (!options || !*options)
        return 0;
    json_doc *d = json_doc_new();
    const json_value *v;
    if (!d)
        return sw_fail(e, SW_ENOMEM, "out of memory");
    int rc = json_parse(d, options, strlen(options), what, 1, &v, e);
    if (!rc && v->type != JSON_OBJECT)
        rc = sw_fail(e, SW_EINVAL, "%s: expected a JSON object of options", what);
    for (uint32_t i = 0; !rc && i < v->n; i++) {
        char key[64], val[512];
        snprintf(key, sizeof key, "%s", v->u.members[i].key);
        for (char *p = key; *p; p++)
            if (*p == '-')
                *p = '_';
        if (scalar_text(&v->u.members[i].val, val, sizeof val)) {
            rc = sw_fail(e, SW_EINVAL, "%s: option %s: expected a string, number or boolean",
                         what, key);
            break;
        }
        if (opts_out) {
            sw_buf_printf(opts_out, "%s%s=%s", opts_out->len ? "," : "", key, val);
            continue;
        }
        rc = !strcmp(key, "device") ? dev_resolve(val, dev, e) : params_set(ps, key, val, e);
        if (rc)
            sw_err_prefix(e, "%s: ", what);
    }
    json_doc_free(d);
    return rc;
}

char *swapsim_profile_load(const char *path, char **err)
{
    graph_profile *g;
    sw_err e;
    if (!path)
        return fail(err, &(sw_err){SW_EINVAL, "no path"});
    if (profile_read_file(path, &g, &e))
        return fail(err, &e);
    return profile_text(g, err);
}

char *swapsim_model(const char *name, const char *options, char **err)
{
    sw_err e;
    const model_def *m = name ? model_find(name) : NULL;
    if (!m) {
        sw_fail(&e, SW_ENOTFOUND, "unknown model '%s' ('swapsim models' lists them)",
                name ? name : "");
        return fail(err, &e);
    }
    param_set ps;
    dev_spec dev = *dev_find("v100");
    if (params_init(&ps, m->params))
        return fail(err, &(sw_err){SW_ENOMEM, "out of memory"});
    graph_profile *g = NULL;
    int rc = apply_options(options, name, &ps, &dev, NULL, &e);
    if (!rc)
        rc = m->generate(&ps, &dev, &g, &e);
    params_free(&ps);
    return rc ? fail(err, &e) : profile_text(g, err);
}

char *swapsim_import(const char *format, const char *files, const char *options, char **err)
{
    sw_err e;
    const importer *im = format ? importer_find(format) : NULL;
    if (!im) {
        sw_fail(&e, SW_ENOTFOUND, "unknown import format '%s' (pytorch, pipedream, dtr)",
                format ? format : "");
        return fail(err, &e);
    }
    json_doc *d = json_doc_new();
    const json_value *v = NULL;
    int rc = d ? 0 : sw_fail(&e, SW_ENOMEM, "out of memory");
    if (!rc)
        rc = json_parse(d, files ? files : "", files ? strlen(files) : 0, "files", 1, &v, &e);
    const char *paths[16];
    int n = 0;
    if (!rc && (v->type != JSON_ARRAY || v->n < (uint32_t)im->min_files ||
                v->n > (uint32_t)im->max_files || v->n > 16))
        rc = sw_fail(&e, SW_EINVAL, "files: format %s expects %s (a JSON array of paths)",
                     im->name, im->files);
    for (uint32_t i = 0; !rc && i < v->n; i++) {
        if (v->u.items[i].type != JSON_STRING)
            rc = sw_fail(&e, SW_EINVAL, "files: expected paths (strings)");
        else
            paths[n++] = v->u.items[i].u.str;
    }
    param_set ps;
    dev_spec dev = *dev_find("v100");
    graph_profile *g = NULL;
    if (!rc && params_init(&ps, im->params))
        rc = sw_fail(&e, SW_ENOMEM, "out of memory");
    else if (!rc) {
        rc = apply_options(options, im->name, &ps, &dev, NULL, &e);
        if (!rc)
            rc = im->import(paths, n, &ps, &dev, &g, &e);
        params_free(&ps);
    }
    json_doc_free(d);
    return rc ? fail(err, &e) : profile_text(g, err);
}

static int read_profile(const char *text, graph_profile **g, sw_err *e)
{
    if (!text)
        return sw_fail(e, SW_EINVAL, "no profile");
    return profile_read_text(text, strlen(text), "profile", g, e);
}

char *swapsim_stats(const char *profile, char **err)
{
    graph_profile *g;
    sw_err e;
    graph_stats st;
    if (read_profile(profile, &g, &e))
        return fail(err, &e);
    if (graph_compute_stats(g, &st)) {
        graph_free(g);
        return fail(err, &(sw_err){SW_ENOMEM, "out of memory"});
    }
    sw_buf b;
    sw_buf_init(&b);
    sw_buf_puts(&b, "{\"profile\":");
    sw_buf_put_jstr(&b, g->name);
    sw_buf_puts(&b, ",\"device\":");
    sw_buf_put_jstr(&b, g->device.name);
    sw_buf_printf(&b, ",\"batch\":%lld,\"operators\":%d,\"peak_memory_bytes\":%lld,"
                  "\"total_tensor_bytes\":%lld,\"footprint_bytes\":%lld,\"parameter_bytes\":%lld,"
                  "\"device_memory_bytes\":%lld,\"total_compute_s\":",
                  (long long)g->batch, st.operators, (long long)st.peak_memory_bytes,
                  (long long)st.total_tensor_bytes, (long long)st.footprint_bytes,
                  (long long)st.parameter_bytes, (long long)g->device.memory_bytes);
    sw_buf_put_f64(&b, st.total_compute_s);
    sw_buf_puts(&b, "}");
    graph_free(g);
    return take(&b, err);
}

/* The request's fields for run: planner options set from it. */
static int run_request(const graph_profile *g, const char *request, const planner **pl,
                       planner_opts *o, sw_err *e)
{
    json_doc *d = json_doc_new();
    const json_value *v, *set = NULL;
    const char *name = NULL, *memory = NULL;
    int64_t seed = 1;
    double tb = 0;
    int rc = d ? 0 : sw_fail(e, SW_ENOMEM, "out of memory");
    jr r;
    jr_init(&r, "request", e);
    if (!rc)
        rc = json_parse(d, request ? request : "", request ? strlen(request) : 0, "request", 1,
                        &v, e);
    if (!rc)
        rc = jr_str(&r, v, "planner", 1, NULL, &name);
    if (!rc)
        rc = jr_str(&r, v, "memory", 0, NULL, &memory);
    if (!rc)
        rc = jr_i64(&r, v, "seed", 0, 1, 0, INT64_MAX, &seed);
    if (!rc)
        rc = jr_f64_range(&r, v, "time_budget_s", 0, 0, 0, 1e9, &tb);
    if (!rc)
        rc = jr_field(&r, v, "set", JSON_OBJECT, 0, &set);
    if (!rc && !(*pl = planner_find(name)))
        rc = sw_fail(e, SW_ENOTFOUND, "unknown planner '%s' ('swapsim planners')", name);
    if (!rc && planner_opts_init(o, *pl))
        rc = sw_fail(e, SW_ENOMEM, "out of memory");
    else if (!rc) {
        o->seed = (uint64_t)seed;
        o->threads = 1;
        o->time_budget_s = tb;
        rc = planner_resolve_budget(g, memory, &o->memory_budget, e);
        for (uint32_t i = 0; !rc && set && i < set->n; i++) {
            char val[512];
            if (scalar_text(&set->u.members[i].val, val, sizeof val))
                rc = sw_fail(e, SW_EINVAL, "request: set.%s: expected a string, number or "
                             "boolean", set->u.members[i].key);
            else
                rc = params_set(&o->params, set->u.members[i].key, val, e);
        }
        if (rc)
            planner_opts_free(o);
    }
    json_doc_free(d);
    return rc;
}

static void put_run_json(const plan *p, const sim_result *r, sw_buf *b)
{
    const graph_profile *g = p->prof;
    sw_buf_puts(b, "{\"fits\":true,\"profile\":");
    sw_buf_put_jstr(b, g->name);
    sw_buf_puts(b, ",\"device\":");
    sw_buf_put_jstr(b, g->device.name);
    sw_buf_puts(b, ",\"planner\":");
    sw_buf_put_jstr(b, p->planner ? p->planner : "unknown");
    sw_buf_printf(b, ",\"seed\":%llu,\"memory_budget_bytes\":%lld,\"batch\":%lld",
                  (unsigned long long)p->seed, (long long)p->budget, (long long)g->batch);
    const struct {
        const char *k;
        double v;
    } f[] = {{"iteration_time_s", r->iteration_time_s},
             {"ideal_time_s", r->ideal_time_s},
             {"normalized_throughput", r->normalized_throughput},
             {"samples_per_s", r->samples_per_s},
             {"recompute_time_s", r->recompute_time_s},
             {"stall_swap_in_s", r->stall_swap_in_s},
             {"stall_memory_s", r->stall_memory_s},
             {"stall_dependency_s", r->stall_dependency_s},
             {"h2d_busy_s", r->h2d_busy_s},
             {"d2h_busy_s", r->d2h_busy_s},
             {"planning_time_s", p->planning_time_s}};
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
        sw_buf_printf(b, ",\"%s\":", f[i].k);
        sw_buf_put_f64(b, f[i].v);
    }
    sw_buf_printf(b, ",\"peak_memory_bytes\":%lld,\"swap_in_bytes\":%lld,\"swap_out_bytes\":%lld,"
                  "\"drops\":%d,\"reruns\":%d,\"tasks\":%d,\"steady\":%s,\"verified\":true}",
                  (long long)r->peak_memory_bytes, (long long)r->swap_in_bytes,
                  (long long)r->swap_out_bytes, r->drops, r->reruns, p->n_tasks,
                  r->steady ? "true" : "false");
}

char *swapsim_run(const char *profile, const char *request, char **err)
{
    graph_profile *g;
    sw_err e;
    if (read_profile(profile, &g, &e))
        return fail(err, &e);
    const planner *pl = NULL;
    planner_opts o;
    if (run_request(g, request, &pl, &o, &e)) {
        graph_free(g);
        return fail(err, &e);
    }
    plan *p = NULL;
    sw_buf b;
    sw_buf_init(&b);
    sim_result r;
    int rc = pipe_run(pl, &g, &o, 64, &p, &r, NULL, &e); /* p may take g over */
    if (!rc) {
        put_run_json(p, &r, &b);
    } else if (rc != SW_ENOMEM) { /* does not fit, refused, gave up: a result */
        sw_buf_puts(&b, "{\"fits\":false,\"planner\":");
        sw_buf_put_jstr(&b, pl->name);
        sw_buf_printf(&b, ",\"memory_budget_bytes\":%lld,\"message\":",
                      (long long)o.memory_budget);
        char msg[900];
        snprintf(msg, sizeof msg, "planner %s: %.800s", pl->name, e.msg);
        sw_buf_put_jstr(&b, msg);
        sw_buf_putc(&b, '}');
    }
    plan_free(p);
    planner_opts_free(&o);
    graph_free(g);
    if (rc == SW_ENOMEM) {
        sw_buf_free(&b);
        return fail(err, &e);
    }
    return take(&b, err);
}

/* "planners": a string, or an array of names joined by commas into buf. */
static int planners_text(jr *r, const json_value *v, char *buf, size_t n, const char **out)
{
    const json_value *pv = json_get(v, "planners");
    *out = NULL;
    if (!pv)
        return 0;
    if (pv->type == JSON_STRING) {
        *out = pv->u.str;
        return 0;
    }
    if (pv->type != JSON_ARRAY)
        return jr_error(r, pv, "planners", "expected \"all\", a string or an array of names");
    size_t len = 0;
    buf[0] = 0;
    for (uint32_t i = 0; i < pv->n; i++) {
        if (pv->u.items[i].type != JSON_STRING)
            return jr_error(r, &pv->u.items[i], "planners", "expected a planner's name");
        int w = snprintf(buf + len, n - len, "%s%s", i ? "," : "", pv->u.items[i].u.str);
        if (w < 0 || (size_t)w >= n - len)
            return jr_error(r, pv, "planners", "too many planners");
        len += (size_t)w;
    }
    *out = buf;
    return 0;
}

char *swapsim_sweep(const char *profile, const char *request, char **err)
{
    sw_err e;
    json_doc *d = json_doc_new();
    const json_value *v = NULL, *mopts = NULL;
    const char *planners = NULL, *memory = NULL, *fit_tol = "0.01x", *batch = NULL,
               *model = NULL;
    char pbuf[1024];
    int64_t seed = 1;
    double tb = 5;
    int fit = 0;
    jr r;
    jr_init(&r, "request", &e);
    int rc = d ? 0 : sw_fail(&e, SW_ENOMEM, "out of memory");
    if (!rc)
        rc = json_parse(d, request ? request : "{}", request ? strlen(request) : 2, "request", 1,
                        &v, &e);
    if (!rc && v->type != JSON_OBJECT)
        rc = sw_fail(&e, SW_EINVAL, "request: expected a JSON object");
    if (!rc)
        rc = planners_text(&r, v, pbuf, sizeof pbuf, &planners);
    if (!rc)
        rc = jr_str(&r, v, "memory", 0, NULL, &memory);
    if (!rc)
        rc = jr_bool(&r, v, "fit", 0, 0, &fit);
    if (!rc)
        rc = jr_str(&r, v, "fit_tol", 0, "0.01x", &fit_tol);
    if (!rc)
        rc = jr_str(&r, v, "batch", 0, NULL, &batch);
    if (!rc)
        rc = jr_str(&r, v, "model", 0, NULL, &model);
    if (!rc)
        rc = jr_field(&r, v, "model_options", JSON_OBJECT, 0, &mopts);
    if (!rc)
        rc = jr_i64(&r, v, "seed", 0, 1, 0, INT64_MAX, &seed);
    if (!rc)
        rc = jr_f64_range(&r, v, "time_budget_s", 0, 5, 0, 1e9, &tb);
    if (!rc && batch && (!model || profile))
        rc = sw_fail(&e, SW_EINVAL, "request: \"batch\" needs \"model\" and no profile: a "
                     "profile (a recorded trace above all) has one batch");
    if (!rc && !batch && !profile)
        rc = sw_fail(&e, SW_EINVAL, "no profile (or \"model\" with \"batch\")");
    sweep s;
    memset(&s, 0, sizeof s);
    s.seed = (uint64_t)seed;
    s.time_budget_s = tb;
    s.threads = 1;
    graph_profile *g = NULL;
    sw_buf mo;
    sw_buf_init(&mo);
    if (!rc && batch) {
        sw_buf text;
        sw_buf_init(&text);
        if (mopts) { /* the options as JSON text again, then as k=v,... */
            sw_buf_putc(&text, '{');
            for (uint32_t i = 0; i < mopts->n; i++) {
                char val[512];
                if (scalar_text(&mopts->u.members[i].val, val, sizeof val))
                    continue;
                sw_buf_puts(&text, i ? "," : "");
                sw_buf_put_jstr(&text, mopts->u.members[i].key);
                sw_buf_putc(&text, ':');
                sw_buf_put_jstr(&text, val);
            }
            sw_buf_putc(&text, '}');
        }
        rc = apply_options(text.data, model, NULL, NULL, &mo, &e);
        sw_buf_free(&text);
        s.model = model;
        s.model_opts = mo.data;
        if (!rc && strstr(mo.data ? mo.data : "", "batch="))
            rc = sw_fail(&e, SW_EINVAL, "request: model_options.batch and batch together: give "
                         "the batches in \"batch\"");
        if (!rc)
            rc = sweep_make_model(&s, strtoll(batch, NULL, 10), &g, &e);
    } else if (!rc) {
        rc = read_profile(profile, &g, &e);
    }
    s.g = g;
    if (!rc)
        rc = sweep_setup(&s, planners, memory, fit ? fit_tol : NULL, batch, &e);
    if (!rc)
        rc = sweep_run(&s, sweep_eval_local, &s, &e);
    sw_buf b;
    sw_buf_init(&b);
    if (!rc)
        sweep_json(&s, &b);
    sweep_free(&s);
    graph_free(g);
    sw_buf_free(&mo);
    json_doc_free(d);
    if (rc) {
        sw_buf_free(&b);
        return fail(err, &e);
    }
    return take(&b, err);
}
