/* cache.c: a cache of solves on disk, for the test suite. Where the
   environment names a directory (SWAPSIM_MILP_CACHE), a solve whose result
   the clock cannot change (no time limit, or one of an hour or more: the
   tests stop every solve by a node limit) is looked up there by a digest of
   everything the backend reads: the model (bounds, costs, integrality, rows,
   the start), the options, the backend and, for a relaxation, the method,
   salted by SWAPSIM_MILP_CACHE_SALT (the Makefile's: a checksum of milp/'s
   sources and the solver's version). A hit returns the stored result; a
   miss solves and stores it. The same program solved again, in the same
   run or the next (`make test SANITIZE=1` after `make test`, as CI runs
   them), is then read instead of solved: CBC's search is deterministic
   under a node limit, so the result is the one a solve would return (solve_s
   is the first solve's). Without the variable nothing is cached. */
#include "backend.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CACHE_MAGIC 0x31434d53u /* "SMC1" */

typedef struct digest {
    uint64_t a, b; /* two FNV-1a streams with different offsets */
} digest;

static void mix(digest *d, const void *p, size_t n)
{
    const unsigned char *c = p;
    for (size_t i = 0; i < n; i++) {
        d->a = (d->a ^ c[i]) * 1099511628211ull;
        d->b = (d->b ^ c[i]) * 1099511628211ull;
    }
    /* the length too, so that adjacent arrays cannot trade bytes */
    uint64_t len = n;
    const unsigned char *l = (const unsigned char *)&len;
    for (size_t i = 0; i < sizeof len; i++) {
        d->a = (d->a ^ l[i]) * 1099511628211ull;
        d->b = (d->b ^ l[i]) * 1099511628211ull;
    }
}

const char *milp_cache_dir(const milp_opts *o)
{
    const char *dir = getenv("SWAPSIM_MILP_CACHE");
    if (!dir || !*dir)
        return NULL;
    if (o && o->time_limit_s > 0 && o->time_limit_s < 3600)
        return NULL; /* a clock could stop it: not repeatable */
    return dir;
}

static void key_of(const milp *m, const milp_opts *o, const char *backend, int lp_method,
                   char *path, size_t cap, const char *dir)
{
    digest d = {14695981039346656037ull, 0x84222325cbf29ce4ull};
    const char *salt = getenv("SWAPSIM_MILP_CACHE_SALT");
    mix(&d, "swapsim-milp-cache-1", 20);
    if (salt)
        mix(&d, salt, strlen(salt));
    mix(&d, backend, strlen(backend));
    mix(&d, &lp_method, sizeof lp_method);
    milp_opts oo = {0};
    if (o) {
        oo.time_limit_s = o->time_limit_s;
        oo.max_nodes = o->max_nodes;
        oo.rel_gap = o->rel_gap;
    }
    mix(&d, &oo.time_limit_s, sizeof oo.time_limit_s);
    mix(&d, &oo.max_nodes, sizeof oo.max_nodes);
    mix(&d, &oo.rel_gap, sizeof oo.rel_gap);
    size_t nv = (size_t)m->nvar, nr = (size_t)m->nrow;
    mix(&d, &m->nvar, sizeof m->nvar);
    mix(&d, &m->nrow, sizeof m->nrow);
    mix(&d, m->lb, nv * sizeof *m->lb);
    mix(&d, m->ub, nv * sizeof *m->ub);
    mix(&d, m->cost, nv * sizeof *m->cost);
    mix(&d, m->integer, nv * sizeof *m->integer);
    mix(&d, m->rlo, nr * sizeof *m->rlo);
    mix(&d, m->rhi, nr * sizeof *m->rhi);
    size_t nz = nr ? (size_t)m->rstart[nr] : 0;
    if (nr)
        mix(&d, m->rstart, (nr + 1) * sizeof *m->rstart);
    mix(&d, m->ridx, nz * sizeof *m->ridx);
    mix(&d, m->rval, nz * sizeof *m->rval);
    int has_start = m->start != NULL;
    mix(&d, &has_start, sizeof has_start);
    if (has_start)
        mix(&d, m->start, nv * sizeof *m->start);
    snprintf(path, cap, "%s/%016llx%016llx", dir, (unsigned long long)d.a,
             (unsigned long long)d.b);
}

/* The solver names results point to (milp_result.solver is a static
   string): interned, a few at most. */
static const char *intern(const char *s)
{
    static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    static char names[8][64];
    static int n;
    const char *r = "cached";
    pthread_mutex_lock(&mu);
    for (int i = 0; i < n; i++)
        if (!strcmp(names[i], s)) {
            r = names[i];
            goto done;
        }
    if (n < 8) {
        snprintf(names[n], sizeof names[n], "%s", s);
        r = names[n++];
    }
done:
    pthread_mutex_unlock(&mu);
    return r;
}

/* The record: magic, status, objective, bound, gap, solve_s, nodes, the
   solver's name (64 bytes), nvar, has_x, x. */
int milp_cache_get(milp *m, const milp_opts *o, const char *backend, int lp_method,
                   milp_result *r)
{
    const char *dir = milp_cache_dir(o);
    if (!dir)
        return 0;
    char path[1024];
    key_of(m, o, backend, lp_method, path, sizeof path, dir);
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    uint32_t magic = 0;
    int status = 0, nvar = 0, has_x = 0;
    double v[4];
    long nodes = 0;
    char name[64];
    int ok = fread(&magic, sizeof magic, 1, f) == 1 && magic == CACHE_MAGIC &&
             fread(&status, sizeof status, 1, f) == 1 && fread(v, sizeof v, 1, f) == 1 &&
             fread(&nodes, sizeof nodes, 1, f) == 1 && fread(name, sizeof name, 1, f) == 1 &&
             fread(&nvar, sizeof nvar, 1, f) == 1 && fread(&has_x, sizeof has_x, 1, f) == 1 &&
             nvar == m->nvar && status >= MILP_OPTIMAL && status <= MILP_NOSOLUTION;
    double *x = NULL;
    if (ok && has_x) {
        x = sw_malloc((size_t)(nvar ? nvar : 1) * sizeof *x);
        ok = x && fread(x, sizeof *x, (size_t)nvar, f) == (size_t)nvar;
    }
    ok = ok && fgetc(f) == EOF;
    fclose(f);
    if (!ok) {
        sw_free(x);
        return 0;
    }
    name[sizeof name - 1] = 0;
    memset(r, 0, sizeof *r);
    r->status = (milp_status)status;
    r->objective = v[0];
    r->bound = v[1];
    r->gap = v[2];
    r->solve_s = v[3];
    r->nodes = nodes;
    r->solver = intern(name);
    sw_free(m->x);
    m->x = x;
    r->x = x;
    return 1;
}

void milp_cache_put(const milp *m, const milp_opts *o, const char *backend, int lp_method,
                    const milp_result *r)
{
    const char *dir = milp_cache_dir(o);
    if (!dir)
        return;
    char path[1024], tmp[1100];
    key_of(m, o, backend, lp_method, path, sizeof path, dir);
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    if (!f)
        return; /* (no cache: the solve stands) */
    uint32_t magic = CACHE_MAGIC;
    int status = (int)r->status, nvar = m->nvar, has_x = r->x != NULL;
    double v[4] = {r->objective, r->bound, r->gap, r->solve_s};
    char name[64] = {0};
    snprintf(name, sizeof name, "%s", r->solver ? r->solver : "");
    int ok = fwrite(&magic, sizeof magic, 1, f) == 1 && fwrite(&status, sizeof status, 1, f) == 1 &&
             fwrite(v, sizeof v, 1, f) == 1 && fwrite(&r->nodes, sizeof r->nodes, 1, f) == 1 &&
             fwrite(name, sizeof name, 1, f) == 1 && fwrite(&nvar, sizeof nvar, 1, f) == 1 &&
             fwrite(&has_x, sizeof has_x, 1, f) == 1 &&
             (!has_x || fwrite(r->x, sizeof *r->x, (size_t)nvar, f) == (size_t)nvar);
    ok = fclose(f) == 0 && ok;
    /* rename is atomic: a reader sees the whole record or none */
    if (!ok || rename(tmp, path) != 0)
        remove(tmp);
}
