# fig6.gp: the paper's Figure 6: training throughput normalised to ideal on
# a 16 GB V100, SwapAdvisor (random first generation, with the default
# schedule mutation and with the paper's; seeded with the default
# individual) vs ODSwap, grouped bars with the value on each.
load 'plots/common.gp'
f = tab('fig6.csv', 'rows=label,batch cols=variant value=normalized_throughput fmt=%.3f')
do for [t in 'png svg'] {
    if (t eq 'png') { set terminal pngcairo size 1500,560 font 'Sans,11'; set output data . '/fig6.png' }
    else { set terminal svg size 1500,560 font 'Sans,11' dynamic; set output data . '/fig6.svg' }
    set title "Figure 6: training throughput normalised to ideal, 16 GB V100 (model and batch size)"
    set ylabel 'throughput / ideal throughput'
    set yrange [0:1.12]
    set style data histograms
    set style histogram clustered gap 1
    set boxwidth 0.9
    set xtics rotate by -25 scale 0 font ',10'
    set key top right
    plot f using 3:xtic(sprintf('%s b%s', strcol(1), strcol(2))) title 'SwapAdvisor (random first generation)', \
         '' using 4 title "SwapAdvisor (random, the paper's mutation)", \
         '' using 5 title 'SwapAdvisor (seeded)', \
         '' using 6 title 'ODSwap', \
         '' using ($0 - 0.27):3:(sprintf('%.2f', $3)) with labels offset 0,0.7 font ',6' notitle, \
         '' using ($0 - 0.09):4:(sprintf('%.2f', $4)) with labels offset 0,0.7 font ',6' notitle, \
         '' using ($0 + 0.09):5:(sprintf('%.2f', $5)) with labels offset 0,0.7 font ',6' notitle, \
         '' using ($0 + 0.27):6:(sprintf('%.2f', $6)) with labels offset 0,0.7 font ',6' notitle
}
