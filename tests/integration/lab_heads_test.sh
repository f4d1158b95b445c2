#!/bin/bash
# Three nfs3d heads over one CephFS under keepalived, with the real Linux
# kernel client (../shared/lab): failover and failback without an operator
# (docs/multi-head.md, "Failover with keepalived"):
#  - the machines, their keepalived and the heads as heads_lib.sh sets them
#    up: three machines, head N's own machine N, machine 2 head1's survivor;
#  - the guest mounts head1's floating address with NLM locking, takes a
#    lock, and writes a file 1 MiB at a time with an fsync after each piece,
#    round after round, timing each piece (the client-visible pause);
#  - failover: at 4 MiB, every process of machine 1 (keepalived, nfs3d) gets
#    SIGKILL and its NIC and network namespace go (the machine is gone); machine 2's
#    keepalived takes the address and starts head1 there by itself; head1
#    ends the dead session, declares the cluster's grace period, notifies
#    the client, which reclaims; another host's lock through head3 is refused
#    during the grace period and after it;
#  - failback: machine 1 comes back (a new network namespace, keepalived
#    started): it takes
#    the address back, machine 2's notify stops its copy of head1 and machine
#    1's starts head1, which fences the copy's CephFS session and declares
#    the grace period: the lock is reclaimed again and refused to head3;
#  - at failover and failback the new head1 sends the previous instance's
#    client connections tickle ACKs (daemon/tickle_ack.h), so the client
#    reconnects at once rather than after its RPC timeout;
#  - rolling upgrade: machine by machine, keepalived stopped (its head
#    moves to a survivor), the binary replaced, keepalived started (the head
#    comes home on the new binary); the lock is reclaimed and refused to
#    head3 as above;
#  - the guest's writes complete with no I/O error, the file read through
#    head3 equals its source; a file written through head3 before is what
#    the guest reads through head1 (close-to-open across heads).
# The longest call of each phase is logged ("pause"); with PAUSE_FILE set,
# the longest, 99th percentile and median call of each phase are appended
# there (bench/failover.sh reads it).
# TCP only, so it runs on every guest kernel (NFS_LAB_KERNEL, 6.1 by default).
# Usage: lab_heads_test.sh NFS3D_BINARY [NLM_LOCK_TOOL]
TEST_NAME=lab_heads
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/heads_lib.sh"

NFS3D=$1
[ -x "$NFS3D" ] || fail "no nfs3d binary at $NFS3D"
TOOL=${2:-$(dirname "$NFS3D")/../tests/nlm/nlm_lock_tool}
[ -x "$TOOL" ] || fail "no nlm_lock_tool at $TOOL"
command -v nfs-cp > /dev/null || fail "libnfs-utils is not installed"
command -v keepalived > /dev/null || fail "keepalived is not installed"
export NFS_LAB_NS=${NFS_LAB_NS:-nfs3d-heads} NFS_LAB_TAP=${NFS_LAB_TAP:-nfs3dhd0}
GRACE=10
MB=24
KILL_AT_MB=4
PY=/usr/bin/python3

# LAB_HEADS_KEEP=DIR keeps the logs there (the heads', keepalived's, the
# notify script's and the guest's).
cleanup() {
  local m
  heads_stop
  if [ -n "${LAB_HEADS_KEEP:-}" ] && [ -n "$WORK" ]; then
    mkdir -p "$LAB_HEADS_KEEP"
    cp "$WORK"/*.log "$LAB_HEADS_KEEP/" 2>/dev/null || true
    for m in 0 1 2; do cp "$WORK/hd$m/keepalived.log" "$LAB_HEADS_KEEP/keepalived-hd$((m + 1)).log" 2>/dev/null || true; done
  fi
  stop_started
  lab_stop_ceph
  lab_cleanup
}
trap cleanup EXIT
make_work
make_lab_data
echo "/ceph 10.200.0.0/24(rw,no_root_squash,insecure,cephfs=/)" > "$WORK/exports"
head -c $((MB << 20)) /dev/urandom > "$DATA/src"
chmod 644 "$DATA/src"
SRC_MD5=$(md5sum < "$DATA/src" | cut -d' ' -f1)

# The network: the guest's tap and one veth per machine on a bridge.
"$LAB" up --no-rpcbind >/dev/null
HEADS_GRACE=$GRACE
heads_init 3
heads_network_up
log "bridge up: machines ${MACHINES[*]} at ${FIXED[*]}"

"$LAB" exec -- "$REPO/tests/fixtures/ceph-cluster.sh" start "$WORK/ceph" --addr "$BRIDGE_IP" >/dev/null \
  || fail "the Ceph cluster did not start in the lab namespace"
log "Ceph cluster up on $BRIDGE_IP"

heads_start
log "keepalived placed head1..3 on ${MACHINES[*]} (${FLOATS[*]})"

# Another host's NLM client and libnfs, through head3 (on machine 3).
H3=(ip netns exec "${MACHINES[2]}")
tool3() { "${H3[@]}" "$TOOL" "${FLOATS[2]}" /ceph "$@"; }
url3() { echo "nfs://${FLOATS[2]}/ceph/$1?version=3"; }
on_cluster() { "${H3[@]}" nfs-ls "nfs://${FLOATS[2]}/ceph?version=3" 2>/dev/null | awk -v f="$1" '$NF == f'; }
size_on_cluster() { on_cluster "$1" | awk '{ print $5 }'; }
mark() { "${H3[@]}" nfs-cp "$DATA/from-head3" "$(url3 "$1")" >/dev/null || fail "nfs-cp $1"; }
echo "written through head3" > "$DATA/from-head3"
mark from-head3
# Every head started in its grace period; the guest boots meanwhile, and its
# lock request waits for the end of it (the kernel retries).

cp "$REPO/tests/integration/guest_lock_holder.py" "$WORK/holder.py"
{
  echo "cat > /tmp/holder.py <<'PYEOF'"
  cat "$WORK/holder.py"
  echo "PYEOF"
  cat <<EOF
cd "\$MNT"
cat from-head3 > "\$OUT/from-head3"
$PY /tmp/holder.py "\$MNT/held" "\$MNT/holder-ready" &
holder=\$!
for i in \$(seq 1 240); do [ -e "\$MNT/holder-ready" ] && break; sleep 0.5; done
# Rounds over the file, one fsynced MiB at a time, until the host says it
# checked everything (and one whole round is done). Each line of calls: the
# phase at the piece's start and the time it ended.
phase=failover
date +%s.%N > /tmp/t0
round=0
while :; do
  for i in \$(seq 0 $((MB - 1))); do
    dd if=$DATA/src of="\$MNT/big" bs=1M skip=\$i seek=\$i count=1 conv=notrunc,fsync status=none
    echo "\$phase \$(date +%s.%N)" >> /tmp/calls
    [ \$phase = failback ] || [ ! -e "\$MNT/failback" ] || phase=failback
    [ \$phase = upgrade ] || [ ! -e "\$MNT/upgrade" ] || phase=upgrade
    [ \$round -ge 1 ] && [ -e "\$MNT/checked" ] && break 2
  done
  round=\$((round + 1))
  [ \$round -lt 300 ] || { echo "HEADTEST FAIL: the host never checked the lock"; exit 1; }
done
echo "HEADTEST all $MB MiB written (\$round rounds, \$(wc -l < /tmp/calls) fsynced pieces)"
awk -v t0="\$(cat /tmp/t0)" '{ gap = \$2 - prev; if (NR == 1) gap = \$2 - t0; prev = \$2;
  if (gap > max[\$1]) max[\$1] = gap; n[\$1]++ }
  END { for (p in max) printf "HEADTEST pause %s %.2f s (longest of %d calls)\n", p, max[p], n[p] }' /tmp/calls
cp /tmp/calls "\$OUT/calls"
sync
echo 3 > /proc/sys/vm/drop_caches
md5sum < "\$MNT/big" | cut -d' ' -f1 > "\$OUT/md5"
touch /tmp/release
wait \$holder
cat /proc/self/mountstats > "\$OUT/mountstats" 2>/dev/null || true
echo "HEADTEST DONE"
EOF
} > "$DATA/guest.sh"

# check_lock_refused WHEN: head3 refuses another host's lock on the guest's
# file during the grace period and after it (the guest reclaimed it).
check_lock_refused() {
  local rc=0
  tool3 held lock || rc=$?
  [ "$rc" = 3 ] || [ "$rc" = 1 ] || fail "$1: head3 granted a lock while head1's clients may reclaim (status $rc)"
  log "$1: head3 refused another host's lock during the grace period (status $rc: 3 grace, 1 held)"
  rc=0
  tool3 held lock --wait-grace || rc=$?
  [ "$rc" = 1 ] || { cat "$out.log" >&2; fail "$1: after the grace period head3 granted the lock (status $rc): not reclaimed"; }
  log "$1: after the grace period head3 still refuses it: the guest reclaimed it through head1"
}

out="$WORK/guest"
log "the guest mounts ${FLOATS[0]} (head1), locks and writes $MB MiB, round after round"
"$LAB" mount-run --server "${FLOATS[0]}" --export /ceph --proto tcp --opts lock,actimeo=1 \
    --out-dir "$out" --timeout 600 --cmd-timeout 500 --script "$DATA/guest.sh" \
    > "$out.log" 2>&1 &
run_pid=$!
waited=0
until [ "$(size_on_cluster big || true)" -ge $((KILL_AT_MB << 20)) ] 2>/dev/null; do
  kill -0 "$run_pid" 2>/dev/null || { cat "$out.log" >&2; fail "the guest stopped before $KILL_AT_MB MiB"; }
  sleep 0.5
  waited=$((waited + 1))
  [ $waited -lt 1000 ] || { cat "$out.log" >&2; fail "the guest never wrote $KILL_AT_MB MiB"; }
done
[ -n "$(on_cluster holder-ready)" ] || fail "the guest has no lock yet"
rc=0; tool3 held lock || rc=$?
[ "$rc" = 1 ] || fail "the guest's lock through head1 did not refuse head3's (status $rc)"

log "failover: at $(size_on_cluster big) bytes, SIGKILL to every process of ${MACHINES[0]}: $(machine_pids 0 | xargs)"
head1_lines=$(wc -l < "$WORK/head1.log")  # what head1 logged before the crash
machine_crash 0
t_kill=$(date +%s.%N)
wait_until 60 head_running_on 1 head1 \
  || { tail -30 "$WORK/notify.log" >&2; fail "head1 did not start on ${MACHINES[1]} by itself"; }
log "failover: keepalived moved ${FLOATS[0]} to ${MACHINES[1]} and started head1 there \
$(since "$t_kill") s after the kill"
check_lock_refused failover

log "failback: ${MACHINES[0]} comes back (a new network stack, keepalived started)"
mark failback
sleep 2   # the guest sees the mark (actimeo=1) before the address moves
notified=$(wc -l < "$WORK/notify.log")
machine_reboot 0
t_back=$(date +%s.%N)
wait_until 60 home_placement \
  || { tail -30 "$WORK/notify.log" >&2; fail "head1 did not move home to ${MACHINES[0]}"; }
log "failback: head1 runs on ${MACHINES[0]} again, its copy on ${MACHINES[1]} is stopped, \
$(since "$t_back") s after keepalived started"
# The copies of head1 that were replaced were fenced: the MDS blocklisted
# their CephFS clients when the next copy reclaimed the session.
fenced=$("$LAB" exec -- ceph -c "$WORK/ceph/ceph.conf" -k "$WORK/ceph/keyring" -n client.admin \
  --connect-timeout 20 osd blocklist ls 2>/dev/null | grep -c -E "^10\.200\.0\.1[12]:" || true)
[ "$fenced" -ge 2 ] || fail "failback: $fenced of head1's replaced copies are blocklisted, not 2"
log "failback: the MDS blocklisted both replaced copies of head1 (machine 1's before failover, machine 2's)"
# The returning machine took back its own head and nothing else.
! tail -n +$((notified + 1)) "$WORK/notify.log" | grep -E "hd1 keepalived-notify head[23]: MASTER" \
  || fail "failback: ${MACHINES[0]} took over another machine's head"
grep " head1:" "$WORK/notify.log" | tail -4 >&2 || true
check_lock_refused failback

# Rolling upgrade (docs/multi-head.md): machine by machine, keepalived is
# stopped (its head moves to a survivor), the new binary is installed (here
# a copy of it, $WORK/nfs3d-new, named in the notify settings) and
# keepalived is started again (the head comes home, on the new binary).
# The guest keeps writing through head1 all along.
cp "$NFS3D" "$WORK/nfs3d-new"
mark upgrade
sleep 2   # the guest sees the mark (actimeo=1) before the first move
# heads_away M: machine M runs no head, and its own head runs elsewhere.
heads_away() {
  local m=$1 k
  for k in 1 2 3; do head_stopped_on "$m" "head$k" || return 1; done
  for k in 0 1 2; do
    [ "$k" = "$m" ] || ! head_running_on "$k" "head$((m + 1))" || return 0
  done
  return 1
}
for m in 0 1 2; do
  node=head$((m + 1))
  t_up=$(date +%s.%N)
  kad=$(cat "$WORK/hd$m/run/keepalived.pid") || fail "upgrade: no keepalived on ${MACHINES[$m]}"
  kill -TERM "$kad" || fail "upgrade: no keepalived on ${MACHINES[$m]}"
  wait_until 60 heads_away "$m" \
    || { tail -30 "$WORK/notify.log" >&2; fail "upgrade: $node did not move off ${MACHINES[$m]}"; }
  log "upgrade: keepalived stopped on ${MACHINES[$m]}; $node moved to a survivor $(since "$t_up") s later"
  # The old keepalived has exited (a new one refuses to start beside it).
  wait_until 30 eval "! kill -0 $kad 2>/dev/null" || fail "upgrade: keepalived on ${MACHINES[$m]} did not stop"
  sed -i "s|\"$NFS3D\"|\"$WORK/nfs3d-new\"|" "$WORK/hd$m/notify.conf"
  start_keepalived "$m"
  wait_until 60 home_placement \
    || { tail -30 "$WORK/notify.log" >&2; fail "upgrade: $node did not come home to ${MACHINES[$m]}"; }
  [ "$(readlink "/proc/$(cat "$WORK/hd$m/$node.pid")/exe")" = "$WORK/nfs3d-new" ] \
    || fail "upgrade: $node on ${MACHINES[$m]} does not run the new binary"
  log "upgrade: ${MACHINES[$m]} runs $node on the new binary, $(since "$t_up") s after its keepalived stopped"
done
check_lock_refused upgrade
mark checked

rc=0
wait "$run_pid" || rc=$?
lab_note_kernel "$out.log"
grep -h "HEADTEST\|LOCKTEST\|VM ran" "$out.log" >&2 || true
[ "$rc" = 0 ] && grep -q "HEADTEST DONE" "$out.log" \
  || { cat "$out.log" >&2; tail -30 "$WORK/head1.log" >&2; fail "guest workload (status $rc)"; }
! grep -qiE "Input/output error|not responding, timed out|Stale file handle" "$out.log" \
  || fail "the client saw an error"
[ "$(cat "$out/md5")" = "$SRC_MD5" ] || fail "the guest read back another file"
[ "$("${H3[@]}" nfs-cat "$(url3 big)" | md5sum | cut -d' ' -f1)" = "$SRC_MD5" ] \
  || fail "the file read through head3 differs from its source"
cmp -s "$out/from-head3" "$DATA/from-head3" || fail "the guest did not read what head3 wrote"
[ "$(grep -c "to reclaim its locks" "$WORK/head1.log")" -ge 2 ] \
  || fail "head1 did not notify the client at failover and failback"
[ "$(grep -c "reclaimed a lock" "$WORK/head1.log")" -ge 2 ] \
  || fail "the client did not reclaim through head1 at failover and failback"
# The previous instance's connections are reset at each start (tickle ACKs),
# not left to the client's RPC timeout.
[ "$(tail -n +$((head1_lines + 1)) "$WORK/head1.log" | grep -c "tickle ACKs sent to [1-9]")" -ge 2 ] \
  || fail "head1 did not tickle its previous instance's clients at failover and failback"
rc=0; tool3 held lock || rc=$?
[ "$rc" = 0 ] || fail "the guest released its lock, but head3 refuses it (status $rc)"
tool3 held unlock >/dev/null
pauses=$(grep -h "HEADTEST pause" "$out.log" | sed 's/.*HEADTEST pause //' | sort | tr '\n' ';')
# PAUSE_FILE: per phase, the longest call, the 99th percentile and the median
# of the call times (gaps between fsynced pieces), one line each.
if [ -n "${PAUSE_FILE:-}" ]; then
  "$PY" - "$out/calls" >> "$PAUSE_FILE" <<'EOF'
import statistics, sys
last, gaps = None, {}
for line in open(sys.argv[1]):
    phase, t = line.split()
    if last is not None:
        gaps.setdefault(phase, []).append(float(t) - last)
    last = float(t)
for phase, g in sorted(gaps.items()):
    g.sort()
    p99 = g[min(len(g) - 1, int(0.99 * len(g)))]
    print(f"{phase} max={g[-1]:.2f} p99={p99:.2f} median={statistics.median(g):.3f} calls={len(g)}")
EOF
fi
log "PASS: $MB MiB (md5 $SRC_MD5) survived failover, failback and a rolling upgrade under keepalived; \
lock reclaimed each time; longest calls: $pauses"
