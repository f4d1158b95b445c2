#!/bin/bash
# Fails if a tracked .cc/.h file differs from what clang-format-14 makes of it
# (.clang-format). With --fix, formats them in place instead.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
cd "$REPO"
mode=(--dry-run -Werror)
[ "${1:-}" = --fix ] && mode=(-i)
git ls-files -z '*.cc' '*.h' | xargs -0 -r -P"$(nproc)" -n 20 clang-format-14 "${mode[@]}"
