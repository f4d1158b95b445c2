#!/bin/bash
# The chaos soak (a benchmark, not a test, not in CI; docs/durability.md
# "Chaos soak"): for --minutes, verifying clients run against nfs3d while a
# seeded scheduler (bench/chaos_schedule.py) injects faults, first each alone,
# then mixed:
#   kill9     kill -9 of nfs3d, restarted on the same state directory
#   takeover  nfs3d --takeover: a new process takes the sockets over
#   netem     loss, duplication, reordering and delay both ways, by netem in
#             the lab guest (the host kernel has no sch_netem for the tap)
#   enospc    the export (a 512 MiB ext4 image, loop-mounted) filled up from
#             the server side, then freed
#   reboot    the client VM killed while a process holds an NLM lock, booted
#             again; the lock must then be free for another host
#             (tests/nlm/nlm_lock_tool in the lab namespace)
#   pause     with --cephfs: the MDS or the OSD of the one-node Ceph cluster
#             (tests/fixtures/ceph-cluster.sh, in the lab namespace) stopped
#             with SIGSTOP for 10-40 s, then SIGCONT
#   failover  with --cephfs: the machine of the head the clients mount
#             killed (keepalived moves its address to the other machine,
#             which starts the head; the clients reclaim their locks), and
#             booted again 20-45 s later (failback; the clients reclaim
#             again)
# --cephfs exports the root of that cluster's file system (cephfs=/) instead
# of the ext4 image; its events default to kill9,takeover,netem,pause,reboot,
# failover (no enospc: it fills the ext4 image). With failover among the
# events the clients mount head1's floating address in the multi-head lab
# (tests/integration/heads_lib.sh: two machines, each a network namespace
# running keepalived and one head over the cluster); kill9 and takeover
# then act on head1 where it runs (on the survivor during a failover).
# Clients, all checking what they read:
#   - the Linux kernel client in the lab VM (hard TCP mount with NLM):
#     tests/chaos/fsx_lite.py on one file, a tree copy loop (cp -a, md5sum -c,
#     rm -r), and the lock holder (tests/chaos/guest_soak.sh);
#   - nfs3bench streams from the lab namespace over TCP (FILE_SYNC) and UDP
#     (UNSTABLE + COMMIT), 8 MiB written, read back and checked, again and
#     again. nfs3bench is not a hard mount: its calls fail after 60 s, a TCP
#     connection the server drops (kill -9) fails the run, and a changed
#     write verifier fails an UNSTABLE run. Such a run counts as interrupted
#     when a kill -9 or ENOSPC was under way, as an error otherwise.
#   bench/chaos.sh [--minutes 30] [--seed S] [--events kill9,takeover,netem,enospc,reboot,...]
#                  [--cephfs] [--nfs3d BIN] [--nfs3bench BIN] [--nlm-tool BIN] [--keep]
# Prints the table (bench/chaos_table.py): per event type the count and the
# longest pause a client saw; calls, bytes verified, application errors
# (ENOSPC while the export was full counted apart), retransmissions, the
# seed. Exit status 1 on any application error or verification failure.
# Needs root and the lab; one VM (NFS_LAB_NS, default nfs3d-chaos).
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
TEST_NAME=chaos
source "$REPO/tests/integration/lib.sh"
source "$REPO/tests/integration/heads_lib.sh"
MINUTES=30
SEED=1
EVENTS=""
CEPHFS=0
KEEP=0
NFS3D=$REPO/build/daemon/nfs3d
NFS3BENCH=$REPO/build/tools/nfs3bench/nfs3bench
TOOL=$REPO/build/tests/nlm/nlm_lock_tool
ARGS="$*"
while [ $# -gt 0 ]; do
  case $1 in
    --minutes) MINUTES=$2; shift 2 ;;
    --seed) SEED=$2; shift 2 ;;
    --events) EVENTS=$2; shift 2 ;;
    --cephfs) CEPHFS=1; shift ;;
    --nfs3d) NFS3D=$2; shift 2 ;;
    --nfs3bench) NFS3BENCH=$2; shift 2 ;;
    --nlm-tool) TOOL=$2; shift 2 ;;
    --keep) KEEP=1; shift ;;
    *) echo "usage: see the head of $0" >&2; exit 2 ;;
  esac
done
[[ $MINUTES =~ ^[1-9][0-9]*$ ]] || fail "--minutes wants a whole number"
if [ -z "$EVENTS" ]; then
  EVENTS=kill9,takeover,netem,enospc,reboot
  [ "$CEPHFS" = 0 ] || EVENTS=kill9,takeover,netem,pause,reboot,failover
fi
[ "$CEPHFS" = 1 ] || [[ ,$EVENTS, != *,pause,* ]] || fail "pause needs --cephfs"
HEADS=0
[[ ,$EVENTS, != *,failover,* ]] || HEADS=1
[ "$CEPHFS" = 1 ] || [ "$HEADS" = 0 ] || fail "failover needs --cephfs (the heads share its file system)"
[ "$HEADS" = 0 ] || command -v keepalived > /dev/null || fail "failover needs keepalived"
[ "$CEPHFS" = 0 ] || [[ ,$EVENTS, != *,enospc,* ]] || fail "enospc fills the ext4 export: not with --cephfs"
[ -x "$NFS3D" ] && [ -x "$NFS3BENCH" ] && [ -x "$TOOL" ] || fail "build nfs3d, nfs3bench, nlm_lock_tool"
export NFS_LAB_NS=${NFS_LAB_NS:-nfs3d-chaos} NFS_LAB_TAP=${NFS_LAB_TAP:-nfs3dch0}
STATE_DIR=/run/nfs-lab/$NFS_LAB_NS
SECONDS_TOTAL=$((MINUTES * 60))

OUT=$(mktemp -d /var/tmp/nfs3d-chaos.XXXXXX)  # the guest reads DATA from here
chmod 755 "$OUT"
DATA=$OUT/data
EVLOG=$OUT/events.tsv  # type start end detail
: > "$EVLOG"
FAILED=0
cleanup() {
  local rc=$?
  touch "$OUT/stop"
  rm -f "$OUT/full"
  [ -z "${STREAM_PIDS:-}" ] || wait $STREAM_PIDS 2> /dev/null || true
  heads_stop
  stop_started
  local keep=$KEEP
  [ "$FAILED" = 0 ] && [ "$rc" = 0 ] || keep=1
  [ "$keep" = 0 ] || [ ! -d "$WORK/ceph/log" ] || cp -r "$WORK/ceph/log" "$OUT/ceph-log"
  [ "$CEPHFS" = 0 ] || lab_stop_ceph
  "$LAB" down > /dev/null 2>&1 || true
  mountpoint -q "$WORK/export" 2> /dev/null && umount "$WORK/export"
  rm -rf "$WORK"
  if [ "$keep" = 0 ]; then rm -rf "$OUT"; else log "logs in $OUT"; fi
}
trap cleanup EXIT

# The export: a small ext4 file system of its own, so it can be filled, or
# (--cephfs) the root of the cluster's file system.
make_lab_export
EXPORT=$WORK/export
if [ "$CEPHFS" = 1 ]; then
  EXPORT=/ceph
  echo "/ceph 10.200.0.0/24(rw,no_root_squash,insecure,cephfs=/)" > "$WORK/exports"
else
  truncate -s 512M "$OUT/export.img"
  mkfs.ext4 -q -m 0 -F "$OUT/export.img"
  mount -o loop "$OUT/export.img" "$WORK/export"
  chmod 777 "$WORK/export"
fi
write_conf "$WORK/nfs3d.conf" "$WORK/exports" "$WORK/state" on
[ "$CEPHFS" = 0 ] || ceph_conf_section "$WORK/nfs3d.conf"
# The NLM grace period after every start of nfs3d: 90 s, nfs3d's default and
# knfsd's. Shorter ones lost locks: 15 s after a failover inside a 3% loss
# period, 45 s when the guest's lockd reconnected 54 s after a failover
# (docs/durability.md): what a site runs is what the soak must show.
GRACE=90
printf '\n[nlm]\ngrace_period = %d\n' "$GRACE" >> "$WORK/nfs3d.conf"

# The tree the guest copies: seeded files and their MD5SUMS.
mkdir -p "$DATA/tree"
python3 - "$DATA/tree" "$SEED" <<'PY'
import hashlib, os, random, sys
root, rng = sys.argv[1], random.Random(int(sys.argv[2]))
sums, total = [], 0
for d in range(6):
    os.makedirs(f"{root}/d{d}/sub", exist_ok=True)
    for f in range(rng.randrange(8, 20)):
        name = f"d{d}/{'sub/' if rng.random() < 0.3 else ''}f{f}"
        data = rng.randbytes(int(2 ** rng.uniform(0, 18)))
        open(f"{root}/{name}", "wb").write(data)
        sums.append(f"{hashlib.md5(data).hexdigest()}  {name}\n")
        total += len(data)
os.symlink("d0", f"{root}/link")
open(f"{root}/MD5SUMS", "w").writelines(sums)
open(f"{os.path.dirname(root)}/tree.bytes", "w").write(str(total))
PY
chmod -R a+rX "$DATA"

"$LAB" up --no-rpcbind > /dev/null
SERVER=10.200.0.1  # the address the clients mount
NFS3D_PID=""
# The server the clients reach: the one nfs3d in the lab namespace, or with
# failover head1's instance on the machine that runs it now (SERVER_M).
# server_start [ARGS...]: starts it (ARGS: e.g. --takeover).
server_start() {
  if [ "$HEADS" = 1 ]; then
    head_start "$SERVER_M" head1 "$@"
    return
  fi
  "$LAB" exec -- "$NFS3D" --config "$WORK/nfs3d.conf" --foreground "$@" 2>> "$OUT/nfs3d.log" &
  NFS3D_PID=$!
  PIDS+=("$NFS3D_PID")
}
server_pid() {
  if [ "$HEADS" = 1 ]; then head_pid "$SERVER_M" head1; else echo "$NFS3D_PID"; fi
}
server_serves() {
  if [ "$HEADS" = 1 ]; then
    head_running_on "$SERVER_M" head1
  else
    "$LAB" exec -- rpcinfo -T tcp 127.0.0.1 100003 3
  fi
}
# server_wait: up to 2 min for it to serve: with --cephfs a paused MDS or
# OSD delays the start (and is resumed here once its time is up: the
# schedule waits for this).
server_wait() { wait_resuming 120 server_serves; }
process_gone() { ! kill -0 "$1"; }
server_log() { if [ "$HEADS" = 1 ]; then echo "$HEADS_DIR/head1.log"; else echo "$OUT/nfs3d.log"; fi; }
# start_heads: the multi-head lab, two machines (heads_lib.sh) with head1 on
# machine 0 (its survivor machine 1) and head2 on machine 1; the clients
# mount head1's floating address.
start_heads() {
  HEADS_DIR=$OUT/heads HEADS_GRACE=$GRACE
  mkdir -p "$HEADS_DIR"
  heads_init 2
  heads_network_up
  lab_start_ceph --addr "$BRIDGE_IP"
  heads_start
  SERVER=${FLOATS[0]} SERVER_M=0
  log "head1 at $SERVER on ${MACHINES[0]}, head2 at ${FLOATS[1]} on ${MACHINES[1]}"
}
# wait_resuming SECONDS CMD...: retries CMD for up to SECONDS, ending a
# pause whose time is up meanwhile (nfs3d waits for a paused MDS or OSD).
wait_resuming() {
  local limit=$1 i
  shift
  for i in $(seq 1 $((limit * 5))); do
    "$@" > /dev/null 2>&1 && return 0
    [ $((i % 5)) != 0 ] || pause_due
    sleep 0.2
  done
  return 1
}
if [ "$HEADS" = 1 ]; then
  start_heads
else
  [ "$CEPHFS" = 0 ] || lab_start_ceph
  server_start
  server_wait || { tail "$OUT/nfs3d.log" >&2; fail "nfs3d did not come up"; }
fi

now() { echo "$EPOCHREALTIME"; }
event() { printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" >> "$EVLOG"; }
stamp() { while IFS= read -r l; do printf '%s %s\n' "$EPOCHREALTIME" "$l"; done; }

# ---- the kernel client VM; BOOT counts its boots.
BOOT=0
VM_PID=""
job_dir() { ls -d "$STATE_DIR"/job.* 2> /dev/null | head -1; }
# boot_vm: starts the VM (in the background) and waits until fsx runs in it.
boot_vm() {
  BOOT=$((BOOT + 1))
  local pre=() prev=$OUT/boot$((BOOT - 1))/statd
  if [ -d "$prev" ]; then
    # As on a machine with a disk: the status monitor's state and its list
    # of servers survive the reboot, and sm-notify tells the server that
    # this client rebooted (the lab starts statd with --no-notify).
    cat > "$OUT/premount$BOOT.sh" <<PRE
cp -a $prev/sm/. /var/lib/nfs/sm/ && cp $prev/state /var/lib/nfs/state
echo "statd state before the reboot \$(od -An -td4 /var/lib/nfs/state | tr -d ' ')"
timeout 60 sm-notify -f -d 2>&1 | tail -5
echo "statd state now \$(od -An -td4 /var/lib/nfs/state | tr -d ' ')"
PRE
    pre=(--pre-mount "$OUT/premount$BOOT.sh")
  fi
  "$LAB" mount-run --server "$SERVER" --export "$EXPORT" --proto tcp --port 2049 --mountport 20048 \
    --opts "hard,lock" "${pre[@]}" --timeout $((SECONDS_TOTAL + 1800)) \
    --cmd-timeout $((SECONDS_TOTAL + 1200)) --out-dir "$OUT/boot$BOOT" \
    -- "bash $REPO/tests/chaos/guest_soak.sh $DATA $SEED $BOOT" 2>&1 | stamp > "$OUT/guest$BOOT.log" &
  VM_PID=$!
  local i
  for i in $(seq 1 3000); do
    grep -q ' FSX ops=' "$OUT/guest$BOOT.log" && break
    kill -0 "$VM_PID" 2> /dev/null || { cat "$OUT/guest$BOOT.log" >&2; fail "boot $BOOT: the VM stopped"; }
    sleep 0.2
  done
  grep -q ' FSX ops=' "$OUT/guest$BOOT.log" || fail "boot $BOOT: fsx did not start in 10 min"
  [ -z "$NETEM_CUR" ] || echo "$NETEM_CUR" > "$(job_dir)/netem"
}

# ---- nfs3bench streams, PROTO STABLE, until $OUT/stop exists.
stream_loop() {
  local proto=$1 stable=$2 n=0 t0 rc
  mkdir -p "$OUT/streams"
  while [ ! -e "$OUT/stop" ]; do
    n=$((n + 1))
    t0=$(now)
    rc=0
    "$LAB" exec -- "$NFS3BENCH" run "$SERVER:$EXPORT" --proto "$proto" --port 2049 \
      --mount-port 20048 --workload write,read --size 8m --bs 64k --outstanding 4 \
      --stable "$stable" --timeout 60 --seed "$((SEED * 100000 + n))" --dir "s-$proto-$n" \
      > "$OUT/streams/$proto.$n.out" 2>&1 || rc=$?
    printf '%s\t%s\t%s\t%s\t%s\n' "$t0" "$(now)" "$proto" "$n" "$rc" >> "$OUT/streams.tsv"
    [ "$rc" = 0 ] || { [ "$CEPHFS" = 1 ] || rm -rf "$WORK/export/s-$proto-$n"; sleep 1; }
  done
}

# ---- the faults.
# kill9 DOWN: kill -9 of the server, started again DOWN s later on the same
# state directory (with failover: head1's instance, on the same machine).
kill9() {
  local t0 old
  t0=$(now)
  old=$(server_pid) || { event kill9 "$t0" "$(now)" "FAILED: head1 runs nowhere"; return; }
  kill -KILL "$old"
  timeout 60 tail --pid="$old" -f /dev/null || true
  sleep "$1"
  server_start
  server_wait || { tail "$(server_log)" >&2; fail "kill9: nfs3d did not come up again"; }
  event kill9 "$t0" "$(now)" "down $1 s"
}
# takeover: nfs3d --takeover, a new process that takes the server's sockets,
# locks and cached replies over.
HANDOVERS=0
takeover() {
  local t0 old
  t0=$(now)
  HANDOVERS=$((HANDOVERS + 1))
  old=$(server_pid) || { event takeover "$t0" "$(now)" "FAILED: head1 runs nowhere"; return; }
  server_start --takeover
  # The old process's exit ends its CephFS session, which waits for a paused
  # MDS: wait resuming a pause that is due, as for a restart.
  if ! wait_resuming 240 process_gone "$old"; then
    event takeover "$t0" "$(now)" "FAILED: the old nfs3d did not exit"
  elif server_wait; then
    event takeover "$t0" "$(now)" "handover $HANDOVERS"
  else
    event takeover "$t0" "$(now)" "FAILED: the successor does not serve"
  fi
}
# check_guest_lock: LOCK_STATE, the guest's NLM lock as another host finds
# it once the grace period is over: "held" (refused to it), "LOST" (granted
# to it, and released again), "none yet" (the guest has not locked), or
# "error RC". (Not in a subshell: a pause may end meanwhile.)
LOCK_STATE=""
check_guest_lock() {
  local lock=chaos-lock.$BOOT rcf=$OUT/lock-check.rc
  LOCK_STATE="none yet"
  grep -q ' LOCK saved statd' "$OUT/guest$BOOT.log" || return 0
  rm -f "$rcf"
  (
    rc=0
    timeout 250 "$LAB" exec -- "$TOOL" "$SERVER" "$EXPORT" "$lock" lock --wait-grace \
      > /dev/null 2>&1 || rc=$?
    echo "$rc" > "$rcf.new" && mv "$rcf.new" "$rcf"
  ) &
  wait_resuming 260 test -e "$rcf" || true
  wait $! 2> /dev/null || true
  case $(cat "$rcf" 2> /dev/null) in
    1) LOCK_STATE=held ;;
    0)
      LOCK_STATE=LOST
      "$LAB" exec -- "$TOOL" "$SERVER" "$EXPORT" "$lock" unlock > /dev/null 2>&1 || true
      ;;
    *) LOCK_STATE="error $(cat "$rcf" 2> /dev/null)" ;;
  esac
}
# failover on: machine 0, head1's, crashes (machine_crash); keepalived on
# machine 1 takes head1's address and starts head1 there, which ends the
# dead instance's CephFS session and declares the grace period: the guest
# must reclaim its lock. Until failover off, kill9 and takeover act on
# head1 there. failover off: machine 0 boots again and takes head1 back
# (failback); the guest reclaims its lock again.
FAILOVER_T0=""
FAILOVER_NOTE=""
failover() {
  local t1 back
  if [ "$1" = on ]; then
    FAILOVER_T0=$(now)
    [ "$(head_machine head1)" = 0 ] || fail "failover: head1 does not run on ${MACHINES[0]}"
    machine_crash 0
    SERVER_M=1
    if ! wait_resuming 180 server_serves; then
      event failover "$FAILOVER_T0" "$(now)" "FAILED: head1 did not start on ${MACHINES[1]}"
      fail "failover: head1 did not start on ${MACHINES[1]}"
    fi
    FAILOVER_NOTE="failover $(since "$FAILOVER_T0") s"
    check_guest_lock
    FAILOVER_NOTE+=", the guest's lock after failover: $LOCK_STATE"
    return
  fi
  t1=$(now)
  machine_reboot 0
  SERVER_M=0
  if ! wait_resuming 180 home_placement; then
    event failover "$FAILOVER_T0" "$(now)" "FAILED: head1 did not come home to ${MACHINES[0]}"
    fail "failback: head1 did not come home to ${MACHINES[0]}"
  fi
  back=$(since "$t1")
  check_guest_lock
  event failover "$FAILOVER_T0" "$(now)" "$FAILOVER_NOTE; failback $back s, the guest's lock after failback: $LOCK_STATE"
}
NETEM_CUR=""
NETEM_T0=""
netem() {
  local job
  job=$(job_dir)
  if [ "$1" = off ]; then
    event netem "$NETEM_T0" "$(now)" "$NETEM_CUR"
    NETEM_CUR=""
  else
    NETEM_T0=$(now)
    NETEM_CUR=${1//_/ }
  fi
  [ -z "$job" ] || echo "$NETEM_CUR" > "$job/netem"
}
ENOSPC_T0=""
FILL_PID=""
# enospc on|off: fills the export from the server side and keeps it full
# (clients free space as they remove what they wrote), or frees it.
enospc() {
  if [ "$1" = off ]; then
    rm -f "$OUT/full"
    wait "$FILL_PID" 2> /dev/null || true
    rm -f "$WORK/export"/.chaos-fill*
    event enospc "$ENOSPC_T0" "$(now)" "freed"
    return
  fi
  ENOSPC_T0=$(now)
  touch "$OUT/full"
  fallocate -l "$(df --output=avail -B1 "$WORK/export" | tail -1)" "$WORK/export/.chaos-fill" \
    2> /dev/null || true
  (
    i=0
    while [ -e "$OUT/full" ]; do
      i=$((i + 1))
      dd if=/dev/zero of="$WORK/export/.chaos-fill.$i" bs=64k status=none 2> /dev/null || true
      sleep 0.5
    done
  ) &
  FILL_PID=$!
  sleep 1
  log "export full: $(df --output=avail -B1 "$WORK/export" | tail -1) bytes left"
}
PAUSE_T0=""
PAUSED=""
PAUSE_END=""
# pause mds|osd|off: SIGSTOP to a Ceph daemon, or SIGCONT to the one stopped.
pause() {
  local cluster=$REPO/tests/fixtures/ceph-cluster.sh
  if [ "$1" = off ]; then
    [ -n "$PAUSED" ] || return 0  # resumed already by pause_due
    "$cluster" resume-daemon "$WORK/ceph" "$PAUSED"
    event pause "$PAUSE_T0" "$(now)" "$PAUSED"
    PAUSED=""
  else
    PAUSE_T0=$(now)
    PAUSED=$1
    PAUSE_END=$(awk -v t="$2" '$1 > t && $2 == "pause-off" { print $1; exit }' "$SCHEDULE")
    "$cluster" pause-daemon "$WORK/ceph" "$PAUSED"
  fi
}
# pause_due: ends a pause whose scheduled end has passed (while a kill -9 or
# handover waits for nfs3d, which waits for the paused daemon).
pause_due() {
  [ -n "${PAUSED:-}" ] || return 0
  awk -v t0="$T0" -v e="$PAUSE_END" -v n="$(now)" 'BEGIN { exit !(n >= t0 + e) }' || return 0
  log "the pause of the $PAUSED ends on time, during the wait for nfs3d"
  pause off
}
reboot_vm() {
  local t0 lock=chaos-lock.$BOOT held free=none
  # The lock must be held now (by the guest), refused to another host; in a
  # grace period (a restart just before) TEST is refused until it ends.
  for _ in $(seq 1 300); do grep -q ' LOCK saved statd' "$OUT/guest$BOOT.log" && break; sleep 0.2; done
  held=0
  "$LAB" exec -- "$TOOL" "$SERVER" "$EXPORT" "$lock" test --wait-grace > /dev/null 2>&1 || held=$?
  t0=$(now)
  kill -KILL "$(cat "$STATE_DIR/qemu.pid")"
  wait "$VM_PID" 2> /dev/null || true
  boot_vm
  # Another host's lock on the same file: granted once the server has
  # learnt of the reboot (SM_NOTIFY) and released the dead client's lock.
  local t1 rc
  t1=$(now)
  for _ in $(seq 1 90); do
    rc=0
    "$LAB" exec -- "$TOOL" "$SERVER" "$EXPORT" "$lock" lock > /dev/null 2>&1 || rc=$?
    if [ "$rc" = 0 ]; then
      free=$(awk -v a="$t1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }')
      "$LAB" exec -- "$TOOL" "$SERVER" "$EXPORT" "$lock" unlock > /dev/null 2>&1 || true
      break
    fi
    sleep 1
  done
  event reboot "$t0" "$(now)" "lock test before: $held (1 = held); free for another host ${free} s after the new boot (last rc $rc)"
}

# ---- the soak.
SCHEDULE=$OUT/schedule
python3 "$REPO/bench/chaos_schedule.py" "$SEED" "$SECONDS_TOTAL" "$EVENTS" > "$SCHEDULE"
log "seed $SEED, $MINUTES min, events $EVENTS: $(wc -l < "$SCHEDULE") scheduled actions; logs in $OUT"
boot_vm
T0=$(now)
STREAM_PIDS=""
stream_loop tcp filesync &
STREAM_PIDS+=" $!"
stream_loop udp unstable &
STREAM_PIDS+=" $!"
log "clients running"
while read -r at action arg; do
  wait_s=$(awk -v t0="$T0" -v at="$at" -v n="$(now)" 'BEGIN { d = t0 + at - n; print (d > 0 ? d : 0) }')
  sleep "$wait_s"
  log "t=$at $action $arg"
  case $action in
    kill9) kill9 "$arg" ;;
    takeover) takeover ;;
    netem-on) netem "$arg" ;;
    netem-off) netem off ;;
    enospc-on) enospc on ;;
    enospc-off) enospc off ;;
    pause-on) pause "$arg" "$at" ;;
    pause-off) pause off ;;
    reboot) reboot_vm ;;
    failover-on) failover on ;;
    failover-off) failover off ;;
  esac
done < "$SCHEDULE"
sleep "$(awk -v t0="$T0" -v s="$SECONDS_TOTAL" -v n="$(now)" 'BEGIN { d = t0 + s - n; print (d > 0 ? d : 0) }')"
T1=$(now)
log "time is up: stopping the clients"
touch "$OUT/stop"
[ -z "$(job_dir)" ] || touch "$(job_dir)/stop"
wait $STREAM_PIDS || true
STREAM_PIDS=""
VM_RC=0
wait "$VM_PID" || VM_RC=$?
printf 'seed\t%s\nminutes\t%s\nevents\t%s\nargs\t%s\nt0\t%s\nt1\t%s\nvm_rc\t%s\nboots\t%s\n' \
  "$SEED" "$MINUTES" "$EVENTS" "$ARGS" "$T0" "$T1" "$VM_RC" "$BOOT" > "$OUT/params"
python3 "$REPO/bench/chaos_table.py" "$OUT" || FAILED=1
[ "$FAILED" = 0 ] || exit 1
