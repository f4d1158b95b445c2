#!/bin/bash
# RQUOTA (program 100011) with the real Linux client tools (../shared/lab):
# the kernel client mounts nfs3d, and quota(1) in the guest asks nfs3d's
# RQUOTA over the network, as it asks rpc.rquotad on knfsd sites:
#   1. rpcinfo lists RQUOTA v1 and v2 over UDP and TCP;
#   2. a user asking about its own quota gets an answer (this host's kernel
#      keeps no quotas, CONFIG_QUOTA is off here, so: no limits), root too;
#   3. a non-root user asking about another user is refused, as rpc.rquotad
#      refuses it;
#   4. real quotas: in the guest (whose kernel keeps quotas) an ext4 image on a
#      loop device with user quotas, a limit set for uid 1234 and 300 KiB
#      written by it, exported by a second nfs3d that runs in the guest (the
#      host binary, staged under /var/tmp where the guest sees it) and mounted
#      by the guest's kernel client over loopback: quota(1) on the NFS mount
#      shows uid 1234's usage and limits, as on the ext4 itself.
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

# Part 4, in the guest: the staged nfs3d serves an ext4 file system that keeps
# user quotas (this host's kernel cannot: CONFIG_QUOTA is off here).
make_lab_data
cp "$NFS3D" "$DATA/nfs3d"
G=/var/tmp/nfs3d-rquota-guest  # in the guest: its own writable overlay
echo "$G/srv 127.0.0.1(rw,no_root_squash,insecure)" > "$DATA/exports"
write_conf "$DATA/nfs3d.conf" "$DATA/exports" "$G/state" on
sed -i 's/^listen = 0.0.0.0/listen = 127.0.0.1/' "$DATA/nfs3d.conf"
cat >> "$WORK/quota.sh" <<GUEST
G=$G
DATA=$DATA
GUEST
cat >> "$WORK/quota.sh" <<'GUEST'
modprobe loop 2>/dev/null || true
modprobe quota_v2 2>/dev/null || true
mkdir -p "$G/img" "$G/srv" "$G/mnt" "$G/state"
mount -t tmpfs tmpfs "$G/img"
truncate -s 64M "$G/img/fs.img"
mkfs.ext4 -q -F -O quota -E quotatype=usrquota:grpquota "$G/img/fs.img"
mount -o loop,usrquota,grpquota "$G/img/fs.img" "$G/srv"
chmod 1777 "$G/srv"
setquota -u 1234 1000 2000 10 20 "$G/srv"
setpriv --reuid=1234 --regid=1234 --clear-groups \
  dd if=/dev/urandom of="$G/srv/data" bs=1K count=300 conv=fsync status=none
quota -v -u 1234 > "$OUT/ext4-local.out" 2>&1 || true  # the ext4 itself, for comparison
"$DATA/nfs3d" --config "$DATA/nfs3d.conf" --foreground 2> "$OUT/guest-nfs3d.log" &
nfs3d_pid=$!
for _ in $(seq 1 100); do rpcinfo -T tcp 127.0.0.1 100011 2 > /dev/null 2>&1 && break; sleep 0.1; done
mount -t nfs -o vers=3,proto=tcp,nolock 127.0.0.1:"$G/srv" "$G/mnt"
setpriv --reuid=1234 --regid=1234 --clear-groups quota -v > "$OUT/ext4-self.out" \
  2> "$OUT/ext4-self.err" || echo "rc=$?" >> "$OUT/ext4-self.err"
quota -v -u 1234 > "$OUT/ext4-root.out" 2> "$OUT/ext4-root.err" || echo "rc=$?" >> "$OUT/ext4-root.err"
setpriv --reuid=1235 --regid=1235 --clear-groups quota -v -u 1234 > "$OUT/ext4-other.out" \
  2> "$OUT/ext4-other.err" || echo "rc=$?" >> "$OUT/ext4-other.err"
umount "$G/mnt"
kill "$nfs3d_pid"; wait "$nfs3d_pid" || true
umount "$G/srv"
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

# quota -v prints, per file system: name, blocks (KiB), soft, hard, grace,
# files, soft, hard. The NFS mount's line must carry what the ext4 keeps.
for who in local self root; do
  log "ext4 quota ($who): $(tr '\n' ' ' < "$out/ext4-$who.out")"
done
nfs_line() {  # the numbers after the NFS mount's name (quota -v may wrap them)
  tr '\n' ' ' < "$1" | grep -oE "127\.0\.0\.1:[^ ]+ +[0-9]+\*? +1000 +2000 .*" | head -1
}
for who in self root; do
  line=$(nfs_line "$out/ext4-$who.out")
  [ -n "$line" ] || { cat "$out/ext4-$who.out" "$out/ext4-$who.err" "$out/guest-nfs3d.log" >&2
                      fail "quota -v ($who) shows no NFS line with the limits 1000/2000"; }
  used=$(echo "$line" | awk '{print $2}' | tr -d '*')
  [ "$used" -ge 300 ] || fail "quota -v ($who) shows $used KiB used, expected >= 300: $line"
  echo "$line" | grep -qE " 10 +20" || fail "quota -v ($who) misses the file limits 10/20: $line"
done
grep -qi "Operation not permitted\|Permission denied\|not permitted" "$out/ext4-other.err" \
  || fail "uid 1235 asking about uid 1234 was not refused (ext4 export)"
log "PASS: quota(1) on the NFS mount of an ext4 with quotas shows the usage and limits ext4 keeps"
log "all passed"
