#!/bin/bash
# Three nfs3d heads over one CephFS under keepalived, with the real Linux
# kernel client (../shared/lab): failover and failback without an operator
# (docs/multi-head.md, "Failover with keepalived"):
#  - each machine is a network namespace with a fixed address on a bridge
#    inside the lab namespace, which also holds the guest's tap and the
#    one-node Ceph cluster (on the bridge address);
#  - each machine runs keepalived (the Debian package) in a mount namespace
#    of its own, with the shipped notify script (conf/keepalived-notify)
#    reading its notify FIFO: one VRRP instance per head (nfs3d_headN), the
#    head's own machine with the highest priority;
#    whichever machine is MASTER for head N runs head N's instance; the
#    notify script's start and stop commands run nfs3d directly here (no
#    systemd), with that machine's own state directory;
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

NFS3D=$1
[ -x "$NFS3D" ] || fail "no nfs3d binary at $NFS3D"
TOOL=${2:-$(dirname "$NFS3D")/../tests/nlm/nlm_lock_tool}
[ -x "$TOOL" ] || fail "no nlm_lock_tool at $TOOL"
command -v nfs-cp > /dev/null || fail "libnfs-utils is not installed"
command -v keepalived > /dev/null || fail "keepalived is not installed"
NOTIFY=$REPO/conf/keepalived-notify
export NFS_LAB_NS=${NFS_LAB_NS:-nfs3d-heads} NFS_LAB_TAP=${NFS_LAB_TAP:-nfs3dhd0}
BRIDGE_IP=10.200.0.1
# The machines' namespaces are named after the lab's, so a second lab
# (bench/kernels.sh) has machines of its own.
if [ "$NFS_LAB_NS" = nfs3d-heads ]; then
  MACHINES=(nfs3d-hd1 nfs3d-hd2 nfs3d-hd3)
else
  MACHINES=("$NFS_LAB_NS-hd1" "$NFS_LAB_NS-hd2" "$NFS_LAB_NS-hd3")
fi
FIXED=(10.200.0.11 10.200.0.12 10.200.0.13)
FLOATS=(10.200.0.21 10.200.0.22 10.200.0.23)
# VRRP priorities: PRIO[m][n] of machine m for head n. Head n's own machine
# is highest; machine 2 is head1's survivor.
PRIO=("150 50 100" "100 150 50" "50 100 150")
GRACE=10
MB=24
KILL_AT_MB=4
PY=/usr/bin/python3

# machine_pids M: every process in machine M's network namespace.
machine_pids() { ip netns pids "${MACHINES[$1]}" 2>/dev/null || true; }
kill_machine() {
  local pids
  pids=$(machine_pids "$1")
  [ -z "$pids" ] || kill -KILL $pids 2>/dev/null || true
}
# LAB_HEADS_KEEP=DIR keeps the logs there (the heads', keepalived's, the
# notify script's and the guest's).
cleanup() {
  local m
  for m in 0 1 2; do kill_machine $m; done
  if [ -n "${LAB_HEADS_KEEP:-}" ] && [ -n "$WORK" ]; then
    mkdir -p "$LAB_HEADS_KEEP"
    cp "$WORK"/*.log "$LAB_HEADS_KEEP/" 2>/dev/null || true
    for m in 0 1 2; do cp "$WORK/hd$m/keepalived.log" "$LAB_HEADS_KEEP/keepalived-hd$((m + 1)).log" 2>/dev/null || true; done
  fi
  stop_started
  lab_stop_ceph
  for m in "${MACHINES[@]}"; do ip netns del "$m" 2>/dev/null || true; done
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
L=(ip -n "$NFS_LAB_NS")
"${L[@]}" link add br0 type bridge
"${L[@]}" addr del "$BRIDGE_IP/24" dev "$NFS_LAB_TAP"
"${L[@]}" link set "$NFS_LAB_TAP" master br0
"${L[@]}" addr add "$BRIDGE_IP/24" dev br0
"${L[@]}" link set br0 up
# machine_up M: machine M's network stack, a new one at every boot: its
# namespace and a veth on the bridge with its fixed address and a MAC address
# of its own, the same at every boot as a real NIC's. (With a new MAC, the
# other machines' unicast VRRP adverts would go to the old one until their
# ARP entries expire, and the returning machine, hearing nobody, would take
# over every head for a moment.)
machine_up() {
  local m=$1 ns=${MACHINES[$1]}
  ip netns add "$ns"
  ip -n "$ns" link set lo up
  "${L[@]}" link add "hd$m" address "02:6e:66:73:00:1$m" type veth peer name "hd${m}b"
  "${L[@]}" link set "hd$m" netns "$ns"
  "${L[@]}" link set "hd${m}b" master br0 up
  ip -n "$ns" addr add "${FIXED[$m]}/24" dev "hd$m"
  ip -n "$ns" link set "hd$m" up
}
# machine_crash M: SIGKILL to every process of machine M, then its NIC and
# network stack go away. (A killed process's TCP sockets linger in the
# kernel; a machine that comes back must not find them: they would answer
# for the client's reconnections, whose source ports the Linux client
# reuses.)
machine_crash() {
  local m=$1
  kill_machine "$m"
  ip -n "${MACHINES[$m]}" link del "hd$m"
  ip netns del "${MACHINES[$m]}"
}
for m in 0 1 2; do machine_up $m; done
log "bridge up: machines ${MACHINES[*]} at ${FIXED[*]}"

"$LAB" exec -- "$REPO/tests/fixtures/ceph-cluster.sh" start "$WORK/ceph" --addr "$BRIDGE_IP" >/dev/null \
  || fail "the Ceph cluster did not start in the lab namespace"
log "Ceph cluster up on $BRIDGE_IP"

# machine_setup M: the configs machine M needs to run any head (each with
# that machine's own state directory), its notify script settings (nfs3d
# started directly, pid file per head) and its keepalived.conf.
machine_setup() {
  local m=$1 dir="$WORK/hd$1" n node conf peers="" p
  mkdir -p "$dir/run"
  for n in 0 1 2; do
    node=head$((n + 1)) conf="$dir/$node.conf"
    mkdir -p "$dir/state-$node"
    write_conf "$conf" "$WORK/exports" "$dir/state-$node" on
    sed -i "s/^listen = .*/listen = ${FLOATS[$n]}/" "$conf"
    ceph_conf_section "$conf"
    # The rolling upgrade runs a copy of the binary (nfs3d-new), which looks
    # for plugins where they are installed, not in this build tree.
    sed -i "s|^\[paths\]$|[paths]\nplugin_dir = $(cd "$(dirname "$NFS3D")/../plugins" && pwd)|" "$conf"
    printf '\n[nlm]\ngrace_period = %d\n\n[cluster]\nnode_id = %s\nname = lab\nshared_dir = /.nfs3d\n' \
      "$GRACE" "$node" >> "$conf"
  done
  cat > "$dir/notify.conf" <<EOF
LOG_FILE=$WORK/notify.log
HOST_LABEL=hd$((m + 1))
LOCK_DIR=$dir/run
START_COMMAND='setsid "$NFS3D" --config "$dir/\$NODE.conf" --foreground \
  >> "$WORK/\$NODE.log" 2>&1 < /dev/null & echo \$! > "$dir/\$NODE.pid"'
STOP_COMMAND='pid=\$(cat "$dir/\$NODE.pid" 2>/dev/null) || exit 0; kill -KILL "\$pid" 2>/dev/null;
  while ps -o stat= -p "\$pid" | grep -qv Z; do sleep 0.05; done; rm -f "$dir/\$NODE.pid"'
EOF
  for p in 0 1 2; do [ "$p" = "$m" ] || peers+="    ${FIXED[$p]}"$'\n'; done
  local -a prio
  read -r -a prio <<< "${PRIO[$m]}"
  {
    # The shipped form (conf/keepalived.conf): every transition through one
    # FIFO, read by one run of the notify script, in keepalived's order.
    cat <<EOF
global_defs {
  router_id hd$m
  script_user root
  enable_script_security
  vrrp_notify_fifo $dir/run/notify.fifo
  vrrp_notify_fifo_script "$NOTIFY --conf $dir/notify.conf --fifo"
}
EOF
    for n in 0 1 2; do
      cat <<EOF
vrrp_instance nfs3d_head$((n + 1)) {
  state BACKUP
  interface hd$m
  virtual_router_id $((51 + n))
  priority ${prio[$n]}
  advert_int 1
  unicast_src_ip ${FIXED[$m]}
  unicast_peer {
$peers  }
  virtual_ipaddress {
    ${FLOATS[$n]}/24 dev hd$m
  }
}
EOF
    done
  } > "$dir/keepalived.conf"
  ip netns exec "${MACHINES[$m]}" keepalived -t -f "$dir/keepalived.conf" 2> "$dir/keepalived-check.log" \
    || { cat "$dir/keepalived-check.log" >&2; fail "keepalived refuses $dir/keepalived.conf"; }
}
# start_keepalived M: keepalived (VRRP only) on machine M, in a mount
# namespace with a /run of its own.
start_keepalived() {
  local m=$1 dir="$WORK/hd$1"
  ip netns exec "${MACHINES[$m]}" unshare --mount --propagation private -- sh -c \
    'mount -t tmpfs tmpfs /run && exec keepalived -n -l -D -G -P -f "$1/keepalived.conf" \
       -p "$1/run/keepalived.pid" -r "$1/run/vrrp.pid"' sh "$dir" >> "$dir/keepalived.log" 2>&1 &
  PIDS+=($!)
}
# head_running_on M NODE: machine M runs NODE's instance and serves it.
head_running_on() {
  local pid
  pid=$(cat "$WORK/hd$1/$2.pid" 2>/dev/null) || return 1
  kill -0 "$pid" 2>/dev/null || return 1
  ip netns exec "${MACHINES[$1]}" rpcinfo -T tcp "${FLOATS[${2#head} - 1]}" 100003 3 >/dev/null 2>&1
}
head_stopped_on() { [ ! -e "$WORK/hd$1/$2.pid" ]; }
# wait_until SECONDS CMD...: retries CMD for up to SECONDS.
wait_until() {
  local limit=$1 i
  shift
  for i in $(seq 1 $((limit * 5))); do
    "$@" && return 0
    sleep 0.2
  done
  return 1
}
# since T: seconds from T (date +%s.%N) to now.
since() { awk -v t="$1" -v now="$(date +%s.%N)" 'BEGIN { printf "%.1f", now - t }'; }
# home_placement: every head runs on its own machine only.
home_placement() {
  local m n
  for m in 0 1 2; do
    for n in 1 2 3; do
      if [ $((m + 1)) = $n ]; then head_running_on $m head$n || return 1
      else head_stopped_on $m head$n || return 1; fi
    done
  done
}

for m in 0 1 2; do machine_setup $m; done
for m in 0 1 2; do start_keepalived $m; done
wait_until 60 home_placement || { tail -30 "$WORK/notify.log" >&2; fail "the heads did not come up on their own machines"; }
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
machine_up 0
# The machine rebooted: its processes are gone, and its /run with them.
rm -f "$WORK/hd0/"*.pid "$WORK/hd0/run/"*
notified=$(wc -l < "$WORK/notify.log")
start_keepalived 0
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
