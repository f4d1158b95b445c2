#!/bin/bash
# In the lab guest, for bench/chaos.sh: the kernel client's verifying
# workloads on the NFS mount ($MNT), until the host creates /lab/stop:
#   - fsx_lite.py on one file (seeded random I/O, every read compared);
#   - a tree copy loop: cp -a of the host's seeded tree, md5sum -c of the
#     copy, rm -r, again;
#   - a process holding an NLM lock on $MNT/chaos-lock.BOOT (the client
#     reboot event kills the VM while it holds it); the status monitor's
#     files are copied to $OUT/statd so that the next boot can tell the
#     server it rebooted, as a machine with a disk would;
#   - netem on eth0 both ways as /lab/netem says (written by the host; empty:
#     none), applied within 0.5 s.
# Every line it prints starts with FSX, TREE, LOCK, NETEM or NEIGH (the host
# timestamps them, so output is line-buffered: stdbuf -oL). Usage: guest_soak.sh DATA SEED BOOT
set -u -o pipefail
DATA=$1 SEED=$2 BOOT=$3
HERE=$(cd "$(dirname "$0")" && pwd)

netem_loop() {
  modprobe ifb 2> /dev/null
  { ip link show ifb0 > /dev/null 2>&1 || ip link add ifb0 type ifb; } && ip link set ifb0 up \
    && tc qdisc add dev eth0 handle ffff: ingress \
    && tc filter add dev eth0 parent ffff: matchall action mirred egress redirect dev ifb0 \
    || echo "NETEM setup failed"
  local cur="" want i=0
  while [ ! -e /lab/stop ]; do
    want=$(cat /lab/netem 2> /dev/null)
    if [ "$want" != "$cur" ]; then
      if [ -z "$want" ]; then
        tc qdisc del dev eth0 root 2> /dev/null
        tc qdisc del dev ifb0 root 2> /dev/null
      else
        # shellcheck disable=SC2086
        tc qdisc replace dev eth0 root netem $want && tc qdisc replace dev ifb0 root netem $want \
          || echo "NETEM failed to apply '$want'"
      fi
      echo "NETEM now '${want:-none}'"
      cur=$want
    fi
    sleep 0.5
    # The client's RPC counters, kept for a boot the host kills.
    i=$((i + 1))
    [ $((i % 10)) != 0 ] || grep -E '^rpc ' /proc/net/rpc/nfs > "$OUT/rpc-nfs"
  done
  tc qdisc del dev eth0 root 2> /dev/null
  tc qdisc del dev ifb0 root 2> /dev/null
}

tree_loop() {
  local i=0 d bytes
  bytes=$(cat "$DATA/tree.bytes")
  while [ ! -e /lab/stop ]; do
    i=$((i + 1))
    d=$MNT/tree.$BOOT.$i
    if stdbuf -oL cp -av "$DATA/tree" "$d" 2>&1 | tee /tmp/cp.log | sed -u 's/^/TREE cp /'; then
      if (cd "$d" && stdbuf -oL md5sum -c MD5SUMS) 2>&1 | tee /tmp/md5.log | sed -u 's/^/TREE md5 /'; then
        echo "TREE ITER $i ok bytes=$bytes"
      else
        grep -v ': OK$' /tmp/md5.log | sed 's/^/TREE bad /'
        echo "TREE VERIFY-FAILED $i"
      fi
    elif grep -q 'No space left on device' /tmp/cp.log; then
      echo "TREE ENOSPC $i"
    else
      echo "TREE ERROR $i cp: $(grep -v -- ' -> ' /tmp/cp.log | head -3 | tr '\n' ' ')"
    fi
    stdbuf -oL rm -rfv "$d" 2>&1 | sed -u 's/^/TREE rm /' || echo "TREE ERROR $i rm"
  done
}

lock_holder() {
  python3 "$HERE/../integration/guest_lock_holder.py" "$MNT/chaos-lock.$BOOT" /tmp/locked \
    2>&1 | sed -u 's/^/LOCK /' &
  for _ in $(seq 1 600); do [ -e /tmp/locked ] && break; sleep 0.1; done
  if [ -e /tmp/locked ]; then
    mkdir -p "$OUT/statd"
    cp -a /var/lib/nfs/sm /var/lib/nfs/state "$OUT/statd/" 2> /dev/null
    echo "LOCK saved statd state $(od -An -td4 /var/lib/nfs/state 2> /dev/null | tr -d ' ')"
  fi
}

# What the guest saw of a head's move, kept as it comes (a reboot event
# kills the VM, and the dmesg at the end is then never written): the
# kernel's messages, and the neighbour entry of the server's address
# whenever it changes (seed 4634: the guest sent nothing for 25 s after a
# failover's head served).
dmesg -w > "$OUT/dmesg.$BOOT" 2>&1 &
neigh_loop() {
  local server cur="" now
  server=$(awk -v m="$MNT" '$2 == m { split($1, a, ":"); print a[1]; exit }' /proc/mounts)
  while [ ! -e /lab/stop ]; do
    now=$(ip neigh show "$server" 2> /dev/null)
    [ "$now" = "$cur" ] || echo "NEIGH $server: ${now:-none}"
    cur=$now
    sleep 0.5
  done
}
neigh_loop &
netem_loop &
netem_pid=$!
lock_holder
python3 "$HERE/fsx_lite.py" "$MNT/fsx.$BOOT" --seed "$((SEED * 1000 + BOOT))" \
  --log "$OUT/fsx.$BOOT.ops" &
fsx_pid=$!
tree_loop &
tree_pid=$!
wait "$fsx_pid"
echo "FSX exit status $?"
wait "$tree_pid"
touch /tmp/release
wait "$netem_pid"
sleep 1
grep -E '^(rpc|proc3) ' /proc/net/rpc/nfs > "$OUT/rpc-nfs"
cat /proc/self/mountstats > "$OUT/mountstats" 2> /dev/null
dmesg > "$OUT/dmesg"
echo "TREE DONE"
exit 0
