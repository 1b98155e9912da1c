/* profile_io.c: the profile JSON reader and writer. */
#include "profile_io.h"
#include "../common/limits.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define PROFILE_FORMAT "swapsim-profile"
#define PROFILE_VERSION 1

/* The device's fields, without braces (dev_to_json, dev_file_to_json). */
static void dev_fields(const dev_spec *d, sw_buf *b, const char *sep)
{
    sw_buf_puts(b, "\"name\":");
    sw_buf_put_jstr(b, d->name);
    sw_buf_printf(b, ",%s\"description\":", sep);
    sw_buf_put_jstr(b, d->desc);
    sw_buf_printf(b, ",%s\"memory_bytes\":", sep);
    sw_buf_put_i64(b, d->memory_bytes);
    struct {
        const char *k;
        double v;
    } f[] = {{"h2d_bytes_per_s", d->h2d_bw},          {"d2h_bytes_per_s", d->d2h_bw},
             {"duplex_bytes_per_s", d->duplex_bw},    {"copy_latency_s", d->copy_latency_s},
             {"peak_flops_fp32", d->peak_flops_fp32}, {"peak_flops_fp16", d->peak_flops_fp16},
             {"memory_bytes_per_s", d->mem_bw},       {"launch_overhead_s", d->launch_overhead_s}};
    for (size_t i = 0; i < SW_ARRAY_LEN(f); i++) {
        sw_buf_printf(b, ",%s\"%s\":", sep, f[i].k);
        sw_buf_put_f64(b, f[i].v);
    }
}

void dev_to_json(const dev_spec *d, sw_buf *b)
{
    sw_buf_putc(b, '{');
    dev_fields(d, b, "");
    sw_buf_putc(b, '}');
}

int dev_from_json(jr *r, const json_value *v, dev_spec *out)
{
    if (v->type == JSON_STRING) {
        const dev_spec *d = dev_find(v->u.str);
        if (!d)
            return jr_error(r, v, NULL, "unknown device '%s' (expected a built-in name such as "
                            "v100, or an object)", v->u.str);
        *out = *d;
        return 0;
    }
    if (v->type != JSON_OBJECT)
        return jr_error(r, v, NULL, "expected a device object or a built-in device name");
    const char *name, *desc;
    int rc = jr_str(r, v, "name", 1, NULL, &name);
    if (rc)
        return rc;
    const dev_spec *base = dev_find(name);
    dev_spec d;
    memset(&d, 0, sizeof d);
    if (base)
        d = *base;
    snprintf(d.name, sizeof d.name, "%s", name);
    int req = base == NULL;
    if ((rc = jr_str(r, v, "description", 0, base ? base->desc : "", &desc)))
        return rc;
    snprintf(d.desc, sizeof d.desc, "%s", desc);
    if ((rc = jr_i64(r, v, "memory_bytes", req, d.memory_bytes, 1, SW_MAX_TENSOR_BYTES,
                     &d.memory_bytes)) ||
        (rc = jr_f64_range(r, v, "h2d_bytes_per_s", req, d.h2d_bw, SW_MIN_BANDWIDTH,
                           SW_MAX_BANDWIDTH, &d.h2d_bw)) ||
        (rc = jr_f64_range(r, v, "d2h_bytes_per_s", req, d.d2h_bw, SW_MIN_BANDWIDTH,
                           SW_MAX_BANDWIDTH, &d.d2h_bw)) ||
        (rc = jr_f64_range(r, v, "duplex_bytes_per_s", req, d.duplex_bw, SW_MIN_BANDWIDTH,
                           SW_MAX_BANDWIDTH, &d.duplex_bw)) ||
        (rc = jr_f64_range(r, v, "copy_latency_s", 0, d.copy_latency_s, 0, SW_MAX_OP_SECONDS,
                           &d.copy_latency_s)) ||
        (rc = jr_f64_range(r, v, "peak_flops_fp32", 0, d.peak_flops_fp32, 0, 1e21,
                           &d.peak_flops_fp32)) ||
        (rc = jr_f64_range(r, v, "peak_flops_fp16", 0, d.peak_flops_fp16, 0, 1e21,
                           &d.peak_flops_fp16)) ||
        (rc = jr_f64_range(r, v, "memory_bytes_per_s", 0, d.mem_bw, 0, SW_MAX_BANDWIDTH,
                           &d.mem_bw)) ||
        (rc = jr_f64_range(r, v, "launch_overhead_s", 0, d.launch_overhead_s, 0,
                           SW_MAX_OP_SECONDS, &d.launch_overhead_s)))
        return rc;
    *out = d;
    return 0;
}

/* Device files (docs/devices.md). */
#define DEVICE_FORMAT "swapsim-device"
#define DEVICE_VERSION 1

static const char *const device_keys[] = {
    "name", "description", "memory_bytes", "h2d_bytes_per_s", "d2h_bytes_per_s",
    "duplex_bytes_per_s", "copy_latency_s", "peak_flops_fp32", "peak_flops_fp16",
    "memory_bytes_per_s", "launch_overhead_s"};

static int is_device_file_key(const char *k)
{
    if (!strcmp(k, "format") || !strcmp(k, "version") || !strcmp(k, "calibration"))
        return 1;
    for (size_t i = 0; i < SW_ARRAY_LEN(device_keys); i++)
        if (!strcmp(k, device_keys[i]))
            return 1;
    return 0;
}

int dev_file_from_json(jr *r, const json_value *v, dev_spec *out)
{
    if (v->type == JSON_ARRAY)
        return jr_error(r, v, NULL, "expected one device object, got an array ('swapsim devices "
                        "--json' prints an array of them: a device file holds one)");
    if (v->type != JSON_OBJECT)
        return jr_error(r, v, NULL, "expected a device object");
    for (uint32_t i = 0; i < v->n; i++) {
        const json_member *m = &v->u.members[i];
        if (!is_device_file_key(m->key))
            return jr_error(r, &m->val, m->key, "unknown field (expected format, version, "
                            "calibration, name, description, memory_bytes, h2d_bytes_per_s, "
                            "d2h_bytes_per_s, duplex_bytes_per_s, copy_latency_s, "
                            "peak_flops_fp32, peak_flops_fp16, memory_bytes_per_s or "
                            "launch_overhead_s)");
    }
    const char *fmt, *name;
    int64_t version;
    const json_value *cal;
    int rc;
    if ((rc = jr_str(r, v, "format", 0, DEVICE_FORMAT, &fmt)))
        return rc;
    if (strcmp(fmt, DEVICE_FORMAT) != 0)
        return jr_error(r, json_get(v, "format"), "format", "expected \"%s\", got \"%s\"",
                        DEVICE_FORMAT, fmt);
    if ((rc = jr_i64(r, v, "version", 0, DEVICE_VERSION, 1, DEVICE_VERSION, &version)) ||
        (rc = jr_field(r, v, "calibration", JSON_OBJECT, 0, &cal)) ||
        (rc = jr_str(r, v, "name", 1, NULL, &name)))
        return rc;
    if (!name[0] || strlen(name) >= sizeof out->name)
        return jr_error(r, json_get(v, "name"), "name", "expected a name of 1 to %d characters, "
                        "got %zu", (int)sizeof out->name - 1, strlen(name));
    /* a new device gives every figure; one named after a built-in overrides some */
    if (!dev_find(name))
        for (size_t i = 2; i < SW_ARRAY_LEN(device_keys); i++) {
            const json_value *f;
            if ((rc = jr_field(r, v, device_keys[i], JSON_NUMBER, 1, &f)))
                return rc;
        }
    dev_spec d;
    if ((rc = dev_from_json(r, v, &d)))
        return rc;
    static const char *const positive[] = {"peak_flops_fp32", "peak_flops_fp16",
                                           "memory_bytes_per_s"};
    const double pv[] = {d.peak_flops_fp32, d.peak_flops_fp16, d.mem_bw};
    for (size_t i = 0; i < SW_ARRAY_LEN(positive); i++)
        if (!(pv[i] > 0))
            return jr_error(r, json_get(v, positive[i]) ? json_get(v, positive[i]) : v,
                            positive[i], "expected a positive number, got %g", pv[i]);
    sw_err e;
    if (dev_validate(&d, &e))
        return jr_error(r, v, NULL, "%s", e.msg);
    *out = d;
    return 0;
}

static int dev_reader(jr *r, const json_value *root, void *out)
{
    return dev_file_from_json(r, root, (dev_spec *)out);
}

int dev_read_text(const char *text, size_t len, const char *file, dev_spec *out,
                     sw_err *err)
{
    return jr_read_text(text, len, file, dev_reader, out, err);
}

int dev_read_file(const char *path, dev_spec *out, sw_err *err)
{
    return jr_read_file(path, dev_reader, out, err);
}

int dev_resolve(const char *arg, dev_spec *out, sw_err *err)
{
    const dev_spec *b = dev_find(arg);
    if (b) {
        *out = *b;
        return 0;
    }
    size_t n = strlen(arg);
    if ((n > 5 && !strcmp(arg + n - 5, ".json")) || access(arg, R_OK) == 0)
        return dev_read_file(arg, out, err);
    sw_buf names;
    sw_buf_init(&names);
    for (size_t i = 0; i < dev_count(); i++)
        sw_buf_printf(&names, "%s%s", i ? ", " : "", dev_at(i)->name);
    sw_fail(err, SW_ENOTFOUND, "unknown device '%s' (expected a built-in name, one of: %s; or a "
            "device file, docs/devices.md)", arg, names.data && !names.oom ? names.data : "?");
    sw_buf_free(&names);
    return SW_ENOTFOUND;
}

void dev_file_to_json(const dev_spec *d, const char *calibration, sw_buf *b)
{
    sw_buf_printf(b, "{\n  \"format\": \"%s\",\n  \"version\": %d,\n  ", DEVICE_FORMAT,
                  DEVICE_VERSION);
    dev_fields(d, b, "\n  ");
    if (calibration) {
        sw_buf_puts(b, ",\n  \"calibration\": ");
        sw_buf_puts(b, calibration);
    }
    sw_buf_puts(b, "\n}\n");
}

int dev_write_file(const dev_spec *d, const char *calibration, const char *path, sw_err *err)
{
    sw_buf b;
    sw_buf_init(&b);
    dev_file_to_json(d, calibration, &b);
    int rc = sw_buf_write_file(&b, path, err);
    sw_buf_free(&b);
    return rc;
}

static int read_ids(jr *r, const json_value *obj, const char *key, int32_t nt, int32_t **ids,
                    int *n)
{
    const json_value *a;
    *ids = NULL;
    *n = 0;
    int rc = jr_field(r, obj, key, JSON_ARRAY, 0, &a);
    if (rc || !a || a->n == 0)
        return rc;
    int32_t *v = sw_malloc(a->n * sizeof *v);
    if (!v)
        return sw_fail(r->err, SW_ENOMEM, "%s: out of memory", r->file);
    size_t s = jr_push_key(r, key);
    for (uint32_t i = 0; i < a->n; i++) {
        size_t s2 = jr_push_idx(r, i);
        int64_t x;
        rc = jr_as_i64(r, &a->u.items[i], 0, INT32_MAX, &x);
        if (!rc && x >= nt)
            rc = jr_error(r, &a->u.items[i], NULL,
                          "dangling tensor id %lld (expected an id below %d, the number of "
                          "tensors)", (long long)x, nt);
        jr_pop(r, s2);
        if (rc) {
            sw_free(v);
            jr_pop(r, s);
            return rc;
        }
        v[i] = (int32_t)x;
    }
    jr_pop(r, s);
    *ids = v;
    *n = (int)a->n;
    return 0;
}

static int read_tensor(jr *r, graph_profile *g, const json_value *t, int32_t idx)
{
    int64_t id, bytes, view = -1, held = -1;
    const char *name, *kind_s, *dtype;
    int persistent;
    int rc;
    if ((rc = jr_i64(r, t, "id", 0, idx, 0, INT32_MAX, &id)))
        return rc;
    if (id != idx)
        return jr_error(r, json_get(t, "id"), NULL, "expected id %d (ids are positions in the "
                        "tensors array), got %lld", idx, (long long)id);
    if ((rc = jr_str(r, t, "name", 0, NULL, &name)) ||
        (rc = jr_i64(r, t, "bytes", 1, 0, 0, SW_MAX_TENSOR_BYTES, &bytes)) ||
        (rc = jr_str(r, t, "kind", 1, NULL, &kind_s)))
        return rc;
    int kind = graph_kind_parse(kind_s);
    if (kind < 0)
        return jr_error(r, json_get(t, "kind"), NULL, "unknown tensor kind '%s' (expected "
                        "parameter, optimizer_state, input, activation, gradient or workspace)",
                        kind_s);
    if ((rc = jr_bool(r, t, "persistent", 0, graph_kind_default_persistent(kind), &persistent)) ||
        (rc = jr_i64(r, t, "view_of", 0, -1, -1, INT32_MAX, &view)) ||
        (rc = jr_i64(r, t, "held_until", 0, -1, -1, INT32_MAX, &held)) ||
        (rc = jr_str(r, t, "dtype", 0, NULL, &dtype)))
        return rc;
    if (view >= g->n_tensors + 0 && view >= 0) {
        /* forward references are allowed; checked after all tensors are read */
    }
    if (graph_add_tensor(g, name, bytes, kind, persistent) < 0)
        return sw_fail(r->err, SW_ENOMEM, "%s: out of memory", r->file);
    g->tensors[idx].view_of = (int32_t)view;
    g->tensors[idx].held_until = (int32_t)held;
    const json_value *shape;
    if ((rc = jr_field(r, t, "shape", JSON_ARRAY | JSON_NULL, 0, &shape)))
        return rc;
    if ((shape && shape->type == JSON_ARRAY) || dtype) {
        int64_t dims[16];
        int nd = 0;
        if (shape && shape->type == JSON_ARRAY) {
            if (shape->n > 16)
                return jr_error(r, shape, "shape", "expected at most 16 dimensions");
            size_t s = jr_push_key(r, "shape");
            for (uint32_t i = 0; i < shape->n; i++) {
                size_t s2 = jr_push_idx(r, i);
                rc = jr_as_i64(r, &shape->u.items[i], 0, INT64_MAX, &dims[i]);
                jr_pop(r, s2);
                if (rc) {
                    jr_pop(r, s);
                    return rc;
                }
            }
            jr_pop(r, s);
            nd = (int)shape->n;
        }
        if (graph_tensor_shape(g, idx, dims, nd, dtype))
            return sw_fail(r->err, SW_ENOMEM, "%s: out of memory", r->file);
    }
    return 0;
}

static int read_op(jr *r, graph_profile *g, const json_value *o, int32_t idx)
{
    int64_t id, ws;
    double time_s;
    const char *name, *type, *phase_s;
    int rc;
    if ((rc = jr_i64(r, o, "id", 0, idx, 0, INT32_MAX, &id)))
        return rc;
    if (id != idx)
        return jr_error(r, json_get(o, "id"), NULL, "expected id %d (ids are positions in the "
                        "ops array), got %lld", idx, (long long)id);
    if ((rc = jr_str(r, o, "name", 0, NULL, &name)) ||
        (rc = jr_str(r, o, "type", 0, "op", &type)) ||
        (rc = jr_f64_range(r, o, "time_s", 1, 0, 0, SW_MAX_OP_SECONDS, &time_s)) ||
        (rc = jr_i64(r, o, "workspace_bytes", 0, 0, 0, SW_MAX_TENSOR_BYTES, &ws)) ||
        (rc = jr_str(r, o, "phase", 0, "forward", &phase_s)))
        return rc;
    int phase = graph_phase_parse(phase_s);
    if (phase < 0)
        return jr_error(r, json_get(o, "phase"), NULL, "unknown phase '%s' (expected forward, "
                        "backward or update)", phase_s);
    int32_t *in = NULL, *out = NULL, *mut = NULL;
    int nin = 0, nout = 0, nmut = 0;
    if ((rc = read_ids(r, o, "inputs", g->n_tensors, &in, &nin)) ||
        (rc = read_ids(r, o, "outputs", g->n_tensors, &out, &nout)) ||
        (rc = read_ids(r, o, "mutates", g->n_tensors, &mut, &nmut))) {
        sw_free(in);
        sw_free(out);
        return rc;
    }
    int32_t got = graph_add_op(g, name, type, time_s, phase, in, nin, out, nout, mut, nmut, ws);
    sw_free(in);
    sw_free(out);
    sw_free(mut);
    if (got < 0)
        return sw_fail(r->err, SW_ENOMEM, "%s: out of memory", r->file);
    const json_value *attrs;
    if ((rc = jr_field(r, o, "attrs", JSON_OBJECT | JSON_NULL, 0, &attrs)))
        return rc;
    if (attrs && attrs->type == JSON_OBJECT) {
        size_t s = jr_push_key(r, "attrs");
        for (uint32_t i = 0; i < attrs->n; i++) {
            const json_member *m = &attrs->u.members[i];
            if (m->val.type != JSON_NUMBER) {
                rc = jr_error(r, &m->val, m->key, "expected a number");
                jr_pop(r, s);
                return rc;
            }
            if (graph_op_attr(g, idx, m->key, m->val.u.num.d))
                return sw_fail(r->err, SW_ENOMEM, "%s: out of memory", r->file);
        }
        jr_pop(r, s);
    }
    return 0;
}

static int dup_field(jr *r, const json_value *obj, const char *key, char **dst)
{
    const char *s;
    int rc = jr_str(r, obj, key, 0, NULL, &s);
    if (rc)
        return rc;
    if (graph_set_str(dst, s))
        return sw_fail(r->err, SW_ENOMEM, "%s: out of memory", r->file);
    return 0;
}

int profile_from_json(jr *r, const json_value *root, graph_profile **out)
{
    *out = NULL;
    if (root->type != JSON_OBJECT)
        return jr_error(r, root, NULL, "expected a profile object");
    const char *fmt, *name;
    int64_t version, batch;
    int rc;
    if ((rc = jr_str(r, root, "format", 0, PROFILE_FORMAT, &fmt)))
        return rc;
    if (strcmp(fmt, PROFILE_FORMAT) != 0)
        return jr_error(r, json_get(root, "format"), NULL, "expected format \"%s\", got \"%s\"",
                        PROFILE_FORMAT, fmt);
    if ((rc = jr_i64(r, root, "version", 0, PROFILE_VERSION, 1, PROFILE_VERSION, &version)) ||
        (rc = jr_str(r, root, "name", 0, "unnamed", &name)) ||
        (rc = jr_i64(r, root, "batch", 0, 1, 1, INT32_MAX, &batch)))
        return rc;
    dev_spec dev = *dev_find("v100");
    const json_value *dv, *pv, *tv, *ov;
    if ((rc = jr_field(r, root, "device", JSON_OBJECT | JSON_STRING, 0, &dv)))
        return rc;
    if (dv) {
        size_t s = jr_push_key(r, "device");
        rc = dev_from_json(r, dv, &dev);
        jr_pop(r, s);
        if (rc)
            return rc;
    }
    if ((rc = jr_field(r, root, "tensors", JSON_ARRAY, 1, &tv)) ||
        (rc = jr_field(r, root, "ops", JSON_ARRAY, 1, &ov)) ||
        (rc = jr_field(r, root, "provenance", JSON_OBJECT, 0, &pv)))
        return rc;
    graph_profile *g = graph_new(name, &dev);
    if (!g)
        return sw_fail(r->err, SW_ENOMEM, "%s: out of memory", r->file);
    g->batch = batch;
    if (pv) {
        size_t s = jr_push_key(r, "provenance");
        if ((rc = dup_field(r, pv, "source", &g->prov.source)) ||
            (rc = dup_field(r, pv, "tool", &g->prov.tool)) ||
            (rc = dup_field(r, pv, "file", &g->prov.file)) ||
            (rc = dup_field(r, pv, "device", &g->prov.device)) ||
            (rc = dup_field(r, pv, "cost_model", &g->prov.cost_model)) ||
            (rc = dup_field(r, pv, "notes", &g->prov.notes))) {
            graph_free(g);
            return rc;
        }
        jr_pop(r, s);
    }
    size_t s = jr_push_key(r, "tensors");
    for (uint32_t i = 0; i < tv->n; i++) {
        size_t s2 = jr_push_idx(r, i);
        rc = read_tensor(r, g, &tv->u.items[i], (int32_t)i);
        jr_pop(r, s2);
        if (rc) {
            graph_free(g);
            return rc;
        }
    }
    for (uint32_t i = 0; i < tv->n; i++) {
        int32_t v = g->tensors[i].view_of;
        if (v >= g->n_tensors) {
            jr_push_idx(r, i);
            rc = jr_error(r, json_get(&tv->u.items[i], "view_of"), NULL,
                          "view of a missing tensor %d (expected an id below %d)", v, g->n_tensors);
            graph_free(g);
            return rc;
        }
    }
    jr_pop(r, s);
    s = jr_push_key(r, "ops");
    for (uint32_t i = 0; i < ov->n; i++) {
        size_t s2 = jr_push_idx(r, i);
        rc = read_op(r, g, &ov->u.items[i], (int32_t)i);
        jr_pop(r, s2);
        if (rc) {
            graph_free(g);
            return rc;
        }
    }
    jr_pop(r, s);
    sw_err e;
    int32_t bad_op, bad_t;
    rc = graph_finish(g, &e, &bad_op, &bad_t);
    if (rc == SW_ENOMEM) {
        graph_free(g);
        return sw_fail(r->err, rc, "%s: %s", r->file, e.msg);
    }
    if (rc) {
        if (bad_op >= 0 && (uint32_t)bad_op < ov->n) {
            size_t s1 = jr_push_key(r, "ops");
            size_t s2 = jr_push_idx(r, (size_t)bad_op);
            rc = jr_error(r, &ov->u.items[bad_op], NULL, "%s", e.msg);
            jr_pop(r, s2);
            jr_pop(r, s1);
        } else if (bad_t >= 0 && (uint32_t)bad_t < tv->n) {
            size_t s1 = jr_push_key(r, "tensors");
            size_t s2 = jr_push_idx(r, (size_t)bad_t);
            rc = jr_error(r, &tv->u.items[bad_t], NULL, "%s", e.msg);
            jr_pop(r, s2);
            jr_pop(r, s1);
        } else {
            rc = jr_error(r, root, NULL, "%s", e.msg);
        }
        graph_free(g);
        return rc;
    }
    *out = g;
    return 0;
}

static int profile_reader(jr *r, const json_value *root, void *out)
{
    return profile_from_json(r, root, (graph_profile **)out);
}

int profile_read_text(const char *text, size_t len, const char *file, graph_profile **out,
                      sw_err *err)
{
    return jr_read_text(text, len, file, profile_reader, out, err);
}

int profile_read_file(const char *path, graph_profile **out, sw_err *err)
{
    return jr_read_file(path, profile_reader, out, err);
}

static void put_ids(sw_buf *b, const char *key, const int32_t *ids, int32_t n)
{
    sw_buf_putc(b, ',');
    sw_buf_put_jstr(b, key);
    sw_buf_puts(b, ":[");
    for (int32_t i = 0; i < n; i++) {
        if (i)
            sw_buf_putc(b, ',');
        sw_buf_put_i64(b, ids[i]);
    }
    sw_buf_putc(b, ']');
}

static void put_opt_str(sw_buf *b, const char *key, const char *v, int *first)
{
    if (!v)
        return;
    if (!*first)
        sw_buf_putc(b, ',');
    *first = 0;
    sw_buf_put_jstr(b, key);
    sw_buf_putc(b, ':');
    sw_buf_put_jstr(b, v);
}

void profile_to_json(const graph_profile *g, sw_buf *b, int indent)
{
    const char *nl = indent ? "\n" : "";
    const char *nl2 = indent ? "\n  " : "";
    sw_buf_printf(b, "{%s\"format\":\"%s\",%s\"version\":%d,%s\"name\":", nl2, PROFILE_FORMAT, nl2,
                  PROFILE_VERSION, nl2);
    sw_buf_put_jstr(b, g->name);
    sw_buf_printf(b, ",%s\"batch\":", nl2);
    sw_buf_put_i64(b, g->batch);
    sw_buf_printf(b, ",%s\"device\":", nl2);
    dev_to_json(&g->device, b);
    sw_buf_printf(b, ",%s\"provenance\":{", nl2);
    int first = 1;
    put_opt_str(b, "source", g->prov.source, &first);
    put_opt_str(b, "tool", g->prov.tool, &first);
    put_opt_str(b, "file", g->prov.file, &first);
    put_opt_str(b, "device", g->prov.device, &first);
    put_opt_str(b, "cost_model", g->prov.cost_model, &first);
    put_opt_str(b, "notes", g->prov.notes, &first);
    sw_buf_printf(b, "},%s\"tensors\":[", nl2);
    for (int32_t t = 0; t < g->n_tensors; t++) {
        const graph_tensor *x = &g->tensors[t];
        sw_buf_puts(b, t ? (indent ? ",\n    " : ",") : (indent ? "\n    " : ""));
        sw_buf_puts(b, "{\"id\":");
        sw_buf_put_i64(b, t);
        sw_buf_puts(b, ",\"name\":");
        sw_buf_put_jstr(b, x->name);
        sw_buf_puts(b, ",\"bytes\":");
        sw_buf_put_i64(b, x->bytes);
        sw_buf_puts(b, ",\"kind\":");
        sw_buf_put_jstr(b, graph_kind_name(x->kind));
        sw_buf_puts(b, x->persistent ? ",\"persistent\":true" : ",\"persistent\":false");
        if (x->view_of >= 0) {
            sw_buf_puts(b, ",\"view_of\":");
            sw_buf_put_i64(b, x->view_of);
        }
        if (x->held_until >= 0) {
            sw_buf_puts(b, ",\"held_until\":");
            sw_buf_put_i64(b, x->held_until);
        }
        if (x->dtype) {
            sw_buf_puts(b, ",\"dtype\":");
            sw_buf_put_jstr(b, x->dtype);
        }
        if (x->n_shape) {
            sw_buf_puts(b, ",\"shape\":[");
            for (int32_t i = 0; i < x->n_shape; i++) {
                if (i)
                    sw_buf_putc(b, ',');
                sw_buf_put_i64(b, x->shape[i]);
            }
            sw_buf_putc(b, ']');
        }
        sw_buf_putc(b, '}');
    }
    sw_buf_printf(b, "%s],%s\"ops\":[", indent ? "\n  " : "", nl2);
    for (int32_t o = 0; o < g->n_ops; o++) {
        const graph_op *x = &g->ops[o];
        sw_buf_puts(b, o ? (indent ? ",\n    " : ",") : (indent ? "\n    " : ""));
        sw_buf_puts(b, "{\"id\":");
        sw_buf_put_i64(b, o);
        sw_buf_puts(b, ",\"name\":");
        sw_buf_put_jstr(b, x->name);
        sw_buf_puts(b, ",\"type\":");
        sw_buf_put_jstr(b, x->type);
        sw_buf_puts(b, ",\"phase\":");
        sw_buf_put_jstr(b, graph_phase_name(x->phase));
        sw_buf_puts(b, ",\"time_s\":");
        sw_buf_put_f64(b, x->time_s);
        if (x->workspace_bytes) {
            sw_buf_puts(b, ",\"workspace_bytes\":");
            sw_buf_put_i64(b, x->workspace_bytes);
        }
        put_ids(b, "inputs", x->in, x->n_in);
        put_ids(b, "outputs", x->out, x->n_out);
        if (x->n_mut)
            put_ids(b, "mutates", x->mut, x->n_mut);
        if (x->n_attr) {
            sw_buf_puts(b, ",\"attrs\":{");
            for (int32_t i = 0; i < x->n_attr; i++) {
                if (i)
                    sw_buf_putc(b, ',');
                sw_buf_put_jstr(b, x->attr[i].key);
                sw_buf_putc(b, ':');
                sw_buf_put_f64(b, x->attr[i].value);
            }
            sw_buf_putc(b, '}');
        }
        sw_buf_putc(b, '}');
    }
    sw_buf_printf(b, "%s]%s}", indent ? "\n  " : "", nl);
}

int profile_write_file(const graph_profile *g, const char *path, sw_err *err)
{
    sw_buf b;
    sw_buf_init(&b);
    profile_to_json(g, &b, 1);
    sw_buf_putc(&b, '\n');
    int rc = sw_buf_write_file(&b, path, err);
    sw_buf_free(&b);
    return rc;
}
