#!/bin/bash
# The Debian postinst on upgrade: a running nfs3d that can hand over is
# reloaded (the unit's ExecReload: nfs3d --takeover) and not restarted; one
# that cannot (no <state_dir>/handover.sock, or the reload left the same
# main process) is restarted. systemctl and deb-systemd-invoke are fakes that
# log what they are asked; /etc, /run and /var/lib are private to the test
# (a mount namespace), so nothing of the host's changes. Needs root, no VM.
#   tests/integration/postinst_test.sh [debian/nfs3d.postinst]
set -euo pipefail
export TEST_NAME=postinst
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
POSTINST=${1:-$REPO/debian/nfs3d.postinst}
make_work
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/bin" "$WORK/state" "$WORK/etc-upper/nfs3d" "$WORK/etc-work"
cat > "$WORK/etc-upper/nfs3d/nfs3d.conf" <<CONF
[server]
threads = 2
[paths]
state_dir = $WORK/state   # where handover.sock is
[metrics]
CONF
# systemctl: the unit is active when $WORK/active exists; MainPID is in
# $WORK/pid. deb-systemd-invoke: a reload hands over (a new MainPID) when
# $WORK/hands-over exists.
cat > "$WORK/bin/systemctl" <<FAKE
#!/bin/sh
echo "systemctl \$*" >> "$WORK/calls"
case "\$1" in
  is-active) if [ -e "$WORK/active" ]; then echo active; else echo inactive; exit 3; fi ;;
  show) cat "$WORK/pid" ;;
esac
FAKE
cat > "$WORK/bin/deb-systemd-invoke" <<FAKE
#!/bin/sh
echo "deb-systemd-invoke \$*" >> "$WORK/calls"
case "\$1" in
  reload) if [ -e "$WORK/hands-over" ]; then echo 200 > "$WORK/pid"; fi ;;
  restart) echo 300 > "$WORK/pid" ;;
esac
FAKE
chmod +x "$WORK/bin/systemctl" "$WORK/bin/deb-systemd-invoke"

# run_postinst ARGS...: the postinst in the private namespace; its calls
# end up in $WORK/calls.
run_postinst() {
  : > "$WORK/calls"
  echo 100 > "$WORK/pid"
  # shellcheck disable=SC2016  # expanded by the inner shell
  unshare -m env PATH="$WORK/bin:$PATH" WORK="$WORK" POSTINST="$POSTINST" bash -c '
    set -e
    mount --make-rprivate /
    mount -t overlay overlay -o lowerdir=/etc,upperdir=$WORK/etc-upper,workdir=$WORK/etc-work /etc
    mount -t tmpfs none /run && mkdir -p /run/systemd/system
    mount -t tmpfs none /var/lib
    sh "$POSTINST" "$@"' postinst "$@" > "$WORK/out" 2>&1 || fail "postinst $*: $(cat "$WORK/out")"
}
# expect WHAT: the calls that changed the service, in order.
expect() {
  local got
  got=$(grep -o 'deb-systemd-invoke [a-z-]*' "$WORK/calls" | cut -d' ' -f2 | paste -sd' ' || true)
  [ "$got" = "$1" ] || fail "$2: expected '$1', the postinst did '$got' ($(cat "$WORK/out"))"
  log "ok: $2: '${got}'"
}
make_socket() {
  python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$1"
}

touch "$WORK/active" "$WORK/hands-over"
make_socket "$WORK/state/handover.sock"
run_postinst configure 0.9.0
expect "reload" "running, can hand over"
grep -q "handed over to the new version (pid 200)" "$WORK/out" || fail "no word of the handover"

rm "$WORK/hands-over"
run_postinst configure 0.9.0
expect "reload restart" "running, the reload did not hand over"

rm "$WORK/state/handover.sock"
run_postinst configure 0.9.0
expect "restart" "running, older than handovers (no handover.sock)"

touch "$WORK/hands-over"
make_socket "$WORK/state/handover.sock"
rm "$WORK/active"
run_postinst configure 0.9.0
expect "" "not running"

touch "$WORK/active"
run_postinst configure
expect "" "a new installation"
log PASS
