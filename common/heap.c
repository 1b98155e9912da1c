/* heap.c: the shared min-heap of int32 ids and Kahn's topological sort on it. */
#include "heap.h"

/* move v up from the empty slot i to its place */
static void sift_up(sw_heap *h, int32_t i, int32_t v)
{
    while (i > 0) {
        int32_t p = (i - 1) / 2;
        if (h->a[p] <= v)
            break;
        h->a[i] = h->a[p];
        i = p;
    }
    h->a[i] = v;
}

/* move v down from the empty slot i (h->n values without it) to its place */
static void sift_down(sw_heap *h, int32_t i, int32_t v)
{
    for (;;) {
        int32_t c = 2 * i + 1;
        if (c >= h->n)
            break;
        if (c + 1 < h->n && h->a[c + 1] < h->a[c])
            c++;
        if (v <= h->a[c])
            break;
        h->a[i] = h->a[c];
        i = c;
    }
    h->a[i] = v;
}

void sw_heap_push(sw_heap *h, int32_t v) { sift_up(h, h->n++, v); }

int32_t sw_heap_pop(sw_heap *h) { return sw_heap_remove_at(h, 0); }

int32_t sw_heap_remove_at(sw_heap *h, int32_t i)
{
    int32_t out = h->a[i], v = h->a[--h->n];
    if (i == h->n)
        return out;
    if (i > 0 && h->a[(i - 1) / 2] > v)
        sift_up(h, i, v);
    else
        sift_down(h, i, v);
    return out;
}

int32_t sw_topo_order(int32_t n, const int32_t *succ_off, const int32_t *succ, int32_t *indeg,
                      int32_t *heap, int32_t *order)
{
    sw_heap h = {heap, 0};
    for (int32_t x = 0; x < n; x++)
        if (!indeg[x])
            sw_heap_push(&h, x);
    int32_t done = 0;
    while (h.n) {
        int32_t x = sw_heap_pop(&h);
        order[done++] = x;
        for (int32_t k = succ_off[x]; k < succ_off[x + 1]; k++)
            if (--indeg[succ[k]] == 0)
                sw_heap_push(&h, succ[k]);
    }
    return done;
}
