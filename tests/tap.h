/* tap.h: a minimal TAP producer for the test programs (run by prove).
   Asserts print both values on failure, like libuv's. */
#ifndef TAP_H
#define TAP_H

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int tap_n, tap_failed;
static const char *tap_test_name; /* the named test running now (tap_run), or NULL */

static inline void tap_ok(int cond, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static inline void tap_ok(int cond, const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("%sok %d - ", cond ? "" : "not ", ++tap_n);
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    if (!cond) {
        tap_failed++;
        if (tap_test_name)
            printf("#   failed in test %s at %s:%d\n", tap_test_name, file, line);
        else
            printf("#   failed at %s:%d\n", file, line);
    }
    fflush(stdout);
}

#define OK(cond, ...) tap_ok(!!(cond), __FILE__, __LINE__, __VA_ARGS__)

#define IS_INT(got, want, ...)                                                                    \
    do {                                                                                          \
        long long g_ = (long long)(got), w_ = (long long)(want);                                  \
        tap_ok(g_ == w_, __FILE__, __LINE__, __VA_ARGS__);                                        \
        if (g_ != w_)                                                                             \
            printf("#   got %lld, expected %lld\n", g_, w_);                                      \
    } while (0)

#define IS_NUM(got, want, tol, ...)                                                               \
    do {                                                                                          \
        double g_ = (double)(got), w_ = (double)(want);                                           \
        int c_ = fabs(g_ - w_) <= (tol);                                                          \
        tap_ok(c_, __FILE__, __LINE__, __VA_ARGS__);                                              \
        if (!c_)                                                                                  \
            printf("#   got %.12g, expected %.12g (tolerance %g)\n", g_, w_, (double)(tol));      \
    } while (0)

#define IS_STR_HAS(got, needle, ...)                                                              \
    do {                                                                                          \
        const char *g_ = (got), *n_ = (needle);                                                   \
        int c_ = g_ && strstr(g_, n_) != NULL;                                                    \
        tap_ok(c_, __FILE__, __LINE__, __VA_ARGS__);                                              \
        if (!c_)                                                                                  \
            printf("#   '%s'\n#   does not contain '%s'\n", g_ ? g_ : "(null)", n_);              \
    } while (0)

static inline void tap_skip_all(const char *why)
{
    printf("1..0 # SKIP %s\n", why);
    exit(0);
}

static inline void tap_skip(int n, const char *why)
{
    for (int i = 0; i < n; i++)
        printf("ok %d # SKIP %s\n", ++tap_n, why);
}

static inline int tap_done(void)
{
    printf("1..%d\n", tap_n);
    return tap_failed ? 1 : 0;
}

/* Named tests (libuv style): a program lists its tests in a table and ends
   with return tap_run(tests, n, argc, argv). Each test's TAP lines follow a
   "# name" line, and a failure names its test. With arguments, only the
   tests named run (`build/rel/tests/test_sim duplex_copies`); with -NAME
   arguments only, every test but those (how `make test` runs one program
   as two prove jobs: the Makefile's TEST_PARTS). */
typedef struct tap_test {
    const char *name;
    void (*fn)(void);
} tap_test;

static inline int tap_run(const tap_test *tests, size_t n, int argc, char **argv)
{
    int excluding = 0, selecting = 0;
    for (int a = 1; a < argc; a++) {
        const char *name = argv[a] + (argv[a][0] == '-');
        if (argv[a][0] == '-')
            excluding = 1;
        else
            selecting = 1;
        size_t i = 0;
        while (i < n && strcmp(tests[i].name, name) != 0)
            i++;
        if (i == n) {
            fprintf(stderr, "%s: no test named %s\n", argv[0], name);
            return 2;
        }
    }
    if (excluding && selecting) {
        fprintf(stderr, "%s: name tests to run or -tests to leave out, not both\n", argv[0]);
        return 2;
    }
    for (size_t i = 0; i < n; i++) {
        int chosen = argc < 2 || excluding;
        for (int a = 1; a < argc; a++)
            if (!strcmp(tests[i].name, argv[a] + excluding))
                chosen = !excluding;
        if (!chosen)
            continue;
        printf("# %s\n", tests[i].name);
        tap_test_name = tests[i].name;
        int before = tap_failed;
        tests[i].fn();
        if (tap_failed > before)
            printf("# %s: %d failed\n", tests[i].name, tap_failed - before);
        tap_test_name = NULL;
    }
    return tap_done();
}

/* Where the recorded data lives (data/ of the repository; SWAPSIM_DATA, set
   by the Makefile, overrides it), or NULL when that directory is missing
   (tests that need it then skip, and say so). */
static inline const char *tap_data_dir(void)
{
    const char *d = getenv("SWAPSIM_DATA");
    if (!d || !*d)
        d = "data";
    char p[4096];
    snprintf(p, sizeof p, "%s/dtr-logs", d);
    FILE *f = fopen(p, "r");
    if (!f)
        return NULL;
    fclose(f);
    return d;
}

#endif
