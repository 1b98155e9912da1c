/* cmd_import.c: `swapsim import FORMAT FILE... -o PROFILE`. */
#include <stdio.h>
#include <string.h>

#include "../profiles/importers.h"
#include "../profiles/profile_io.h"
#include "cli.h"

int cmd_import(int argc, char **argv)
{
    cli_args a = {argc, argv, 1, "import", {0}, 0};
    const char *out = NULL, *v;
    cli_device dv = {0};
    cli_list kv = {{0}, {0}, 0};
    int r;
    /* the format (the first importer name among the arguments) tells which
       options are flags: "--partial" alone means "--partial true" */
    const importer *named = NULL;
    for (int i = 1; i < argc && !named; i++)
        named = importer_find(argv[i]);
    while (a.i < argc) {
        if (cli_flag(&a, "--help")) {
            printf("usage: swapsim import FORMAT FILE... [--KEY VALUE]... [--device NAME]\n"
                   "                     [--device-set KEY=VALUE]... -o PROFILE\n\n"
                   "Import a profile recorded on a real GPU. --device names the GPU the\n"
                   "recording was made on when the files do not say. Formats:\n");
            if (!importer_count())
                printf("  (none registered yet)\n");
            for (size_t i = 0; i < importer_count(); i++) {
                const importer *im = importer_at(i);
                printf("  %-10s %s FILES: %s\n", im->name, im->summary, im->files);
                sw_buf b;
                sw_buf_init(&b);
                params_help(im->params, &b, "--");
                if (b.len)
                    fputs(b.data, stdout);
                sw_buf_free(&b);
            }
            return 0;
        }
        if ((r = cli_optval(&a, "-o", &v)) != 0 || (r = cli_optval(&a, "--output", &v)) != 0) {
            if (r < 0)
                return EXIT_USAGE;
            out = v;
            continue;
        }
        if ((r = cli_device_opt(&a, &dv)) != 0) {
            if (r < 0)
                return EXIT_USAGE;
            continue;
        }
        if ((r = cli_kv_opt(&a, &kv, named ? named->params : NULL)) != 0) {
            if (r < 0)
                return EXIT_USAGE;
            continue;
        }
        if ((r = cli_positional(&a)) != 0) {
            if (r < 0)
                return EXIT_USAGE;
            continue;
        }
        return cli_unknown(&a);
    }
    if (a.npos < 1)
        return cli_usage("import", "expected FORMAT and FILE...");
    if (!out)
        return cli_usage("import", "missing -o PROFILE");
    const importer *im = importer_find(a.pos[0]);
    if (!im) {
        char list[512] = "";
        for (size_t i = 0; i < importer_count(); i++) {
            strncat(list, i ? ", " : "", sizeof list - strlen(list) - 1);
            strncat(list, importer_at(i)->name, sizeof list - strlen(list) - 1);
        }
        return cli_fail(EXIT_USER, "unknown import format '%s' (expected one of: %s)", a.pos[0],
                        list[0] ? list : "none registered");
    }
    int nfiles = a.npos - 1;
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
    int rc = im->import((const char *const *)(a.pos + 1), nfiles, &ps, &dev, &g, &e);
    params_free(&ps);
    if (rc)
        return cli_error(&e);
    /* an importer that took an incomplete recording (--partial) says so first
       in the notes; the user is told, not only the file */
    const char *notes = g->prov.notes;
    if (notes && !strncmp(notes, "partial iteration:", 18))
        fprintf(stderr, "swapsim: warning: %s: %.*s\n", a.pos[1], (int)strcspn(notes, ";"),
                notes);
    rc = profile_write_file(g, out, &e);
    graph_free(g);
    return rc ? cli_error(&e) : 0;
}
