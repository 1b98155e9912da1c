/* cli.h: shared helpers of the swapsim command line. */
#ifndef CLI_H
#define CLI_H

#include "../common/params.h"
#include "../profiles/device.h"
#include "../profiles/graph.h"

#define EXIT_USER 1  /* bad input, impossible request: one-line message */
#define EXIT_USAGE 2 /* bad command line */

typedef struct cli_args {
    int argc;
    char **argv;
    int i;
    const char *cmd;
    const char *pos[8]; /* positional arguments */
    int npos;
} cli_args;

/* Match "--name VALUE" or "--name=VALUE" at the cursor: 1 matched (cursor
   advanced, *val set), 0 no match, -1 missing value (message printed). */
int cli_opt(cli_args *a, const char *name, const char **val);
/* Match "--name": 1 matched, 0 no. */
int cli_flag(cli_args *a, const char *name);
/* Take a positional argument at the cursor if it is one: 1 taken, 0 not,
   -1 too many (message printed). */
int cli_positional(cli_args *a);
/* Print "swapsim CMD: unknown option ..." and return EXIT_USAGE. */
int cli_unknown(cli_args *a);

int cli_fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int cli_usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Print an sw_err as the one-line message; returns EXIT_USER. */
int cli_error(const sw_err *e);

/* Device selection shared by several commands: --device NAME and repeated
   --device-set KEY=VALUE. */
typedef struct cli_device {
    const char *name;
    const char *sets[32];
    int nsets;
} cli_device;
/* Try to consume a device option at the cursor: 1 consumed, 0 not, -1 error. */
int cli_device_opt(cli_args *a, cli_device *d);
/* Resolve into spec, starting from base (the profile's device) unless a name
   was given. Returns 0 or EXIT_USER (message printed). */
int cli_device_resolve(const cli_device *d, const dev_spec *base, dev_spec *out);
int cli_device_any(const cli_device *d);

/* Options of a generator or importer, given as --KEY VALUE, --KEY=VALUE or
   --set KEY=VALUE (dashes in KEY read as underscores). */
typedef struct cli_kv {
    const char *key[64], *val[64]; /* val NULL: key holds "KEY=VALUE" */
    int n;
} cli_kv;
/* Consume one such option at the cursor: 1 consumed, 0 not, -1 usage error.
   A boolean option of defs (may be NULL) given alone ("--inference") is true. */
int cli_kv_opt(cli_args *a, cli_kv *kv, const param_def *defs);
/* A generator's or importer's parameters (defs, set from kv) and device (v100
   unless dv says otherwise). On error prints "WHAT: message", leaves nothing
   to free and returns EXIT_USER; on success the caller frees ps. */
int cli_kv_prepare(const cli_kv *kv, const cli_device *dv, const param_def *defs,
                   const char *what, param_set *ps, dev_spec *dev);
/* The index of v among the '|'-separated choices, or -1. */
int cli_choice(const char *v, const char *choices);

int cmd_devices(int argc, char **argv);
int cmd_planners(int argc, char **argv);
int cmd_models(int argc, char **argv);
int cmd_model(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_plan(int argc, char **argv);
int cmd_simulate(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_import(int argc, char **argv);
int cmd_experiment(int argc, char **argv);
int cmd_table(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_calibrate(int argc, char **argv);
int cmd_table1(int argc, char **argv);
int cmd_dtr_parity(int argc, char **argv);
int cmd_replay(int argc, char **argv);
int cmd_profile(int argc, char **argv);

#endif
