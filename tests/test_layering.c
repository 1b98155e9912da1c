/* test_layering.c: the map of the tree is checked. docs/design.md holds the
   floors of the folders in a fenced ```layers block (the one source); every
   quoted #include of every .c and .h under the code folders is resolved to
   a path, and the test fails, naming file:line and the rule, when an
   include reaches a higher floor or another folder of the same floor
   (unless the map lists that pair as an exception), when it cannot be
   resolved, when a top-level folder exists that the map does not name, or
   when a top-level planners/ file includes another planner's header (only
   planner.h, its own header and planners/lib/ are allowed). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tap.h"

#define MAXF 64 /* folders in the map */

typedef struct layers {
    char name[MAXF][32]; /* folder */
    int floor[MAXF];     /* 1, 2, ...; 0: holds no C code (its files are not checked) */
    int n;
    char exc_from[MAXF][32], exc_to[MAXF][32]; /* FROM may include TO (listed exceptions) */
    int n_exc;
} layers;

static char root[4096];

static int folder_index(const layers *m, const char *name)
{
    for (int i = 0; i < m->n; i++)
        if (!strcmp(m->name[i], name))
            return i;
    return -1;
}

/* Parse the ```layers block of text into m: lines "FLOOR FOLDER...",
   "- FOLDER..." (no C code) and "+ FROM TO" (an exception); '#' starts a
   comment. Returns 0, or -1 with why set. */
static int parse_layers(const char *text, layers *m, char *why, size_t nwhy)
{
    memset(m, 0, sizeof *m);
    const char *s = strstr(text, "\n```layers\n");
    if (!s) {
        snprintf(why, nwhy, "no ```layers block");
        return -1;
    }
    s += strlen("\n```layers\n");
    const char *end = strstr(s, "\n```");
    if (!end) {
        snprintf(why, nwhy, "the ```layers block does not end");
        return -1;
    }
    int line = 0;
    while (s < end) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        size_t len = nl ? (size_t)(nl - s) : (size_t)(end - s);
        char buf[512], *save = NULL;
        snprintf(buf, sizeof buf, "%.*s", (int)(len < sizeof buf ? len : sizeof buf - 1), s);
        s += len + 1;
        line++;
        char *hash = strchr(buf, '#');
        if (hash)
            *hash = 0;
        char *tok = strtok_r(buf, " \t", &save);
        if (!tok)
            continue;
        if (!strcmp(tok, "+")) {
            char *from = strtok_r(NULL, " \t", &save), *to = strtok_r(NULL, " \t", &save);
            if (!from || !to || m->n_exc == MAXF) {
                snprintf(why, nwhy, "layers line %d: expected '+ FROM TO'", line);
                return -1;
            }
            snprintf(m->exc_from[m->n_exc], sizeof m->exc_from[0], "%s", from);
            snprintf(m->exc_to[m->n_exc++], sizeof m->exc_to[0], "%s", to);
            continue;
        }
        int floor = 0;
        if (strcmp(tok, "-")) {
            char *e;
            floor = (int)strtol(tok, &e, 10);
            if (*e || floor < 1) {
                snprintf(why, nwhy, "layers line %d: expected a floor (1, 2, ...), '-' or '+', "
                         "got '%s'", line, tok);
                return -1;
            }
        }
        while ((tok = strtok_r(NULL, " \t", &save)) != NULL) {
            if (m->n == MAXF || folder_index(m, tok) >= 0) {
                snprintf(why, nwhy, "layers line %d: folder '%s' named twice (or too many)",
                         line, tok);
                return -1;
            }
            snprintf(m->name[m->n], sizeof m->name[0], "%s", tok);
            m->floor[m->n++] = floor;
        }
    }
    return 0;
}

static int is_exception(const layers *m, const char *from, const char *to)
{
    for (int i = 0; i < m->n_exc; i++)
        if (!strcmp(m->exc_from[i], from) && !strcmp(m->exc_to[i], to))
            return 1;
    return 0;
}

/* The rule an include from folder `from` to folder `to` breaks, or NULL. */
static const char *layer_rule(const layers *m, const char *from, const char *to)
{
    int a = folder_index(m, from), b = folder_index(m, to);
    if (a < 0 || b < 0)
        return "a folder the map does not name";
    if (a == b || is_exception(m, from, to))
        return NULL;
    if (m->floor[b] == 0)
        return "includes a folder that holds no library code";
    if (m->floor[b] > m->floor[a])
        return "crosses a floor upward";
    if (m->floor[b] == m->floor[a])
        return "includes another folder of its own floor";
    return NULL;
}

/* Normalise a/b/../c into dst (relative to root: no leading "./"). */
static void normalise(const char *path, char *dst, size_t n)
{
    char parts[64][256];
    int np = 0;
    char *buf = strdup(path);
    char *save = NULL;
    if (!buf) {
        dst[0] = 0;
        return;
    }
    for (char *t = strtok_r(buf, "/", &save); t; t = strtok_r(NULL, "/", &save)) {
        if (!strcmp(t, "."))
            continue;
        if (!strcmp(t, "..")) {
            np = np > 0 ? np - 1 : 0;
            continue;
        }
        if (np < 64)
            snprintf(parts[np++], sizeof parts[0], "%s", t);
    }
    free(buf);
    dst[0] = 0;
    for (int i = 0; i < np; i++) {
        size_t l = strlen(dst);
        snprintf(dst + l, n - l, "%s%s", i ? "/" : "", parts[i]);
    }
}

static int exists(const char *rel)
{
    char p[8192];
    struct stat st;
    snprintf(p, sizeof p, "%s/%s", root, rel);
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static int is_dir(const char *rel)
{
    char p[8192];
    struct stat st;
    snprintf(p, sizeof p, "%s/%s", root, rel);
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static char *slurp(const char *rel)
{
    char p[8192];
    snprintf(p, sizeof p, "%s/%s", root, rel);
    FILE *f = fopen(p, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
        free(s);
        s = NULL;
    }
    if (s)
        s[n] = 0;
    fclose(f);
    return s;
}

/* The top-level folder of a path relative to root ("sim/plan.h": "sim"). */
static void top_of(const char *rel, char *dst, size_t n)
{
    size_t l = strcspn(rel, "/");
    snprintf(dst, n, "%.*s", (int)l, rel);
}

/* The stem of a file name ("planners/dtr.c": "dtr"). */
static void stem_of(const char *rel, char *dst, size_t n)
{
    const char *b = strrchr(rel, '/');
    b = b ? b + 1 : rel;
    size_t l = strcspn(b, ".");
    snprintf(dst, n, "%.*s", (int)l, b);
}

/* The planners rule: a file directly in planners/ includes `to` (resolved):
   another top-level planners/ header than planner.h and its own. */
static int planners_breach(const char *from, const char *to)
{
    if (strncmp(from, "planners/", 9) || strchr(from + 9, '/'))
        return 0;
    if (strncmp(to, "planners/", 9) || strchr(to + 9, '/'))
        return 0; /* outside planners/, or in planners/lib/ */
    char a[256], b[256];
    stem_of(from, a, sizeof a);
    stem_of(to, b, sizeof b);
    return strcmp(b, "planner") && strcmp(a, b);
}

typedef struct scan {
    const layers *m;
    int files, includes;
    int upward, unresolved, planners; /* breaches of each rule */
    int long_files, long_functions;   /* breaches of the size limits */
    char planners_first[10000];
} scan;

/* The size limits (issue 33): no file over MAX_FILE_LINES lines, no function
   over MAX_FUNC_LINES lines, tests excluded. A function body is a '{' and
   a '}' in column 0 (the house style's layout of a function). */
enum { MAX_FILE_LINES = 1500, MAX_FUNC_LINES = 150 };

static void check_sizes(scan *sc, const char *rel, const char *text)
{
    int line = 0, open_at = 0;
    for (const char *s = text; *s;) {
        const char *nl = strchr(s, '\n');
        line++;
        if (*s == '{')
            open_at = line;
        else if (*s == '}' && open_at) {
            if (line - open_at - 1 > MAX_FUNC_LINES) {
                sc->long_functions++;
                printf("#   %s:%d: a function of %d lines (at most %d)\n", rel, open_at,
                       line - open_at - 1, MAX_FUNC_LINES);
            }
            open_at = 0;
        }
        if (!nl)
            break;
        s = nl + 1;
    }
    if (line > MAX_FILE_LINES) {
        sc->long_files++;
        printf("#   %s: %d lines (at most %d)\n", rel, line, MAX_FILE_LINES);
    }
}

static void check_file(scan *sc, const char *rel)
{
    char *text = slurp(rel);
    if (!text) {
        OK(0, "%s: cannot be read", rel);
        return;
    }
    sc->files++;
    char dir[4096], from_top[256];
    snprintf(dir, sizeof dir, "%s", rel);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = 0;
    else
        dir[0] = 0;
    top_of(rel, from_top, sizeof from_top);
    if (strcmp(from_top, "tests"))
        check_sizes(sc, rel, text);
    int line = 0;
    for (char *s = text; *s;) {
        char *nl = strchr(s, '\n');
        line++;
        char *p = s;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p == '#') {
            p++;
            while (*p == ' ' || *p == '\t')
                p++;
            if (!strncmp(p, "include", 7)) {
                p += 7;
                while (*p == ' ' || *p == '\t')
                    p++;
                char *q = *p == '"' ? strchr(p + 1, '"') : NULL;
                if (q && (!nl || q < nl)) {
                    char inc[1024], joined[5200], res[1024], to_top[256];
                    snprintf(inc, sizeof inc, "%.*s", (int)(q - p - 1), p + 1);
                    snprintf(joined, sizeof joined, "%s%s%s", dir, dir[0] ? "/" : "", inc);
                    normalise(joined, res, sizeof res);
                    sc->includes++;
                    if (!exists(res)) {
                        sc->unresolved++;
                        printf("#   %s:%d: #include \"%s\" resolves to %s, which is not a "
                               "file\n", rel, line, inc, res);
                    } else {
                        top_of(res, to_top, sizeof to_top);
                        const char *why = layer_rule(sc->m, from_top, to_top);
                        if (why) {
                            int fa = folder_index(sc->m, from_top);
                            int fb = folder_index(sc->m, to_top);
                            sc->upward++;
                            printf("#   %s:%d: #include \"%s\": %s/ (floor %d) -> %s/ (floor %d): "
                                   "%s (docs/design.md)\n", rel, line, inc, from_top,
                                   fa >= 0 ? sc->m->floor[fa] : -1, to_top,
                                   fb >= 0 ? sc->m->floor[fb] : -1, why);
                        }
                        if (planners_breach(rel, res)) {
                            if (!sc->planners++)
                                snprintf(sc->planners_first, sizeof sc->planners_first,
                                         "%s:%d includes %s", rel, line, res);
                            printf("#   %s:%d: #include \"%s\": a planner includes another "
                                   "planner's header (only planner.h and planners/lib/)\n", rel,
                                   line, inc);
                        }
                    }
                }
            }
        }
        if (!nl)
            break;
        s = nl + 1;
    }
    free(text);
}

/* Every .c and .h under rel (recursively), in name order. */
static void walk(scan *sc, const char *rel)
{
    char p[8192];
    snprintf(p, sizeof p, "%s/%s", root, rel);
    struct dirent **ents;
    int n = scandir(p, &ents, NULL, alphasort);
    for (int i = 0; i < n; i++) {
        const char *nm = ents[i]->d_name;
        char sub[4096];
        snprintf(sub, sizeof sub, "%s/%s", rel, nm);
        size_t l = strlen(nm);
        if (nm[0] == '.')
            ;
        else if (is_dir(sub))
            walk(sc, sub);
        else if (l > 2 && (!strcmp(nm + l - 2, ".c") || !strcmp(nm + l - 2, ".h")))
            check_file(sc, sub);
        free(ents[i]);
    }
    if (n >= 0)
        free(ents);
}

/* The rules themselves, on made-up folders: the checker can fail. */
static void rules_can_fail(const layers *m)
{
    OK(layer_rule(m, "sim", "planners") != NULL, "sim including planners/ is refused");
    OK(layer_rule(m, "common", "profiles") != NULL, "common including profiles/ is refused");
    OK(layer_rule(m, "profiles", "ga") != NULL, "profiles including ga/ (same floor) is refused");
    OK(layer_rule(m, "cli", "sharing") == NULL, "cli including sharing/ is allowed");
    OK(layer_rule(m, "planners", "sim") == NULL, "planners including sim/ is allowed");
    OK(layer_rule(m, "nosuchfolder", "common") != NULL, "a folder the map does not name is "
       "refused");
    OK(planners_breach("planners/hybrid.c", "planners/dtr_engine.h"),
       "a planner including another planner's header is a breach");
    OK(!planners_breach("planners/dtr.c", "planners/planner.h") &&
           !planners_breach("planners/dtr.c", "planners/lib/arena.h") &&
           !planners_breach("planners/lib/arena.c", "planners/dtr_engine.h"),
       "planner.h, planners/lib/ and lib/'s own includes are not breaches");
    layers bad;
    char why[256];
    OK(parse_layers("x\n```layers\n1 common\nzz sim\n```\n", &bad, why, sizeof why) != 0,
       "a map with a bad floor is refused (%s)", why);
}

int main(void)
{
    const char *data = getenv("SWAPSIM_DATA");
    snprintf(root, sizeof root, "%s", data && *data ? data : "data");
    char *sl = strrchr(root, '/');
    if (sl)
        *sl = 0;
    else
        snprintf(root, sizeof root, ".");
    char *doc = slurp("docs/design.md");
    if (!doc) { /* SWAPSIM_DATA outside the tree: the working directory, as make runs it */
        snprintf(root, sizeof root, ".");
        doc = slurp("docs/design.md");
    }
    if (!doc) {
        OK(0, "docs/design.md under %s: cannot be read", root);
        return tap_done();
    }
    layers m;
    char why[256] = "";
    int prc = parse_layers(doc, &m, why, sizeof why);
    free(doc);
    OK(prc == 0, "docs/design.md's ```layers map parses (%d folders, %d exceptions)%s%s", m.n,
       m.n_exc, prc ? ": " : "", why);
    if (prc)
        return tap_done();
    rules_can_fail(&m);

    /* every top-level folder is named */
    char p[8192];
    snprintf(p, sizeof p, "%s", root);
    struct dirent **ents;
    int n = scandir(p, &ents, NULL, alphasort), unnamed = 0;
    for (int i = 0; i < n; i++) {
        const char *nm = ents[i]->d_name;
        if (nm[0] != '.' && is_dir(nm) && folder_index(&m, nm) < 0) {
            unnamed++;
            printf("#   %s/: a folder the map (docs/design.md, ```layers) does not name\n", nm);
        }
    }
    OK(n > 0 && unnamed == 0, "every top-level folder is named in the map (%d not)", unnamed);

    /* the includes */
    scan sc = {&m, 0, 0, 0, 0, 0, 0, 0, ""};
    for (int i = 0; i < n; i++) {
        const char *nm = ents[i]->d_name;
        int k = folder_index(&m, nm);
        if (nm[0] != '.' && is_dir(nm) && k >= 0 && m.floor[k] > 0)
            walk(&sc, nm);
        free(ents[i]);
    }
    if (n >= 0)
        free(ents);
    OK(sc.files > 100 && sc.includes > 500, "scanned %d files, %d quoted includes", sc.files,
       sc.includes);
    OK(sc.unresolved == 0, "every quoted include resolves to a file (%d do not)", sc.unresolved);
    OK(sc.upward == 0, "no include crosses a floor upward or sideways (%d do)", sc.upward);
    /* the planners rule: a top-level planners/ file includes planner.h and
       planners/lib/ only, never another planner's header */
    OK(sc.long_files == 0, "no file over %d lines outside tests/ (%d are)", MAX_FILE_LINES,
       sc.long_files);
    OK(sc.long_functions == 0, "no function over %d lines outside tests/ (%d are)",
       MAX_FUNC_LINES, sc.long_functions);
    OK(sc.planners == 0, "no planner includes another planner's header (%d do%s%s)", sc.planners,
       sc.planners ? "; first: " : "", sc.planners ? sc.planners_first : "");
    return tap_done();
}
