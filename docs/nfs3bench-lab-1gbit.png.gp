set terminal png size 960,600
set output 'docs/nfs3bench-lab-1gbit.png'
set title 'nfs3bench lab 2026-12-03, rate 1gbit, 16 calls in flight'
set xlabel 'bytes per READ/WRITE call'
set ylabel 'MB/s (10^6 bytes/s)'
set yrange [0:*]
set logscale x 2
set grid
set key outside right
set xtics ('8k' 8192, '32k' 32768, '1m' 1048576)
$s0 << EOD
32768 118.69
1048576 119.244
EOD
$s1 << EOD
32768 122.973
1048576 122.733
EOD
$s2 << EOD
8192 110.177
32768 120.377
EOD
$s3 << EOD
32768 123.461
EOD
$s4 << EOD
8192 112.595
32768 94.798
EOD
$s5 << EOD
32768 123.417
EOD
$s6 << EOD
32768 117.147
1048576 118.53
EOD
$s7 << EOD
32768 122.12
1048576 124.03
EOD
$s8 << EOD
8192 109.825
32768 117.037
EOD
$s9 << EOD
32768 123.466
EOD
$s10 << EOD
8192 112.03
32768 116.507
EOD
$s11 << EOD
32768 123.63
EOD
$pref << EOD
8192 112.03
8192 112.595
1048576 118.53
1048576 119.244
32768 121.926
32768 123.727
1048576 124.03
1048576 122.733
8192 109.825
8192 110.177
32768 123.433
32768 123.36
EOD
plot $s0 with linespoints lw 2 title 'read tcp mtu1500 qd16', \
     $s1 with linespoints lw 2 title 'read tcp mtu9000 qd16', \
     $s2 with linespoints lw 2 title 'read udp pacing auto mtu1500 qd16', \
     $s3 with linespoints lw 2 title 'read udp pacing auto mtu9000 qd16', \
     $s4 with linespoints lw 2 title 'read udp pacing off mtu1500 qd16', \
     $s5 with linespoints lw 2 title 'read udp pacing off mtu9000 qd16', \
     $s6 with linespoints lw 2 title 'write tcp mtu1500 qd16', \
     $s7 with linespoints lw 2 title 'write tcp mtu9000 qd16', \
     $s8 with linespoints lw 2 title 'write udp pacing auto mtu1500 qd16', \
     $s9 with linespoints lw 2 title 'write udp pacing auto mtu9000 qd16', \
     $s10 with linespoints lw 2 title 'write udp pacing off mtu1500 qd16', \
     $s11 with linespoints lw 2 title 'write udp pacing off mtu9000 qd16', \
     $pref with points pt 6 ps 3 lw 2 lc rgb 'black' title 'bs pref: a mount without rsize/wsize'
