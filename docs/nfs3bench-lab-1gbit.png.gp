set terminal png size 1100,600
set output 'docs/nfs3bench-lab-1gbit.png'
set title 'nfs3bench lab 2026-12-03, 1 Gbit/s, 16 calls in flight, UDP paced (auto) and unpaced (off)'
set xlabel 'bytes per READ/WRITE call'
set ylabel 'MB/s (10^6 bytes/s)'
set yrange [0:*]
set logscale x 2
set grid
set key outside right
set xtics ('8k' 8192, '32k' 32768, '1m' 1048576)
$s0 << EOD
32768 65.4765
1048576 113.754
EOD
$s1 << EOD
32768 83.291
1048576 121.172
EOD
$s2 << EOD
8192 50.8115
32768 46.1686
EOD
$s3 << EOD
32768 92.0249
EOD
$s4 << EOD
32768 51.2459
1048576 117.698
EOD
$s5 << EOD
32768 106.423
1048576 116.606
EOD
$s6 << EOD
8192 46.4962
32768 66.6672
EOD
$s7 << EOD
32768 112.754
EOD
$s8 << EOD
8192 69.8385
32768 46.0674
EOD
$s9 << EOD
32768 91.292
EOD
$s10 << EOD
8192 45.4327
32768 42.5178
EOD
$s11 << EOD
32768 113.522
EOD
$pref << EOD
8192 46.4962
8192 50.8115
1048576 117.698
1048576 113.754
32768 53.3133
32768 85.4015
1048576 116.606
1048576 121.172
8192 45.4327
8192 69.8385
32768 105.079
32768 103.382
EOD
plot $s0 with linespoints lw 2 title 'read tcp mtu1500 qd16', \
     $s1 with linespoints lw 2 title 'read tcp mtu9000 qd16', \
     $s2 with linespoints lw 2 title 'read udp unpaced mtu1500 qd16', \
     $s3 with linespoints lw 2 title 'read udp unpaced mtu9000 qd16', \
     $s4 with linespoints lw 2 title 'write tcp mtu1500 qd16', \
     $s5 with linespoints lw 2 title 'write tcp mtu9000 qd16', \
     $s6 with linespoints lw 2 title 'write udp unpaced mtu1500 qd16', \
     $s7 with linespoints lw 2 title 'write udp unpaced mtu9000 qd16', \
     $s8 with linespoints lw 2 title 'read udp paced mtu1500 qd16', \
     $s9 with linespoints lw 2 title 'read udp paced mtu9000 qd16', \
     $s10 with linespoints lw 2 title 'write udp paced mtu1500 qd16', \
     $s11 with linespoints lw 2 title 'write udp paced mtu9000 qd16', \
     $pref with points pt 6 ps 3 lw 2 lc rgb 'black' title 'bs pref: a mount without rsize/wsize'
