/* imap.c: the sorted-array interval map. */
#include "imap.h"

#include <string.h>

void imap_init(imap *m) { memset(m, 0, sizeof *m); }

void imap_free(imap *m)
{
    sw_free(m->seg);
    memset(m, 0, sizeof *m);
}

void imap_clear(imap *m) { m->n = 0; }

size_t imap_first(const imap *m, int64_t start)
{
    size_t lo = 0, hi = m->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (m->seg[mid].end <= start)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int imap_assign(imap *m, int64_t start, int64_t end, int64_t tag)
{
    if (end <= start)
        return 0;
    size_t i = imap_first(m, start);
    /* segments [i, j) overlap [start, end) */
    size_t j = i;
    while (j < m->n && m->seg[j].start < end)
        j++;
    imap_seg left = {0, 0, 0}, right = {0, 0, 0};
    int has_left = 0, has_right = 0;
    if (i < j && m->seg[i].start < start) {
        left = m->seg[i];
        left.end = start;
        has_left = 1;
    }
    if (i < j && m->seg[j - 1].end > end) {
        right = m->seg[j - 1];
        right.start = end;
        has_right = 1;
    }
    size_t repl = (size_t)has_left + 1 + (size_t)has_right;
    size_t removed = j - i;
    if (repl > removed) {
        if (SW_GROW(m->seg, m->cap, m->n + repl - removed))
            return SW_ENOMEM;
    }
    if (repl != removed)
        memmove(m->seg + i + repl, m->seg + j, (m->n - j) * sizeof *m->seg);
    m->n = m->n + repl - removed;
    size_t k = i;
    if (has_left)
        m->seg[k++] = left;
    m->seg[k].start = start;
    m->seg[k].end = end;
    m->seg[k].tag = tag;
    k++;
    if (has_right)
        m->seg[k] = right;
    return 0;
}
