#!/bin/bash
# Builds the whole tree with AddressSanitizer + UndefinedBehaviorSanitizer
# (-DNFS3D_SANITIZE=ON) in build-asan/ and runs every test except the lab VM
# ones and the style checks (ctest -LE "lab|style", run by scripts/test.sh):
# unit tests and the end-to-end tests of the binary,
# which then also runs instrumented.
#   scripts/test-sanitize.sh [extra ctest arguments, e.g. -R drc]
#   scripts/test-sanitize.sh --build-only   (what .ci/run makes during the lab tests)
# Environment: BUILD_DIR (default <repo>/build-asan), JOBS (default 2).
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD_DIR:-$REPO/build-asan}
JOBS=${JOBS:-2}
if [ ! -f "$BUILD/build.ninja" ]; then
  # -O1: much faster to build and run than -O0 under ASan, same findings.
  # -g1: line tables only, enough for the reports' stacks (file:line); a
  # quarter less compile time than -g (rpc/tcp_server.cc: 24 s instead of 32).
  cmake -S "$REPO" -B "$BUILD" -G Ninja -DNFS3D_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug \
    -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1" >/dev/null
fi
ninja -C "$BUILD" -j"$JOBS"
[ "${1:-}" = --build-only ] && exit 0
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
cd "$BUILD"
ctest --output-on-failure -j"$JOBS" -LE "lab|style" --timeout 600 "$@"
