#!/bin/bash
# Configures and builds nfs3d into build/ (or $BUILD_DIR). Extra arguments go
# to cmake, e.g. -DCMAKE_BUILD_TYPE=Release or -DNFS3D_SANITIZE=ON.
# The CephFS backend is asked for explicitly whenever libcephfs-dev is
# installed: a build/ configured before it was (scripts/quickstart.sh installs
# only the build packages) would otherwise keep NFS3D_CEPHFS=OFF in its cache.
# -DNFS3D_CEPHFS=OFF among the arguments still wins. BUILD_CONFIGURE_ONLY=1
# configures only (scripts/quickstart.sh times the two apart).
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$REPO/build}
cephfs=()
if [ -f /usr/include/cephfs/libcephfs.h ] && ! printf '%s\n' "$@" | grep -q '^-DNFS3D_CEPHFS='; then
  cephfs=(-DNFS3D_CEPHFS=ON)
fi
source "$REPO/scripts/ccache.sh"
cmake -S "$REPO" -B "$BUILD_DIR" -G Ninja "${CCACHE_ARGS[@]}" "${cephfs[@]}" "$@" >/dev/null
[ "${BUILD_CONFIGURE_ONLY:-0}" = 1 ] && exit 0
ninja -C "$BUILD_DIR" -j"$(nproc)"
