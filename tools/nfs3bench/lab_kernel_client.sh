#!/bin/bash
# The Linux kernel client's view of nfs3d over UDP: the lab VM
# (shared/lab/nfs-lab) mounts nfs3d over UDP with default options and dd reads
# a file, through a tbf shaper on the server's side of the tap (server ->
# client, where READ replies go). nuttcp from the same guest over the same
# shaped path gives the wire's figure; the guest's RPC retransmits and IP
# reassembly failures say whether datagrams were lost. Run once per
# [udp] pacing value, side by side.
#
#   sudo flock /work/.lab.lock tools/nfs3bench/lab_kernel_client.sh build/daemon/nfs3d \
#       [--pacing off,auto] [--mtu 1500] [--rate 1gbit] [--size-mb 300]
#
# The guest runs under TCG unless NFS_LAB_ACCEL=kvm: its CPU, not the
# shaper, may be the limit; nuttcp's figure is measured the same way.
set -euo pipefail
NFS3D=$(readlink -f "${1:?usage: $0 NFS3D [--pacing LIST] [--mtu N] [--rate R] [--size-mb N]}")
shift
pacing=off,auto mtu=1500 rate=1gbit size_mb=300
while [ $# -gt 0 ]; do
  case "$1" in
    --pacing) pacing=$2; shift 2 ;;
    --mtu) mtu=$2; shift 2 ;;
    --rate) rate=$2; shift 2 ;;
    --size-mb) size_mb=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
REPO=$(cd "$(dirname "$0")/../.." && pwd)
LAB=${NFS_LAB:-$REPO/../shared/lab/nfs-lab}
export NFS_LAB_NS=${NFS_LAB_NS:-nfs3dkc} NFS_LAB_TAP=${NFS_LAB_TAP:-nfs3dkc0}
SERVER=${NFS_LAB_HOST_IP:-10.200.0.1}
# The guest reads host files over 9p, but not under /tmp.
work=$(mktemp -d /var/tmp/nfs3d-kclient.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null || true; done
  "$LAB" down >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/export" "$work/state"
chmod 777 "$work/export"
dd if=/dev/urandom of="$work/export/data" bs=1M count="$size_mb" status=none

"$LAB" up --mtu "$mtu" --no-rpcbind >/dev/null
"$LAB" exec -- tc qdisc replace dev "$NFS_LAB_TAP" root tbf rate "$rate" \
  burst $((mtu * 4 > 131072 ? mtu * 4 : 131072)) latency 20ms
"$LAB" exec -- nuttcp -S --nofork >/dev/null 2>&1 &
pids+=($!)

# Guest side: the wire (nuttcp, server -> client, UDP at the payload share of
# the rate, and TCP), then dd, then the client's own counters.
cat > "$work/guest.sh" <<GUEST
set -e
payload=\$(( $mtu - 28 ))
mbit=\$(awk -v r="$rate" -v m="$mtu" 'BEGIN{ v=r; sub(/[a-z]+\$/, "", v); u=r; sub(/^[0-9.]+/, "", u);
  f = (u=="gbit") ? 1000 : (u=="mbit") ? 1 : 0.001; printf "%d", v*f*(m-28)/(m+14) }')
echo "nuttcp-udp: \$(nuttcp -r -u -T4 -l\$payload -R\${mbit}m -w4m -fparse $SERVER | tr '\n' ' ')"
echo "nuttcp-tcp: \$(nuttcp -r -T4 -fparse $SERVER | tr '\n' ' ')"
before=\$(awk '/^rpc/ {print \$2, \$3}' /proc/net/rpc/nfs)
reasm0=\$(awk '/^Ip:/ {n++; if (n==2) print \$17}' /proc/net/snmp)
echo "dd: \$(dd if=\$MNT/data of=/dev/null bs=1M 2>&1 | tail -1)"
after=\$(awk '/^rpc/ {print \$2, \$3}' /proc/net/rpc/nfs)
reasm1=\$(awk '/^Ip:/ {n++; if (n==2) print \$17}' /proc/net/snmp)
echo "rpc calls/retrans before: \$before after: \$after"
echo "reassembly failures: \$((reasm1 - reasm0))"
GUEST

IFS=, read -ra values <<< "$pacing"
for p in "${values[@]}"; do
  cat > "$work/nfs3d.conf" <<CONF
[nfsd]
listen = 0.0.0.0
port = 2049
mountd_port = 20048
portmapper = off
[paths]
state_dir = $work/state
exports = $work/exports
[udp]
pacing = $p
CONF
  echo "$work/export 10.200.0.0/24(rw,insecure,no_root_squash)" > "$work/exports"
  "$LAB" exec -- "$NFS3D" --config "$work/nfs3d.conf" --foreground > "$work/nfs3d-$p.log" 2>&1 &
  server=$!
  pids+=($server)
  for _ in $(seq 50); do grep -q "serving NFSv3" "$work/nfs3d-$p.log" && break; sleep 0.2; done
  echo "== [udp] pacing = $p: $(grep -m1 'listening on udp' "$work/nfs3d-$p.log" | sed 's/.*listening/listening/')"
  "$LAB" mount-run --export "$work/export" --proto udp --port 2049 --mountport 20048 \
    --smp 2 --cmd-timeout 600 --script "$work/guest.sh" 2>&1 |
    grep -E "^(nuttcp|dd|rpc|reassembly)|proto=udp|mount line|/mnt/nfs" || true
  kill "$server"; wait "$server" 2>/dev/null || true
done
