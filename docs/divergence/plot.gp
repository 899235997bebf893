# Regenerates h200.svg from the two CSVs written by `raceoracle divergence`:
#   gnuplot plot.gp
set terminal svg size 900,520 font 'sans,12'
set output 'h200.svg'
set datafile separator ','
set logscale xy
set xlabel 'temperature'
set ylabel 'relative key error (top-8 keys of each row)'
set title 'fp32 key error vs certified bound, H200, V = 163840, 512 rows per point'
set key outside right
set grid
plot '< grep ,post, h200-f32.csv' using 1:4 with linespoints lw 2 pt 7 title 'post, f32: measured', \
     '< grep ,post, h200-f32.csv' using 1:5 with lines dt 2 lw 2 title 'post: bound', \
     '< grep ,pre, h200-f32.csv' using 1:4 with linespoints lw 2 pt 5 title 'pre, f32: measured', \
     '< grep ,pre, h200-f32.csv' using 1:5 with lines dt 2 lw 2 title 'pre: bound', \
     '< grep ,pre, h200-bf16.csv' using 1:4 with linespoints pt 9 title 'pre, bf16: measured'
