#!/bin/sh
# optimality.sh: how far from optimal can each planner be? Every planner's
# iteration time on small models at 0.5x-0.8x of the ideal peak, over the
# lower bound no plan can beat (swapsim bound, docs/bounds.md): the bound
# for plans that only swap where the plan re-runs no op, the bound for
# plans that also recompute where it does. A ratio of 1.00 is optimal; a
# ratio r says the plan is at most r times slower than the best possible
# one (the exact optima, integer programs, are not built yet: issue 16).
#
#   experiments/optimality.sh [SWAPSIM]          (default bin/swapsim)
#
# Environment: OUT (default out/optimality), DATA (default data).
# Writes OUT/optimality.csv.
set -eu
S=${1:-bin/swapsim}
OUT=${OUT:-out/optimality}
DATA=${DATA:-data}
mkdir -p "$OUT/p"
t0=$(date +%s)
CSV="$OUT/optimality.csv"

json() {
    awk -v k="\"$1\":" '{ i = index($0, k); if (!i) { print ""; exit } s = substr($0, i + length(k));
        if (substr(s, 1, 1) == "\"") { s = substr(s, 2); sub(/".*/, "", s) } else sub(/[,}].*/, "", s);
        print s }'
}

"$S" model random --ops 40 --seed 11 --unit 1MiB -o "$OUT/p/random40.json"
"$S" model random --ops 80 --seed 5 --unit 1MiB -o "$OUT/p/random80.json"
"$S" model chain --layers 12 --batch 64 --hidden 2048 -o "$OUT/p/chain12.json"
"$S" model transformer --layers 2 --batch 8 -o "$OUT/p/transformer2.json"
"$S" model rnn --layers 2 --hidden 1024 --seq 8 --batch 64 -o "$OUT/p/rnn2x8.json"
if [ -f "$DATA/dtr-logs/resnet32.log" ] || ls "$DATA"/dtr-logs/*resnet32* >/dev/null 2>&1; then
    log=$(ls "$DATA"/dtr-logs/*resnet32* | head -1)
    "$S" import dtr "$log" -o "$OUT/p/resnet32.json" 2>/dev/null || true
fi

echo "model,budget,planner,iteration_time_s,reruns,bound_s,ratio" >"$CSV"
for f in "$OUT"/p/*.json; do
    m=$(basename "$f" .json)
    for b in 0.5x 0.6x 0.7x 0.8x; do
        bj=$("$S" bound "$f" --memory $b --json 2>/dev/null || true)
        [ -n "$bj" ] || continue
        swap_b=$(echo "$bj" | json swap_bound_s)
        any_b=$(echo "$bj" | json any_bound_s)
        for pl in swapadvisor odswap tflms vdnn dtr dtr-megengine sublinear; do
            extra=""
            [ $pl = swapadvisor ] && extra="--set generations=30 --set population=32"
            r=$("$S" run "$f" --planner $pl --memory $b $extra --json 2>/dev/null || true)
            if [ -z "$r" ]; then
                echo "$m,$b,$pl,NaN,NaN,$swap_b,NaN" >>"$CSV"
                continue
            fi
            t=$(echo "$r" | json iteration_time_s)
            n=$(echo "$r" | json reruns)
            bound=$swap_b
            [ "$n" != 0 ] && bound=$any_b
            echo "$m,$b,$pl,$t,$n,$bound,$(awk -v t=$t -v b=$bound 'BEGIN { printf "%.4f", t / b }')" >>"$CSV"
        done
    done
done
echo "[optimality] wrote $CSV in $(($(date +%s) - t0)) s"
