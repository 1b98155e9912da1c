/* test_profile.c: the profile model, its JSON reader/writer and generators;
   one named test each (tap_run). */
#include "../profiles/models.h"
#include "../profiles/profile_io.h"
#include "tap.h"

static graph_profile *gen(const char *model, const char *const *kv, int n)
{
    const model_def *m = model_find(model);
    param_set ps;
    params_init(&ps, m->params);
    sw_err e;
    for (int i = 0; i < n; i++)
        if (params_set_kv(&ps, kv[i], &e))
            printf("# %s\n", e.msg);
    graph_profile *g = NULL;
    if (m->generate(&ps, dev_find("v100"), &g, &e))
        printf("# generate: %s\n", e.msg);
    params_free(&ps);
    return g;
}

static int read_text(const char *text, graph_profile **g, sw_err *e)
{
    return profile_read_text(text, strlen(text), "bad.json", g, e);
}

static void expect_error(const char *text, const char *needle, const char *what)
{
    graph_profile *g = NULL;
    sw_err e = {0, ""};
    int rc = read_text(text, &g, &e);
    OK(rc != 0 && g == NULL, "%s is rejected", what);
    IS_STR_HAS(e.msg, needle, "%s: message names the problem", what);
    IS_STR_HAS(e.msg, "bad.json:", "%s: message names the file", what);
    graph_free(g);
}

#define HDR "{\"format\":\"swapsim-profile\",\"version\":1,\"name\":\"t\","

static const char *const chain_kv[] = {"layers=5", "optimizer=adam"};
static const char *const rnd_kv[] = {"ops=60", "seed=7"};

static void round_trips(void)
{
    graph_profile *gs[3] = {gen("chain", chain_kv, 2), gen("random", rnd_kv, 2),
                            gen("chain", (const char *const[]){"inference=true"}, 1)};
    for (int i = 0; i < 3; i++) {
        graph_profile *g = gs[i];
        OK(g && g->finished, "generated profile %d is finished", i);
        sw_buf b;
        sw_buf_init(&b);
        profile_to_json(g, &b, i % 2);
        graph_profile *h = NULL;
        sw_err e;
        int rc = profile_read_text(b.data, b.len, "rt.json", &h, &e);
        OK(rc == 0, "read(write(p)) parses (%s)", rc ? e.msg : "ok");
        char why[128] = "";
        OK(h && graph_equal(g, h, why, sizeof why), "read(write(p)) == p (%s)", why);
        sw_buf b2;
        sw_buf_init(&b2);
        if (h)
            profile_to_json(h, &b2, i % 2);
        OK(b.len == b2.len && memcmp(b.data, b2.data, b.len) == 0, "write is deterministic");
        sw_buf_free(&b);
        sw_buf_free(&b2);
        graph_free(h);
    }
    for (int i = 0; i < 3; i++)
        graph_free(gs[i]);
}

static void chain_structure(void)
{
    graph_profile *c = gen("chain", chain_kv, 2);
    graph_profile *inf = gen("chain", (const char *const[]){"inference=true"}, 1);
    graph_stats st;
    graph_compute_stats(c, &st);
    IS_INT(st.ops_per_phase[GP_FORWARD], 6, "chain-5: 5 layers + loss forward");
    IS_INT(st.ops_per_phase[GP_BACKWARD], 6, "chain-5: 6 backward ops");
    IS_INT(st.ops_per_phase[GP_UPDATE], 5, "chain-5: one update per parameter");
    IS_INT(st.optimizer_bytes, 2 * st.parameter_bytes, "adam keeps two state tensors per parameter");
    OK(graph_is_topological(c, c->order, NULL, NULL) == 1, "default order is topological");
    graph_compute_stats(inf, &st);
    IS_INT(st.ops_per_phase[GP_BACKWARD] + st.ops_per_phase[GP_UPDATE], 0, "inference has no backward");
    graph_free(c);
    graph_free(inf);
}

/* random: deterministic in its seed */
static void random_generator(void)
{
    graph_profile *r1 = gen("random", rnd_kv, 2);
    graph_profile *r2 = gen("random", rnd_kv, 2);
    char why[128];
    OK(graph_equal(r1, r2, why, sizeof why), "random generator is deterministic per seed");
    graph_profile *r3 = gen("random", (const char *const[]){"ops=60", "seed=8"}, 2);
    OK(!graph_equal(r1, r3, why, sizeof why), "another seed gives another graph");
    int joins = 0;
    for (int32_t o = 0; o < r1->n_ops; o++)
        if (r1->ops[o].phase == GP_FORWARD && r1->ops[o].n_in >= 3)
            joins++;
    OK(joins > 0, "random graph has joins (%d ops with 2 activations + parameter or more)", joins);
    graph_free(r1);
    graph_free(r2);
    graph_free(r3);
}

/* a small valid file with views, mutation and unknown fields */
static void views_and_mutation(void)
{
    const char *ok_text = HDR "\"batch\":2,\"device\":\"titanv\",\"whatever\":{\"x\":1},"
        "\"tensors\":[{\"id\":0,\"name\":\"w\",\"bytes\":100,\"kind\":\"parameter\"},"
        "{\"id\":1,\"name\":\"x\",\"bytes\":50,\"kind\":\"input\",\"persistent\":true},"
        "{\"id\":2,\"name\":\"y\",\"bytes\":40,\"kind\":\"activation\",\"unknown\":3},"
        "{\"id\":3,\"name\":\"yv\",\"bytes\":0,\"kind\":\"activation\",\"view_of\":2}],"
        "\"ops\":[{\"id\":0,\"name\":\"f\",\"time_s\":0.001,\"inputs\":[0,1],\"outputs\":[2]},"
        "{\"id\":1,\"name\":\"v\",\"time_s\":0,\"inputs\":[2],\"outputs\":[3]},"
        "{\"id\":2,\"name\":\"upd\",\"time_s\":0.0005,\"phase\":\"update\",\"inputs\":[3],\"mutates\":[0]}]}";
    graph_profile *g = NULL;
    sw_err e;
    graph_stats st;
    int rc = read_text(ok_text, &g, &e);
    OK(rc == 0, "valid profile with views, mutation and unknown fields reads (%s)", rc ? e.msg : "");
    if (g) {
        IS_INT(g->tensors[3].storage, 2, "a view shares its base's storage");
        graph_compute_stats(g, &st);
        IS_INT(st.total_tensor_bytes, 190, "views add 0 bytes");
        IS_INT(g->n_mutations[0], 1, "in-place mutation counted");
        OK(strcmp(g->device.name, "titanv") == 0, "device by name");
        IS_INT(st.peak_memory_bytes, 190, "peak: w, x persistent + y alive through its view");
    }
    graph_free(g);
}

static void bad_input(void)
{
    expect_error(HDR "\"tensors\":[], \"ops\":[]", "unexpected end of input", "truncated JSON");
    expect_error(HDR "\"tensors\":[]}", "missing required field \"ops\"", "a missing required field");
    expect_error(HDR "\"tensors\":[{\"bytes\":-1,\"kind\":\"activation\"}],\"ops\":[]}",
                 "$.tensors[0].bytes", "a negative size");
    expect_error(HDR "\"tensors\":[{\"bytes\":1,\"kind\":\"activation\"}],\"ops\":["
                 "{\"time_s\":-1,\"outputs\":[0]}]}", "$.ops[0].time_s", "a negative time");
    expect_error(HDR "\"tensors\":[{\"bytes\":1,\"kind\":\"activation\"}],\"ops\":["
                 "{\"time_s\":1,\"inputs\":[7],\"outputs\":[0]}]}", "dangling tensor id 7",
                 "a dangling tensor id");
    expect_error(HDR "\"tensors\":[{\"bytes\":1,\"kind\":\"activation\"},{\"bytes\":1,\"kind\":"
                 "\"activation\"}],\"ops\":[{\"time_s\":1,\"inputs\":[1],\"outputs\":[0]},"
                 "{\"time_s\":1,\"inputs\":[0],\"outputs\":[1]}]}", "cyclic graph", "a cyclic graph");
    expect_error(HDR "\"tensors\":[{\"bytes\":0,\"kind\":\"activation\",\"view_of\":9}],"
                 "\"ops\":[{\"time_s\":1,\"outputs\":[0]}]}", "view of a missing tensor 9",
                 "a view of a missing base");
    expect_error(HDR "\"tensors\":[{\"bytes\":1,\"kind\":\"blob\"}],\"ops\":[]}",
                 "unknown tensor kind 'blob'", "an unknown tensor kind");
    expect_error(HDR "\"tensors\":[{\"bytes\":1,\"kind\":\"parameter\"}],\"ops\":["
                 "{\"time_s\":1,\"outputs\":[0]}]}", "persistent", "a produced persistent tensor");
    expect_error(HDR "\"tensors\":\"no\",\"ops\":[]}", "$.tensors: expected an array",
                 "a field of the wrong type");
}

static void missing_file(void)
{
    graph_profile *none = NULL;
    sw_err e;
    int rc = profile_read_file("/nonexistent/x.json", &none, &e);
    OK(rc == SW_EIO, "a missing file is an I/O error");
    IS_STR_HAS(e.msg, "/nonexistent/x.json", "missing file message names it");
}

static const tap_test tests[] = {
    {"round_trips", round_trips},
    {"chain_structure", chain_structure},
    {"random_generator", random_generator},
    {"views_and_mutation", views_and_mutation},
    {"bad_input", bad_input},
    {"missing_file", missing_file},
};

int main(int argc, char **argv) { return tap_run(tests, SW_ARRAY_LEN(tests), argc, argv); }
