/* layout.h: a plan laid out for execution: the device arena exactly as the
   plan places it (pool objects or address ranges), the workspace reserve
   after it, one host buffer per swapped storage, and for every task the
   byte ranges it copies, reads, writes and releases (both backends). */
#ifndef VAL_LAYOUT_H
#define VAL_LAYOUT_H

#include "../sim/plan.h"
#include "backend.h"

/* A region a compute task touches, or that a task releases. */
typedef struct val_lacc {
    int32_t storage;
    int32_t mode;            /* VAL_R_* bits */
    int32_t ver_in, ver_out; /* version checked (VAL_R_CHECK) / written (VAL_R_FILL) */
    int64_t off, bytes;
    int32_t dangling;        /* 1: not resident at this point in planned order (a broken
                                plan); off is where it last lived */
} val_lacc;

typedef struct val_ltask {
    int64_t dev_off;         /* swap_in: destination; swap_out/drop: the residency released */
    int64_t host_off;        /* swap_in/swap_out: the storage's host buffer; else -1 */
    int64_t bytes;           /* swap_in/swap_out/drop: the storage's bytes */
    uint32_t acc_at, n_acc;  /* run/rerun: regions in val_layout.acc */
    int32_t dangling;        /* swap_out/drop of a storage not resident in planned order */
} val_ltask;

typedef struct val_layout {
    int64_t capacity;        /* the plan's arena */
    int64_t used;            /* highest byte any placement reaches (<= capacity): a budget
                                larger than the plan needs costs no memory */
    int64_t ws_off, ws_bytes;/* workspace reserve, after the used part of the arena */
    int64_t arena_bytes;     /* device bytes to allocate in all */
    int64_t host_bytes;      /* host block */
    int32_t n_tensors;
    int64_t *host_off;       /* per tensor id: its host buffer's offset, or -1 */
    int32_t n_tasks;
    val_ltask *task;
    val_lacc *acc;
    size_t n_acc, cap_acc;
    val_lacc *init;          /* storages resident at iteration start (version 0) */
    int32_t n_init;
    int32_t dangling;        /* accesses and releases of storages not resident */
} val_layout;

/* Lay out p. Errors (SW_EINVAL, naming the task and tensor): a placement
   outside the arena or its pool class, a run that does not place an
   output, a swap-in without a placement, a storage used but never placed.
   Broken plans that stay inside the arena are laid out (dangling accesses
   use the storage's last placement) so execution can show what happens.
   Free with val_layout_free. */
int val_layout_build(const plan *p, val_layout *L, sw_err *err);
void val_layout_free(val_layout *L);

#endif
