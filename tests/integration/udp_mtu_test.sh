#!/bin/bash
# UDP transfer sizes follow the MTU with nfs3d's default configuration, for
# READ and WRITE, and follow an MTU change at once, without a restart. nfs3d
# runs in a network namespace of the test's own; its loopback device's MTU is
# set to 1500, then 9000, then 1500 again while nfs3d keeps running, and after
# each change `nfs3bench --bs pref` (which reads FSINFO's rtpref/wtpref as a
# Linux mount without rsize/wsize does) must send 8 KiB, 32 KiB, 8 KiB calls.
# Usage: udp_mtu_test.sh NFS3BENCH NFS3D
TEST_NAME=udp_mtu
source "$(dirname "$0")/lib.sh"
BENCH=$(readlink -f "$1")
NFS3D=$(readlink -f "$2")
enter_private_namespaces "$0" "$BENCH" "$NFS3D"

make_loopback_export
# Only what a test needs; no [udp] section: the shipped defaults apply.
cat > "$WORK/nfs3d.conf" <<CONF
[nfsd]
listen = 127.0.0.1
portmapper = off
threads = 4

[paths]
state_dir = $WORK/state
exports = $WORK/exports
CONF

ip link set lo mtu 1500
"$NFS3D" --config "$WORK/nfs3d.conf" --foreground 2> "$WORK/nfs3d.log" &
PIDS+=($!)
T="127.0.0.1:$WORK/export"
P=(--port 2049 --mount-port 20048)
wait_for "$BENCH" "$T" "${P[@]}" --workload getattr --ops 1 --no-json \
  || { cat "$WORK/nfs3d.log" >&2; fail "nfs3d not up"; }

# expect_pref MTU SIZE: at the current MTU, UDP writes and reads with the
# server's preferred sizes use calls of SIZE (e.g. 8k).
expect_pref() {
  local mtu=$1 size=$2 out="$WORK/run-$1-$RANDOM.out"
  timeout 60 "$BENCH" "$T" "${P[@]}" --proto udp --bs pref --workload write,read --size 1m \
    --outstanding 4 --no-json > "$out" 2>&1 || { cat "$out"; fail "nfs3bench at MTU $mtu"; }
  for w in write read; do
    grep -Eq "^$w +udp bs=pref\(rpc $size\) .*verify=ok" "$out" \
      || { cat "$out"; fail "MTU $mtu: $w did not use $size calls"; }
  done
  log "MTU $mtu: UDP write and read preferred size $size"
}

expect_pref 1500 8k
ip link set lo mtu 9000    # nfs3d keeps running: the next FSINFO must see it
expect_pref 9000 32k
ip link set lo mtu 1500
expect_pref 1500 8k
# TCP keeps its own preference (1 MiB by default).
timeout 60 "$BENCH" "$T" "${P[@]}" --proto tcp --bs pref --workload write --size 2m --no-json \
  > "$WORK/tcp.out" 2>&1 || { cat "$WORK/tcp.out"; fail "nfs3bench over TCP"; }
grep -q "bs=pref(rpc 1m)" "$WORK/tcp.out" || { cat "$WORK/tcp.out"; fail "TCP preferred size"; }
log "PASS"
