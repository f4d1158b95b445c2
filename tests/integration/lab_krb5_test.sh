#!/bin/bash
# Kerberos (RPCSEC_GSS) with the real Linux kernel client (../shared/lab): a
# test KDC (tests/fixtures/krb5-kdc.sh) runs in the lab namespace; the guest gets
# the realm's krb5.conf, a machine keytab and rpc.gssd (guest_krb5_setup.sh),
# then mounts with sec=krb5p, krb5i and krb5 over TCP (over UDP: krb5p and
# krb5, to keep the test's time down; the e2e tests cover every service on
# both) and,
# as a user with a ticket, writes/reads/renames files that the server shows
# with that user's uid; a user without a ticket is refused; over TCP, an
# export that allows only krb5p refuses krb5 and sys mounts (guest_krb5.sh).
# A capture of the traffic must not contain the krb5p file's bytes (and
# must contain the krb5 file's, where there is one).
# Usage: lab_krb5_test.sh NFS3D_BINARY
TEST_NAME=lab_krb5
source "$(dirname "$0")/lib.sh"

NFS3D=$1
[ -x "$NFS3D" ] || fail "no nfs3d binary at $NFS3D"
export NFS_LAB_NS=nfs3d-krb5 NFS_LAB_TAP=nfs3dkrb0

cleanup() {
  [ -n "$DATA" ] && "$REPO/tests/fixtures/krb5-kdc.sh" stop "$DATA/kdc" >/dev/null 2>&1
  lab_cleanup
}
trap cleanup EXIT
make_work
make_lab_data
mkdir -p "$WORK/export" "$WORK/krb5p" "$WORK/state"
chmod 777 "$WORK/export" "$WORK/krb5p"
cat > "$WORK/exports" <<EXPORTS
$WORK/export 10.200.0.0/24(rw,insecure,sec=krb5p:krb5i:krb5)
$WORK/krb5p 10.200.0.0/24(rw,insecure,sec=krb5p)
EXPORTS
write_conf "$WORK/nfs3d.conf" "$WORK/exports" "$WORK/state" on
printf '\n[kerberos]\nkeytab = %s\nprincipal = nfs/server.nfs3d.test\n' "$DATA/kdc/nfs.keytab" \
  >> "$WORK/nfs3d.conf"

"$LAB" up --no-rpcbind >/dev/null
"$LAB" exec -- "$REPO/tests/fixtures/krb5-kdc.sh" start "$DATA/kdc" --listen 10.200.0.1 \
    --host server.nfs3d.test --client client.nfs3d.test >/dev/null \
  || fail "the KDC did not start in the lab namespace"
chmod -R a+rX "$DATA"  # the guest reads the keytabs (test realm only)
export KRB5_CONFIG=$DATA/kdc/krb5.conf
"$LAB" exec -- env KRB5_CONFIG="$KRB5_CONFIG" "$NFS3D" --config "$WORK/nfs3d.conf" --foreground \
  2> "$WORK/nfs3d.log" &
PIDS+=($!)
wait_for "$LAB" exec -- rpcinfo -T tcp 127.0.0.1 100003 3 \
  || { cat "$WORK/nfs3d.log" >&2; fail "nfs3d did not come up"; }

# The guest scripts travel inside the files mount-run copies into the VM: the
# guest cannot read the checkout when it lives under /tmp (its /tmp is its own).
{ printf 'KRB5_LAB=%q\n' "$DATA/kdc"; cat "$REPO/tests/integration/guest_krb5_setup.sh"; } \
  > "$DATA/pre-mount.sh"

run_one() {  # PROTO "MORE_SECS" CHECK_ONLY_KRB5P
  local proto=$1 more=$2 only=$3 out="$WORK/out-$1"
  { printf 'KRB5_LAB=%q\nPROTO=%q\nSERVER=server.nfs3d.test\nEXPORT=%q\nEXPORT_KRB5P=%q\nMORE_SECS=%q\nCHECK_ONLY_KRB5P=%q\n' \
      "$DATA/kdc" "$proto" "$WORK/export" "$WORK/krb5p" "$more" "$only"
    cat "$REPO/tests/integration/guest_krb5.sh"; } > "$DATA/cmds-$proto.sh"
  log "sec=krb5p ${more:+and $more }mounts over $proto"
  # The krb5p part's traffic, for the clear-text check.
  "$LAB" exec -- timeout 600 tcpdump -i any -s 0 -U -w "$WORK/cap-$proto.pcap" \
      "host 10.200.0.2" 2>/dev/null &  # not "port 2049": UDP calls come in IP fragments
  local cap=$!
  lab_mount_run "$out.log" --export "$WORK/export" --proto "$proto" --server server.nfs3d.test \
      --opts sec=krb5p --pre-mount "$DATA/pre-mount.sh" --out-dir "$out" --timeout 600 \
      --script "$DATA/cmds-$proto.sh" \
    || { cat "$out.log" >&2; tail -50 "$WORK/nfs3d.log" >&2; fail "mount-run over $proto"; }
  grep -h "VM ran" "$out.log" >&2 || true
  kill "$cap" 2>/dev/null || true
  wait "$cap" 2>/dev/null || true
  [ "$(cat "$out/done" 2>/dev/null)" = done ] || { cat "$out.log" >&2; fail "guest script over $proto"; }
  local sec
  for sec in krb5p $more; do
    [ "$(stat -c %u "$WORK/export/big-$sec")" = 1 ] || fail "big-$sec is not owned by uid 1"
    [ "$(md5sum < "$WORK/export/big-$sec" | cut -d' ' -f1)" = "$(cat "$out/md5-$sec")" ] \
      || fail "big-$sec differs on the server over $proto"
    [ "$(stat -c %u "$WORK/export/moved-$sec")" = 1 ] || fail "moved-$sec is not owned by uid 1"
    [ ! -e "$WORK/export/nope-$sec" ] || fail "uid 2 without a ticket created nope-$sec"
  done
  if [ "$only" = 1 ]; then
    [ "$(stat -c %u "$WORK/krb5p/p")" = 1 ] || fail "krb5p-only export: p is not owned by uid 1"
  fi
  # 64 bytes from the middle of the krb5p file (its data is its own) must not
  # be on the wire in clear.
  [ -s "$WORK/cap-$proto.pcap" ] || fail "no capture over $proto"
  # As a control, the krb5 file (no privacy) must be found in the same way.
  local control=$WORK/export/big-krb5
  [ -e "$control" ] || control=""
  python3 - "$WORK/export/big-krb5p" "$WORK/cap-$proto.pcap" $control <<'PY' \
    || fail "krb5p data in clear over $proto (or the capture missed the krb5 data)"
import sys
def found(path, cap):
    data = open(path, 'rb').read()
    probes = [data[i * len(data) // 9: i * len(data) // 9 + 48] for i in range(1, 9)]
    return sum(p in cap for p in probes)
cap = open(sys.argv[2], 'rb').read()
private = found(sys.argv[1], cap)
plain = found(sys.argv[3], cap) if len(sys.argv) > 3 else None
print(f"probes found in the capture: krb5p {private}/8, krb5 {plain}/8")
sys.exit(0 if private == 0 and plain != 0 else 1)
PY
  log "capture over $proto ($(stat -c %s "$WORK/cap-$proto.pcap") bytes): the krb5p file's bytes are not in clear"
  rm -f "$WORK/export/"* "$WORK/krb5p/"*
  log "PASS over $proto"
}

run_one tcp "krb5i krb5" 1
run_one udp krb5 0
log "all passed"
