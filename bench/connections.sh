#!/bin/bash
# Many TCP clients: nfs3d vs nfs-ganesha in the same run, both in one private
# network and mount namespace on loopback (nfs3d on 2049/20048, ganesha with
# its rpcbind on 2050/20050), each serving a tmpfs. For each server, RUNS
# times, interleaved (nfs3d, ganesha, nfs3d, ...):
#  (a) crowd: 16 busy clients (16 connections, 8 GETATTRs in flight each)
#      alone, then beside CROWD connections that each send a GETATTR a second.
#      Reports the crowd's and the busy clients' failed calls (want 0), busy
#      throughput with the crowd / without (want >= 0.9), the server's RSS
#      with the crowd up, and its growth per crowd connection (want <= 16 KiB).
#  (b) spread: 1,000 connections with one GETATTR each vs one connection with
#      the same 1,000 in flight (want >= 0.8).
#  (c) fairness: GETATTR p99 of a light client (a call every 2 ms on each of
#      nproc connections) alone vs beside a client with 256 in flight on one
#      connection (want <= 2).
# Prints medians with min..max over the runs; raw JSON lines are kept with --keep.
#
# Usage: bench/connections.sh [--no-build] [--runs N] [--secs S] [--crowd N] [--only a|b|c] [--keep]
#   env: NFS3D_BENCH_BUILD (build dir, default build-release/),
#        NFS3D_BENCH_THREADS (nfs3d [nfsd] threads, default 16),
#        NFS3D_BENCH_NFS3D (the nfs3d binary, e.g. an older build to compare),
#        NFS3D_BENCH_GANESHA_MAX_CONNECTIONS (ganesha's RPC_Max_Connections;
#        unset: the reference config's, i.e. ganesha's default of 1024)
# Needs root (namespaces, tmpfs mounts, ulimit -n). Stops only what it started.
set -euo pipefail
. "$(dirname "$0")/private_ns.sh" "$@"

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${NFS3D_BENCH_BUILD:-$REPO/build-release}
NFS3D_THREADS=${NFS3D_BENCH_THREADS:-16}
GANESHA_MAX_CONNECTIONS=${NFS3D_BENCH_GANESHA_MAX_CONNECTIONS:-}
RUNS=3
SECS=5
CROWD=10000
ONLY=abc
DO_BUILD=1
KEEP=0
while [ $# -gt 0 ]; do
  case $1 in
    --no-build) DO_BUILD=0 ;;
    --runs) RUNS=$2; shift ;;
    --secs) SECS=$2; shift ;;
    --crowd) CROWD=$2; shift ;;
    --only) ONLY=$2; shift ;;
    --keep) KEEP=1 ;;
    -h|--help) sed -n '2,24p' "$0"; exit 0 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done

log() { echo "[$(date +%T)] connections: $*" >&2; }
die() { log "FAIL: $*"; exit 1; }
[ "$(id -u)" = 0 ] || die "run as root"

if [ "$DO_BUILD" = 1 ]; then
  log "building Release into $BUILD"
  cmake -S "$REPO" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  ninja -C "$BUILD" -j2 nfs3d nfs3bench >/dev/null || die "build failed"
fi
NFS3D=${NFS3D_BENCH_NFS3D:-$BUILD/daemon/nfs3d}
BENCH=$BUILD/tools/nfs3bench/nfs3bench
for bin in "$NFS3D" "$BENCH"; do [ -x "$bin" ] || die "no $bin"; done
for tool in ganesha.nfsd rpcbind python3; do command -v $tool >/dev/null || die "no $tool (apt-get install nfs-ganesha nfs-ganesha-vfs rpcbind python3)"; done

# Clients and servers started from here inherit this; nfs3d raises its own
# soft limit to the hard one anyway.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
log "open files: $(ulimit -n); ephemeral ports: $(tr '\t' - < /proc/sys/net/ipv4/ip_local_port_range)"

WORK=$(mktemp -d /tmp/nfs3d-connections.XXXXXX)
PIDS=()
stop_pid() {  # SIGTERM, then SIGKILL after 10 s
  kill -0 "$1" 2>/dev/null || return 0
  kill -TERM "$1" 2>/dev/null || true
  timeout 10 tail --pid="$1" -f /dev/null 2>/dev/null || kill -KILL "$1" 2>/dev/null || true
}
cleanup() {
  for ((i = ${#PIDS[@]} - 1; i >= 0; i--)); do stop_pid "${PIDS[$i]}"; done
  for srv in nfs3d ganesha; do umount "$WORK/$srv/export" 2>/dev/null || true; done
  if [ "$KEEP" = 1 ]; then log "kept $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

declare -A PID NFS_PORT MNT_PORT
NFS_PORT=([nfs3d]=2049 [ganesha]=2050)
MNT_PORT=([nfs3d]=20048 [ganesha]=20050)
mkdir -p /var/lib/nfs && mount -t tmpfs tmpfs /var/lib/nfs && mkdir -p /var/lib/nfs/ganesha /run/rpcbind /run/ganesha
for srv in nfs3d ganesha; do
  mkdir -p "$WORK/$srv/export" "$WORK/$srv/state"
  mount -t tmpfs -o size=256m,mode=755 tmpfs "$WORK/$srv/export"
done

bench() {  # server args...: nfs3bench against that server's export
  local srv=$1
  shift
  "$BENCH" run "127.0.0.1:$WORK/$srv/export" --port "${NFS_PORT[$srv]}" \
    --mount-port "${MNT_PORT[$srv]}" --dir-entries 16 --timeout 20 --server-pid "${PID[$srv]}" "$@"
}
wait_up() {  # server
  for _ in $(seq 1 100); do
    bench "$1" --workload null --ops 10 --dir "probe" --no-json >/dev/null 2>&1 && return 0
    kill -0 "${PID[$1]}" 2>/dev/null || break
    sleep 0.2
  done
  die "$1 did not come up (see $WORK/$1/*.log)"
}

start_nfs3d() {
  local dir=$WORK/nfs3d
  echo "$dir/export 127.0.0.1(rw,no_root_squash,insecure)" > "$dir/exports"
  cat > "$dir/nfs3d.conf" <<EOF
[nfsd]
listen = 0.0.0.0
port = 2049
mountd_port = 20048
portmapper = off
threads = $NFS3D_THREADS
[paths]
state_dir = $dir/state
exports = $dir/exports
[log]
level = warning
EOF
  "$NFS3D" --config "$dir/nfs3d.conf" --foreground 2> "$dir/nfs3d.log" &
  PID[nfs3d]=$!
  PIDS+=($!)
  wait_up nfs3d
}

start_ganesha() {
  local dir=$WORK/ganesha
  rpcbind -f -w > "$dir/rpcbind.log" 2>&1 &
  PIDS+=($!)
  for _ in $(seq 1 50); do rpcinfo -p 127.0.0.1 >/dev/null 2>&1 && break; sleep 0.1; done
  sed -e "s|@TMPFS_EXPORT@|$dir/export|" -e "s|@DISK_EXPORT@|$dir/state|" \
    -e "s|NFS_Port = 2049|NFS_Port = ${NFS_PORT[ganesha]}|" \
    -e "s|MNT_Port = 20048|MNT_Port = ${MNT_PORT[ganesha]}|" \
    "$REPO/../shared/reference/ganesha-nfsv3.conf" > "$dir/ganesha.conf"
  if [ -n "$GANESHA_MAX_CONNECTIONS" ]; then  # its TIRPC limit (1024 by default)
    sed -i "s|^NFS_CORE_PARAM {|NFS_CORE_PARAM {\n\tRPC_Max_Connections = $GANESHA_MAX_CONNECTIONS;|" "$dir/ganesha.conf"
  fi
  ganesha.nfsd -F -f "$dir/ganesha.conf" -L "$dir/ganesha.log" -p "$dir/ganesha.pid" -N NIV_WARN &
  PID[ganesha]=$!
  PIDS+=($!)
  wait_up ganesha
}

rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/${PID[$1]}/status"; }
cpu_ticks() { sed 's/.*) //' "/proc/${PID[$1]}/stat" | awk '{ print $12 + $13 }'; }  # utime+stime
RESULTS=$WORK/results.jsonl
: > "$RESULTS"
record() {  # server test rep key file: the file's last JSON line as one result
  local json
  json=$(grep '^{' "$5" | tail -n 1 || true)
  [ -n "$json" ] || { log "$1 $2 $4 run $3: no result"; sed 's/^/    /' "$5" >&2; json='{"error":"no result"}'; }
  grep -q '"error":"[^"]' <<< "$json" && log "$1 $2 $4 run $3: $(grep -o '"error":"[^"]*"' <<< "$json")"
  echo "{\"server\":\"$1\",\"test\":\"$2\",\"rep\":$3,\"key\":\"$4\",\"r\":$json}" >> "$RESULTS"
}
note() {  # server test rep key value
  echo "{\"server\":\"$1\",\"test\":\"$2\",\"rep\":$3,\"key\":\"$4\",\"value\":$5}" >> "$RESULTS"
}

BUSY=(--workload getattr --connections 16 --outstanding 128 --time "$SECS")

crowd_test() {  # server rep
  local srv=$1 rep=$2 out=$WORK/$1/a.$2
  bench "$srv" "${BUSY[@]}" --dir "a-alone.$rep" > "$out.alone" 2>&1 || true
  record "$srv" a "$rep" busy_alone "$out.alone"
  local rss_before
  rss_before=$(rss_kib "$srv")
  bench "$srv" --workload getattr --connections "$CROWD" --interval 1 --time $((SECS + 7)) \
    --timeout 30 --dir "a-crowd.$rep" > "$out.crowd" 2>&1 &
  local crowd=$!
  PIDS+=($crowd)
  for _ in $(seq 1 600); do
    grep -q '^# connected' "$out.crowd" 2>/dev/null && break
    kill -0 $crowd 2>/dev/null || break
    sleep 0.1
  done
  sleep 2  # every crowd connection has sent its first call
  local rss_with
  rss_with=$(rss_kib "$srv")
  bench "$srv" "${BUSY[@]}" --dir "a-beside.$rep" > "$out.beside" 2>&1 || true
  # The crowd alone for 2 s: the server's CPU per crowd call.
  local t0 t1
  t0=$(cpu_ticks "$srv")
  sleep 2
  t1=$(cpu_ticks "$srv")
  wait $crowd || true
  note "$srv" a "$rep" crowd_only_cpu_sec_per_sec "$(awk -v a="$t0" -v b="$t1" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.4f", (b - a) / hz / 2 }')"
  record "$srv" a "$rep" busy_beside_crowd "$out.beside"
  record "$srv" a "$rep" crowd "$out.crowd"
  note "$srv" a "$rep" rss_before_kib "$rss_before"
  note "$srv" a "$rep" rss_with_crowd_kib "$rss_with"
}

spread_test() {  # server rep
  local srv=$1 rep=$2 out=$WORK/$1/b.$2
  bench "$srv" --workload getattr --connections 1000 --outstanding 1000 --time "$SECS" \
    --dir "b-many.$rep" > "$out.many" 2>&1 || true
  record "$srv" b "$rep" conns1000 "$out.many"
  bench "$srv" --workload getattr --connections 1 --outstanding 1000 --time "$SECS" \
    --dir "b-one.$rep" > "$out.one" 2>&1 || true
  record "$srv" b "$rep" conn1_inflight1000 "$out.one"
}

fairness_test() {  # server rep
  local srv=$1 rep=$2 out=$WORK/$1/c.$2
  # The light client: a GETATTR every 2 ms on each of nproc connections, so
  # that one of them shares the busy connection's io thread however the
  # server dealt the connections out (round-robin over one io thread a core).
  local light=(--workload getattr --connections "$(nproc)" --interval 0.002 --time "$SECS")
  bench "$srv" "${light[@]}" --dir "c-alone.$rep" > "$out.alone" 2>&1 || true
  record "$srv" c "$rep" light_alone "$out.alone"
  bench "$srv" --workload getattr --connections 1 --outstanding 256 --time $((SECS + 3)) \
    --dir "c-busy.$rep" > "$out.busy" 2>&1 &
  local busy=$!
  PIDS+=($busy)
  sleep 1.5
  bench "$srv" "${light[@]}" --dir "c-beside.$rep" > "$out.beside" 2>&1 || true
  wait $busy || true
  record "$srv" c "$rep" light_beside_busy "$out.beside"
  record "$srv" c "$rep" busy256 "$out.busy"
}

log "uptime: $(uptime)"
start_nfs3d
start_ganesha
log "nfs3d pid ${PID[nfs3d]}, ganesha pid ${PID[ganesha]}; $RUNS runs x ${SECS}s, crowd $CROWD"
for rep in $(seq 1 "$RUNS"); do
  for srv in nfs3d ganesha; do
    [[ $ONLY == *a* ]] && { log "$srv crowd run $rep"; crowd_test "$srv" "$rep"; }
    [[ $ONLY == *b* ]] && { log "$srv spread run $rep"; spread_test "$srv" "$rep"; }
    [[ $ONLY == *c* ]] && { log "$srv fairness run $rep"; fairness_test "$srv" "$rep"; }
    kill -0 "${PID[$srv]}" 2>/dev/null || die "$srv is no longer running (see $WORK/$srv/)"
  done
done
python3 "$REPO/bench/connections_table.py" "$RESULTS" "$CROWD" "$(nproc)" "$(uptime)"
grep -h "connection\|limit" "$WORK/nfs3d/nfs3d.log" "$WORK/ganesha/ganesha.log" 2>/dev/null | sort | uniq -c | sort -rn | head -5 || true
echo "nfs3d: [nfsd] threads = $NFS3D_THREADS, max_connections default; ganesha: ../shared/reference/ganesha-nfsv3.conf${GANESHA_MAX_CONNECTIONS:+ with RPC_Max_Connections = $GANESHA_MAX_CONNECTIONS}; nfs3bench --connections (one epoll thread per process)"
