#!/bin/bash
# Crash safety with the real Linux kernel client (../shared/lab): while the
# client writes a file 1 MiB at a time with an fsync after each piece (hard
# mount), nfs3d is killed with SIGKILL and restarted on the same state
# directory. The client must resume by itself, and the file must end up
# byte-identical to its source on the server and as the client reads it back.
# (That a file handle from before the restart keeps working is also checked
# at the RPC level by server_e2e_test HandleSurvivesKill9AndRestart and
# crash_e2e_test.)
# With --cephfs the export is a CephFS one (cephfs=/) of a one-node cluster
# (tests/fixtures/ceph-cluster.sh) started inside the lab namespace, and the server's
# copy is read through NFS (libnfs) instead of from a directory.
# The guest kernel is NFS_LAB_KERNEL (6.1 by default); on a TCP-only kernel
# (5.10, 6.12) the UDP run is skipped, and the test says so.
# Usage: lab_kill_test.sh NFS3D_BINARY [--cephfs] [tcp|udp ...]
TEST_NAME=lab_kill
source "$(dirname "$0")/lib.sh"

NFS3D=$1
shift
CEPHFS=0
if [ "${1:-}" = --cephfs ]; then
  CEPHFS=1
  TEST_NAME=lab_kill_cephfs
  shift
fi
PROTOS=("$@")
[ ${#PROTOS[@]} -gt 0 ] || PROTOS=(tcp udp)
[ -x "$NFS3D" ] || fail "no nfs3d binary at $NFS3D"
export NFS_LAB_NS=${NFS_LAB_NS:-nfs3d-rel} NFS_LAB_TAP=${NFS_LAB_TAP:-nfs3drel0}
MB=40
KILL_AT_MB=12

cleanup() {
  stop_started
  [ "$CEPHFS" = 0 ] || lab_stop_ceph
  lab_cleanup
}
trap cleanup EXIT
make_lab_export
make_lab_data
chmod 777 "$WORK/export"
EXPORT=$WORK/export
if [ "$CEPHFS" = 1 ]; then
  EXPORT=/ceph
  echo "/ceph 10.200.0.0/24(rw,no_root_squash,insecure,cephfs=/) 127.0.0.1(rw,no_root_squash,insecure,cephfs=/)" \
    > "$WORK/exports"
fi
write_conf "$WORK/nfs3d.conf" "$WORK/exports" "$WORK/state" auto  # own portmapper: rpcinfo needs one
[ "$CEPHFS" = 0 ] || ceph_conf_section "$WORK/nfs3d.conf"
head -c $((MB << 20)) /dev/urandom > "$DATA/src"
chmod 644 "$DATA/src"
SRC_MD5=$(md5sum < "$DATA/src" | cut -d' ' -f1)

"$LAB" up --no-rpcbind >/dev/null
[ "$CEPHFS" = 0 ] || lab_start_ceph

# The file F as the server has it: its size, and its md5. F is new for each
# attempt (a second one follows when the guest was starved).
F=f
server_size() {
  if [ "$CEPHFS" = 1 ]; then
    "$LAB" exec -- nfs-ls "nfs://127.0.0.1/ceph?version=3" 2>/dev/null | awk -v f="$F" '$NF == f { print $5 }'
  else
    stat -c %s "$WORK/export/$F" 2>/dev/null
  fi
}
server_md5() {
  if [ "$CEPHFS" = 1 ]; then
    "$LAB" exec -- nfs-cat "nfs://127.0.0.1/ceph/$F?version=3" | md5sum | cut -d' ' -f1
  else
    md5sum < "$WORK/export/$F" | cut -d' ' -f1
  fi
}
NFSD_PID=""
start_nfsd() {
  "$LAB" exec -- "$NFS3D" --config "$WORK/nfs3d.conf" --foreground 2>> "$WORK/nfs3d.log" &
  NFSD_PID=$!
  PIDS+=("$NFSD_PID")
  wait_for "$LAB" exec -- rpcinfo -n 2049 -t 127.0.0.1 100003 3 \
    || { cat "$WORK/nfs3d.log" >&2; fail "nfs3d did not come up"; }
}

# kill_during_write PROTO: one run; returns 0 when it passed, 75 when the
# guest was starved (its NIC stalled or its boot-time timer check panicked:
# host faults, see lab_nic_stalled and lab_boot_starved), fails otherwise.
starved() { lab_nic_stalled "$1" || lab_boot_starved "$1"; }
kill_during_write() {
  local proto=$1 out="$WORK/out-$1"
  rm -rf "$out"
  F=f.$RANDOM
  start_nfsd
  # The guest writes piece by piece; each dd fsyncs its MiB (COMMIT or
  # FILE_SYNC writes), then the whole file is read back after dropping caches.
  local guest_cmd="set -e
for i in \$(seq 0 $((MB - 1))); do
  dd if=$DATA/src of=\$MNT/$F bs=1M skip=\$i seek=\$i count=1 conv=notrunc,fsync status=none
done
sync
echo 3 > /proc/sys/vm/drop_caches
md5sum < \$MNT/$F | cut -d' ' -f1 > \$OUT/md5
cat /proc/self/mountstats > \$OUT/mountstats 2>/dev/null || true"
  log "writing $MB MiB over $proto; nfs3d will be killed at ${KILL_AT_MB} MiB"
  # A normal run takes well under a minute under TCG; the hard timeout only
  # bounds a stuck one.
  "$LAB" mount-run --export "$EXPORT" --proto "$proto" --port 2049 --mountport 20048 \
      --out-dir "$out" --timeout 300 -- "$guest_cmd" > "$out.log" 2>&1 &
  local run_pid=$!
  local size=0 waited=0
  while kill -0 "$run_pid" 2>/dev/null; do
    size=$(server_size || true)
    size=${size:-0}
    [ "$size" -ge $((KILL_AT_MB << 20)) ] && break
    sleep 0.2
    waited=$((waited + 1))
    [ $waited -lt 1500 ] || break
  done
  if [ "$size" -lt $((KILL_AT_MB << 20)) ]; then
    wait "$run_pid" 2>/dev/null || true
    starved "$out.log" && { stop_nfsd; return 75; }
    cat "$out.log" >&2
    fail "the client never wrote ${KILL_AT_MB} MiB over $proto"
  fi
  log "kill -9 nfs3d (pid $NFSD_PID) at $size bytes"
  kill -KILL "$NFSD_PID"
  wait "$NFSD_PID" 2>/dev/null || true
  sleep 2
  start_nfsd
  log "nfs3d restarted (pid $NFSD_PID)"
  local rc=0
  wait "$run_pid" || rc=$?
  lab_note_kernel "$out.log"
  if [ $rc -ne 0 ]; then
    starved "$out.log" && { stop_nfsd; return 75; }
    cat "$out.log" >&2
    tail -30 "$WORK/nfs3d.log" >&2
    fail "mount-run over $proto exited $rc"
  fi
  local server_md5 client_md5
  server_md5=$(server_md5)
  client_md5=$(cat "$out/md5")
  [ "$server_md5" = "$SRC_MD5" ] || fail "server copy differs over $proto: $server_md5 != $SRC_MD5"
  [ "$client_md5" = "$SRC_MD5" ] || fail "client read-back differs over $proto: $client_md5"
  ! grep -qiE "nfs: server .* not responding, timed out|Input/output error" "$out.log" \
    || fail "the client saw I/O errors over $proto"
  log "PASS over $proto: md5 $SRC_MD5 after kill -9 + restart"
  stop_nfsd
}

stop_nfsd() {
  kill -TERM "$NFSD_PID" 2>/dev/null || true
  wait "$NFSD_PID" 2>/dev/null || true
}

run_one() {
  local rc=0
  kill_during_write "$1" || rc=$?
  [ $rc -eq 75 ] || return $rc
  log "the guest was starved over $1 (NIC stall or boot timer panic: QEMU starved on this host, not a server fault); running again once"
  mv "$WORK/out-$1.log" "$WORK/out-$1.stalled.log"
  rc=0
  kill_during_write "$1" || rc=$?
  [ $rc -ne 75 ] || { cat "$WORK/out-$1.log" >&2; fail "the guest was starved twice over $1"; }
}

for proto in "${PROTOS[@]}"; do
  [ "$proto" = tcp ] || lab_kernel_has_udp "kill -9 and restart" || continue
  run_one "$proto"
done
log "all passed"
