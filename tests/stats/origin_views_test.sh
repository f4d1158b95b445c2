#!/bin/bash
# The per-origin views as an admin sees them: three clients (127.0.0.2-4,
# different uids and exports) load nfs3d; `nfs3stat --clients/--exports/
# --users` list them busiest first (--clients with each client's TCP
# connections); `nfs3top` runs in a tmux pane, and the test reads the
# screen, presses sort/toggle keys and q like a person would.
# usage: origin_views_test.sh NFS3D NFS3STAT NFS3TOP
nfs3d=$1
nfs3stat=$2
nfs3top=$3
. "$(dirname "$0")/origin_env.sh"
tmux_sock="stats-nfs3top-$$"
cleanup() {
  tmux -L "$tmux_sock" kill-server 2>/dev/null || true
  cleanup_env
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v tmux >/dev/null || fail "tmux is not installed (apt-get install tmux)"

start_nfs3d
load 127.0.0.2 "$dir/alpha" 1000 30
load 127.0.0.3 "$dir/beta" 2000 30 40
load 127.0.0.4 "$dir/beta" 3000 30 5
sleep 3

out=$("$nfs3stat" --server "$sock" --clients)
echo "$out"
first=$(echo "$out" | sed -n 2p | awk '{print $1}')
[ "$first" = 127.0.0.2 ] || fail "busiest client is '$first', not 127.0.0.2"
echo "$out" | grep -q '^127.0.0.3 ' || fail "127.0.0.3 missing"
echo "$out" | grep -q '^127.0.0.4 ' || fail "127.0.0.4 missing"
# Every tenth call of each load is a LOOKUP that fails.
errors=$(echo "$out" | awk '$1=="127.0.0.2" {print $3}')
[ "$errors" != 0 ] || fail "no errors counted for 127.0.0.2"
# On the control socket: each client's open TCP connections (plain here)
# in a TLS column, and one line per connection.
echo "$out" | sed -n 1p | grep -q ' TLS$' || fail "no TLS column"
echo "$out" | grep -q '^127.0.0.2 .* none$' || fail "127.0.0.2 is not shown as plain"
echo "$out" | grep -q '^CONNECTION  *SECURITY' || fail "no connection table"
echo "$out" | grep -q '^127.0.0.3:[0-9]*  *none ' || fail "127.0.0.3's connection missing"

out=$("$nfs3stat" --server "$sock" --exports)
echo "$out"
echo "$out" | sed -n 2p | grep -q "^$dir/alpha " || fail "alpha is not the busiest export"
echo "$out" | grep -q "^$dir/beta " || fail "beta missing"

out=$("$nfs3stat" --server "127.0.0.1:$metrics" --users -i 1 -c 1)
echo "$out"
echo "$out" | grep -q 'CALLS/s' || fail "no rates with -i"
for u in 1000 2000 3000; do echo "$out" | grep -q "^$u " || fail "user $u missing"; done

# nfs3top in a 120x40 pane.
tmux -L "$tmux_sock" new-session -d -x 120 -y 40 "$nfs3top --server $sock -d 0.5"
screen() { tmux -L "$tmux_sock" capture-pane -p; }
wait_screen() {  # PATTERN: wait until the screen shows it
  for _ in $(seq 50); do
    screen | grep -q -- "$1" && return 0
    sleep 0.2
  done
  screen >&2
  fail "screen never showed '$1'"
}
wait_screen "every 0.5s"
wait_screen "^127.0.0.2 "
s=$(screen)
echo "$s"
echo "$s" | grep -q "^CLIENT .*CALLS/s .*P99" || fail "no client header"
echo "$s" | grep -q "^EXPORT " || fail "no export section"
echo "$s" | grep -q "^PROCEDURE " || fail "no procedure section"
echo "$s" | grep -q "^nfs GETATTR " || fail "GETATTR not among the procedures"
echo "$s" | grep -q "sort: calls" || fail "default sort is not calls"
# The busiest client is listed first under CLIENT.
top=$(echo "$s" | sed -n '/^CLIENT /{n;p;q}' | awk '{print $1}')
[ "$top" = 127.0.0.2 ] || fail "first client row is '$top'"

tmux -L "$tmux_sock" send-keys e
wait_screen "sort: errors"
tmux -L "$tmux_sock" send-keys l
wait_screen "sort: p99"
tmux -L "$tmux_sock" send-keys u
wait_screen "^USER "
screen | grep -q "^2000 " || fail "user 2000 not shown"
tmux -L "$tmux_sock" send-keys t
wait_screen "^CONNECTION .*SECURITY"
wait_screen "^127.0.0.4:[0-9]*  *none "
tmux -L "$tmux_sock" send-keys t
wait_screen "^USER "
tmux -L "$tmux_sock" send-keys +
wait_screen "every 1.0s"
tmux -L "$tmux_sock" send-keys q
for _ in $(seq 50); do
  tmux -L "$tmux_sock" has-session 2>/dev/null || break
  sleep 0.1
done
tmux -L "$tmux_sock" has-session 2>/dev/null && fail "nfs3top did not quit on q"

# Batch mode for scripts.
out=$("$nfs3top" --server "$sock" --batch -n 2 -d 0.5)
echo "$out" | grep -q "every 0.5s" || fail "batch mode printed no rates"
echo "$out" | grep -q "^CLIENT .*CALLS/s" || fail "batch mode printed no rates"
echo "PASS"
