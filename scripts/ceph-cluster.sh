#!/bin/bash
# A one-node Ceph cluster for tests and benchmarks, from Debian's packages
# (ceph-mon ceph-osd ceph-mds ceph-common): one monitor on 127.0.0.1 (or
# --addr), one OSD
# keeping its objects in memory (memstore), one MDS, cephx on, no manager.
# Everything lives in one private directory; nothing touches /etc/ceph.
#
#   ceph-cluster.sh start DIR [--port N] [--addr IP] [--netns NAME]
#       Creates DIR, starts the daemons (inside network namespace NAME with
#       `ip netns exec` when given; or run the whole script under
#       `nfs-lab exec --`) on address IP (default 127.0.0.1; e.g. a bridge
#       that other namespaces reach), makes a file system "cephfs" and waits
#       until its MDS is up:active. Writes DIR/ceph.conf, DIR/keyring (client.admin)
#       and DIR/<daemon>.pid. Prints the ceph.conf path.
#   ceph-cluster.sh stop DIR
#       SIGTERM to the PIDs in DIR/*.pid, waits for them to exit (SIGKILL
#       after 15 s: the test cluster's data is in memory anyway), then
#       removes DIR.
#   ceph-cluster.sh kill-daemon DIR mon|osd|mds / restart-daemon DIR mon|osd|mds
#       Stops one daemon (waiting for its exit) / starts it again: for fault
#       tests.
#   ceph-cluster.sh pause-daemon DIR mon|osd|mds / resume-daemon DIR mon|osd|mds
#       SIGSTOP / SIGCONT to one daemon: it stays up but stops answering, as
#       a hung or overloaded daemon does (fault tests).
#
# Clients use: ceph -c DIR/ceph.conf -k DIR/keyring -n client.admin ...
set -euo pipefail

die() { echo "ceph-cluster: $*" >&2; exit 1; }

free_port() {  # ADDR
  python3 -c 'import socket,sys; s=socket.socket(); s.bind((sys.argv[1],0)); print(s.getsockname()[1])' "$1"
}

ceph_cli() { $NS ceph -c "$DIR/ceph.conf" -k "$DIR/keyring" -n client.admin --connect-timeout 20 "$@"; }

# Waits until the command succeeds, at most $1 seconds.
wait_for() {
  local limit=$1; shift
  local until=$((SECONDS + limit))
  until "$@" >/dev/null 2>&1; do
    [ $SECONDS -lt $until ] || return 1
    sleep 0.5
  done
}

# Starts daemon $1 (mon|osd|mds) in the background and records its PID.
start_daemon() {
  local kind=$1 cmd
  case $kind in
    mon) cmd=(ceph-mon -i a) ;;
    osd) cmd=(ceph-osd -i 0) ;;
    mds) cmd=(ceph-mds -i a) ;;
  esac
  # Debian's daemons use glibc malloc, whose defaults map and unmap each
  # large buffer: memstore's OSD then spends its time in page faults on
  # fresh memory (up to 3x slower on 1 MiB writes here), so the cluster, not
  # the NFS server in front of it, is what a benchmark would measure.
  $NS env GLIBC_TUNABLES=glibc.malloc.mmap_threshold=8388608:glibc.malloc.trim_threshold=268435456 \
    "${cmd[@]}" -c "$DIR/ceph.conf" -f >"$DIR/log/$kind.out" 2>&1 &
  echo $! >"$DIR/$kind.pid"
}

stop_pid() {
  local pid=$1
  kill -CONT "$pid" 2>/dev/null || true  # a paused daemon would not see the TERM
  kill -TERM "$pid" 2>/dev/null || return 0
  local until=$((SECONDS + 15))
  while kill -0 "$pid" 2>/dev/null; do
    if [ $SECONDS -ge $until ]; then kill -KILL "$pid" 2>/dev/null || true; fi
    sleep 0.2
  done
}

stop_daemon() {
  local f="$DIR/$1.pid"
  [ -f "$f" ] || return 0
  stop_pid "$(cat "$f")"
  rm -f "$f"
}

# Sends signal $1 to daemon $2.
signal_daemon() {
  local f="$DIR/$2.pid"
  [ -f "$f" ] || die "no $2 running in $DIR"
  kill -"$1" "$(cat "$f")"
}

mds_active() { ceph_cli mds stat 2>/dev/null | grep -q 'up:active'; }

cmd_start() {
  local port="" netns="" addr=127.0.0.1
  while [ $# -gt 0 ]; do
    case $1 in
      --port) port=$2; shift 2 ;;
      --addr) addr=$2; shift 2 ;;
      --netns) netns=$2; shift 2 ;;
      *) die "unknown option $1" ;;
    esac
  done
  NS=""
  [ -z "$netns" ] || NS="ip netns exec $netns"
  [ -n "$port" ] || port=$($NS bash -c "$(declare -f free_port); free_port $addr")
  [ ! -e "$DIR/pids" ] || die "$DIR already holds a cluster"
  mkdir -p "$DIR"/{mon,osd,mds,log,run}
  echo "$netns" >"$DIR/netns"
  local fsid
  fsid=$(cat /proc/sys/kernel/random/uuid)
  cat >"$DIR/ceph.conf" <<EOF
[global]
fsid = $fsid
mon host = v2:$addr:$port
public addr = $addr
ms bind ipv6 = false
ms bind msgr1 = false
auth cluster required = cephx
auth service required = cephx
auth client required = cephx
keyring = $DIR/keyring
log file = $DIR/log/\$name.log
admin socket = $DIR/run/\$name.asok
pid file = $DIR/run/\$name.pid
run dir = $DIR/run
osd pool default size = 1
osd pool default min size = 1
osd pool default pg autoscale mode = off
mon allow pool size one = true
mon data avail warn = 2
mon data avail crit = 1
auth allow insecure global id reclaim = false
mon allow pool delete = true
mon warn on pool no redundancy = false
osd crush chooseleaf type = 0
[mon]
mon data = $DIR/mon/\$id
mon initial members = a
mon cluster log file = $DIR/log/cluster.log
[mon.a]
public addr = $addr:$port
[osd]
osd objectstore = memstore
memstore device bytes = 4294967296
osd data = $DIR/osd/\$id
keyring = $DIR/osd/\$id/keyring
osd max object name len = 256
osd max object namespace len = 64
[mds]
mds data = $DIR/mds/\$id
keyring = $DIR/mds/\$id/keyring
EOF
  # Keys: mon. and client.admin in one keyring the monitor starts from.
  ceph-authtool --create-keyring "$DIR/keyring" --gen-key -n mon. --cap mon 'allow *' >/dev/null
  ceph-authtool "$DIR/keyring" --gen-key -n client.admin --cap mon 'allow *' \
    --cap osd 'allow *' --cap mds 'allow *' --cap mgr 'allow *' >/dev/null
  monmaptool --create --clobber --fsid "$fsid" --addv a "[v2:$addr:$port]" \
    "$DIR/monmap" >/dev/null
  ceph-mon -c "$DIR/ceph.conf" --mkfs -i a --monmap "$DIR/monmap" --keyring "$DIR/keyring" \
    >"$DIR/log/mon-mkfs.out" 2>&1 || die "ceph-mon --mkfs failed (see $DIR/log)"
  start_daemon mon
  wait_for 30 ceph_cli mon stat || die "monitor on $addr:$port did not answer (see $DIR/log)"

  # OSD 0: register it, make its key and its in-memory store.
  local osd_uuid
  osd_uuid=$(cat /proc/sys/kernel/random/uuid)
  mkdir -p "$DIR/osd/0" "$DIR/mds/a"
  ceph_cli osd new "$osd_uuid" 0 >/dev/null
  ceph_cli auth get-or-create osd.0 mon 'allow profile osd' osd 'allow *' mgr 'allow profile osd' \
    -o "$DIR/osd/0/keyring" >/dev/null
  ceph-osd -c "$DIR/ceph.conf" -i 0 --mkfs --osd-uuid "$osd_uuid" \
    >"$DIR/log/osd-mkfs.out" 2>&1 || die "ceph-osd --mkfs failed (see $DIR/log)"
  start_daemon osd

  ceph_cli auth get-or-create mds.a mon 'allow profile mds' osd 'allow *' mds 'allow *' \
    mgr 'allow profile mds' -o "$DIR/mds/a/keyring" >/dev/null
  start_daemon mds

  ceph_cli osd pool create cephfs_metadata 8 8 >/dev/null 2>&1 || die "osd pool create cephfs_metadata 8 8 failed"
  ceph_cli osd pool create cephfs_data 16 16 >/dev/null 2>&1 || die "osd pool create cephfs_data 16 16 failed"
  ceph_cli fs new cephfs cephfs_metadata cephfs_data >/dev/null 2>&1 || die "fs new cephfs cephfs_metadata cephfs_data failed"
  wait_for 60 mds_active || die "MDS did not become active (see $DIR/log)"
  touch "$DIR/pids"
  echo "$DIR/ceph.conf"
}

cmd_stop() {
  [ -d "$DIR" ] || return 0
  # All at once: each takes seconds to exit on SIGTERM.
  local pids=()
  for kind in mds osd mon; do
    [ -f "$DIR/$kind.pid" ] && pids+=("$(cat "$DIR/$kind.pid")")
  done
  for pid in "${pids[@]}"; do stop_pid "$pid" & done
  wait
  rm -rf "$DIR"
}

load_ns() {
  NS=""
  local netns=""
  [ ! -f "$DIR/netns" ] || netns=$(cat "$DIR/netns")
  [ -z "$netns" ] || NS="ip netns exec $netns"
}

[ $# -ge 2 ] || die "usage: $0 start|stop|kill-daemon|restart-daemon|pause-daemon|resume-daemon DIR ..."
verb=$1
DIR=$(realpath -m "$2")
shift 2
case $verb in
  start) cmd_start "$@" ;;
  stop) cmd_stop ;;
  kill-daemon) load_ns; stop_daemon "$1" ;;
  restart-daemon) load_ns; [ -f "$DIR/$1.pid" ] || start_daemon "$1" ;;
  pause-daemon) signal_daemon STOP "$1" ;;
  resume-daemon) signal_daemon CONT "$1" ;;
  *) die "unknown command $verb" ;;
esac
