/* test_heap.c: the shared min-heap (common/heap.h) and the topological sort on it:
   pops in order, removal anywhere, lowest-id-first ties, cycles left with indeg > 0. */
#include "../common/heap.h"
#include "../common/sw.h"
#include "tap.h"

static int is_heap(const sw_heap *h)
{
    for (int32_t i = 1; i < h->n; i++)
        if (h->a[(i - 1) / 2] > h->a[i])
            return 0;
    return 1;
}

static void pops_sorted(void)
{
    int32_t a[64], out[64];
    sw_heap h = {a, 0};
    uint32_t x = 12345;
    for (int i = 0; i < 64; i++) {
        x = x * 1103515245u + 12345u;
        sw_heap_push(&h, (int32_t)((x >> 8) % 50)); /* duplicates included */
    }
    IS_INT(h.n, 64, "64 pushed");
    OK(is_heap(&h), "heap property after pushes");
    int sorted = 1;
    for (int i = 0; i < 64; i++) {
        out[i] = sw_heap_pop(&h);
        if (i && out[i] < out[i - 1])
            sorted = 0;
    }
    OK(sorted, "pops come out in ascending order");
    IS_INT(h.n, 0, "empty after 64 pops");
}

static void remove_anywhere(void)
{
    int32_t a[32];
    sw_heap h = {a, 0};
    for (int32_t v = 31; v >= 0; v--)
        sw_heap_push(&h, v * 3 % 32);
    int ok = 1, seen[32] = {0};
    for (int k = 0; k < 16; k++) {
        int32_t i = (int32_t)((k * 7) % h.n);
        int32_t want = h.a[i];
        int32_t got = sw_heap_remove_at(&h, i);
        if (got != want || !is_heap(&h))
            ok = 0;
        seen[got]++;
    }
    OK(ok, "remove_at returns the element at i and keeps the heap property");
    int32_t prev = -1;
    while (h.n) {
        int32_t v = sw_heap_pop(&h);
        if (v < prev)
            ok = 0;
        prev = v;
        seen[v]++;
    }
    OK(ok, "the rest pops in order");
    int all = 1;
    for (int v = 0; v < 32; v++)
        all &= seen[v] == 1;
    OK(all, "every value came out once");
}

/* The layout reference: planners/swapadvisor.c's ready set picks a heap slot
   at random, so a shared heap must leave the array exactly as its own code
   does (push: sift up; remove slot i: the last value into i, down, then up). */
static void ref_up(int32_t *h, int32_t i)
{
    int32_t x = h[i];
    while (i > 0 && h[(i - 1) / 2] > x) {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = x;
}

static void ref_down(int32_t *h, int32_t n, int32_t i)
{
    int32_t x = h[i];
    for (;;) {
        int32_t l = 2 * i + 1, m = i, hm = x;
        if (l < n && h[l] < hm) {
            m = l;
            hm = h[l];
        }
        if (l + 1 < n && h[l + 1] < hm)
            m = l + 1;
        if (m == i)
            break;
        h[i] = h[m];
        i = m;
    }
    h[i] = x;
}

static void same_layout(void)
{
    int32_t a[256], b[256], nb = 0;
    sw_heap h = {a, 0};
    uint32_t x = 777;
    int same = 1, next = 0;
    for (int step = 0; step < 2000; step++) {
        x = x * 1103515245u + 12345u;
        if (h.n == 0 || (h.n < 200 && (x >> 16) % 3 != 0)) {
            int32_t v = (int32_t)((next++ * 7919) % 100003); /* unique values */
            sw_heap_push(&h, v);
            b[nb++] = v;
            ref_up(b, nb - 1);
        } else {
            int32_t i = (int32_t)((x >> 8) % (uint32_t)h.n);
            int32_t got = sw_heap_remove_at(&h, i), want = b[i];
            if (i != --nb) {
                b[i] = b[nb];
                ref_down(b, nb, i);
                ref_up(b, i);
            }
            same &= got == want;
        }
        same &= h.n == nb;
        for (int32_t k = 0; k < nb && same; k++)
            same &= a[k] == b[k];
    }
    OK(same, "pushes and removals leave the array as swapadvisor's heap code does (2000 steps)");
}

/* 0 -> 3, 1 -> 3, 2 -> 0, 3 -> 4: ready {1, 2} first; 1 before 2 (lowest id) */
static void topo_ties(void)
{
    int32_t succ_off[] = {0, 1, 2, 3, 4, 4}, succ[] = {3, 3, 0, 4};
    int32_t indeg[] = {1, 0, 0, 2, 1}, heap[5], order[5];
    int32_t n = sw_topo_order(5, succ_off, succ, indeg, heap, order);
    IS_INT(n, 5, "all five ordered");
    int32_t want[] = {1, 2, 0, 3, 4};
    int same = 1;
    for (int i = 0; i < 5; i++)
        same &= order[i] == want[i];
    OK(same, "order 1 2 0 3 4 (lowest ready id first)");
}

/* 0 -> 1 -> 2 -> 1 (a cycle through 1 and 2), 0 -> 3 */
static void topo_cycle(void)
{
    int32_t succ_off[] = {0, 2, 3, 4, 4}, succ[] = {1, 3, 2, 1};
    int32_t indeg[] = {0, 2, 1, 1}, heap[4], order[4];
    int32_t n = sw_topo_order(4, succ_off, succ, indeg, heap, order);
    IS_INT(n, 2, "two ordered before the cycle blocks");
    OK(order[0] == 0 && order[1] == 3, "0 then 3");
    OK(indeg[1] > 0 && indeg[2] > 0 && indeg[0] == 0 && indeg[3] == 0,
       "the cycle's nodes keep indeg > 0");
}

static const tap_test tests[] = {
    {"pops_sorted", pops_sorted},
    {"remove_anywhere", remove_anywhere},
    {"same_layout", same_layout},
    {"topo_ties", topo_ties},
    {"topo_cycle", topo_cycle},
};

int main(int argc, char **argv) { return tap_run(tests, SW_ARRAY_LEN(tests), argc, argv); }
