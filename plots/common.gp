# common.gp: settings every plot script loads: where the data is, how to
# tabulate it (swapsim table), and the output terminals (PNG, then SVG).
#   gnuplot -e "data='out'; swapsim='bin/swapsim'" plots/fig6.gp
if (!exists("data")) data = 'out'
if (!exists("swapsim")) swapsim = 'bin/swapsim'
# a pivot of an experiment CSV as a gnuplot data file (first line: column names)
tab(csv, args) = '< ' . swapsim . ' table ' . data . '/' . csv . ' ' . args . ' format=dat'
set datafile missing 'NaN'
# the first line of every table is its column names
set key autotitle columnheader
set grid ytics lc rgb '#dddddd'
set border 3
set tics nomirror
set style fill solid 0.85 border rgb '#333333'
set linetype 1 lc rgb '#1f77b4' lw 2 pt 7
set linetype 2 lc rgb '#ff7f0e' lw 2 pt 5
set linetype 3 lc rgb '#2ca02c' lw 2 pt 9
set linetype 4 lc rgb '#d62728' lw 2 pt 11
set linetype 5 lc rgb '#9467bd' lw 2 pt 13
set linetype 6 lc rgb '#8c564b' lw 2 pt 3
set linetype 7 lc rgb '#e377c2' lw 2 pt 1
set linetype 8 lc rgb '#7f7f7f' lw 2 pt 2
