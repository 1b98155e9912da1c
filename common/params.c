/* params.c: declared, typed key=value options. */
#include "params.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int params_init(param_set *ps, const param_def *defs)
{
    int n = 0;
    while (defs && defs[n].key)
        n++;
    ps->defs = defs;
    ps->n = n;
    ps->vals = n ? sw_calloc((size_t)n, sizeof *ps->vals) : NULL;
    return (n && !ps->vals) ? SW_ENOMEM : 0;
}

void params_free(param_set *ps)
{
    for (int i = 0; i < ps->n; i++)
        sw_free((void *)(uintptr_t)ps->vals[i]);
    sw_free(ps->vals);
    ps->vals = NULL;
    ps->n = 0;
}

int params_find(const param_set *ps, const char *key)
{
    for (int i = 0; i < ps->n; i++)
        if (strcmp(ps->defs[i].key, key) == 0)
            return i;
    return -1;
}

static int parse_bool(const char *v, int *out)
{
    if (!strcasecmp(v, "true") || !strcmp(v, "1") || !strcasecmp(v, "yes") || !strcasecmp(v, "on")) {
        *out = 1;
        return 0;
    }
    if (!strcasecmp(v, "false") || !strcmp(v, "0") || !strcasecmp(v, "no") || !strcasecmp(v, "off")) {
        *out = 0;
        return 0;
    }
    return -1;
}

static int in_choices(const char *choices, const char *v)
{
    size_t l = strlen(v);
    const char *p = choices;
    while (p && *p) {
        const char *e = strchr(p, '|');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n == l && strncmp(p, v, n) == 0)
            return 1;
        p = e ? e + 1 : NULL;
    }
    return 0;
}

int params_check(const param_def *d, const char *v, sw_err *err)
{
    int64_t i;
    double f;
    int b;
    sw_err e2;
    int bounded = d->min <= d->max;
    switch (d->type) {
    case PT_INT:
        if (sw_parse_i64(v, &i))
            return sw_fail(err, SW_EINVAL, "option %s=%s: expected an integer", d->key, v);
        if (bounded && ((double)i < d->min || (double)i > d->max))
            return sw_fail(err, SW_EINVAL, "option %s=%s: expected an integer in [%g, %g]",
                           d->key, v, d->min, d->max);
        return 0;
    case PT_FLOAT:
        if (sw_parse_f64(v, &f))
            return sw_fail(err, SW_EINVAL, "option %s=%s: expected a number", d->key, v);
        if (bounded && (f < d->min || f > d->max))
            return sw_fail(err, SW_EINVAL, "option %s=%s: expected a number in [%g, %g]", d->key,
                           v, d->min, d->max);
        return 0;
    case PT_SIZE:
        if (sw_parse_size(v, &i, NULL, &e2))
            return sw_fail(err, SW_EINVAL, "option %s: %s", d->key, e2.msg);
        if (bounded && ((double)i < d->min || (double)i > d->max))
            return sw_fail(err, SW_EINVAL, "option %s=%s: expected a size in [%.0f, %.0f] bytes",
                           d->key, v, d->min, d->max);
        return 0;
    case PT_SECONDS:
        if (sw_parse_seconds(v, &f, &e2))
            return sw_fail(err, SW_EINVAL, "option %s: %s", d->key, e2.msg);
        return 0;
    case PT_BOOL:
        if (parse_bool(v, &b))
            return sw_fail(err, SW_EINVAL, "option %s=%s: expected true or false", d->key, v);
        return 0;
    case PT_CHOICE:
        if (!in_choices(d->choices, v))
            return sw_fail(err, SW_EINVAL, "option %s=%s: expected one of %s", d->key, v,
                           d->choices);
        return 0;
    case PT_STRING:
        return 0;
    }
    return 0;
}

int params_set(param_set *ps, const char *key, const char *value, sw_err *err)
{
    int i = params_find(ps, key);
    if (i < 0) {
        char list[600];
        size_t off = 0;
        list[0] = 0;
        for (int k = 0; k < ps->n && off < sizeof list; k++) {
            int w = snprintf(list + off, sizeof list - off, "%s%s", k ? ", " : "", ps->defs[k].key);
            if (w > 0)
                off += (size_t)w;
        }
        return sw_fail(err, SW_EINVAL, "unknown option '%s' (expected one of: %s)", key,
                       ps->n ? list : "none: this takes no options");
    }
    int rc = params_check(&ps->defs[i], value, err);
    if (rc)
        return rc;
    char *c = sw_strdup(value);
    if (!c)
        return sw_fail(err, SW_ENOMEM, "out of memory");
    sw_free((void *)(uintptr_t)ps->vals[i]);
    ps->vals[i] = c;
    return 0;
}

int params_set_kv(param_set *ps, const char *a, sw_err *err)
{
    const char *eq = strchr(a, '=');
    if (!eq || eq == a)
        return sw_fail(err, SW_EINVAL, "bad option '%s': expected KEY=VALUE", a);
    char key[64];
    size_t kl = (size_t)(eq - a);
    if (kl >= sizeof key)
        return sw_fail(err, SW_EINVAL, "bad option '%s': key too long", a);
    memcpy(key, a, kl);
    key[kl] = 0;
    return params_set(ps, key, eq + 1, err);
}

static const char *value_of(const param_set *ps, const char *key, const param_def **d)
{
    int i = params_find(ps, key);
    assert(i >= 0 && "undeclared parameter");
    if (i < 0)
        return NULL;
    *d = &ps->defs[i];
    return ps->vals[i] ? ps->vals[i] : ps->defs[i].def;
}

int64_t params_int(const param_set *ps, const char *key)
{
    const param_def *d;
    const char *v = value_of(ps, key, &d);
    int64_t x = 0;
    if (v)
        sw_parse_i64(v, &x);
    return x;
}

double params_float(const param_set *ps, const char *key)
{
    const param_def *d;
    const char *v = value_of(ps, key, &d);
    double x = 0;
    if (v)
        sw_parse_f64(v, &x);
    return x;
}

int64_t params_size(const param_set *ps, const char *key)
{
    const param_def *d;
    const char *v = value_of(ps, key, &d);
    int64_t x = 0;
    if (v)
        sw_parse_size(v, &x, NULL, NULL);
    return x;
}

double params_seconds(const param_set *ps, const char *key)
{
    const param_def *d;
    const char *v = value_of(ps, key, &d);
    double x = 0;
    if (v)
        sw_parse_seconds(v, &x, NULL);
    return x;
}

int params_bool(const param_set *ps, const char *key)
{
    const param_def *d;
    const char *v = value_of(ps, key, &d);
    int b = 0;
    if (v)
        parse_bool(v, &b);
    return b;
}

const char *params_str(const param_set *ps, const char *key)
{
    const param_def *d;
    return value_of(ps, key, &d);
}

int params_is_set(const param_set *ps, const char *key)
{
    int i = params_find(ps, key);
    return i >= 0 && ps->vals[i] != NULL;
}

void params_to_json(const param_set *ps, sw_buf *b)
{
    sw_buf_putc(b, '{');
    int first = 1;
    for (int i = 0; i < ps->n; i++) {
        const char *v = ps->vals[i] ? ps->vals[i] : ps->defs[i].def;
        if (!v)
            continue;
        if (!first)
            sw_buf_putc(b, ',');
        first = 0;
        sw_buf_put_jstr(b, ps->defs[i].key);
        sw_buf_putc(b, ':');
        sw_buf_put_jstr(b, v);
    }
    sw_buf_putc(b, '}');
}

void params_help(const param_def *defs, sw_buf *b, const char *prefix)
{
    for (int i = 0; defs && defs[i].key; i++) {
        char lhs[96];
        snprintf(lhs, sizeof lhs, "%s%s=%s", prefix, defs[i].key,
                 defs[i].def ? defs[i].def : "(required)");
        sw_buf_printf(b, "    %-30s %s", lhs, defs[i].help ? defs[i].help : "");
        if (defs[i].type == PT_CHOICE)
            sw_buf_printf(b, " (%s)", defs[i].choices);
        sw_buf_putc(b, '\n');
    }
}
