/* limits.h: the largest sizes, times and counts a profile or plan may declare,
   and the checked arithmetic for sums that can still reach them. */
#ifndef SW_LIMITS_H
#define SW_LIMITS_H

#include <stdint.h>

/* What a profile or plan may declare (docs/profile-format.md, "Limits").
   Anything beyond is refused at load with the JSON path. The bounds are far
   beyond any real GPU job, and small enough that every sum the planners and
   the simulator form over a valid input fits in an int64_t: a profile's
   storages and workspaces together stay below 2^62 bytes, so adding two such
   totals cannot overflow. */
#define SW_MAX_TENSOR_BYTES   ((int64_t)1 << 50)   /* one tensor, one workspace, a device: 1 PiB */
#define SW_MAX_TOTAL_BYTES    ((int64_t)1 << 62)   /* all storages + all workspaces of a profile */
#define SW_MAX_OP_SECONDS     86400.0              /* one op: one day */
#define SW_MAX_TOTAL_SECONDS  1e9                  /* all ops of an iteration together (~32 years) */
#define SW_MAX_BANDWIDTH      1e15                 /* bytes/s of any link: 1 PB/s */
#define SW_MIN_BANDWIDTH      1.0                  /* bytes/s */

/* a + b for a, b >= 0, saturating at INT64_MAX instead of overflowing. */
static inline int64_t sw_add_sat(int64_t a, int64_t b)
{
    return (b > 0 && a > INT64_MAX - b) ? INT64_MAX : a + b;
}

/* a + b, returning 0 and setting *sum, or -1 (no change) on overflow. */
static inline int sw_add_checked(int64_t a, int64_t b, int64_t *sum)
{
    if ((b > 0 && a > INT64_MAX - b) || (b < 0 && a < INT64_MIN - b))
        return -1;
    *sum = a + b;
    return 0;
}

#endif
