#!/bin/bash
# Builds the whole tree with AddressSanitizer + UndefinedBehaviorSanitizer in
# the clang tree it shares with the fuzz targets (scripts/checks-tree.sh:
# build-checks/) and runs every test except the lab VM ones and the style
# checks (ctest -LE "lab|style", run by scripts/test.sh): unit tests and the
# end-to-end tests of the binary, which then also runs instrumented. Also left
# out: build.layers, which reads the sources' includes and runs no binary
# (scripts/test.sh runs it).
#   scripts/test-sanitize.sh [extra ctest arguments, e.g. -R drc]
#   scripts/test-sanitize.sh --build-only   (what .ci/run makes during the lab tests)
# Environment: CHECKS_BUILD_DIR (default <repo>/build-checks), JOBS (default 2).
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
JOBS=${JOBS:-2}
source "$REPO/scripts/ccache.sh"
source "$REPO/scripts/checks-tree.sh"
configure_checks_tree
BUILD=$CHECKS_BUILD
ninja -C "$BUILD" -j"$JOBS"
[ "${1:-}" = --build-only ] && exit 0
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
cd "$BUILD"
ctest --output-on-failure -j"$JOBS" -LE "lab|style" -E '^build\.layers$' --timeout 600 "$@"
