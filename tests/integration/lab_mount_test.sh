#!/bin/bash
# Acceptance test with the real Linux kernel NFS client (../shared/lab):
# mounts nfs3d over TCP and over UDP, once through the portmapper and (in the
# `own` mode) once with port/mountport given, runs guest_fileops.sh on each mount, compares the md5
# of the written file on both sides, and checks that /proc/mounts shows the
# rsize/wsize that nfs3d.conf set for that transport. The TCP mount with
# port/mountport given uses nconnect=4: the client spreads its calls over four
# connections, which must all be in use.
# The guest kernel is NFS_LAB_KERNEL (6.1 by default); on a TCP-only kernel
# (5.10, 6.12) the UDP mounts are skipped, and the test says so.
# Usage: lab_mount_test.sh NFS3D_BINARY [portmapper-mode: own|rpcbind]
TEST_NAME=lab_mount
source "$(dirname "$0")/lib.sh"

NFS3D=$1
MODE=${2:-own}
[ -x "$NFS3D" ] || fail "no nfs3d binary at $NFS3D"
# NFS_LAB_NS/NFS_LAB_TAP may name another lab namespace (bench/kernels.sh).
export NFS_LAB_NS=${NFS_LAB_NS:-nfs3d-it} NFS_LAB_TAP=${NFS_LAB_TAP:-nfs3dit0}

trap lab_cleanup EXIT
make_lab_export
write_conf "$WORK/nfs3d.conf" "$WORK/exports" "$WORK/state" auto

if [ "$MODE" = rpcbind ]; then
  "$LAB" up >/dev/null     # the lab starts rpcbind in its namespace
else
  "$LAB" up --no-rpcbind >/dev/null
fi
"$LAB" exec -- "$NFS3D" --config "$WORK/nfs3d.conf" --foreground 2> "$WORK/nfs3d.log" &
PIDS+=($!)
wait_for "$LAB" exec -- rpcinfo -T tcp 127.0.0.1 100003 3 \
  || { cat "$WORK/nfs3d.log" >&2; fail "nfs3d did not come up"; }
"$LAB" exec -- rpcinfo -p 127.0.0.1 >&2

clear_export() { rm -rf "${WORK:?}/export/"*; }
LAB_RETRY_RESET=clear_export

run_one() {
  local proto=$1 how=$2 expect_size=$3 connections=${4:-1}
  local out="$WORK/out-$proto-$how" ports=() opts=()
  [ "$proto" = tcp ] || lab_kernel_has_udp "the mount test ($how)" || return 0
  [ "$how" = ports ] && ports=(--port 2049 --mountport 20048)
  [ "$proto" = tcp ] && [ "$connections" -gt 1 ] && opts=(--opts "nconnect=$connections")
  [ "$proto" = udp ] && connections=0
  log "mount over $proto ($how)"
  lab_mount_run "$out.log" --export "$WORK/export" --proto "$proto" "${ports[@]}" "${opts[@]}" --out-dir "$out" \
      --timeout 600 --script "$(dirname "$0")/guest_fileops.sh" \
    || { cat "$out.log" >&2; tail -50 "$WORK/nfs3d.log" >&2; fail "mount-run over $proto ($how)"; }
  local line
  line=$(grep "effective mount:" "$out.log" | head -n 1)
  log "mount line: $line"
  [[ $line == *"rsize=$expect_size"* && $line == *"wsize=$expect_size"* ]] \
    || { cat "$out.log" >&2; fail "expected rsize=wsize=$expect_size over $proto, got: $line"; }
  local server_md5
  server_md5=$(md5sum < "$WORK/export/big" | cut -d' ' -f1)
  [ "$server_md5" = "$(cat "$out/md5")" ] || fail "md5 mismatch over $proto ($how)"
  [ "$(cat "$out/tree_count")" = 1000 ] || fail "tree count over $proto ($how)"
  [ ! -e "$WORK/export/work" ] || fail "rm -rf left files behind over $proto"
  [ "$(cat "$out/nfs_connections")" = "$connections" ] \
    || fail "expected $connections TCP connection(s) over $proto ($how), the guest saw $(cat "$out/nfs_connections")"
  rm -f "$WORK/export/big"
  log "PASS over $proto ($how): md5 $server_md5, rsize/wsize $expect_size"
}

run_one tcp portmapper 262144
run_one udp portmapper 16384
# Mounts with port/mountport given never ask a portmapper: the same in both
# modes, so run once (CI time: two VM runs fewer).
if [ "$MODE" = own ]; then
  run_one tcp ports 262144 4  # nconnect=4
  run_one udp ports 16384
fi
log "all passed"
