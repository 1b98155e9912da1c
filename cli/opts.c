/* opts.c: the command line's one parser: each command declares its options
   and positional arguments (cli.h), and parsing, checking, error messages
   and --help are generated from those tables. */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

#define HELP_WIDTH 79 /* help lines are wrapped to this many columns */
#define HELP_COL 26   /* option help starts at this column (longer names: next line) */
#define MAX_OPTS 64   /* options in one table */

static const char *text(const sw_buf *b) { return b->data && !b->oom ? b->data : ""; }

/* --json: every outcome of the command, failures included, is one JSON
   object on standard output (cli_json_*, cli.h) */
static struct {
    int on;    /* the command was given --json */
    int said;  /* an outcome has been printed */
    int nofit; /* the failure is "does not fit" */
} json_out;

void cli_json_begin(int on)
{
    json_out.on = on;
    json_out.said = json_out.nofit = 0;
}

int cli_json_on(void) { return json_out.on; }

void cli_json_said(void) { json_out.said = 1; }

void cli_json_nofit(void) { json_out.nofit = 1; }

/* The failure as {"ok":false,"error":MSG,"exit_status":CODE} (does not fit:
   also "fits":false,"reason":MSG) on standard output, once, under --json. */
static void json_failure(int code, const char *msg)
{
    if (!json_out.on || json_out.said)
        return;
    json_out.said = 1;
    sw_buf b;
    sw_buf_init(&b);
    sw_buf_puts(&b, "{\"ok\":false,");
    if (json_out.nofit) {
        sw_buf_puts(&b, "\"fits\":false,\"reason\":");
        sw_buf_put_jstr(&b, msg);
        sw_buf_putc(&b, ',');
    }
    sw_buf_puts(&b, "\"error\":");
    sw_buf_put_jstr(&b, msg);
    sw_buf_printf(&b, ",\"exit_status\":%d}\n", code);
    fputs(text(&b), stdout);
    fflush(stdout);
    sw_buf_free(&b);
}

/* "swapsim[ CMD]: MESSAGE[ (see ...)]" on stderr, and its JSON twin */
static void say(int code, const char *cmd, const char *tail, const char *fmt, va_list ap)
{
    char msg[2048];
    vsnprintf(msg, sizeof msg, fmt, ap);
    fprintf(stderr, "swapsim%s%s: %s%s\n", cmd ? " " : "", cmd ? cmd : "", msg, tail);
    json_failure(code, msg);
}

int cli_fail(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    say(code, NULL, "", fmt, ap);
    va_end(ap);
    return code;
}

int cli_usage(const char *cmd, const char *fmt, ...)
{
    char tail[128];
    snprintf(tail, sizeof tail, " (see 'swapsim %s --help')", cmd);
    va_list ap;
    va_start(ap, fmt);
    say(EXIT_USAGE, cmd, tail, fmt, ap);
    va_end(ap);
    return EXIT_USAGE;
}

int cli_error(const sw_err *e)
{
    if (e->code == SW_ENOFIT)
        cli_json_nofit();
    return cli_fail(EXIT_USER, "%s", e->msg[0] ? e->msg : sw_strerror(e->code));
}

int cli_unknown_name(const char *what, const char *name, size_t count,
                     const char *(*name_at)(size_t i))
{
    sw_buf b;
    sw_buf_init(&b);
    for (size_t i = 0; i < count; i++)
        sw_buf_printf(&b, "%s%s", i ? ", " : "", name_at(i));
    int rc = cli_fail(EXIT_USER, "unknown %s '%s' (expected one of: %s)", what, name,
                      b.len && !b.oom ? b.data : count ? "?" : "none registered");
    sw_buf_free(&b);
    return rc;
}

/* The index of v among the '|'-separated choices, or -1. */
static int choice_index(const char *v, const char *choices)
{
    size_t n = strlen(v);
    for (int i = 0; choices && *choices; i++) {
        const char *bar = strchr(choices, '|');
        size_t len = bar ? (size_t)(bar - choices) : strlen(choices);
        if (len == n && !strncmp(v, choices, n))
            return i;
        if (!bar)
            break;
        choices = bar + 1;
    }
    return -1;
}

static int bounded(const cli_opt *o) { return o->min < o->max; }


/* "an integer from 1 to 1024", "cpu or cuda": what a value of o must be. */
static void expected(const cli_opt *o, sw_buf *b)
{
    char lo = (o->flags & CLI_ABOVE_MIN) ? '(' : '[';
    const char *cmp = (o->flags & CLI_ABOVE_MIN) ? ">" : ">=";
    switch (o->type) {
    case PT_INT:
        if (!bounded(o))
            sw_buf_puts(b, "an integer");
        else if (isinf(o->max) && o->min == 0 && !(o->flags & CLI_ABOVE_MIN))
            sw_buf_puts(b, "a non-negative integer");
        else if (isinf(o->max))
            sw_buf_printf(b, "an integer %s %.0f", cmp, o->min);
        else if (o->flags & CLI_ABOVE_MIN)
            sw_buf_printf(b, "an integer in (%.0f, %.0f]", o->min, o->max);
        else
            sw_buf_printf(b, "an integer from %.0f to %.0f", o->min, o->max);
        return;
    case PT_FLOAT:
        if (!bounded(o))
            sw_buf_puts(b, "a number");
        else if (isinf(o->max))
            sw_buf_printf(b, "a number %s %g", cmp, o->min);
        else
            sw_buf_printf(b, "a number in %c%g, %g]", lo, o->min, o->max);
        return;
    case PT_SIZE:
        sw_buf_puts(b, (o->flags & CLI_FRACTION) ? "a size like 16G or 0.4x"
                                                 : "a size like 16G or 512MiB");
        return;
    case PT_SECONDS:
        sw_buf_puts(b, "a duration like 10s or 1.5ms");
        return;
    case PT_CHOICE: /* "a, b or c" */
        for (const char *p = o->choices; p && *p;) {
            const char *bar = strchr(p, '|');
            size_t len = bar ? (size_t)(bar - p) : strlen(p);
            sw_buf_printf(b, "%.*s", (int)len, p);
            if (bar)
                sw_buf_puts(b, strchr(bar + 1, '|') ? ", " : " or ");
            p = bar ? bar + 1 : NULL;
        }
        return;
    case PT_BOOL:
        sw_buf_puts(b, "no value");
        return;
    case PT_STRING:
        sw_buf_puts(b, (o->flags & CLI_KEYVAL) ? "KEY=VALUE" : "a value");
        return;
    }
}

/* The value's name in the help and the usage line. */
static const char *meta_of(const cli_opt *o)
{
    if (o->meta)
        return o->meta;
    switch (o->type) {
    case PT_INT:
        return "N";
    case PT_FLOAT:
        return "X";
    case PT_SIZE:
        return "SIZE";
    case PT_SECONDS:
        return "SECONDS";
    case PT_CHOICE:
        return o->choices;
    case PT_BOOL:
        return "";
    case PT_STRING:
        return (o->flags & CLI_KEYVAL) ? "KEY=VALUE" : "VALUE";
    }
    return "VALUE";
}

int cli_size_bare(const char *v)
{
    char *end;
    if (!v || !*v)
        return 0;
    strtod(v, &end);
    return end != v && *end == 0;
}

int cli_over_device(const char *memory, int64_t budget, const dev_spec *dev)
{
    int64_t b;
    double frac = 0;
    if (!memory || budget <= dev->memory_bytes)
        return 0;
    return sw_parse_size(memory, &b, &frac, NULL) == 0 && frac == 0;
}

int cli_check_output(const char *path, const char *what)
{
    if (!path || !strcmp(path, "-"))
        return 0;
    struct stat st;
    int existed = stat(path, &st) == 0;
    if (existed && S_ISDIR(st.st_mode))
        return cli_fail(EXIT_USER, "%s %s: is a directory (expected a file)", what, path);
    int fd = open(path, O_WRONLY | O_CREAT, 0666); /* no O_TRUNC: a failed run keeps the old one */
    if (fd < 0)
        return cli_fail(EXIT_USER, "%s %s: cannot write: %s", what, path, strerror(errno));
    close(fd);
    if (!existed) /* only checked: what the command writes comes at the end */
        unlink(path);
    return 0;
}

/* A usage error (exit status 2): the message into err. */
static int usage_error(sw_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int usage_error(sw_err *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    err->code = SW_EINVAL;
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    return EXIT_USAGE;
}

/* Check v against o (as params_check checks a --set value of the type, plus
   what only the command line has) and store it at o->dst. Returns 0, or
   EXIT_USER / EXIT_USAGE with the message in err ("--memory: expected ...").
   spelled: the option as the user wrote it. */
static int take(const cli_opt *o, const char *spelled, const char *v, sw_err *err)
{
    sw_err e;
    int ok;
    if (o->type == PT_SIZE && cli_size_bare(v)) { /* "16": 16 bytes, or 16 GiB meant? */
        sw_fail(err, SW_EINVAL, "%s: %s: a size needs a unit (B, KiB, MiB, GiB)%s", spelled, v,
                (o->flags & CLI_FRACTION) ? " or x for a multiple of the peak" : "");
        return EXIT_USER;
    }
    if (o->type == PT_SIZE && (o->flags & CLI_FRACTION)) {
        int64_t bytes;
        double frac;
        ok = sw_parse_size(v, &bytes, &frac, &e) == 0;
    } else if (o->type == PT_STRING) {
        ok = !(o->flags & CLI_KEYVAL) || (v[0] != '=' && strchr(v, '='));
    } else {
        param_def d = {o->name, o->type, NULL, NULL, o->choices, 1, 0};
        if (bounded(o)) {
            d.min = o->min;
            d.max = o->max;
        }
        ok = params_check(&d, v, &e) == 0;
        double x;
        if (ok && (o->flags & CLI_ABOVE_MIN) && !sw_parse_f64(v, &x))
            ok = x > o->min;
    }
    if (!ok) {
        sw_buf b;
        sw_buf_init(&b);
        expected(o, &b);
        sw_fail(err, SW_EINVAL, "%s: expected %s, got '%s'", spelled, b.oom ? "?" : b.data, v);
        sw_buf_free(&b);
        return EXIT_USER;
    }
    if (!o->dst)
        return 0;
    int64_t i = 0;
    switch (o->type) {
    case PT_INT:
        sw_parse_i64(v, &i);
        if (o->flags & CLI_INT64)
            *(int64_t *)o->dst = i;
        else
            *(int *)o->dst = (int)i;
        return 0;
    case PT_FLOAT:
        sw_parse_f64(v, (double *)o->dst);
        return 0;
    case PT_SECONDS:
        sw_parse_seconds(v, (double *)o->dst, NULL);
        return 0;
    case PT_CHOICE:
        *(int *)o->dst = choice_index(v, o->choices);
        return 0;
    case PT_BOOL:
        *(int *)o->dst = 1;
        return 0;
    case PT_SIZE:
    case PT_STRING:
        if (o->flags & (CLI_MULTI | CLI_ANY)) {
            cli_list *l = o->dst;
            if (l->n >= CLI_LIST_MAX)
                return usage_error(err, "too many %s options", spelled);
            l->item[l->n] = v;
            l->val[l->n++] = NULL;
        } else {
            *(const char **)o->dst = v;
        }
        return 0;
    }
    return 0;
}

static int is_bool_literal(const char *s)
{
    static const char *const v[] = {"true", "false", "1", "0", "yes", "no", "on", "off"};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        if (!strcmp(s, v[i]))
            return 1;
    return 0;
}

/* Is --KEY (dashes read as underscores) a boolean among defs? */
static int is_bool_param(const param_def *defs, const char *key)
{
    char k[64];
    snprintf(k, sizeof k, "%s", key);
    for (char *p = k; *p; p++)
        if (*p == '-')
            *p = '_';
    for (const param_def *d = defs; d && d->key; d++)
        if (!strcmp(d->key, k))
            return d->type == PT_BOOL;
    return 0;
}

/* A CLI_ANY option at argv[*i] ("--KEY=VALUE", "--KEY VALUE", or a boolean
   "--KEY" alone) into the list; advances *i. */
static int take_any(const cli_cmd *c, const cli_opt *any, int argc, char **argv, int *i,
                    sw_err *err)
{
    const char *s = argv[*i];
    cli_list *l = any->dst;
    if (l->n >= CLI_LIST_MAX)
        return usage_error(err, "too many options");
    if (strchr(s, '=')) {
        l->item[l->n] = s + 2;
        l->val[l->n] = NULL;
        *i += 1;
    } else if (is_bool_param(c->any_params, s + 2) &&
               (*i + 1 >= argc || !is_bool_literal(argv[*i + 1]))) {
        l->item[l->n] = s + 2;
        l->val[l->n] = "true";
        *i += 1;
    } else {
        if (*i + 1 >= argc)
            return usage_error(err, "option %s needs a value", s);
        l->item[l->n] = s + 2;
        l->val[l->n] = argv[*i + 1];
        *i += 2;
    }
    l->n++;
    return 0;
}

/* "-o PLAN", "--planner NAME" or "--quiet": how an option is shown in
   messages and the usage line. */
static void synopsis_of(const cli_opt *o, sw_buf *b)
{
    if (o->short_name && o->type != PT_BOOL)
        sw_buf_printf(b, "-%c", o->short_name);
    else
        sw_buf_printf(b, "--%s", o->name);
    if (o->type != PT_BOOL)
        sw_buf_printf(b, " %s", meta_of(o));
}

/* "expected one PLAN", "expected at least one FILE", "expected FORMAT FILE...". */
static void expected_args(const cli_cmd *c, sw_buf *b)
{
    const cli_pos *p = c->args;
    if (p && p[0].name && !p[1].name && p[0].min == 1) {
        sw_buf_printf(b, "expected %s %s", p[0].max == 1 ? "one" : "at least one", p[0].name);
        return;
    }
    sw_buf_puts(b, "expected");
    for (; p && p->name; p++)
        sw_buf_printf(b, p->min ? " %s%s" : " [%s%s]", p->name, p->max > 1 ? "..." : "");
}

/* Hand the positional arguments to their declarations in order, each
   taking as many as it may while leaving enough for those after it. */
static int take_args(const cli_cmd *c, const char **pos, int npos, sw_err *err)
{
    int k = 0;
    const cli_pos *p = c->args;
    for (; p && p->name; p++) {
        int later = 0;
        for (const cli_pos *q = p + 1; q->name; q++)
            later += q->min;
        int n = npos - k - later;
        if (n > p->max)
            n = p->max;
        if (n < p->min) {
            sw_buf b;
            sw_buf_init(&b);
            expected_args(c, &b);
            usage_error(err, "%s", b.oom ? "wrong arguments" : b.data);
            sw_buf_free(&b);
            return EXIT_USAGE;
        }
        if (p->max == 1) {
            if (n == 1 && p->dst)
                *(const char **)p->dst = pos[k];
        } else if (p->dst) {
            cli_list *l = p->dst;
            for (int j = 0; j < n; j++) {
                l->item[l->n] = pos[k + j];
                l->val[l->n++] = NULL;
            }
        }
        k += n;
    }
    if (k < npos)
        return usage_error(err, "unexpected argument '%s'", pos[k]);
    return 0;
}

int cli_parse_args(const cli_cmd *c, int argc, char **argv, sw_err *err)
{
    const cli_opt *any = NULL;
    int nopts = 0;
    for (const cli_opt *o = c->opts; o && o->name; o++, nopts++) {
        if (o->flags & CLI_ANY)
            any = o;
        assert(!(o->flags & (CLI_MULTI | CLI_ANY)) || o->type == PT_STRING);
        assert(o->type != PT_INT || (o->flags & CLI_INT64) ||
               (bounded(o) && o->min >= INT_MIN && o->max <= INT_MAX)); /* fits an int */
    }
    assert(nopts <= MAX_OPTS);
    for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
            return CLI_HELP;
    /* defaults first */
    for (const cli_opt *o = c->opts; o && o->name; o++)
        if (o->def) {
            int rc = take(o, o->name, o->def, err);
            assert(rc == 0 && "a default that is not a valid value");
            if (rc)
                return rc;
        }
    const char *pos[CLI_LIST_MAX];
    int npos = 0, seen[MAX_OPTS] = {0}, dashdash = 0;
    for (int i = 1; i < argc;) {
        const char *s = argv[i];
        if (dashdash || s[0] != '-' || s[1] == 0) { /* "-" is a file: standard input or output */
            if (npos >= CLI_LIST_MAX)
                return usage_error(err, "too many arguments");
            pos[npos++] = s;
            i++;
            continue;
        }
        if (!strcmp(s, "--")) {
            dashdash = 1;
            i++;
            continue;
        }
        /* --name, --name=value, -n, -n=value */
        int k = 0;
        const char *eq = NULL;
        const cli_opt *o = c->opts;
        for (; o && o->name; o++, k++) {
            size_t n = strlen(o->name);
            if (s[1] == '-' && !strncmp(s + 2, o->name, n) && !(o->flags & CLI_ANY))
                eq = s + 2 + n;
            else if (s[1] != '-' && o->short_name && s[1] == o->short_name)
                eq = s + 2;
            else
                continue;
            if (*eq == 0 || *eq == '=')
                break;
        }
        if (!o || !o->name) {
            if (any && s[1] == '-' && s[2] && s[2] != '=') {
                int rc = take_any(c, any, argc, argv, &i, err);
                if (rc)
                    return rc;
                continue;
            }
            return usage_error(err, "unknown option '%s'", s);
        }
        char spelled[80];
        snprintf(spelled, sizeof spelled, "%.*s", (int)(eq - s), s);
        if (seen[k]++ && !(o->flags & CLI_MULTI))
            return usage_error(err, "%s given twice", spelled);
        const char *v;
        if (o->type == PT_BOOL) {
            if (*eq == '=')
                return usage_error(err, "%s takes no value, got '%s'", spelled, s);
            v = "true";
            i++;
        } else if (*eq == '=') {
            v = eq + 1;
            i++;
        } else if (i + 1 < argc) {
            v = argv[i + 1];
            i += 2;
        } else {
            return usage_error(err, "option %s needs a value (%s)", spelled, meta_of(o));
        }
        int rc = take(o, spelled, v, err);
        if (rc)
            return rc;
    }
    int rc = take_args(c, pos, npos, err);
    if (rc)
        return rc;
    int k = 0;
    for (const cli_opt *o = c->opts; o && o->name; o++, k++)
        if ((o->flags & CLI_REQUIRED) && !seen[k]) {
            sw_buf b;
            sw_buf_init(&b);
            synopsis_of(o, &b);
            usage_error(err, "missing %s", b.oom ? o->name : b.data);
            sw_buf_free(&b);
            return EXIT_USAGE;
        }
    return 0;
}

/* Does c take --json, and is it among argv (before "--")? */
static int wants_json(const cli_cmd *c, int argc, char **argv)
{
    int takes = 0;
    for (const cli_opt *o = c->opts; o && o->name; o++)
        takes |= o->type == PT_BOOL && !strcmp(o->name, "json");
    for (int i = 1; takes && i < argc && strcmp(argv[i], "--"); i++)
        if (!strcmp(argv[i], "--json"))
            return 1;
    return 0;
}

/* the CLI_OUTPUT options given, checked before the command does any work */
static int check_outputs(const cli_cmd *c)
{
    for (const cli_opt *o = c->opts; o && o->name; o++) {
        if (!(o->flags & CLI_OUTPUT) || !o->dst)
            continue;
        char what[80];
        if (o->short_name)
            snprintf(what, sizeof what, "-%c", o->short_name);
        else
            snprintf(what, sizeof what, "--%s", o->name);
        if (cli_check_output(*(const char *const *)o->dst, what))
            return EXIT_USER;
    }
    return 0;
}

int cli_parse(const cli_cmd *c, int argc, char **argv, int *status)
{
    sw_err e;
    cli_json_begin(wants_json(c, argc, argv));
    int rc = cli_parse_args(c, argc, argv, &e);
    if (rc == 0) {
        *status = check_outputs(c);
        return *status != 0;
    }
    if (rc == CLI_HELP) {
        sw_buf b;
        sw_buf_init(&b);
        cli_help(c, &b);
        fputs(b.data ? b.data : "", stdout);
        sw_buf_free(&b);
        *status = 0;
    } else if (rc == EXIT_USAGE) {
        *status = cli_usage(c->name, "%s", e.msg);
    } else {
        fprintf(stderr, "swapsim %s: %s\n", c->name, e.msg);
        json_failure(rc, e.msg);
        *status = rc;
    }
    return 1;
}

/* Append text to b word by word, wrapped at HELP_WIDTH; *col is the current
   column; continuation lines start at column indent. */
static void wrap(sw_buf *b, const char *text, int *col, int indent)
{
    const char *p = text;
    while (*p) {
        if (*p == '\n') {
            sw_buf_printf(b, "\n%*s", indent, "");
            *col = indent;
            p++;
            continue;
        }
        if (*p == ' ') {
            p++;
            continue;
        }
        int len = (int)strcspn(p, " \n");
        int sep = *col != indent;
        if (sep && *col + 1 + len > HELP_WIDTH) {
            sw_buf_printf(b, "\n%*s", indent, "");
            *col = indent;
            sep = 0;
        }
        sw_buf_printf(b, "%s%.*s", sep ? " " : "", len, p);
        *col += sep + len;
        p += len;
    }
}

/* Append one unbreakable item (a usage line's "[--wait hybrid|spin|sleep]"). */
static void wrap_item(sw_buf *b, const char *item, int *col, int indent)
{
    int len = (int)strlen(item), sep = *col != indent;
    if (sep && *col + 1 + len > HELP_WIDTH) {
        sw_buf_printf(b, "\n%*s", indent, "");
        *col = indent;
        sep = 0;
    }
    sw_buf_printf(b, "%s%s", sep ? " " : "", item);
    *col += sep + len;
}

static void help_line(sw_buf *b, const char *lhs, const char *help, const char *def)
{
    int col = 2 + (int)strlen(lhs);
    sw_buf_printf(b, "  %s", lhs);
    if (col + 2 > HELP_COL) {
        sw_buf_printf(b, "\n%*s", HELP_COL, "");
    } else {
        sw_buf_printf(b, "%*s", HELP_COL - col, "");
    }
    col = HELP_COL;
    wrap(b, help ? help : "", &col, HELP_COL);
    if (def) {
        char d[160];
        snprintf(d, sizeof d, "(default %s)", def);
        wrap(b, d, &col, HELP_COL);
    }
    sw_buf_putc(b, '\n');
}

void cli_help(const cli_cmd *c, sw_buf *b)
{
    /* usage line: arguments, required options, then the others in brackets */
    char head[64];
    snprintf(head, sizeof head, "usage: swapsim %s", c->name);
    int indent = (int)strlen(head) + 1, col = (int)strlen(head);
    sw_buf_puts(b, head);
    sw_buf w;
    sw_buf_init(&w);
    for (int pass = 0; pass < 3; pass++) {
        if (pass == 0)
            for (const cli_pos *p = c->args; p && p->name; p++) {
                w.len = 0;
                sw_buf_printf(&w, p->min ? "%s%s" : "[%s%s]", p->name, p->max > 1 ? "..." : "");
                wrap_item(b, text(&w), &col, indent);
            }
        int others = 0;
        for (const cli_opt *o = c->opts; pass && o && o->name; o++) {
            if ((pass == 1) != !!(o->flags & CLI_REQUIRED))
                continue;
            if (pass == 2 && c->brief) {
                others++;
                continue;
            }
            w.len = 0;
            if (o->flags & CLI_ANY)
                sw_buf_printf(&w, "[--%s %s]...", o->name, meta_of(o));
            else {
                if (pass == 2)
                    sw_buf_putc(&w, '[');
                synopsis_of(o, &w);
                if (pass == 2)
                    sw_buf_putc(&w, ']');
                if (o->flags & CLI_MULTI)
                    sw_buf_puts(&w, "...");
            }
            wrap_item(b, text(&w), &col, indent);
        }
        if (others)
            wrap_item(b, "[options]", &col, indent);
    }
    sw_buf_putc(b, '\n');
    if (c->about)
        sw_buf_printf(b, "\n%s", c->about);
    if (c->args && c->args[0].name) {
        sw_buf_puts(b, "\narguments:\n");
        for (const cli_pos *p = c->args; p->name; p++) {
            w.len = 0;
            sw_buf_printf(&w, "%s%s", p->name, p->max > 1 ? "..." : "");
            help_line(b, text(&w), p->help, NULL);
        }
    }
    if (c->opts && c->opts[0].name) {
        sw_buf_puts(b, "\noptions:\n");
        for (const cli_opt *o = c->opts; o->name; o++) {
            w.len = 0;
            if (o->short_name)
                sw_buf_printf(&w, "-%c, ", o->short_name);
            sw_buf_printf(&w, "--%s", o->name);
            if (o->type != PT_BOOL)
                sw_buf_printf(&w, " %s", meta_of(o));
            help_line(b, text(&w), o->help, o->type == PT_BOOL ? NULL : o->def);
        }
    }
    sw_buf_free(&w);
    if (c->more)
        c->more(b);
}
