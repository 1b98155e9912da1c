/* cmd_model.c: `swapsim model`: generate a profile. */
#include <stdio.h>
#include <string.h>

#include "../profiles/models.h"
#include "../profiles/profile_io.h"
#include "cli.h"

static const char *model_name(size_t i) { return model_at(i)->name; }

int cmd_model(int argc, char **argv)
{
    /* the generator (first registered name among the arguments) tells which
       options are flags: "--inference" alone means "--inference true" */
    const model_def *named = NULL;
    for (int i = 1; i < argc && !named; i++)
        named = model_find(argv[i]);
    const char *name = NULL, *out = NULL;
    cli_device dv;
    cli_list kv;
    memset(&dv, 0, sizeof dv);
    memset(&kv, 0, sizeof kv);
    int rc;
    const cli_pos args[] = {
        {"NAME", "the generator ('swapsim models --verbose' lists the generators and their "
                 "options)", 1, 1, &name},
        {NULL, NULL, 0, 0, NULL}};
    const cli_opt opts[] = {
        {.name = "KEY", .type = PT_STRING, .dst = &kv, .meta = "VALUE", .flags = CLI_ANY,
         .help = "an option of the generator; --some-key is the same as --some_key; a boolean "
                 "option alone, e.g. --inference, means true"},
        {.name = "set", .type = PT_STRING, .dst = &kv, .flags = CLI_MULTI | CLI_KEYVAL,
         .help = "the same as --KEY VALUE"},
        {.name = "device", .type = PT_STRING, .dst = &dv.name, .meta = CLI_DEVICE_META,
         .help = "the device (default v100; a built-in name or a device file) supplies the cost model's figures "
                 "(profiles/costmodel.c)"},
        {.name = "device-set", .type = PT_STRING, .dst = &dv.sets, .flags = CLI_MULTI | CLI_KEYVAL,
         .help = "override one device figure ('swapsim devices --help')"},
        {.name = "output", .short_name = 'o', .type = PT_STRING, .dst = &out, .meta = "FILE",
         .flags = CLI_REQUIRED | CLI_OUTPUT, .help = "the profile; -o - writes to standard output"},
        {.name = NULL}};
    const cli_cmd cmd = {
        .name = "model",
        .about = "Generate a profile with generator NAME.\n\n"
                 "The SwapAdvisor paper's models: wresnet --depth 152 --width 10 --batch 64;\n"
                 "inception --width 4 --batch 64; nasnet --repeat 25 --batch 64;\n"
                 "rnn --layers 8 --hidden 8192 --batch 256; brnn --layers 4 --hidden 8192\n"
                 "--batch 128 ('swapsim table1' compares them with the paper's Table 1).\n",
        .args = args,
        .opts = opts,
        .any_params = named ? named->params : NULL};
    if (cli_parse(&cmd, argc, argv, &rc))
        return rc;
    const model_def *m = model_find(name);
    if (!m)
        return cli_unknown_name("model", name, model_count(), model_name);

    param_set ps;
    dev_spec dev;
    sw_err e;
    char what[96];
    snprintf(what, sizeof what, "model %s", m->name);
    if (cli_kv_prepare(&kv, &dv, m->params, what, &ps, &dev))
        return EXIT_USER;
    graph_profile *g;
    rc = m->generate(&ps, &dev, &g, &e);
    params_free(&ps);
    if (rc)
        return cli_error(&e);
    rc = profile_write_file(g, out, &e);
    graph_free(g);
    return rc ? cli_error(&e) : 0;
}
