/* swapplan_fast.c: SwapAdvisor's evaluations without the plan builder. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "swapplan_impl.h"

/* ------------------------------------------------------------------ */
/* The fast evaluation path: the builder's placement and edge inference
   (sim/builder.c, pb_finish) specialised to this planner's plans (a pool,
   tasks run, swap-in, swap-out, drop), writing the simulator's compiled
   form directly instead of a plan, into buffers kept across calls. It
   reproduces the builder's result exactly; whatever it does not handle
   (a placement the pool cannot make, a swap-in with no copy to read, a
   release of what is not resident) it declines, and the builder path runs instead,
   so errors and messages are the builder's.
   A twin, on purpose: a change to the builder's placement or edge
   inference (sim/builder.c, finish_once) is a change to this path too, and
   a change here must keep it the builder's (tests/test_swapplan_fast
   compares the two). */

#define FREF_NONE (-1)
#define FREF_LIVE (-2)

/* A reference to event e of pass p (a task of the first or the second
   iteration): the pass (bit 62), its stream (bits 60-61), its position in
   the stream over both passes (bits 32-59: p x the stream's events + its
   index there) and the event (bits 0-31). Two references to one stream and
   pass compare as their positions; FREF_NONE and FREF_LIVE are below all. */
static inline int64_t fref(int p, int st, int32_t pos, int32_t e)
{
    return ((int64_t)p << 62) | ((int64_t)st << 60) | ((int64_t)pos << 32) |
           (int64_t)(uint32_t)e;
}
static inline int fref_pass(int64_t r) { return (int)(r >> 62); }
static inline int fref_stream(int64_t r) { return (int)(r >> 60) & 3; }
static inline int32_t fref_pos(int64_t r) { return (int32_t)((r >> 32) & 0x0fffffff); }
static inline int32_t fref_ev(int64_t r) { return (int32_t)(r & 0xffffffff); }

/* grow the per-event arrays to e events */
static int fast_reserve_events(swapplan *sp, size_t e)
{
    sp_fast *f = &sp->f;
    if (e <= f->cap_e)
        return 0;
    size_t c = f->cap_e ? f->cap_e : 1024;
    while (c < e)
        c *= 2;
    int ok = 1;
#define FGROW(a, n)                                                                                \
    do {                                                                                           \
        void *x_ = sw_realloc(f->a, (n) * sizeof *f->a);                                           \
        if (x_)                                                                                    \
            f->a = x_;                                                                             \
        else                                                                                       \
            ok = 0;                                                                                \
    } while (0)
    FGROW(ev_st, c + 1);
    FGROW(stream_idx, c + 1);
    FGROW(place_off, c + 1);
    FGROW(free_off, c + 1);
    FGROW(ev_alloc, c + 1);
    FGROW(ev_freeb, c + 1);
    FGROW(vc, 6 * c + 1);
    FGROW(dep, 2 * c + 1);
    FGROW(pdep, 2 * c + 1);
#undef FGROW
    if (!ok)
        return SW_ENOMEM;
    f->cap_e = c;
    return 0;
}

/* room for c residencies */
static int fast_grow_res(sp_fast *f, size_t c)
{
    if (c <= f->cap_res)
        return 0;
    int32_t *a = sw_realloc(f->res_s, c * sizeof *a);
    if (a)
        f->res_s = a;
    int32_t *o = sw_realloc(f->res_obj, c * sizeof *o);
    if (o)
        f->res_obj = o;
    if (!a || !o)
        return SW_ENOMEM;
    f->cap_res = c;
    return 0;
}

static inline int fast_new_res(sp_fast *f, int32_t s)
{
    if (f->n_res >= f->cap_res && fast_grow_res(f, f->cap_res ? 2 * f->cap_res : 1024))
        return -1;
    int32_t r = (int32_t)f->n_res++;
    f->res_s[r] = s;
    f->res_obj[r] = -1;
    return r;
}

static inline int fast_push_place(sp_fast *f, int32_t r)
{
    if (f->n_place >= f->cap_place && SW_GROW(f->place_res, f->cap_place, f->n_place + 1))
        return -1;
    f->place_res[f->n_place++] = r;
    return 0;
}

/* the pool: per class a queue of free objects in release order */
static inline void fpool_unlink(sp_fast *f, int32_t c, int32_t obj)
{
    int32_t b = f->obj_base[c], x = b + obj;
    int32_t nx = f->onext[x], pv = f->oprev[x];
    if (pv >= 0)
        f->onext[b + pv] = nx;
    else
        f->qhead[c] = nx;
    if (nx >= 0)
        f->oprev[b + nx] = pv;
    else
        f->qtail[c] = pv;
    f->ofree[x] = 0;
    f->qn[c]--;
}

static inline void fpool_append(sp_fast *f, int32_t c, int32_t obj)
{
    int32_t b = f->obj_base[c], x = b + obj;
    f->onext[x] = -1;
    f->oprev[x] = f->qtail[c];
    if (f->qtail[c] >= 0)
        f->onext[b + f->qtail[c]] = obj;
    else
        f->qhead[c] = obj;
    f->qtail[c] = obj;
    f->ofree[x] = 1;
    f->qn[c]++;
}

/* A candidate edge from ref to an event on stream st, filed per stream in
   cand: pass 0 files its own events (the intra-iteration edges), pass 1
   only pass 0's (the edges from the previous iteration; its own events'
   edges are pass 0's). */
static inline void fast_cand(int64_t *cand, int p, int st, int64_t ref)
{
    if (ref < 0 || (p == 1 && fref_pass(ref) == 1))
        return;
    int s = fref_stream(ref);
    if (s != st && ref > cand[s]) /* the same stream: implied by its order; the
                                     candidates of one call are of one pass */
        cand[s] = ref;
}

static inline int32_t fast_pos(const sp_fast *f, int p, int32_t e)
{
    return p * f->n_s[f->ev_st[e]] + f->stream_idx[e];
}

static inline int32_t *fast_vc(const sp_fast *f, int p, int32_t e)
{
    return f->vc + ((size_t)p * (size_t)f->E + (size_t)e) * 3;
}

static inline void fast_join(int32_t *dst, const int32_t *src)
{
    for (int s = 0; s < STREAM__COUNT; s++)
        if (src[s] > dst[s])
            dst[s] = src[s];
}

/* fast_choose's test of the candidate on stream s (a constant: always
   inlined, so each stream's test is straight-line code) */
static inline __attribute__((always_inline)) void fast_keep(const int32_t *vc,
                                                            const int64_t *cand, const int s,
                                                            int64_t *keep, int32_t *kpos,
                                                            int *ks, int *nk)
{
    if (cand[s] < 0)
        return;
    int32_t pos = fref_pos(cand[s]);
    if (vc[s] < pos) {
        keep[*nk] = cand[s];
        kpos[*nk] = pos;
        ks[(*nk)++] = s;
    }
}

/* the builder's choose(): at most two candidates not implied by vc.
   cand[s] is on stream s (fast_cand files it there). */
static inline __attribute__((always_inline)) void fast_choose(const sp_fast *f, int32_t *vc,
                                                              const int64_t *cand, int32_t *out)
{
    int64_t keep[3];
    int32_t kpos[3];
    int ks[3], nk = 0;
    fast_keep(vc, cand, 0, keep, kpos, ks, &nk);
    fast_keep(vc, cand, 1, keep, kpos, ks, &nk);
    fast_keep(vc, cand, 2, keep, kpos, ks, &nk);
    out[0] = out[1] = -1;
    if (nk == 0)
        return;
    if (nk == 2) {
        const int32_t *v0 = fast_vc(f, fref_pass(keep[0]), fref_ev(keep[0]));
        const int32_t *v1 = fast_vc(f, fref_pass(keep[1]), fref_ev(keep[1]));
        if (v0[ks[1]] >= kpos[1])
            nk = 1;
        else if (v1[ks[0]] >= kpos[0]) {
            keep[0] = keep[1];
            nk = 1;
        }
    }
    for (int i = 0; i < nk; i++) {
        fast_join(vc, fast_vc(f, fref_pass(keep[i]), fref_ev(keep[i])));
        out[i] = fref_ev(keep[i]);
    }
}

/* release the residency of s at event me (explicit or implicit) */
static inline void fast_release(sp_fast *f, const swapplan *sp, int p, int32_t s, int64_t me)
{
    int32_t r = f->cur_res[s];
    if (sp->g->bytes[s] > 0) {
        int32_t c = sp->cls_of[s], x = f->obj_base[c] + f->res_obj[r];
        if (p == 0)
            fpool_append(f, c, f->res_obj[r]);
        f->obj_tag[x] = me;
    }
    f->cur_res[s] = -1;
    f->place_ref[s] = f->user_ref[s] = FREF_NONE;
}

/* The builder's process_pass from event e0 on: pass 0 places and picks
   the intra-iteration edges, pass 1 the edges from the previous iteration.
   last_in_stream (per stream, the last event processed, -1) is updated. */
static inline int fast_pass(swapplan *sp, const int p, int32_t e0, int32_t *last_in_stream)
{
    sp_fast *f = &sp->f;
    const graph_profile *g = sp->g;
    int32_t E = f->E;
    unsigned covered = 0, streams = 0; /* pass 1: the streams covered, and those with events */
    for (int s = 0; s < STREAM__COUNT; s++)
        if (f->n_s[s] > 0)
            streams |= 1u << s;
    for (int32_t e = e0; e < E; e++) {
        int kind = sp->ev_kind[e];
        int32_t x = sp->ev_x[e];
        int st = f->ev_st[e];
        int64_t cand[STREAM__COUNT] = {FREF_NONE, FREF_NONE, FREF_NONE};
        int32_t mpos = fast_pos(f, p, e);
        int64_t me = fref(p, st, mpos, e);
        int64_t alloc = 0, freeb = 0;
        for (int32_t k = f->place_off[e]; k < f->place_off[e + 1]; k++) {
            int32_t r = f->place_res[k], s = f->res_s[r];
            int64_t bytes = g->bytes[s];
            alloc += bytes;
            if (bytes > 0) {
                int32_t c = sp->cls_of[s];
                if (p == 0) {
                    if (f->final_res[s] == r && sp->in_r[s]) {
                        /* returns home; if its home is taken, it comes home at
                           the end instead (pb_finish): placed anywhere now */
                        int32_t home = f->res_obj[f->rix[s]];
                        if (f->ofree[f->obj_base[c] + home]) {
                            fpool_unlink(f, c, home);
                            f->res_obj[r] = home;
                        } else {
                            if (SW_GROW(f->reloc, f->cap_reloc, f->n_reloc + 1))
                                return SW_ENOMEM;
                            f->reloc[f->n_reloc++] = s;
                            if (f->qn[c] == 0)
                                return FAST_DECLINE;
                            f->res_obj[r] = f->qhead[c];
                            fpool_unlink(f, c, f->qhead[c]);
                        }
                    } else {
                        if (f->qn[c] == 0)
                            return FAST_DECLINE;
                        f->res_obj[r] = f->qhead[c];
                        fpool_unlink(f, c, f->qhead[c]);
                    }
                }
                int64_t *tag = &f->obj_tag[f->obj_base[c] + f->res_obj[r]];
                if (*tag == FREF_LIVE)
                    return FAST_DECLINE;
                fast_cand(cand, p, st, *tag);
                *tag = FREF_LIVE;
            }
            f->cur_res[s] = r;
            f->place_ref[s] = me;
            f->user_ref[s] = FREF_NONE;
            if (kind == TASK_SWAP_IN) {
                int64_t co = f->copyout_ref[s];
                if (co >= 0 && fref_pass(co) == p)
                    fast_cand(cand, p, st, co);
                else if (sp->tflag[s] & TF_PERSIST)
                    fast_cand(cand, p, st, co);
                else if (!(sp->tflag[s] & TF_EXTERNAL))
                    return FAST_DECLINE;
            }
        }
        if (kind == TASK_RUN) {
            for (int32_t k = g->acc_off[x]; k < g->acc_off[x + 1]; k++) {
                if (g->acc_flag[k] & GA_CREATE)
                    continue;
                int32_t s = g->acc[k];
                fast_cand(cand, p, st, f->place_ref[s]);
                f->user_ref[s] = me;
            }
        } else if (kind == TASK_SWAP_OUT || kind == TASK_DROP) {
            if (f->cur_res[x] < 0)
                return FAST_DECLINE;
            fast_cand(cand, p, st, f->user_ref[x]);
            fast_cand(cand, p, st, f->place_ref[x]);
            fast_release(f, sp, p, x, me);
            if (kind == TASK_SWAP_OUT)
                f->copyout_ref[x] = me;
        }
        for (int32_t k = f->free_off[e]; k < f->free_off[e + 1]; k++) {
            freeb += g->bytes[f->free_s[k]];
            fast_release(f, sp, p, f->free_s[k], me);
        }
        if (p == 0) {
            f->ev_alloc[e] = alloc;
            f->ev_freeb[e] = freeb;
        }
        int32_t *vc = fast_vc(f, p, e);
        int32_t prev = last_in_stream[st];
        if (prev >= 0)
            memcpy(vc, fast_vc(f, p, prev), 3 * sizeof *vc);
        else if (p == 1 && f->n_s[st] > 0)
            memcpy(vc, fast_vc(f, 0, f->last_of[st]), 3 * sizeof *vc);
        else
            vc[0] = vc[1] = vc[2] = -1;
        if (p == 0) {
            fast_choose(f, vc, cand, f->dep + 2 * (size_t)e);
        } else {
            for (size_t i = 0; i < 2; i++)
                if (f->dep[2 * (size_t)e + i] >= 0)
                    fast_join(vc, fast_vc(f, 1, f->dep[2 * (size_t)e + i]));
            fast_choose(f, vc, cand, f->pdep + 2 * (size_t)e);
        }
        vc[st] = mpos;
        last_in_stream[st] = e;
        /* pass 1: once an event's clock covers every stream's last pass 0
           event, every later event of its stream (whose clock starts from
           this one and only grows) has each pass 0 candidate implied, so
           no edge from the previous iteration; when that holds on every
           stream, the rest of the pass adds nothing. Nothing else it
           computes differs from pass 0, whose checks all passed: from its
           first write in this pass each storage's and object's state is
           pass 0's at the same event, and before it pass 0's end state,
           which is its start state (the resident set, every one home). */
        if (p == 1) {
            if (vc[0] >= f->n_s[0] - 1 && vc[1] >= f->n_s[1] - 1 && vc[2] >= f->n_s[2] - 1)
                covered |= 1u << st;
            if (covered == streams)
                break;
        }
    }
    return 0;
}

/* fast_pass for each pass, so each is compiled for its constant p */
static int fast_pass0(swapplan *sp, int32_t e0, int32_t *lis) { return fast_pass(sp, 0, e0, lis); }
static int fast_pass1(swapplan *sp, int32_t *lis) { return fast_pass(sp, 1, 0, lis); }

/* pb_end_iteration on pass 2's end state: the persistent storages
   resident but not in R leave (copied if their host copy is stale), then
   the members of R not resident come back, with their residencies; R in
   f->rset, ascending, and each member's final residency. Pass 2 recorded
   the rest as the builder would build it (its placements, implicit frees
   and host-valid flags): tests/test_swapplan_fast compares the two paths. */
static void fast_end(swapplan *sp)
{
    sp_fast *f = &sp->f;
    f->n_r = 0;
    for (int32_t i = 0; i < sp->n_pers; i++) {
        int32_t s = sp->pers[i];
        sp_st *x = &sp->st[s];
        if (sp->in_r[s]) {
            f->rset[f->n_r++] = s;
        } else if (x->res) {
            rec_ev(sp, x->bhv ? TASK_DROP : TASK_SWAP_OUT, s);
            f->cur_res[s] = -1;
            x->bhv = 1;
            x->res = 0;
        }
    }
    for (int32_t i = 0; i < f->n_r; i++) {
        int32_t s = f->rset[i];
        if (!sp->st[s].res) {
            rec_ev(sp, TASK_SWAP_IN, s);
            rec_place(f, s);
            sp->st[s].res = 1;
        }
        f->final_res[s] = f->cur_res[s];
    }
    f->E = (int32_t)sp->n_ev;
    f->place_off[f->E] = (int32_t)f->n_place;
    f->free_off[f->E] = (int32_t)f->n_free;
}

/* The first attempt of the builder's finish_once: residencies, placements
   and pass 0's edges. 0 (then f->n_reloc tensors could not come home, and
   pass 1 is still to do), FAST_DECLINE or SW_ENOMEM. */
static int fast_attempt(swapplan *sp, const sp_alloc *al)
{
    sp_fast *f = &sp->f;
    const graph_profile *g = sp->g;
    int32_t nt = sp->nt;
    f->n_reloc = 0;
    memcpy(f->snap_rcur, f->cur_res, (size_t)nt * sizeof *f->cur_res);
    /* the pool: objects of each class free, lowest index first */
    int64_t capacity = 0;
    int32_t total = 0;
    for (int32_t c = 0; c < al->n_classes; c++) {
        f->obj_base[c] = total;
        f->qhead[c] = f->qtail[c] = -1;
        f->qn[c] = 0;
        total += sp->cnt_eff[c];
        capacity += sp->csize[c] * sp->cnt_eff[c];
    }
    if (capacity + g->max_workspace > sp->budget)
        return FAST_DECLINE;
    f->capacity = capacity;
    f->n_obj = total;
    for (int32_t c = 0; c < al->n_classes; c++)
        for (int32_t i = 0; i < sp->cnt_eff[c]; i++)
            fpool_append(f, c, i);
    for (int32_t i = 0; i < total; i++)
        f->obj_tag[i] = FREF_NONE;
    for (int32_t s = 0; s < nt; s++) {
        f->cur_res[s] = -1;
        f->place_ref[s] = f->user_ref[s] = f->copyout_ref[s] = FREF_NONE;
    }
    for (int32_t i = 0; i < f->n_r; i++) {
        int32_t s = f->rset[i], r = f->rix[s]; /* its residency at the start */
        f->cur_res[s] = r;
        if (g->bytes[s] <= 0)
            continue;
        int32_t c = sp->cls_of[s];
        if (f->qn[c] == 0)
            return FAST_DECLINE;
        f->res_obj[r] = f->qhead[c];
        fpool_unlink(f, c, f->qhead[c]);
        f->obj_tag[f->obj_base[c] + f->res_obj[r]] = FREF_LIVE;
    }
    for (int st = 0; st < STREAM__COUNT; st++)
        f->lis[st] = -1;
    return fast_pass0(sp, 0, f->lis);
}

/* Save (save = 1) or restore the state pass 0 leaves after the first
   attempt's events: the pool, the object tags, the per-storage references. */
static void fast_snapshot(swapplan *sp, int save)
{
    sp_fast *f = &sp->f;
    size_t nt = (size_t)sp->nt, no = (size_t)f->n_obj, nc = (size_t)f->n_classes;
#define SNAP(a, b, n)                                                                              \
    do {                                                                                           \
        if (save)                                                                                  \
            memcpy(f->b, f->a, (n) * sizeof *f->a);                                                \
        else                                                                                       \
            memcpy(f->a, f->b, (n) * sizeof *f->a);                                                \
    } while (0)
    SNAP(cur_res, snap_cur, nt);
    SNAP(place_ref, snap_place_ref, nt);
    SNAP(user_ref, snap_user_ref, nt);
    SNAP(copyout_ref, snap_copyout_ref, nt);
    SNAP(onext, snap_onext, no);
    SNAP(oprev, snap_oprev, no);
    SNAP(ofree, snap_ofree, no);
    SNAP(obj_tag, snap_obj_tag, no);
    SNAP(qhead, snap_qhead, nc);
    SNAP(qtail, snap_qtail, nc);
    SNAP(qn, snap_qn, nc);
    SNAP(lis, snap_lis, (size_t)STREAM__COUNT);
#undef SNAP
}

/* A later attempt: the events from n_orig on (tensors leaving and coming
   home) appended to the first attempt's. Everything before n_orig is as
   the first attempt left it (a relocated tensor's earlier residency was
   placed as an ordinary one there already), so only the new events are
   processed, from the saved state. Returns as fast_attempt. */
static int fast_resume(swapplan *sp, int32_t n_orig)
{
    sp_fast *f = &sp->f;
    int32_t nt = sp->nt;
    int rc = fast_reserve_events(sp, sp->n_ev + 1);
    if (rc)
        return rc;
    f->E = (int32_t)sp->n_ev;
    f->n_reloc = 0;
    int32_t E = f->E;
    for (int st = 0; st < STREAM__COUNT; st++) {
        f->n_s[st] = f->snap_n_s[st];
        f->last_of[st] = f->snap_last_of[st];
    }
    for (int32_t e = n_orig; e < E; e++) {
        int st = plan_task_stream(sp->ev_kind[e]);
        f->ev_st[e] = (uint8_t)st;
        f->stream_idx[e] = f->n_s[st]++;
        f->last_of[st] = e;
        f->dep[2 * e] = f->dep[2 * e + 1] = f->pdep[2 * e] = f->pdep[2 * e + 1] = -1;
    }
    /* residencies of the new events (swap-ins place, the others release) */
    f->n_res = f->snap_n_res;
    f->n_place = f->snap_n_place;
    memcpy(f->cur_res, f->snap_rcur, (size_t)nt * sizeof *f->cur_res);
    for (int32_t e = n_orig; e < E; e++) {
        int32_t x = sp->ev_x[e];
        f->place_off[e] = (int32_t)f->n_place;
        if (sp->ev_kind[e] == TASK_SWAP_IN) {
            int32_t r = fast_new_res(f, x);
            if (r < 0 || fast_push_place(f, r))
                return SW_ENOMEM;
            f->cur_res[x] = r;
        } else {
            if (sp->ev_kind[e] == TASK_RUN || f->cur_res[x] < 0)
                return FAST_DECLINE;
            f->cur_res[x] = -1;
        }
    }
    f->place_off[E] = (int32_t)f->n_place;
    for (int32_t e = n_orig + 1; e <= E; e++)
        f->free_off[e] = f->free_off[n_orig];
    for (int32_t s = 0; s < nt; s++) {
        if (!(sp->tflag[s] & TF_PERSIST))
            continue;
        f->final_res[s] = f->cur_res[s];
        if (f->cur_res[s] >= 0 && !sp->in_r[s])
            return FAST_DECLINE;
    }
    for (int32_t i = 0; i < f->n_r; i++)
        if (f->final_res[f->rset[i]] < 0)
            return FAST_DECLINE;
    fast_snapshot(sp, 0);
    return fast_pass0(sp, n_orig, f->lis);
}

/* The capacities pass 2 records into (rec_ev, rec_place), reserved once:
   per op its run, per access at most a swap-in or a create and one
   eviction, then at most one end-of-iteration task per persistent storage;
   residencies and placements: R's, the swap-ins and creates, the end's. */
int sp_reserve(swapplan *sp)
{
    if (sp->e_max)
        return 0;
    sp_fast *f = &sp->f;
    size_t n_acc = (size_t)sp->g->acc_off[sp->no], n_pers = (size_t)sp->n_pers;
    size_t e = (size_t)sp->no + 2 * n_acc + n_pers + 1, r = n_acc + 2 * n_pers + 1;
    if (sp_grow_ev(sp, e) || fast_reserve_events(sp, e + 1) || fast_grow_res(f, r) ||
        (r > f->cap_place && SW_GROW(f->place_res, f->cap_place, r)))
        return SW_ENOMEM;
    sp->e_max = e;
    return 0;
}

/* Evaluate: the builder's plan, compiled and simulated, without the plan.
   0, FAST_DECLINE, or an error code (with err). */
int sp_fast_eval(swapplan *sp, sim_result *r, sw_err *err, const sp_alloc *al)
{
    sp_fast *f = &sp->f;
    const graph_profile *g = sp->g;
    size_t n_ev0 = sp->n_ev;
    fast_end(sp);
    int rc = 0;
    /* pb_finish: tensors that cannot come home leave again (copied if
       dirty) and come home at the end; rebuilt, at most four attempts */
    size_t n_orig = sp->n_ev, n_all = 0;
    int attempt;
    for (attempt = 0; attempt < 4 && !rc; attempt++) {
        rc = attempt ? fast_resume(sp, (int32_t)n_orig) : fast_attempt(sp, al);
        if (rc || !f->n_reloc)
            break;
        if (!attempt) {
            f->n_classes = al->n_classes;
            fast_snapshot(sp, 1);
            f->snap_n_res = f->n_res;
            f->snap_n_place = f->n_place;
            for (int st = 0; st < STREAM__COUNT; st++) {
                f->snap_n_s[st] = f->n_s[st];
                f->snap_last_of[st] = f->last_of[st];
            }
        }
        if (SW_GROW(f->all, f->cap_all, n_all + f->n_reloc)) {
            rc = SW_ENOMEM;
            break;
        }
        memcpy(f->all + n_all, f->reloc, f->n_reloc * sizeof *f->all);
        n_all += f->n_reloc;
        sp->n_ev = n_orig;
        for (size_t i = 0; i < n_all && !rc; i++)
            rc = push_ev(sp, sp->st[f->all[i]].bhv ? TASK_DROP : TASK_SWAP_OUT, f->all[i]);
        for (size_t i = 0; i < n_all && !rc; i++)
            rc = push_ev(sp, TASK_SWAP_IN, f->all[i]);
    }
    if (!rc && attempt == 4)
        rc = FAST_DECLINE;
    if (!rc) {
        int32_t lis[STREAM__COUNT] = {-1, -1, -1};
        rc = fast_pass1(sp, lis);
    }
    if (rc) {
        sp->n_ev = n_ev0;
        return rc == SW_ENOMEM ? sw_fail(err, SW_ENOMEM, "out of memory") : rc;
    }
    /* the compiled program */
    int32_t E = f->E;
    if (!f->prog && !(f->prog = sim_prog_new()))
        rc = SW_ENOMEM;
    if (!f->ws && !(f->ws = sim_ws_new()))
        rc = SW_ENOMEM;
    if (rc) {
        sp->n_ev = n_ev0;
        return sw_fail(err, SW_ENOMEM, "out of memory");
    }
    int64_t base_mem = g->max_workspace;
    for (int32_t i = 0; i < f->n_r; i++)
        base_mem += g->tensors[f->rset[i]].bytes;
    rc = sim_prog_begin(f->prog, g, NULL, E, sp->op_time, err);
    if (!rc)
        rc = sim_prog_add_all(f->prog, sp->ev_kind, sp->ev_x, f->ev_alloc, f->ev_freeb, f->dep,
                              f->pdep, err);
    if (!rc)
        rc = sim_prog_end(f->prog, base_mem, g->max_workspace + f->capacity, err);
    if (!rc)
        rc = sim_run_ws(f->prog, NULL, f->ws, r, err);
    sp->n_ev = n_ev0;
    return rc;
}
