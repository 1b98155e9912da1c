# ablation.gp: the GA hyperparameter sweep: mean throughput normalised to
# ideal over seeds, with 95% confidence intervals, one bar per setting.
load 'plots/common.gp'
f = tab('ablation.csv', 'rows=param,value value=normalized_throughput stat=mean_ci fmt=%.4f')
do for [t in 'png svg'] {
    if (t eq 'png') { set terminal pngcairo size 1300,540 font 'Sans,11'; set output data . '/ablation.png' }
    else { set terminal svg size 1300,540 font 'Sans,11' dynamic; set output data . '/ablation.svg' }
    set title "GA hyperparameters (Inception-v4 x2, batch 32, 4 GiB): mean and 95% confidence interval over seeds, one change from the defaults"
    set ylabel 'throughput / ideal throughput'
    set yrange [0:*]
    set boxwidth 0.7
    set style fill solid 0.85
    set xtics rotate by -30 scale 0 font ',10'
    set bars 2
    set rmargin 8
    set bmargin 6
    plot f using 0:3:xtic(strcol(2) eq '-' ? strcol(1) : sprintf('%s=%s', strcol(1), strcol(2))) with boxes lt 1 notitle, \
         '' using 0:3:4 with yerrorbars lt 8 pt 0 title '95% CI', \
         '' using 0:($3 + $4):(sprintf('%.3f', $3)) with labels offset 0,0.8 font ',8' notitle
}
