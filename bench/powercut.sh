#!/bin/bash
# The power-cut matrix (a benchmark, not a test; docs/durability.md): nfs3d
# runs inside a lab VM on a virtio disk image (../shared/lab, README "Disks
# and power cuts"), exporting a sub-directory of an ext4 or XFS file system
# made on the host; nfs3powercut in the lab namespace writes and journals
# what the server acknowledged, and the VM is killed (kill -9 of QEMU) at a
# seeded moment, CUTS times per file system. After each cut the VM boots on
# the same image, nfs3d starts, and the checker compares the server with the
# journal; the next writer then runs on the same boot. Workloads take turns:
# FILE_SYNC writes, UNSTABLE writes + COMMIT, namespace changes (create,
# exclusive create, rename, link, chmod, remove), and all three mixed. The
# checker also sends namespace calls again with their xid, as a client that
# never saw the reply does, and a table shows the answers.
# --fs cephfs (or --cephfs) cuts an NFS head serving a CephFS export
# (cephfs=/pc) instead: the project's one-node cluster
# (tests/fixtures/ceph-cluster.sh) runs beside the VM in the lab namespace
# and keeps running; the VM's disk holds only nfs3d's state directory. After
# the cut the head must end its dead session (docs/multi-head.md) and serve
# what it acknowledged from the cluster.
#   bench/powercut.sh [--cuts N] [--seed S] [--fs ext4,xfs,cephfs] [--cephfs]
#                     [--workloads filesync,unstable,meta,mixed] [--kernel V]
#                     [--takeover] [--nfs3d BIN] [--nfs3powercut BIN] [--keep]
#                     [--cephfs-tool BIN]
# --takeover: the guest hands nfs3d over to a new process (nfs3d --takeover)
# every 0.1 to 1 s throughout, so cuts fall into handovers; the writer must
# not notice them (a call that fails before the cut fails the run).
# Prints a table per file system and workload: cuts, bytes verified, stable
# bytes lost (must be 0), namespace changes verified and lost (must be 0),
# verifier changes seen, UNSTABLE bytes not committed (and how many the
# server still had), the slowest recovery (VM start to nfs3d's first NFS
# answer) and the slowest check (from that answer: the check reads every
# file, so a file the dead head's CephFS session still held would show
# here). Exit status 1 if anything acknowledged was lost. Needs root and
# the lab; one VM at a time (it takes the lab lock, NFS_LAB_LOCK).
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
TEST_NAME=powercut
source "$REPO/tests/integration/lib.sh"
source "$REPO/tests/integration/powercut_lib.sh"
CUTS=50
SEED=1
FSES=ext4,xfs
WORKLOADS=filesync,unstable,meta,mixed
KEEP=0
TAKEOVER=0
BOOT_ARGS=()
NFS3D=$REPO/build/daemon/nfs3d
NFS3POWERCUT=$REPO/build/tools/nfs3powercut/nfs3powercut
CEPHFS_TOOL=$REPO/build/tests/vfs/cephfs_lab_tool
while [ $# -gt 0 ]; do
  case $1 in
    --cuts) CUTS=$2; shift 2 ;;
    --seed) SEED=$2; shift 2 ;;
    --fs) FSES=$2; shift 2 ;;
    --cephfs) FSES=cephfs; shift ;;
    --cephfs-tool) CEPHFS_TOOL=$2; shift 2 ;;
    --workloads) WORKLOADS=$2; shift 2 ;;
    --kernel) BOOT_ARGS=(--kernel "$2"); shift 2 ;;
    --takeover) TAKEOVER=1; shift ;;
    --nfs3d) NFS3D=$2; shift 2 ;;
    --nfs3powercut) NFS3POWERCUT=$2; shift 2 ;;
    --keep) KEEP=1; shift ;;
    *) echo "usage: see the head of $0" >&2; exit 2 ;;
  esac
done
[ -x "$NFS3D" ] && [ -x "$NFS3POWERCUT" ] || fail "build nfs3d and nfs3powercut first"
command -v mkfs.xfs > /dev/null || ! grep -q xfs <<< "$FSES" \
  || fail "mkfs.xfs missing (apt-get install xfsprogs)"
CEPH_BESIDE=0
if grep -q cephfs <<< "$FSES"; then
  CEPH_BESIDE=1
  [ -x "$CEPHFS_TOOL" ] && [ -f "$(dirname "$NFS3D")/../plugins/backend-cephfs.so" ] \
    || fail "build the CephFS plugin and cephfs_lab_tool first (NFS3D_CEPHFS=ON)"
fi
export NFS_LAB_NS=${NFS_LAB_NS:-nfs3d-pc} NFS_LAB_TAP=${NFS_LAB_TAP:-nfs3dpc0}
PC_QEMU_PIDFILE=/run/nfs-lab/$NFS_LAB_NS/qemu.pid
exec 8> "${NFS_LAB_LOCK:-$(cd "$REPO/.." && pwd)/.lab.lock}"
flock 8

OUT=$(mktemp -d /var/tmp/nfs3d-powercut.XXXXXX)
chmod 755 "$OUT"
WORK=$OUT  # lib.sh's Ceph helpers keep the cluster in $WORK/ceph
# The logs stay when anything failed, a setup step included (a boot that
# never served removed them before: LOSS was still 0).
cleanup() {
  local status=$?
  pc_cut
  [ "$CEPH_BESIDE" = 0 ] || lab_stop_ceph
  "$LAB" down > /dev/null 2>&1 || true
  if [ "$KEEP" = 0 ] && [ "${LOSS:-1}" = 0 ] && [ "$status" = 0 ]; then rm -rf "$OUT"; else log "logs in $OUT"; fi
}
trap cleanup EXIT
cp "$NFS3POWERCUT" "$OUT/nfs3powercut"
NFS3POWERCUT=$OUT/nfs3powercut
"$LAB" up --no-rpcbind > /dev/null
if [ "$CEPH_BESIDE" = 1 ]; then
  # On the lab namespace's address, which the guest reaches (its server).
  lab_start_ceph --addr 10.200.0.1
  "$LAB" exec -- "$CEPHFS_TOOL" "$OUT/ceph" mkdir /pc 0777 > /dev/null || fail "mkdir /pc in CephFS"
fi
IFS=, read -r -a workloads <<< "$WORKLOADS"
RESULTS=$OUT/cuts.tsv  # fs workload seed delay_ms recovery_ms status CHECK-LINE check_ms
: > "$RESULTS"
LOSS=0
RANDOM=$SEED

# run_fs FS: CUTS cuts on a fresh image of FS.
run_fs() {
  local fs=$1 img=$OUT/$1.img i
  if [ "$fs" = cephfs ]; then pc_setup "$OUT" "$NFS3D" "$OUT/ceph"; else pc_setup "$OUT" "$NFS3D"; fi
  [ "$TAKEOVER" = 0 ] || pc_takeover_loop > "$OUT/guest-loop.sh"
  pc_make_image "$img" "$fs"
  pc_boot "$img" "$OUT/$fs.boot0.log" "${BOOT_ARGS[@]}"
  for i in $(seq 1 "$CUTS"); do
    local w=${workloads[$(((i - 1) % ${#workloads[@]}))]} seed=$((SEED * 100000 + i))
    local delay=$((500 + RANDOM % 8000)) j=$OUT/$fs.$i.journal status=0 start check_ms
    pc_write "$j" "c$i" "$seed" "$w" "$delay"
    pc_boot "$img" "$OUT/$fs.boot$i.log" "${BOOT_ARGS[@]}"
    start=$(date +%s%N)
    pc_check "$j" "$j.check" || status=$?
    check_ms=$((($(date +%s%N) - start) / 1000000))
    [ "$status" = 0 ] || LOSS=1
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$fs" "$w" "$seed" "$delay" "$PC_RECOVERY_MS" "$status" \
      "$(cat "$j.check")" "$check_ms" >> "$RESULTS"
    log "$fs cut $i/$CUTS ($w, seed $seed, after ${delay} ms): recovery ${PC_RECOVERY_MS} ms, check ${check_ms} ms, status $status: $(cat "$j.check")"
    [ "$status" = 0 ] || sed 's/^/    /' "$j.check.err" >&2
  done
  pc_cut
}

IFS=, read -r -a fses <<< "$FSES"
for fs in "${fses[@]}"; do run_fs "$fs"; done

echo
echo "power-cut matrix: $CUTS cuts per file system, seed $SEED, $(uname -r) host, guest kernel ${BOOT_ARGS[1]:-6.1}$([ "$TAKEOVER" = 0 ] || echo ", nfs3d --takeover every 0.1-1 s")"
awk -F'\t' '
  function add(k, kv) {
    cuts[k]++; if ($6 != 0) failed[k]++
    bytes[k] += kv["bytes_verified"]; lost[k] += kv["stable_bytes_lost"]
    ns[k] += kv["namespace_changes"]; nslost[k] += kv["namespace_lost"]
    verf[k] += kv["verifier_changes"]; unc[k] += kv["uncommitted_bytes"]
    uncp[k] += kv["uncommitted_present"]; stale[k] += kv["handles_stale"]
    hand[k] += kv["handles_checked"]
    if ($5 > slow[k]) slow[k] = $5
    if ($8 > slowcheck[k]) slowcheck[k] = $8
  }
  {
    split("", kv); n = split($7, a, " ")
    for (i = 1; i <= n; i++) { split(a[i], p, "="); kv[p[1]] = p[2] + 0 }
    if (!($1 in fsseen)) { fsseen[$1] = 1; fs[nfs++] = $1 }
    if (!($2 in wseen)) { wseen[$2] = 1; wl[nwl++] = $2 }
    add($1 SUBSEP $2, kv); add($1 SUBSEP "all", kv)
    for (i = 1; i <= n; i++) if (a[i] ~ /^resent_/) {
      split(a[i], p, "="); k = $1 " " substr(p[1], 8) " " p[2]
      if (!(k in resent)) order[nres++] = k
      resent[k]++ }
  }
  END {
    wl[nwl++] = "all"
    printf "%-6s %-9s %5s %14s %12s %10s %8s %14s %6s %22s %11s %9s\n", "fs", "workload", "cuts",
      "bytes verif.", "stable lost", "ns changes", "ns lost", "handles/stale", "verf", "uncommitted/present",
      "slowest ms", "check ms"
    for (f = 0; f < nfs; f++) for (w = 0; w < nwl; w++) { k = fs[f] SUBSEP wl[w]
      if (!(k in cuts)) continue
      printf "%-6s %-9s %5d %14d %12d %10d %8d %14s %6d %22s %11d %9d\n", fs[f], wl[w], cuts[k], bytes[k],
        lost[k], ns[k], nslost[k], hand[k] "/" stale[k], verf[k],
        unc[k] "/" uncp[k], slow[k], slowcheck[k]
      if (failed[k]) printf "      %d check(s) failed\n", failed[k] }
    if (nres) {
      print "calls sent again after the cut with their xid (inflight_: the call in flight at the cut):"
      printf "%-6s %-18s %-16s %6s\n", "fs", "call", "answer", "times"
      for (i = 0; i < nres; i++) { split(order[i], p, " ")
        printf "%-6s %-18s %-16s %6d\n", p[1], p[2], p[3], resent[order[i]] }
    }
  }' "$RESULTS"
if [ "$TAKEOVER" = 1 ]; then
  echo "handovers started in the guests: $(cat "$OUT"/*.out/takeover.log 2>/dev/null | grep -c ' takeover$' || true)," \
    "done: $(cat "$OUT"/*.out/takeover.log 2>/dev/null | grep -c ' takeover done$' || true)," \
    "failed: $(cat "$OUT"/*.out/takeover.log 2>/dev/null | grep -c ' takeover failed$' || true);" \
    "boots cut while a handover ran: $(for f in "$OUT"/*.out/takeover.log; do tail -1 "$f"; done 2>/dev/null \
      | grep -c ' takeover$' || true)"
fi
if [ "$CEPH_BESIDE" = 1 ]; then
  # Every boot after a cut must have ended the dead head's sessions (its own
  # and the export's mount): docs/multi-head.md.
  echo "CephFS sessions of the dead head ended at start: $(cat "$OUT"/cephfs.boot*.log.out/nfs3d.log \
    2>/dev/null | grep -c 'ended the session of the previous instance' || true) in $CUTS boots after a cut;" \
    "addresses the MDS blocklisted: $("$LAB" exec -- ceph -c "$OUT/ceph/ceph.conf" -k "$OUT/ceph/keyring" \
      -n client.admin --connect-timeout 20 osd blocklist ls 2>/dev/null | grep -c '^10\.200\.0\.2:' || true)"
  # nfs3d's own start in each boot after a cut (ending the sessions
  # included): its first log line to "serving", from the guest's logs.
  for f in "$OUT"/cephfs.boot*.log.out/nfs3d.log; do
    [ "$f" = "$OUT/cephfs.boot0.log.out/nfs3d.log" ] || cat "$f"
  done 2>/dev/null | awk '
    function ms(t, a) { split(t, a, ":"); return ((a[1] * 60 + a[2]) * 60 + a[3]) * 1000 }
    / starting: / { s = ms($2) }
    /serving NFSv3/ && s { d = ms($2) - s; s = 0; n++
      if (!min || d < min) min = d; if (d > max) max = d }
    END { if (n) printf "nfs3d start to serving after a cut: %d to %d ms (%d boots)\n", min, max, n }'
fi
[ "$LOSS" = 0 ] || { echo "acknowledged data or namespace changes were LOST (logs in $OUT)"; exit 1; }
