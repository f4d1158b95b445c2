set terminal png size 960,600
set output 'docs/nfs3bench-lab-10gbit.png'
set title 'nfs3bench lab, rate 10gbit, 16 calls in flight'
set xlabel 'bytes per READ/WRITE call'
set ylabel 'MB/s (10^6 bytes/s)'
set yrange [0:*]
set logscale x 2
set grid
set key outside right
set xtics ('8k' 8192, '32k' 32768, '1m' 1048576)
$s0 << EOD
1048576 1169.59
EOD
$s1 << EOD
1048576 1022.46
EOD
$s2 << EOD
8192 178.905
32768 314.615
EOD
$s3 << EOD
32768 930.423
EOD
$s4 << EOD
1048576 1153.95
EOD
$s5 << EOD
1048576 1105.36
EOD
$s6 << EOD
8192 242.591
32768 374.959
EOD
$s7 << EOD
32768 1084.86
EOD
$pref << EOD
8192 242.591
8192 178.905
1048576 1089.8
1048576 975.169
32768 1075.8
32768 760.61
1048576 1147.19
1048576 1160.41
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
