#!/bin/bash
# RPC-with-TLS with the real Linux kernel client (../shared/lab, guest kernel
# 6.12 with tlshd from Debian 13's ktls-utils): nfs3d on the host serves an
# xprtsec=tls and an xprtsec=mtls export; the guest mounts each with its
# mode, writes 8 MiB of random bytes, a marker file and a tree (cp -a) and
# reads them back after dropping its caches (guest_tls.sh); the files on the
# server have the same md5; the other export and a plaintext mount are
# refused; a capture on the lab's interface holds no clear text of the marker.
# Under a busy xprtsec=tls mount (files written with fsync) nfs3d is handed
# over twice (--takeover) and its certificate renewed (SIGHUP): no client
# error, md5 of every file checked (run_busy).
# Then nfs3d runs inside the guest, whose kernel has kTLS, and the guest
# mounts it over 127.0.0.1: the records are the kernel's (sendfile READ,
# spliced WRITE through kTLS), md5 checked; then an nfs3d --takeover in the
# guest under a busy mount: the kTLS connection crosses (the same client
# port before and after, the successor's log names it), md5 checked, and the
# client's close_notify at unmount ends it in the successor.
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
# nfs3d reads its certificate from copies that run_busy renews.
cp "$DATA/certs/server.pem" "$DATA/certs/server.key" "$WORK/"
printf '\n[tls]\ncertificate = %s\nkey = %s\nca = %s\n' "$WORK/server.pem" \
  "$WORK/server.key" "$DATA/certs/ca.pem" >> "$WORK/nfs3d.conf"
lab_start_nfs3d "$NFS3D" 100003 3
NFS3D_PID=${PIDS[-1]}

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
      --opts "xprtsec=$mode,lock" --pre-mount "$DATA/pre-$mode.sh" --out-dir "$out" \
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

# busy_files_beyond N: waits (up to 5 min) until the guest wrote past
# busy-N on the tls export, i.e. the mount made progress; false if the
# mount-run ended first.
busy_files_beyond() {
  for _ in $(seq 1 600); do
    [ -e "$WORK/tls/busy-$(($1 + 2))" ] && return 0  # busy-(N+1) is whole
    kill -0 "$BUSY_RUN" 2>/dev/null || return 1
    sleep 0.5
  done
  return 1
}
busy_count() { find "$WORK/tls" -maxdepth 1 -name 'busy-*' | wc -l; }

# takeover N: lab_takeover N, then what the successor took over.
takeover() {
  lab_takeover "$1"
  grep -h "TCP connections\|TLS connection" "$WORK/nfs3d-ho-$1.log" >&2 || true
}

# Under a busy xprtsec=tls mount (4 MiB files written with fsync, one after
# another): nfs3d --takeover, a renewed certificate put in place and loaded
# by SIGHUP, and another --takeover (whose process starts with the renewed
# certificate). Where this host's kernel has no kTLS the records are in user
# space: at each handover the connection ends cleanly and the client
# reconnects and makes a new TLS session with the successor (with the
# renewed certificate after the second); with kTLS the connection crosses.
# The guest sees no error, and every file has its md5 on both sides.
run_busy() {
  local out="$WORK/out-busy" n
  echo go > "$WORK/tls/host-state"
  chmod 666 "$WORK/tls/host-state"
  { printf 'TLSHD=%q\nCERTS=%q\nMODE=tls\n' "$TLSHD" "$DATA/certs"
    cat "$REPO/tests/integration/guest_tls_setup.sh"; } > "$DATA/pre-busy.sh"
  cat "$REPO/tests/integration/guest_tls_busy.sh" "$REPO/tests/integration/guest_tls_handover.sh" \
    > "$DATA/cmds-busy.sh"
  log "xprtsec=tls mount kept busy across a handover, a certificate renewal and a handover"
  lab_mount_run "$out.log" --export "$WORK/tls" --proto tcp --port 2049 --mountport 20048 \
      --opts xprtsec=tls --pre-mount "$DATA/pre-busy.sh" --out-dir "$out" --timeout 900 \
      --script "$DATA/cmds-busy.sh" &
  BUSY_RUN=$!
  busy_files_beyond 1 || { cat "$out.log" >&2; fail "the guest did not start writing"; }
  n=$(busy_count)
  takeover 1
  busy_files_beyond "$n" || { cat "$out.log" >&2; fail "no progress after the first handover"; }
  grep -q "TLS connection\|kTLS unavailable" "$WORK/nfs3d-ho-1.log" \
    || fail "the successor neither took over a TLS connection nor made a new session"
  local from
  from=$(wc -c < "$WORK/nfs3d-ho-1.log")
  cp "$DATA/certs/server2.pem" "$WORK/server.pem"
  cp "$DATA/certs/server2.key" "$WORK/server.key"
  kill -HUP "$NFS3D_PID"
  for _ in $(seq 1 100); do
    tail -c +"$((from + 1))" "$WORK/nfs3d-ho-1.log" | grep -q "loaded for new sessions" && break
    sleep 0.1
  done
  tail -c +"$((from + 1))" "$WORK/nfs3d-ho-1.log" | grep "loaded for new sessions" >&2 \
    || fail "SIGHUP did not load the renewed certificate"
  n=$(busy_count)
  busy_files_beyond "$n" || { cat "$out.log" >&2; fail "no progress after the renewal"; }
  n=$(busy_count)
  takeover 2
  busy_files_beyond "$n" || { cat "$out.log" >&2; fail "no progress after the second handover"; }
  echo done > "$WORK/tls/host-state"
  wait "$BUSY_RUN" || { cat "$out.log" >&2; tail -50 "$WORK"/nfs3d-ho-2.log >&2; fail "mount-run (busy)"; }
  grep -h "VM ran\|busy_write:" "$out.log" >&2 || true
  [ "$(cat "$out/done" 2>/dev/null)" = done ] || { cat "$out.log" >&2; fail "guest script (busy)"; }
  sed "s|  .*/busy-|  $WORK/tls/busy-|" "$out/busy.md5" | md5sum -c --quiet \
    || fail "a file written across the handovers differs on the server"
  log "PASS busy TLS mount: 2 handovers and a certificate renewal, $(busy_count) files, md5 OK"
}

# The kernel's TLS: this host's kernel may have none (then the records above
# were encrypted in user space); the 6.12 guest has tls.ko. nfs3d runs in the
# guest (host binaries over 9p) and the guest mounts it over 127.0.0.1.
run_ktls() {
  local out="$WORK/out-ktls"
  # The guest's /tmp is its own: a build tree under /tmp (a clone there) is
  # out of its sight, so it runs a copy from the data directory.
  cp "$NFS3D" "$DATA/nfs3d"
  local guest_nfs3d=$DATA/nfs3d
  { printf 'TLSHD=%q\nCERTS=%q\nMODE=tls\nNFS3D=%q\nGUEST_DIR=/var/tmp/nfs3d-ktls\n' \
      "$TLSHD" "$DATA/certs" "$guest_nfs3d"
    cat "$REPO/tests/integration/guest_tls_setup.sh" "$REPO/tests/integration/guest_tls_server.sh"
  } > "$DATA/pre-ktls.sh"
  { printf 'GUEST_DIR=/var/tmp/nfs3d-ktls\nNFS3D=%q\n' "$guest_nfs3d"
    cat "$REPO/tests/integration/guest_tls_busy.sh" "$REPO/tests/integration/guest_tls_ktls.sh"
  } > "$DATA/cmds-ktls.sh"
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
  # The handover under the busy mount: the successor took the kTLS
  # connection over, the client's TCP connection is the same one.
  grep -h "took over the TLS connection" "$out/nfs3d-successor.log" >&2 \
    || { cat "$out/nfs3d-successor.log" >&2; fail "the successor took over no TLS connection"; }
  log "client connections to nfs3d before and after the handover: $(cat "$out/ss-before") / $(cat "$out/ss-after")"
  # The client's close_notify (a control record, read through kTLS as EIO)
  # after the handover: the successor ends the connection as the
  # predecessor did.
  grep -h "closing TLS connection: the client closed the TLS session (close_notify)" \
      "$out/nfs3d-successor.log" >&2 \
    || { grep -h "tcp:" "$out/nfs3d-successor.log" >&2; fail "the successor did not read the client's close_notify"; }
  grep -h "busy_write:" "$out.log" >&2 || true
  log "PASS kTLS in the guest, and its connection across nfs3d --takeover"
}

run_one tls
run_one mtls
grep -h "kTLS unavailable\|TLS handshake failed" "$WORK/nfs3d.log" >&2 || true
run_busy
run_ktls
log "all passed"
