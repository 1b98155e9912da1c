/* runner.c: expands an experiment's grid, runs and caches its cells, writes
   its CSV (see runner.h and docs/experiments.md). */
#include "runner.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../common/json.h"

#define MAX_VARS 16
#define MAX_FIELDS 8
#define MAX_ARGS 96

/* one value of a variable: one or more named fields (zipped variables) */
typedef struct exp_val {
    int n;
    const char *key[MAX_FIELDS];
    char *text[MAX_FIELDS];
} exp_val;

typedef struct exp_var {
    const char *name;
    exp_val *vals;
    int n;
} exp_var;

typedef struct exp_cell {
    int idx[MAX_VARS];     /* value index per variable */
    char *argv[MAX_ARGS];  /* expanded command (argv[0] is the binary) */
    int argc;
    char *pargv[MAX_ARGS]; /* profile command, if any */
    int pargc;
    uint64_t key;          /* cache key */
    uint64_t pkey;
    /* result */
    int done, status;      /* status: 0 ok, 1 user error */
    double wall;
    char *output;          /* stdout (JSON object) */
    char *message;         /* first line of stderr */
    int cached;
} exp_cell;

typedef struct exp {
    const exp_opts *o;
    sw_err *err;
    json_doc *doc;
    const char *name, *csv;
    exp_var vars[MAX_VARS];
    int nvars;
    const json_value *cmd, *pcmd;
    exp_cell *cells;
    size_t ncells;
    uint64_t bin_hash;
    char dir[1024];
} exp;

static int mkdir_p(const char *path)
{
    char tmp[1024];
    snprintf(tmp, sizeof tmp, "%s", path);
    for (char *p = tmp + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            if (mkdir(tmp, 0775) && errno != EEXIST)
                return -1;
            *p = '/';
        }
    if (mkdir(tmp, 0775) && errno != EEXIST)
        return -1;
    return 0;
}

static char *value_text(const json_value *v)
{
    char buf[64];
    switch (v->type) {
    case JSON_STRING: return sw_strdup(v->u.str);
    case JSON_NUMBER:
        if (v->is_int) {
            snprintf(buf, sizeof buf, "%lld", (long long)v->u.num.i);
        } else { /* the shortest text that reads back the same number: 0.1, not 0.1000...01 */
            for (int prec = 15; prec <= 17; prec++) {
                snprintf(buf, sizeof buf, "%.*g", prec, v->u.num.d);
                if (strtod(buf, NULL) == v->u.num.d)
                    break;
            }
        }
        return sw_strdup(buf);
    case JSON_TRUE: return sw_strdup("true");
    case JSON_FALSE: return sw_strdup("false");
    default: return NULL;
    }
}

static int parse_vars(exp *x, jr *r, const json_value *vars)
{
    size_t s0 = jr_push_key(r, "vars");
    for (uint32_t i = 0; i < vars->n; i++) {
        if (x->nvars >= MAX_VARS)
            return jr_error(r, vars, NULL, "at most %d variables", MAX_VARS);
        const json_member *m = &vars->u.members[i];
        exp_var *v = &x->vars[x->nvars++];
        v->name = m->key;
        const json_value *list = &m->val;
        size_t s1 = jr_push_key(r, m->key);
        if (list->type == JSON_OBJECT) {
            /* per-mode lists: {"quick": [...], "full": [...]} */
            const json_value *sel = json_get(list, x->o->full ? "full" : "quick");
            if (!sel)
                return jr_error(r, list, NULL, "expected a list, or an object with \"quick\" and "
                                "\"full\" lists");
            list = sel;
        }
        if (list->type != JSON_ARRAY || list->n == 0)
            return jr_error(r, list, NULL, "expected a non-empty list of values");
        v->vals = sw_calloc(list->n, sizeof *v->vals);
        if (!v->vals)
            return sw_fail(x->err, SW_ENOMEM, "out of memory");
        v->n = (int)list->n;
        for (uint32_t k = 0; k < list->n; k++) {
            const json_value *it = &list->u.items[k];
            exp_val *ev = &v->vals[k];
            if (it->type == JSON_OBJECT) {
                if (it->n > MAX_FIELDS)
                    return jr_error(r, it, NULL, "at most %d fields per value", MAX_FIELDS);
                for (uint32_t f = 0; f < it->n; f++) {
                    ev->key[f] = it->u.members[f].key;
                    ev->text[f] = value_text(&it->u.members[f].val);
                    if (!ev->text[f])
                        return jr_error(r, &it->u.members[f].val, NULL, "expected a string, "
                                        "number or boolean");
                    ev->n = (int)f + 1; /* what free_exp releases if a later field fails */
                }
            } else {
                ev->key[0] = v->name;
                ev->text[0] = value_text(it);
                if (!ev->text[0])
                    return jr_error(r, it, NULL, "expected a string, number, boolean or object");
                ev->n = 1;
            }
        }
        jr_pop(r, s1);
    }
    jr_pop(r, s0);
    return 0;
}

/* the value of a placeholder name in a cell, or NULL */
static const char *lookup(const exp *x, const exp_cell *c, const char *name)
{
    for (int v = 0; v < x->nvars; v++) {
        const exp_val *ev = &x->vars[v].vals[c->idx[v]];
        for (int f = 0; f < ev->n; f++)
            if (!strcmp(ev->key[f], name))
                return ev->text[f];
    }
    return NULL;
}

/* hash of a command line without the binary's path */
static uint64_t argv_hash(char **argv, int argc)
{
    uint64_t h = 1469598103934665603ULL;
    for (int i = 1; i < argc; i++) {
        h = sw_hash64(argv[i], strlen(argv[i]), h);
        h = sw_hash64("\x1f", 1, h);
    }
    return h;
}

/* Expand a template (JSON array of strings) for cell c into argv. An argument
   that is exactly one placeholder is split on spaces (and dropped if empty). */
static int expand(exp *x, exp_cell *c, const json_value *tmpl, char **argv, int *argc,
                  const char *profile_path, const char *cellid, jr *r)
{
    int n = 0, rc = 0;
    sw_buf b;
    sw_buf_init(&b);
    argv[n++] = sw_strdup(x->o->swapsim);
    for (uint32_t i = 0; i < tmpl->n && !rc; i++) {
        const json_value *a = &tmpl->u.items[i];
        if (a->type != JSON_STRING) {
            rc = jr_error(r, a, NULL, "command arguments must be strings");
            break;
        }
        const char *t = a->u.str;
        sw_buf_free(&b);
        sw_buf_init(&b);
        int whole = t[0] == '{' && strchr(t, '}') == t + strlen(t) - 1;
        for (const char *p = t; *p && !rc;) {
            if (*p != '{') {
                sw_buf_putc(&b, *p++);
                continue;
            }
            const char *e = strchr(p, '}');
            if (!e) {
                rc = jr_error(r, a, NULL, "unterminated placeholder in '%s'", t);
                break;
            }
            char name[64];
            size_t l = (size_t)(e - p - 1);
            if (l >= sizeof name) {
                rc = jr_error(r, a, NULL, "placeholder too long in '%s'", t);
                break;
            }
            memcpy(name, p + 1, l);
            name[l] = 0;
            const char *val = !strcmp(name, "profile") ? profile_path
                              : !strcmp(name, "data") ? x->o->data
                              : !strcmp(name, "out") ? x->dir
                              : !strcmp(name, "cell") ? cellid
                              : lookup(x, c, name);
            if (!val) {
                rc = jr_error(r, a, NULL, "unknown placeholder {%s} (not a variable, nor "
                              "profile, data, out or cell)", name);
                break;
            }
            sw_buf_puts(&b, val);
            p = e + 1;
        }
        if (rc)
            break;
        if (b.oom) {
            rc = sw_fail(x->err, SW_ENOMEM, "out of memory");
            break;
        }
        const char *s = b.data ? b.data : "";
        if (whole) {
            /* word-split a lone placeholder */
            char *copy = sw_strdup(s), *save = NULL;
            for (char *w = copy ? strtok_r(copy, " ", &save) : NULL; w;
                 w = strtok_r(NULL, " ", &save)) {
                if (n >= MAX_ARGS - 1)
                    break;
                argv[n++] = sw_strdup(w);
            }
            sw_free(copy);
        } else if (n < MAX_ARGS - 1) {
            argv[n++] = sw_strdup(s);
        }
    }
    sw_buf_free(&b);
    if (rc) { /* the caller owns nothing of a failed expansion */
        while (n > 0)
            sw_free(argv[--n]);
    }
    argv[n] = NULL;
    *argc = n;
    return rc;
}

/* ---- running commands ---- */

typedef struct child {
    pid_t pid;
    exp_cell *cell;
    int is_profile;
    double t0;
    char out[1100], errf[1100];
} child;

static int spawn(exp *x, child *ch, char **argv)
{
    int fo = open(ch->out, O_WRONLY | O_CREAT | O_TRUNC, 0664);
    int fe = open(ch->errf, O_WRONLY | O_CREAT | O_TRUNC, 0664);
    if (fo < 0 || fe < 0) {
        if (fo >= 0)
            close(fo);
        if (fe >= 0)
            close(fe);
        return sw_fail(x->err, SW_EIO, "%s: cannot create output files", x->dir);
    }
    ch->t0 = sw_now();
    pid_t pid = fork();
    if (pid < 0) {
        close(fo);
        close(fe);
        return sw_fail(x->err, SW_EIO, "fork failed: %s", strerror(errno));
    }
    if (pid == 0) {
        dup2(fo, 1);
        dup2(fe, 2);
        close(fo);
        close(fe);
        execv(argv[0], argv);
        fprintf(stderr, "swapsim experiment: cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    close(fo);
    close(fe);
    ch->pid = pid;
    return 0;
}

static char *slurp(const char *path)
{
    char *d = NULL;
    size_t n;
    sw_err e;
    if (sw_read_file(path, &d, &n, &e))
        return NULL;
    return d;
}

static char *first_line(const char *s)
{
    if (!s)
        return sw_strdup("");
    const char *p = s;
    if (!strncmp(p, "swapsim: ", 9))
        p += 9;
    size_t n = strcspn(p, "\n");
    return sw_strndup(p, n);
}

static void cache_path(const exp *x, uint64_t key, const char *ext, char *buf, size_t n)
{
    snprintf(buf, n, "%s/cache/%016llx%s", x->dir, (unsigned long long)key, ext);
}

static void argv_text(char **argv, int argc, sw_buf *b)
{
    for (int i = 1; i < argc; i++) {
        if (i > 1)
            sw_buf_putc(b, ' ');
        sw_buf_puts(b, argv[i]);
    }
}

/* Cached result of a cell: <key>.json holds {"status":..,"wall_s":..,"message":..,"output":..} */
static int load_cached(exp *x, exp_cell *c)
{
    char path[1200];
    cache_path(x, c->key, ".json", path, sizeof path);
    char *text = slurp(path);
    if (!text)
        return 0;
    json_doc *d = json_doc_new();
    const json_value *v;
    sw_err e;
    int ok = 0;
    if (d && !json_parse(d, text, strlen(text), path, 1, &v, &e)) {
        const json_value *st = json_get(v, "status"), *w = json_get(v, "wall_s");
        const json_value *m = json_get(v, "message"), *out = json_get(v, "output_text");
        if (st && st->type == JSON_NUMBER && w && out && out->type == JSON_STRING) {
            c->status = (int)st->u.num.i;
            c->wall = w->u.num.d;
            c->message = sw_strdup(m && m->type == JSON_STRING ? m->u.str : "");
            c->output = sw_strdup(out->u.str);
            c->done = c->cached = 1;
            ok = 1;
        }
    }
    json_doc_free(d);
    sw_free(text);
    return ok;
}

static void store_cached(exp *x, exp_cell *c)
{
    sw_buf b;
    sw_buf_init(&b);
    sw_buf_printf(&b, "{\"status\":%d,\"wall_s\":%.6f,\"message\":", c->status, c->wall);
    sw_buf_put_jstr(&b, c->message ? c->message : "");
    sw_buf_puts(&b, ",\"command\":");
    sw_buf cmd;
    sw_buf_init(&cmd);
    argv_text(c->argv, c->argc, &cmd);
    sw_buf_put_jstr(&b, cmd.data ? cmd.data : "");
    sw_buf_free(&cmd);
    sw_buf_puts(&b, ",\"output_text\":");
    sw_buf_put_jstr(&b, c->output ? c->output : "");
    sw_buf_puts(&b, "}\n");
    char path[1200], tmp[1300];
    cache_path(x, c->key, ".json", path, sizeof path);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    sw_err e;
    if (!sw_buf_write_file(&b, tmp, &e))
        rename(tmp, path); /* atomic: an interrupted run leaves no half entry */
    sw_buf_free(&b);
}

static void progress(exp *x, size_t done, size_t cached, double t0, double work, size_t worked)
{
    if (!x->o->progress)
        return;
    double el = sw_now() - t0;
    size_t left = x->ncells - done;
    double eta = worked ? work / (double)worked * (double)left / (x->o->jobs > 0 ? x->o->jobs : 1) : 0;
    fprintf(stderr, "\r[%s] %zu/%zu cells (%zu cached), %.0f s elapsed, ~%.0f s left   ", x->name,
            done, x->ncells, cached, el, eta);
    fflush(stderr);
}

static int run_all(exp *x)
{
    int jobs = x->o->jobs > 0 ? x->o->jobs : 1;
    child *ch = sw_calloc((size_t)jobs, sizeof *ch);
    if (!ch)
        return sw_fail(x->err, SW_ENOMEM, "out of memory");
    size_t done = 0, cached = 0, next = 0, worked = 0;
    double t0 = sw_now(), work = 0;
    for (size_t i = 0; i < x->ncells; i++)
        if (load_cached(x, &x->cells[i])) {
            done++;
            cached++;
        }
    /* profiles first need building: a profile is built by the first cell
       that needs it; others wait (their profile file appears when done) */
    int running = 0, rc = 0;
    progress(x, done, cached, t0, work, worked);
    while (done < x->ncells && !rc) {
        /* start cells */
        while (running < jobs && next < x->ncells) {
            exp_cell *c = &x->cells[next];
            if (c->done) {
                next++;
                continue;
            }
            int slot = 0;
            while (ch[slot].pid)
                slot++;
            child *k = &ch[slot];
            k->cell = c;
            snprintf(k->out, sizeof k->out, "%s/cache/run-%d.out", x->dir, slot);
            snprintf(k->errf, sizeof k->errf, "%s/cache/run-%d.err", x->dir, slot);
            if (c->pargc) {
                char ppath[1200];
                cache_path(x, c->pkey, ".profile.json", ppath, sizeof ppath);
                if (access(ppath, R_OK) != 0) {
                    /* is another child building it? then wait */
                    int busy = 0;
                    for (int j = 0; j < jobs; j++)
                        busy |= ch[j].pid && ch[j].is_profile && ch[j].cell->pkey == c->pkey;
                    if (busy)
                        break;
                    k->is_profile = 1;
                    if ((rc = spawn(x, k, c->pargv)))
                        break;
                    running++;
                    continue; /* the cell itself starts once its profile exists */
                }
            }
            k->is_profile = 0;
            if ((rc = spawn(x, k, c->argv)))
                break;
            running++;
            next++;
        }
        if (rc || !running)
            break;
        int st;
        pid_t pid = wait(&st);
        if (pid < 0)
            break;
        int slot = 0;
        while (slot < jobs && ch[slot].pid != pid)
            slot++;
        if (slot == jobs)
            continue;
        child *k = &ch[slot];
        running--;
        k->pid = 0;
        int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
        char *out = slurp(k->out), *errt = slurp(k->errf);
        exp_cell *c = k->cell;
        if (k->is_profile) {
            if (code != 0) {
                sw_buf cmd;
                sw_buf_init(&cmd);
                argv_text(c->pargv, c->pargc, &cmd);
                char *m = first_line(errt);
                rc = sw_fail(x->err, SW_EINVAL, "%s: making a profile failed (exit %d): swapsim "
                             "%s: %s", x->o->file, code, cmd.data ? cmd.data : "", m);
                sw_free(m);
                sw_buf_free(&cmd);
            }
            sw_free(out);
            sw_free(errt);
            k->is_profile = 0;
            continue;
        }
        c->wall = sw_now() - k->t0;
        if (code == 0 || code == 1) {
            c->status = code;
            c->output = out ? out : sw_strdup("");
            c->message = code ? first_line(errt) : sw_strdup("");
            out = NULL;
            c->done = 1;
            store_cached(x, c);
            done++;
            worked++;
            work += c->wall;
        } else {
            sw_buf cmd;
            sw_buf_init(&cmd);
            argv_text(c->argv, c->argc, &cmd);
            char *m = first_line(errt);
            rc = sw_fail(x->err, SW_EINVAL, "%s: cell failed (exit %d): swapsim %s: %s",
                         x->o->file, code, cmd.data ? cmd.data : "", m);
            sw_free(m);
            sw_buf_free(&cmd);
        }
        sw_free(out);
        sw_free(errt);
        progress(x, done, cached, t0, work, worked);
    }
    /* stop what still runs after an error */
    for (int j = 0; j < jobs; j++)
        if (ch[j].pid) {
            kill(ch[j].pid, SIGTERM);
            waitpid(ch[j].pid, NULL, 0);
        }
    if (x->o->progress)
        fputc('\n', stderr);
    sw_free(ch);
    return rc;
}

/* ---- CSV ---- */

static void csv_field(sw_buf *b, const char *s)
{
    if (!strpbrk(s, ",\"\n")) {
        sw_buf_puts(b, s);
        return;
    }
    sw_buf_putc(b, '"');
    for (; *s; s++) {
        if (*s == '"')
            sw_buf_putc(b, '"');
        sw_buf_putc(b, *s == '\n' ? ' ' : *s);
    }
    sw_buf_putc(b, '"');
}

static int write_csv(exp *x)
{
    /* columns: every variable field, status, message, wall_s, then the output's keys */
    const char *cols[256];
    int ncols = 0;
    for (int v = 0; v < x->nvars; v++) {
        const exp_val *ev = &x->vars[v].vals[0];
        for (int f = 0; f < ev->n && ncols < 200; f++)
            cols[ncols++] = ev->key[f];
    }
    int nvarcols = ncols;
    json_doc **docs = sw_calloc(x->ncells, sizeof *docs);
    const json_value **outs = sw_calloc(x->ncells, sizeof *outs);
    if (!docs || !outs) {
        sw_free(docs);
        sw_free(outs);
        return sw_fail(x->err, SW_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < x->ncells; i++) {
        exp_cell *c = &x->cells[i];
        if (c->status != 0 || !c->output)
            continue;
        docs[i] = json_doc_new();
        sw_err e;
        const json_value *v;
        if (docs[i] && !json_parse(docs[i], c->output, strlen(c->output), "cell output", 1, &v, &e) &&
            v->type == JSON_OBJECT) {
            outs[i] = v;
            for (uint32_t k = 0; k < v->n; k++) {
                int have = 0;
                for (int j = 0; j < ncols; j++) /* a variable of the same name wins */
                    have |= !strcmp(cols[j], v->u.members[k].key);
                if (!have && ncols < 256)
                    cols[ncols++] = v->u.members[k].key;
            }
        }
    }
    sw_buf b;
    sw_buf_init(&b);
    for (int j = 0; j < nvarcols; j++) {
        csv_field(&b, cols[j]);
        sw_buf_putc(&b, ',');
    }
    sw_buf_puts(&b, "status,message,wall_s");
    for (int j = nvarcols; j < ncols; j++) {
        sw_buf_putc(&b, ',');
        csv_field(&b, cols[j]);
    }
    sw_buf_putc(&b, '\n');
    for (size_t i = 0; i < x->ncells; i++) {
        exp_cell *c = &x->cells[i];
        for (int j = 0; j < nvarcols; j++) {
            const char *val = lookup(x, c, cols[j]);
            csv_field(&b, val ? val : "");
            sw_buf_putc(&b, ',');
        }
        sw_buf_puts(&b, c->status == 0 ? "ok" : "error");
        sw_buf_putc(&b, ',');
        csv_field(&b, c->message ? c->message : "");
        sw_buf_printf(&b, ",%.3f", c->wall);
        for (int j = nvarcols; j < ncols; j++) {
            sw_buf_putc(&b, ',');
            const json_value *v = outs[i] ? json_get(outs[i], cols[j]) : NULL;
            if (!v)
                continue;
            char *t = value_text(v);
            if (t)
                csv_field(&b, t);
            sw_free(t);
        }
        sw_buf_putc(&b, '\n');
    }
    for (size_t i = 0; i < x->ncells; i++)
        json_doc_free(docs[i]);
    sw_free(docs);
    sw_free(outs);
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", x->dir, x->csv);
    int rc = sw_buf_write_file(&b, path, x->err);
    sw_buf_free(&b);
    if (!rc && x->o->progress)
        fprintf(stderr, "[%s] wrote %s (%zu rows)\n", x->name, path, x->ncells);
    return rc;
}

/* ---- setup ---- */

static uint64_t file_hash(const char *path)
{
    char *d = NULL;
    size_t n = 0;
    sw_err e;
    if (sw_read_file(path, &d, &n, &e))
        return 0;
    uint64_t h = sw_hash64(d, n, 0);
    sw_free(d);
    return h;
}

static void free_exp(exp *x)
{
    for (size_t i = 0; i < x->ncells; i++) {
        exp_cell *c = &x->cells[i];
        for (int k = 0; k < c->argc; k++)
            sw_free(c->argv[k]);
        for (int k = 0; k < c->pargc; k++)
            sw_free(c->pargv[k]);
        sw_free(c->output);
        sw_free(c->message);
    }
    sw_free(x->cells);
    for (int v = 0; v < x->nvars; v++) {
        for (int k = 0; k < x->vars[v].n; k++)
            for (int f = 0; f < x->vars[v].vals[k].n; f++)
                sw_free(x->vars[v].vals[k].text[f]);
        sw_free(x->vars[v].vals);
    }
    json_doc_free(x->doc);
}

int exp_run(const exp_opts *opts, sw_err *err)
{
    exp_opts oc = *opts; /* a copy, with the data directory's default filled in */
    if (!oc.data)
        oc.data = sw_data_dir();
    const exp_opts *o = &oc;
    exp x;
    memset(&x, 0, sizeof x);
    x.o = o;
    x.err = err;
    char *text = NULL;
    size_t len;
    int rc = sw_read_file(o->file, &text, &len, err);
    if (rc)
        return rc;
    x.doc = json_doc_new();
    const json_value *root;
    if (!x.doc) {
        sw_free(text);
        return sw_fail(err, SW_ENOMEM, "out of memory");
    }
    rc = json_parse(x.doc, text, len, o->file, 1, &root, err);
    jr r;
    jr_init(&r, o->file, err);
    const json_value *vars = NULL;
    if (!rc)
        rc = jr_str(&r, root, "name", 1, NULL, &x.name);
    if (!rc)
        rc = jr_str(&r, root, "csv", 0, NULL, &x.csv);
    if (!rc)
        rc = jr_field(&r, root, "command", JSON_ARRAY, 1, &x.cmd);
    if (!rc)
        rc = jr_field(&r, root, "profile", JSON_ARRAY, 0, &x.pcmd);
    if (!rc)
        rc = jr_field(&r, root, "vars", JSON_OBJECT, 1, &vars);
    if (!rc)
        rc = parse_vars(&x, &r, vars);
    /* "requires": paths that must exist ({data} expanded), else the
       experiment is skipped with a message; "jobs": at most this many cells
       at once (timing-sensitive experiments ask for 1) */
    const json_value *req = NULL;
    int64_t maxjobs = 0;
    if (!rc)
        rc = jr_field(&r, root, "requires", JSON_ARRAY, 0, &req);
    if (!rc)
        rc = jr_i64(&r, root, "jobs", 0, 0, 1, 256, &maxjobs);
    for (uint32_t i = 0; !rc && req && i < req->n; i++) {
        const json_value *v = &req->u.items[i];
        if (v->type != JSON_STRING) {
            size_t s1 = jr_push_key(&r, "requires");
            rc = jr_error(&r, v, NULL, "expected a path");
            jr_pop(&r, s1);
            break;
        }
        char path[1200];
        const char *in = v->u.str;
        if (!strncmp(in, "{data}", 6))
            snprintf(path, sizeof path, "%s%s", o->data, in + 6);
        else
            snprintf(path, sizeof path, "%s", in);
        if (access(path, R_OK) != 0) {
            fprintf(stderr, "[%s] skipped: %s is absent (give the recorded data with --data DIR)\n",
                    x.name, path);
            free_exp(&x);
            sw_free(text);
            return 0;
        }
    }
    exp_opts local = *o;
    if (!rc && maxjobs > 0 && local.jobs > maxjobs) {
        local.jobs = (int)maxjobs;
        x.o = &local;
    }
    char csvname[256];
    if (!rc && !x.csv) {
        snprintf(csvname, sizeof csvname, "%s.csv", x.name);
        x.csv = csvname;
    }
    if (!rc) {
        snprintf(x.dir, sizeof x.dir, "%s", o->out_dir ? o->out_dir : "out");
        char cdir[1100];
        snprintf(cdir, sizeof cdir, "%s/cache", x.dir);
        if (mkdir_p(x.dir) || mkdir_p(cdir))
            rc = sw_fail(err, SW_EIO, "%s: cannot create directory: %s", x.dir, strerror(errno));
    }
    if (!rc) {
        x.bin_hash = file_hash(o->swapsim);
        if (!x.bin_hash)
            rc = sw_fail(err, SW_EIO, "%s: cannot read the swapsim binary", o->swapsim);
    }
    /* expand the grid */
    if (!rc) {
        size_t n = 1;
        for (int v = 0; v < x.nvars; v++)
            n *= (size_t)x.vars[v].n;
        x.cells = sw_calloc(n ? n : 1, sizeof *x.cells);
        if (!x.cells)
            rc = sw_fail(err, SW_ENOMEM, "out of memory");
        x.ncells = n;
        for (size_t i = 0; i < n && !rc; i++) {
            exp_cell *c = &x.cells[i];
            size_t q = i;
            for (int v = x.nvars - 1; v >= 0; v--) {
                c->idx[v] = (int)(q % (size_t)x.vars[v].n);
                q /= (size_t)x.vars[v].n;
            }
            char ppath[1200] = "", cellid[32];
            if (x.pcmd) {
                size_t s = jr_push_key(&r, "profile");
                rc = expand(&x, c, x.pcmd, c->pargv, &c->pargc, "", "", &r);
                jr_pop(&r, s);
                if (rc)
                    break;
                c->pkey = argv_hash(c->pargv, c->pargc) ^ x.bin_hash;
                cache_path(&x, c->pkey, ".profile.json", ppath, sizeof ppath);
                if (c->pargc < MAX_ARGS - 3) {
                    c->pargv[c->pargc++] = sw_strdup("-o");
                    c->pargv[c->pargc++] = sw_strdup(ppath);
                    c->pargv[c->pargc] = NULL;
                }
            }
            /* the cell id used in {cell}: a stable hash of the variables */
            uint64_t vh = 0;
            for (int v = 0; v < x.nvars; v++) {
                const exp_val *ev = &x.vars[v].vals[c->idx[v]];
                for (int f = 0; f < ev->n; f++)
                    vh = sw_hash64(ev->text[f], strlen(ev->text[f]), vh + 1);
            }
            snprintf(cellid, sizeof cellid, "%016llx", (unsigned long long)vh);
            size_t s = jr_push_key(&r, "command");
            rc = expand(&x, c, x.cmd, c->argv, &c->argc, ppath, cellid, &r);
            jr_pop(&r, s);
            if (!rc)
                c->key = argv_hash(c->argv, c->argc) ^ x.bin_hash ^ (c->pkey * 31);
        }
    }
    if (!rc && o->dry_run) {
        for (size_t i = 0; i < x.ncells; i++) {
            sw_buf b;
            sw_buf_init(&b);
            argv_text(x.cells[i].argv, x.cells[i].argc, &b);
            printf("swapsim %s\n", b.data ? b.data : "");
            sw_buf_free(&b);
        }
    } else if (!rc) {
        rc = run_all(&x);
        if (!rc)
            rc = write_csv(&x);
    }
    free_exp(&x);
    sw_free(text);
    return rc;
}
