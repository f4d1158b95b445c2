#!/bin/bash
# Does nfs3d serve a CephFS export again after its OSD was stopped for about
# as long as the [ceph] timeout (docs/durability.md, "Chaos soak", the
# two-head findings)? No VM: in namespaces of its own, the project's one-node
# cluster on 127.0.0.1, nfs3d exporting its root, nfs3bench writing FILE_SYNC
# 8 MiB runs in a loop; the OSD gets SIGSTOP for PAUSE s (default 32; the
# timeout is 30 s) and SIGCONT; then nfs3bench must complete a run within
# 120 s. If nfs3d still answers JUKEBOX then, every thread's stack (gdb) is
# written to OUT/stacks.txt. Prints what it saw; exit status 1 if nfs3d did
# not serve again.
# --cluster: nfs3d as a clustered head ([cluster] node_id head1), which also
# keeps its grace period and TCP clients in the file system.
# Usage: osd_pause_probe.sh [--pause S] [--cluster] [--out DIR] [NFS3D [NFS3BENCH]]
TEST_NAME=osd_pause_probe
source "$(dirname "$0")/../integration/lib.sh"
enter_private_namespaces "$0" "$@"
PAUSE=32
OUT=""
CLUSTER_HEAD=0
while [ $# -gt 0 ]; do
  case $1 in
    --pause) PAUSE=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --cluster) CLUSTER_HEAD=1; shift ;;
    *) break ;;
  esac
done
NFS3D=${1:-$REPO/build/daemon/nfs3d}
NFS3BENCH=${2:-$REPO/build/tools/nfs3bench/nfs3bench}
CLUSTER=$REPO/tests/fixtures/ceph-cluster.sh
[ -x "$NFS3D" ] && [ -x "$NFS3BENCH" ] || fail "build nfs3d and nfs3bench"
make_work
OUT=${OUT:-$WORK/out}
mkdir -p "$OUT"
cleanup() {
  touch "$WORK/stop"
  stop_started
  "$CLUSTER" stop "$WORK/ceph" > /dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT
"$CLUSTER" start "$WORK/ceph" > /dev/null || fail "the Ceph cluster did not start"
mkdir -p "$WORK/state"
echo "/ceph 127.0.0.1(rw,no_root_squash,insecure,cephfs=/)" > "$WORK/exports"
write_conf "$WORK/nfs3d.conf" "$WORK/exports" "$WORK/state" on
ceph_conf_section "$WORK/nfs3d.conf"
[ "$CLUSTER_HEAD" = 0 ] \
  || printf '\n[cluster]\nnode_id = head1\nname = lab\nshared_dir = /.nfs3d\n' >> "$WORK/nfs3d.conf"
"$NFS3D" --config "$WORK/nfs3d.conf" --foreground 2> "$OUT/nfs3d.log" &
NFS3D_PID=$!
PIDS+=("$NFS3D_PID")
wait_for rpcinfo -T tcp 127.0.0.1 100003 3 || fail "nfs3d did not come up"

# bench_run N: one verified FILE_SYNC run, 8 MiB written and read back.
bench_run() {
  "$NFS3BENCH" run 127.0.0.1:/ceph --proto tcp --port 2049 --mount-port 20048 \
    --workload write,read --size 8m --bs 64k --outstanding 4 --stable filesync --timeout 60 \
    --seed "$1" --dir "probe-$1" > "$OUT/run.$1.out" 2>&1
}
(
  n=0
  while [ ! -e "$WORK/stop" ]; do
    n=$((n + 1))
    rc=0
    bench_run "$n" || rc=$?
    echo "$(date +%T.%N | cut -c1-12) run $n rc $rc" >> "$OUT/runs.log"
  done
) &
PIDS+=($!)
sleep 5
log "OSD stopped for $PAUSE s while nfs3bench writes"
"$CLUSTER" pause-daemon "$WORK/ceph" osd
sleep "$PAUSE"
"$CLUSTER" resume-daemon "$WORK/ceph" osd
log "OSD resumed"
touch "$WORK/stop"
served=0
for i in $(seq 1 12); do
  if bench_run "$((1000 + i))"; then served=1; break; fi
  sleep 5
done
grep -h "did not answer\|answers again\|sync failed\|evicted" "$OUT/nfs3d.log" >&2 || true
if [ "$served" = 1 ]; then
  log "nfs3d served again after the OSD pause ($i runs after it)"
  exit 0
fi
gdb -batch -p "$NFS3D_PID" -ex "thread apply all bt" > "$OUT/stacks.txt" 2>&1 || true
cp -r "$WORK/ceph/log" "$OUT/ceph-log"
log "FAIL: nfs3d answers no run 2 min after the OSD resumed; stacks in $OUT/stacks.txt, Ceph's logs in $OUT/ceph-log"
exit 1
