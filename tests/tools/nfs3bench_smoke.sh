#!/bin/bash
# CI smoke test for nfs3bench: against nfs3d on loopback, in private network
# and mount namespaces. Checks the data on the server (size + md5 against
# `nfs3bench pattern`), a short sweep over UDP and TCP with every workload,
# CSV + plot, and the error paths: bad arguments, refused mount, nothing
# listening, and the server stopping mid-run (clear message, non-zero exit,
# no hang).
# Usage: nfs3bench_smoke.sh NFS3BENCH NFS3D
TEST_NAME=nfs3bench_smoke
source "$(dirname "$0")/../integration/lib.sh"
BENCH=$(readlink -f "$1")
NFS3D=$(readlink -f "$2")
enter_private_namespaces "$0" "$BENCH" "$NFS3D"

make_loopback_export
write_conf "$WORK/nfs3d.conf" "$WORK/exports" "$WORK/state" off
# READ data over TCP copied through user space for this loopback client
# ("auto"), so the verified TCP read-back below goes through pread + sendmsg;
# the other tests over 127.0.0.1 get the default, the splice.
sed -i 's/^\[tcp\]$/[tcp]\nsendfile = auto/' "$WORK/nfs3d.conf"
grep -q "^sendfile = auto" "$WORK/nfs3d.conf" || fail "could not set sendfile = auto"

start_server() {
  "$NFS3D" --config "$WORK/nfs3d.conf" --foreground 2>> "$WORK/nfs3d.log" &
  SERVER=$!
  PIDS+=($SERVER)
  wait_for "$BENCH" 127.0.0.1:"$WORK/export" --port 2049 --mount-port 20048 --workload getattr \
    --ops 1 --no-json || { cat "$WORK/nfs3d.log" >&2; fail "nfs3d not up"; }
}
start_server
T="127.0.0.1:$WORK/export"
P=(--port 2049 --mount-port 20048)

# 1. Data on the server matches what nfs3bench says it wrote.
want=$("$BENCH" pattern --size 8m --seed 5 | md5sum | cut -d' ' -f1)
for proto in udp tcp; do
  timeout 120 "$BENCH" "$T" "${P[@]}" --proto $proto --workload write,read --size 8m --seed 5 \
    --bs 32k --outstanding 4 --keep --dir smoke-$proto > "$WORK/run-$proto.out" \
    || { cat "$WORK/run-$proto.out"; fail "run over $proto"; }
  f="$WORK/export/smoke-$proto/data"
  [ "$(stat -c %s "$f")" = 8388608 ] || fail "$proto: server file has $(stat -c %s "$f") bytes"
  [ "$(md5sum < "$f" | cut -d' ' -f1)" = "$want" ] || fail "$proto: md5 differs"
  grep -q '"verified":"ok"' "$WORK/run-$proto.out" || fail "$proto: read-back not verified"
  grep -q '"client_cpu_sec":[0-9]' "$WORK/run-$proto.out" || fail "$proto: no client CPU figure"
  log "$proto: 8 MiB written, size and md5 $want match on the server"
done

# 2. A short sweep with every workload, CSV and plot.
timeout 240 "$BENCH" sweep "$T" "${P[@]}" --proto udp,tcp --bs 8k,64k --outstanding 1,8 \
  --workload write,read,randread,randwrite,meta --time 0.5 --dir-entries 200 \
  --csv "$WORK/sweep.csv" --plot "$WORK/sweep.svg" --no-json > "$WORK/sweep.out" 2>&1 \
  || { cat "$WORK/sweep.out"; fail "sweep"; }
rows=$(($(wc -l < "$WORK/sweep.csv") - 1))
[ "$rows" = 64 ] || { cat "$WORK/sweep.out"; fail "sweep.csv has $rows rows, want 64"; }
if command -v gnuplot > /dev/null; then
  [ -s "$WORK/sweep.svg" ] || fail "no plot"
fi
grep -c '' "$WORK/sweep.out" > /dev/null
log "sweep: $rows runs, csv + plot"

# 3. Errors: usage (2), setup (3), never a hang.
expect_rc() {  # expect_rc RC MESSAGE_REGEX CMD...
  local want=$1 re=$2
  shift 2
  local out rc
  out=$(timeout 60 "$@" 2>&1) && rc=0 || rc=$?
  [ "$rc" = "$want" ] || { echo "$out"; fail "$* exited $rc, want $want"; }
  echo "$out" | grep -Eq "$re" || { echo "$out"; fail "$*: no message matching '$re'"; }
}
expect_rc 2 "unknown option" "$BENCH" "$T" --bogus
expect_rc 2 "bad size" "$BENCH" "$T" --bs 0
expect_rc 2 "HOST:/export" "$BENCH" nohost
expect_rc 3 "refused: MNT3ERR" "$BENCH" "127.0.0.1:/not/exported" "${P[@]}"
expect_rc 3 "refused" "$BENCH" "$T" --port 2049 --mount-port 1 --proto tcp
expect_rc 3 "refused|unreachable" "$BENCH" "$T" --port 2049 --mount-port 1 --proto udp
log "errors: usage 2, refused mount and nothing listening 3"

# 4. The server stops in the middle of a run.
for proto in tcp udp; do
  "$BENCH" "$T" "${P[@]}" --proto $proto --workload write --time 30 --timeout 3 --timeo 200 \
    --no-json > "$WORK/die-$proto.out" 2>&1 &
  bench=$!
  sleep 1
  kill -KILL "$SERVER"
  wait "$SERVER" 2>/dev/null || true
  start=$(date +%s)
  timeout 30 tail --pid=$bench -f /dev/null || fail "$proto: nfs3bench still running 30 s after the server died"
  wait $bench && rc=0 || rc=$?
  [ "$rc" != 0 ] || { cat "$WORK/die-$proto.out"; fail "$proto: exit 0 after the server died"; }
  grep -Eq "ERROR: WRITE .*(closed|lost|refused|unreachable|no reply)" "$WORK/die-$proto.out" \
    || { cat "$WORK/die-$proto.out"; fail "$proto: no clear message"; }
  log "$proto: server killed mid-run -> exit $rc after $(( $(date +%s) - start )) s: $(grep ERROR "$WORK/die-$proto.out" | head -1)"
  start_server
done
log "PASS"
