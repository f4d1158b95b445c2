# Runs in the lab guest on a sec=krb5p mount $MNT (bash -e -o pipefail), after
# guest_krb5_setup.sh. The command file mount-run runs sets $KRB5_LAB (the
# host directory with krb5.conf and the keytabs), $PROTO, $SERVER, $EXPORT,
# $EXPORT_KRB5P, $MORE_SECS and $CHECK_ONLY_KRB5P, followed by this file's text.
# As user daemon (uid 1) with a ticket: write, read back and rename files on
# krb5p, then on mounts of the same export with each of $MORE_SECS; as user
# bin (uid 2, no ticket): refused. With CHECK_ONLY_KRB5P=1, the krb5p-only
# export refuses krb5 and sys mounts and serves krb5p.
# Results go to $OUT for the host to compare with the server's files.
set -x
grep " $MNT " /proc/mounts
as_daemon() { setpriv --reuid=1 --regid=1 --clear-groups -- "$@"; }
kinit -k -t "$KRB5_LAB/client.keytab" -c FILE:/tmp/krb5cc_1 daemon
chown 1:1 /tmp/krb5cc_1

one_mount() {  # DIR SEC
  local dir=$1 sec=$2
  echo "== $sec: write, read back, rename as uid 1"
  # Data of its own per flavor: the host looks for the krb5p bytes on the wire.
  dd if=/dev/urandom of="/tmp/src-$sec" bs=256k count=4 status=none
  chmod 644 "/tmp/src-$sec"
  md5sum < "/tmp/src-$sec" | cut -d' ' -f1 > "$OUT/md5-$sec"
  as_daemon dd if="/tmp/src-$sec" of="$dir/big-$sec" bs=256k conv=fsync status=none
  echo 3 > /proc/sys/vm/drop_caches
  [ "$(as_daemon cat "$dir/big-$sec" | md5sum | cut -d' ' -f1)" = "$(cat "$OUT/md5-$sec")" ]
  as_daemon sh -c "echo hello > '$dir/small-$sec' && mv '$dir/small-$sec' '$dir/moved-$sec'"
  [ "$(stat -c %u "$dir/moved-$sec")" = 1 ]
  echo "== $sec: uid 2 has no ticket"
  if setpriv --reuid=2 --regid=2 --clear-groups -- touch "$dir/nope-$sec" 2>"$OUT/nope-$sec.err"; then
    echo "uid 2 without a ticket could create a file" >&2
    exit 1
  fi
  cat "$OUT/nope-$sec.err"
}

one_mount "$MNT" krb5p
for sec in $MORE_SECS; do
  mkdir -p "/mnt/$sec"
  mount -t nfs -o "vers=3,proto=$PROTO,nolock,sec=$sec" "$SERVER:$EXPORT" "/mnt/$sec"
  grep " /mnt/$sec " /proc/mounts
  one_mount "/mnt/$sec" "$sec"
  umount "/mnt/$sec"
done

if [ "$CHECK_ONLY_KRB5P" = 1 ]; then
echo "== the krb5p-only export refuses krb5 and sys"
mkdir -p /mnt/only
for sec in krb5 sys; do
  if mount -t nfs -o "vers=3,proto=$PROTO,nolock,sec=$sec" "$SERVER:$EXPORT_KRB5P" /mnt/only \
      2>"$OUT/only-$sec.err"; then
    ls /mnt/only >/dev/null 2>&1 && { echo "sec=$sec mount of a krb5p-only export works" >&2; exit 1; }
    umount /mnt/only
  fi
  echo "sec=$sec refused: $(cat "$OUT/only-$sec.err")"
done
mount -t nfs -o "vers=3,proto=$PROTO,nolock,sec=krb5p" "$SERVER:$EXPORT_KRB5P" /mnt/only
as_daemon sh -c 'echo private > /mnt/only/p'
umount /mnt/only
fi
echo done > "$OUT/done"
