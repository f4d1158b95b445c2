#!/bin/bash
# Faulty network with the real Linux kernel client (../shared/lab): netem in
# the guest, both directions. Over UDP: 1% loss, 1% duplication and 25%
# reordering (netem reorders by sending some packets without the 1 ms delay);
# over TCP: 1% loss. Each run writes a 16 MiB file and a tree of 200 files,
# reads everything back after dropping the client's caches and compares every
# md5 on the client and on the server. Nothing may be lost and the client may
# see no error (the run is `bash -e`).
# Usage: lab_netem_test.sh NFS3D_BINARY [udp|tcp ...]
TEST_NAME=lab_netem
source "$(dirname "$0")/lib.sh"

NFS3D=$1
shift
PROTOS=("$@")
[ ${#PROTOS[@]} -gt 0 ] || PROTOS=(udp tcp)
[ -x "$NFS3D" ] || fail "no nfs3d binary at $NFS3D"
export NFS_LAB_NS=${NFS_LAB_NS:-nfs3d-rel} NFS_LAB_TAP=${NFS_LAB_TAP:-nfs3drel0}
UDP_NETEM="delay 1ms reorder 25% loss 1% duplicate 1%"
TCP_NETEM="loss 1%"
# UDP: the client retransmits after 0.3 s instead of the default 1.1 s. A
# lost fragment costs the whole request a timeout, so with the default the
# run's length swung between 1.5 and 4 minutes; more retransmissions also
# put more load on the duplicate request cache.
UDP_OPTS="timeo=3"

trap lab_cleanup EXIT
make_lab_export
make_lab_data
mkdir -p "$DATA/tree"
chmod 777 "$WORK/export"
write_conf "$WORK/nfs3d.conf" "$WORK/exports" "$WORK/state" auto  # own portmapper: rpcinfo needs one

# The data, made on the host so its md5s are known: one 16 MiB file and 200
# small files of varied sizes (0..64 KiB) in 4 directories. (Sized so that the
# test stays within a few minutes under TCG; each UDP request of 16 KiB is 11
# fragments, so 1% loss drops about one request in ten.)
NFILES=201
head -c $((16 << 20)) /dev/urandom > "$DATA/big"
for d in $(seq 0 3); do
  mkdir -p "$DATA/tree/d$d"
  for f in $(seq 0 49); do
    head -c $(( (d * 50 + f) * 131 % 65537 )) /dev/urandom > "$DATA/tree/d$d/f$f"
  done
done
chmod -R a+rX "$DATA"
(cd "$DATA" && find . -type f | sort | xargs md5sum) > "$WORK/src.md5"
[ "$(wc -l < "$WORK/src.md5")" = $NFILES ] || fail "source tree incomplete"

"$LAB" up --no-rpcbind >/dev/null
"$LAB" exec -- "$NFS3D" --config "$WORK/nfs3d.conf" --foreground 2> "$WORK/nfs3d.log" &
PIDS+=($!)
wait_for "$LAB" exec -- rpcinfo -n 2049 -t 127.0.0.1 100003 3 \
  || { cat "$WORK/nfs3d.log" >&2; fail "nfs3d did not come up"; }

clear_export() { rm -rf "${WORK:?}/export/"*; }
LAB_RETRY_RESET=clear_export

run_one() {
  local proto=$1 spec=$2 opts=$3 out="$WORK/out-$1"
  clear_export
  local guest_cmd="set -e
tc qdisc show dev eth0 > \$OUT/qdisc
cp $DATA/big \$MNT/big
cp -r $DATA/tree \$MNT/tree
sync
echo 3 > /proc/sys/vm/drop_caches
(cd \$MNT && find . -type f | sort | xargs md5sum) > \$OUT/client.md5
cat /proc/self/mountstats > \$OUT/mountstats 2>/dev/null || true"
  log "over $proto with netem '$spec'"
  lab_mount_run "$out.log" --export "$WORK/export" --proto "$proto" --port 2049 --mountport 20048 \
      ${opts:+--opts "$opts"} --netem "$spec" --out-dir "$out" --timeout 600 -- "$guest_cmd" \
    || { tail -60 "$out.log" >&2; tail -30 "$WORK/nfs3d.log" >&2; fail "mount-run over $proto"; }
  grep -q netem "$out/qdisc" || { cat "$out/qdisc" >&2; fail "netem was not applied over $proto"; }
  diff "$WORK/src.md5" "$out/client.md5" >&2 || fail "client read-back differs over $proto"
  (cd "$WORK/export" && find . -type f | sort | xargs md5sum) > "$out/server.md5"
  diff "$WORK/src.md5" "$out/server.md5" >&2 || fail "server copy differs over $proto"
  ! grep -qiE "Input/output error|not responding, timed out|Stale file handle" "$out.log" \
    || fail "the client reported errors over $proto"
  # Retransmissions the client made (the faults were real).
  local xprt
  xprt=$(grep -m1 -E "^\s+xprt:" "$out/mountstats" 2>/dev/null || true)
  log "PASS over $proto: $NFILES md5s equal; $(grep -m1 'effective mount' "$out.log" || true); $xprt"
}

for proto in "${PROTOS[@]}"; do
  if [ "$proto" = udp ]; then run_one udp "$UDP_NETEM" "$UDP_OPTS"; else run_one tcp "$TCP_NETEM" ""; fi
done
log "all passed"
