/* runner_priv.h: the experiment runner's state, shared by runner.c (the
   grid, running and caching cells) and runner_csv.c (derived columns and
   the CSV); not for other files. */
#ifndef RUNNER_PRIV_H
#define RUNNER_PRIV_H

#include "runner.h"
#include "../common/json.h"

#define MAX_VARS 16
#define MAX_FIELDS 8
#define MAX_ARGS 96

/* one value of a variable: one or more named fields (zipped variables) */
typedef struct exp_val {
    int n;
    const char *key[MAX_FIELDS];
    char *text[MAX_FIELDS];
} exp_val;

typedef struct exp_var {
    const char *name;
    exp_val *vals;
    int n;
} exp_var;

typedef struct exp_cell {
    int idx[MAX_VARS];     /* value index per variable */
    char *argv[MAX_ARGS];  /* expanded command (argv[0] is the binary) */
    int argc;
    char *pargv[MAX_ARGS]; /* profile command, if any */
    int pargc;
    uint64_t key;          /* cache key */
    uint64_t pkey;
    /* result */
    int done, status;      /* status: 0 ok, 1 user error */
    double wall;
    char *output;          /* stdout (JSON object) */
    char *message;         /* first line of stderr */
    int cached;
} exp_cell;

typedef struct exp {
    const exp_opts *o;
    sw_err *err;
    json_doc *doc;
    const char *name, *csv;
    exp_var vars[MAX_VARS];
    int nvars;
    const json_value *cmd, *pcmd;
    exp_cell *cells;
    size_t ncells;
    uint64_t bin_hash;
    char dir[1024];
    const json_value *derive; /* the file's "derive": columns from a reference cell (NULL: none) */
    int maxjobs;     /* the file's "jobs": cells at once on one machine (0: no limit) */
    int slots_total; /* cells at once on every rank together (progress estimate) */
    int tenths;      /* progress 2: the tenths of the cells reported */
} exp;

/* runner.c: the value of a placeholder name in cell c (NULL: none); a JSON
   value's text as a cell gives it (the caller frees it) */
const char *exp_lookup(const exp *x, const exp_cell *c, const char *name);
char *exp_value_text(const json_value *v);

/* runner_csv.c */
int exp_derive_check(exp *x, jr *r, const json_value *d);
int exp_write_csv(exp *x);

#endif
