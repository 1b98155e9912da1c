/* canary.h: canary patterns shared by both backends: the key of every
   (storage, version, iteration), host-memory fill/check/poison, and
   messages that decode what a mismatching word holds. */
#ifndef VAL_CANARY_H
#define VAL_CANARY_H

#include "../profiles/graph.h"
#include "backend.h"

/* The contents a storage holds at version `version` (mutations so far in
   the iteration) of iteration `iter`. External storages (no producer:
   parameters, optimizer state, inputs) carry their cumulative update count
   iter * mutations + version, so a stale host copy from an earlier
   iteration differs; produced storages carry (iteration, version). */
uint64_t val_canary_key(const graph_profile *g, int32_t s, int32_t version, int64_t iter);

/* Every word of base[0, bytes) set to key (the tail takes key's first
   bytes). base needs no alignment. */
void val_canary_fill(unsigned char *base, int64_t bytes, uint64_t key);
/* Compare every stride-th 8-byte word, the last word and the tail with
   key (stride 1: all). Returns -1 if all match, else the index of the
   first bad word with its contents (read as the pattern would be) in
   *found. */
int64_t val_canary_check(const unsigned char *base, int64_t bytes, uint64_t key, int64_t stride,
                         uint64_t *found);
/* Write VAL_POISON into the words val_canary_check(stride) looks at. */
void val_canary_poison(unsigned char *base, int64_t bytes, int64_t stride);

/* Describe a word: "tensor 4 'A2' iteration 3 version 1", "poison
   (memory the plan released)", "zeros (a host copy never written)",
   "unrecognised bytes 0x...". */
void val_canary_describe(const graph_profile *g, uint64_t word, char *buf, size_t n);

#endif
