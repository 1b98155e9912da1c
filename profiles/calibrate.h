/* calibrate.h: reports that compare the generators and their cost model with
   published and recorded figures: the SwapAdvisor paper's Table 1
   (docs/table1.md) and the recorded DTR and PipeDream data
   (docs/calibration.md). `swapsim table1` and `swapsim calibrate` print them. */
#ifndef CALIBRATE_H
#define CALIBRATE_H

#include "../common/sw.h"
#include "graph.h"

/* Generate model NAME with "key=value" options on built-in device dev_name.
   Caller frees *out. Errors name the model or option. */
int cal_generate(const char *model, const char *const *kv, int nkv, const char *dev_name,
                 graph_profile **out, sw_err *err);

/* Markdown report of Table 1 (the five paper models at the paper's batch
   sizes) into b. */
int cal_table1_report(sw_buf *b, sw_err *err);

/* Markdown calibration report into b. data is the recorded data directory
   holding pipedream/ and pytorch-traces/ (NULL or missing: those sections
   say the data is absent). */
int cal_calibration_report(const char *data, sw_buf *b, sw_err *err);
/* The same, with the recorded profiles files[0..nfiles) (`swapsim calibrate
   --recorded`) in a section of their own, timed on dev (NULL: each
   profile's device; it also times the H100 traces). */
int cal_calibration_report_with(const char *data, const char *const *files, int nfiles,
                                const dev_spec *dev, sw_buf *b, sw_err *err);

/* One row of the calibration summary, for tests: model name, our figure and
   the recorded one, for compute (s) and peak memory (bytes; 0 if none). */
typedef struct cal_row {
    char model[48];
    char source[16];   /* "dtr" or "pipedream" */
    double ours_s, rec_s;
    double rec_net_s;  /* PipeDream: recorded minus its fixed per-module profiler overhead */
    double ours_mem, rec_mem;
} cal_row;
/* Fill up to max rows (the totals of the report); returns the count or < 0. */
int cal_rows(const char *data, cal_row *rows, int max, sw_err *err);

#endif
