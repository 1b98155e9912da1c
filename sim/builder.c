/* builder.c: placement and edge inference for planners (see builder.h).

   The recorded sequence is processed twice: pass 0 is the iteration itself
   (placements, intra-iteration edges), pass 1 is the next iteration, which
   only adds edges from tasks of pass 0 (carried edges: a placement reusing
   memory last released in the previous iteration, a swap-in reading a host
   copy written in the previous iteration). Edges implied by stream order or
   by other edges are pruned with vector clocks over the three streams, so a
   task keeps at most one edge per other stream and iteration. */
#include "builder.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "imap.h"

#define REF_NONE (-1)
#define REF_LIVE (-2)

typedef struct pb_event {
    uint8_t kind; /* PB_* task kind (run, rerun, swap in/out, drop, release) */
    int32_t x;    /* op or storage */
} pb_event;

typedef struct pb_res {
    int32_t storage;
    int32_t place_ev;  /* -1: resident at start */
    int32_t release_ev;/* explicit or implicit release event, -1: open at end */
    int32_t last_user; /* last compute event using it */
    plan_place place;
} pb_res;

struct plan_builder {
    const graph_profile *g; /* the profile (borrowed) */
    mem_model *mem;         /* places storages (borrowed, or own) */
    mem_model *own;         /* the arena pb_new_arena made, freed with the builder; else NULL */
    int64_t budget, reserve;/* bytes: the plan's budget and its workspace reserve */
    pb_event *ev;           /* the recorded tasks, in the planner's order (owned) */
    size_t n_ev, cap_ev;    /* tasks recorded, and room */
    int32_t *rset;          /* storages resident at the start, in call order (owned) */
    plan_place *rhome;      /* their places, when given (rexplicit) (owned) */
    uint8_t *rexplicit;     /* per rset entry: placed at rhome rather than by mem (owned) */
    int32_t n_r;            /* entries in rset */
    size_t cap_r;           /* room in rset, rhome, rexplicit */
    uint8_t *resident;      /* per storage: on the GPU now, as recorded so far (owned) */
    uint8_t *host_valid;    /* per storage: the host holds a current copy (owned) */
    uint8_t *in_r;          /* per storage: in rset (owned) */
    int err_code;           /* the first recording error (SW_*), 0 if none */
    char err_msg[512];      /* its message */
};

static int32_t nt_of(const plan_builder *b) { return b->g->n_tensors; }

plan_builder *pb_new(const graph_profile *g, mem_model *mem, int64_t budget,
                     int64_t workspace_reserve)
{
    plan_builder *b = sw_calloc(1, sizeof *b);
    if (!b)
        return NULL;
    b->g = g;
    b->mem = mem;
    b->budget = budget;
    b->reserve = workspace_reserve;
    size_t nt = (size_t)g->n_tensors + 1;
    b->resident = sw_calloc(nt, 1);
    b->host_valid = sw_calloc(nt, 1);
    b->in_r = sw_calloc(nt, 1);
    if (!b->resident || !b->host_valid || !b->in_r) {
        pb_free(b);
        return NULL;
    }
    pb_reset(b);
    return b;
}

plan_builder *pb_new_arena(const graph_profile *g, int64_t budget, int64_t workspace_reserve,
                           mem_fit fit, int64_t align)
{
    mem_model *m = mem_address_new(budget - workspace_reserve, fit, align);
    plan_builder *b = m ? pb_new(g, m, budget, workspace_reserve) : NULL;
    if (!b) {
        mem_destroy(m);
        return NULL;
    }
    b->own = m;
    return b;
}

mem_model *pb_memory(const plan_builder *b) { return b->mem; }

void pb_resident_persistent(plan_builder *b)
{
    const graph_profile *g = b->g;
    for (int32_t s = 0; s < g->n_tensors; s++)
        if (g->tensors[s].storage == s && g->tensors[s].persistent)
            pb_resident(b, s);
}

void pb_free(plan_builder *b)
{
    if (!b)
        return;
    mem_destroy(b->own);
    sw_free(b->ev);
    sw_free(b->rset);
    sw_free(b->rhome);
    sw_free(b->rexplicit);
    sw_free(b->resident);
    sw_free(b->host_valid);
    sw_free(b->in_r);
    sw_free(b);
}

void pb_set_memory(plan_builder *b, mem_model *mem) { b->mem = mem; }

void pb_reset(plan_builder *b)
{
    const graph_profile *g = b->g;
    b->n_ev = 0;
    b->n_r = 0;
    b->err_code = 0;
    b->err_msg[0] = 0;
    for (int32_t t = 0; t < g->n_tensors; t++) {
        const graph_tensor *x = &g->tensors[t];
        b->resident[t] = 0;
        b->in_r[t] = 0;
        /* host copy: external storages start on the host; produced ones have none */
        b->host_valid[t] = x->storage == t && x->producer < 0;
    }
}

static void pb_error(plan_builder *b, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void pb_error(plan_builder *b, int code, const char *fmt, ...)
{
    if (b->err_code)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b->err_msg, sizeof b->err_msg, fmt, ap);
    va_end(ap);
    b->err_code = code;
}

static int check_storage(plan_builder *b, int32_t s, const char *what)
{
    if (s < 0 || s >= nt_of(b) || b->g->tensors[s].storage != s) {
        pb_error(b, SW_EINVAL, "%s: %d is not a storage (root tensor) id", what, s);
        return -1;
    }
    return 0;
}

static void resident_common(plan_builder *b, int32_t s, const plan_place *where)
{
    if (check_storage(b, s, "resident"))
        return;
    if (!b->g->tensors[s].persistent) {
        pb_error(b, SW_EINVAL, "tensor %d '%s' is not persistent and cannot be resident at "
                 "iteration start", s, b->g->tensors[s].name);
        return;
    }
    if (b->n_ev) {
        pb_error(b, SW_EINVAL, "resident tensors must be declared before the first task");
        return;
    }
    if (b->in_r[s])
        return;
    if (SW_GROW(b->rset, b->cap_r, (size_t)b->n_r + 1)) {
        pb_error(b, SW_ENOMEM, "out of memory");
        return;
    }
    size_t cap = b->cap_r;
    size_t c2 = (size_t)b->n_r;
    /* keep parallel arrays at the same capacity */
    plan_place *h = sw_realloc(b->rhome, cap * sizeof *h);
    if (!h) {
        pb_error(b, SW_ENOMEM, "out of memory");
        return;
    }
    b->rhome = h;
    uint8_t *e = sw_realloc(b->rexplicit, cap);
    if (!e) {
        pb_error(b, SW_ENOMEM, "out of memory");
        return;
    }
    b->rexplicit = e;
    b->rset[c2] = s;
    b->rexplicit[c2] = where != NULL;
    if (where)
        b->rhome[c2] = *where;
    b->rhome[c2].tensor = s;
    b->n_r++;
    b->in_r[s] = 1;
    b->resident[s] = 1;
    /* steady state: the host copy of a resident tensor that the iteration
       mutates is assumed stale until it is copied out */
    b->host_valid[s] = b->g->n_mutations[s] == 0;
}

void pb_resident(plan_builder *b, int32_t s) { resident_common(b, s, NULL); }
void pb_resident_at(plan_builder *b, int32_t s, const plan_place *w) { resident_common(b, s, w); }

static void push(plan_builder *b, int kind, int32_t x)
{
    if (SW_GROW(b->ev, b->cap_ev, b->n_ev + 1)) {
        pb_error(b, SW_ENOMEM, "out of memory");
        return;
    }
    b->ev[b->n_ev].kind = (uint8_t)kind;
    b->ev[b->n_ev].x = x;
    b->n_ev++;
}

static void compute_common(plan_builder *b, int32_t op, int kind)
{
    const graph_profile *g = b->g;
    if (op < 0 || op >= g->n_ops) {
        pb_error(b, SW_EINVAL, "task %zu: %d is not an op id", b->n_ev, op);
        return;
    }
    for (int32_t k = g->acc_off[op]; k < g->acc_off[op + 1]; k++) {
        int32_t s = g->acc[k];
        uint8_t f = g->acc_flag[k];
        if (f & GA_CREATE) {
            if (b->resident[s] && kind == TASK_RUN) {
                pb_error(b, SW_EINVAL, "task %zu (run op %d '%s'): its output tensor %d '%s' is "
                         "already resident", b->n_ev, op, g->ops[op].name, s, g->tensors[s].name);
                return;
            }
            b->resident[s] = 1;
            b->host_valid[s] = 0;
        } else if (!b->resident[s]) {
            pb_error(b, SW_EINVAL, "task %zu (%s op %d '%s'): input tensor %d '%s' is not "
                     "resident", b->n_ev, kind == TASK_RUN ? "run" : "rerun", op,
                     g->ops[op].name, s, g->tensors[s].name);
            return;
        } else if (f & GA_MUTATE) {
            b->host_valid[s] = 0;
        }
    }
    push(b, kind, op);
}

void pb_run(plan_builder *b, int32_t op) { compute_common(b, op, TASK_RUN); }
void pb_rerun(plan_builder *b, int32_t op) { compute_common(b, op, TASK_RERUN); }

void pb_swap_in(plan_builder *b, int32_t s)
{
    if (check_storage(b, s, "swap_in"))
        return;
    if (b->resident[s]) {
        pb_error(b, SW_EINVAL, "task %zu: swap-in of tensor %d '%s', which is already resident",
                 b->n_ev, s, b->g->tensors[s].name);
        return;
    }
    b->resident[s] = 1;
    push(b, TASK_SWAP_IN, s);
}

static void release_common(plan_builder *b, int32_t s, int kind)
{
    if (check_storage(b, s, kind == TASK_SWAP_OUT ? "swap_out" : "drop"))
        return;
    if (!b->resident[s]) {
        pb_error(b, SW_EINVAL, "task %zu: %s of tensor %d '%s', which is not resident", b->n_ev,
                 plan_task_kind_name(kind), s, b->g->tensors[s].name);
        return;
    }
    b->resident[s] = 0;
    if (kind == TASK_SWAP_OUT)
        b->host_valid[s] = 1;
    push(b, kind, s);
}

void pb_swap_out(plan_builder *b, int32_t s) { release_common(b, s, TASK_SWAP_OUT); }
void pb_drop(plan_builder *b, int32_t s) { release_common(b, s, TASK_DROP); }

void pb_end_iteration(plan_builder *b)
{
    const graph_profile *g = b->g;
    for (int32_t s = 0; s < g->n_tensors; s++) {
        if (g->tensors[s].storage != s || !g->tensors[s].persistent)
            continue;
        if (b->resident[s] && !b->in_r[s]) {
            if (b->host_valid[s])
                pb_drop(b, s);
            else
                pb_swap_out(b, s);
        }
    }
    for (int32_t i = 0; i < b->n_r; i++)
        if (!b->resident[b->rset[i]])
            pb_swap_in(b, b->rset[i]);
}

int pb_is_resident(const plan_builder *b, int32_t s) { return b->resident[s]; }
int pb_host_valid(const plan_builder *b, int32_t s) { return b->host_valid[s]; }
int pb_in_resident_set(const plan_builder *b, int32_t s) { return b->in_r[s]; }
int32_t pb_task_count(const plan_builder *b) { return (int32_t)b->n_ev; }

/* ------------------------------------------------------------------ */

typedef struct fin {
    plan_builder *b;
    const graph_profile *g;
    plan *p;
    int32_t E;
    pb_res *res;
    size_t n_res, cap_res;
    int32_t *place_off, *place_res; /* CSR: residencies placed by each event */
    int32_t *free_off, *free_s;     /* CSR: storages freed by each event (implicit) */
    int32_t *final_res;             /* per storage: residency open at the end, -1 */
    int32_t *cur_res;
    int32_t *rix;                   /* per storage: its index in the resident set, -1 */
    int32_t *run_ev;                /* per op: the event running it, -1 */
    int64_t *place_ref, *user_ref, *copyout_ref;
    int32_t *stream_idx;
    int32_t n_s[STREAM__COUNT];
    int32_t *vc;                    /* [2][E][3] */
    int32_t *dep, *pdep;            /* per event: up to 2 each, -1 = none */
    int64_t *obj_tag;               /* pool: per flat object */
    int32_t *obj_base;
    imap im;
    sw_err *err;
    int64_t *pre;   /* MEM_OFFLINE: per residency, its offset placed in advance; else NULL */
    int32_t *reloc; /* storages that cannot return home where they are last placed */
    size_t n_reloc, cap_reloc;
} fin;

#define RELOCATE 1

static int64_t mkref(int p, int32_t e) { return ((int64_t)p << 32) | (int64_t)(uint32_t)e; }
static int ref_pass(int64_t r) { return (int)(r >> 32); }
static int32_t ref_ev(int64_t r) { return (int32_t)(r & 0xffffffff); }
static int ev_stream(const fin *f, int32_t e) { return plan_task_stream(f->b->ev[e].kind); }
static int32_t ev_pos(const fin *f, int p, int32_t e)
{
    return p * f->n_s[ev_stream(f, e)] + f->stream_idx[e];
}
static int32_t *vc_of(fin *f, int p, int32_t e)
{
    return f->vc + ((size_t)p * (size_t)f->E + (size_t)e) * 3;
}

static const char *tname(const fin *f, int32_t s) { return f->g->tensors[s].name; }

static int new_res(fin *f, int32_t s, int32_t place_ev)
{
    if (SW_GROW(f->res, f->cap_res, f->n_res + 1))
        return -1;
    pb_res *r = &f->res[f->n_res];
    r->storage = s;
    r->place_ev = place_ev;
    r->release_ev = -1;
    r->last_user = -1;
    memset(&r->place, 0, sizeof r->place);
    r->place.tensor = s;
    return (int)f->n_res++;
}

/* Step 1: residencies, implicit frees. */
static int build_residencies(fin *f)
{
    plan_builder *b = f->b;
    const graph_profile *g = f->g;
    int32_t nt = g->n_tensors, E = f->E;
    for (int32_t s = 0; s < nt; s++)
        f->cur_res[s] = -1;
    for (int32_t i = 0; i < b->n_r; i++) {
        int r = new_res(f, b->rset[i], -1);
        if (r < 0)
            return SW_ENOMEM;
        f->cur_res[b->rset[i]] = r;
    }
    for (int32_t o = 0; o < g->n_ops; o++)
        f->run_ev[o] = -1;
    for (int32_t e = 0; e < E; e++)
        if (b->ev[e].kind == TASK_RUN)
            f->run_ev[b->ev[e].x] = e;
    /* placements CSR: at most one per created storage per event */
    size_t cap = 16, n = 0;
    f->place_res = sw_malloc(cap * sizeof *f->place_res);
    if (!f->place_res)
        return SW_ENOMEM;
    for (int32_t e = 0; e < E; e++) {
        const pb_event *ev = &b->ev[e];
        f->place_off[e] = (int32_t)n;
        if (ev->kind == TASK_RUN || ev->kind == TASK_RERUN) {
            int32_t o = ev->x;
            for (int32_t k = g->acc_off[o]; k < g->acc_off[o + 1]; k++) {
                int32_t s = g->acc[k];
                if (g->acc_flag[k] & GA_CREATE) {
                    if (f->cur_res[s] >= 0)
                        continue; /* rerun: already resident */
                    int r = new_res(f, s, e);
                    if (r < 0 || SW_GROW(f->place_res, cap, n + 1))
                        return SW_ENOMEM;
                    f->place_res[n++] = r;
                    f->cur_res[s] = r;
                    f->res[r].last_user = -1;
                } else {
                    f->res[f->cur_res[s]].last_user = e;
                }
            }
        } else if (ev->kind == TASK_SWAP_IN) {
            int r = new_res(f, ev->x, e);
            if (r < 0 || SW_GROW(f->place_res, cap, n + 1))
                return SW_ENOMEM;
            f->place_res[n++] = r;
            f->cur_res[ev->x] = r;
        } else {
            int32_t r = f->cur_res[ev->x];
            f->res[r].release_ev = e;
            f->cur_res[ev->x] = -1;
        }
    }
    f->place_off[E] = (int32_t)n;
    /* open residencies at the end */
    int32_t *cnt = f->free_off;
    memset(cnt, 0, ((size_t)E + 1) * sizeof *cnt);
    for (int32_t s = 0; s < nt; s++) {
        f->final_res[s] = -1;
        int32_t r = f->cur_res[s];
        if (r < 0)
            continue;
        pb_res *x = &f->res[r];
        if (g->tensors[s].persistent) {
            if (!b->in_r[s])
                return sw_fail(f->err, SW_EINVAL, "persistent tensor %d '%s' is resident at the "
                               "end of the iteration but not at its start (swap it out, drop it "
                               "or make it resident from the start)", s, tname(f, s));
            f->final_res[s] = r;
            continue;
        }
        /* freed at its death (graph_death_at) within this residency, in
           events: after its last use here, or once the op the framework
           holds it until has run, if that comes later */
        int32_t h = g->tensors[s].held_until;
        int32_t at = graph_death_at(x->last_user >= 0 ? x->last_user : x->place_ev,
                                    h >= 0 ? f->run_ev[h] : -1);
        if (at < 0 || (b->ev[at].kind != TASK_RUN && b->ev[at].kind != TASK_RERUN))
            return sw_fail(f->err, SW_EINVAL, "tensor %d '%s' is swapped in by task %d but never "
                           "used afterwards", s, tname(f, s), x->place_ev);
        x->release_ev = at;
        cnt[at + 1]++;
    }
    for (int32_t i = 0; i < b->n_r; i++)
        if (f->final_res[b->rset[i]] < 0)
            return sw_fail(f->err, SW_EINVAL, "persistent tensor %d '%s' is resident at the start "
                           "of the iteration but not at its end (swap it back in)", b->rset[i],
                           tname(f, b->rset[i]));
    for (int32_t e = 0; e < E; e++)
        cnt[e + 1] += cnt[e];
    size_t nf = (size_t)cnt[E];
    f->free_s = sw_malloc((nf + 1) * sizeof *f->free_s);
    int32_t *fill = sw_malloc(((size_t)E + 1) * sizeof *fill);
    if (!f->free_s || !fill) {
        sw_free(fill);
        return SW_ENOMEM;
    }
    memcpy(fill, cnt, ((size_t)E + 1) * sizeof *fill);
    for (int32_t s = 0; s < nt; s++) {
        int32_t r = f->cur_res[s];
        if (r >= 0 && !g->tensors[s].persistent)
            f->free_s[fill[f->res[r].release_ev]++] = s;
    }
    sw_free(fill);
    return 0;
}

/* candidate collection for one event */
typedef struct cands {
    int64_t intra[STREAM__COUNT], carried[STREAM__COUNT];
} cands;

static void cand_add(fin *f, cands *c, int p, int32_t e, int64_t ref)
{
    if (ref < 0)
        return;
    int rp = ref_pass(ref);
    int32_t re = ref_ev(ref);
    int s = ev_stream(f, re);
    if (s == ev_stream(f, e))
        return; /* implied by stream order (same or previous iteration) */
    int64_t *slot = rp == p ? &c->intra[s] : rp == p - 1 ? &c->carried[s] : NULL;
    if (!slot)
        return;
    if (*slot < 0 || f->stream_idx[ref_ev(*slot)] < f->stream_idx[re])
        *slot = ref;
}

/* memory tags: previous occupants of a placement become candidates */
static int mem_prev(fin *f, cands *c, int p, int32_t e, const plan_place *pl, int64_t bytes)
{
    if (bytes <= 0)
        return 0;
    if (f->p->mem_kind == MEM_POOL) {
        int64_t *tag = &f->obj_tag[f->obj_base[pl->cls] + pl->obj];
        if (*tag == REF_LIVE)
            return sw_fail(f->err, SW_EINVAL, "internal: pool object %d/%d placed twice",
                           pl->cls, pl->obj);
        cand_add(f, c, p, e, *tag);
        *tag = REF_LIVE;
        return 0;
    }
    if (bytes <= 0)
        return 0;
    for (size_t i = imap_first(&f->im, pl->offset);
         i < f->im.n && f->im.seg[i].start < pl->offset + bytes; i++) {
        if (f->im.seg[i].tag == REF_LIVE)
            return sw_fail(f->err, SW_EINVAL, "internal: address range placed twice");
        cand_add(f, c, p, e, f->im.seg[i].tag);
    }
    return imap_assign(&f->im, pl->offset, pl->offset + bytes, REF_LIVE) ? SW_ENOMEM : 0;
}

static int mem_tag_release(fin *f, const plan_place *pl, int64_t bytes, int64_t ref)
{
    if (bytes <= 0)
        return 0;
    if (f->p->mem_kind == MEM_POOL) {
        f->obj_tag[f->obj_base[pl->cls] + pl->obj] = ref;
        return 0;
    }
    if (bytes <= 0)
        return 0;
    return imap_assign(&f->im, pl->offset, pl->offset + bytes, ref) ? SW_ENOMEM : 0;
}

static void vc_join(int32_t *dst, const int32_t *src)
{
    for (int s = 0; s < STREAM__COUNT; s++)
        if (src[s] > dst[s])
            dst[s] = src[s];
}

/* choose the deps among up to two candidates (other streams) not implied */
static void choose(fin *f, int p, int32_t e, int32_t *vc, const int64_t *cand, int32_t *out)
{
    int32_t pick[2] = {-1, -1};
    int np = 0;
    int64_t c[2];
    int nc = 0;
    for (int s = 0; s < STREAM__COUNT; s++)
        if (cand[s] >= 0)
            c[nc++] = cand[s];
    /* drop candidates already implied */
    int64_t keep[2];
    int nk = 0;
    for (int i = 0; i < nc; i++) {
        int cp = ref_pass(c[i]);
        int32_t ce = ref_ev(c[i]);
        if (vc[ev_stream(f, ce)] < ev_pos(f, cp, ce))
            keep[nk++] = c[i];
    }
    if (nk == 2) {
        /* if one implies the other keep only it */
        const int32_t *v0 = vc_of(f, ref_pass(keep[0]), ref_ev(keep[0]));
        const int32_t *v1 = vc_of(f, ref_pass(keep[1]), ref_ev(keep[1]));
        int32_t e0 = ref_ev(keep[0]), e1 = ref_ev(keep[1]);
        if (v0[ev_stream(f, e1)] >= ev_pos(f, ref_pass(keep[1]), e1))
            nk = 1;
        else if (v1[ev_stream(f, e0)] >= ev_pos(f, ref_pass(keep[0]), e0)) {
            keep[0] = keep[1];
            nk = 1;
        }
    }
    for (int i = 0; i < nk; i++) {
        vc_join(vc, vc_of(f, ref_pass(keep[i]), ref_ev(keep[i])));
        pick[np++] = ref_ev(keep[i]);
    }
    out[0] = pick[0];
    out[1] = pick[1];
    (void)e;
    (void)p;
}

static int process_pass(fin *f, int p)
{
    plan_builder *b = f->b;
    const graph_profile *g = f->g;
    int32_t E = f->E;
    int32_t last_in_stream[STREAM__COUNT];
    for (int s = 0; s < STREAM__COUNT; s++)
        last_in_stream[s] = -1;
    for (int32_t e = 0; e < E; e++) {
        const pb_event *ev = &b->ev[e];
        int st = ev_stream(f, e);
        cands c;
        for (int s = 0; s < STREAM__COUNT; s++)
            c.intra[s] = c.carried[s] = REF_NONE;
        int64_t me = mkref(p, e);
        /* 1. placements */
        for (int32_t k = f->place_off[e]; k < f->place_off[e + 1]; k++) {
            pb_res *r = &f->res[f->place_res[k]];
            int32_t s = r->storage;
            int64_t bytes = g->bytes[s];
            if (p == 0) {
                int rc;
                if (f->final_res[s] == f->place_res[k] && b->in_r[s]) {
                    /* the residency kept into the next iteration returns home */
                    const plan_place *home = &f->res[f->rix[s]].place;
                    rc = mem_alloc_at(b->mem, s, bytes, home);
                    if (!rc) {
                        r->place = *home;
                    } else {
                        /* its home is taken now: it must come home at the end instead;
                           place it anywhere to find every such tensor in one pass */
                        if (SW_GROW(f->reloc, f->cap_reloc, f->n_reloc + 1))
                            return sw_fail(f->err, SW_ENOMEM, "out of memory");
                        f->reloc[f->n_reloc++] = s;
                        rc = mem_alloc(b->mem, s, bytes, &r->place);
                        if (rc)
                            return sw_fail(f->err, SW_ENOFIT, "does not fit: task %d cannot "
                                           "place persistent tensor %d '%s' away from its home",
                                           e, s, tname(f, s));
                        plan_place_resolve(f->p, &r->place);
                    }
                } else if (f->pre) {
                    r->place.cls = r->place.obj = -1;
                    r->place.offset = f->pre[f->place_res[k]];
                    if (mem_alloc_at(b->mem, s, bytes, &r->place))
                        return sw_fail(f->err, SW_EINVAL, "internal: task %d cannot place tensor "
                                       "%d '%s' where the offline placement put it", e, s,
                                       tname(f, s));
                } else {
                    rc = mem_alloc(b->mem, s, bytes, &r->place);
                    if (rc) {
                        mem_stats ms;
                        mem_get_stats(b->mem, &ms);
                        return sw_fail(f->err, SW_ENOFIT, "does not fit: task %d cannot place "
                                       "tensor %d '%s' (%lld bytes): %lld of %lld bytes in use, "
                                       "largest free block %lld bytes", e, s, tname(f, s),
                                       (long long)bytes, (long long)ms.reserved,
                                       (long long)ms.capacity, (long long)ms.largest_free);
                    }
                    plan_place_resolve(f->p, &r->place);
                }
            }
            int rc = mem_prev(f, &c, p, e, &r->place, bytes);
            if (rc)
                return rc;
            f->cur_res[s] = f->place_res[k];
            f->place_ref[s] = me;
            f->user_ref[s] = REF_NONE;
            if (ev->kind == TASK_SWAP_IN) {
                if (f->copyout_ref[s] >= 0 && ref_pass(f->copyout_ref[s]) == p)
                    cand_add(f, &c, p, e, f->copyout_ref[s]);
                else if (g->tensors[s].persistent)
                    cand_add(f, &c, p, e, f->copyout_ref[s]);
                else if (g->tensors[s].producer >= 0)
                    return sw_fail(f->err, SW_EINVAL, "task %d: swap-in of tensor %d '%s' before "
                                   "any swap-out of it in this iteration: the host has no copy",
                                   e, s, tname(f, s));
            }
        }
        /* 2. compute reads */
        if (ev->kind == TASK_RUN || ev->kind == TASK_RERUN) {
            int32_t o = ev->x;
            for (int32_t k = g->acc_off[o]; k < g->acc_off[o + 1]; k++) {
                if (g->acc_flag[k] & GA_CREATE)
                    continue;
                int32_t s = g->acc[k];
                cand_add(f, &c, p, e, f->place_ref[s]);
                f->user_ref[s] = me;
            }
        }
        /* 3. explicit release */
        if (ev->kind == TASK_SWAP_OUT || ev->kind == TASK_DROP) {
            int32_t s = ev->x;
            cand_add(f, &c, p, e, f->user_ref[s]);
            cand_add(f, &c, p, e, f->place_ref[s]);
            pb_res *r = &f->res[f->cur_res[s]];
            if (p == 0)
                mem_release(b->mem, &r->place, g->bytes[s]);
            if (mem_tag_release(f, &r->place, g->bytes[s], me))
                return SW_ENOMEM;
            f->cur_res[s] = -1;
            f->place_ref[s] = f->user_ref[s] = REF_NONE;
            if (ev->kind == TASK_SWAP_OUT)
                f->copyout_ref[s] = me;
        }
        /* 4. implicit frees */
        for (int32_t k = f->free_off[e]; k < f->free_off[e + 1]; k++) {
            int32_t s = f->free_s[k];
            pb_res *r = &f->res[f->cur_res[s]];
            if (p == 0)
                mem_release(b->mem, &r->place, g->bytes[s]);
            if (mem_tag_release(f, &r->place, g->bytes[s], me))
                return SW_ENOMEM;
            f->cur_res[s] = -1;
            f->place_ref[s] = f->user_ref[s] = REF_NONE;
        }
        /* 5. edges and vector clock */
        int32_t *vc = vc_of(f, p, e);
        int32_t prev = last_in_stream[st];
        if (prev >= 0)
            memcpy(vc, vc_of(f, p, prev), 3 * sizeof *vc);
        else if (p == 1 && f->n_s[st] > 0) {
            /* first task of the stream in pass 1 follows the last of pass 0 */
            int32_t lastp0 = -1;
            for (int32_t x = E - 1; x >= 0 && lastp0 < 0; x--)
                if (ev_stream(f, x) == st)
                    lastp0 = x;
            memcpy(vc, vc_of(f, 0, lastp0), 3 * sizeof *vc);
        } else {
            vc[0] = vc[1] = vc[2] = -1;
        }
        if (p == 0) {
            choose(f, p, e, vc, c.intra, f->dep + 2 * (size_t)e);
        } else {
            for (size_t i = 0; i < 2; i++)
                if (f->dep[2 * (size_t)e + i] >= 0)
                    vc_join(vc, vc_of(f, 1, f->dep[2 * (size_t)e + i]));
            choose(f, p, e, vc, c.carried, f->pdep + 2 * (size_t)e);
        }
        vc[st] = ev_pos(f, p, e);
        last_in_stream[st] = e;
    }
    return 0;
}

static int emit(fin *f)
{
    plan_builder *b = f->b;
    plan *p = f->p;
    const graph_profile *g = f->g;
    p->resident = b->n_r ? sw_malloc((size_t)b->n_r * sizeof *p->resident) : NULL;
    if (b->n_r && !p->resident)
        return SW_ENOMEM;
    for (int32_t i = 0; i < b->n_r; i++)
        p->resident[i] = f->res[i].place;
    p->n_resident = b->n_r;
    plan_place pls[64];
    for (int32_t e = 0; e < f->E; e++) {
        const pb_event *ev = &b->ev[e];
        int np = 0;
        plan_place *pl = pls, *heap = NULL;
        int32_t cnt = f->place_off[e + 1] - f->place_off[e];
        if (cnt > 64) {
            heap = sw_malloc((size_t)cnt * sizeof *heap);
            if (!heap)
                return SW_ENOMEM;
            pl = heap;
        }
        for (int32_t k = f->place_off[e]; k < f->place_off[e + 1]; k++)
            pl[np++] = f->res[f->place_res[k]].place;
        int32_t d[2], pd[2];
        int nd = 0, npd = 0;
        for (size_t i = 0; i < 2; i++) {
            if (f->dep[2 * (size_t)e + i] >= 0)
                d[nd++] = f->dep[2 * (size_t)e + i];
            if (f->pdep[2 * (size_t)e + i] >= 0)
                pd[npd++] = f->pdep[2 * (size_t)e + i];
        }
        if (nd == 2 && d[0] > d[1]) { /* at most two edges each: keep them sorted */
            int32_t t = d[0];
            d[0] = d[1];
            d[1] = t;
        }
        if (npd == 2 && pd[0] > pd[1]) {
            int32_t t = pd[0];
            pd[0] = pd[1];
            pd[1] = t;
        }
        int is_comp = ev->kind == TASK_RUN || ev->kind == TASK_RERUN;
        int32_t r = plan_add_task(p, ev->kind, is_comp ? ev->x : -1, is_comp ? -1 : ev->x, pl, np,
                                  f->free_s + f->free_off[e], f->free_off[e + 1] - f->free_off[e],
                                  d, nd, pd, npd);
        sw_free(heap);
        if (r < 0)
            return SW_ENOMEM;
    }
    (void)g;
    return 0;
}

/* The per-event and per-tensor arrays of f; 0 or SW_ENOMEM. */
static int fin_alloc(fin *f)
{
    const graph_profile *g = f->g;
    int32_t nt = g->n_tensors, E = f->E;
    f->p = plan_new((graph_profile *)(uintptr_t)g, 0);
    f->place_off = sw_malloc(((size_t)E + 1) * sizeof(int32_t));
    f->free_off = sw_malloc(((size_t)E + 1) * sizeof(int32_t));
    f->final_res = sw_malloc(((size_t)nt + 1) * sizeof(int32_t));
    f->cur_res = sw_malloc(((size_t)nt + 1) * sizeof(int32_t));
    f->rix = sw_malloc(((size_t)nt + 1) * sizeof(int32_t));
    f->run_ev = sw_malloc(((size_t)g->n_ops + 1) * sizeof(int32_t));
    f->place_ref = sw_malloc(((size_t)nt + 1) * sizeof(int64_t));
    f->user_ref = sw_malloc(((size_t)nt + 1) * sizeof(int64_t));
    f->copyout_ref = sw_malloc(((size_t)nt + 1) * sizeof(int64_t));
    f->stream_idx = sw_malloc(((size_t)E + 1) * sizeof(int32_t));
    f->vc = sw_malloc(((size_t)E * 6 + 1) * sizeof(int32_t));
    f->dep = sw_malloc(((size_t)E * 2 + 1) * sizeof(int32_t));
    f->pdep = sw_malloc(((size_t)E * 2 + 1) * sizeof(int32_t));
    if (!f->p || !f->place_off || !f->free_off || !f->final_res || !f->cur_res || !f->rix ||
        !f->run_ev || !f->place_ref || !f->user_ref || !f->copyout_ref || !f->stream_idx ||
        !f->vc || !f->dep || !f->pdep)
        return SW_ENOMEM;
    for (int32_t e = 0; e < E; e++) {
        int s = plan_task_stream(f->b->ev[e].kind);
        f->stream_idx[e] = f->n_s[s]++;
        f->dep[2 * e] = f->dep[2 * e + 1] = f->pdep[2 * e] = f->pdep[2 * e + 1] = -1;
    }
    return 0;
}

static void fin_free(fin *f)
{
    plan_free(f->p);
    sw_free(f->res);
    sw_free(f->place_off);
    sw_free(f->place_res);
    sw_free(f->free_off);
    sw_free(f->free_s);
    sw_free(f->final_res);
    sw_free(f->cur_res);
    sw_free(f->rix);
    sw_free(f->run_ev);
    sw_free(f->place_ref);
    sw_free(f->user_ref);
    sw_free(f->copyout_ref);
    sw_free(f->stream_idx);
    sw_free(f->vc);
    sw_free(f->dep);
    sw_free(f->pdep);
    sw_free(f->obj_tag);
    sw_free(f->obj_base);
    sw_free(f->reloc);
    sw_free(f->pre);
    imap_free(&f->im);
}

/* The memory model's description in the plan, its budget and reserve, and (a
   pool) the objects' tags; SW_ENOMEM, or SW_ENOFIT when the model and the
   reserve exceed the budget. */
static int describe_memory(fin *f)
{
    plan_builder *b = f->b;
    mem_reset(b->mem);
    if (mem_describe(b->mem, f->p))
        return SW_ENOMEM;
    f->p->budget = b->budget;
    f->p->workspace_reserve = b->reserve;
    if (f->p->capacity + b->reserve > b->budget) {
        char h1[32], h2[32], h3[32];
        return sw_fail(f->err, SW_ENOFIT, "does not fit: memory model capacity %s plus workspace "
                       "reserve %s exceeds the budget %s",
                       sw_fmt_bytes(f->p->capacity, h1, sizeof h1),
                       sw_fmt_bytes(b->reserve, h2, sizeof h2),
                       sw_fmt_bytes(b->budget, h3, sizeof h3));
    }
    if (f->p->mem_kind == MEM_POOL) {
        int32_t total = 0;
        f->obj_base = sw_malloc(((size_t)f->p->n_classes + 1) * sizeof(int32_t));
        if (!f->obj_base)
            return SW_ENOMEM;
        for (int32_t c = 0; c < f->p->n_classes; c++) {
            f->obj_base[c] = total;
            total += f->p->classes[c].count;
        }
        f->obj_tag = sw_malloc(((size_t)total + 1) * sizeof(int64_t));
        if (!f->obj_tag)
            return SW_ENOMEM;
        for (int32_t i = 0; i < total; i++)
            f->obj_tag[i] = REF_NONE;
    }
    return 0;
}

/* Offline placement (MEM_OFFLINE): every residency's offset at once, from
   the events it spans. A residency occupies its bytes from the event that
   places it (before the first, for the resident set) to the event that
   releases it (after the last, when it stays into the next iteration), ends
   included: an event places before it frees. A storage of the resident set
   that leaves and comes back is one item of two spans, so that it comes back
   home. Greedy by size (TensorFlow Lite's offline planner): the largest item
   first, each in the smallest gap among the items already placed whose spans
   meet its own, else above them all; items placed at a home the planner gave
   (pb_resident_at) first, where given. SW_ENOFIT (no message: the caller
   places online instead) when the highest offset passes the arena.
   In events a copy out frees its bytes at once, but in time only when the
   copy ends: an item placed there before that waits for it. So with scale >
   0 a residency a copy out (or a drop, queued behind the copies) releases
   holds its bytes through every event issued before the copy's estimated
   end (copy_clock, its duration times scale); offline_timed picks the
   scale. Placing stops once the highest end passes the arena.
   Where greedy by size does not fit, greedy by breadth (the same paper's
   other strategy) is tried: the events by the bytes their spans hold,
   largest first, and at each the items not yet placed, largest first; so
   each item ranks by the broadest event it spans (ties: the earlier one),
   then by size. */
typedef struct off_item {
    int64_t size, off;
    int64_t breadth;      /* greedy by breadth: the bytes at its broadest event */
    int32_t lo[3], hi[3]; /* spans, in events: -1 is before the first, E after the last */
    int32_t th[3];        /* hi, held through the copy out's estimated end */
    int32_t r[3];         /* the residencies */
    int32_t broad;        /* greedy by breadth: that event */
    int n, fixed;
} off_item;

static int off_item_cmp(const void *pa, const void *pb)
{
    const off_item *a = pa, *b = pb;
    if (a->fixed != b->fixed)
        return b->fixed - a->fixed;
    if (a->breadth != b->breadth)
        return a->breadth > b->breadth ? -1 : 1;
    if (a->broad != b->broad)
        return a->broad < b->broad ? -1 : 1;
    if (a->size != b->size)
        return a->size > b->size ? -1 : 1;
    if (a->lo[0] != b->lo[0])
        return a->lo[0] < b->lo[0] ? -1 : 1;
    return a->r[0] < b->r[0] ? -1 : a->r[0] > b->r[0];
}

static int off_meet(const off_item *a, const off_item *b, int timed)
{
    const int32_t *ah = timed ? a->th : a->hi, *bh = timed ? b->th : b->hi;
    for (int i = 0; i < a->n; i++)
        for (int j = 0; j < b->n; j++)
            if (a->lo[i] <= bh[j] && b->lo[j] <= ah[i])
                return 1;
    return 0;
}

/* The event up to which a residency released by event e (a copy out or a
   drop, both on the device-to-host stream) still holds its bytes in time:
   per event, the compute stream's clock if no task waited (clk, the op
   times before it) and when the device-to-host stream's task ends if the
   stream took them in order at the one-way rate (dend); the residency holds
   its bytes through the last event issued before that end. *tend: the
   clock at the iteration's end. Where the copies (unscaled) take no longer
   than the compute (a steady state with no wait on the link is possible), the
   copies still queued at the iteration's end run on into the next one: the
   stream starts it that much behind (a second pass), and 1 is returned (a
   copy that ends past *tend holds its bytes into the next iteration too).
   Else the iterations stretch to the link's pace, which these clocks do
   not see, and 0 is returned: each iteration's estimate stands alone. */
static int copy_clock(const fin *f, double *clk, double *dend, double scale, double *tend)
{
    const graph_profile *g = f->g;
    double h2d_a, d2h_a, h2d_b, d2h_b;
    dev_rates(&g->device, &h2d_a, &d2h_a, &h2d_b, &d2h_b);
    double backlog = 0, lat = g->device.copy_latency_s, t = 0;
    int steady = 0;
    for (int pass = 0; pass < 2; pass++) {
        double free_at = backlog, busy = 0;
        t = 0;
        for (int32_t e = 0; e < f->E; e++) {
            const pb_event *ev = &f->b->ev[e];
            clk[e] = t;
            dend[e] = t;
            if (ev->kind == TASK_RUN || ev->kind == TASK_RERUN) {
                t += g->ops[ev->x].time_s;
            } else if (ev->kind == TASK_SWAP_OUT || ev->kind == TASK_DROP) {
                double st = t > free_at ? t : free_at, dur = 0;
                if (ev->kind == TASK_SWAP_OUT && d2h_a > 0)
                    dur = lat + (double)g->bytes[ev->x] / d2h_a;
                busy += dur;
                dend[e] = free_at = st + scale * dur;
            }
        }
        steady = busy <= t;
        if (pass || !steady || free_at <= t)
            break;
        backlog = free_at - t;
    }
    *tend = t;
    return steady;
}

/* The last event from `from` on issued before time x by clk (from - 1 if
   none): clk never falls, so a binary search. */
static int32_t issued_before(const fin *f, const double *clk, int32_t from, double x)
{
    int32_t lo = from - 1, hi = f->E - 1;
    while (lo < hi) {
        int32_t mid = lo + (hi - lo + 1) / 2;
        if (clk[mid] < x)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* Where item i goes among items[ord[0..i)] (by offset): the smallest gap
   between those whose spans meet its own (timed: held through their copies
   out) that holds it, else above them all. */
static int64_t off_gap(const off_item *it, const size_t *ord, size_t i, int timed)
{
    const off_item *t = &it[i];
    int64_t cur = 0, best = -1, best_gap = 0;
    for (size_t j = 0; j < i; j++) {
        const off_item *q = &it[ord[j]];
        if (!off_meet(t, q, timed))
            continue;
        int64_t gap = q->off - cur;
        if (gap >= t->size && (best < 0 || gap < best_gap)) {
            best = cur;
            best_gap = gap;
        }
        if (q->off + q->size > cur)
            cur = q->off + q->size;
    }
    return best >= 0 ? best : cur;
}

/* Greedy by breadth's ranks: each item's broadest event (breadth, broad)
   among those its spans cover, timed or not; br holds E + 3 and seg
   2 (E + 2).
   The bytes per event by a difference array, the maximum over a span by a
   segment tree of event indices (the earlier of equal breadths). */
static void off_breadth(off_item *it, size_t n, int32_t E, int timed, int64_t *br,
                        int32_t *seg)
{
    int32_t m = E + 2; /* events -1 .. E, at index e + 1 */
    memset(br, 0, ((size_t)m + 1) * sizeof *br);
    for (size_t i = 0; i < n; i++)
        for (int j = 0; j < it[i].n; j++) {
            int32_t lo = SW_MAX(it[i].lo[j], -1), hi = SW_MIN(timed ? it[i].th[j] : it[i].hi[j], E);
            if (hi >= lo) {
                br[lo + 1] += it[i].size;
                br[hi + 2] -= it[i].size;
            }
        }
    for (int32_t e = 1; e < m; e++)
        br[e] += br[e - 1];
    for (int32_t e = 0; e < m; e++)
        seg[m + e] = e;
    for (int32_t k = m - 1; k > 0; k--) {
        int32_t a = seg[2 * k], b = seg[2 * k + 1];
        seg[k] = br[b] > br[a] || (br[b] == br[a] && b < a) ? b : a;
    }
    for (size_t i = 0; i < n; i++) {
        int32_t best = -1;
        for (int j = 0; j < it[i].n; j++) {
            int32_t lo = SW_MAX(it[i].lo[j], -1) + 1 + m;
            int32_t hi = SW_MIN(timed ? it[i].th[j] : it[i].hi[j], E) + 2 + m; /* [lo, hi) */
            for (; lo < hi; lo >>= 1, hi >>= 1) {
                int32_t c[2] = {lo & 1 ? seg[lo++] : -1, hi & 1 ? seg[--hi] : -1};
                for (int q = 0; q < 2; q++)
                    if (c[q] >= 0 && (best < 0 || br[c[q]] > br[best] ||
                                      (br[c[q]] == br[best] && c[q] < best)))
                        best = c[q];
            }
        }
        it[i].breadth = best >= 0 ? br[best] : 0;
        it[i].broad = best >= 0 ? best : INT32_MAX;
    }
}

static int offline_place(fin *f, int64_t align, double scale, int breadth)
{
    int timed = scale > 0;
    plan_builder *b = f->b;
    const graph_profile *g = f->g;
    size_t nr = f->n_res;
    f->pre = sw_malloc((nr + 1) * sizeof *f->pre);
    off_item *it = sw_malloc((nr + 1) * sizeof *it);
    size_t *ord = sw_malloc((nr + 1) * sizeof *ord); /* items placed, by offset */
    double *clk = timed ? sw_malloc(((size_t)f->E + 1) * 2 * sizeof *clk) : NULL;
    int64_t *br = breadth ? sw_malloc(((size_t)f->E + 3) * sizeof *br) : NULL;
    int32_t *seg = breadth ? sw_malloc(((size_t)f->E + 2) * 2 * sizeof *seg) : NULL;
    if (!f->pre || !it || !ord || (timed && !clk) || (breadth && (!br || !seg))) {
        sw_free(it);
        sw_free(ord);
        sw_free(clk);
        sw_free(br);
        sw_free(seg);
        return SW_ENOMEM;
    }
    double *dend = clk ? clk + f->E + 1 : NULL;
    double tend = 0;
    int wrap = timed ? copy_clock(f, clk, dend, scale, &tend) : 0;
    size_t n = 0;
    for (size_t r = 0; r < nr; r++)
        f->pre[r] = 0;
    for (size_t r = 0; r < nr; r++) {
        const pb_res *x = &f->res[r];
        int32_t s = x->storage;
        int64_t bytes = g->bytes[s];
        if (bytes <= 0)
            continue;
        int32_t hi = x->release_ev >= 0 ? x->release_ev : f->E, th = hi;
        if (timed && x->release_ev >= 0 && (b->ev[hi].kind == TASK_SWAP_OUT ||
                                            b->ev[hi].kind == TASK_DROP))
            th = SW_MAX(hi, issued_before(f, clk, hi, dend[hi]));
        if (x->place_ev >= 0 && b->in_r[s] && f->final_res[s] == (int32_t)r &&
            f->rix[s] >= 0)
            continue; /* the homecoming: an item with the start residency */
        off_item *t = &it[n++];
        memset(t, 0, sizeof *t);
        t->size = align > 1 ? (bytes + align - 1) / align * align : bytes;
        t->off = -1;
        t->n = 1;
        t->lo[0] = x->place_ev;
        t->hi[0] = hi;
        t->th[0] = th;
        t->r[0] = (int32_t)r;
        if (wrap && th == f->E - 1 && x->release_ev >= 0 && dend[hi] > tend) {
            /* its copy out ends in the next iteration: the bytes are held
               through the events issued before then there too */
            int32_t w = issued_before(f, clk, 0, dend[hi] - tend);
            if (w >= 0) {
                t->lo[t->n] = -1;
                t->hi[t->n] = -2; /* (no span without the copies' times) */
                t->th[t->n] = w;
                t->r[t->n] = (int32_t)r;
                t->n++;
            }
        }
        if (x->place_ev < 0) {
            int32_t fr = f->final_res[s];
            if (fr >= 0 && fr != (int32_t)r) {
                t->lo[t->n] = f->res[fr].place_ev;
                t->hi[t->n] = t->th[t->n] = f->E;
                t->r[t->n] = fr;
                t->n++;
            }
            int32_t i = f->rix[s];
            if (i >= 0 && b->rexplicit[i]) {
                t->fixed = 1;
                t->off = b->rhome[i].offset;
            }
        }
    }
    if (breadth)
        off_breadth(it, n, f->E, timed, br, seg);
    sw_free(br);
    sw_free(seg);
    qsort(it, n, sizeof *it, off_item_cmp);
    int64_t top = 0;
    for (size_t i = 0; i < n; i++) {
        off_item *t = &it[i];
        if (!t->fixed) {
            t->off = off_gap(it, ord, i, timed);
        }
        size_t lo = 0, hi = i; /* insert into ord after the items at lower offsets */
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (it[ord[mid]].off <= t->off)
                lo = mid + 1;
            else
                hi = mid;
        }
        memmove(ord + lo + 1, ord + lo, (i - lo) * sizeof *ord);
        ord[lo] = i;
        if (t->off + t->size > top)
            top = t->off + t->size;
        if (top > f->p->capacity)
            break; /* it does not fit: the rest need not be placed */
        for (int j = 0; j < t->n; j++)
            f->pre[t->r[j]] = t->off;
    }
    sw_free(it);
    sw_free(ord);
    sw_free(clk);
    return top > f->p->capacity ? SW_ENOFIT : 0;
}

/* offline_place greedy by size, else (it does not fit) by breadth. */
static int offline_either(fin *f, int64_t align, double scale)
{
    int rc = offline_place(f, align, scale, 0);
    if (rc != SW_ENOFIT)
        return rc;
    sw_free(f->pre);
    f->pre = NULL;
    return offline_place(f, align, scale, 1);
}

/* offline_either with the copies' estimated durations scaled: 1 if it fits;
   else, if the plain spans (0) fit, the largest scale that fits found by
   OFF_HALVINGS halvings of [0, 1] (the timed spans only add overlaps, so
   less of them fits more often), else 0's. */
#define OFF_HALVINGS 5
static int offline_timed(fin *f, int64_t align)
{
    int rc = offline_either(f, align, 1);
    if (rc != SW_ENOFIT)
        return rc;
    sw_free(f->pre);
    f->pre = NULL;
    if ((rc = offline_either(f, align, 0)) != 0)
        return rc;
    int64_t *keep = f->pre;
    f->pre = NULL;
    double lo = 0, hi = 1;
    for (int i = 0; i < OFF_HALVINGS; i++) {
        double mid = (lo + hi) / 2;
        sw_free(f->pre);
        f->pre = NULL;
        rc = offline_either(f, align, mid);
        if (rc == 0) {
            sw_free(keep);
            keep = f->pre;
            f->pre = NULL;
            lo = mid;
        } else if (rc == SW_ENOFIT) {
            hi = mid;
        } else {
            sw_free(keep);
            return rc;
        }
    }
    sw_free(f->pre);
    f->pre = keep;
    return 0;
}

/* The initial residents, placed (at their homes where given) and tagged live;
   SW_ENOMEM, or SW_ENOFIT when one cannot be placed. */
static int place_residents(fin *f)
{
    plan_builder *b = f->b;
    const graph_profile *g = f->g;
    int rc;
    for (int32_t s = 0; s < g->n_tensors; s++) {
        f->cur_res[s] = f->rix[s] = -1;
        f->place_ref[s] = f->user_ref[s] = f->copyout_ref[s] = REF_NONE;
    }
    for (int32_t i = 0; i < b->n_r; i++) {
        int32_t s = b->rset[i];
        f->rix[s] = i;
        pb_res *r = &f->res[i];
        int64_t bytes = g->bytes[s];
        if (b->rexplicit[i]) {
            r->place = b->rhome[i];
            plan_place_resolve(f->p, &r->place);
            rc = mem_alloc_at(b->mem, s, bytes, &r->place);
        } else if (f->pre) {
            r->place.cls = r->place.obj = -1;
            r->place.offset = f->pre[i];
            rc = mem_alloc_at(b->mem, s, bytes, &r->place);
        } else {
            rc = mem_alloc(b->mem, s, bytes, &r->place);
            plan_place_resolve(f->p, &r->place);
        }
        if (rc) {
            char h1[32];
            return sw_fail(f->err, SW_ENOFIT, "does not fit: persistent tensor %d '%s' (%s) "
                           "cannot be placed in the resident set", s, tname(f, s),
                           sw_fmt_bytes(bytes, h1, sizeof h1));
        }
        r->place.tensor = s;
        f->cur_res[s] = i;
        if (bytes <= 0)
            continue;
        if (f->p->mem_kind == MEM_POOL)
            f->obj_tag[f->obj_base[r->place.cls] + r->place.obj] = REF_LIVE;
        else if (bytes > 0 &&
                 imap_assign(&f->im, r->place.offset, r->place.offset + bytes, REF_LIVE))
            return SW_ENOMEM;
    }
    return 0;
}

static int finish_once(plan_builder *b, plan **out, sw_err *err, int32_t **reloc, size_t *n_reloc)
{
    *out = NULL;
    fin f;
    memset(&f, 0, sizeof f);
    f.b = b;
    f.g = b->g;
    f.E = (int32_t)b->n_ev;
    f.err = err;
    imap_init(&f.im);
    int rc = fin_alloc(&f);
    if (!rc)
        rc = build_residencies(&f);
    if (!rc)
        rc = describe_memory(&f);
    mem_fit fit;
    int64_t align;
    if (!rc && !mem_address_config(b->mem, &fit, &align) && fit == MEM_OFFLINE) {
        /* rix, read by offline_place, is set by place_residents: set it first */
        for (int32_t s = 0; s < f.g->n_tensors; s++)
            f.rix[s] = -1;
        for (int32_t i = 0; i < b->n_r; i++)
            f.rix[b->rset[i]] = i;
        rc = offline_timed(&f, align);
        if (rc == SW_ENOFIT) {
            /* greedy by size and by breadth are heuristics: where neither
               fits, place online, best fit (MEM_OFFLINE's own), which
               sometimes does */
            sw_free(f.pre);
            f.pre = NULL;
            snprintf(f.p->policy, sizeof f.p->policy, "best-fit");
            rc = 0;
        }
    }
    if (!rc)
        rc = place_residents(&f);
    if (!rc)
        rc = process_pass(&f, 0);
    if (!rc && f.n_reloc) {
        *reloc = f.reloc;
        *n_reloc = f.n_reloc;
        f.reloc = NULL;
        rc = RELOCATE;
        goto done;
    }
    if (!rc)
        rc = process_pass(&f, 1);
    if (!rc && emit(&f))
        rc = SW_ENOMEM;
    if (rc == SW_ENOMEM) /* err may be NULL (the GA's evaluations) */
        rc = sw_fail(err, SW_ENOMEM, "out of memory while building the plan");
    if (!rc) {
        *out = f.p;
        f.p = NULL;
    }
done:
    fin_free(&f);
    return rc;
}

/* A twin: planners/lib/swapplan_fast.c re-implements this placement and
   edge inference (finish_once and what it calls) for SwapAdvisor's
   evaluations, on purpose (speed), and must give the same result; a change
   to one is a change to both (tests/test_swapplan_fast compares them). The
   offline placement (MEM_OFFLINE) has no twin there: SwapAdvisor's plans
   are placed in its size-class pool. */

/* A persistent tensor of the resident set that is brought back in the middle
   of the iteration may find its home taken. It is then sent out again (copy
   if dirty, else drop) and brought home at the end, and the plan rebuilt:
   all such departures first, then all the homecomings. */
int pb_finish(plan_builder *b, plan **out, sw_err *err)
{
    *out = NULL;
    if (b->err_code)
        return sw_fail(err, b->err_code, "%s", b->err_msg);
    size_t n_orig = b->n_ev;
    int32_t *all = NULL;
    size_t n_all = 0, cap_all = 0;
    int rc = RELOCATE;
    for (int attempt = 0; attempt < 4 && rc == RELOCATE; attempt++) {
        int32_t *more = NULL;
        size_t n_more = 0;
        rc = finish_once(b, out, err, &more, &n_more);
        if (rc != RELOCATE)
            break;
        if (SW_GROW(all, cap_all, n_all + n_more)) {
            sw_free(more);
            rc = sw_fail(err, SW_ENOMEM, "out of memory");
            break;
        }
        memcpy(all + n_all, more, n_more * sizeof *all);
        n_all += n_more;
        sw_free(more);
        b->n_ev = n_orig;
        for (size_t i = 0; i < n_all; i++)
            push(b, b->host_valid[all[i]] ? TASK_DROP : TASK_SWAP_OUT, all[i]);
        for (size_t i = 0; i < n_all; i++)
            push(b, TASK_SWAP_IN, all[i]);
        if (b->err_code) {
            rc = sw_fail(err, b->err_code, "%s", b->err_msg);
            break;
        }
    }
    sw_free(all);
    if (rc == RELOCATE)
        rc = sw_fail(err, SW_EINVAL, "persistent tensors cannot return to their placements at "
                     "iteration start");
    return rc;
}
