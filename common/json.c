/* json.c: JSON parsing into an arena with positions, and typed field access. */
#define _POSIX_C_SOURCE 200809L
#include "json.h"

#include <float.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define JSON_MAX_DEPTH 256

typedef struct arena_block {
    struct arena_block *next;
    size_t cap, used;
    char *data;
} arena_block;

struct json_doc {
    arena_block *blocks; /* current block first */
    arena_block *spare;  /* blocks kept by reset */
    /* scratch stacks for arrays and objects under construction */
    json_value *vstack;
    size_t vlen, vcap;
    json_member *mstack;
    size_t mlen, mcap;
    char *sbuf; /* string unescape scratch */
    size_t scap;
};

typedef struct parser {
    json_doc *d;
    const char *p, *end, *line_start;
    uint32_t line;
    const char *file;
    sw_err *err;
    int depth;
} parser;

json_doc *json_doc_new(void) { return sw_calloc(1, sizeof(json_doc)); }

static void free_blocks(arena_block *b)
{
    while (b) {
        arena_block *n = b->next;
        sw_free(b->data);
        sw_free(b);
        b = n;
    }
}

void json_doc_free(json_doc *d)
{
    if (!d)
        return;
    free_blocks(d->blocks);
    free_blocks(d->spare);
    sw_free(d->vstack);
    sw_free(d->mstack);
    sw_free(d->sbuf);
    sw_free(d);
}

void json_doc_reset(json_doc *d)
{
    arena_block *b = d->blocks;
    while (b) {
        arena_block *n = b->next;
        b->used = 0;
        b->next = d->spare;
        d->spare = b;
        b = n;
    }
    d->blocks = NULL;
    d->vlen = d->mlen = 0;
}

static void *arena_alloc(json_doc *d, size_t n)
{
    n = (n + 7) & ~(size_t)7;
    arena_block *b = d->blocks;
    if (!b || b->cap - b->used < n) {
        size_t want = n > (1u << 20) ? n : (1u << 20);
        arena_block **pp = &d->spare;
        while (*pp && (*pp)->cap < want)
            pp = &(*pp)->next;
        if (*pp) {
            b = *pp;
            *pp = b->next;
        } else {
            b = sw_calloc(1, sizeof *b);
            if (!b)
                return NULL;
            b->data = sw_malloc(want);
            if (!b->data) {
                sw_free(b);
                return NULL;
            }
            b->cap = want;
        }
        b->used = 0;
        b->next = d->blocks;
        d->blocks = b;
    }
    void *r = b->data + b->used;
    b->used += n;
    return r;
}

static int perr(parser *ps, const char *at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int perr(parser *ps, const char *at, const char *fmt, ...)
{
    /* strings cannot span lines, so every error position is on the current line */
    const char *ls = ps->line_start;
    uint32_t line = ps->line;
    if (at < ls)
        at = ls;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return sw_fail(ps->err, SW_EINVAL, "%s:%u:%u: %s", ps->file, line,
                   (unsigned)(at - ls) + 1, msg);
}

static void skip_ws(parser *ps)
{
    const char *p = ps->p;
    while (p < ps->end) { /* never past the range given (JSON-lines parse one line) */
        char c = *p;
        if (c == ' ' || c == '\t' || c == '\r') {
            p++;
        } else if (c == '\n') {
            p++;
            ps->line++;
            ps->line_start = p;
        } else {
            break;
        }
    }
    ps->p = p;
}

static int parse_value(parser *ps, json_value *out);

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static int read_hex4(parser *ps, const char *p, unsigned *cp)
{
    if (ps->end - p < 4)
        return perr(ps, p, "truncated \\u escape");
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        int h = hexval(p[i]);
        if (h < 0)
            return perr(ps, p + i, "bad hex digit in \\u escape");
        v = v * 16 + (unsigned)h;
    }
    *cp = v;
    return 0;
}

/* Parse a string starting at the opening quote; result in the arena. */
static int parse_string(parser *ps, const char **out, uint32_t *outlen)
{
    const char *start = ps->p + 1, *p = start;
    /* fast path: no escapes */
    while (p < ps->end && *p != '"' && *p != '\\' && (unsigned char)*p >= 0x20)
        p++;
    if (p < ps->end && *p == '"') {
        size_t n = (size_t)(p - start);
        char *s = arena_alloc(ps->d, n + 1);
        if (!s)
            return sw_fail(ps->err, SW_ENOMEM, "%s: out of memory", ps->file);
        memcpy(s, start, n);
        s[n] = 0;
        *out = s;
        *outlen = (uint32_t)n;
        ps->p = p + 1;
        return 0;
    }
    /* slow path: unescape into scratch */
    json_doc *d = ps->d;
    size_t n = (size_t)(p - start);
    if (SW_GROW(d->sbuf, d->scap, n + 16))
        return sw_fail(ps->err, SW_ENOMEM, "%s: out of memory", ps->file);
    memcpy(d->sbuf, start, n);
    for (;;) {
        if (p >= ps->end)
            return perr(ps, start - 1, "unterminated string");
        char c = *p;
        if (c == '"')
            break;
        if ((unsigned char)c < 0x20)
            return perr(ps, p, "control character in string (expected \\n-style escape)");
        if (SW_GROW(d->sbuf, d->scap, n + 8))
            return sw_fail(ps->err, SW_ENOMEM, "%s: out of memory", ps->file);
        if (c != '\\') {
            d->sbuf[n++] = c;
            p++;
            continue;
        }
        p++;
        if (p >= ps->end)
            return perr(ps, p, "unterminated escape");
        c = *p++;
        switch (c) {
        case '"': d->sbuf[n++] = '"'; break;
        case '\\': d->sbuf[n++] = '\\'; break;
        case '/': d->sbuf[n++] = '/'; break;
        case 'b': d->sbuf[n++] = '\b'; break;
        case 'f': d->sbuf[n++] = '\f'; break;
        case 'n': d->sbuf[n++] = '\n'; break;
        case 'r': d->sbuf[n++] = '\r'; break;
        case 't': d->sbuf[n++] = '\t'; break;
        case 'u': {
            unsigned cp;
            if (read_hex4(ps, p, &cp))
                return SW_EINVAL;
            p += 4;
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                unsigned lo;
                if (ps->end - p < 6 || p[0] != '\\' || p[1] != 'u')
                    return perr(ps, p, "unpaired UTF-16 surrogate in \\u escape");
                if (read_hex4(ps, p + 2, &lo))
                    return SW_EINVAL;
                if (lo < 0xDC00 || lo > 0xDFFF)
                    return perr(ps, p, "bad low surrogate in \\u escape");
                p += 6;
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            }
            if (cp == 0)
                return perr(ps, p - 6, "\\u0000 is not allowed in strings here");
            if (cp < 0x80) {
                d->sbuf[n++] = (char)cp;
            } else if (cp < 0x800) {
                d->sbuf[n++] = (char)(0xC0 | (cp >> 6));
                d->sbuf[n++] = (char)(0x80 | (cp & 0x3F));
            } else if (cp < 0x10000) {
                d->sbuf[n++] = (char)(0xE0 | (cp >> 12));
                d->sbuf[n++] = (char)(0x80 | ((cp >> 6) & 0x3F));
                d->sbuf[n++] = (char)(0x80 | (cp & 0x3F));
            } else {
                d->sbuf[n++] = (char)(0xF0 | (cp >> 18));
                d->sbuf[n++] = (char)(0x80 | ((cp >> 12) & 0x3F));
                d->sbuf[n++] = (char)(0x80 | ((cp >> 6) & 0x3F));
                d->sbuf[n++] = (char)(0x80 | (cp & 0x3F));
            }
            break;
        }
        default:
            return perr(ps, p - 2, "unknown escape '\\%c' in string", c);
        }
    }
    char *s = arena_alloc(ps->d, n + 1);
    if (!s)
        return sw_fail(ps->err, SW_ENOMEM, "%s: out of memory", ps->file);
    memcpy(s, d->sbuf, n);
    s[n] = 0;
    *out = s;
    *outlen = (uint32_t)n;
    ps->p = p + 1;
    return 0;
}

static int parse_number(parser *ps, json_value *out)
{
    const char *p = ps->p, *s = p;
    int neg = 0;
    if (*p == '-') {
        neg = 1;
        p++;
    }
    if (p >= ps->end || *p < '0' || *p > '9')
        return perr(ps, s, "expected a value");
    if (*p == '0' && p + 1 < ps->end && p[1] >= '0' && p[1] <= '9')
        return perr(ps, s, "leading zeros are not allowed in numbers");
    uint64_t acc = 0;
    int digits = 0, overflow = 0;
    while (p < ps->end && *p >= '0' && *p <= '9') {
        unsigned dg = (unsigned)(*p - '0');
        if (acc > (UINT64_MAX - dg) / 10)
            overflow = 1;
        else
            acc = acc * 10 + dg;
        digits++;
        p++;
    }
    int is_int = 1;
    if (p < ps->end && *p == '.') {
        is_int = 0;
        p++;
        if (p >= ps->end || *p < '0' || *p > '9')
            return perr(ps, p, "expected a digit after the decimal point");
        while (p < ps->end && *p >= '0' && *p <= '9')
            p++;
    }
    if (p < ps->end && (*p == 'e' || *p == 'E')) {
        is_int = 0;
        p++;
        if (p < ps->end && (*p == '+' || *p == '-'))
            p++;
        if (p >= ps->end || *p < '0' || *p > '9')
            return perr(ps, p, "expected a digit in the exponent");
        while (p < ps->end && *p >= '0' && *p <= '9')
            p++;
    }
    (void)digits;
    out->type = JSON_NUMBER;
    if (is_int && !overflow && acc <= (uint64_t)INT64_MAX + (uint64_t)neg) {
        out->is_int = 1;
        out->u.num.i = neg ? (int64_t)(0 - acc) : (int64_t)acc;
        out->u.num.d = (double)out->u.num.i;
    } else {
        char tmp[64];
        size_t n = (size_t)(p - s);
        char *heap = NULL;
        const char *txt;
        if (n < sizeof tmp) {
            memcpy(tmp, s, n);
            tmp[n] = 0;
            txt = tmp;
        } else {
            heap = sw_strndup(s, n);
            if (!heap)
                return sw_fail(ps->err, SW_ENOMEM, "%s: out of memory", ps->file);
            txt = heap;
        }
        out->is_int = 0;
        out->u.num.d = strtod(txt, NULL);
        sw_free(heap);
        if (!isfinite(out->u.num.d))
            return perr(ps, s, "number out of range");
        out->u.num.i = (fabs(out->u.num.d) < 9.2e18) ? (int64_t)out->u.num.d : 0;
    }
    ps->p = p;
    return 0;
}

static int expect_word(parser *ps, const char *w, size_t n)
{
    if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, w, n) != 0)
        return perr(ps, ps->p, "expected a value");
    ps->p += n;
    return 0;
}

static int parse_array(parser *ps, json_value *out)
{
    json_doc *d = ps->d;
    size_t base = d->vlen;
    ps->p++; /* [ */
    skip_ws(ps);
    if (ps->p < ps->end && *ps->p == ']') {
        ps->p++;
        out->type = JSON_ARRAY;
        out->n = 0;
        out->u.items = NULL;
        return 0;
    }
    for (;;) {
        json_value v;
        int rc = parse_value(ps, &v);
        if (rc)
            return rc;
        if (SW_GROW(d->vstack, d->vcap, d->vlen + 1))
            return sw_fail(ps->err, SW_ENOMEM, "%s: out of memory", ps->file);
        d->vstack[d->vlen++] = v;
        skip_ws(ps);
        if (ps->p < ps->end && *ps->p == ',') {
            ps->p++;
            skip_ws(ps);
            continue;
        }
        if (ps->p < ps->end && *ps->p == ']') {
            ps->p++;
            break;
        }
        return perr(ps, ps->p, ps->p < ps->end ? "expected ',' or ']' in array"
                                               : "unexpected end of input in array");
    }
    size_t n = d->vlen - base;
    json_value *items = arena_alloc(d, n * sizeof *items);
    if (!items)
        return sw_fail(ps->err, SW_ENOMEM, "%s: out of memory", ps->file);
    memcpy(items, d->vstack + base, n * sizeof *items);
    d->vlen = base;
    out->type = JSON_ARRAY;
    out->n = (uint32_t)n;
    out->u.items = items;
    return 0;
}

static int parse_object(parser *ps, json_value *out)
{
    json_doc *d = ps->d;
    size_t base = d->mlen;
    ps->p++; /* { */
    skip_ws(ps);
    if (ps->p < ps->end && *ps->p == '}') {
        ps->p++;
        out->type = JSON_OBJECT;
        out->n = 0;
        out->u.members = NULL;
        return 0;
    }
    for (;;) {
        if (ps->p >= ps->end || *ps->p != '"')
            return perr(ps, ps->p, ps->p < ps->end ? "expected a string key in object"
                                                   : "unexpected end of input in object");
        json_member m;
        uint32_t klen;
        int rc = parse_string(ps, &m.key, &klen);
        if (rc)
            return rc;
        skip_ws(ps);
        if (ps->p >= ps->end || *ps->p != ':')
            return perr(ps, ps->p, "expected ':' after object key");
        ps->p++;
        skip_ws(ps);
        rc = parse_value(ps, &m.val);
        if (rc)
            return rc;
        if (SW_GROW(d->mstack, d->mcap, d->mlen + 1))
            return sw_fail(ps->err, SW_ENOMEM, "%s: out of memory", ps->file);
        d->mstack[d->mlen++] = m;
        skip_ws(ps);
        if (ps->p < ps->end && *ps->p == ',') {
            ps->p++;
            skip_ws(ps);
            continue;
        }
        if (ps->p < ps->end && *ps->p == '}') {
            ps->p++;
            break;
        }
        return perr(ps, ps->p, ps->p < ps->end ? "expected ',' or '}' in object"
                                               : "unexpected end of input in object");
    }
    size_t n = d->mlen - base;
    json_member *ms = arena_alloc(d, n * sizeof *ms);
    if (!ms)
        return sw_fail(ps->err, SW_ENOMEM, "%s: out of memory", ps->file);
    memcpy(ms, d->mstack + base, n * sizeof *ms);
    d->mlen = base;
    out->type = JSON_OBJECT;
    out->n = (uint32_t)n;
    out->u.members = ms;
    return 0;
}

static int parse_value(parser *ps, json_value *out)
{
    skip_ws(ps);
    memset(out, 0, sizeof *out);
    out->line = ps->line;
    out->col = (uint32_t)(ps->p - ps->line_start) + 1;
    if (ps->p >= ps->end)
        return perr(ps, ps->p, "unexpected end of input (expected a value)");
    int rc;
    switch (*ps->p) {
    case '{':
    case '[':
        if (++ps->depth > JSON_MAX_DEPTH)
            return perr(ps, ps->p, "nesting deeper than %d levels", JSON_MAX_DEPTH);
        rc = *ps->p == '{' ? parse_object(ps, out) : parse_array(ps, out);
        ps->depth--;
        return rc;
    case '"': {
        out->type = JSON_STRING;
        return parse_string(ps, &out->u.str, &out->n);
    }
    case 't':
        out->type = JSON_TRUE;
        return expect_word(ps, "true", 4);
    case 'f':
        out->type = JSON_FALSE;
        return expect_word(ps, "false", 5);
    case 'n':
        out->type = JSON_NULL;
        return expect_word(ps, "null", 4);
    default:
        return parse_number(ps, out);
    }
}

int json_parse(json_doc *d, const char *text, size_t len, const char *file, uint32_t first_line,
               const json_value **root, sw_err *err)
{
    parser ps = {.d = d, .p = text, .end = text + len, .line_start = text,
                 .line = first_line, .file = file ? file : "<input>", .err = err};
    /* skip a UTF-8 byte order mark */
    if (len >= 3 && (unsigned char)text[0] == 0xEF && (unsigned char)text[1] == 0xBB &&
        (unsigned char)text[2] == 0xBF)
        ps.p += 3;
    json_value *v = arena_alloc(d, sizeof *v);
    if (!v)
        return sw_fail(err, SW_ENOMEM, "%s: out of memory", ps.file);
    int rc = parse_value(&ps, v);
    if (rc)
        return rc;
    skip_ws(&ps);
    if (ps.p < ps.end && *ps.p != 0)
        return perr(&ps, ps.p, "unexpected text after the JSON value");
    *root = v;
    return 0;
}

const json_value *json_get(const json_value *obj, const char *key)
{
    if (!obj || obj->type != JSON_OBJECT)
        return NULL;
    for (uint32_t i = 0; i < obj->n; i++)
        if (strcmp(obj->u.members[i].key, key) == 0)
            return &obj->u.members[i].val;
    return NULL;
}

const char *json_type_name(int mask)
{
    switch (mask) {
    case JSON_NULL: return "null";
    case JSON_BOOL: return "true or false";
    case JSON_NUMBER: return "a number";
    case JSON_STRING: return "a string";
    case JSON_ARRAY: return "an array";
    case JSON_OBJECT: return "an object";
    case JSON_STRING | JSON_NULL: return "a string or null";
    case JSON_NUMBER | JSON_NULL: return "a number or null";
    case JSON_ARRAY | JSON_NULL: return "an array or null";
    case JSON_OBJECT | JSON_NULL: return "an object or null";
    case JSON_NUMBER | JSON_STRING: return "a number or a string";
    default: return "a JSON value of another type";
    }
}

static const char *type_of(const json_value *v)
{
    switch (v->type) {
    case JSON_NULL: return "null";
    case JSON_FALSE:
    case JSON_TRUE: return "a boolean";
    case JSON_NUMBER: return "a number";
    case JSON_STRING: return "a string";
    case JSON_ARRAY: return "an array";
    default: return "an object";
    }
}

/* ---- typed access ---- */

void jr_init(jr *r, const char *file, sw_err *err)
{
    r->file = file ? file : "<input>";
    r->err = err;
    r->path[0] = '$';
    r->path[1] = 0;
    r->len = 1;
}

size_t jr_push_key(jr *r, const char *key)
{
    size_t saved = r->len;
    int n = snprintf(r->path + r->len, sizeof r->path - r->len, ".%s", key);
    if (n > 0)
        r->len = SW_MIN(r->len + (size_t)n, sizeof r->path - 1);
    return saved;
}

size_t jr_push_idx(jr *r, size_t idx)
{
    size_t saved = r->len;
    int n = snprintf(r->path + r->len, sizeof r->path - r->len, "[%zu]", idx);
    if (n > 0)
        r->len = SW_MIN(r->len + (size_t)n, sizeof r->path - 1);
    return saved;
}

void jr_pop(jr *r, size_t saved)
{
    r->len = saved;
    r->path[saved] = 0;
}

int jr_error(jr *r, const json_value *v, const char *key, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (v)
        return sw_fail(r->err, SW_EINVAL, "%s:%u:%u: at %s%s%s: %s", r->file, v->line, v->col,
                       r->path, key ? "." : "", key ? key : "", msg);
    return sw_fail(r->err, SW_EINVAL, "%s: at %s%s%s: %s", r->file, r->path, key ? "." : "",
                   key ? key : "", msg);
}

int jr_field(jr *r, const json_value *obj, const char *key, int mask, int required,
             const json_value **out)
{
    *out = NULL;
    if (!obj || obj->type != JSON_OBJECT)
        return jr_error(r, obj, NULL, "expected an object, got %s", obj ? type_of(obj) : "nothing");
    const json_value *v = json_get(obj, key);
    if (!v) {
        if (required)
            return jr_error(r, obj, NULL, "missing required field \"%s\" (expected %s)", key,
                            json_type_name(mask));
        return 0;
    }
    if (!(v->type & mask))
        return jr_error(r, v, key, "expected %s, got %s", json_type_name(mask), type_of(v));
    *out = v;
    return 0;
}

int jr_as_i64(jr *r, const json_value *v, int64_t min, int64_t max, int64_t *out)
{
    if (v->type != JSON_NUMBER)
        return jr_error(r, v, NULL, "expected an integer, got %s", type_of(v));
    int64_t x;
    if (v->is_int) {
        x = v->u.num.i;
    } else {
        double d = v->u.num.d;
        if (d != floor(d) || fabs(d) > 9.0e18)
            return jr_error(r, v, NULL, "expected an integer, got %.17g", d);
        x = (int64_t)d;
    }
    if (x < min || x > max) {
        if (max == INT64_MAX)
            return jr_error(r, v, NULL, "expected an integer >= %lld, got %lld", (long long)min,
                            (long long)x);
        return jr_error(r, v, NULL, "expected an integer in [%lld, %lld], got %lld",
                        (long long)min, (long long)max, (long long)x);
    }
    *out = x;
    return 0;
}

int jr_i64(jr *r, const json_value *obj, const char *key, int required, int64_t def, int64_t min,
           int64_t max, int64_t *out)
{
    const json_value *v;
    int rc = jr_field(r, obj, key, JSON_NUMBER | (required ? 0 : JSON_NULL), required, &v);
    if (rc)
        return rc;
    if (!v || v->type == JSON_NULL) {
        *out = def;
        return 0;
    }
    size_t s = jr_push_key(r, key);
    rc = jr_as_i64(r, v, min, max, out);
    jr_pop(r, s);
    return rc;
}

int jr_f64(jr *r, const json_value *obj, const char *key, int required, double def, double min,
           double *out)
{
    return jr_f64_range(r, obj, key, required, def, min, DBL_MAX, out);
}

int jr_f64_range(jr *r, const json_value *obj, const char *key, int required, double def,
                 double min, double max, double *out)
{
    const json_value *v;
    int rc = jr_field(r, obj, key, JSON_NUMBER | (required ? 0 : JSON_NULL), required, &v);
    if (rc)
        return rc;
    if (!v || v->type == JSON_NULL) {
        *out = def;
        return 0;
    }
    if (!(v->u.num.d >= min))
        return jr_error(r, v, key, "expected a number >= %g, got %.17g", min, v->u.num.d);
    if (!(v->u.num.d <= max))
        return jr_error(r, v, key, "expected a number <= %g, got %.17g", max, v->u.num.d);
    *out = v->u.num.d;
    return 0;
}

int jr_bool(jr *r, const json_value *obj, const char *key, int required, int def, int *out)
{
    const json_value *v;
    int rc = jr_field(r, obj, key, JSON_BOOL | (required ? 0 : JSON_NULL), required, &v);
    if (rc)
        return rc;
    *out = (!v || v->type == JSON_NULL) ? def : v->type == JSON_TRUE;
    return 0;
}

int jr_str(jr *r, const json_value *obj, const char *key, int required, const char *def,
           const char **out)
{
    const json_value *v;
    int rc = jr_field(r, obj, key, JSON_STRING | (required ? 0 : JSON_NULL), required, &v);
    if (rc)
        return rc;
    *out = (!v || v->type == JSON_NULL) ? def : v->u.str;
    return 0;
}

int jr_read_text(const char *text, size_t len, const char *file, jr_reader read, void *out,
                 sw_err *err)
{
    json_doc *d = json_doc_new();
    if (!d)
        return sw_fail(err, SW_ENOMEM, "%s: out of memory", file);
    const json_value *root;
    int rc = json_parse(d, text, len, file, 1, &root, err);
    if (!rc) {
        jr r;
        jr_init(&r, file, err);
        rc = read(&r, root, out);
    }
    json_doc_free(d);
    return rc;
}

int jr_read_file(const char *path, jr_reader read, void *out, sw_err *err)
{
    char *text;
    size_t len;
    int rc = sw_read_file(path, &text, &len, err);
    if (rc)
        return rc;
    rc = jr_read_text(text, len, path, read, out, err);
    sw_free(text);
    return rc;
}
