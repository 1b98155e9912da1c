/* orm.h: the machinery of the optimal-remat planner (planners/optimal_remat.c),
   private to it: the profile as Checkmate's program sees it and a solution
   (orm_state.c: set-up, settling, replay), the integer program and its
   relaxations (orm_model.c), and lp-round, Checkmate's two-phase rounding
   (orm_round.c). docs/bounds.md, "optimal-remat", gives the formulation. */
#ifndef ORM_H
#define ORM_H

#include <stdint.h>

#include "../../sim/builder.h"
#include "../../milp/milp.h"
#include "../planner.h"

#define OR_DEFAULT_TIME_S 60.0 /* solve limit when no --time-budget is given */
#define OR_US 1e6              /* objective unit: microseconds (well scaled for the solver) */
#define OR_HOWLEN 64           /* a rounding's name */
#define OR_HOLD_PASSES 3       /* orc_improve's passes over the re-runs */

/* The profile as the program sees it: positions in g->order, and the
   tracked storages (non-persistent roots some op accesses), compactly
   numbered. */
typedef struct orc {
    const graph_profile *g;
    int32_t T;          /* ops (stages) */
    int32_t ns;         /* tracked storages */
    int32_t *st;        /* per tracked storage: its storage id */
    int32_t *sid;       /* per tensor: its tracked index, -1 */
    int32_t *pp;        /* per tracked storage: position of its producer */
    int32_t *N;         /* per tracked storage: the last stage it could be needed in */
    int64_t *M;         /* per tracked storage: bytes */
    int32_t *acc_off;   /* per position: CSR offsets into acc_c/acc_mk (tracked accesses) */
    int32_t *acc_c;     /* tracked storage accessed */
    uint8_t *acc_mk;    /* 1: the op creates it; 0: reads or mutates it */
    int32_t *nout;      /* per position: tracked storages the op creates */
    uint8_t *elig;      /* per position: the op may be re-run */
    int32_t *H;         /* per position: the last stage a re-run reads its inputs' versions */
    int32_t *RH;        /* per position: the last stage a re-run can be of use (<= H) */
    double *time;       /* per position: the op's compute time (s) */
    int64_t persist;    /* persistent bytes, resident throughout */
    int64_t cap;        /* bytes the tracked storages may occupy: arena - persistent */
    /* a solution and its replay */
    uint8_t *R;         /* T x T: R[t * T + k], k < t: op k re-run in stage t */
    uint8_t *S;         /* T x ns: S[t * ns + c]: c resident when stage t begins */
    uint8_t *need;      /* per tracked storage (scratch) */
    uint8_t *res;       /* per tracked storage (scratch) */
    int32_t *last;      /* per tracked storage (scratch) */
    int32_t *list;      /* per position (scratch) */
    /* the LP relaxation (lp-round), kept across the solves at smaller caps */
    double *lpS;        /* T x ns: its S values, or NULL before the first solve */
    double *lpR;        /* T x T: its R values (0 where R has no variable) */
    double lp_obj;      /* its objective: recompute time (us), a lower bound at lp_cap */
    int64_t lp_cap;     /* the byte cap it was solved for */
    double lp_s;        /* seconds spent in the LP solves */
    int lp_solves;      /* LP solves (the first at the budget, then smaller caps) */
    int lp_vars, lp_rows;
    const char *lp_solver;
    int lp_coarse;      /* 1: the relaxation solved is the coarse one */
    int lp_bounded;     /* 1: lp_bound is set */
    double lp_bound;    /* the first relaxation's objective (us): a bound at the budget */
} orc;

typedef struct or_eval {
    int64_t peak;       /* most bytes of tracked storages resident at once */
    int32_t over;       /* the first stage where they exceed c->cap, or -1 */
    int32_t reruns;     /* re-runs */
    double recompute_s; /* their time */
} or_eval;

#define ALLOC(p, n) ((p) = sw_calloc((size_t)(n) + 1, sizeof *(p)))

/* T x T, the size of R. */
static inline int64_t Tsq(const orc *c) { return (int64_t)c->T * c->T; }

/* May op k be re-run in stage t? */
static inline int can_rerun(const orc *c, int32_t t, int32_t k)
{
    return k < t && c->elig[k] && t <= c->RH[k];
}

/* The integer program under construction. */
typedef struct orm {
    milp *m;
    int32_t *Rv;   /* T x T: variable of R[t][k], -1 */
    int32_t *Sv;   /* T x ns: variable of S[t][c], -1 */
    double *x0;    /* the start's value per variable, or NULL (no start) */
    size_t cap0;
    double unit;   /* bytes per memory unit in the rows */
    int oom;
} orm;

/* orm_state.c: the view of the profile, settling and replaying a solution */
void orc_free(orc *c);
int orc_setup(orc *c, const graph_profile *g, int forward_only, sw_err *err);
int orc_settle(orc *c);
int orc_replay(orc *c, plan_builder *b, or_eval *r);
int orc_from_plan(orc *c, const plan *p);

/* orm_model.c: the integer program and its relaxations */
int64_t orm_size(const orc *c);
int orm_build(orc *c, orm *q, int with_start);
void orm_free(orm *q);
int orm_build_coarse(orc *c, orm *q, int64_t tiny);
int or_lp(orc *c, const planner_opts *o, double deadline, milp_status *st, sw_err *err);

/* orm_round.c: lp-round */
void orc_r_from_s(orc *c);
int orc_repair(orc *c, const double *lpS, int32_t *nu, or_eval *ev, int32_t max_iter);
int orc_improve(orc *c, or_eval *ev);
int or_round(orc *c, const planner_opts *o, uint8_t *bestR, or_eval *best, int have,
             char *how, size_t howlen, int *tried, int *won, double *rbest, char *rhow,
             uint8_t *rbestR);

#endif
