# table2.gp: the paper's Table 2 as a plot: ResNet-152 inference time per
# batch vs the GPU memory cap, one line per batch size, and unlimited memory.
load 'plots/common.gp'
f = tab('table2.csv', 'rows=memory cols=batch value=iteration_time_s where=planner:swapadvisor fmt=%.5f')
do for [t in 'png svg'] {
    if (t eq 'png') { set terminal pngcairo size 900,520 font 'Sans,11'; set output data . '/table2.png' }
    else { set terminal svg size 900,520 font 'Sans,11' dynamic; set output data . '/table2.svg' }
    set title "Table 2: ResNet-152 inference under a memory cap (SwapAdvisor)"
    set ylabel 'time per batch (s, log scale)'
    set xlabel 'GPU memory cap'
    set logscale y
    set key top right title 'batch size'
    plot f using 0:2:xtic(1) with linespoints title columnheader(2), \
         '' using 0:3 with linespoints title columnheader(3), \
         '' using 0:4 with linespoints title columnheader(4)
}
