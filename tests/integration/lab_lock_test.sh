#!/bin/bash
# File locking with the real Linux kernel client (../shared/lab), mounted with
# the default "lock" option so the guest's lockd talks NLM to nfs3d (the lab
# starts rpcbind and rpc.statd in the guest). nfs3d serves its own portmapper
# in the lab namespace, so nothing touches the host's rpcbind.
#   1. over TCP and UDP: flock(1) and fcntl (python3) locks from two processes
#      block and release correctly, a blocked lock is granted promptly when
#      released (GRANTED callback, not the client's 30 s poll), byte ranges
#      and shared/exclusive modes behave, sqlite3 runs write transactions
#      (also two writers at once).
#   2. against another host (nlm_lock_tool, an NLM client in the lab
#      namespace): its lock refuses the guest's; the guest's blocking request
#      waits on the server and is granted by a GRANTED callback soon after
#      the other host unlocks (processes of one client never reach that path:
#      the client kernel arbitrates them first).
#   3. processes on the server: the guest's lock refuses a local fcntl lock on
#      the exported file until the guest unlocks, and a local lock refuses
#      the guest's (nfs3d mirrors NLM locks onto the files as OFD locks).
#   4. restart: nfs3d is restarted while a guest process holds a lock; nfs3d
#      tells the client (SM_NOTIFY), the client reclaims the lock in the grace
#      period, and the other host finds it held after the grace period.
#   5. handover, in section 4's VM session: nfs3d --takeover 10 times while
#      the guest still holds the lock and writes with fsync: after each the
#      other host is refused that lock and granted another at once (no grace
#      period), nothing is reclaimed, and every block written verifies.
# The guest kernel is NFS_LAB_KERNEL (6.1 by default); on a TCP-only kernel
# (5.10, 6.12) the UDP runs of sections 1 and 2 are skipped, and the test
# says so.
# Usage: lab_lock_test.sh NFS3D_BINARY [NLM_LOCK_TOOL]
TEST_NAME=lab_lock
source "$(dirname "$0")/lib.sh"

NFS3D=$1
[ -x "$NFS3D" ] || fail "no nfs3d binary at $NFS3D"
TOOL=${2:-$(dirname "$NFS3D")/../tests/nlm/nlm_lock_tool}
[ -x "$TOOL" ] || fail "no nlm_lock_tool at $TOOL"
export NFS_LAB_NS=${NFS_LAB_NS:-nfs3d-nlm} NFS_LAB_TAP=${NFS_LAB_TAP:-nfs3dnlm0}
GRACE=20
PY=/usr/bin/python3
command -v sqlite3 > /dev/null || fail "sqlite3 is not installed (apt-get install sqlite3)"
[ -x "$PY" ] || fail "no $PY"

trap lab_cleanup EXIT
make_lab_export
chmod 777 "$WORK/export"
write_conf "$WORK/nfs3d.conf" "$WORK/exports" "$WORK/state" on
printf '\n[nlm]\ngrace_period = %d\n' "$GRACE" >> "$WORK/nfs3d.conf"

"$LAB" up --no-rpcbind >/dev/null

NFS3D_PID=""
start_nfs3d() {
  local log=$1
  "$LAB" exec -- "$NFS3D" --config "$WORK/nfs3d.conf" --foreground 2> "$log" &
  NFS3D_PID=$!
  PIDS+=("$NFS3D_PID")
  wait_for "$LAB" exec -- rpcinfo -T tcp 127.0.0.1 100021 4 \
    || { cat "$log" >&2; fail "nfs3d did not come up with NLM"; }
}

tool() {  # tool NAME OP [--wait-grace]: the other host's lock on export/NAME
  "$LAB" exec -- "$TOOL" 10.200.0.1 "$WORK/export" "$@"
}

guest_made() {  # NAME PID: waits until the guest run PID made export/NAME (or ended)
  for i in $(seq 1 600); do
    [ -e "$WORK/export/$1" ] && return 0
    kill -0 "$2" 2>/dev/null || break
    sleep 0.5
  done
  [ -e "$WORK/export/$1" ]
}
stop_nfs3d() {
  kill -TERM "$NFS3D_PID"
  timeout 20 tail --pid="$NFS3D_PID" -f /dev/null || fail "nfs3d did not stop"
}

# ---------------------------------------------------------------- guest code --
# The guest has its own /tmp, so its scripts carry their python helpers.
embed() {  # embed FILE: shell lines that recreate FILE as /tmp/NAME in the guest
  echo "cat > /tmp/$(basename "$1") <<'PYEOF'"
  cat "$1"
  echo "PYEOF"
}

cat > "$WORK/locks.py" <<'EOF'
# fcntl byte-range locks from two processes of one client.
import errno, fcntl, os, sys, time

path = sys.argv[1]
fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)

def child(fn):
    pid = os.fork()
    if pid == 0:
        cfd = os.open(path, os.O_RDWR)
        try:
            os._exit(fn(cfd))
        except Exception as e:
            print("child error:", e, flush=True)
            os._exit(99)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)

def try_lock(mode, length, start):
    def fn(cfd):
        try:
            fcntl.lockf(cfd, mode | fcntl.LOCK_NB, length, start)
            return 0
        except OSError as e:
            return 1 if e.errno in (errno.EAGAIN, errno.EACCES) else 98
    return child(fn)

def check(what, got, want):
    if got != want:
        print("LOCKTEST FAIL: %s: got %s, want %s" % (what, got, want), flush=True)
        sys.exit(1)
    print("LOCKTEST OK: " + what, flush=True)

fcntl.lockf(fd, fcntl.LOCK_EX, 100, 0)  # bytes 0..99
check("exclusive 0-99 refuses exclusive 10-59", try_lock(fcntl.LOCK_EX, 50, 10), 1)
check("exclusive 0-99 refuses shared 99", try_lock(fcntl.LOCK_SH, 1, 99), 1)
check("exclusive 0-99 allows exclusive 100-299", try_lock(fcntl.LOCK_EX, 200, 100), 0)
fcntl.lockf(fd, fcntl.LOCK_SH, 100, 0)  # downgrade
check("after downgrade: shared 0-9 allowed", try_lock(fcntl.LOCK_SH, 10, 0), 0)
check("after downgrade: exclusive 0-9 refused", try_lock(fcntl.LOCK_EX, 10, 0), 1)
fcntl.lockf(fd, fcntl.LOCK_UN, 50, 25)  # split: 0-24 and 75-99 stay
check("hole 25-74 after unlock is free", try_lock(fcntl.LOCK_EX, 50, 25), 0)
check("split piece 75-99 still held", try_lock(fcntl.LOCK_EX, 1, 80), 1)
fcntl.lockf(fd, fcntl.LOCK_EX, 0, 0)  # upgrade to the whole file

# A blocked lock is granted when released.
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    os.close(r)
    cfd = os.open(path, os.O_RDWR)
    t0 = time.monotonic()
    fcntl.lockf(cfd, fcntl.LOCK_EX, 0, 0)  # blocks
    os.write(w, ("%.2f" % (time.monotonic() - t0)).encode())
    os._exit(0)
os.close(w)
time.sleep(3)
fcntl.lockf(fd, fcntl.LOCK_UN, 0, 0)
waited = float(os.read(r, 100).decode())
os.waitpid(pid, 0)
print("LOCKTEST blocked fcntl lock waited %.2f s" % waited, flush=True)
check("blocked fcntl lock granted 3-12 s later", 2.5 <= waited <= 12, True)
EOF

{ echo "PY=$PY"; embed "$WORK/locks.py"; } > "$WORK/guest_locks.sh"
cat >> "$WORK/guest_locks.sh" <<'EOF'
cd "$MNT"
ok() { echo "LOCKTEST OK: $*"; }
bad() { echo "LOCKTEST FAIL: $*"; exit 1; }

# flock(1): the Linux client turns flock() into whole-file NLM locks.
touch f1
flock -x f1 -c 'sleep 4' &
holder=$!
sleep 1.5
if flock -n -x f1 true; then bad "flock -n got a lock another process holds"; fi
ok "flock -n refused while another process holds the lock"
t0=$(date +%s.%N)
flock -x f1 true
t1=$(date +%s.%N)
wait $holder
waited=$(awk "BEGIN { printf \"%.2f\", $t1 - $t0 }")
echo "LOCKTEST blocked flock waited $waited s"
awk "BEGIN { exit !($waited >= 1.5 && $waited <= 12) }" || bad "blocked flock waited $waited s"
ok "blocked flock granted when released"
flock -s f1 -c 'flock -s -n f1 true' || bad "two shared flocks"
ok "shared flocks coexist"

$PY /tmp/locks.py "$MNT/f2"

sqlite3 "$MNT/test.db" "create table t(x integer);
  begin immediate; insert into t values(1); insert into t values(2); commit;"
[ "$(sqlite3 "$MNT/test.db" 'select count(*) from t;')" = 2 ] || bad "sqlite count"
ok "sqlite3 write transaction"
writers=()
for w in 1 2; do
  ( for i in $(seq 1 15); do
      sqlite3 -cmd ".timeout 20000" "$MNT/test.db" \
        "begin immediate; insert into t values($w$i); commit;" || exit 1
    done ) &
  writers+=($!)
done
wait "${writers[0]}" || bad "sqlite writer 1"
wait "${writers[1]}" || bad "sqlite writer 2"
n=$(sqlite3 "$MNT/test.db" 'select count(*) from t;')
[ "$n" = 32 ] || bad "sqlite: $n rows after two concurrent writers, want 32"
sqlite3 "$MNT/test.db" 'pragma integrity_check;' | grep -qx ok || bad "sqlite integrity"
ok "sqlite3 two concurrent writers, 32 rows, integrity ok"
echo "LOCKTEST DONE"
EOF

cat > "$WORK/trylock.py" <<'EOF'
# trylock.py PATH [sh]: an exclusive (or shared) lock on all of PATH without
# waiting. Exit 0: granted, 1: refused (someone holds it), 2: other error.
import errno, fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
mode = fcntl.LOCK_SH if sys.argv[2:] == ["sh"] else fcntl.LOCK_EX
try:
    fcntl.lockf(fd, mode | fcntl.LOCK_NB, 0, 0)
except OSError as e:
    sys.exit(1 if e.errno in (errno.EAGAIN, errno.EACCES) else 2)
EOF

cp "$REPO/tests/integration/guest_lock_holder.py" "$WORK/holder.py"

{ echo "PY=$PY"; embed "$WORK/trylock.py"; } > "$WORK/guest_cross.sh"
cat >> "$WORK/guest_cross.sh" <<'EOF'
cd "$MNT"
ok() { echo "LOCKTEST OK: $*"; }
bad() { echo "LOCKTEST FAIL: $*"; exit 1; }
rc=0
$PY /tmp/trylock.py "$MNT/x" sh || rc=$?
[ "$rc" = 1 ] || bad "lock held by another host not refused (status $rc)"
ok "lock held by another host refuses the guest"
# "waiting" is made just before the lock call (not before Python starts:
# under TCG the interpreter's start took 2.5 s of the host's 4 s once).
waited=$($PY -c '
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR)
open(sys.argv[2], "w").close()
t0 = time.monotonic()
fcntl.lockf(fd, fcntl.LOCK_EX, 0, 0)
print("%.2f" % (time.monotonic() - t0))
' "$MNT/x" "$MNT/waiting")
echo "LOCKTEST blocked lock behind another host waited $waited s"
awk "BEGIN { exit !($waited >= 2 && $waited <= 20) }" || bad "waited $waited s"
ok "blocked lock granted by callback after the other host unlocked"
echo "LOCKTEST DONE"
EOF

# Section 3, guest side: holds srv until the host has checked it, then
# tries srv2 while a host process holds it.
{ echo "PY=$PY"; embed "$WORK/trylock.py"; } > "$WORK/guest_local.sh"
cat >> "$WORK/guest_local.sh" <<'EOF'
cd "$MNT"
ok() { echo "LOCKTEST OK: $*"; }
bad() { echo "LOCKTEST FAIL: $*"; exit 1; }
wait_file() { for i in $(seq 1 240); do [ -e "$1" ] && return 0; sleep 0.5; done; return 1; }
$PY -c '
import fcntl, os, sys, time
fd = os.open("srv", os.O_RDWR)
fcntl.lockf(fd, fcntl.LOCK_EX, 0, 0)
open("srv-held", "w").close()
for i in range(240):
    if os.path.exists("srv-checked"):
        break
    time.sleep(0.5)
fcntl.lockf(fd, fcntl.LOCK_UN, 0, 0)
open("srv-released", "w").close()
' || bad "guest could not lock srv"
ok "guest held srv while the host checked it"
wait_file local-held || bad "the host never locked srv2"
rc=0
$PY /tmp/trylock.py srv2 || rc=$?
touch local-checked
[ "$rc" = 1 ] || bad "a lock held by a process on the server did not refuse the guest (status $rc)"
ok "a lock held by a process on the server refuses the guest"
echo "LOCKTEST DONE"
EOF

{ echo "PY=$PY"; embed "$WORK/holder.py"; embed "$WORK/trylock.py"; } > "$WORK/guest_restart.sh"
cat >> "$WORK/guest_restart.sh" <<'EOF'
cd "$MNT"
ok() { echo "LOCKTEST OK: $*"; }
bad() { echo "LOCKTEST FAIL: $*"; exit 1; }
trylock() { $PY /tmp/trylock.py "$1"; }  # 0: got it, 1: refused
$PY /tmp/holder.py "$MNT/held" "$MNT/holder-ready" &
holder=$!
# The host restarts nfs3d once it sees holder-ready, then creates "restarted".
for i in $(seq 1 240); do
  [ -e "$MNT/restarted" ] && break
  sleep 0.5
done
[ -e "$MNT/restarted" ] || bad "the host never restarted nfs3d"
ok "server restarted while the lock was held"
t0=$(date +%s)
rc=0; trylock "$MNT/held" || rc=$?
t1=$(date +%s)
echo "LOCKTEST second process after restart: status $rc after $((t1 - t0)) s"
[ "$rc" = 1 ] || bad "after the restart another process got the lock (status $rc): not reclaimed"
ok "reclaimed lock still refuses another process"
for i in $(seq 1 240); do
  [ -e "$MNT/checked" ] && break
  sleep 0.5
done
[ -e "$MNT/checked" ] || bad "the host never checked the lock"
# Section 5: the lock stays held while the host hands nfs3d over 10 times
# (nfs3d --takeover); meanwhile this writes with fsync, then checks every
# block.
$PY -c '
import os, sys
path, done = sys.argv[1], sys.argv[2]
fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o666)
n = 0
while not os.path.exists(done) and n < 100000:
    os.write(fd, (b"%08d" % n) * 512)  # 4 KiB blocks, each naming its number
    os.fsync(fd)
    n += 1
os.close(fd)
data = open(path, "rb").read()
for i in range(n):
    if data[i * 4096:(i + 1) * 4096] != (b"%08d" % i) * 512:
        print("LOCKTEST FAIL: block %d of %d differs" % (i, n), flush=True)
        sys.exit(1)
print("LOCKTEST OK: %d blocks written with fsync across the handovers verify" % n, flush=True)
' "$MNT/ho-data" "$MNT/ho-done" || bad "writer across the handovers"
touch /tmp/release
wait $holder
trylock "$MNT/held" || bad "lock not free after the holder released it"
ok "lock free after release"
echo "LOCKTEST DONE"
EOF

# ------------------------------------------------------------------ runs --
start_nfs3d "$WORK/nfs3d.log"
"$LAB" exec -- rpcinfo -p 127.0.0.1 >&2

for proto in tcp udp; do
  [ "$proto" = tcp ] || lab_kernel_has_udp "locks (section 1)" || continue
  log "locks over $proto"
  out="$WORK/locks-$proto.log"
  "$LAB" mount-run --export "$WORK/export" --proto "$proto" --opts lock --cmd-timeout 300 \
      --script "$WORK/guest_locks.sh" > "$out" 2>&1 \
    || { cat "$out" >&2; tail -50 "$WORK/nfs3d.log" >&2; fail "lock test over $proto"; }
  lab_note_kernel "$out"
  grep "LOCKTEST" "$out" | sed "s/^/[$proto] /" >&2
  grep -q "LOCKTEST DONE" "$out" || { cat "$out" >&2; fail "lock test over $proto incomplete"; }
  rm -f "$WORK/export/f1" "$WORK/export/f2" "$WORK/export/test.db"*
  log "PASS: locks over $proto"
done

log "cross-host locks"
for proto in tcp udp; do
  [ "$proto" = tcp ] || lab_kernel_has_udp "cross-host locks (section 2)" || continue
  out="$WORK/cross-$proto.log"
  rm -f "$WORK/export/waiting"
  touch "$WORK/export/x"
  chmod 666 "$WORK/export/x"
  tool x lock >&2 || fail "the other host could not lock x"
  "$LAB" mount-run --export "$WORK/export" --proto "$proto" --opts lock,actimeo=1 \
      --cmd-timeout 300 --script "$WORK/guest_cross.sh" > "$out" 2>&1 &
  run_pid=$!
  guest_made waiting "$run_pid" || { cat "$out" >&2; fail "cross-host guest did not get to wait"; }
  sleep 4
  tool x unlock >&2 || fail "the other host could not unlock x"
  rc=0
  wait "$run_pid" || rc=$?
  grep "LOCKTEST" "$out" | sed "s/^/[cross $proto] /" >&2
  [ "$rc" = 0 ] && grep -q "LOCKTEST DONE" "$out" \
    || { cat "$out" >&2; tail -30 "$WORK/nfs3d.log" >&2; fail "cross-host test over $proto"; }
  grep -q "GRANTED callback to nfs-lab-guest delivered" "$WORK/nfs3d.log" \
    || fail "no GRANTED callback delivered over $proto"
  log "PASS: cross-host locks over $proto"
done

log "locks of processes on the server"
hostlock() { "$PY" "$WORK/trylock.py" "$WORK/export/$1"; }  # a local process; 0: got it
out="$WORK/local.log"
rm -f "$WORK/export/"{srv-held,srv-checked,srv-released,local-held,local-checked}
touch "$WORK/export/srv" "$WORK/export/srv2"
chmod 666 "$WORK/export/srv" "$WORK/export/srv2"
"$LAB" mount-run --export "$WORK/export" --proto tcp --opts lock,actimeo=1 --cmd-timeout 300 \
    --script "$WORK/guest_local.sh" > "$out" 2>&1 &
run_pid=$!
guest_made srv-held "$run_pid" || { cat "$out" >&2; fail "the guest never locked srv"; }
rc=0; hostlock srv || rc=$?
touch "$WORK/export/srv-checked"
[ "$rc" = 1 ] || { cat "$out" >&2; fail "the guest's lock did not refuse a local process (status $rc)"; }
for i in $(seq 1 120); do [ -e "$WORK/export/srv-released" ] && break; sleep 0.5; done
hostlock srv || fail "srv still locked locally after the guest unlocked"
"$PY" -c '
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR)
fcntl.lockf(fd, fcntl.LOCK_EX, 0, 0)
open(sys.argv[2], "w").close()
for i in range(240):
    if os.path.exists(sys.argv[3]):
        break
    time.sleep(0.5)
' "$WORK/export/srv2" "$WORK/export/local-held" "$WORK/export/local-checked" &
local_pid=$!
PIDS+=("$local_pid")
rc=0
wait "$run_pid" || rc=$?
wait "$local_pid" || true
grep "LOCKTEST" "$out" | sed "s/^/[local] /" >&2
[ "$rc" = 0 ] && grep -q "LOCKTEST DONE" "$out" \
  || { cat "$out" >&2; tail -30 "$WORK/nfs3d.log" >&2; fail "server-process lock test (status $rc)"; }
log "PASS: NLM locks and locks of processes on the server exclude each other"

log "restart with a lock held (grace period $GRACE s)"
out="$WORK/restart.log"
rm -f "$WORK/export/holder-ready" "$WORK/export/restarted"
"$LAB" mount-run --export "$WORK/export" --proto tcp --opts lock,actimeo=1 --cmd-timeout 300 \
    --script "$WORK/guest_restart.sh" > "$out" 2>&1 &
run_pid=$!
guest_made holder-ready "$run_pid" || { cat "$out" >&2; fail "the guest never took the lock"; }
stop_nfs3d
log "nfs3d stopped; starting it again"
start_nfs3d "$WORK/nfs3d-2.log"
touch "$WORK/export/restarted"
rc=0
tool held test --wait-grace >&2 || rc=$?
[ "$rc" = 1 ] || { cat "$out" >&2; fail "after the restart the other host found the lock free (status $rc)"; }
log "after the grace period the other host finds the reclaimed lock held"
rm -f "$WORK/export/ho-done"
touch "$WORK/export/ho-other"
chmod 666 "$WORK/export/ho-other"
touch "$WORK/export/checked"
log "10 handovers (nfs3d --takeover) with the lock held and fsync writes running"
for i in $(seq 1 10); do
  hlog="$WORK/nfs3d-ho-$i.log"
  lab_takeover "$i"
  grep -q "lock manager: took over [1-9]" "$hlog" || { cat "$hlog" >&2; fail "handover $i: no locks"; }
  rc=0; tool held test >&2 || rc=$?
  [ "$rc" = 1 ] || fail "handover $i: the other host found the guest's lock free (status $rc)"
  tool ho-other lock >&2 || fail "handover $i: a new lock was not granted at once (grace?)"
  tool ho-other unlock >&2 || fail "handover $i: unlock"
done
touch "$WORK/export/ho-done"
if cat "$WORK"/nfs3d-ho-*.log | grep -E "reclaimed a lock|to reclaim its locks|grace period"; then
  fail "a handover made the client reclaim"
fi
rc=0
wait "$run_pid" || rc=$?
grep "LOCKTEST" "$out" | sed "s/^/[restart] /" >&2
grep -E "lock manager|status monitor" "$WORK/nfs3d-2.log" >&2 || true
[ "$rc" = 0 ] && grep -q "LOCKTEST DONE" "$out" \
  || { cat "$out" >&2; cat "$WORK/nfs3d-2.log" >&2; fail "restart test (status $rc)"; }
grep -q "to reclaim its locks" "$WORK/nfs3d-2.log" || fail "nfs3d did not notify the client"
grep -q "reclaimed a lock" "$WORK/nfs3d-2.log" || fail "the client did not reclaim"
log "PASS: lock reclaimed after restart"
grep -q "blocks written with fsync across the handovers verify" "$out" \
  || fail "no verified writes across the handovers"
log "PASS: 10 handovers: lock never lost nor reclaimed, writes verify, no grace period"

log "all passed"
