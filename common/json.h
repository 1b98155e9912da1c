/* json.h: a small, fast JSON reader that keeps the line and column of every
   value (so later checks can point into the file), plus typed field helpers
   that report errors as "FILE:LINE:COL: at $.json.path: what was expected". */
#ifndef JSON_H
#define JSON_H

#include <stddef.h>
#include <stdint.h>
#include "sw.h"

typedef enum {
    JSON_NULL = 1,
    JSON_FALSE = 2,
    JSON_TRUE = 4,
    JSON_NUMBER = 8,
    JSON_STRING = 16,
    JSON_ARRAY = 32,
    JSON_OBJECT = 64
} json_type;
#define JSON_BOOL (JSON_FALSE | JSON_TRUE)

typedef struct json_value json_value;
typedef struct json_member json_member;

struct json_value {
    uint8_t type;       /* one json_type */
    uint8_t is_int;     /* number written without fraction or exponent, fits int64 */
    uint32_t line, col; /* 1-based position of the value's first character */
    uint32_t n;         /* string length, array items, object members */
    union {
        struct {
            double d;
            int64_t i;
        } num;
        const char *str;    /* NUL-terminated, unescaped */
        json_value *items;  /* n values */
        json_member *members; /* n members, in file order */
    } u;
};

struct json_member {
    const char *key;
    json_value val;
};

/* A document owns the memory of every value parsed into it. It can be reset
   and reused (for JSON-lines input) without freeing its arena. */
typedef struct json_doc json_doc;

json_doc *json_doc_new(void);
void json_doc_free(json_doc *d);
/* Drop every value parsed so far; keeps the arena for reuse. */
void json_doc_reset(json_doc *d);
/* Parse text[0..len) as one JSON value. file names the input in errors;
   first_line is the line number of text[0] (1 for a whole file). On success
   *root points into the document. Errors: SW_EINVAL ("file:line:col: ..."),
   SW_ENOMEM. */
int json_parse(json_doc *d, const char *text, size_t len, const char *file, uint32_t first_line,
               const json_value **root, sw_err *err);

/* Member of an object by key, or NULL. */
const json_value *json_get(const json_value *obj, const char *key);
/* Name of a type mask for messages ("a number", "a string or null"). */
const char *json_type_name(int mask);

/* Typed access with JSON paths in errors. */
typedef struct jr {
    const char *file;
    sw_err *err;
    size_t len;
    char path[512];
} jr;

void jr_init(jr *r, const char *file, sw_err *err);
/* Push a path component; returns the length to pass to jr_pop. */
size_t jr_push_key(jr *r, const char *key);
size_t jr_push_idx(jr *r, size_t idx);
void jr_pop(jr *r, size_t saved);
/* Report an error at value v (NULL: no position) under the current path,
   with an optional extra component key. Returns SW_EINVAL. */
int jr_error(jr *r, const json_value *v, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Look up obj.key. Missing: error if required, else *out = NULL. Present with
   a type outside mask: error. Returns 0 or SW_EINVAL. */
int jr_field(jr *r, const json_value *obj, const char *key, int mask, int required,
             const json_value **out);
int jr_i64(jr *r, const json_value *obj, const char *key, int required, int64_t def, int64_t min,
           int64_t max, int64_t *out);
int jr_f64(jr *r, const json_value *obj, const char *key, int required, double def, double min,
           double *out);
/* As jr_f64, with an upper bound too (values outside [min, max], and infinities, are errors). */
int jr_f64_range(jr *r, const json_value *obj, const char *key, int required, double def,
                 double min, double max, double *out);
int jr_bool(jr *r, const json_value *obj, const char *key, int required, int def, int *out);
/* *out points into the document (or is def). */
int jr_str(jr *r, const json_value *obj, const char *key, int required, const char *def,
           const char **out);
/* Value v itself as an integer in [min, max] (v's path is the current path). */
int jr_as_i64(jr *r, const json_value *v, int64_t min, int64_t max, int64_t *out);

/* Builds a value (into out) from a parsed document's root; r reads with paths. */
typedef int (*jr_reader)(jr *r, const json_value *root, void *out);
/* Parse text (len bytes; file names it in errors), then hand its root to read
   with a reader on file. The document is freed when read returns, so read
   must copy what it keeps. Errors: json_parse's, SW_ENOMEM, or read's. */
int jr_read_text(const char *text, size_t len, const char *file, jr_reader read, void *out,
                 sw_err *err);
/* As jr_read_text, on the contents of the file at path (named path in errors). */
int jr_read_file(const char *path, jr_reader read, void *out, sw_err *err);

#endif
