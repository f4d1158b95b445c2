#!/bin/bash
# Jumbo-frame-aware UDP sizes with the real Linux kernel client (../shared/lab):
# nfs3d runs with its default [udp] settings (rsize_pref = wsize_pref = auto);
# the guest mounts over UDP without rsize/wsize, so it takes FSINFO's
# preferred sizes. On a link with MTU 1500 they must be 8192 (a READ reply or
# WRITE call in at most 6 IP fragments), on MTU 9000 32768 (the UDP maximum).
# The MTU goes from 1500 to 9000 while nfs3d keeps running: the next mount
# must already get the new sizes. /proc/mounts in the guest shows what it
# took; a small file written and read back checks that the mount really works.
# Usage: lab_mtu_test.sh NFS3D_BINARY
TEST_NAME=lab_mtu
source "$(dirname "$0")/lib.sh"

NFS3D=$1
[ -x "$NFS3D" ] || fail "no nfs3d binary at $NFS3D"
# A lab of its own, so it never meets lab_mount_test's namespace or tap.
export NFS_LAB_NS=nfs3d-mtu NFS_LAB_TAP=nfs3dmtu0

trap lab_cleanup EXIT
make_lab_export
cat > "$WORK/nfs3d.conf" <<CONF
[nfsd]
listen = 0.0.0.0
port = 2049
mountd_port = 20048
threads = 4
portmapper = off

[paths]
state_dir = $WORK/state
exports = $WORK/exports

[log]
level = info
CONF

start_nfs3d() {
  "$LAB" exec -- "$NFS3D" --config "$WORK/nfs3d.conf" --foreground 2> "$WORK/nfs3d.log" &
  PIDS+=($!)
  local i
  for i in $(seq 1 50); do
    grep -q "serving NFSv3" "$WORK/nfs3d.log" && break
    sleep 0.2
  done
  grep -q "serving NFSv3" "$WORK/nfs3d.log" || { cat "$WORK/nfs3d.log" >&2; fail "nfs3d did not come up"; }
}

# mount_at_mtu MTU SIZE: sets the lab link's MTU (nfs3d keeps running), mounts
# over UDP without rsize/wsize and expects rsize=wsize=SIZE.
mount_at_mtu() {
  local mtu=$1 expect=$2
  local out="$WORK/out-$mtu"
  log "MTU $mtu: expecting rsize=wsize=$expect"
  "$LAB" up --no-rpcbind --mtu "$mtu" >/dev/null
  "$LAB" exec -- ip link show "$NFS_LAB_TAP" | grep -q "mtu $mtu" || fail "tap MTU is not $mtu"
  # No rsize/wsize options: the client uses the server's preferred sizes.
  lab_mount_run "$out.log" --export "$WORK/export" --proto udp --port 2049 --mountport 20048 \
      --out-dir "$out" --timeout 600 -- \
      'head -c 300000 /dev/urandom > $OUT/src; cp $OUT/src $MNT/f-'"$mtu"'; sync;
       echo 3 > /proc/sys/vm/drop_caches; cmp $OUT/src $MNT/f-'"$mtu"' && echo readback-ok;
       grep " nfs " /proc/mounts' \
    || { cat "$out.log" >&2; tail -30 "$WORK/nfs3d.log" >&2; fail "mount-run at MTU $mtu"; }
  local line
  line=$(grep "effective mount:" "$out.log" | head -n 1)
  log "MTU $mtu mount line: $line"
  [[ $line == *"proto=udp"* ]] || { cat "$out.log" >&2; fail "not a UDP mount at MTU $mtu"; }
  [[ $line == *"rsize=$expect,"* && $line == *"wsize=$expect,"* ]] \
    || { cat "$out.log" >&2; fail "expected rsize=wsize=$expect at MTU $mtu, got: $line"; }
  grep -q readback-ok "$out.log" || { cat "$out.log" >&2; fail "read-back at MTU $mtu"; }
  cmp "$out/src" "$WORK/export/f-$mtu" || fail "server copy differs at MTU $mtu"
  log "PASS at MTU $mtu: rsize=wsize=$expect"
}

"$LAB" up --no-rpcbind --mtu 1500 >/dev/null
start_nfs3d
nfs3d_pid=${PIDS[-1]}
mount_at_mtu 1500 8192
mount_at_mtu 9000 32768
kill -0 "$nfs3d_pid" || fail "nfs3d exited"
log "all passed (one nfs3d across the MTU change)"
