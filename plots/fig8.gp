# fig8.gp: the paper's Figure 8 from experiments/fig8.sh's CSV: p99 latency
# (log scale) against the throughput served, one line per policy and model
# count; left the paper's setting (16 GiB), right the tight and mixed ones.
#   gnuplot -e "csv='out/fig8/fig8.csv'; out='out/fig8/fig8'" plots/fig8.gp
if (!exists("csv")) csv = 'out/fig8/fig8.csv'
if (!exists("out")) out = 'out/fig8/fig8'
set datafile separator ','
set key top left
set logscale y
set grid ytics xtics lc rgb '#dddddd'
set xlabel 'throughput served (samples/s)'
set ylabel 'p99 latency (s)'
set yrange [0.02:100]
# columns: 1 setting, 2 n, 3 policy, 14 samples_per_s, 10 p99_s
sel(s, n, p) = (strcol(1) eq s && strcol(2) eq n && strcol(3) eq p) ? $10 : NaN

do for [t in 'png svg'] {
    if (t eq 'png') {
        set terminal pngcairo size 1400,620 font 'Sans,11'
        set output out . '.png'
    } else {
        set terminal svg size 1400,620 font 'Sans,11' dynamic
        set output out . '.svg'
    }
    set termoption noenhanced
    set multiplot layout 1,2
    set title 'ResNet-152 (batch 16) on a 16 GiB V100 (simulated)'
    plot csv every ::1 using 14:(sel('paper', '1', 'not_shared')) with linespoints lw 2 lc rgb '#000000' title 'not_shared', \
         for [n in '1 4 16'] csv every ::1 using 14:(sel('paper', n, 'time_shared')) with linespoints dt 2 title 'time_shared-'.n, \
         for [n in '1 4 16'] csv every ::1 using 14:(sel('paper', n, 'swapadvisor')) with linespoints title 'swapadvisor-'.n
    set title 'beyond the paper: 16 models in 2.5 GiB; mixed fleet (Zipf) in 12 GiB'
    plot for [p in 'time_shared swapadvisor lru'] csv every ::1 using 14:(sel('tight', '16', p)) with linespoints title 'tight '.p, \
         for [p in 'time_shared swapadvisor lru'] csv every ::1 using 14:(sel('mixed', '12', p)) with linespoints dt 2 title 'mixed '.p
    unset multiplot
}
