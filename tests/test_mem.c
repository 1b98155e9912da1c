/* test_mem.c: the size-class pool and the address allocators; one named test
   each (tap_run). */
#include "../sim/mem.h"
#include "tap.h"

static const int64_t sizes[] = {1000000, 2000000};

/* SwapAdvisor's example pool: TS = [1MB, 2MB], fine pool "8 x 1MB + 1 x 2MB" */
static void fine_pool(void)
{
    int32_t cls[] = {0, 1}, cnt[] = {8, 1};
    mem_model *m = mem_pool_new(sizes, cls, 2, cnt, 2);
    OK(m != NULL, "pool created");
    if (!m)
        return;
    mem_stats st;
    mem_get_stats(m, &st);
    IS_INT(st.capacity, 10000000, "capacity 8x1MB + 1x2MB");
    plan_place p[10];
    int fails = 0;
    for (int i = 0; i < 8; i++)
        fails += mem_alloc(m, i, 1000000, &p[i]) != 0;
    IS_INT(fails, 0, "eight 1MB objects");
    IS_INT(mem_alloc(m, 8, 1000000, &p[8]), SW_ENOFIT, "ninth 1MB tensor: class full");
    IS_INT(mem_alloc(m, 9, 2000000, &p[9]), 0, "2MB class still has its object");
    IS_INT(p[9].cls, 1, "2MB tensor maps to class 1");
    mem_release(m, &p[3], 1000000);
    IS_INT(mem_alloc(m, 8, 1000000, &p[8]), 0, "released object reused");
    IS_INT(p[8].obj, p[3].obj, "the freed object is the one taken");
    mem_release(m, &p[8], 1000000);
    IS_INT(mem_alloc_at(m, 8, 1000000, &p[3]), 0, "alloc_at a free object");
    IS_INT(mem_alloc_at(m, 8, 1000000, &p[3]), SW_ENOFIT, "alloc_at a used object fails");
    IS_INT(mem_pool_class_of(m, 1500000), 1, "an unlisted size uses the smallest class that fits");
    mem_destroy(m);
}

/* coarse pool "5 objects of 2 MB": both sizes map to class 0 */
static void coarse_pool(void)
{
    int32_t cls2[] = {0, 0}, cnt2[] = {5};
    mem_model *m = mem_pool_new(sizes, cls2, 2, cnt2, 1);
    plan_place p[1];
    mem_stats st;
    IS_INT(mem_alloc(m, 0, 1000000, &p[0]), 0, "1MB tensor in a 2MB object");
    mem_get_stats(m, &st);
    IS_INT(st.reserved, 2000000, "a whole object is reserved");
    IS_INT(st.in_use, 1000000, "in use counts the tensor's bytes");
    mem_destroy(m);
}

/* address allocator: fragmentation is real */
static void address_fragmentation(void)
{
    for (int fit = 0; fit < 2; fit++) {
        mem_model *m = mem_address_new(1000, fit ? MEM_BEST_FIT : MEM_FIRST_FIT, 1);
        mem_stats st;
        plan_place a[4];
        mem_alloc(m, 0, 300, &a[0]);
        mem_alloc(m, 1, 200, &a[1]);
        mem_alloc(m, 2, 300, &a[2]);
        mem_alloc(m, 3, 200, &a[3]);
        mem_release(m, &a[0], 300);
        mem_release(m, &a[2], 300);
        mem_get_stats(m, &st);
        IS_INT(st.free_bytes, 600, "%s: 600 bytes free", fit ? "best-fit" : "first-fit");
        IS_INT(st.largest_free, 300, "%s: in two holes of 300", fit ? "best-fit" : "first-fit");
        plan_place q;
        IS_INT(mem_alloc(m, 4, 400, &q), SW_ENOFIT, "%s: 400 bytes do not fit", fit ? "best-fit" : "first-fit");
        mem_get_stats(m, &st);
        IS_INT(st.frag_failures, 1, "%s: reported as a fragmentation failure", fit ? "best-fit" : "first-fit");
        mem_release(m, &a[1], 200);
        IS_INT(mem_alloc(m, 4, 700, &q), 0, "%s: coalesced holes serve 700 bytes", fit ? "best-fit" : "first-fit");
        IS_INT(q.offset, 0, "%s: at offset 0", fit ? "best-fit" : "first-fit");
        mem_destroy(m);
    }
}

/* first-fit vs best-fit differ */
static void first_fit_vs_best_fit(void)
{
    mem_model *ff = mem_address_new(1000, MEM_FIRST_FIT, 1), *bf = mem_address_new(1000, MEM_BEST_FIT, 1);
    plan_place x[6], y[6];
    int64_t szs[] = {300, 100, 100, 100, 200};
    for (int i = 0; i < 5; i++) {
        mem_alloc(ff, i, szs[i], &x[i]);
        mem_alloc(bf, i, szs[i], &y[i]);
    }
    mem_release(ff, &x[0], 300);
    mem_release(bf, &y[0], 300);
    mem_release(ff, &x[2], 100);
    mem_release(bf, &y[2], 100);
    mem_alloc(ff, 5, 100, &x[5]);
    mem_alloc(bf, 5, 100, &y[5]);
    IS_INT(x[5].offset, 0, "first-fit takes the first hole");
    IS_INT(y[5].offset, 400, "best-fit takes the tightest hole");
    mem_destroy(ff);
    mem_destroy(bf);
}

static void alignment(void)
{
    mem_model *m = mem_address_new(4096, MEM_FIRST_FIT, 256);
    plan_place x[2];
    mem_alloc(m, 0, 10, &x[0]);
    mem_alloc(m, 1, 10, &x[1]);
    IS_INT(x[1].offset, 256, "allocations are aligned");
    mem_destroy(m);
}

static const tap_test tests[] = {
    {"fine_pool", fine_pool},
    {"coarse_pool", coarse_pool},
    {"address_fragmentation", address_fragmentation},
    {"first_fit_vs_best_fit", first_fit_vs_best_fit},
    {"alignment", alignment},
};

int main(int argc, char **argv) { return tap_run(tests, SW_ARRAY_LEN(tests), argc, argv); }
