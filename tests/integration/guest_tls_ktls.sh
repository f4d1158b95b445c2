# Runs in the lab guest (mount-run --script) with GUEST_DIR set, $MNT mounted
# with xprtsec=tls from the nfs3d that guest_tls_server.sh started in the
# guest: 8 MiB written (WRITEs spliced from the kTLS socket) and read back
# after dropping the caches (READ replies by sendfile through kTLS), md5
# compared; then nfs3d --takeover under a busy mount (busy_write, from
# guest_tls_busy.sh), and the client's close_notify at unmount read by the
# successor; the servers' logs copied to $OUT.
set -x
dd if=/dev/urandom of="$OUT/data" bs=1M count=8 status=none
want=$(md5sum < "$OUT/data" | cut -d' ' -f1)
dd if="$OUT/data" of="$MNT/big" bs=1M conv=fsync status=none
sync
echo 3 > /proc/sys/vm/drop_caches
[ "$(md5sum < "$MNT/big" | cut -d' ' -f1)" = "$want" ]
[ "$(md5sum < "$GUEST_DIR/export/big" | cut -d' ' -f1)" = "$want" ]

# nfs3d --takeover while busy_write keeps the mount busy: the kTLS
# connection is handed over (the client's port to 2049 is the same before
# and after: no reconnect), every file read back has its md5.
client_ports() {
  ss -tnH state established '( dport = :2049 )' | awk '{print $3}' | sort | tr '\n' ' '
}
busy_done() { [ -e "$OUT/stop" ]; }
# wait_busy N: until busy-N is there (busy-(N-1) is whole), while the writer
# runs; at most 2 minutes.
wait_busy() {
  for _ in $(seq 1 600); do
    [ -e "$MNT/busy-$1" ] && return 0
    kill -0 "$writer" 2>/dev/null || return 1
    sleep 0.2
  done
  return 1
}
# 2 MiB files, at most 60: the export is a small tmpfs.
busy_write "$MNT" 60 2 &
writer=$!
wait_busy 3
client_ports > "$OUT/ss-before"
old=$(cat "$GUEST_DIR/nfs3d.pid")
"$NFS3D" --config "$GUEST_DIR/nfs3d.conf" --foreground --takeover \
  2> "$GUEST_DIR/nfs3d-successor.log" &
for _ in $(seq 1 300); do kill -0 "$old" 2>/dev/null || break; sleep 0.2; done
if kill -0 "$old" 2>/dev/null; then echo "the old nfs3d did not exit"; exit 1; fi
n=$(ls "$MNT" | grep -c '^busy-')
wait_busy $((n + 2))  # busy-(n+1), begun after the handover, is whole
client_ports > "$OUT/ss-after"
touch "$OUT/stop"
wait "$writer"
cat "$OUT/ss-before" "$OUT/ss-after"
[ -n "$(cat "$OUT/ss-before")" ]
[ "$(cat "$OUT/ss-before")" = "$(cat "$OUT/ss-after")" ]
sync
echo 3 > /proc/sys/vm/drop_caches
md5sum -c --quiet "$OUT/busy.md5"
# A control record after the handover: unmounting, the kernel client ends
# its TLS session with a close_notify alert before it closes the socket; the
# successor reads it as the predecessor would have (EIO, then the record
# type) and closes. The export is mounted again for mount-run's unmount.
umount "$MNT"
for _ in $(seq 1 50); do
  grep -q "closing TLS connection" "$GUEST_DIR/nfs3d-successor.log" && break
  sleep 0.2
done
source /lab/env
mount -t nfs -o "$LAB_MOUNT_OPTS" "$LAB_SERVER:$LAB_EXPORT" "$MNT"
cp "$GUEST_DIR/nfs3d.log" "$OUT/nfs3d.log"
cp "$GUEST_DIR/nfs3d-successor.log" "$OUT/nfs3d-successor.log"
echo done > "$OUT/done"
