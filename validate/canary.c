/* canary.c: canary keys and host-memory patterns (see canary.h). Words are
   moved with memcpy so any alignment is defined behaviour; the compiler
   turns them into plain loads and stores. */
#include "canary.h"

#include <stdio.h>
#include <string.h>

uint64_t val_canary_key(const graph_profile *g, int32_t s, int32_t version, int64_t iter)
{
    uint32_t state;
    if (g->tensors[s].producer < 0)
        state = (uint32_t)((uint64_t)iter * (uint64_t)g->n_mutations[s] + (uint64_t)version);
    else
        state = (uint32_t)(((uint64_t)iter & 0xFFFFu) << 16 | ((uint32_t)version & 0xFFFFu));
    return val_key_make(s, state);
}

void val_canary_fill(unsigned char *base, int64_t bytes, uint64_t key)
{
    int64_t nw = bytes / 8;
    for (int64_t i = 0; i < nw; i++)
        memcpy(base + 8 * i, &key, 8);
    if (bytes % 8)
        memcpy(base + 8 * nw, &key, (size_t)(bytes % 8));
}

static int word_bad(const unsigned char *p, size_t n, uint64_t key, uint64_t *found)
{
    uint64_t w = key;
    memcpy(&w, p, n); /* a tail keeps key's remaining bytes, so only its own bytes count */
    if (w == key)
        return 0;
    *found = w;
    return 1;
}

int64_t val_canary_check(const unsigned char *base, int64_t bytes, uint64_t key, int64_t stride,
                         uint64_t *found)
{
    int64_t nw = bytes / 8;
    if (stride <= 1) {
        /* the last word first: a copy still filling the region front to back (a missing
           edge) is seen at once, not overtaken by this check */
        if (nw > 0 && word_bad(base + 8 * (nw - 1), 8, key, found)) {
            int64_t i = 0;
            while (i < nw - 1 && !word_bad(base + 8 * i, 8, key, found))
                i++;
            if (i == nw - 1)
                word_bad(base + 8 * i, 8, key, found);
            return i;
        }
        /* the common case, kept branch-light so it vectorises */
        int64_t i = 0;
        for (; i + 8 <= nw; i += 8) {
            uint64_t acc = 0, w;
            for (int j = 0; j < 8; j++) {
                memcpy(&w, base + 8 * (i + j), 8);
                acc |= w ^ key;
            }
            if (acc)
                break;
        }
        for (; i < nw; i++)
            if (word_bad(base + 8 * i, 8, key, found))
                return i;
    } else {
        for (int64_t i = 0; i < nw; i += stride)
            if (word_bad(base + 8 * i, 8, key, found))
                return i;
        if (nw > 0 && word_bad(base + 8 * (nw - 1), 8, key, found))
            return nw - 1;
    }
    if (bytes % 8 && word_bad(base + 8 * nw, (size_t)(bytes % 8), key, found))
        return nw;
    return -1;
}

void val_canary_poison(unsigned char *base, int64_t bytes, int64_t stride)
{
    const uint64_t p = VAL_POISON;
    int64_t nw = bytes / 8;
    if (stride < 1)
        stride = 1;
    for (int64_t i = 0; i < nw; i += stride)
        memcpy(base + 8 * i, &p, 8);
    if (nw > 0)
        memcpy(base + 8 * (nw - 1), &p, 8);
    if (bytes % 8)
        memcpy(base + 8 * nw, &p, (size_t)(bytes % 8));
}

static uint64_t rotr8(uint64_t w, int bytes)
{
    int r = 8 * bytes;
    return r ? (w >> r) | (w << (64 - r)) : w;
}

void val_canary_describe(const graph_profile *g, uint64_t w, char *buf, size_t n)
{
    if (w == VAL_POISON) {
        snprintf(buf, n, "poison (memory the plan released)");
        return;
    }
    if (w == 0) {
        snprintf(buf, n, "zeros (a host copy never written)");
        return;
    }
    /* a pattern laid from another region start is a byte rotation of its key */
    for (int r = 0; r < 8; r++) {
        uint64_t k = rotr8(w, r);
        if ((k >> 56) != VAL_KEY_TAG)
            continue;
        int64_t s = (int64_t)((k >> 32) & 0xFFFFFFu) - 1;
        if (s < 0 || s >= g->n_tensors)
            continue;
        uint32_t st = (uint32_t)k;
        const char *mis = r ? " (at another alignment)" : "";
        if (g->tensors[s].producer < 0) {
            if (g->n_mutations[s])
                snprintf(buf, n, "tensor %lld '%s' after %u updates%s", (long long)s,
                         g->tensors[s].name, st, mis);
            else
                snprintf(buf, n, "tensor %lld '%s'%s", (long long)s, g->tensors[s].name, mis);
        } else {
            snprintf(buf, n, "tensor %lld '%s' iteration %u version %u%s", (long long)s,
                     g->tensors[s].name, st >> 16, st & 0xFFFFu, mis);
        }
        return;
    }
    snprintf(buf, n, "unrecognised bytes 0x%016llx", (unsigned long long)w);
}
