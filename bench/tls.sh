#!/bin/bash
# RPC-with-TLS benchmark (a benchmark, not a test): plain RPC and TLS on the
# same nfs3d, the same tmpfs export and the same workloads (1 MiB WRITE and
# READ, 16 in flight; GETATTR, 32 in flight), run interleaved (plain, tls,
# then again) so machine noise hits both alike. nfs3d and nfs3bench run in a
# private network and mount namespace this script makes; nfs3bench --tls
# encrypts in user space at its end, and nfs3d uses kTLS where the kernel
# has it (else user space: its log says "kTLS unavailable"). One row per
# (workload, mode): median rate, its ratio to plain, server CPU per GB or per
# call, client CPU. Needs root.
#   bench/tls.sh [--nfs3d BIN] [--nfs3bench BIN] [--rounds N] [--time SEC]
#                [--workloads "write read getattr"]
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
. "$REPO/bench/private_ns.sh" "$@"
NFS3D=$REPO/build-release/daemon/nfs3d
BENCH=$REPO/build-release/tools/nfs3bench/nfs3bench
ROUNDS=3
TIME=4
WORKLOADS="write read getattr"
while [ $# -gt 0 ]; do
  case $1 in
    --nfs3d) NFS3D=$2; shift 2 ;;
    --nfs3bench) BENCH=$2; shift 2 ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    --time) TIME=$2; shift 2 ;;
    --workloads) WORKLOADS=$2; shift 2 ;;
    *) echo "usage: see the head of $0" >&2; exit 2 ;;
  esac
done
D=$(mktemp -d /var/tmp/nfs3d-tlsbench.XXXXXX)
NFS3D_PID=
cleanup() {
  [ -z "$NFS3D_PID" ] || { kill "$NFS3D_PID" 2>/dev/null || true; wait "$NFS3D_PID" 2>/dev/null || true; }
  umount "$D/export" 2>/dev/null || true
  rm -rf "$D"
}
trap cleanup EXIT

mkdir -p "$D/state" "$D/export"
mount -t tmpfs tmpfs "$D/export"
"$REPO/tests/integration/tls_make_certs.sh" "$D/certs" >/dev/null
echo "$D/export 127.0.0.1(rw,insecure,no_root_squash)" >"$D/exports"
cat >"$D/nfs3d.conf" <<CONF
[nfsd]
port = 2049
mountd_port = 20048
portmapper = off
[paths]
state_dir = $D/state
exports = $D/exports
[tls]
certificate = $D/certs/server.pem
key = $D/certs/server.key
CONF
"$NFS3D" --config "$D/nfs3d.conf" --foreground 2>"$D/nfs3d.log" &
NFS3D_PID=$!
for _ in $(seq 50); do
  "$BENCH" run "127.0.0.1:$D/export" --port 2049 --mount-port 20048 --workload getattr \
    --time 0.1 >/dev/null 2>&1 && break
  sleep 0.2
done

echo "# bench/tls.sh: $ROUNDS rounds x ${TIME}s, $(nproc) CPUs, $(uptime | sed 's/.*load/load/')"
echo "# nfs3d $NFS3D"
for w in $WORKLOADS; do
  args=(--workload "$w" --outstanding 16 --bs 1m)
  [ "$w" = read ] && args+=(--file-size 128m)
  [ "$w" = getattr ] && args=(--workload getattr --outstanding 32)
  for round in $(seq "$ROUNDS"); do
    for mode in plain tls; do
      extra=()
      [ "$mode" = plain ] || extra=(--tls "$D/certs/ca.pem")
      "$BENCH" run "127.0.0.1:$D/export" --port 2049 --mount-port 20048 --time "$TIME" \
        --server-pid "$NFS3D_PID" "${args[@]}" "${extra[@]}" 2>/dev/null |
        grep '^{' | sed "s/^/$w $mode $round /"
    done
  done
done | python3 "$REPO/bench/mode_table.py" mode plain
grep -h "kTLS unavailable" "$D/nfs3d.log" | head -1 | sed 's/^/# /' || true
