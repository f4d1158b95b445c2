#!/bin/bash
# File systems mounted below an export, with the real Linux kernel client
# (../shared/lab): a tmpfs on export/sub is entered through a `crossmnt`
# export (the client shows it as a mount of its own: another st_dev), files
# written there land on the tmpfs, the covered directory's file is not seen;
# an export with `nohide` mounted inside another export is entered from it;
# without either option the client sees the directory the mount covers.
# Usage: lab_crossmnt_test.sh NFS3D_BINARY
TEST_NAME=lab_crossmnt
source "$(dirname "$0")/lib.sh"

NFS3D=$1
[ -x "$NFS3D" ] || fail "no nfs3d binary at $NFS3D"
export NFS_LAB_NS=nfs3d-xmnt NFS_LAB_TAP=nfs3dxmnt0

MOUNTED=()
cleanup() {
  stop_started
  local m
  for m in "${MOUNTED[@]}"; do umount -l "$m" 2>/dev/null || true; done
  lab_cleanup
}
trap cleanup EXIT
make_lab_export
for d in export/sub parent/child plain/sub; do
  mkdir -p "$WORK/$d"
  echo covered > "$WORK/$d/covered"
  mount -t tmpfs -o size=4m tmpfs "$WORK/$d"
  MOUNTED+=("$WORK/$d")
  echo "on the tmpfs" > "$WORK/$d/onsub"
  chmod 777 "$WORK/$d"
done
cat > "$WORK/exports" <<EXPORTS
$WORK/export 10.200.0.0/24(rw,no_root_squash,insecure,crossmnt)
$WORK/parent 10.200.0.0/24(rw,no_root_squash,insecure)
$WORK/parent/child 10.200.0.0/24(rw,no_root_squash,insecure,nohide)
$WORK/plain 10.200.0.0/24(rw,no_root_squash,insecure)
EXPORTS
write_conf "$WORK/nfs3d.conf" "$WORK/exports" "$WORK/state" on
lab_start_nfs3d "$NFS3D" 100003 3

# enter DIR: the guest reads and writes in $MNT/DIR and reports st_dev.
guest_script() {
  cat <<GUEST
cd "\$MNT"
stat -c %d . > "\$OUT/dev_top"
cat $1/onsub > "\$OUT/onsub"
stat -c %d $1 > "\$OUT/dev_sub"
ls $1 > "\$OUT/ls"
echo from-guest > $1/written
GUEST
}
run_one() {  # run_one EXPORT DIR
  local out="$WORK/out-$2"
  guest_script "$2" > "$WORK/guest-$2.sh"
  lab_mount_run "$out.log" --export "$WORK/$1" --proto tcp --out-dir "$out" --timeout 600 \
      --script "$WORK/guest-$2.sh" \
    || { cat "$out.log" >&2; tail -30 "$WORK/nfs3d.log" >&2; fail "mount-run of $1"; }
  [ "$(cat "$out/onsub")" = "on the tmpfs" ] || fail "$1/$2: did not read the tmpfs"
  [ "$(cat "$out/dev_top")" != "$(cat "$out/dev_sub")" ] \
    || fail "$1/$2: the client did not see another file system"
  ! grep -q covered "$out/ls" || fail "$1/$2: the covered directory showed through"
  [ "$(cat "$WORK/$1/$2/written")" = from-guest ] || fail "$1/$2: write did not reach the tmpfs"
}
log "crossmnt"
run_one export sub
log "nohide"
run_one parent child

log "neither: the covered directory"
cat > "$WORK/guest-covered.sh" <<'GUEST'
cd "$MNT"
stat -c %d . > "$OUT/dev_top"
stat -c %d sub > "$OUT/dev_sub"
ls sub > "$OUT/ls"
cat sub/covered > "$OUT/covered"
GUEST
out="$WORK/out-covered"
lab_mount_run "$out.log" --export "$WORK/plain" --proto tcp --out-dir "$out" --timeout 600 \
    --script "$WORK/guest-covered.sh" \
  || { cat "$out.log" >&2; tail -30 "$WORK/nfs3d.log" >&2; fail "mount-run of plain"; }
[ "$(cat "$out/dev_top")" = "$(cat "$out/dev_sub")" ] || fail "plain: sub shown as another file system"
[ "$(cat "$out/ls")" = covered ] || { cat "$out/ls" >&2; fail "plain: expected the covered directory"; }
[ "$(cat "$out/covered")" = covered ] || fail "plain: covered file"
log "all passed"
