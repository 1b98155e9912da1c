/* runner.c: expands an experiment's grid, runs and caches its cells, writes
   its CSV (see runner.h and docs/experiments.md). */
#include "runner_priv.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>




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

char *exp_value_text(const json_value *v)
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
                    ev->text[f] = exp_value_text(&it->u.members[f].val);
                    if (!ev->text[f])
                        return jr_error(r, &it->u.members[f].val, NULL, "expected a string, "
                                        "number or boolean");
                    ev->n = (int)f + 1; /* what free_exp releases if a later field fails */
                }
            } else {
                ev->key[0] = v->name;
                ev->text[0] = exp_value_text(it);
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
const char *exp_lookup(const exp *x, const exp_cell *c, const char *name)
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

/* A variable's value into b, with {data} (a recorded file: {data}/...) and
   {NAME} of another variable replaced by their values, as they are (one
   level: "--set generations={generations}" in a planner's options); other
   braces stay as written. */
static void put_value(const exp *x, const exp_cell *c, sw_buf *b, const char *val)
{
    for (const char *p = val; *p;) {
        const char *e = *p == '{' ? strchr(p, '}') : NULL;
        char name[64];
        size_t l = e ? (size_t)(e - p - 1) : 0;
        const char *sub = NULL;
        if (e && l > 0 && l < sizeof name) {
            memcpy(name, p + 1, l);
            name[l] = 0;
            sub = !strcmp(name, "data") ? x->o->data : exp_lookup(x, c, name);
        }
        if (sub) {
            sw_buf_puts(b, sub);
            p = e + 1;
        } else {
            sw_buf_putc(b, *p++);
        }
    }
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
                              : exp_lookup(x, c, name);
            if (!val) {
                rc = jr_error(r, a, NULL, "unknown placeholder {%s} (not a variable, nor "
                              "profile, data, out or cell)", name);
                break;
            }
            if (strcmp(name, "data") && strcmp(name, "profile") && strcmp(name, "out") &&
                strcmp(name, "cell"))
                put_value(x, c, &b, val);
            else
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
    pid_t pid;                  /* 0: the slot is free */
    exp_cell *cell;             /* the cell it runs, or makes the profile of */
    int is_profile;             /* 1: making the cell's profile */
    double t0;                  /* when it started */
    char out[1100], errf[1100]; /* its standard output and error */
    char tmp[1300];             /* is_profile: the file it writes, renamed once complete */
} child;

/* the commands this process runs at once */
typedef struct slots {
    child *ch;   /* jobs slots */
    int jobs;    /* how many */
    int running; /* slots in use */
} slots;

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
        if (x->o->env)
            execve(argv[0], argv, x->o->env);
        else
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
    sw_buf_printf(&b, "{\"status\":%d,\"wall_s\":%.17g,\"message\":", c->status, c->wall);
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
    /* this process's own temporary name: ranks sharing the directory never
       write one file at once */
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
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
    int par = x->slots_total > 0 ? x->slots_total : x->o->jobs > 0 ? x->o->jobs : 1;
    double eta = worked ? work / (double)worked * (double)left / par : 0;
    if (x->o->progress == 2) { /* a log: one line per tenth of the cells */
        int t = x->ncells ? (int)(done * 10 / x->ncells) : 10;
        if (t <= x->tenths)
            return;
        x->tenths = t;
        fprintf(stderr, "[%s] %d%%: %zu/%zu cells (%zu cached), %.0f s elapsed, ~%.0f s left\n",
                x->name, 10 * t, done, x->ncells, cached, el, eta);
        fflush(stderr);
        return;
    }
    fprintf(stderr, "\r[%s] %zu/%zu cells (%zu cached), %.0f s elapsed, ~%.0f s left   ", x->name,
            done, x->ncells, cached, el, eta);
    fflush(stderr);
}

enum { STARTED, STARTED_PROFILE, WAIT_PROFILE };

/* Start cell c in a free slot of s, or first make its profile there: a
   profile is made by the first cell that needs it (into a temporary file,
   renamed when complete, so no cell, here or on another rank sharing the
   directory, ever reads half a profile). Returns STARTED, STARTED_PROFILE
   (start the cell again once the profile exists), WAIT_PROFILE (another
   slot is making it), or an error. */
static int start(exp *x, slots *s, exp_cell *c)
{
    int slot = 0, rank = x->o->link ? x->o->link->rank : 0, rc;
    while (s->ch[slot].pid)
        slot++;
    child *k = &s->ch[slot];
    k->cell = c;
    k->is_profile = 0;
    /* the command's output, named for this rank, process and slot: runs
       sharing the directory (ranks, or experiments run side by side) never
       write one file; removed once read */
    snprintf(k->out, sizeof k->out, "%s/cache/run-%d-%ld-%d.out", x->dir, rank, (long)getpid(),
             slot);
    snprintf(k->errf, sizeof k->errf, "%s/cache/run-%d-%ld-%d.err", x->dir, rank,
             (long)getpid(), slot);
    if (c->pargc >= 2 && !strcmp(c->pargv[c->pargc - 2], "-o")) {
        char *ppath = c->pargv[c->pargc - 1];
        if (access(ppath, R_OK) != 0) {
            for (int j = 0; j < s->jobs; j++)
                if (s->ch[j].pid && s->ch[j].is_profile && s->ch[j].cell->pkey == c->pkey)
                    return WAIT_PROFILE;
            k->is_profile = 1;
            snprintf(k->tmp, sizeof k->tmp, "%s.%d.%ld.tmp", ppath, rank, (long)getpid());
            c->pargv[c->pargc - 1] = k->tmp;
            rc = spawn(x, k, c->pargv);
            c->pargv[c->pargc - 1] = ppath;
            if (rc)
                return rc;
            s->running++;
            return STARTED_PROFILE;
        }
    }
    if ((rc = spawn(x, k, c->argv)))
        return rc;
    s->running++;
    return STARTED;
}

/* Child k ended with wait status st. A profile is renamed into place; a
   cell's result is filled in and *finished set to the cell. Returns 0, or
   an error naming the command that failed. */
static int finish(exp *x, slots *s, child *k, int st, exp_cell **finished)
{
    *finished = NULL;
    s->running--;
    k->pid = 0;
    int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
    char *out = slurp(k->out), *errt = slurp(k->errf);
    unlink(k->out);
    unlink(k->errf);
    exp_cell *c = k->cell;
    int rc = 0;
    if (k->is_profile) {
        k->is_profile = 0;
        const char *ppath = c->pargv[c->pargc - 1];
        if (code == 0 && rename(k->tmp, ppath) != 0) {
            rc = sw_fail(x->err, SW_EIO, "%s: cannot rename it to %s: %s", k->tmp, ppath,
                         strerror(errno));
        } else if (code != 0) {
            unlink(k->tmp);
            sw_buf cmd;
            sw_buf_init(&cmd);
            argv_text(c->pargv, c->pargc, &cmd);
            char *m = first_line(errt);
            rc = sw_fail(x->err, SW_EINVAL, "%s: making a profile failed (exit %d): swapsim "
                         "%s: %s", x->o->file, code, cmd.data ? cmd.data : "", m);
            sw_free(m);
            sw_buf_free(&cmd);
        }
    } else {
        c->wall = sw_now() - k->t0;
        if (code == 0 || code == 1) {
            c->status = code;
            sw_free(c->output);
            sw_free(c->message);
            c->output = out ? out : sw_strdup("");
            c->message = code ? first_line(errt) : sw_strdup("");
            out = NULL;
            c->done = 1;
            *finished = c;
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
    }
    sw_free(out);
    sw_free(errt);
    return rc;
}

/* stop what still runs (after an error) */
static void kill_all(slots *s)
{
    for (int j = 0; j < s->jobs; j++)
        if (s->ch[j].pid) {
            kill(s->ch[j].pid, SIGTERM);
            waitpid(s->ch[j].pid, NULL, 0);
            if (s->ch[j].is_profile)
                unlink(s->ch[j].tmp);
            unlink(s->ch[j].out);
            unlink(s->ch[j].errf);
            s->ch[j].pid = 0;
        }
    s->running = 0;
}

/* A child of s that has ended (its slot; *st its wait status), or -1 when
   none has yet; never blocks. */
static int reap_one(slots *s, int *st)
{
    for (int j = 0; j < s->jobs; j++)
        if (s->ch[j].pid && waitpid(s->ch[j].pid, st, WNOHANG) == s->ch[j].pid)
            return j;
    return -1;
}

/* Wait a little when nothing happened: 0.1 ms after activity, doubling up
   to 5 ms while nothing does, so short cells are not held up by the
   polling and long ones cost no CPU. */
static void nap(long *ns, int busy)
{
    if (busy) {
        *ns = 100000;
        return;
    }
    struct timespec ts = {0, *ns};
    nanosleep(&ts, NULL);
    *ns = *ns * 2 > 5000000 ? 5000000 : *ns * 2;
}

/* every cell here, `jobs` at a time (no other process takes part) */
static int run_here(exp *x, size_t done, size_t cached)
{
    slots s = {NULL, x->o->jobs > 0 ? x->o->jobs : 1, 0};
    s.ch = sw_calloc((size_t)s.jobs, sizeof *s.ch);
    if (!s.ch)
        return sw_fail(x->err, SW_ENOMEM, "out of memory");
    size_t next = 0, worked = 0;
    double t0 = sw_now(), work = 0;
    int rc = 0;
    progress(x, done, cached, t0, work, worked);
    while (done < x->ncells && !rc) {
        while (s.running < s.jobs && next < x->ncells) {
            exp_cell *c = &x->cells[next];
            if (c->done) {
                next++;
                continue;
            }
            int r = start(x, &s, c);
            if (r < 0)
                rc = r;
            if (r < 0 || r == WAIT_PROFILE)
                break;
            if (r == STARTED)
                next++;
        }
        if (rc || !s.running)
            break;
        int st;
        pid_t pid = wait(&st);
        if (pid < 0)
            break;
        int slot = 0;
        while (slot < s.jobs && s.ch[slot].pid != pid)
            slot++;
        if (slot == s.jobs)
            continue;
        exp_cell *f;
        rc = finish(x, &s, &s.ch[slot], st, &f);
        if (f) {
            store_cached(x, f);
            done++;
            worked++;
            work += f->wall;
        }
        progress(x, done, cached, t0, work, worked);
    }
    kill_all(&s);
    if (x->o->progress == 1) /* ends the line rewritten in place */
        fputc('\n', stderr);
    sw_free(s.ch);
    return rc;
}

/* ---- several processes (exp_link): rank 0 hands out cells, the others
   run them and send back the results ---- */

enum { MSG_READY = 1, MSG_ASSIGN, MSG_RESULT, MSG_FAIL, MSG_STOP, MSG_BYE };

static void put_u64(sw_buf *b, uint64_t v) { sw_buf_put(b, (const char *)&v, sizeof v); }

static void put_f64(sw_buf *b, double v) { sw_buf_put(b, (const char *)&v, sizeof v); }

static void put_str(sw_buf *b, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    put_u64(b, n);
    if (n)
        sw_buf_put(b, s, n);
}

/* reading a message: bad is set when it is shorter than what is read */
typedef struct msg_rd {
    const char *p; /* next byte */
    size_t n;      /* bytes left */
    int bad;       /* 1: read past the end (or out of memory) */
} msg_rd;

static uint64_t get_u64(msg_rd *r)
{
    uint64_t v = 0;
    if (r->n < sizeof v) {
        r->bad = 1;
        return 0;
    }
    memcpy(&v, r->p, sizeof v);
    r->p += sizeof v;
    r->n -= sizeof v;
    return v;
}

static double get_f64(msg_rd *r)
{
    double v = 0;
    if (r->n < sizeof v) {
        r->bad = 1;
        return 0;
    }
    memcpy(&v, r->p, sizeof v);
    r->p += sizeof v;
    r->n -= sizeof v;
    return v;
}

static char *get_str(msg_rd *r)
{
    uint64_t n = get_u64(r);
    if (r->bad || n > r->n) {
        r->bad = 1;
        return NULL;
    }
    char *s = sw_strndup(r->p, (size_t)n);
    r->p += n;
    r->n -= (size_t)n;
    if (!s)
        r->bad = 1;
    return s;
}

static int send_buf(exp *x, int to, int tag, sw_buf *b)
{
    const exp_link *L = x->o->link;
    int rc = b->oom ? sw_fail(x->err, SW_ENOMEM, "out of memory")
                    : L->send(L->ctx, to, tag, b->data ? b->data : "", b->len, x->err);
    sw_buf_free(b);
    return rc;
}

/* a status and a message (MSG_FAIL, MSG_STOP) */
static int send_status(exp *x, int to, int tag, int code, const char *msg)
{
    sw_buf b;
    sw_buf_init(&b);
    put_u64(&b, (uint64_t)(int64_t)code);
    put_str(&b, msg);
    return send_buf(x, to, tag, &b);
}

/* rank 0: hands out the cells not cached, in grid order, to its own slots
   and to the slots the other ranks offer (READY); stores every result in
   the cache as it comes, so an interrupted run resumes; on an error (its
   own or a rank's FAIL) stops every rank (STOP) and waits until each has
   (BYE). */
/* a rank's result (MSG_RESULT in r): its cell's result, stored in the cache;
   1 when placed (*wall: the cell's time), else 0 (*rc set if it was not) */
static int take_result(exp *x, int from, msg_rd *r, double *wall, int *rc)
{
    uint64_t idx = get_u64(r), key = get_u64(r);
    int status = (int)(int64_t)get_u64(r), placed = 0;
    *wall = get_f64(r);
    char *msg = get_str(r), *out = get_str(r);
    if (!r->bad && idx < x->ncells && x->cells[idx].key == key && !x->cells[idx].done) {
        exp_cell *c = &x->cells[idx];
        c->status = status;
        c->wall = *wall;
        c->message = msg;
        c->output = out;
        msg = out = NULL;
        c->done = 1;
        store_cached(x, c);
        placed = 1;
    } else if (!*rc) {
        *rc = sw_fail(x->err, SW_EINVAL, "rank %d sent a result rank 0 cannot place (cell %llu)",
                      from, (unsigned long long)idx);
    }
    sw_free(msg);
    sw_free(out);
    return placed;
}

static int run_coordinator(exp *x, size_t done, size_t cached)
{
    const exp_link *L = x->o->link;
    int W = L->size, rc = 0, stopping = 0, byes = 0;
    slots s = {NULL, x->o->jobs > 0 ? x->o->jobs : 1, 0};
    s.ch = sw_calloc((size_t)s.jobs, sizeof *s.ch);
    int *offered = sw_calloc((size_t)W, sizeof *offered);   /* free slots per rank */
    int *node_busy = sw_calloc((size_t)W, sizeof *node_busy); /* cells running per machine */
    size_t *queue = sw_malloc((x->ncells + 1) * sizeof *queue), qh = 0, qt = 0;
    if (!s.ch || !offered || !node_busy || !queue)
        rc = sw_fail(x->err, SW_ENOMEM, "out of memory"); /* still stops the others below */
    size_t next = 0, worked = 0;
    double t0 = sw_now(), work = 0;
    long wait_ns = 100000;
    x->slots_total = s.jobs;
    progress(x, done, cached, t0, work, worked);
    for (;;) {
        int busy = 0;
        while (!rc && !stopping && next < x->ncells) {
            exp_cell *c = &x->cells[next];
            if (c->done) {
                next++;
                continue;
            }
            int to = -1;
            /* "jobs" in the experiment file bounds the cells at once on each machine */
            if (s.running + (int)(qt - qh) < s.jobs &&
                (!x->maxjobs || node_busy[L->node[0]] < x->maxjobs))
                to = 0;
            for (int w = 1; to < 0 && w < W; w++)
                if (offered[w] > 0 && (!x->maxjobs || node_busy[L->node[w]] < x->maxjobs))
                    to = w;
            if (to < 0)
                break;
            if (to == 0) {
                queue[qt++] = next;
            } else {
                sw_buf b;
                sw_buf_init(&b);
                put_u64(&b, next);
                put_u64(&b, c->key);
                rc = send_buf(x, to, MSG_ASSIGN, &b);
                offered[to]--;
            }
            node_busy[L->node[to]]++;
            next++;
            busy = 1;
        }
        while (!rc && !stopping && qh < qt && s.running < s.jobs) {
            int r = start(x, &s, &x->cells[queue[qh]]);
            if (r < 0)
                rc = r;
            if (r < 0 || r == WAIT_PROFILE)
                break;
            if (r == STARTED)
                qh++;
            busy = 1;
        }
        int st, slot;
        while (s.ch && (slot = reap_one(&s, &st)) >= 0) {
            exp_cell *f;
            int frc = finish(x, &s, &s.ch[slot], st, &f);
            if (frc && !rc)
                rc = frc;
            if (f) {
                store_cached(x, f);
                done++;
                worked++;
                work += f->wall;
                node_busy[L->node[0]]--;
                progress(x, done, cached, t0, work, worked);
            }
            busy = 1;
        }
        for (;;) {
            int from, tag;
            char *buf = NULL;
            size_t n = 0;
            sw_err le;
            int got = L->recv(L->ctx, &from, &tag, &buf, &n, &le);
            if (got < 0 && !rc)
                rc = sw_fail(x->err, got, "%s", le.msg);
            if (got <= 0)
                break;
            busy = 1;
            msg_rd r = {buf, n, 0};
            if (!offered || !node_busy || !queue) {
                /* out of memory: rc is set; only the ranks' goodbyes count now */
                byes += tag == MSG_BYE;
            } else if (tag == MSG_READY) {
                uint64_t k = get_u64(&r);
                if (!r.bad && k <= 4096) {
                    /* twice its slots: a slot that frees up starts its next cell at
                       once, without waiting for this rank's answer */
                    offered[from] += 2 * (int)k;
                    x->slots_total += (int)k;
                }
            } else if (tag == MSG_RESULT) {
                double wall = 0;
                if (take_result(x, from, &r, &wall, &rc)) {
                    done++;
                    worked++;
                    work += wall;
                    offered[from]++;
                    node_busy[L->node[from]]--;
                    progress(x, done, cached, t0, work, worked);
                }
            } else if (tag == MSG_FAIL) {
                int code = (int)(int64_t)get_u64(&r);
                char *msg = get_str(&r);
                if (!rc)
                    rc = sw_fail(x->err, code < 0 ? code : SW_EINVAL, "rank %d: %s", from,
                                 msg ? msg : "failed");
                sw_free(msg);
            } else if (tag == MSG_BYE) {
                byes++;
            }
            sw_free(buf);
        }
        if (!stopping && (rc || done == x->ncells)) {
            stopping = 1;
            for (int w = 1; w < W; w++)
                send_status(x, w, MSG_STOP, rc, rc ? x->err->msg : "");
            if (s.ch)
                kill_all(&s);
        }
        if (stopping && byes >= W - 1)
            break;
        nap(&wait_ns, busy);
    }
    if (x->o->progress == 1) /* ends the line rewritten in place */
        fputc('\n', stderr);
    sw_free(s.ch);
    sw_free(offered);
    sw_free(node_busy);
    sw_free(queue);
    return rc;
}

/* ranks 1...: offers its slots (READY), runs the cells rank 0 assigns
   (ASSIGN), sends each result back (RESULT) or its error (FAIL), and ends
   when rank 0 says so (STOP, answered with BYE). */
static int run_worker(exp *x)
{
    const exp_link *L = x->o->link;
    slots s = {NULL, x->o->jobs > 0 ? x->o->jobs : 1, 0};
    s.ch = sw_calloc((size_t)s.jobs, sizeof *s.ch);
    size_t *queue = sw_malloc((x->ncells + 1) * sizeof *queue), qh = 0, qt = 0;
    int rc = 0, failed = 0;
    long wait_ns = 100000;
    if (!s.ch || !queue) {
        rc = sw_fail(x->err, SW_ENOMEM, "out of memory");
    } else {
        sw_buf b;
        sw_buf_init(&b);
        put_u64(&b, (uint64_t)s.jobs);
        rc = send_buf(x, 0, MSG_READY, &b);
    }
    for (;;) {
        int busy = 0;
        while (!rc && qh < qt && s.running < s.jobs) {
            int r = start(x, &s, &x->cells[queue[qh]]);
            if (r < 0)
                rc = r;
            if (r < 0 || r == WAIT_PROFILE)
                break;
            if (r == STARTED)
                qh++;
            busy = 1;
        }
        int st, slot;
        while (!rc && s.ch && (slot = reap_one(&s, &st)) >= 0) {
            exp_cell *f;
            rc = finish(x, &s, &s.ch[slot], st, &f);
            if (f) {
                sw_buf b;
                sw_buf_init(&b);
                put_u64(&b, (uint64_t)(f - x->cells));
                put_u64(&b, f->key);
                put_u64(&b, (uint64_t)(int64_t)f->status);
                put_f64(&b, f->wall);
                put_str(&b, f->message);
                put_str(&b, f->output);
                rc = send_buf(x, 0, MSG_RESULT, &b);
                sw_free(f->output); /* rank 0 keeps the results */
                sw_free(f->message);
                f->output = f->message = NULL;
            }
            busy = 1;
        }
        if (rc && !failed) {
            failed = 1;
            sw_err keep = *x->err;
            send_status(x, 0, MSG_FAIL, rc, keep.msg);
            *x->err = keep;
            if (s.ch)
                kill_all(&s);
            qh = qt;
        }
        for (;;) {
            int from, tag;
            char *buf = NULL;
            size_t n = 0;
            sw_err le;
            int got = L->recv(L->ctx, &from, &tag, &buf, &n, &le);
            if (got < 0 && !rc)
                rc = sw_fail(x->err, got, "%s", le.msg);
            if (got <= 0)
                break;
            busy = 1;
            msg_rd r = {buf, n, 0};
            if (tag == MSG_ASSIGN && !rc) {
                uint64_t idx = get_u64(&r), key = get_u64(&r);
                if (r.bad || idx >= x->ncells || x->cells[idx].key != key)
                    rc = sw_fail(x->err, SW_EINVAL, "rank 0 assigned cell %llu, which this rank "
                                 "expands otherwise (is the experiment file, the swapsim binary "
                                 "and --data the same on every node?)", (unsigned long long)idx);
                else
                    queue[qt++] = idx;
            } else if (tag == MSG_STOP) {
                int code = (int)(int64_t)get_u64(&r);
                char *msg = get_str(&r);
                if (s.ch)
                    kill_all(&s);
                if (!rc && code)
                    rc = sw_fail(x->err, code < 0 ? code : SW_EINVAL, "%s",
                                 msg ? msg : "stopped by rank 0");
                sw_free(msg);
                sw_free(buf);
                sw_buf b;
                sw_buf_init(&b);
                send_buf(x, 0, MSG_BYE, &b);
                sw_free(s.ch);
                sw_free(queue);
                return rc;
            }
            sw_free(buf);
        }
        nap(&wait_ns, busy);
    }
}

static int run_all(exp *x)
{
    const exp_link *L = x->o->link;
    size_t done = 0, cached = 0;
    if (L && L->rank > 0)
        return run_worker(x); /* rank 0 alone reads the cache and decides what runs */
    for (size_t i = 0; i < x->ncells; i++)
        if (load_cached(x, &x->cells[i])) {
            done++;
            cached++;
        }
    return L ? run_coordinator(x, done, cached) : run_here(x, done, cached);
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

/* what each rank says once it has expanded the grid */
typedef struct setup_rec {
    int64_t rc;      /* 0, or its error */
    int64_t skip;    /* 1: a required path is absent there */
    uint64_t ncells; /* the grid's cells */
    uint64_t keys;   /* a hash of every cell's cache key, in order */
    char msg[224];   /* the error's message */
} setup_rec;

/* The ranks compare notes after expanding the grid: one rank's error, a
   required path present on one and absent on another, or a grid expanded
   otherwise than on rank 0 ends every rank's run with the same error.
   *skip becomes rank 0's. */
static int agree_setup(exp *x, const exp_link *L, int rc, int *skip)
{
    setup_rec me;
    memset(&me, 0, sizeof me);
    me.rc = rc;
    me.skip = *skip;
    me.ncells = x->ncells;
    for (size_t i = 0; i < x->ncells; i++)
        me.keys = sw_hash64(&x->cells[i].key, sizeof x->cells[i].key, me.keys + 1);
    if (rc) {
        size_t n = strnlen(x->err->msg, sizeof me.msg - 1);
        memcpy(me.msg, x->err->msg, n);
    }
    setup_rec *all = sw_calloc((size_t)L->size, sizeof *all);
    if (!all)
        return sw_fail(x->err, SW_ENOMEM, "out of memory");
    sw_err e;
    int grc = L->allgather(L->ctx, &me, all, sizeof me, &e);
    if (grc) {
        sw_free(all);
        return sw_fail(x->err, grc, "%s", e.msg);
    }
    rc = 0;
    for (int k = 0; k < L->size && !rc; k++)
        if (all[k].rc)
            rc = k ? sw_fail(x->err, (int)all[k].rc, "rank %d: %s", k, all[k].msg)
                   : sw_fail(x->err, (int)all[k].rc, "%s", all[k].msg);
    for (int k = 1; k < L->size && !rc; k++)
        if (all[k].skip != all[0].skip)
            rc = sw_fail(x->err, SW_EIO, "%s: rank %d %s a path the experiment requires, and "
                         "rank 0 %s: give every node the same files (--data)", x->o->file, k,
                         all[k].skip ? "lacks" : "has", all[0].skip ? "lacks it" : "has it");
    for (int k = 1; k < L->size && !rc && !all[0].skip; k++)
        if (all[k].ncells != all[0].ncells || all[k].keys != all[0].keys)
            rc = sw_fail(x->err, SW_EINVAL, "%s: rank %d expands the grid into other cells than "
                         "rank 0 (is the experiment file, the swapsim binary and --data the same "
                         "on every node?)", x->o->file, k);
    *skip = (int)all[0].skip;
    sw_free(all);
    return rc;
}

/* "requires": paths that must exist ({data} expanded), else the experiment
   is skipped (*skip, the absent path in skipped); "jobs": at most this many
   cells at once (timing-sensitive experiments ask for 1) */
static int read_requires(exp *x, jr *r, const json_value *root, int64_t *maxjobs,
                         char *skipped, size_t n, int *skip)
{
    const json_value *req = NULL;
    int rc = jr_field(r, root, "requires", JSON_ARRAY, 0, &req);
    if (!rc)
        rc = jr_i64(r, root, "jobs", 0, 0, 1, 256, maxjobs);
    for (uint32_t i = 0; !rc && req && i < req->n; i++) {
        const json_value *v = &req->u.items[i];
        if (v->type != JSON_STRING) {
            size_t s1 = jr_push_key(r, "requires");
            rc = jr_error(r, v, NULL, "expected a path");
            jr_pop(r, s1);
            break;
        }
        const char *in = v->u.str;
        if (!strncmp(in, "{data}", 6))
            snprintf(skipped, n, "%s%s", x->o->data, in + 6);
        else
            snprintf(skipped, n, "%s", in);
        if (access(skipped, R_OK) != 0) {
            *skip = 1;
            break;
        }
    }
    return rc;
}

/* expand the grid: every cell's profile command, command and cache keys */
static int expand_grid(exp *x, jr *r)
{
    int rc = 0;
    size_t n = 1;
    for (int v = 0; v < x->nvars; v++)
        n *= (size_t)x->vars[v].n;
    x->cells = sw_calloc(n ? n : 1, sizeof *x->cells);
    if (!x->cells)
        rc = sw_fail(x->err, SW_ENOMEM, "out of memory");
    else
        x->ncells = n;
    for (size_t i = 0; i < x->ncells && !rc; i++) {
        exp_cell *c = &x->cells[i];
        size_t q = i;
        for (int v = x->nvars - 1; v >= 0; v--) {
            c->idx[v] = (int)(q % (size_t)x->vars[v].n);
            q /= (size_t)x->vars[v].n;
        }
        char ppath[1200] = "", cellid[32];
        if (x->pcmd) {
            size_t s = jr_push_key(r, "profile");
            rc = expand(x, c, x->pcmd, c->pargv, &c->pargc, "", "", r);
            jr_pop(r, s);
            if (rc)
                break;
            c->pkey = argv_hash(c->pargv, c->pargc) ^ x->bin_hash;
            cache_path(x, c->pkey, ".profile.json", ppath, sizeof ppath);
            if (c->pargc < MAX_ARGS - 3) {
                c->pargv[c->pargc++] = sw_strdup("-o");
                c->pargv[c->pargc++] = sw_strdup(ppath);
                c->pargv[c->pargc] = NULL;
            }
        }
        /* the cell id used in {cell}: a stable hash of the variables */
        uint64_t vh = 0;
        for (int v = 0; v < x->nvars; v++) {
            const exp_val *ev = &x->vars[v].vals[c->idx[v]];
            for (int f = 0; f < ev->n; f++)
                vh = sw_hash64(ev->text[f], strlen(ev->text[f]), vh + 1);
        }
        snprintf(cellid, sizeof cellid, "%016llx", (unsigned long long)vh);
        size_t s = jr_push_key(r, "command");
        rc = expand(x, c, x->cmd, c->argv, &c->argc, ppath, cellid, r);
        jr_pop(r, s);
        if (!rc)
            c->key = argv_hash(c->argv, c->argc) ^ x->bin_hash ^ (c->pkey * 31);
    }
    return rc;
}

int exp_run(const exp_opts *opts, sw_err *err)
{
    exp_opts oc = *opts; /* a copy, with the data directory's default filled in */
    if (!oc.data)
        oc.data = sw_data_dir();
    if (oc.link && (oc.link->size < 2 || oc.dry_run))
        oc.link = NULL; /* one rank, or nothing to run: as a single process */
    const exp_opts *o = &oc;
    exp x;
    memset(&x, 0, sizeof x);
    x.o = o;
    x.err = err;
    char *text = NULL;
    size_t len = 0;
    int rc = 0, skip = 0;
    if (o->text) {
        len = strlen(o->text);
        text = sw_strndup(o->text, len);
        if (!text)
            rc = sw_fail(err, SW_ENOMEM, "out of memory");
    } else {
        rc = sw_read_file(o->file, &text, &len, err);
    }
    char skipped[1200] = "";
    const json_value *root = NULL;
    if (!rc && !(x.doc = json_doc_new()))
        rc = sw_fail(err, SW_ENOMEM, "out of memory");
    if (!rc)
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
    if (!rc)
        rc = jr_field(&r, root, "derive", JSON_ARRAY, 0, &x.derive);
    if (!rc && x.derive)
        rc = exp_derive_check(&x, &r, x.derive);
    int64_t maxjobs = 0;
    if (!rc)
        rc = read_requires(&x, &r, root, &maxjobs, skipped, sizeof skipped, &skip);
    exp_opts local = *o;
    x.maxjobs = (int)maxjobs;
    if (!rc && maxjobs > 0 && local.jobs > maxjobs) {
        local.jobs = (int)maxjobs;
        x.o = &local;
    }
    char csvname[256];
    if (!rc && !skip && !x.csv) {
        snprintf(csvname, sizeof csvname, "%s.csv", x.name);
        x.csv = csvname;
    }
    if (!rc && !skip) {
        snprintf(x.dir, sizeof x.dir, "%s", o->out_dir ? o->out_dir : "out");
        char cdir[1100];
        snprintf(cdir, sizeof cdir, "%s/cache", x.dir);
        if (mkdir_p(x.dir) || mkdir_p(cdir))
            rc = sw_fail(err, SW_EIO, "%s: cannot create directory: %s", x.dir, strerror(errno));
    }
    if (!rc && !skip) {
        x.bin_hash = file_hash(o->swapsim);
        if (!x.bin_hash)
            rc = sw_fail(err, SW_EIO, "%s: cannot read the swapsim binary", o->swapsim);
    }
    if (!rc && !skip)
        rc = expand_grid(&x, &r);
    /* several ranks: none goes on unless all can, with the same grid */
    if (o->link)
        rc = agree_setup(&x, o->link, rc, &skip);
    if (!rc && skip) {
        fprintf(stderr, "[%s] skipped: %s is absent (give the recorded data with --data DIR)\n",
                x.name, skipped);
    } else if (!rc && o->dry_run) {
        for (size_t i = 0; i < x.ncells; i++) {
            sw_buf b;
            sw_buf_init(&b);
            argv_text(x.cells[i].argv, x.cells[i].argc, &b);
            printf("swapsim %s\n", b.data ? b.data : "");
            sw_buf_free(&b);
        }
    } else if (!rc) {
        rc = run_all(&x);
        if (!rc && (!o->link || o->link->rank == 0) && !o->no_csv)
            rc = exp_write_csv(&x);
        for (size_t i = 0; !rc && o->cell_done && i < x.ncells; i++)
            o->cell_done(o->ud, i, x.cells[i].status, x.cells[i].output ? x.cells[i].output : "",
                         x.cells[i].message ? x.cells[i].message : "");
    }
    free_exp(&x);
    sw_free(text);
    return rc;
}
