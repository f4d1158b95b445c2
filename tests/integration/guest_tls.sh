# Runs in the lab guest (mount-run --script) after a line that sets MODE
# (tls or mtls), SERVER, EXPORT_TLS and EXPORT_MTLS: with $MNT mounted with
# xprtsec=$MODE (and `lock`: NLM beside it, in clear text as Linux's lockd
# sends it), writes a file of random bytes and a marker file, copies a tree
# with cp -a, takes a lock, checks everything read back after dropping the
# caches, and checks that the server refuses what its xprtsec= policy does
# not admit.
set -x
dd if=/dev/urandom of="$OUT/data" bs=1M count=8 status=none
md5sum < "$OUT/data" | cut -d' ' -f1 > "$OUT/md5"
dd if="$OUT/data" of="$MNT/big-$MODE" bs=1M conv=fsync status=none
# A marker the capture on the host must not find in clear.
printf "nfs3d-tls-marker-$MODE\n%.0s" $(seq 1 10000) > "$MNT/marker-$MODE"
mkdir -p "$OUT/tree/a/b"
echo one > "$OUT/tree/a/one"
echo two > "$OUT/tree/a/b/two"
cp -a "$OUT/tree" "$MNT/tree-$MODE"
# A lock on the file (an NLM LOCK to the server): held, another process of
# this client is refused it, and it is given back.
flock -x "$MNT/big-$MODE" -c "! flock -n -x '$MNT/big-$MODE' true"
flock -n -x "$MNT/big-$MODE" true
sync
echo 3 > /proc/sys/vm/drop_caches
[ "$(md5sum < "$MNT/big-$MODE" | cut -d' ' -f1)" = "$(cat "$OUT/md5")" ]
diff -r "$OUT/tree" "$MNT/tree-$MODE"
grep -q "xprtsec=$MODE" /proc/mounts

# The other export and a plaintext mount are refused (NFS3ERR_ACCES at the
# first NFS call: "access denied by server").
mkdir -p /mnt/other /mnt/plain
if [ "$MODE" = tls ]; then other=$EXPORT_MTLS; else other=$EXPORT_TLS; fi
if mount -t nfs -o vers=3,proto=tcp,nolock,xprtsec=$MODE "$SERVER:$other" /mnt/other; then
  echo "mounted $other with xprtsec=$MODE"; exit 1
fi
own=$EXPORT_TLS
[ "$MODE" = mtls ] && own=$EXPORT_MTLS
if mount -t nfs -o vers=3,proto=tcp,nolock "$SERVER:$own" /mnt/plain; then
  echo "mounted $own in clear text"; exit 1
fi
echo done > "$OUT/done"
