/* plan.c: plan construction helpers. */
#include "plan.h"

#include <stdio.h>
#include <string.h>

static const char *kind_names[TASK__COUNT] = {"run", "rerun", "swap_in", "swap_out", "drop"};
static const char *stream_names[STREAM__COUNT] = {"compute", "h2d", "d2h"};

const char *plan_task_kind_name(int k) { return k >= 0 && k < TASK__COUNT ? kind_names[k] : "?"; }

int plan_task_kind_parse(const char *s)
{
    for (int i = 0; i < TASK__COUNT; i++)
        if (s && strcmp(s, kind_names[i]) == 0)
            return i;
    return -1;
}

const char *plan_stream_name(int s) { return s >= 0 && s < STREAM__COUNT ? stream_names[s] : "?"; }

plan *plan_new(graph_profile *g, int owns)
{
    plan *p = sw_calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->prof = g;
    p->owns_prof = owns;
    p->mem_kind = MEM_ADDRESS;
    snprintf(p->policy, sizeof p->policy, "first-fit");
    return p;
}

void plan_free(plan *p)
{
    if (!p)
        return;
    if (p->owns_prof)
        graph_free(p->prof);
    sw_free(p->classes);
    sw_free(p->resident);
    sw_free(p->tasks);
    sw_free(p->places);
    sw_free(p->ids);
    sw_free(p->planner);
    sw_free(p->options_json);
    sw_free(p->notes);
    sw_free(p->solver_status);
    sw_free(p);
}

static int put_ids(plan *p, const int32_t *ids, int n, uint32_t *at)
{
    *at = (uint32_t)p->n_ids;
    if (n <= 0)
        return 0;
    if (SW_GROW(p->ids, p->icap, p->n_ids + (size_t)n))
        return -1;
    memcpy(p->ids + p->n_ids, ids, (size_t)n * sizeof *ids);
    p->n_ids += (size_t)n;
    return 0;
}

int32_t plan_add_task(plan *p, int kind, int32_t op, int32_t tensor, const plan_place *places,
                      int n_places, const int32_t *frees, int n_free, const int32_t *deps,
                      int n_dep, const int32_t *pdeps, int n_pdep)
{
    if (SW_GROW(p->tasks, p->tcap, (size_t)p->n_tasks + 1))
        return -1;
    plan_task *t = &p->tasks[p->n_tasks];
    memset(t, 0, sizeof *t);
    t->kind = (uint8_t)kind;
    t->op = op;
    t->tensor = tensor;
    t->place_at = (uint32_t)p->n_places;
    if (n_places > 0) {
        if (SW_GROW(p->places, p->pcap, p->n_places + (size_t)n_places))
            return -1;
        memcpy(p->places + p->n_places, places, (size_t)n_places * sizeof *places);
        p->n_places += (size_t)n_places;
    }
    t->n_place = (uint32_t)(n_places > 0 ? n_places : 0);
    if (put_ids(p, frees, n_free, &t->free_at) || put_ids(p, deps, n_dep, &t->dep_at) ||
        put_ids(p, pdeps, n_pdep, &t->pdep_at))
        return -1;
    t->n_free = (uint32_t)(n_free > 0 ? n_free : 0);
    t->n_dep = (uint32_t)(n_dep > 0 ? n_dep : 0);
    t->n_pdep = (uint32_t)(n_pdep > 0 ? n_pdep : 0);
    return p->n_tasks++;
}

int plan_set_pool(plan *p, const int64_t *sizes, const int32_t *counts, int n)
{
    plan_class *c = n > 0 ? sw_malloc((size_t)n * sizeof *c) : NULL;
    if (n > 0 && !c)
        return SW_ENOMEM;
    int64_t base = 0;
    for (int i = 0; i < n; i++) {
        c[i].size = sizes[i];
        c[i].count = counts[i];
        c[i].base = base;
        base += sizes[i] * counts[i];
    }
    sw_free(p->classes);
    p->classes = c;
    p->n_classes = n;
    p->mem_kind = MEM_POOL;
    p->capacity = base;
    snprintf(p->policy, sizeof p->policy, "pool");
    return 0;
}

void plan_place_resolve(const plan *p, plan_place *pl)
{
    if (p->mem_kind == MEM_POOL && pl->cls >= 0 && pl->cls < p->n_classes)
        pl->offset = p->classes[pl->cls].base + (int64_t)pl->obj * p->classes[pl->cls].size;
}

int plan_set_meta(plan *p, const char *planner, uint64_t seed, const char *options_json)
{
    char *a = sw_strdup(planner ? planner : "unknown");
    char *b = sw_strdup(options_json ? options_json : "{}");
    if (!a || !b) {
        sw_free(a);
        sw_free(b);
        return SW_ENOMEM;
    }
    sw_free(p->planner);
    sw_free(p->options_json);
    p->planner = a;
    p->options_json = b;
    p->seed = seed;
    return 0;
}

int plan_set_notes(plan *p, const char *notes)
{
    char *n = notes ? sw_strdup(notes) : NULL;
    if (notes && !n)
        return SW_ENOMEM;
    sw_free(p->notes);
    p->notes = n;
    return 0;
}

int plan_set_solver(plan *p, const char *status, double objective_s, double bound_s, double gap)
{
    char *s = status ? sw_strdup(status) : NULL;
    if (status && !s)
        return SW_ENOMEM;
    sw_free(p->solver_status);
    p->solver_status = s;
    p->solver_objective_s = objective_s;
    p->solver_bound_s = bound_s;
    p->solver_gap = gap;
    return 0;
}

const char *plan_task_label(const plan *p, int32_t task, char *buf, size_t n)
{
    if (task < 0 || task >= p->n_tasks) {
        snprintf(buf, n, "task %d", task);
        return buf;
    }
    const plan_task *t = &p->tasks[task];
    const graph_profile *g = p->prof;
    if (t->kind <= TASK_RERUN && t->op >= 0 && t->op < g->n_ops)
        snprintf(buf, n, "task %d (%s op %d '%s')", task, plan_task_kind_name(t->kind), t->op,
                 g->ops[t->op].name);
    else if (t->tensor >= 0 && t->tensor < g->n_tensors)
        snprintf(buf, n, "task %d (%s tensor %d '%s')", task, plan_task_kind_name(t->kind),
                 t->tensor, g->tensors[t->tensor].name);
    else
        snprintf(buf, n, "task %d (%s)", task, plan_task_kind_name(t->kind));
    return buf;
}
