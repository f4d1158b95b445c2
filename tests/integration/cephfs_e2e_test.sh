#!/bin/bash
# nfs3d serving a CephFS export (cephfs=/) of the test cluster (fixture
# "ceph": NFS3D_CEPH_DIR), end to end with real clients:
#  - libnfs copies a 7 MiB file in and out (md5 on both copies), lists it;
#  - nfs3bench writes and reads back 32 MiB (1 MiB calls, 16 in flight, data
#    verified) and runs the metadata workloads.
# (Restarts with the same handles: cephfs_crash_e2e_test.)
# nfs3d listens on loopback ports of its own without a portmapper, in the
# cluster's network namespace (the host's), so it needs no system ports.
# Usage: cephfs_e2e_test.sh NFS3D_BINARY NFS3BENCH_BINARY
TEST_NAME=cephfs_e2e
source "$(dirname "$0")/lib.sh"
NFS3D=$(readlink -f "$1")
NFS3BENCH=$(readlink -f "$2")
CEPH_DIR=${NFS3D_CEPH_DIR:?run through ctest (fixture ceph)}

trap 'stop_started; [ -n "$WORK" ] && rm -rf "$WORK"' EXIT
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

log "PASS"
