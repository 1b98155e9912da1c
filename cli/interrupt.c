/* interrupt.c: what the command line does about SIGINT and SIGTERM during a
   search (the planners stop through planner_opts.stop and hand back their
   best plan), and --progress. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static volatile sig_atomic_t caught; /* the signal that arrived, or 0 */
static long work_seen;               /* the most work the search reported to the hook */
static volatile sig_atomic_t grace;  /* seconds a planner has to stop after the signal */
static char late_msg[256];           /* said when it does not (written by the handler) */

static void on_signal(int sig)
{
    caught = sig;
    if (grace > 0)
        alarm((unsigned)grace);
}

/* the planner did not stop in time: only async-signal-safe calls here */
static void on_alarm(int sig)
{
    (void)sig;
    ssize_t w = write(2, late_msg, strlen(late_msg));
    (void)w;
    _exit(128 + (caught ? caught : SIGINT));
}

void cli_interrupt_install(const char *planner, int grace_s)
{
    snprintf(late_msg, sizeof late_msg, "swapsim: interrupted; planner %s did not stop within "
             "%d s: nothing written\n", planner ? planner : "?", grace_s);
    grace = grace_s > 0 ? grace_s : 0;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    sa.sa_handler = on_alarm;
    sigaction(SIGALRM, &sa, NULL);
    sa.sa_handler = on_signal;
    sa.sa_flags = (int)SA_RESETHAND; /* a second one ends the process at once */
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

void cli_interrupt_done(void)
{
    grace = 0;
    alarm(0);
}

int cli_interrupted(void) { return caught; }

int cli_stop_hook(void *ud, long work)
{
    (void)ud;
    if (work > work_seen) /* hybrid counts candidates, its GA evaluations: the larger */
        work_seen = work;
    return caught != 0;
}

int cli_interrupt_end(const char *done)
{
    int sig = caught;
    fprintf(stderr, "swapsim: interrupted (%s) after %ld evaluations%s%s\n",
            sig == SIGTERM ? "SIGTERM" : "SIGINT", work_seen, done && *done ? "; " : "",
            done ? done : "");
    return 128 + sig;
}

long cli_interrupt_work(void) { return work_seen; }

int cli_progress_mode(int choice)
{
    static const char *const names[] = {"auto", "none", "bar", "lines"};
    if (choice == 0) { /* auto: SWAPSIM_PROGRESS, else a bar on a terminal, lines elsewhere */
        const char *env = getenv("SWAPSIM_PROGRESS");
        for (int i = 1; env && i < 4; i++)
            if (!strcmp(env, names[i]))
                choice = i;
        if (choice == 0)
            choice = isatty(2) ? 2 : 3;
    }
    return choice - 1; /* none 0, bar 1, lines 2: planner_opts.progress */
}
