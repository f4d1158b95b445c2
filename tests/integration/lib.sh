# Shared helpers for the integration tests (sourced). They start nfs3d and
# other servers only in network/mount namespaces the test creates, and stop
# only the PIDs they started.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
LAB=${NFS_LAB:-$(cd "$REPO/.." && pwd)/shared/lab/nfs-lab}
PIDS=()
WORK=""

log() { echo "[$(date +%T)] ${TEST_NAME:-test}: $*" >&2; }
fail() { log "FAIL: $*"; exit 1; }

make_work() {
  WORK=$(mktemp -d "/tmp/nfs3d-${TEST_NAME:-test}.XXXXXX")
  chmod 755 "$WORK"
}

stop_started() {
  local pid
  for pid in "${PIDS[@]}"; do
    if kill -0 "$pid" 2>/dev/null; then
      kill -TERM "$pid" 2>/dev/null || true
      timeout 10 tail --pid="$pid" -f /dev/null 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
    fi
  done
  PIDS=()
}

# wait_for CMD...: retries CMD for up to 10 s.
wait_for() {
  local i
  for i in $(seq 1 100); do
    "$@" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  return 1
}

# write_conf FILE KEY=VALUE...: an nfs3d.conf for tests. Sizes are chosen so
# that each transport's values are recognisable in /proc/mounts.
write_conf() {
  local file=$1 exports=$2 state=$3 portmapper=${4:-auto}
  cat > "$file" <<CONF
[nfsd]
listen = 0.0.0.0
port = 2049
mountd_port = 20048
threads = 4
portmapper = $portmapper

[tcp]
rsize_max = 262144
rsize_pref = 262144
wsize_max = 262144
wsize_pref = 262144

[udp]
rsize_max = 16384
rsize_pref = 16384
wsize_max = 16384
wsize_pref = 16384

[paths]
state_dir = $state
exports = $exports

[log]
level = info
CONF
}

# enter_private_namespaces "$0" ARGS...: re-executes the calling script in a new
# network namespace (only lo, brought up) and a private mount namespace with a
# tmpfs on /run, so rpcbind sockets never meet anybody else's.
enter_private_namespaces() {
  if [ "${NFS3D_IN_NS:-}" != 1 ]; then
    exec env NFS3D_IN_NS=1 unshare --net --mount --propagation private "$@"
  fi
  ip link set lo up
  mount -t tmpfs tmpfs /run
  mkdir -p /run/rpcbind
}

# Tests with nfs3d on the loopback of their own namespaces (after
# enter_private_namespaces): WORK with state/ and export/, exported to
# 127.0.0.1, removed with whatever the test started when it exits.
make_loopback_export() {
  trap 'stop_started; [ -n "$WORK" ] && rm -rf "$WORK"' EXIT
  make_work
  mkdir -p "$WORK/export" "$WORK/state"
  echo "$WORK/export 127.0.0.1(rw,insecure,no_root_squash)" > "$WORK/exports"
}

# Lab tests (../shared/lab): `trap lab_cleanup EXIT` stops what the test
# started, takes the lab down and removes WORK and DATA.
DATA=""
lab_cleanup() {
  stop_started
  "$LAB" down >/dev/null 2>&1 || true
  if [ -n "$WORK" ]; then rm -rf "$WORK"; fi
  if [ -n "$DATA" ]; then rm -rf "$DATA"; fi
}

# lab_nic_stalled LOG: true if the guest kernel log in LOG shows its virtio
# NIC's transmit queue timing out (NETDEV WATCHDOG). That is QEMU (TCG) not
# servicing the guest's NIC on a starved host; no server behaviour causes it.
lab_nic_stalled() { grep -q "NETDEV WATCHDOG" "$1"; }

# lab_boot_starved LOG: true if the guest kernel panicked at boot because
# its timer check failed ("IO-APIC + timer doesn't work"): the emulated
# 8254 timer did not tick in time for the check, QEMU (TCG) being starved
# (seen with 5.10 on this host with three VMs and builds on 2 cores). The
# server was never reached.
lab_boot_starved() { grep -q "IO-APIC + timer doesn't work" "$1"; }

# lab_gss_starved LOG: true if a sec=krb5* mount failed because the guest's
# kernel had no GSS context ("requires stronger authentication": its
# rpc.gssd upcall timed out on a starved host, seen once with two lab VMs
# and builds at load 8 on 2 cores). A server that refuses contexts fails
# the retry as well, so the test still catches it.
lab_gss_starved() {
  grep -q "MOUNT FAILED" "$1" && grep -q "requires stronger authentication" "$1"
}

# lab_note_kernel LOG: logs (once per test) the line in LOG, a mount-run's
# output, where nfs-lab names the kernel the guest booted; bench/kernels.sh
# shows it.
LAB_KERNEL_NOTED=0
lab_note_kernel() {
  local line
  [ "$LAB_KERNEL_NOTED" = 0 ] || return 0
  line=$(grep -m1 "^nfs-lab: guest: kernel" "$1" 2>/dev/null) || return 0
  LAB_KERNEL_NOTED=1
  log "${line%%, mount *}"
}

# lab_mount_run LOG ARGS...: `$LAB mount-run ARGS` with its output in LOG. If
# it failed because the guest was starved (lab_nic_stalled,
# lab_gss_starved, lab_boot_starved), it says so and runs once more
# (after the function named by LAB_RETRY_RESET, if set); the first output is
# kept in LOG.stalled. Any other failure is returned as it is.
lab_mount_run() {
  local log_file=$1 rc=0
  shift
  "$LAB" mount-run "$@" > "$log_file" 2>&1 || rc=$?
  if [ $rc -ne 0 ] && { lab_nic_stalled "$log_file" || lab_gss_starved "$log_file" \
                          || lab_boot_starved "$log_file"; }; then
    log "the guest was starved (its NIC stalled, its rpc.gssd upcall timed out, or its boot-time timer check failed: QEMU starved on this host, not a server fault); running again once"
    mv "$log_file" "$log_file.stalled"
    if [ -n "${LAB_RETRY_RESET:-}" ]; then "$LAB_RETRY_RESET"; fi
    rc=0
    "$LAB" mount-run "$@" > "$log_file" 2>&1 || rc=$?
  fi
  lab_note_kernel "$log_file"
  return $rc
}

# The guest kernel of the lab tests: NFS_LAB_KERNEL (6.1, 5.10 or 6.12), read
# by nfs-lab itself; 6.1 when unset.
lab_kernel() { echo "${NFS_LAB_KERNEL:-6.1}"; }

# lab_kernel_has_udp WHAT: true if the guest kernel's NFS client speaks UDP
# (only the lab's 6.1 has UDP-enabled modules; Debian builds 5.10 and 6.12
# with CONFIG_NFS_DISABLE_UDP_SUPPORT). If not, it says loudly that WHAT is
# skipped and why, so a TCP-only run never passes in silence.
lab_kernel_has_udp() {
  [ "$(lab_kernel)" = 6.1 ] && return 0
  log "SKIPPED: $1 over UDP: guest kernel $(lab_kernel) has no NFS over UDP" \
    "(CONFIG_NFS_DISABLE_UDP_SUPPORT; only the lab's 6.1 modules have it)"
  return 1
}

# make_lab_export: WORK with state/ and export/, exported to the lab subnet.
make_lab_export() {
  make_work
  mkdir -p "$WORK/export" "$WORK/state"
  echo "$WORK/export 10.200.0.0/24(rw,no_root_squash,insecure)" > "$WORK/exports"
}

# lab_start_nfs3d NFS3D PROG VERS: brings the lab up with nfs3d's own
# portmapper (no rpcbind), starts nfs3d with $WORK/nfs3d.conf (log in
# $WORK/nfs3d.log) and waits until it serves program PROG version VERS.
lab_start_nfs3d() {
  "$LAB" up --no-rpcbind >/dev/null
  "$LAB" exec -- "$1" --config "$WORK/nfs3d.conf" --foreground 2> "$WORK/nfs3d.log" &
  PIDS+=($!)
  wait_for "$LAB" exec -- rpcinfo -T tcp 127.0.0.1 "$2" "$3" \
    || { cat "$WORK/nfs3d.log" >&2; fail "nfs3d did not come up serving program $2 v$3"; }
}

# make_lab_data: DATA for the guest to read; not under /tmp, which is a tmpfs
# in the guest.
make_lab_data() {
  DATA=$(mktemp -d "/var/tmp/nfs3d-$TEST_NAME-data.XXXXXX")
  chmod 755 "$DATA"
}

# CephFS in the lab: lab_start_ceph starts the project's one-node cluster
# (tests/fixtures/ceph-cluster.sh) in $WORK/ceph inside the lab namespace (the lab
# must be up; its arguments go to the fixture's start); lab_stop_ceph stops it, for a cleanup trap; ceph_conf_section
# CONF [DIR] appends the [ceph] section that points nfs3d at it (or at the
# cluster in DIR).
lab_start_ceph() {
  "$LAB" exec -- "$REPO/tests/fixtures/ceph-cluster.sh" start "$WORK/ceph" "$@" >/dev/null \
    || fail "the Ceph cluster did not start in the lab namespace"
  log "Ceph cluster up in the lab namespace"
}
lab_stop_ceph() {
  [ -z "$WORK" ] || "$LAB" exec -- "$REPO/tests/fixtures/ceph-cluster.sh" stop "$WORK/ceph" >/dev/null 2>&1 || true
}
ceph_conf_section() {
  local dir=${2:-$WORK/ceph}
  cat >> "$1" <<CONF

[ceph]
conf = $dir/ceph.conf
keyring = $dir/keyring
client_id = admin
fs_name = cephfs
CONF
}

# lab_takeover N: $NFS3D --takeover on $WORK/nfs3d.conf in the lab namespace,
# its log in $WORK/nfs3d-ho-N.log; waits until the old process ($NFS3D_PID)
# exited and the successor serves, which is then $NFS3D_PID.
lab_takeover() {
  local old=$NFS3D_PID hlog="$WORK/nfs3d-ho-$1.log"
  "$LAB" exec -- "$NFS3D" --config "$WORK/nfs3d.conf" --foreground --takeover 2> "$hlog" &
  NFS3D_PID=$!
  PIDS+=("$NFS3D_PID")
  timeout 60 tail --pid="$old" -f /dev/null || fail "handover $1: the old nfs3d did not exit"
  for _ in $(seq 1 100); do grep -q "serving NFSv3" "$hlog" && break; sleep 0.1; done
  grep -q "serving NFSv3" "$hlog" || { cat "$hlog" >&2; fail "handover $1: the successor does not serve"; }
}
