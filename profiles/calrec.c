/* calrec.c: the cost model against recorded operator times, and the fit of
   its efficiency figures (see calrec.h). */
#include "calrec.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/params.h"
#include "importers.h"
#include "profile_io.h"

static const char *const class_names[CR__COUNT] = {
    "conv forward", "conv backward", "GEMM", "batch norm", "pooling", "elementwise", "other"};

const char *cr_class_name(int c)
{
    return c >= 0 && c < CR__COUNT ? class_names[c] : "?";
}

void cr_set_init(cr_set *s) { memset(s, 0, sizeof *s); }

void cr_set_free(cr_set *s)
{
    sw_free(s->src);
    sw_free(s->ops);
    memset(s, 0, sizeof *s);
}


/* the GPU named in a provenance device string ("NAME (from the Kineto ...") */
static void gpu_name(const graph_profile *g, char *buf, size_t n)
{
    const char *d = g->prov.device ? g->prov.device : g->device.name;
    size_t l = strcspn(d, "(");
    while (l > 0 && d[l - 1] == ' ')
        l--;
    snprintf(buf, n, "%.*s", (int)l, d);
}

/* the built-in device of the GPU the provenance names (a profile recorded
   with `swapsim profile` keeps the device it was generated for), or NULL */
static const dev_spec *recorded_on(const graph_profile *g)
{
    static const struct {
        const char *pat, *dev;
    } map[] = {{"2080 Ti", "rtx2080ti"}, {"V100", "v100"}, {"TITAN V", "titanv"},
               {"Titan V", "titanv"},    {"A100", "a100"}, {"H100", "h100"}};
    for (size_t i = 0; g->prov.device && i < SW_ARRAY_LEN(map); i++)
        if (strstr(g->prov.device, map[i].pat))
            return dev_find(map[i].dev);
    return NULL;
}

static int profile_fp16(const graph_profile *g)
{
    for (int32_t i = 0; i < g->n_tensors; i++)
        if (g->tensors[i].dtype)
            return !strcmp(g->tensors[i].dtype, "fp16") || !strcmp(g->tensors[i].dtype, "float16");
    return 0;
}

int cr_add_profile(cr_set *s, const graph_profile *g, const char *name, const dev_spec *dev,
                   sw_err *err)
{
    if (!g->prov.source || strcmp(g->prov.source, "recorded"))
        return sw_fail(err, SW_EINVAL, "%s: not a recorded profile (provenance source is '%s'; "
                       "record one with 'swapsim profile' or 'swapsim import')",
                       name ? name : g->name, g->prov.source ? g->prov.source : "none");
    if (SW_GROW(s->src, s->src_cap, (size_t)s->n_src + 1))
        return sw_fail(err, SW_ENOMEM, "out of memory");
    cr_source *src = &s->src[s->n_src];
    memset(src, 0, sizeof *src);
    snprintf(src->name, sizeof src->name, "%s", name ? name : g->name ? g->name : "profile");
    gpu_name(g, src->gpu, sizeof src->gpu);
    const dev_spec *on = recorded_on(g);
    src->dev = dev ? *dev : on ? *on : g->device;
    src->fp16 = profile_fp16(g);
    ot_index nx;
    if (ot_index_build(&nx, g))
        return sw_fail(err, SW_ENOMEM, "out of memory");
    cm_ctx c;
    cm_init(&c, &src->dev, src->fp16);
    for (int32_t i = 0; i < g->n_ops; i++) {
        if (!(g->ops[i].time_s > 0))
            continue;
        if (SW_GROW(s->ops, s->ops_cap, (size_t)s->n_ops + 1)) {
            ot_index_free(&nx);
            return sw_fail(err, SW_ENOMEM, "out of memory");
        }
        cr_op *r = &s->ops[s->n_ops];
        memset(r, 0, sizeof *r);
        r->op = i;
        r->src = s->n_src;
        r->measured_s = g->ops[i].time_s;
        ot_pred p;
        ot_predict(g, i, &c, &nx, &p);
        r->cls = p.cls;
        r->n_terms = p.n_terms;
        memcpy(r->t, p.t, sizeof r->t);
        src->n_timed++;
        if (!r->n_terms) {
            src->n_unmodelled++;
            src->unmodelled_s += r->measured_s;
            continue; /* kept out of the set: nothing to compare */
        }
        s->n_ops++;
        cr_figures f;
        cr_figures_builtin(NULL, &f);
        r->model_s = cr_op_time(s, &f, r);
    }
    ot_index_free(&nx);
    s->n_src++;
    return 0;
}

/* ---- figures ---- */

void cr_figures_builtin(const dev_spec *dev, cr_figures *f)
{
    memset(f, 0, sizeof *f);
    f->builtin = 1;
    for (int k = 0; k < CM__COUNT; k++) {
        f->eff[k] = cm_constants((cm_kind)k)->eff_fp32;
        f->eff_bw[k] = cm_constants((cm_kind)k)->eff_bw;
    }
    f->launch_s = dev ? dev->launch_overhead_s : 0;
}

double cr_op_time(const cr_set *s, const cr_figures *f, const cr_op *o)
{
    const cr_source *src = &s->src[o->src];
    cm_ctx c;
    cm_init(&c, &src->dev, src->fp16);
    double t = 0;
    for (int i = 0; i < o->n_terms; i++) {
        const cm_terms *x = &o->t[i];
        if (f->builtin) {
            t += cm_time_with(&c, cm_constants(x->kind), src->dev.launch_overhead_s, x);
            continue;
        }
        cm_const k = *cm_constants(x->kind);
        if (src->fp16)
            k.eff_fp16 = f->eff[x->kind];
        else
            k.eff_fp32 = f->eff[x->kind];
        k.eff_bw = f->eff_bw[x->kind];
        t += cm_time_with(&c, &k, f->launch_s, x);
    }
    return t;
}

/* ---- the fit ---- */

#define MAXP (2 * CM__COUNT + 1)
#define PRIOR_W 1e-5

typedef struct fit_ctx {
    const cr_set *s;
    int skip;
    int np;
    int what[MAXP];      /* k: eff[k]; CM__COUNT + k: eff_bw[k]; 2 * CM__COUNT: launch */
    double theta0[MAXP]; /* ln of the built-in values */
    cr_figures base;     /* the figures the parameters go into */
} fit_ctx;

static void apply(const fit_ctx *x, const double *theta, cr_figures *f)
{
    *f = x->base;
    for (int j = 0; j < x->np; j++) {
        double v = exp(theta[j]);
        if (x->what[j] < CM__COUNT)
            f->eff[x->what[j]] = v;
        else if (x->what[j] < 2 * CM__COUNT)
            f->eff_bw[x->what[j] - CM__COUNT] = v;
        else
            f->launch_s = v;
    }
}

static int used(const fit_ctx *x, const cr_op *o)
{
    return o->src != x->skip && o->n_terms > 0 && o->measured_s > 0;
}

/* residuals: ln(model / recorded) per operator, then the pulls to the
   built-in values; returns the sum of squares */
static double residuals(const fit_ctx *x, const double *theta, double *r)
{
    cr_figures f;
    apply(x, theta, &f);
    int32_t n = 0;
    double ss = 0;
    for (int32_t i = 0; i < x->s->n_ops; i++) {
        const cr_op *o = &x->s->ops[i];
        if (!used(x, o))
            continue;
        double m = cr_op_time(x->s, &f, o);
        r[n] = log(m > 0 ? m : 1e-30) - log(o->measured_s);
        ss += r[n] * r[n];
        n++;
    }
    for (int j = 0; j < x->np; j++) {
        r[n] = sqrt(PRIOR_W) * (theta[j] - x->theta0[j]);
        ss += r[n] * r[n];
        n++;
    }
    return ss;
}

/* solve a x = b (n x n, row major; a and b are destroyed) by Gaussian
   elimination with partial pivoting; -1 if singular */
static int solve(double *a, double *b, double *xo, int n)
{
    for (int c = 0; c < n; c++) {
        int p = c;
        for (int i = c + 1; i < n; i++)
            if (fabs(a[i * n + c]) > fabs(a[p * n + c]))
                p = i;
        if (fabs(a[p * n + c]) < 1e-300)
            return -1;
        if (p != c) {
            for (int j = 0; j < n; j++) {
                double t = a[c * n + j];
                a[c * n + j] = a[p * n + j];
                a[p * n + j] = t;
            }
            double t = b[c];
            b[c] = b[p];
            b[p] = t;
        }
        for (int i = c + 1; i < n; i++) {
            double m = a[i * n + c] / a[c * n + c];
            for (int j = c; j < n; j++)
                a[i * n + j] -= m * a[c * n + j];
            b[i] -= m * b[c];
        }
    }
    for (int i = n - 1; i >= 0; i--) {
        double v = b[i];
        for (int j = i + 1; j < n; j++)
            v -= a[i * n + j] * xo[j];
        xo[i] = v / a[i * n + i];
    }
    return 0;
}

int cr_fit(const cr_set *s, int skip, cr_fit_result *out, sw_err *err)
{
    memset(out, 0, sizeof *out);
    fit_ctx x;
    memset(&x, 0, sizeof x);
    x.s = s;
    x.skip = skip;
    int launch_src = -1;
    for (int32_t i = 0; i < s->n_ops; i++) {
        const cr_op *o = &s->ops[i];
        if (!used(&x, o))
            continue;
        out->n_used++;
        if (launch_src < 0)
            launch_src = o->src;
        int seen[CM__COUNT] = {0};
        for (int k = 0; k < o->n_terms; k++)
            seen[o->t[k].kind] = 1;
        for (int k = 0; k < CM__COUNT; k++)
            out->n_kind[k] += seen[k];
    }
    if (out->n_used == 0)
        return sw_fail(err, SW_EINVAL, "no recorded operator the cost model can time");
    cr_figures_builtin(&s->src[launch_src].dev, &x.base);
    x.base.builtin = 0;
    for (int k = 0; k < CM__COUNT; k++) {
        if (out->n_kind[k] < 3)
            continue;
        int compute = cm_constants((cm_kind)k)->eff_fp32 > 0;
        x.what[x.np] = compute ? k : CM__COUNT + k;
        x.theta0[x.np++] = log(compute ? x.base.eff[k] : x.base.eff_bw[k]);
        (compute ? out->free_eff : out->free_bw)[k] = 1;
    }
    if (out->n_used >= 3 && x.base.launch_s > 0) {
        x.what[x.np] = 2 * CM__COUNT;
        x.theta0[x.np++] = log(x.base.launch_s);
        out->free_launch = 1;
    }
    int np = x.np;
    size_t nr = (size_t)out->n_used + (size_t)np;
    double *r = sw_malloc(nr * sizeof *r), *r2 = sw_malloc(nr * sizeof *r2);
    double *jac = sw_malloc(nr * (size_t)(np + 1) * sizeof *jac);
    if (!r || !r2 || !jac) {
        sw_free(r);
        sw_free(r2);
        sw_free(jac);
        return sw_fail(err, SW_ENOMEM, "out of memory");
    }
    double theta[MAXP], trial[MAXP], a[MAXP * MAXP], am[MAXP * MAXP], g[MAXP], gm[MAXP],
        d[MAXP];
    memcpy(theta, x.theta0, sizeof theta);
    double cost = residuals(&x, theta, r);
    out->rms_before = sqrt((cost - 0) / (double)out->n_used); /* pulls are 0 at the start */
    double lambda = 1e-3;
    int it;
    for (it = 0; it < 200 && np > 0; it++) {
        /* forward-difference Jacobian */
        const double h = 1e-6;
        for (int j = 0; j < np; j++) {
            memcpy(trial, theta, sizeof trial);
            trial[j] += h;
            residuals(&x, trial, r2);
            for (size_t i = 0; i < nr; i++)
                jac[i * (size_t)np + (size_t)j] = (r2[i] - r[i]) / h;
        }
        for (int p = 0; p < np; p++) {
            g[p] = 0;
            for (int q = 0; q < np; q++)
                a[p * np + q] = 0;
        }
        for (size_t i = 0; i < nr; i++) {
            const double *ji = &jac[i * (size_t)np];
            for (int p = 0; p < np; p++) {
                g[p] += ji[p] * r[i];
                for (int q = 0; q < np; q++)
                    a[p * np + q] += ji[p] * ji[q];
            }
        }
        double new_cost = cost;
        for (;;) {
            memcpy(am, a, sizeof am);
            for (int p = 0; p < np; p++) {
                am[p * np + p] += lambda * (a[p * np + p] > 0 ? a[p * np + p] : 1e-12);
                gm[p] = -g[p];
            }
            if (solve(am, gm, d, np) == 0) {
                for (int p = 0; p < np; p++)
                    trial[p] = theta[p] + d[p];
                new_cost = residuals(&x, trial, r2);
                if (new_cost < cost)
                    break;
            }
            lambda *= 10;
            if (lambda > 1e12)
                break;
        }
        if (lambda > 1e12)
            break;
        double gain = (cost - new_cost) / (cost > 0 ? cost : 1);
        memcpy(theta, trial, sizeof theta);
        memcpy(r, r2, nr * sizeof *r);
        cost = new_cost;
        lambda = lambda / 10 > 1e-12 ? lambda / 10 : 1e-12;
        if (gain < 1e-12)
            break;
    }
    out->iterations = it;
    apply(&x, theta, &out->fig);
    double ss = 0;
    for (int32_t i = 0; i < out->n_used; i++)
        ss += r[i] * r[i];
    out->rms_after = sqrt(ss / (double)out->n_used);
    sw_free(r);
    sw_free(r2);
    sw_free(jac);
    return 0;
}

/* ---- summaries ---- */

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int cr_summarise(const cr_set *s, const cr_figures *f, int src, cr_class_sum out[CR__COUNT + 1])
{
    memset(out, 0, (CR__COUNT + 1) * sizeof *out);
    double *e = sw_malloc(((size_t)s->n_ops + 1) * sizeof *e);
    if (!e)
        return SW_ENOMEM;
    for (int c = 0; c <= CR__COUNT; c++) {
        int n = 0;
        for (int32_t i = 0; i < s->n_ops; i++) {
            const cr_op *o = &s->ops[i];
            if ((src >= 0 && o->src != src) || (c < CR__COUNT && o->cls != c) || !o->n_terms)
                continue;
            double m = cr_op_time(s, f, o);
            out[c].n++;
            out[c].measured_s += o->measured_s;
            out[c].model_s += m;
            e[n++] = fabs(m / o->measured_s - 1);
        }
        qsort(e, (size_t)n, sizeof *e, cmp_dbl);
        out[c].median_abs_err = n ? (n % 2 ? e[n / 2] : (e[n / 2 - 1] + e[n / 2]) / 2) : 0;
    }
    sw_free(e);
    return 0;
}

/* ---- the report ---- */

static void pct(char *buf, size_t n, double model, double rec)
{
    if (rec > 0)
        snprintf(buf, n, "%+.0f%%", 100 * (model / rec - 1));
    else
        snprintf(buf, n, "n/a");
}

static void ms(char *buf, size_t n, double s)
{
    snprintf(buf, n, s >= 0.1e-3 || s == 0 ? "%.1f ms" : "%.3f ms", s * 1e3);
}

/* the table of errors per class, under figures f; with per-source error
   columns when per_src */
static int class_table(const cr_set *s, const cr_figures *f, int per_src, sw_buf *b)
{
    cr_class_sum all[CR__COUNT + 1];
    cr_class_sum *ps = sw_calloc((size_t)s->n_src * (CR__COUNT + 1) + 1, sizeof *ps);
    if (!ps || cr_summarise(s, f, -1, all)) {
        sw_free(ps);
        return SW_ENOMEM;
    }
    for (int i = 0; per_src && i < s->n_src; i++)
        if (cr_summarise(s, f, i, ps + (size_t)i * (CR__COUNT + 1))) {
            sw_free(ps);
            return SW_ENOMEM;
        }
    sw_buf_puts(b, "| class | operators | recorded | model | error | median operator error |");
    for (int i = 0; per_src && i < s->n_src; i++)
        sw_buf_printf(b, " %s |", s->src[i].name);
    sw_buf_puts(b, "\n|---|---|---|---|---|---|");
    for (int i = 0; per_src && i < s->n_src; i++)
        sw_buf_puts(b, "---|");
    sw_buf_puts(b, "\n");
    for (int c = 0; c <= CR__COUNT; c++) {
        const cr_class_sum *a = &all[c];
        if (!a->n && c < CR__COUNT)
            continue;
        char m1[32], m2[32], e[16];
        ms(m1, sizeof m1, a->measured_s);
        ms(m2, sizeof m2, a->model_s);
        pct(e, sizeof e, a->model_s, a->measured_s);
        sw_buf_printf(b, "| %s | %d | %s | %s | %s | %.0f%% |", c < CR__COUNT ? class_names[c]
                      : "**all**", a->n, m1, m2, e, 100 * a->median_abs_err);
        for (int i = 0; per_src && i < s->n_src; i++) {
            const cr_class_sum *p = &ps[(size_t)i * (CR__COUNT + 1) + (size_t)c];
            if (p->n)
                pct(e, sizeof e, p->model_s, p->measured_s);
            else
                snprintf(e, sizeof e, " ");
            sw_buf_printf(b, " %s |", e);
        }
        sw_buf_puts(b, "\n");
    }
    sw_free(ps);
    return 0;
}

static void fig_text(char *buf, size_t n, double v, int launch)
{
    if (launch)
        snprintf(buf, n, "%.2f us", v * 1e6);
    else
        snprintf(buf, n, "%.3g", v);
}

/* fitted against built-in figures; builtin_launch_s: the devices' */
static void figures_table(const cr_fit_result *fr, double builtin_launch_s, sw_buf *b)
{
    cr_figures bi;
    cr_figures_builtin(NULL, &bi);
    sw_buf_puts(b, "| kind | figure | built-in | fitted | operators |\n|---|---|---|---|---|\n");
    char x[32], y[32];
    for (int k = 0; k < CM__COUNT; k++) {
        const char *nm = cm_constants((cm_kind)k)->name;
        if (fr->free_eff[k]) {
            fig_text(x, sizeof x, bi.eff[k], 0);
            fig_text(y, sizeof y, fr->fig.eff[k], 0);
            sw_buf_printf(b, "| %s | compute efficiency (of the peak FLOP/s) | %s | %s | %d |\n",
                          nm, x, y, fr->n_kind[k]);
        }
        if (fr->free_bw[k]) {
            fig_text(x, sizeof x, bi.eff_bw[k], 0);
            fig_text(y, sizeof y, fr->fig.eff_bw[k], 0);
            sw_buf_printf(b, "| %s | bandwidth efficiency (of the memory bandwidth) | %s | %s | "
                          "%d |\n", nm, x, y, fr->n_kind[k]);
        }
    }
    if (fr->free_launch) {
        fig_text(x, sizeof x, builtin_launch_s, 1);
        fig_text(y, sizeof y, fr->fig.launch_s, 1);
        sw_buf_printf(b, "| every kind | fixed cost per kernel | %s | %s | %d |\n", x, y,
                      fr->n_used);
    }
}

/* errors with the fitted figures; held[c]: the model's time of class c
   with figures fitted to the other sources, held_rec[c] the recorded (NULL:
   no such column) */
static int fitted_table(const cr_set *s, const cr_figures *f, const double *held,
                        const double *held_rec, sw_buf *b)
{
    cr_class_sum all[CR__COUNT + 1];
    if (cr_summarise(s, f, -1, all))
        return SW_ENOMEM;
    sw_buf_printf(b, "| class | operators | recorded | model (fitted) | error | median operator "
                  "error |%s\n|---|---|---|---|---|---|%s\n",
                  held ? " held out (fitted to the other models) |" : "", held ? "---|" : "");
    for (int c = 0; c <= CR__COUNT; c++) {
        const cr_class_sum *a = &all[c];
        if (!a->n && c < CR__COUNT)
            continue;
        char m1[32], m2[32], e[16], h[16];
        ms(m1, sizeof m1, a->measured_s);
        ms(m2, sizeof m2, a->model_s);
        pct(e, sizeof e, a->model_s, a->measured_s);
        sw_buf_printf(b, "| %s | %d | %s | %s | %s | %.0f%% |",
                      c < CR__COUNT ? class_names[c] : "**all**", a->n, m1, m2, e,
                      100 * a->median_abs_err);
        if (held) {
            pct(h, sizeof h, held[c], held_rec[c]);
            sw_buf_printf(b, " %s |", h);
        }
        sw_buf_puts(b, "\n");
    }
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp((const char *)a, (const char *)b);
}

#define TRACE_NAME 96
#define MAX_TRACES 16

/* stems X of DIR/X_et.json.gz starting h100_ with a DIR/X_kineto.json.gz,
   sorted; returns how many */
static int list_traces(const char *dir, char (*stem)[TRACE_NAME], int max)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && n < max) {
        size_t l = strlen(e->d_name);
        const char *suf = "_et.json.gz";
        size_t ls = strlen(suf);
        if (l <= ls || l - ls >= TRACE_NAME || strncmp(e->d_name, "h100_", 5) ||
            strcmp(e->d_name + l - ls, suf))
            continue;
        char k[1200];
        snprintf(k, sizeof k, "%s/%.*s_kineto.json.gz", dir, (int)(l - ls), e->d_name);
        FILE *f = fopen(k, "rb");
        if (!f)
            continue;
        fclose(f);
        snprintf(stem[n++], TRACE_NAME, "%.*s", (int)(l - ls), e->d_name);
    }
    closedir(d);
    qsort(stem, (size_t)n, sizeof *stem, cmp_str);
    return n;
}

static void model_label(const char *stem, char *buf, size_t n)
{
    static const struct {
        const char *key, *label;
    } map[] = {{"resnet50", "ResNet-50"},
               {"vgg16", "VGG-16"},
               {"inception3", "Inception-v3"},
               {"densenet121", "DenseNet-121"},
               {"lstm2x1024", "LSTM 2x1024"}};
    for (size_t i = 0; i < SW_ARRAY_LEN(map); i++)
        if (strstr(stem, map[i].key)) {
            snprintf(buf, n, "%s", map[i].label);
            return;
        }
    snprintf(buf, n, "%s", stem);
}

static int import_trace(const char *dir, const char *stem, graph_profile **g, sw_err *err)
{
    const importer *im = importer_find("pytorch");
    if (!im)
        return sw_fail(err, SW_ENOTFOUND, "the pytorch importer is not built in");
    char et[1200], k[1200];
    snprintf(et, sizeof et, "%s/%s_et.json.gz", dir, stem);
    snprintf(k, sizeof k, "%s/%s_kineto.json.gz", dir, stem);
    param_set ps;
    if (params_init(&ps, im->params))
        return sw_fail(err, SW_ENOMEM, "out of memory");
    int rc = params_set_kv(&ps, "batch=64", err);
    const char *files[2] = {et, k};
    if (!rc)
        rc = im->import(files, 2, &ps, dev_find("h100"), g, err);
    params_free(&ps);
    return rc;
}

/* the fit and its tables; held_out: also fit to every source but one */
static int fit_section(const cr_set *s, int held_out, sw_buf *b, sw_err *err)
{
    cr_fit_result fr;
    int rc = cr_fit(s, -1, &fr, err);
    if (rc)
        return rc;
    sw_buf_printf(b, "Fitted to %d operators by least squares on ln(model / recorded) "
                  "(Levenberg-Marquardt, %d steps; `profiles/calrec.c`): the root mean "
                  "square of ln(model / recorded) goes from %.2f with the built-in figures to "
                  "%.2f (a factor of %.2f to %.2f). Each compute kind's efficiency and each "
                  "memory-bound kind's bandwidth efficiency with at least 3 operators is "
                  "fitted, and the fixed cost per kernel; the half-efficiency dimensions and "
                  "the device's peak FLOP/s and bandwidth stay as they are, so a fitted "
                  "efficiency also absorbs any error in those.\n\n",
                  fr.n_used, fr.iterations, fr.rms_before, fr.rms_after, exp(fr.rms_before),
                  exp(fr.rms_after));
    figures_table(&fr, s->src[0].dev.launch_overhead_s, b);
    double held[CR__COUNT + 1] = {0}, held_rec[CR__COUNT + 1] = {0};
    int can_hold = held_out && s->n_src >= 2;
    for (int i = 0; can_hold && i < s->n_src; i++) {
        cr_fit_result hr;
        if ((rc = cr_fit(s, i, &hr, err)) != 0)
            return rc;
        cr_class_sum cs[CR__COUNT + 1];
        if (cr_summarise(s, &hr.fig, i, cs))
            return sw_fail(err, SW_ENOMEM, "out of memory");
        for (int c = 0; c <= CR__COUNT; c++) {
            held[c] += cs[c].model_s;
            held_rec[c] += cs[c].measured_s;
        }
    }
    sw_buf_puts(b, "\nWith the fitted figures:\n\n");
    if (fitted_table(s, &fr.fig, can_hold ? held : NULL, held_rec, b))
        return sw_fail(err, SW_ENOMEM, "out of memory");
    if (can_hold)
        sw_buf_puts(b, "\nThe held-out column times each model with figures fitted to the "
                       "others only: what the fit is worth on a network it has not seen.\n");
    return 0;
}

static void unmodelled_note(const cr_set *s, sw_buf *b)
{
    int32_t n = 0, all = 0;
    double t = 0, tall = 0;
    for (int i = 0; i < s->n_src; i++) {
        n += s->src[i].n_unmodelled;
        t += s->src[i].unmodelled_s;
        all += s->src[i].n_timed;
    }
    for (int32_t i = 0; i < s->n_ops; i++)
        tall += s->ops[i].measured_s;
    tall += t;
    if (n)
        sw_buf_printf(b, "\n%d of the %d operators with a recorded time (%.1f ms of %.1f ms) lack "
                      "the shapes the cost model needs and are left out.\n", n, all, t * 1e3,
                      tall * 1e3);
}

static int traces_section(const char *data, const dev_spec *dev, sw_buf *b, sw_err *err)
{
    char dir[1100];
    snprintf(dir, sizeof dir, "%s/pytorch-traces", data ? data : ".");
    char (*stem)[TRACE_NAME] = sw_malloc(MAX_TRACES * sizeof *stem);
    if (!stem)
        return sw_fail(err, SW_ENOMEM, "out of memory");
    int nt = data ? list_traces(dir, stem, MAX_TRACES) : 0;
    sw_buf_puts(b, "\n## Recorded operator times: H100, PyTorch 2.11\n\n");
    if (!nt) {
        sw_buf_puts(b, "(No H100 traces found: pass --data DIR holding "
                       "pytorch-traces/h100_*_et.json.gz and their _kineto.json.gz.)\n");
        sw_free(stem);
        return 0;
    }
    cr_set s;
    cr_set_init(&s);
    int rc = 0;
    for (int i = 0; i < nt && !rc; i++) {
        graph_profile *g = NULL;
        if ((rc = import_trace(dir, stem[i], &g, err)) != 0)
            break;
        char label[TRACE_NAME];
        model_label(stem[i], label, sizeof label);
        rc = cr_add_profile(&s, g, label, dev, err);
        graph_free(g);
    }
    sw_free(stem);
    if (rc) {
        cr_set_free(&s);
        return rc;
    }
    const cr_source *s0 = &s.src[0];
    sw_buf_printf(b, "Every operator of the %d training iterations in `%s/pytorch-traces/` "
                  "(h100_*: ", s.n_src, "data");
    for (int i = 0; i < s.n_src; i++)
        sw_buf_printf(b, "%s%s", i ? ", " : "", s.src[i].name);
    sw_buf_printf(b, "; batch 64, fp32), imported with `swapsim import pytorch ET KINETO "
                  "--batch 64` (the import gives each operator the shapes the cost model needs, "
                  "read from the execution trace's inputs: convolution n/c/h/w/k/r/s/stride/pad/"
                  "groups, m/n/k of each matrix product, the batch norm's and pooling's input "
                  "and output), timed by the cost model on device `%s` (%.1f TFLOP/s fp32, "
                  "%.2f TB/s, %.0f us per kernel) and compared with the GPU time of the "
                  "kernels each operator launched. Operators without a kernel (views, "
                  "gradient accumulation into fresh buffers) have no recorded time and are "
                  "not counted.\n\n", s0->dev.name, s0->dev.peak_flops_fp32 / 1e12,
                  s0->dev.mem_bw / 1e12, s0->dev.launch_overhead_s * 1e6);
    sw_buf_printf(b, "**A different stack from the paper's.** These are PyTorch 2.11 "
                  "(CUDA 13.0, cuDNN and cuBLAS) on an %s, not the SwapAdvisor paper's MXNet "
                  "on a V100: true fp32 (TF32 off: the traces' `cudnn_convolution` says "
                  "`allow_tf32 = false`), cuDNN's own choice of convolution algorithm, batch "
                  "norm and ReLU as separate operators where the generators fuse them, and "
                  "PyTorch's elementwise kernels. The errors say how the cost model's shape "
                  "of time holds on a current stack and the fit what figures that stack "
                  "would need; neither checks the built-in figures against the paper's "
                  "MXNet. ", s0->gpu);
    if (strstr(s0->gpu, "HBM3") && !dev)
        sw_buf_printf(b, "The traces name the SXM card (HBM3: about 67 TFLOP/s fp32 and "
                      "3.35 TB/s), while the built-in `%s` is the PCIe card's figures: part "
                      "of every built-in error below is that difference, which the fitted "
                      "efficiencies absorb (one above 1 is partly that).", s0->dev.name);
    sw_buf_puts(b, "\n\n### Error per operator class, built-in figures\n\n"
                   "Error = model / recorded - 1 of the class's total time; the median is "
                   "over its operators' |model / recorded - 1|; one column per model.\n\n");
    cr_figures bi;
    cr_figures_builtin(NULL, &bi);
    if (class_table(&s, &bi, 1, b)) {
        cr_set_free(&s);
        return sw_fail(err, SW_ENOMEM, "out of memory");
    }
    unmodelled_note(&s, b);
    sw_buf_puts(b, "\n### Efficiency figures fitted to these operators\n\n");
    rc = fit_section(&s, 1, b, err);
    cr_set_free(&s);
    if (rc || dev)
        return rc;
    sw_buf_puts(
        b,
        "\n### What the H100 operators say\n\n"
        "* **Memory-bound operators run at the SXM card's bandwidth.** The large ReLUs, "
        "residual additions and ReLU backwards (over 50 us) move their bytes at about 3 TB/s, "
        "90% of the HBM3's 3.35 TB/s, where the model assumes half of the PCIe card's 2 TB/s: "
        "the built-in model makes elementwise operators three times too slow. The fitted "
        "bandwidth efficiency is higher still because the fit, in log space, weighs the many "
        "small operators whose tensors stay in the 50 MB L2 cache.\n"
        "* **Convolutions: cuDNN's choice of algorithm.** PyTorch ran with "
        "`cudnn.benchmark` off, so cuDNN's heuristics pick each layer's algorithm: VGG-16's "
        "256-channel 3x3 layers at 56x56 take 8.7 ms forward, the 512-channel ones at 28x28 "
        "(the same FLOPs) 2.2 ms. 1x1 convolutions' backward takes 3.8 times their forward "
        "(the model: twice the FLOPs at the same efficiency), hence the conv backward "
        "deficit that the fitted conv1x1 figure cannot remove without spoiling the forward.\n"
        "* **Batch norm** is over-predicted most on small maps (Inception-v3's and "
        "DenseNet-121's 8x8 and 7x7 layers, median 2.1x) where the 3 us per kernel "
        "dominates, and by 1.2x on large ones.\n"
        "* **The fixed cost per kernel** fitted here is GPU time (Kineto times kernels, "
        "not launches): the 1-element `num_batches_tracked += 1` kernels take 1.3 us. The "
        "model's 3 us also stands for the CPU-side dispatch that keeps a GPU waiting in a "
        "real iteration, which these operator times do not contain.\n"
        "* **GEMM** is the CNNs' classifiers (12 products, 64 rows each), too few and too "
        "narrow to fit a figure that carries to other models (see the held-out column), and "
        "the LSTM's 4: its cuDNN recurrent layers forward and backward, timed as every "
        "token through each weight matrix (the model does not see the steps' sequential "
        "dependence), and its 8192-row classifier. The transformer generator's products are "
        "not checked by these traces.\n");
    return b->oom ? sw_fail(err, SW_ENOMEM, "out of memory") : 0;
}

static int files_section(const char *const *files, int nfiles, const dev_spec *dev, sw_buf *b,
                         sw_err *err)
{
    cr_set s;
    cr_set_init(&s);
    int rc = 0;
    for (int i = 0; i < nfiles && !rc; i++) {
        graph_profile *g = NULL;
        if ((rc = profile_read_file(files[i], &g, err)) != 0)
            break;
        const char *base = strrchr(files[i], '/');
        rc = cr_add_profile(&s, g, base ? base + 1 : files[i], dev, err);
        graph_free(g);
    }
    if (rc) {
        cr_set_free(&s);
        return rc;
    }
    sw_buf_puts(b, "\n## Recorded profiles\n\n");
    for (int i = 0; i < s.n_src; i++) {
        const cr_source *x = &s.src[i];
        sw_buf_printf(b, "- `%s`: recorded on %s, timed on `%s` (%.1f TFLOP/s fp32, %.2f TB/s, "
                      "%.0f us per kernel)%s; %d operators with a recorded time, %d without the "
                      "shapes the model needs\n", x->name, x->gpu, x->dev.name,
                      x->dev.peak_flops_fp32 / 1e12, x->dev.mem_bw / 1e12,
                      x->dev.launch_overhead_s * 1e6, x->fp16 ? ", fp16" : "", x->n_timed,
                      x->n_unmodelled);
    }
    sw_buf_puts(b, "\n### Error per operator class, built-in figures\n\n");
    cr_figures bi;
    cr_figures_builtin(NULL, &bi);
    if (class_table(&s, &bi, s.n_src > 1, b)) {
        cr_set_free(&s);
        return sw_fail(err, SW_ENOMEM, "out of memory");
    }
    if (s.n_ops > 0) {
        sw_buf_puts(b, "\n### Efficiency figures fitted to these profiles\n\n");
        rc = fit_section(&s, s.n_src > 1, b, err);
    }
    cr_set_free(&s);
    return rc;
}

int cr_report(const char *data, const char *const *files, int nfiles, const dev_spec *dev,
              sw_buf *b, sw_err *err)
{
    int rc = traces_section(data, dev, b, err);
    if (!rc && nfiles > 0)
        rc = files_section(files, nfiles, dev, b, err);
    if (!rc && b->oom)
        rc = sw_fail(err, SW_ENOMEM, "out of memory");
    return rc;
}
