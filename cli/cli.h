/* cli.h: shared helpers of the swapsim command line: the declarative option
   tables every command parses its arguments with (opts.c), messages, and the
   device and generator options several commands share (main.c). */
#ifndef CLI_H
#define CLI_H

#include "../common/params.h"
#include "../profiles/device.h"
#include "../profiles/graph.h"

#define EXIT_USER 1  /* bad input, bad option value, impossible request: one-line message */
#define EXIT_USAGE 2 /* bad command line (unknown option, missing value or argument) */

/* Values of a repeated option (--set KEY=VALUE...), of a variable number of
   positional arguments (FILE...), or a generator's --KEY VALUE options
   (item: KEY, val: VALUE; val NULL: item is "KEY=VALUE"), in command-line order. */
#define CLI_LIST_MAX 64
typedef struct cli_list {
    const char *item[CLI_LIST_MAX]; /* the values (points into argv) */
    const char *val[CLI_LIST_MAX];  /* generator options: the value of item; otherwise NULL */
    int n;                          /* how many */
} cli_list;

/* cli_opt.flags */
enum {
    CLI_REQUIRED = 1 << 0,  /* must be given */
    CLI_MULTI = 1 << 1,     /* may be repeated: PT_STRING values appended to a cli_list */
    CLI_ANY = 1 << 2,       /* stands for every other --KEY VALUE, --KEY=VALUE, or a boolean
                               --KEY alone (cli_cmd.any_params): generator options, into a
                               cli_list and checked by the generator */
    CLI_INT64 = 1 << 3,     /* PT_INT into an int64_t (default: an int) */
    CLI_FRACTION = 1 << 4,  /* PT_SIZE may also be a fraction of the ideal peak (0.4x) */
    CLI_ABOVE_MIN = 1 << 5, /* PT_INT, PT_FLOAT: greater than min, not equal */
    CLI_KEYVAL = 1 << 6,    /* PT_STRING of the form KEY=VALUE */
    CLI_OUTPUT = 1 << 7     /* PT_STRING, a file the command writes: cli_parse checks it can
                               be written before the command starts (cli_check_output) */
};

/* One option of a command. The type is one of params.h's: PT_BOOL is a flag
   (no value; sets the int at dst to 1); PT_INT an int (int64_t with
   CLI_INT64); PT_FLOAT and PT_SECONDS a double; PT_CHOICE the int index of
   the value among choices; PT_STRING a const char * (a cli_list with
   CLI_MULTI or CLI_ANY); PT_SIZE the checked text as a const char *, since
   a fraction needs the profile (planner_resolve_budget resolves it). Values
   are checked as params_check checks a --set KEY=VALUE of the same type. */
typedef struct cli_opt {
    const char *name;    /* long name without the dashes ("memory"); NULL ends a table */
    char short_name;     /* 'o' for -o, or 0 */
    param_type type;     /* what the value is (above) */
    void *dst;           /* where it is stored (above) */
    const char *def;     /* default stored at dst before parsing, shown in the help (NULL: dst
                            keeps the value the command put there) */
    const char *meta;    /* the value's name in the help ("SIZE"); NULL: from the type */
    const char *help;    /* one paragraph, wrapped by the help (\n forces a line break) */
    const char *choices; /* PT_CHOICE: "a|b|c" */
    double min, max;     /* PT_INT, PT_FLOAT bounds, inclusive; ignored if min >= max (max
                            INFINITY: no upper bound) */
    int flags;           /* CLI_* above */
} cli_opt;

#define CLI_MANY 1000 /* cli_pos.max: any number */

/* A positional argument, or a run of them (max > 1: into a cli_list). */
typedef struct cli_pos {
    const char *name; /* "PROFILE"; NULL ends a table */
    const char *help; /* one paragraph for the help */
    int min, max;     /* how many: 1,1 one; 0,1 optional; 1,CLI_MANY one or more */
    void *dst;        /* max 1: a const char * (left alone when absent); else a cli_list */
} cli_pos;

/* A command: its tables and the text of its --help. */
typedef struct cli_cmd {
    const char *name;            /* "plan": messages say "swapsim plan: ..." */
    const char *about;           /* description after the usage line (hand-wrapped lines) */
    const cli_pos *args;         /* positional arguments (NULL: none) */
    const cli_opt *opts;         /* options (NULL: none but --help) */
    const param_def *any_params; /* CLI_ANY: the named generator's options (booleans may be
                                    given alone); may be NULL */
    void (*more)(sw_buf *b);     /* appends more help at the end (import: the formats) */
    int brief;                   /* usage line: arguments, required options, "[options]" */
} cli_cmd;

/* Parse argv[1..argc-1] (argv[0] is the command's name) for c: store every
   value at its destination after the defaults, check types, bounds, counts
   and required options. "--" ends the options. Returns 0; CLI_HELP when the
   arguments ask for --help (nothing stored); EXIT_USAGE (unknown option,
   missing value, repeated option, wrong number of arguments) or EXIT_USER
   (a bad value), with the one-line message, without "swapsim CMD: ", in err. */
#define CLI_HELP (-1)
int cli_parse_args(const cli_cmd *c, int argc, char **argv, sw_err *err);
/* cli_parse_args for a command: returns 0 to go on, or 1 when the command
   is done with exit status *status: after printing the help (0), or the
   message on stderr as "swapsim CMD: ..." (usage errors add "(see 'swapsim
   CMD --help')"). */
int cli_parse(const cli_cmd *c, int argc, char **argv, int *status);
/* Append c's --help, generated from its tables, to b. */
void cli_help(const cli_cmd *c, sw_buf *b);

/* "swapsim: MESSAGE" on stderr; returns code. */
int cli_fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "swapsim CMD: MESSAGE (see 'swapsim CMD --help')" on stderr; returns EXIT_USAGE. */
int cli_usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Print an sw_err as the one-line message; returns EXIT_USER. */
int cli_error(const sw_err *e);
/* The one-line "unknown WHAT 'NAME' (expected one of: A, B, ...)" for a name
   not among the count names of a registry (name_at(i): the i-th name; none:
   "none registered"). Returns EXIT_USER. */
int cli_unknown_name(const char *what, const char *name, size_t count,
                     const char *(*name_at)(size_t i));

/* Device selection shared by several commands: --device NAME|FILE and
   repeated --device-set KEY=VALUE (two cli_opt entries pointing here). */
typedef struct cli_device {
    const char *name; /* --device: a built-in name or a device file, or NULL */
    cli_list sets;    /* --device-set KEY=VALUE, in order */
} cli_device;
#define CLI_DEVICE_META "NAME|FILE" /* --device's value in the help */
/* Resolve into spec, starting from base (the profile's device) unless a name
   or file was given (dev_resolve: a built-in name, else a device file,
   docs/devices.md). Returns 0 or EXIT_USER (message printed). */
int cli_device_resolve(const cli_device *d, const dev_spec *base, dev_spec *out);
/* Warns on stderr, in one line, when no operator of g (read from path) has a
   time: a recording without GPU times. */
void cli_warn_no_times(const graph_profile *g, const char *path);
int cli_device_any(const cli_device *d);

/* A generator's or importer's parameters (defs, set from kv: the CLI_ANY and
   --set KEY=VALUE options) and device (v100 unless dv says otherwise). On
   error prints "WHAT: message", leaves nothing to free and returns
   EXIT_USER; on success the caller frees ps. Dashes in keys read as
   underscores. */
int cli_kv_prepare(const cli_list *kv, const cli_device *dv, const param_def *defs,
                   const char *what, param_set *ps, dev_spec *dev);

/* Under an MPI launcher (mpirun, srun; docs/cluster.md), start MPI for
   command `what` and set *m; not under one (or one rank of a swapsim built
   without MPI), set *m to NULL and do nothing. Every rank but 0 is then
   silent: rank 0 reports for all. Returns 0, or an exit status after one
   line (several ranks of a swapsim built without MPI). main ends MPI
   (cli_mpi_end) when the command returns. */
struct swmpi;
int cli_mpi_start(const char *what, struct swmpi **m);
/* This process's rank (0 when not under MPI): only rank 0 writes results. */
int cli_mpi_rank(void);
/* The cores this process should use: those it is bound to (taskset, Slurm,
   mpirun --bind-to), else the machine's, shared among the MPI ranks on it. */
int cli_cores(void);
void cli_mpi_end(void);

/* --json (opts.c): cli_parse turns it on for a command given --json; then
   every failure reported through cli_fail, cli_error, cli_usage or the
   parser is also one JSON object on standard output,
   {"ok":false,"error":MSG,"exit_status":N}, plus "fits":false,"reason":MSG
   after cli_json_nofit (or a cli_error of SW_ENOFIT). A command that has
   printed its own JSON outcome calls cli_json_said (no second object). */
void cli_json_begin(int on);
int cli_json_on(void);
void cli_json_said(void);
void cli_json_nofit(void);

/* 1 if v is a number without a unit ("16"): sizes on the command line need
   one (opts.c refuses a bare PT_SIZE value). */
int cli_size_bare(const char *v);
/* 1 if --memory text (resolved to budget) is an absolute size above dev's
   memory, which plan, run and bound refuse without --allow-oversubscribe. A
   fraction of the peak (0.8x) is a ratio to study, not a device's memory:
   the experiments give models beyond the GPU such budgets, so it passes. */
int cli_over_device(const char *memory, int64_t budget, const dev_spec *dev);

/* Interrupts (interrupt.c). cli_interrupt_install catches SIGINT and SIGTERM
   (once: a second one ends the process at once) so that a search can stop
   and keep its work: pass cli_stop_hook as planner_opts.stop, and after the
   planner returns, finish (verify, write, print) and end with
   cli_interrupt_end. A planner that does not stop gets `grace_s` seconds
   after the signal before the process ends with one line and 128 + signal
   (0: no limit); cli_interrupt_done cancels that once the planner is back. */
void cli_interrupt_install(const char *planner, int grace_s);
void cli_interrupt_done(void);
int cli_interrupted(void); /* the signal caught, or 0 */
int cli_stop_hook(void *ud, long work);
long cli_interrupt_work(void); /* the work the search last reported (evaluations) */
/* "swapsim: interrupted (SIGINT) after N evaluations; DONE" on stderr;
   returns 128 + the signal (130, 143). */
int cli_interrupt_end(const char *done);
/* Check before any work that path (an output; "-" and NULL pass) can be
   written: not a directory, creatable. Leaves an existing file as it was and
   creates none. Returns 0 or EXIT_USER after "WHAT PATH: why". (opts.c;
   cli_parse calls it for every CLI_OUTPUT option given.) */
int cli_check_output(const char *path, const char *what);
/* --progress auto|none|bar|lines (choice index 0-3) as planner_opts.progress
   (0 none, 1 bar, 2 lines); auto: $SWAPSIM_PROGRESS if it names one, else a
   bar on a terminal and lines elsewhere. */
#define CLI_PROGRESS_CHOICES "auto|none|bar|lines"
int cli_progress_mode(int choice);

/* GiB, for messages. */
double cli_gib(int64_t bytes);

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
int cmd_calibrate_device(int argc, char **argv);
int cmd_bound(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_colocate(int argc, char **argv);
int cmd_tradeoff(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_sweep(int argc, char **argv);

#endif
