#!/bin/bash
# The Debian package, installed as an admin would: dpkg -i into a
# throw-away root, checks what it installed (binaries, conffiles, man pages,
# the unit enabled the Debian way, /var/lib/nfs3d mode 0700), systemd-analyze
# verify on the unit, man -l on every page; then serves the lab's Linux
# client from the installed nfs3d, and purges the package, checking that
# nothing is left behind.
#
# The root is an overlay over / (upper layer on a tmpfs) in a private mount
# namespace that a helper process holds open: nothing the package does
# reaches the real /, and the namespace with its mounts goes away with that
# process. systemd is not PID 1 there (nor on CI), so the server is started
# from the installed unit's ExecStart= line, run in the chroot inside the
# lab's network namespace.
#
# The CephFS backend is a package of its own, nfs3d-ceph: nfs3d's package
# must not depend on libcephfs, and with NFS3D_CEPH_DIR (the test cluster,
# fixture "ceph") the installed plugin serves a CephFS export to libnfs.
# Usage: package_test.sh DEB_DIR (where scripts/build-deb.sh put the .debs)
TEST_NAME=package
source "$(dirname "$0")/lib.sh"

DEB=$(ls "$1"/nfs3d_*.deb 2>/dev/null | head -n 1)
[ -f "$DEB" ] || fail "no nfs3d_*.deb in $1 (scripts/build-deb.sh builds it)"
CEPH_DEB=$(ls "$1"/nfs3d-ceph_*.deb 2>/dev/null | head -n 1)
depends=$(dpkg-deb -f "$DEB" Depends)
grep -qi ceph <<< "$depends" && fail "nfs3d's package depends on Ceph: $depends"
log "nfs3d's package does not depend on libcephfs (Depends: $depends)"
if [ -n "${NFS3D_CEPH_DIR:-}" ]; then
  [ -f "$CEPH_DEB" ] || fail "no nfs3d-ceph_*.deb in $1 although the CephFS plugin is built"
  grep -q libcephfs <<< "$(dpkg-deb -f "$CEPH_DEB" Depends)" || fail "nfs3d-ceph does not depend on libcephfs"
fi
export NFS_LAB_NS=nfs3d-pkg NFS_LAB_TAP=nfs3dpkg0

NS_PID=""
cleanup() {
  stop_started
  "$LAB" down >/dev/null 2>&1 || true
  if [ -n "$NS_PID" ]; then kill "$NS_PID" 2>/dev/null || true; wait "$NS_PID" 2>/dev/null || true; fi
  if [ -n "$WORK" ]; then rm -rf "$WORK"; fi
}
trap cleanup EXIT
make_work
ROOT=$WORK/root LAYERS=$WORK/layers EXPORT=$WORK/export
mkdir -p "$ROOT" "$LAYERS" "$EXPORT"

# in_ns CMD...: runs CMD in the private mount namespace; in_root CMD...: in
# the chroot there.
in_ns() { nsenter -t "$NS_PID" -m -- "$@"; }
in_root() { in_ns chroot "$ROOT" "$@"; }

# The installed nfs3d with its CephFS plugin serves a cephfs= export of the
# test cluster: started from the chroot in the host's network (where the
# cluster is), on ports of its own, read and written with libnfs.
serve_cephfs_from_package() {
  local conf=/etc/nfs3d/ceph-test port mport
  in_ns mkdir -p "$ROOT$conf"
  { grep -E '^(fsid|mon host) =' "$NFS3D_CEPH_DIR/ceph.conf"
    printf 'ms bind ipv6 = false\nms bind msgr1 = false\nauth client required = cephx\n'; } \
    | sed '1i [global]' | in_ns tee "$ROOT$conf/ceph.conf" >/dev/null
  in_ns cp "$NFS3D_CEPH_DIR/keyring" "$ROOT$conf/keyring"
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  mport=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  in_ns tee "$ROOT$conf/exports" >/dev/null <<< "/ceph 127.0.0.1(rw,insecure,no_root_squash,cephfs=/)"
  in_ns tee "$ROOT$conf/nfs3d.conf" >/dev/null <<CONF
[nfsd]
listen = 127.0.0.1
port = $port
mountd_port = $mport
portmapper = off
[paths]
state_dir = /var/lib/nfs3d-ceph-test
exports = $conf/exports
[nlm]
enable = off
[ceph]
conf = $conf/ceph.conf
keyring = $conf/keyring
client_id = admin
fs_name = cephfs
CONF
  # Not through in_root: $! must be nfs3d itself (nsenter and chroot exec
  # it), or stop_started would leave it running, holding ctest's output open.
  nsenter -t "$NS_PID" -m -- chroot "$ROOT" /usr/sbin/nfs3d --config "$conf/nfs3d.conf" \
    --foreground > /dev/null 2> "$WORK/nfs3d-ceph.log" &
  local pid=$!
  PIDS+=($pid)
  local url="nfs://127.0.0.1/ceph/pkg-$$?version=3&nfsport=$port&mountport=$mport"
  head -c 3145729 /dev/urandom > "$WORK/ceph-src"
  # Connecting to the cluster takes seconds: up to 60 s for the first answer.
  local i
  for i in $(seq 120); do
    rpcinfo -T tcp -a "127.0.0.1.$((port / 256)).$((port % 256))" 100003 3 >/dev/null 2>&1 && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.5
  done
  nfs-cp "$WORK/ceph-src" "$url" \
    || { cat "$WORK/nfs3d-ceph.log" >&2; fail "the installed nfs3d did not serve the CephFS export"; }
  nfs-cp "$url" "$WORK/ceph-back" || fail "nfs-cp out of the CephFS export"
  cmp -s "$WORK/ceph-src" "$WORK/ceph-back" || fail "the CephFS export gave back other bytes"
  kill "$pid"; wait "$pid" 2>/dev/null || true
  in_root rm -rf /var/lib/nfs3d-ceph-test "$conf"
  log "nfs3d-ceph: the installed plugin served a cephfs= export (3 MiB in and out with libnfs)"
}

unshare -m --propagation private sleep infinity &
NS_PID=$!
wait_for in_ns true || fail "no private mount namespace"
in_ns mount -t tmpfs -o mode=755 layers "$LAYERS"
in_ns mkdir "$LAYERS/upper" "$LAYERS/work"
in_ns mount -t overlay overlay -o "lowerdir=/,upperdir=$LAYERS/upper,workdir=$LAYERS/work" "$ROOT"
in_ns mount -t proc proc "$ROOT/proc"
in_ns mount --rbind /dev "$ROOT/dev"
in_ns mount -t tmpfs tmpfs "$ROOT/run"   # no /run/systemd/system: maintainer scripts start nothing
in_ns mount -t tmpfs tmpfs "$ROOT/tmp"
in_ns cp "$DEB" ${CEPH_DEB:+"$CEPH_DEB"} "$ROOT/tmp/"
# A host that ran nfs3d has /etc/nfs3d or /var/lib/nfs3d: the new root starts
# without them (whiteouts in the upper layer, listed as the baseline).
for d in /etc/nfs3d /var/lib/nfs3d; do
  if in_root test -e "$d"; then log "hiding the host's $d"; in_root rm -rf "$d"; fi
done
upper_files() { in_ns sh -c "cd '$LAYERS/upper' && find . ! -type d" | sed 's|^\./|/|' | sort; }
baseline=$(upper_files)

debs=("/tmp/$(basename "$DEB")")
[ -n "$CEPH_DEB" ] && debs+=("/tmp/$(basename "$CEPH_DEB")")
log "dpkg -i ${debs[*]}"
in_root dpkg -i "${debs[@]}" > "$WORK/install.log" 2>&1 \
  || { cat "$WORK/install.log" >&2; fail "dpkg -i"; }

# What the package installed.
for f in /usr/sbin/nfs3d /usr/sbin/nfs3stat /usr/bin/nfs3bench; do
  in_root test -x "$f" || fail "$f not installed"
done
pages=(man8/nfs3d.8 man5/nfs3d.conf.5 man5/nfs3d-exports.5 man8/nfs3stat.8 man1/nfs3bench.1)
for p in "${pages[@]}"; do
  in_root test -f "/usr/share/man/$p.gz" || fail "man page $p not installed"
done
conffiles=$(in_root dpkg-query -W -f='${Conffiles}' nfs3d)
for f in /etc/nfs3d/nfs3d.conf /etc/nfs3d/exports; do
  grep -q " $f " <<< "$conffiles" || fail "$f is not a conffile: $conffiles"
done
in_root grep -qv '^[[:space:]]*\(#\|$\)' /etc/nfs3d/exports && fail "the installed exports file exports something"
[ "$(in_root stat -c %a /var/lib/nfs3d)" = 700 ] || fail "/var/lib/nfs3d is not mode 0700"
UNIT=/lib/systemd/system/nfs3d.service
in_root test -f "$UNIT" || fail "no $UNIT"
[ "$(in_ns systemctl --root="$ROOT" is-enabled nfs3d.service)" = enabled ] || fail "nfs3d.service is not enabled"
in_root test -L /etc/systemd/system/multi-user.target.wants/nfs3d.service \
  || fail "no multi-user.target.wants link"
# The fleet's template unit and keepalived notify script: installed, never
# enabled (keepalived starts the instances).
TEMPLATE=/lib/systemd/system/nfs3d@.service
in_root test -f "$TEMPLATE" || fail "no $TEMPLATE"
in_root test -x /usr/lib/nfs3d/keepalived-notify || fail "no /usr/lib/nfs3d/keepalived-notify"
in_root test -f /usr/share/doc/nfs3d/examples/keepalived.conf || fail "no example keepalived.conf"
[ -z "$(in_root find /etc/systemd/system -name 'nfs3d@*')" ] || fail "an nfs3d@ instance is enabled"
log "installed: binaries, conffiles, /var/lib/nfs3d 0700, unit enabled, ${#pages[@]} man pages"

# systemd-analyze verify runs man for Documentation=; man-db caches what it
# formats in /var/cache/man. That cache is this test's, not the package's:
# keep it on a tmpfs of its own so the purge check below does not see it.
in_ns mount -t tmpfs tmpfs "$ROOT/var/cache/man"
in_root systemd-analyze verify "$UNIT" > "$WORK/verify.log" 2>&1 \
  || { cat "$WORK/verify.log" >&2; fail "systemd-analyze verify $UNIT"; }
# A template is verified through an instance of it.
in_root ln -s "$TEMPLATE" /tmp/nfs3d@head1.service
in_root systemd-analyze verify /tmp/nfs3d@head1.service >> "$WORK/verify.log" 2>&1 \
  || { cat "$WORK/verify.log" >&2; fail "systemd-analyze verify nfs3d@head1.service"; }
[ ! -s "$WORK/verify.log" ] || { cat "$WORK/verify.log" >&2; fail "systemd-analyze verify complained"; }
for p in "${pages[@]}"; do
  MANWIDTH=80 in_root man --warnings -l "/usr/share/man/$p.gz" > "$WORK/page.txt" 2> "$WORK/man.err" \
    || fail "man -l $p"
  [ ! -s "$WORK/man.err" ] || { cat "$WORK/man.err" >&2; fail "man -l $p warned"; }
  [ -s "$WORK/page.txt" ] || fail "man -l $p rendered nothing"
done
in_ns umount "$ROOT/var/cache/man"
# The plugin: where the installed nfs3d looks for it.
plugin=$(in_root sh -c 'ls /usr/lib/*/nfs3d/backend-cephfs.so 2>/dev/null' || true)
if [ -n "$CEPH_DEB" ]; then
  [ -n "$plugin" ] || fail "nfs3d-ceph installed no backend-cephfs.so"
  log "nfs3d-ceph installed $plugin"
fi
log "systemd-analyze verify (nfs3d.service, nfs3d@head1.service): clean; man -l: ${#pages[@]} pages without warnings"

# Serve: an admin's export line, the server started as the unit starts it.
in_ns mkdir -p "$ROOT/srv/nfs3d-test"
# A bind mount of a real file system: overlayfs gives out no file handles.
in_ns mount --bind "$EXPORT" "$ROOT/srv/nfs3d-test"
in_root sh -c 'echo "/srv/nfs3d-test 10.200.0.0/24(rw,no_root_squash)" >> /etc/nfs3d/exports'
read -r -a exec_start <<< "$(in_root sed -n 's/^ExecStart=//p' "$UNIT")"
[ "${exec_start[0]}" = /usr/sbin/nfs3d ] || fail "unexpected ExecStart: ${exec_start[*]}"
"$LAB" up --no-rpcbind >/dev/null
"$LAB" exec -- nsenter -t "$NS_PID" -m -- chroot "$ROOT" "${exec_start[@]}" 2> "$WORK/nfs3d.log" &
PIDS+=($!)
wait_for "$LAB" exec -- rpcinfo -T tcp 127.0.0.1 100003 3 \
  || { cat "$WORK/nfs3d.log" >&2; fail "the installed nfs3d did not come up"; }
log "started: ${exec_start[*]} (chroot, lab namespace)"

out=$WORK/out
lab_mount_run "$WORK/mount.log" --export /srv/nfs3d-test --proto tcp --out-dir "$out" \
    --timeout 600 --script "$(dirname "$0")/guest_fileops.sh" \
  || { cat "$WORK/mount.log" >&2; tail -30 "$WORK/nfs3d.log" >&2; fail "mount-run"; }
[ "$(md5sum < "$EXPORT/big" | cut -d' ' -f1)" = "$(cat "$out/md5")" ] || fail "md5 mismatch"
log "lab client: mounted, wrote, read back (md5 matches on the server)"
stop_started
"$LAB" down >/dev/null 2>&1 || true
in_ns umount "$ROOT/srv/nfs3d-test"
in_ns rmdir "$ROOT/srv/nfs3d-test"

if [ -n "${NFS3D_CEPH_DIR:-}" ]; then
  serve_cephfs_from_package
fi

packages=(nfs3d)
[ -n "$CEPH_DEB" ] && packages=(nfs3d-ceph nfs3d)
log "dpkg --purge ${packages[*]}"
in_root dpkg --purge "${packages[@]}" > "$WORK/purge.log" 2>&1 || { cat "$WORK/purge.log" >&2; fail "dpkg --purge"; }
# Everything the install changed is in the upper layer. After the purge only
# dpkg's and man-db's own bookkeeping may have been added to it, and nothing
# named nfs3d.
changed=$(comm -13 <(echo "$baseline") <(upper_files))
left=$(grep -Ev '^/var/lib/dpkg/|^/var/log/dpkg\.log$|^/var/cache/(man|debconf)/|^/etc/ld\.so\.cache$' \
  <<< "$changed" || true)
named=$(grep nfs3d <<< "$changed" || true)
named+=$(in_ns sh -c "cd '$LAYERS/upper' && find . -type d -name '*nfs3d*'" || true)
[ -z "$left$named" ] || fail "left behind after purge: $left $named"
for d in /etc/nfs3d /var/lib/nfs3d; do
  in_root test ! -e "$d" || fail "$d left behind"
done
log "purged: nothing left behind ($(wc -l <<< "$changed") files changed, all dpkg or man-db bookkeeping)"
log "all passed"
