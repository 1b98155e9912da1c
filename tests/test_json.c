/* test_json.c: the JSON reader: values, escapes, numbers, positions, errors;
   one named test each (tap_run). */
#include "../common/json.h"
#include "tap.h"

static const json_value *parse(json_doc *d, const char *text, sw_err *e)
{
    const json_value *v = NULL;
    json_doc_reset(d);
    if (json_parse(d, text, strlen(text), "t.json", 1, &v, e))
        return NULL;
    return v;
}

static void values(void)
{
    json_doc *d = json_doc_new();
    sw_err e;
    const json_value *v = parse(d, "{\"a\": [1, -2, 3.5, 1e3, true, false, null, \"x\\n\\u00e9\\ud83d\\ude00\"], \"b\": {}}", &e);
    OK(v && v->type == JSON_OBJECT && v->n == 2, "object with two members");
    const json_value *a = json_get(v, "a");
    OK(a && a->type == JSON_ARRAY && a->n == 8, "array of 8");
    IS_INT(a->u.items[0].u.num.i, 1, "integer 1");
    IS_INT(a->u.items[1].u.num.i, -2, "integer -2");
    OK(!a->u.items[2].is_int && a->u.items[2].u.num.d == 3.5, "real 3.5");
    OK(!a->u.items[3].is_int && a->u.items[3].u.num.d == 1000, "exponent 1e3");
    OK(a->u.items[4].type == JSON_TRUE && a->u.items[5].type == JSON_FALSE &&
           a->u.items[6].type == JSON_NULL, "literals");
    OK(strcmp(a->u.items[7].u.str, "x\n\xc3\xa9\xf0\x9f\x98\x80") == 0, "escapes and surrogate pairs");
    IS_INT(a->u.items[0].line, 1, "line of a value");
    IS_INT(a->u.items[0].col, 8, "column of a value");
    json_doc_free(d);
}

static void int64_exact(void)
{
    json_doc *d = json_doc_new();
    sw_err e;
    const json_value *v = parse(d, "9223372036854775807", &e);
    OK(v && v->is_int && v->u.num.i == INT64_MAX, "int64 max stays exact");
    json_doc_free(d);
}

/* errors: where, and what was expected */
static void syntax_errors(void)
{
    json_doc *d = json_doc_new();
    sw_err e;
    const json_value *v = parse(d, "{\n  \"x\": 1,\n  \"y\" 2\n}", &e);
    OK(!v, "missing colon is an error");
    IS_STR_HAS(e.msg, "t.json:3:7", "error names line and column");
    IS_STR_HAS(e.msg, "expected ':'", "error says what was expected");
    v = parse(d, "[1, 2", &e);
    OK(!v, "truncated input is an error");
    IS_STR_HAS(e.msg, "unexpected end of input", "truncation message");
    v = parse(d, "[01]", &e);
    OK(!v, "leading zero rejected");
    v = parse(d, "\"a\tb\"", &e);
    OK(!v, "raw control character rejected");
    v = parse(d, "{} x", &e);
    OK(!v, "trailing garbage rejected");
    IS_STR_HAS(e.msg, "after the JSON value", "trailing garbage message");
    v = parse(d, "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[", &e);
    OK(!v, "nesting beyond the limit is an error, not a stack overflow");
    json_doc_free(d);
}

/* typed access with paths */
static void typed_access(void)
{
    json_doc *d = json_doc_new();
    sw_err e;
    const json_value *v = parse(d, "{\"t\": [{\"bytes\": -4}]}", &e);
    jr r;
    jr_init(&r, "p.json", &e);
    size_t s1 = jr_push_key(&r, "t");
    size_t s2 = jr_push_idx(&r, 0);
    int64_t x;
    int rc = jr_i64(&r, &json_get(v, "t")->u.items[0], "bytes", 1, 0, 0, INT64_MAX, &x);
    OK(rc == SW_EINVAL, "negative value rejected");
    IS_STR_HAS(e.msg, "at $.t[0].bytes", "error names the JSON path");
    IS_STR_HAS(e.msg, "p.json:1:18", "error names line and column of the value");
    jr_pop(&r, s2);
    jr_pop(&r, s1);
    rc = jr_i64(&r, v, "missing", 1, 0, 0, 10, &x);
    IS_STR_HAS(e.msg, "missing required field \"missing\"", "missing field message");
    json_doc_free(d);
}

/* JSON lines: reuse the document, line numbers continue */
static void json_lines(void)
{
    json_doc *d = json_doc_new();
    sw_err e;
    const json_value *v = NULL;
    int rc = 0;
    const char *lines[] = {"{\"a\":1}", "{\"a\":2}", "{\"a\":}"};
    for (int i = 0; i < 3; i++) {
        json_doc_reset(d);
        rc = json_parse(d, lines[i], strlen(lines[i]), "log", (uint32_t)i + 1, &v, &e);
    }
    OK(rc != 0, "bad third line");
    IS_STR_HAS(e.msg, "log:3:6", "line number of JSON-lines input");
    json_doc_free(d);
}

static const tap_test tests[] = {
    {"values", values},
    {"int64_exact", int64_exact},
    {"syntax_errors", syntax_errors},
    {"typed_access", typed_access},
    {"json_lines", json_lines},
};

int main(int argc, char **argv) { return tap_run(tests, SW_ARRAY_LEN(tests), argc, argv); }
