#!/bin/bash
# Runs clang-tidy-14 (.clang-tidy) over every nfs3d source of a build's
# compile_commands.json (default build/, or $BUILD_DIR); fails on any finding.
# Tests, fuzz targets and benchmarks are left out: their code is checked by
# running it.  Usage: check-tidy.sh [FILE_REGEX]
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$REPO/build}
[ -f "$BUILD_DIR/compile_commands.json" ] ||
  { echo "check-tidy: no $BUILD_DIR/compile_commands.json (scripts/build.sh makes it)" >&2; exit 2; }
layers="(common|xdr|stats|rpc|vfs|conf|nfsd|nlm|client|daemon|tools)"
filter=${1:-"$REPO/$layers/.*\.cc$"}
run-clang-tidy-14 -quiet -p "$BUILD_DIR" -j "${JOBS:-$(nproc)}" \
  -header-filter "^$REPO/$layers/" "$filter"
