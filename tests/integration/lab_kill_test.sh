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

run_one() {
  local proto=$1 out="$WORK/out-$1"
  rm -f "$WORK/export/f"
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
grep -E ' nfs ' /proc/self/mountstats > \$OUT/mountstats 2>/dev/null || true
cat /proc/self/mountstats > \$OUT/mountstats.all 2>/dev/null || true"
  log "writing $MB MiB over $proto; nfs3d will be killed at ${KILL_AT_MB} MiB"
  "$LAB" mount-run --export "$WORK/export" --proto "$proto" --port 2049 --mountport 20048 \
      --out-dir "$out" --timeout 600 -- "$guest_cmd" > "$out.log" 2>&1 &
  local run_pid=$!
  local size=0 waited=0
  while kill -0 "$run_pid" 2>/dev/null; do
    size=$(stat -c %s "$WORK/export/f" 2>/dev/null || echo 0)
    [ "$size" -ge $((KILL_AT_MB << 20)) ] && break
    sleep 0.2
    waited=$((waited + 1))
    [ $waited -lt 3000 ] || break
  done
  [ "$size" -ge $((KILL_AT_MB << 20)) ] \
    || { cat "$out.log" >&2; fail "the client never wrote ${KILL_AT_MB} MiB over $proto"; }
  log "kill -9 nfs3d (pid $NFSD_PID) at $size bytes"
  kill -KILL "$NFSD_PID"
  wait "$NFSD_PID" 2>/dev/null || true
  sleep 2
  start_nfsd
  log "nfs3d restarted (pid $NFSD_PID)"
  local rc=0
  wait "$run_pid" || rc=$?
  [ $rc -eq 0 ] || { cat "$out.log" >&2; tail -30 "$WORK/nfs3d.log" >&2; fail "mount-run over $proto exited $rc"; }
  local server_md5 client_md5
  server_md5=$(md5sum < "$WORK/export/f" | cut -d' ' -f1)
  client_md5=$(cat "$out/md5")
  [ "$server_md5" = "$SRC_MD5" ] || fail "server copy differs over $proto: $server_md5 != $SRC_MD5"
  [ "$client_md5" = "$SRC_MD5" ] || fail "client read-back differs over $proto: $client_md5"
  ! grep -qiE "nfs: server .* not responding, timed out|Input/output error" "$out.log" \
    || fail "the client saw I/O errors over $proto"
  log "PASS over $proto: md5 $SRC_MD5 after kill -9 + restart"
  kill -TERM "$NFSD_PID" 2>/dev/null || true
  wait "$NFSD_PID" 2>/dev/null || true
}

for proto in "${PROTOS[@]}"; do run_one "$proto"; done
log "all passed"
