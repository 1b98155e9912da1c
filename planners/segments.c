/* segments.c: the block rule of the planners that checkpoint or offload by
   block (segments.h). */
#include "segments.h"

#include <string.h>

#include "../profiles/opattr.h"

/* Length of a name's block prefix: up to its first '.', or -1 if none. */
static int prefix_len(const char *name)
{
    const char *dot = name ? strchr(name, '.') : NULL;
    return dot ? (int)(dot - name) : -1;
}

static int same_prefix(const char *a, const char *b)
{
    int la = prefix_len(a), lb = prefix_len(b);
    return la >= 0 && la == lb && !strncmp(a, b, (size_t)la);
}

static int32_t fwd_op_of(const graph_op *op)
{
    for (int32_t i = 0; i < op->n_attr; i++)
        if (!strcmp(op->attr[i].key, OA_FWD_OP))
            return (int32_t)op->attr[i].value;
    return -1;
}

int32_t seg_blocks(const graph_profile *g, int32_t *block)
{
    int32_t n = 0, prev = -1;
    int32_t *first = sw_malloc(((size_t)g->n_ops + 1) * sizeof *first); /* per block: an op */
    if (!first)
        return SW_ENOMEM;
    for (int32_t o = 0; o < g->n_ops; o++)
        block[o] = -1;
    for (int32_t i = 0; i < g->n_ops; i++) {
        int32_t o = g->order[i];
        if (g->ops[o].phase != GP_FORWARD)
            continue;
        if (prev < 0 || !same_prefix(g->ops[prev].name, g->ops[o].name))
            first[n++] = o;
        block[o] = n - 1;
        prev = o;
    }
    for (int32_t o = 0; o < g->n_ops; o++) {
        if (g->ops[o].phase != GP_BACKWARD)
            continue;
        int32_t f = fwd_op_of(&g->ops[o]);
        if (f >= 0 && f < g->n_ops && g->ops[f].phase == GP_FORWARD) {
            block[o] = block[f];
            continue;
        }
        for (int32_t b = n - 1; b >= 0; b--)
            if (same_prefix(g->ops[first[b]].name, g->ops[o].name)) {
                block[o] = b;
                break;
            }
    }
    sw_free(first);
    return n;
}
