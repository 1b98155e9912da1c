#!/bin/sh
# megengine.sh: MegEngine's DTR experiments (its engineering write-up of DTR
# in MegEngine v1.4, /work/shared/spec/dtr-and-zico.md; docs/planners.md)
# with swapsim's planners, on an RTX 2080 Ti (11 GB):
#   1. the largest batch that trains without memory saving (`none`) and with
#      dtr-megengine, for ResNet-50, ShuffleNet v2 and ResNet-1202 (they
#      report more than 3x, and ResNet-1202 at batch 100);
#   2. dtr-megengine against static sublinear checkpointing (`sublinear`,
#      Chen et al.) at equal memory and batch (they report equal time per
#      step);
#   3. peak memory with a dynamic allocator against what a static plan
#      needs, ResNet-50 at batch 400 (they report 9595 MB dynamic vs 8549 MB
#      static);
#   4. swapping against recomputing one activation of ResNet-50 (they
#      report swapping about 100x slower, at about 3 GB/s per GPU when 8
#      GPUs share PCIe).
#
#   experiments/megengine.sh [SWAPSIM]          (default bin/swapsim)
#
# Environment: OUT (default out/megengine). Writes OUT/maxbatch.csv,
# OUT/vs_sublinear.csv, OUT/allocation.csv, OUT/swap_vs_recompute_3GBps.csv,
# OUT/swap_vs_recompute_device.csv (swapsim tradeoff) and OUT/summary.md.
set -eu
S=${1:-bin/swapsim}
OUT=${OUT:-out/megengine}
mkdir -p "$OUT/p"
t0=$(date +%s)
DEV=rtx2080ti
MEM=11GiB

# one value of a flat JSON object on one line: json FIELD < object
json() {
    awk -v k="\"$1\":" '{ i = index($0, k); if (!i) { print ""; exit } s = substr($0, i + length(k));
        if (substr(s, 1, 1) == "\"") { s = substr(s, 2); sub(/".*/, "", s) } else sub(/[,}].*/, "", s);
        print s }'
}

# fits MODEL-ARGS BATCH PLANNER: 0 if a plan within 11 GiB exists
fits() {
    f="$OUT/p/probe.json"
    "$S" model $1 --batch "$2" --device $DEV -o "$f" >/dev/null 2>&1 || return 1
    "$S" run "$f" --planner "$3" --memory $MEM >/dev/null 2>&1
}

# maxbatch MODEL-ARGS PLANNER: the largest batch that fits (doubling, then bisection)
maxbatch() {
    lo=0
    hi=1
    while fits "$1" $hi "$2"; do
        lo=$hi
        hi=$((hi * 2))
        [ $hi -gt 8192 ] && break
    done
    while [ $((hi - lo)) -gt 1 ]; do
        mid=$(((lo + hi) / 2))
        if fits "$1" $mid "$2"; then lo=$mid; else hi=$mid; fi
    done
    echo $lo
}

echo "model,none,dtr_megengine,ratio" >"$OUT/maxbatch.csv"
for m in "resnet50:resnet --depth 50" "shufflenet:shufflenet" "resnet1202:resnet --depth 1202"; do
    name=${m%%:*}
    args=${m#*:}
    a=$(maxbatch "$args" none)
    b=$(maxbatch "$args" dtr-megengine)
    echo "$name,$a,$b,$(awk -v a=$a -v b=$b 'BEGIN { printf "%.2f", a ? b / a : 0 }')" >>"$OUT/maxbatch.csv"
done

# dtr-megengine vs sublinear (both modes) at equal memory, at 2x and 3x the
# largest batch that fits without saving
echo "model,batch,planner,iteration_time_s,normalized_throughput,peak_bytes" >"$OUT/vs_sublinear.csv"
nb=$(awk -F, '$1 == "resnet50" { print $2 }' "$OUT/maxbatch.csv")
for k in 2 3; do
    bs=$((nb * k))
    f="$OUT/p/r50_$bs.json"
    "$S" model resnet --depth 50 --batch $bs --device $DEV -o "$f"
    for pl in dtr-megengine "sublinear --set mode=budget" "sublinear --set mode=sqrt"; do
        label=$(echo "$pl" | sed 's/ --set mode=/:/')
        r=$("$S" run "$f" --planner $pl --memory $MEM --json 2>/dev/null) || r=
        if [ -n "$r" ]; then
            echo "resnet50,$bs,$label,$(echo "$r" | json iteration_time_s),$(echo "$r" | json normalized_throughput),$(echo "$r" | json peak_memory_bytes)" >>"$OUT/vs_sublinear.csv"
        else
            echo "resnet50,$bs,$label,NaN,NaN,NaN" >>"$OUT/vs_sublinear.csv"
        fi
    done
done

# ResNet-50 at batch 400 (no budget: 64 GiB): the arena that placing each
# tensor as it is made (first fit or best fit, in program order: a dynamic
# allocator) needs, against the peak of the bytes in use, which an offline
# (static) placement can reach at best
echo "model,batch,planner,allocator,arena_gib,peak_in_use_gib,ratio" >"$OUT/allocation.csv"
f="$OUT/p/r50_400.json"
"$S" model resnet --depth 50 --batch 400 --device $DEV -o "$f"
for al in first-fit best-fit; do
    r=$("$S" run "$f" --planner none --memory 64GiB --allow-oversubscribe --set allocator=$al \
        --json 2>/dev/null) || r=
    if [ -n "$r" ]; then
        arena=$(echo "$r" | json reserved_memory_bytes)
        peak=$(echo "$r" | json peak_memory_bytes)
        echo "resnet50,400,none,$al,$(awk -v a=$arena -v p=$peak 'BEGIN { printf "%.3f,%.3f,%.3f", a / 2^30, p / 2^30, a / p }')" >>"$OUT/allocation.csv"
    fi
done

# and DTR's own allocations at batch 300 within 11 GiB (evictions and
# regenerations in between)
f="$OUT/p/r50_300.json"
"$S" model resnet --depth 50 --batch 300 --device $DEV -o "$f"
for al in first-fit best-fit; do
    r=$("$S" run "$f" --planner dtr-megengine --memory $MEM --set allocator=$al --json 2>/dev/null) || r=
    if [ -n "$r" ]; then
        arena=$(echo "$r" | json reserved_memory_bytes)
        peak=$(echo "$r" | json peak_memory_bytes)
        echo "resnet50,300,dtr-megengine,$al,$(awk -v a=$arena -v p=$peak 'BEGIN { printf "%.3f,%.3f,%.3f", a / 2^30, p / 2^30, a / p }')" >>"$OUT/allocation.csv"
    fi
done

# swapping vs recomputing each activation of ResNet-50 (batch 64): the
# copy time at 3 GB/s (8 GPUs sharing PCIe) and at the device's own rate,
# over the producing op's compute time
f="$OUT/p/r50_64.json"
"$S" model resnet --depth 50 --batch 64 --device $DEV -o "$f"
"$S" tradeoff "$f" --rate 3GB/s --csv >"$OUT/swap_vs_recompute_3GBps.csv"
"$S" tradeoff "$f" --csv >"$OUT/swap_vs_recompute_device.csv"

{
    echo "Largest batch within 11 GiB on the RTX 2080 Ti:"
    echo
    echo "| model | none | dtr-megengine | ratio |"
    echo "|---|---:|---:|---:|"
    tail -n +2 "$OUT/maxbatch.csv" | awk -F, '{ printf "| %s | %s | %s | %sx |\n", $1, $2, $3, $4 }'
} >"$OUT/summary.md"
echo "[megengine] wrote $OUT/ in $(($(date +%s) - t0)) s"
