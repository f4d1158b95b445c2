#!/bin/bash
# Installs what is missing, builds, and runs every test: the unit tests of
# each layer, the end-to-end tests of the binary, and the integration tests
# with real clients (rpcinfo, showmount, libnfs, and the Linux kernel client
# in the ../shared/lab VM, or $NFS_LAB). Needs root. NFS3D_SKIP_LAB=1 skips
# the VM tests. Before the tests it prints one line per optional part (built
# or not, run or not, and why); build.optional_parts fails when a part whose
# dependencies are installed was left out of the build.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$REPO/build}
export BUILD_DIR
"$REPO/scripts/install-deps.sh" --test
"$REPO/scripts/build.sh"
exclude=()
lab=${NFS_LAB:-$(cd "$REPO/.." && pwd)/shared/lab/nfs-lab}
if [ "${NFS3D_SKIP_LAB:-0}" = 1 ] || [ ! -x "$lab" ]; then
  exclude=(-LE lab)
fi
"$REPO/scripts/optional-parts.sh" "$BUILD_DIR"
cd "$BUILD_DIR"
ctest --output-on-failure -j2 "${exclude[@]}"
