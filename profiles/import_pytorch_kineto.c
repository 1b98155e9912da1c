/* import_pytorch_kineto.c: the `pytorch` importer's Kineto side: the Chrome trace's
   CPU events, runtime launches, kernels and allocator events, their link to
   execution-trace nodes, and each operator's GPU time (time that kernels on
   several streams share split among them). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import_pytorch.h"
#include "opattr.h"
#include "optime.h"

/* ---- kineto ---- */

static int cmp_kev_ts(const void *a, const void *b)
{
    const kev *x = a, *y = b;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    if (x->dur != y->dur)
        return x->dur > y->dur ? -1 : 1; /* enclosing event first */
    return (x->idx > y->idx) - (x->idx < y->idx);
}

static int cmp_kmem(const void *a, const void *b)
{
    const kmem *x = a, *y = b;
    return (x->ts > y->ts) - (x->ts < y->ts);
}

static int cmp_kev_corr(const void *a, const void *b)
{
    const kev *x = a, *y = b;
    return (x->corr > y->corr) - (x->corr < y->corr);
}

static int num_field(jr *r, const json_value *o, const char *key, int required, double *out)
{
    const json_value *v = json_get(o, key);
    if (!v) {
        if (required)
            return jr_error(r, o, NULL, "missing \"%s\"", key);
        *out = 0;
        return 0;
    }
    if (v->type == JSON_NUMBER) {
        *out = v->u.num.d;
        return 0;
    }
    if (v->type == JSON_STRING && !sw_parse_f64(v->u.str, out))
        return 0;
    return jr_error(r, v, key, "expected a number");
}

int pt_kineto_load(const json_value *root, jr *r, kineto *k)
{
    const json_value *evs = root;
    if (root->type == JSON_OBJECT && jr_field(r, root, "traceEvents", JSON_ARRAY, 1, &evs))
        return SW_EINVAL;
    if (evs->type != JSON_ARRAY)
        return jr_error(r, evs, NULL, "expected a Chrome trace (an object with traceEvents)");
    const json_value *dp = root->type == JSON_OBJECT ? json_get(root, "deviceProperties") : NULL;
    if (dp && dp->type == JSON_ARRAY && dp->n > 0) {
        const json_value *nm = json_get(&dp->u.items[0], "name");
        if (nm && nm->type == JSON_STRING)
            k->device = nm->u.str;
    }
    size_t cap = evs->n + 1;
    k->cpu = sw_malloc(cap * sizeof *k->cpu);
    k->rt = sw_malloc(cap * sizeof *k->rt);
    k->gpu = sw_malloc(cap * sizeof *k->gpu);
    if (!k->cpu || !k->rt || !k->gpu)
        return sw_fail(r->err, SW_ENOMEM, "out of memory");
    size_t mcap = 0;
    size_t s0 = jr_push_key(r, "traceEvents");
    for (uint32_t i = 0; i < evs->n; i++) {
        const json_value *e = &evs->u.items[i];
        if (e->type != JSON_OBJECT) {
            jr_push_idx(r, i);
            return jr_error(r, e, NULL, "expected an event object");
        }
        const json_value *cat = json_get(e, "cat"), *ph = json_get(e, "ph");
        const json_value *nmv = json_get(e, "name");
        if (ph && ph->type == JSON_STRING && !strcmp(ph->u.str, "i") && nmv &&
            nmv->type == JSON_STRING && !strcmp(nmv->u.str, "[memory]")) {
            size_t s1 = jr_push_idx(r, i);
            kmem m;
            double total, bytes, dt = -1;
            const json_value *args = NULL;
            if (num_field(r, e, "ts", 1, &m.ts) ||
                jr_field(r, e, "args", JSON_OBJECT, 1, &args))
                return SW_EINVAL;
            size_t s2 = jr_push_key(r, "args");
            if (num_field(r, args, "Total Allocated", 1, &total) ||
                num_field(r, args, "Bytes", 1, &bytes) ||
                (json_get(args, "Device Type") && num_field(r, args, "Device Type", 1, &dt)))
                return SW_EINVAL;
            if (!(total >= 0) || total > 9e18 || !(fabs(bytes) < 9e18))
                return jr_error(r, args, "Total Allocated", "expected a byte count");
            jr_pop(r, s2);
            jr_pop(r, s1);
            m.total = (int64_t)total;
            m.bytes = (int64_t)bytes;
            m.dev_type = (int)dt;
            if (SW_GROW(k->mem, mcap, (size_t)k->nmem + 1))
                return sw_fail(r->err, SW_ENOMEM, "out of memory");
            k->mem[k->nmem++] = m;
            continue;
        }
        if (!cat || cat->type != JSON_STRING || !ph || ph->type != JSON_STRING ||
            strcmp(ph->u.str, "X"))
            continue;
        const char *c = cat->u.str;
        int kind = !strcmp(c, "cpu_op") || !strcmp(c, "user_annotation") ? 0
                   : !strcmp(c, "cuda_runtime") || !strcmp(c, "cuda_driver") ? 1
                   : !strcmp(c, "kernel") || !strcmp(c, "gpu_memcpy") || !strcmp(c, "gpu_memset")
                       ? 2
                       : -1;
        if (kind < 0)
            continue;
        size_t s1 = jr_push_idx(r, i);
        kev ev;
        memset(&ev, 0, sizeof ev);
        ev.idx = i;
        ev.node = -1;
        ev.corr = ev.rf = -1;
        double pid = 0, tid = 0;
        if (jr_str(r, e, "name", 1, NULL, &ev.name) || num_field(r, e, "ts", 1, &ev.ts) ||
            num_field(r, e, "dur", kind != 1, &ev.dur) || num_field(r, e, "pid", 0, &pid) ||
            num_field(r, e, "tid", 0, &tid))
            return SW_EINVAL;
        if (!(ev.dur >= 0))
            return jr_error(r, e, "dur", "expected a duration >= 0");
        ev.pid = (int64_t)pid;
        ev.tid = (int64_t)tid;
        const json_value *args = json_get(e, "args");
        if (args && args->type == JSON_OBJECT) {
            size_t s2 = jr_push_key(r, "args");
            double x;
            const json_value *cv = json_get(args, "correlation");
            if (cv) {
                if (num_field(r, args, "correlation", 1, &x))
                    return SW_EINVAL;
                ev.corr = (int64_t)x;
            }
            const json_value *rv = json_get(args, "Record function id");
            if (rv) {
                if (num_field(r, args, "Record function id", 1, &x))
                    return SW_EINVAL;
                ev.rf = (int64_t)x;
            }
            jr_pop(r, s2);
        }
        if (kind == 2 && ev.corr < 0)
            return jr_error(r, e, NULL, "%s '%s' has no args.correlation", c, ev.name);
        if (kind == 0)
            k->cpu[k->ncpu++] = ev;
        else if (kind == 1) {
            if (ev.corr >= 0)
                k->rt[k->nrt++] = ev;
        } else
            k->gpu[k->ngpu++] = ev;
        jr_pop(r, s1);
    }
    jr_pop(r, s0);
    qsort(k->cpu, (size_t)k->ncpu, sizeof *k->cpu, cmp_kev_ts);
    qsort(k->rt, (size_t)k->nrt, sizeof *k->rt, cmp_kev_corr);
    if (k->nmem)
        qsort(k->mem, (size_t)k->nmem, sizeof *k->mem, cmp_kmem);
    return 0;
}

void pt_kineto_free(kineto *k)
{
    sw_free(k->mem);
    sw_free(k->cpu);
    sw_free(k->rt);
    sw_free(k->gpu);
}

static const kev *rt_find(const kineto *k, int64_t corr)
{
    int32_t lo = 0, hi = k->nrt - 1;
    while (lo <= hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (k->rt[mid].corr == corr)
            return &k->rt[mid];
        if (k->rt[mid].corr < corr)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return NULL;
}

/* link Kineto CPU events to ET nodes of the iteration [lo, hi) (sorted
   indices); returns 0 or an error naming both files */
int pt_link(ctx *c, int32_t lo, int32_t hi, int64_t which, const char *etf, const char *kf,
            sw_err *err)
{
    et *t = &c->t;
    kineto *k = &c->k;
    /* Record function ids link the traces only when the execution trace
       observer ran in the profiler's session; without it PyTorch 2.x writes
       "Record function id": 0 on every event, which links nothing. */
    int has_rf = 0;
    for (int32_t i = 0; i < k->ncpu && !has_rf; i++)
        has_rf = k->cpu[i].rf > 0;
    if (has_rf) {
        hmap byrf = {0};
        for (int32_t i = lo; i < hi; i++)
            if (t->n[i].rf_id >= 0 && pt_hm_put(&byrf, t->n[i].rf_id, i)) {
                pt_hm_free(&byrf);
                return sw_fail(err, SW_ENOMEM, "out of memory");
            }
        int linked = 0;
        for (int32_t j = 0; j < k->ncpu; j++)
            if (k->cpu[j].rf >= 0 && (k->cpu[j].node = pt_hm_get(&byrf, k->cpu[j].rf)) >= 0)
                linked++;
        pt_hm_free(&byrf);
        if (!linked)
            return sw_fail(err, SW_EINVAL, "%s: no CPU operator's \"Record function id\" is an "
                           "rf_id of the execution trace %s: the two traces do not match", kf,
                           etf);
        return 0;
    }
    /* no record function ids: match the sequence of names */
    int32_t *seq = sw_malloc(((size_t)(hi - lo) + 1) * sizeof *seq);
    if (!seq)
        return sw_fail(err, SW_ENOMEM, "out of memory");
    int32_t n = 0;
    for (int32_t i = lo; i < hi; i++)
        if (!pt_starts(t->n[i].name, "[pytorch|profiler"))
            seq[n++] = i;
    if (n == 0) {
        sw_free(seq);
        return sw_fail(err, SW_EINVAL, "%s: the iteration has no operators", etf);
    }
    int32_t best_len = 0, best_at = -1, found = 0, pick = -1;
    for (int32_t o = 0; o + n <= k->ncpu; o++) {
        if (strcmp(k->cpu[o].name, t->n[seq[0]].name))
            continue;
        int32_t m = 0;
        while (m < n && !strcmp(k->cpu[o + m].name, t->n[seq[m]].name))
            m++;
        if (m > best_len) {
            best_len = m;
            best_at = o;
        }
        if (m == n) {
            found++;
            if (which == 0 || found == which)
                pick = o;
            o += n - 1;
        }
    }
    if (pick < 0) {
        int rc;
        if (best_at < 0)
            rc = sw_fail(err, SW_EINVAL, "%s does not match %s: no CPU operator of the Kineto "
                         "trace is '%s', the execution trace's first operator of the iteration "
                         "(the traces come from different runs or models)", kf, etf,
                         t->n[seq[0]].name);
        else if (found)
            rc = sw_fail(err, SW_EINVAL, "%s: --iteration %lld: only %d iterations of the "
                         "Kineto trace match %s", kf, (long long)which, found, etf);
        else
            rc = sw_fail(err, SW_EINVAL, "%s does not match %s: the longest run of the Kineto "
                         "trace's CPU operators (at $.traceEvents[%u]) agrees with the execution "
                         "trace's %d operators of the iteration for %d of them, then has '%s' "
                         "where node %lld is '%s' (the traces come from different runs or models)",
                         kf, etf, k->cpu[best_at].idx, n, best_len,
                         best_at + best_len < k->ncpu ? k->cpu[best_at + best_len].name : "(end)",
                         (long long)t->n[seq[best_len]].id, t->n[seq[best_len]].name);
        sw_free(seq);
        return rc;
    }
    for (int32_t m = 0; m < n; m++)
        k->cpu[pick + m].node = seq[m];
    sw_free(seq);
    return 0;
}

static int cmp_interval(const void *a, const void *b)
{
    const double *x = a, *y = b;
    if (x[0] != y[0])
        return (x[0] > y[0]) - (x[0] < y[0]);
    return (x[1] > y[1]) - (x[1] < y[1]);
}

static int cmp_double(const void *a, const void *b)
{
    const double *x = a, *y = b;
    return (*x > *y) - (*x < *y);
}

/* Charge each kernel its share of the GPU's busy time: where k kernels run at
   once (cuDNN's RNN on several streams, VGG's convolutions), each instant is
   split k ways. The operators' times then add up to the busy time, which is
   what one iteration takes, instead of the kernels' durations added up; the
   simulator runs one compute stream, so concurrency is folded into the
   operators' times (docs/pytorch-import.md). iv: n intervals [start, end,
   top operator], sorted by start. With F(x) = the integral up to x of
   1/k(t) over busy time, a kernel's share is F(end) - F(start). */
static int share_busy(et *t, const double (*iv)[3], int32_t n)
{
    double *pt = sw_malloc(((size_t)n * 2 + 1) * sizeof *pt);
    double *ends = sw_malloc(((size_t)n + 1) * sizeof *ends);
    double *f = sw_malloc(((size_t)n * 2 + 1) * sizeof *f);
    if (!pt || !ends || !f) {
        sw_free(pt);
        sw_free(ends);
        sw_free(f);
        return SW_ENOMEM;
    }
    for (int32_t i = 0; i < n; i++) {
        pt[2 * i] = iv[i][0];
        pt[2 * i + 1] = iv[i][1];
        ends[i] = iv[i][1];
    }
    qsort(pt, (size_t)n * 2, sizeof *pt, cmp_double);
    qsort(ends, (size_t)n, sizeof *ends, cmp_double);
    /* distinct boundary points; F at each; active = started - ended before
       the segment [pt[j], pt[j+1]) */
    int32_t np = 0;
    for (int32_t i = 0; i < 2 * n; i++)
        if (np == 0 || pt[i] != pt[np - 1])
            pt[np++] = pt[i];
    int32_t si = 0, ei = 0;
    double acc = 0;
    for (int32_t j = 0; j < np; j++) {
        f[j] = acc;
        while (si < n && iv[si][0] <= pt[j])
            si++;
        while (ei < n && ends[ei] <= pt[j])
            ei++;
        int32_t active = si - ei;
        if (j + 1 < np && active > 0)
            acc += (pt[j + 1] - pt[j]) / active;
    }
    for (int32_t i = 0; i < n; i++) {
        const double *a = bsearch(&iv[i][0], pt, (size_t)np, sizeof *pt, cmp_double);
        const double *b = bsearch(&iv[i][1], pt, (size_t)np, sizeof *pt, cmp_double);
        t->n[(int32_t)iv[i][2]].gpu_s += (f[b - pt] - f[a - pt]) * 1e-6;
    }
    sw_free(pt);
    sw_free(ends);
    sw_free(f);
    return 0;
}

/* charge every kernel launched inside the linked iteration to an operator,
   and measure the GPU's busy time and span over them */
int pt_charge_kernels(ctx *c, const char *kf, sw_err *err)
{
    kineto *k = &c->k;
    et *t = &c->t;
    double lo = 1e300, hi = -1e300;
    int32_t nl = 0;
    for (int32_t i = 0; i < k->ncpu; i++)
        if (k->cpu[i].node >= 0) {
            lo = SW_MIN(lo, k->cpu[i].ts);
            hi = SW_MAX(hi, k->cpu[i].ts + k->cpu[i].dur);
            nl++;
        }
    /* linked events, in start order: the innermost enclosing one is the last
       that starts before the launch and ends after it */
    kev **lk = sw_malloc(((size_t)nl + 1) * sizeof *lk);
    if (!lk)
        return sw_fail(err, SW_ENOMEM, "out of memory");
    int32_t m = 0;
    for (int32_t i = 0; i < k->ncpu; i++)
        if (k->cpu[i].node >= 0)
            lk[m++] = &k->cpu[i];
    /* charged kernels' intervals and operators: [start, end, top] */
    double (*iv)[3] = sw_malloc(((size_t)k->ngpu + 1) * sizeof *iv);
    int32_t niv = 0;
    if (!iv) {
        sw_free(lk);
        return sw_fail(err, SW_ENOMEM, "out of memory");
    }
    for (int32_t gi = 0; gi < k->ngpu; gi++) {
        const kev *gk = &k->gpu[gi];
        const kev *launch = rt_find(k, gk->corr);
        if (!launch || launch->ts < lo || launch->ts > hi)
            continue; /* another iteration */
        int thread_known = 0;
        const kev *in = NULL;
        int32_t a = 0, b = m - 1, last = -1;
        while (a <= b) {
            int32_t mid = a + (b - a) / 2;
            if (lk[mid]->ts <= launch->ts) {
                last = mid;
                a = mid + 1;
            } else
                b = mid - 1;
        }
        for (int32_t j = last; j >= 0; j--) {
            const kev *e = lk[j];
            if (e->pid != launch->pid || e->tid != launch->tid)
                continue;
            thread_known = 1;
            if (e->ts + e->dur >= launch->ts) {
                in = e;
                break;
            }
        }
        if (!thread_known) {
            for (int32_t j = 0; j < m && !thread_known; j++)
                thread_known = lk[j]->pid == launch->pid && lk[j]->tid == launch->tid;
            if (!thread_known)
                continue; /* a thread the execution trace does not record */
        }
        int32_t top = in ? t->n[in->node].top : -1;
        if (top < 0) {
            sw_free(lk);
            sw_free(iv);
            return sw_fail(err, SW_EINVAL, "%s: at $.traceEvents[%u]: %s '%.80s' (correlation "
                           "%lld) was launched by no operator of the execution trace%s%s%s", kf,
                           gk->idx, "kernel", gk->name, (long long)gk->corr,
                           in ? " (only inside '" : "", in ? t->n[in->node].name : "",
                           in ? "', an annotation)" : "");
        }
        iv[niv][0] = gk->ts;
        iv[niv][1] = gk->ts + gk->dur;
        iv[niv][2] = top;
        niv++;
    }
    sw_free(lk);
    qsort(iv, (size_t)niv, sizeof *iv, cmp_interval);
    double busy = 0, sum = 0, end = -1e300;
    for (int32_t i = 0; i < niv; i++) {
        sum += iv[i][1] - iv[i][0];
        if (iv[i][0] >= end)
            busy += iv[i][1] - iv[i][0];
        else if (iv[i][1] > end)
            busy += iv[i][1] - end;
        end = SW_MAX(end, iv[i][1]);
    }
    c->gpu_span_s = niv ? (end - iv[0][0]) * 1e-6 : 0;
    c->gpu_busy_s = busy * 1e-6;
    c->gpu_sum_s = sum * 1e-6;
    int rc = share_busy(t, iv, niv);
    sw_free(iv);
    return rc ? sw_fail(err, SW_ENOMEM, "out of memory") : 0;
}
