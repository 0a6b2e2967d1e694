# Drawn by: cd bench/soak/results && gnuplot soak-30min.gp  (apt-get install gnuplot-nox)
set datafile separator ','
set datafile missing 'nan'
set terminal pngcairo noenhanced size 1400,1800 font ',9'
set output 'soak-30min.png'
set multiplot layout 6,1
set key outside right
set grid
set xlabel 'seconds'
set title 'load average'
plot 'soak-30min.csv' using 1:2 with lines title columnheader(2)
set title 'RSS (KiB)'
plot 'soak-30min.csv' using 1:3 with lines title columnheader(3), '/tmp/soak30/out/soak.csv' using 1:6 with lines title columnheader(6), '/tmp/soak30/out/soak.csv' using 1:9 with lines title columnheader(9), '/tmp/soak30/out/soak.csv' using 1:15 with lines title columnheader(15)
set title 'open file descriptors'
plot 'soak-30min.csv' using 1:4 with lines title columnheader(4), '/tmp/soak30/out/soak.csv' using 1:7 with lines title columnheader(7), '/tmp/soak30/out/soak.csv' using 1:10 with lines title columnheader(10), '/tmp/soak30/out/soak.csv' using 1:16 with lines title columnheader(16)
set title 'threads'
plot 'soak-30min.csv' using 1:5 with lines title columnheader(5), '/tmp/soak30/out/soak.csv' using 1:8 with lines title columnheader(8), '/tmp/soak30/out/soak.csv' using 1:11 with lines title columnheader(11), '/tmp/soak30/out/soak.csv' using 1:17 with lines title columnheader(17)
set title 'LC SQLite files (KiB)'
plot 'soak-30min.csv' using 1:12 with lines title columnheader(12), '/tmp/soak30/out/soak.csv' using 1:13 with lines title columnheader(13), '/tmp/soak30/out/soak.csv' using 1:18 with lines title columnheader(18), '/tmp/soak30/out/soak.csv' using 1:19 with lines title columnheader(19)
set title 'queue depths'
plot 'soak-30min.csv' using 1:14 with lines title columnheader(14), '/tmp/soak30/out/soak.csv' using 1:20 with lines title columnheader(20), '/tmp/soak30/out/soak.csv' using 1:21 with lines title columnheader(21), '/tmp/soak30/out/soak.csv' using 1:22 with lines title columnheader(22), '/tmp/soak30/out/soak.csv' using 1:23 with lines title columnheader(23)
unset multiplot
