#!/bin/bash
# The real Linux kernel client (../shared/lab) on a CephFS export: a one-node
# Ceph cluster (tests/fixtures/ceph-cluster.sh) runs inside the lab's network
# namespace beside nfs3d, which serves /ceph (cephfs=/lab-PID); the guest
# mounts it over TCP and over UDP and runs guest_fileops.sh, as the POSIX
# export's lab test does. The md5 the guest wrote is checked against the file
# as nfs3d serves it (nfs-cat from inside the namespace).
# The TCP run also mounts /cephq (cephfs=/lab-q: a sub-directory export
# mounted as a cephx user whose caps allow only /lab-q, with a directory
# quota and a snapshot) and runs guest_cephfs_features.sh there: .snap
# listing and a snapshot file's old content, df showing the quota,
# setfacl/getfacl, cp -a keeping modes, times and ACLs, and quota -v showing
# the quota through RQUOTA.
# Usage: lab_cephfs_test.sh NFS3D_BINARY CEPHFS_LAB_TOOL
TEST_NAME=lab_cephfs
source "$(dirname "$0")/lib.sh"

NFS3D=$(readlink -f "$1")
[ -x "$NFS3D" ] || fail "no nfs3d binary at $NFS3D"
TOOL=$(readlink -f "$2")
[ -x "$TOOL" ] || fail "no cephfs_lab_tool at $TOOL"
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

# /lab-q: what an administrator sets up with a native client.
QUOTA_BYTES=$((64 << 20))
ceph_tool() { "$LAB" exec -- "$TOOL" "$WORK/ceph" "$@" || fail "cephfs_lab_tool $*"; }
ceph_tool mkdir /lab-q 0777
ceph_tool write /lab-q/snapped "before snapshot"
ceph_tool mksnap /lab-q s1
ceph_tool write /lab-q/snapped "after snapshot"
ceph_tool setxattr /lab-q ceph.quota.max_bytes "$QUOTA_BYTES"
ceph_tool setxattr /lab-q ceph.quota.max_files 1000
"$LAB" exec -- ceph -c "$WORK/ceph/ceph.conf" -k "$WORK/ceph/keyring" -n client.admin \
    --connect-timeout 20 fs authorize cephfs client.labq /lab-q rw > "$WORK/labq.keyring" \
  || fail "ceph fs authorize"
labq="cephfs=/lab-q,cephfs_user=labq,cephfs_keyring=$WORK/labq.keyring"
{
  echo "/ceph 10.200.0.0/24(rw,no_root_squash,insecure,cephfs=/) 127.0.0.1(rw,no_root_squash,insecure,cephfs=/)"
  echo "/cephq 10.200.0.0/24(rw,no_root_squash,insecure,$labq)"
} > "$WORK/exports"
write_conf "$WORK/nfs3d.conf" "$WORK/exports" "$WORK/state" auto
ceph_conf_section "$WORK/nfs3d.conf"
"$LAB" exec -- "$NFS3D" --config "$WORK/nfs3d.conf" --foreground 2> "$WORK/nfs3d.log" &
PIDS+=($!)
wait_for "$LAB" exec -- rpcinfo -T tcp 127.0.0.1 100003 3 \
  || { cat "$WORK/nfs3d.log" >&2; fail "nfs3d did not come up"; }

run_one() {
  local proto=$1 expect_size=$2 script=$3
  local out="$WORK/out-$proto"
  log "mount /ceph over $proto"
  lab_mount_run "$out.log" --export /ceph --proto "$proto" --out-dir "$out" \
      --timeout 600 --script "$script" \
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

# The CephFS features' findings (guest_cephfs_features.sh).
check_features() {
  local out=$1
  grep -qx s1 "$out/snap_list" || fail ".snap does not list s1: $(cat "$out/snap_list")"
  [ "$(cat "$out/snap_content")" = "before snapshot" ] || fail "snapshot file: $(cat "$out/snap_content")"
  [ "$(cat "$out/live_content")" = "after snapshot" ] || fail "live file: $(cat "$out/live_content")"
  [ ! -e "$out/snap_writable" ] || fail "a snapshot was writable"
  log "PASS: .snap lists s1, its file has the old content, read-only"
  local size
  size=$(awk '{print $1}' "$out/df")
  [ "$size" = "$QUOTA_BYTES" ] || fail "df size $size, not the quota $QUOTA_BYTES"
  log "PASS: df shows the directory quota ($size bytes)"
  grep -qx "user:1234:rw-" "$out/getfacl" && grep -qx "group:2345:r--" "$out/getfacl" \
    || fail "getfacl after setfacl: $(cat "$out/getfacl")"
  log "PASS: setfacl/getfacl round trip"
  [ "$(cat "$out/src_stat")" = "$(cat "$out/dst_stat")" ] \
    || fail "cp -a: mode/mtime $(cat "$out/src_stat") became $(cat "$out/dst_stat")"
  [ "$(cat "$out/src_stat")" = "640 1577934245" ] || fail "source mode/mtime: $(cat "$out/src_stat")"
  cmp -s "$out/src_acl" "$out/dst_acl" && grep -qx "user:1234:r--" "$out/dst_acl" \
    || fail "cp -a ACL: $(cat "$out/src_acl") became $(cat "$out/dst_acl")"
  log "PASS: cp -a kept mode, mtime and ACL"
  # quota(1) prints the limits in 1 KiB blocks: the export's 64 MiB.
  grep -q "/cephq" "$out/quota" && grep -q " $((QUOTA_BYTES / 1024)) " "$out/quota" \
    || fail "quota -v: $(cat "$out/quota") $(cat "$out/quota.err")"
  log "PASS: quota -v shows the CephFS quota through RQUOTA: $(grep -A1 /cephq "$out/quota" | tr -s ' \n' ' ')"
}

cat "$(dirname "$0")/guest_fileops.sh" "$(dirname "$0")/guest_cephfs_features.sh" > "$WORK/tcp.sh"
run_one tcp 262144 "$WORK/tcp.sh"
check_features "$WORK/out-tcp"
run_one udp 16384 "$(dirname "$0")/guest_fileops.sh"
log "all passed"
