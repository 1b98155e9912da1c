# planners.gp: every planner on every generated model at half the ideal
# peak: throughput normalised to ideal (missing: the planner cannot run it).
load 'plots/common.gp'
do for [b in '0.5x 0.8x'] {
f = tab('planners.csv', 'rows=label cols=planner value=normalized_throughput where=budget:' . b . ' fmt=%.3f')
do for [t in 'png svg'] {
    if (t eq 'png') { set terminal pngcairo size 1500,560 font 'Sans,11'; set output data . '/planners-' . b . '.png' }
    else { set terminal svg size 1500,560 font 'Sans,11' dynamic; set output data . '/planners-' . b . '.svg' }
    set title 'Every planner at ' . b . ' of the ideal peak memory (missing bar: cannot run it)'
    set ylabel 'throughput / ideal throughput'
    set yrange [0:1.1]
    set style data histograms
    set style histogram clustered gap 1
    set boxwidth 0.9
    set key outside right
    set xtics scale 0 font ',10'
    plot for [k = 2:8] f using k:xtic(1) title columnheader(k)
}
}
