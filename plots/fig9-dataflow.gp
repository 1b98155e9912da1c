# fig9-dataflow.gp: Figure 9's convergence panels with the paper's schedule
# mutation (schedule_mutation=dataflow, experiments/fig9-dataflow.json): best, mean and
# worst simulated iteration time of the live population against search
# time, from a random first generation (log scale: the first generation
# is several times slower than the end).
load 'plots/common.gp'
set datafile separator ','
runs = 'rnn-8-8k inception-4'
titles = 'RNN-8-8K, dataflow (paper)|Inception-4, dataflow (paper)'
do for [t in 'png svg'] {
    if (t eq 'png') { set terminal pngcairo size 1100,450 font 'Sans,11'; set output data . '/fig9-dataflow.png' }
    else { set terminal svg size 1100,450 font 'Sans,11' dynamic; set output data . '/fig9-dataflow.svg' }
    set multiplot layout 1,2 title "Figure 9 with schedule\\_mutation=dataflow (the paper's): GA convergence from a random first generation (16 GB V100, population 32)"
    do for [i = 1:2] {
        f = data . '/fig9-dataflow-' . word(runs, i) . '.csv'
        set title system(sprintf("echo '%s' | cut -d'|' -f%d", titles, i))
        set xlabel 'search time (s)'
        set ylabel 'simulated iteration time (s)'
        set key top right
        set yrange [*:*]
        undefine STATS_*
        stats f using 7 nooutput
        if (exists("STATS_min")) {
            lo = STATS_min
            stats f using 6 nooutput
            set yrange [lo * 0.97 : STATS_max * 1.1]
            set xrange [0:*]
            set autoscale xfixmax
            set logscale y
            set ytics (5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 70, 100, 150, 200, 300)
            plot f using 1:4:6 with filledcurves fc rgb '#cfe2f3' title 'best to worst', \
                 '' using 1:6 with lines lt 4 title 'worst', \
                 '' using 1:5 with lines lt 2 title 'mean', \
                 '' using 1:4 with lines lt 1 title 'best'
            unset logscale y
            set ytics autofreq
        } else {
            set label 1 'no feasible individual found' at graph 0.5, 0.5 center
            set yrange [0:1]
            plot NaN notitle
            unset label 1
        }
    }
    unset multiplot
}
