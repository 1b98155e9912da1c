/* import_pytorch.c: the `pytorch` importer: a PyTorch execution trace
   (ExecutionTraceObserver JSON, schemas 1.0.x and 1.1.x) plus, optionally,
   the matching Kineto / torch.profiler Chrome trace, gzip or plain.

   Operators are the top-level operators of one iteration of the execution
   trace: the outermost nodes that are not annotations (thread roots,
   "## forward ##", ProfilerStep#N, Optimizer.step#..., module records).
   Their tensor accesses are gathered from their whole subtree; storages come
   from the tensor tuples [tensor_id, storage_id, offset, numel, itemsize,
   device] (views share their storage; a storage id that reappears as the
   output of an operator that did not read it is a new allocation at a
   recycled address). Storages read before any operator makes them exist
   before the iteration (parameters, inputs, optimizer state, persistent
   gradients). GPU time of an operator is the sum of the kernels, copies and
   memsets launched under it: kernel -> CUDA runtime launch (args
   correlation) -> the innermost CPU operator whose interval holds the launch
   -> its execution-trace node (by "Record function id" = rf_id when the
   Kineto trace has it, else by matching the sequence of operator names of
   one iteration) -> the node's top-level operator. Without a Kineto trace
   the times are zero. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/json.h"
#include "import_pytorch.h"
#include "importers.h"
#include "opattr.h"
#include "optime.h"

/* ---- the importer ---- */

static const param_def pt_params[] = {
    {"iteration", PT_INT, "0", "which ProfilerStep#N iteration of the execution trace (N; 0: "
     "the last), and which of several matching iterations of the Kineto trace (0: the last)",
     NULL, 0, 1e9},
    {"batch", PT_INT, "1", "samples per iteration (the traces do not say)", NULL, 1, 1e9},
    {"times", PT_CHOICE, "trace", "where operator times come from: trace (the GPU time of the "
     "kernels the Kineto trace recorded; zero without one, with a warning) or model (the cost "
     "model's, from each operator's shapes in the execution trace, on the profile's device: for "
     "a recording made on the CPU or without Kineto)", "trace|model", 0, 0},
    {"partial", PT_BOOL, "false", "import an incomplete iteration (no backward pass or no "
     "optimizer step: a trace cut off, or an inference run) instead of refusing it; the "
     "profile's provenance notes say what is missing", NULL, 0, 0},
    PARAM_END};

static const dev_spec *device_of(const char *kname, const dev_spec *def, dev_spec *buf)
{
    static const struct {
        const char *pat, *dev;
    } map[] = {{"2080 Ti", "rtx2080ti"}, {"V100", "v100"},   {"TITAN V", "titanv"},
               {"Titan V", "titanv"},    {"A100", "a100"},   {"H100", "h100"}};
    for (size_t i = 0; kname && i < SW_ARRAY_LEN(map); i++)
        if (strstr(kname, map[i].pat)) {
            *buf = *dev_find(map[i].dev);
            return buf;
        }
    return def;
}

/* The execution trace of etf, parsed into d (its text in *text) and loaded
   into t, its nodes' containers and top-level operators marked. */
static int read_et(const char *etf, jr *r, json_doc **d, char **text, et *t, sw_err *err)
{
    size_t len = 0;
    const json_value *root;
    int rc;
    if ((rc = sw_read_file(etf, text, &len, err)) != 0)
        return rc;
    *d = json_doc_new();
    if (!*d)
        return sw_fail(err, SW_ENOMEM, "out of memory");
    if ((rc = json_parse(*d, *text, len, etf, 1, &root, err)) != 0)
        return rc;
    if (root->type != JSON_OBJECT)
        return jr_error(r, root, NULL, "expected an execution trace object with \"nodes\"");
    if ((rc = pt_et_load(root, r, t)) != 0)
        return rc;
    /* containers, operators, phases */
    for (int32_t i = 0; i < t->count; i++)
        if (t->n[i].parent >= 0)
            t->n[t->n[i].parent].nkids++;
    for (int32_t i = 0; i < t->count; i++) {
        etn *e = &t->n[i];
        if (e->tid < 0 && e->parent >= 0)
            e->tid = t->n[e->parent].tid;
        e->container = (int8_t)pt_is_container(t, i);
        if (e->container)
            continue;
        int32_t p = e->parent;
        e->top = p >= 0 && t->n[p].top >= 0 ? t->n[p].top : i;
    }
    return 0;
}

/* The iteration window [*lo, *hi): ProfilerStep#N nodes split the trace
   (*nsteps of them; none: the whole trace), and the phase of each of its
   top-level operators. */
static int iteration_window(et *t, int64_t which, const char *etf, int32_t *lo, int32_t *hi,
                            int32_t *nsteps, sw_err *err)
{
    int32_t chosen = -1;
    int64_t main_tid = -1;
    *lo = 0;
    *hi = t->count;
    *nsteps = 0;
    for (int32_t i = 0; i < t->count; i++)
        if (pt_starts(t->n[i].name, "ProfilerStep#")) {
            (*nsteps)++;
            long long num = atoll(t->n[i].name + 13);
            if (which == 0 || num == which)
                chosen = i;
        }
    if (*nsteps) {
        if (chosen < 0)
            return sw_fail(err, SW_EINVAL, "%s: --iteration %lld: no node ProfilerStep#%lld", etf,
                           (long long)which, (long long)which);
        *lo = chosen;
        for (int32_t i = chosen + 1; i < t->count; i++)
            if (pt_starts(t->n[i].name, "ProfilerStep#")) {
                *hi = i;
                break;
            }
    }
    for (int32_t i = *lo; i < *hi && main_tid < 0; i++)
        if (!t->n[i].container)
            main_tid = t->n[i].tid;
    for (int32_t i = *lo; i < *hi; i++) {
        etn *e = &t->n[i];
        e->in_iter = 1;
        if (e->top != i)
            continue;
        /* the autograd engine runs backward on its own thread on a GPU, and
           on the caller's thread on the CPU */
        e->phase = e->tid != main_tid || pt_starts(e->name, "autograd::engine::evaluate_function")
                       ? GP_BACKWARD
                       : GP_FORWARD;
        for (int32_t p = e->parent; p >= 0; p = t->n[p].parent)
            if (pt_starts(t->n[p].name, "Optimizer.step") ||
                !strcmp(t->n[p].name, "## optimizer ##"))
                e->phase = GP_UPDATE;
    }
    return 0;
}

/* The Kineto trace kf, parsed into d (its text in *text): its events linked to
   the iteration's nodes and their kernels charged to the operators; *use_dev:
   the GPU it names (in kdev), else dev. */
static int read_kineto(ctx *c, const char *kf, const char *etf, int32_t lo, int32_t hi,
                       int64_t which, json_doc **d, char **text, const dev_spec *dev,
                       dev_spec *kdev, const dev_spec **use_dev, sw_err *err)
{
    size_t len = 0;
    int rc;
    if ((rc = sw_read_file(kf, text, &len, err)) != 0)
        return rc;
    *d = json_doc_new();
    const json_value *kroot;
    if (!*d)
        return sw_fail(err, SW_ENOMEM, "out of memory");
    if ((rc = json_parse(*d, *text, len, kf, 1, &kroot, err)) != 0)
        return rc;
    jr kr;
    jr_init(&kr, kf, err);
    if ((rc = pt_kineto_load(kroot, &kr, &c->k)) != 0)
        return rc;
    if ((rc = pt_link(c, lo, hi, which, etf, kf, err)) != 0)
        return rc;
    if ((rc = pt_charge_kernels(c, kf, err)) != 0)
        return rc;
    *use_dev = device_of(c->k.device, dev, kdev);
    return 0;
}

/* The nodes of each operator of the iteration, in id order (threads may
   interleave), and the forward operators by autograd sequence number. */
typedef struct op_nodes {
    int32_t *first, *next, *tail; /* per top-level node: its first node, per node: the next */
    /* autograd sequence number -> the forward operator that has it, so a
       backward operator takes the name of its forward operator's module */
    hmap fwd_of_seq;
    /* the operator that made the autograd node: the last forward operator
       with its sequence number (one without a node, as batch norm's
       num_batches_tracked += 1, sees the number the next node will take) */
    hmap maker_of_seq;
} op_nodes;

static void op_nodes_free(op_nodes *on)
{
    sw_free(on->first);
    sw_free(on->next);
    sw_free(on->tail);
    pt_hm_free(&on->fwd_of_seq);
    pt_hm_free(&on->maker_of_seq);
}

static int op_nodes_build(op_nodes *on, const et *t, int32_t lo, int32_t hi, sw_err *err)
{
    memset(on, 0, sizeof *on);
    on->first = sw_malloc(((size_t)t->count + 1) * sizeof *on->first);
    on->next = sw_malloc(((size_t)t->count + 1) * sizeof *on->next);
    on->tail = sw_malloc(((size_t)t->count + 1) * sizeof *on->tail);
    if (!on->first || !on->next || !on->tail)
        return sw_fail(err, SW_ENOMEM, "out of memory");
    for (int32_t i = 0; i < t->count; i++)
        on->first[i] = on->next[i] = on->tail[i] = -1;
    for (int32_t i = lo; i < hi; i++) {
        int32_t top = t->n[i].top;
        if (top < 0)
            continue;
        if (on->first[top] < 0)
            on->first[top] = i;
        else
            on->next[on->tail[top]] = i;
        on->tail[top] = i;
    }
    for (int32_t i = lo; i < hi; i++) {
        const etn *e = &t->n[i];
        if (e->top < 0 || e->seq_id < 0 || t->n[e->top].phase != GP_FORWARD)
            continue;
        if ((pt_hm_get(&on->fwd_of_seq, e->seq_id) < 0 &&
             pt_hm_put(&on->fwd_of_seq, e->seq_id, e->top)) ||
            pt_hm_put(&on->maker_of_seq, e->seq_id, e->top))
            return sw_fail(err, SW_ENOMEM, "out of memory");
    }
    return 0;
}

/* The name of operator i: after the user's module where the trace has module
   records (layer3.2.conv1:aten::convolution, layer3.2.conv1:ConvolutionBackward0),
   else after the node (n1734:aten::convolution). */
static void op_name(const ctx *c, const op_nodes *on, int32_t i, const char *type, char *opn,
                    size_t size)
{
    const et *t = &c->t;
    const etn *e = &t->n[i];
    const char *mod = pt_module_of(t, i);
    for (int32_t j = on->first[i]; j >= 0 && !mod && e->phase == GP_BACKWARD; j = on->next[j])
        if (t->n[j].seq_id >= 0) {
            int32_t f = pt_hm_get(&on->fwd_of_seq, t->n[j].seq_id);
            if (f >= 0)
                mod = pt_module_of(t, f);
            break;
        }
    if (mod)
        snprintf(opn, size, "%.120s:%.60s", mod, type);
    else
        snprintf(opn, size, "n%lld:%.60s", (long long)e->id, type);
}

/* The profile op of top-level node i from the accesses gathered in c (rd, cr,
   mu): reads that are also mutations count once. */
static int add_op(ctx *c, const op_nodes *on, int32_t i, sw_err *err)
{
    et *t = &c->t;
    etn *e = &t->n[i];
    int32_t *rd = sw_malloc(((size_t)c->nrd + 1) * sizeof *rd);
    int32_t *cr = sw_malloc(((size_t)c->ncr + 1) * sizeof *cr);
    int32_t *mu = sw_malloc(((size_t)c->nmu + 1) * sizeof *mu);
    int nr = 0;
    if (!rd || !cr || !mu) {
        sw_free(rd);
        sw_free(cr);
        sw_free(mu);
        return sw_fail(err, SW_ENOMEM, "out of memory");
    }
    for (int k = 0; k < c->nrd; k++) {
        int dup = 0;
        for (int j = 0; j < c->nmu && !dup; j++)
            dup = c->mu[j] == c->rd[k];
        if (!dup)
            rd[nr++] = c->b[c->rd[k]].tensor;
    }
    for (int k = 0; k < c->ncr; k++)
        cr[k] = c->b[c->cr[k]].tensor;
    for (int k = 0; k < c->nmu; k++)
        mu[k] = c->b[c->mu[k]].tensor;
    const char *type = e->name;
    if (pt_starts(type, "autograd::engine::evaluate_function: "))
        type += strlen("autograd::engine::evaluate_function: ");
    char opn[192];
    op_name(c, on, i, type, opn, sizeof opn);
    int32_t op = graph_add_op(c->g, opn, type, e->gpu_s, e->phase, rd, nr, cr, c->ncr, mu,
                              c->nmu, 0);
    sw_free(rd);
    sw_free(cr);
    sw_free(mu);
    int32_t fop = -1;
    for (int32_t j = on->first[i]; j >= 0 && e->phase == GP_BACKWARD; j = on->next[j])
        if (t->n[j].seq_id >= 0) {
            int32_t f = pt_hm_get(&on->maker_of_seq, t->n[j].seq_id);
            fop = f >= 0 ? t->n[f].op : -1;
            break;
        }
    if (op < 0 || graph_op_attr(c->g, op, OA_ET_ID, (double)e->id) ||
        pt_shape_attrs(c, on->first, on->next, i, op, fop))
        return sw_fail(err, SW_ENOMEM, "out of memory");
    e->op = op;
    return 0;
}

/* The profile's operators: every top-level node of [lo, hi) with a tensor
   or a kernel; none is an error. */
static int add_ops(ctx *c, int32_t lo, int32_t hi, const char *etf, sw_err *err)
{
    et *t = &c->t;
    op_nodes on;
    int rc = op_nodes_build(&on, t, lo, hi, err);
    int32_t nops = 0;
    for (int32_t i = lo; i < hi && !rc; i++) {
        etn *e = &t->n[i];
        if (e->top != i)
            continue;
        c->nrd = c->ncr = c->nmu = 0;
        c->cur_op = c->g->n_ops;
        for (int32_t j = on.first[i]; j >= 0 && !rc; j = on.next[j])
            rc = pt_node_accesses(c, &t->n[j], e->phase);
        if (rc == SW_ENOMEM) /* node_accesses reports bad input only */
            rc = sw_fail(err, SW_ENOMEM, "%s: out of memory", etf);
        if (rc)
            break;
        if (c->nrd + c->ncr + c->nmu == 0 && e->gpu_s == 0)
            continue; /* no tensor, no kernel: nothing to simulate */
        if ((rc = add_op(c, &on, i, err)) != 0)
            break;
        nops++;
    }
    op_nodes_free(&on);
    if (rc)
        return rc;
    if (nops == 0)
        return sw_fail(err, SW_EINVAL, "%s: no operator with GPU tensors or kernels in the "
                       "iteration", etf);
    return 0;
}

/* A complete training iteration has a backward pass and an optimizer step;
   a trace cut short must not pass for a small model (unless partial). missing
   (size bytes) says what is missing, "" when nothing. */
static int check_complete(const ctx *c, int partial, const char *etf, char *missing,
                          size_t size, sw_err *err)
{
    int nph[GP__COUNT] = {0};
    for (int32_t o = 0; o < c->g->n_ops; o++)
        nph[c->g->ops[o].phase]++;
    missing[0] = 0;
    if (!nph[GP_BACKWARD] || !nph[GP_UPDATE])
        snprintf(missing, size, "%s%s%s", !nph[GP_BACKWARD] ? "no backward pass" : "",
                 !nph[GP_BACKWARD] && !nph[GP_UPDATE] ? " and " : "",
                 !nph[GP_UPDATE] ? "no optimizer step" : "");
    if (missing[0] && !partial)
        return sw_fail(err, SW_EINVAL, "%s: the iteration is incomplete: %d forward operators "
                       "but %s (a trace cut off, or not a training step); --partial imports it "
                       "anyway", etf, nph[GP_FORWARD], missing);
    return 0;
}

/* kinds of the storages that exist before the iteration */
static void storage_kinds(ctx *c)
{
    for (int32_t i = 0; i < c->nb; i++) {
        binding *b = &c->b[i];
        if (b->creator >= 0)
            continue;
        graph_tensor *x = &c->g->tensors[b->tensor];
        x->kind = (uint8_t)(b->mut_update ? (b->read_fwd ? GK_PARAMETER : GK_OPTIMIZER_STATE)
                            : b->mut_other ? GK_GRADIENT
                                           : GK_INPUT);
    }
}

/* What the provenance notes need beyond the context. */
typedef struct pt_notes {
    const char *missing;  /* what the iteration lacks, "" when complete */
    int by_model;         /* --times model */
    int32_t untimed;      /* operators the cost model could not time */
    int64_t alloc_peak;   /* the allocator's peak, -1: no memory events */
    int32_t n_ws;         /* operators given a workspace */
} pt_notes;

/* The profile's provenance: source, tool, files, device and notes. */
static int provenance(ctx *c, const char *etf, const char *kf, const dev_spec *use_dev,
                      const pt_notes *pn, sw_err *err)
{
    char files_s[2048];
    snprintf(files_s, sizeof files_s, "%s%s%s", etf, kf ? " " : "", kf ? kf : "");
    char dv[160];
    if (c->k.device)
        snprintf(dv, sizeof dv, "%s (from the Kineto trace; profile device %s)", c->k.device,
                 use_dev->name);
    else
        snprintf(dv, sizeof dv, "%s (assumed: the traces do not name the GPU)", use_dev->name);
    char notes[1400];
    size_t nn = 0;
    if (pn->missing[0])
        nn = (size_t)snprintf(notes, sizeof notes, "partial iteration: %s (imported with "
                              "--partial); ", pn->missing);
    if (!strcmp(c->dev, "cpu"))
        nn += (size_t)snprintf(notes + nn, sizeof notes - nn, "recorded on the CPU (no CUDA "
                               "tensor): the CPU's tensors are the model's, and there are no "
                               "GPU times; ");
    if (pn->by_model)
        nn += (size_t)snprintf(notes + nn, sizeof notes - nn, "operator times from the cost "
                               "model (--times model: built-in figures, device %s, fp32), %d "
                               "operators without the shapes it needs at 0 s; ", use_dev->name,
                               pn->untimed);
    if (pn->alloc_peak >= 0)
        nn += (size_t)snprintf(notes + nn, sizeof notes - nn, "the allocator's events (a trace "
                               "recorded with profile_memory=True): peak allocated %lld bytes "
                               "during the iteration; %d operators given the scratch memory "
                               "they allocated beyond their outputs as workspace; ",
                               (long long)pn->alloc_peak, pn->n_ws);
    else if (kf)
        nn += (size_t)snprintf(notes + nn, sizeof notes - nn, "no allocator events (record with "
                               "profile_memory=True): memory that no operator's tensors name "
                               "(library workspaces) is not in the profile; ");
    if (kf)
        nn += (size_t)snprintf(notes + nn, sizeof notes - nn, "%s = GPU time of the kernels, "
                 "copies and memsets each top-level operator launched, time that kernels on "
                 "several streams share split among them; kernels %.6f s in all, the GPU busy "
                 "%.6f s of a %.6f s span from the first kernel to the last (idle between "
                 "kernels %.6f s)", pn->by_model ? "recorded time" : "operator time",
                 c->gpu_sum_s, c->gpu_busy_s, c->gpu_span_s, c->gpu_span_s - c->gpu_busy_s);
    /* the GPU idle for most of the recorded iteration: the host (Python, the
       framework's dispatch, kernel launches) set the pace, which swapsim,
       timing GPU work only, does not model (docs/pytorch-import.md) */
    if (kf && nn < sizeof notes && c->gpu_span_s > 0 && c->gpu_busy_s < 0.5 * c->gpu_span_s)
        snprintf(notes + nn, sizeof notes - nn, "; host-bound: the GPU was idle %.0f%% of the "
                 "recorded span, so a measured iteration is longer than the ideal one (GPU "
                 "time only)", 100.0 * (1.0 - c->gpu_busy_s / c->gpu_span_s));
    else if (!pn->by_model)
        snprintf(notes + nn, sizeof notes - nn, "no Kineto trace: operator times are zero");
    if (graph_set_str(&c->g->prov.source, "recorded") ||
        graph_set_str(&c->g->prov.tool, kf ? "swapsim import pytorch (PyTorch execution trace + "
                                             "Kineto trace)"
                                           : "swapsim import pytorch (PyTorch execution trace)") ||
        graph_set_str(&c->g->prov.file, files_s) || graph_set_str(&c->g->prov.device, dv) ||
        graph_set_str(&c->g->prov.notes, notes))
        return sw_fail(err, SW_ENOMEM, "out of memory");
    return 0;
}

static void ctx_free(ctx *c)
{
    graph_free(c->g);
    pt_hm_free(&c->live);
    pt_hm_free(&c->bcast);
    sw_free(c->bc);
    sw_free(c->b);
    sw_free(c->rd);
    sw_free(c->cr);
    sw_free(c->mu);
    sw_free(c->tin);
    sw_free(c->tout);
    sw_free(c->t.n);
    pt_kineto_free(&c->k);
}

/* The profile from the traces in c (the execution trace loaded, the Kineto
   trace linked): its operators, kinds, memory, times and provenance. */
static int build_profile(ctx *c, const param_set *ps, const char *etf, const char *kf,
                         int32_t lo, int32_t hi, const dev_spec *use_dev, sw_err *err)
{
    const char *base = strrchr(etf, '/');
    base = base ? base + 1 : etf;
    char name[128];
    snprintf(name, sizeof name, "%.*s", (int)strcspn(base, "."), base);
    c->g = graph_new(name, use_dev);
    if (!c->g)
        return sw_fail(err, SW_ENOMEM, "out of memory");
    c->g->batch = params_int(ps, "batch");
    int rc;
    if ((rc = add_ops(c, lo, hi, etf, err)) != 0)
        return rc;
    char missing[160];
    if ((rc = check_complete(c, params_bool(ps, "partial"), etf, missing, sizeof missing, err)))
        return rc;
    storage_kinds(c);
    pt_notes pn = {missing, !strcmp(params_str(ps, "times"), "model"), 0, -1, 0};
    if (kf)
        pt_unnamed_memory(c, &pn.alloc_peak, &pn.n_ws);
    if ((rc = pt_op_times(c->g, pn.by_model, &pn.untimed)) != 0)
        return sw_fail(err, rc, "out of memory");
    if ((rc = provenance(c, etf, kf, use_dev, &pn, err)) != 0)
        return rc;
    if ((rc = graph_finish(c->g, err, NULL, NULL)) != 0)
        sw_err_prefix(err, "%s: ", etf);
    return rc;
}

static int import_pytorch(const char *const *files, int nfiles, const param_set *ps,
                          const dev_spec *dev, graph_profile **out, sw_err *err)
{
    const char *etf = files[0], *kf = nfiles > 1 ? files[1] : NULL;
    char *et_text = NULL, *k_text = NULL;
    json_doc *d1 = NULL, *d2 = NULL;
    ctx c;
    memset(&c, 0, sizeof c);
    jr r;
    jr_init(&r, etf, err);
    c.r = &r;
    int64_t which = params_int(ps, "iteration");
    int32_t lo, hi, nsteps;
    dev_spec kdev;
    const dev_spec *use_dev = dev;
    int rc = read_et(etf, &r, &d1, &et_text, &c.t, err);
    if (!rc)
        rc = iteration_window(&c.t, which, etf, &lo, &hi, &nsteps, err);
    if (!rc) {
        /* a recording made on the CPU has no CUDA tensor: its model is on the CPU */
        c.dev = pt_any_cuda(&c.t, lo, hi) ? "cuda" : "cpu";
        /* Kineto: times */
        if (kf)
            rc = read_kineto(&c, kf, etf, lo, hi, nsteps ? 0 : which, &d2, &k_text, dev, &kdev,
                             &use_dev, err);
    }
    if (!rc)
        rc = build_profile(&c, ps, etf, kf, lo, hi, use_dev, err);
    if (!rc) {
        *out = c.g;
        c.g = NULL;
    }
    ctx_free(&c);
    json_doc_free(d1);
    json_doc_free(d2);
    sw_free(et_text);
    sw_free(k_text);
    return rc;
}

const importer importer_pytorch = {
    "pytorch", "PyTorch execution trace (+ Kineto trace for GPU times), gzip or plain",
    "ET [KINETO]", 1, 2, pt_params, import_pytorch};
