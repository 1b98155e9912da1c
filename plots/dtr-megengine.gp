# dtr-megengine.gp: MegEngine's DTR on an address allocator: overhead, and
# the arena it reserved against the bytes in use at peak (fragmentation),
# against the memory budget, one line per DTR log.
load 'plots/common.gp'
f1 = tab('dtr-megengine.csv', 'rows=ratio cols=label value=normalized_throughput fmt=%.5f')
g = tab('dtr-megengine.csv', 'rows=ratio,label value=reserved_memory_bytes,peak_memory_bytes fmt=%.0f')
logs = 'ResNet-32 (56)|DenseNet-121 (84)|Transformer (10)|U-Net (6)|LSTM (1700)'
lg(i) = system(sprintf("echo '%s' | cut -d'|' -f%d", logs, i))
do for [t in 'png svg'] {
    if (t eq 'png') { set terminal pngcairo size 1300,500 font 'Sans,11'; set output data . '/dtr-megengine.png' }
    else { set terminal svg size 1300,500 font 'Sans,11' dynamic; set output data . '/dtr-megengine.svg' }
    set multiplot layout 1,2 title "MegEngine's DTR on the DTR logs (fragmentation-aware score, best-fit, 512-byte alignment)"
    set title 'overhead (missing: gave up or out of memory)'
    set xlabel 'budget / ideal peak memory'
    set ylabel 'overhead (time / compute)'
    set xrange [0.05:1.05]
    set yrange [1:2.05]
    set key top right font ',9'
    plot for [k = 2:6] f1 using 1:(1 / column(k)) with linespoints title columnheader(k)
    set title 'fragmentation: arena reserved / bytes in use at peak'
    set ylabel 'reserved / in use'
    set yrange [0.95:*]
    plot for [i = 1:5] g using 1:(strcol(2) eq lg(i) ? $3 / $4 : 1/0) with linespoints lt i title lg(i)
    unset multiplot
}
