#!/bin/sh
# demo.sh: the one-minute end-to-end demonstration `make demo` runs:
# generate a model, plan it (ideal, none, SwapAdvisor, ODSwap, DTR), verify,
# simulate, write traces, print the results. Output goes to out/demo/.
set -eu
S=${1:-bin/swapsim}
OUT=${OUT:-out/demo}
mkdir -p "$OUT"

echo "== generate a seeded random training graph (branches, joins, parameters)"
"$S" model random --ops 400 --seed 1 --unit 4MiB -o "$OUT/random.json"
"$S" stats "$OUT/random.json"

echo
echo "== plan with unbounded memory (ideal), verify, simulate, trace"
"$S" plan "$OUT/random.json" --planner ideal -o "$OUT/ideal.plan.json"
"$S" verify "$OUT/ideal.plan.json"
"$S" simulate "$OUT/ideal.plan.json" --trace "$OUT/ideal.trace.json"

echo
echo "== everything resident within a budget of 110% of the ideal peak (none)"
"$S" run "$OUT/random.json" --planner none --memory 1.1x --trace "$OUT/none.trace.json" \
    -o "$OUT/none.plan.json" --json

echo
echo "== the same under 60% of the peak: 'none' cannot swap, so it refuses"
if "$S" run "$OUT/random.json" --planner none --memory 0.6x; then
    echo "unexpected: it fit" >&2
    exit 1
fi

echo
echo "== under 60% of the peak with planners that free memory (10 s of GA search)"
"$S" run "$OUT/random.json" --planner swapadvisor --memory 0.6x --time-budget 10s \
    --trace "$OUT/swapadvisor.trace.json" -o "$OUT/swapadvisor.plan.json"
"$S" verify "$OUT/swapadvisor.plan.json"
"$S" run "$OUT/random.json" --planner odswap --memory 0.6x
echo
echo "== rematerialisation (DTR): at 60% an op's tensors cannot be placed together, at 70% it runs"
if "$S" run "$OUT/random.json" --planner dtr --memory 0.6x; then
    echo "unexpected: dtr fit at 60%" >&2
    exit 1
fi
"$S" run "$OUT/random.json" --planner dtr --memory 0.7x

echo
echo "demo done: profiles, plans and Chrome traces (open in https://ui.perfetto.dev) in $OUT/"
