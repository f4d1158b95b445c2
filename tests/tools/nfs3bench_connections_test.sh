#!/bin/bash
# More clients than max_connections: nfs3d with max_connections = 1024 and
# 1,100 TCP connections of nfs3bench (--connections), each sending a GETATTR
# every half second. Connections the server closes to make room for others
# (idle ones of the client with the most) are opened again by the client when it next has a
# call, as the Linux client does; every call gets its answer. Then 1,000
# connections with a call each in flight all the time, all answered. Then
# WRITEs over one such connection.
# Usage: nfs3bench_connections_test.sh NFS3BENCH NFS3D
TEST_NAME=nfs3bench_connections
source "$(dirname "$0")/../integration/lib.sh"
BENCH=$(readlink -f "$1")
NFS3D=$(readlink -f "$2")
enter_private_namespaces "$0" "$BENCH" "$NFS3D"
ulimit -n 65536 2>/dev/null || true
[ "$(ulimit -n)" -ge 2300 ] || { log "SKIP: open files limit $(ulimit -n) < 2300"; exit 0; }

make_loopback_export
write_conf "$WORK/nfs3d.conf" "$WORK/exports" "$WORK/state" off
sed -i 's/^\[nfsd\]$/[nfsd]\nmax_connections = 1024/' "$WORK/nfs3d.conf"
grep -q "^max_connections = 1024" "$WORK/nfs3d.conf" || fail "could not set max_connections"
"$NFS3D" --config "$WORK/nfs3d.conf" --foreground 2>> "$WORK/nfs3d.log" &
PIDS+=($!)
T="127.0.0.1:$WORK/export"
P=(--port 2049 --mount-port 20048 --dir-entries 4)
wait_for "$BENCH" "$T" "${P[@]}" --workload null --ops 1 --no-json \
  || { cat "$WORK/nfs3d.log" >&2; fail "nfs3d not up"; }

json_field() { grep '^{' "$1" | tail -n 1 | grep -o "\"$2\":[^,}]*" | cut -d: -f2; }

# 1. 1,100 connections at a limit of 1,024.
timeout 180 "$BENCH" "$T" "${P[@]}" --workload getattr --connections 1100 --interval 0.5 \
  --time 3 --timeout 20 > "$WORK/crowd.out" 2>&1 || { cat "$WORK/crowd.out"; fail "crowd run"; }
ops=$(json_field "$WORK/crowd.out" ops)
errors=$(json_field "$WORK/crowd.out" errors)
reconnects=$(json_field "$WORK/crowd.out" reconnects)
[ "$errors" = 0 ] || { cat "$WORK/crowd.out"; fail "$errors calls failed"; }
[ "$ops" -ge 1100 ] || { cat "$WORK/crowd.out"; fail "only $ops calls answered"; }
[ "$reconnects" -gt 0 ] || { cat "$WORK/crowd.out"; fail "no connection was closed at the limit"; }
grep -q "max_connections): closed an idle one" "$WORK/nfs3d.log" || fail "nfs3d logged no eviction"
! grep -q "refusing a client" "$WORK/nfs3d.log" || fail "nfs3d refused a client"
log "1100 connections, max_connections 1024: $ops GETATTRs answered, 0 failed, $reconnects reconnects"

# 2. 1,000 connections, a call in flight on each all the time.
timeout 120 "$BENCH" "$T" "${P[@]}" --workload getattr --connections 1000 --time 2 \
  --timeout 20 > "$WORK/busy.out" 2>&1 || { cat "$WORK/busy.out"; fail "busy run"; }
ops=$(json_field "$WORK/busy.out" ops)
errors=$(json_field "$WORK/busy.out" errors)
[ "$errors" = 0 ] && [ "$ops" -ge 1000 ] || { cat "$WORK/busy.out"; fail "busy: $ops answered, $errors failed"; }
log "1000 busy connections: $ops GETATTRs answered, 0 failed"

# 3. WRITEs of 64 KiB, 4 in flight on one connection: all answered, and the
# throughput windows are reported.
timeout 60 "$BENCH" "$T" "${P[@]}" --workload write --bs 64k --connections 1 --outstanding 4 \
  --time 2 > "$WORK/write.out" 2>&1 || { cat "$WORK/write.out"; fail "write run"; }
ops=$(json_field "$WORK/write.out" ops)
errors=$(json_field "$WORK/write.out" errors)
bytes=$(json_field "$WORK/write.out" bytes)
median=$(json_field "$WORK/write.out" median_100ms)
slowest=$(json_field "$WORK/write.out" min_100ms)
[ "$errors" = 0 ] && [ "$ops" -ge 1 ] || { cat "$WORK/write.out"; fail "write: $ops answered, $errors failed"; }
[ "$bytes" = $((ops * 65536)) ] || { cat "$WORK/write.out"; fail "write: $bytes bytes for $ops calls"; }
python3 -c "import sys; s, m = map(float, sys.argv[1:]); sys.exit(not (0 < m and s <= m))" \
  "$slowest" "$median" || { cat "$WORK/write.out"; fail "windows: slowest $slowest median $median"; }
log "64 KiB WRITEs over --connections: $ops answered, 0 failed, windows $slowest/$median calls/s"
log "PASS"
