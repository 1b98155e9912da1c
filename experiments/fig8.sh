#!/bin/sh
# fig8.sh: the paper's Figure 8 (serving several ResNet-152 models on one
# GPU): 99th-percentile latency against throughput for 1, 4 and 16 models
# on a 16 GB V100, Poisson arrivals, each request one batch for a model
# chosen at random (docs/serving.md).
#
#   experiments/fig8.sh [SWAPSIM]          (default bin/swapsim)
#
# Environment: OUT (default out/fig8), REQUESTS (per rate, default 20000).
#
# Settings (column `setting`):
#   paper   16 GiB, 1/4/16 models: time_shared (the paper's baseline),
#           swapadvisor (equal shares), lru (beyond the paper), and
#           not_shared (one model alone, the paper's reference).
#   tight   16 models in 2.5 GiB (160 MiB shares, where one request's ideal
#           peak is 386 MiB): the shares force SwapAdvisor to swap, as the
#           paper's Table 2 shows for small memories (beyond the paper).
#   mixed   ResNet-152 + VGG-16 + a 2-layer LSTM (all batch 16), four
#           instances each, Zipf popularity (s = 1), in 12 GiB (beyond the
#           paper).
#
# Writes OUT/fig8.csv (one row per setting, policy, model count and rate)
# and, with gnuplot, OUT/fig8.png and OUT/fig8.svg (plots/fig8.gp).
set -eu
S=${1:-bin/swapsim}
OUT=${OUT:-out/fig8}
N=${REQUESTS:-20000}
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT"
CSV="$OUT/fig8.csv"
t0=$(date +%s)
RATES=20,40,60,80,100,120,140,160,180,200,220,240,260,280,300,320,340,360,380,400

"$S" model resnet --depth 152 --batch 16 --inference -o "$OUT/resnet152.json"
"$S" model vgg --batch 16 --inference -o "$OUT/vgg16.json"
"$S" model rnn --layers 2 --hidden 2048 --batch 16 --inference -o "$OUT/lstm.json"

# run SETTING NMODELS SERVE-ARGS...: append the sweep's rows, tagged
run() {
    setting=$1
    nm=$2
    shift 2
    "$S" serve "$@" --rates "$RATES" --requests "$N" -o "$OUT/part.csv" >/dev/null
    tail -n +2 "$OUT/part.csv" | sed "s/^/$setting,$nm,/" >>"$CSV"
}

echo "setting,n,policy,models,memory_bytes,rate,requests,p50_s,p90_s,p99_s,mean_s,max_s,throughput,samples_per_s,utilization,cold,weight_bytes_moved,hot_s,cold_s" >"$CSV"
R="$OUT/resnet152.json"
run paper 1 "$R" --policy not_shared --memory 16GiB
for n in 1 4 16; do
    for p in time_shared swapadvisor lru; do
        run paper "$n" "$R" --copies "$n" --policy "$p" --memory 16GiB
    done
done
for p in time_shared swapadvisor lru; do
    run tight 16 "$R" --copies 16 --policy "$p" --memory 2560MiB
done
for p in time_shared swapadvisor lru; do
    run mixed 12 "$R" "$OUT/vgg16.json" "$OUT/lstm.json" --copies 4 --zipf 1 --policy "$p" \
        --memory 12GiB
done
rm -f "$OUT/part.csv"
if command -v gnuplot >/dev/null 2>&1; then
    gnuplot -e "csv='$CSV'; out='$OUT/fig8'" "$HERE/../plots/fig8.gp"
fi
echo "[fig8] wrote $CSV in $(($(date +%s) - t0)) s"
