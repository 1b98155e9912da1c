/* test_api.c: the JSON C API of libswapsim (api/swapsim_api.h) called
   directly (the Python package's calls, here under the sanitizers too):
   generate, stats, run (fits and does not), sweep with --fit, the largest
   batch, and errors as NULL with a one-line message. */
#include <stdio.h>
#include <string.h>

#include "../api/swapsim_api.h"
#include "../common/json.h"
#include "tap.h"

static const json_value *parse(json_doc *d, const char *text)
{
    const json_value *v = NULL;
    sw_err e;
    if (!text || json_parse(d, text, strlen(text), "api", 1, &v, &e))
        return NULL;
    return v;
}

static double num(const json_value *o, const char *key)
{
    const json_value *v = o ? json_get(o, key) : NULL;
    return v && v->type == JSON_NUMBER ? v->u.num.d : -1;
}

static int is_true(const json_value *o, const char *key)
{
    const json_value *v = o ? json_get(o, key) : NULL;
    return v && v->type == JSON_TRUE;
}

static void test_model_stats_run(void)
{
    char *err = NULL;
    IS_INT(swapsim_api_version(), SWAPSIM_API_VERSION, "the version");
    char *prof = swapsim_model("resnet", "{\"depth\": 18, \"batch\": 8}", &err);
    OK(prof != NULL, "a generated profile (%s)", err ? err : "ok");
    char *st = swapsim_stats(prof, &err);
    json_doc *d = json_doc_new();
    const json_value *v = parse(d, st);
    OK(num(v, "peak_memory_bytes") > 0 && num(v, "total_tensor_bytes") > num(v, "peak_memory_bytes"),
       "stats: the ideal peak below all tensors");
    IS_INT((long long)num(v, "batch"), 8, "stats: the batch given");
    char *r = swapsim_run(prof, "{\"planner\": \"dtr\", \"memory\": \"1.0x\"}", &err);
    json_doc *d2 = json_doc_new();
    const json_value *rv = parse(d2, r);
    OK(is_true(rv, "fits") && num(rv, "normalized_throughput") > 0.5, "dtr at 1x fits (%.3f)",
       num(rv, "normalized_throughput"));
    char *nf = swapsim_run(prof, "{\"planner\": \"none\", \"memory\": \"0.5x\"}", &err);
    json_doc *d3 = json_doc_new();
    const json_value *nv = parse(d3, nf);
    OK(nv && !is_true(nv, "fits") && json_get(nv, "message"), "none at 0.5x: fits false, why");
    err = NULL;
    char *bad = swapsim_run(prof, "{\"planner\": \"nope\"}", &err);
    OK(!bad && err && strstr(err, "unknown planner 'nope'") && !strchr(err, '\n'),
       "an unknown planner: NULL and one line: %s", err ? err : "(none)");
    swapsim_free(err);
    err = NULL;
    OK(!swapsim_model("nope", NULL, &err) && err, "an unknown model: NULL and a message");
    swapsim_free(err);
    err = NULL;
    OK(!swapsim_profile_load("/nonexistent/p.json", &err) && err && strstr(err, "/nonexistent"),
       "a missing file: NULL, naming it");
    swapsim_free(err);
    err = NULL;
    OK(!swapsim_model("resnet", "{\"depth\": [1]}", &err) && err, "a bad option: NULL");
    swapsim_free(err);
    json_doc_free(d);
    json_doc_free(d2);
    json_doc_free(d3);
    swapsim_free(st);
    swapsim_free(r);
    swapsim_free(nf);
    swapsim_free(prof);
    swapsim_free(NULL);
}

static void test_sweep_fit_batch(void)
{
    char *err = NULL;
    char *prof = swapsim_model("resnet", "{\"depth\": 18, \"batch\": 8}", &err);
    char *s = swapsim_sweep(prof, "{\"planners\": [\"odswap\", \"dtr\"], \"memory\": "
                                  "\"0.6x:1.0x:0.2x\", \"fit\": true}", &err);
    OK(s != NULL, "a sweep (%s)", err ? err : "ok");
    json_doc *d = json_doc_new();
    const json_value *v = parse(d, s), *cells = v ? json_get(v, "cells") : NULL;
    OK(cells && cells->n >= 9, "3 budgets x (bound + 2) cells, then the fits' (%u)",
       cells ? cells->n : 0);
    const json_value *fit = v ? json_get(json_get(v, "fit"), "planners") : NULL;
    OK(fit && fit->n == 2 && num(&fit->u.items[0], "smallest_budget_bytes") > 0,
       "odswap's smallest budget found");
    err = NULL;
    char *b = swapsim_sweep(NULL, "{\"planners\": \"odswap,dtr\", \"model\": \"resnet\", "
                                  "\"model_options\": {\"depth\": 18}, \"batch\": \"4:64\", "
                                  "\"memory\": \"256MiB\"}", &err);
    OK(b != NULL, "the largest batch (%s)", err ? err : "ok");
    json_doc *d2 = json_doc_new();
    const json_value *bv = parse(d2, b);
    const json_value *lb = bv ? json_get(json_get(bv, "largest_batch"), "planners") : NULL;
    OK(lb && lb->n == 2, "one per planner");
    for (uint32_t i = 0; lb && i < lb->n; i++) {
        double k = num(&lb->u.items[i], "largest_batch"),
               next = num(&lb->u.items[i], "smallest_not_fitting_batch");
        OK(k >= 4 && next == k + 1, "%s: batch %.0f fits, %.0f does not",
           json_get(&lb->u.items[i], "planner")->u.str, k, next);
    }
    err = NULL;
    OK(!swapsim_sweep(prof, "{\"batch\": \"4:64\", \"model\": \"resnet\"}", &err) && err &&
           strstr(err, "one batch"), "a profile with batch: refused (%s)", err ? err : "");
    swapsim_free(err);
    err = NULL;
    OK(!swapsim_sweep(prof, "{\"memory\": \"0.3x:1GiB:0.1x\"}", &err) && err,
       "a range mixing units: refused");
    swapsim_free(err);
    json_doc_free(d);
    json_doc_free(d2);
    swapsim_free(s);
    swapsim_free(b);
    swapsim_free(prof);
}

static const tap_test tests[] = {
    {"model_stats_run", test_model_stats_run},
    {"sweep_fit_batch", test_sweep_fit_batch},
};

int main(int argc, char **argv) { return tap_run(tests, SW_ARRAY_LEN(tests), argc, argv); }
