/* test_lifetime.c: graph_lifetimes (when each storage dies under a schedule)
   on a hand-made graph whose answers are worked out in the comments; one
   named test each (tap_run). */
#include "../profiles/graph.h"
#include "tap.h"

/* tensor ids, in the order they are added */
enum { X, W, A, H, B, S, AV, C, D, U, NT };
/* op ids */
enum { OP_P, OP_Q, OP_R, OP_Z, NO };

/* Four ops, a diamond: p makes a and h from x and the parameter w; q and r
   both follow p (q reads a and h, makes b and s; r reads a through the view
   av, makes c); z joins them (reads b, c, w; makes d).
     h is held until r: in the order p q r z its last access (q, 1) comes
       before r (2), so it dies at 2; in p r q z it is read at 2 anyway.
     s is used only by its producer q, so it dies where q runs.
     u (an input) is held until z but no op touches it: it never dies (-1).
     av is a view: only its root a is accessed, so av gets -1. */
static graph_profile *diamond(void)
{
    graph_profile *g = graph_new("lifetime", dev_find("v100"));
    if (!g)
        return NULL;
    static const struct {
        const char *name;
        int64_t bytes;
        int kind, persistent;
    } t[NT] = {{"x", 100, GK_INPUT, 0},     {"w", 10, GK_PARAMETER, 1},
               {"a", 1000, GK_ACTIVATION, 0}, {"h", 200, GK_ACTIVATION, 0},
               {"b", 30, GK_ACTIVATION, 0},  {"s", 4000, GK_ACTIVATION, 0},
               {"av", 1000, GK_ACTIVATION, 0}, {"c", 50, GK_ACTIVATION, 0},
               {"d", 7, GK_ACTIVATION, 0},   {"u", 60000, GK_INPUT, 0}};
    for (int i = 0; i < NT; i++)
        if (graph_add_tensor(g, t[i].name, t[i].bytes, t[i].kind, t[i].persistent) != i) {
            graph_free(g);
            return NULL;
        }
    g->tensors[AV].view_of = A;
    g->tensors[H].held_until = OP_R;
    g->tensors[U].held_until = OP_Z;
    int32_t p_in[] = {X, W}, p_out[] = {A, H};
    int32_t q_in[] = {A, H}, q_out[] = {B, S};
    int32_t r_in[] = {AV}, r_out[] = {C};
    int32_t z_in[] = {B, C, W}, z_out[] = {D};
    if (graph_add_op(g, "p", "f", 1e-3, GP_FORWARD, p_in, 2, p_out, 2, NULL, 0, 0) != OP_P ||
        graph_add_op(g, "q", "f", 1e-3, GP_FORWARD, q_in, 2, q_out, 2, NULL, 0, 5) != OP_Q ||
        graph_add_op(g, "r", "f", 1e-3, GP_FORWARD, r_in, 1, r_out, 1, NULL, 0, 0) != OP_R ||
        graph_add_op(g, "z", "f", 1e-3, GP_FORWARD, z_in, 3, z_out, 1, NULL, 0, 0) != OP_Z) {
        graph_free(g);
        return NULL;
    }
    sw_err e;
    if (graph_finish(g, &e, NULL, NULL)) {
        printf("# graph_finish: %s\n", e.msg);
        graph_free(g);
        return NULL;
    }
    return g;
}

static const char *const tname[NT] = {"x", "w", "a", "h", "b", "s", "av", "c", "d", "u"};

static void is_array(const int32_t *got, const int32_t *want, int n, const char *what,
                     const char *order)
{
    for (int i = 0; i < n; i++)
        IS_INT(got[i], want[i], "%s, %s of %s", order, what, tname[i]);
}

/* The storages' use lists (positions, increasing) as one string per
   storage, for comparing CSR output with a table. */
static void is_uses(const int32_t *off, const int32_t *use, const char *const *want,
                    const char *order)
{
    for (int s = 0; s < NT; s++) {
        char buf[64] = "";
        size_t n = 0;
        for (int32_t k = off[s]; k < off[s + 1] && n + 12 < sizeof buf; k++)
            n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%d", k > off[s] ? " " : "", use[k]);
        OK(!strcmp(buf, want[s]), "%s, uses of %s: '%s' (expected '%s')", order, tname[s], buf,
           want[s]);
    }
}

static void death_at_rule(void)
{
    IS_INT(graph_death_at(3, -1), 3, "death_at: no holder, the last access");
    IS_INT(graph_death_at(3, 5), 5, "death_at: a later holder extends it");
    IS_INT(graph_death_at(3, 2), 3, "death_at: an earlier holder does not shorten it");
    IS_INT(graph_death_at(-1, 4), -1, "death_at: never accessed, held or not: -1");
}

static void counts_to_offsets(void)
{
    int32_t off[5] = {2, 0, 3, 1, 99};
    IS_INT(graph_counts_to_offsets(off, 4), 0, "counts_to_offsets succeeds");
    IS_INT(off[0], 0, "offsets[0]");
    IS_INT(off[1], 2, "offsets[1]");
    IS_INT(off[2], 2, "offsets[2] (an empty run)");
    IS_INT(off[3], 5, "offsets[3]");
    IS_INT(off[4], 6, "offsets[n] is the total (its old value ignored)");
    int32_t big[3] = {INT32_MAX, 1, 0};
    IS_INT(graph_counts_to_offsets(big, 2), SW_EINVAL, "a total past INT32_MAX is refused");
}

static const int32_t order_a[NO] = {OP_P, OP_Q, OP_R, OP_Z};
static const int32_t order_b[NO] = {OP_P, OP_R, OP_Q, OP_Z};
/* order p q r z (positions 0 1 2 3)
                                  x  w  a  h  b  s  av  c  d   u */
static const int32_t last_a[NT] = {0, 3, 2, 1, 3, 1, -1, 3, 3, -1};
static const int32_t death_a[NT] = {0, 3, 2, 2, 3, 1, -1, 3, 3, -1};
static const int32_t dup[NO] = {OP_P, OP_Q, OP_Q, OP_Z};

static void diamond_graph(void)
{
    graph_profile *g = diamond();
    OK(g != NULL, "the diamond graph builds");
    if (!g)
        return;
    OK(graph_is_topological(g, order_a, NULL, NULL) == 1, "p q r z is topological");
    OK(graph_is_topological(g, order_b, NULL, NULL) == 1, "p r q z is topological");
    OK(g->tensors[AV].storage == A, "av is a view of a");
    IS_INT(g->acc_off[NO], 14, "14 storage accesses in all");
    graph_free(g);
}

static void order_pqrz(void)
{
    graph_profile *g = diamond();
    if (!g)
        return;
    int32_t pos[NO], death[NT], last[NT], use_off[NT + 1], use_pos[16];
    IS_INT(graph_lifetimes(g, order_a, pos, death, last, use_off, use_pos), 0, "p q r z: ok");
    const int32_t pos_a[NO] = {0, 1, 2, 3};
    for (int o = 0; o < NO; o++)
        IS_INT(pos[o], pos_a[o], "p q r z: position of op %d", o);
    is_array(last, last_a, NT, "last access", "p q r z");
    is_array(death, death_a, NT, "death", "p q r z");
    OK(death[H] > last[H], "p q r z: h is held past its last use (q at 1) until r (2)");
    const char *const uses_a[NT] = {"0", "0 3", "0 1 2", "0 1", "1 3", "1", "", "2 3", "3", ""};
    is_uses(use_off, use_pos, uses_a, "p q r z");
    IS_INT(use_off[NT], 14, "p q r z: the use lists hold every access");
    graph_free(g);
}

/* order p r q z: r at 1, q at 2 */
static void order_prqz(void)
{
    graph_profile *g = diamond();
    if (!g)
        return;
    int32_t pos[NO], death[NT], last[NT], use_off[NT + 1], use_pos[16];
    IS_INT(graph_lifetimes(g, order_b, pos, death, last, use_off, use_pos), 0, "p r q z: ok");
    const int32_t pos_b[NO] = {0, 2, 1, 3};
    for (int o = 0; o < NO; o++)
        IS_INT(pos[o], pos_b[o], "p r q z: position of op %d", o);
    const int32_t last_b[NT] = {0, 3, 2, 2, 3, 2, -1, 3, 3, -1};
    const int32_t death_b[NT] = {0, 3, 2, 2, 3, 2, -1, 3, 3, -1};
    is_array(last, last_b, NT, "last access", "p r q z");
    is_array(death, death_b, NT, "death", "p r q z");
    OK(death[H] == last[H], "p r q z: h's last use (q at 2) already follows r (1)");
    const char *const uses_b[NT] = {"0", "0 3", "0 1 2", "0 2", "2 3", "2", "", "1 3", "3", ""};
    is_uses(use_off, use_pos, uses_b, "p r q z");
    graph_free(g);
}

/* every output is optional but pos; each alone agrees with the full call */
static void outputs_optional(void)
{
    graph_profile *g = diamond();
    if (!g)
        return;
    int32_t pos[NO], death2[NT], last2[NT], off2[NT + 1];
    IS_INT(graph_lifetimes(g, order_a, pos, death2, NULL, NULL, NULL), 0, "deaths alone");
    is_array(death2, death_a, NT, "death (alone)", "p q r z");
    IS_INT(graph_lifetimes(g, order_a, pos, NULL, last2, NULL, NULL), 0, "last accesses alone");
    is_array(last2, last_a, NT, "last access (alone)", "p q r z");
    IS_INT(graph_lifetimes(g, order_b, pos, NULL, NULL, off2, NULL), 0, "use offsets alone");
    const int32_t off_want[NT + 1] = {0, 1, 3, 6, 8, 10, 11, 11, 13, 14, 14};
    int same = 1;
    for (int s = 0; s <= NT; s++)
        same &= off2[s] == off_want[s];
    OK(same, "use offsets alone: x1 w2 a3 h2 b2 s1 av0 c2 d1 u0");
    graph_free(g);
}

/* graph_lifetimes_again with the offsets of one order gives what
   graph_lifetimes gives for each of the 24 orders, and refuses what it
   refuses */
static void again(void)
{
    graph_profile *g = diamond();
    if (!g)
        return;
    int32_t pos[NO], death[NT], off[NT + 1], use[32], fill[NT];
    int32_t pos2[NO], death2[NT], use2[32];
    const int32_t first[NO] = {OP_P, OP_Q, OP_R, OP_Z};
    IS_INT(graph_lifetimes(g, first, pos, death, NULL, off, use), 0, "offsets from p q r z");
    int orders = 0, same = 1;
    for (int a = 0; a < NO; a++)
        for (int b = 0; b < NO; b++)
            for (int c = 0; c < NO; c++) {
                int d = 6 - a - b - c;
                if (a == b || a == c || b == c || d < 0 || d >= NO || d == a || d == b || d == c)
                    continue;
                const int32_t ord[NO] = {a, b, c, d};
                int32_t off1[NT + 1];
                if (graph_lifetimes(g, ord, pos, death, NULL, off1, use) ||
                    graph_lifetimes_again(g, ord, pos2, death2, off, use2, fill)) {
                    same = 0;
                    continue;
                }
                orders++;
                for (int i = 0; i < NO; i++)
                    same &= pos[i] == pos2[i];
                for (int s = 0; s < NT; s++)
                    same &= death[s] == death2[s] && off1[s] == off[s];
                for (int k = 0; k < off[NT]; k++)
                    same &= use[k] == use2[k];
            }
    IS_INT(orders, 24, "every order of the four ops");
    OK(same, "positions, deaths and use lists as graph_lifetimes gives them");
    IS_INT(graph_lifetimes_again(g, dup, pos2, death2, off, use2, fill), SW_EINVAL,
           "an op twice is refused");
    graph_free(g);
}

static void not_a_permutation(void)
{
    graph_profile *g = diamond();
    if (!g)
        return;
    int32_t pos[NO], death[NT];
    const int32_t out_of_range[NO] = {OP_P, OP_Q, OP_R, NO};
    IS_INT(graph_lifetimes(g, dup, pos, death, NULL, NULL, NULL), SW_EINVAL,
           "an op twice is refused");
    IS_INT(graph_lifetimes(g, out_of_range, pos, death, NULL, NULL, NULL), SW_EINVAL,
           "an op id out of range is refused");
    graph_free(g);
}

/* peak memory follows the deaths: w (10) resident throughout; workspace 5.
   p q r z: after p, x dies (1210); q adds b and s: 5240, the peak; s
   dies at 1, a at 2, h (held) at 2.
   p r q z: r adds c (1260); q adds b and s: 5290, the peak. */
static void peak_memory(void)
{
    graph_profile *g = diamond();
    if (!g)
        return;
    IS_INT(graph_peak_memory(g, order_a), 5240 + 5, "peak memory, p q r z");
    IS_INT(graph_peak_memory(g, order_b), 5290 + 5, "peak memory, p r q z");
    IS_INT(graph_peak_memory(g, dup), -1, "peak memory of a non-permutation: -1");
    graph_free(g);
}

/* a holder after the last use moves the death; nothing else changes */
static void held_until(void)
{
    graph_profile *g = diamond();
    if (!g)
        return;
    int32_t pos[NO], death[NT];
    g->tensors[H].held_until = OP_Z;
    IS_INT(graph_lifetimes(g, order_a, pos, death, NULL, NULL, NULL), 0, "h held until z");
    IS_INT(death[H], 3, "h held until z dies at 3 in p q r z");
    IS_INT(death[A], 2, "the others are unchanged (a)");
    graph_free(g);
}

static const tap_test tests[] = {
    {"death_at_rule", death_at_rule},
    {"counts_to_offsets", counts_to_offsets},
    {"diamond_graph", diamond_graph},
    {"order_pqrz", order_pqrz},
    {"order_prqz", order_prqz},
    {"outputs_optional", outputs_optional},
    {"not_a_permutation", not_a_permutation},
    {"again", again},
    {"peak_memory", peak_memory},
    {"held_until", held_until},
};

int main(int argc, char **argv) { return tap_run(tests, SW_ARRAY_LEN(tests), argc, argv); }
