/* cmd_import.c: `swapsim import FORMAT FILE... -o PROFILE`. */
#include <stdio.h>
#include <string.h>

#include "../profiles/importers.h"
#include "../profiles/profile_io.h"
#include "cli.h"

static const char *importer_name(size_t i) { return importer_at(i)->name; }

static void import_formats(sw_buf *b)
{
    sw_buf_puts(b, "\nformats:\n");
    if (!importer_count())
        sw_buf_puts(b, "  (none registered yet)\n");
    for (size_t i = 0; i < importer_count(); i++) {
        const importer *im = importer_at(i);
        sw_buf_printf(b, "  %-10s %s FILES: %s\n", im->name, im->summary, im->files);
        params_help(im->params, b, "--");
    }
}

int cmd_import(int argc, char **argv)
{
    /* the format (the first importer name among the arguments) tells which
       options are flags: "--partial" alone means "--partial true" */
    const importer *named = NULL;
    for (int i = 1; i < argc && !named; i++)
        named = importer_find(argv[i]);
    const char *format = NULL, *out = NULL;
    cli_list files, kv;
    cli_device dv;
    memset(&files, 0, sizeof files);
    memset(&kv, 0, sizeof kv);
    memset(&dv, 0, sizeof dv);
    int rc;
    const cli_pos args[] = {{"FORMAT", "the recording's format (below)", 1, 1, &format},
                            {"FILE", "the recorded files (each format says which)", 1,
                             CLI_MANY, &files},
                            {NULL, NULL, 0, 0, NULL}};
    const cli_opt opts[] = {
        {.name = "KEY", .type = PT_STRING, .dst = &kv, .meta = "VALUE", .flags = CLI_ANY,
         .help = "an option of the format (below); a boolean option alone, e.g. --partial, "
                 "means true"},
        {.name = "set", .type = PT_STRING, .dst = &kv, .flags = CLI_MULTI | CLI_KEYVAL,
         .help = "the same as --KEY VALUE"},
        {.name = "device", .type = PT_STRING, .dst = &dv.name, .meta = CLI_DEVICE_META,
         .help = "the GPU the recording was made on when the files do not say: a built-in name "
                 "or a device file"},
        {.name = "device-set", .type = PT_STRING, .dst = &dv.sets, .flags = CLI_MULTI | CLI_KEYVAL,
         .help = "override one device figure ('swapsim devices --help')"},
        {.name = "output", .short_name = 'o', .type = PT_STRING, .dst = &out, .meta = "PROFILE",
         .flags = CLI_REQUIRED | CLI_OUTPUT, .help = "the profile; -o - writes to standard output"},
        {.name = NULL}};
    const cli_cmd cmd = {.name = "import",
                         .about = "Import a profile recorded on a real GPU.\n",
                         .args = args,
                         .opts = opts,
                         .any_params = named ? named->params : NULL,
                         .more = import_formats};
    if (cli_parse(&cmd, argc, argv, &rc))
        return rc;
    const importer *im = importer_find(format);
    if (!im)
        return cli_unknown_name("import format", format, importer_count(), importer_name);
    int nfiles = files.n;

    if (nfiles < im->min_files || nfiles > im->max_files)
        return cli_usage("import", "format %s expects %s", im->name, im->files);
    param_set ps;
    dev_spec dev;
    sw_err e;
    char what[96];
    snprintf(what, sizeof what, "import %s", im->name);
    if (cli_kv_prepare(&kv, &dv, im->params, what, &ps, &dev))
        return EXIT_USER;
    graph_profile *g;
    rc = im->import(files.item, nfiles, &ps, &dev, &g, &e);
    if (rc) {
        params_free(&ps);
        return cli_error(&e);
    }
    /* an importer that took an incomplete recording (--partial) says so first
       in the notes; the user is told, not only the file */
    const char *notes = g->prov.notes;
    if (notes && !strncmp(notes, "partial iteration:", 18))
        fprintf(stderr, "swapsim: warning: %s: %.*s\n", files.item[0], (int)strcspn(notes, ";"),
                notes);
    /* a recording without GPU times (no Kineto trace, a PyTorch without
       Kineto, a recording made on the CPU) would simulate every plan at 100% of
       an ideal of 0 s: say so */
    double total_s = 0;
    for (int32_t i = 0; i < g->n_ops; i++)
        total_s += g->ops[i].time_s;
    if (!(total_s > 0))
        fprintf(stderr, "swapsim: warning: %s: the recording has no GPU times: every operator "
                "takes 0 s, so times and throughput mean nothing%s\n", files.item[0],
                params_find(&ps, "times") >= 0 ? " (--times model fills them from the cost "
                                                 "model)" : "");
    params_free(&ps);
    rc = profile_write_file(g, out, &e);
    graph_free(g);
    return rc ? cli_error(&e) : 0;
}
