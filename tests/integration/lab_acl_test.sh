#!/bin/bash
# POSIX ACLs with the real Linux kernel client (../shared/lab), mounted with
# default options, so the client speaks NFSACL (program 100227) to nfs3d:
#   1. setfacl -m u:1234:rw on a mode-600 file: getfacl shows it in the guest
#      and on the server; uid 1234 can append to the file through the ACL and
#      uid 1235 cannot.
#   2. a default ACL on a directory is inherited by a file created in it.
#   3. cp -a of a tree with access and default ACLs keeps them.
#   4. an export with no_acl: getfacl shows the mode bits, setfacl fails with
#      "Operation not supported", and plain file work goes on.
# TCP only, so it runs on every guest kernel (NFS_LAB_KERNEL, 6.1 by default).
# Usage: lab_acl_test.sh NFS3D_BINARY
TEST_NAME=lab_acl
source "$(dirname "$0")/lib.sh"

NFS3D=$1
[ -x "$NFS3D" ] || fail "no nfs3d binary at $NFS3D"
command -v getfacl > /dev/null || fail "getfacl is not installed (apt-get install acl)"
export NFS_LAB_NS=${NFS_LAB_NS:-nfs3d-acl} NFS_LAB_TAP=${NFS_LAB_TAP:-nfs3dacl0}

trap lab_cleanup EXIT
make_lab_export
mkdir -p "$WORK/noacl"
echo "$WORK/noacl 10.200.0.0/24(rw,no_root_squash,insecure,no_acl)" >> "$WORK/exports"
chmod 777 "$WORK/export" "$WORK/noacl"
write_conf "$WORK/nfs3d.conf" "$WORK/exports" "$WORK/state" on
lab_start_nfs3d "$NFS3D" 100227 3

as() {  # as UID CMD: runs CMD as that uid/gid without supplementary groups
  echo "setpriv --reuid=$1 --regid=$1 --clear-groups sh -c '$2'"
}

cat > "$WORK/acl.sh" <<EOF
cd "\$MNT"
echo hello > f
chmod 600 f
setfacl -m u:1234:rw f
getfacl -n f > "\$OUT/f.acl"
$(as 1234 'echo by-1234 >> f')
if $(as 1235 'echo by-1235 >> f') 2> "\$OUT/1235.err"; then echo "uid 1235 wrote f" >&2; exit 1; fi
mkdir d
setfacl -d -m u:1234:rwx,g:4321:rx d
touch d/inherits
getfacl -n d/inherits > "\$OUT/inherits.acl"
mkdir -p tree/sub
echo a > tree/sub/a
setfacl -m g:4321:r tree/sub/a
setfacl -d -m u:1234:r tree/sub
cp -a tree copy
(cd tree && getfacl -n -R .) > "\$OUT/tree.acl"
(cd copy && getfacl -n -R .) > "\$OUT/copy.acl"
EOF
out="$WORK/out"
log "setfacl/getfacl, ACL enforcement, inheritance, cp -a"
lab_mount_run "$out.log" --export "$WORK/export" --proto tcp --out-dir "$out" --timeout 600 \
    --script "$WORK/acl.sh" \
  || { cat "$out.log" >&2; tail -30 "$WORK/nfs3d.log" >&2; fail "mount-run on the ACL export"; }
grep -q '^user:1234:rw-' "$out/f.acl" || { cat "$out/f.acl" >&2; fail "guest getfacl lacks user:1234"; }
getfacl -n "$WORK/export/f" | grep -q '^user:1234:rw-' || fail "server file lacks user:1234"
[ "$(cat "$WORK/export/f")" = "$(printf 'hello\nby-1234')" ] \
  || { cat "$WORK/export/f" >&2; fail "f should hold hello + the write of uid 1234 only"; }
grep -q 'Permission denied' "$out/1235.err" || { cat "$out/1235.err" >&2; fail "uid 1235 error"; }
grep -q '^user:1234:rwx' "$out/inherits.acl" && grep -q '^group:4321:r-x' "$out/inherits.acl" \
  || { cat "$out/inherits.acl" >&2; fail "default ACL not inherited"; }
getfacl -n "$WORK/export/d/inherits" | grep -q '^user:1234:' || fail "server: no inherited ACL"
diff "$out/tree.acl" "$out/copy.acl" >&2 || fail "cp -a changed the ACLs"
grep -q '^default:user:1234:r--' "$out/copy.acl" || { cat "$out/copy.acl" >&2; fail "copy lacks default ACL"; }
grep -q '^group:4321:r--' "$out/copy.acl" || fail "copy lacks group:4321"
getfacl -n "$WORK/export/copy/sub/a" | grep -q '^group:4321:r--' || fail "server copy lacks group:4321"
log "PASS: ACLs set, read, enforced, inherited and copied"

cat > "$WORK/noacl.sh" <<'GUEST'
cd "$MNT"
echo plain > g
chmod 640 g
getfacl -n g > "$OUT/g.acl"
if setfacl -m u:1234:rw g 2> "$OUT/setfacl.err"; then echo "setfacl worked on no_acl" >&2; exit 1; fi
cp -a g g2
cat g2 > "$OUT/g2"
GUEST
log "no_acl export"
lab_mount_run "$out-noacl.log" --export "$WORK/noacl" --proto tcp --out-dir "$out-noacl" \
    --timeout 600 --script "$WORK/noacl.sh" \
  || { cat "$out-noacl.log" >&2; tail -30 "$WORK/nfs3d.log" >&2; fail "mount-run on no_acl"; }
grep -q 'Operation not supported' "$out-noacl/setfacl.err" \
  || { cat "$out-noacl/setfacl.err" >&2; fail "setfacl on no_acl: expected 'Operation not supported'"; }
grep -q '^group::r--' "$out-noacl/g.acl" && ! grep -q '^user:[0-9]' "$out-noacl/g.acl" \
  || { cat "$out-noacl/g.acl" >&2; fail "getfacl on no_acl should show the mode bits"; }
[ "$(cat "$out-noacl/g2")" = plain ] || fail "cp -a on no_acl"
log "PASS: no_acl answers as a server without ACLs"
log "all passed"
