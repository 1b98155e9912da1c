# fig9.gp: the paper's Figure 9: GA convergence: the best, mean and worst
# simulated iteration time of the live population against search time,
# with the band between best and worst shaded; one panel per run (random
# first generations, then the two seeded with the default individual).
load 'plots/common.gp'
set datafile separator ','
runs = 'rnn-8-8k inception-4 inception-4-free rnn-8-8k-seeded inception-4-seeded'
titles = 'RNN-8-8K|Inception-4|Inception-4, unrestricted CLS|RNN-8-8K, seeded|Inception-4, seeded'
do for [t in 'png svg'] {
    if (t eq 'png') { set terminal pngcairo size 1500,900 font 'Sans,11'; set output data . '/fig9.png' }
    else { set terminal svg size 1500,900 font 'Sans,11' dynamic; set output data . '/fig9.svg' }
    set multiplot layout 2,3 title 'Figure 9: GA convergence (16 GB V100, live population of 32; top: random first generation, bottom: seeded)'
    do for [i = 1:5] {
        f = data . '/fig9-' . word(runs, i) . '.csv'
        set title system(sprintf("echo '%s' | cut -d'|' -f%d", titles, i))
        set xlabel 'search time (s)'
        set ylabel 'simulated iteration time (s)'
        set key top right
        set yrange [*:*]
        undefine STATS_*
        stats f using 7 nooutput
        if (exists("STATS_min")) {
            set yrange [STATS_min * 0.97 : STATS_min * 1.6]
            plot f using 1:4:6 with filledcurves fc rgb '#cfe2f3' title 'best to worst', \
                 '' using 1:6 with lines lt 4 title 'worst', \
                 '' using 1:5 with lines lt 2 title 'mean', \
                 '' using 1:4 with lines lt 1 title 'best'
        } else {
            # the search found no feasible individual (no times to draw)
            set label 1 'no feasible individual found' at graph 0.5, 0.5 center
            set yrange [0:1]
            plot NaN notitle
            unset label 1
        }
    }
    unset multiplot
}
