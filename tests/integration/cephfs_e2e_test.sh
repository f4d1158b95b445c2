#!/bin/bash
# nfs3d serving a CephFS export (cephfs=/) of the test cluster (fixture
# "ceph": NFS3D_CEPH_DIR), end to end with real clients:
#  - libnfs copies a 7 MiB file in and out (md5 on both copies), lists it;
#  - nfs3bench writes and reads back 32 MiB (1 MiB calls, 16 in flight, data
#    verified) and runs the metadata workloads.
#  - a sub-directory export with a cephx user of its own (caps for that
#    directory only), added by a reload, serves; one whose user's caps do
#    not allow the path is refused, at reload and at start, with an error
#    naming the user and the path.
# (Restarts with the same handles: cephfs_crash_e2e_test.)
# nfs3d listens on loopback ports of its own without a portmapper, in the
# cluster's network namespace (the host's), so it needs no system ports.
# Usage: cephfs_e2e_test.sh NFS3D_BINARY NFS3BENCH_BINARY CEPHFS_LAB_TOOL
TEST_NAME=cephfs_e2e
source "$(dirname "$0")/lib.sh"
NFS3D=$(readlink -f "$1")
NFS3BENCH=$(readlink -f "$2")
TOOL=$(readlink -f "$3")
CEPH_DIR=${NFS3D_CEPH_DIR:?run through ctest (fixture ceph)}

USERS=()
ceph_cli() {
  ceph -c "$CEPH_DIR/ceph.conf" -k "$CEPH_DIR/keyring" -n client.admin --connect-timeout 20 "$@"
}
cleanup() {
  stop_started
  for u in "${USERS[@]}"; do ceph_cli auth rm "client.$u" >/dev/null 2>&1 || true; done
  [ -n "$WORK" ] && rm -rf "$WORK"
}
trap cleanup EXIT
make_work
mkdir -p "$WORK/state"
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
PORT=$(free_port)
MPORT=$(free_port)
echo "/ceph 127.0.0.1(rw,insecure,no_root_squash,cephfs=/)" > "$WORK/exports"
cat > "$WORK/nfs3d.conf" <<CONF
[nfsd]
listen = 127.0.0.1
port = $PORT
mountd_port = $MPORT
threads = 8
portmapper = off

[paths]
state_dir = $WORK/state
exports = $WORK/exports

[nlm]
enable = off

[ceph]
conf = $CEPH_DIR/ceph.conf
keyring = $CEPH_DIR/keyring
client_id = admin
fs_name = cephfs
CONF

start_nfs3d() {
  "$NFS3D" --config "$WORK/nfs3d.conf" --foreground 2>> "$WORK/nfs3d.log" &
  NFS3D_PID=$!
  PIDS+=($NFS3D_PID)
  wait_for "$NFS3BENCH" run 127.0.0.1:/ceph --port "$PORT" --mount-port "$MPORT" \
    --workload null --ops 1 --no-json \
    || { cat "$WORK/nfs3d.log" >&2; fail "nfs3d not up"; }
}
start_nfs3d
URL_ARGS="version=3&nfsport=$PORT&mountport=$MPORT"
NAME="e2e-$$"

head -c 7340033 /dev/urandom > "$WORK/src"   # 7 MiB + 1 byte: not block aligned
want=$(md5sum < "$WORK/src" | cut -d' ' -f1)
nfs-cp "$WORK/src" "nfs://127.0.0.1/ceph/$NAME?$URL_ARGS" \
  || { tail -20 "$WORK/nfs3d.log" >&2; fail "nfs-cp into nfs3d"; }
nfs-cp "nfs://127.0.0.1/ceph/$NAME?$URL_ARGS" "$WORK/back" || fail "nfs-cp out of nfs3d"
[ "$(md5sum < "$WORK/back" | cut -d' ' -f1)" = "$want" ] || fail "copied-back md5 differs"
# grep without -q reads the whole listing: an early exit would kill nfs-ls
# with SIGPIPE, which pipefail reports as a failure.
nfs-ls "nfs://127.0.0.1/ceph?$URL_ARGS" | grep "$NAME" >/dev/null || fail "nfs-ls does not list the file"
log "libnfs: nfs-cp in and out of CephFS, md5 $want"

bench() {
  "$NFS3BENCH" run 127.0.0.1:/ceph --port "$PORT" --mount-port "$MPORT" --no-json "$@"
}
bench --workload write,read --bs 1m --outstanding 16 --size 32m --dir "bench-$$" \
  || { tail -20 "$WORK/nfs3d.log" >&2; fail "nfs3bench write,read"; }
bench --workload meta,createsetattr --ops 200 --outstanding 8 --dir "meta-$$" \
  || { tail -20 "$WORK/nfs3d.log" >&2; fail "nfs3bench metadata workloads"; }
log "nfs3bench: write/read verified, metadata workloads ran"

# A cephx user whose caps allow one directory: authorize ID PATH.
authorize() {
  ceph_cli fs authorize cephfs "client.$1" "$2" rw > "$WORK/$1.keyring" || fail "fs authorize $1"
  USERS+=("$1")
}
SUB=/e2e-sub-$$
"$TOOL" "$CEPH_DIR" mkdir "$SUB" 0777 || fail "mkdir $SUB"
authorize "e2e-sub-$$" "$SUB"
authorize "e2e-other-$$" "/e2e-elsewhere-$$"
sub_export() {  # NAME USER: an export line for $SUB as USER
  echo "$1 127.0.0.1(rw,insecure,no_root_squash,cephfs=$SUB,cephfs_user=$2,cephfs_keyring=$WORK/$2.keyring)"
}
refused_as() {  # FILE USER: the error names the user, the path and the caps
  grep "client.$2" "$1" | grep "$SUB" | grep -q "caps allow path=$SUB"
}
sub_export /cephsub "e2e-sub-$$" >> "$WORK/exports"
kill -HUP "$NFS3D_PID"
wait_for "$NFS3BENCH" run 127.0.0.1:/cephsub --port "$PORT" --mount-port "$MPORT" \
    --workload null --ops 1 --no-json \
  || { tail -20 "$WORK/nfs3d.log" >&2; fail "/cephsub not served after the reload"; }
"$NFS3BENCH" run 127.0.0.1:/cephsub --port "$PORT" --mount-port "$MPORT" --no-json \
    --workload write,read --bs 64k --outstanding 4 --size 4m --dir "sub-$$" \
  || { tail -20 "$WORK/nfs3d.log" >&2; fail "nfs3bench on /cephsub"; }
log "a sub-directory export as client.e2e-sub-$$ (caps: $SUB only) added by a reload serves"

sub_export /cephbad "e2e-other-$$" >> "$WORK/exports"
kill -HUP "$NFS3D_PID"
wait_for refused_as "$WORK/nfs3d.log" "e2e-other-$$" \
  || { tail -20 "$WORK/nfs3d.log" >&2; fail "the reload did not refuse client.e2e-other-$$"; }
kill -0 "$NFS3D_PID" || fail "nfs3d exited on a refused reload"
"$NFS3BENCH" run 127.0.0.1:/cephsub --port "$PORT" --mount-port "$MPORT" --workload null \
    --ops 1 --no-json || fail "/cephsub no longer served after a refused reload"
log "reload refused: $(grep "client.e2e-other-$$" "$WORK/nfs3d.log" | tail -n 1)"

stop_started
PIDS=()
rc=0
timeout 120 "$NFS3D" --config "$WORK/nfs3d.conf" --foreground 2> "$WORK/start.log" || rc=$?
[ $rc -ne 0 ] && [ $rc -ne 124 ] || fail "nfs3d started with an export its cephx user may not mount"
refused_as "$WORK/start.log" "e2e-other-$$" || { cat "$WORK/start.log" >&2; fail "start error"; }
log "start refused (exit $rc): $(grep "client.e2e-other-$$" "$WORK/start.log" | tail -n 1)"

log "PASS"
