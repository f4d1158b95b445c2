#!/bin/bash
# Crash safety with the real Linux kernel client (../shared/lab): while the
# client writes a file 1 MiB at a time with an fsync after each piece (hard
# mount), nfs3d is killed with SIGKILL and restarted on the same state
# directory. The client must resume by itself, and the file must end up
# byte-identical to its source on the server and as the client reads it back.
# (That a file handle from before the restart keeps working is also checked
# at the RPC level by server_e2e_test HandleSurvivesKill9AndRestart and
# crash_e2e_test.)
# Usage: lab_kill_test.sh NFS3D_BINARY [tcp|udp ...]
TEST_NAME=lab_kill
source "$(dirname "$0")/lib.sh"

NFS3D=$1
shift
PROTOS=("$@")
[ ${#PROTOS[@]} -gt 0 ] || PROTOS=(tcp udp)
[ -x "$NFS3D" ] || fail "no nfs3d binary at $NFS3D"
export NFS_LAB_NS=${NFS_LAB_NS:-nfs3d-rel} NFS_LAB_TAP=${NFS_LAB_TAP:-nfs3drel0}
MB=40
KILL_AT_MB=12

trap lab_cleanup EXIT
make_lab_export
make_lab_data
chmod 777 "$WORK/export"
write_conf "$WORK/nfs3d.conf" "$WORK/exports" "$WORK/state" auto  # own portmapper: rpcinfo needs one
head -c $((MB << 20)) /dev/urandom > "$DATA/src"
chmod 644 "$DATA/src"
SRC_MD5=$(md5sum < "$DATA/src" | cut -d' ' -f1)

"$LAB" up --no-rpcbind >/dev/null
NFSD_PID=""
start_nfsd() {
  "$LAB" exec -- "$NFS3D" --config "$WORK/nfs3d.conf" --foreground 2>> "$WORK/nfs3d.log" &
  NFSD_PID=$!
  PIDS+=("$NFSD_PID")
  wait_for "$LAB" exec -- rpcinfo -n 2049 -t 127.0.0.1 100003 3 \
    || { cat "$WORK/nfs3d.log" >&2; fail "nfs3d did not come up"; }
}

# kill_during_write PROTO: one run; returns 0 when it passed, 75 when the
# guest's NIC stalled (a host fault, see lab_nic_stalled), fails otherwise.
kill_during_write() {
  local proto=$1 out="$WORK/out-$1"
  rm -rf "$WORK/export/f" "$out"
  start_nfsd
  # The guest writes piece by piece; each dd fsyncs its MiB (COMMIT or
  # FILE_SYNC writes), then the whole file is read back after dropping caches.
  local guest_cmd="set -e
for i in \$(seq 0 $((MB - 1))); do
  dd if=$DATA/src of=\$MNT/f bs=1M skip=\$i seek=\$i count=1 conv=notrunc,fsync status=none
done
sync
echo 3 > /proc/sys/vm/drop_caches
md5sum < \$MNT/f | cut -d' ' -f1 > \$OUT/md5
cat /proc/self/mountstats > \$OUT/mountstats 2>/dev/null || true"
  log "writing $MB MiB over $proto; nfs3d will be killed at ${KILL_AT_MB} MiB"
  # A normal run takes well under a minute under TCG; the hard timeout only
  # bounds a stuck one.
  "$LAB" mount-run --export "$WORK/export" --proto "$proto" --port 2049 --mountport 20048 \
      --out-dir "$out" --timeout 300 -- "$guest_cmd" > "$out.log" 2>&1 &
  local run_pid=$!
  local size=0 waited=0
  while kill -0 "$run_pid" 2>/dev/null; do
    size=$(stat -c %s "$WORK/export/f" 2>/dev/null || echo 0)
    [ "$size" -ge $((KILL_AT_MB << 20)) ] && break
    sleep 0.2
    waited=$((waited + 1))
    [ $waited -lt 1500 ] || break
  done
  if [ "$size" -lt $((KILL_AT_MB << 20)) ]; then
    wait "$run_pid" 2>/dev/null || true
    lab_nic_stalled "$out.log" && { stop_nfsd; return 75; }
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
  if [ $rc -ne 0 ]; then
    lab_nic_stalled "$out.log" && { stop_nfsd; return 75; }
    cat "$out.log" >&2
    tail -30 "$WORK/nfs3d.log" >&2
    fail "mount-run over $proto exited $rc"
  fi
  local server_md5 client_md5
  server_md5=$(md5sum < "$WORK/export/f" | cut -d' ' -f1)
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
  log "the guest's NIC stalled over $1 (NETDEV WATCHDOG: QEMU starved on this host, not a server fault); running again once"
  mv "$WORK/out-$1.log" "$WORK/out-$1.stalled.log"
  rc=0
  kill_during_write "$1" || rc=$?
  [ $rc -ne 75 ] || { cat "$WORK/out-$1.log" >&2; fail "the guest's NIC stalled twice over $1"; }
}

for proto in "${PROTOS[@]}"; do run_one "$proto"; done
log "all passed"
