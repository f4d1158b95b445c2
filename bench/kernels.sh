#!/bin/bash
# Every client kernel (a benchmark, not a test; docs/durability.md "Client
# kernels"): runs the core lab tests (tests/integration/lab_*_test.sh) with
# each guest kernel the lab boots (../shared/lab, NFS_LAB_KERNEL), one VM at
# a time, in a lab namespace of its own (NFS_LAB_NS/NFS_LAB_TAP, default
# nfs3d-kb/nfs3dkb0), and prints a table test x kernel: PASS or FAIL, wall
# seconds, the kernel the guest booted (as nfs-lab names it) and the parts
# the test skipped (UDP on the TCP-only 5.10 and 6.12). Exit status 1 if any
# run failed; the logs of failed runs are kept.
#   bench/kernels.sh [--kernels 5.10,6.1,6.12]
#                    [--tests mount,acl,lock,permissions,kill,heads,open_trunc]
#                    [--nfs3d BIN] [--lock-tool BIN] [--keep]
# heads needs the CephFS build, keepalived and the Ceph fixture (a cluster
# per run, several minutes each). open_trunc pins how each kernel truncates
# a file at open (CREATE with size=0 on 6.12, SETATTR before). Needs root and the lab; takes the lab's
# lock (NFS_LAB_LOCK) for each run.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
TEST_NAME=kernels
source "$REPO/tests/integration/lib.sh"
KERNELS=5.10,6.1,6.12
TESTS=mount,acl,lock,permissions,kill,heads,open_trunc
NFS3D=$REPO/build/daemon/nfs3d
TOOL=$REPO/build/tests/nlm/nlm_lock_tool
NFS3STAT=$REPO/build/tools/nfs3stat/nfs3stat
KEEP=0
while [ $# -gt 0 ]; do
  case $1 in
    --kernels) KERNELS=$2; shift 2 ;;
    --tests) TESTS=$2; shift 2 ;;
    --nfs3d) NFS3D=$2; shift 2 ;;
    --lock-tool) TOOL=$2; shift 2 ;;
    --keep) KEEP=1; shift ;;
    *) echo "usage: see the head of $0" >&2; exit 2 ;;
  esac
done
[ -x "$NFS3D" ] || fail "build nfs3d first (no $NFS3D)"
export NFS_LAB_NS=${NFS_LAB_NS:-nfs3d-kb} NFS_LAB_TAP=${NFS_LAB_TAP:-nfs3dkb0}
LOCK=${NFS_LAB_LOCK:-$(cd "$REPO/.." && pwd)/.lab.lock}
IT=$REPO/tests/integration

# test_command NAME: the test script and its arguments.
test_command() {
  case $1 in
    mount) echo "$IT/lab_mount_test.sh $NFS3D own" ;;
    acl | permissions | kill) echo "$IT/lab_$1_test.sh $NFS3D" ;;
    lock | heads) echo "$IT/lab_$1_test.sh $NFS3D $TOOL" ;;
    open_trunc) echo "$IT/lab_open_trunc_test.sh $NFS3D $NFS3STAT" ;;
    *) fail "unknown test '$1' (mount, acl, lock, permissions, kill, heads, open_trunc)" ;;
  esac
}
IFS=, read -r -a kernels <<< "$KERNELS"
IFS=, read -r -a tests <<< "$TESTS"
for t in "${tests[@]}"; do test_command "$t" > /dev/null; done
for k in "${kernels[@]}"; do
  case $k in 5.10 | 6.1 | 6.12) ;; *) fail "unknown kernel '$k' (5.10, 6.1, 6.12)" ;; esac
done

OUT=$(mktemp -d /var/tmp/nfs3d-kernels.XXXXXX)
RESULTS=$OUT/results.tsv  # test kernel status seconds kver skipped
: > "$RESULTS"
failed=0
for t in "${tests[@]}"; do
  for k in "${kernels[@]}"; do
    run_log=$OUT/$t-$k.log
    log "$t on kernel $k (log $run_log)"
    exec 8> "$LOCK"
    flock 8  # the time waited for the lock is not the test's
    start=$(date +%s)
    status=PASS
    # shellcheck disable=SC2046  # test_command's words are the arguments
    NFS_LAB_KERNEL=$k $(test_command "$t") > "$run_log" 2>&1 8>&- || status=FAIL
    # A guest starved by this host (not a server fault: see lab_nic_stalled
    # and lab_boot_starved in lib.sh) gets one more run, and the table says so.
    if [ "$status" = FAIL ] && { lab_nic_stalled "$run_log" || lab_boot_starved "$run_log"; }; then
      log "$t on $k: the guest was starved by this host (NIC stall or boot timer panic); once more"
      mv "$run_log" "$run_log.starved"
      start=$(date +%s)
      status="PASS (2nd run, 1st starved)"
      NFS_LAB_KERNEL=$k $(test_command "$t") > "$run_log" 2>&1 8>&- || status="FAIL (2nd run, 1st starved)"
    fi
    secs=$(($(date +%s) - start))
    exec 8>&-
    kver=$(grep -m1 -o "nfs-lab: guest: kernel [^ ]*" "$run_log" | awk '{ print $4 }' || true)
    skipped=$(grep -c "SKIPPED:" "$run_log" || true)
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$t" "$k" "$status" "$secs" "${kver:--}" "$skipped" >> "$RESULTS"
    if [ "${status%% *}" = FAIL ]; then
      failed=$((failed + 1))
      log "$t on $k FAILED: $(grep -m1 "FAIL:" "$run_log" || true)"
    fi
    log "$t on $k: $status in $secs s (guest kernel ${kver:-unknown}, $skipped part(s) skipped)"
  done
done

echo "| test | kernel | result | seconds | guest kernel | parts skipped (no UDP) |"
echo "|---|---|---|---|---|---|"
while IFS=$'\t' read -r t k status secs kver skipped; do
  echo "| $t | $k | $status | $secs | $kver | $skipped |"
done < "$RESULTS"
if [ "$failed" = 0 ] && [ "$KEEP" = 0 ]; then rm -rf "$OUT"; else log "logs in $OUT"; fi
[ "$failed" = 0 ] || { log "$failed run(s) failed"; exit 1; }
