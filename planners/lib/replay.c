/* replay.c: an event log replayed into the plan builder (replay.h). */
#include "replay.h"

int replay_record(plan_builder *b, const replay_ev *ev, size_t n, plan **out, sw_err *err)
{
    pb_resident_persistent(b);
    for (size_t i = 0; i < n; i++) {
        const replay_ev *v = &ev[i];
        switch (v->kind) {
        case REPLAY_RUN:
            pb_run(b, v->x);
            break;
        case REPLAY_RERUN:
            pb_rerun(b, v->x);
            break;
        case REPLAY_DROP:
        case REPLAY_DEATH_DROP:
            pb_drop(b, v->x);
            break;
        case REPLAY_SWAPIN:
            pb_swap_in(b, v->x);
            break;
        default:
            break; /* REPLAY_DEATH: the builder frees it after its last use / held_until */
        }
    }
    return pb_finish(b, out, err);
}
