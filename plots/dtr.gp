# dtr.gp: DTR on the DTR authors' logs: overhead (simulated time / compute)
# against the memory budget (fraction of the ideal peak), one panel per log,
# one line per heuristic; runs that gave up (> 2x) or could not fit are
# missing points. Budget on resident bytes, as the DTR simulator counts.
load 'plots/common.gp'
logs = 'ResNet-32 (56)|DenseNet-121 (84)|Transformer (10)|U-Net (6)|LSTM (1700)'
hs = 'dtr dtr-eq dtr-local lru size msps random'
do for [t in 'png svg'] {
    if (t eq 'png') { set terminal pngcairo size 1600,900 font 'Sans,10'; set output data . '/dtr.png' }
    else { set terminal svg size 1600,900 font 'Sans,10' dynamic; set output data . '/dtr.svg' }
    set multiplot layout 2,3 title 'DTR: overhead vs memory budget on the DTR logs (budget on resident bytes; missing = gave up or out of memory)'
    do for [i = 1:5] {
        lg = system(sprintf("echo '%s' | cut -d'|' -f%d", logs, i))
        f = tab('dtr.csv', sprintf("rows=ratio cols=heuristic value=normalized_throughput where=budget_on:bytes 'where=label:%s' fmt=%%.5f", lg))
        set title lg
        set xlabel 'budget / ideal peak memory'
        set ylabel 'overhead (time / compute)'
        set xrange [0.05:1.05]
        set yrange [1:2.05]
        set key top right font ',8'
        plot for [k = 2:8] f using 1:(1 / column(k)) with linespoints title columnheader(k)
    }
    unset multiplot
}
