/* imap.h: an interval map from byte ranges of the device arena to a tag
   (the last residency that occupied them), kept as a sorted array of
   disjoint segments. Used by the plan builder and the verifier to find the
   previous occupants of a placement. */
#ifndef IMAP_H
#define IMAP_H

#include <stdint.h>
#include "../common/sw.h"

typedef struct imap_seg {
    int64_t start, end; /* [start, end) */
    int64_t tag;
} imap_seg;

typedef struct imap {
    imap_seg *seg;
    size_t n, cap;
} imap;

void imap_init(imap *m);
void imap_free(imap *m);
void imap_clear(imap *m);
/* Index of the first segment with end > start (may be n). */
size_t imap_first(const imap *m, int64_t start);
/* Set [start, end) to tag, replacing whatever was there. 0 or SW_ENOMEM. */
int imap_assign(imap *m, int64_t start, int64_t end, int64_t tag);

#endif
