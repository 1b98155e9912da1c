/* plan_io.h: reading and writing plans as JSON (docs/plan-format.md). A plan
   file embeds its profile, so it is self-contained. */
#ifndef PLAN_IO_H
#define PLAN_IO_H

#include "plan.h"

/* Read a plan (it owns the embedded profile). Errors name file, line,
   column and JSON path. Structural checks only: use plan_verify for safety. */
int plan_read_file(const char *path, plan **out, sw_err *err);
int plan_read_text(const char *text, size_t len, const char *file, plan **out, sw_err *err);
void plan_to_json(const plan *p, sw_buf *b);
int plan_write_file(const plan *p, const char *path, sw_err *err);

#endif
