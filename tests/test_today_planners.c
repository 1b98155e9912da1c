/* test_today_planners.c: today's planners (checkpoint-blocks,
   offload-activations, zero-offload, selective, sac, act-budget) on a 4-layer decoder (swapsim model decoder
   --layers 4 --hidden 64 --heads 4 --kv-heads 2 --ffn 128 --vocab 100
   --seq 16), each plan's keep / recompute / offload sets checked against
   the sets derived by hand below; every plan verifies and simulates. One
   named test each (tap_run). Then the same decoder named as an imported
   PyTorch trace (imported_names, unscoped_names), the refusal messages'
   numbers (selective_refusal, act_budget_refusal) and zero-offload on a
   hand-built SGD-momentum step of 300 parameters (zero_offload_sgd), each
   worked by hand where it is defined.

   The decoder's forward ops, in order (gen_decoder.c): embed.tok,
   embed.flatten (a view), then per layer l:
     attn_norm q_proj k_proj v_proj q_rope k_rope attn o_proj attn_add
     mlp_norm gate_proj up_proj swiglu down_proj mlp_add          (15 ops)
   then head.norm, head.lm_head, head.loss. What each backward op reads
   (nn.c): rmsnorm its input; a linear its input; rope nothing; attn its
   q, k, v, output (attn:0) and statistics (attn:1); add nothing; swiglu
   gate and up; the loss the logits.

   So the activations one layer saves for backward are its input (read by
   attn_norm's backward: the previous layer's mlp_add, or embed.tok), and
     attn_norm, q_rope, k_rope, v_proj, attn:0, attn:1, attn_add, mlp_norm,
     gate_proj, up_proj, swiglu                                     (11)
   while q_proj, k_proj (read only by the rope ops), o_proj and down_proj
   (read only by the adds) and mlp_add (read by the next layer) are not.

   checkpoint-blocks: blocks embed | layer0 .. layer3 | head (the scope
   before the first '.'). Kept: what a later block's forward reads:
   embed.tok and each layer's mlp_add (5 checkpoints). Dropped after the
   forward pass: each layer's 11 saved activations, plus what re-running
   them needs from inside the layer: q_proj, k_proj (inputs of the ropes),
   o_proj (input of attn_add): 14 per layer. Re-run before the layer's
   backward: the producers of those 14, i.e. every forward op of the layer
   but down_proj and mlp_add (13 per layer, 52 in all). The head is the
   last block: nothing of it is dropped or re-run; embed's only output is
   a checkpoint.

   offload-activations: every saved activation is copied out after its
   last forward use and back for its backward: per layer the 11 above plus
   the layer's input, i.e. embed.tok, each mlp_add (read by the next
   attn_norm's backward and, for layer3, head.norm's), and head.norm (read
   by lm_head's backward); not the logits (the loss's backward, the very
   next op, reads them). 1 + 4 x 12 + 1 = 50 tensors. prefetch=false: each
   copy-back is issued just before the backward op that reads it (the next
   op run after it reads the tensor); prefetch=true: a layer-l tensor comes
   back when the backward pass enters layer l+1 (for layer3: the head's
   first backward op, head.loss_bwd; embed's: layer0's).

   zero-offload: the decoder's parameters are embed.tok.w, per layer
   attn_norm.w, q/k/v/o_proj.w, mlp_norm.w, gate/up/down_proj.w (9), and
   head.norm.w, head.lm_head.w (the 125m preset is untied): 1 + 36 + 2 =
   39, each with three fp32 state tensors (master, m, v: 117, each twice
   the bf16 parameter's bytes). Expected: the 117
   states never on the GPU (not resident, in no task); 39 gradients copied
   out, each right after the backward op that makes it (the run just
   before its swap-out); nothing swapped in, dropped or re-run; each
   update's time the CPU step plus the copy back, e.g. layer0.q_proj.w:
   64 x 64 = 4096 elements x 7.07e-10 s + 6 us + 8192 B / 52.5 GB/s.

   selective: the attention core is the fused layerN.attn; both its
   outputs (attn:0, attn:1) are read by the backward pass, so both are
   dropped, attn:1 right after attn runs (no forward op reads it), attn:0
   after its last forward reader, o_proj; attn is re-run once per layer
   just before the first backward op reading either, layerN.o_proj_bwd
   (it reads attn:0; attn_bwd comes after it). 4 re-runs, 8 drops.

   sac: pointwise ops are the norms, ropes, adds and swiglu; a pointwise
   output the backward pass reads is recomputed if the op's inputs are
   still alive and kept at its first backward reader:
     attn_norm: input x (the layer input, kept: attn_norm's backward reads
       it later) -> recomputed before v_proj's backward;
     q_rope, k_rope: input q_proj/k_proj died after the ropes -> kept;
     attn_add: input o_proj died -> kept;
     mlp_norm: input attn_add (kept for mlp_norm's backward) -> recomputed;
     swiglu: inputs gate, up (kept for swiglu's backward) -> recomputed;
     mlp_add: input down_proj died -> kept (it is the next layer's x);
     head.norm: input layer3.mlp_add (kept) -> recomputed.
   So 3 per layer + 1 = 13 re-runs and 13 drops, each re-run just before
   the first backward op reading its output.

   act-budget (mode=fraction), with the op times set by the test so that
   the knapsack can be worked by hand: linear 10 us, attn 20, rmsnorm 2,
   rope 2, swiglu 3, add and everything else 1. Regions are the blocks
   (embed, layer0..3, head). A layer's items are the ops that can be re-run
   whose storages the backward pass reads, the layer's output (mlp_add,
   read by the next block) excluded; weight the bytes of those storages
   (bf16, 16 tokens: hidden 64 -> 2048 B, kv 32 -> 1024, ffn 128 -> 4096;
   attn:1 the fp32 statistics 4 heads x 16 = 256), worth the op's time plus
   that of re-running the inputs the forward pass freed (q_proj under
   q_rope, k_proj under k_rope, o_proj under attn_add):
     attn_norm 2048 B 2 us | v_proj 1024 10 | q_rope 2048 2+10 |
     k_rope 1024 2+10 | attn 2048+256 20 | attn_add 2048 1+10 |
     mlp_norm 2048 2 | gate_proj 4096 10 | up_proj 4096 10 | swiglu 4096 3
   24832 B in all; units of ceil(24832/1000) = 25 B, weights rounded up:
   82 41 82 41 93 82 82 164 164 164 (995 units).
   fraction 0.7: capacity floor(0.7 x 24832 / 25) = 695 units, so at least
   300 units must be dropped; attn_norm, mlp_norm and swiglu (82+82+164 =
   328 units, 7 us) are the only items worth under 10 us, and no other set
   of weight >= 300 costs 7 us or less: those three are recomputed.
   The head's items: head.norm (2048 B, 2 us; its input layer3.mlp_add is
   kept for its backward) and lm_head (the bf16 logits 16 x 100 = 3200 B,
   10 us); units ceil(5248/1000) = 6 B, weights 342 and 534; capacity
   floor(0.7 x 5248 / 6) = 612 holds one: lm_head (worth more) is kept,
   head.norm recomputed. embed's only output feeds layer0: no item.
   So 3 x 4 + 1 = 13 re-runs and 13 drops (sac's set on this model).
   fraction 0.4: capacity floor(0.4 x 993.28) = 397 units. The five densest
   items k_rope (41, 12), v_proj (41, 10), attn (93, 20), q_rope (82, 12),
   attn_add (82, 11) weigh 339 and are worth 65; the 58 units left hold no
   other item (the lightest, a norm, is 82), and trading any of the five
   for a norm or an MLP item loses worth: attn_norm, mlp_norm, gate_proj,
   up_proj and swiglu are recomputed. Head: capacity floor(0.4 x 874.67)
   = 349 units holds head.norm (342) but not lm_head (534): lm_head is
   recomputed. 5 x 4 + 1 = 21 re-runs and 21 drops. swiglu's re-run needs
   gate and up, theirs mlp_norm (all dropped): the four re-run in forward
   order just before down_proj's backward, the first op to read swiglu's
   output.
   fraction 0: every item recomputed, with the chains q_proj, k_proj,
   o_proj: 13 re-runs per layer (checkpoint-blocks' set) and 2 in the head,
   54; drops: each item's saved storages, 11 per layer (attn's two), and
   the chain inputs q_proj, k_proj, o_proj, dropped after their forward use
   so that they can be remade (the plan builder remakes only a dropped
   storage): 14 per layer (checkpoint-blocks' 14), and 2 in the head, 58.
   At 0.7 and 0.4 no dropped item reads a chain input: no such drops. */
#include <string.h>

#include "../profiles/calibrate.h"
#include "../profiles/importers.h"
#include "../planners/planner.h"
#include "../sim/simulate.h"
#include "../sim/verify.h"
#include "tap.h"

static const char *const saved11[] = {"attn_norm", "q_rope",   "k_rope",  "v_proj",
                                      "attn:0",    "attn:1",   "attn_add", "mlp_norm",
                                      "gate_proj", "up_proj",  "swiglu"};
static const char *const dropped_extra[] = {"q_proj", "k_proj", "o_proj"};
static const char *const not_rerun[] = {"down_proj", "mlp_add"};
static const char *const layer_ops[] = {"attn_norm", "q_proj",   "k_proj",    "v_proj",
                                        "q_rope",    "k_rope",   "attn",      "o_proj",
                                        "attn_add",  "mlp_norm", "gate_proj", "up_proj",
                                        "swiglu",    "down_proj", "mlp_add"};

static graph_profile *decoder4(void)
{
    const char *kv[] = {"layers=4", "hidden=64", "heads=4", "kv_heads=2",
                        "ffn=128",  "vocab=100", "seq=16"};
    graph_profile *g = NULL;
    sw_err e;
    if (cal_generate("decoder", kv, 7, "h100-pcie", &g, &e))
        printf("# generate: %s\n", e.msg);
    return g;
}

/* Set KEY=VALUE[,KEY=VALUE]... (kv may be NULL). */
static int set_kvs(param_set *ps, const char *kv, sw_err *e)
{
    int rc = 0;
    for (const char *c = kv; c && *c && !rc;) {
        char one[64];
        size_t n = strcspn(c, ",");
        snprintf(one, sizeof one, "%.*s", (int)n, c);
        rc = params_set_kv(ps, one, e);
        c += n + (c[n] == ',');
    }
    return rc;
}

static int plan_with(const graph_profile *g, const char *name, const char *kv, plan **p)
{
    const planner *pl = planner_find(name);
    OK(pl != NULL, "%s is registered", name);
    if (!pl)
        return -1;
    planner_opts o;
    planner_opts_init(&o, pl);
    o.memory_budget = g->device.memory_bytes; /* roomy: these plans do not adapt */
    sw_err e;
    int rc = set_kvs(&o.params, kv, &e);
    if (!rc)
        rc = planner_run(pl, g, &o, p, &e);
    planner_opts_free(&o);
    IS_INT(rc, 0, "%s %s plans the 4-layer decoder (%s)", name, kv ? kv : "",
           rc ? e.msg : "ok");
    if (rc)
        return rc;
    IS_INT(plan_verify(*p, NULL, &e), 0, "%s: the plan verifies", name);
    sim_result r;
    IS_INT(sim_plan(*p, NULL, NULL, &r, &e), 0, "%s: the plan simulates", name);
    return 0;
}

/* How many tasks of kind k name op (RUN/RERUN) or tensor (others) `name`. */
static int count(const plan *p, int kind, const char *name)
{
    const graph_profile *g = p->prof;
    int n = 0;
    for (int32_t i = 0; i < p->n_tasks; i++) {
        const plan_task *t = &p->tasks[i];
        if (t->kind != kind)
            continue;
        const char *x = t->op >= 0 ? g->ops[t->op].name : g->tensors[t->tensor].name;
        n += !strcmp(x, name);
    }
    return n;
}

static int count_kind(const plan *p, int kind)
{
    int n = 0;
    for (int32_t i = 0; i < p->n_tasks; i++)
        n += p->tasks[i].kind == kind;
    return n;
}

static void checkpoint_blocks(void)
{
    graph_profile *g = decoder4();
    plan *p = NULL;
    if (!g || plan_with(g, "checkpoint-blocks", NULL, &p)) {
        graph_free(g);
        return;
    }
    char nm[64];
    IS_INT(count_kind(p, TASK_RERUN), 52, "52 re-runs: 13 per layer");
    for (int l = 0; l < 4; l++) {
        int ok = 1;
        for (size_t k = 0; k < SW_ARRAY_LEN(layer_ops); k++) {
            int skip = 0;
            for (size_t j = 0; j < SW_ARRAY_LEN(not_rerun); j++)
                skip |= !strcmp(layer_ops[k], not_rerun[j]);
            snprintf(nm, sizeof nm, "layer%d.%s", l, layer_ops[k]);
            if (count(p, TASK_RERUN, nm) != (skip ? 0 : 1)) {
                printf("#   %s re-run %d times\n", nm, count(p, TASK_RERUN, nm));
                ok = 0;
            }
        }
        OK(ok, "layer%d: every forward op but down_proj and mlp_add re-run once", l);
        ok = 1;
        for (size_t k = 0; k < SW_ARRAY_LEN(saved11) + SW_ARRAY_LEN(dropped_extra); k++) {
            const char *t = k < SW_ARRAY_LEN(saved11) ? saved11[k]
                                                       : dropped_extra[k - SW_ARRAY_LEN(saved11)];
            snprintf(nm, sizeof nm, "layer%d.%s", l, t);
            if (count(p, TASK_DROP, nm) != 1) {
                printf("#   %s dropped %d times\n", nm, count(p, TASK_DROP, nm));
                ok = 0;
            }
        }
        snprintf(nm, sizeof nm, "layer%d.mlp_add", l);
        ok &= count(p, TASK_DROP, nm) == 0;
        snprintf(nm, sizeof nm, "layer%d.down_proj", l);
        ok &= count(p, TASK_DROP, nm) == 0;
        OK(ok, "layer%d: its 14 interior storages dropped, its output kept", l);
    }
    IS_INT(count_kind(p, TASK_DROP), 56, "56 drops in all: nothing of embed or head");
    OK(count(p, TASK_DROP, "embed.tok") == 0 && count(p, TASK_RERUN, "head.norm") == 0 &&
       count(p, TASK_RERUN, "head.lm_head") == 0,
       "embed's output kept, the head (last block) not recomputed");
    IS_INT(count_kind(p, TASK_SWAP_OUT) + count_kind(p, TASK_SWAP_IN), 0, "nothing swapped");
    IS_STR_HAS(p->notes, "6 segments, 5 checkpoints", "notes: 6 blocks, 5 checkpoints");
    plan_free(p);
    graph_free(g);
}

/* The set of offloaded tensors, by hand (the header). */
static int expected_offload(const char *name)
{
    if (!strcmp(name, "embed.tok") || !strcmp(name, "head.norm"))
        return 1;
    for (int l = 0; l < 4; l++) {
        char nm[64];
        snprintf(nm, sizeof nm, "layer%d.mlp_add", l);
        if (!strcmp(name, nm))
            return 1;
        for (size_t k = 0; k < SW_ARRAY_LEN(saved11); k++) {
            snprintf(nm, sizeof nm, "layer%d.%s", l, saved11[k]);
            if (!strcmp(name, nm))
                return 1;
        }
    }
    return 0;
}

/* The op of the first RUN task after task i, or -1. */
static int32_t next_run(const plan *p, int32_t i)
{
    for (int32_t j = i + 1; j < p->n_tasks; j++)
        if (p->tasks[j].kind == TASK_RUN)
            return p->tasks[j].op;
    return -1;
}

static int reads(const graph_profile *g, int32_t op, int32_t s)
{
    for (int32_t k = 0; k < g->ops[op].n_in; k++)
        if (g->tensors[g->ops[op].in[k]].storage == s)
            return 1;
    return 0;
}

static void offload(int prefetch)
{
    graph_profile *g = decoder4();
    plan *p = NULL;
    const char *kv = prefetch ? "prefetch=true" : "prefetch=false";
    if (!g || plan_with(g, "offload-activations", kv, &p)) {
        graph_free(g);
        return;
    }
    IS_INT(count_kind(p, TASK_SWAP_OUT), 50, "%s: 50 activations offloaded", kv);
    IS_INT(count_kind(p, TASK_SWAP_IN), 50, "%s: 50 brought back", kv);
    IS_INT(count_kind(p, TASK_RERUN) + count_kind(p, TASK_DROP), 0, "%s: nothing recomputed",
           kv);
    int set_ok = 1, when_ok = 1;
    for (int32_t i = 0; i < p->n_tasks; i++) {
        const plan_task *t = &p->tasks[i];
        if (t->kind == TASK_SWAP_OUT && !expected_offload(g->tensors[t->tensor].name)) {
            printf("#   %s offloaded, not in the hand-derived set\n",
                   g->tensors[t->tensor].name);
            set_ok = 0;
        }
        if (t->kind != TASK_SWAP_IN)
            continue;
        const char *name = g->tensors[t->tensor].name;
        int32_t nxt = next_run(p, i);
        if (nxt < 0) {
            when_ok = 0;
            continue;
        }
        const char *nn = g->ops[nxt].name;
        int good;
        if (!prefetch) {
            good = reads(g, nxt, t->tensor) && g->ops[nxt].phase == GP_BACKWARD;
        } else if (!strcmp(name, "head.norm")) {
            good = reads(g, nxt, t->tensor) || !strcmp(nn, "head.loss_bwd");
        } else {
            /* the block after the producer's: layer l -> layer l+1 (layer3 -> head,
               embed -> layer0); its first backward op is that block's first */
            char want[64];
            int l = -1;
            if (!strncmp(name, "embed.", 6))
                snprintf(want, sizeof want, "layer0.mlp_add_bwd");
            else if (sscanf(name, "layer%d.", &l) == 1 && l < 3)
                snprintf(want, sizeof want, "layer%d.mlp_add_bwd", l + 1);
            else
                snprintf(want, sizeof want, "head.loss_bwd");
            good = !strcmp(nn, want);
        }
        if (!good) {
            printf("#   %s brought back before %s\n", name, nn);
            when_ok = 0;
        }
    }
    OK(set_ok, "%s: exactly the hand-derived saved activations offloaded", kv);
    OK(when_ok, "%s: each brought back %s", kv,
       prefetch ? "as the backward pass enters the next block" : "just before its reader");
    plan_free(p);
    graph_free(g);
}

static void offload_no_prefetch(void) { offload(0); }
static void offload_prefetch(void) { offload(1); }

/* prefetch hides copies the on-demand plan waits for */
static void prefetch_is_faster(void)
{
    graph_profile *g = decoder4();
    plan *a = NULL, *b = NULL;
    if (!g || plan_with(g, "offload-activations", "prefetch=false", &a) ||
        plan_with(g, "offload-activations", "prefetch=true", &b)) {
        plan_free(a);
        graph_free(g);
        return;
    }
    sim_result ra, rb;
    sw_err e;
    sim_plan(a, NULL, NULL, &ra, &e);
    sim_plan(b, NULL, NULL, &rb, &e);
    OK(rb.iteration_time_s < ra.iteration_time_s, "prefetch %.6f s < on demand %.6f s",
       rb.iteration_time_s, ra.iteration_time_s);
    plan_free(a);
    plan_free(b);
    graph_free(g);
}

static void zero_offload(void)
{
    graph_profile *g = decoder4();
    plan *p = NULL;
    if (!g || plan_with(g, "zero-offload", NULL, &p)) {
        graph_free(g);
        return;
    }
    const graph_profile *h = p->prof;
    OK(h != g && p->owns_prof, "the plan owns its rewritten profile");
    int nparam = 0, nstate = 0, touched = 0;
    for (int32_t t = 0; t < h->n_tensors; t++) {
        nparam += h->tensors[t].kind == GK_PARAMETER;
        if (h->tensors[t].kind != GK_OPTIMIZER_STATE)
            continue;
        nstate++;
        for (int32_t k = 0; k < h->acc_off[h->n_ops]; k++)
            touched += h->acc[k] == t;
        for (int32_t r = 0; r < p->n_resident; r++)
            touched += p->resident[r].tensor == t;
    }
    IS_INT(nparam, 39, "39 parameters");
    IS_INT(nstate, 117, "117 optimizer-state tensors (master, m, v)");
    IS_INT(touched, 0, "no GPU op touches a state and none is resident");
    IS_INT(count_kind(p, TASK_SWAP_OUT), 39, "39 gradients copied out");
    IS_INT(count_kind(p, TASK_SWAP_IN) + count_kind(p, TASK_DROP) + count_kind(p, TASK_RERUN),
           0, "nothing else moves or is recomputed");
    int after = 1;
    for (int32_t i = 0; i < p->n_tasks; i++) {
        if (p->tasks[i].kind != TASK_SWAP_OUT)
            continue;
        int32_t s = p->tasks[i].tensor, prev = -1;
        for (int32_t j = i - 1; j >= 0 && prev < 0; j--)
            if (p->tasks[j].kind == TASK_RUN)
                prev = p->tasks[j].op;
        int ok = h->tensors[s].kind == GK_GRADIENT && prev >= 0 &&
                 h->ops[prev].phase == GP_BACKWARD;
        int made = 0;
        for (int32_t k = 0; ok && k < h->ops[prev].n_out; k++)
            made |= h->ops[prev].out[k] == s;
        for (int32_t k = 0; ok && k < h->ops[prev].n_mut; k++)
            made |= h->ops[prev].mut[k] == s;
        if (!ok || !made) {
            printf("#   %s copied out after %s\n", h->tensors[s].name,
                   prev >= 0 ? h->ops[prev].name : "nothing");
            after = 0;
        }
    }
    OK(after, "each gradient copied out right after the backward op that makes it");
    int32_t u = -1;
    for (int32_t o = 0; o < h->n_ops; o++)
        if (!strcmp(h->ops[o].name, "update:layer0.q_proj.w"))
            u = o;
    OK(u >= 0 && !strcmp(h->ops[u].type, "cpu_adam_update") && h->ops[u].n_in == 0 &&
       h->ops[u].n_mut == 1, "update:layer0.q_proj.w is a host step mutating the parameter");
    if (u >= 0)
        IS_NUM(h->ops[u].time_s, 4096 * 7.07e-10 + 6e-6 + 8192 / 52.5e9, 1e-12,
               "its time: CPU-Adam for 4096 elements plus the copy back");
    plan_free(p);
    graph_free(g);
}

/* The op of the last RUN task before task i, or -1. */
static int32_t prev_run(const plan *p, int32_t i)
{
    for (int32_t j = i - 1; j >= 0; j--)
        if (p->tasks[j].kind == TASK_RUN)
            return p->tasks[j].op;
    return -1;
}

static void selective(void)
{
    graph_profile *g = decoder4();
    plan *p = NULL;
    if (!g || plan_with(g, "selective", NULL, &p)) {
        graph_free(g);
        return;
    }
    IS_INT(count_kind(p, TASK_RERUN), 4, "4 re-runs");
    IS_INT(count_kind(p, TASK_DROP), 8, "8 drops");
    IS_INT(count_kind(p, TASK_SWAP_IN) + count_kind(p, TASK_SWAP_OUT), 0, "nothing swapped");
    int ok = 1;
    for (int32_t i = 0; i < p->n_tasks; i++) {
        const plan_task *t = &p->tasks[i];
        char want[64];
        int l = -1;
        if (t->kind == TASK_RERUN) {
            const char *nm = g->ops[t->op].name;
            int32_t nx = next_run(p, i);
            if (sscanf(nm, "layer%d.", &l) != 1 || strcmp(strchr(nm, '.'), ".attn") || nx < 0)
                ok = 0;
            snprintf(want, sizeof want, "layer%d.o_proj_bwd", l);
            if (nx >= 0 && strcmp(g->ops[nx].name, want)) {
                printf("#   %s re-run before %s\n", nm, g->ops[nx].name);
                ok = 0;
            }
        } else if (t->kind == TASK_DROP) {
            const char *nm = g->tensors[t->tensor].name;
            int32_t pr = prev_run(p, i);
            if (sscanf(nm, "layer%d.", &l) != 1) {
                ok = 0;
                continue;
            }
            const char *suffix = strchr(nm, '.');
            snprintf(want, sizeof want, "layer%d.%s", l,
                     !strcmp(suffix, ".attn:1") ? "attn" : "o_proj");
            if ((strcmp(suffix, ".attn:0") && strcmp(suffix, ".attn:1")) || pr < 0 ||
                strcmp(g->ops[pr].name, want)) {
                printf("#   %s dropped after %s\n", nm, pr >= 0 ? g->ops[pr].name : "nothing");
                ok = 0;
            }
        }
    }
    OK(ok, "each layer's attention output and statistics dropped after their last forward "
       "use, attn re-run just before o_proj's backward");
    plan_free(p);
    graph_free(g);
}

static void sac(void)
{
    graph_profile *g = decoder4();
    plan *p = NULL;
    if (!g || plan_with(g, "sac", NULL, &p)) {
        graph_free(g);
        return;
    }
    IS_INT(count_kind(p, TASK_RERUN), 13, "13 re-runs");
    IS_INT(count_kind(p, TASK_DROP), 13, "13 drops");
    IS_INT(count_kind(p, TASK_SWAP_IN) + count_kind(p, TASK_SWAP_OUT), 0, "nothing swapped");
    static const char *const rec[] = {"attn_norm", "mlp_norm", "swiglu"};
    int ok = count(p, TASK_RERUN, "head.norm") == 1 && count(p, TASK_DROP, "head.norm") == 1;
    for (int l = 0; l < 4; l++)
        for (size_t k = 0; k < SW_ARRAY_LEN(rec); k++) {
            char nm[64];
            snprintf(nm, sizeof nm, "layer%d.%s", l, rec[k]);
            if (count(p, TASK_RERUN, nm) != 1 || count(p, TASK_DROP, nm) != 1) {
                printf("#   %s: %d re-runs, %d drops\n", nm, count(p, TASK_RERUN, nm),
                       count(p, TASK_DROP, nm));
                ok = 0;
            }
        }
    OK(ok, "the two norms and swiglu of each layer, and the head's norm, recomputed");
    /* each re-run right before the first backward op reading its output */
    int when = 1;
    for (int32_t i = 0; i < p->n_tasks; i++) {
        if (p->tasks[i].kind != TASK_RERUN)
            continue;
        int32_t op = p->tasks[i].op, nx = -1;
        for (int32_t j = i + 1; j < p->n_tasks && nx < 0; j++)
            if (p->tasks[j].kind == TASK_RUN)
                nx = p->tasks[j].op;
        int32_t out = g->ops[op].out[0], first = -1;
        for (int32_t k = 0; k < g->n_ops && first < 0; k++) {
            int32_t o2 = g->order[k];
            if (g->ops[o2].phase == GP_BACKWARD && reads(g, o2, out))
                first = o2;
        }
        if (nx != first) {
            printf("#   %s re-run before %s\n", g->ops[op].name, nx >= 0 ? g->ops[nx].name : "-");
            when = 0;
        }
    }
    OK(when, "each re-run just before the first backward reader of its output");
    plan_free(p);
    graph_free(g);
}

/* The times of the hand-worked knapsack (the header). */
static void knapsack_times(graph_profile *g)
{
    for (int32_t o = 0; o < g->n_ops; o++) {
        const char *t = g->ops[o].type ? g->ops[o].type : "";
        double us = 1;
        if (g->ops[o].phase != GP_FORWARD)
            us = 1;
        else if (!strcmp(t, "linear"))
            us = 10;
        else if (!strcmp(t, "flash_attention"))
            us = 20;
        else if (!strcmp(t, "rmsnorm") || !strcmp(t, "rope"))
            us = 2;
        else if (!strcmp(t, "swiglu"))
            us = 3;
        g->ops[o].time_s = us * 1e-6;
    }
}

/* act-budget at a fraction: the ops re-run and the storages dropped per
   layer (suffixes), in the head, and the totals. */
static void act_budget_case(const char *fraction, const char *const *layer_rerun, size_t nlr,
                            const char *const *head_rerun, size_t nhr, int reruns, int drops)
{
    graph_profile *g = decoder4();
    plan *p = NULL;
    char kv[64];
    snprintf(kv, sizeof kv, "fraction=%s", fraction);
    if (g)
        knapsack_times(g);
    const planner *pl = planner_find("act-budget");
    OK(pl != NULL, "act-budget is registered");
    if (!g || !pl) {
        graph_free(g);
        return;
    }
    planner_opts o;
    planner_opts_init(&o, pl);
    o.memory_budget = g->device.memory_bytes;
    sw_err e;
    int rc = params_set_kv(&o.params, "mode=fraction", &e);
    if (!rc)
        rc = params_set_kv(&o.params, kv, &e);
    if (!rc)
        rc = planner_run(pl, g, &o, &p, &e);
    planner_opts_free(&o);
    IS_INT(rc, 0, "act-budget %s plans the 4-layer decoder (%s)", kv, rc ? e.msg : "ok");
    if (rc) {
        graph_free(g);
        return;
    }
    IS_INT(plan_verify(p, NULL, &e), 0, "%s: the plan verifies", kv);
    sim_result r;
    IS_INT(sim_plan(p, NULL, NULL, &r, &e), 0, "%s: the plan simulates", kv);
    IS_INT(count_kind(p, TASK_RERUN), reruns, "%s: %d re-runs", kv, reruns);
    IS_INT(count_kind(p, TASK_DROP), drops, "%s: %d drops", kv, drops);
    IS_INT(count_kind(p, TASK_SWAP_IN) + count_kind(p, TASK_SWAP_OUT), 0, "%s: nothing swapped",
           kv);
    int ok = 1;
    char nm[64];
    for (int l = 0; l < 4; l++)
        for (size_t k = 0; k < SW_ARRAY_LEN(layer_ops); k++) {
            int want = 0;
            for (size_t j = 0; j < nlr; j++)
                want |= !strcmp(layer_ops[k], layer_rerun[j]);
            snprintf(nm, sizeof nm, "layer%d.%s", l, layer_ops[k]);
            if (count(p, TASK_RERUN, nm) != want) {
                printf("#   %s re-run %d times, want %d\n", nm, count(p, TASK_RERUN, nm), want);
                ok = 0;
            }
        }
    static const char *const head_ops[] = {"head.norm", "head.lm_head", "head.loss"};
    for (size_t k = 0; k < SW_ARRAY_LEN(head_ops); k++) {
        int want = 0;
        for (size_t j = 0; j < nhr; j++)
            want |= !strcmp(head_ops[k], head_rerun[j]);
        if (count(p, TASK_RERUN, head_ops[k]) != want) {
            printf("#   %s re-run %d times, want %d\n", head_ops[k],
                   count(p, TASK_RERUN, head_ops[k]), want);
            ok = 0;
        }
    }
    OK(ok, "%s: exactly the hand-derived ops re-run, once each", kv);
    /* every re-run is followed by re-runs and then a backward op reading
       what the re-runs made; a dropped storage is an item's output */
    int when = 1;
    for (int32_t i = 0; i < p->n_tasks; i++) {
        if (p->tasks[i].kind != TASK_RERUN)
            continue;
        int32_t nx = next_run(p, i);
        if (nx < 0 || g->ops[nx].phase != GP_BACKWARD) {
            printf("#   %s re-run in the forward pass\n", g->ops[p->tasks[i].op].name);
            when = 0;
        }
    }
    OK(when, "%s: every re-run in the backward pass", kv);
    IS_STR_HAS(p->notes, "act-budget: fraction", "%s: notes name the fraction", kv);
    plan_free(p);
    graph_free(g);
}

static void act_budget_07(void)
{
    static const char *const lr[] = {"attn_norm", "mlp_norm", "swiglu"};
    static const char *const hr[] = {"head.norm"};
    act_budget_case("0.7", lr, SW_ARRAY_LEN(lr), hr, SW_ARRAY_LEN(hr), 13, 13);
}

static void act_budget_04(void)
{
    static const char *const lr[] = {"attn_norm", "mlp_norm", "gate_proj", "up_proj", "swiglu"};
    static const char *const hr[] = {"head.lm_head"};
    act_budget_case("0.4", lr, SW_ARRAY_LEN(lr), hr, SW_ARRAY_LEN(hr), 21, 21);
    /* the MLP chain: mlp_norm, gate_proj, up_proj, swiglu re-run right before
       down_proj's backward */
    graph_profile *g = decoder4();
    if (!g)
        return;
    knapsack_times(g);
    const planner *pl = planner_find("act-budget");
    planner_opts o;
    planner_opts_init(&o, pl);
    o.memory_budget = g->device.memory_bytes;
    sw_err e;
    plan *p = NULL;
    int rc = params_set_kv(&o.params, "mode=fraction", &e);
    if (!rc)
        rc = params_set_kv(&o.params, "fraction=0.4", &e);
    if (!rc)
        rc = planner_run(pl, g, &o, &p, &e);
    planner_opts_free(&o);
    int ok = rc == 0;
    for (int32_t i = 0; ok && i < p->n_tasks; i++) {
        const plan_task *t = &p->tasks[i];
        if (t->kind != TASK_RUN || !strstr(g->ops[t->op].name, ".down_proj_bwd"))
            continue;
        static const char *const seq[] = {"mlp_norm", "gate_proj", "up_proj", "swiglu"};
        int l = -1;
        sscanf(g->ops[t->op].name, "layer%d.", &l);
        for (int k = 0; k < 4; k++) {
            char want[64];
            snprintf(want, sizeof want, "layer%d.%s", l, seq[k]);
            const plan_task *q = i - 4 + k >= 0 ? &p->tasks[i - 4 + k] : NULL;
            if (!q || q->kind != TASK_RERUN || strcmp(g->ops[q->op].name, want)) {
                printf("#   before %s: task %d is not the re-run of %s\n",
                       g->ops[t->op].name, i - 4 + k, want);
                ok = 0;
            }
        }
    }
    OK(ok, "fraction=0.4: mlp_norm, gate, up, swiglu re-run in order just before each "
       "down_proj backward");
    plan_free(p);
    graph_free(g);
}

static void act_budget_0(void)
{
    static const char *const lr[] = {"attn_norm", "q_proj", "k_proj",   "v_proj",
                                     "q_rope",    "k_rope", "attn",     "o_proj",
                                     "attn_add",  "mlp_norm", "gate_proj", "up_proj",
                                     "swiglu"};
    static const char *const hr[] = {"head.norm", "head.lm_head"};
    act_budget_case("0", lr, SW_ARRAY_LEN(lr), hr, SW_ARRAY_LEN(hr), 54, 58);
}

/* mode=bytes: a budget the keep-all plan fits (1.1x the ideal peak, room
   for the allocator's fragmentation) gives fraction 1; a tighter one (0.9x)
   a smaller fraction whose plan fits; below the fraction-0 plan (which
   needs about 0.8x here, as checkpoint-blocks), a one-line refusal. A
   2-layer decoder at sequence 512, where activations outweigh the
   parameters. */
static void act_budget_bytes(void)
{
    const char *kv[] = {"layers=2", "hidden=64", "heads=4", "kv_heads=2",
                        "ffn=256",  "vocab=100", "seq=512"};
    graph_profile *g = NULL;
    sw_err e;
    if (cal_generate("decoder", kv, 7, "h100-pcie", &g, &e)) {
        OK(0, "generate: %s", e.msg);
        return;
    }
    const planner *pl = planner_find("act-budget");
    int64_t ideal = 0;
    planner_ideal_peak(g, &ideal, &e);
    double fr[] = {1.1, 0.9, 0.5};
    for (size_t k = 0; k < SW_ARRAY_LEN(fr); k++) {
        planner_opts o;
        planner_opts_init(&o, pl);
        o.memory_budget = (int64_t)((double)ideal * fr[k]);
        plan *p = NULL;
        int rc = planner_run(pl, g, &o, &p, &e);
        planner_opts_free(&o);
        if (k == 0) {
            IS_INT(rc, 0, "bytes mode at 1.1x the ideal peak plans (%s)", rc ? e.msg : "ok");
            if (!rc)
                IS_STR_HAS(p->notes, "fraction 1.0000", "at 1.1x: fraction 1");
        } else if (k == 1) {
            IS_INT(rc, 0, "bytes mode at 0.9x plans (%s)", rc ? e.msg : "ok");
            if (!rc) {
                sim_result r;
                sim_plan(p, NULL, NULL, &r, &e);
                OK(r.peak_memory_bytes <= o.memory_budget && !strstr(p->notes, "fraction 1."),
                   "at 0.9x: a fraction under 1 (%s), peak %lld <= budget %lld", p->notes,
                   (long long)r.peak_memory_bytes, (long long)o.memory_budget);
            }
        } else {
            IS_INT(rc, SW_ENOFIT, "bytes mode at 0.5x: does not fit (%s)", rc ? e.msg : "ok");
            OK(rc && !strncmp(e.msg, "does not fit", 12) && !strchr(e.msg, '\n'),
               "one line starting 'does not fit'");
        }
        plan_free(p);
    }
    graph_free(g);
}

/* Regression: on the recorded DenseNet-121, max_pool2d's indices are an
   item while its output stays resident (read by the next dense blocks); a
   re-run would place both, so the item must be kept, not re-run. At 0.9x
   of the ideal peak the plan verifies. */
static void act_budget_densenet(void)
{
    const char *d = tap_data_dir();
    if (!d) {
        tap_skip(1, "recorded data not found ($SWAPSIM_DATA)");
        return;
    }
    char p1[1024], p2[1024];
    snprintf(p1, sizeof p1, "%s/pytorch-traces/h100_densenet121_b64_et.json.gz", d);
    snprintf(p2, sizeof p2, "%s/pytorch-traces/h100_densenet121_b64_kineto.json.gz", d);
    const importer *im = importer_find("pytorch");
    param_set ps;
    params_init(&ps, im->params);
    const char *files[2] = {p1, p2};
    graph_profile *g = NULL;
    sw_err e;
    int rc = im->import(files, 2, &ps, dev_find("h100-pcie"), &g, &e);
    params_free(&ps);
    IS_INT(rc, 0, "DenseNet-121 imports (%s)", rc ? e.msg : "ok");
    if (rc)
        return;
    const planner *pl = planner_find("act-budget");
    int64_t ideal = 0;
    planner_ideal_peak(g, &ideal, &e);
    planner_opts o;
    planner_opts_init(&o, pl);
    o.memory_budget = (int64_t)((double)ideal * 0.9);
    plan *p = NULL;
    rc = planner_run(pl, g, &o, &p, &e);
    planner_opts_free(&o);
    IS_INT(rc, 0, "act-budget plans DenseNet-121 at 0.9x (%s)", rc ? e.msg : "ok");
    if (!rc) {
        IS_INT(plan_verify(p, NULL, &e), 0, "the plan verifies (%s)", e.msg);
        OK(count(p, TASK_RERUN, "n48:aten::max_pool2d") == 0, "max_pool2d is not re-run");
    }
    plan_free(p);
    graph_free(g);
}


/* The 4-layer decoder as an imported PyTorch trace names it: each op
   "MODULE.PATH:aten::op" with the transformer layers under a ModuleList
   ("inner.layers.2.q_proj:..."), and, with types, PyTorch's op names: the
   linears aten::addmm (GPT-2's Conv1D), the fused attention
   aten::scaled_dot_product_attention (its output and logsumexp, as the
   generator's flash_attention), the rest aten:: names with no matmul or
   attention in them. The ops, tensors and edges are unchanged, so every
   planner whose rules docs/planners.md states for imported traces must
   make the same plan, task for task: blocks embed | layer0..3 | head again
   (inner | inner.layers.0 .. 3 | inner: the path up to the first numeric
   component, else up to the first '.'). Before the block rule read module
   paths, every op fell in one block "inner" and checkpoint-blocks re-ran
   nothing; before the aten:: types were known, selective re-ran nothing
   and sac re-ran the matmuls and the attention. */
static void as_imported(graph_profile *g, int types)
{
    static const char *const map[][2] = {
        {"linear", "aten::addmm"},     {"flash_attention", "aten::scaled_dot_product_attention"},
        {"embedding", "aten::embedding"}, {"softmax_cross_entropy", "aten::cross_entropy_loss"},
        {"rmsnorm", "aten::rms_norm"}, {"rope", "aten::mul"},
        {"add", "aten::add"},          {"swiglu", "aten::silu"},
        {"view", "aten::view"}};
    for (int32_t o = 0; o < g->n_ops; o++) {
        graph_op *x = &g->ops[o];
        char nm[160];
        int l;
        if (sscanf(x->name, "layer%d.", &l) == 1)
            snprintf(nm, sizeof nm, "inner.layers.%d.%s:%s", l, strchr(x->name, '.') + 1,
                     x->type);
        else
            snprintf(nm, sizeof nm, "inner.%s:%s", x->name, x->type);
        sw_free(x->name);
        x->name = sw_strdup(nm);
        for (size_t k = 0; types && x->phase == GP_FORWARD && k < SW_ARRAY_LEN(map); k++)
            if (!strcmp(x->type, map[k][0])) {
                sw_free(x->type);
                x->type = sw_strdup(map[k][1]);
                break;
            }
    }
}

/* Whether p and q have the same tasks (kind, op, storage) in order. */
static int same_tasks(const plan *p, const plan *q)
{
    if (p->n_tasks != q->n_tasks) {
        printf("#   %d tasks against %d\n", p->n_tasks, q->n_tasks);
        return 0;
    }
    for (int32_t i = 0; i < p->n_tasks; i++)
        if (p->tasks[i].kind != q->tasks[i].kind || p->tasks[i].op != q->tasks[i].op ||
            p->tasks[i].tensor != q->tasks[i].tensor) {
            printf("#   task %d differs\n", i);
            return 0;
        }
    return 1;
}

static void imported_names(void)
{
    static const char *const who[][2] = {{"checkpoint-blocks", NULL},
                                         {"act-budget", "mode=fraction,fraction=0.4"},
                                         {"offload-activations", "prefetch=true"},
                                         {"selective", NULL},
                                         {"sac", NULL}};
    graph_profile *g = decoder4(), *h = decoder4();
    if (!g || !h) {
        graph_free(g);
        graph_free(h);
        return;
    }
    as_imported(h, 1);
    OK(!strcmp(h->ops[4].name, "inner.layers.0.k_proj:linear") &&
       !strcmp(h->ops[4].type, "aten::addmm"), "renamed: %s (%s)", h->ops[4].name,
       h->ops[4].type);
    for (size_t k = 0; k < SW_ARRAY_LEN(who); k++) {
        plan *p = NULL, *q = NULL;
        if (!plan_with(g, who[k][0], who[k][1], &p) && !plan_with(h, who[k][0], who[k][1], &q))
            OK(same_tasks(p, q) && count_kind(q, TASK_RERUN) + count_kind(q, TASK_SWAP_OUT) > 0,
               "%s: the same plan on the decoder named as an imported trace", who[k][0]);
        plan_free(p);
        plan_free(q);
    }
    graph_free(g);
    graph_free(h);
}

/* A refusal says what the method keeps: at a budget 1 byte under the
   roomy plan's peak (the simulated peak of placed tensors and the
   workspace reserve, in an arena that holds everything: the peak of live
   bytes) the message names the plan's re-runs and drops, the bytes kept
   and the budget. selective: 4 re-runs, 8 storages dropped (attn:0 and
   attn:1 of 4 layers, 4 x (2048 + 256) = 9216 bytes). act-budget at
   fraction 0: 54 re-runs (the header), no item kept of 4 x 24832 + 5248 =
   104576 recomputable saved bytes. */
static void refusal(const char *name, const char *kv, const char *want_plan)
{
    graph_profile *g = decoder4();
    plan *p = NULL;
    if (!g || plan_with(g, name, kv, &p)) {
        graph_free(g);
        return;
    }
    sim_result r;
    sw_err e;
    IS_INT(sim_plan(p, NULL, NULL, &r, &e), 0, "the roomy plan simulates");
    int64_t need = r.peak_memory_bytes;
    plan_free(p);
    p = NULL;
    const planner *pl = planner_find(name);
    planner_opts o;
    planner_opts_init(&o, pl);
    o.memory_budget = need - 1;
    int rc = set_kvs(&o.params, kv, &e);
    if (!rc)
        rc = planner_run(pl, g, &o, &p, &e);
    planner_opts_free(&o);
    IS_INT(rc, SW_ENOFIT, "%s refuses %lld bytes", name, (long long)(need - 1));
    IS_STR_HAS(e.msg, want_plan, "the message names the method's re-runs and drops");
    char want[200];
    snprintf(want, sizeof want, "(%lld bytes", (long long)need);
    IS_STR_HAS(e.msg, want, "the message gives the bytes kept at the peak");
    snprintf(want, sizeof want, "(%lld bytes)", (long long)(need - 1));
    IS_STR_HAS(e.msg, want, "and the budget");
    plan_free(p);
    graph_free(g);
}

static void selective_refusal(void)
{
    refusal("selective", NULL, "selective (4 ops re-run, 9216 bytes dropped) keeps");
}

/* checkpoint-blocks: 6 segments, the 5 checkpoints embed.tok and each
   layer's mlp_add (16 tokens x 64 x 2 B = 2048 B each), and the
   persistent bytes: 160832 parameters (embed 100 x 64; per layer two
   norms of 64 and q 64x64, k and v 64x32, o 64x64, gate and up 64x128,
   down 128x64, 36992; the head's norm 64 and output layer 64 x 100), at 14
   bytes each (bf16 weight, fp32 master, m and v): 2251648 B, and the
   inputs, 16 token ids and 16 targets (96 B): 2251744 B, 2.15 MiB. */
static void checkpoint_blocks_refusal(void)
{
    refusal("checkpoint-blocks", NULL, "checkpoint-blocks (6 segments: 5 checkpoints of 10240 "
            "bytes, 2.15 MiB persistent) needs");
}

static void act_budget_refusal(void)
{
    refusal("act-budget", "mode=fraction,fraction=0",
            "act-budget at fraction 0.0000 (54 ops re-run, 0 of 104576 recomputable saved "
            "bytes kept) keeps");
}

/* zero-offload on an imported trace's optimizer (PyTorch SGD with momentum
   as _foreach ops), built by hand: 300 parameters p_i (1024 B, fp16 so 512
   elements) and their momentum buffers m_i (persistent optimizer states);
   a forward op reads the input x and every p_i and makes a (4096 B); a
   backward op reads a and makes the 300 gradients g_i as activations (the
   importer's kind for AccumulateGrad's .grad tensors); then
   _foreach_add_(m, g) (reads every g_i, mutates every m_i) and
   _foreach_add_(p, m) (reads every m_i, mutates every p_i): 300 inputs and
   mutations each. Expected: a plan (no limit on an update's operands);
   each g_i a gradient copied out right after the backward op (300
   swap-outs), no m_i resident nor touched by a GPU op (the second step
   reads them on the host), the resident set x and the 300 parameters:
   the peak 300 x 1024 + 64 (x) + 4096 (a) + 300 x 1024 (the gradients,
   made together by the backward op while a is still live). The second
   update's time: 300 x 512 elements x 7.07e-10 s + 300 x (6 us +
   1024 B / 52.5 GB/s). */
static void zero_offload_sgd(void)
{
    enum { N = 300 };
    graph_profile *g = graph_new("sgd300", dev_find("h100-pcie"));
    int32_t pm[N], mm[N], gr[N], x, a;
    char nm[32];
    int bad = !g;
    for (int i = 0; i < N && !bad; i++) {
        snprintf(nm, sizeof nm, "p%d", i);
        pm[i] = graph_add_tensor(g, nm, 1024, GK_PARAMETER, 1);
        snprintf(nm, sizeof nm, "m%d", i);
        mm[i] = graph_add_tensor(g, nm, 1024, GK_OPTIMIZER_STATE, 1);
        snprintf(nm, sizeof nm, "g%d", i);
        gr[i] = graph_add_tensor(g, nm, 1024, GK_ACTIVATION, 0);
        bad = pm[i] < 0 || mm[i] < 0 || gr[i] < 0;
    }
    x = bad ? -1 : graph_add_tensor(g, "x", 64, GK_INPUT, 1);
    a = bad ? -1 : graph_add_tensor(g, "a", 4096, GK_ACTIVATION, 0);
    int32_t fin[N + 1];
    fin[0] = x;
    memcpy(fin + 1, pm, sizeof pm);
    bad = bad || x < 0 || a < 0 ||
          graph_add_op(g, "fwd", "aten::linear", 1e-3, GP_FORWARD, fin, N + 1, &a, 1, NULL, 0,
                       0) < 0 ||
          graph_add_op(g, "bwd", "LinearBackward0", 1e-3, GP_BACKWARD, &a, 1, gr, N, NULL, 0,
                       0) < 0 ||
          graph_add_op(g, "step_m", "aten::_foreach_add_", 1e-4, GP_UPDATE, gr, N, NULL, 0, mm,
                       N, 0) < 0 ||
          graph_add_op(g, "step_p", "aten::_foreach_add_", 1e-4, GP_UPDATE, mm, N, NULL, 0, pm,
                       N, 0) < 0;
    sw_err e;
    if (!bad && graph_finish(g, &e, NULL, NULL)) {
        printf("# %s\n", e.msg);
        bad = 1;
    }
    OK(!bad, "the SGD-momentum profile builds");
    plan *p = NULL;
    if (bad || plan_with(g, "zero-offload", NULL, &p)) {
        graph_free(g);
        return;
    }
    const graph_profile *h = p->prof;
    IS_INT(count_kind(p, TASK_SWAP_OUT), N, "300 gradients copied out");
    int ok = 1;
    for (int32_t i = 0; i < p->n_tasks; i++)
        if (p->tasks[i].kind == TASK_SWAP_OUT)
            ok &= h->tensors[p->tasks[i].tensor].kind == GK_GRADIENT &&
                  prev_run(p, i) == 1; /* bwd */
    OK(ok, "each a gradient, copied out right after the backward op");
    int touched = 0;
    for (int32_t k = 0; k < h->acc_off[h->n_ops]; k++)
        touched += h->tensors[h->acc[k]].kind == GK_OPTIMIZER_STATE;
    for (int32_t r = 0; r < p->n_resident; r++)
        touched += h->tensors[p->resident[r].tensor].kind == GK_OPTIMIZER_STATE;
    IS_INT(touched, 0, "no momentum buffer touched by a GPU op or resident");
    IS_INT(p->n_resident, N + 1, "resident: x and the 300 parameters");
    sim_result r;
    if (!sim_plan(p, NULL, NULL, &r, &e))
        IS_INT(r.peak_memory_bytes, 2 * N * 1024 + 64 + 4096, "peak: parameters, x, a, gradients");
    IS_NUM(h->ops[3].time_s, N * 512 * 7.07e-10 + N * (6e-6 + 1024 / 52.5e9), 1e-12,
           "step_p: the host step for 300 x 512 elements plus 300 copies back");
    plan_free(p);
    graph_free(g);
}

/* A trace recorded without module scopes (the h100_* traces: every op
   "n<id>:aten::op", no '.' and no layer index) keeps the generic block
   rule: every forward op is a block of its own, as on random DAGs. On the
   decoder so renamed checkpoint-blocks cuts after every forward op: 65
   segments (embed.tok, embed.flatten, 4 x 15 layer ops, head.norm,
   head.lm_head, head.loss), where the rule for layered traces would make
   the whole graph one block "outside the layers". */
static void unscoped_names(void)
{
    graph_profile *g = decoder4();
    if (!g)
        return;
    for (int32_t o = 0; o < g->n_ops; o++) {
        char nm[64];
        snprintf(nm, sizeof nm, "n%d:%s", (int)o, g->ops[o].type);
        sw_free(g->ops[o].name);
        g->ops[o].name = sw_strdup(nm);
    }
    plan *p = NULL;
    if (!plan_with(g, "checkpoint-blocks", NULL, &p))
        IS_STR_HAS(p->notes, "checkpoint-blocks: 65 segments", "a block per forward op");
    plan_free(p);
    graph_free(g);
}

static const tap_test tests[] = {
    {"unscoped_names", unscoped_names},
    {"zero_offload_sgd", zero_offload_sgd},
    {"imported_names", imported_names},
    {"selective_refusal", selective_refusal},
    {"act_budget_refusal", act_budget_refusal},
    {"checkpoint_blocks_refusal", checkpoint_blocks_refusal},
    {"act_budget_densenet", act_budget_densenet},
    {"act_budget_07", act_budget_07},
    {"act_budget_04", act_budget_04},
    {"act_budget_0", act_budget_0},
    {"act_budget_bytes", act_budget_bytes},
    {"sac", sac},
    {"selective", selective},
    {"zero_offload", zero_offload},
    {"checkpoint_blocks", checkpoint_blocks},
    {"offload_no_prefetch", offload_no_prefetch},
    {"offload_prefetch", offload_prefetch},
    {"prefetch_is_faster", prefetch_is_faster},
};

int main(int argc, char **argv) { return tap_run(tests, SW_ARRAY_LEN(tests), argc, argv); }
