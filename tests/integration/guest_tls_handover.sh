# Runs in the lab guest (mount-run --script), after guest_tls_busy.sh, with
# $MNT mounted with xprtsec=tls from nfs3d on the host: writes 4 MiB files
# with fsync (busy_write) while the host hands nfs3d over and changes its
# certificate (lab_tls_test.sh run_busy), until the host writes "done" into
# $MNT/host-state (a file: each open revalidates it, close-to-open); then
# every file read back after dropping the caches has its md5.
set -x
busy_done() { [ "$(cat "$MNT/host-state")" = done ]; }
busy_write "$MNT"
busy_done
sync
echo 3 > /proc/sys/vm/drop_caches
md5sum -c --quiet "$OUT/busy.md5"
grep -q "xprtsec=tls" /proc/mounts
dmesg | grep -iE "nfs|tls" | tail -20 || true
echo done > "$OUT/done"
