# Power cuts of a lab VM that runs nfs3d on a virtio disk (sourced after
# lib.sh; used by lab_powercut_test.sh and bench/powercut.sh). The guest
# mounts the image, starts nfs3d from a --pre-mount script, mounts its own
# export (mount-run wants a mount) and sleeps; nfs3powercut in the lab
# namespace is the client. A cut is kill -9 of QEMU: the image keeps what
# the guest had written to it (cache=none), nothing of its page cache.
#
# Everything the guest reads lives in PC_DIR (under /var/tmp: the guest's
# /tmp is its own), including a copy of nfs3d, so the checkout may be
# anywhere.
#
# With a CephFS export (pc_setup's CEPH_DIR) the disk holds only nfs3d's
# state directory, as an NFS head's own disk does; the files are in the
# one-node cluster running beside the VM in the lab namespace, reached from
# the guest at the server address, which the cut does not touch.

PC_POSIX_EXPORT=/srv/pc/export/sub  # a sub-directory export, as sites have
PC_CEPH_EXPORT=/ceph/pc             # the CephFS export's name; its directory is /pc
PC_EXPORT=$PC_POSIX_EXPORT          # the one pc_setup chose
PC_GUEST=${NFS_LAB_GUEST_IP:-10.200.0.2}
PC_RUN_PID=""
PC_QEMU_PIDFILE=/run/nfs-lab/${NFS_LAB_NS:-nfslab}/qemu.pid

# pc_setup DIR NFS3D [CEPH_DIR]: the guest's files in DIR (made by the
# caller, not under /tmp): nfs3d, its configuration and exports, the
# pre-mount script. With CEPH_DIR (a cluster of tests/fixtures/ceph-cluster.sh
# whose directory /pc exists) the export is PC_CEPH_EXPORT, cephfs=/pc,
# served by a copy of the CephFS plugin. Sets PC_EXPORT.
pc_setup() {
  PC_DIR=$1 PC_EXPORT=$PC_POSIX_EXPORT
  local ceph_dir=${3:-} local_dir=$PC_POSIX_EXPORT
  cp "$2" "$PC_DIR/nfs3d"
  if [ -n "$ceph_dir" ]; then
    PC_EXPORT=$PC_CEPH_EXPORT local_dir=""
    echo "$PC_EXPORT 10.200.0.0/24(rw,no_root_squash,insecure,cephfs=/pc)" > "$PC_DIR/exports"
  else
    echo "$PC_EXPORT 10.200.0.0/24(rw,no_root_squash,insecure)" > "$PC_DIR/exports"
  fi
  write_conf "$PC_DIR/nfs3d.conf" "$PC_DIR/exports" /srv/pc/state auto
  if [ -n "$ceph_dir" ]; then
    # The copy of nfs3d looks for plugins where they are installed.
    mkdir -p "$PC_DIR/plugins"
    cp "$(dirname "$2")/../plugins/backend-cephfs.so" "$PC_DIR/plugins/"
    sed -i "s|^\[paths\]\$|[paths]\nplugin_dir = $PC_DIR/plugins|" "$PC_DIR/nfs3d.conf"
    ceph_conf_section "$PC_DIR/nfs3d.conf" "$ceph_dir"
  fi
  cat > "$PC_DIR/pre-mount.sh" <<GUEST
modprobe virtio_blk
for i in \$(seq 1 100); do [ -b /dev/vda ] && break; sleep 0.1; done
mkdir -p /srv/pc
mount /dev/vda /srv/pc
mkdir -p $local_dir /srv/pc/state
chmod 755 /srv/pc/state
sync
setsid $PC_DIR/nfs3d --config $PC_DIR/nfs3d.conf --foreground \
  >> /lab/out/nfs3d.log 2>&1 < /dev/null &
for i in \$(seq 1 1000); do
  if rpcinfo -n 2049 -t 127.0.0.1 100003 3 > /dev/null 2>&1; then
    [ ! -f $PC_DIR/guest-loop.sh ] || setsid bash $PC_DIR/guest-loop.sh < /dev/null > /dev/null 2>&1 &
    exit 0
  fi
  sleep 0.1
done
echo "nfs3d did not come up in the guest"; cat /lab/out/nfs3d.log; exit 1
GUEST
}

# pc_takeover_loop: a guest script (PC_DIR/guest-loop.sh, which the guest
# starts once nfs3d answers, if it exists) that hands nfs3d over to a new
# process (nfs3d --takeover, docs/handover.md) again and again, 0.1 to 1 s
# apart, so that a cut at any moment is likely to fall into a handover.
# A handover that fails is logged in the guest's takeover.log (the running
# nfs3d serves on).
pc_takeover_loop() {
  cat <<GUEST
while :; do
  sleep 0.\$((RANDOM % 10))
  echo "\$(date +%T.%N) takeover" >> /lab/out/takeover.log
  if $PC_DIR/nfs3d --config $PC_DIR/nfs3d.conf --takeover >> /lab/out/takeover.log 2>&1; then
    echo "\$(date +%T.%N) takeover done" >> /lab/out/takeover.log
  else
    echo "\$(date +%T.%N) takeover failed" >> /lab/out/takeover.log
  fi
done
GUEST
}

# pc_make_image IMG ext4|xfs|cephfs: a fresh 1 GiB file system, made on the
# host (for cephfs, the head's own disk: ext4, for its state directory).
pc_make_image() {
  rm -f "$1"
  truncate -s 1G "$1"
  case "$2" in
    ext4|cephfs) mkfs.ext4 -q -F "$1" ;;
    xfs) mkfs.xfs -q -f "$1" ;;
    *) fail "unknown file system $2" ;;
  esac
}

# pc_boot IMG LOG [MOUNT-RUN ARGS...]: boots the VM on IMG in the
# background and waits until nfs3d in it answers an NFS NULL call; sets
# PC_RECOVERY_MS (from starting the VM to that answer). A guest kernel that
# panics while booting (its timer check fails when QEMU is starved, seen at
# host load 15) is booted once more, its log kept as LOG.panic. Fails if
# nfs3d never answers.
pc_boot() {
  local img=$1 log_file=$2 attempt
  shift 2
  for attempt in 1 2; do
    pc_boot_once "$img" "$log_file" "$@" && return 0
    pc_cut
    [ "$attempt" = 1 ] && grep -q "Kernel panic" "$log_file" || break
    log "the guest kernel panicked while booting (QEMU starved: no server fault); booting again"
    mv "$log_file" "$log_file.panic"
  done
  cat "$log_file" >&2
  fail "nfs3d in the guest never answered (log $log_file)"
}

# pc_boot_once IMG LOG [MOUNT-RUN ARGS...]: pc_boot's one attempt; false if
# the VM ended before nfs3d answered, or nfs3d did not answer in 6 min.
pc_boot_once() {
  local img=$1 log_file=$2 start i
  shift 2
  start=$(date +%s%N)
  "$LAB" mount-run --disk "$img" --pre-mount "$PC_DIR/pre-mount.sh" --server "$PC_GUEST" \
    --export "$PC_EXPORT" --port 2049 --mountport 20048 --timeout 900 --mount-timeout 300 \
    --out-dir "$log_file.out" \
    "$@" -- 'sleep 100000' > "$log_file" 2>&1 &
  PC_RUN_PID=$!
  for i in $(seq 1 1800); do
    if "$LAB" exec -- rpcinfo -n 2049 -t "$PC_GUEST" 100003 3 > /dev/null 2>&1; then
      PC_RECOVERY_MS=$((($(date +%s%N) - start) / 1000000))
      return 0
    fi
    kill -0 "$PC_RUN_PID" 2>/dev/null || return 1
    sleep 0.2
  done
  return 1
}

# pc_cut: the power cut (kill -9 of QEMU); waits for mount-run to end.
pc_cut() {
  local qpid
  qpid=$(cat "$PC_QEMU_PIDFILE" 2>/dev/null || true)
  [ -z "$qpid" ] || kill -KILL "$qpid" 2>/dev/null || true
  [ -z "$PC_RUN_PID" ] || wait "$PC_RUN_PID" 2>/dev/null || true
  PC_RUN_PID=""
}

# pc_write JOURNAL DIR SEED WORKLOAD DELAY_MS: runs the writer and cuts the
# power DELAY_MS after it is ready (has its files); leaves the VM dead.
pc_write() {
  local journal=$1 dir=$2 seed=$3 workload=$4 delay_ms=$5 wpid i
  "$LAB" exec -- "$NFS3POWERCUT" write "$PC_GUEST:$PC_EXPORT" --port 2049 --mount-port 20048 \
    --journal "$journal" --dir "$dir" --seed "$seed" --workload "$workload" --time 600 \
    2> "$journal.log" &
  wpid=$!
  for i in $(seq 1 600); do
    grep -qx ready "$journal" 2>/dev/null && break
    kill -0 "$wpid" 2>/dev/null || break
    sleep 0.1
  done
  grep -qx ready "$journal" 2>/dev/null || { pc_cut; cat "$journal.log" >&2; fail "the writer never got ready"; }
  sleep "$((delay_ms / 1000)).$(printf %03d $((delay_ms % 1000)))"
  kill -0 "$wpid" 2>/dev/null || { pc_cut; cat "$journal.log" >&2; fail "the writer stopped before the cut"; }
  pc_cut
  # The writer waits for a reply that never comes; its journal is complete
  # (a call in flight is a "begin" line), so it is stopped at once.
  kill -TERM "$wpid" 2>/dev/null || true
  local rc=0
  wait "$wpid" || rc=$?
  [ $rc -eq 0 ] || [ $rc -eq 143 ] || { cat "$journal.log" >&2; fail "the writer failed (status $rc)"; }
}

# pc_check JOURNAL OUT: checks the journal against the server (booted
# again); the report line goes to OUT. Returns the checker's status.
pc_check() {
  "$LAB" exec -- "$NFS3POWERCUT" check "$PC_GUEST:$PC_EXPORT" --port 2049 --mount-port 20048 \
    --journal "$1" --wait 60 > "$2" 2> "$2.err"
}
