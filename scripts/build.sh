#!/bin/bash
# Configures and builds nfs3d into build/ (or $BUILD_DIR). Extra arguments go
# to cmake, e.g. -DCMAKE_BUILD_TYPE=Release or -DNFS3D_SANITIZE=ON.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$REPO/build}
cmake -S "$REPO" -B "$BUILD_DIR" -G Ninja "$@" >/dev/null
ninja -C "$BUILD_DIR" -j"$(nproc)"
