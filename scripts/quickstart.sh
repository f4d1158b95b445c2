#!/bin/bash
# Installs what is missing, builds, and starts nfs3d in the foreground on the
# embedded default: it exports ./state/export to this host (127.0.0.1, ::1)
# and registers with rpcbind, or serves its own portmapper when none runs.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
"$REPO/scripts/install-deps.sh"
"$REPO/scripts/build.sh"
mkdir -p "$REPO/state"
cat <<MSG
nfs3d is starting (Ctrl-C stops it). From this machine, mount it with:
  mkdir -p /mnt/nfs3d
  mount -t nfs -o vers=3,proto=tcp 127.0.0.1:$REPO/state/export /mnt/nfs3d
  mount -t nfs -o vers=3,proto=udp,rsize=32768,wsize=32768 127.0.0.1:$REPO/state/export /mnt/nfs3d
MSG
exec "${BUILD_DIR:-$REPO/build}/daemon/nfs3d" --state-dir "$REPO/state" --foreground
