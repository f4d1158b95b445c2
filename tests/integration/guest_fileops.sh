# Runs in the lab guest on the NFS mount $MNT (bash -e -o pipefail).
# $OUT is copied back to the host. Each step prints what it checked.
d=$MNT/work
mkdir "$d"
cd "$d"

echo "== dd 20 MB"
dd if=/dev/urandom of=/tmp/src bs=1M count=20 status=none
md5sum < /tmp/src | cut -d' ' -f1 > "$OUT/md5"
dd if=/tmp/src of="$MNT/big" bs=1M conv=fsync 2>&1 | tail -n 1
echo 3 > /proc/sys/vm/drop_caches
dd if="$MNT/big" of=/tmp/back bs=1M 2>&1 | tail -n 1
cmp /tmp/src /tmp/back
echo "read-back matches"

echo "== create/rename/link/symlink/readlink"
echo hello > a
mv a b
ln b hard
ln -s b soft
[ "$(readlink soft)" = b ]
[ "$(cat soft)" = hello ]
[ "$(stat -c %h b)" = 2 ]
rm hard
[ "$(stat -c %h b)" = 1 ]

echo "== tree of 1000 entries"
mkdir -p tree
for i in $(seq 0 9); do
  mkdir -p "tree/d$i"
  for j in $(seq 0 98); do : > "tree/d$i/f$j"; done
done
n=$(ls -lR tree | grep -c '^[-d]')
echo "ls -lR counted $n entries"
[ "$n" = 1000 ]
echo "$n" > "$OUT/tree_count"

echo "== chmod/chown/truncate/touch -d"
: > attrs
chmod 640 attrs
[ "$(stat -c %a attrs)" = 640 ]
chown 1234:4321 attrs
[ "$(stat -c %u:%g attrs)" = 1234:4321 ]
truncate -s 12345 attrs
[ "$(stat -c %s attrs)" = 12345 ]
touch -d "2001-02-03 04:05:06 UTC" attrs
[ "$(stat -c %Y attrs)" = 981173106 ]

echo "== mkfifo"
mkfifo fifo
[ -p fifo ]

echo "== rm -rf"
cd /
rm -rf "$d"
[ ! -e "$d" ]
ls -la "$MNT"
# TCP connections the mount uses (nconnect=N opens N).
ss -Htn state established '( dport = :2049 )' | wc -l > "$OUT/nfs_connections"
echo "fileops OK over $(cat "$OUT/nfs_connections") TCP connection(s) to port 2049"
