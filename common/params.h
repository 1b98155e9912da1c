/* params.h: declared, typed key=value options (planner hyperparameters,
   model generator options), validated when set and listed for --help. */
#ifndef PARAMS_H
#define PARAMS_H

#include <stdint.h>
#include "sw.h"

typedef enum {
    PT_INT,     /* integer */
    PT_FLOAT,   /* real number */
    PT_SIZE,    /* byte size (16GiB, 512MiB, 1234) */
    PT_SECONDS, /* duration (10ms, 2s) */
    PT_BOOL,    /* true/false, 1/0, yes/no */
    PT_CHOICE,  /* one of a '|'-separated list in choices */
    PT_STRING
} param_type;

typedef struct param_def {
    const char *key;
    param_type type;
    const char *def;     /* default value as text (NULL: no default, must be set) */
    const char *help;
    const char *choices; /* PT_CHOICE: "a|b|c" */
    double min, max;     /* PT_INT/PT_FLOAT/PT_SIZE bounds (ignored if min > max) */
} param_def;

#define PARAM_END {NULL, PT_INT, NULL, NULL, NULL, 0, 0}

/* A set of values for one table of definitions. */
typedef struct param_set {
    const param_def *defs;
    int n;
    const char **vals; /* vals[i] overrides defs[i].def when not NULL (owned copies) */
} param_set;

/* Initialise for a NULL-key-terminated table. Returns 0 or SW_ENOMEM. */
int params_init(param_set *ps, const param_def *defs);
void params_free(param_set *ps);
/* Set "key=value" or (key, value); validates the key and the value's type.
   Errors name the key and what was expected. */
int params_set_kv(param_set *ps, const char *assignment, sw_err *err);
int params_set(param_set *ps, const char *key, const char *value, sw_err *err);
/* Index of key, or -1. */
int params_find(const param_set *ps, const char *key);
/* Typed getters; the key must be declared (asserted). */
int64_t params_int(const param_set *ps, const char *key);
double params_float(const param_set *ps, const char *key);
int64_t params_size(const param_set *ps, const char *key);
double params_seconds(const param_set *ps, const char *key);
int params_bool(const param_set *ps, const char *key);
const char *params_str(const param_set *ps, const char *key);
/* 1 if the user set the key explicitly. */
int params_is_set(const param_set *ps, const char *key);
/* Append "key=value" pairs of every parameter (for plan metadata) as a JSON object. */
void params_to_json(const param_set *ps, sw_buf *b);
/* Print the table as help text lines ("  key=DEFAULT  help"). */
void params_help(const param_def *defs, sw_buf *b, const char *prefix);
/* Validate a value for a definition. */
int params_check(const param_def *d, const char *value, sw_err *err);

#endif
