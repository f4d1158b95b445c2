# shellcheck shell=bash
# The multi-head lab (sourced after lib.sh; docs/multi-head.md, "Failover
# with keepalived"): N nfs3d heads over one CephFS under keepalived, as
# lab_heads_test.sh (three heads) and bench/chaos.sh's failover event (two)
# run them.
#  - each machine is a network namespace with a fixed address on a bridge
#    inside the lab namespace, which also holds the guest's tap and the
#    one-node Ceph cluster (on the bridge address);
#  - each machine runs keepalived (the Debian package) in a mount namespace
#    of its own, with the shipped notify script (conf/keepalived-notify)
#    reading its notify FIFO: one VRRP instance per head (nfs3d_headN), the
#    head's own machine with the highest priority, the next machine second;
#    whichever machine is MASTER for head N runs head N's instance; the
#    notify script's start and stop commands run nfs3d directly here (no
#    systemd), with that machine's own state directory.
# Before heads_init: NFS3D (the binary), WORK (with WORK/exports), the lab
# up (`$LAB up --no-rpcbind`). HEADS_DIR (default WORK) holds each machine's
# directory (hdM: configs, state, keepalived's files, pid files) and the
# logs (notify.log, headN.log); HEADS_GRACE is the heads' NLM grace period
# (default 10 s).

# heads_init N: the names of N machines and heads. The machines' namespaces
# are named after the lab's, so a second lab has machines of its own.
heads_init() {
  HEADS_N=$1
  HEADS_DIR=${HEADS_DIR:-$WORK}
  HEADS_GRACE=${HEADS_GRACE:-10}
  NOTIFY=$REPO/conf/keepalived-notify
  BRIDGE_IP=10.200.0.1
  L=(ip -n "$NFS_LAB_NS")
  MACHINES=() FIXED=() FLOATS=()
  local m prefix=$NFS_LAB_NS
  [ "$NFS_LAB_NS" != nfs3d-heads ] || prefix=nfs3d
  for m in $(seq 1 "$HEADS_N"); do
    MACHINES+=("$prefix-hd$m")
    FIXED+=("10.200.0.1$m")
    FLOATS+=("10.200.0.2$m")
  done
}

# head_prio M N: machine M's VRRP priority for head N (from 0): 150 on the
# head's own machine, 100 on the next one (its survivor), then 50.
head_prio() { echo $((150 - 50 * (($1 - $2 + HEADS_N) % HEADS_N))); }

# machine_pids M: every process in machine M's network namespace.
machine_pids() { ip netns pids "${MACHINES[$1]}" 2>/dev/null || true; }
kill_machine() {
  local pids
  pids=$(machine_pids "$1")
  [ -z "$pids" ] || kill -KILL $pids 2>/dev/null || true
}

# heads_network_up: the guest's tap and one veth per machine on a bridge in
# the lab namespace (the bridge takes the tap's address).
heads_network_up() {
  local m
  "${L[@]}" link add br0 type bridge
  "${L[@]}" addr del "$BRIDGE_IP/24" dev "$NFS_LAB_TAP"
  "${L[@]}" link set "$NFS_LAB_TAP" master br0
  "${L[@]}" addr add "$BRIDGE_IP/24" dev br0
  "${L[@]}" link set br0 up
  for m in $(seq 0 $((HEADS_N - 1))); do machine_up "$m"; done
}

# machine_up M: machine M's network stack, a new one at every boot: its
# namespace and a veth on the bridge with its fixed address and a MAC address
# of its own, the same at every boot as a real NIC's. (With a new MAC, the
# other machines' unicast VRRP adverts would go to the old one until their
# ARP entries expire, and the returning machine, hearing nobody, would take
# over every head for a moment.)
machine_up() {
  local m=$1 ns=${MACHINES[$1]}
  ip netns add "$ns"
  ip -n "$ns" link set lo up
  "${L[@]}" link add "hd$m" address "02:6e:66:73:00:1$m" type veth peer name "hd${m}b"
  "${L[@]}" link set "hd$m" netns "$ns"
  "${L[@]}" link set "hd${m}b" master br0 up
  ip -n "$ns" addr add "${FIXED[$m]}/24" dev "hd$m"
  ip -n "$ns" link set "hd$m" up
}

# machine_crash M [fins]: machine M loses power: its NIC goes down, then
# every process of it is killed and its network stack goes away. A real
# power loss sends nothing, so the NIC goes first: the clients keep their
# connections and retransmit into them, which the survivor answers with a
# reset (its tickle). With "fins" the processes die first and their FINs
# reach the clients (a process crash a moment before the machine's): the
# clients' reconnections then wait out SYN retransmission backoff (1, 3, 7,
# 15, 31 s ...) until the address has moved. (A killed process's TCP sockets
# linger in the kernel; a machine that comes back must not find them: they
# would answer for the client's reconnections, whose source ports the Linux
# client reuses.)
machine_crash() {
  local m=$1
  [ "${2:-}" = fins ] || ip -n "${MACHINES[$m]}" link set "hd$m" down
  kill_machine "$m"
  ip -n "${MACHINES[$m]}" link del "hd$m"
  ip netns del "${MACHINES[$m]}"
}

# machine_reboot M: machine M comes back after machine_crash: a new network
# stack, its processes and its /run gone (pid files, the notify script's
# queues), keepalived started.
machine_reboot() {
  machine_up "$1"
  rm -f "$HEADS_DIR/hd$1/"*.pid "$HEADS_DIR/hd$1/run/"*
  start_keepalived "$1"
}

# heads_stop: for a cleanup trap: every machine's processes killed, its
# namespace removed.
heads_stop() {
  local m
  for m in $(seq 0 $((${HEADS_N:-0} - 1))); do
    kill_machine "$m"
    ip netns del "${MACHINES[$m]}" 2>/dev/null || true
  done
}

# head_conf M N DIR: machine M's configuration for head N (from 0), with
# state directory DIR.
head_conf() {
  local m=$1 n=$2 node=head$(($2 + 1)) dir="$HEADS_DIR/hd$1"
  local conf="$dir/$node.conf"
  mkdir -p "$dir/state-$node"
  write_conf "$conf" "$WORK/exports" "$dir/state-$node" on
  sed -i "s/^listen = .*/listen = ${FLOATS[$n]}/" "$conf"
  ceph_conf_section "$conf"
  # A rolling upgrade runs a copy of the binary, which looks for plugins
  # where they are installed, not in this build tree.
  sed -i "s|^\[paths\]$|[paths]\nplugin_dir = $(cd "$(dirname "$NFS3D")/../plugins" && pwd)|" "$conf"
  printf '\n[nlm]\ngrace_period = %d\n\n[cluster]\nnode_id = %s\nname = lab\nshared_dir = /.nfs3d\n' \
    "$HEADS_GRACE" "$node" >> "$conf"
}

# machine_setup M: the configs machine M needs to run any head (each with
# that machine's own state directory), its notify script settings (nfs3d
# started directly, pid file per head) and its keepalived.conf.
machine_setup() {
  local m=$1 dir="$HEADS_DIR/hd$1" n peers="" p
  mkdir -p "$dir/run"
  for n in $(seq 0 $((HEADS_N - 1))); do head_conf "$m" "$n"; done
  cat > "$dir/notify.conf" <<EOF
LOG_FILE=$HEADS_DIR/notify.log
HOST_LABEL=hd$((m + 1))
LOCK_DIR=$dir/run
START_COMMAND='setsid "$NFS3D" --config "$dir/\$NODE.conf" --foreground \
  >> "$HEADS_DIR/\$NODE.log" 2>&1 < /dev/null & echo \$! > "$dir/\$NODE.pid"'
STOP_COMMAND='pid=\$(cat "$dir/\$NODE.pid" 2>/dev/null) || exit 0; kill -KILL "\$pid" 2>/dev/null;
  while ps -o stat= -p "\$pid" | grep -qv Z; do sleep 0.05; done; rm -f "$dir/\$NODE.pid"'
EOF
  for p in $(seq 0 $((HEADS_N - 1))); do [ "$p" = "$m" ] || peers+="    ${FIXED[$p]}"$'\n'; done
  {
    # The shipped form (conf/keepalived.conf): every transition through one
    # FIFO, read by one run of the notify script, in keepalived's order.
    cat <<EOF
global_defs {
  router_id hd$m
  script_user root
  enable_script_security
  vrrp_notify_fifo $dir/run/notify.fifo
  vrrp_notify_fifo_script "$NOTIFY --conf $dir/notify.conf --fifo"
}
EOF
    for n in $(seq 0 $((HEADS_N - 1))); do
      cat <<EOF
vrrp_instance nfs3d_head$((n + 1)) {
  state BACKUP
  interface hd$m
  virtual_router_id $((51 + n))
  priority $(head_prio "$m" "$n")
  advert_int 1
  unicast_src_ip ${FIXED[$m]}
  unicast_peer {
$peers  }
  virtual_ipaddress {
    ${FLOATS[$n]}/24 dev hd$m
  }
}
EOF
    done
  } > "$dir/keepalived.conf"
  ip netns exec "${MACHINES[$m]}" keepalived -t -f "$dir/keepalived.conf" 2> "$dir/keepalived-check.log" \
    || { cat "$dir/keepalived-check.log" >&2; fail "keepalived refuses $dir/keepalived.conf"; }
}

# start_keepalived M: keepalived (VRRP only) on machine M, in a mount
# namespace with a /run of its own.
start_keepalived() {
  local m=$1 dir="$HEADS_DIR/hd$1"
  ip netns exec "${MACHINES[$m]}" unshare --mount --propagation private -- sh -c \
    'mount -t tmpfs tmpfs /run && exec keepalived -n -l -D -G -P -f "$1/keepalived.conf" \
       -p "$1/run/keepalived.pid" -r "$1/run/vrrp.pid"' sh "$dir" >> "$dir/keepalived.log" 2>&1 &
  PIDS+=($!)
  disown $!  # a machine crash kills it: no "Killed" notice from the shell
}

# heads_start: every machine set up and its keepalived started; waits until
# each head runs on its own machine.
heads_start() {
  local m
  for m in $(seq 0 $((HEADS_N - 1))); do machine_setup "$m"; done
  for m in $(seq 0 $((HEADS_N - 1))); do start_keepalived "$m"; done
  wait_until 60 home_placement || { heads_restart_exited && wait_until 60 home_placement; } \
    || { tail -30 "$HEADS_DIR/notify.log" >&2; fail "the heads did not come up on their own machines"; }
}
# heads_restart_exited: starts again each head whose instance on its own
# machine has exited, as systemd's Restart=on-failure does on a real
# machine (the notify script here runs nfs3d without systemd). Seen at the
# keepalived start on a loaded host: two machines MASTER for a head for a
# moment, the second copy fences the first (its CephFS mount is refused),
# then goes BACKUP and stops. True if it restarted any.
heads_restart_exited() {
  local m node any=1
  for m in $(seq 0 $((HEADS_N - 1))); do
    node=head$((m + 1))
    [ -e "$HEADS_DIR/hd$m/$node.pid" ] && ! head_pid "$m" "$node" >/dev/null || continue
    log "$node on ${MACHINES[$m]} exited: started again (as systemd would)"
    head_start "$m" "$node"
    any=0
  done
  return $any
}

# head_pid M NODE: the pid of machine M's instance of NODE, if it runs.
head_pid() {
  local pid
  pid=$(cat "$HEADS_DIR/hd$1/$2.pid" 2>/dev/null) || return 1
  kill -0 "$pid" 2>/dev/null || return 1
  echo "$pid"
}
# head_running_on M NODE: machine M runs NODE's instance and serves it.
head_running_on() {
  head_pid "$1" "$2" >/dev/null || return 1
  ip netns exec "${MACHINES[$1]}" rpcinfo -T tcp "${FLOATS[${2#head} - 1]}" 100003 3 >/dev/null 2>&1
}
head_stopped_on() { [ ! -e "$HEADS_DIR/hd$1/$2.pid" ]; }
# home_placement: every head runs on its own machine only.
home_placement() {
  local m n
  for m in $(seq 0 $((HEADS_N - 1))); do
    for n in $(seq 1 "$HEADS_N"); do
      if [ $((m + 1)) = "$n" ]; then head_running_on "$m" "head$n" || return 1
      else head_stopped_on "$m" "head$n" || return 1; fi
    done
  done
}

# wait_until SECONDS CMD...: retries CMD for up to SECONDS.
wait_until() {
  local limit=$1
  shift
  for _ in $(seq 1 $((limit * 5))); do
    "$@" && return 0
    sleep 0.2
  done
  return 1
}
# since T: seconds from T (date +%s.%N) to now.
since() { awk -v t="$1" -v now="$(date +%s.%N)" 'BEGIN { printf "%.1f", now - t }'; }

# head_start M NODE [ARGS...]: starts NODE's instance on machine M as the
# notify script's START_COMMAND does (ARGS added, e.g. --takeover), for a
# test that restarts or replaces a head behind keepalived's back.
head_start() {
  local m=$1 node=$2 dir="$HEADS_DIR/hd$1"
  shift 2
  ip netns exec "${MACHINES[$m]}" setsid "$NFS3D" --config "$dir/$node.conf" --foreground "$@" \
    >> "$HEADS_DIR/$node.log" 2>&1 < /dev/null &
  echo $! > "$dir/$node.pid"
  disown $!
}
# head_machine NODE: the machine that runs NODE's instance now.
head_machine() {
  local m
  for m in $(seq 0 $((HEADS_N - 1))); do
    ! head_pid "$m" "$1" >/dev/null || { echo "$m"; return 0; }
  done
  return 1
}
