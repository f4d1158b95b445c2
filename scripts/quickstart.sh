#!/bin/bash
# Installs what is missing, builds, and starts nfs3d in the foreground on the
# embedded default: it exports ./state/export to this host (127.0.0.1, ::1)
# and registers with rpcbind, or serves its own portmapper when none runs.
# Each phase prints its start and its time: a first build takes minutes.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
source "$REPO/scripts/stage.sh"
BUILD=${BUILD_DIR:-$REPO/build}
stage "packages (install-deps.sh)" "$REPO/scripts/install-deps.sh"
# The two halves of build.sh, timed apart: configure, then compile.
stage "configure (cmake)" env BUILD_DIR="$BUILD" BUILD_CONFIGURE_ONLY=1 "$REPO/scripts/build.sh"
stage "build (ninja, $(nproc) jobs)" ninja -C "$BUILD" -j"$(nproc)"
stage_table
mkdir -p "$REPO/state"
echo "=== start ($(date +%H:%M:%S))" >&2
start=$SECONDS
"$BUILD/daemon/nfs3d" --state-dir "$REPO/state" --foreground &
pid=$!
trap 'kill -TERM "$pid" 2>/dev/null' INT TERM
until (exec 3<>/dev/tcp/127.0.0.1/2049) 2>/dev/null; do
  kill -0 "$pid" 2>/dev/null || { wait "$pid"; exit $?; }
  sleep 0.2
done
echo "=== start: serving on port 2049 after $((SECONDS - start)) s" >&2
cat <<MSG
nfs3d is serving (Ctrl-C stops it). From this machine, mount it with:
  mkdir -p /mnt/nfs3d
  mount -t nfs -o vers=3,proto=tcp 127.0.0.1:$REPO/state/export /mnt/nfs3d
  mount -t nfs -o vers=3,proto=udp,rsize=32768,wsize=32768 127.0.0.1:$REPO/state/export /mnt/nfs3d
MSG
# Until nfs3d exits (Ctrl-C: SIGINT reaches it too, and it stops cleanly).
while kill -0 "$pid" 2>/dev/null; do wait "$pid" || true; done
