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

/* Device spec <-> JSON object. */
void device_to_json(const dev_spec *d, sw_buf *b);
int device_from_json(jr *r, const json_value *v, dev_spec *out);

#endif
