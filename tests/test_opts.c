/* test_opts.c: the command line's declarative parser (cli/opts.c): both
   value forms, defaults, every type's bad value, unknown, missing and
   repeated options, positional counts, generator options, and the --help
   generated from a table. One named test each (tap_run). */
#include "../cli/cli.h"
#include "tap.h"

static struct {
    int json, threads, wait;
    int64_t seed;
    double scale, time;
    const char *memory, *out, *planner, *profile;
    cli_list sets;
} v;

static const cli_opt opts[] = {
    {.name = "planner", .type = PT_STRING, .dst = &v.planner, .meta = "NAME",
     .help = "planner ('swapsim planners' lists them)", .flags = CLI_REQUIRED},
    {.name = "memory", .type = PT_SIZE, .dst = &v.memory,
     .help = "device memory budget: 16GiB, 16G (binary), 16GB (decimal), 512MiB, plain bytes, or "
             "0.4x (a fraction of the ideal plan's peak memory)",
     .flags = CLI_FRACTION},
    {.name = "threads", .type = PT_INT, .dst = &v.threads, .def = "1", .min = 1, .max = 1024,
     .help = "worker threads"},
    {.name = "seed", .type = PT_INT, .dst = &v.seed, .def = "7", .min = 0, .max = INFINITY,
     .help = "random seed", .flags = CLI_INT64},
    {.name = "scale", .type = PT_FLOAT, .dst = &v.scale, .min = 0, .max = 1e6,
     .help = "real seconds per plan second", .flags = CLI_ABOVE_MIN},
    {.name = "time", .type = PT_SECONDS, .dst = &v.time, .help = "search time limit"},
    {.name = "wait", .type = PT_CHOICE, .dst = &v.wait, .def = "hybrid",
     .choices = "hybrid|spin|sleep", .help = "how ops wait out their time"},
    {.name = "set", .type = PT_STRING, .dst = &v.sets, .help = "a hyperparameter",
     .flags = CLI_MULTI | CLI_KEYVAL},
    {.name = "json", .type = PT_BOOL, .dst = &v.json, .help = "print one JSON object"},
    {.name = "output", .short_name = 'o', .type = PT_STRING, .dst = &v.out, .meta = "FILE",
     .help = "output plan (- for standard output)"},
    {.name = NULL}};

static const cli_pos args[] = {{"PROFILE", "the profile", 1, 1, &v.profile}, {NULL, NULL, 0, 0, NULL}};

static const cli_cmd cmd = {.name = "plan",
                            .about = "Make a plan.\n",
                            .args = args,
                            .opts = opts};

/* Parse "test " LINE (words split at spaces) for c after clearing v. */
static int parse(const cli_cmd *c, const char *line, sw_err *e)
{
    static char buf[1024];
    char *argv[64];
    int argc = 0;
    argv[argc++] = "test";
    snprintf(buf, sizeof buf, "%s", line);
    for (char *w = strtok(buf, " "); w && argc < 63; w = strtok(NULL, " "))
        argv[argc++] = w;
    argv[argc] = NULL;
    memset(&v, 0, sizeof v);
    e->msg[0] = 0;
    return cli_parse_args(c, argc, argv, e);
}

static void expect(const char *line, int code, const char *msg)
{
    sw_err e;
    int rc = parse(&cmd, line, &e);
    IS_INT(rc, code, "'%s': status %d", line, code);
    IS_STR_HAS(e.msg, msg, "'%s': message", line);
}

static void test_values(void)
{
    sw_err e;
    IS_INT(parse(&cmd, "p.json --planner none", &e), 0, "the least: a profile and --planner");
    OK(v.profile && !strcmp(v.profile, "p.json") && !strcmp(v.planner, "none"), "stored");
    OK(v.threads == 1 && v.seed == 7 && v.wait == 0, "defaults stored before parsing");
    OK(!v.memory && !v.out && !v.json && v.sets.n == 0, "absent options leave their destination");
    IS_INT(parse(&cmd, "--planner=dtr --memory=0.5x --threads=4 --seed=9000000000 --scale=2.5 "
                       "--time=1.5ms --wait=sleep -o=x.json --json p.json", &e),
           0, "--opt=value forms (%s)", e.msg);
    OK(!strcmp(v.planner, "dtr") && !strcmp(v.memory, "0.5x") && v.threads == 4 &&
           v.seed == 9000000000LL && v.scale == 2.5 && fabs(v.time - 1.5e-3) < 1e-15 &&
           v.wait == 2 && !strcmp(v.out, "x.json") && v.json == 1,
       "--opt=value: every type stored");
    IS_INT(parse(&cmd, "--planner dtr --memory 16G --threads 4 --seed 3 --scale 1e6 --time 2s "
                       "--wait spin --output y.json p.json",
                 &e),
           0, "--opt value forms (%s)", e.msg);
    OK(!strcmp(v.memory, "16G") && v.threads == 4 && v.seed == 3 && v.scale == 1e6 &&
           v.time == 2 && v.wait == 1 && !strcmp(v.out, "y.json"),
       "--opt value: every type stored");
    IS_INT(parse(&cmd, "p.json --planner x --set a=1 --set=b=2 --set a=3", &e), 0,
           "a repeatable option");
    OK(v.sets.n == 3 && !strcmp(v.sets.item[0], "a=1") && !strcmp(v.sets.item[1], "b=2") &&
           !strcmp(v.sets.item[2], "a=3"),
       "its values in order");
    IS_INT(parse(&cmd, "--planner x -- -p.json", &e), 0, "-- ends the options");
    OK(v.profile && !strcmp(v.profile, "-p.json"), "what follows it is an argument");
    IS_INT(parse(&cmd, "--planner x -", &e), 0, "- is an argument (standard input)");
    IS_INT(parse(&cmd, "p.json --help --bogus", &e), CLI_HELP, "--help anywhere asks for the help");
}

static void test_errors(void)
{
    expect("p.json --planner x --bogus", EXIT_USAGE, "unknown option '--bogus'");
    expect("p.json --planner x -z", EXIT_USAGE, "unknown option '-z'");
    expect("p.json --planner x --memoryx 1G", EXIT_USAGE, "unknown option '--memoryx'");
    expect("p.json --planner x --threads", EXIT_USAGE, "option --threads needs a value (N)");
    expect("p.json --planner x -o", EXIT_USAGE, "option -o needs a value (FILE)");
    expect("p.json --planner x --threads 2 --threads 3", EXIT_USAGE, "--threads given twice");
    expect("p.json --planner x --json --json", EXIT_USAGE, "--json given twice");
    expect("p.json --planner x -o a --output b", EXIT_USAGE, "--output given twice");
    expect("p.json --planner x --json=yes", EXIT_USAGE, "--json takes no value");
    expect("p.json", EXIT_USAGE, "missing --planner NAME");
    expect("--planner x", EXIT_USAGE, "expected one PROFILE");
    expect("a b --planner x", EXIT_USAGE, "unexpected argument 'b'");
    /* a bad value of each type: exit 1, the option and what it expects */
    expect("p.json --planner x --memory abc", EXIT_USER,
           "--memory: expected a size like 16G or 0.4x, got 'abc'");
    expect("p.json --planner x --memory 12XB", EXIT_USER,
           "--memory: expected a size like 16G or 0.4x, got '12XB'");
    expect("p.json --planner x --threads abc", EXIT_USER,
           "--threads: expected an integer from 1 to 1024, got 'abc'");
    expect("p.json --planner x --threads=0", EXIT_USER,
           "--threads: expected an integer from 1 to 1024, got '0'");
    expect("p.json --planner x --seed -1", EXIT_USER,
           "--seed: expected a non-negative integer, got '-1'");
    expect("p.json --planner x --scale 0", EXIT_USER,
           "--scale: expected a number in (0, 1e+06], got '0'");
    expect("p.json --planner x --scale 2e6", EXIT_USER, "--scale: expected a number in (0, 1e+06]");
    expect("p.json --planner x --time soon", EXIT_USER,
           "--time: expected a duration like 10s or 1.5ms, got 'soon'");
    expect("p.json --planner x --wait tpu", EXIT_USER,
           "--wait: expected hybrid, spin or sleep, got 'tpu'");
    expect("p.json --planner x --set nothing", EXIT_USER,
           "--set: expected KEY=VALUE, got 'nothing'");
}

/* Generator options (CLI_ANY) and runs of positional arguments. */
static cli_list gen, files;
static const char *format;
static const param_def gen_params[] = {
    {"inference", PT_BOOL, "false", "forward only", NULL, 1, 0},
    {"depth", PT_INT, "18", "layers", NULL, 1, 0},
    PARAM_END};
static const cli_opt gen_opts[] = {
    {.name = "set", .type = PT_STRING, .dst = &gen, .help = "a generator option",
     .flags = CLI_MULTI | CLI_KEYVAL},
    {.name = "KEY", .type = PT_STRING, .dst = &gen, .meta = "VALUE",
     .help = "a generator option", .flags = CLI_ANY},
    {.name = NULL}};
static const cli_pos gen_args[] = {{"FORMAT", "the format", 1, 1, &format},
                                   {"FILE", "the files", 1, CLI_MANY, &files},
                                   {NULL, NULL, 0, 0, NULL}};
static const cli_cmd gen_cmd = {.name = "import", .args = gen_args, .opts = gen_opts,
                                .any_params = gen_params};

static void test_generator_options(void)
{
    sw_err e;
    memset(&gen, 0, sizeof gen);
    memset(&files, 0, sizeof files);
    IS_INT(parse(&gen_cmd, "fmt a b --depth 50 --inference --set x=1 --batch=3 c", &e), 0,
           "generator options (%s)", e.msg);
    OK(!strcmp(format, "fmt") && files.n == 3 && !strcmp(files.item[2], "c"),
       "FORMAT FILE...: one, then the rest");
    OK(gen.n == 4 && !strcmp(gen.item[0], "depth") && !strcmp(gen.val[0], "50") &&
           !strcmp(gen.item[1], "inference") && !strcmp(gen.val[1], "true") &&
           !strcmp(gen.item[2], "x=1") && !gen.val[2] && !strcmp(gen.item[3], "batch=3") &&
           !gen.val[3],
       "--KEY VALUE, a boolean alone, --set KEY=VALUE and --KEY=VALUE, in order");
    memset(&gen, 0, sizeof gen);
    IS_INT(parse(&gen_cmd, "fmt a --inference false", &e), 0, "a boolean with its value");
    OK(gen.n == 1 && !strcmp(gen.val[0], "false"), "takes the value");
    IS_INT(parse(&gen_cmd, "fmt a --depth", &e), EXIT_USAGE, "a generator option without value");
    IS_STR_HAS(e.msg, "option --depth needs a value", "says so");
    IS_INT(parse(&gen_cmd, "fmt", &e), EXIT_USAGE, "FILE missing");
    IS_STR_HAS(e.msg, "expected FORMAT FILE...", "names the arguments");
}

static void test_help(void)
{
    sw_buf b;
    sw_buf_init(&b);
    cli_help(&cmd, &b);
    const char *h = b.data ? b.data : "";
    IS_STR_HAS(h, "usage: swapsim plan PROFILE --planner NAME [--memory SIZE] [--threads N]\n"
                  "                    [--seed N] [--scale X] [--time SECONDS]\n"
                  "                    [--wait hybrid|spin|sleep] [--set KEY=VALUE]... [--json]\n"
                  "                    [-o FILE]\n\nMake a plan.\n",
               "usage line: arguments, required options, the others, wrapped; then the about");
    IS_STR_HAS(h, "\narguments:\n  PROFILE                 the profile\n", "arguments");
    IS_STR_HAS(h, "\noptions:\n  --planner NAME          planner ('swapsim planners' lists them)\n",
               "an option: name, value, help");
    IS_STR_HAS(h, "  --memory SIZE           device memory budget: 16GiB, 16G (binary), 16GB\n"
                  "                          (decimal), 512MiB, plain bytes, or 0.4x (a fraction\n"
                  "                          of the ideal plan's peak memory)\n",
               "long help wrapped under its column");
    IS_STR_HAS(h, "  --threads N             worker threads (default 1)\n", "default shown");
    IS_STR_HAS(h, "  --wait hybrid|spin|sleep\n                          how ops wait out their "
                  "time (default hybrid)\n",
               "choices as the value; a long name puts the help on the next line");
    IS_STR_HAS(h, "  --json                  print one JSON object\n", "a flag");
    IS_STR_HAS(h, "  -o, --output FILE       output plan (- for standard output)\n",
               "short and long name");
    int longest = 0;
    for (const char *p = h; *p;) {
        int n = (int)strcspn(p, "\n");
        if (n > longest)
            longest = n;
        p += n + (p[n] != 0);
    }
    OK(longest <= 79, "no line longer than 79 columns (%d)", longest);
    b.len = 0;
    cli_help(&gen_cmd, &b);
    IS_STR_HAS(b.data, "usage: swapsim import FORMAT FILE... [--set KEY=VALUE]... [--KEY VALUE]...\n",
               "runs of arguments and generator options in the usage line");
    b.len = 0;
    cli_cmd brief = cmd;
    brief.brief = 1;
    cli_help(&brief, &b);
    IS_STR_HAS(b.data, "usage: swapsim plan PROFILE --planner NAME [options]\n",
               "a brief usage line: arguments, required options, [options]");
    sw_buf_free(&b);
}

static const tap_test tests[] = {
    {"values", test_values},
    {"errors", test_errors},
    {"generator_options", test_generator_options},
    {"help", test_help},
};

int main(int argc, char **argv) { return tap_run(tests, SW_ARRAY_LEN(tests), argc, argv); }
