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
# ITERATIONS (measured iterations per replay, default 8), CANARY_ITERATIONS
# (iterations of each replay's canary pass, default replay's 3), DEVICE_INDEX (cuda),
# DESIGN (synthetic|paper; default synthetic on the CPU, paper with cuda),
# DEVICE (replay --device: the GPU used, a built-in name or the device file
# `swapsim calibrate-device` wrote; default: each profile's device).
#
# Measured times come from iterations without canary work; each replay then
# runs a separate canary pass (replay's default, 3 iterations) whose verdict
# and counts are in the CSV (canaries, canary_checks, canary_violations).
#
# DESIGN=synthetic (the CPU path): the paper replayed 20 GA individuals
# (Inception-4 and WResNet-152-10 at batch 32 and 64, 5 each) on a V100;
# this path's varied plans come from the `random` planner (random legal swap
# decisions within a budget), and `none` (everything resident) is added to
# each group. The models are small synthetic ones so that the CPU backend
# replays a plan in seconds: a chain of 8 layers and a random 10-op DAG,
# each at batch 32 and 64 (activations and op times grow with the batch).
# With BACKEND=cpu the results validate the executor and the timing model
# of copies and dependencies, not a GPU: every CSV row and the plot say so.
#
# DESIGN=paper (the GPU path): the paper's design. Inception-4 (inception
# --width INCEPTION_WIDTH, default 4) and WResNet-WRESNET_DEPTH-WRESNET_WIDTH
# (default 152 and 4: a width whose plans fit an 80 GB GPU and a 128 GB
# host; the paper's 10 needs more), each at batch 32 and 64
# (INCEPTION_BATCHES, WRESNET_BATCHES; an empty list skips the model), a
# budget of MEMORY (default 0.5x: half of each profile's ideal peak, heavy
# swapping, the least at which tflms and vdnn fit all four; or bytes,
# 16GiB). Per group: GA_PLANS (default 5) individuals of the GA's final
# population (swapadvisor --set dump_population, spread over its ranking:
# GENERATIONS generations of POPULATION, default 40 and 32, seed SEED,
# default 1, THREADS threads, default all cores), plus the odswap, tflms
# and vdnn plans. Profiles are generated on DEVICE_FILE when given (a
# device file of `swapsim calibrate-device`, passed as --device), else on
# DEVICE (default h100); with BACKEND=cuda and RECORD=1 (the default) every
# op is then timed on the GPU with `swapsim profile` (REPEATS runs each,
# default 5) and the plans are made from the recorded profile (where
# recording fails the generated one is used, and the summary says so).
# Replays run the ops as OPS (cuda; default library: cuBLAS and cuDNN where
# the attrs give shapes; kernel: calibrated kernels). OUT/environment.txt
# records the GPU, driver, CUDA version and date. APPEND=1 keeps the rows
# of an earlier run in OUT/fig11.csv (one group per run: WRESNET_BATCHES=
# INCEPTION_BATCHES=32 APPEND=1 ...), and the summary covers them all. With
# BACKEND=cpu the paper design runs on the CPU backend too, as a check of
# the path (small settings make it quick: INCEPTION_WIDTH=1
# INCEPTION_BATCHES=2 WRESNET_DEPTH=50 WRESNET_WIDTH=1 WRESNET_BATCHES=2
# MEMORY=0.8x).
#
# Writes OUT/fig11.csv (one row per plan; a GA individual's seed column is
# its number), OUT/summary.txt, and with gnuplot OUT/fig11.png and
# OUT/fig11.svg (plots/fig11.gp).
set -eu
S=${1:-bin/swapsim}
OUT=${OUT:-out/fig11}
BACKEND=${BACKEND:-cpu}
ITER=${ITERATIONS:-8}
DEV=${DEVICE_INDEX:-0}
DEVICE=${DEVICE:-}
if [ "$BACKEND" = cuda ]; then DESIGN=${DESIGN:-paper}; else DESIGN=${DESIGN:-synthetic}; fi
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

if [ "${APPEND:-0}" != 1 ] || [ ! -s "$CSV" ]; then
    echo "group,model,batch,planner,seed,budget_fraction,budget_bytes,swap_in_bytes,swap_out_bytes,simulated_s,measured_s,measured_min_s,measured_max_s,error,time_scale,canaries,canary_checks,overruns,timed,backend,canary_iterations,canary_violations,simulated_device" >"$CSV"
fi

n=0
# replay a plan and append its row:
#   replay_row GROUP MODEL BATCH PLANNER SEED FRACTION PLAN
replay_row() {
    group=$1 model=$2 batch=$3 planner=$4 seed=$5 frac=$6 plan=$7
    set -- --backend "$BACKEND" --device-index "$DEV" --iterations "$ITER" --warmup 2 --json
    if [ -n "$DEVICE" ]; then set -- "$@" --device "$DEVICE"; fi
    if [ "$BACKEND" = cuda ] && [ -n "${OPS:-}" ]; then set -- "$@" --ops "$OPS"; fi
    if [ -n "${CANARY_ITERATIONS:-}" ]; then set -- "$@" --canary-iterations "$CANARY_ITERATIONS"; fi
    if ! r=$("$S" replay "$plan" "$@" 2>"$OUT/replay.err"); then
        echo "fig11: $group $planner at ${frac}x: $(cat "$OUT/replay.err")" >&2
        # a result despite the failure (canaries caught something) makes a row;
        # a failure alone ({"ok":false,...} under --json) does not
        [ -n "$r" ] && [ -z "$(echo "$r" | json ok)" ] || return 0
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
}

# DESIGN=synthetic: the random individuals of a group: budget fraction,
# seed, evict probability, prefetch
INDIVIDUALS="0.5:1:0.5:0 0.6:2:0.3:1 0.7:3:0.5:0 0.8:4:0.2:1 0.9:5:0.4:0"

synthetic() {
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
                IFS=: read -r frac seed evict pre <<IND
$ind
IND
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
                replay_row "$group" "$model" "$batch" "$planner" "$seed" "$frac" "$plan"
            done
        done
    done
}

# DESIGN=paper (see the top of this file)
RECORDED=""
MEM=${MEMORY:-0.5x}
GA_N=${GA_PLANS:-5}
paper() {
    SEED=${SEED:-1}
    THREADS=${THREADS:-$(nproc 2>/dev/null || echo 1)}
    if [ -n "${DEVICE_FILE:-}" ]; then
        set -- --device "$DEVICE_FILE"
    else
        set -- --device "${DEVICE:-h100}"
    fi
    specs=""
    for b in ${INCEPTION_BATCHES-32 64}; do specs="$specs inception:$b"; done
    for b in ${WRESNET_BATCHES-32 64}; do specs="$specs wresnet:$b"; done
    for spec in $specs; do
        kind=${spec%%:*}
        batch=${spec#*:}
        if [ "$kind" = inception ]; then
            model="inception4-w${INCEPTION_WIDTH:-4}"
            "$S" model inception --width "${INCEPTION_WIDTH:-4}" --batch "$batch" "$@" \
                -o "$OUT/$model-b$batch.json"
        else
            model="wresnet${WRESNET_DEPTH:-152}-${WRESNET_WIDTH:-4}"
            "$S" model wresnet --depth "${WRESNET_DEPTH:-152}" --width "${WRESNET_WIDTH:-4}" \
                --batch "$batch" "$@" -o "$OUT/$model-b$batch.json"
        fi
        group="$model/b$batch"
        prof="$OUT/$model-b$batch.json"
        if [ "$BACKEND" = cuda ] && [ "${RECORD:-1}" = 1 ]; then
            if "$S" profile "$prof" --device-index "$DEV" --repeats "${REPEATS:-5}" \
                -o "$OUT/$model-b$batch.recorded.json" 2>"$OUT/plan.err"; then
                prof="$OUT/$model-b$batch.recorded.json"
                RECORDED="$RECORDED $group"
            else
                echo "fig11: $group: swapsim profile failed ($(cat "$OUT/plan.err")): the generated profile is used" >&2
            fi
        fi
        case "$MEM" in
        *x) frac=${MEM%x} ;;
        *)
            peak=$("$S" stats "$prof" --json | json peak_memory_bytes)
            bytes=$("$S" plan "$prof" --planner none --memory "$MEM" -o - 2>/dev/null |
                json memory_budget_bytes || true)
            frac=$(awk -v p="$peak" -v m="$bytes" 'BEGIN { if (p > 0 && m > 0) printf "%.3f", m / p }')
            ;;
        esac
        pop="$OUT/plans/$model-b$batch-ga"
        rm -rf "$pop"
        if ! "$S" plan "$prof" --planner swapadvisor --memory "$MEM" --seed "$SEED" \
            --threads "$THREADS" --set "generations=${GENERATIONS:-40}" \
            --set "population=${POPULATION:-32}" --set "dump_population=$pop" \
            --set "dump_count=$GA_N" -o "$OUT/plans/$model-b$batch-swapadvisor.plan.json" \
            2>"$OUT/plan.err"; then
            echo "fig11: $group swapadvisor at $MEM: $(cat "$OUT/plan.err") (skipped)" >&2
        else
            for plan in "$pop"/individual-*.plan.json; do
                [ -f "$plan" ] || continue
                k=${plan##*individual-}
                k=${k%.plan.json}
                replay_row "$group" "$model" "$batch" swapadvisor "$k" "$frac" "$plan"
            done
        fi
        for planner in odswap tflms vdnn; do
            plan="$OUT/plans/$model-b$batch-$planner.plan.json"
            if ! "$S" plan "$prof" --planner "$planner" --memory "$MEM" --seed "$SEED" -o "$plan" \
                2>"$OUT/plan.err"; then
                echo "fig11: $group $planner at $MEM: $(cat "$OUT/plan.err") (skipped)" >&2
                continue
            fi
            replay_row "$group" "$model" "$batch" "$planner" "$SEED" "$frac" "$plan"
        done
    done
}

if [ "$DESIGN" = paper ]; then
    if [ "$BACKEND" = cuda ]; then
        OPS=${OPS:-library}
        {
            echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
            if command -v nvidia-smi >/dev/null 2>&1; then
                echo "gpu: $(nvidia-smi --query-gpu=name --format=csv,noheader -i "$DEV" 2>/dev/null || true)"
                echo "driver: $(nvidia-smi --query-gpu=driver_version --format=csv,noheader -i "$DEV" 2>/dev/null || true)"
                echo "cuda (driver): $(nvidia-smi 2>/dev/null | sed -n 's/.*CUDA Version: *\([0-9.]*\).*/\1/p' | head -1)"
            fi
            if command -v nvcc >/dev/null 2>&1; then echo "nvcc: $(nvcc --version | tail -1)"; fi
            echo "device: ${DEVICE_FILE:-${DEVICE:-h100} (built-in)}"
            echo "ops: $OPS"
        } >"$OUT/environment.txt"
        gpu=$(sed -n 's/^gpu: //p' "$OUT/environment.txt")
        if [ -n "$gpu" ]; then label="cuda ($gpu)"; fi
    fi
    paper
else
    synthetic
fi
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
if [ "$DESIGN" = paper ]; then
    {
        echo "design: the paper's: per group $GA_N individuals of swapadvisor's final population, odswap, tflms, vdnn; budget $MEM"
        if [ -n "$RECORDED" ]; then
            echo "profiles recorded with swapsim profile on the GPU:$RECORDED"
        else
            echo "profiles: generated by the cost model (none recorded on a GPU)"
        fi
        echo "device: ${DEVICE_FILE:-${DEVICE:-h100} (built-in)}"
    } >>"$OUT/summary.txt"
fi
cat "$OUT/summary.txt"

if command -v gnuplot >/dev/null 2>&1; then
    lo=$(sed -n 's/^lo=\([^ ]*\).*/\1/p' "$OUT/range.txt")
    hi=$(sed -n 's/.*hi=\([^ ]*\)$/\1/p' "$OUT/range.txt")
    groups=$(awk -F, 'NR > 1 && !seen[$1]++ { printf "%s%s", sep, $1; sep = " " }' "$CSV")
    planners="random none"
    if [ "$DESIGN" = paper ]; then planners="swapadvisor odswap tflms vdnn"; fi
    gnuplot -e "csv='$CSV'; out='$OUT/fig11'; lo=$lo; hi=$hi; label='$label'; groups='$groups'; planners='$planners'" \
        "$HERE/../plots/fig11.gp"
    echo "fig11: wrote $CSV, $OUT/summary.txt, $OUT/fig11.png, $OUT/fig11.svg ($(($(date +%s) - t0)) s)"
else
    echo "fig11: wrote $CSV and $OUT/summary.txt (no gnuplot: no plot) ($(($(date +%s) - t0)) s)"
fi
rm -f "$OUT/range.txt"
