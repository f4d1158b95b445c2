set terminal png size 960,600
set output '/var/tmp/lab10.png'
set title 'nfs3bench lab, rate 10gbit, 16 calls in flight'
set xlabel 'bytes per READ/WRITE call'
set ylabel 'MB/s (10^6 bytes/s)'
set yrange [0:*]
set logscale x 2
set grid
set key outside right
set xtics ('8k' 8192, '32k' 32768, '1m' 1048576)
$s0 << EOD
1048576 1027.42
EOD
$s1 << EOD
1048576 1117.47
EOD
$s2 << EOD
8192 151.109
32768 330.531
EOD
$s3 << EOD
32768 563.406
EOD
$s4 << EOD
1048576 1134.81
EOD
$s5 << EOD
1048576 1177.83
EOD
$s6 << EOD
8192 225.049
32768 418.777
EOD
$s7 << EOD
32768 632.07
EOD
$pref << EOD
8192 225.049
8192 151.109
1048576 1092.83
1048576 1063.62
32768 465.727
32768 569.689
1048576 1122.77
1048576 1068.84
EOD
plot $s0 with linespoints lw 2 title 'read tcp mtu1500 qd16', \
     $s1 with linespoints lw 2 title 'read tcp mtu9000 qd16', \
     $s2 with linespoints lw 2 title 'read udp mtu1500 qd16', \
     $s3 with linespoints lw 2 title 'read udp mtu9000 qd16', \
     $s4 with linespoints lw 2 title 'write tcp mtu1500 qd16', \
     $s5 with linespoints lw 2 title 'write tcp mtu9000 qd16', \
     $s6 with linespoints lw 2 title 'write udp mtu1500 qd16', \
     $s7 with linespoints lw 2 title 'write udp mtu9000 qd16', \
     $pref with points pt 6 ps 3 lw 2 lc rgb 'black' title 'bs pref: a mount without rsize/wsize'
