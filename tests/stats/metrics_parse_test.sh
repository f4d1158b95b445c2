#!/bin/sh
# Starts nfs3d with the TCP metrics endpoint on a free loopback port, makes a
# few NULL calls, and checks /metrics with python3-prometheus-client's parser.
# usage: metrics_parse_test.sh NFS3D_BINARY CHECK_METRICS_PY
set -eu
nfs3d=$1
check=$2

# The parser is a Debian package (scripts/install-deps.sh --test installs
# it), so use Debian's python, not a pyenv one earlier in PATH.
py=python3
[ -x /usr/bin/python3 ] && py=/usr/bin/python3
$py -c 'import prometheus_client' 2>/dev/null ||
  { echo "no python3-prometheus-client: run scripts/install-deps.sh --test" >&2; exit 1; }

dir=$(mktemp -d)
pid=
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
port=$(free_port)
mport=$(free_port)
metrics=$(free_port)
mkdir -p "$dir/export" "$dir/state"
echo "$dir/export 127.0.0.1(rw,insecure)" > "$dir/exports"
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
[metrics]
enable = on
port = $metrics
CONF
"$nfs3d" --config "$dir/nfs3d.conf" --foreground 2>"$dir/log" &
pid=$!
for _ in $(seq 50); do
  grep -q "metrics at" "$dir/log" 2>/dev/null && break
  sleep 0.1
done
grep -q "metrics at http://127.0.0.1:$metrics/metrics" "$dir/log" || { cat "$dir/log"; exit 1; }
# A few NFS NULL calls over TCP so some counters are not zero.
python3 - "$port" <<'PY'
import socket, struct, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
for xid in range(1, 4):
    body = struct.pack(">10I", xid, 0, 2, 100003, 3, 0, 0, 0, 0, 0)
    s.sendall(struct.pack(">I", 0x80000000 | len(body)) + body)
    mark = s.recv(4, socket.MSG_WAITALL)
    s.recv(struct.unpack(">I", mark)[0] & 0x7fffffff, socket.MSG_WAITALL)
PY
$py "$check" "http://127.0.0.1:$metrics/metrics"
