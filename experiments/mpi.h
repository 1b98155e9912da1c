/* mpi.h: swapsim on several processes (MPI ranks, started by mpirun or
   srun): the experiment runner's link (runner.h) and the island search's
   comm (ga/islands.h) over MPI. The only file that includes <mpi.h> is
   mpi.c, compiled with SWAPSIM_MPI where the Makefile finds mpicc; without
   it these functions exist too and say that MPI is unavailable, so nothing
   else in swapsim depends on MPI. */
#ifndef SWMPI_H
#define SWMPI_H

#include "../common/sw.h"
#include "../ga/islands.h"
#include "runner.h"

typedef struct swmpi swmpi;

/* Whether an MPI launcher started this process, read from its environment
   without starting MPI: 1 with *rank and *size (-1 where the launcher does
   not say), else 0. */
int swmpi_launched(int *rank, int *size);

/* 1 if this swapsim was built with MPI. */
int swmpi_available(void);

/* Start MPI (once per process) and describe the ranks. Errors:
   SW_EUNSUPPORTED (built without MPI; the message says how to build with
   it). *out is freed by swmpi_end. */
int swmpi_start(swmpi **out, sw_err *err);
/* End MPI (every rank calls it, after its last message) and free m. */
void swmpi_end(swmpi *m);

int swmpi_rank(const swmpi *m);
int swmpi_size(const swmpi *m);
/* How many ranks run on this machine (MPI_COMM_TYPE_SHARED), so each can
   take its share of the cores. */
int swmpi_ranks_here(const swmpi *m);

/* The runner's link and the island search's comm over MPI_COMM_WORLD (each
   on its own duplicate of it), owned by m. */
const exp_link *swmpi_exp_link(swmpi *m);
const ga_comm *swmpi_ga_comm(swmpi *m);
/* This process's environment without the launcher's variables (OMPI_*,
   PMIX_*, PMI_*), for the commands the runner starts: they are plain
   processes, not ranks. Owned by m. */
char *const *swmpi_child_env(swmpi *m);
/* Every rank's status: 0 if all are 0, else the first failing rank's error
   ("rank R: message" for R > 0), the same on every rank. */
int swmpi_agree(swmpi *m, int rc, const sw_err *mine, sw_err *err);

/* A test hook: SWAPSIM_MPI_FAIL=R makes rank R fail on its second message
   of an experiment (its first result) with "injected failure";
   SWAPSIM_MPI_FAIL=R:kill makes it kill itself there instead, or at its
   first migration in an island search (tests/test_mpi.c). */

#endif
