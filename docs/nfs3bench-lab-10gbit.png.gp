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
1048576 928.544
EOD
$s1 << EOD
1048576 1073.15
EOD
$s2 << EOD
8192 72.9141
32768 228.061
EOD
$s3 << EOD
32768 893.903
EOD
$s4 << EOD
1048576 989.779
EOD
$s5 << EOD
1048576 1152.18
EOD
$s6 << EOD
8192 146.579
32768 356.971
EOD
$s7 << EOD
32768 836.227
EOD
$pref << EOD
8192 146.579
8192 72.9141
1048576 914.098
1048576 1010.5
32768 874.768
32768 687.167
1048576 1107.42
1048576 1076.49
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
