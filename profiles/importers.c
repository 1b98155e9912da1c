/* importers.c: the registry of importers. */
#include "importers.h"

#include <string.h>

static const importer *const registry[] = {
    &importer_pipedream,
    &importer_pytorch,
    &importer_dtr,
};

size_t importer_count(void)
{
    size_t n = 0;
    for (size_t i = 0; i < SW_ARRAY_LEN(registry); i++)
        n += registry[i] != NULL;
    return n;
}

const importer *importer_at(size_t i)
{
    for (size_t k = 0; k < SW_ARRAY_LEN(registry); k++)
        if (registry[k] && i-- == 0)
            return registry[k];
    return NULL;
}

const importer *importer_find(const char *name)
{
    for (size_t i = 0; i < SW_ARRAY_LEN(registry); i++)
        if (registry[i] && name && strcmp(registry[i]->name, name) == 0)
            return registry[i];
    return NULL;
}
