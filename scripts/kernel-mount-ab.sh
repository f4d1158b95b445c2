#!/bin/bash
# A/B test UDP against TCP with the real Linux NFS client: for each proto,
# rsize/wsize and dd block size, mount the export, write a file with dd
# (conv=fsync), drop caches, read it back, compare md5, and print MB/s.
# This is the by-hand version of `nfs3bench sweep` for your own two machines.
#
# usage: kernel-mount-ab.sh SERVER:/export [options]
#   --protos udp,tcp        transports to compare
#   --sizes 8192,32768      rsize/wsize values (each used for both)
#   --bs 64k,1M             dd block sizes
#   --mb 256                file size in MiB per run
#   --opts "nolock,..."     extra mount options (default nolock)
#   --mnt DIR               mount point (default: a temp dir)
#   --csv FILE              also write the results as CSV
# Needs root and nfs-common (mount.nfs). Note: Debian kernels are built with
# CONFIG_NFS_DISABLE_UDP_SUPPORT; proto=udp then fails to mount (reported as
# such). shared/lab/nfs-lab has a UDP-enabled client VM for trying it here.
set -euo pipefail

usage() { sed -n '2,20p' "$0" >&2; exit 2; }
[ $# -ge 1 ] || usage
TARGET=$1; shift
case "$TARGET" in *:/*) ;; *) echo "bad target '$TARGET': want SERVER:/export" >&2; usage ;; esac
PROTOS=udp,tcp SIZES=8192,32768 BSES=64k,1M MB=256 OPTS=nolock MNT="" CSV=""
while [ $# -gt 0 ]; do
  case "$1" in
    --protos) PROTOS=$2; shift 2 ;;
    --sizes) SIZES=$2; shift 2 ;;
    --bs) BSES=$2; shift 2 ;;
    --mb) MB=$2; shift 2 ;;
    --opts) OPTS=$2; shift 2 ;;
    --mnt) MNT=$2; shift 2 ;;
    --csv) CSV=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; usage ;;
  esac
done
[ "$(id -u)" = 0 ] || { echo "needs root (mount)" >&2; exit 3; }
command -v mount.nfs > /dev/null || { echo "mount.nfs missing: apt-get install nfs-common" >&2; exit 3; }

CREATED_MNT=""
if [ -z "$MNT" ]; then MNT=$(mktemp -d /tmp/kernel-mount-ab.XXXXXX); CREATED_MNT=$MNT; fi
[ -d "$MNT" ] || { mkdir -p "$MNT"; CREATED_MNT=$MNT; }
cleanup() {
  mountpoint -q "$MNT" && umount -f "$MNT" 2>/dev/null || true
  [ -n "$CREATED_MNT" ] && rmdir "$CREATED_MNT" 2>/dev/null || true
}
trap cleanup EXIT INT TERM

# bytes per dd block: 64k -> 65536
bytes() { numfmt --from=iec "${1^^}"; }
mbps() { awk -v b="$1" -v s="$2" 'BEGIN { printf "%.1f", (s > 0 ? b / s / 1e6 : 0) }'; }
now() { date +%s.%N; }

[ -n "$CSV" ] && echo "proto,rsize_wsize,bs,mb,write_MBps,read_MBps,md5_ok,mount_line" > "$CSV"
printf "%-5s %-8s %-6s %10s %10s %s\n" proto rw-size bs "write MB/s" "read MB/s" "md5"
status=0
IFS=, read -ra protos <<< "$PROTOS"
IFS=, read -ra sizes <<< "$SIZES"
IFS=, read -ra bses <<< "$BSES"
for proto in "${protos[@]}"; do
  for size in "${sizes[@]}"; do
    if ! timeout 60 mount -t nfs -o "vers=3,proto=$proto,rsize=$size,wsize=$size,$OPTS" \
        "$TARGET" "$MNT" 2> /tmp/kernel-mount-ab.err.$$; then
      echo "mount proto=$proto rsize=wsize=$size failed: $(cat /tmp/kernel-mount-ab.err.$$)" >&2
      rm -f /tmp/kernel-mount-ab.err.$$
      status=1
      continue
    fi
    rm -f /tmp/kernel-mount-ab.err.$$
    line=$(grep " $MNT " /proc/mounts | head -1)
    for bs in "${bses[@]}"; do
      b=$(bytes "$bs")
      count=$(( MB * 1048576 / b ))
      [ "$count" -ge 1 ] || count=1
      total=$(( count * b ))
      f="$MNT/ab.$proto.$size.$bs.$$"
      head -c "$total" /dev/urandom > /tmp/kernel-mount-ab.src.$$
      want=$(md5sum < /tmp/kernel-mount-ab.src.$$ | cut -d' ' -f1)
      t0=$(now)
      dd if=/tmp/kernel-mount-ab.src.$$ of="$f" bs="$b" count="$count" conv=fsync status=none
      t1=$(now)
      # Read from the server, not the client's page cache.
      umount "$MNT"
      mount -t nfs -o "vers=3,proto=$proto,rsize=$size,wsize=$size,$OPTS" "$TARGET" "$MNT"
      t2=$(now)
      got=$(dd if="$f" bs="$b" status=none | md5sum | cut -d' ' -f1)
      t3=$(now)
      rm -f "$f" /tmp/kernel-mount-ab.src.$$
      w=$(mbps "$total" "$(echo "$t1 - $t0" | bc)")
      r=$(mbps "$total" "$(echo "$t3 - $t2" | bc)")
      ok=yes; [ "$got" = "$want" ] || { ok=NO; status=1; }
      printf "%-5s %-8s %-6s %10s %10s %s\n" "$proto" "$size" "$bs" "$w" "$r" "$ok"
      [ -n "$CSV" ] && echo "$proto,$size,$bs,$MB,$w,$r,$ok,\"$line\"" >> "$CSV"
    done
    umount "$MNT"
  done
done
exit $status
