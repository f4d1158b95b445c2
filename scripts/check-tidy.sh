#!/bin/bash
# Runs clang-tidy-14 (.clang-tidy) over nfs3d's sources in a build's
# compile_commands.json (default build/, or $BUILD_DIR); fails on any finding.
# Tests, fuzz targets and benchmarks are left out: their code is checked by
# running it.
#
# Usage: check-tidy.sh                 every source (about 17 min on 2 cores)
#        check-tidy.sh FILE_REGEX      the sources matching FILE_REGEX
#        check-tidy.sh --changed       the sources changed since the commit in
#                                      .ci/tidy-clean (the last commit a whole
#                                      run found clean), and the sources of the
#                                      headers changed since then (same stem).
#                                      This is what CI and the test command run
#                                      (ctest build.tidy): a whole run costs too
#                                      much for every change. Without the git
#                                      history it falls back to a whole run and
#                                      says so.
# After a whole run is clean, record it: git rev-parse HEAD > .ci/tidy-clean
# (also after a clean --changed run: every source was then clean at the
# recorded commit or is unchanged since one where it was).
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$REPO/build}
[ -f "$BUILD_DIR/compile_commands.json" ] ||
  { echo "check-tidy: no $BUILD_DIR/compile_commands.json (scripts/build.sh makes it)" >&2; exit 2; }
layers="(common|xdr|stats|rpc|vfs|conf|nfsd|nlm|client|daemon|tools)"
filter="$REPO/$layers/.*\.cc$"

# The sources whose own text or same-stem header changed since $1, as a regex.
changed_filter() {
  local base=$1 files=() f
  while IFS= read -r f; do
    case $f in *.h) f=${f%.h}.cc ;; *.cc) ;; *) continue ;; esac
    [[ $f =~ ^$layers/ ]] && [ -f "$REPO/$f" ] && files+=("$f")
  done < <(git -C "$REPO" diff --name-only "$base" HEAD -- '*.cc' '*.h'; \
           git -C "$REPO" diff --name-only HEAD -- '*.cc' '*.h')
  [ ${#files[@]} = 0 ] && return 1
  local joined
  joined=$(printf '%s\n' "${files[@]}" | sort -u | sed 's/[.]/\\./g' | paste -sd '|')
  echo "$REPO/($joined)$"
}

if [ "${1:-}" = --changed ]; then
  base=$(cat "$REPO/.ci/tidy-clean" 2>/dev/null || true)
  if [ -n "$base" ] && git -C "$REPO" cat-file -e "$base^{commit}" 2>/dev/null; then
    if ! filter=$(changed_filter "$base"); then
      echo "check-tidy: no source changed since the last clean whole run (${base:0:12})"
      exit 0
    fi
    echo "check-tidy: the sources changed since the last clean whole run (${base:0:12}):"
    echo "$filter" | tr '|' '\n' | sed "s|^$REPO/(||; s|)\\$\$||; s|\\\\||g; s|^|  |"
  else
    echo "check-tidy: WARNING: .ci/tidy-clean names no commit of this history;" \
         "checking every source (a whole run)" >&2
  fi
elif [ -n "${1:-}" ]; then
  filter=$1
fi
# clang-tidy reports an unreadable .clang-tidy on stderr and goes on with its
# defaults: that is a failure here, not a pass.
if config_error=$(cd "$REPO" && clang-tidy-14 --dump-config 2>&1 >/dev/null) && [ -n "$config_error" ]; then
  echo "check-tidy: .clang-tidy is not valid: $config_error" >&2
  exit 2
fi
run-clang-tidy-14 -quiet -p "$BUILD_DIR" -j "${JOBS:-$(nproc)}" \
  -header-filter "^$REPO/$layers/" "$filter"
