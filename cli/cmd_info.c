/* cmd_info.c: `swapsim devices`, `planners`, `models`. */
#include <stdio.h>
#include <string.h>

#include "../planners/planner.h"
#include "../profiles/models.h"
#include "../profiles/profile_io.h"
#include "cli.h"

static void devices_keys(sw_buf *b)
{
    sw_buf_printf(b, "\nKeys of --device-set:\n  %s\n"
                  "RATE accepts 12GB/s (decimal), 11.2GiB/s (binary) or 12e9; both copy\n"
                  "directions at once share the duplex rate.\n", dev_set_help());
}

int cmd_devices(int argc, char **argv)
{
    int json = 0, rc;
    cli_list which = {0};
    const cli_pos args[] = {{"NAME|FILE", "devices to show: built-in names or device files "
                             "(docs/devices.md; default: every built-in)", 0, CLI_MANY, &which},
                            {NULL, NULL, 0, 0, NULL}};
    const cli_opt opts[] = {
        {.name = "json", .type = PT_BOOL, .dst = &json, .help = "print the specs as a JSON array"},
        {.name = NULL}};
    const cli_cmd cmd = {
        .name = "devices",
        .about = "List the built-in GPU specs, or the devices named (built-in names or device\n"
                 "files, which this checks). Wherever a device is used, --device takes a name or\n"
                 "a device file (docs/devices.md; 'swapsim calibrate-device' measures one), and\n"
                 "repeated --device-set KEY=VALUE overrides one figure (keys below).\n",
        .args = args,
        .opts = opts,
        .more = devices_keys};
    if (cli_parse(&cmd, argc, argv, &rc))
        return rc;
    size_t n = which.n ? (size_t)which.n : dev_count();
    dev_spec *devs = sw_calloc(n ? n : 1, sizeof *devs);
    if (!devs)
        return cli_fail(EXIT_USER, "out of memory");
    for (size_t i = 0; i < n; i++) {
        sw_err e;
        if (!which.n)
            devs[i] = *dev_at(i);
        else if (dev_resolve(which.item[i], &devs[i], &e)) {
            sw_free(devs);
            return cli_error(&e);
        }
    }
    if (json) {
        sw_buf b;
        sw_buf_init(&b);
        sw_buf_putc(&b, '[');
        for (size_t i = 0; i < n; i++) {
            if (i)
                sw_buf_putc(&b, ',');
            dev_to_json(&devs[i], &b);
        }
        sw_buf_puts(&b, "]\n");
        fputs(b.data ? b.data : "", stdout);
        sw_buf_free(&b);
        sw_free(devs);
        return 0;
    }
    int w = 10; /* the name column: as wide as the longest name */
    for (size_t i = 0; i < n; i++)
        w = SW_MAX(w, (int)strlen(devs[i].name));
    printf("%-*s %8s %9s %9s %9s %8s %10s %10s %9s\n", w, "name", "memory", "h2d", "d2h", "duplex",
           "latency", "fp32", "fp16/tc", "mem bw");
    for (size_t i = 0; i < n; i++) {
        const dev_spec *d = &devs[i];
        char m[32];
        printf("%-*s %8s %6.1fGB/s %6.1fGB/s %6.1fGB/s %6.1fus %6.1fTF/s %6.0fTF/s %5.0fGB/s\n",
               w, d->name, sw_fmt_bytes(d->memory_bytes, m, sizeof m), d->h2d_bw / 1e9,
               d->d2h_bw / 1e9, d->duplex_bw / 1e9, d->copy_latency_s * 1e6,
               d->peak_flops_fp32 / 1e12, d->peak_flops_fp16 / 1e12, d->mem_bw / 1e9);
    }
    for (size_t i = 0; i < n; i++)
        printf("  %-*s %s\n", w, devs[i].name, devs[i].desc);
    sw_free(devs);
    return 0;
}

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
