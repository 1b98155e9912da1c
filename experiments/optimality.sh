#!/bin/sh
# optimality.sh: how far from optimal is each planner? On small models at
# 0.6x-0.8x of the ideal peak: the lower bound no plan can beat (swapsim
# bound, docs/bounds.md), the exact optima of the integer programs for the
# profile's schedule (optimal-swap: swapping only; optimal-remat:
# Checkmate's recomputation program; each with its status and proven gap
# when the solver stops at its time limit; optimal-swap tried up to 150 ops),
# and every heuristic planner's
# iteration time, as a ratio to the bound and to each optimum.
#
#   experiments/optimality.sh [SWAPSIM]          (default bin/swapsim)
#
# Environment: OUT (default out/optimality), DATA (default data), FULL (1:
# longer solves and searches), OPT_TIME (the solvers' time limit in seconds;
# default 10, 120 with FULL=1; optimal-remat gets at least 60 s, which
# ResNet-32's LP relaxation needs: 2-14 s on 2 loaded cores).
# Writes OUT/optimality.csv (one row per model, budget and planner) and
# OUT/optimum.csv (one row per model and budget: bound and both optima).
set -eu
S=${1:-bin/swapsim}
OUT=${OUT:-out/optimality}
DATA=${DATA:-data}
FULL=${FULL:-}
if [ -n "$FULL" ]; then OPT_TIME=${OPT_TIME:-120}; GA="--set generations=200 --set population=32"
else OPT_TIME=${OPT_TIME:-10}; GA="--set generations=30 --set population=32"; fi
REMAT_TIME=$(( OPT_TIME < 60 ? 60 : OPT_TIME ))
mkdir -p "$OUT/p"
t0=$(date +%s)
CSV="$OUT/optimality.csv"
OPT="$OUT/optimum.csv"

json() {
    awk -v k="\"$1\":" '{ i = index($0, k); if (!i) { print ""; exit } s = substr($0, i + length(k));
        if (substr(s, 1, 1) == "\"") { s = substr(s, 2); sub(/".*/, "", s) } else sub(/[,}].*/, "", s);
        print s }'
}
# the solver's account in a plan's notes: "NAME: STATUS, objective X s, bound Y s, gap Z%"
note_status() { sed -n 's/.*optimal-[a-z]*: \([a-z ]*[a-z]\) *[,;(].*/\1/p' | tr ' ' '-'; }
note_gap() { sed -n 's/.*gap \([0-9.eE+-]*\)%.*/\1/p'; }
note_bound() { sed -n 's/.*, bound \([0-9.eE+-]*\) s.*/\1/p'; }
ratio() { awk -v t="$1" -v b="$2" 'BEGIN { if (t == "NaN" || b == "NaN" || b == "" || b <= 0) print "NaN"; else printf "%.4f", t / b }'; }

rm -f "$OUT"/p/*.json
"$S" model random --ops 8 --seed 11 --unit 1MiB -o "$OUT/p/random20.json"
"$S" model random --ops 15 --seed 4 --unit 1MiB -o "$OUT/p/random40.json"
"$S" model chain --layers 8 --batch 64 --hidden 2048 -o "$OUT/p/chain8.json"
"$S" model transformer --layers 1 --batch 8 -o "$OUT/p/transformer1.json"
"$S" model rnn --layers 1 --hidden 1024 --seq 3 --batch 64 -o "$OUT/p/rnn1x3.json"
log=$(ls "$DATA"/dtr-logs/*resnet32* 2>/dev/null | head -1 || true)
if [ -n "$log" ]; then
    "$S" import dtr "$log" -o "$OUT/p/resnet32.json" 2>/dev/null || true
fi

echo "model,budget,bound_s,optimal_swap_s,optimal_swap_status,optimal_swap_gap_pct,optimal_remat_s,optimal_remat_status,optimal_remat_gap_pct,optimal_remat_bound_s" >"$OPT"
echo "model,budget,planner,iteration_time_s,reruns,bound_s,ratio_bound,ratio_optimal_swap,ratio_optimal_remat,ratio_remat_bound" >"$CSV"
for f in "$OUT"/p/*.json; do
    m=$(basename "$f" .json)
    for b in 0.6x 0.7x 0.8x; do
        bj=$("$S" bound "$f" --memory $b --json 2>/dev/null || true)
        [ -n "$bj" ] || continue
        swap_b=$(echo "$bj" | json swap_bound_s)
        any_b=$(echo "$bj" | json any_bound_s)
        os=NaN; oss=failed; osg=NaN; osn=NaN; orm=NaN; ors=failed; org=NaN; orn=NaN; orb=NaN
        r=$("$S" run "$f" --planner optimal-swap --memory $b --time-budget "$OPT_TIME" --set max_ops=150 --json 2>/dev/null || true)
        if [ -n "$r" ]; then
            os=$(echo "$r" | json iteration_time_s); osn=$(echo "$r" | json reruns)
            n=$(echo "$r" | json notes)
            oss=$(echo "$n" | note_status); osg=$(echo "$n" | note_gap)
        fi
        r=$("$S" run "$f" --planner optimal-remat --memory $b --time-budget "$REMAT_TIME" --json 2>/dev/null || true)
        if [ -n "$r" ]; then
            orm=$(echo "$r" | json iteration_time_s); orn=$(echo "$r" | json reruns)
            n=$(echo "$r" | json notes)
            ors=$(echo "$n" | note_status); org=$(echo "$n" | note_gap); orb=$(echo "$n" | note_bound)
        fi
        echo "$m,$b,$any_b,$os,${oss:-unknown},${osg:-NaN},$orm,${ors:-unknown},${org:-NaN},${orb:-NaN}" >>"$OPT"
        for pl in optimal-swap optimal-remat swapadvisor hybrid odswap tflms vdnn dtr dtr-megengine sublinear; do
            case $pl in
            optimal-swap) t=$os; n=$osn ;;
            optimal-remat) t=$orm; n=$orn ;;
            *)
                extra=""
                case $pl in swapadvisor|hybrid) extra="$GA" ;; esac
                r=$("$S" run "$f" --planner $pl --memory $b $extra --json 2>/dev/null || true)
                if [ -z "$r" ]; then t=NaN; n=NaN
                else t=$(echo "$r" | json iteration_time_s); n=$(echo "$r" | json reruns); fi ;;
            esac
            bound=$swap_b
            [ "$n" != 0 ] && bound=$any_b
            # the recomputation program's proven bound holds for plans that only recompute
            rb=NaN
            case $pl in dtr|dtr-megengine|sublinear|optimal-remat) rb=$(ratio "$t" "${orb:-NaN}") ;; esac
            echo "$m,$b,$pl,$t,$n,$bound,$(ratio "$t" "$bound"),$(ratio "$t" "$os"),$(ratio "$t" "$orm"),$rb" >>"$CSV"
        done
    done
done
echo "[optimality] wrote $CSV and $OPT in $(($(date +%s) - t0)) s"
