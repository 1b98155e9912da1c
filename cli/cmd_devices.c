/* cmd_devices.c: `swapsim devices`: the built-in GPU specs (and device
   files: docs/devices.md). */
#include <stdio.h>
#include <string.h>

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
