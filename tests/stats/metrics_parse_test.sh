#!/bin/sh
# Starts nfs3d with the TCP metrics endpoint on a free loopback port, makes a
# few NULL calls, and checks /metrics with python3-prometheus-client's parser.
# usage: metrics_parse_test.sh NFS3D_BINARY CHECK_METRICS_PY
set -eu
nfs3d=$1
check=$2

. "$(dirname "$0")/origin_env.sh"
trap cleanup_env EXIT
# The parser is a Debian package (scripts/install-deps.sh --test installs
# it), so Debian's python ($py, from origin_env.sh), not a pyenv one.
$py -c 'import prometheus_client' 2>/dev/null ||
  { echo "no python3-prometheus-client: run scripts/install-deps.sh --test" >&2; exit 1; }
start_nfs3d
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
