/* mpi.c: swapsim's transports over MPI (see mpi.h); without SWAPSIM_MPI,
   stubs that say MPI is unavailable. */
#include "mpi.h"

#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern char **environ;

static int env_int(const char *name)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return -1;
    char *end;
    long n = strtol(v, &end, 10);
    return *end || n < 0 || n > INT_MAX ? -1 : (int)n;
}

int swmpi_launched(int *rank, int *size)
{
    *rank = env_int("OMPI_COMM_WORLD_RANK");
    *size = env_int("OMPI_COMM_WORLD_SIZE");
    if (*rank < 0)
        *rank = env_int("PMIX_RANK");
    if (*rank < 0)
        *rank = env_int("PMI_RANK");
    if (*size < 0)
        *size = env_int("PMI_SIZE");
    return *rank >= 0 || *size >= 0;
}

#ifndef SWAPSIM_MPI

int swmpi_available(void) { return 0; }

int swmpi_start(swmpi **out, sw_err *err)
{
    *out = NULL;
    return sw_fail(err, SW_EUNSUPPORTED, "this swapsim was built without MPI (install "
                   "libopenmpi-dev, then make again; docs/cluster.md)");
}

void swmpi_end(swmpi *m) { (void)m; }
int swmpi_rank(const swmpi *m) { (void)m; return 0; }
int swmpi_size(const swmpi *m) { (void)m; return 1; }
int swmpi_ranks_here(const swmpi *m) { (void)m; return 1; }
const exp_link *swmpi_exp_link(swmpi *m) { (void)m; return NULL; }
const ga_comm *swmpi_ga_comm(swmpi *m) { (void)m; return NULL; }
char *const *swmpi_child_env(swmpi *m) { (void)m; return NULL; }

int swmpi_agree(swmpi *m, int rc, const sw_err *mine, sw_err *err)
{
    (void)m;
    if (rc && err && mine && err != mine)
        *err = *mine;
    return rc;
}

#else

#include <mpi.h>

struct swmpi {
    MPI_Comm exp_comm, ga_comm; /* duplicates of MPI_COMM_WORLD: their messages never mix */
    int rank, size;             /* in MPI_COMM_WORLD */
    int ranks_here;             /* ranks on this machine */
    int *node;                  /* per rank, its machine (the rank of its first rank there) */
    exp_link link;              /* the runner's transport */
    ga_comm comm;               /* the island search's */
    char **env;                 /* the commands' environment (strings point into environ) */
    int fail_rank, fail_kill;   /* SWAPSIM_MPI_FAIL (fail_rank -1: none) */
    long sends;                 /* experiment messages sent */
    int shifts;                 /* migrations done */
};

int swmpi_available(void) { return 1; }

static int mpi_fail(sw_err *err, int code, const char *what)
{
    char s[MPI_MAX_ERROR_STRING];
    int n = 0;
    MPI_Error_string(code, s, &n);
    return sw_fail(err, SW_EIO, "MPI: %s: %.*s", what, n, s);
}

static void injected_kill(void)
{
    fflush(NULL);
    raise(SIGKILL);
}

static int link_send(void *ctx, int to, int tag, const void *buf, size_t n, sw_err *err)
{
    swmpi *m = ctx;
    m->sends++;
    if (m->rank == m->fail_rank && m->sends == 2) {
        if (m->fail_kill)
            injected_kill();
        return sw_fail(err, SW_EINVAL, "injected failure (SWAPSIM_MPI_FAIL=%d)", m->fail_rank);
    }
    if (n > INT_MAX)
        return sw_fail(err, SW_EINVAL, "a message of %zu bytes is too long for MPI", n);
    int rc = MPI_Send(buf, (int)n, MPI_BYTE, to, tag, m->exp_comm);
    return rc == MPI_SUCCESS ? 0 : mpi_fail(err, rc, "send");
}

static int link_recv(void *ctx, int *from, int *tag, char **buf, size_t *n, sw_err *err)
{
    swmpi *m = ctx;
    int flag = 0, count = 0;
    MPI_Status st;
    int rc = MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, m->exp_comm, &flag, &st);
    if (rc != MPI_SUCCESS)
        return mpi_fail(err, rc, "probe");
    if (!flag)
        return 0;
    MPI_Get_count(&st, MPI_BYTE, &count);
    char *b = sw_malloc((size_t)count + 1);
    if (!b)
        return sw_fail(err, SW_ENOMEM, "out of memory");
    rc = MPI_Recv(b, count, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, m->exp_comm, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) {
        sw_free(b);
        return mpi_fail(err, rc, "receive");
    }
    *from = st.MPI_SOURCE;
    *tag = st.MPI_TAG;
    *buf = b;
    *n = (size_t)count;
    return 1;
}

static int gather(MPI_Comm c, const void *mine, void *all, size_t n, sw_err *err)
{
    if (n > INT_MAX)
        return sw_fail(err, SW_EINVAL, "a message of %zu bytes is too long for MPI", n);
    int rc = MPI_Allgather(mine, (int)n, MPI_BYTE, all, (int)n, MPI_BYTE, c);
    return rc == MPI_SUCCESS ? 0 : mpi_fail(err, rc, "allgather");
}

static int link_allgather(void *ctx, const void *mine, void *all, size_t n, sw_err *err)
{
    return gather(((swmpi *)ctx)->exp_comm, mine, all, n, err);
}

static int ga_allgather(void *ctx, const void *mine, void *all, size_t n, sw_err *err)
{
    return gather(((swmpi *)ctx)->ga_comm, mine, all, n, err);
}

static int ga_shift(void *ctx, const void *send, void *recv, size_t n, sw_err *err)
{
    swmpi *m = ctx;
    if (m->rank == m->fail_rank && m->fail_kill && ++m->shifts == 1)
        injected_kill();
    if (n > INT_MAX)
        return sw_fail(err, SW_EINVAL, "a message of %zu bytes is too long for MPI", n);
    int to = (m->rank + 1) % m->size, from = (m->rank + m->size - 1) % m->size;
    int rc = MPI_Sendrecv(send, (int)n, MPI_BYTE, to, 1, recv, (int)n, MPI_BYTE, from, 1,
                          m->ga_comm, MPI_STATUS_IGNORE);
    return rc == MPI_SUCCESS ? 0 : mpi_fail(err, rc, "migration");
}

/* the launchers' variables: OpenMPI's mpirun, PMIx (srun --mpi=pmix,
   OpenMPI 5), PMI (srun --mpi=pmi2, MPICH's hydra) */
static const char *const launcher_prefix[] = {"OMPI_", "PMIX_", "PMI_"};

/* environ without the launcher's variables */
static char **child_env(void)
{
    size_t n = 0;
    while (environ && environ[n])
        n++;
    char **env = sw_calloc(n + 1, sizeof *env);
    if (!env)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        int drop = 0;
        for (size_t p = 0; p < sizeof launcher_prefix / sizeof launcher_prefix[0]; p++)
            drop |= !strncmp(environ[i], launcher_prefix[p], strlen(launcher_prefix[p]));
        if (!drop)
            env[k++] = environ[i];
    }
    env[k] = NULL;
    return env;
}

int swmpi_start(swmpi **out, sw_err *err)
{
    *out = NULL;
    int inited = 0, provided;
    MPI_Initialized(&inited);
    if (!inited && MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
        return sw_fail(err, SW_EIO, "MPI_Init failed");
    swmpi *m = sw_calloc(1, sizeof *m);
    if (!m) {
        MPI_Finalize();
        return sw_fail(err, SW_ENOMEM, "out of memory");
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &m->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &m->size);
    MPI_Comm_dup(MPI_COMM_WORLD, &m->exp_comm);
    MPI_Comm_dup(MPI_COMM_WORLD, &m->ga_comm);
    /* machines: ranks sharing memory; each named by its lowest rank */
    MPI_Comm here;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, m->rank, MPI_INFO_NULL, &here);
    MPI_Comm_size(here, &m->ranks_here);
    int leader = m->rank;
    MPI_Allreduce(MPI_IN_PLACE, &leader, 1, MPI_INT, MPI_MIN, here);
    MPI_Comm_free(&here);
    m->node = sw_calloc((size_t)m->size, sizeof *m->node);
    m->env = child_env();
    /* all or none: a rank short of memory must not leave the others waiting */
    int ok = m->node && m->env, all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all_ok) {
        swmpi_end(m);
        return sw_fail(err, SW_ENOMEM, "out of memory (on one rank or more)");
    }
    MPI_Allgather(&leader, 1, MPI_INT, m->node, 1, MPI_INT, MPI_COMM_WORLD);
    m->fail_rank = -1;
    const char *f = getenv("SWAPSIM_MPI_FAIL");
    if (f && *f) {
        char *end;
        long r = strtol(f, &end, 10);
        if (end != f && r >= 0 && r < m->size) {
            m->fail_rank = (int)r;
            m->fail_kill = !strcmp(end, ":kill");
        }
    }
    m->link = (exp_link){1, m->rank, m->size, m->node, m, link_send, link_recv, link_allgather};
    m->comm = (ga_comm){1, m->rank, m->size, m, ga_shift, ga_allgather};
    *out = m;
    return 0;
}

void swmpi_end(swmpi *m)
{
    if (!m)
        return;
    MPI_Comm_free(&m->exp_comm);
    MPI_Comm_free(&m->ga_comm);
    sw_free(m->node);
    sw_free(m->env);
    sw_free(m);
    MPI_Finalize();
}

int swmpi_rank(const swmpi *m) { return m->rank; }
int swmpi_size(const swmpi *m) { return m->size; }
int swmpi_ranks_here(const swmpi *m) { return m->ranks_here; }
const exp_link *swmpi_exp_link(swmpi *m) { return &m->link; }
const ga_comm *swmpi_ga_comm(swmpi *m) { return &m->comm; }
char *const *swmpi_child_env(swmpi *m) { return m->env; }

int swmpi_agree(swmpi *m, int rc, const sw_err *mine, sw_err *err)
{
    struct {
        int32_t rc;     /* this rank's status */
        char msg[252];  /* and message */
    } me, *all = sw_calloc((size_t)m->size, sizeof me);
    memset(&me, 0, sizeof me);
    me.rc = rc;
    if (rc && mine) {
        size_t n = strnlen(mine->msg, sizeof me.msg - 1);
        memcpy(me.msg, mine->msg, n);
    }
    int ok = all != NULL, all_ok = 0; /* all or none, as in swmpi_start */
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, m->exp_comm);
    if (!all_ok) {
        sw_free(all);
        return sw_fail(err, SW_ENOMEM, "out of memory (on one rank or more)");
    }
    int grc = MPI_Allgather(&me, (int)sizeof me, MPI_BYTE, all, (int)sizeof me, MPI_BYTE,
                            m->exp_comm);
    if (grc != MPI_SUCCESS) {
        sw_free(all);
        return mpi_fail(err, grc, "allgather");
    }
    int out = 0;
    for (int r = 0; r < m->size && !out; r++)
        if (all[r].rc)
            out = r ? sw_fail(err, all[r].rc, "rank %d: %s", r, all[r].msg)
                    : sw_fail(err, all[r].rc, "%s", all[r].msg);
    sw_free(all);
    return out;
}

#endif
