#!/bin/sh
# zico.sh: Zico (USENIX ATC '21): pairs of training jobs on one GPU under
# time slicing, spatial sharing and Zico (swapsim colocate,
# docs/colocate.md): identical pairs (two ResNet-50s, two Transformers, as
# in a hyperparameter search) and non-identical ones (GNMT from the
# PipeDream profile + ResNet-50; an LSTM language model + VGG-16), on a
# V100 16 GB and an RTX 2080 Ti 11 GB, at a low memory demand (the two
# peaks fit together) and a high one (they do not). Each job runs 20
# iterations; the second arrives 50 ms after the first.
#
#   experiments/zico.sh [SWAPSIM]          (default bin/swapsim)
#
# Environment: OUT (default out/zico), DATA (default data).
#
# Policies: time, spatial (a job out of memory fails), spatial+swap (it
# starts its iteration over with an ODSwap plan, --on-oom swap) and zico.
#
# Writes OUT/zico.csv (one row per device, pair, demand and policy, with
# the total normalised throughput and each job's; `vs_time` is the total
# over time slicing's), OUT/memory_<policy>.csv (the memory over time of
# one high-demand pair under each policy) and, with gnuplot, OUT/zico.png
# and OUT/zico.svg (plots/zico.gp).
set -eu
S=${1:-bin/swapsim}
OUT=${OUT:-out/zico}
DATA=${DATA:-data}
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT/profiles"
t0=$(date +%s)
CSV="$OUT/zico.csv"
RAW="$OUT/raw.csv"
rm -f "$RAW"

# profile DEVICE NAME GENERATOR-ARGS...: generate (or import) once
profile() {
    dev=$1
    name=$2
    shift 2
    f="$OUT/profiles/${dev}_$name.json"
    if [ ! -f "$f" ]; then
        if [ "$1" = gnmt ]; then
            "$S" import pipedream "$DATA/pipedream/gnmt.txt" --device "$dev" -o "$f"
        else
            "$S" model "$@" --device "$dev" -o "$f"
        fi
    fi
    echo "$f"
}

# pair DEVICE MEMORY PAIRNAME DEMAND PROFILE1 PROFILE2
pair() {
    w="$OUT/$1_$3_$4.json"
    cat >"$w" <<EOF
{"device": "$1", "memory": "$2", "jobs": [
  {"name": "j1", "profile": "profiles/$(basename "$5")", "iterations": 20},
  {"name": "j2", "profile": "profiles/$(basename "$6")", "iterations": 20, "arrival": 0.05}]}
EOF
    for p in time spatial zico; do
        "$S" colocate "$w" --policy "$p" --csv "$RAW" >/dev/null
    done
    "$S" colocate "$w" --policy spatial --on-oom swap --csv "$RAW" >/dev/null
}

for dev in v100 rtx2080ti; do
    if [ $dev = v100 ]; then mem=16GiB; else mem=11GiB; fi
    if [ $dev = v100 ]; then rl=64; rh=128; tl=8; th=16; gr_l=96; gr_h=192; vl=64; vh=208; lh=512;
    else rl=48; rh=96; tl=6; th=12; gr_l=64; gr_h=128; vl=48; vh=144; lh=256; fi
    pair $dev $mem resnet50x2 low "$(profile $dev r50_$rl resnet --depth 50 --batch $rl)" \
        "$(profile $dev r50_$rl resnet --depth 50 --batch $rl)"
    pair $dev $mem resnet50x2 high "$(profile $dev r50_$rh resnet --depth 50 --batch $rh)" \
        "$(profile $dev r50_$rh resnet --depth 50 --batch $rh)"
    pair $dev $mem transformerx2 low "$(profile $dev tf_$tl transformer --batch $tl)" \
        "$(profile $dev tf_$tl transformer --batch $tl)"
    pair $dev $mem transformerx2 high "$(profile $dev tf_$th transformer --batch $th)" \
        "$(profile $dev tf_$th transformer --batch $th)"
    pair $dev $mem gnmt+resnet50 low "$(profile $dev gnmt gnmt)" \
        "$(profile $dev r50_$gr_l resnet --depth 50 --batch $gr_l)"
    pair $dev $mem gnmt+resnet50 high "$(profile $dev gnmt gnmt)" \
        "$(profile $dev r50_$gr_h resnet --depth 50 --batch $gr_h)"
    pair $dev $mem lstm+vgg16 low "$(profile $dev lstm_128 rnn --layers 2 --hidden 2048 --batch 128)" \
        "$(profile $dev vgg_$vl vgg --batch $vl)"
    pair $dev $mem lstm+vgg16 high "$(profile $dev lstm_$lh rnn --layers 2 --hidden 2048 --batch $lh)" \
        "$(profile $dev vgg_$vh vgg --batch $vh)"
done

# the memory over time of one high-demand pair under each policy
for p in time spatial zico; do
    "$S" colocate "$OUT/v100_resnet50x2_high.json" --policy $p --memory-csv "$OUT/memory_$p.csv" \
        >/dev/null
done

# tidy: device, pair, demand, policy, ..., vs_time (total over time slicing's)
awk -F, 'NR == 1 { next }
    { n = split($1, a, "/"); split(a[n], b, "_"); dev = b[1]; pr = b[2]; dm = b[3];
      sub(/\.json$/, "", dm); key = dev "," pr "," dm;
      row[NR] = key "," $2 "," $3 "," $4 "," $5 "," $6 "," $7 "," $8 "," $9; k[NR] = key; tot[NR] = $7;
      if ($2 == "time") tm[key] = $7 }
    END { print "device,pair,demand,policy,memory_bytes,sum_of_peaks_bytes,makespan_s,peak_bytes,total_normalized,failed,jobs_normalized,vs_time,peaks_fit";
          for (i = 2; i <= NR; i++) { split(row[i], c, ",");
              printf "%s,%.4f,%s\n", row[i], (tm[k[i]] > 0 ? tot[i] / tm[k[i]] : 0), (c[6] + 0 <= c[5] + 0 ? "yes" : "no") } }' \
    "$RAW" >"$CSV"
rm -f "$RAW"
if command -v gnuplot >/dev/null 2>&1; then
    gnuplot -e "dir='$OUT'" "$HERE/../plots/zico.gp"
fi
echo "[zico] wrote $CSV in $(($(date +%s) - t0)) s"
