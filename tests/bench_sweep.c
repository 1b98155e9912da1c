/* bench_sweep.c: `make bench` figures of swapsim sweep on the imported
   ResNet-50 (data/pytorch-traces/h100_resnet50_b64_*): every planner of
   'all' at 0.3x to 1.0x of the ideal peak by 0.1x with --fit, the user's
   question in one call, as a process from an empty cache (wall clock, one
   run; the searching planners' --time-budget 2s each is most of it), then
   the same call again, every cell answered from the runner's cache. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/sw.h"
#include "tap.h"

static int shell(const char *cmd)
{
    int rc = system(cmd);
    if (rc != 0)
        fprintf(stderr, "bench_sweep: failed (%d): %s\n", rc, cmd);
    return rc;
}

int main(void)
{
    const char *bin = getenv("SWAPSIM_BIN"), *data = getenv("SWAPSIM_DATA");
    if (!bin) {
        printf("# bench_sweep: SWAPSIM_BIN not set (run through make bench)\n");
        return 0;
    }
    if (!data)
        data = "data";
    char et[1024], tmp[64], cmd[4096];
    snprintf(et, sizeof et, "%s/pytorch-traces/h100_resnet50_b64_et.json.gz", data);
    if (access(et, R_OK) != 0) {
        printf("# bench_sweep: %s is absent: skipped\n", et);
        return 0;
    }
    snprintf(tmp, sizeof tmp, "/tmp/swapsim-bench-sweep-%d", (int)getpid());
    snprintf(cmd, sizeof cmd, "mkdir -p %s && %s import pytorch %s "
             "%s/pytorch-traces/h100_resnet50_b64_kineto.json.gz --batch 64 -o %s/r50.json",
             tmp, bin, et, data, tmp);
    if (shell(cmd))
        return 1;
    snprintf(cmd, sizeof cmd, "cd %s && %s sweep r50.json --planner all --memory 0.3x:1.0x:0.1x "
             "--fit --time-budget 2s --cache cache --out sweep > table.txt", tmp, bin);
    double t0 = sw_now();
    int rc = shell(cmd);
    double cold = sw_now() - t0;
    t0 = sw_now();
    rc = rc ? rc : shell(cmd);
    double warm = sw_now() - t0;
    if (!rc) {
        printf("# swapsim sweep r50.json --planner all --memory 0.3x:1.0x:0.1x --fit "
               "--time-budget 2s (imported ResNet-50, batch 64, H100), %d cores\n",
               (int)sysconf(_SC_NPROCESSORS_ONLN));
        printf("bench: sweep_resnet50_all_0.3-1.0x_fit_s %.1f s (empty cache)\n", cold);
        printf("bench: sweep_resnet50_all_0.3-1.0x_fit_cached_s %.2f s (every cell cached)\n",
               warm);
    }
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmp);
    if (system(cmd) != 0)
        printf("# could not remove %s\n", tmp);
    return rc ? 1 : 0;
}
