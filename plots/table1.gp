# table1.gp: the paper's Table 1: memory footprint and operators of the five
# models, ours beside the paper's.
load 'plots/common.gp'
f = tab('table1.csv', 'rows=label value=footprint_bytes,paper_memory_gb,operators,paper_operators fmt=%.6g')
do for [t in 'png svg'] {
    if (t eq 'png') { set terminal pngcairo size 1200,480 font 'Sans,11'; set output data . '/table1.png' }
    else { set terminal svg size 1200,480 font 'Sans,11' dynamic; set output data . '/table1.svg' }
    set multiplot layout 1,2 title "Table 1: the paper's five models, ours beside the paper's"
    set style data histograms
    set style histogram clustered gap 1
    set boxwidth 0.9
    set xtics rotate by -20 scale 0 font ',10'
    set key above
    set title 'memory (GB)'
    set yrange [0:*]
    set ylabel 'GB'
    plot f using ($2 / 1e9):xtic(1) title 'ours (footprint)', '' using 3 title 'paper'
    set title 'operators'
    set ylabel 'operators'
    plot f using 4:xtic(1) title 'ours', '' using 5 title 'paper'
    unset multiplot
}
