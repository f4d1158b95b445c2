#!/bin/bash
# What the Linux client does when the server refuses a WRITE with
# NFS3ERR_NOSPC after write(2) had succeeded (docs/durability.md, "Chaos
# soak", findings): nfs3d exports a 64 MiB ext4 image filled up on the host
# but for a 1 MiB file; the guest writes past its end, truncates, reads the
# range back and fsyncs (tests/chaos/guest_enospc_probe.py). Seen with 6.1:
# the write returns 65536, ftruncate 0, the read the server's zeros, fsync
# ENOSPC. Needs root and the lab (NFS_LAB_NS, default nfs3d-chaos2).
# Usage: enospc_probe.sh [NFS3D]
TEST_NAME=enospc_probe
source "$(dirname "$0")/../integration/lib.sh"
NFS3D=${1:-$REPO/build/daemon/nfs3d}
[ -x "$NFS3D" ] || fail "no nfs3d at $NFS3D"
export NFS_LAB_NS=${NFS_LAB_NS:-nfs3d-chaos2} NFS_LAB_TAP=${NFS_LAB_TAP:-nfs3dch1}
cleanup() {
  stop_started
  "$LAB" down > /dev/null 2>&1 || true
  umount "$WORK/export" 2> /dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT
make_lab_export
truncate -s 64M "$WORK/img"
mkfs.ext4 -q -m 0 -F "$WORK/img"
mount -o loop "$WORK/img" "$WORK/export"
chmod 777 "$WORK/export"
head -c 1048576 /dev/zero | tr '\0' A > "$WORK/export/f"
sync
fallocate -l "$(df --output=avail -B1 "$WORK/export" | tail -1)" "$WORK/export/fill" 2> /dev/null || true
dd if=/dev/zero of="$WORK/export/fill2" bs=4k status=none 2> /dev/null || true
log "export full: $(df --output=avail -B1 "$WORK/export" | tail -1) bytes left"
write_conf "$WORK/nfs3d.conf" "$WORK/exports" "$WORK/state" on
lab_start_nfs3d "$NFS3D" 100003 3
"$LAB" mount-run --export "$WORK/export" --proto tcp --port 2049 --mountport 20048 --opts hard \
  -- "python3 $REPO/tests/chaos/guest_enospc_probe.py \$MNT/f" 2>&1 \
  | sed -n '/guest command output/,/end of guest command output/p'
log "the server's file: $(stat -c %s "$WORK/export/f") bytes"
