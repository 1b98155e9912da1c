/* runner_csv.c: an experiment's derived columns and its CSV (see
   runner_priv.h and docs/experiments.md). */
#include "runner_priv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- CSV ---- */

/* ---- derived columns ("derive") ----
   Each entry: {"column": NAME, "from": {FIELD: VALUE, ...}, then either
   "copy": FIELD or "ratio": FIELD, "over": FIELD, and optionally "where":
   {FIELD: VALUE or [VALUE, ...], ...}}. A cell's reference is the cell with
   the same values of every variable except those holding the "from" fields,
   which take the given values; "copy" copies the reference's FIELD, "ratio"
   divides this cell's FIELD by the reference's "over" FIELD. "where": only
   cells whose fields match (any value of a list). Several entries may fill
   one column: the first that applies to a cell wins. A field is a variable
   field, status, message or a field of the command's JSON output. */

int exp_derive_check(exp *x, jr *r, const json_value *d)
{
    size_t s0 = jr_push_key(r, "derive");
    for (uint32_t i = 0; i < d->n; i++) {
        const json_value *e = &d->u.items[i];
        const json_value *from = NULL, *where = NULL;
        const char *col, *copy, *ratio, *over;
        char idx[16];
        snprintf(idx, sizeof idx, "%u", i);
        size_t s1 = jr_push_key(r, idx);
        int rc = e->type != JSON_OBJECT ? jr_error(r, e, NULL, "expected an object") : 0;
        if (!rc)
            rc = jr_str(r, e, "column", 1, NULL, &col);
        if (!rc)
            rc = jr_field(r, e, "from", JSON_OBJECT, 1, &from);
        if (!rc)
            rc = jr_field(r, e, "where", JSON_OBJECT, 0, &where);
        if (!rc)
            rc = jr_str(r, e, "copy", 0, NULL, &copy);
        if (!rc)
            rc = jr_str(r, e, "ratio", 0, NULL, &ratio);
        if (!rc)
            rc = jr_str(r, e, "over", 0, NULL, &over);
        if (!rc && !copy == !ratio)
            rc = jr_error(r, e, NULL, "expected one of \"copy\" or \"ratio\"");
        if (!rc && !ratio != !over)
            rc = jr_error(r, e, NULL, "\"ratio\" and \"over\" go together");
        for (uint32_t k = 0; !rc && from && k < from->n; k++) {
            const json_member *m = &from->u.members[k];
            int found = 0;
            for (int v = 0; v < x->nvars && !found; v++)
                for (int j = 0; j < x->vars[v].n && !found; j++)
                    for (int f = 0; f < x->vars[v].vals[j].n; f++)
                        found |= !strcmp(x->vars[v].vals[j].key[f], m->key);
            size_t s2 = jr_push_key(r, "from");
            if (m->val.type != JSON_STRING)
                rc = jr_error(r, &m->val, m->key, "expected a string");
            else if (!found)
                rc = jr_error(r, &m->val, m->key, "'%s' is not a variable field", m->key);
            jr_pop(r, s2);
        }
        for (uint32_t k = 0; !rc && where && k < where->n; k++) {
            const json_value *v = &where->u.members[k].val;
            int ok = v->type == JSON_STRING || v->type == JSON_ARRAY;
            for (uint32_t j = 0; v->type == JSON_ARRAY && j < v->n; j++)
                ok &= v->u.items[j].type == JSON_STRING;
            if (!ok || (v->type == JSON_ARRAY && v->n == 0)) {
                size_t s2 = jr_push_key(r, "where");
                rc = jr_error(r, v, where->u.members[k].key, "expected a string or a non-empty "
                              "list of strings");
                jr_pop(r, s2);
            }
        }
        if (rc)
            return rc;
        jr_pop(r, s1);
    }
    jr_pop(r, s0);
    return 0;
}

/* cell i's field as text (NULL: none; *own set when the caller frees it) */
static const char *cell_field(const exp *x, size_t i, const json_value *out, const char *name,
                              char **own)
{
    const exp_cell *c = &x->cells[i];
    *own = NULL;
    const char *v = exp_lookup(x, c, name);
    if (v)
        return v;
    if (!strcmp(name, "status"))
        return c->status == 0 ? "ok" : "error";
    if (!strcmp(name, "message"))
        return c->message ? c->message : "";
    const json_value *j = out ? json_get(out, name) : NULL;
    return j ? (*own = exp_value_text(j)) : NULL;
}

static int where_match(const exp *x, size_t i, const json_value *out, const json_value *where)
{
    for (uint32_t k = 0; where && k < where->n; k++) {
        char *own;
        const char *v = cell_field(x, i, out, where->u.members[k].key, &own);
        const json_value *want = &where->u.members[k].val;
        int hit = 0;
        if (v && want->type == JSON_STRING)
            hit = !strcmp(v, want->u.str);
        for (uint32_t j = 0; v && want->type == JSON_ARRAY && j < want->n; j++)
            hit |= !strcmp(v, want->u.items[j].u.str);
        sw_free(own);
        if (!hit)
            return 0;
    }
    return 1;
}

/* the reference of cell i under a "from" object, or -1 */
static long derive_ref(const exp *x, size_t i, const json_value *from)
{
    const exp_cell *c = &x->cells[i];
    int isfrom[MAX_VARS] = {0};
    for (int v = 0; v < x->nvars; v++)
        for (int j = 0; j < x->vars[v].n; j++)
            for (int f = 0; f < x->vars[v].vals[j].n; f++)
                isfrom[v] |= json_get(from, x->vars[v].vals[j].key[f]) != NULL;
    for (size_t k = 0; k < x->ncells; k++) {
        const exp_cell *r = &x->cells[k];
        int ok = 1;
        for (int v = 0; v < x->nvars && ok; v++)
            ok = isfrom[v] || r->idx[v] == c->idx[v];
        for (uint32_t m = 0; ok && m < from->n; m++) {
            const char *v = exp_lookup(x, r, from->u.members[m].key);
            ok = v && !strcmp(v, from->u.members[m].val.u.str);
        }
        if (ok)
            return (long)k;
    }
    return -1;
}

/* the text of one derived value of cell i (NULL: none) */
static char *derive_value(const exp *x, size_t i, const json_value *const *outs,
                          const json_value *e)
{
    const json_value *from = json_get(e, "from"), *copy = json_get(e, "copy");
    if (!where_match(x, i, outs[i], json_get(e, "where")))
        return NULL;
    long k = derive_ref(x, i, from);
    if (k < 0)
        return NULL;
    char *own = NULL, *own2 = NULL, *res = NULL;
    if (copy) {
        const char *v = cell_field(x, (size_t)k, outs[k], copy->u.str, &own);
        res = v ? sw_strdup(v) : NULL;
    } else {
        const char *a = cell_field(x, i, outs[i], json_get(e, "ratio")->u.str, &own);
        const char *b = cell_field(x, (size_t)k, outs[k], json_get(e, "over")->u.str, &own2);
        char *ea, *eb;
        double na = a ? strtod(a, &ea) : 0, nb = b ? strtod(b, &eb) : 0;
        if (a && b && *a && *b && !*ea && !*eb && na > -1e308 && na < 1e308 && nb > 0 && nb < 1e308 /* finite; NaN fails */) {
            char buf[32];
            snprintf(buf, sizeof buf, "%.6g", na / nb);
            res = sw_strdup(buf);
        }
    }
    sw_free(own);
    sw_free(own2);
    return res;
}

static void csv_field(sw_buf *b, const char *s)
{
    if (!strpbrk(s, ",\"\n")) {
        sw_buf_puts(b, s);
        return;
    }
    sw_buf_putc(b, '"');
    for (; *s; s++) {
        if (*s == '"')
            sw_buf_putc(b, '"');
        sw_buf_putc(b, *s == '\n' ? ' ' : *s);
    }
    sw_buf_putc(b, '"');
}

int exp_write_csv(exp *x)
{
    /* columns: every variable field, status, message, wall_s, then the output's keys */
    const char *cols[256];
    int ncols = 0;
    for (int v = 0; v < x->nvars; v++) {
        const exp_val *ev = &x->vars[v].vals[0];
        for (int f = 0; f < ev->n && ncols < 200; f++)
            cols[ncols++] = ev->key[f];
    }
    int nvarcols = ncols;
    /* derived columns go last; an output key of the same name yields to them */
    const char *dcols[64];
    int ndcols = 0;
    for (uint32_t i = 0; x->derive && i < x->derive->n && ndcols < 64; i++) {
        const char *name = json_get(&x->derive->u.items[i], "column")->u.str;
        int have = 0;
        for (int j = 0; j < ndcols; j++)
            have |= !strcmp(dcols[j], name);
        if (!have)
            dcols[ndcols++] = name;
    }
    json_doc **docs = sw_calloc(x->ncells, sizeof *docs);
    const json_value **outs = sw_calloc(x->ncells, sizeof *outs);
    if (!docs || !outs) {
        sw_free(docs);
        sw_free(outs);
        return sw_fail(x->err, SW_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < x->ncells; i++) {
        exp_cell *c = &x->cells[i];
        if (c->status != 0 || !c->output)
            continue;
        docs[i] = json_doc_new();
        sw_err e;
        const json_value *v;
        if (docs[i] && !json_parse(docs[i], c->output, strlen(c->output), "cell output", 1, &v, &e) &&
            v->type == JSON_OBJECT) {
            outs[i] = v;
            for (uint32_t k = 0; k < v->n; k++) {
                int have = 0;
                for (int j = 0; j < ncols; j++) /* a variable of the same name wins */
                    have |= !strcmp(cols[j], v->u.members[k].key);
                for (int j = 0; j < ndcols; j++)
                    have |= !strcmp(dcols[j], v->u.members[k].key);
                if (!have && ncols < 256)
                    cols[ncols++] = v->u.members[k].key;
            }
        }
    }
    sw_buf b;
    sw_buf_init(&b);
    for (int j = 0; j < nvarcols; j++) {
        csv_field(&b, cols[j]);
        sw_buf_putc(&b, ',');
    }
    sw_buf_puts(&b, "status,message,wall_s");
    for (int j = nvarcols; j < ncols; j++) {
        sw_buf_putc(&b, ',');
        csv_field(&b, cols[j]);
    }
    for (int j = 0; j < ndcols; j++) {
        sw_buf_putc(&b, ',');
        csv_field(&b, dcols[j]);
    }
    sw_buf_putc(&b, '\n');
    for (size_t i = 0; i < x->ncells; i++) {
        exp_cell *c = &x->cells[i];
        for (int j = 0; j < nvarcols; j++) {
            const char *val = exp_lookup(x, c, cols[j]);
            csv_field(&b, val ? val : "");
            sw_buf_putc(&b, ',');
        }
        sw_buf_puts(&b, c->status == 0 ? "ok" : "error");
        sw_buf_putc(&b, ',');
        csv_field(&b, c->message ? c->message : "");
        sw_buf_printf(&b, ",%.3f", c->wall);
        for (int j = nvarcols; j < ncols; j++) {
            sw_buf_putc(&b, ',');
            const json_value *v = outs[i] ? json_get(outs[i], cols[j]) : NULL;
            if (!v)
                continue;
            char *t = exp_value_text(v);
            if (t)
                csv_field(&b, t);
            sw_free(t);
        }
        for (int j = 0; j < ndcols; j++) {
            char *t = NULL;
            for (uint32_t k = 0; !t && k < x->derive->n; k++) {
                const json_value *e = &x->derive->u.items[k];
                if (!strcmp(json_get(e, "column")->u.str, dcols[j]))
                    t = derive_value(x, i, outs, e);
            }
            sw_buf_putc(&b, ',');
            if (t)
                csv_field(&b, t);
            sw_free(t);
        }
        sw_buf_putc(&b, '\n');
    }
    for (size_t i = 0; i < x->ncells; i++)
        json_doc_free(docs[i]);
    sw_free(docs);
    sw_free(outs);
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", x->dir, x->csv);
    int rc = sw_buf_write_file(&b, path, x->err);
    sw_buf_free(&b);
    if (!rc && x->o->progress)
        fprintf(stderr, "[%s] wrote %s (%zu rows)\n", x->name, path, x->ncells);
    return rc;
}
