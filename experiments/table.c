/* table.c: CSV reading, pivots with aggregates, rendering (report.c: the
   report templates). */
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

/* 1 when f is text around one printf conversion of a double (%g, %.1f,
   %.0f%%...) */
int table_num_format(const char *f)
{
    int conv = 0;
    for (const char *p = f; *p; p++) {
        if (*p != '%')
            continue;
        if (p[1] == '%') {
            p++;
            continue;
        }
        p++;
        while (*p == '.' || isdigit((unsigned char)*p))
            p++;
        if (!*p || !strchr("fgeFGE", *p) || conv++)
            return 0;
    }
    return conv == 1;
}


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
        for (char *q = st + (c - v) + 1; *q; q++)
            if (*q == '~') /* a space in a value: a directive's words are split on spaces */
                *q = ' ';
        t->where[t->nwhere][0] = st;
        t->where[t->nwhere][1] = st + (c - v) + 1;
        t->nwhere++;
    } else if (KEY("fmt")) {
        if (!table_num_format(v))
            return sw_fail(err, SW_EINVAL, "table option fmt=%s: expected one printf conversion "
                           "of a number (%%g, %%.2f, %%.0f%%%%)", v);
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
