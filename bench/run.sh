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
# syscall tracepoints), UDP receive-buffer drops, peak RSS (per row: VmHWM reset
# through /proc/PID/clear_refs before each run; and over the whole table). Medians of RUNS runs.
# Under the table, what the machine itself allows, measured in the same run:
# loopback TCP (iperf3), the least CPU per GB of copying file data over it
# (bench/copy_floor.cc) and, with the FILE_SYNC row, the disk's own FILE_SYNC
# ceiling (bench/disk_sync_ceiling.cc).
#
# --ceph: the Ceph mode. One one-node cluster (tests/fixtures/ceph-cluster.sh) in one
# namespace with both servers (nfs3d on 2049, ganesha with FSAL_CEPH on 2050);
# each serves a directory of the same CephFS; the rows are the issue's bulk
# and metadata workloads; under the table, the same workloads made straight
# on libcephfs with no NFS (bench/cephfs_ceiling.cc), the ceiling.
#
# Usage: bench/run.sh [--no-build] [--runs N] [--secs S] [--only REGEX] [--keep] [--ceph]
#   env: NFS3D_BENCH_BUILD (build dir), NFS3D_BENCH_DISK (parent of the disk export),
#        NFS3D_BENCH_THREADS (nfs3d worker threads, default 16 like nfs3d.conf),
#        NFS3D_BENCH_SENDFILE (nfs3d [tcp] sendfile, on, off or auto; unset: nfs3d's default),
#        NFS3D_BENCH_UDP_SENDFILE (nfs3d [udp] sendfile, off or on; unset: nfs3d's default),
#        NFS3D_BENCH_SPLICE_WRITES (nfs3d [tcp] splice_writes; unset: nfs3d's default),
#        NFS3D_BENCH_GLIBC_TUNABLES (GLIBC_TUNABLES for nfs3d only, e.g. glibc.malloc.arena_max=2),
#        NFS3D_BENCH_CEPH_CACHE_SIZE (nfs3d [ceph] cache_size, e.g. 0 for ceph.conf's; unset: default),
#        NFS3D_BENCH_PEER_NFS3D (an nfs3d binary, e.g. an older commit's Release build, that runs in
#        ganesha's place with nfs3d's configuration: a change measured against the code before it,
#        side by side; the table calls it "peer")
# Needs root. Stops only the processes it started.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${NFS3D_BENCH_BUILD:-$REPO/build-release}
DISK_PARENT=${NFS3D_BENCH_DISK:-/var/tmp}
NFS3D_THREADS=${NFS3D_BENCH_THREADS:-16}  # nfs3d [nfsd] threads; 16 lets a sync gather 16 calls
NFS3D_SENDFILE=${NFS3D_BENCH_SENDFILE:-}  # off: READ data copied through user space
NFS3D_UDP_SENDFILE=${NFS3D_BENCH_UDP_SENDFILE:-}  # the same for UDP READs
NFS3D_SPLICE_WRITES=${NFS3D_BENCH_SPLICE_WRITES:-}  # e.g. off, or 64K: WRITE data spliced to the file
NFS3D_MALLOC=${NFS3D_BENCH_GLIBC_TUNABLES:-}  # GLIBC_TUNABLES for nfs3d alone (malloc trade-offs)
NFS3D_CEPH_CACHE=${NFS3D_BENCH_CEPH_CACHE_SIZE:-}  # libcephfs object cache per mount
PEER_NFS3D=${NFS3D_BENCH_PEER_NFS3D:-}  # another nfs3d in ganesha's slot
RUNS=3
SECS=3
ONLY=""
DO_BUILD=1
KEEP=0
CEPH=0
while [ $# -gt 0 ]; do
  case $1 in
    --no-build) DO_BUILD=0 ;;
    --runs) RUNS=$2; shift ;;
    --secs) SECS=$2; shift ;;
    --only) ONLY=$2; shift ;;
    --keep) KEEP=1 ;;
    --ceph) CEPH=1 ;;
    -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
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
  targets=(nfs3d nfs3bench disk_sync_ceiling copy_floor)
  [ "$CEPH" = 1 ] && targets+=(cephfs_ceiling)
  ninja -C "$BUILD" -j2 "${targets[@]}" >/dev/null || die "build failed"
fi
NFS3D=$BUILD/daemon/nfs3d
BENCH=$BUILD/tools/nfs3bench/nfs3bench
CEILING=$BUILD/bench/disk_sync_ceiling
FLOOR=$BUILD/bench/copy_floor
CEPH_CEILING=$BUILD/bench/cephfs_ceiling
bins=("$NFS3D" "$BENCH" "$CEILING" "$FLOOR")
[ "$CEPH" = 1 ] && bins+=("$CEPH_CEILING")
for bin in "${bins[@]}"; do [ -x "$bin" ] || die "no $bin"; done
need_pkg() {  # idempotent install of Debian packages
  local missing=()
  for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  [ ${#missing[@]} = 0 ] && return 0
  log "installing ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >/dev/null
}
need_pkg iperf3 nfs-ganesha nfs-ganesha-vfs rpcbind linux-perf python3
[ "$CEPH" = 1 ] && need_pkg nfs-ganesha-ceph ceph-mon ceph-osd ceph-mds ceph-common

# ---- Work area and cleanup. Only PIDs started here are ever signalled.
WORK=$(mktemp -d /tmp/nfs3d-bench.XXXXXX)
DISK=$(mktemp -d "$DISK_PARENT/nfs3d-bench-disk.XXXXXX")  # disk-backed exports live here
PIDS=()
stop_pid() {  # SIGTERM, then SIGKILL after 10 s
  kill -0 "$1" 2>/dev/null || return 0
  kill -TERM "$1" 2>/dev/null || true
  timeout 10 tail --pid="$1" -f /dev/null 2>/dev/null || kill -KILL "$1" 2>/dev/null || true
}
cleanup() {
  local pid
  # Ceph mode: the servers first (their clients unmount), then the cluster's
  # daemons by the PIDs its script recorded, while their namespace exists.
  if [ "$CEPH" = 1 ] && [ -n "${HOLDER[nfs3d]:-}" ] && [ -d "$WORK/ceph" ]; then
    for pid in "${SERVER_PID[@]}"; do stop_pid "$pid"; done
    in_ns nfs3d "$REPO/tests/fixtures/ceph-cluster.sh" stop "$WORK/ceph" >/dev/null 2>&1 || true
  fi
  for ((i = ${#PIDS[@]} - 1; i >= 0; i--)); do stop_pid "${PIDS[$i]}"; done
  rm -rf "$DISK"
  if [ "$KEEP" = 1 ]; then log "kept $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- One holder process per server keeps its namespaces alive; everything
# for that server runs inside them with nsenter.
declare -A HOLDER SERVER_PID NFS_PORT MNT_PORT
NFS_PORT=([nfs3d]=2049 [ganesha]=2049)
MNT_PORT=([nfs3d]=20048 [ganesha]=20048)
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
    # The sub-directory export (most real exports are one); open to every
    # user like /tmp, for the rows whose client is not root.
    mkdir -m 1777 "$1/sub"
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

export_path() {  # server export: the path its MOUNT takes
  case $2 in
    sub) echo "$WORK/$1/tmpfs/sub" ;;
    fsroot|probe) echo "$WORK/$1/tmpfs" ;;
    disk) echo "$DISK/$1" ;;
    ceph) if [ "$1" = nfs3d ]; then echo /ceph; else echo /ganesha; fi ;;  # CephFS /nfs3d, /ganesha
    *) die "unknown export $2" ;;
  esac
}

probe() {  # name proto: MOUNT + a few NFS NULL calls (rpcinfo -n still asks rpcbind)
  in_ns "$1" timeout 10 "$BENCH" run "127.0.0.1:$(export_path "$1" probe)" --proto "$2" \
    --port "${NFS_PORT[$1]}" --mount-port "${MNT_PORT[$1]}" --workload null --ops 10 --dir-entries 1 --timeout 2 --dir "probe.$2" \
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

start_nfs3d() {  # [slot binary]: nfs3d in its slot (default: nfs3d, this build's binary)
  local name=${1:-nfs3d} binary=${2:-$NFS3D}
  local dir=$WORK/$name
  mkdir -p "$dir/state"
  cat > "$dir/exports" <<EOF
$dir/tmpfs 127.0.0.1(rw,no_root_squash,insecure)
$dir/tmpfs/sub 127.0.0.1(rw,no_root_squash,insecure)
$DISK/$name 127.0.0.1(rw,no_root_squash,insecure)
EOF
  local ceph_section=""
  if [ "$CEPH" = 1 ]; then
    echo "/ceph 127.0.0.1(rw,no_root_squash,insecure,cephfs=/nfs3d)" >> "$dir/exports"
    ceph_section="[ceph]
conf = $WORK/ceph/ceph.conf
client_id = admin
fs_name = cephfs
${NFS3D_CEPH_CACHE:+cache_size = $NFS3D_CEPH_CACHE}"
  fi
  cat > "$dir/nfs3d.conf" <<EOF
[nfsd]
listen = 0.0.0.0
port = 2049
mountd_port = 20048
portmapper = off
threads = $NFS3D_THREADS
[tcp]
${NFS3D_SENDFILE:+sendfile = $NFS3D_SENDFILE}
${NFS3D_SPLICE_WRITES:+splice_writes = $NFS3D_SPLICE_WRITES}
[udp]
${NFS3D_UDP_SENDFILE:+sendfile = $NFS3D_UDP_SENDFILE}
[paths]
state_dir = $dir/state
exports = $dir/exports
[log]
level = warning
$ceph_section
EOF
  local env=()
  [ -n "$NFS3D_MALLOC" ] && env=(env "GLIBC_TUNABLES=$NFS3D_MALLOC")
  in_ns_bg "$name" "${env[@]}" "$binary" --config "$dir/nfs3d.conf" --foreground 2> "$dir/nfs3d.log" &
  SERVER_PID[$name]=$!
  PIDS+=($!)
  wait_port "$name" || { tail -20 "$dir/nfs3d.log" >&2; die "$binary did not come up"; }
}

start_ganesha() {
  local dir=$WORK/ganesha
  in_ns_bg ganesha rpcbind -f -w > "$dir/rpcbind.log" 2>&1 &
  PIDS+=($!)
  for _ in $(seq 1 50); do in_ns ganesha rpcinfo -p 127.0.0.1 >/dev/null 2>&1 && break; sleep 0.1; done
  sed -e "s|@TMPFS_EXPORT@|$dir/tmpfs|" -e "s|@DISK_EXPORT@|$DISK/ganesha|" \
    -e "s|NFS_Port = 2049|NFS_Port = ${NFS_PORT[ganesha]}|" \
    -e "s|MNT_Port = 20048|MNT_Port = ${MNT_PORT[ganesha]}|" \
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
  if [ "$CEPH" = 1 ]; then
    cat >> "$dir/ganesha.conf" <<EOF
EXPORT {
	Export_Id = 4;
	Path = /ganesha;
	Pseudo = /ganesha-ceph;
	MaxRead = 1048576;
	MaxWrite = 1048576;
	FSAL { Name = CEPH; User_Id = "admin"; Filesystem = "cephfs"; }
}
CEPH {
	Ceph_Conf = $WORK/ceph/ceph.conf;
}
EOF
  fi
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
# TCP send one call per send(2), as the Linux client does. A -user row's
# client is uid 1000 (most clients are not root; each call then sets the
# caller's identity on the server's thread).
KERNEL_LIKE="--send-per-call"
WORKLOADS=(
  "tcp-write-1m-n4|tcp|sub|--workload write --bs 1m --outstanding 4"
  "tcp-write-1m-n16|tcp|sub|--workload write --bs 1m --outstanding 16"
  "tcp-write-1m-n16-disk|tcp|disk|--workload write --bs 1m --outstanding 16"
  "tcp-read-1m-n4|tcp|sub|--workload read --bs 1m --outstanding 4 --file-size 256m"
  "tcp-read-1m-n16|tcp|sub|--workload read --bs 1m --outstanding 16 --file-size 256m"
  "tcp-read-32k-n16-user|tcp|sub|--workload read --bs 32k --outstanding 16 --file-size 128m --uid 1000 --gid 1000"
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
  "tcp-create-setattr-remove-n32-user|tcp|sub|--workload createsetattr --outstanding 32 --dir-entries 16 --uid 1000 --gid 1000 $KERNEL_LIKE"
  "tcp-write-filesync-64k-n16-disk|tcp|disk|--workload write --bs 64k --outstanding 16 --stable filesync --file-size 64m"
)

# The Ceph mode's rows: one CephFS directory per server. CEILING: the same
# workload straight on libcephfs (mode threads), run between the servers' runs.
declare -A CEILING
if [ "$CEPH" = 1 ]; then
  WORKLOADS=(
    "ceph-tcp-write-1m-n16|tcp|ceph|--workload write --bs 1m --outstanding 16"
    "ceph-tcp-read-1m-n16|tcp|ceph|--workload read --bs 1m --outstanding 16 --file-size 256m"
    "ceph-tcp-getattr-n32|tcp|ceph|--workload getattr --outstanding 32 --dir-entries 16 $KERNEL_LIKE"
    "ceph-tcp-lookup-n32|tcp|ceph|--workload lookup --outstanding 32 --dir-entries 16 $KERNEL_LIKE"
    "ceph-tcp-create-setattr-remove-n32|tcp|ceph|--workload createsetattr --outstanding 32 --dir-entries 16 $KERNEL_LIKE"
  )
  CEILING=([ceph-tcp-write-1m-n16]="write 16" [ceph-tcp-read-1m-n16]="read 16"
           [ceph-tcp-getattr-n32]="getattr 32" [ceph-tcp-lookup-n32]="lookup 32"
           [ceph-tcp-create-setattr-remove-n32]="createsetattr 32")
fi

RESULTS=$WORK/results.jsonl
: > "$RESULTS"

declare -A RUN_PEAK  # server: peak RSS (KiB) before the last reset of its VmHWM
vm_hwm() { awk '/^VmHWM:/ { print $2 }' "/proc/$1/status" 2>/dev/null || echo 0; }
reset_peak() {  # server: fold its VmHWM into RUN_PEAK, then restart it (clear_refs 5)
  local pid=${SERVER_PID[$1]} hwm
  hwm=$(vm_hwm "$pid")
  [ "${hwm:-0}" -gt "${RUN_PEAK[$1]:-0}" ] && RUN_PEAK[$1]=$hwm
  echo 5 > "/proc/$pid/clear_refs" 2>/dev/null || true
}

udp_rcvbuf_errors() {  # name: RcvbufErrors of the namespace's UDP stack
  in_ns "$1" awk '/^Udp:/ { if (!h) { for (i = 1; i <= NF; i++) col[$i] = i; h = 1 } else print $col["RcvbufErrors"] }' /proc/net/snmp
}

run_one() {  # server workload-spec rep
  local srv=$1 spec=$2 rep=$3
  local id proto exp args
  IFS='|' read -r id proto exp args <<< "$spec"
  local path
  path=$(export_path "$srv" "$exp")
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
  reset_peak "$srv"  # the row's own peak RSS, read after it
  # shellcheck disable=SC2086
  in_ns "$srv" timeout $((SECS * 4 + 60)) "$BENCH" run "127.0.0.1:$path" --proto "$proto" \
    --port "${NFS_PORT[$srv]}" --mount-port "${MNT_PORT[$srv]}" --time "$SECS" \
    --server-pid "$pid" --timeout 20 \
    --dir "b.$id.$rep" $args > "$out" 2>&1 || log "$srv $id run $rep: nfs3bench failed (see below)"
  drops_after=$(udp_rcvbuf_errors "$srv")
  local row_peak
  row_peak=$(vm_hwm "$pid")
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
  echo "{\"server\":\"$srv\",\"id\":\"$id\",\"rep\":$rep,\"syncs\":$syncs,\"rcvbuf_errors\":$((drops_after - drops_before)),\"peak_rss_kb\":${row_peak:-0},\"r\":$json}" >> "$RESULTS"
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

cephfs_ceiling_run() {  # workload-id: the same workload on libcephfs, no NFS
  local mode threads
  read -r mode threads <<< "${CEILING[$1]}"
  in_ns nfs3d "$CEPH_CEILING" "$WORK/ceph/ceph.conf" "$mode" /direct "$SECS" "$threads" |
    sed "s/^{/{\"id\":\"$1\",/" >> "$WORK/cephfs_ceiling.jsonl" || log "cephfs_ceiling $mode failed"
}

start_ceph() {  # the cluster, in nfs3d's namespace, which ganesha then shares
  log "starting the one-node Ceph cluster"
  in_ns nfs3d "$REPO/tests/fixtures/ceph-cluster.sh" start "$WORK/ceph" >/dev/null || die "no Ceph cluster"
  in_ns nfs3d "$CEPH_CEILING" "$WORK/ceph/ceph.conf" prepare /nfs3d /ganesha /direct ||
    die "cannot make the CephFS directories"
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
if [ "$CEPH" = 1 ]; then
  # One namespace: the cluster listens on its loopback, both servers reach it.
  HOLDER[ganesha]=${HOLDER[nfs3d]}
  NFS_PORT[ganesha]=2050
  MNT_PORT[ganesha]=20050
  mkdir -p "$WORK/ganesha/tmpfs/sub" "$DISK/ganesha"
  start_ceph
else
  start_ns ganesha
fi
start_nfs3d
if [ -n "$PEER_NFS3D" ]; then
  [ "$CEPH" = 0 ] || die "NFS3D_BENCH_PEER_NFS3D is for the loopback table, not --ceph"
  start_nfs3d ganesha "$PEER_NFS3D"
  export NFS3D_BENCH_PEER_LABEL=peer
else
  start_ganesha
fi
log "nfs3d pid ${SERVER_PID[nfs3d]}, ganesha pid ${SERVER_PID[ganesha]}; $RUNS runs x ${SECS}s per workload"
: > "$WORK/iperf.txt"
iperf_baseline
: > "$WORK/copy_floor.jsonl"
[ "$CEPH" = 1 ] || copy_floor_baseline
: > "$WORK/cephfs_ceiling.jsonl"
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
    if [ -n "${CEILING[$id]:-}" ]; then cephfs_ceiling_run "$id"; fi
  done
done
declare -A RSS
for srv in nfs3d ganesha; do
  reset_peak "$srv"
  RSS[$srv]=${RUN_PEAK[$srv]:-0}
  kill -0 "${SERVER_PID[$srv]}" 2>/dev/null || log "WARNING: $srv is no longer running"
done

# nfs3d splices TCP READs to this loopback client unless sendfile = off or auto.
TABLE_TCP_READ_FLOOR=sendfile
case "$NFS3D_SENDFILE" in off|auto) TABLE_TCP_READ_FLOOR=read ;; esac
TABLE_TCP_READ_FLOOR=$TABLE_TCP_READ_FLOOR python3 "$REPO/bench/table.py" "$RESULTS" "$WORK/iperf.txt" "${RSS[nfs3d]}" "${RSS[ganesha]}" \
  "$(nproc)" "$(uptime)" "$WORK/disk_ceiling.jsonl" "$WORK/copy_floor.jsonl" \
  "$WORK/cephfs_ceiling.jsonl"
[ -z "$PEER_NFS3D" ] || echo "peer: $PEER_NFS3D with nfs3d's configuration, in ganesha's slot"
echo "nfs3d: [nfsd] threads = $NFS3D_THREADS, ${NFS3D_MALLOC:+GLIBC_TUNABLES=$NFS3D_MALLOC, }${NFS3D_SENDFILE:+[tcp] sendfile = $NFS3D_SENDFILE, }${NFS3D_UDP_SENDFILE:+[udp] sendfile = $NFS3D_UDP_SENDFILE, }${NFS3D_SPLICE_WRITES:+[tcp] splice_writes = $NFS3D_SPLICE_WRITES, }other settings default; ganesha: ../shared/reference/ganesha-nfsv3.conf (default worker count)"
echo "workloads: nfs3bench, ${SECS}s per run, $RUNS runs per server, interleaved; write rows read the data back and verify it"
