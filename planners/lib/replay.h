/* replay.h: a planner's recorded run (an event log of runs, reruns, drops
   and swap-ins) replayed into the plan builder: what the DTR runtime
   (dtr_engine.c) and sublinear.c share. */
#ifndef PLANNERS_REPLAY_H
#define PLANNERS_REPLAY_H

#include "../../sim/builder.h"

/* What an event records. */
enum {
    REPLAY_RUN,        /* op x runs */
    REPLAY_RERUN,      /* op x runs again (rematerialisation) */
    REPLAY_DROP,       /* storage x leaves the GPU (eviction) */
    REPLAY_DEATH,      /* storage x dies: nothing to record (the builder frees it after
                          its last use) */
    REPLAY_DEATH_DROP, /* storage x dies and is dropped explicitly (it was placed again) */
    REPLAY_SWAPIN      /* storage x comes back from the host */
};

typedef struct replay_ev {
    uint8_t kind; /* REPLAY_* */
    int32_t x;    /* the op (run, rerun) or the storage (the others) */
} replay_ev;

/* Record on b (fresh) the persistent storages resident, then ev[0..n), and
   finish the plan (pb_finish: *out, its errors). b stays the caller's. */
int replay_record(plan_builder *b, const replay_ev *ev, size_t n, plan **out, sw_err *err);

#endif
