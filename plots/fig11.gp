# fig11.gp: the paper's Figure 11 (simulator accuracy) from
# experiments/fig11.sh's CSV. Left: measured vs simulated iteration time,
# one point per plan, one colour per model and batch, the line of equality
# and two dashed lines bounding the error range (as in the paper). Right:
# each plan's error, so plans of one group can be told apart. groups: the
# CSV's groups; planners: its planners, one marker each (the first is
# titled by group).
#   gnuplot -e "csv='out/fig11/fig11.csv'; out='out/fig11/fig11'; lo=-0.01; hi=0.03; label='cpu'" plots/fig11.gp
if (!exists("csv")) csv = 'out/fig11/fig11.csv'
if (!exists("out")) out = 'out/fig11/fig11'
if (!exists("lo")) lo = 0
if (!exists("hi")) hi = 0
if (!exists("label")) label = ''
if (!exists("groups")) groups = 'chain/b32 chain/b64 random/b32 random/b64'
if (!exists("planners")) planners = 'random none'

set datafile separator ','
pts = '5 7 9 11 13 15'
pss = '1.4 1.6 1.6 1.6 1.6 1.6'
ptype(j) = word(pts, j) + 0
psize(j) = word(pss, j) + 0
ptitle(p) = p eq 'random' ? 'random planner (random swaps)' : p eq 'none' ? 'none (no swapping)' : \
            p eq 'swapadvisor' ? 'swapadvisor (GA individuals)' : p
stats csv using ($10 * 1000) nooutput
xmin = STATS_min * 0.9
xmax = STATS_max * 1.06
set style line 10 lc rgb '#555555' lw 1
set style line 11 lc rgb '#cc3333' lw 1.2 dt 2
set style line 12 lc rgb '#3355cc' lw 1.2 dt 2
is(p, want) = (p eq want)

do for [t in 'png svg'] {
    if (t eq 'png') {
        set terminal pngcairo size 1400,620 font 'Sans,11'
        set output out . '.png'
    } else {
        set terminal svg size 1400,620 font 'Sans,11' dynamic
        set output out . '.svg'
    }
    set multiplot layout 1,2 title sprintf("Simulator accuracy (the paper's Figure 11): plans replayed on backend %s\nmeasured between %+.1f%% and %+.1f%% of simulated", label, 100 * lo, 100 * hi)
    set grid
    set key top left box opaque
    set xlabel 'simulated iteration time (ms)'
    set ylabel 'measured iteration time (ms)'
    set xrange [xmin:xmax]
    set yrange [xmin * (1 + (lo < 0 ? lo : 0)) : xmax * (1 + (hi > 0 ? hi : 0))]
    plot x ls 10 title 'measured = simulated', \
         x * (1 + hi) ls 11 title sprintf('%+.1f%%', 100 * hi), \
         x * (1 + lo) ls 12 title sprintf('%+.1f%%', 100 * lo), \
         for [i = 1:words(groups)] csv using (strcol(1) eq word(groups, i) && is(strcol(4), word(planners, 1)) ? $10 * 1000 : NaN):($11 * 1000) \
             with points pt ptype(1) ps psize(1) lc i title word(groups, i), \
         for [j = 2:words(planners)] for [i = 1:words(groups)] csv using (strcol(1) eq word(groups, i) && is(strcol(4), word(planners, j)) ? $10 * 1000 : NaN):($11 * 1000) \
             with points pt ptype(j) ps psize(j) lc i notitle, \
         for [j = 1:words(planners)] NaN with points pt ptype(j) ps psize(j) lc rgb 'black' title ptitle(word(planners, j))
    set xlabel 'simulated iteration time (ms)'
    set ylabel 'error: measured / simulated - 1 (%)'
    set autoscale y
    set yrange [(lo < 0 ? 130 * lo : -0.5):(hi > 0 ? 130 * hi : 0.5)]
    set key top right box opaque
    plot 0 ls 10 notitle, \
         for [i = 1:words(groups)] csv using (strcol(1) eq word(groups, i) && is(strcol(4), word(planners, 1)) ? $10 * 1000 : NaN):($14 * 100) \
             with points pt ptype(1) ps psize(1) lc i title word(groups, i), \
         for [j = 2:words(planners)] for [i = 1:words(groups)] csv using (strcol(1) eq word(groups, i) && is(strcol(4), word(planners, j)) ? $10 * 1000 : NaN):($14 * 100) \
             with points pt ptype(j) ps psize(j) lc i notitle
    unset multiplot
}
