/* table.h: tables from experiment CSVs: select and filter rows, pivot one
   column into columns, aggregate repeated cells (mean, 95% confidence
   interval with GSL's t distribution), and render as markdown, CSV or a
   gnuplot data file. `swapsim table` and `swapsim report` use it. */
#ifndef TABLE_H
#define TABLE_H

#include "../common/sw.h"

typedef struct csv_data {
    int ncol, nrow;
    char **hdr;   /* ncol names */
    char **cells; /* nrow x ncol strings */
} csv_data;

/* Read a CSV with a header line (quoted fields allowed). Errors name the
   file and line. */
int csv_read(const char *path, csv_data *d, sw_err *err);
void csv_free(csv_data *d);
int csv_col(const csv_data *d, const char *name); /* -1 if absent */
static inline const char *csv_at(const csv_data *d, int r, int c)
{
    return d->cells[(size_t)r * (size_t)d->ncol + (size_t)c];
}

typedef enum { TS_FIRST, TS_MEAN, TS_MEAN_CI, TS_CI95, TS_N, TS_MIN, TS_MAX } table_stat;
typedef enum { TF_MD, TF_CSV, TF_DAT } table_format;

#define TABLE_MAX 12

typedef struct table_spec {
    const char *file;
    const char *rows[TABLE_MAX]; /* row key columns */
    int nrows;
    const char *cols;            /* pivot column (NULL: one value column per `values`) */
    const char *values[TABLE_MAX];
    int nvalues;
    const char *where[TABLE_MAX][2]; /* column = value filters (value may be a|b|c) */
    int nwhere;
    const char *fmt;             /* printf format for numbers (default %.3g) */
    table_stat stat;
    table_format format;
    const char *na;              /* text for a cell with no successful row (default N/A) */
    int ok_only;                 /* only rows with status ok (default 1) */
    double scale;                /* values multiplied by this (default 1) */
    char store[40][256];         /* the option strings the pointers above point into */
    int nstore;
} table_spec;

void table_spec_init(table_spec *t);
/* Parse "key=value" (rows=a,b cols=c value=v where=k:v fmt=%.2f stat=mean
   format=md na=N/A scale=100; a ~ in a where= value stands for a space). */
int table_spec_set(table_spec *t, const char *kv, sw_err *err);
/* 1 when f is text around one printf conversion of a number (%g, %.1f,
   %.0f%%...): what fmt= accepts */
int table_num_format(const char *f);
/* Render the table into b. */
int table_render(const table_spec *t, sw_buf *b, sw_err *err);

/* Expand {{table FILE key=value ...}} directives in a template, reading
   CSV files relative to data_dir. */
int report_expand(const char *template_path, const char *data_dir, sw_buf *out, sw_err *err);

/* Check a template (make docs-check): every bare number of its prose (a
   digit run outside directives, code, link targets and the paper's figures
   written "(paper: ...)" that is not part of a name, a year, a list marker
   or named by the word before it: Figure 6, batch 16) must be in the allow
   list (a file of contexts, one a line, as list=1 writes them: the figures
   still typed in), and every claim= of an {{argmax}}, {{argmin}} or
   {{within}} must hold for its CSV in data_dir (one whose CSV is missing
   is counted as unchecked). Writes one line per problem and a summary to
   out; SW_EINVAL if any. list=1: write the context of every bare number
   instead (an allow list), and check nothing. */
int report_check(const char *template_path, const char *data_dir, const char *allow_path,
                 int list, sw_buf *out, sw_err *err);

#endif
