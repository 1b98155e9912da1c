# fig7.gp: the paper's Figure 7: WResNet-152-4 on a 16 GB V100 at three batch
# sizes: SwapAdvisor, ODSwap and TFLMS (grouped bars, values printed).
load 'plots/common.gp'
f = tab('fig7.csv', 'rows=batch cols=planner value=samples_per_s fmt=%.2f')
do for [t in 'png svg'] {
    if (t eq 'png') { set terminal pngcairo size 900,520 font 'Sans,11'; set output data . '/fig7.png' }
    else { set terminal svg size 900,520 font 'Sans,11' dynamic; set output data . '/fig7.svg' }
    set title "Figure 7: WResNet-152-4, 16 GB V100"
    set ylabel 'training throughput (samples/s)'
    set xlabel 'batch size'
    set yrange [0:*]
    set style data histograms
    set style histogram clustered gap 1
    set boxwidth 0.9
    set key top right
    plot f using 2:xtic(1) title 'SwapAdvisor', '' using 3 title 'ODSwap', '' using 4 title 'TFLMS', \
         '' using ($0 - 0.25):2:(sprintf('%.1f', $2)) with labels offset 0,0.7 font ',9' notitle, \
         '' using ($0):3:(sprintf('%.1f', $3)) with labels offset 0,0.7 font ',9' notitle, \
         '' using ($0 + 0.25):4:(sprintf('%.1f', $4)) with labels offset 0,0.7 font ',9' notitle
}
