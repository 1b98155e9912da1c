# fig10.gp: the paper's Figure 10: searching the schedule only, the
# allocation only, or both (and both from a seeded first generation);
# throughput normalised to ideal, values printed.
load 'plots/common.gp'
f = tab('fig10.csv', 'rows=label cols=column value=normalized_throughput fmt=%.3f')
do for [t in 'png svg'] {
    if (t eq 'png') { set terminal pngcairo size 800,520 font 'Sans,11'; set output data . '/fig10.png' }
    else { set terminal svg size 800,520 font 'Sans,11' dynamic; set output data . '/fig10.svg' }
    set title "Figure 10: what the GA searches (16 GB V100, first generation random; the last bar seeded)"
    set ylabel 'throughput / ideal throughput'
    set yrange [0:1.1]
    set style data histograms
    set style histogram clustered gap 1
    set boxwidth 0.9
    set key top right
    plot f using 2:xtic(1) title 'schedule only', '' using 3 title 'allocation only', '' using 4 title 'both', \
         '' using 5 title 'both, seeded', \
         '' using ($0 - 0.3):2:(sprintf('%.2f', $2)) with labels offset 0,0.7 font ',9' notitle, \
         '' using ($0 - 0.1):3:(sprintf('%.2f', $3)) with labels offset 0,0.7 font ',9' notitle, \
         '' using ($0 + 0.1):4:(sprintf('%.2f', $4)) with labels offset 0,0.7 font ',9' notitle, \
         '' using ($0 + 0.3):5:(sprintf('%.2f', $5)) with labels offset 0,0.7 font ',9' notitle
}
