/* models.h: the registry of profile generators (`swapsim models`). */
#ifndef MODELS_H
#define MODELS_H

#include "../common/params.h"
#include "graph.h"

typedef struct model_def {
    const char *name;
    const char *summary;
    const param_def *params; /* options, settable as --KEY VALUE */
    /* Generate a finished profile for device dev. Caller frees *out. */
    int (*generate)(const param_set *ps, const dev_spec *dev, graph_profile **out, sw_err *err);
} model_def;

size_t model_count(void);
const model_def *model_at(size_t i);
const model_def *model_find(const char *name);

/* Built-in generators. */
extern const model_def model_chain;
extern const model_def model_random;
extern const model_def model_resnet;
extern const model_def model_wresnet;
extern const model_def model_inception;
extern const model_def model_nasnet;
extern const model_def model_rnn;
extern const model_def model_brnn;
extern const model_def model_gpt;
extern const model_def model_transformer;
extern const model_def model_vgg;
extern const model_def model_shufflenet;
extern const model_def model_unet;
extern const model_def model_densenet;
extern const model_def model_decoder;

#endif
