/* mem.c: the size-class pool and the first-fit / best-fit address allocator. */
#include "mem.h"

#include <assert.h>
#include <stdio.h>
#include <string.h>

int mem_alloc(mem_model *m, int32_t tensor, int64_t bytes, plan_place *out)
{
    assert(m && m->methods && bytes >= 0);
    return m->methods->alloc(m, tensor, bytes, out);
}

int mem_alloc_at(mem_model *m, int32_t tensor, int64_t bytes, const plan_place *want)
{
    assert(m && want);
    if (!m->methods->alloc_at)
        return SW_ENOFIT;
    return m->methods->alloc_at(m, tensor, bytes, want);
}

void mem_release(mem_model *m, const plan_place *pl, int64_t bytes)
{
    assert(m && pl);
    m->methods->release(m, pl, bytes);
}

void mem_reset(mem_model *m) { m->methods->reset(m); }

void mem_get_stats(const mem_model *m, mem_stats *st)
{
    memset(st, 0, sizeof *st);
    m->methods->stats(m, st);
}

int mem_describe(const mem_model *m, plan *p) { return m->methods->describe(m, p); }

void mem_destroy(mem_model *m)
{
    if (m)
        m->methods->destroy(m);
}

/* ---------------- size-class pool ---------------- */

typedef struct pool {
    mem_model base;
    int n_sizes, n_classes;
    int64_t *sizes;     /* ascending distinct sizes */
    int32_t *size_cls;  /* class of each size */
    int64_t *obj_size;  /* per class */
    int32_t *count;     /* per class */
    int32_t *obj_base;  /* per class: index of its first object in the flat arrays */
    int32_t *free_top;  /* per class: number of free objects */
    int32_t *head, *tail;/* per class: free objects in release order (oldest first), -1 */
    int32_t *next, *prev;/* flat per object: free-list links */
    uint8_t *is_free;   /* flat per object */
    int64_t in_use, reserved, peak, allocs, failures;
    int32_t total_objects;
} pool;

static int pool_find(const pool *p, int64_t bytes)
{
    int lo = 0, hi = p->n_sizes - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (p->sizes[mid] == bytes)
            return p->size_cls[mid];
        if (p->sizes[mid] < bytes)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    int best = -1;
    for (int c = 0; c < p->n_classes; c++)
        if (p->obj_size[c] >= bytes && (best < 0 || p->obj_size[c] < p->obj_size[best]))
            best = c;
    return best;
}

int mem_pool_class_of(const mem_model *m, int64_t bytes) { return pool_find((const pool *)m, bytes); }

int32_t mem_pool_free_objects(const mem_model *m, int cls)
{
    const pool *p = (const pool *)m;
    return cls >= 0 && cls < p->n_classes ? p->free_top[cls] : 0;
}

/* The free objects of a class form a queue in release order: a request
   takes the object freed longest ago, so a swap-in into it can start as
   early as possible. */
static void list_unlink(pool *p, int c, int32_t obj)
{
    int32_t f = p->obj_base[c] + obj;
    int32_t nx = p->next[f], pv = p->prev[f];
    if (pv >= 0)
        p->next[p->obj_base[c] + pv] = nx;
    else
        p->head[c] = nx;
    if (nx >= 0)
        p->prev[p->obj_base[c] + nx] = pv;
    else
        p->tail[c] = pv;
    p->is_free[f] = 0;
    p->free_top[c]--;
}

static void list_append(pool *p, int c, int32_t obj)
{
    int32_t f = p->obj_base[c] + obj;
    p->next[f] = -1;
    p->prev[f] = p->tail[c];
    if (p->tail[c] >= 0)
        p->next[p->obj_base[c] + p->tail[c]] = obj;
    else
        p->head[c] = obj;
    p->tail[c] = obj;
    p->is_free[f] = 1;
    p->free_top[c]++;
}

/* A zero-byte storage takes no memory: it gets a placement of its own. */
static int zero_place(int32_t tensor, plan_place *out)
{
    out->tensor = tensor;
    out->cls = -1;
    out->obj = -1;
    out->offset = 0;
    return 0;
}

static int pool_alloc(mem_model *m, int32_t tensor, int64_t bytes, plan_place *out)
{
    pool *p = (pool *)m;
    if (bytes == 0)
        return zero_place(tensor, out);
    int c = pool_find(p, bytes);
    if (c < 0 || p->free_top[c] == 0) {
        p->failures++;
        return SW_ENOFIT;
    }
    int32_t obj = p->head[c];
    list_unlink(p, c, obj);
    out->tensor = tensor;
    out->cls = c;
    out->obj = obj;
    out->offset = -1;
    p->in_use += bytes;
    p->reserved += p->obj_size[c];
    if (p->in_use > p->peak)
        p->peak = p->in_use;
    p->allocs++;
    return 0;
}

static int pool_alloc_at(mem_model *m, int32_t tensor, int64_t bytes, const plan_place *want)
{
    pool *p = (pool *)m;
    if (bytes == 0)
        return 0;
    int c = want->cls;
    if (c < 0 || c >= p->n_classes || want->obj < 0 || want->obj >= p->count[c] ||
        p->obj_size[c] < bytes || !p->is_free[p->obj_base[c] + want->obj])
        return SW_ENOFIT;
    list_unlink(p, c, want->obj);
    (void)tensor;
    p->in_use += bytes;
    p->reserved += p->obj_size[c];
    if (p->in_use > p->peak)
        p->peak = p->in_use;
    p->allocs++;
    return 0;
}

static void pool_release(mem_model *m, const plan_place *pl, int64_t bytes)
{
    pool *p = (pool *)m;
    if (bytes == 0)
        return;
    int c = pl->cls;
    assert(c >= 0 && c < p->n_classes && pl->obj >= 0 && pl->obj < p->count[c]);
    assert(!p->is_free[p->obj_base[c] + pl->obj] && "double free of a pool object");
    list_append(p, c, pl->obj);
    p->in_use -= bytes;
    p->reserved -= p->obj_size[c];
}

static void pool_reset(mem_model *m)
{
    pool *p = (pool *)m;
    for (int c = 0; c < p->n_classes; c++) {
        p->head[c] = p->tail[c] = -1;
        p->free_top[c] = 0;
        for (int32_t i = 0; i < p->count[c]; i++)
            list_append(p, c, i); /* lowest object index first */
    }
    p->in_use = p->reserved = p->peak = 0;
    p->allocs = p->failures = 0;
}

static void pool_stats(const mem_model *m, mem_stats *st)
{
    const pool *p = (const pool *)m;
    int64_t cap = 0, largest = 0;
    for (int c = 0; c < p->n_classes; c++) {
        cap += p->obj_size[c] * p->count[c];
        if (p->free_top[c] > 0 && p->obj_size[c] > largest)
            largest = p->obj_size[c];
    }
    st->capacity = cap;
    st->in_use = p->in_use;
    st->reserved = p->reserved;
    st->free_bytes = cap - p->reserved;
    st->largest_free = largest;
    st->high_water = cap;
    st->peak_in_use = p->peak;
    st->allocs = p->allocs;
    st->failures = p->failures;
}

static int pool_describe(const mem_model *m, plan *pl)
{
    const pool *p = (const pool *)m;
    return plan_set_pool(pl, p->obj_size, p->count, p->n_classes);
}

static void pool_destroy(mem_model *m)
{
    pool *p = (pool *)m;
    sw_free(p->sizes);
    sw_free(p->size_cls);
    sw_free(p->obj_size);
    sw_free(p->count);
    sw_free(p->obj_base);
    sw_free(p->free_top);
    sw_free(p->head);
    sw_free(p->tail);
    sw_free(p->next);
    sw_free(p->prev);
    sw_free(p->is_free);
    sw_free(p);
}

static const mem_methods pool_methods = {1,          "pool",      pool_alloc,    pool_alloc_at,
                                         pool_release, pool_reset, pool_stats, pool_describe,
                                         pool_destroy};

mem_model *mem_pool_new(const int64_t *sizes, const int32_t *size_cls, int n_sizes,
                        const int32_t *counts, int n_classes)
{
    if (n_sizes < 0 || n_classes < 0)
        return NULL;
    pool *p = sw_calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->base.methods = &pool_methods;
    p->n_sizes = n_sizes;
    p->n_classes = n_classes;
    p->sizes = sw_malloc(((size_t)n_sizes + 1) * sizeof *p->sizes);
    p->size_cls = sw_malloc(((size_t)n_sizes + 1) * sizeof *p->size_cls);
    p->obj_size = sw_calloc((size_t)n_classes + 1, sizeof *p->obj_size);
    p->count = sw_malloc(((size_t)n_classes + 1) * sizeof *p->count);
    p->obj_base = sw_malloc(((size_t)n_classes + 1) * sizeof *p->obj_base);
    p->free_top = sw_malloc(((size_t)n_classes + 1) * sizeof *p->free_top);
    p->head = sw_malloc(((size_t)n_classes + 1) * sizeof *p->head);
    p->tail = sw_malloc(((size_t)n_classes + 1) * sizeof *p->tail);
    if (!p->sizes || !p->size_cls || !p->obj_size || !p->count || !p->obj_base || !p->free_top ||
        !p->head || !p->tail)
        goto fail;
    for (int i = 0; i < n_sizes; i++) {
        if (size_cls[i] < 0 || size_cls[i] >= n_classes || (i && sizes[i] <= sizes[i - 1]))
            goto fail;
        p->sizes[i] = sizes[i];
        p->size_cls[i] = size_cls[i];
        if (sizes[i] > p->obj_size[size_cls[i]])
            p->obj_size[size_cls[i]] = sizes[i];
    }
    int64_t total = 0;
    for (int c = 0; c < n_classes; c++) {
        if (counts[c] < 0)
            goto fail;
        p->count[c] = counts[c];
        p->obj_base[c] = (int32_t)total;
        total += counts[c];
    }
    if (total > INT32_MAX)
        goto fail;
    p->total_objects = (int32_t)total;
    p->next = sw_malloc(((size_t)total + 1) * sizeof *p->next);
    p->prev = sw_malloc(((size_t)total + 1) * sizeof *p->prev);
    p->is_free = sw_malloc((size_t)total + 1);
    if (!p->next || !p->prev || !p->is_free)
        goto fail;
    pool_reset(&p->base);
    return &p->base;
fail:
    pool_destroy(&p->base);
    return NULL;
}

/* ---------------- address allocator ---------------- */

typedef struct block {
    int64_t off, size;
} block;

typedef struct addr {
    mem_model base;
    int64_t capacity, align;
    mem_fit fit;
    block *free;
    size_t n_free, cap_free;
    int64_t in_use, reserved, peak, high_water, allocs, failures, frag_failures;
} addr;

static int64_t round_up(int64_t x, int64_t a) { return a > 1 ? (x + a - 1) / a * a : x; }

static void addr_take(addr *a, size_t i, int64_t off, int64_t need)
{
    block *b = &a->free[i];
    int64_t end = b->off + b->size;
    if (off == b->off) {
        b->off += need;
        b->size -= need;
        if (b->size == 0) {
            memmove(a->free + i, a->free + i + 1, (a->n_free - i - 1) * sizeof *b);
            a->n_free--;
        }
        return;
    }
    /* split: [b->off, off) stays, [off+need, end) is a new block */
    int64_t tail = end - (off + need);
    b->size = off - b->off;
    if (tail > 0) {
        if (SW_GROW(a->free, a->cap_free, a->n_free + 1))
            return; /* cannot track the tail: leak it (accounted as used) */
        memmove(a->free + i + 2, a->free + i + 1, (a->n_free - i - 1) * sizeof *b);
        a->free[i + 1].off = off + need;
        a->free[i + 1].size = tail;
        a->n_free++;
    }
}

static int addr_alloc(mem_model *m, int32_t tensor, int64_t bytes, plan_place *out)
{
    addr *a = (addr *)m;
    if (bytes == 0)
        return zero_place(tensor, out);
    int64_t need = round_up(bytes, a->align);
    size_t pick = a->n_free;
    for (size_t i = 0; i < a->n_free; i++) {
        if (a->free[i].size < need)
            continue;
        if (a->fit == MEM_FIRST_FIT) {
            pick = i;
            break;
        }
        if (pick == a->n_free || a->free[i].size < a->free[pick].size)
            pick = i;
    }
    if (pick == a->n_free) {
        a->failures++;
        if (a->capacity - a->reserved >= need)
            a->frag_failures++;
        return SW_ENOFIT;
    }
    int64_t off = a->free[pick].off;
    addr_take(a, pick, off, need);
    out->tensor = tensor;
    out->cls = -1;
    out->obj = -1;
    out->offset = off;
    a->in_use += bytes;
    a->reserved += need;
    if (a->in_use > a->peak)
        a->peak = a->in_use;
    if (off + need > a->high_water)
        a->high_water = off + need;
    a->allocs++;
    return 0;
}

static int addr_alloc_at(mem_model *m, int32_t tensor, int64_t bytes, const plan_place *want)
{
    addr *a = (addr *)m;
    (void)tensor;
    if (bytes == 0)
        return 0;
    int64_t need = round_up(bytes, a->align), off = want->offset;
    for (size_t i = 0; i < a->n_free; i++) {
        block *b = &a->free[i];
        if (b->off <= off && off + need <= b->off + b->size) {
            addr_take(a, i, off, need);
            a->in_use += bytes;
            a->reserved += need;
            if (a->in_use > a->peak)
                a->peak = a->in_use;
            if (off + need > a->high_water)
                a->high_water = off + need;
            a->allocs++;
            return 0;
        }
        if (b->off > off)
            break;
    }
    return SW_ENOFIT;
}

static void addr_release(mem_model *m, const plan_place *pl, int64_t bytes)
{
    addr *a = (addr *)m;
    if (bytes == 0)
        return;
    int64_t need = round_up(bytes, a->align), off = pl->offset;
    /* binary search for the insertion point */
    size_t lo = 0, hi = a->n_free;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (a->free[mid].off < off)
            lo = mid + 1;
        else
            hi = mid;
    }
    assert((lo == a->n_free || a->free[lo].off >= off + need) && "double free or overlap");
    int merge_prev = lo > 0 && a->free[lo - 1].off + a->free[lo - 1].size == off;
    int merge_next = lo < a->n_free && a->free[lo].off == off + need;
    if (merge_prev && merge_next) {
        a->free[lo - 1].size += need + a->free[lo].size;
        memmove(a->free + lo, a->free + lo + 1, (a->n_free - lo - 1) * sizeof(block));
        a->n_free--;
    } else if (merge_prev) {
        a->free[lo - 1].size += need;
    } else if (merge_next) {
        a->free[lo].off = off;
        a->free[lo].size += need;
    } else {
        if (SW_GROW(a->free, a->cap_free, a->n_free + 1))
            return; /* leaked: accounted as used */
        memmove(a->free + lo + 1, a->free + lo, (a->n_free - lo) * sizeof(block));
        a->free[lo].off = off;
        a->free[lo].size = need;
        a->n_free++;
    }
    a->in_use -= bytes;
    a->reserved -= need;
}

static void addr_reset(mem_model *m)
{
    addr *a = (addr *)m;
    a->n_free = a->capacity > 0 ? 1 : 0;
    if (a->n_free) {
        a->free[0].off = 0;
        a->free[0].size = a->capacity;
    }
    a->in_use = a->reserved = a->peak = a->high_water = 0;
    a->allocs = a->failures = a->frag_failures = 0;
}

static void addr_stats(const mem_model *m, mem_stats *st)
{
    const addr *a = (const addr *)m;
    int64_t largest = 0;
    for (size_t i = 0; i < a->n_free; i++)
        if (a->free[i].size > largest)
            largest = a->free[i].size;
    st->capacity = a->capacity;
    st->in_use = a->in_use;
    st->reserved = a->reserved;
    st->free_bytes = a->capacity - a->reserved;
    st->largest_free = largest;
    st->high_water = a->high_water;
    st->peak_in_use = a->peak;
    st->allocs = a->allocs;
    st->failures = a->failures;
    st->frag_failures = a->frag_failures;
}

static int addr_describe(const mem_model *m, plan *p)
{
    const addr *a = (const addr *)m;
    sw_free(p->classes);
    p->classes = NULL;
    p->n_classes = 0;
    p->mem_kind = MEM_ADDRESS;
    p->capacity = a->capacity;
    snprintf(p->policy, sizeof p->policy, "%s",
             a->fit == MEM_FIRST_FIT ? "first-fit" : a->fit == MEM_OFFLINE ? "offline" : "best-fit");
    return 0;
}

static void addr_destroy(mem_model *m)
{
    addr *a = (addr *)m;
    sw_free(a->free);
    sw_free(a);
}

static const mem_methods addr_methods = {1,           "address",   addr_alloc,   addr_alloc_at,
                                         addr_release, addr_reset, addr_stats, addr_describe,
                                         addr_destroy};

mem_model *mem_address_new(int64_t capacity, mem_fit fit, int64_t align)
{
    if (capacity < 0 || align < 1)
        return NULL;
    addr *a = sw_calloc(1, sizeof *a);
    if (!a)
        return NULL;
    a->base.methods = &addr_methods;
    a->capacity = capacity;
    a->fit = fit;
    a->align = align;
    if (SW_GROW(a->free, a->cap_free, 16)) {
        sw_free(a);
        return NULL;
    }
    addr_reset(&a->base);
    return &a->base;
}

int mem_fit_parse(const char *s, mem_fit *out)
{
    if (!strcmp(s, "first-fit"))
        *out = MEM_FIRST_FIT;
    else if (!strcmp(s, "best-fit"))
        *out = MEM_BEST_FIT;
    else if (!strcmp(s, "offline"))
        *out = MEM_OFFLINE;
    else
        return SW_EINVAL;
    return 0;
}

int mem_address_config(const mem_model *m, mem_fit *fit, int64_t *align)
{
    if (!m || m->methods != &addr_methods)
        return SW_EINVAL;
    const addr *a = (const addr *)m;
    *fit = a->fit;
    *align = a->align;
    return 0;
}

int64_t mem_adjacent_free(const mem_model *m, const plan_place *pl, int64_t bytes)
{
    if (!m || m->methods != &addr_methods)
        return 0;
    const addr *a = (const addr *)m;
    int64_t need = round_up(bytes > 0 ? bytes : 1, a->align), off = pl->offset, sum = 0;
    size_t lo = 0, hi = a->n_free;
    while (lo < hi) { /* first free block at or after off */
        size_t mid = (lo + hi) / 2;
        if (a->free[mid].off < off)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo > 0 && a->free[lo - 1].off + a->free[lo - 1].size == off)
        sum += a->free[lo - 1].size;
    if (lo < a->n_free && a->free[lo].off == off + need)
        sum += a->free[lo].size;
    return sum;
}
