/* parallel.c: the command line under an MPI launcher (mpirun, srun): MPI is
   started by the commands that use it (experiment; plan and run for island
   searches), every rank but 0 is kept quiet (rank 0 reports for all), and
   MPI is ended before swapsim exits (docs/cluster.md). */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <unistd.h>

#include "../experiments/mpi.h"
#include "cli.h"

static swmpi *mpi; /* started by cli_mpi_start, ended by cli_mpi_end */

/* standard output and error to /dev/null */
static void quiet(void)
{
    fflush(stdout);
    fflush(stderr);
    int fd = open("/dev/null", O_WRONLY);
    if (fd >= 0) {
        dup2(fd, 1);
        dup2(fd, 2);
        close(fd);
    }
}

int cli_mpi_start(const char *what, swmpi **out)
{
    *out = NULL;
    int rank, size;
    if (mpi) {
        *out = mpi;
        return 0;
    }
    if (!swmpi_launched(&rank, &size))
        return 0;
    if (!swmpi_available()) {
        if (size == 1)
            return 0; /* one rank is a plain run */
        if (rank > 0)
            quiet();
        sw_err e;
        swmpi_start(&mpi, &e);
        return cli_fail(EXIT_USER, "%s under mpirun -np %d: %s", what, size, e.msg);
    }
    sw_err e;
    if (swmpi_start(&mpi, &e))
        return cli_error(&e);
    if (swmpi_rank(mpi) > 0)
        quiet();
    *out = mpi;
    return 0;
}

int cli_mpi_rank(void) { return mpi ? swmpi_rank(mpi) : 0; }

int cli_cores(void)
{
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    int mine = (int)(online > 0 ? online : 1);
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0 &&
        CPU_COUNT(&set) < mine)
        return CPU_COUNT(&set); /* bound (taskset, Slurm, mpirun --bind-to): its own cores */
    if (mpi && swmpi_ranks_here(mpi) > 1) /* unbound ranks share the machine's cores */
        mine = mine / swmpi_ranks_here(mpi) > 0 ? mine / swmpi_ranks_here(mpi) : 1;
    return mine;
}

void cli_mpi_end(void)
{
    if (!mpi)
        return;
    fflush(stdout);
    fflush(stderr);
    swmpi_end(mpi);
    mpi = NULL;
}
