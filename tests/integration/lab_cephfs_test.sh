#!/bin/bash
# The real Linux kernel client (../shared/lab) on a CephFS export: a one-node
# Ceph cluster (tests/fixtures/ceph-cluster.sh) runs inside the lab's network
# namespace beside nfs3d, which serves /ceph (cephfs=/lab-PID); the guest
# mounts it over TCP and over UDP and runs guest_fileops.sh, as the POSIX
# export's lab test does. The md5 the guest wrote is checked against the file
# as nfs3d serves it (nfs-cat from inside the namespace).
# Usage: lab_cephfs_test.sh NFS3D_BINARY
TEST_NAME=lab_cephfs
source "$(dirname "$0")/lib.sh"

NFS3D=$(readlink -f "$1")
[ -x "$NFS3D" ] || fail "no nfs3d binary at $NFS3D"
export NFS_LAB_NS=nfs3d-it NFS_LAB_TAP=nfs3dit0

cleanup() {
  stop_started
  lab_stop_ceph
  lab_cleanup
}
trap cleanup EXIT
make_work
mkdir -p "$WORK/state"
"$LAB" up --no-rpcbind >/dev/null
lab_start_ceph

echo "/ceph 10.200.0.0/24(rw,no_root_squash,insecure,cephfs=/) 127.0.0.1(rw,no_root_squash,insecure,cephfs=/)" \
  > "$WORK/exports"
write_conf "$WORK/nfs3d.conf" "$WORK/exports" "$WORK/state" auto
ceph_conf_section "$WORK/nfs3d.conf"
"$LAB" exec -- "$NFS3D" --config "$WORK/nfs3d.conf" --foreground 2> "$WORK/nfs3d.log" &
PIDS+=($!)
wait_for "$LAB" exec -- rpcinfo -T tcp 127.0.0.1 100003 3 \
  || { cat "$WORK/nfs3d.log" >&2; fail "nfs3d did not come up"; }

run_one() {
  local proto=$1 expect_size=$2
  local out="$WORK/out-$proto"
  log "mount /ceph over $proto"
  lab_mount_run "$out.log" --export /ceph --proto "$proto" --out-dir "$out" \
      --timeout 600 --script "$(dirname "$0")/guest_fileops.sh" \
    || { cat "$out.log" >&2; tail -50 "$WORK/nfs3d.log" >&2; fail "mount-run over $proto"; }
  local line
  line=$(grep "effective mount:" "$out.log" | head -n 1)
  [[ $line == *"rsize=$expect_size"* && $line == *"wsize=$expect_size"* ]] \
    || { cat "$out.log" >&2; fail "expected rsize=wsize=$expect_size over $proto, got: $line"; }
  local served
  served=$("$LAB" exec -- nfs-cat "nfs://127.0.0.1/ceph/big?version=3" | md5sum | cut -d' ' -f1)
  [ "$served" = "$(cat "$out/md5")" ] || fail "md5 mismatch over $proto"
  [ "$(cat "$out/tree_count")" = 1000 ] || fail "tree count over $proto"
  "$LAB" exec -- nfs-ls "nfs://127.0.0.1/ceph?version=3" | grep -q ' work$' \
    && fail "rm -rf left files behind over $proto"
  log "PASS over $proto: md5 $served, rsize/wsize $expect_size"
}

run_one tcp 262144
run_one udp 16384
log "all passed"
