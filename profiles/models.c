/* models.c: the registry of profile generators. */
#include "models.h"

#include <string.h>

static const model_def *const registry[] = {
    &model_chain,
    &model_random,
    &model_resnet,
    &model_wresnet,
    &model_inception,
    &model_nasnet,
    &model_rnn,
    &model_brnn,
    &model_densenet,
    &model_unet,
    &model_transformer,
    &model_shufflenet,
    &model_gpt,
    &model_vgg,
    &model_decoder,
};

size_t model_count(void) { return SW_ARRAY_LEN(registry); }

const model_def *model_at(size_t i) { return i < model_count() ? registry[i] : NULL; }

const model_def *model_find(const char *name)
{
    for (size_t i = 0; i < model_count(); i++)
        if (name && strcmp(registry[i]->name, name) == 0)
            return registry[i];
    return NULL;
}
