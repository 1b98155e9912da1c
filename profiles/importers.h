/* importers.h: the registry of importers of recorded profiles
   (`swapsim import FORMAT FILE... -o PROFILE`). */
#ifndef IMPORTERS_H
#define IMPORTERS_H

#include "../common/params.h"
#include "graph.h"

typedef struct importer {
    const char *name;
    const char *summary;
    const char *files;       /* what FILE... must be, for --help ("LOG", "ET KINETO") */
    int min_files, max_files;
    const param_def *params; /* options, settable as --KEY VALUE */
    /* Import files[0..n) into a finished profile for device dev (the GPU the
       recording was made on, when the files do not say). Errors name the
       file and line or JSON path. Caller frees *out. */
    int (*import)(const char *const *files, int n, const param_set *ps, const dev_spec *dev,
                  graph_profile **out, sw_err *err);
} importer;

size_t importer_count(void);
const importer *importer_at(size_t i);
const importer *importer_find(const char *name);

/* Built-in importers. */
extern const importer importer_pipedream;
extern const importer importer_pytorch;
extern const importer importer_dtr;

#endif
