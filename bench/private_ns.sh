# Sourced by bench scripts: re-runs the calling script (with its arguments)
# in a private network and mount namespace, then brings up lo and gives the
# script its own /run (rpcbind's and the daemons' sockets live there).
# Usage, first thing after `set -euo pipefail`:  . "$(dirname "$0")/private_ns.sh" "$@"
if [ "${NFS3D_IN_NS:-}" != 1 ]; then
  exec env NFS3D_IN_NS=1 unshare --net --mount --propagation private "$0" "$@"
fi
ip link set lo up
mount -t tmpfs tmpfs /run
