#!/bin/bash
# POSIX permission rules with the real Linux kernel client (../shared/lab),
# NFSv3 over TCP with default options (ACLs on), on a sub-directory export:
#   1. a user writes (>, >>, truncate) a file it does not own whose mode lets
#      it write but not read: mode 0002 for others, 0020 for the file's group;
#      it still cannot read it, and a user the bits leave out cannot write;
#   2. a user who is not in a set-group-ID directory's group creates a
#      directory in it, with and without a default ACL on the parent: the new
#      directory has S_ISGID and the parent's group (drwxrwsr-x), and a file,
#      FIFO and symlink made there get the parent's group.
# TCP only, so it runs on every guest kernel (NFS_LAB_KERNEL, 6.1 by default).
# Usage: lab_permissions_test.sh NFS3D_BINARY
TEST_NAME=lab_permissions
source "$(dirname "$0")/lib.sh"

NFS3D=$1
[ -x "$NFS3D" ] || fail "no nfs3d binary at $NFS3D"
command -v setfacl > /dev/null || fail "setfacl is not installed (apt-get install acl)"
export NFS_LAB_NS=${NFS_LAB_NS:-nfs3d-perm} NFS_LAB_TAP=${NFS_LAB_TAP:-nfs3dperm0}

trap lab_cleanup EXIT
make_lab_export
chmod 777 "$WORK/export"
write_conf "$WORK/nfs3d.conf" "$WORK/exports" "$WORK/state" on
# Files owned by 2000:2000 that uid 1234 (other) and gid 1235 (group) may
# write but not read; set-group-ID directories of group 2000.
echo secret > "$WORK/export/other-w"
chown 2000:2000 "$WORK/export/other-w"
chmod 0002 "$WORK/export/other-w"
echo secret > "$WORK/export/group-w"
chown 2000:1235 "$WORK/export/group-w"
chmod 0020 "$WORK/export/group-w"
mkdir "$WORK/export/sgid" "$WORK/export/sgid-acl"
chown 0:2000 "$WORK/export/sgid" "$WORK/export/sgid-acl"
chmod 2777 "$WORK/export/sgid" "$WORK/export/sgid-acl"
setfacl -d -m u::rwx,u:1234:rwx,g::rwx,m::rwx,o::rx "$WORK/export/sgid-acl"
lab_start_nfs3d "$NFS3D" 100003 3

as() {  # as UID GID CMD: runs CMD as that uid/gid without supplementary groups
  echo "setpriv --reuid=$1 --regid=$2 --clear-groups sh -c '$3'"
}

cat > "$WORK/perm.sh" <<GUEST
cd "\$MNT"
$(as 1234 1234 'echo by-other > other-w')
$(as 1234 1234 'echo appended >> other-w')
$(as 1236 1235 'echo by-group > group-w')
$(as 1236 1235 'truncate -s 3 group-w')
if $(as 1234 1234 'cat other-w') > "\$OUT/read.out" 2> "\$OUT/read.err"; then
  echo "uid 1234 read a file it may only write" >&2; exit 1
fi
if $(as 1234 1234 'echo intruder > group-w') 2> "\$OUT/intruder.err"; then
  echo "uid 1234 wrote group-w (mode 0020, not its group)" >&2; exit 1
fi
for d in sgid sgid-acl; do
  setpriv --reuid=1234 --regid=1234 --clear-groups sh -c "mkdir -m 775 \$d/sub && touch \$d/file && mkfifo -m 664 \$d/fifo && ln -s file \$d/link"
  stat -c '%A %g' \$d/sub > "\$OUT/\$d.sub"
  stat -c '%g' \$d/file \$d/fifo > "\$OUT/\$d.others"
  stat -c '%g' \$d/link >> "\$OUT/\$d.others"
done
getfacl -n sgid-acl/sub > "\$OUT/sgid-acl.sub.acl"
GUEST
out="$WORK/out"
log "write-only files and set-group-ID directories through the kernel client"
lab_mount_run "$out.log" --export "$WORK/export" --proto tcp --out-dir "$out" --timeout 600 \
    --script "$WORK/perm.sh" \
  || { cat "$out.log" >&2; tail -30 "$WORK/nfs3d.log" >&2; fail "mount-run"; }
[ "$(cat "$WORK/export/other-w")" = "$(printf 'by-other\nappended')" ] \
  || { cat "$WORK/export/other-w" >&2; fail "other-w should hold by-other + appended"; }
[ "$(cat "$WORK/export/group-w")" = "by-" ] \
  || { cat "$WORK/export/group-w" >&2; fail "group-w should hold by- (written, truncated to 3)"; }
grep -q 'Permission denied' "$out/read.err" || { cat "$out/read.err" >&2; fail "read of other-w"; }
grep -q 'Permission denied' "$out/intruder.err" || { cat "$out/intruder.err" >&2; fail "intruder"; }
[ "$(stat -c %a "$WORK/export/other-w")" = 2 ] || fail "other-w's mode changed"
log "PASS: write-only files written, not read, by the users their bits name"
for d in sgid sgid-acl; do
  [ "$(cat "$out/$d.sub")" = "drwxrwsr-x 2000" ] \
    || { cat "$out/$d.sub" >&2; fail "$d/sub should be drwxrwsr-x of group 2000 in the guest"; }
  [ "$(stat -c '%A %g' "$WORK/export/$d/sub")" = "drwxrwsr-x 2000" ] \
    || { stat "$WORK/export/$d/sub" >&2; fail "$d/sub on the server"; }
  [ "$(sort -u "$out/$d.others")" = 2000 ] \
    || { cat "$out/$d.others" >&2; fail "$d: file, fifo, symlink should have group 2000"; }
done
grep -q '^user:1234:rwx' "$out/sgid-acl.sub.acl" \
  || { cat "$out/sgid-acl.sub.acl" >&2; fail "sgid-acl/sub lacks the inherited ACL"; }
log "PASS: set-group-ID directories pass S_ISGID and their group on, with and without default ACLs"
log "all passed"
