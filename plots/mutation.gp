# mutation.gp: the schedule-mutation ablation: mean throughput normalised to
# ideal over seeds (95% confidence intervals) after the same number of
# generations from a random first generation, the paper's dataflow pass
# against moving one op, and ours (chain, reuse, cone, mixed), per model.
load 'plots/common.gp'
f = tab('mutation.csv', 'rows=label cols=mutation value=normalized_throughput stat=mean_ci fmt=%.4f')
do for [t in 'png svg'] {
    if (t eq 'png') { set terminal pngcairo size 800,520 font 'Sans,11'; set output data . '/mutation.png' }
    else { set terminal svg size 800,520 font 'Sans,11' dynamic; set output data . '/mutation.svg' }
    set title "Schedule mutation (16 GB V100, random first generation, fixed generations)"
    set ylabel 'throughput / ideal throughput'
    set yrange [0:*]
    set style data histograms
    set style histogram errorbars gap 1 lw 1
    set boxwidth 0.9
    set bars 2
    set key below
    plot f using 2:3:xtic(1) title 'dataflow pass (paper)', '' using 4:5 title 'move one op', \
         '' using 6:7 title 'chain (ours)', '' using 8:9 title 'reuse (ours)', \
         '' using 10:11 title 'cone (ours)', '' using 12:13 title 'mixed (ours)'
}
