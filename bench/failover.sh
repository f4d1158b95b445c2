#!/bin/bash
# Failover and failback under keepalived, as the Linux kernel client sees
# them (a benchmark, not a test): runs integration.lab_heads RUNS times (one
# kill of a machine and one return per run, docs/multi-head.md) and reports,
# per event, the longest call the client saw (an fsynced 1 MiB write), the
# 99th percentile and the median, as the median and range over the runs.
# Needs root and the lab (../shared/lab); takes the lab's lock for each run.
#   bench/failover.sh [--runs N] [--nfs3d BIN] [--lock-tool BIN]
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
RUNS=5
NFS3D=$REPO/build/daemon/nfs3d
TOOL=$REPO/build/tests/nlm/nlm_lock_tool
while [ $# -gt 0 ]; do
  case $1 in
    --runs) RUNS=$2; shift 2 ;;
    --nfs3d) NFS3D=$2; shift 2 ;;
    --lock-tool) TOOL=$2; shift 2 ;;
    *) echo "usage: see the head of $0" >&2; exit 2 ;;
  esac
done
LOCK=${NFS_LAB_LOCK:-$(cd "$REPO/.." && pwd)/.lab.lock}
PAUSES=$(mktemp /var/tmp/nfs3d-failover.XXXXXX)
trap 'rm -f "$PAUSES"' EXIT
# A run that fails keeps its logs in /var/tmp/nfs3d-failover-run.* and is
# left out of the figures.
failed=0
for i in $(seq 1 "$RUNS"); do
  echo "failover: run $i of $RUNS" >&2
  keep=$(mktemp -d /var/tmp/nfs3d-failover-run.XXXXXX)
  if PAUSE_FILE=$PAUSES LAB_HEADS_KEEP=$keep flock "$LOCK" "$REPO/tests/integration/lab_heads_test.sh" \
      "$NFS3D" "$TOOL" > "$keep/test.log" 2>&1; then
    rm -rf "$keep"
  else
    failed=$((failed + 1))
    echo "failover: run $i failed: $(grep -m1 FAIL "$keep/test.log" || true) (logs in $keep)" >&2
  fi
done
echo "$((RUNS - failed)) of $RUNS runs passed"
python3 - "$PAUSES" "$RUNS" <<'EOF'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    phase, *fields = line.split()
    values = dict(f.split("=") for f in fields)
    rows.setdefault(phase, []).append(values)
print(f"Client-visible pause under keepalived (advert_int 1), {sys.argv[2]} runs: "
      "median [min-max] over the runs, seconds")
print(f"{'event':10} {'longest call':>22} {'p99 call':>22} {'median call':>22}")
for phase in ("failover", "failback"):
    cells = []
    for key in ("max", "p99", "median"):
        v = [float(r[key]) for r in rows.get(phase, [])]
        cells.append(f"{statistics.median(v):.2f} [{min(v):.2f}-{max(v):.2f}]" if v else "-")
    print(f"{phase:10} {cells[0]:>22} {cells[1]:>22} {cells[2]:>22}")
EOF
