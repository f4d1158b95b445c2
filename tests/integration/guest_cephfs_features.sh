# Runs in the lab guest (bash -e -o pipefail) after guest_fileops.sh: mounts
# the CephFS sub-directory export /cephq (cephfs=/lab-q with a cephx user of
# its own, a 64 MiB / 1000-entry quota and a snapshot "s1" made before
# `snapped` was rewritten) and checks what Ceph sites use, writing each
# finding to $OUT for the host to assert on.
Q=/mnt/cephq
mkdir -p "$Q"
# The server of the main mount ($MNT): guest commands get MNT and OUT only.
server=$(awk -v m="$MNT" '$2 == m { sub(/:.*/, "", $1); print $1 }' /proc/mounts)
mount -t nfs -o vers=3,proto=tcp,nolock "$server:/cephq" "$Q"
trap 'cd /; umount "$Q" || true' EXIT

echo "== .snap"
ls "$Q/.snap" | tee "$OUT/snap_list"
cat "$Q/.snap/s1/snapped" > "$OUT/snap_content"
cat "$Q/snapped" > "$OUT/live_content"
# Read-only: writing into a snapshot is refused.
if echo no > "$Q/.snap/s1/new" 2>/dev/null; then echo writable > "$OUT/snap_writable"; fi

echo "== df"
df -B1 --output=size,used "$Q" | tail -n 1 | tee "$OUT/df"

echo "== setfacl/getfacl"
echo acl > "$Q/acl-file"
setfacl -m u:1234:rw,g:2345:r "$Q/acl-file"
getfacl -cn "$Q/acl-file" | tee "$OUT/getfacl"

echo "== cp -a"
mkdir "$Q/src"
echo data > "$Q/src/f"
chmod 0640 "$Q/src/f"
touch -d @1577934245 "$Q/src/f"
setfacl -m u:1234:r "$Q/src/f"
cp -a "$Q/src" "$Q/dst"
for f in src/f dst/f; do
  stat -c '%a %Y' "$Q/$f"
  getfacl -cn "$Q/$f"
done > "$OUT/cp_a"
stat -c '%a %Y' "$Q/src/f" > "$OUT/src_stat"
stat -c '%a %Y' "$Q/dst/f" > "$OUT/dst_stat"
getfacl -cn "$Q/src/f" > "$OUT/src_acl"
getfacl -cn "$Q/dst/f" > "$OUT/dst_acl"
cat "$OUT/cp_a"

echo "== quota -v"
quota -v > "$OUT/quota" 2> "$OUT/quota.err" || echo "rc=$?" >> "$OUT/quota.err"
cat "$OUT/quota" "$OUT/quota.err"
