#!/bin/bash
# nfs3d vs nfs-ganesha, side by side, on loopback.
#
# Builds nfs3d and nfs3bench in Release (build-release/), starts each server in
# a network namespace of its own (only lo) with a private mount namespace
# (tmpfs on /run and /var/lib/nfs, a tmpfs export), runs the same nfs3bench
# workloads against both -- interleaved, so machine noise hits both alike --
# and prints one table: throughput or ops/s of both servers, their ratio,
# server CPU per GB / per call (utime+stime of the server over the timed part,
# from /proc/PID/stat), calls per fsync (FILE_SYNC row, counted with perf's
# syscall tracepoints), UDP receive-buffer drops, peak RSS. Medians of RUNS runs.
# Under the table, what the machine itself allows, measured in the same run:
# loopback TCP (iperf3), the least CPU per GB of copying file data over it
# (bench/copy_floor.cc) and, with the FILE_SYNC row, the disk's own FILE_SYNC
# ceiling (bench/disk_sync_ceiling.cc).
#
# Usage: bench/run.sh [--no-build] [--runs N] [--secs S] [--only REGEX] [--keep]
#   env: NFS3D_BENCH_BUILD (build dir), NFS3D_BENCH_DISK (parent of the disk export),
#        NFS3D_BENCH_THREADS (nfs3d worker threads, default 16 like nfs3d.conf),
#        NFS3D_BENCH_SENDFILE (nfs3d [tcp] sendfile: off, the default, or on)
# Needs root. Stops only the processes it started.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${NFS3D_BENCH_BUILD:-$REPO/build-release}
DISK_PARENT=${NFS3D_BENCH_DISK:-/var/tmp}
NFS3D_THREADS=${NFS3D_BENCH_THREADS:-16}  # nfs3d [nfsd] threads; 16 lets a sync gather 16 calls
NFS3D_SENDFILE=${NFS3D_BENCH_SENDFILE:-off}  # on: READ data spliced from the page cache
RUNS=3
SECS=3
ONLY=""
DO_BUILD=1
KEEP=0
while [ $# -gt 0 ]; do
  case $1 in
    --no-build) DO_BUILD=0 ;;
    --runs) RUNS=$2; shift ;;
    --secs) SECS=$2; shift ;;
    --only) ONLY=$2; shift ;;
    --keep) KEEP=1 ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done

log() { echo "[$(date +%T)] bench: $*" >&2; }
die() { log "FAIL: $*"; exit 1; }
[ "$(id -u)" = 0 ] || die "run as root (namespaces, tmpfs mounts)"

# ---- Build and tools.
if [ "$DO_BUILD" = 1 ]; then
  log "building Release into $BUILD"
  cmake -S "$REPO" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  ninja -C "$BUILD" -j2 nfs3d nfs3bench disk_sync_ceiling copy_floor >/dev/null || die "build failed"
fi
NFS3D=$BUILD/nfsd/nfs3d
BENCH=$BUILD/tools/nfs3bench/nfs3bench
CEILING=$BUILD/bench/disk_sync_ceiling
FLOOR=$BUILD/bench/copy_floor
for bin in "$NFS3D" "$BENCH" "$CEILING" "$FLOOR"; do [ -x "$bin" ] || die "no $bin"; done
need_pkg() {  # idempotent install of Debian packages
  local missing=()
  for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  [ ${#missing[@]} = 0 ] && return 0
  log "installing ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >/dev/null
}
need_pkg iperf3 nfs-ganesha nfs-ganesha-vfs rpcbind linux-perf python3

# ---- Work area and cleanup. Only PIDs started here are ever signalled.
WORK=$(mktemp -d /tmp/nfs3d-bench.XXXXXX)
DISK=$(mktemp -d "$DISK_PARENT/nfs3d-bench-disk.XXXXXX")  # disk-backed exports live here
PIDS=()
cleanup() {
  local pid
  for ((i = ${#PIDS[@]} - 1; i >= 0; i--)); do
    pid=${PIDS[$i]}
    kill -0 "$pid" 2>/dev/null || continue
    kill -TERM "$pid" 2>/dev/null || true
    timeout 10 tail --pid="$pid" -f /dev/null 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
  done
  rm -rf "$DISK"
  if [ "$KEEP" = 1 ]; then log "kept $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- One holder process per server keeps its namespaces alive; everything
# for that server runs inside them with nsenter.
declare -A HOLDER SERVER_PID
start_ns() {
  local name=$1 dir=$WORK/$1
  mkdir -p "$dir/tmpfs" "$DISK/$name"
  chmod 755 "$DISK/$name"
  unshare --net --mount --propagation private -- bash -c '
    set -e
    ip link set lo up
    mount -t tmpfs tmpfs /run
    mkdir -p /run/rpcbind /run/ganesha /var/lib/nfs
    mount -t tmpfs tmpfs /var/lib/nfs
    mkdir -p /var/lib/nfs/ganesha
    mount -t tmpfs -o size=2g,mode=755 tmpfs "$1"
    mkdir -m 755 "$1/sub"  # the sub-directory export (most real exports are one)
    touch "$2"
    exec sleep 100000' _ "$dir/tmpfs" "$dir/ready" &
  HOLDER[$name]=$!
  PIDS+=($!)
  for _ in $(seq 1 50); do [ -e "$dir/ready" ] && return 0; sleep 0.1; done
  die "namespace for $name did not come up"
}
in_ns() { local name=$1; shift; nsenter -t "${HOLDER[$name]}" -n -m -- "$@"; }
# For `in_ns_bg NAME CMD... &`: the background subshell becomes CMD itself
# (nsenter without -p does not fork), so $! is the command's PID.
in_ns_bg() { local name=$1; shift; exec nsenter -t "${HOLDER[$name]}" -n -m -- "$@"; }

probe() {  # name proto: MOUNT + a few NFS NULL calls (rpcinfo -n still asks rpcbind)
  in_ns "$1" timeout 10 "$BENCH" run "127.0.0.1:$WORK/$1/tmpfs" --proto "$2" --port 2049 \
    --mount-port 20048 --workload null --ops 10 --dir-entries 1 --timeout 2 --dir "probe.$2" \
    --no-json >/dev/null 2>&1
}
wait_port() {  # name: until NFS v3 answers over TCP and UDP
  local name=$1
  for _ in $(seq 1 100); do
    if probe "$name" tcp && probe "$name" udp; then
      return 0
    fi
    kill -0 "${SERVER_PID[$name]}" 2>/dev/null || break
    sleep 0.2
  done
  return 1
}

start_nfs3d() {
  local dir=$WORK/nfs3d
  mkdir -p "$dir/state"
  cat > "$dir/exports" <<EOF
$dir/tmpfs 127.0.0.1(rw,no_root_squash,insecure)
$dir/tmpfs/sub 127.0.0.1(rw,no_root_squash,insecure)
$DISK/nfs3d 127.0.0.1(rw,no_root_squash,insecure)
EOF
  cat > "$dir/nfs3d.conf" <<EOF
[nfsd]
listen = 0.0.0.0
port = 2049
mountd_port = 20048
portmapper = off
threads = $NFS3D_THREADS
[tcp]
sendfile = $NFS3D_SENDFILE
[paths]
state_dir = $dir/state
exports = $dir/exports
[log]
level = warning
EOF
  in_ns_bg nfs3d "$NFS3D" --config "$dir/nfs3d.conf" --foreground 2> "$dir/nfs3d.log" &
  SERVER_PID[nfs3d]=$!
  PIDS+=($!)
  wait_port nfs3d || { tail -20 "$dir/nfs3d.log" >&2; die "nfs3d did not come up"; }
}

start_ganesha() {
  local dir=$WORK/ganesha
  in_ns_bg ganesha rpcbind -f -w > "$dir/rpcbind.log" 2>&1 &
  PIDS+=($!)
  for _ in $(seq 1 50); do in_ns ganesha rpcinfo -p 127.0.0.1 >/dev/null 2>&1 && break; sleep 0.1; done
  sed -e "s|@TMPFS_EXPORT@|$dir/tmpfs|" -e "s|@DISK_EXPORT@|$DISK/ganesha|" \
    "$REPO/../shared/reference/ganesha-nfsv3.conf" > "$dir/ganesha.conf"
  cat >> "$dir/ganesha.conf" <<EOF
EXPORT {
	Export_Id = 3;
	Path = $dir/tmpfs/sub;
	Pseudo = /sub;
	MaxRead = 1048576;
	MaxWrite = 1048576;
	FSAL { Name = VFS; }
}
EOF
  in_ns_bg ganesha ganesha.nfsd -F -f "$dir/ganesha.conf" -L "$dir/ganesha.log" \
    -p "$dir/ganesha.pid" -N NIV_WARN &
  SERVER_PID[ganesha]=$!
  PIDS+=($!)
  wait_port ganesha || { tail -20 "$dir/ganesha.log" >&2; die "ganesha did not come up"; }
}

# ---- Workloads: id | proto | export | nfs3bench arguments.
# Exports: sub = a sub-directory of the tmpfs (what most sites export, and
# what costs a server the confinement of its handles), fsroot = the tmpfs
# itself, disk = a sub-directory of the disk's file system. Metadata rows over
# TCP send one call per send(2), as the Linux client does.
KERNEL_LIKE="--send-per-call"
WORKLOADS=(
  "tcp-write-1m-n4|tcp|sub|--workload write --bs 1m --outstanding 4"
  "tcp-write-1m-n16|tcp|sub|--workload write --bs 1m --outstanding 16"
  "tcp-read-1m-n4|tcp|sub|--workload read --bs 1m --outstanding 4 --file-size 256m"
  "tcp-read-1m-n16|tcp|sub|--workload read --bs 1m --outstanding 16 --file-size 256m"
  "udp-write-32k-n16|udp|sub|--workload write --bs 32k --outstanding 16"
  "udp-read-32k-n16|udp|sub|--workload read --bs 32k --outstanding 16 --file-size 128m"
  "tcp-getattr-n32|tcp|sub|--workload getattr --outstanding 32 --dir-entries 16 $KERNEL_LIKE"
  "tcp-getattr-n32-fsroot|tcp|fsroot|--workload getattr --outstanding 32 --dir-entries 16 $KERNEL_LIKE"
  "tcp-getattr-n32-disk|tcp|disk|--workload getattr --outstanding 32 --dir-entries 16 $KERNEL_LIKE"
  "tcp-lookup-n32|tcp|sub|--workload lookup --outstanding 32 --dir-entries 16 $KERNEL_LIKE"
  "udp-getattr-n32|udp|sub|--workload getattr --outstanding 32 --dir-entries 16"
  "tcp-null-n32|tcp|sub|--workload null --outstanding 32 --dir-entries 16 $KERNEL_LIKE"
  "udp-null-n32|udp|sub|--workload null --outstanding 32 --dir-entries 16"
  "tcp-create-setattr-remove-n32|tcp|sub|--workload createsetattr --outstanding 32 --dir-entries 16 $KERNEL_LIKE"
  "tcp-write-filesync-64k-n16-disk|tcp|disk|--workload write --bs 64k --outstanding 16 --stable filesync --file-size 64m"
)

RESULTS=$WORK/results.jsonl
: > "$RESULTS"

udp_rcvbuf_errors() {  # name: RcvbufErrors of the namespace's UDP stack
  in_ns "$1" awk '/^Udp:/ { if (!h) { for (i = 1; i <= NF; i++) col[$i] = i; h = 1 } else print $col["RcvbufErrors"] }' /proc/net/snmp
}

run_one() {  # server workload-spec rep
  local srv=$1 spec=$2 rep=$3
  local id proto exp args
  IFS='|' read -r id proto exp args <<< "$spec"
  local path
  case $exp in
    sub) path=$WORK/$srv/tmpfs/sub ;;
    fsroot) path=$WORK/$srv/tmpfs ;;
    disk) path=$DISK/$srv ;;
    *) die "unknown export $exp" ;;
  esac
  local pid=${SERVER_PID[$srv]}
  local out=$WORK/$srv/$id.$rep.out perf_out=$WORK/$srv/$id.$rep.perf perf_pid=""
  if [[ $args == *"--stable filesync"* ]]; then
    perf stat -x, -e syscalls:sys_enter_fsync,syscalls:sys_enter_fdatasync -p "$pid" \
      -o "$perf_out" 2>/dev/null &
    perf_pid=$!
    PIDS+=($perf_pid)
    sleep 0.3
  fi
  local drops_before drops_after
  drops_before=$(udp_rcvbuf_errors "$srv")
  # shellcheck disable=SC2086
  in_ns "$srv" timeout $((SECS * 4 + 60)) "$BENCH" run "127.0.0.1:$path" --proto "$proto" \
    --port 2049 --mount-port 20048 --time "$SECS" --server-pid "$pid" --timeout 20 \
    --dir "b.$id.$rep" $args > "$out" 2>&1 || log "$srv $id run $rep: nfs3bench failed (see below)"
  drops_after=$(udp_rcvbuf_errors "$srv")
  local syncs=-1
  if [ -n "$perf_pid" ]; then
    kill -INT "$perf_pid" 2>/dev/null || true
    wait "$perf_pid" 2>/dev/null || true
    syncs=$(awk -F, '/syscalls:sys_enter_f(data)?sync/ { s += $1 } END { print s + 0 }' "$perf_out")
  fi
  local json
  json=$(grep '^{' "$out" | tail -n 1 || true)
  if [ -z "$json" ]; then
    log "$srv $id run $rep: no result"; sed 's/^/    /' "$out" >&2
    json='{"error":"no result"}'
  elif grep -q '"error":"[^"]' <<< "$json"; then
    log "$srv $id run $rep: $(grep -o '"error":"[^"]*"' <<< "$json")"
  fi
  echo "{\"server\":\"$srv\",\"id\":\"$id\",\"rep\":$rep,\"syncs\":$syncs,\"rcvbuf_errors\":$((drops_after - drops_before)),\"r\":$json}" >> "$RESULTS"
}

iperf_baseline() {  # loopback TCP in the nfs3d namespace, Mbit/s per line
  local srv=nfs3d
  in_ns_bg "$srv" iperf3 -s -p 5201 > /dev/null 2>&1 &
  local ipid=$!
  PIDS+=($ipid)
  sleep 0.5
  for rep in $(seq 1 "$RUNS"); do
    in_ns "$srv" iperf3 -c 127.0.0.1 -p 5201 -t "$SECS" -J 2>/dev/null |
      python3 -c 'import json,sys; print(json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"]/1e6)' \
      >> "$WORK/iperf.txt" || true
  done
  kill -TERM "$ipid" 2>/dev/null || true
  wait "$ipid" 2>/dev/null || true
}

copy_floor_baseline() {  # one thread's recv+pwrite / pread+send / sendfile on lo, tmpfs
  local dir=$WORK/nfs3d/tmpfs/copy_floor  # on the export's tmpfs, mounted inside the namespace
  in_ns nfs3d mkdir -p "$dir"
  for rep in $(seq 1 "$RUNS"); do
    for mode in write read sendfile; do
      in_ns nfs3d "$FLOOR" "$mode" "$dir" "$SECS" >> "$WORK/copy_floor.jsonl" ||
        log "copy_floor $mode failed"
    done
  done
  in_ns nfs3d rmdir "$dir"
}

disk_sync_baseline() {  # FILE_SYNC 64 KiB x 16 straight to the disk, each way
  mkdir -p "$DISK/ceiling"
  for mode in gathered per-call batch once; do
    "$CEILING" "$DISK/ceiling" "$mode" 16 65536 $((64 << 20)) >> "$WORK/disk_ceiling.jsonl" ||
      log "disk_sync_ceiling $mode failed"
  done
}

# ---- Go.
log "uptime: $(uptime)"
start_ns nfs3d
start_ns ganesha
start_nfs3d
start_ganesha
log "nfs3d pid ${SERVER_PID[nfs3d]}, ganesha pid ${SERVER_PID[ganesha]}; $RUNS runs x ${SECS}s per workload"
: > "$WORK/iperf.txt"
iperf_baseline
: > "$WORK/copy_floor.jsonl"
copy_floor_baseline
: > "$WORK/disk_ceiling.jsonl"
for spec in "${WORKLOADS[@]}"; do
  id=${spec%%|*}
  [ -n "$ONLY" ] && ! [[ $id =~ $ONLY ]] && continue
  log "$id"
  for rep in $(seq 1 "$RUNS"); do
    run_one nfs3d "$spec" "$rep"
    run_one ganesha "$spec" "$rep"
    # The disk's ceiling, measured between the two servers' FILE_SYNC runs.
    if [[ $id == *filesync* ]]; then disk_sync_baseline; fi
  done
done
declare -A RSS
for srv in nfs3d ganesha; do
  RSS[$srv]=$(awk '/^VmHWM:/ { print $2 }' "/proc/${SERVER_PID[$srv]}/status" 2>/dev/null || echo 0)
  kill -0 "${SERVER_PID[$srv]}" 2>/dev/null || log "WARNING: $srv is no longer running"
done

python3 "$REPO/bench/table.py" "$RESULTS" "$WORK/iperf.txt" "${RSS[nfs3d]}" "${RSS[ganesha]}" \
  "$(nproc)" "$(uptime)" "$WORK/disk_ceiling.jsonl" "$WORK/copy_floor.jsonl"
echo "nfs3d: [nfsd] threads = $NFS3D_THREADS, [tcp] sendfile = $NFS3D_SENDFILE, other settings default; ganesha: ../shared/reference/ganesha-nfsv3.conf (default worker count)"
echo "workloads: nfs3bench, ${SECS}s per run, $RUNS runs per server, interleaved; write rows read the data back and verify it"
