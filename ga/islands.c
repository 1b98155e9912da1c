/* islands.c: the island model (see islands.h). */
#include "islands.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* what every rank says after each stretch of generations */
typedef struct agree_rec {
    int32_t rc;    /* 0, or this rank's error */
    int32_t stop;  /* rank 0's: stop now (stopping rule reached) */
    char msg[248]; /* the error's message */
} agree_rec;

/* what every rank says at the end: its best island's result, then its genome */
typedef struct final_rec {
    double fit;          /* best fitness of the islands here */
    double initial_best; /* best of their first generations */
    int64_t island;      /* which island had fit */
    int64_t evaluations; /* of every island here */
} final_rec;

struct ga_islands {
    ga_params p;          /* the search's parameters (seed, stopping rule) */
    ga_island_params ip;  /* islands, interval, migrants */
    ga_comm cm;           /* the processes (valid when has_comm) */
    int has_comm;         /* 1: islands spread over cm.size processes */
    int rank, size;       /* this process and how many (0, 1 without comm) */
    int local, first;     /* islands here: first .. first + local - 1 */
    size_t gb;            /* genome bytes */
    ga_ctx **isl;         /* the islands here */
    unsigned char *em;    /* emigrants: local x migrants genomes */
    double *em_fit;       /* and their fitness */
    unsigned char *msg, *msg_in; /* a rank's migrants as one message, sent and received */
    double *in_fit;       /* the received migrants' fitness (aligned) */
    agree_rec *agree;     /* every rank's agree_rec */
    unsigned char *fin;   /* every rank's final_rec and genome */
    unsigned char *fin_me; /* this rank's, sent */
    unsigned char *best;  /* the best genome of all (gb bytes) */
    double best_fit;      /* its fitness (INFINITY: none feasible) */
    ga_stats st;          /* the whole search */
    int progress;         /* island 0's progress line is shown here */
};

uint64_t ga_island_seed(uint64_t seed, int island)
{
    /* splitmix64 of the seed and the island: neighbouring seeds and
       islands give unrelated streams */
    uint64_t i = (uint64_t)(unsigned)island + 1, z = seed + UINT64_C(0x9E3779B97F4A7C15) * i;
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

void ga_islands_free(ga_islands *gi)
{
    if (!gi)
        return;
    for (int j = 0; gi->isl && j < gi->local; j++)
        ga_free(gi->isl[j]);
    sw_free(gi->isl);
    sw_free(gi->em);
    sw_free(gi->em_fit);
    sw_free(gi->msg);
    sw_free(gi->msg_in);
    sw_free(gi->in_fit);
    sw_free(gi->fin_me);
    sw_free(gi->agree);
    sw_free(gi->fin);
    sw_free(gi->best);
    sw_free(gi);
}

int ga_islands_new(const ga_ops *ops, void *user, size_t genome_bytes, const ga_params *p,
                   const ga_island_params *ip, const ga_comm *comm, ga_islands **out,
                   sw_err *err)
{
    *out = NULL;
    if (ip->islands < 1 || ip->interval < 1 || ip->migrants < 1)
        return sw_fail(err, SW_EINVAL, "islands, the migration interval and the migrants must "
                       "be at least 1");
    int pop = p->population < 2 ? 2 : p->population + p->population % 2; /* as ga_new rounds */
    if (ip->islands > 1 && ip->migrants >= pop)
        return sw_fail(err, SW_EINVAL, "migrants (%d) must be fewer than the population of an "
                       "island (%d)", ip->migrants, pop);
    int size = comm ? comm->size : 1, rank = comm ? comm->rank : 0;
    if (size < 1 || rank < 0 || rank >= size)
        return sw_fail(err, SW_EINVAL, "bad process group (rank %d of %d)", rank, size);
    if (ip->islands % size)
        return sw_fail(err, SW_EINVAL, "islands=%d cannot be spread evenly over %d processes "
                       "(give a multiple of %d, or run it in one process)", ip->islands, size,
                       size);
    ga_islands *gi = sw_calloc(1, sizeof *gi);
    if (!gi)
        return sw_fail(err, SW_ENOMEM, "out of memory");
    gi->p = *p;
    gi->ip = *ip;
    if (comm) {
        gi->cm = *comm;
        gi->has_comm = 1;
    }
    gi->rank = rank;
    gi->size = size;
    gi->local = ip->islands / size;
    gi->first = rank * gi->local;
    gi->gb = genome_bytes;
    gi->best_fit = INFINITY;
    size_t M = (size_t)ip->migrants, L = (size_t)gi->local, S = (size_t)size;
    size_t fin_rec = sizeof(final_rec) + genome_bytes;
    gi->isl = sw_calloc(L, sizeof *gi->isl);
    gi->em = sw_malloc(L * M * genome_bytes);
    gi->em_fit = sw_malloc(L * M * sizeof(double));
    gi->msg = sw_malloc(M * (genome_bytes + sizeof(double)));
    gi->msg_in = sw_malloc(M * (genome_bytes + sizeof(double)));
    gi->in_fit = sw_malloc(M * sizeof(double));
    gi->agree = sw_calloc(S, sizeof *gi->agree);
    gi->fin = sw_malloc(S * (fin_rec > sizeof(int64_t) ? fin_rec : sizeof(int64_t)));
    gi->fin_me = sw_malloc(fin_rec);
    gi->best = sw_malloc(genome_bytes);
    if (!gi->isl || !gi->em || !gi->em_fit || !gi->msg || !gi->msg_in || !gi->in_fit ||
        !gi->agree || !gi->fin || !gi->fin_me || !gi->best) {
        ga_islands_free(gi);
        return sw_fail(err, SW_ENOMEM, "out of memory");
    }
    for (int j = 0; j < gi->local; j++) {
        ga_params q = *p;
        q.seed = ip->islands > 1 ? ga_island_seed(p->seed, gi->first + j) : p->seed;
        gi->isl[j] = ga_new(ops, user, genome_bytes, &q);
        if (!gi->isl[j]) {
            ga_islands_free(gi);
            return sw_fail(err, SW_ENOMEM, "out of memory");
        }
    }
    *out = gi;
    return 0;
}

void ga_islands_set_log(ga_islands *gi, FILE *log)
{
    if (gi->first == 0)
        ga_set_log(gi->isl[0], log);
}

void ga_islands_set_progress(ga_islands *gi, int on)
{
    gi->progress = on == GA_PROGRESS_BAR && gi->first == 0; /* ends the bar's line */
    if (gi->first == 0)
        ga_set_progress(gi->isl[0], on);
}

/* Every rank's status after a stretch of generations: rc and, in *stop,
   rank 0's decision to stop. Returns 0 if every rank is well, else the
   first failing rank's error, the same on every rank. */
static int agree(ga_islands *gi, int rc, const sw_err *mine, int *stop, sw_err *err)
{
    if (!gi->has_comm)
        return rc;
    agree_rec me;
    memset(&me, 0, sizeof me);
    me.rc = rc;
    me.stop = *stop;
    if (rc) { /* the message, cut to fit */
        size_t n = strnlen(mine->msg, sizeof me.msg - 1);
        memcpy(me.msg, mine->msg, n);
    }
    int trc = gi->cm.allgather(gi->cm.ctx, &me, gi->agree, sizeof me, err);
    if (trc)
        return trc;
    *stop = gi->agree[0].stop;
    for (int r = 0; r < gi->size; r++)
        if (gi->agree[r].rc)
            return sw_fail(err, gi->agree[r].rc, "rank %d: %s", r, gi->agree[r].msg);
    return 0;
}

/* Each island's M best go to the next island (the last one's to the next
   rank's first), where they replace the worst. Emigrants are all chosen
   before any immigrant arrives. */
static int migrate(ga_islands *gi, sw_err *err)
{
    int M = gi->ip.migrants, L = gi->local;
    size_t gb = gi->gb, gsz = (size_t)M * gb;
    for (int j = 0; j < L; j++)
        ga_emigrants(gi->isl[j], M, gi->em + (size_t)j * gsz, gi->em_fit + (size_t)j * (size_t)M);
    for (int j = L - 1; j > 0; j--)
        ga_immigrate(gi->isl[j], M, gi->em + (size_t)(j - 1) * gsz,
                     gi->em_fit + (size_t)(j - 1) * (size_t)M);
    const unsigned char *last = gi->em + (size_t)(L - 1) * gsz;
    const double *last_fit = gi->em_fit + (size_t)(L - 1) * (size_t)M;
    if (gi->size == 1) {
        ga_immigrate(gi->isl[0], M, last, last_fit);
        return 0;
    }
    memcpy(gi->msg, last, gsz);
    memcpy(gi->msg + gsz, last_fit, (size_t)M * sizeof(double));
    int rc = gi->cm.shift(gi->cm.ctx, gi->msg, gi->msg_in, gsz + (size_t)M * sizeof(double), err);
    if (rc)
        return rc;
    memcpy(gi->in_fit, gi->msg_in + gsz, (size_t)M * sizeof(double)); /* aligned copy */
    ga_immigrate(gi->isl[0], M, gi->msg_in, gi->in_fit);
    return 0;
}

/* The best of every island on every rank; ties go to the lowest island. */
static int gather_best(ga_islands *gi, sw_err *err)
{
    size_t rec = sizeof(final_rec) + gi->gb;
    final_rec mine = {INFINITY, INFINITY, -1, 0};
    const void *mine_g = NULL;
    long gens = 0;
    for (int j = 0; j < gi->local; j++) {
        ga_stats st;
        ga_get_stats(gi->isl[j], &st);
        double f;
        const void *g = ga_best(gi->isl[j], &f);
        if (g && (mine_g == NULL || f < mine.fit)) {
            mine.fit = f;
            mine.island = gi->first + j;
            mine_g = g;
        }
        if (st.initial_best < mine.initial_best)
            mine.initial_best = st.initial_best;
        mine.evaluations += st.evaluations;
        gens = st.generations;
    }
    unsigned char *send = gi->fin_me;
    memcpy(send, &mine, sizeof mine);
    if (mine_g)
        memcpy(send + sizeof mine, mine_g, gi->gb);
    else
        memset(send + sizeof mine, 0, gi->gb);
    int rc = 0;
    if (gi->has_comm)
        rc = gi->cm.allgather(gi->cm.ctx, send, gi->fin, rec, err);
    else
        memcpy(gi->fin, send, rec);
    if (rc)
        return rc;
    memset(&gi->st, 0, sizeof gi->st);
    gi->st.generations = gens;
    gi->st.initial_best = INFINITY;
    gi->best_fit = INFINITY;
    int64_t best_island = -1;
    for (int r = 0; r < gi->size; r++) {
        final_rec fr;
        memcpy(&fr, gi->fin + (size_t)r * rec, sizeof fr);
        gi->st.evaluations += fr.evaluations;
        if (fr.initial_best < gi->st.initial_best)
            gi->st.initial_best = fr.initial_best;
        if (fr.island >= 0 && (fr.fit < gi->best_fit ||
                               (fr.fit == gi->best_fit && fr.island < best_island))) {
            gi->best_fit = fr.fit;
            best_island = fr.island;
            memcpy(gi->best, gi->fin + (size_t)r * rec + sizeof fr, gi->gb);
        }
    }
    gi->st.best = gi->best_fit;
    return 0;
}

/* evaluations of this process's islands so far (for the stop hook) */
static long local_evaluations(const ga_islands *gi)
{
    long n = 0;
    for (int j = 0; j < gi->local; j++) {
        ga_stats st;
        ga_get_stats(gi->isl[j], &st);
        n += st.evaluations;
    }
    return n;
}

int ga_islands_run(ga_islands *gi, sw_err *err)
{
    const ga_params *p = &gi->p;
    if (p->generations <= 0 && p->time_budget_s <= 0)
        return sw_fail(err, SW_EINVAL, "set a generation count or a time budget");
    double t0 = sw_now();
    sw_err mine;
    memset(&mine, 0, sizeof mine);
    int rc = 0, stop = 0, stopped = 0;
    /* the ranks must agree on the genome (the same profile and settings) */
    if (gi->has_comm) {
        int64_t gb = (int64_t)gi->gb, other;
        if ((rc = gi->cm.allgather(gi->cm.ctx, &gb, gi->fin, sizeof gb, err)))
            return rc;
        for (int r = 0; !rc && r < gi->size; r++) {
            memcpy(&other, gi->fin + (size_t)r * sizeof other, sizeof other);
            if (other != gb)
                rc = sw_fail(&mine, SW_EINVAL, "the ranks disagree on the problem (genome of %lld "
                             "bytes on rank %d, %lld here): give every rank the same profile "
                             "and options", (long long)other, r, (long long)gb);
        }
    }
    for (int j = 0; !rc && j < gi->local; j++)
        rc = ga_begin(gi->isl[j], &mine);
    long done = 0;
    for (;;) {
        if (!rc) {
            stop = (p->generations > 0 && done >= p->generations) ||
                   (p->time_budget_s > 0 && sw_now() - t0 >= p->time_budget_s);
            if (!stop && p->stop && p->stop(p->stop_ud, local_evaluations(gi)))
                stop = stopped = 1;
        }
        rc = agree(gi, rc, &mine, &stop, err);
        if (rc && !gi->has_comm)
            *err = mine;
        if (rc || stop)
            break;
        if (done > 0 && gi->ip.islands > 1)
            rc = migrate(gi, &mine); /* a failure is agreed on at the top of the loop */
        long k = gi->ip.interval;
        if (p->generations > 0 && p->generations - done < k)
            k = p->generations - done;
        for (int j = 0; !rc && j < gi->local; j++)
            rc = ga_step(gi->isl[j], k, &mine);
        done += k;
    }
    if (gi->progress)
        fputc('\n', stderr);
    if (rc)
        return rc;
    rc = gather_best(gi, err);
    gi->st.elapsed_s = sw_now() - t0;
    gi->st.stopped = stopped;
    if (!rc && !isfinite(gi->best_fit))
        rc = sw_fail(err, SW_ENOFIT, "no feasible individual found");
    return rc;
}

const void *ga_islands_best(const ga_islands *gi, double *fitness)
{
    if (fitness)
        *fitness = gi->best_fit;
    return isfinite(gi->best_fit) ? gi->best : NULL;
}

void ga_islands_stats(const ga_islands *gi, ga_stats *st) { *st = gi->st; }
