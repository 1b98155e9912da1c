/* profile_io.h: reading and writing profiles as JSON (docs/profile-format.md). */
#ifndef PROFILE_IO_H
#define PROFILE_IO_H

#include "../common/json.h"
#include "graph.h"

/* Read and finish a profile from a file ("-" for stdin). Errors name the
   file, line, column and JSON path. Caller frees *out with graph_free. */
int profile_read_file(const char *path, graph_profile **out, sw_err *err);
/* Same from memory (file names the input in messages). */
int profile_read_text(const char *text, size_t len, const char *file, graph_profile **out,
                      sw_err *err);
/* Build a profile from an already parsed JSON value (used by the plan
   reader, which embeds the profile). r carries the file and JSON path. */
int profile_from_json(jr *r, const json_value *v, graph_profile **out);

/* Append the profile as JSON to b (indent: 0 compact, 1 one item per line). */
void profile_to_json(const graph_profile *g, sw_buf *b, int indent);
int profile_write_file(const graph_profile *g, const char *path, sw_err *err);

/* Device spec <-> JSON object (a profile's "device": a built-in name, or an
   object whose missing fields default to the built-in of its name). */
void dev_to_json(const dev_spec *d, sw_buf *b);
int dev_from_json(jr *r, const json_value *v, dev_spec *out);

/* A device file (docs/devices.md): one object with dev_to_json's fields,
   optionally "format": "swapsim-device", "version": 1 and "calibration" (an
   object calibrate-device writes; not read). Unknown fields are errors; a
   name that is not a built-in's needs every figure; peaks and memory
   bandwidth must be positive; dev_validate must pass. Errors (SW_EINVAL,
   SW_EIO, SW_ENOMEM) name the file, line, column and JSON path. */
int dev_file_from_json(jr *r, const json_value *v, dev_spec *out);
int dev_read_text(const char *text, size_t len, const char *file, dev_spec *out,
                  sw_err *err);
int dev_read_file(const char *path, dev_spec *out, sw_err *err);
/* What every --device takes: a built-in name (case-insensitive), else a
   device file where arg names a readable file or ends in .json. Unknown:
   SW_ENOTFOUND, the message listing the built-ins. */
int dev_resolve(const char *arg, dev_spec *out, sw_err *err);
/* Append d as a device file, one field a line, with calibration (a JSON
   object's text, or NULL) as its "calibration" field; or write it to path. */
void dev_file_to_json(const dev_spec *d, const char *calibration, sw_buf *b);
int dev_write_file(const dev_spec *d, const char *calibration, const char *path, sw_err *err);

#endif
