#!/bin/bash
# refactor-digests.sh: the check that a refactor changed no result.
# Usage: tools/refactor-digests.sh SWAPSIM_BIN REPO_DIR OUTDIR
# Runs about 350 deterministic commands (plans of every planner on eight
# profiles, generated and imported, at 0.5x and 0.8x; simulate, stats, bound,
# tradeoff; table1, calibrate, dtr-parity; serve, colocate; three experiment
# grids) and writes OUTDIR/digests.txt, one line per command: a digest of
# its outputs with measured times masked. Run it with the binary before and
# after a change, from the same REPO_DIR (imported profiles record their
# trace's path), and diff the two files. Searches are bounded by generations
# or solver nodes; rows of the grids' searching planners are left out.
# Needs python3.
set -u
S=$(readlink -f "$1"); R=$(readlink -f "$2"); O=$3
rm -rf "$O"; mkdir -p "$O/p"; O=$(readlink -f "$O"); cd "$O"
D=$R/data
dig() { # name, files...
  local n=$1; shift
  echo "$n $(cat "$@" 2>/dev/null | sed -E 's/"(seconds|wall_s|planning_seconds|elapsed[a-z_]*|time_s|plan_seconds|solve_seconds|arena_seconds)": *[0-9.e+-]+/"\1":X/g' | sha256sum | cut -c1-16)" >> digests.txt
}
run() { # name, cmd...
  local n=$1; shift
  "$@" > "p/$n.out" 2> "p/$n.err"; echo "rc=$?" >> "p/$n.out"
}
# profiles
$S model chain --layers 6 -o p/chain.json 2>/dev/null
$S model random --ops 12 --seed 3 -o p/random.json 2>/dev/null
$S model resnet --depth 18 --batch 16 -o p/resnet.json 2>/dev/null
$S model rnn --layers 2 --hidden 1024 --batch 32 --seq 8 -o p/rnn.json 2>/dev/null
$S model gpt --layers 2 --hidden 256 --heads 4 --seq 128 --batch 4 -o p/gpt.json 2>/dev/null
$S model decoder --size 125m --seq 256 --batch 2 -o p/decoder.json 2>/dev/null
T=$D/pytorch-traces
$S import pytorch $T/h100_resnet50_b64_et.json.gz $T/h100_resnet50_b64_kineto.json.gz -o p/imp_resnet.json > p/imp_resnet.log 2>&1
$S import pytorch $T/h100_lstm2x1024_b64s128_et.json.gz $T/h100_lstm2x1024_b64s128_kineto.json.gz -o p/imp_lstm.json > p/imp_lstm.log 2>&1
dig import:resnet p/imp_resnet.log; dig import:lstm p/imp_lstm.log
PROFILES="chain random resnet rnn gpt decoder imp_resnet imp_lstm"
for p in $PROFILES; do dig "profile:$p" p/$p.json; run stats_$p $S stats p/$p.json; dig "stats:$p" p/stats_$p.out; \
  run bound_$p $S bound p/$p.json --memory 0.6x; dig "bound:$p" p/bound_$p.out; \
  run trade_$p $S tradeoff p/$p.json; dig "tradeoff:$p" p/trade_$p.out; done
PLANNERS="ideal none dtr dtr-megengine odswap tflms vdnn sublinear checkpoint-blocks offload-activations zero-offload selective sac random"
for p in $PROFILES; do for m in 0.5x 0.8x; do
  for pl in $PLANNERS; do
    run "plan_${p}_${m}_$pl" $S plan p/$p.json --planner $pl --memory $m -o "p/${p}_${m}_$pl.plan.json" --progress none
    dig "plan:$p:$m:$pl" "p/${p}_${m}_$pl.plan.json" "p/plan_${p}_${m}_$pl.out" "p/plan_${p}_${m}_$pl.err"
    if [ -s "p/${p}_${m}_$pl.plan.json" ]; then run "sim_${p}_${m}_$pl" $S simulate "p/${p}_${m}_$pl.plan.json" --json; dig "sim:$p:$m:$pl" "p/sim_${p}_${m}_$pl.out"; fi
  done
  case $p in chain|random|resnet|rnn|gpt)
    run "plan_${p}_${m}_sa" $S plan p/$p.json --planner swapadvisor --memory $m --set generations=4 --set population=8 --time-budget 1000 -o "p/${p}_${m}_sa.plan.json" --progress none
    dig "plan:$p:$m:swapadvisor" "p/${p}_${m}_sa.plan.json" "p/plan_${p}_${m}_sa.out"
    run "plan_${p}_${m}_hy" $S plan p/$p.json --planner hybrid --memory $m --set generations=3 --set population=8 --time-budget 1000 -o "p/${p}_${m}_hy.plan.json" --progress none
    dig "plan:$p:$m:hybrid" "p/${p}_${m}_hy.plan.json" "p/plan_${p}_${m}_hy.out"
    ;; esac
  case $p in chain)
    run "plan_${p}_${m}_or" $S plan p/$p.json --planner optimal-remat --memory $m --set max_nodes=200 --time-budget 1000 -o "p/${p}_${m}_or.plan.json" --progress none
    dig "plan:$p:$m:optimal-remat" "p/${p}_${m}_or.plan.json" "p/plan_${p}_${m}_or.out" "p/plan_${p}_${m}_or.err"
    run "plan_${p}_${m}_os" $S plan p/$p.json --planner optimal-swap --memory $m --set max_nodes=200 --time-budget 1000 -o "p/${p}_${m}_os.plan.json" --progress none
    dig "plan:$p:$m:optimal-swap" "p/${p}_${m}_os.plan.json" "p/plan_${p}_${m}_os.out" "p/plan_${p}_${m}_os.err"
    ;; esac
done; done
# generated documents
$S table1 -o p/table1.md >/dev/null 2>&1; dig table1 p/table1.md
$S calibrate --data $D -o p/calibration.md >/dev/null 2>&1; dig calibrate p/calibration.md
$S dtr-parity --data $D -o p/dtr-parity >/dev/null 2>&1; dig dtr-parity p/dtr-parity.md
# colocate / serve
run serve $S serve p/resnet.json p/gpt.json --rate 20 --json; dig serve p/serve.out
echo "{\"jobs\":[{\"profile\":\"$O/p/resnet.json\"},{\"profile\":\"$O/p/gpt.json\"}]}" > p/wl.json
for pol in time spatial zico; do run coloc_$pol $S colocate p/wl.json --policy $pol --json; dig "colocate:$pol" p/coloc_$pol.out; done
# deterministic experiment grids
for e in table1 table2 planners; do $S experiment $R/experiments/$e.json --data $D --out p/exp >/dev/null 2>&1; done
for f in $(ls p/exp/*.csv 2>/dev/null); do python3 - "$f" > "$f.norm" <<'PY'
import csv,sys
r=list(csv.reader(open(sys.argv[1])))
if not r: sys.exit()
h=r[0]
if 'planner' in h:
    pi=h.index('planner'); r=[h]+[x for x in r[1:] if x[pi] not in ('swapadvisor','hybrid','optimal-swap','optimal-remat')]
drop={i for i,c in enumerate(h) if any(k in c for k in ('seconds','wall','time_s','elapsed','plan_s'))}
for row in r: print(','.join(v for i,v in enumerate(row) if i not in drop))
PY
dig "csv:$(basename $f)" "$f.norm"; done
wc -l digests.txt
