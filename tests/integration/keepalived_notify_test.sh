#!/bin/bash
# conf/keepalived-notify applies a head's VRRP transitions in the order
# keepalived made them (docs/multi-head.md, "Failover with keepalived"): the
# transitions are fed as keepalived 2.2.7 does with vrrp_notify_fifo (lines in
# a FIFO, read by one run of the script), with a start command that takes a
# second, so that later transitions arrive while it runs. Per sequence: the
# head ends in the state of the last transition, and the starts and stops
# run in the order of the transitions, none left out.
# Also: two heads' transitions interleaved, other instances' lines ignored,
# and keepalived's exit (SIGTERM to the script, then the STOP lines).
# The start and stop commands only append to a log: no VM, no nfs3d.
#   keepalived_notify_test.sh [NOTIFY_SCRIPT]
# NOTIFY_FORM=line feeds the transitions as keepalived does with a `notify`
# line per instance instead (one script per transition, not waited for),
# which the script cannot keep in order: it shows the bug this test is for.
set -euo pipefail
export TEST_NAME=keepalived_notify
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
NOTIFY=${1:-$REPO/conf/keepalived-notify}
FORM=${NOTIFY_FORM:-fifo}
[ -x "$NOTIFY" ] || fail "no notify script at $NOTIFY"
make_work
trap 'rm -rf "$WORK"' EXIT

# setup NAME: a fresh machine: lock dir, log and settings. A head runs while
# $M/NODE.running exists; $M/actions lists the starts and stops in order.
setup() {
  M=$WORK/$1
  mkdir -p "$M"
  cat > "$M/notify.conf" <<EOF
LOG_FILE=$M/notify.log
HOST_LABEL=$1
LOCK_DIR=$M/run
START_COMMAND='sleep 1; echo "start \$NODE" >> "$M/actions"; touch "$M/\$NODE.running"'
STOP_COMMAND='echo "stop \$NODE" >> "$M/actions"; rm -f "$M/\$NODE.running"'
EOF
  : > "$M/actions"
}

# feed LINE...: keepalived's notify lines (INSTANCE "NAME" STATE PRIORITY),
# in order, then keepalived exits; returns when the script is done.
feed() {
  local line pids=() word
  if [ "$FORM" = line ]; then
    for line in "$@"; do
      read -r -a word <<< "$line"
      [ "${word[0]}" = INSTANCE ] || continue
      word[1]=${word[1]//\"/}
      "$NOTIFY" --conf "$M/notify.conf" "${word[1]#nfs3d_}" "${word[@]}" &
      pids+=($!)
    done
    wait "${pids[@]}"
    return
  fi
  mkfifo "$M/notify.fifo"
  "$NOTIFY" --conf "$M/notify.conf" --fifo "$M/notify.fifo" &
  local reader=$!
  exec 6> "$M/notify.fifo"
  for line in "$@"; do
    if [ "$line" = SIGTERM ]; then kill -TERM "$reader"; sleep 0.2; continue; fi
    echo "$line" >&6
  done
  exec 6>&-
  wait "$reader" || fail "the notify script failed ($?)"
}

# expect NODE STATE...: after these transitions of NODE, it runs if the last
# is MASTER, and it was started and stopped in the transitions' order (a
# FAULT after a BACKUP stops nothing more).
expect() {
  local node=$1 last=${*: -1} s want="" prev="" got
  shift
  for s in "$@"; do
    if [ "$s" = MASTER ]; then s="start $node"; else s="stop $node"; fi
    [ "$s" = "$prev" ] || want+="$s,"
    prev=$s
  done
  got=$(grep " $node\$" "$M/actions" | tr '\n' , || true)
  if [ "$last" = MASTER ]; then
    [ -e "$M/$node.running" ] || fail "$node ended stopped after $* (actions: $got)"
  else
    [ ! -e "$M/$node.running" ] || fail "$node ended running after $* (actions: $got)"
  fi
  [ "$got" = "$want" ] || fail "$node: after $* the actions were $got, not $want"
  log "$node: $* -> ${got%,} ($FORM form)"
}

line() { echo "INSTANCE \"nfs3d_$1\" $2 100"; }
lines() {
  local node=$1 s
  shift
  for s in "$@"; do line "$node" "$s"; done
}
run() {
  local name=$1 node=$2 out=()
  shift 2
  setup "$name"
  mapfile -t out < <(lines "$node" "$@")
  feed "${out[@]}"
  expect "$node" "$@"
}

# Machine 3's head1 in the lab run: MASTER then BACKUP within a second.
run master-backup head1 BACKUP MASTER BACKUP
run backup-master head1 BACKUP MASTER
run burst head1 BACKUP MASTER BACKUP MASTER BACKUP MASTER BACKUP FAULT MASTER BACKUP
run burst-master head1 MASTER BACKUP MASTER BACKUP MASTER

# Two heads interleaved, beside another instance's lines, a sync group's
# and a state the script does not act on: each head in its own order.
setup two-heads
feed "$(line head1 MASTER)" "$(line head2 MASTER)" 'INSTANCE "VI_1" MASTER 100' \
  'GROUP "g1" BACKUP' "$(line head1 BACKUP)" "$(line head2 MASTER_RX_LOWER_PRI)" \
  "$(line head2 BACKUP)" "$(line head1 MASTER)" "$(line head2 MASTER)"
expect head1 MASTER BACKUP MASTER
expect head2 MASTER BACKUP MASTER
! grep -q "VI_1\|g1" "$M/actions" || fail "acted on another instance's line"

# keepalived exits: SIGTERM to the script first, then every instance's STOP.
if [ "$FORM" = fifo ]; then
  setup exit
  feed "$(line head1 BACKUP)" "$(line head1 MASTER)" SIGTERM "$(line head1 STOP)"
  expect head1 BACKUP MASTER STOP
fi
log "PASS: transitions applied in keepalived's order ($FORM form)"
