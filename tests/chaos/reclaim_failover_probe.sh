#!/bin/bash
# Issue 46: a head restarted (kill -9, or --takeover) a moment before its
# machine crashes. The guest holds an NLM lock through head1; head1 is
# restarted on its machine (the guest reclaims through the new instance),
# then the machine crashes RESTART_TO_CRASH seconds later; the survivor
# machine starts head1, which notifies the guest: the guest must reclaim
# within the grace period (another host's lock is refused after it).
# Captures the guest's kernel log (rpcdebug nlm, rpc xprt) and a tcpdump of
# the bridge in $KEEP (default /var/tmp/nfs3d-reclaim-failover).
# DROP_REPLIES=1: from the restart on, machine 1 sends the guest no TCP
# segment with data from port 2049 (tc u32: bare ACKs and SYN-ACKs go out):
# the new instance acknowledges the guest's reclaim and grants it, and the
# reply is lost with the machine, as with the chaos run's 3 % loss and a
# crash 0.13 s after the grant.
# FINS=1: the crash kills the processes before the NIC goes (machine_crash
# fins), so their FINs reach the guest.
# Not in CTest: on 2026-12-06 it did not reproduce issue 46's hang (4
# runs with the binary of 7d9ff34: kill9 + FINS, kill9 + DROP_REPLIES +
# FINS, kill9 + DROP_REPLIES, takeover; every one reclaimed
# within 0.1 s of the survivor's start, because the Linux client reconnects
# from the same source port, so even the previous instance's record names
# its connection). It is kept for the next try (e.g. with --netem loss).
# Usage: tests/chaos/reclaim_failover_probe.sh NFS3D NLM_LOCK_TOOL [kill9|takeover]
TEST_NAME=reclaim_failover_probe
source "$(dirname "$0")/../integration/lib.sh"
source "$(dirname "$0")/../integration/heads_lib.sh"

NFS3D=$1
TOOL=$2
MODE=${3:-kill9}
[ -x "$NFS3D" ] && [ -x "$TOOL" ] || fail "usage: $0 NFS3D NLM_LOCK_TOOL [kill9|takeover]"
export NFS_LAB_NS=${NFS_LAB_NS:-nfs3d-rc} NFS_LAB_TAP=${NFS_LAB_TAP:-nfs3drc0}
GRACE=${GRACE:-20}
RESTART_TO_CRASH=${RESTART_TO_CRASH:-0.3}
KEEP=${KEEP:-/var/tmp/nfs3d-reclaim-failover}
DUMP_PID=""

cleanup() {
  [ -z "$DUMP_PID" ] || kill "$DUMP_PID" 2>/dev/null || true
  heads_stop
  mkdir -p "$KEEP"
  cp "$WORK"/*.log "$KEEP/" 2>/dev/null || true
  cp -r "$WORK/guest" "$KEEP/" 2>/dev/null || true
  stop_started
  lab_stop_ceph
  lab_cleanup
}
trap cleanup EXIT
rm -rf "$KEEP"
mkdir -p "$KEEP"
make_work
make_lab_data
echo "/ceph 10.200.0.0/24(rw,no_root_squash,insecure,cephfs=/)" > "$WORK/exports"
"$LAB" up --no-rpcbind > /dev/null
HEADS_GRACE=$GRACE
heads_init 2
heads_network_up
lab_start_ceph --addr "$BRIDGE_IP"
heads_start
log "head1 at ${FLOATS[0]} on ${MACHINES[0]}"

ip netns exec "$NFS_LAB_NS" tcpdump -i br0 -n -s 256 -w "$KEEP/br0.pcap" \
  'host 10.200.0.2 and not arp' > "$KEEP/tcpdump.log" 2>&1 &
DUMP_PID=$!

cp "$REPO/tests/integration/guest_lock_holder.py" "$DATA/holder.py"
cat > "$DATA/guest.sh" <<EOF
rpcdebug -m nlm -s all > /dev/null || true
rpcdebug -m rpc -s xprt call trans > /dev/null || true
python3 $DATA/holder.py "\$MNT/held" "\$MNT/holder-ready" &
for i in \$(seq 1 600); do
  dmesg -c >> "\$OUT/dmesg" 2>/dev/null || true
  [ ! -e "\$MNT/done" ] || break
  sleep 1
done
dmesg -c >> "\$OUT/dmesg" 2>/dev/null || true
rpcdebug -m nlm -c all > /dev/null || true
rpcdebug -m rpc -c all > /dev/null || true
touch /tmp/release
wait
EOF
out="$WORK/guest"
netem=()
[ -z "${NETEM:-}" ] || netem=(--netem "$NETEM")  # e.g. "loss 3%", as the chaos run had
"$LAB" mount-run --server "${FLOATS[0]}" --export /ceph --proto tcp --opts lock,actimeo=1 \
  "${netem[@]}" --out-dir "$out" --timeout 900 --cmd-timeout 800 --script "$DATA/guest.sh" > "$out.log" 2>&1 &
run_pid=$!
H2=(ip netns exec "${MACHINES[1]}")
held_now() { "${H2[@]}" nfs-ls "nfs://${FLOATS[1]}/ceph?version=3" 2>/dev/null | grep -q holder-ready; }
wait_until 400 held_now || { cat "$out.log" >&2; fail "the guest never took its lock"; }
log "the guest holds its lock"
sleep 2

reclaims() { grep -c "reclaimed a lock" "$WORK/head1.log" || true; }
before=$(reclaims)
if [ "${DROP_REPLIES:-0}" = 1 ]; then
  TC=(ip netns exec "${MACHINES[0]}" tc)
  # (No prio qdisc or drop action in this kernel: the segments go to an
  # htb class whose queue holds none.)
  "${TC[@]}" qdisc add dev hd0 root handle 1: htb default 1
  "${TC[@]}" class add dev hd0 parent 1: classid 1:1 htb rate 1gbit
  "${TC[@]}" class add dev hd0 parent 1: classid 1:2 htb rate 1gbit
  "${TC[@]}" qdisc add dev hd0 parent 1:2 handle 20: pfifo limit 0
  # IP total length below 64: a segment without data; goes out.
  "${TC[@]}" filter add dev hd0 parent 1: prio 1 protocol ip u32 match ip dst 10.200.0.2/32 \
    match ip sport 2049 0xffff match u16 0 0xffc0 at 2 flowid 1:1
  "${TC[@]}" filter add dev hd0 parent 1: prio 2 protocol ip u32 match ip dst 10.200.0.2/32 \
    match ip sport 2049 0xffff flowid 1:2
  log "machine 1 drops its data segments from port 2049 to the guest"
fi
if [ "$MODE" = kill9 ]; then
  old=$(head_pid 0 head1)
  kill -KILL "$old"
  timeout 30 tail --pid="$old" -f /dev/null || true
  sleep 1
  head_start 0 head1
  wait_until 60 head_running_on 0 head1 || fail "head1 did not start again"
  wait_until 30 eval '[ "$(reclaims)" -gt "$before" ]' || log "no reclaim after the restart"
else
  old=$(head_pid 0 head1)
  head_start 0 head1 --takeover
  timeout 60 tail --pid="$old" -f /dev/null || fail "the old head1 did not exit"
  wait_until 60 head_running_on 0 head1 || fail "the successor does not serve"
fi
sleep "$RESTART_TO_CRASH"
log "$MODE done; machine crash of ${MACHINES[0]} now"
after=$(reclaims)
if [ "${FINS:-0}" = 1 ]; then machine_crash 0 fins; else machine_crash 0; fi
t_crash=$(date +%s.%N)
wait_until 90 head_running_on 1 head1 || fail "head1 did not start on ${MACHINES[1]}"
log "head1 on ${MACHINES[1]} $(since "$t_crash") s after the crash"
wait_until $((GRACE + 5)) eval '[ "$(reclaims)" -gt "$after" ]' \
  && log "the guest reclaimed through the survivor $(since "$t_crash") s after the crash" \
  || log "NO reclaim through the survivor within $((GRACE + 5)) s"
rc=0
"$LAB" exec -- "$TOOL" "${FLOATS[0]}" /ceph held lock --wait-grace > /dev/null 2>&1 || rc=$?
case $rc in
  1) verdict="held" ;;
  0) verdict="LOST"; "$LAB" exec -- "$TOOL" "${FLOATS[0]}" /ceph held unlock > /dev/null 2>&1 || true ;;
  *) verdict="error $rc" ;;
esac
log "after the grace period the guest's lock is: $verdict"
echo "$verdict" > "$KEEP/verdict"
echo done > "$DATA/done-mark"
"${H2[@]}" nfs-cp "$DATA/done-mark" "nfs://${FLOATS[1]}/ceph/done?version=3" > /dev/null || true
wait_until 120 eval "! kill -0 $run_pid 2>/dev/null" || log "the guest did not finish"
[ "$verdict" = held ] || fail "the lock was $verdict after a $MODE and a machine crash"
log "PASS: the guest reclaimed its lock after a $MODE and a machine crash $RESTART_TO_CRASH s later"
