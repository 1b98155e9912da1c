# today-planners.gp: today's planners beside the paper's (out/today-planners.csv),
# one figure per device: a panel per model, throughput normalised to ideal
# against the memory budget (fraction of the ideal peak), the best planner
# of each family (swapping, recomputation, hybrid) and the ceiling the lower
# bound puts on any plan (compute time / bound). A missing point: no planner
# of the family has a plan there.
load 'plots/common.gp'
models = 'decoder-125m-1k decoder-125m-8k decoder-350m-1k decoder-350m-8k decoder-1b-1k decoder-1b-8k ResNet-50 VGG-16 DenseNet-121 Inception-v3 LSTM-2x1024'
do for [dev in 'h100-pcie gh200'] {
do for [t in 'png svg'] {
    if (t eq 'png') { set terminal pngcairo size 1800,1100 font 'Sans,10'; set output data . '/today-planners-' . dev . '.png' }
    else { set terminal svg size 1800,1100 font 'Sans,10' dynamic; set output data . '/today-planners-' . dev . '.svg' }
    set multiplot layout 3,4 title 'Best plan of each family on ' . dev . ' (throughput / ideal) and the bound''s ceiling'
    set xrange [0.25:0.95]
    set yrange [0:1.05]
    set xtics 0.1
    set key bottom right font ',8'
    do for [m in models] {
        set title m
        fam = tab('today-planners.csv', 'rows=frac cols=family value=normalized_throughput stat=max where=device:' . dev . ' where=label:' . m . ' "where=family:swap|recompute|hybrid" fmt=%.4f')
        bnd = tab('today-planners.csv', 'rows=frac value=bound_tput where=device:' . dev . ' where=label:' . m . ' where=planner:bound fmt=%.4f')
        plot fam using 1:'swap' with linespoints lt 1 title 'swap', \
             fam using 1:'recompute' with linespoints lt 4 title 'recompute', \
             fam using 1:'hybrid' with linespoints lt 3 title 'hybrid', \
             bnd using 1:2 with lines lt 8 dt 2 title 'bound'
    }
    unset multiplot
}
}
