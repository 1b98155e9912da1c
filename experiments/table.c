/* table.c: CSV reading, pivots with aggregates, rendering, report templates. */
#include "table.h"

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_statistics_double.h>
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- CSV ---- */

static int split_line(const char *path, int lineno, char **p, char ***fields, int *n, sw_err *err)
{
    char **f = NULL;
    size_t cap = 0;
    int k = 0;
    char *s = *p;
    for (;;) {
        sw_buf b;
        sw_buf_init(&b);
        if (*s == '"') {
            s++;
            for (;;) {
                if (!*s) {
                    sw_buf_free(&b);
                    for (int i = 0; i < k; i++)
                        sw_free(f[i]);
                    sw_free(f);
                    return sw_fail(err, SW_EINVAL, "%s:%d: unterminated quoted field", path, lineno);
                }
                if (*s == '"' && s[1] == '"') {
                    sw_buf_putc(&b, '"');
                    s += 2;
                } else if (*s == '"') {
                    s++;
                    break;
                } else {
                    sw_buf_putc(&b, *s++);
                }
            }
        }
        while (*s && *s != ',' && *s != '\n' && *s != '\r')
            sw_buf_putc(&b, *s++);
        if (SW_GROW(f, cap, (size_t)k + 1)) {
            sw_buf_free(&b);
            return sw_fail(err, SW_ENOMEM, "out of memory");
        }
        f[k++] = b.data ? b.data : sw_strdup("");
        if (*s == ',') {
            s++;
            continue;
        }
        break;
    }
    while (*s == '\r')
        s++;
    if (*s == '\n')
        s++;
    *p = s;
    *fields = f;
    *n = k;
    return 0;
}

int csv_read(const char *path, csv_data *d, sw_err *err)
{
    memset(d, 0, sizeof *d);
    char *text;
    size_t len;
    int rc = sw_read_file(path, &text, &len, err);
    if (rc)
        return rc;
    char *p = text;
    int lineno = 1;
    rc = split_line(path, lineno, &p, &d->hdr, &d->ncol, err);
    size_t cap = 0, n = 0;
    while (!rc && *p) {
        lineno++;
        char **f;
        int k;
        rc = split_line(path, lineno, &p, &f, &k, err);
        if (rc)
            break;
        if (k == 1 && !f[0][0]) { /* blank line */
            sw_free(f[0]);
            sw_free(f);
            continue;
        }
        if (k != d->ncol) {
            for (int i = 0; i < k; i++)
                sw_free(f[i]);
            sw_free(f);
            rc = sw_fail(err, SW_EINVAL, "%s:%d: %d fields, expected %d as in the header", path,
                         lineno, k, d->ncol);
            break;
        }
        if (SW_GROW(d->cells, cap, n + (size_t)k)) {
            rc = sw_fail(err, SW_ENOMEM, "out of memory");
            break;
        }
        memcpy(d->cells + n, f, (size_t)k * sizeof *f);
        n += (size_t)k;
        sw_free(f);
        d->nrow++;
    }
    sw_free(text);
    if (rc)
        csv_free(d);
    return rc;
}

void csv_free(csv_data *d)
{
    for (int i = 0; i < d->ncol; i++)
        sw_free(d->hdr[i]);
    for (size_t i = 0; i < (size_t)d->nrow * (size_t)d->ncol; i++)
        sw_free(d->cells[i]);
    sw_free(d->hdr);
    sw_free(d->cells);
    memset(d, 0, sizeof *d);
}

int csv_col(const csv_data *d, const char *name)
{
    for (int i = 0; i < d->ncol; i++)
        if (!strcmp(d->hdr[i], name))
            return i;
    return -1;
}

/* ---- specs ---- */

void table_spec_init(table_spec *t)
{
    memset(t, 0, sizeof *t);
    t->fmt = "%.3g";
    t->na = "N/A";
    t->ok_only = 1;
    t->scale = 1;
}

static int split_list(const char *v, const char **out, int max, char *storage, size_t cap)
{
    size_t l = strlen(v);
    if (l + 1 > cap)
        return -1;
    memcpy(storage, v, l + 1);
    int n = 0;
    char *save = NULL;
    for (char *w = strtok_r(storage, ",", &save); w && n < max; w = strtok_r(NULL, ",", &save))
        out[n++] = w;
    return n;
}

int table_spec_set(table_spec *t, const char *kv, sw_err *err)
{
    const char *eq = strchr(kv, '=');
    if (!eq)
        return sw_fail(err, SW_EINVAL, "table option '%s': expected KEY=VALUE", kv);
    if (t->nstore >= (int)SW_ARRAY_LEN(t->store))
        return sw_fail(err, SW_EINVAL, "too many table options");
    size_t kl = (size_t)(eq - kv);
    const char *v = eq + 1;
    char *st = t->store[t->nstore++];
#define KEY(s) (kl == strlen(s) && !strncmp(kv, s, kl))
    if (KEY("rows")) {
        t->nrows = split_list(v, t->rows, TABLE_MAX, st, 256);
    } else if (KEY("cols")) {
        snprintf(st, 256, "%s", v);
        t->cols = st;
    } else if (KEY("value") || KEY("values")) {
        t->nvalues = split_list(v, t->values, TABLE_MAX, st, 256);
    } else if (KEY("where")) {
        const char *c = strchr(v, ':');
        if (!c || t->nwhere >= TABLE_MAX)
            return sw_fail(err, SW_EINVAL, "table option where=%s: expected COLUMN:VALUE", v);
        snprintf(st, 256, "%s", v);
        st[c - v] = 0;
        t->where[t->nwhere][0] = st;
        t->where[t->nwhere][1] = st + (c - v) + 1;
        t->nwhere++;
    } else if (KEY("fmt")) {
        snprintf(st, 256, "%s", v);
        t->fmt = st;
    } else if (KEY("na")) {
        snprintf(st, 256, "%s", v);
        t->na = st;
    } else if (KEY("scale")) {
        if (sw_parse_f64(v, &t->scale))
            return sw_fail(err, SW_EINVAL, "table option scale=%s: expected a number", v);
    } else if (KEY("all")) {
        t->ok_only = !strcmp(v, "0") || !strcmp(v, "false");
    } else if (KEY("stat")) {
        static const struct {
            const char *n;
            table_stat s;
        } m[] = {{"first", TS_FIRST}, {"mean", TS_MEAN}, {"mean_ci", TS_MEAN_CI}, {"ci95", TS_CI95},
                 {"n", TS_N}, {"min", TS_MIN}, {"max", TS_MAX}};
        size_t i;
        for (i = 0; i < SW_ARRAY_LEN(m) && strcmp(m[i].n, v); i++)
            ;
        if (i == SW_ARRAY_LEN(m))
            return sw_fail(err, SW_EINVAL, "table option stat=%s: expected first, mean, mean_ci, "
                           "ci95, n, min or max", v);
        t->stat = m[i].s;
    } else if (KEY("format")) {
        if (!strcmp(v, "md"))
            t->format = TF_MD;
        else if (!strcmp(v, "csv"))
            t->format = TF_CSV;
        else if (!strcmp(v, "dat"))
            t->format = TF_DAT;
        else
            return sw_fail(err, SW_EINVAL, "table option format=%s: expected md, csv or dat", v);
    } else {
        return sw_fail(err, SW_EINVAL, "unknown table option '%.*s' (expected rows, cols, value, "
                       "where, fmt, stat, format, na, scale, all)", (int)kl, kv);
    }
#undef KEY
    return 0;
}

/* ---- rendering ---- */

static int matches(const char *val, const char *alts)
{
    size_t l = strlen(val);
    for (const char *p = alts; p && *p;) {
        const char *e = strchr(p, '|');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n == l && !strncmp(p, val, n))
            return 1;
        p = e ? e + 1 : NULL;
    }
    return 0;
}

typedef struct agg {
    double *v;
    int n, cap, tried, failed;
    char *msg; /* first failure message */
} agg;

static void agg_add(agg *a, double x)
{
    if (a->n == a->cap) {
        int nc = a->cap ? 2 * a->cap : 4;
        double *p = sw_realloc(a->v, (size_t)nc * sizeof *p);
        if (!p)
            return;
        a->v = p;
        a->cap = nc;
    }
    a->v[a->n++] = x;
}

static void fmt_num(sw_buf *b, const char *fmt, double x)
{
    char tmp[64];
    snprintf(tmp, sizeof tmp, fmt, x);
    sw_buf_puts(b, tmp);
}

static void render_cell(const table_spec *t, const agg *a, sw_buf *b)
{
    if (a->n == 0) {
        const char *na = t->format == TF_DAT ? "NaN" : t->na;
        sw_buf_puts(b, na);
        if (t->stat == TS_MEAN_CI && t->format != TF_MD) {
            sw_buf_puts(b, t->format == TF_CSV ? "," : " ");
            sw_buf_puts(b, na);
        }
        return;
    }
    double mean = gsl_stats_mean(a->v, 1, (size_t)a->n);
    double sd = a->n > 1 ? gsl_stats_sd(a->v, 1, (size_t)a->n) : 0;
    double ci = a->n > 1 ? gsl_cdf_tdist_Pinv(0.975, a->n - 1) * sd / sqrt(a->n) : 0;
    double mn = a->v[0], mx = a->v[0];
    for (int i = 1; i < a->n; i++) {
        mn = a->v[i] < mn ? a->v[i] : mn;
        mx = a->v[i] > mx ? a->v[i] : mx;
    }
    switch (t->stat) {
    case TS_FIRST: fmt_num(b, t->fmt, a->v[0]); break;
    case TS_MEAN: fmt_num(b, t->fmt, mean); break;
    case TS_CI95: fmt_num(b, t->fmt, ci); break;
    case TS_N: sw_buf_printf(b, "%d", a->n); break;
    case TS_MIN: fmt_num(b, t->fmt, mn); break;
    case TS_MAX: fmt_num(b, t->fmt, mx); break;
    case TS_MEAN_CI:
        if (t->format == TF_MD) {
            fmt_num(b, t->fmt, mean);
            sw_buf_puts(b, " ± ");
            fmt_num(b, t->fmt, ci);
        } else {
            fmt_num(b, t->fmt, mean);
            sw_buf_puts(b, t->format == TF_CSV ? "," : " ");
            fmt_num(b, t->fmt, ci);
        }
        break;
    }
}

static void put_text(const table_spec *t, sw_buf *b, const char *s)
{
    double x;
    if (t->format == TF_DAT && !sw_parse_f64(s, &x)) {
        sw_buf_puts(b, s); /* numbers stay numbers for gnuplot */
    } else if (t->format == TF_DAT) {
        sw_buf_putc(b, '"');
        sw_buf_puts(b, s);
        sw_buf_putc(b, '"');
    } else if (t->format == TF_CSV && strpbrk(s, ",\"")) {
        sw_buf_putc(b, '"');
        for (; *s; s++) {
            if (*s == '"')
                sw_buf_putc(b, '"');
            sw_buf_putc(b, *s);
        }
        sw_buf_putc(b, '"');
    } else {
        sw_buf_puts(b, s);
    }
}

static const char *sep(const table_spec *t) { return t->format == TF_MD ? " | " : t->format == TF_CSV ? "," : " "; }

int table_render(const table_spec *t, sw_buf *b, sw_err *err)
{
    csv_data d;
    int rc = csv_read(t->file, &d, err);
    if (rc)
        return rc;
    int rk[TABLE_MAX], vk[TABLE_MAX], wk[TABLE_MAX], ck = -1;
    int st = csv_col(&d, "status");
    rc = 0;
    for (int i = 0; i < t->nrows && !rc; i++)
        if ((rk[i] = csv_col(&d, t->rows[i])) < 0)
            rc = sw_fail(err, SW_EINVAL, "%s: no column '%s'", t->file, t->rows[i]);
    for (int i = 0; i < t->nvalues && !rc; i++)
        if ((vk[i] = csv_col(&d, t->values[i])) < 0)
            rc = sw_fail(err, SW_EINVAL, "%s: no column '%s'", t->file, t->values[i]);
    for (int i = 0; i < t->nwhere && !rc; i++)
        if ((wk[i] = csv_col(&d, t->where[i][0])) < 0)
            rc = sw_fail(err, SW_EINVAL, "%s: no column '%s'", t->file, t->where[i][0]);
    if (!rc && t->cols && (ck = csv_col(&d, t->cols)) < 0)
        rc = sw_fail(err, SW_EINVAL, "%s: no column '%s'", t->file, t->cols);
    if (!rc && (t->nvalues < 1 || (t->cols && t->nvalues != 1)))
        rc = sw_fail(err, SW_EINVAL, "%s: give one value column with cols=, or value columns",
                     t->file);
    if (rc) {
        csv_free(&d);
        return rc;
    }
    /* distinct row keys and column values, in order of appearance */
    int *rowid = sw_malloc(((size_t)d.nrow + 1) * sizeof(int));
    int *keyrow = sw_malloc(((size_t)d.nrow + 1) * sizeof(int)); /* representative row */
    int *colid = sw_malloc(((size_t)d.nrow + 1) * sizeof(int));
    int *colrow = sw_malloc(((size_t)d.nrow + 1) * sizeof(int));
    int nk = 0, nc = 0;
    for (int r = 0; r < d.nrow; r++) {
        rowid[r] = -1;
        int keep = 1;
        for (int w = 0; w < t->nwhere && keep; w++)
            keep = matches(csv_at(&d, r, wk[w]), t->where[w][1]);
        if (!keep)
            continue;
        int k;
        for (k = 0; k < nk; k++) {
            int same = 1;
            for (int i = 0; i < t->nrows && same; i++)
                same = !strcmp(csv_at(&d, r, rk[i]), csv_at(&d, keyrow[k], rk[i]));
            if (same)
                break;
        }
        if (k == nk)
            keyrow[nk++] = r;
        rowid[r] = k;
        colid[r] = 0;
        if (ck >= 0) {
            int c;
            for (c = 0; c < nc; c++)
                if (!strcmp(csv_at(&d, r, ck), csv_at(&d, colrow[c], ck)))
                    break;
            if (c == nc)
                colrow[nc++] = r;
            colid[r] = c;
        }
    }
    int ncols = ck >= 0 ? nc : t->nvalues;
    agg *cells = sw_calloc((size_t)(nk ? nk : 1) * (size_t)(ncols ? ncols : 1), sizeof *cells);
    for (int r = 0; r < d.nrow && cells; r++) {
        if (rowid[r] < 0)
            continue;
        int ok = st < 0 || !strcmp(csv_at(&d, r, st), "ok");
        for (int v = 0; v < (ck >= 0 ? 1 : t->nvalues); v++) {
            agg *a = &cells[(size_t)rowid[r] * (size_t)ncols + (size_t)(ck >= 0 ? colid[r] : v)];
            a->tried++;
            const char *txt = csv_at(&d, r, vk[v]);
            double x;
            if ((ok || !t->ok_only) && !sw_parse_f64(txt, &x))
                agg_add(a, x * t->scale);
            else
                a->failed++;
        }
    }
    /* header */
    if (t->format == TF_MD)
        sw_buf_puts(b, "| ");
    for (int i = 0; i < t->nrows; i++) {
        if (i)
            sw_buf_puts(b, sep(t));
        put_text(t, b, t->rows[i]);
    }
    for (int c = 0; c < ncols; c++) {
        sw_buf_puts(b, sep(t));
        put_text(t, b, ck >= 0 ? csv_at(&d, colrow[c], ck) : t->values[c]);
        if (t->stat == TS_MEAN_CI && t->format != TF_MD) {
            sw_buf_puts(b, sep(t));
            put_text(t, b, "ci95");
        }
    }
    sw_buf_puts(b, t->format == TF_MD ? " |\n|" : "\n");
    if (t->format == TF_MD) {
        for (int i = 0; i < t->nrows + ncols; i++)
            sw_buf_puts(b, i < t->nrows ? "---|" : "---:|");
        sw_buf_putc(b, '\n');
    }
    for (int k = 0; k < nk; k++) {
        if (t->format == TF_MD)
            sw_buf_puts(b, "| ");
        for (int i = 0; i < t->nrows; i++) {
            if (i)
                sw_buf_puts(b, sep(t));
            put_text(t, b, csv_at(&d, keyrow[k], rk[i]));
        }
        for (int c = 0; c < ncols; c++) {
            sw_buf_puts(b, sep(t));
            render_cell(t, &cells[(size_t)k * (size_t)ncols + (size_t)c], b);
        }
        sw_buf_puts(b, t->format == TF_MD ? " |\n" : "\n");
    }
    for (int i = 0; cells && i < nk * ncols; i++)
        sw_free(cells[i].v);
    sw_free(cells);
    sw_free(rowid);
    sw_free(keyrow);
    sw_free(colid);
    sw_free(colrow);
    csv_free(&d);
    return b->oom ? sw_fail(err, SW_ENOMEM, "out of memory") : 0;
}

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
   by P% or more, and in how many B ran and A did not. */
static int compare_render(table_spec *t, const char *a, const char *bname, const char *na,
                          const char *nb, double big, sw_buf *out, sw_err *err)
{
    t->format = TF_CSV;
    t->stat = t->stat == TS_MIN || t->stat == TS_MAX ? t->stat : TS_MEAN;
    t->fmt = "%.17g";
    t->na = "";
    sw_buf tb;
    sw_buf_init(&tb);
    int rc = table_render(t, &tb, err);
    if (rc || tb.oom || !tb.data) {
        sw_buf_free(&tb);
        return rc ? rc : sw_fail(err, SW_ENOMEM, "out of memory");
    }
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
   and b= the smallest or largest ratio A/B over the rows where both ran
   (stat=max or min: a cell's largest or smallest row instead of the mean);
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
    t->format = TF_CSV;
    t->stat = t->stat == TS_MIN || t->stat == TS_MAX ? t->stat : TS_MEAN;
    t->fmt = "%.17g";
    t->na = "";
    t->scale = 1;
    sw_buf tb;
    sw_buf_init(&tb);
    int rc = table_render(t, &tb, err);
    if (rc || tb.oom || !tb.data) {
        sw_buf_free(&tb);
        return rc ? rc : sw_fail(err, SW_ENOMEM, "out of memory");
    }
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

/* {{within FILE rows=... cols=COL value=V a=A b=B [tol=P] [where=...]
   [claim=K1|K2|none]}}: the rows where A differs from B by more than P
   percent (default 1; mean of repeated runs), each with its difference,
   "K1 (+2.3%), K2 (-1.7%)", or "none": the "within P% except ..." of a
   sentence, computed. keys gets "K1|K2" (or "none") for a claim. */
static int within_render(table_spec *t, const char *a, const char *bname, double tol,
                         sw_buf *out, char *keys, size_t nkeys, sw_err *err)
{
    t->format = TF_CSV;
    t->stat = TS_MEAN;
    t->fmt = "%.17g";
    t->na = "";
    t->scale = 1;
    sw_buf tb;
    sw_buf_init(&tb);
    int rc = table_render(t, &tb, err);
    if (rc || tb.oom || !tb.data) {
        sw_buf_free(&tb);
        return rc ? rc : sw_fail(err, SW_ENOMEM, "out of memory");
    }
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
                vb = strtod(f, NULL);
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
    char claim[256];    /* argmax, within: what the template's sentence says ("": nothing) */
} directive;

static int directive_parse(char *args, const char *data_dir, directive *d, sw_err *err)
{
    table_spec_init(&d->t);
    d->a = d->b = NULL;
    d->big = 0;
    d->names[0] = 0;
    d->pick = -1;
    d->cell = 0;
    d->tol = 1;
    d->claim[0] = 0;
    char *save = NULL;
    for (char *w = strtok_r(args, " \t\n", &save); w; w = strtok_r(NULL, " \t\n", &save)) {
        if (!d->t.file) {
            snprintf(d->path, sizeof d->path, "%s/%s", data_dir, w);
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
        if (compare_render(&d.t, d.a, d.b, d.names[0] ? d.names : d.a, comma ? comma + 1 : d.b,
                           d.big, s->out, &e2))
            sw_buf_printf(s->out, "*(comparison not available: %s)*", e2.msg);
    } else if (kind == 1) {
        if (number_render(&d.t, d.a, d.b, d.pick, d.cell, s->out, &e2))
            sw_buf_printf(s->out, "*(not available: %s)*", e2.msg);
    } else {
        size_t at = s->out->len;
        char keys[1024];
        int bad = kind == 4 ? within_render(&d.t, d.a, d.b, d.tol, s->out, keys, sizeof keys, &e2)
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
            snprintf(path, sizeof path, "%s/%s", s->data_dir, w);
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
        sw_buf_put(s->out, p, (size_t)(open - p));
        if (kind < 0 && !inc && !tab) {
            sw_buf_puts(s->out, "{{");
            p = open + 2;
            continue;
        }
        const char *end = inc ? expand_include(s, open) : tab ? expand_table(s, open)
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
   line) or named by the word before it (Figure 6, section 4, batch 16; see
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
        if (name || year || marker || named_run)
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
