/* report.c: report templates: {{table}}, {{include}}, the computed
   figures and claims ({{compare}}, {{number}}, {{argmax}}, {{argmin}},
   {{within}}), settings ({{device}}, {{budget}}), and report_check's
   search for figures typed into the prose. */
#include "table.h"

#include "../common/json.h"
#include "../profiles/device.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The next field of a CSV line as put_text quotes it (a field holding a
   comma or a quote is in quotes, quotes doubled): unquoted in place and
   ended with a NUL; *cur moves past its comma, or becomes NULL after the
   last field. */
static char *csv_field(char **cur)
{
    char *f = *cur, *w, *r;
    if (*f != '"') {
        char *e = strchr(f, ',');
        if (e)
            *e = 0;
        *cur = e ? e + 1 : NULL;
        return f;
    }
    for (w = f, r = f + 1; *r; r++) {
        if (*r == '"' && r[1] == '"')
            *w++ = *r++;
        else if (*r == '"')
            break;
        else
            *w++ = *r;
    }
    if (*r == '"')
        r++;
    *cur = *r == ',' ? r + 1 : NULL;
    *w = 0;
    return f;
}

/* The table behind a computed sentence, as CSV at full precision in tb (the
   caller frees it): each cell the mean of its rows, or with stat=max|min the
   largest or smallest; missing cells empty; scale is the caller's to apply. */
static int render_raw(table_spec *t, sw_buf *tb, sw_err *err)
{
    t->format = TF_CSV;
    t->stat = t->stat == TS_MIN || t->stat == TS_MAX ? t->stat : TS_MEAN;
    t->fmt = "%.17g";
    t->na = "";
    t->scale = 1;
    sw_buf_init(tb);
    int rc = table_render(t, tb, err);
    if (rc || tb->oom || !tb->data) {
        sw_buf_free(tb);
        return rc ? rc : sw_fail(err, SW_ENOMEM, "out of memory");
    }
    return 0;
}

/* {{compare FILE rows=... cols=COL value=V a=A b=B [names=NameA,NameB] ...}}:
   a sentence computed from the table, comparing column A with column B
   cell by cell (mean of repeated runs): in how many cells A is ahead by more
   than 1%, level within 1%, or behind, naming the level and behind cells,
   and the range of A's lead. Commentary that states a comparison is written
   this way, so that it cannot contradict the table beside it. stat=max
   (or min) takes the largest (smallest) of a cell's rows instead of their
   mean: the best of several planners grouped under one column. B may be
   several columns, b=B1|B2 (up to 4): each cell compares A with the best
   of them that ran. big=P (percent, > 0) adds in how many cells A leads
   by P% or more, and in how many B ran and A did not. claim=ahead (ahead
   in every cell where both ran), not-behind, level or behind: what the
   sentence says, checked like the claims below. */
static int compare_render(table_spec *t, const char *a, const char *bname, const char *na,
                          const char *nb, double big, int counts[3], sw_buf *out, sw_err *err)
{
    sw_buf tb;
    int rc = render_raw(t, &tb, err);
    if (rc)
        return rc;
    /* header: row keys, then one column per pivot value */
    char *save = NULL, *line = strtok_r(tb.data, "\n", &save);
    char bnames[256];
    const char *bn[4];
    int nbn = 0, cbs[4] = {-1, -1, -1, -1};
    snprintf(bnames, sizeof bnames, "%s", bname);
    for (char *q = bnames, *bar; q && nbn < 4; q = bar ? bar + 1 : NULL) {
        bar = strchr(q, '|');
        if (bar)
            *bar = 0;
        bn[nbn++] = q;
    }
    int ca = -1, nf = 0;
    for (char *cur = line; cur; nf++) {
        const char *f = csv_field(&cur);
        if (!strcmp(f, a))
            ca = nf;
        for (int k = 0; k < nbn; k++)
            if (!strcmp(f, bn[k]))
                cbs[k] = nf;
    }
    for (int k = 0; k <= nbn; k++) {
        const char *miss = k == nbn ? (ca < 0 ? a : NULL) : (cbs[k] < 0 ? bn[k] : NULL);
        if (miss) {
            sw_buf_free(&tb);
            return sw_fail(err, SW_EINVAL, "%s: no column '%s' in the pivot", t->file, miss);
        }
    }
    int n_big = 0, a_missing = 0;
    int ahead = 0, level = 0, behind = 0;
    double lo = 1e300, hi = -1e300;
    sw_buf lv, bh;
    sw_buf_init(&lv);
    sw_buf_init(&bh);
    for (line = strtok_r(NULL, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char key[256] = "", *cur = line;
        double va = NAN, vb = NAN;
        for (int i = 0; cur; i++) {
            const char *f = csv_field(&cur);
            if (i < t->nrows)
                snprintf(key + strlen(key), sizeof key - strlen(key), "%s%s", i ? " " : "", f);
            if (i == ca && *f)
                va = strtod(f, NULL);
            for (int k = 0; k < nbn; k++)
                if (i == cbs[k] && *f) {
                    double x = strtod(f, NULL);
                    if (!(vb == vb) || x > vb)
                        vb = x;
                }
        }
        if (!(va == va) && vb == vb && vb > 0)
            a_missing++;
        if (!(va == va) || !(vb == vb) || vb <= 0)
            continue;
        double lead = va / vb - 1;
        n_big += big > 0 && lead >= big / 100 - 1e-12;
        lo = SW_MIN(lo, lead);
        hi = SW_MAX(hi, lead);
        sw_buf *into = NULL;
        if (lead > 0.01)
            ahead++;
        else if (lead >= -0.01) {
            level++;
            into = &lv;
        } else {
            behind++;
            into = &bh;
        }
        if (into)
            sw_buf_printf(into, "%s%s", into->len ? ", " : "", key);
    }
    int n = ahead + level + behind;
    counts[0] = ahead;
    counts[1] = level;
    counts[2] = behind;
    if (n == 0)
        sw_buf_printf(out, "*(no cell where both %s and %s ran)*", na, nb);
    else {
        sw_buf_printf(out, "%s is ahead of %s (by more than 1%%) in %d of the %d cells where both "
                      "ran", na, nb, ahead, n);
        if (level)
            sw_buf_printf(out, ", level within 1%% in %d (%s)", level, lv.data);
        if (behind)
            sw_buf_printf(out, ", behind in %d (%s)", behind, bh.data);
        sw_buf_printf(out, "; %s's throughput relative to %s ranges from %+.0f%% to %+.0f%%", na,
                      nb, 100 * lo, 100 * hi);
        if (big > 0)
            sw_buf_printf(out, "; %s leads by %g%% or more in %d of the %d cells", na, big, n_big,
                          n);
    }
    if (big > 0 && a_missing)
        sw_buf_printf(out, "; %s ran in %d cell%s where %s did not", nb, a_missing,
                      a_missing > 1 ? "s" : "", na);
    sw_buf_free(&lv);
    sw_buf_free(&bh);
    sw_buf_free(&tb);
    return 0;
}

static int pick_render(table_spec *t, const char *a, const char *bname, int pick_max, int cell,
                       int key_only, sw_buf *out, sw_err *err);

/* {{number FILE [rows=...] [cols=COL] value=V [where=...] [a=A b=B]
   pick=min|max [fmt=F] [cell=1]}}: one number computed from the table (the
   mean of repeated runs per cell): the smallest or largest cell, or with a=
   and b= the smallest or largest ratio A/B over the rows where both ran;
   cell=1 appends the row it comes from in parentheses. Headline figures are
   written this way, so that they follow the CSVs. */
static int number_render(table_spec *t, const char *a, const char *bname, int pick_max,
                         int cell, sw_buf *out, sw_err *err)
{
    return pick_render(t, a, bname, pick_max, cell, 0, out, err);
}

/* number_render's work; key_only: write the row the number comes from
   instead of the number ({{argmax}}) */
static int pick_render(table_spec *t, const char *a, const char *bname, int pick_max, int cell,
                       int key_only, sw_buf *out, sw_err *err)
{
    const char *fmt = t->fmt ? t->fmt : "%.3g";
    double scale = t->scale;
    sw_buf tb;
    int rc = render_raw(t, &tb, err);
    if (rc)
        return rc;
    char *save = NULL, *line = strtok_r(tb.data, "\n", &save);
    int ca = -1, cb = -1, nf = 0;
    for (char *cur = line; cur; nf++) {
        const char *f = csv_field(&cur);
        if (a && !strcmp(f, a))
            ca = nf;
        if (bname && !strcmp(f, bname))
            cb = nf;
    }
    if (a && (ca < 0 || cb < 0)) {
        sw_buf_free(&tb);
        return sw_fail(err, SW_EINVAL, "%s: no column '%s' in the pivot", t->file,
                       ca < 0 ? a : bname);
    }
    double best = NAN;
    char best_key[256] = "";
    for (line = strtok_r(NULL, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char key[256] = "", *cur = line;
        double va = NAN, vb = NAN;
        for (int i = 0; cur; i++) {
            const char *f = csv_field(&cur);
            if (i < t->nrows)
                snprintf(key + strlen(key), sizeof key - strlen(key), "%s%s", i ? " " : "", f);
            else if (a) {
                if (i == ca && *f)
                    va = strtod(f, NULL);
                if (i == cb && *f)
                    vb = strtod(f, NULL);
            } else if (*f) {
                double v = strtod(f, NULL);
                if (v == v && (!(best == best) || (pick_max ? v > best : v < best))) {
                    best = v;
                    snprintf(best_key, sizeof best_key, "%s", key);
                }
            }
        }
        if (a && va == va && vb == vb && vb > 0) {
            double v = va / vb;
            if (!(best == best) || (pick_max ? v > best : v < best)) {
                best = v;
                snprintf(best_key, sizeof best_key, "%s", key);
            }
        }
    }
    sw_buf_free(&tb);
    if (!(best == best))
        return sw_fail(err, SW_EINVAL, "%s: no cell to pick from", t->file);
    if (key_only) {
        sw_buf_puts(out, best_key);
        return 0;
    }
    char num[64];
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
    snprintf(num, sizeof num, fmt, best * scale);
#pragma GCC diagnostic pop
    sw_buf_puts(out, num);
    if (cell && best_key[0])
        sw_buf_printf(out, " (%s)", best_key);
    return 0;
}

/* {{within FILE rows=... cols=COL value=V a=A b=B [tol=P] [bscale=X] [where=...]
   [claim=K1|K2|none]}} (bscale: B times X, for a B in other units): the rows where A differs from B by more than P
   percent (default 1; mean of repeated runs), each with its difference,
   "K1 (+2.3%), K2 (-1.7%)", or "none": the "within P% except ..." of a
   sentence, computed. keys gets "K1|K2" (or "none") for a claim. */
static int within_render(table_spec *t, const char *a, const char *bname, double tol,
                         double bscale, sw_buf *out, char *keys, size_t nkeys, sw_err *err)
{
    sw_buf tb;
    int rc = render_raw(t, &tb, err);
    if (rc)
        return rc;
    char *save = NULL, *line = strtok_r(tb.data, "\n", &save);
    int ca = -1, cb = -1, nf = 0, n = 0, rows = 0;
    for (char *cur = line; cur; nf++) {
        const char *f = csv_field(&cur);
        if (!strcmp(f, a))
            ca = nf;
        if (!strcmp(f, bname))
            cb = nf;
    }
    if (ca < 0 || cb < 0) {
        sw_buf_free(&tb);
        return sw_fail(err, SW_EINVAL, "%s: no column '%s' in the pivot", t->file,
                       ca < 0 ? a : bname);
    }
    keys[0] = 0;
    for (line = strtok_r(NULL, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char key[256] = "", *cur = line;
        double va = NAN, vb = NAN;
        for (int i = 0; cur; i++) {
            const char *f = csv_field(&cur);
            if (i < t->nrows)
                snprintf(key + strlen(key), sizeof key - strlen(key), "%s%s", i ? " " : "", f);
            else if (i == ca && *f)
                va = strtod(f, NULL);
            else if (i == cb && *f)
                vb = strtod(f, NULL) * bscale;
        }
        if (!(va == va && vb == vb && vb > 0))
            continue;
        rows++;
        double d = 100.0 * (va / vb - 1);
        if (fabs(d) <= tol)
            continue;
        sw_buf_printf(out, "%s%s (%+.1f%%)", n ? ", " : "", key, d);
        snprintf(keys + strlen(keys), nkeys - strlen(keys), "%s%s", n ? "|" : "", key);
        n++;
    }
    sw_buf_free(&tb);
    if (!rows)
        return sw_fail(err, SW_EINVAL, "%s: no row where both %s and %s ran", t->file, a, bname);
    if (!n) {
        sw_buf_puts(out, "none");
        snprintf(keys, nkeys, "none");
    }
    return 0;
}

/* The words of a {{compare}} or {{number}} directive: the CSV (relative to
   the data directory), table options, and the directives' own keys (a=, b=,
   big=, names=; pick=, cell=1). */
typedef struct directive {
    table_spec t;       /* the table; t.file points into path */
    char path[1200];    /* data_dir/FILE */
    const char *a, *b;  /* columns compared (pointers into the caller's args), or NULL */
    double big;         /* compare: leads of this many percent counted (0: not) */
    char names[256];    /* compare: "NameA,NameB" */
    int pick;           /* number: 1 max, 0 min, -1 not given */
    int cell;           /* number: name the row the number comes from */
    double tol;         /* within: percent (default 1) */
    double bscale;      /* within: B multiplied by this (B in other units than A; default 1) */
    char claim[256];    /* argmax, within: what the template's sentence says ("": nothing) */
} directive;

/* A directive's FILE: DIR/FILE, or FILE itself (relative to the working
   directory, the repository's root under make) where DIR/FILE does not exist
   and FILE names a folder: results committed with the repository, such as
   docs/gpu/fig11/fig11.csv, beside the CSVs make experiments writes. */
static void csv_path(char *path, size_t n, const char *data_dir, const char *name)
{
    snprintf(path, n, "%s/%s", data_dir, name);
    if (strchr(name, '/') && access(path, F_OK) && !access(name, F_OK))
        snprintf(path, n, "%s", name);
}

static int directive_parse(char *args, const char *data_dir, directive *d, sw_err *err)
{
    table_spec_init(&d->t);
    d->a = d->b = NULL;
    d->big = 0;
    d->names[0] = 0;
    d->pick = -1;
    d->cell = 0;
    d->tol = 1;
    d->bscale = 1;
    d->claim[0] = 0;
    char *save = NULL;
    for (char *w = strtok_r(args, " \t\n", &save); w; w = strtok_r(NULL, " \t\n", &save)) {
        if (!d->t.file) {
            csv_path(d->path, sizeof d->path, data_dir, w);
            d->t.file = d->path;
        } else if (!strncmp(w, "a=", 2))
            d->a = w + 2;
        else if (!strncmp(w, "b=", 2))
            d->b = w + 2;
        else if (!strncmp(w, "big=", 4))
            d->big = strtod(w + 4, NULL);
        else if (!strncmp(w, "names=", 6))
            snprintf(d->names, sizeof d->names, "%s", w + 6);
        else if (!strcmp(w, "pick=min") || !strcmp(w, "pick=max"))
            d->pick = !strcmp(w, "pick=max");
        else if (!strcmp(w, "cell=1"))
            d->cell = 1;
        else if (!strncmp(w, "tol=", 4))
            d->tol = strtod(w + 4, NULL);
        else if (!strncmp(w, "bscale=", 7)) {
            if (sw_parse_f64(w + 7, &d->bscale) || !(d->bscale > 0))
                return sw_fail(err, SW_EINVAL, "bscale=%s: expected a positive number", w + 7);
        }
        else if (!strncmp(w, "claim=", 6)) {
            snprintf(d->claim, sizeof d->claim, "%s", w + 6);
            for (char *c = d->claim; *c; c++)
                if (*c == '~') /* the space between a row's columns */
                    *c = ' ';
        }
        else if (table_spec_set(&d->t, w, err))
            return SW_EINVAL;
    }
    return 0;
}

/* what expanding a template found (report_check reads it) */
typedef struct rstate {
    const char *tp, *data_dir; /* the template, the CSVs' directory */
    sw_buf *out;
    int lineno;                /* of the directive being expanded */
    int claims, false_claims, unchecked;
    sw_buf *notes;             /* a line per false or unchecked claim (NULL: none kept) */
    sw_err *err;
} rstate;

/* the args of a directive "{{WORD args}}" at open (skip: its length up to
   args) into args; the end of the directive, or NULL (error set) */
static const char *directive_args(rstate *s, const char *open, size_t skip, const char *what,
                                  char *args, size_t n)
{
    const char *close = strstr(open, "}}");
    size_t l = close ? (size_t)(close - open - (ptrdiff_t)skip) : 0;
    if (!close || l >= n) {
        sw_fail(s->err, SW_EINVAL, "%s:%d: unterminated or too long {{%s ...}}", s->tp,
                s->lineno, what);
        return NULL;
    }
    memcpy(args, open + skip, l);
    args[l] = 0;
    return close + 2;
}

/* {{include FILE}}: a file's text, FILE relative to the data directory or,
   failing that, to the current directory; FILE#Section: only the text under
   "## Section", up to the next "## " */
static const char *expand_include(rstate *s, const char *open)
{
    char name[512], path[1200];
    const char *end = directive_args(s, open, 10, "include", name, sizeof name);
    if (!end)
        return NULL;
    char *sect = strchr(name, '#');
    if (sect)
        *sect++ = 0;
    char *inc = NULL;
    size_t il;
    sw_err e2;
    snprintf(path, sizeof path, "%s/%s", s->data_dir, name);
    if (sw_read_file(path, &inc, &il, &e2) && sw_read_file(name, &inc, &il, &e2)) {
        sw_buf_printf(s->out, "*(not available: %s was not produced)*\n", name);
    } else if (sect) {
        char head[600];
        snprintf(head, sizeof head, "\n## %s\n", sect);
        const char *from = strstr(inc, head);
        if (!from) {
            sw_buf_printf(s->out, "*(not available: no section '%s' in %s)*\n", sect, name);
        } else {
            from += strlen(head);
            const char *to = strstr(from, "\n## ");
            sw_buf_put(s->out, from, to ? (size_t)(to - from) + 1 : strlen(from));
        }
    } else {
        sw_buf_puts(s->out, inc);
    }
    sw_free(inc);
    if (*end == '\n' && s->out->len && s->out->data[s->out->len - 1] == '\n')
        end++;
    return end;
}

/* 1 when the "|"-separated sets a and b hold the same words */
static int same_set(const char *a, const char *b)
{
    for (int pass = 0; pass < 2; pass++) {
        const char *x = pass ? b : a, *y = pass ? a : b;
        for (const char *p = x; *p;) {
            const char *e = strchr(p, '|');
            size_t l = e ? (size_t)(e - p) : strlen(p);
            int found = 0;
            for (const char *q = y; *q && !found;) {
                const char *f = strchr(q, '|');
                size_t m = f ? (size_t)(f - q) : strlen(q);
                found = m == l && !strncmp(p, q, l);
                q = f ? f + 1 : q + m;
            }
            if (!found)
                return 0;
            p = e ? e + 1 : p + l;
        }
    }
    return 1;
}

/* a claim= beside what the table gives (got; NULL: the table is missing) */
static void check_claim(rstate *s, const char *what, const char *claim, const char *got)
{
    if (!claim[0])
        return;
    s->claims++;
    if (!got) {
        s->unchecked++;
        if (s->notes)
            sw_buf_printf(s->notes, "%s:%d: {{%s}} claim=%s unchecked (no table)\n", s->tp,
                          s->lineno, what, claim);
    } else if (!same_set(claim, got)) {
        s->false_claims++;
        sw_buf_printf(s->out, " *(the template's claim, %s, is false)*", claim);
        if (s->notes)
            sw_buf_printf(s->notes, "%s:%d: {{%s}} claim=%s is false: the table gives %s\n",
                          s->tp, s->lineno, what, claim, got);
    }
}

/* {{compare}}, {{number}}, {{argmax}} (kind 0-3) and {{within}} (4): text
   computed from a table */
static const char *expand_computed(rstate *s, const char *open, int kind)
{
    static const char *const what[] = {"compare", "number", "argmax", "argmin", "within"};
    char args[1024];
    const char *end = directive_args(s, open, strlen(what[kind]) + 3, what[kind], args,
                                     sizeof args);
    if (!end)
        return NULL;
    directive d;
    int rc = directive_parse(args, s->data_dir, &d, s->err);
    if (!rc && kind == 0 && (!d.t.file || !d.a || !d.b || !d.t.cols))
        rc = sw_fail(s->err, SW_EINVAL, "{{compare}} needs a CSV file, cols=, a= and b=");
    if (!rc && kind == 1 && (!d.t.file || d.pick < 0 || !d.a != !d.b || (d.a && !d.t.cols)))
        rc = sw_fail(s->err, SW_EINVAL, "{{number}} needs a CSV file and pick=min|max "
                     "(and cols= with a= and b=)");
    if (!rc && (kind == 2 || kind == 3) && (!d.t.file || !d.a != !d.b || (d.a && !d.t.cols)))
        rc = sw_fail(s->err, SW_EINVAL, "{{%s}} needs a CSV file (and cols= with a= and b=)",
                     what[kind]);
    if (!rc && kind == 4 && (!d.t.file || !d.a || !d.b))
        rc = sw_fail(s->err, SW_EINVAL, "{{within}} needs a CSV file, a= and b=");
    if (rc) {
        sw_err_prefix(s->err, "%s:%d: ", s->tp, s->lineno);
        return NULL;
    }
    sw_err e2;
    if (kind == 0) {
        char *comma = strchr(d.names, ',');
        if (comma)
            *comma = 0;
        int c[3] = {0, 0, 0};
        int bad = compare_render(&d.t, d.a, d.b, d.names[0] ? d.names : d.a,
                                 comma ? comma + 1 : d.b, d.big, c, s->out, &e2);
        if (bad)
            sw_buf_printf(s->out, "*(comparison not available: %s)*", e2.msg);
        /* claim=ahead|not-behind|level|behind: what holds in every cell
           where both ran (ahead: by more than 1%; level: within 1%) */
        char got[320];
        int n = c[0] + c[1] + c[2];
        int holds = !strcmp(d.claim, "ahead")        ? n && c[0] == n
                    : !strcmp(d.claim, "not-behind") ? n && c[2] == 0
                    : !strcmp(d.claim, "level")      ? n && c[1] == n
                    : !strcmp(d.claim, "behind")     ? n && c[2] == n
                                                     : -1;
        if (d.claim[0] && holds < 0) {
            sw_fail(s->err, SW_EINVAL, "%s:%d: {{compare}} claim=%s: expected ahead, "
                    "not-behind, level or behind", s->tp, s->lineno, d.claim);
            return NULL;
        }
        snprintf(got, sizeof got, "%s", d.claim);
        if (holds == 0)
            snprintf(got, sizeof got, "ahead in %d, level in %d, behind in %d of %d cells", c[0],
                     c[1], c[2], n);
        check_claim(s, what[kind], d.claim, bad ? NULL : got);
    } else if (kind == 1) {
        if (number_render(&d.t, d.a, d.b, d.pick, d.cell, s->out, &e2))
            sw_buf_printf(s->out, "*(not available: %s)*", e2.msg);
    } else {
        size_t at = s->out->len;
        char keys[1024];
        int bad = kind == 4 ? within_render(&d.t, d.a, d.b, d.tol, d.bscale, s->out, keys, sizeof keys, &e2)
                            : pick_render(&d.t, d.a, d.b, kind == 2, 0, 1, s->out, &e2);
        if (bad) {
            sw_buf_printf(s->out, "*(not available: %s)*", e2.msg);
        } else if (kind != 4) {
            size_t l = s->out->len - at;
            snprintf(keys, sizeof keys, "%.*s", (int)(l < sizeof keys ? l : sizeof keys - 1),
                     s->out->data + at);
        }
        check_claim(s, what[kind], d.claim, bad ? NULL : keys);
    }
    return end;
}

/* {{device NAME FIELD [fmt=F]}}: one figure of a built-in device, from the
   simulator's own table (profiles/device.c), in the unit the prose uses:
   memory GiB; h2d, d2h, duplex, mem_bw GB/s; latency, launch us; fp32,
   fp16 TFLOP/s. The settings a page describes are written this way, so
   that they follow the simulator. A device or field not known is an error
   of the template. */
static const char *expand_device(rstate *s, const char *open)
{
    static const char *const fields[] = {"memory", "h2d", "d2h", "duplex", "mem_bw",
                                         "latency", "launch", "fp32", "fp16"};
    char args[256], name[64] = "", field[32] = "", fmt[32] = "%g";
    const char *end = directive_args(s, open, 9, "device", args, sizeof args);
    if (!end)
        return NULL;
    char *save = NULL;
    int nw = 0;
    for (char *w = strtok_r(args, " \t\n", &save); w; w = strtok_r(NULL, " \t\n", &save), nw++) {
        if (nw == 0)
            snprintf(name, sizeof name, "%s", w);
        else if (nw == 1)
            snprintf(field, sizeof field, "%s", w);
        else if (!strncmp(w, "fmt=", 4) && strlen(w + 4) < sizeof fmt && table_num_format(w + 4))
            snprintf(fmt, sizeof fmt, "%s", w + 4);
        else
            nw = 99;
    }
    const dev_spec *d = dev_find(name);
    size_t f;
    for (f = 0; f < SW_ARRAY_LEN(fields) && strcmp(fields[f], field); f++)
        ;
    if (nw < 2 || nw > 3 || !d || f == SW_ARRAY_LEN(fields)) {
        sw_fail(s->err, SW_EINVAL, "%s:%d: {{device NAME FIELD [fmt=F]}}: expected a built-in "
                "device (swapsim devices) and one of memory, h2d, d2h, duplex, mem_bw, latency, "
                "launch, fp32, fp16 (got '%s' '%s')", s->tp, s->lineno, name, field);
        return NULL;
    }
    const double v[] = {(double)d->memory_bytes / 1073741824.0, d->h2d_bw / 1e9, d->d2h_bw / 1e9,
                        d->duplex_bw / 1e9, d->mem_bw / 1e9, d->copy_latency_s * 1e6,
                        d->launch_overhead_s * 1e6, d->peak_flops_fp32 / 1e12,
                        d->peak_flops_fp16 / 1e12};
    char num[64];
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
    snprintf(num, sizeof num, fmt, v[f]);
#pragma GCC diagnostic pop
    sw_buf_puts(s->out, num);
    return end;
}

/* In a list of variable objects, the one whose FIELD is VAL (of: "FIELD:VAL"),
   its "opts" string's "NAME=NUMBER" (after a space or at the start): the
   number into out, or why not */
static const char *opts_setting(const json_value *list, const char *of, const char *name,
                                char *out, size_t n)
{
    const char *colon = strchr(of, ':');
    if (!colon)
        return "of= expects FIELD:VALUE";
    const json_value *obj = NULL;
    for (uint32_t i = 0; i < list->n && !obj; i++) {
        const json_value *it = &list->u.items[i];
        char field[64];
        snprintf(field, sizeof field, "%.*s", (int)(colon - of), of);
        const json_value *fv = it->type == JSON_OBJECT ? json_get(it, field) : NULL;
        if (fv && fv->type == JSON_STRING && !strcmp(fv->u.str, colon + 1))
            obj = it;
    }
    const json_value *opts = obj ? json_get(obj, "opts") : NULL;
    if (!opts || opts->type != JSON_STRING)
        return "no value of the variable with that field (and an \"opts\" string)";
    size_t nl = strlen(name);
    for (const char *p = opts->u.str; (p = strstr(p, name)); p += nl) {
        if ((p != opts->u.str && p[-1] != ' ') || p[nl] != '=')
            continue;
        size_t l = strcspn(p + nl + 1, " ");
        double x;
        snprintf(out, n, "%.*s", (int)l, p + nl + 1);
        return l < n && !sw_parse_f64(out, &x) ? NULL : "the setting is not a number";
    }
    return "no NAME=VALUE in its \"opts\"";
}

/* {{budget FILE VAR [full] [n=1]}}: a setting of an experiment file (FILE
   relative to the current directory, experiments/fig6.json): the values of
   its vars.VAR, quick mode's (full: FULL=1's) where the variable has both,
   joined by ", "; n=1: how many values (five seeds). A VAR that is not a
   variable is looked for as a fixed setting "VAR=VALUE" in the file's
   "command" (generations=50). of=FIELD:VALUE set=NAME: in the variable's
   object whose FIELD is VALUE, the number of "NAME=N" in its "opts"
   (optimality.json's max_nodes of optimal-swap). The budgets a page
   states are written this way, so that they follow the experiment files. A
   file or variable not there, or a value that is not a number, is an error
   of the template. */
static const char *expand_budget(rstate *s, const char *open)
{
    char args[512], file[256] = "", var[64] = "", of[128] = "", set[64] = "";
    const char *end = directive_args(s, open, 9, "budget", args, sizeof args);
    if (!end)
        return NULL;
    int nw = 0, full = 0, count = 0, bad = 0;
    char *save = NULL;
    for (char *w = strtok_r(args, " \t\n", &save); w; w = strtok_r(NULL, " \t\n", &save), nw++) {
        if (nw == 0)
            snprintf(file, sizeof file, "%s", w);
        else if (nw == 1)
            snprintf(var, sizeof var, "%s", w);
        else if (!strcmp(w, "full"))
            full = 1;
        else if (!strcmp(w, "n=1"))
            count = 1;
        else if (!strncmp(w, "of=", 3))
            snprintf(of, sizeof of, "%s", w + 3);
        else if (!strncmp(w, "set=", 4))
            snprintf(set, sizeof set, "%s", w + 4);
        else
            bad = 1;
    }
    if (nw < 2 || bad || !of[0] != !set[0] || (of[0] && count)) {
        sw_fail(s->err, SW_EINVAL, "%s:%d: {{budget FILE VAR [full] [n=1 | of=FIELD:VALUE "
                "set=NAME]}}: expected an experiment file and a variable", s->tp, s->lineno);
        return NULL;
    }
    char *text = NULL;
    size_t len;
    sw_err e2;
    json_doc *doc = json_doc_new();
    const json_value *root = NULL, *v = NULL;
    const char *why = NULL;
    if (!doc)
        why = "out of memory";
    else if (sw_read_file(file, &text, &len, &e2) ||
             json_parse(doc, text, len, file, 1, &root, &e2))
        why = e2.msg;
    else if (!(v = json_get(json_get(root, "vars"), var))) {
        /* not a variable: a fixed setting of the command, "VAR=VALUE" */
        const json_value *cmd = json_get(root, "command");
        const char *fixed = NULL;
        size_t vl = strlen(var);
        for (uint32_t i = 0; cmd && cmd->type == JSON_ARRAY && i < cmd->n && !fixed; i++) {
            const json_value *w = &cmd->u.items[i];
            if (w->type == JSON_STRING && !strncmp(w->u.str, var, vl) && w->u.str[vl] == '=')
                fixed = w->u.str + vl + 1;
        }
        double x;
        if (!fixed)
            why = "no such variable under \"vars\", nor VAR=VALUE in \"command\"";
        else if (count || full || sw_parse_f64(fixed, &x))
            why = "a command's setting is one number (no full, no n=1)";
        else
            sw_buf_puts(s->out, fixed);
        v = NULL;
    } else if (v->type == JSON_OBJECT && !(v = json_get(v, full ? "full" : "quick")))
        why = full ? "no \"full\" values" : "no \"quick\" values";
    else if (v->type != JSON_ARRAY || !v->n)
        why = "not a list of values";
    else if (of[0]) {
        char num[64];
        if (!(why = opts_setting(v, of, set, num, sizeof num)))
            sw_buf_puts(s->out, num);
        v = NULL;
    }
    for (uint32_t i = 0; !why && v && !count && i < v->n; i++)
        if (v->u.items[i].type != JSON_NUMBER)
            why = "a value that is not a number (n=1 counts them)";
    if (why) {
        sw_fail(s->err, SW_EINVAL, "%s:%d: {{budget %s %s}}: %s", s->tp, s->lineno, file, var,
                why);
        end = NULL;
    } else if (!v) {
        /* the command's setting, written above */
    } else if (count) {
        sw_buf_printf(s->out, "%u", v->n);
    } else {
        for (uint32_t i = 0; i < v->n; i++)
            sw_buf_printf(s->out, "%s%.15g", i ? ", " : "", v->u.items[i].u.num.d);
    }
    json_doc_free(doc);
    sw_free(text);
    return end;
}

/* {{table FILE KEY=VALUE...}}: the table, rendered in markdown */
static const char *expand_table(rstate *s, const char *open)
{
    char args[1024], path[1200];
    const char *end = directive_args(s, open, 8, "table", args, sizeof args);
    if (!end)
        return NULL;
    table_spec t;
    table_spec_init(&t);
    char *save = NULL;
    int first = 1, rc = 0;
    for (char *w = strtok_r(args, " \t\n", &save); w && !rc; w = strtok_r(NULL, " \t\n", &save)) {
        if (first) {
            csv_path(path, sizeof path, s->data_dir, w);
            t.file = path;
            first = 0;
        } else {
            rc = table_spec_set(&t, w, s->err);
        }
    }
    if (!rc && !t.file)
        rc = sw_fail(s->err, SW_EINVAL, "{{table}} needs a CSV file");
    if (rc) {
        sw_err_prefix(s->err, "%s:%d: ", s->tp, s->lineno);
        return NULL;
    }
    sw_err e2;
    if (table_render(&t, s->out, &e2))
        sw_buf_printf(s->out, "\n*(table not available: %s)*\n", e2.msg);
    if (*end == '\n' && s->out->len && s->out->data[s->out->len - 1] == '\n')
        end++;
    return end;
}

static int expand_text(rstate *s, const char *text)
{
    static const char *const heads[] = {"{{compare ", "{{number ", "{{argmax ", "{{argmin ",
                                        "{{within "};
    const char *p = text;
    s->lineno = 1;
    while (*p) {
        const char *open = strstr(p, "{{");
        if (!open) {
            sw_buf_puts(s->out, p);
            break;
        }
        for (const char *q = p; q < open; q++)
            s->lineno += *q == '\n';
        int kind = -1;
        for (int k = 0; k < (int)SW_ARRAY_LEN(heads) && kind < 0; k++)
            if (!strncmp(open, heads[k], strlen(heads[k])))
                kind = k;
        int inc = !strncmp(open, "{{include ", 10), tab = !strncmp(open, "{{table ", 8);
        int dev = !strncmp(open, "{{device ", 9), bud = !strncmp(open, "{{budget ", 9);
        sw_buf_put(s->out, p, (size_t)(open - p));
        if (kind < 0 && !inc && !tab && !dev && !bud) {
            sw_buf_puts(s->out, "{{");
            p = open + 2;
            continue;
        }
        const char *end = inc   ? expand_include(s, open)
                          : tab ? expand_table(s, open)
                          : dev ? expand_device(s, open)
                          : bud ? expand_budget(s, open)
                                : expand_computed(s, open, kind);
        if (!end)
            return SW_EINVAL;
        for (const char *q = open; q < end; q++)
            s->lineno += *q == '\n';
        p = end;
    }
    return s->out->oom ? sw_fail(s->err, SW_ENOMEM, "out of memory") : 0;
}

int report_expand(const char *template_path, const char *data_dir, sw_buf *out, sw_err *err)
{
    char *text;
    size_t len;
    int rc = sw_read_file(template_path, &text, &len, err);
    if (rc)
        return rc;
    rstate s = {template_path, data_dir, out, 1, 0, 0, 0, NULL, err};
    rc = expand_text(&s, text);
    sw_free(text);
    return rc;
}

/* ---- report_check: figures typed into a template's prose ---- */

/* 1 when word (the prose's last word before a number, lower case) names
   what the number counts rather than a figure: Figure 6, section 4,
   batch 16, seed 3, issue 34 */
static int naming_word(const char *w)
{
    static const char *const words[] = {
        "table", "tables", "figure", "figures", "fig.", "section", "sections", "§", "issue",
        "issues", "item", "items", "step", "steps", "batch", "batches", "seed", "seeds",
        "rank", "ranks", "version", "line", "lines", "chapter", "appendix", "equation",
        "eq.", "#", "reading", "readings", NULL};
    for (int i = 0; words[i]; i++)
        if (!strcmp(w, words[i]))
            return 1;
    return 0;
}

/* the template's prose with what is not prose blanked: directives, code
   spans and blocks, link targets, HTML comments and the paper's own figures
   in the fixed form "(paper: ...)"; newlines kept */
static void prose_only(char *t)
{
    int fence = 0;
    for (char *p = t; *p;) {
        int bol = p == t || p[-1] == '\n';
        if (bol && !strncmp(p, "```", 3))
            fence = !fence;
        const char *close = NULL;
        if (fence)
            close = strchr(p, '\n');
        else if (!strncmp(p, "{{", 2))
            close = strstr(p, "}}"), close = close ? close + 2 : NULL;
        else if (*p == '`')
            close = strchr(p + 1, '`'), close = close ? close + 1 : NULL;
        else if (!strncmp(p, "](", 2))
            close = strchr(p, ')'), close = close ? close + 1 : NULL;
        else if (!strncmp(p, "<!--", 4))
            close = strstr(p, "-->"), close = close ? close + 3 : NULL;
        else if (!strncmp(p, "(paper: ", 8) || !strncmp(p, "(paper's: ", 10))
            close = strchr(p, ')'), close = close ? close + 1 : NULL;
        else if (bol && !strncmp(p, "|-", 2))
            close = strchr(p, '\n');
        if (!close || close <= p) {
            p++;
            continue;
        }
        for (; p < close && *p; p++)
            if (*p != '\n')
                *p = ' ';
    }
}

/* The bare numbers of a template's prose (outside directives, code, link
   targets and "(paper: ...)"), one line each "FILE:LINE: CONTEXT", where
   CONTEXT is the number with up to 30 characters of prose either side
   (spaces collapsed) and what an allow list names. A digit run is not a
   bare number when it is part of a name or a setting (a letter, a joined
   word or "=" before it, or a letter after it other than an x ratio:
   ResNet-50, V100, RNN-8-8K, 8K, FULL=1), a year (1900-2099), a list marker ("(2)", "1." starting a
   line), a confidence level ("95% confidence interval", "95% interval") or
   named by the word before it (Figure 6, section 4, batch 16; see
   naming_word). */
static void bare_numbers(const char *path, const char *text, sw_buf *out, int *n)
{
    char *t = sw_strdup(text);
    if (!t)
        return;
    prose_only(t);
    int line = 1, named_run = 0;
    for (char *p = t; *p; p++) {
        if (*p == '\n') {
            line++;
            continue;
        }
        if (!isdigit((unsigned char)*p))
            continue;
        char *s = p, *e = p;
        while (isdigit((unsigned char)*e) || ((*e == '.' || *e == ',') && isdigit((unsigned char)e[1])))
            e++;
        p = e - 1;
        char before = s > t ? s[-1] : ' ', after = *e;
        int name = isalpha((unsigned char)before) || before == '_' || before == '=' ||
                   ((before == '-' || before == '/') && s - 1 > t && isalnum((unsigned char)s[-2])) ||
                   (isalpha((unsigned char)after) && !(after == 'x' && !isalpha((unsigned char)e[1])));
        size_t len = (size_t)(e - s);
        long v = strtol(s, NULL, 10);
        int year = len == 4 && v >= 1900 && v <= 2099;
        int marker = (before == '(' && after == ')' && len <= 2) ||
                     ((s == t || s[-1] == '\n') && after == '.');
        /* a confidence level names the interval, not a figure: "95%
           confidence interval", "95% interval" */
        const char *pe = e;
        while (*pe == '%' || isspace((unsigned char)*pe))
            pe++;
        int level = *e == '%' && (!strncmp(pe, "confidence", 10) || !strncmp(pe, "interval", 8));
        char word[32] = "";
        const char *w = s;
        while (w > t && isspace((unsigned char)w[-1]))
            w--;
        const char *we = w;
        while (w > t && !isspace((unsigned char)w[-1]))
            w--;
        while (w < we && strchr("(\"'*_[", *w))
            w++;
        snprintf(word, sizeof word, "%.*s", (int)(we - w), w);
        for (char *c = word; *c; c++)
            *c = (char)tolower((unsigned char)*c);
        /* a list after a naming word: Figures 6, 9 and 10 */
        int listed = named_run && (!strcmp(word, "and") || !strcmp(word, "or") ||
                                   (isdigit((unsigned char)word[0]) && we[-1] == ','));
        named_run = naming_word(word) || listed;
        if (name || year || marker || named_run || level)
            continue;
        char ctx[128];
        int k = 0, sp = 0;
        const char *from = s - 30 > t ? s - 30 : t;
        for (const char *c = from; c < e + 30 && *c && k < (int)sizeof ctx - 1; c++) {
            if (*c == '\n' && c >= e)
                break;
            if (*c == '\n') {
                k = 0;
                sp = 0;
                continue;
            }
            int space = isspace((unsigned char)*c);
            if (space && (sp || !k))
                continue;
            ctx[k++] = space ? ' ' : *c;
            sp = space;
        }
        while (k && ctx[k - 1] == ' ')
            k--;
        ctx[k] = 0;
        sw_buf_printf(out, "%s:%d: %s\n", path, line, ctx);
        (*n)++;
    }
    sw_free(t);
}

int report_check(const char *template_path, const char *data_dir, const char *allow_path,
                 int list, sw_buf *out, sw_err *err)
{
    char *text = NULL, *allow = NULL;
    size_t len, alen;
    int rc = sw_read_file(template_path, &text, &len, err);
    if (!rc && allow_path && (rc = sw_read_file(allow_path, &allow, &alen, err)))
        sw_free(text);
    if (rc)
        return rc;
    sw_buf found, notes, scratch;
    sw_buf_init(&found);
    sw_buf_init(&notes);
    sw_buf_init(&scratch);
    int n = 0, listed = 0, unlisted = 0;
    bare_numbers(template_path, text, &found, &n);
    rstate s = {template_path, data_dir, &scratch, 1, 0, 0, 0, &notes, err};
    rc = expand_text(&s, text);
    char *save = NULL;
    for (char *l = found.data ? strtok_r(found.data, "\n", &save) : NULL; l && !rc;
         l = strtok_r(NULL, "\n", &save)) {
        const char *ctx = strstr(l, ": "); /* after FILE:LINE: */
        ctx = ctx ? ctx + 2 : l;
        int in = 0;
        for (const char *a = allow ? strstr(allow, ctx) : NULL; a && !in; a = strstr(a + 1, ctx))
            in = (a == allow || a[-1] == '\n') && (a[strlen(ctx)] == '\n' || !a[strlen(ctx)]);
        if (list) {
            sw_buf_printf(out, "%s\n", ctx);
        } else if (in) {
            listed++;
        } else {
            sw_buf_printf(out, "%s: a measured number typed into the prose (write it with a "
                          "directive, or mark the paper's as \"(paper: ...)\")\n", l);
            unlisted++;
        }
    }
    if (!rc && !list) {
        sw_buf_put(out, notes.data ? notes.data : "", notes.len);
        sw_buf_printf(out, "%s: %d bare numbers in the prose (%d in %s, still to be written "
                      "as directives; %d not), %d claims (%d false, %d unchecked: their CSV "
                      "is missing)\n", template_path, n, listed, allow_path ? allow_path : "no list",
                      unlisted, s.claims, s.false_claims, s.unchecked);
        if (unlisted || s.false_claims)
            rc = sw_fail(err, SW_EINVAL, "%s: %d bare numbers not in the list, %d false claims",
                         template_path, unlisted, s.false_claims);
    }
    sw_buf_free(&found);
    sw_buf_free(&notes);
    sw_buf_free(&scratch);
    sw_free(text);
    sw_free(allow);
    return rc;
}
