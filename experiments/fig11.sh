#!/bin/sh
# fig11.sh: the paper's Figure 11 (simulator accuracy): pick plans of
# several models, batch sizes and planners, replay each for real, and
# compare measured with simulated iteration time: the error range and
# whether the relative order of plans is kept within each model and batch.
#
#   experiments/fig11.sh [SWAPSIM]          (default bin/swapsim)
#   BACKEND=cuda experiments/fig11.sh       on a GPU (needs libswapsim_cuda.so)
#
# Environment: OUT (default out/fig11), BACKEND (cpu|cuda, default cpu),
# ITERATIONS (measured iterations per replay, default 8), DEVICE_INDEX (cuda),
# DEVICE (replay --device: the GPU used, a built-in name or the device file
# `swapsim calibrate-device` wrote; default: each profile's device).
#
# Measured times come from iterations without canary work; each replay then
# runs a separate canary pass (replay's default, 3 iterations) whose verdict
# and counts are in the CSV (canaries, canary_checks, canary_violations).
#
# The paper replayed 20 random GA individuals (Inception-4 and
# WResNet-152-10 at batch 32 and 64, 5 each) on a V100. This script does
# not take them from the GA: its varied plans come from the `random`
# planner (random legal swap decisions within a budget), and `none`
# (everything resident) is added to each group. The models are small synthetic ones so
# that the CPU backend replays a plan in seconds: a chain of 8 layers and a
# random 10-op DAG, each at batch 32 and 64 (activations and op times grow
# with the batch). With BACKEND=cpu the results validate the executor and
# the timing model of copies and dependencies, not a GPU: every CSV row and
# the plot say so.
#
# Writes OUT/fig11.csv (one row per plan), OUT/summary.txt, and with
# gnuplot OUT/fig11.png and OUT/fig11.svg (plots/fig11.gp).
set -eu
S=${1:-bin/swapsim}
OUT=${OUT:-out/fig11}
BACKEND=${BACKEND:-cpu}
ITER=${ITERATIONS:-8}
DEV=${DEVICE_INDEX:-0}
DEVICE=${DEVICE:-}
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT/plans"
CSV="$OUT/fig11.csv"
t0=$(date +%s)

label=$BACKEND
[ "$BACKEND" = cpu ] && label="cpu (CPU backend: not a GPU)"

# one value of a flat JSON object on one line: json FIELD < object
json() {
    awk -v k="\"$1\":" '{ i = index($0, k); if (!i) { print ""; exit } s = substr($0, i + length(k));
        if (substr(s, 1, 1) == "\"") { s = substr(s, 2); sub(/".*/, "", s) } else sub(/[,}].*/, "", s);
        print s }'
}

echo "group,model,batch,planner,seed,budget_fraction,budget_bytes,swap_in_bytes,swap_out_bytes,simulated_s,measured_s,measured_min_s,measured_max_s,error,time_scale,canaries,canary_checks,overruns,timed,backend,canary_iterations,canary_violations,simulated_device" >"$CSV"

# the random individuals of a group: budget fraction, seed, evict probability, prefetch
INDIVIDUALS="0.5:1:0.5:0 0.6:2:0.3:1 0.7:3:0.5:0 0.8:4:0.2:1 0.9:5:0.4:0"

n=0
for model in chain random; do
    for batch in 32 64; do
        prof="$OUT/$model-b$batch.json"
        if [ "$model" = chain ]; then
            "$S" model chain --layers 8 --batch $batch --hidden 1024 --param_bytes 256KiB \
                --activation_bytes $((batch * 32))KiB --op_time $((batch * 25))us -o "$prof"
        else
            "$S" model random --ops 10 --seed 4 --batch $batch --unit $((batch * 8))KiB \
                --param_prob 0.3 --op_time $((batch * 30))us -o "$prof"
        fi
        group="$model/b$batch"
        for ind in none:1:0:0 $INDIVIDUALS; do
            IFS=: read -r frac seed evict pre <<EOF
$ind
EOF
            if [ "$frac" = none ]; then
                planner=none
                frac=1.0
                set -- --planner none --memory 1.0x
            else
                planner=random
                set -- --planner random --memory ${frac}x --seed "$seed" --set "evict=$evict" \
                    --set "prefetch=$pre"
            fi
            plan="$OUT/plans/$model-b$batch-$planner-$frac-$seed.plan.json"
            if ! "$S" plan "$prof" "$@" -o "$plan" 2>"$OUT/plan.err"; then
                echo "fig11: $group $planner at ${frac}x: $(cat "$OUT/plan.err") (skipped)" >&2
                continue
            fi
            if ! r=$("$S" replay "$plan" --backend "$BACKEND" --device-index "$DEV" \
                ${DEVICE:+--device "$DEVICE"} --iterations "$ITER" --warmup 2 --json \
                2>"$OUT/replay.err"); then
                echo "fig11: $group $planner at ${frac}x: $(cat "$OUT/replay.err")" >&2
                [ -n "$r" ] || continue
            fi
            n=$((n + 1))
            printf '%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n' "$group" "$model" \
                "$batch" "$planner" "$seed" "$frac" "$(echo "$r" | json memory_budget_bytes)" \
                "$(echo "$r" | json swap_in_bytes)" "$(echo "$r" | json swap_out_bytes)" \
                "$(echo "$r" | json simulated_iteration_time_s)" \
                "$(echo "$r" | json measured_iteration_time_s)" "$(echo "$r" | json measured_min_s)" \
                "$(echo "$r" | json measured_max_s)" "$(echo "$r" | json error)" \
                "$(echo "$r" | json time_scale)" "$(echo "$r" | json canaries)" \
                "$(echo "$r" | json canary_checks)" "$(echo "$r" | json overruns)" \
                "$(echo "$r" | json timed)" "$BACKEND" "$(echo "$r" | json canary_iterations)" \
                "$(echo "$r" | json canary_violations)" "$(echo "$r" | json simulated_device)" >>"$CSV"
            printf 'fig11: %-10s %-6s %4sx  simulated %s s  measured %s s  error %s  canaries %s  (%ss)\n' \
                "$group" "$planner" "$frac" "$(echo "$r" | json simulated_iteration_time_s | cut -c1-8)" \
                "$(echo "$r" | json measured_iteration_time_s | cut -c1-8)" \
                "$(echo "$r" | json error | cut -c1-7)" "$(echo "$r" | json canaries)" \
                "$(($(date +%s) - t0))" >&2
        done
    done
done
rm -f "$OUT/plan.err" "$OUT/replay.err"

# error range, and the order of plans within each group: a plan keeps its
# place when its rank by measured time equals its rank by simulated time
# (the paper's "19 of 20"); pairs are concordant when both orders agree
awk -F, -v label="$label" 'NR > 1 {
        n++; g[n] = $1; sim[n] = $10; mea[n] = $11; err[n] = $14
        if (n == 1 || $14 < lo) lo = $14
        if (n == 1 || $14 > hi) hi = $14
        sum += ($14 < 0 ? -$14 : $14); fails += ($16 == "failed")
    }
    END {
        if (n == 0) { print "no plans replayed"; exit 1 }
        kept = 0; pairs = 0; conc = 0
        for (i = 1; i <= n; i++) {
            rs = 0; rm = 0
            for (j = 1; j <= n; j++) if (g[j] == g[i] && j != i) {
                rs += (sim[j] < sim[i]); rm += (mea[j] < mea[i])
                if (j > i) { pairs++; conc += ((sim[j] - sim[i]) * (mea[j] - mea[i]) > 0) }
            }
            kept += (rs == rm)
        }
        printf "backend: %s\n", label
        printf "plans replayed: %d (canaries failed on %d)\n", n, fails
        printf "error (measured / simulated - 1): from %+.2f%% to %+.2f%%, mean |error| %.2f%%\n", 100 * lo, 100 * hi, 100 * sum / n
        printf "relative order: %d of %d plans keep their rank within their group; %d of %d pairs ordered alike\n", kept, n, conc, pairs
        printf "paper (V100): real between 4%% slower and 12%% faster than simulated; 19 of 20 keep their order\n"
        printf "lo=%.6f hi=%.6f\n", lo, hi > "/dev/stderr"
    }' "$CSV" >"$OUT/summary.txt" 2>"$OUT/range.txt"
cat "$OUT/summary.txt"

if command -v gnuplot >/dev/null 2>&1; then
    lo=$(sed -n 's/^lo=\([^ ]*\).*/\1/p' "$OUT/range.txt")
    hi=$(sed -n 's/.*hi=\([^ ]*\)$/\1/p' "$OUT/range.txt")
    gnuplot -e "csv='$CSV'; out='$OUT/fig11'; lo=$lo; hi=$hi; label='$label'" "$HERE/../plots/fig11.gp"
    echo "fig11: wrote $CSV, $OUT/summary.txt, $OUT/fig11.png, $OUT/fig11.svg ($(($(date +%s) - t0)) s)"
else
    echo "fig11: wrote $CSV and $OUT/summary.txt (no gnuplot: no plot) ($(($(date +%s) - t0)) s)"
fi
rm -f "$OUT/range.txt"
