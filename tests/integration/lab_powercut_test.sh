#!/bin/bash
# A power cut of the server's machine (../shared/lab, README "Disks and
# power cuts"): nfs3d runs inside the lab VM on an ext4 file system on a
# virtio disk (made on the host), exporting a sub-directory. nfs3powercut in
# the lab namespace writes FILE_SYNC, UNSTABLE+COMMIT and namespace changes
# (create, rename, link, chmod, remove), journaling every reply, and the VM
# is killed at a seeded moment. The VM boots again on the same image, nfs3d
# starts, and the checker finds every acknowledged-stable byte and every
# acknowledged namespace change, UNSTABLE data not committed either there or
# under a new write verifier, and the handles from before the cut resolving.
# Two cuts on one image: all calls mixed, then namespace changes alone.
# bench/powercut.sh runs the matrix (ext4 and XFS, many cuts).
# Usage: lab_powercut_test.sh NFS3D_BINARY NFS3POWERCUT_BINARY [SEED] [ext4|xfs] [--kernel V]
TEST_NAME=lab_powercut
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/powercut_lib.sh"

NFS3D=$1
NFS3POWERCUT=$2
SEED=${3:-46}
FS=${4:-ext4}
shift $(($# < 4 ? $# : 4))
BOOT_ARGS=("$@")  # e.g. --kernel 6.12
[ -x "$NFS3D" ] || fail "no nfs3d binary at $NFS3D"
[ -x "$NFS3POWERCUT" ] || fail "no nfs3powercut binary at $NFS3POWERCUT"
export NFS_LAB_NS=${NFS_LAB_NS:-nfs3d-pc} NFS_LAB_TAP=${NFS_LAB_TAP:-nfs3dpc0}
PC_QEMU_PIDFILE=/run/nfs-lab/$NFS_LAB_NS/qemu.pid

cleanup() {
  pc_cut
  lab_cleanup
}
trap cleanup EXIT
make_lab_data
cp "$NFS3POWERCUT" "$DATA/nfs3powercut"
NFS3POWERCUT=$DATA/nfs3powercut
pc_setup "$DATA" "$NFS3D"
pc_make_image "$DATA/disk.img" "$FS"
"$LAB" up --no-rpcbind > /dev/null

RANDOM=$SEED
pc_boot "$DATA/disk.img" "$DATA/boot0.log" "${BOOT_ARGS[@]}"
log "$FS: nfs3d answers in the guest ${PC_RECOVERY_MS} ms after the VM started"

# cut N WORKLOAD: a writer on the running VM, the cut at a seeded moment, the
# VM booted again, the check. "meta" alone (no data fsync commits the
# journal for it) caught nfs3d acknowledging namespace changes that a power
# cut then lost (docs/durability.md).
cut() {
  local n=$1 workload=$2 delay_ms=$((1500 + RANDOM % 6000)) rc=0
  log "cut $n: $workload (seed $SEED$n), power cut after ${delay_ms} ms"
  pc_write "$DATA/journal$n" "c$n" "$SEED$n" "$workload" "$delay_ms"
  log "power cut: $(grep -c "^done" "$DATA/journal$n") calls acknowledged before it"
  pc_boot "$DATA/disk.img" "$DATA/boot$n.log" "${BOOT_ARGS[@]}"
  log "booted again: nfs3d answers ${PC_RECOVERY_MS} ms after the VM started"
  pc_check "$DATA/journal$n" "$DATA/check$n" || rc=$?
  if [ $rc -ne 0 ]; then
    cat "$DATA/check$n.err" >&2
    fail "check after cut $n failed (status $rc): $(cat "$DATA/check$n")"
  fi
  log "$(cat "$DATA/check$n")"
  grep -q ' stable_bytes_lost=0 ' "$DATA/check$n" || fail "acknowledged bytes lost"
  grep -q ' namespace_lost=0 ' "$DATA/check$n" || fail "acknowledged namespace changes lost"
  ! grep -q '^bytes_verified=0 ' "$DATA/check$n" || [ "$workload" = meta ] || fail "nothing was verified"
  ! grep -q ' namespace_changes=0 ' "$DATA/check$n" || fail "no namespace change was verified"
}
cut 1 mixed
cut 2 meta
pc_cut
log "PASS"
