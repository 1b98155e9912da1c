# zico.gp: Zico's experiment from experiments/zico.sh: left, each pair's
# total normalised throughput under spatial sharing and Zico relative to
# time slicing (a job that fails contributes nothing); right, the combined
# memory over time of two ResNet-50s (batch 128, high demand, V100) under
# each policy.
#   gnuplot -e "dir='out/zico'" plots/zico.gp
if (!exists("dir")) dir = 'out/zico'
csv = dir . '/zico.csv'
set datafile separator ','
do for [t in 'png svg'] {
    if (t eq 'png') {
        set terminal pngcairo size 1500,640 font 'Sans,10'
        set output dir . '/zico.png'
    } else {
        set terminal svg size 1500,640 font 'Sans,10' dynamic
        set output dir . '/zico.svg'
    }
    set termoption noenhanced
    set multiplot layout 1,2
    set title 'total normalised throughput over time slicing (simulated)'
    set style fill solid 0.8 border rgb '#333333'
    set xtics rotate by -40 scale 0 font ',8'
    set ylabel 'x time slicing'
    set yrange [0:*]
    set key top left
    set grid ytics lc rgb '#dddddd'
    # rows come in fours per case (time, spatial, zico, spatial+swap): case k at x = k
    set boxwidth 0.27
    plot csv every 4::2 using ($0 - 0.28):12:xtic(strcol(1).' '.strcol(2).' '.strcol(3)) with boxes lc rgb '#ff7f0e' title 'spatial (out of memory: fails)', \
         csv every 4::4 using ($0):12 with boxes lc rgb '#d62728' title 'spatial (out of memory: swaps)', \
         csv every 4::3 using ($0 + 0.28):12 with boxes lc rgb '#2ca02c' title 'zico', \
         1 with lines dt 2 lc rgb '#000000' title 'time slicing'
    set xtics norotate font ',10'
    set title 'two ResNet-50 (batch 128) on a 16 GiB V100: combined memory'
    set xlabel 'time (s)'
    set ylabel 'GiB'
    set yrange [0:20]
    set xrange [0:3]
    set key top right
    plot dir . '/memory_time.csv' every ::1 using 1:($4 / 2**30) with steps lw 1.5 title 'time', \
         dir . '/memory_spatial.csv' every ::1 using 1:($4 / 2**30) with steps lw 1.5 title 'spatial', \
         dir . '/memory_zico.csv' every ::1 using 1:($4 / 2**30) with steps lw 1.5 title 'zico', \
         16 with lines dt 2 lc rgb '#000000' title 'GPU memory'
    unset multiplot
}
