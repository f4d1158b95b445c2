#!/bin/bash
# RQUOTA (program 100011) with the real Linux client tools (../shared/lab):
# the kernel client mounts nfs3d, and quota(1) in the guest asks nfs3d's
# RQUOTA over the network, as it asks rpc.rquotad on knfsd sites:
#   1. rpcinfo lists RQUOTA v1 and v2 over UDP and TCP;
#   2. a user asking about its own quota gets an answer (this host's kernel
#      keeps no quotas, CONFIG_QUOTA is off here, so: no limits), root too;
#   3. a non-root user asking about another user is refused, as rpc.rquotad
#      refuses it.
# Usage: lab_rquota_test.sh NFS3D_BINARY
TEST_NAME=lab_rquota
source "$(dirname "$0")/lib.sh"

NFS3D=$1
[ -x "$NFS3D" ] || fail "no nfs3d binary at $NFS3D"
command -v quota > /dev/null || fail "quota is not installed (apt-get install quota)"
export NFS_LAB_NS=nfs3d-rquota NFS_LAB_TAP=nfs3drq0

trap lab_cleanup EXIT
make_lab_export
chmod 777 "$WORK/export"
write_conf "$WORK/nfs3d.conf" "$WORK/exports" "$WORK/state" on
lab_start_nfs3d "$NFS3D" 100011 2

"$LAB" exec -- rpcinfo -p 127.0.0.1 > "$WORK/rpcinfo"
for proto in udp tcp; do
  for vers in 1 2; do
    grep -Eq "^ +100011 +$vers +$proto " "$WORK/rpcinfo" \
      || { cat "$WORK/rpcinfo" >&2; fail "rquota v$vers/$proto is not registered"; }
  done
done
log "PASS: RQUOTA v1 and v2 registered over UDP and TCP"

cat > "$WORK/quota.sh" <<'GUEST'
quota -v > "$OUT/root.out" 2> "$OUT/root.err" || echo "rc=$?" >> "$OUT/root.err"
setpriv --reuid=1234 --regid=1234 --clear-groups quota -v > "$OUT/self.out" 2> "$OUT/self.err" \
  || echo "rc=$?" >> "$OUT/self.err"
setpriv --reuid=1234 --regid=1234 --clear-groups quota -v -u 1235 > "$OUT/other.out" \
  2> "$OUT/other.err" || echo "rc=$?" >> "$OUT/other.err"
GUEST
out="$WORK/out"
lab_mount_run "$out.log" --export "$WORK/export" --proto tcp --out-dir "$out" --timeout 600 \
    --script "$WORK/quota.sh" \
  || { cat "$out.log" >&2; tail -30 "$WORK/nfs3d.log" >&2; fail "mount-run"; }
for who in root self other; do
  log "quota ($who): $(tr '\n' ' ' < "$out/$who.out") | $(tr '\n' ' ' < "$out/$who.err")"
done
# Without quotas on the exported file system nfs3d answers Q_NOQUOTA, as
# rpc.rquotad does, and quota(1) prints no line for that mount.
for who in root self; do
  if grep -qi "error\|denied\|not permitted" "$out/$who.err"; then fail "quota -v ($who) failed"; fi
done
grep -qi "Operation not permitted\|Permission denied\|not permitted" "$out/other.err" \
  || fail "quota -u 1235 as uid 1234 was not refused"
log "PASS: quota(1) answered for the caller itself, refused for another user"
log "all passed"
