/* verify.h: check that a plan is safe under every execution order its
   streams and edges allow (ARCHITECTURE.md), naming the first violation. */
#ifndef VERIFY_H
#define VERIFY_H

#include "plan.h"

/* Violation classes, for tests and reports. */
typedef enum {
    VERIFY_OK = 0,
    VERIFY_STRUCTURE,      /* malformed: bad ids, missing runs, schedule not topological */
    VERIFY_CAPACITY,       /* placements or pool exceed the budget */
    VERIFY_DEADLOCK,       /* edges and stream order form a cycle */
    VERIFY_NOT_RESIDENT,   /* an op's input is not resident when it runs */
    VERIFY_NOT_CURRENT,    /* an op's input is resident but holds an old version */
    VERIFY_UNORDERED_USE,  /* a use is not ordered after the copy that brings the tensor in */
    VERIFY_MEMORY_OVERLAP, /* two residencies share memory without an ordering edge */
    VERIFY_DIRTY_DROP,     /* a dirty tensor dropped while needed, neither copied nor recomputable */
    VERIFY_STALE_HOST,     /* a swap-in reads a stale host copy */
    VERIFY_PERSISTENT_SET, /* the persistent set differs between iteration start and end */
    VERIFY_LEAK,           /* a non-persistent tensor is still resident at iteration end */
    VERIFY_UNORDERED_RELEASE /* a release is not ordered after the tensor's last use */
} verify_class;

const char *verify_class_name(int c);

/* 0 if the plan is safe. Otherwise SW_EUNSAFE with err->msg naming the first
   violation (task ids, tensor, what was expected) and *cls (if not NULL)
   its class. SW_ENOMEM on allocation failure. */
int plan_verify(const plan *p, int *cls, sw_err *err);

#endif
