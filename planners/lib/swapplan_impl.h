/* swapplan_impl.h: the state of SwapAdvisor's swap planner (planners/swapplan.h),
   private to its files: set-up, sizes and the smallest pools (swapplan.c),
   the Belady walk and swapplan_make (swapplan_walk.c), and the fast
   evaluation path writing the simulator's compiled form (swapplan_fast.c). */
#ifndef SWAPPLAN_IMPL_H
#define SWAPPLAN_IMPL_H

#include <stdint.h>

#include "swapplan.h"

/* The fast evaluation path's state (see sp_fast_eval), kept across calls. */
typedef struct sp_fast {
    int32_t *rset;             /* the resident set, ascending */
    int32_t n_r;               /* its size */
    int32_t E;                 /* tasks (events), end-of-iteration ones included */
    size_t cap_e;              /* capacity of the per-event arrays */
    uint8_t *ev_st;            /* per event: its stream */
    int32_t *stream_idx;       /* per event: its index in its stream */
    int32_t n_s[STREAM__COUNT];/* per stream: events */
    int32_t last_of[STREAM__COUNT]; /* per stream: its last event */
    int32_t *place_off;        /* per event: CSR offsets into place_res */
    int32_t *place_res;        /* residencies placed, in event order */
    size_t n_place, cap_place;
    int32_t *free_off;         /* per event: CSR offsets into free_s */
    int64_t *ev_alloc, *ev_freeb; /* per event: bytes it places, bytes it frees implicitly
                                  (pass 0) */
    int32_t *free_s;           /* storages freed implicitly, by event, ascending within one */
    size_t n_free;
    int32_t *res_s, *res_obj;  /* per residency: storage, its pool object (-1: none yet, or
                                  zero bytes) */
    size_t n_res, cap_res;
    int32_t *cur_res, *rix, *final_res; /* per storage: current residency, its residency at
                                  the start (members of R), residency open at the end (all
                                  -1 for none) */
    int64_t *place_ref, *user_ref, *copyout_ref; /* per storage: last placement, compute use
                                  since, swap-out, as event references (fref), -1 none */
    int32_t *vc;               /* [2][E][3] vector clocks over the streams */
    int32_t *dep, *pdep;       /* per event: up to two edges each, -1 none */
    int32_t *obj_base, *qhead, *qtail, *qn; /* per class: first flat object, free queue
                                  head and tail (-1 empty), free objects */
    int32_t *onext, *oprev;    /* per flat object: free queue links */
    uint8_t *ofree;            /* per flat object: free */
    int64_t *obj_tag;          /* per flat object: last release, or -2 occupied */
    int64_t capacity;          /* the pool's bytes */
    int32_t n_obj, n_classes;  /* the pool's objects and classes */
    int32_t lis[STREAM__COUNT];/* pass 0: per stream, the last event processed */
    /* the state after the first attempt's pass 0 (see fast_resume) */
    int32_t *snap_rcur;        /* per storage: open residency after the first attempt's events */
    int32_t *snap_cur;
    int64_t *snap_place_ref, *snap_user_ref, *snap_copyout_ref, *snap_obj_tag;
    int32_t *snap_onext, *snap_oprev, *snap_qhead, *snap_qtail, *snap_qn;
    uint8_t *snap_ofree;
    int32_t snap_lis[STREAM__COUNT], snap_n_s[STREAM__COUNT], snap_last_of[STREAM__COUNT];
    size_t snap_n_res, snap_n_place;
    int32_t *reloc, *all;      /* tensors that cannot come home: this attempt's, all so far */
    size_t n_reloc, cap_reloc, cap_all;
    sim_prog *prog;            /* the compiled program, rebuilt in place */
    sim_ws *ws;                /* the simulator's scratch */
} sp_fast;

/* A storage as the walk sees it, one cache line's half: everything its
   loop over an op's accesses reads and writes. */
typedef struct sp_st {
    int32_t nk;                /* index in use_pos of its next use (use_off[s] + uses passed) */
    int32_t ne;                /* use_off[s + 1]: its uses end there */
    int32_t death;             /* position of its death (graph_lifetimes) */
    int32_t cls;               /* its class, -1 for zero bytes or non-storage */
    int32_t lu;                /* 0: never used yet; else 1 + the position of its last use */
    uint32_t pin;              /* the epoch of the op using it */
    uint8_t res, hv, used;     /* resident, host copy valid, used this pass */
    uint8_t fl;                /* TF_* bits */
    uint8_t held;              /* in its class's held set (resident, no use left) */
    uint8_t bhv;               /* pass 2: the builder's host-valid flag (as hv, except that a
                                  drop leaves it, and a member of R that leaves R unused
                                  takes the value of a storage never in R) */
} sp_st;

struct swapplan {
    const graph_profile *g;
    int64_t budget, pool_bytes;
    sp_sizes sz;
    int32_t nt, no;
    double h2d_bw;
    double *lim;               /* per storage: threshold x bytes / h2d_bw, how long ago a
                                  victim must have been used (s), for threshold lim_thr */
    double lim_thr;            /* the threshold lim holds (NAN: none yet) */
    /* per call */
    int32_t *pos_of_op;
    double *t_at;              /* compute time before position i (n + 1) */
    int32_t *use_off, *use_pos;/* per storage: schedule positions using it (CSR; the offsets
                                  are the profile's, set once) */
    int32_t *scratch;          /* per storage: scratch (graph_lifetimes_again, the held) */
    int32_t *death;            /* per storage: position of its death (graph_lifetimes) */
    int32_t *hf_off, *hf;      /* per position: storages held past their last use, freed there */
    sp_st *st;                 /* per storage: the walk's state (compact for its hot loop) */
    double *t_end;             /* t_end[0] = -inf, t_end[i + 1] = t_at[i + 1]: when the op at
                                  position i ends (the times sp_st.lu refers to) */
    uint8_t *in_r, *persist;
    uint32_t epoch;            /* increases with every op walked */
    int32_t *cls_of;           /* per storage: class, -1 for zero bytes or non-storage */
    int32_t *class_n;          /* per class: scratch (its storages) */
    int32_t *class_free;       /* per class: free objects */
    int32_t *cnt_eff;          /* per class: objects used (at most the class's storages) */
    /* Belady's order over each class's resident storages (see need): */
    uint64_t *pbits;           /* per class, pw words: bit p set when a resident storage of
                                  the class may have its next use at position p (0 .. 2n - 1;
                                  n + q: a persistent one's first use q, next iteration) */
    uint64_t *psum;            /* per class, psw words: bit w set when word w of pbits is not 0 */
    uint64_t *hbits;           /* per class, hw words: the held set, resident storages with no
                                  use left (held by the framework until their death), by id */
    int32_t *hcnt;             /* per class: storages in the held set */
    int32_t pw, psw, hw;       /* words per class of pbits, psum, hbits */
    int32_t *cand;             /* need's scratch: one position's storages (max_acc) */
    int naive;                 /* victims by sorting every resident storage (tests) */
    uint64_t *naive_buf;       /* its scratch: keys (nt) */
    int32_t n_classes_cap;
    uint8_t *ev_kind;          /* the tasks recorded: kind (TASK_*) */
    int32_t *ev_x;             /* and op or storage */
    size_t n_ev, cap_ev;
    size_t e_max;              /* pass 2's events at most (sp_reserve; 0: not reserved yet) */
    int32_t *pers, n_pers;     /* the persistent storages, ascending */
    plan_builder *b;
    int64_t *csize;            /* per class: object size (the largest size mapped to it) */
    uint8_t *tflag;            /* per tensor: TF_* bits (profile fields, compact for hot loops) */
    int32_t *held;             /* per tensor: held_until */
    double *op_time;           /* per op: compute time (s) */
    int32_t *mc_off, *mc_idx;  /* the ops' distinct multisets of size indices (CSR over
                                  groups; swapplan_min_counts needs one op of each) */
    int32_t n_mc;              /* how many */
    int fast;                  /* evaluate through the fast path (default 1) */
    int64_t n_fast;            /* evaluations the fast path completed */
    sp_fast f;                 /* the fast evaluation path's buffers */
    char why[256];
};

#define SP_WALK_MAX 8192 /* entries need's walk visits at most */

#define TF_ROOT 1     /* a storage (root tensor) */
#define TF_EXTERNAL 2 /* no producer: its host copy exists at start */
#define TF_PERSIST 4  /* persistent */

/* room for n tasks (swapplan_walk.c) */
int sp_grow_ev(swapplan *sp, size_t n);

static inline int push_ev(swapplan *sp, int kind, int32_t x)
{
    if (sp->n_ev >= sp->cap_ev && sp_grow_ev(sp, sp->n_ev + 1))
        return SW_ENOMEM;
    sp->ev_kind[sp->n_ev] = (uint8_t)kind;
    sp->ev_x[sp->n_ev] = x;
    sp->n_ev++;
    return 0;
}

/* Pass 2 records event (kind, x) with what the fast path needs of it: its
   stream and index there, no edges yet, and where its placements and
   implicit frees start. The capacities are reserved before the walk
   (sp_reserve). */
static inline void rec_ev(swapplan *sp, int kind, int32_t x)
{
    sp_fast *f = &sp->f;
    size_t e = sp->n_ev++;
    int st = plan_task_stream(kind);
    sp->ev_kind[e] = (uint8_t)kind;
    sp->ev_x[e] = x;
    f->ev_st[e] = (uint8_t)st;
    f->stream_idx[e] = f->n_s[st]++;
    f->last_of[st] = (int32_t)e;
    f->dep[2 * e] = f->dep[2 * e + 1] = f->pdep[2 * e] = f->pdep[2 * e + 1] = -1;
    f->place_off[e] = (int32_t)f->n_place;
    f->free_off[e] = (int32_t)f->n_free;
}

/* a residency of s, placed by the event recorded last */
static inline void rec_place(sp_fast *f, int32_t s)
{
    int32_t r = (int32_t)f->n_res++;
    f->res_s[r] = s;
    f->res_obj[r] = -1;
    f->place_res[f->n_place++] = r;
    f->cur_res[s] = r;
}

/* swapplan_fast.c: the fast evaluation path. sp_reserve reserves the
   capacities pass 2 records into (0 or SW_ENOMEM); sp_fast_eval evaluates
   the plan pass 2 recorded without building it: 0, FAST_DECLINE (the
   builder path must run), or an error code (with err). */
#define FAST_DECLINE 1
int sp_reserve(swapplan *sp);
int sp_fast_eval(swapplan *sp, sim_result *r, sw_err *err, const sp_alloc *al);

#endif
