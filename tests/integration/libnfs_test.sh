#!/bin/bash
# libnfs (a user-space NFSv3 client) copies a file into nfs3d and back out;
# the md5 must match on all three copies. Runs in private namespaces.
# Usage: libnfs_test.sh NFS3D_BINARY
TEST_NAME=libnfs
source "$(dirname "$0")/lib.sh"
NFS3D=$(readlink -f "$1")
enter_private_namespaces "$0" "$NFS3D"

trap 'stop_started; [ -n "$WORK" ] && rm -rf "$WORK"' EXIT
make_work
mkdir -p "$WORK/export" "$WORK/state"
# A host-name entry: exercises reverse + forward-confirmed resolution
# (127.0.0.1 is "localhost" in /etc/hosts, so no DNS query is sent).
echo "$WORK/export localhost(rw,insecure,no_root_squash)" > "$WORK/exports"
write_conf "$WORK/nfs3d.conf" "$WORK/exports" "$WORK/state" auto
"$NFS3D" --config "$WORK/nfs3d.conf" --foreground 2> "$WORK/nfs3d.log" &
PIDS+=($!)
wait_for rpcinfo -T tcp 127.0.0.1 100003 3 || { cat "$WORK/nfs3d.log" >&2; fail "nfs3d not up"; }

head -c 7340033 /dev/urandom > "$WORK/src"   # 7 MiB + 1 byte: not block aligned
want=$(md5sum < "$WORK/src" | cut -d' ' -f1)
nfs-cp "$WORK/src" "nfs://127.0.0.1$WORK/export/copied?version=3" \
  || { tail -20 "$WORK/nfs3d.log" >&2; fail "nfs-cp into nfs3d"; }
[ "$(md5sum < "$WORK/export/copied" | cut -d' ' -f1)" = "$want" ] || fail "server-side md5 differs"
nfs-cp "nfs://127.0.0.1$WORK/export/copied?version=3" "$WORK/back" || fail "nfs-cp out of nfs3d"
[ "$(md5sum < "$WORK/back" | cut -d' ' -f1)" = "$want" ] || fail "copied-back md5 differs"
nfs-ls "nfs://127.0.0.1$WORK/export?version=3" | grep -q copied || fail "nfs-ls does not list the file"
log "PASS: nfs-cp in and out, md5 $want"
