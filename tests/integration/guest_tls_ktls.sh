# Runs in the lab guest (mount-run --script) with GUEST_DIR set, $MNT mounted
# with xprtsec=tls from the nfs3d that guest_tls_server.sh started in the
# guest: 8 MiB written (WRITEs spliced from the kTLS socket) and read back
# after dropping the caches (READ replies by sendfile through kTLS), md5
# compared; the server's log copied to $OUT.
set -x
dd if=/dev/urandom of="$OUT/data" bs=1M count=8 status=none
want=$(md5sum < "$OUT/data" | cut -d' ' -f1)
dd if="$OUT/data" of="$MNT/big" bs=1M conv=fsync status=none
sync
echo 3 > /proc/sys/vm/drop_caches
[ "$(md5sum < "$MNT/big" | cut -d' ' -f1)" = "$want" ]
[ "$(md5sum < "$GUEST_DIR/export/big" | cut -d' ' -f1)" = "$want" ]
cp "$GUEST_DIR/nfs3d.log" "$OUT/nfs3d.log"
echo done > "$OUT/done"
