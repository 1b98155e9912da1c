/* test_cli_conventions.c: the command line's conventions end to end (issue
   35): SIGINT/SIGTERM keep a search's best plan, outputs checked before any
   work, sizes need units and stay within the device, every --json outcome
   is JSON, -h everywhere, the main help agrees with each command's, progress
   lines, directories named as such. */
#include <ctype.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>

#include "../common/json.h"
#include "cli_run.h"
#include "tap.h"

/* text parsed as JSON into d (NULL if it is not JSON) */
static const json_value *parse_json(json_doc *d, const char *text)
{
    const json_value *v = NULL;
    sw_err e;
    json_doc_reset(d);
    if (!text || json_parse(d, text, strlen(text), "output", 1, &v, &e)) {
        printf("# not JSON: %.200s\n", text ? text : "(none)");
        return NULL;
    }
    return v;
}

/* lines of s that are not progress lines ("[ga] ...") */
static int message_lines(const char *s)
{
    int n = 0;
    for (const char *p = s; p && *p;) {
        const char *nl = strchr(p, '\n');
        if (strncmp(p, "[ga]", 4) != 0)
            n++;
        p = nl ? nl + 1 : p + strlen(p);
    }
    return n;
}

/* r.json (a small random profile) and big.json (large enough that a GA
   generation is well under a second but a search of 10^8 generations never
   ends by itself) in the scratch directory */
static void need_profiles(void)
{
    char path[512], args[1024];
    snprintf(path, sizeof path, "%s/big.json", dir);
    if (access(path, F_OK) == 0)
        return;
    snprintf(args, sizeof args, "model random --ops 30 --seed 3 -o %s/r.json", dir);
    if (sh(args, NULL, NULL) != 0)
        printf("# could not make r.json\n");
    snprintf(args, sizeof args, "model random --ops 300 --seed 5 -o %s/big.json", dir);
    if (sh(args, NULL, NULL) != 0)
        printf("# could not make big.json\n");
}

static char *slurp(const char *name)
{
    char path[512], *d = NULL;
    size_t n;
    sw_err e;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (sw_read_file(path, &d, &n, &e))
        return NULL;
    return d;
}

/* Start "swapsim ARGS..." (argv, NULL-terminated) in dir with standard output
   to dir/NAME.out and standard error to dir/NAME.err; its pid, or -1. */
static pid_t start(const char *name, char *const *args)
{
    char out[512], err[512];
    snprintf(out, sizeof out, "%s/%s.out", dir, name);
    snprintf(err, sizeof err, "%s/%s.err", dir, name);
    pid_t pid = fork();
    if (pid == 0) {
        int fo = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int fe = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fo < 0 || fe < 0 || chdir(dir) != 0)
            _exit(127);
        dup2(fo, 1);
        dup2(fe, 2);
        execv(bin, args);
        _exit(127);
    }
    return pid;
}

/* Wait (at most limit_s; not a timing check, only so a broken build cannot
   hang the test) until dir/NAME.err holds needle. */
static int wait_for(const char *name, const char *needle, pid_t pid, int limit_s)
{
    char f[256];
    snprintf(f, sizeof f, "%s.err", name);
    for (int i = 0; i < limit_s * 20; i++) {
        char *e = slurp(f);
        int seen = e && strstr(e, needle);
        sw_free(e);
        if (seen)
            return 1;
        if (waitpid(pid, NULL, WNOHANG) == pid)
            return 0; /* ended before it started searching */
        usleep(50000);
    }
    return 0;
}

/* The exit status of pid (128 + signal if killed); after limit_s it is
   killed and -1 returned. */
static int reap(pid_t pid, int limit_s)
{
    int st;
    for (int i = 0; i < limit_s * 20; i++) {
        if (waitpid(pid, &st, WNOHANG) == pid)
            return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        usleep(50000);
    }
    kill(pid, SIGKILL);
    waitpid(pid, &st, 0);
    return -1;
}

/* A search that would run for ever, interrupted once it has started: the
   best plan so far is verified and written, one line says so, exit 128+sig. */
static void interrupt_one(const char *cmd, int sig, const char *plan_name)
{
    need_profiles();
    char plan_arg[64];
    snprintf(plan_arg, sizeof plan_arg, "%s", plan_name);
    char *run_args[] = {(char *)bin, (char *)cmd, "big.json", "--planner", "swapadvisor",
                        "--memory", "0.5x", "--set", "generations=100000000", "--progress",
                        "lines", "-o", plan_arg, "--json", NULL};
    if (!strcmp(cmd, "plan"))
        run_args[13] = NULL; /* plan has no --json */
    const char *sname = sig == SIGINT ? "SIGINT" : "SIGTERM";
    char name[64];
    snprintf(name, sizeof name, "int-%s", cmd);
    pid_t pid = start(name, run_args);
    OK(pid > 0, "%s: started", cmd);
    if (pid <= 0)
        return;
    int started = wait_for(name, "[ga] 0%", pid, 120);
    OK(started, "%s: the search started (its first progress line)", cmd);
    kill(pid, sig);
    int code = reap(pid, 60);
    IS_INT(code, 128 + sig, "%s: %s ends it with exit %d", cmd, sname, 128 + sig);
    char f[128];
    snprintf(f, sizeof f, "%s.err", name);
    char *e = slurp(f);
    IS_INT(message_lines(e), 1, "%s: one line besides the progress lines", cmd);
    char want[64];
    snprintf(want, sizeof want, "interrupted (%s) after ", sname);
    IS_STR_HAS(e, want, "%s: the line says it was interrupted", cmd);
    IS_STR_HAS(e, " evaluations", "%s: and after how many evaluations", cmd);
    sw_free(e);
    char args[512];
    snprintf(args, sizeof args, "verify %s", plan_name);
    char *o = NULL;
    IS_INT(sh(args, &o, NULL), 0, "%s: the plan written verifies", cmd);
    IS_STR_HAS(o, "safe", "%s: verify says safe", cmd);
    sw_free(o);
    if (!strcmp(cmd, "run")) {
        snprintf(f, sizeof f, "%s.out", name);
        o = slurp(f);
        json_doc *d = json_doc_new();
        const json_value *v = parse_json(d, o);
        const json_value *in = json_get(v, "interrupted"), *ev = json_get(v, "evaluations");
        OK(in && in->type == JSON_STRING && !strcmp(in->u.str, sname),
           "run --json: the result says interrupted by %s", sname);
        OK(ev && ev->u.num.i > 0, "run --json: with the evaluations");
        const json_value *vf = json_get(v, "verified");
        OK(vf && vf->type == JSON_TRUE, "run --json: verified");
        json_doc_free(d);
        sw_free(o);
    }
}

static void interrupt_run_sigint(void) { interrupt_one("run", SIGINT, "int-run.json"); }

static void interrupt_plan_sigterm(void) { interrupt_one("plan", SIGTERM, "int-plan.json"); }

/* bad outputs fail at once: no search starts (no progress line; a bounded
   search, so a binary that checks only at the end fails rather than hangs) */
static void outputs_checked_first(void)
{
    need_profiles();
    const char *cases[][2] = {
        {"-o /nonexistent-dir/p.json", "cannot write"},
        {"--trace .", "is a directory"},
        {"--log /nonexistent-dir/log.csv", "cannot write"},
    };
    for (size_t i = 0; i < SW_ARRAY_LEN(cases); i++) {
        char args[1024], *o = NULL, *e = NULL;
        snprintf(args, sizeof args, "run big.json --planner swapadvisor --memory 0.5x --set "
                 "generations=100 --progress lines %s", cases[i][0]);
        int rc = sh(args, &o, &e);
        IS_INT(rc, 1, "%s: exit 1", cases[i][0]);
        IS_INT(lines(e), 1, "%s: one line, no progress line (no search)", cases[i][0]);
        IS_STR_HAS(e, cases[i][1], "%s: says why", cases[i][0]);
        sw_free(o);
        sw_free(e);
    }
    expect_fail("plan big.json --planner swapadvisor --set generations=100 "
                "--progress lines -o /nonexistent-dir/p.json", 1, "-o /nonexistent-dir/p.json",
                "plan: a bad -o before the search");
    /* an existing output is left as it was by the check */
    char path[512], *t;
    snprintf(path, sizeof path, "%s/keep.txt", dir);
    FILE *f = fopen(path, "w");
    if (f) {
        fputs("kept\n", f);
        fclose(f);
    }
    expect_fail("run r.json --planner none --memory 16 -o keep.txt", 1, "needs a unit",
                "a failed run after the check");
    t = slurp("keep.txt");
    IS_STR_HAS(t, "kept", "the existing output is untouched");
    sw_free(t);
    OK(access("/nonexistent-dir", F_OK) != 0, "nothing created");
}

static void units_and_limits(void)
{
    need_profiles();
    expect_fail("run r.json --planner none --memory 16", 1,
                "16: a size needs a unit (B, KiB, MiB, GiB) or x for a multiple of the peak",
                "run: a size without a unit");
    expect_fail("plan r.json --planner none --memory 1024 -o x.json", 1, "needs a unit",
                "plan: a size without a unit");
    expect_fail("bound r.json --memory 16", 1, "needs a unit", "bound: a size without a unit");
    expect_fail("calibrate-device --copy-size 1000000", 1, "needs a unit",
                "calibrate-device: a size without a unit");
    expect_fail("run r.json --planner none --device-set memory=16", 1, "needs a unit",
                "--device-set memory= without a unit");
    expect_fail("run r.json --planner none --memory 200GiB", 1,
                "above the v100's memory", "a budget above the device");
    expect_fail("bound r.json --memory 17GiB", 1, "--allow-oversubscribe",
                "bound: a budget above the device");
    /* a fraction of the peak is a ratio to study (the experiments give models
       beyond the GPU such budgets): not checked against the device */
    IS_INT(sh("run r.json --planner none --memory 100x", NULL, NULL), 0,
           "a fraction above the device's memory passes");
    char *o = NULL;
    IS_INT(sh("run r.json --planner none --memory 200GiB --allow-oversubscribe", &o, NULL), 0,
           "--allow-oversubscribe accepts it");
    sw_free(o);
    IS_INT(sh("run r.json --planner none --memory 16GiB", NULL, NULL), 0,
           "the device's own memory is accepted");
    IS_INT(sh("run r.json --planner none --memory 4294967296B", NULL, NULL), 0,
           "bytes with B are accepted");
}

/* Every --json outcome is one JSON object (lists: an array) on standard
   output, and the exit status still tells success from failure. */
static void json_outcomes(void)
{
    need_profiles();
    sh("plan r.json --planner none --memory 2x --allow-oversubscribe -o p.json", NULL, NULL);
    struct {
        const char *args;
        int code;
        const char *key; /* a member the object must have */
    } cases[] = {
        {"run r.json --planner none --json", 0, "fits"},
        {"run r.json --planner none --memory 0.5x --json", 1, "reason"},
        {"run r.json --planner swapadvisor --memory 0.05x --set generations=2 --json", 1, "fits"},
        {"run r.json --planner none --memory 16 --json", 1, "error"},
        {"run r.json --planner none --memory 200GiB --json", 1, "error"},
        {"run r.json --planner magic --json", 1, "error"},
        {"run r.json --planner none --bogus --json", 2, "error"},
        {"run r.json --json", 2, "error"},
        {"run nosuch.json --planner none --json", 1, "error"},
        {"run . --planner none --json", 1, "error"},
        {"run r.json --planner none -o /nonexistent-dir/x --json", 1, "error"},
        {"simulate p.json --json", 0, "iteration_time_s"},
        {"simulate nosuch.json --json", 1, "error"},
        {"stats r.json --json", 0, "peak_memory_bytes"},
        {"stats nosuch.json --json", 1, "error"},
        {"bound r.json --json", 0, NULL},
        {"bound r.json --memory 16 --json", 1, "error"},
        {"planners --json", 0, NULL},
        {"models --json", 0, NULL},
        {"devices --json", 0, NULL},
        {"devices nosuch --json", 1, "error"},
    };
    json_doc *d = json_doc_new();
    for (size_t i = 0; i < SW_ARRAY_LEN(cases); i++) {
        char *o = NULL;
        int rc = sh(cases[i].args, &o, NULL);
        IS_INT(rc, cases[i].code, "%s: exit %d", cases[i].args, cases[i].code);
        const json_value *v = parse_json(d, o);
        OK(v && (v->type == JSON_OBJECT || v->type == JSON_ARRAY), "%s: JSON", cases[i].args);
        if (cases[i].key)
            OK(json_get(v, cases[i].key) != NULL, "%s: has \"%s\"", cases[i].args,
               cases[i].key);
        if (cases[i].code) {
            const json_value *ok = json_get(v, "ok"), *st = json_get(v, "exit_status");
            OK(ok && ok->type == JSON_FALSE, "%s: \"ok\": false", cases[i].args);
            IS_INT(st ? st->u.num.i : -1, cases[i].code, "%s: its exit_status", cases[i].args);
        }
        sw_free(o);
    }
    char *o = NULL;
    sh("run r.json --planner none --memory 0.5x --json", &o, NULL);
    const json_value *v = parse_json(d, o), *f = json_get(v, "fits");
    OK(f && f->type == JSON_FALSE, "does not fit: \"fits\": false");
    sw_free(o);
    o = NULL;
    sh("planners --json", &o, NULL);
    v = parse_json(d, o);
    int named = 0;
    for (size_t i = 0; v && v->type == JSON_ARRAY && i < v->n; i++) {
        const json_value *n = json_get(&v->u.items[i], "name");
        named += n && n->type == JSON_STRING && !strcmp(n->u.str, "swapadvisor") &&
                 json_get(&v->u.items[i], "options") != NULL;
    }
    IS_INT(named, 1, "planners --json lists swapadvisor with its options");
    sw_free(o);
    json_doc_free(d);
}

/* the commands of the main help, and each one's synopsis there */
#define MAX_CMDS 64
static int main_commands(char names[][32], char synopsis[][256])
{
    char *o = NULL;
    int n = 0;
    sh("--help", &o, NULL);
    const char *p = o ? strstr(o, "\ncommands:\n") : NULL;
    for (p = p ? p + 11 : NULL; p && *p && *p != '\n' && n < MAX_CMDS;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        if (len > 2 && p[0] == ' ' && p[1] == ' ' && islower((unsigned char)p[2])) {
            const char *s = p + 2, *end = strstr(s, "  ");
            size_t sl = end && end < p + len ? (size_t)(end - s) : len - 2;
            snprintf(synopsis[n], 256, "%.*s", (int)sl, s);
            snprintf(names[n], 32, "%.*s", (int)strcspn(synopsis[n], " "), synopsis[n]);
            n++;
        }
        p = nl ? nl + 1 : p + len;
    }
    sw_free(o);
    return n;
}

/* The options of a synopsis ("plan PROFILE --planner NAME [--memory SIZE]"):
   into req those outside brackets, into opt those inside, as " --planner "
   strings (space-delimited). */
static void split_options(const char *syn, char *req, char *opt, size_t cap)
{
    req[0] = opt[0] = 0;
    int depth = 0;
    for (const char *p = syn; *p;) {
        while (*p == ' ' || *p == '\n')
            p++;
        size_t len = strcspn(p, " \n");
        if (!len)
            break;
        const char *t = p;
        size_t tl = len;
        int open = 0;
        while (tl && *t == '[') {
            open++;
            t++;
            tl--;
        }
        depth += open;
        size_t core = strcspn(t, " \n]");
        if (core > tl)
            core = tl;
        if (core > 1 && t[0] == '-') {
            char *dst = depth ? opt : req;
            size_t l = strlen(dst);
            snprintf(dst + l, cap - l, " %.*s ", (int)core, t);
        }
        for (size_t k = 0; k < tl; k++)
            depth -= t[k] == ']';
        p += len;
    }
}

/* every option of a (" --a  --b ") list is in text */
static int all_in(const char *list, const char *text, char *missing, size_t cap)
{
    for (const char *p = list; *p;) {
        while (*p == ' ')
            p++;
        size_t l = strcspn(p, " ");
        if (!l)
            break;
        char one[64];
        snprintf(one, sizeof one, " %.*s ", (int)l, p);
        if (!strstr(text, one)) {
            snprintf(missing, cap, "%s", one);
            return 0;
        }
        p += l;
    }
    return 1;
}

/* -h and --help on every command the main help names */
static void help_everywhere(void)
{
    char names[MAX_CMDS][32], syn[MAX_CMDS][256];
    int n = main_commands(names, syn);
    OK(n >= 20, "the main help names the commands (%d)", n);
    int good = 0;
    for (int i = 0; i < n; i++) {
        const char *flags[] = {"-h", "--help"};
        for (int k = 0; k < 2; k++) {
            char args[128], want[64], *o = NULL;
            snprintf(args, sizeof args, "%.31s %s", names[i], flags[k]);
            snprintf(want, sizeof want, "usage: swapsim %.31s", names[i]);
            int rc = sh(args, &o, NULL);
            if (rc == 0 && o && !strncmp(o, want, strlen(want)))
                good++;
            else
                printf("# %s: exit %d\n", args, rc);
            sw_free(o);
        }
    }
    IS_INT(good, 2 * n, "every command takes -h and --help");
}

/* The main help's synopsis of each command agrees with the command's own:
   the same required options, and the optional ones optional there. */
static void main_help_agrees(void)
{
    char names[MAX_CMDS][32], syn[MAX_CMDS][256];
    int n = main_commands(names, syn), agree = 0;
    for (int i = 0; i < n; i++) {
        char args[128], *o = NULL;
        snprintf(args, sizeof args, "%.31s --help", names[i]);
        sh(args, &o, NULL);
        if (!o)
            continue;
        char *blank = strstr(o, "\n\n"); /* the usage line ends at the first blank line */
        char usage[2048], whole[65536];
        snprintf(usage, sizeof usage, "%.*s", blank ? (int)(blank - o) : (int)strlen(o), o);
        /* every option the help lists, as " --name " and " -o " */
        whole[0] = ' ';
        size_t wl = 1;
        for (const char *p = o; *p && wl + 2 < sizeof whole; p++)
            whole[wl++] = *p == ',' || *p == '\n' || *p == '=' ? ' ' : *p;
        whole[wl] = 0;
        char mreq[1024], mopt[1024], sreq[1024], sopt[1024], miss[64] = "";
        split_options(syn[i], mreq, mopt, sizeof mreq);
        const char *after = strstr(usage, names[i]);
        split_options(after ? after + strlen(names[i]) : usage, sreq, sopt, sizeof sreq);
        int ok = all_in(mreq, sreq, miss, sizeof miss) && all_in(sreq, mreq, miss, sizeof miss);
        if (!ok)
            printf("# %s: required option%s not required in both\n", names[i], miss);
        int ok2 = all_in(mopt, whole, miss, sizeof miss);
        if (!ok2)
            printf("# %s: main help's optional%sis not an option of the command\n", names[i],
                   miss);
        /* an option optional in the main help is not required by the command */
        for (const char *p = mopt; ok2 && *p;) {
            while (*p == ' ')
                p++;
            size_t l = strcspn(p, " ");
            if (!l)
                break;
            char one[64];
            snprintf(one, sizeof one, " %.*s ", (int)l, p);
            if (strstr(sreq, one)) {
                printf("# %s:%soptional in the main help, required by the command\n", names[i],
                       one);
                ok2 = 0;
            }
            p += l;
        }
        agree += ok && ok2;
        sw_free(o);
    }
    IS_INT(agree, n, "the main help agrees with every command's help");
    /* the comparison can fail: a synopsis that disagrees is caught */
    char req[256], opt[256], miss[64];
    split_options("plan PROFILE --planner NAME --memory SIZE -o PLAN", req, opt, sizeof req);
    OK(!all_in(req, " --planner  -o ", miss, sizeof miss), "a required --memory is told apart");
}

/* --progress lines: one line when the first generation is in, then one per
   tenth of the generations; none: nothing */
static void progress_lines(void)
{
    need_profiles();
    char *e = NULL;
    IS_INT(sh("run r.json --planner swapadvisor --memory 0.6x --set generations=20 --progress "
              "lines", NULL, &e), 0, "a 20-generation search");
    int n = 0;
    for (const char *p = e; p && (p = strstr(p, "[ga] ")); p++)
        n++;
    IS_INT(n, 11, "11 progress lines (0%%, 10%%, ..., 100%%)");
    IS_STR_HAS(e, "[ga] 100%: generation 20", "the last at generation 20");
    sw_free(e);
    e = NULL;
    sh("run r.json --planner swapadvisor --memory 0.6x --set generations=20 --progress none",
       NULL, &e);
    IS_INT(lines(e), 0, "--progress none: nothing on stderr");
    sw_free(e);
    expect_fail("run r.json --planner none --progress sometimes", 1, "auto, none, bar or lines",
                "a bad --progress");
}

/* a directory given as an input file is named as such */
static void directory_input(void)
{
    need_profiles();
    expect_fail("stats .", 1, ".: is a directory", "stats DIR");
    expect_fail("simulate .", 1, "is a directory", "simulate DIR");
    expect_fail("verify .", 1, "is a directory", "verify DIR");
    expect_fail("run . --planner none", 1, "is a directory", "run DIR");
}

static const tap_test tests[] = {
    {"interrupt_run_sigint", interrupt_run_sigint},
    {"interrupt_plan_sigterm", interrupt_plan_sigterm},
    {"outputs_checked_first", outputs_checked_first},
    {"units_and_limits", units_and_limits},
    {"json_outcomes", json_outcomes},
    {"help_everywhere", help_everywhere},
    {"main_help_agrees", main_help_agrees},
    {"progress_lines", progress_lines},
    {"directory_input", directory_input},
};

int main(int argc, char **argv)
{
    cli_open("cli-conventions");
    int rc = tap_run(tests, SW_ARRAY_LEN(tests), argc, argv);
    if (cli_close())
        printf("# could not remove %s\n", dir);
    return rc;
}
