#!/bin/bash
# Exports changed at run time with the real Linux kernel client (lab VM):
# the guest mounts export `keep` (and `gone`) and keeps writing to `keep`
# with fsync while the host runs `nfs3d exports add` (export `new`) and
# `nfs3d exports remove` (export `gone`) on the server's exports file. Then:
#  - the guest mounts `new` and writes and reads a file there;
#  - `gone`, still mounted, answers NFS3ERR_STALE (ESTALE), as knfsd's
#    clients see after exportfs -u;
#  - the writes to `keep` never failed;
#  - the server logged who made each change.
# Usage: lab_exports_test.sh NFS3D_BINARY
TEST_NAME=lab_exports
source "$(dirname "$0")/lib.sh"

NFS3D=$1
[ -x "$NFS3D" ] || fail "no nfs3d binary at $NFS3D"
export NFS_LAB_NS=nfs3d-exports NFS_LAB_TAP=nfs3dexp0

trap lab_cleanup EXIT
make_work
mkdir -p "$WORK/keep" "$WORK/gone" "$WORK/new" "$WORK/state"
chmod 777 "$WORK/keep" "$WORK/gone" "$WORK/new"
OPTS="10.200.0.0/24(rw,no_root_squash,insecure)"
printf '%s %s\n%s %s\n' "$WORK/keep" "$OPTS" "$WORK/gone" "$OPTS" > "$WORK/exports"
write_conf "$WORK/nfs3d.conf" "$WORK/exports" "$WORK/state" on
lab_start_nfs3d "$NFS3D" 100003 3

cat > "$WORK/guest.sh" <<EOS
set -u
opts=vers=3,proto=tcp,nolock,actimeo=1
mkdir -p /mnt/gone /mnt/new
mount -t nfs -o \$opts 10.200.0.1:$WORK/gone /mnt/gone
echo before > /mnt/gone/f
( for i in \$(seq 1 30); do
    dd if=/dev/urandom of="\$MNT/w.\$i" bs=64k count=4 conv=fsync status=none || exit 1
    sleep 0.3
  done ) &
writer=\$!
touch "\$MNT/ready"
for i in \$(seq 1 240); do [ -e "\$MNT/changed" ] && break; sleep 0.5; done
[ -e "\$MNT/changed" ] || { echo "EXPORTS: the host never changed the exports"; exit 1; }
mount -t nfs -o \$opts 10.200.0.1:$WORK/new /mnt/new
echo hello > /mnt/new/f
[ "\$(cat /mnt/new/f)" = hello ] && echo "EXPORTS: new export mounted, written and read"
if err=\$(ls /mnt/gone 2>&1); then echo "EXPORTS: the removed export still answers: \$err"; exit 1; fi
echo "EXPORTS: removed export: \$err"
case "\$err" in *"Stale file handle"*) ;; *) echo "EXPORTS: expected ESTALE"; exit 1 ;; esac
wait \$writer || { echo "EXPORTS: a write to the kept export failed"; exit 1; }
echo "EXPORTS: 30 fsync'd writes to the kept export, none failed"
umount /mnt/new
umount -f -l /mnt/gone || true
echo "EXPORTS DONE"
EOS

log "kernel client on keep and gone; exports changed while it writes"
lab_mount_run "$WORK/mount.log" --export "$WORK/keep" --proto tcp --timeout 600 \
    --script "$WORK/guest.sh" &
run=$!
for i in $(seq 1 600); do
  [ -e "$WORK/keep/ready" ] && break
  kill -0 "$run" 2>/dev/null || break
  sleep 0.5
done
[ -e "$WORK/keep/ready" ] || { cat "$WORK/mount.log" >&2; fail "the guest never got ready"; }
cmd() { "$NFS3D" exports --config "$WORK/nfs3d.conf" "$@"; }
cmd add "$WORK/new" "$OPTS" >&2 || fail "nfs3d exports add"
cmd remove "$WORK/gone" >&2 || fail "nfs3d exports remove"
cmd list >&2
touch "$WORK/keep/changed"
rc=0
wait "$run" || rc=$?
grep "EXPORTS" "$WORK/mount.log" >&2 || true
[ "$rc" = 0 ] && grep -q "EXPORTS DONE" "$WORK/mount.log" \
  || { cat "$WORK/mount.log" >&2; tail -30 "$WORK/nfs3d.log" >&2; fail "guest run (status $rc)"; }
grep -q "last change: .*: add $WORK/new" "$WORK/nfs3d.log" || fail "the add was not logged with who made it"
grep -q "last change: .*: remove $WORK/gone" "$WORK/nfs3d.log" \
  || fail "the remove was not logged with who made it"
[ "$(ls "$WORK/keep"/w.* | wc -l)" = 30 ] || fail "not every write reached the kept export"
log "PASS: export added and one removed under a mounted, writing kernel client"
