set terminal png size 960,600
set output '/work/main/docs/nfs3bench-lab-1gbit.png'
set title 'nfs3bench lab, rate 1gbit'
set xlabel 'block size (bytes per READ/WRITE call requested)'
set ylabel 'MB/s (10^6 bytes/s)'
set yrange [0:*]
set logscale x 2
set grid
set key outside right
set xtics ('8k' 8192, '16k' 16384, '64k' 65536, '1m' 1048576)
$s0 << EOD
8192 116.772
16384 117.879
65536 118.718
1048576 113.914
EOD
$s1 << EOD
8192 121.296
16384 122.473
65536 121.263
1048576 121.396
EOD
$s2 << EOD
8192 92.9138
16384 68.5537
65536 69.8036
1048576 76.5728
EOD
$s3 << EOD
8192 98.2239
16384 121.325
65536 115.706
1048576 120.823
EOD
$s4 << EOD
8192 38.9811
16384 115.741
65536 117.649
1048576 119.198
EOD
$s5 << EOD
8192 120.125
16384 121.046
65536 121.562
1048576 123.877
EOD
$s6 << EOD
8192 43.589
16384 64.0204
65536 73.9416
1048576 87.2587
EOD
$s7 << EOD
8192 101.576
16384 112.72
65536 123.902
1048576 117.668
EOD
plot $s0 with linespoints lw 2 title 'read tcp mtu1500 qd8', \
     $s1 with linespoints lw 2 title 'read tcp mtu9000 qd8', \
     $s2 with linespoints lw 2 title 'read udp mtu1500 qd8', \
     $s3 with linespoints lw 2 title 'read udp mtu9000 qd8', \
     $s4 with linespoints lw 2 title 'write tcp mtu1500 qd8', \
     $s5 with linespoints lw 2 title 'write tcp mtu9000 qd8', \
     $s6 with linespoints lw 2 title 'write udp mtu1500 qd8', \
     $s7 with linespoints lw 2 title 'write udp mtu9000 qd8'
