# Sourced by scripts/test-sanitize.sh and scripts/fuzz.sh: the one clang tree
# both use (build-checks/, or $CHECKS_BUILD_DIR). Every object is built with
# AddressSanitizer + UndefinedBehaviorSanitizer and libFuzzer's coverage
# (-fsanitize=fuzzer-no-link), so the same compile serves the whole test
# suite under the sanitizers and the fuzz targets, which link libFuzzer.
# -O1: much faster to build and run than -O0 under ASan, same findings;
# -gline-tables-only: enough for the reports' stacks (file:line), a quarter
# less compile time than -g.
CHECKS_BUILD=${CHECKS_BUILD_DIR:-$REPO/build-checks}

configure_checks_tree() {
  [ -f "$CHECKS_BUILD/build.ninja" ] && return 0
  command -v clang++ >/dev/null || { echo "checks-tree: clang++ is needed (apt-get install clang)" >&2; return 1; }
  local flags="-fsanitize=fuzzer-no-link -gline-tables-only"
  CC=clang CXX=clang++ cmake -S "$REPO" -B "$CHECKS_BUILD" -G Ninja -DNFS3D_SANITIZE=ON \
    -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS_DEBUG="-O1 $flags" -DCMAKE_CXX_FLAGS_DEBUG="-O1 $flags" \
    "${CCACHE_ARGS[@]}" >/dev/null
}
