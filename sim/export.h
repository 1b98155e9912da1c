/* export.h: a plan of a profile imported from a PyTorch trace, turned into
   a per-activation policy that tools/apply_plan.py applies to the model
   (keep, offload to host with a prefetch point, recompute a module region);
   docs/apply.md. */
#ifndef EXPORT_H
#define EXPORT_H

#include <stdint.h>
#include "plan.h"
#include "simulate.h"

typedef enum { EXP_KEEP, EXP_OFFLOAD, EXP_RECOMPUTE } export_decision;

/* What the export kept of the plan, in bytes of saved activations (storages
   a forward op creates, or the batch, that a backward op reads) at the
   forward/backward boundary: the first backward operator. */
typedef struct export_summary {
    int32_t n_saved;              /* saved activations */
    int32_t n_keep, n_offload, n_recompute; /* the policy's decisions */
    int32_t n_regions;            /* module regions checkpointed */
    int32_t n_unexpressed;        /* lines in the policy's "unexpressed" */
    int64_t saved_bytes;          /* all saved activations */
    int64_t plan_resident_bytes;  /* of them, resident in the plan at the boundary */
    int64_t policy_resident_bytes;/* held on the device under the policy there */
    int64_t plan_saved_bytes;     /* saved_bytes - plan_resident_bytes */
    int64_t policy_saved_bytes;   /* saved_bytes - policy_resident_bytes */
    int64_t surviving_bytes;      /* off the device there in both the plan and the policy */
    int64_t rounding_bytes;       /* saved activations whose residency there differs */
    int32_t n_reordered;          /* forward and backward operators the plan runs at another
                                     place than the recorded order (PyTorch's): where not 0,
                                     step_rounding_bytes does not bound the difference */
    int64_t step_rounding_bytes;  /* rounding_bytes plus the largest offloaded storage or
                                     recomputed region, plus what the policy keeps that the
                                     plan moves in the backward pass, plus the most bytes one
                                     backward operator reads: how far the bytes held at a backward
                                     operator may stray from the plan's (a fetch lands one
                                     module early or late; a region comes back whole) */
} export_summary;

/* Append the policy of plan p as one JSON object (docs/apply.md) to out and
   fill *sum (may be NULL); simulated (may be NULL) is the simulator's run of
   the plan, copied into the policy for tools/apply_plan.py --measure.
   Decisions that cannot be expressed are listed in the policy's
   "unexpressed" array, one line each, and appended to lines (may be NULL),
   each ending in a newline. Returns 0; SW_EINVAL when the plan's profile
   has no backward operator (no activation is saved for a backward pass),
   with a message in err; SW_ENOMEM. */
int export_pytorch(const plan *p, const sim_result *simulated, sw_buf *out, sw_buf *lines,
                   export_summary *sum, sw_err *err);

const char *export_decision_name(int d);

#endif
