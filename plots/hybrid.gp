# hybrid.gp: throughput (normalised to ideal) against the memory budget,
# one panel per model, one line per planner: hybrid against swapping alone
# (swapadvisor, odswap) and recomputation alone (dtr, dtr-megengine,
# sublinear); experiments hybrid (the paper's five models) and hybrid-dtr
# (the DTR logs). A missing point: the planner cannot run it.
load 'plots/common.gp'
do for [e in 'hybrid hybrid-dtr'] {
models = (e eq 'hybrid') ? 'WResNet-152-10 (32)|Inception-4 (32)|NasNet-25 (32)|RNN-8-8K (128)|BRNN-4-8K (64)' \
                         : 'ResNet-32 (56)|DenseNet-121 (84)|Transformer (10)|U-Net (6)|LSTM (1700)'
lab(i) = system(sprintf("echo '%s' | cut -d'|' -f%d", models, i))
do for [t in 'png svg'] {
    if (t eq 'png') { set terminal pngcairo size 1800,400 font 'Sans,10'; set output data . '/' . e . '.png' }
    else { set terminal svg size 1800,400 font 'Sans,10' dynamic; set output data . '/' . e . '.svg' }
    set multiplot layout 1,5 title (e eq 'hybrid' ? "hybrid against swapping and recomputation alone: the paper's five models (V100)" : "hybrid against swapping and recomputation alone: the DTR logs (Titan V)")
    set xlabel 'budget / ideal peak'
    set ylabel 'throughput / ideal'
    set xrange [0.15:0.85]
    set yrange [0:1.05]
    set key bottom right font ',8'
    do for [m = 1:5] {
        set title lab(m)
        f = tab(e . '.csv', sprintf('rows=ratio cols=planner value=normalized_throughput "where=label:%s" fmt=%%.4f', lab(m)))
        plot for [k = 2:7] f using 1:k with linespoints title columnheader(k)
        if (m == 1) { set ylabel ''; unset key }
    }
    unset multiplot
    set key
}
}
