set terminal png size 960,600
set output '/work/main/docs/nfs3bench-lab-1gbit.png'
set title 'nfs3bench lab, rate 1gbit, 16 calls in flight'
set xlabel 'bytes per READ/WRITE call'
set ylabel 'MB/s (10^6 bytes/s)'
set yrange [0:*]
set logscale x 2
set grid
set key outside right
set xtics ('8k' 8192, '32k' 32768, '1m' 1048576)
$s0 << EOD
8192 116.841
32768 118.736
1048576 111.85
EOD
$s1 << EOD
8192 121.592
32768 123.54
1048576 121.935
EOD
$s2 << EOD
8192 108.9
32768 89.99
EOD
$s3 << EOD
8192 118.481
32768 123.981
EOD
$s4 << EOD
8192 116.577
32768 118.774
1048576 114.727
EOD
$s5 << EOD
8192 120.878
32768 123.275
1048576 123.588
EOD
$s6 << EOD
8192 119.577
32768 121.478
EOD
$s7 << EOD
8192 122.337
32768 123.962
EOD
$pref << EOD
8192 119.743
8192 93.5651
1048576 119.459
1048576 118.863
32768 123.982
32768 123.979
1048576 120.138
1048576 118.587
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
