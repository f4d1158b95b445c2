#!/bin/bash
# Builds the libFuzzer targets of tests/fuzz in the clang tree they share
# with the sanitizer tests (scripts/checks-tree.sh: build-checks/, every
# object instrumented with -fsanitize=fuzzer-no-link,address,undefined) and
# runs each for a bounded time, starting from its seed corpus.
#   scripts/fuzz.sh [SECONDS_PER_TARGET (default 60)] [TARGET...]
#   scripts/fuzz.sh --build-only   (builds every target, runs none)
# Environment: CHECKS_BUILD_DIR (default <repo>/build-checks), FUZZ_JOBS
# (parallel targets, default 2). New corpus entries go to
# BUILD/corpus/<target>, crashes to BUILD/artifacts/<target>/; the script
# fails if any target finds a crash, a leak, undefined behaviour or a timeout.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
BUILD_ONLY=0
if [ "${1:-}" = --build-only ]; then BUILD_ONLY=1; shift; fi
SECONDS_PER_TARGET=${1:-60}
shift || true
JOBS=${FUZZ_JOBS:-2}
TARGETS=("$@")
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(rpc_call_fuzz record_marker_fuzz conf_fuzz dispatcher_fuzz nfs3_args_fuzz nfsacl_fuzz
                                   nlm_fuzz nsm_fuzz rquota_fuzz portmap_fuzz rpcsec_gss_fuzz krb5_token_fuzz
                                   handover_fuzz tcp_admission_fuzz nlm_identity_fuzz
                                   gss_half_open_fuzz tls_record_fuzz connections_text_fuzz inline_calls_fuzz)

source "$REPO/scripts/ccache.sh"
source "$REPO/scripts/checks-tree.sh"
configure_checks_tree
BUILD=$CHECKS_BUILD
ninja -C "$BUILD" -j2 "${TARGETS[@]}"
[ "$BUILD_ONLY" = 1 ] && exit 0

run_one() {
  local t=$1 corpus="$BUILD/corpus/$1" art="$BUILD/artifacts/$1/"
  mkdir -p "$corpus" "$art"
  local seeds=()
  [ -d "$REPO/tests/fuzz/corpus/$t" ] && seeds=("$REPO/tests/fuzz/corpus/$t")
  # -rss_limit_mb: the dispatcher target holds a backend with caches.
  # -reload=0: each target runs alone on its own corpus directory, so
  # re-reading it every second (the default) only costs time.
  if ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
     UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
     "$BUILD/tests/fuzz/$t" -max_total_time="$SECONDS_PER_TARGET" -timeout=10 -rss_limit_mb=2048 \
       -max_len=8192 -reload=0 -print_final_stats=1 -artifact_prefix="$art" "$corpus" "${seeds[@]}" \
       > "$BUILD/$t.log" 2>&1; then
    echo "fuzz.sh: $t OK: $(grep -m1 -o 'stat::number_of_executed_units: *[0-9]*' "$BUILD/$t.log" | grep -o '[0-9]*$') executions in ${SECONDS_PER_TARGET}s"
  else
    echo "fuzz.sh: $t FAILED (log: $BUILD/$t.log, inputs: $art)" >&2
    tail -40 "$BUILD/$t.log" >&2
    return 1
  fi
}

status=0
pids=()
names=()
for t in "${TARGETS[@]}"; do
  run_one "$t" &
  pids+=($!)
  names+=("$t")
  if [ ${#pids[@]} -ge "$JOBS" ]; then
    wait "${pids[0]}" || status=1
    pids=("${pids[@]:1}")
    names=("${names[@]:1}")
  fi
done
for p in "${pids[@]}"; do wait "$p" || status=1; done
exit $status
