#!/bin/bash
# Multi-head benchmark (a benchmark, not a test). One CephFS
# cluster (tests/fixtures/ceph-cluster.sh), then 1, 2 and 3 nfs3d heads of one
# [cluster] on 127.0.0.1 (NFS port 2049+i, MOUNT 20048+i), and CLIENTS
# nfs3bench clients spread round-robin over the heads, all running at once,
# for each workload. One row per (heads, workload): the clients' aggregate
# rate, each head's CPU seconds per second of wall time, the cluster daemons'
# (mon+osd+mds) and the clients'. Everything runs in a private network and
# mount namespace this script makes; needs root.
# Then, with 3 heads following the cluster's shared exports file ([cluster]
# shared_exports, exports_poll 2 s), CHANGES times: a new export is added to
# the file (written to a temp file and renamed over it, as an operator would)
# and the time until each head serves it is measured; reported: the time
# until every head serves it (median, min, max).
#   bench/multihead.sh [--nfs3d BIN] [--nfs3bench BIN] [--clients N] [--time SEC]
#                      [--heads "1 2 3"] [--workloads "getattr create write read"]
#                      [--exports-changes N]
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
. "$REPO/bench/private_ns.sh" "$@"
NFS3D=$REPO/build-release/daemon/nfs3d
BENCH=$REPO/build-release/tools/nfs3bench/nfs3bench
CLIENTS=3
TIME=5
HEADS="1 2 3"
WORKLOADS="getattr create write read"
CHANGES=5
SHARED=off
while [ $# -gt 0 ]; do
  case $1 in
    --nfs3d) NFS3D=$2; shift 2 ;;
    --nfs3bench) BENCH=$2; shift 2 ;;
    --clients) CLIENTS=$2; shift 2 ;;
    --time) TIME=$2; shift 2 ;;
    --heads) HEADS=$2; shift 2 ;;
    --workloads) WORKLOADS=$2; shift 2 ;;
    --exports-changes) CHANGES=$2; shift 2 ;;
    *) echo "usage: see the head of $0" >&2; exit 2 ;;
  esac
done
D=$(mktemp -d /var/tmp/nfs3d-multihead.XXXXXX)
HEAD_PIDS=()
cleanup() {
  local pid
  for pid in "${HEAD_PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${HEAD_PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  "$REPO/tests/fixtures/ceph-cluster.sh" stop "$D/ceph" >/dev/null 2>&1 || true
  rm -rf "$D"
}
trap cleanup EXIT
"$REPO/tests/fixtures/ceph-cluster.sh" start "$D/ceph" >/dev/null
echo "/ceph 127.0.0.1(rw,insecure,no_root_squash,cephfs=/)" > "$D/exports"

# CPU seconds (user+system) of the PIDs given, summed.
cpu_of() {
  local pid total=0
  for pid in "$@"; do
    total=$(awk -v t="$total" -v hz="$(getconf CLK_TCK)" '{ printf "%.3f", t + ($14 + $15) / hz }' \
      "/proc/$pid/stat")
  done
  echo "$total"
}
CEPH_PIDS=$(cat "$D"/ceph/{mon,osd,mds}.pid)

start_heads() {  # N
  local i
  for i in $(seq 1 "$1"); do
    mkdir -p "$D/state$i"
    cat > "$D/head$i.conf" <<CONF
[nfsd]
listen = 127.0.0.1
port = $((2048 + i))
mountd_port = $((20047 + i))
portmapper = off
[paths]
state_dir = $D/state$i
exports = $D/exports
[log]
level = warning
[ceph]
conf = $D/ceph/ceph.conf
keyring = $D/ceph/keyring
client_id = admin
fs_name = cephfs
[cluster]
node_id = head$i
name = bench
shared_dir = /.nfs3d
shared_exports = $SHARED
CONF
    "$NFS3D" --config "$D/head$i.conf" --foreground 2>> "$D/head$i.log" &
    HEAD_PIDS+=($!)
  done
  for i in $(seq 1 "$1"); do
    for _ in $(seq 1 100); do
      rpcinfo -n $((2048 + i)) -t 127.0.0.1 100003 3 >/dev/null 2>&1 && break
      sleep 0.1
    done
  done
}
stop_heads() {
  local pid
  for pid in "${HEAD_PIDS[@]}"; do kill "$pid"; done
  for pid in "${HEAD_PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  HEAD_PIDS=()
}

args_of() {  # WORKLOAD: nfs3bench arguments
  case $1 in
    getattr|lookup) echo "--workload $1 --outstanding 32" ;;
    create) echo "--workload create --outstanding 32" ;;
    write) echo "--workload write --bs 1m --outstanding 8 --file-size 32m" ;;
    read) echo "--workload read --bs 1m --outstanding 8 --file-size 32m" ;;
  esac
}

printf '%-5s %-8s %12s %-26s %8s %8s\n' heads workload aggregate "CPU/s per head" cluster clients
for n in $HEADS; do
  start_heads "$n"
  for w in $WORKLOADS; do
    rm -f "$D"/client*.json
    before_heads=() ; for pid in "${HEAD_PIDS[@]}"; do before_heads+=("$(cpu_of "$pid")"); done
    # shellcheck disable=SC2086
    before_ceph=$(cpu_of $CEPH_PIDS)
    start=$(date +%s.%N)
    cpids=()
    for c in $(seq 0 $((CLIENTS - 1))); do
      h=$((c % n + 1))
      # shellcheck disable=SC2046
      "$BENCH" run 127.0.0.1:/ceph --port $((2048 + h)) --mount-port $((20047 + h)) \
          --time "$TIME" --dir "mh.$n.$w.$c" $(args_of "$w") 2>/dev/null \
        | grep '^{' > "$D/client$c.json" &
      cpids+=($!)
    done
    for pid in "${cpids[@]}"; do wait "$pid" || true; done
    wall=$(echo "$(date +%s.%N) - $start" | bc)
    per_head=""
    for i in "${!HEAD_PIDS[@]}"; do
      per_head+=$(awk -v a="${before_heads[$i]}" -v b="$(cpu_of "${HEAD_PIDS[$i]}")" -v w="$wall" \
        'BEGIN { printf "%.2f ", (b - a) / w }')
    done
    # shellcheck disable=SC2086
    ceph_cpu=$(awk -v a="$before_ceph" -v b="$(cpu_of $CEPH_PIDS)" -v w="$wall" \
      'BEGIN { printf "%.2f", (b - a) / w }')
    python3 - "$n" "$w" "$per_head" "$ceph_cpu" "$wall" "$D"/client*.json <<'PY'
import json, sys
n, w, per_head, ceph, wall = sys.argv[1:6]
rows = [json.loads(open(f).read() or "{}") for f in sys.argv[6:]]
ok = [r for r in rows if r and not r.get("error")]
if len(ok) != len(rows):
    print(f"{n:<5} {w:<8} a client failed: {[r.get('error') for r in rows]}")
    sys.exit(0)
if w in ("write", "read"):
    agg = f"{sum(r['MBps'] for r in ok):.0f} MB/s"
else:
    agg = f"{sum(r['ops_per_sec'] or r['calls_per_sec'] for r in ok):.0f} /s"
clients = sum(r["client_cpu_sec"] for r in ok) / float(wall)
print(f"{n:<5} {w:<8} {agg:>12} {per_head:<26} {ceph:>8} {clients:>8.2f}")
PY
  done
  stop_heads
done
echo "CPU columns: CPU seconds per wall second (1.00 = one core busy); $(nproc) cores here."

# A shared-exports change: how long until every head serves it.
[ "$CHANGES" -gt 0 ] || exit 0
SHARED=on
start_heads 3
# cephfs_put PATH TEXT: writes TEXT to PATH in the CephFS through libcephfs
# (Debian's python3-cephfs), via a temp file renamed over PATH; creates the
# directory /mh-sub* it names.
cephfs_put() {
  /usr/bin/python3 - "$D/ceph/ceph.conf" "$D/ceph/keyring" "$1" "$2" <<'PY'
import cephfs, sys
conf, keyring, path, text = sys.argv[1:5]
fs = cephfs.LibCephFS(conffile=conf, auth_id="admin")
fs.conf_set("keyring", keyring)
fs.mount(filesystem_name=b"cephfs")
for line in text.splitlines():
    sub = line.split("cephfs=")[-1].rstrip(")") if "cephfs=/mh-" in line else None
    if sub:
        try:
            fs.mkdir(sub, 0o755)
        except cephfs.ObjectExists:
            pass
fd = fs.open(path + ".tmp", "w", 0o644)
fs.write(fd, text.encode(), 0)
fs.fsync(fd, 0)
fs.close(fd)
fs.rename(path + ".tmp", path)
fs.shutdown()
PY
}
served_by() {  # HEAD EXPORT
  nfs-ls "nfs://127.0.0.1$2?version=3&nfsport=$((2048 + $1))&mountport=$((20047 + $1))" >/dev/null 2>&1
}
base=$(cat "$D/exports")
times=()
for k in $(seq 1 "$CHANGES"); do
  text="$base"$'\n'"/mh$k 127.0.0.1(rw,insecure,no_root_squash,cephfs=/mh-sub$k)"
  cephfs_put /.nfs3d/exports "$text"
  start=$(date +%s.%N)
  slowest=0
  for h in 1 2 3; do
    for _ in $(seq 1 300); do served_by "$h" "/mh$k" && break; sleep 0.05; done
    served_by "$h" "/mh$k" || { echo "head$h never served /mh$k" >&2; exit 1; }
  done
  slowest=$(echo "$(date +%s.%N) - $start" | bc)
  times+=("$slowest")
  base=$text
done
stop_heads
python3 - "${times[@]}" <<'PY'
import statistics, sys
t = sorted(float(x) for x in sys.argv[1:])
print(f"shared exports: a new export served by all 3 heads after {statistics.median(t):.2f} s "
      f"(median of {len(t)} changes; min {t[0]:.2f}, max {t[-1]:.2f}; exports_poll 2 s)")
PY
