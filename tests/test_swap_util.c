/* test_swap_util.c: the residency runtime the swapping planners and the DTR
   engine share (planners/swap_util.h), step by step on a hand-made profile
   without a builder, every figure worked out by hand; one named test each
   (tap_run). */
#include "../planners/lib/swap_util.h"
#include "tap.h"

/* w (100 B, persistent), x (10 B, an input from the host); f1: w, x -> a
   (1000 B); f2: a -> b (2000 B); f3: b, w -> c (500 B). In the profile's
   order a is last read at position 1, b and c at 2, x at 0. */
enum { W, X, A, B, C };

static graph_profile *chain(void)
{
    graph_profile *g = graph_new("chain", dev_find("v100"));
    graph_add_tensor(g, "w", 100, GK_PARAMETER, 1);
    graph_add_tensor(g, "x", 10, GK_INPUT, 0);
    graph_add_tensor(g, "a", 1000, GK_ACTIVATION, 0);
    graph_add_tensor(g, "b", 2000, GK_ACTIVATION, 0);
    graph_add_tensor(g, "c", 500, GK_ACTIVATION, 0);
    int32_t wx[2] = {W, X}, a = A, b = B, c = C, bw[2] = {B, W};
    graph_add_op(g, "f1", "f", 1e-3, GP_FORWARD, wx, 2, &a, 1, NULL, 0, 0);
    graph_add_op(g, "f2", "f", 1e-3, GP_FORWARD, &a, 1, &b, 1, NULL, 0, 0);
    graph_add_op(g, "f3", "f", 1e-3, GP_FORWARD, bw, 2, &c, 1, NULL, 0, 0);
    sw_err e;
    if (graph_finish(g, &e, NULL, NULL)) {
        printf("# %s\n", e.msg);
        graph_free(g);
        return NULL;
    }
    return g;
}

/* The runtime set up on chain() with w resident, or 0 after a failed check. */
static int start(swu *u, graph_profile **g)
{
    *g = chain();
    OK(*g != NULL, "the hand-made profile finishes");
    if (!*g)
        return 0;
    int rc = swu_init(u, *g, NULL);
    IS_INT(rc, 0, "swu_init");
    if (rc) {
        swu_free(u);
        graph_free(*g);
        return 0;
    }
    uint8_t resident[5] = {1, 0, 0, 0, 0};
    swu_begin(u, NULL, resident, 5000);
    return 1;
}

static void deaths(void)
{
    swu u;
    graph_profile *g;
    if (!start(&u, &g))
        return;
    IS_INT(u.death[W], SWU_NEVER, "a persistent storage never dies");
    IS_INT(u.death[X], 0, "x dies after f1 (position 0)");
    IS_INT(u.death[A], 1, "a dies after f2 (position 1)");
    IS_INT(u.death[B], 2, "b dies after f3");
    IS_INT(u.death[C], 2, "c, never read, dies where it is made");
    IS_INT(u.dth_off[3] - u.dth_off[2], 2, "two storages die at position 2");
    IS_INT(u.dth[u.dth_off[2]], B, "... b first (by id)");
    swu_free(&u);
    graph_free(g);
}

static void begin(void)
{
    swu u;
    graph_profile *g;
    if (!start(&u, &g))
        return;
    IS_INT(u.used, 100, "w alone is resident: 100 B");
    IS_INT(u.peak, 100, "peak 100 B");
    IS_INT(u.limit, 5000, "the limit as given");
    OK(u.res[W] && !u.res[X] && !u.res[A], "only w is resident");
    OK(swu_on_host(&u, X), "x (no producer) is on the host");
    OK(swu_on_host(&u, W), "w, never updated, has a current host copy");
    OK(!swu_on_host(&u, A), "a is not on the host");
    IS_INT(u.head, W, "LRU: w is the oldest");
    swu_free(&u);
    graph_free(g);
}

/* create, the transient peak, drop and release, as the DTR engine runs them */
static void create_drop_release(void)
{
    swu u;
    graph_profile *g;
    if (!start(&u, &g))
        return;
    swu_swap_in(&u, X);
    IS_INT(u.used, 110, "x swapped in: 110 B");
    IS_INT(u.n_in, 1, "one swap-in");
    IS_INT(u.swap_in_bytes, 10, "10 B copied in");
    swu_create(&u, A);
    IS_INT(u.used, 1110, "a created: 1110 B");
    IS_INT(u.peak, 1110, "peak 1110 B");
    OK(u.res[A] && !swu_on_host(&u, A), "a resident, its host copy stale");
    swu_note_transient(&u, 1000);
    IS_INT(u.peak, 2110, "a second copy of a for a moment: peak 2110 B");
    IS_INT(u.used, 1110, "... but not resident: still 1110 B");
    swu_note_transient(&u, 0);
    IS_INT(u.peak, 2110, "a smaller transient leaves the peak");
    swu_drop(&u, A);
    IS_INT(u.used, 110, "a dropped: 110 B");
    OK(!u.res[A], "a no longer resident");
    IS_INT(u.n_drop, 1, "one drop");
    IS_INT(u.n_out + u.swap_out_bytes, 0, "nothing copied out");
    swu_create(&u, A);
    swu_release(&u, A);
    IS_INT(u.used, 110, "a released (its death): 110 B");
    IS_INT(u.n_drop, 1, "a release is no drop");
    IS_INT(u.peak, 2110, "the peak stays");
    IS_INT(u.head, W, "LRU after the churn: w oldest");
    IS_INT(u.tail, X, "... x newest");
    IS_INT(u.next[W], X, "... and nothing between them");
    swu_free(&u);
    graph_free(g);
}

/* evict chooses: a stale host copy is copied out, a current one dropped */
static void evict_copies_or_drops(void)
{
    swu u;
    graph_profile *g;
    if (!start(&u, &g))
        return;
    swu_create(&u, A);
    swu_evict(&u, A);
    IS_INT(u.n_out, 1, "a (stale on the host) is copied out");
    IS_INT(u.swap_out_bytes, 1000, "1000 B out");
    OK(swu_on_host(&u, A), "the host copy is current now");
    swu_swap_in(&u, A);
    swu_evict(&u, A);
    IS_INT(u.n_drop, 1, "evicted again: dropped, no copy");
    IS_INT(u.n_out, 1, "still one copy out");
    IS_INT(u.used, 100, "w alone again");
    swu_free(&u);
    graph_free(g);
}

static const tap_test tests[] = {
    {"deaths", deaths},
    {"begin", begin},
    {"create_drop_release", create_drop_release},
    {"evict_copies_or_drops", evict_copies_or_drops},
};

int main(int argc, char **argv) { return tap_run(tests, SW_ARRAY_LEN(tests), argc, argv); }
