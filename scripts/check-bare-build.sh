#!/bin/bash
# Builds the configuration the quick start builds on a machine with none of
# the optional dependencies (configured with every optional part off, in
# build-bare/ or $BARE_BUILD_DIR), then starts that nfs3d once on its embedded
# default and checks that it serves: rpcinfo answers NFS and MOUNT, libnfs
# reads a file back, and an export that needs the CephFS plugin is refused by
# nfs3d and --check-exports with the package to install. With ccache
# (scripts/ccache.sh) it reuses the full build's compiles: the optional parts
# are plugins, so the core is compiled the same either way.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BARE_BUILD_DIR:-$REPO/build-bare}
source "$REPO/scripts/ccache.sh"

start=$SECONDS
[ ${#CCACHE_ARGS[@]} = 0 ] || ccache -z >/dev/null  # this tree's hits and misses only
cmake -S "$REPO" -B "$BUILD" -G Ninja "${CCACHE_ARGS[@]}" -DNFS3D_CEPHFS=OFF >/dev/null
ninja -C "$BUILD" -j"$(nproc)" | tail -n 1
echo "check-bare-build: built in $((SECONDS - start)) s${CCACHE_ARGS:+ (ccache: $(ccache -s 2>/dev/null | grep -E '^ *(Hits|Misses):' | tr -s ' ' | tr '\n' ' '))}"
[ ! -e "$BUILD/plugins/backend-cephfs.so" ] || { echo "check-bare-build: the bare tree built the CephFS plugin" >&2; exit 1; }

WORK=$(mktemp -d)
NFS3D_PID=""
cleanup() {
  if [ -n "$NFS3D_PID" ]; then kill "$NFS3D_PID" 2>/dev/null || true; wait "$NFS3D_PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
PORT=$(free_port)
MPORT=$(free_port)
# rpcinfo reaches a port without a portmapper by its universal address.
uaddr() { echo "127.0.0.1.$(($1 / 256)).$(($1 % 256))"; }
# Ports of its own and no portmapper, so it neither needs nor disturbs the
# system's; no exports file: the embedded default (<state>/export to this host).
cat > "$WORK/nfs3d.conf" <<CONF
[nfsd]
port = $PORT
mountd_port = $MPORT
portmapper = off
[paths]
state_dir = $WORK/state
exports = $WORK/no-exports-file
[nlm]
enable = off
CONF
NFS3D=$BUILD/daemon/nfs3d
"$NFS3D" --config "$WORK/nfs3d.conf" --foreground 2> "$WORK/nfs3d.log" &
NFS3D_PID=$!
fail() { echo "check-bare-build: $*" >&2; cat "$WORK/nfs3d.log" >&2; exit 1; }
for _ in $(seq 100); do
  rpcinfo -T tcp -a "$(uaddr "$PORT")" 100003 3 >/dev/null 2>&1 && break
  kill -0 "$NFS3D_PID" 2>/dev/null || fail "nfs3d exited"
  sleep 0.2
done
rpcinfo -T tcp -a "$(uaddr "$PORT")" 100003 3 || fail "no NFSv3 answer over TCP"
rpcinfo -T udp -a "$(uaddr "$MPORT")" 100005 3 || fail "no MOUNT v3 answer over UDP"
echo "bare nfs3d $$" > "$WORK/state/export/hello"
got=$(nfs-cat "nfs://127.0.0.1$WORK/state/export/hello?version=3&nfsport=$PORT&mountport=$MPORT") \
  || fail "libnfs could not read the export"
[ "$got" = "bare nfs3d $$" ] || fail "libnfs read '$got'"
echo "check-bare-build: the bare nfs3d serves its embedded default (rpcinfo, libnfs read)"
kill "$NFS3D_PID"; wait "$NFS3D_PID" 2>/dev/null || true; NFS3D_PID=""

# A cephfs= export without the plugin: refused, naming the package.
echo "/ceph 127.0.0.1(rw,cephfs=/)" > "$WORK/exports"
if "$NFS3D" --check-exports "$WORK/exports" > "$WORK/check.out" 2>&1; then
  cat "$WORK/check.out" >&2; echo "check-bare-build: --check-exports took a cephfs= export" >&2; exit 1
fi
grep -q 'install the nfs3d-ceph package' "$WORK/check.out" \
  || { cat "$WORK/check.out" >&2; echo "check-bare-build: --check-exports does not name nfs3d-ceph" >&2; exit 1; }
sed -i "s|^exports = .*|exports = $WORK/exports|" "$WORK/nfs3d.conf"
if timeout 20 "$NFS3D" --config "$WORK/nfs3d.conf" --foreground > "$WORK/start.out" 2>&1; then
  echo "check-bare-build: nfs3d started with a cephfs= export and no plugin" >&2; exit 1
fi
grep -q 'install the nfs3d-ceph package' "$WORK/start.out" \
  || { cat "$WORK/start.out" >&2; echo "check-bare-build: nfs3d's refusal does not name nfs3d-ceph" >&2; exit 1; }
echo "check-bare-build: a cephfs= export is refused without the plugin: $(grep -o 'cephfs= exports need.*' "$WORK/start.out" | head -1)"
