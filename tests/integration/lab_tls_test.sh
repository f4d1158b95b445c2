#!/bin/bash
# RPC-with-TLS with the real Linux kernel client (../shared/lab, guest kernel
# 6.12 with tlshd from Debian 13's ktls-utils): nfs3d on the host serves an
# xprtsec=tls and an xprtsec=mtls export; the guest mounts each with its
# mode, writes 8 MiB of random bytes, a marker file and a tree (cp -a) and
# reads them back after dropping its caches (guest_tls.sh); the files on the
# server have the same md5; the other export and a plaintext mount are
# refused; a capture on the lab's interface holds no clear text of the marker.
# Then nfs3d runs inside the guest, whose kernel has kTLS, and the guest
# mounts it over 127.0.0.1: the records are the kernel's (sendfile READ,
# spliced WRITE through kTLS), md5 checked.
# Certificates are made for the run (tls_make_certs.sh).
# Usage: lab_tls_test.sh NFS3D_BINARY
TEST_NAME=lab_tls
source "$(dirname "$0")/lib.sh"

NFS3D=$1
[ -x "$NFS3D" ] || fail "no nfs3d binary at $NFS3D"
export NFS_LAB_NS=nfs3d-tls NFS_LAB_TAP=nfs3dtls0 NFS_LAB_KERNEL=6.12

trap lab_cleanup EXIT
make_work
make_lab_data
TLSHD=$("$LAB" tlshd 2>/dev/null | tail -1)
[ -x "$TLSHD" ] || fail "nfs-lab tlshd gave no tlshd binary"
"$REPO/tests/integration/tls_make_certs.sh" "$DATA/certs" IP:10.200.0.1 >/dev/null \
  || fail "could not make the test certificates"
chmod -R a+rX "$DATA"  # the guest reads the CA and the client's test key
mkdir -p "$WORK/tls" "$WORK/mtls" "$WORK/state"
cat > "$WORK/exports" <<EXPORTS
$WORK/tls 10.200.0.0/24(rw,insecure,no_root_squash,xprtsec=tls)
$WORK/mtls 10.200.0.0/24(rw,insecure,no_root_squash,xprtsec=mtls)
EXPORTS
write_conf "$WORK/nfs3d.conf" "$WORK/exports" "$WORK/state" on
printf '\n[tls]\ncertificate = %s\nkey = %s\nca = %s\n' "$DATA/certs/server.pem" \
  "$DATA/certs/server.key" "$DATA/certs/ca.pem" >> "$WORK/nfs3d.conf"
lab_start_nfs3d "$NFS3D" 100003 3

run_one() {  # MODE
  local mode=$1 out="$WORK/out-$1"
  local export=$WORK/$mode
  { printf 'TLSHD=%q\nCERTS=%q\nMODE=%q\n' "$TLSHD" "$DATA/certs" "$mode"
    cat "$REPO/tests/integration/guest_tls_setup.sh"; } > "$DATA/pre-$mode.sh"
  { printf 'MODE=%q\nSERVER=10.200.0.1\nEXPORT_TLS=%q\nEXPORT_MTLS=%q\n' "$mode" "$WORK/tls" \
      "$WORK/mtls"
    cat "$REPO/tests/integration/guest_tls.sh"; } > "$DATA/cmds-$mode.sh"
  log "xprtsec=$mode mount of $export"
  "$LAB" exec -- timeout 600 tcpdump -i any -s 0 -U -w "$WORK/cap-$mode.pcap" \
      "host 10.200.0.2 and tcp port 2049" 2>/dev/null &
  local cap=$!
  lab_mount_run "$out.log" --export "$export" --proto tcp --port 2049 --mountport 20048 \
      --opts "xprtsec=$mode" --pre-mount "$DATA/pre-$mode.sh" --out-dir "$out" \
      --timeout 600 --script "$DATA/cmds-$mode.sh" \
    || { cat "$out.log" >&2; tail -50 "$WORK/nfs3d.log" >&2; fail "mount-run with xprtsec=$mode"; }
  grep -h "VM ran\|xprtsec" "$out.log" >&2 || true
  kill "$cap" 2>/dev/null || true
  wait "$cap" 2>/dev/null || true
  [ "$(cat "$out/done" 2>/dev/null)" = done ] || { cat "$out.log" >&2; fail "guest script ($mode)"; }
  [ "$(md5sum < "$export/big-$mode" | cut -d' ' -f1)" = "$(cat "$out/md5")" ] \
    || fail "big-$mode differs on the server"
  [ "$(cat "$export/tree-$mode/a/b/two")" = two ] || fail "the copied tree is not on the server"
  [ -s "$WORK/cap-$mode.pcap" ] || fail "no capture ($mode)"
  if grep -q "nfs3d-tls-marker-$mode" "$WORK/cap-$mode.pcap"; then
    fail "the marker file crossed the network in clear text ($mode)"
  fi
  grep -q "nfs3d-tls-marker-$mode" "$export/marker-$mode" || fail "no marker on the server"
  log "PASS xprtsec=$mode ($(stat -c %s "$WORK/cap-$mode.pcap") bytes captured, no marker in clear)"
}

# The kernel's TLS: this host's kernel may have none (then the records above
# were encrypted in user space); the 6.12 guest has tls.ko. nfs3d runs in the
# guest (host binaries over 9p) and the guest mounts it over 127.0.0.1.
run_ktls() {
  local out="$WORK/out-ktls"
  { printf 'TLSHD=%q\nCERTS=%q\nMODE=tls\nNFS3D=%q\nGUEST_DIR=/var/tmp/nfs3d-ktls\n' \
      "$TLSHD" "$DATA/certs" "$NFS3D"
    cat "$REPO/tests/integration/guest_tls_setup.sh" "$REPO/tests/integration/guest_tls_server.sh"
  } > "$DATA/pre-ktls.sh"
  { printf 'GUEST_DIR=/var/tmp/nfs3d-ktls\n'
    cat "$REPO/tests/integration/guest_tls_ktls.sh"; } > "$DATA/cmds-ktls.sh"
  log "xprtsec=tls mount of nfs3d running in the guest (kTLS)"
  lab_mount_run "$out.log" --server 127.0.0.1 --export /var/tmp/nfs3d-ktls/export --proto tcp \
      --port 2049 --mountport 20048 --opts xprtsec=tls --pre-mount "$DATA/pre-ktls.sh" \
      --out-dir "$out" --timeout 600 --script "$DATA/cmds-ktls.sh" \
    || { cat "$out.log" >&2; fail "mount-run of nfs3d in the guest"; }
  [ "$(cat "$out/done" 2>/dev/null)" = done ] || { cat "$out.log" >&2; fail "guest script (kTLS)"; }
  grep -q "records in the kernel" "$out/nfs3d.log" \
    || { cat "$out/nfs3d.log" >&2; fail "nfs3d in the guest did not use kTLS"; }
  ! grep -q "kTLS unavailable" "$out/nfs3d.log" || fail "kTLS unavailable in the guest"
  grep -h "TLS (" "$out/nfs3d.log" | head -2 >&2
  log "PASS kTLS in the guest"
}

run_one tls
run_one mtls
grep -h "kTLS unavailable\|TLS handshake failed" "$WORK/nfs3d.log" >&2 || true
run_ktls
log "all passed"
