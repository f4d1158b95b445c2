#!/bin/bash
# What clients see while the server is replaced under them (a benchmark, not
# a test): a stream of calls runs across EVENTS replacements of the server,
# each GAP seconds after the last one answered, and nfs3bench reports per
# run the calls that failed, the longest call and the 99th percentile (send
# -> reply, across the reconnect and the resend), and the slowest 100 ms and
# 1 s window against the median one (the throughput dip). Side by side, in
# one run of this script, for three ways of replacing the server:
#   handover  nfs3d --takeover (docs/handover.md)
#   restart   nfs3d stopped (SIGTERM) and started again
#   ganesha   nfs-ganesha (VFS, ../shared/reference/ganesha-nfsv3.conf)
#             stopped and started again
# and two workloads: GETATTR with 32 calls in flight and 1 MiB UNSTABLE
# WRITEs with 16 in flight, over one TCP connection (nfs3bench
# --connections 1: a connection the server closes is opened again and its
# calls sent again with the same xids, as the Linux client does; it retries
# a refused connect every 100 ms). UDP is not measured (--connections is TCP
# only). Everything runs in a private network and mount namespace, on a tmpfs
# export, over loopback. Needs root.
#   bench/handover.sh [--runs N] [--events N] [--gap SEC] [--modes LIST] [--build DIR]
set -euo pipefail
# shellcheck source=bench/private_ns.sh
. "$(dirname "$0")/private_ns.sh" "$@"
REPO=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$REPO/build
RUNS=2
EVENTS=10
GAP=2
MODES=handover,restart,ganesha
while [ $# -gt 0 ]; do
  case $1 in
    --runs) RUNS=$2; shift 2 ;;
    --events) EVENTS=$2; shift 2 ;;
    --gap) GAP=$2; shift 2 ;;
    --modes) MODES=$2; shift 2 ;;
    --build) BUILD=$2; shift 2 ;;
    *) echo "usage: see the head of $0" >&2; exit 2 ;;
  esac
done
log() { echo "[$(date +%T)] handover-bench: $*" >&2; }
die() { log "FAIL: $*"; exit 1; }
NFS3D=$BUILD/daemon/nfs3d
BENCH=$BUILD/tools/nfs3bench/nfs3bench
for bin in "$NFS3D" "$BENCH"; do [ -x "$bin" ] || die "no $bin (build first)"; done
[[ ",$MODES," != *,ganesha,* ]] || command -v ganesha.nfsd >/dev/null ||
  die "no ganesha.nfsd: apt-get install nfs-ganesha nfs-ganesha-vfs rpcbind"

WORK=$(mktemp -d /tmp/nfs3d-hobench.XXXXXX)
mount -t tmpfs -o size=1g,mode=755 tmpfs "$WORK"
mkdir -p "$WORK/export" "$WORK/state" /run/rpcbind /run/ganesha
if [ -d /var/lib/nfs ]; then  # ganesha's recovery directory, private to this run
  mount -t tmpfs tmpfs /var/lib/nfs
  mkdir -p /var/lib/nfs/ganesha
fi
PIDS=()    # rpcbind
SERVER=""  # the PID serving now (a predecessor that exited is forgotten)
BENCH_PID=""
stop_pid() {  # SIGTERM, then SIGKILL after 30 s
  kill -0 "$1" 2>/dev/null || return 0
  kill -TERM "$1" 2>/dev/null || true
  timeout 30 tail --pid="$1" -f /dev/null 2>/dev/null || kill -KILL "$1" 2>/dev/null || true
}
cleanup() {
  local i
  [ -z "$BENCH_PID" ] || stop_pid "$BENCH_PID"
  [ -z "$SERVER" ] || stop_pid "$SERVER"
  for ((i = ${#PIDS[@]} - 1; i >= 0; i--)); do stop_pid "${PIDS[$i]}"; done
  umount -l "$WORK" 2>/dev/null || true
  rmdir "$WORK" 2>/dev/null || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM

cat > "$WORK/exports" <<EOF
$WORK/export 127.0.0.1(rw,no_root_squash,insecure)
EOF
cat > "$WORK/nfs3d.conf" <<EOF
[nfsd]
listen = 0.0.0.0
port = 2049
mountd_port = 20048
portmapper = off
[paths]
state_dir = $WORK/state
exports = $WORK/exports
[log]
level = info
EOF
sed -e "s|@TMPFS_EXPORT@|$WORK/export|" -e "s|@DISK_EXPORT@|$WORK/export/disk|" \
  "$REPO/../shared/reference/ganesha-nfsv3.conf" > "$WORK/ganesha.conf"
mkdir -p "$WORK/export/disk"

answers() {  # NFS NULL over TCP through MOUNT, as a client would start
  timeout 5 "$BENCH" run "127.0.0.1:$WORK/export" --port 2049 --mount-port 20048 \
    --workload null --ops 1 --dir-entries 1 --timeout 1 --dir probe --no-json >/dev/null 2>&1
}
wait_answers() {
  for _ in $(seq 1 300); do answers && return 0; sleep 0.05; done
  return 1
}
start_nfs3d() {  # [--takeover]
  "$NFS3D" --config "$WORK/nfs3d.conf" --foreground "$@" 2>> "$WORK/nfs3d.log" &
  SERVER=$!
}
start_ganesha() {
  ganesha.nfsd -F -f "$WORK/ganesha.conf" -L "$WORK/ganesha.log" -p "$WORK/ganesha.pid" \
    -N NIV_WARN &
  SERVER=$!
}
start_server() {  # mode
  if [ "$1" = ganesha ]; then start_ganesha; else start_nfs3d; fi
  wait_answers || { tail -20 "$WORK/nfs3d.log" "$WORK/ganesha.log" 2>/dev/null >&2; die "$1 did not come up"; }
}
# replace MODE: the replacement under test; returns once the new server
# answers (handover: once the predecessor has exited).
replace() {
  local old=$SERVER
  case $1 in
    handover)
      start_nfs3d --takeover
      timeout 60 tail --pid="$old" -f /dev/null || die "the predecessor $old did not exit"
      kill -0 "$SERVER" 2>/dev/null || { tail -20 "$WORK/nfs3d.log" >&2; die "the successor died"; } ;;
    restart) stop_pid "$old"; start_nfs3d ;;
    ganesha) stop_pid "$old"; start_ganesha ;;
  esac
  wait_answers || die "$1: no server answers"
}

if [[ ",$MODES," == *,ganesha,* ]]; then
  rpcbind -f -w > "$WORK/rpcbind.log" 2>&1 &
  PIDS+=($!)
fi
declare -A ARGS=(
  [getattr]="--workload getattr --connections 1 --outstanding 32 --dir-entries 1"
  [write]="--workload write --bs 1m --connections 1 --outstanding 16"
)
RESULTS=$WORK/results
log "$RUNS runs x modes $MODES x workloads getattr (32 in flight), write 1 MiB (16 in flight);" \
  "$EVENTS replacements, each $GAP s after the last answered"
for run in $(seq 1 "$RUNS"); do
  for mode in ${MODES//,/ }; do
    start_server "$mode"
    for workload in getattr write; do
      out=$WORK/$mode-$workload-$run.out
      # shellcheck disable=SC2086  # ARGS holds several arguments
      "$BENCH" run "127.0.0.1:$WORK/export" --port 2049 --mount-port 20048 ${ARGS[$workload]} \
        --time 3600 --timeout 60 --dir "bench-$workload" > "$out" 2>&1 &
      BENCH_PID=$!
      for _ in $(seq 1 200); do grep -q '^# connected' "$out" && break; sleep 0.05; done
      took=()
      for _ in $(seq 1 "$EVENTS"); do
        sleep "$GAP"
        t0=$(date +%s.%N)
        replace "$mode"
        took+=("$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.3f", b - a }')")
      done
      sleep "$GAP"
      kill -INT "$BENCH_PID"      # ends the stream; it reports once its calls are answered
      wait "$BENCH_PID" || true  # a failed call is in its JSON line
      BENCH_PID=""
      json=$(grep '^{' "$out" | tail -n 1)
      [ -n "$json" ] || { cat "$out" >&2; die "$mode $workload: no result"; }
      printf '%s\t%s\t%s\t%s\t%s\n' "$mode" "$workload" "$run" "$(IFS=,; echo "${took[*]}")" \
        "$json" >> "$RESULTS"
      log "$mode $workload run $run: $(grep -v '^[{#]' "$out" | head -n 2 | tr '\n' ' ')"
    done
    stop_pid "$SERVER"
    SERVER=""
  done
done

python3 - "$RESULTS" "$RUNS" "$EVENTS" "$GAP" <<'EOF'
import json, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    mode, workload, run, took, js = line.rstrip("\n").split("\t", 4)
    r = json.loads(js)
    r["took"] = [float(t) for t in took.split(",") if t]
    rows.setdefault((workload, mode), []).append(r)
runs, events, gap = sys.argv[2], sys.argv[3], sys.argv[4]
print(f"Server replaced {events} times, {gap} s after the last one answered, under one TCP stream;"
      f" {runs} runs per row:")
print("median [min-max] over the runs. dip = slowest window / median window (100 ms; 1 s).")
print("replace = wall time of one replacement until the new server answers (median over all).")
def cell(vals, fmt):
    return f"{fmt.format(statistics.median(vals))} [{fmt.format(min(vals))}-{fmt.format(max(vals))}]"
head = f"{'workload':9} {'server':9} {'errors':>6} {'longest call ms':>22} {'p99 ms':>20} " \
       f"{'dip 100ms':>18} {'dip 1s':>18} {'median calls/s':>15} {'replace s':>9}"
print(head)
for (workload, mode), rs in sorted(rows.items(), key=lambda kv: (kv[0][0], ["handover", "restart", "ganesha"].index(kv[0][1]))):
    errors = sum(int(r["errors"]) for r in rs)
    dip100 = [100 * r["min_100ms"] / r["median_100ms"] if r["median_100ms"] else 0 for r in rs]
    dip1 = [100 * r["min_1s"] / r["median_1s"] if r["median_1s"] else 0 for r in rs]
    took = [t for r in rs for t in r["took"]]
    print(f"{workload:9} {mode:9} {errors:>6} {cell([r['max_ms'] for r in rs], '{:.1f}'):>22} "
          f"{cell([r['p99_ms'] for r in rs], '{:.2f}'):>20} {cell(dip100, '{:.0f}%'):>18} "
          f"{cell(dip1, '{:.0f}%'):>18} {statistics.median(r['median_1s'] for r in rs):>15.0f} "
          f"{statistics.median(took) if took else 0:>9.2f}")
EOF
