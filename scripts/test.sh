#!/bin/bash
# Installs what is missing, builds, and runs every test: the unit tests of
# each layer, the end-to-end tests of the binary, and the integration tests
# with real clients (rpcinfo, showmount, libnfs, and the Linux kernel client
# in the ../shared/lab VM). Needs root. NFS3D_SKIP_LAB=1 skips the VM tests.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
"$REPO/scripts/install-deps.sh" --test
"$REPO/scripts/build.sh"
exclude=()
[ "${NFS3D_SKIP_LAB:-0}" = 1 ] && exclude=(-LE lab)
cd "${BUILD_DIR:-$REPO/build}"
ctest --output-on-failure -j2 "${exclude[@]}"
