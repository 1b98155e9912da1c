# optimality.gp: each planner's iteration time over the lower bound no plan
# can beat, per model and budget (1 = optimal; out/optimality.csv);
# the exact optima (optimal-swap, optimal-remat) are bars of their own.
load 'plots/common.gp'
set linetype 9 lc rgb '#bcbd22' lw 2
set linetype 10 lc rgb '#17becf' lw 2
f = tab('optimality.csv', 'rows=model,budget cols=planner value=ratio_bound "where=planner:optimal-swap|optimal-remat|swapadvisor|hybrid|odswap|tflms|vdnn|dtr|dtr-megengine|sublinear" fmt=%.3f')
do for [t in 'png svg'] {
    if (t eq 'png') { set terminal pngcairo size 1600,600 font 'Sans,11'; set output data . '/optimality.png' }
    else { set terminal svg size 1600,600 font 'Sans,11' dynamic; set output data . '/optimality.svg' }
    set title 'Iteration time over the lower bound (1 = optimal; missing bar: no plan; log scale)'
    set ylabel 'time / lower bound'
    set logscale y
    set yrange [0.9:*]
    set style data histograms
    set style histogram clustered gap 1
    set boxwidth 0.9
    set key outside right
    set xtics scale 0 rotate by -45 font ',9'
    plot for [k = 3:12] f using k:xtic(sprintf('%s %s', strcol(1), strcol(2))) title columnheader(k)
}
