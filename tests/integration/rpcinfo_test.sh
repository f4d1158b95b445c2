#!/bin/bash
# rpcinfo -p / -u / -t for NFS and MOUNT and showmount -e against nfs3d, first
# with nfs3d's own portmapper (no rpcbind), then with a system rpcbind that
# nfs3d registers with (and unregisters from on shutdown). Everything runs in
# a private network namespace (only lo) and a private mount namespace with its
# own /run, so no other rpcbind is ever involved.
# Usage: rpcinfo_test.sh NFS3D_BINARY
TEST_NAME=rpcinfo
source "$(dirname "$0")/lib.sh"
NFS3D=$(readlink -f "$1")

enter_private_namespaces "$0" "$NFS3D"

trap 'stop_started; [ -n "$WORK" ] && rm -rf "$WORK"' EXIT
make_work
mkdir -p "$WORK/export/sub" "$WORK/state"
cat > "$WORK/exports" <<EXPORTS
$WORK/export 127.0.0.1(rw,insecure) ::1(rw,insecure)
$WORK/export/sub *(ro,insecure)
EXPORTS

start_nfs3d() {
  write_conf "$WORK/nfs3d.conf" "$WORK/exports" "$WORK/state" "$1"
  "$NFS3D" --config "$WORK/nfs3d.conf" --foreground 2>> "$WORK/nfs3d.log" &
  NFS3D_PID=$!
  PIDS+=($NFS3D_PID)
  wait_for rpcinfo -T tcp 127.0.0.1 100003 3 || { cat "$WORK/nfs3d.log" >&2; fail "nfs3d not up"; }
}

check_all() {
  local what=$1 out
  out=$(rpcinfo -p 127.0.0.1)
  echo "$out" >&2
  for want in "100003 *3 *tcp *2049" "100003 *3 *udp *2049" "100005 *3 *tcp *20048" \
              "100005 *3 *udp *20048" "100005 *1 *tcp *20048" "100005 *1 *udp *20048" \
              "100227 *3 *tcp *2049" "100227 *3 *udp *2049" "100000 *2 *tcp *111"; do
    grep -Eq "$want" <<< "$out" || fail "$what: rpcinfo -p lacks '$want'"
  done
  rpcinfo -u 127.0.0.1 100003 3 | grep -q "ready and waiting" || fail "$what: rpcinfo -u nfs"
  rpcinfo -t 127.0.0.1 100003 3 | grep -q "ready and waiting" || fail "$what: rpcinfo -t nfs"
  rpcinfo -t 127.0.0.1 100227 3 | grep -q "ready and waiting" || fail "$what: rpcinfo -t nfs_acl"
  rpcinfo -u 127.0.0.1 100005 3 | grep -q "ready and waiting" || fail "$what: rpcinfo -u mount v3"
  rpcinfo -t 127.0.0.1 100005 1 | grep -q "ready and waiting" || fail "$what: rpcinfo -t mount v1"
  # rpcbind v3/v4 query (what rpcinfo without -p uses).
  rpcinfo 127.0.0.1 | grep -Eq "100003 +3 +tcp" || fail "$what: rpcinfo (rpcbind v4 dump)"
  out=$(showmount -e 127.0.0.1)
  echo "$out" >&2
  grep -q "^$WORK/export " <<< "$out" || fail "$what: showmount -e lacks the export"
  grep -q "^$WORK/export/sub \*" <<< "$out" || fail "$what: showmount -e lacks the sub export"
  log "PASS: $what"
}

# 1. No rpcbind: nfs3d serves the portmapper itself on port 111.
start_nfs3d auto
check_all "own portmapper"
stop_started

# 2. A system rpcbind runs (in this private /run): nfs3d registers with it.
rpcbind -f -w &
PIDS+=($!)
RPCBIND_PID=$!
wait_for rpcinfo -p 127.0.0.1 || fail "rpcbind did not start"
start_nfs3d auto
check_all "system rpcbind"
kill -TERM "$NFS3D_PID"
timeout 10 tail --pid="$NFS3D_PID" -f /dev/null || fail "nfs3d did not exit on SIGTERM"
if rpcinfo -p 127.0.0.1 | grep -Eq "100003|100005"; then
  rpcinfo -p 127.0.0.1 >&2
  fail "nfs3d did not unregister from rpcbind on shutdown"
fi
log "PASS: unregistered on shutdown"
log "all passed"
