/* osw.h: the machinery of the optimal-swap planner (planners/optimal_swap.c),
   private to it: the program's windows (round trips) and the decisions'
   residencies; the stage model (osw_stage.c), the span model and reading
   the solver's decisions (osw_span.c), the offline packing into one
   address range (osw_pack.c) and the recording through the plan builder
   (osw_record.c). docs/bounds.md, "optimal-swap", describes the models. */
#ifndef OSW_H
#define OSW_H

#include <stdint.h>

#include "../../sim/builder.h"
#include "../../milp/milp.h"

/* One possible round trip of a storage: out in one stage of the gap between
   two accesses, back in in a later one. Stages are schedule positions,
   unwrapped: a gap around the iteration's end has hi >= n. */
typedef struct osw_win {
    int32_t s;      /* the storage */
    int32_t lo, hi; /* the accesses around the gap (schedule positions) */
    int32_t gap;    /* the gap's index among the storage's gaps (its accesses' order) */
    int wrap;       /* 1: the gap around the iteration's end */
    int v_w;        /* var: the round trip is taken (continuous, = sum of outs = sum of ins) */
    int v_oc;       /* vars: copy out in stage lo+1+i, i < hi-lo-2 */
    int v_od;       /* vars: drop in stage od_lo+i, i <= od_hi-od_lo; -1: no drop allowed */
    int32_t od_lo, od_hi;
    int v_in;       /* vars: swap in in stage lo+2+i, i < hi-lo-2 */
    int v_r;        /* vars: off the GPU during stage lo+2+i, i < hi-lo-3 (continuous) */
    /* span model (op indices, unwrapped: a wrap window's hop >= ops) */
    int32_t lop, hop;      /* the ops of the accesses around the gap */
    int v_eo, v_ei;        /* vars: the d2h and h2d stream cursors after this window's copies */
    int32_t out_op, in_op; /* the solution: out done before op out_op starts, in starts after
                              op in_op - 1 ends (unwrapped), -1: not taken */
    /* the solution */
    int32_t out_at, in_at; /* unwrapped stages, -1: not taken */
    int drop;              /* the out is a drop */
} osw_win;

/* Decision sets the span model excludes, one by one, when their packing
   overflows, before it solves again with less memory. */
#define OSW_CUTS 2 /* (the time rule below assumes at most 2) */

/* Perturbed orders the packing tries beside the three plain ones. */
#define OSW_PACK_TRIES 40

/* A residency to place: one storage, one or two stage intervals
   (inclusive), one offset. */
typedef struct osw_item {
    int32_t s;
    int64_t bytes;
    int32_t a0, b0, a1, b1; /* intervals [a0,b0] and [a1,b1] (a1 < 0: none) */
    int64_t off;
    int lead;               /* span model: brought back by a trip around the iteration's end
                               whose in starts before the end: the storage's first placement */
    int32_t key;            /* a rotation's order: -1 across the cut, else start after it */
} osw_item;

typedef struct osw {
    const graph_profile *g;
    int32_t n;             /* stages: 2 per op (copies alone, then the op with copies) */
    int32_t n_ops;         /* ops */
    int32_t *order, *pos;  /* the schedule, each op's position */
    int32_t *uoff, *upos;  /* per storage: its distinct access positions (CSR) */
    uint8_t *udirty;       /* per access: creates or mutates the storage */
    int32_t *death;        /* per storage: graph_lifetimes death */
    osw_win *win;
    int32_t n_win;
    size_t cap_win;
    int32_t *win_off;      /* per storage: its windows (CSR over win, in gap order) */
    double tau;            /* the time unit of the program (s) */
    double rate_h, rate_d, lat; /* alone copy rates (B/s), latency (s) */
    int64_t cap;           /* arena bytes the decisions must fit */
    /* placement */
    osw_item *item;
    int32_t n_item;
    size_t cap_item;
    int32_t *qoff, *qitem, *qcur; /* per storage: the items its placements take, in order */
    int32_t n_q;
    /* span model */
    int span;              /* 1: the span model (copies may span ops), 0: the stage model */
    int v_s;               /* vars: op i of the schedule starts at v_s + i (s / tau) */
    int v_p;               /* var: the iteration time (s / tau), the objective */
    int32_t *ord_in, *ord_out; /* the windows in h2d and d2h stream order */
} osw;

static inline int is_storage(const graph_profile *g, int32_t s)
{
    return g->tensors[s].storage == s;
}

/* The op running in stage st, or -1 in a copy-only stage (the even ones:
   stage 2i precedes op i of the schedule, stage 2i + 1 runs it). */
static inline int32_t stage_op(const osw *x, int32_t st) { return st % 2 ? x->order[st / 2] : -1; }

/* A persistent storage the iteration accesses: live throughout. */
static inline int osw_persistent(const osw *x, int32_t s)
{
    return x->g->tensors[s].persistent && x->uoff[s + 1] > x->uoff[s];
}

/* A sparse row under construction. */
typedef struct term_list {
    int *idx;
    double *val;
    size_t n, cap, cap2;
} term_list;

/* osw_stage.c: the storages' accesses and windows, the stage model */
void osw_free(osw *x);
int osw_accesses(osw *x, sw_err *err);
int osw_windows(osw *x, sw_err *err);
int osw_build(osw *x, milp *m, int64_t cap, sw_err *err);
int osw_tl_add(term_list *t, int i, double v);
void osw_tl_free(term_list *t, int32_t n);
osw_win *osw_win_at(osw *x, int32_t s, int32_t k);
void osw_trip_rows(milp *m, const osw_win *w, int32_t len, int *idx, double *val);

/* osw_span.c: the span model; the decisions of an incumbent */
int osw_build_span(osw *x, milp *m, int64_t cap, const double *fix, sw_err *err);
void osw_nogood(const osw *x, milp *m, const double *v);
void osw_read_span(osw *x, const double *v);
void osw_read(osw *x, const double *v);
double osw_time(const osw *x, double *stage);

/* osw_pack.c: the offline packing (returns the highest byte used in *high) */
int osw_pack(osw *x, int64_t *high, sw_err *err);
int osw_queues(osw *x, const uint8_t *resident);

/* osw_record.c: the plan, and the edges that keep the program's timing */
int osw_record(osw *x, plan_builder *b, const uint8_t *resident, int32_t *stage,
               int32_t *n_ev);
plan *osw_stage_edges(plan *p, const int32_t *stage);
int osw_record_span(osw *x, plan_builder *b, const uint8_t *resident, int32_t *t_in,
                    int32_t *t_out, int32_t *t_run, int32_t *n_ev);
plan *osw_span_edges(const osw *x, plan *p, const int32_t *t_in, const int32_t *t_out,
                     const int32_t *t_run);

#endif
