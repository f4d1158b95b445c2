#!/bin/bash
# Per-origin views with several clients at once: the real Linux kernel client
# in the lab VM (10.200.0.2, as root) writes and reads a file while two
# loaders inside the lab namespace send GETATTR/LOOKUP from 10.200.0.3 (uid
# 1000) and 10.200.0.4 (uid 2000). nfs3stat --clients/--exports/--users must
# list each of them, and the kernel client's WRITE/READ bytes.
# Usage: lab_origins_test.sh NFS3D_BINARY NFS3STAT_BINARY
TEST_NAME=lab_origins
source "$(dirname "$0")/lib.sh"

NFS3D=$1
NFS3STAT=$2
[ -x "$NFS3D" ] && [ -x "$NFS3STAT" ] || fail "usage: $0 NFS3D NFS3STAT"
export NFS_LAB_NS=nfs3d-origins NFS_LAB_TAP=nfs3dorig0

trap lab_cleanup EXIT
make_lab_export
chmod 777 "$WORK/export"
write_conf "$WORK/nfs3d.conf" "$WORK/exports" "$WORK/state" on
lab_start_nfs3d "$NFS3D" 100003 3
sock="unix:$WORK/state/nfs3d.sock"

for a in 10.200.0.3 10.200.0.4; do "$LAB" exec -- ip addr add "$a/32" dev lo; done
"$LAB" exec -- python3 "$REPO/tests/stats/origin_load.py" 10.200.0.3 2049 20048 \
  "$WORK/export" 1000 900 200 > "$WORK/load3.log" 2>&1 &
PIDS+=($!)
"$LAB" exec -- python3 "$REPO/tests/stats/origin_load.py" 10.200.0.4 2049 20048 \
  "$WORK/export" 2000 900 20 > "$WORK/load4.log" 2>&1 &
PIDS+=($!)

cat > "$WORK/io.sh" <<'EOS'
dd if=/dev/zero of="$MNT/f" bs=1M count=8 conv=fsync 2>&1
echo 3 > /proc/sys/vm/drop_caches
md5sum "$MNT/f"
ls -la "$MNT"
EOS
log "kernel client writes and reads 8 MiB while two loaders run"
lab_mount_run "$WORK/mount.log" --export "$WORK/export" --proto tcp --timeout 600 \
    --script "$WORK/io.sh" \
  || { cat "$WORK/mount.log" >&2; tail -20 "$WORK/nfs3d.log" >&2; fail "mount-run"; }

clients=$("$NFS3STAT" --server "$sock" --clients) || fail "nfs3stat --clients"
exports=$("$NFS3STAT" --server "$sock" --exports) || fail "nfs3stat --exports"
users=$("$NFS3STAT" --server "$sock" --users) || fail "nfs3stat --users"
printf '%s\n\n%s\n\n%s\n' "$clients" "$exports" "$users" >&2
for a in 10.200.0.2 10.200.0.3 10.200.0.4; do
  echo "$clients" | grep -q "^$a " || fail "client $a missing"
done
# The kernel client moved the file's data: 8 MiB written (and read back).
echo "$clients" | awk '$1 == "10.200.0.2" && $5 ~ /^8\.0M$/ { ok = 1 } END { exit !ok }' \
  || fail "10.200.0.2 did not write 8 MiB"
echo "$exports" | grep -q "^$WORK/export " || fail "export missing"
for u in 0 1000 2000; do echo "$users" | grep -q "^$u " || fail "user $u missing"; done
log "PASS: kernel client and two loaders listed per client, export and user"
