# Drawn by: cd bench/soak/results && gnuplot soak-90min.gp  (apt-get install gnuplot-nox)
set datafile separator ','
set datafile missing 'nan'
set terminal pngcairo noenhanced size 1400,1800 font ',9'
set output 'soak-90min.png'
set multiplot layout 6,1
set key outside right
set grid
set xlabel 'seconds'
set title 'load average'
plot 'soak-90min.csv' using 1:2 with lines title columnheader(2)
set title 'RSS (KiB)'
plot 'soak-90min.csv' using 1:3 with lines title columnheader(3), 'soak-90min.csv' using 1:6 with lines title columnheader(6), 'soak-90min.csv' using 1:9 with lines title columnheader(9), 'soak-90min.csv' using 1:15 with lines title columnheader(15)
set title 'open file descriptors'
plot 'soak-90min.csv' using 1:4 with lines title columnheader(4), 'soak-90min.csv' using 1:7 with lines title columnheader(7), 'soak-90min.csv' using 1:10 with lines title columnheader(10), 'soak-90min.csv' using 1:16 with lines title columnheader(16)
set title 'threads'
plot 'soak-90min.csv' using 1:5 with lines title columnheader(5), 'soak-90min.csv' using 1:8 with lines title columnheader(8), 'soak-90min.csv' using 1:11 with lines title columnheader(11), 'soak-90min.csv' using 1:17 with lines title columnheader(17)
set title 'LC SQLite files (KiB)'
plot 'soak-90min.csv' using 1:12 with lines title columnheader(12), 'soak-90min.csv' using 1:13 with lines title columnheader(13), 'soak-90min.csv' using 1:18 with lines title columnheader(18), 'soak-90min.csv' using 1:19 with lines title columnheader(19)
set title 'queue depths'
plot 'soak-90min.csv' using 1:14 with lines title columnheader(14), 'soak-90min.csv' using 1:20 with lines title columnheader(20), 'soak-90min.csv' using 1:21 with lines title columnheader(21), 'soak-90min.csv' using 1:22 with lines title columnheader(22), 'soak-90min.csv' using 1:23 with lines title columnheader(23), 'soak-90min.csv' using 1:24 with lines title columnheader(24), 'soak-90min.csv' using 1:25 with lines title columnheader(25)
unset multiplot
