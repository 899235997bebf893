set terminal svg size 800,500 font 'sans,12'
set output 'divergence/divergence.svg'
set logscale xy
set xlabel 'temperature'
set ylabel 'relative key error'
set title 'fp32 key error vs certified bound (top-8 keys of each row, fused kernel order)'
set key left bottom
set grid
plot 'divergence/divergence.dat' index 0 using 1:2 with linespoints title 'post-scale: measured', 'divergence/divergence.dat' index 0 using 1:3 with lines dt 2 title 'post-scale: bound', 'divergence/divergence.dat' index 1 using 1:2 with linespoints title 'pre-scale: measured', 'divergence/divergence.dat' index 1 using 1:3 with lines dt 2 title 'pre-scale: bound'
