/* import_dtr.c: importer of the DTR authors' JSON-lines execution logs
   (uwsampl/dtr-prototype, simrd/logs.zip), with the semantics of their
   simulator's parser (simrd/parse/parse.py) so that budgets and overheads
   are comparable with theirs. The mapping (docs/profile-format.md, "DTR logs"):

   * CONSTANT + MEMORY before the first CALL/MUTATE: a persistent parameter
     (resident for the whole iteration, as simrd pins constants). A CONSTANT
     after it: a non-persistent `input` tensor produced by a zero-time op
     `constant` at that point (simrd allocates it there).
   * CALL: one op (time = TIME ns), inputs = ARGS (duplicates kept), one
     output per RESULT: ALIAS -1 is a new storage of MEMORY bytes, ALIAS k a
     view of ARGS[k] (0 bytes, whatever MEMORY says).
   * MUTATE (mutate=copy, simrd's model): an op reading all ARGS that writes
     a fresh copy of each mutated argument's whole storage (root size); the
     argument's name moves to the copy and the old version loses a reference.
     No `mutates` appear, so every op can be re-run and every storage
     recomputed. mutate=inplace instead records `mutates` (PyTorch's real
     memory behaviour; rematerialisation planners then cannot recompute
     those storages).
   * COPY / COPY_FROM / RELEASE: reference counts (per tensor, summed per
     storage). When a storage's count reaches 0 it is freed; if that happens
     after its last reader, the tensor's held_until names the last op before
     the RELEASE, so the profile keeps it allocated until then.
   * Phases: forward until ANNOTATE BACKWARD, backward after (simrd also
     switches at an op whose name contains "backward", but the logs call
     the forward max_pool2d that way; phases do not affect simrd's runs).
   * End of log: tensors still referenced are read by a zero-time op
     `end_of_log` (simrd pins them, rematerialising any that were evicted),
     in the order their names were first defined.
   With this, the ideal peak equals simrd's baseline peak (to within the few
   bytes of early constants that simrd frees mid-log) and total compute is
   the sum of TIME. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/json.h"
#include "importers.h"

typedef struct dtr_name {
    uint32_t off;   /* name text in the arena */
    int32_t tensor; /* current binding */
    int32_t muts;   /* copies made by MUTATE so far (for unique names) */
} dtr_name;

typedef struct dtr_ctx {
    graph_profile *g;
    const char *file;
    sw_err *err;
    int inplace;
    /* names */
    char *arena;
    size_t alen, acap;
    dtr_name *names;
    size_t n_names, cap_names;
    int32_t *htab; /* name index or -1; size hcap (power of 2) */
    size_t hcap;
    /* per tensor (ids of g) */
    int32_t *tref;     /* references to the tensor */
    int32_t *sref;     /* per root: references to the storage (sum over its tensors) */
    uint32_t *dead_at; /* per root: line where its last reference went, 0 alive */
    size_t tcap;
    int32_t last_op;   /* last op added, -1 */
    int phase;
    int seen_op;       /* a CALL or MUTATE was seen (later constants are produced) */
    /* scratch */
    int32_t *in, *out, *mut;
    size_t cap_in, cap_out, cap_mut;
} dtr_ctx;

static int oom(dtr_ctx *c) { return sw_fail(c->err, SW_ENOMEM, "%s: out of memory", c->file); }

static int bad(dtr_ctx *c, uint32_t line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int bad(dtr_ctx *c, uint32_t line, const char *fmt, ...)
{
    char msg[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return sw_fail(c->err, SW_EINVAL, "%s:%u: %s", c->file, line, msg);
}

static const char *name_str(const dtr_ctx *c, int32_t i) { return c->arena + c->names[i].off; }

static size_t hslot(const dtr_ctx *c, const char *s, size_t n)
{
    return (size_t)sw_hash64(s, n, 0x9e3779b97f4a7c15ull) & (c->hcap - 1);
}

/* Index of name s, or -1. */
static int32_t name_find(const dtr_ctx *c, const char *s)
{
    size_t n = strlen(s);
    for (size_t h = hslot(c, s, n);; h = (h + 1) & (c->hcap - 1)) {
        int32_t i = c->htab[h];
        if (i < 0)
            return -1;
        if (strcmp(name_str(c, i), s) == 0)
            return i;
    }
}

static int rehash(dtr_ctx *c, size_t cap)
{
    int32_t *t = sw_malloc(cap * sizeof *t);
    if (!t)
        return SW_ENOMEM;
    for (size_t i = 0; i < cap; i++)
        t[i] = -1;
    sw_free(c->htab);
    c->htab = t;
    c->hcap = cap;
    for (size_t i = 0; i < c->n_names; i++) {
        const char *s = name_str(c, (int32_t)i);
        size_t h = hslot(c, s, strlen(s));
        while (t[h] >= 0)
            h = (h + 1) & (cap - 1);
        t[h] = (int32_t)i;
    }
    return 0;
}

/* Bind name s to tensor t (a new name, or rebinding an existing one). */
static int name_bind(dtr_ctx *c, const char *s, int32_t t, int32_t *idx)
{
    int32_t i = name_find(c, s);
    if (i >= 0) {
        c->names[i].tensor = t;
        if (idx)
            *idx = i;
        return 0;
    }
    if ((c->n_names + 1) * 2 > c->hcap && rehash(c, c->hcap * 2))
        return SW_ENOMEM;
    size_t n = strlen(s) + 1;
    if (SW_GROW(c->arena, c->acap, c->alen + n) || SW_GROW(c->names, c->cap_names, c->n_names + 1))
        return SW_ENOMEM;
    memcpy(c->arena + c->alen, s, n);
    dtr_name *d = &c->names[c->n_names];
    d->off = (uint32_t)c->alen;
    d->tensor = t;
    d->muts = 0;
    c->alen += n;
    size_t h = hslot(c, s, n - 1);
    while (c->htab[h] >= 0)
        h = (h + 1) & (c->hcap - 1);
    c->htab[h] = (int32_t)c->n_names;
    if (idx)
        *idx = (int32_t)c->n_names;
    c->n_names++;
    return 0;
}

/* Add a tensor to the profile and its bookkeeping (one reference). */
static int32_t add_tensor(dtr_ctx *c, const char *name, int64_t bytes, int kind, int persistent,
                          int32_t view_of)
{
    int32_t t = graph_add_tensor(c->g, name, bytes, kind, persistent);
    if (t < 0)
        return -1;
    if (SW_GROW(c->tref, c->tcap, (size_t)t + 1)) {
        return -1;
    }
    size_t cap2 = c->tcap;
    int32_t *s2 = sw_realloc(c->sref, cap2 * sizeof *s2);
    if (!s2)
        return -1;
    c->sref = s2;
    uint32_t *d2 = sw_realloc(c->dead_at, cap2 * sizeof *d2);
    if (!d2)
        return -1;
    c->dead_at = d2;
    int32_t root = t;
    if (view_of >= 0) {
        c->g->tensors[t].view_of = view_of;
        root = view_of;
        while (c->g->tensors[root].view_of >= 0)
            root = c->g->tensors[root].view_of;
    }
    c->g->tensors[t].storage = root; /* provisional; graph_finish derives it again */
    c->tref[t] = 1;
    c->sref[t] = 0;
    c->dead_at[t] = 0;
    c->sref[root]++;
    return t;
}

static int32_t root_of(const dtr_ctx *c, int32_t t) { return c->g->tensors[t].storage; }

/* Drop one reference to tensor t at line; frees the storage at zero. */
static int unref(dtr_ctx *c, int32_t t, uint32_t line, const char *what)
{
    int32_t r = root_of(c, t);
    if (c->sref[r] <= 0 || c->tref[t] <= 0)
        return bad(c, line, "%s of '%s', which has no references left (released at line %u)",
                   what, c->g->tensors[t].name, c->dead_at[r]);
    c->tref[t]--;
    if (--c->sref[r] == 0) {
        c->dead_at[r] = line;
        graph_tensor *x = &c->g->tensors[r];
        if (!x->persistent && c->last_op >= 0)
            x->held_until = c->last_op;
    }
    return 0;
}

/* Current tensor of an argument name; errors on unknown or released names. */
static int arg_tensor(dtr_ctx *c, const char *s, uint32_t line, const char *instr, int32_t *out)
{
    int32_t i = name_find(c, s);
    if (i < 0)
        return bad(c, line, "%s refers to '%s', which is not a known tensor", instr, s);
    int32_t t = c->names[i].tensor, r = root_of(c, t);
    if (c->sref[r] <= 0)
        return bad(c, line, "%s uses '%s' after its last reference was released (line %u)",
                   instr, s, c->dead_at[r]);
    *out = t;
    return 0;
}

/* A string or integer field holding an integer in [min, max]. */
static int get_int(dtr_ctx *c, const json_value *o, const char *key, uint32_t line, int64_t min,
                   int64_t max, int64_t *out)
{
    const json_value *v = json_get(o, key);
    if (!v)
        return bad(c, line, "missing field %s", key);
    if (v->type == JSON_NUMBER && v->is_int) {
        *out = v->u.num.i;
    } else if (v->type == JSON_STRING) {
        if (sw_parse_i64(v->u.str, out))
            return bad(c, line, "field %s: expected an integer, got \"%s\"", key, v->u.str);
    } else {
        return bad(c, line, "field %s: expected an integer (as a string)", key);
    }
    if (*out < min || *out > max)
        return bad(c, line, "field %s: expected an integer from %lld to %lld, got %lld", key,
                   (long long)min, (long long)max, (long long)*out);
    return 0;
}

static int get_str(dtr_ctx *c, const json_value *o, const char *key, uint32_t line,
                   const char **out)
{
    const json_value *v = json_get(o, key);
    if (!v || v->type != JSON_STRING)
        return bad(c, line, "%s field %s: expected a string", v ? "bad" : "missing", key);
    *out = v->u.str;
    return 0;
}

static int get_arr(dtr_ctx *c, const json_value *o, const char *key, uint32_t line,
                   const json_value **out)
{
    const json_value *v = json_get(o, key);
    if (!v || v->type != JSON_ARRAY)
        return bad(c, line, "%s field %s: expected an array", v ? "bad" : "missing", key);
    *out = v;
    return 0;
}

/* ---- line reader ---- */

typedef struct lines {
    const char *p, *end;
    uint32_t line; /* number of the line last returned */
} lines;

/* Next non-blank line; returns 0 at the end. */
static int next_line(lines *L, const char **s, size_t *n)
{
    while (L->p < L->end) {
        const char *e = memchr(L->p, '\n', (size_t)(L->end - L->p));
        if (!e)
            e = L->end;
        const char *b = L->p;
        L->p = e < L->end ? e + 1 : e;
        L->line++;
        size_t len = (size_t)(e - b);
        while (len && (b[len - 1] == '\r' || b[len - 1] == ' ' || b[len - 1] == '\t'))
            len--;
        size_t k = 0;
        while (k < len && (b[k] == ' ' || b[k] == '\t'))
            k++;
        if (k == len)
            continue;
        *s = b;
        *n = len;
        return 1;
    }
    return 0;
}

/* Parse the next line as an object with an INSTRUCTION; *instr NULL at end. */
static int read_instr(dtr_ctx *c, lines *L, json_doc *d, const json_value **obj,
                      const char **instr)
{
    const char *s;
    size_t n;
    *instr = NULL;
    if (!next_line(L, &s, &n))
        return 0;
    json_doc_reset(d);
    int rc = json_parse(d, s, n, c->file, L->line, obj, c->err);
    if (rc)
        return rc;
    if ((*obj)->type != JSON_OBJECT)
        return bad(c, L->line, "expected a JSON object with an INSTRUCTION field");
    return get_str(c, *obj, "INSTRUCTION", L->line, instr);
}

/* ---- instructions ---- */

static int do_constant(dtr_ctx *c, const json_value *o, lines *L, json_doc *d2)
{
    uint32_t line = L->line;
    const char *name = NULL, *instr = NULL, *mname = NULL;
    int rc;
    if ((rc = get_str(c, o, "NAME", line, &name)))
        return rc;
    char *nm = sw_strdup(name);
    if (!nm)
        return oom(c);
    const json_value *m = NULL;
    int64_t bytes = 0;
    rc = read_instr(c, L, d2, &m, &instr);
    if (!rc && !instr)
        rc = bad(c, L->line, "the log ends after CONSTANT '%s' (line %u): expected a MEMORY line",
                 nm, line);
    if (!rc && strcmp(instr, "MEMORY"))
        rc = bad(c, L->line, "expected MEMORY for CONSTANT '%s' (line %u), got %s", nm, line,
                 instr);
    if (!rc)
        rc = get_str(c, m, "NAME", L->line, &mname);
    if (!rc && strcmp(mname, nm))
        rc = bad(c, L->line, "MEMORY names '%s', expected '%s' (CONSTANT at line %u)", mname, nm,
                 line);
    if (!rc)
        rc = get_int(c, m, "MEMORY", L->line, 0, INT64_MAX / 4, &bytes);
    if (rc) {
        sw_free(nm);
        return rc;
    }
    int32_t t;
    if (!c->seen_op) {
        t = add_tensor(c, nm, bytes, GK_PARAMETER, 1, -1);
    } else {
        t = add_tensor(c, nm, bytes, GK_INPUT, 0, -1);
        if (t >= 0) {
            int32_t op = graph_add_op(c->g, "constant", "constant", 0, c->phase, NULL, 0, &t, 1,
                                      NULL, 0, 0);
            if (op < 0)
                t = -1;
            else
                c->last_op = op;
        }
    }
    rc = t < 0 || name_bind(c, nm, t, NULL) ? oom(c) : 0;
    sw_free(nm);
    return rc;
}

static int grow_i32(int32_t **a, size_t *cap, size_t n)
{
    return sw_grow((void **)a, cap, n + 1, sizeof **a);
}

/* ARGS of a CALL/MUTATE into c->in. */
static int read_args(dtr_ctx *c, const json_value *o, uint32_t line, const char *instr,
                     const json_value **args)
{
    int rc = get_arr(c, o, "ARGS", line, args);
    if (rc)
        return rc;
    if (grow_i32(&c->in, &c->cap_in, (*args)->n))
        return oom(c);
    for (uint32_t i = 0; i < (*args)->n; i++) {
        const json_value *a = &(*args)->u.items[i];
        if (a->type != JSON_STRING)
            return bad(c, line, "%s ARGS[%u]: expected a tensor name (string)", instr, i);
        if ((rc = arg_tensor(c, a->u.str, line, instr, &c->in[i])))
            return rc;
    }
    return 0;
}

static int do_call(dtr_ctx *c, const json_value *o, lines *L, json_doc *d2)
{
    uint32_t line = L->line;
    const char *opname = NULL, *instr = NULL;
    const json_value *args = NULL, *res = NULL;
    int64_t ns = 0;
    int rc;
    if ((rc = get_str(c, o, "NAME", line, &opname)) || (rc = read_args(c, o, line, "CALL", &args)) ||
        (rc = get_arr(c, o, "RESULT", line, &res)) ||
        (rc = get_int(c, o, "TIME", line, 0, INT64_MAX / 4, &ns)))
        return rc;
    uint32_t nres = res->n, nargs = args->n;
    if (grow_i32(&c->out, &c->cap_out, nres))
        return oom(c);
    for (uint32_t i = 0; i < nres; i++) {
        const json_value *r = &res->u.items[i];
        if (r->type != JSON_STRING)
            return bad(c, line, "CALL %s RESULT[%u]: expected a tensor name (string)", opname, i);
        if (name_find(c, r->u.str) >= 0)
            return bad(c, line, "CALL %s result '%s': the name is already defined", opname,
                       r->u.str);
        for (uint32_t j = 0; j < i; j++)
            if (!strcmp(res->u.items[j].u.str, r->u.str))
                return bad(c, line, "CALL %s result '%s' appears twice", opname, r->u.str);
    }
    /* the MEMORY/ALIAS lines follow; results are added once all are read */
    int64_t *mem = sw_malloc(((size_t)nres + 1) * sizeof *mem);
    int64_t *alias = sw_malloc(((size_t)nres + 1) * sizeof *alias);
    if (!mem || !alias) {
        sw_free(mem);
        sw_free(alias);
        return oom(c);
    }
    for (uint32_t i = 0; i < 2 * nres && !rc; i++) {
        const json_value *m = NULL;
        const char *want = i % 2 ? "ALIAS" : "MEMORY", *rname = res->u.items[i / 2].u.str, *nm = NULL;
        rc = read_instr(c, L, d2, &m, &instr);
        if (!rc && !instr)
            rc = bad(c, L->line, "the log ends inside CALL %s (line %u): expected %s for '%s'",
                     opname, line, want, rname);
        if (!rc && strcmp(instr, want))
            rc = bad(c, L->line, "expected %s for result '%s' of CALL %s (line %u), got %s", want,
                     rname, opname, line, instr);
        if (!rc)
            rc = get_str(c, m, "NAME", L->line, &nm);
        if (!rc && strcmp(nm, rname))
            rc = bad(c, L->line, "%s names '%s', expected '%s' (CALL %s at line %u)", want, nm,
                     rname, opname, line);
        if (!rc && i % 2 == 0)
            rc = get_int(c, m, "MEMORY", L->line, 0, INT64_MAX / 4, &mem[i / 2]);
        if (!rc && i % 2 == 1) {
            rc = get_int(c, m, "ALIAS", L->line, -1, (int64_t)nargs - 1, &alias[i / 2]);
            if (rc)
                rc = bad(c, L->line, "ALIAS of '%s': expected -1 or an index into the %u ARGS "
                         "of CALL %s (line %u)", rname, nargs, opname, line);
        }
    }
    int kind = c->phase == GP_BACKWARD ? GK_GRADIENT : GK_ACTIVATION;
    for (uint32_t i = 0; i < nres && !rc; i++) {
        int32_t base = alias[i] >= 0 ? c->in[alias[i]] : -1;
        int k = base >= 0 ? c->g->tensors[base].kind : kind;
        if (k == GK_PARAMETER)
            k = GK_ACTIVATION;
        int32_t t = add_tensor(c, res->u.items[i].u.str, mem[i], k, 0, base);
        if (t < 0 || name_bind(c, res->u.items[i].u.str, t, NULL))
            rc = oom(c);
        else
            c->out[i] = t;
    }
    sw_free(mem);
    sw_free(alias);
    if (rc)
        return rc;
    int32_t op = graph_add_op(c->g, opname, opname, (double)ns * 1e-9, c->phase, c->in,
                              (int)nargs, c->out, (int)nres, NULL, 0, 0);
    if (op < 0)
        return oom(c);
    c->last_op = op;
    c->seen_op = 1;
    return 0;
}

static int do_mutate(dtr_ctx *c, const json_value *o, lines *L)
{
    uint32_t line = L->line;
    const char *opname = NULL;
    const json_value *args = NULL, *mv = NULL;
    int64_t ns = 0;
    int rc;
    if ((rc = get_str(c, o, "NAME", line, &opname)) ||
        (rc = read_args(c, o, line, "MUTATE", &args)) ||
        (rc = get_arr(c, o, "MUTATE", line, &mv)) ||
        (rc = get_int(c, o, "TIME", line, 0, INT64_MAX / 4, &ns)))
        return rc;
    uint32_t n = mv->n, nargs = args->n;
    if (grow_i32(&c->mut, &c->cap_mut, n) || grow_i32(&c->out, &c->cap_out, n))
        return oom(c);
    for (uint32_t i = 0; i < n; i++) {
        int64_t k;
        const json_value *v = &mv->u.items[i];
        if (v->type == JSON_NUMBER && v->is_int)
            k = v->u.num.i;
        else if (v->type != JSON_STRING || sw_parse_i64(v->u.str, &k))
            return bad(c, line, "MUTATE %s MUTATE[%u]: expected an argument index", opname, i);
        if (k < 0 || k >= nargs)
            return bad(c, line, "MUTATE %s MUTATE[%u] = %lld: expected an index into its %u ARGS",
                       opname, i, (long long)k, nargs);
        for (uint32_t j = 0; j < i; j++)
            if (c->mut[j] == (int32_t)k)
                return bad(c, line, "MUTATE %s: argument %lld is mutated twice", opname,
                           (long long)k);
        c->mut[i] = (int32_t)k;
    }
    int32_t op;
    if (c->inplace) {
        /* in place: inputs are the arguments not mutated, mutates the others */
        int32_t *mt = sw_malloc(((size_t)n + 1) * sizeof *mt), *in = c->out;
        int nin = 0;
        if (!mt || grow_i32(&c->out, &c->cap_out, nargs)) {
            sw_free(mt);
            return oom(c);
        }
        in = c->out;
        for (uint32_t a = 0; a < nargs; a++) {
            int m = 0;
            for (uint32_t i = 0; i < n; i++)
                m |= c->mut[i] == (int32_t)a;
            if (!m)
                in[nin++] = c->in[a];
        }
        for (uint32_t i = 0; i < n; i++)
            mt[i] = c->in[c->mut[i]];
        op = graph_add_op(c->g, opname, opname, (double)ns * 1e-9, c->phase, in, nin, NULL, 0,
                          mt, (int)n, 0);
        sw_free(mt);
        if (op < 0)
            return oom(c);
    } else {
        /* simrd: a fresh copy of each mutated argument's whole storage */
        for (uint32_t i = 0; i < n; i++) {
            const char *an = args->u.items[c->mut[i]].u.str;
            int32_t ni = name_find(c, an), old = c->in[c->mut[i]], r = root_of(c, old);
            char nm[256];
            snprintf(nm, sizeof nm, "%s$%d", an, ++c->names[ni].muts);
            int k = c->g->tensors[r].kind;
            if (k == GK_PARAMETER)
                k = GK_ACTIVATION;
            int32_t t = add_tensor(c, nm, c->g->tensors[r].bytes, k, 0, -1);
            if (t < 0)
                return oom(c);
            c->out[i] = t;
        }
        op = graph_add_op(c->g, opname, opname, (double)ns * 1e-9, c->phase, c->in, (int)nargs,
                          c->out, (int)n, NULL, 0, 0);
        if (op < 0)
            return oom(c);
        c->last_op = op;
        /* the names move to the copies; the old versions lose a reference */
        for (uint32_t i = 0; i < n; i++) {
            const char *an = args->u.items[c->mut[i]].u.str;
            if (name_bind(c, an, c->out[i], NULL))
                return oom(c);
            if ((rc = unref(c, c->in[c->mut[i]], line, "MUTATE")))
                return rc;
        }
    }
    c->last_op = op;
    c->seen_op = 1;
    return 0;
}

static int do_copy(dtr_ctx *c, const json_value *o, uint32_t line, int from)
{
    const char *dst = NULL, *src = NULL;
    const char *what = from ? "COPY_FROM" : "COPY";
    int32_t t, old = -1;
    int rc;
    if ((rc = get_str(c, o, "DST", line, &dst)) || (rc = get_str(c, o, "SRC", line, &src)) ||
        (rc = arg_tensor(c, src, line, what, &t)))
        return rc;
    if (from) {
        int32_t i = name_find(c, dst);
        if (i < 0)
            return bad(c, line, "COPY_FROM into '%s', which is not a known tensor", dst);
        old = c->names[i].tensor;
        /* simrd: release the old binding first, then take the new reference */
        if ((rc = unref(c, old, line, "COPY_FROM")))
            return rc;
    } else if (name_find(c, dst) >= 0) {
        return bad(c, line, "COPY into '%s', which is already defined (COPY_FROM rebinds)", dst);
    }
    c->tref[t]++;
    c->sref[root_of(c, t)]++;
    return name_bind(c, dst, t, NULL) ? oom(c) : 0;
}

static int do_release(dtr_ctx *c, const json_value *o, uint32_t line)
{
    const char *name = NULL;
    int rc = get_str(c, o, "NAME", line, &name);
    if (rc)
        return rc;
    int32_t i = name_find(c, name);
    if (i < 0)
        return 0; /* simrd ignores releases of names it never saw */
    return unref(c, c->names[i].tensor, line, "RELEASE");
}

/* The end-of-log reader of every tensor still referenced. */
static int add_sink(dtr_ctx *c)
{
    graph_profile *g = c->g;
    uint8_t *seen = sw_calloc((size_t)g->n_tensors + 1, 1);
    if (!seen || grow_i32(&c->in, &c->cap_in, c->n_names)) {
        sw_free(seen);
        return oom(c);
    }
    int n = 0;
    for (size_t i = 0; i < c->n_names; i++) {
        int32_t t = c->names[i].tensor;
        if (seen[t] || c->tref[t] <= 0 || g->tensors[root_of(c, t)].persistent)
            continue;
        seen[t] = 1;
        c->in[n++] = t;
    }
    sw_free(seen);
    if (!n)
        return 0;
    return graph_add_op(g, "end_of_log", "sink", 0, GP_UPDATE, c->in, n, NULL, 0, NULL, 0, 0) < 0
               ? oom(c)
               : 0;
}

/* "resnet32-56-9000000000.0-....log" -> name "resnet32", batch 56 */
static void name_from_file(const char *path, char *name, size_t n, int64_t *batch)
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    snprintf(name, n, "%s", b);
    char *dash = strchr(name, '-');
    *batch = 0;
    if (dash) {
        char *e;
        long long v = strtoll(dash + 1, &e, 10);
        if (e > dash + 1 && (*e == '-' || *e == '.' || !*e) && v > 0)
            *batch = v;
        *dash = 0;
    } else {
        char *dot = strrchr(name, '.');
        if (dot && dot != name)
            *dot = 0;
    }
}

static void ctx_free(dtr_ctx *c)
{
    sw_free(c->arena);
    sw_free(c->names);
    sw_free(c->htab);
    sw_free(c->tref);
    sw_free(c->sref);
    sw_free(c->dead_at);
    sw_free(c->in);
    sw_free(c->out);
    sw_free(c->mut);
}

static int import_text(dtr_ctx *c, const char *text, size_t len, int start)
{
    json_doc *d = json_doc_new(), *d2 = json_doc_new();
    if (!d || !d2) {
        json_doc_free(d);
        json_doc_free(d2);
        return oom(c);
    }
    lines L = {text, text + len, 0};
    const json_value *o;
    const char *instr;
    int rc = 0, started = !start;
    uint32_t start_line = 0;
    while (!rc && !(rc = read_instr(c, &L, d, &o, &instr)) && instr) {
        uint32_t line = L.line;
        if (!strcmp(instr, "ANNOTATE")) {
            const char *a = NULL;
            if ((rc = get_str(c, o, "ANNOTATION", line, &a)))
                break;
            if (!started) {
                if (!strcmp(a, "START")) {
                    started = 1;
                    start_line = line;
                }
            } else if (!strcmp(a, "BACKWARD")) {
                c->phase = GP_BACKWARD;
            }
            continue;
        }
        if (!started)
            continue; /* simrd drops everything before START */
        if (!strcmp(instr, "CONSTANT"))
            rc = do_constant(c, o, &L, d2);
        else if (!strcmp(instr, "CALL"))
            rc = do_call(c, o, &L, d2);
        else if (!strcmp(instr, "MUTATE"))
            rc = do_mutate(c, o, &L);
        else if (!strcmp(instr, "COPY"))
            rc = do_copy(c, o, line, 0);
        else if (!strcmp(instr, "COPY_FROM"))
            rc = do_copy(c, o, line, 1);
        else if (!strcmp(instr, "RELEASE"))
            rc = do_release(c, o, line);
        else if (!strcmp(instr, "MEMORY") || !strcmp(instr, "ALIAS"))
            rc = bad(c, line, "%s outside a CONSTANT or CALL", instr);
        else
            rc = bad(c, line, "unknown instruction '%s' (expected ANNOTATE, CONSTANT, MEMORY, "
                     "CALL, ALIAS, MUTATE, COPY, COPY_FROM or RELEASE)", instr);
    }
    json_doc_free(d);
    json_doc_free(d2);
    (void)start_line;
    if (rc)
        return rc;
    if (!started)
        return sw_fail(c->err, SW_EINVAL, "%s: no ANNOTATE START line (set --start false to "
                       "import from the first line)", c->file);
    if (c->g->n_ops == 0)
        return sw_fail(c->err, SW_EINVAL, "%s:%u: the log has no CALL or MUTATE", c->file, L.line);
    return add_sink(c);
}

static const param_def dtr_params[] = {
    {"mutate", PT_CHOICE, "copy", "MUTATE as simrd models it (an op writing a fresh copy of the "
     "storage, so everything stays recomputable) or in place (mutates; PyTorch's memory)",
     "copy|inplace", 1, 0},
    {"start", PT_BOOL, "true", "skip the lines up to the first ANNOTATE START (as simrd does)",
     NULL, 1, 0},
    {"name", PT_STRING, "", "profile name (default: from the file name)", NULL, 1, 0},
    {"batch", PT_INT, "0", "samples per iteration (0: from the file name, else 1)", NULL, 0, 1e9},
    PARAM_END};

static int import_dtr(const char *const *files, int n, const param_set *ps, const dev_spec *dev,
                      graph_profile **out, sw_err *err)
{
    *out = NULL;
    (void)n;
    const char *file = files[0];
    char name[256];
    int64_t batch;
    name_from_file(file, name, sizeof name, &batch);
    if (params_str(ps, "name")[0])
        snprintf(name, sizeof name, "%s", params_str(ps, "name"));
    if (params_int(ps, "batch") > 0)
        batch = params_int(ps, "batch");
    char *text;
    size_t len;
    int rc = sw_read_file(file, &text, &len, err);
    if (rc)
        return rc;
    dtr_ctx c;
    memset(&c, 0, sizeof c);
    c.file = file;
    c.err = err;
    c.inplace = !strcmp(params_str(ps, "mutate"), "inplace");
    c.last_op = -1;
    c.phase = GP_FORWARD;
    c.g = graph_new(name, dev);
    if (!c.g || rehash(&c, 1024)) {
        rc = oom(&c);
        goto done;
    }
    c.g->batch = batch > 0 ? batch : 1;
    rc = import_text(&c, text, len, params_bool(ps, "start"));
    if (rc)
        goto done;
    sw_buf b;
    sw_buf_init(&b);
    sw_buf_printf(&b, "swapsim import dtr --mutate %s", params_str(ps, "mutate"));
    int e = b.oom || graph_set_str(&c.g->prov.source, "recorded") ||
            graph_set_str(&c.g->prov.tool, b.data) ||
            graph_set_str(&c.g->prov.file, file) || graph_set_str(&c.g->prov.device, dev->name) ||
            graph_set_str(&c.g->prov.notes,
                          "DTR log (PyTorch 1.5, recorded by the DTR authors); simrd's semantics: "
                          "constants before the first op are persistent parameters, later ones "
                          "zero-time 'constant' ops; views 0 bytes; storages freed when their "
                          "references are released (held_until); tensors still referenced at the "
                          "end are read by 'end_of_log'");
    sw_buf_free(&b);
    if (e) {
        rc = oom(&c);
        goto done;
    }
    int32_t bad_op, bad_t;
    rc = graph_finish(c.g, err, &bad_op, &bad_t);
    if (rc)
        sw_err_prefix(err, "%s: ", file);
done:
    sw_free(text);
    if (rc) {
        graph_free(c.g);
        c.g = NULL;
    }
    ctx_free(&c);
    *out = c.g;
    return rc;
}

const importer importer_dtr = {"dtr",
                               "DTR's JSON-lines execution logs (uwsampl/dtr-prototype), with "
                               "simrd's semantics",
                               "LOG", 1, 1, dtr_params, import_dtr};
