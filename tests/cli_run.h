/* cli_run.h: running bin/swapsim from the command-line tests: capture its
   exit status, standard output and standard error (one scratch directory
   per test program, `dir`; the binary from SWAPSIM_BIN, `bin`). */
#ifndef CLI_RUN_H
#define CLI_RUN_H

#include <sys/wait.h>
#include <unistd.h>

#include "../common/sw.h"
#include "tap.h"

static char dir[256];
static const char *bin;

/* Run "swapsim ARGS" in dir; *out and *err (if not NULL) receive its
   standard output and error (caller frees). Returns the exit status. */
static inline int sh(const char *args, char **out, char **err)
{
    char cmd[8192];
    if (snprintf(cmd, sizeof cmd, "cd %s && %s %s >%s/out 2>%s/err", dir, bin, args, dir, dir) >=
        (int)sizeof cmd) {
        printf("# command line too long: %.60s...\n", args);
        if (out)
            *out = NULL;
        if (err)
            *err = NULL;
        return 127;
    }
    int st = system(cmd);
    int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
    char path[512];
    size_t len;
    sw_err e;
    snprintf(path, sizeof path, "%s/out", dir);
    if (out && sw_read_file(path, out, &len, &e))
        *out = NULL;
    snprintf(path, sizeof path, "%s/err", dir);
    if (err && sw_read_file(path, err, &len, &e))
        *err = NULL;
    return code;
}

/* For a program whose tests all run the binary: bin from SWAPSIM_BIN and a
   fresh scratch directory /tmp/swapsim-NAME-PID as dir; without either the
   whole program is skipped. */
static inline void cli_open(const char *name)
{
    bin = getenv("SWAPSIM_BIN");
    if (!bin || access(bin, X_OK) != 0)
        tap_skip_all("SWAPSIM_BIN not set (run through make test)");
    /* no progress lines among the one-line messages the tests read (a test
       of --progress asks for them) */
    setenv("SWAPSIM_PROGRESS", "none", 0);
    snprintf(dir, sizeof dir, "/tmp/swapsim-%s-%d", name, (int)getpid());
    char cmd[300];
    snprintf(cmd, sizeof cmd, "mkdir -p %s", dir);
    if (system(cmd) != 0)
        tap_skip_all("cannot create a scratch directory");
}

/* Remove the scratch directory; 0 if that worked. */
static inline int cli_close(void)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) != 0;
}

static inline int lines(const char *s)
{
    int n = 0;
    for (; s && *s; s++)
        n += *s == '\n';
    return n;
}

/* The command fails with exit code and exactly one line on stderr. */
static inline void expect_fail(const char *args, int code, const char *needle, const char *what)
{
    char *o = NULL, *e = NULL;
    int rc = sh(args, &o, &e);
    IS_INT(rc, code, "%s: exit %d", what, code);
    IS_INT(lines(e), 1, "%s: one line on stderr", what);
    if (needle)
        IS_STR_HAS(e, needle, "%s: message", what);
    sw_free(o);
    sw_free(e);
}

#endif
