# Sourced by the metrics and per-origin view tests: starts nfs3d with two exports, its
# TCP metrics endpoint and the control socket on free loopback ports, and
# offers `load` (tests/stats/origin_load.py from a given 127.0.0.x).
# Needs: $nfs3d. Sets: $dir, $port, $mport, $metrics, $sock, $pid.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
py=python3
[ -x /usr/bin/python3 ] && py=/usr/bin/python3
dir=$(mktemp -d /tmp/stats-origins.XXXXXX)
pid=
loads=
cleanup_env() {
  for p in $loads; do kill "$p" 2>/dev/null || true; done
  [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  rm -rf "$dir"
}
free_port() {
  $py -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
port=$(free_port)
mport=$(free_port)
metrics=$(free_port)
mkdir -p "$dir/alpha" "$dir/beta" "$dir/state"
cat > "$dir/exports" <<EXP
$dir/alpha 127.0.0.0/8(rw,insecure,no_root_squash)
$dir/beta 127.0.0.0/8(rw,insecure,no_root_squash)
EXP
cat > "$dir/nfs3d.conf" <<CONF
[nfsd]
listen = 127.0.0.1
port = $port
mountd_port = $mport
portmapper = off
threads = 2
[paths]
state_dir = $dir/state
exports = $dir/exports
[log]
slow_call_ms = ${SLOW_CALL_MS:-0}
[metrics]
enable = on
port = $metrics
# Prometheus scrapes the per-client and per-user series over TCP.
tcp_per_client = on
CONF
sock="unix:$dir/state/nfs3d.sock"
start_nfs3d() {
  "$nfs3d" --config "$dir/nfs3d.conf" --foreground 2>"$dir/log" &
  pid=$!
  for _ in $(seq 100); do
    grep -q "metrics at" "$dir/log" 2>/dev/null && return 0
    sleep 0.1
  done
  cat "$dir/log" >&2
  return 1
}
# load SOURCE EXPORT UID SECONDS [CALLS_PER_S]
load() {
  $py "$here/origin_load.py" "$1" "$port" "$mport" "$2" "$3" "$4" "${5:-0}" >>"$dir/load.log" 2>&1 &
  loads="$loads $!"
}
