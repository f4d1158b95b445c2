# Sourced by .ci/run and scripts/quickstart.sh: runs named stages, prints
# each as it starts and ends with its wall time, and a table of them all at
# the end (also when a stage fails), so a 10-minute first build shows
# progress and a slow CI run says where its time went.
#   stage NAME CMD...      runs CMD as stage NAME; its status is returned
#   stage_table            prints the table (the EXIT trap does it too)
STAGE_NAMES=()
STAGE_TIMES=()
STAGE_RESULTS=()
STAGE_START=$SECONDS

stage_seconds() { printf '%d:%02d' $(($1 / 60)) $(($1 % 60)); }

stage() {
  local name=$1 start=$SECONDS status=0
  shift
  echo "=== $name ($(date +%H:%M:%S))" >&2
  "$@" || status=$?
  local took=$((SECONDS - start))
  STAGE_NAMES+=("$name")
  STAGE_TIMES+=("$took")
  STAGE_RESULTS+=("$([ $status = 0 ] && echo ok || echo "FAILED ($status)")")
  echo "=== $name: $([ $status = 0 ] && echo done || echo "FAILED ($status)") in $(stage_seconds $took)" >&2
  return $status
}

stage_table() {
  [ ${#STAGE_NAMES[@]} -gt 0 ] || return 0
  local i
  printf '\n%-44s %8s  %s\n' "stage" "wall" "result" >&2
  for i in "${!STAGE_NAMES[@]}"; do
    printf '%-44s %8s  %s\n' "${STAGE_NAMES[$i]}" "$(stage_seconds "${STAGE_TIMES[$i]}")" \
      "${STAGE_RESULTS[$i]}" >&2
  done
  printf '%-44s %8s\n' "total" "$(stage_seconds $((SECONDS - STAGE_START)))" >&2
}
