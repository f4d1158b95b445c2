#!/bin/bash
# Three nfs3d heads over one CephFS with the real Linux kernel client
# (../shared/lab), a head killed and its floating address moved (issue 18,
# docs/multi-head.md):
#  - each head is a machine of its own: a network namespace with a fixed
#    address on a bridge inside the lab namespace, which also holds the
#    guest's tap and the one-node Ceph cluster (on the bridge address);
#  - head1 serves the floating address 10.200.0.20, held by machine hd1;
#    head2 and head3 serve their machines' fixed addresses;
#  - the guest mounts the floating address with NLM locking, takes a lock,
#    and writes a file 1 MiB at a time with an fsync after each piece;
#  - at 8 MiB, head1 is killed with SIGKILL, the address moves to machine
#    hd2 with `ip addr` (and a gratuitous ARP), and head1 is started there
#    under its own node id, with machine 2's own state directory: it ends
#    the dead session's CephFS state, declares the cluster's grace period and
#    notifies the client it finds in the cluster's shared state, which
#    reclaims;
#  - another host's lock on the same file through head3 is refused during
#    the grace period and after it (the reclaimed lock holds it);
#  - the guest's writes complete with no I/O error, and the file read
#    through head3 equals its source; a file written through head3 before
#    is what the guest reads through head1 (close-to-open across heads).
# Usage: lab_heads_test.sh NFS3D_BINARY [NLM_LOCK_TOOL]
TEST_NAME=lab_heads
source "$(dirname "$0")/lib.sh"

NFS3D=$1
[ -x "$NFS3D" ] || fail "no nfs3d binary at $NFS3D"
TOOL=${2:-$(dirname "$NFS3D")/../tests/nlm/nlm_lock_tool}
[ -x "$TOOL" ] || fail "no nlm_lock_tool at $TOOL"
command -v nfs-cp > /dev/null || fail "libnfs-utils is not installed"
export NFS_LAB_NS=nfs3d-heads NFS_LAB_TAP=nfs3dhd0
BRIDGE_IP=10.200.0.1
FLOAT=10.200.0.20
MACHINES=(nfs3d-hd1 nfs3d-hd2 nfs3d-hd3)
FIXED=(10.200.0.11 10.200.0.12 10.200.0.13)
GRACE=20
MB=24
KILL_AT_MB=8
PY=/usr/bin/python3

cleanup() {
  stop_started
  lab_stop_ceph
  local ns
  for ns in "${MACHINES[@]}"; do ip netns del "$ns" 2>/dev/null || true; done
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
for i in 0 1 2; do
  ns=${MACHINES[$i]}
  ip netns add "$ns"
  ip -n "$ns" link set lo up
  "${L[@]}" link add "hd$i" type veth peer name "hd${i}b"
  "${L[@]}" link set "hd$i" netns "$ns"
  "${L[@]}" link set "hd${i}b" master br0 up
  ip -n "$ns" addr add "${FIXED[$i]}/24" dev "hd$i"
  ip -n "$ns" link set "hd$i" up
done
ip -n "${MACHINES[0]}" addr add "$FLOAT/24" dev hd0
log "bridge up: machines ${MACHINES[*]} at ${FIXED[*]}; $FLOAT on ${MACHINES[0]}"

"$LAB" exec -- "$REPO/tests/fixtures/ceph-cluster.sh" start "$WORK/ceph" --addr "$BRIDGE_IP" >/dev/null \
  || fail "the Ceph cluster did not start in the lab namespace"
log "Ceph cluster up on $BRIDGE_IP"

# head_conf NODE LISTEN MACHINE: the config of head NODE on MACHINE, with a
# state directory of that machine's own (what the takeover needs is in the
# cluster).
head_conf() {
  local node=$1 listen=$2 conf="$WORK/$1.conf" state="$WORK/$3-state-$1"
  mkdir -p "$state"
  write_conf "$conf" "$WORK/exports" "$state" on
  sed -i "s/^listen = .*/listen = $listen/" "$conf"
  ceph_conf_section "$conf"
  printf '\n[nlm]\ngrace_period = %d\n\n[cluster]\nnode_id = %s\nname = lab\nshared_dir = /.nfs3d\n' \
    "$GRACE" "$node" >> "$conf"
  echo "$conf"
}
declare -A HEAD_PID
# start_head NODE MACHINE ADDRESS: runs head NODE on MACHINE, waits until it
# serves NFS on ADDRESS.
start_head() {
  local node=$1 machine=$2 address=$3
  ip netns exec "$machine" "$NFS3D" --config "$WORK/$node.conf" --foreground \
    2>> "$WORK/$node.log" &
  HEAD_PID[$node]=$!
  PIDS+=($!)
  local i
  for i in $(seq 1 300); do
    ip netns exec "$machine" rpcinfo -T tcp "$address" 100003 3 >/dev/null 2>&1 && return 0
    kill -0 "${HEAD_PID[$node]}" 2>/dev/null || break
    sleep 0.1
  done
  tail -20 "$WORK/$node.log" >&2
  fail "$node did not come up on $address"
}
head_conf head1 "$FLOAT" "${MACHINES[0]}" >/dev/null
head_conf head2 "${FIXED[1]}" "${MACHINES[1]}" >/dev/null
head_conf head3 "${FIXED[2]}" "${MACHINES[2]}" >/dev/null
start_head head1 "${MACHINES[0]}" "$FLOAT"
start_head head2 "${MACHINES[1]}" "${FIXED[1]}"
start_head head3 "${MACHINES[2]}" "${FIXED[2]}"
log "heads up: head1 on $FLOAT, head2 on ${FIXED[1]}, head3 on ${FIXED[2]}"

# Another host's NLM client and libnfs, through head3.
H3=(ip netns exec "${MACHINES[2]}")
tool3() { "${H3[@]}" "$TOOL" "${FIXED[2]}" /ceph "$@"; }
url3() { echo "nfs://${FIXED[2]}/ceph/$1?version=3"; }
on_cluster() { "${H3[@]}" nfs-ls "nfs://${FIXED[2]}/ceph?version=3" 2>/dev/null | awk -v f="$1" '$NF == f'; }
size_on_cluster() { on_cluster "$1" | awk '{ print $5 }'; }
echo "written through head3" > "$DATA/from-head3"
"${H3[@]}" nfs-cp "$DATA/from-head3" "$(url3 from-head3)" >/dev/null \
  || fail "nfs-cp through head3"
# Every head started its grace period: wait it out before the guest locks.
tool3 from-head3 test --wait-grace >/dev/null || fail "from-head3 is locked"

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
for i in \$(seq 0 $((MB - 1))); do
  dd if=$DATA/src of="\$MNT/big" bs=1M skip=\$i seek=\$i count=1 conv=notrunc,fsync status=none
done
echo "HEADTEST all $MB MiB written"
sync
echo 3 > /proc/sys/vm/drop_caches
md5sum < "\$MNT/big" | cut -d' ' -f1 > "\$OUT/md5"
# The host checks the reclaimed lock through head3, then says so.
for i in \$(seq 1 240); do [ -e "\$MNT/checked" ] && break; sleep 0.5; done
[ -e "\$MNT/checked" ] || { echo "HEADTEST FAIL: the host never checked the lock"; exit 1; }
touch /tmp/release
wait \$holder
cat /proc/self/mountstats > "\$OUT/mountstats" 2>/dev/null || true
echo "HEADTEST DONE"
EOF
} > "$DATA/guest.sh"

out="$WORK/guest"
log "the guest mounts $FLOAT (head1), locks and writes $MB MiB"
"$LAB" mount-run --server "$FLOAT" --export /ceph --proto tcp --opts lock,actimeo=1 \
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
log "at $(size_on_cluster big) bytes, with the guest's lock refusing head3's: kill -9 head1"

kill -KILL "${HEAD_PID[head1]}"
wait "${HEAD_PID[head1]}" 2>/dev/null || true
ip -n "${MACHINES[0]}" addr del "$FLOAT/24" dev hd0
ip -n "${MACHINES[1]}" addr add "$FLOAT/24" dev hd1
# A gratuitous ARP, as keepalived sends: the guest learns the new MAC at once.
ip netns exec "${MACHINES[1]}" "$PY" - hd1 "$FLOAT" <<'EOF'
import socket, struct, sys
dev, ip = sys.argv[1], socket.inet_aton(sys.argv[2])
mac = bytes.fromhex(open(f"/sys/class/net/{dev}/address").read().strip().replace(":", ""))
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((dev, 0))
arp = struct.pack("!HHBBH", 1, 0x0800, 6, 4, 1) + mac + ip + b"\0" * 6 + ip
for _ in range(3):
    s.send(b"\xff" * 6 + mac + b"\x08\x06" + arp)
EOF
head_conf head1 "$FLOAT" "${MACHINES[1]}" >/dev/null  # machine 2's own state directory
start_head head1 "${MACHINES[1]}" "$FLOAT"
log "$FLOAT moved to ${MACHINES[1]}; head1 restarted there (pid ${HEAD_PID[head1]})"

rc=0; tool3 held lock || rc=$?
[ "$rc" = 3 ] || [ "$rc" = 1 ] || fail "head3 granted a lock while head1's clients may reclaim (status $rc)"
log "head3 refused another host's lock during the grace period (status $rc: 3 grace, 1 held)"
rc=0; tool3 held lock --wait-grace || rc=$?
[ "$rc" = 1 ] || { cat "$out.log" >&2; fail "after the grace period head3 granted the lock (status $rc): not reclaimed"; }
log "after the grace period head3 still refuses it: the guest reclaimed through head1 on ${MACHINES[1]}"
"${H3[@]}" nfs-cp "$DATA/from-head3" "$(url3 checked)" >/dev/null || fail "nfs-cp checked"

rc=0
wait "$run_pid" || rc=$?
grep -h "HEADTEST\|LOCKTEST\|VM ran" "$out.log" >&2 || true
[ "$rc" = 0 ] && grep -q "HEADTEST DONE" "$out.log" \
  || { cat "$out.log" >&2; tail -30 "$WORK/head1.log" >&2; fail "guest workload (status $rc)"; }
! grep -qiE "Input/output error|not responding, timed out|Stale file handle" "$out.log" \
  || fail "the client saw an error"
[ "$(cat "$out/md5")" = "$SRC_MD5" ] || fail "the guest read back another file"
[ "$("${H3[@]}" nfs-cat "$(url3 big)" | md5sum | cut -d' ' -f1)" = "$SRC_MD5" ] \
  || fail "the file read through head3 differs from its source"
cmp -s "$out/from-head3" "$DATA/from-head3" || fail "the guest did not read what head3 wrote"
grep -q "to reclaim its locks" "$WORK/head1.log" || fail "head1 did not notify the client"
grep -q "reclaimed a lock" "$WORK/head1.log" || fail "the client did not reclaim through head1"
rc=0; tool3 held lock || rc=$?
[ "$rc" = 0 ] || fail "the guest released its lock, but head3 refuses it (status $rc)"
tool3 held unlock >/dev/null
log "PASS: $MB MiB (md5 $SRC_MD5) survived head1's death and address move; lock reclaimed; heads agree"
