/* cmd_planners.c: `swapsim planners` and `swapsim models`: the planners'
   and the profile generators' registries, with their options. */
#include <stdio.h>
#include <string.h>

#include "../planners/planner.h"
#include "../profiles/models.h"
#include "cli.h"

/* One entry of `planners --json` or `models --json`: name, summary and the
   declared options (key, type, default, help, choices, bounds). */
static void entry_json(const char *name, const char *summary, const param_def *defs, sw_buf *b)
{
    static const char *const types[] = {"int", "float", "size", "seconds", "bool", "choice",
                                        "string"};
    sw_buf_puts(b, "{\"name\":");
    sw_buf_put_jstr(b, name);
    sw_buf_puts(b, ",\"summary\":");
    sw_buf_put_jstr(b, summary);
    sw_buf_puts(b, ",\"options\":[");
    for (const param_def *d = defs; d && d->key; d++) {
        sw_buf_puts(b, d == defs ? "{\"key\":" : ",{\"key\":");
        sw_buf_put_jstr(b, d->key);
        sw_buf_printf(b, ",\"type\":\"%s\",\"default\":", types[d->type]);
        if (d->def)
            sw_buf_put_jstr(b, d->def);
        else
            sw_buf_puts(b, "null");
        sw_buf_puts(b, ",\"help\":");
        sw_buf_put_jstr(b, d->help ? d->help : "");
        if (d->choices) { /* "a|b|c" as ["a","b","c"] */
            sw_buf_puts(b, ",\"choices\":[");
            for (const char *p = d->choices; *p;) {
                size_t n = strcspn(p, "|");
                char one[128];
                snprintf(one, sizeof one, "%.*s", (int)n, p);
                if (p != d->choices)
                    sw_buf_putc(b, ',');
                sw_buf_put_jstr(b, one);
                p += n + (p[n] == '|');
            }
            sw_buf_putc(b, ']');
        }
        if (d->min < d->max && (d->type == PT_INT || d->type == PT_FLOAT || d->type == PT_SIZE)) {
            sw_buf_puts(b, ",\"min\":");
            sw_buf_put_f64(b, d->min);
            sw_buf_puts(b, ",\"max\":");
            sw_buf_put_f64(b, d->max);
        }
        sw_buf_putc(b, '}');
    }
    sw_buf_puts(b, "]}");
}

/* print b, a JSON array made by the caller, closing it */
static int print_json_array(sw_buf *b)
{
    sw_buf_puts(b, "]\n");
    int oom = b->oom;
    if (!oom)
        fputs(b->data, stdout);
    sw_buf_free(b);
    return oom ? cli_fail(EXIT_USER, "out of memory") : 0;
}

int cmd_planners(int argc, char **argv)
{
    int verbose = 0, json = 0, rc;
    const cli_opt opts[] = {
        {.name = "verbose", .short_name = 'v', .type = PT_BOOL, .dst = &verbose,
         .help = "also list each planner's hyperparameters with defaults; set them with "
                 "'swapsim plan ... --set KEY=VALUE'"},
        {.name = "json", .type = PT_BOOL, .dst = &json,
         .help = "print a JSON array: each planner's name, summary and hyperparameters (key, "
                 "type, default, help, choices, min, max)"},
        {.name = NULL}};
    const cli_cmd cmd = {.name = "planners", .about = "List planners.\n", .opts = opts};
    if (cli_parse(&cmd, argc, argv, &rc))
        return rc;
    if (json) {
        sw_buf b;
        sw_buf_init(&b);
        sw_buf_putc(&b, '[');
        for (size_t i = 0; i < planner_count(); i++) {
            const planner *p = planner_at(i);
            if (i)
                sw_buf_putc(&b, ',');
            entry_json(p->name, p->summary, p->params, &b);
        }
        return print_json_array(&b);
    }
    for (size_t i = 0; i < planner_count(); i++) {
        const planner *p = planner_at(i);
        printf("%-16s %s\n", p->name, p->summary);
        if (verbose) {
            sw_buf b;
            sw_buf_init(&b);
            params_help(p->params, &b, "");
            if (b.len)
                fputs(b.data, stdout);
            else
                printf("    (no hyperparameters)\n");
            sw_buf_free(&b);
        }
    }
    return 0;
}

int cmd_models(int argc, char **argv)
{
    int verbose = 0, json = 0, rc;
    const cli_opt opts[] = {
        {.name = "verbose", .short_name = 'v', .type = PT_BOOL, .dst = &verbose,
         .help = "also list each one's options, given to 'swapsim model NAME' as --KEY VALUE"},
        {.name = "json", .type = PT_BOOL, .dst = &json,
         .help = "print a JSON array: each generator's name, summary and options (key, type, "
                 "default, help, choices, min, max)"},
        {.name = NULL}};
    const cli_cmd cmd = {.name = "models", .about = "List profile generators.\n", .opts = opts};
    if (cli_parse(&cmd, argc, argv, &rc))
        return rc;
    if (json) {
        sw_buf b;
        sw_buf_init(&b);
        sw_buf_putc(&b, '[');
        for (size_t i = 0; i < model_count(); i++) {
            const model_def *m = model_at(i);
            if (i)
                sw_buf_putc(&b, ',');
            entry_json(m->name, m->summary, m->params, &b);
        }
        return print_json_array(&b);
    }
    for (size_t i = 0; i < model_count(); i++) {
        const model_def *m = model_at(i);
        printf("%-12s %s\n", m->name, m->summary);
        if (verbose) {
            sw_buf b;
            sw_buf_init(&b);
            params_help(m->params, &b, "--");
            if (b.len)
                fputs(b.data, stdout);
            sw_buf_free(&b);
        }
    }
    return 0;
}
