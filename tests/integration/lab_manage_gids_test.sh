#!/bin/bash
# [nfsd] manage_gids with the real Linux kernel client (../shared/lab): a user
# in 40 groups reads a file (mode 0640) through its 30th group. AUTH_SYS
# carries only the first 16 groups, so without manage_gids nfs3d refuses the
# read as knfsd does; with it nfs3d looks the groups up in its own name
# service (a private /etc/passwd and /etc/group bound over the real ones in a
# mount namespace of the server's) and the read succeeds.
# Usage: lab_manage_gids_test.sh NFS3D_BINARY
TEST_NAME=lab_manage_gids
source "$(dirname "$0")/lib.sh"

NFS3D=$1
[ -x "$NFS3D" ] || fail "no nfs3d binary at $NFS3D"
export NFS_LAB_NS=nfs3d-gids NFS_LAB_TAP=nfs3dgids0

trap lab_cleanup EXIT
make_lab_export
chmod 755 "$WORK/export"
echo "through group 30" > "$WORK/export/g30-only"
chown 0:5030 "$WORK/export/g30-only"
chmod 0640 "$WORK/export/g30-only"

# The user "many" (uid 4000) in groups g1..g40 (gids 5001..5040), for the
# server's name service and the guest's alike.
cp /etc/passwd "$WORK/passwd"
cp /etc/group "$WORK/group"
echo "many:x:4000:4000::/nonexistent:/bin/sh" >> "$WORK/passwd"
echo "many:x:4000:" >> "$WORK/group"
for i in $(seq 1 40); do echo "g$i:x:$((5000 + i)):many" >> "$WORK/group"; done

# start_server on|off: nfs3d with manage_gids on or off, seeing $WORK's
# passwd and group files in a mount namespace of its own.
start_server() {
  stop_started
  "$LAB" down > /dev/null 2>&1 || true
  write_conf "$WORK/nfs3d.conf" "$WORK/exports" "$WORK/state" on
  sed -i "s/^\[nfsd\]$/[nfsd]\nmanage_gids = $1/" "$WORK/nfs3d.conf"
  "$LAB" up --no-rpcbind > /dev/null
  "$LAB" exec -- unshare --mount --propagation private sh -c \
      'mount --bind "$1" /etc/passwd && mount --bind "$2" /etc/group && shift 2 && exec "$@"' \
      sh "$WORK/passwd" "$WORK/group" "$NFS3D" --config "$WORK/nfs3d.conf" --foreground \
      2> "$WORK/nfs3d-$1.log" &
  PIDS+=($!)
  wait_for "$LAB" exec -- rpcinfo -T tcp 127.0.0.1 100003 3 \
    || { cat "$WORK/nfs3d-$1.log" >&2; fail "nfs3d (manage_gids = $1) did not come up"; }
}

cat > "$WORK/read.sh" <<GUEST
cat "$WORK/passwd" > /etc/passwd
cat "$WORK/group" > /etc/group
id many > "\$OUT/id"
if setpriv --reuid=4000 --regid=4000 --init-groups cat "\$MNT/g30-only" > "\$OUT/read" 2> "\$OUT/read.err"; then
  echo ok > "\$OUT/status"
else
  echo refused > "\$OUT/status"
fi
GUEST
# The guest reads the account files from the host, so they must not be
# under /tmp (the guest's /tmp is its own).
make_lab_data
cp "$WORK/passwd" "$WORK/group" "$DATA/"
sed -i "s|$WORK/passwd|$DATA/passwd|; s|$WORK/group|$DATA/group|" "$WORK/read.sh"

for mode in off on; do
  start_server "$mode"
  grep -q "manage_gids(ttl" "$WORK/nfs3d-$mode.log" && [ "$mode" = off ] \
    && fail "the startup line names manage_gids though it is off"
  out="$WORK/out-$mode"
  log "manage_gids = $mode: uid 4000 reads a file of its 30th group"
  lab_mount_run "$out.log" --export "$WORK/export" --proto tcp --out-dir "$out" --timeout 600 \
      --script "$WORK/read.sh" \
    || { cat "$out.log" >&2; tail -30 "$WORK/nfs3d-$mode.log" >&2; fail "mount-run ($mode)"; }
  [ "$(wc -w < "$out/id")" -gt 0 ] && grep -q 'g40' "$out/id" \
    || { cat "$out/id" >&2; fail "the guest user is not in 40 groups"; }
  if [ "$mode" = off ]; then
    [ "$(cat "$out/status")" = refused ] || fail "without manage_gids the read went through"
    grep -q 'Permission denied' "$out/read.err" || { cat "$out/read.err" >&2; fail "error"; }
    log "PASS: without manage_gids the 30th group does not count (AUTH_SYS sends 16)"
  else
    grep -q "manage_gids(ttl" "$WORK/nfs3d-on.log" || fail "the startup line does not name manage_gids"
    [ "$(cat "$out/status")" = ok ] || { cat "$out/read.err" >&2; fail "with manage_gids the read was refused"; }
    [ "$(cat "$out/read")" = "through group 30" ] || fail "read the wrong data"
    log "PASS: with manage_gids the server's groups count"
  fi
done
log "all passed"
