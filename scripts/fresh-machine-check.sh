#!/bin/bash
# The README's two commands on a fresh Debian 12 machine, for changes to
# dependencies or build files (not in CI: it fetches a root and builds from
# nothing, twice). A minimal bookworm root made with debootstrap, the
# tracked files of this checkout copied in, then, in a chroot with private
# mount and network namespaces (loopback only):
#   1. ./scripts/quickstart.sh, until nfs3d answers rpcinfo (its own
#      portmapper on 111) and libnfs reads a file of its embedded export
#      back (rpcbind's rpcinfo and libnfs-utils are installed for that, after
#      the quick start built: they are not what it installs);
#   2. the test command's install and build step (install-deps.sh --test,
#      build.sh); --quick-only leaves it out.
# Usage: scripts/fresh-machine-check.sh [--quick-only] [--keep] [--reuse-root]
# --reuse-root takes the root a --keep run left (its packages and build/) and
# copies this checkout over it: a quicker second look, not a fresh machine.
# Environment: FRESH_DIR (default /var/tmp/nfs3d-fresh; the root is made anew
# each run, --keep leaves it there), DEBIAN_MIRROR (default: the one apt uses).
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
QUICK_ONLY=0 KEEP=0 REUSE=0
for a in "$@"; do
  case $a in
    --quick-only) QUICK_ONLY=1 ;;
    --keep) KEEP=1 ;;
    --reuse-root) REUSE=1 KEEP=1 ;;
    *) echo "usage: $0 [--quick-only] [--keep] [--reuse-root]" >&2; exit 2 ;;
  esac
done
[ "$(id -u)" = 0 ] || { echo "fresh-machine-check: run as root" >&2; exit 1; }
source "$REPO/scripts/stage.sh"
trap stage_table EXIT
DIR=${FRESH_DIR:-/var/tmp/nfs3d-fresh}
ROOT=$DIR/root
MIRROR=${DEBIAN_MIRROR:-$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -1)}
MIRROR=${MIRROR:-http://deb.debian.org/debian}

make_root() {
  command -v debootstrap >/dev/null || apt-get install -y -qq --no-install-recommends debootstrap >/dev/null
  rm -rf "$ROOT"
  mkdir -p "$ROOT"
  # netbase (/etc/services, /etc/protocols) is on every installed Debian; minbase
  # leaves it out, and rpcinfo cannot resolve "sunrpc" without it.
  debootstrap --variant=minbase --include=netbase bookworm "$ROOT" "$MIRROR" > "$DIR/debootstrap.log" 2>&1 \
    || { tail -20 "$DIR/debootstrap.log" >&2; return 1; }
  # What the installer writes and debootstrap does not (rpcinfo resolves
  # through it).
  printf '127.0.0.1\tlocalhost\n::1\t\tlocalhost ip6-localhost ip6-loopback\n' > "$ROOT/etc/hosts"
  copy_checkout
}

# The tracked (and new, not ignored) files of this checkout into the root;
# with --reuse-root over the copy there, whose build/ then builds anew only
# what changed.
copy_checkout() {
  mkdir -p "$ROOT/src/nfs3d"
  git -C "$REPO" ls-files -z --cached --others --exclude-standard \
    | (cd "$REPO" && xargs -0 cp --parents -t "$ROOT/src/nfs3d")
}

# in_fresh NET SCRIPT: runs bash SCRIPT in the root, in a new mount
# namespace with /proc, /dev and a /run and /tmp of its own; NET=host keeps
# the host's network (apt), NET=none gives it a network namespace of its own
# with only loopback, so its nfs3d takes ports 111 and 2049 there.
in_fresh() {
  local unshare_args=(-m --propagation private)
  [ "$1" = none ] && unshare_args+=(-n)
  unshare "${unshare_args[@]}" bash -s "$ROOT" "$1" "$2" <<'INNER'
set -euo pipefail
ROOT=$1
[ "$2" = none ] && ip link set lo up
mount -t proc proc "$ROOT/proc"
mount --rbind /dev "$ROOT/dev"
mount -t tmpfs tmpfs "$ROOT/run"
mount -t tmpfs tmpfs "$ROOT/tmp"
cp /etc/resolv.conf "$ROOT/etc/resolv.conf" 2>/dev/null || true
exec chroot "$ROOT" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root TERM=dumb bash -c "$3"
INNER
}

QUICK='set -euo pipefail
cd /src/nfs3d
./scripts/quickstart.sh > /tmp/quickstart.log 2>&1 &
qs=$!
for _ in $(seq 3600); do
  grep -q "=== start: serving" /tmp/quickstart.log 2>/dev/null && break
  kill -0 $qs 2>/dev/null || { cat /tmp/quickstart.log; echo "quickstart.sh exited"; exit 1; }
  sleep 1
done
grep "^===" /tmp/quickstart.log
grep -q "=== start: serving" /tmp/quickstart.log || { tail -40 /tmp/quickstart.log; exit 1; }
rpcinfo -p 127.0.0.1
rpcinfo -t 127.0.0.1 100003 3
echo "fresh machine $$" > state/export/hello
got=$(nfs-cat "nfs://127.0.0.1/src/nfs3d/state/export/hello?version=3")
[ "$got" = "fresh machine $$" ] || { echo "libnfs read: $got"; exit 1; }
echo "fresh-machine-check: quick start serves: rpcinfo and a libnfs read answered"
kill -TERM $qs; wait $qs || true'  # a background job ignores SIGINT

# The network is only needed for apt: the test build step gets the host's.
TESTBUILD='set -euo pipefail
cd /src/nfs3d
./scripts/install-deps.sh --test > /tmp/deps.log 2>&1 || { tail -20 /tmp/deps.log; exit 1; }
./scripts/build.sh > /tmp/build.log 2>&1 || { tail -40 /tmp/build.log; exit 1; }
./scripts/optional-parts.sh build'

if [ $REUSE = 1 ] && [ -d "$ROOT/src/nfs3d" ]; then
  stage "copy the checkout over the kept root" copy_checkout
else
  stage "debootstrap bookworm + copy the checkout" make_root
fi
# apt needs the network: the quick start's packages are installed first
# (its own install step then finds them), with the two clients the check
# uses (no build dependency: they change nothing in the build).
stage "quick start's packages (install-deps.sh)" in_fresh host \
  'cd /src/nfs3d && ./scripts/install-deps.sh && apt-get install -y -qq --no-install-recommends rpcbind libnfs-utils >/dev/null'
stage "quick start (configure, build, start) serves" in_fresh none "$QUICK"
if [ $QUICK_ONLY = 0 ]; then
  stage "test command's install + build step" in_fresh host "$TESTBUILD"
fi
[ $KEEP = 1 ] || rm -rf "$ROOT"
