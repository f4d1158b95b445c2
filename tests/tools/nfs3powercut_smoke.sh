#!/bin/bash
# CI smoke test for nfs3powercut against nfs3d on loopback, in private
# namespaces (the power cuts themselves need the lab: integration.lab_powercut,
# bench/powercut.sh). The writer runs its mixed workload while nfs3d is
# killed with SIGKILL (the page cache survives that, so nothing may be
# lost); nfs3d starts again and the checker must find everything, and
# answers to calls it sends again as before the kill. Then an
# acknowledged byte and an acknowledged name are taken away on the server:
# the checker must report both and exit 1.
# Usage: nfs3powercut_smoke.sh NFS3POWERCUT NFS3D
TEST_NAME=nfs3powercut_smoke
source "$(dirname "$0")/../integration/lib.sh"
TOOL=$(readlink -f "$1")
NFS3D=$(readlink -f "$2")
enter_private_namespaces "$0" "$TOOL" "$NFS3D"

make_loopback_export
write_conf "$WORK/nfs3d.conf" "$WORK/exports" "$WORK/state" auto  # own portmapper: rpcinfo asks it
start_server() {
  "$NFS3D" --config "$WORK/nfs3d.conf" --foreground 2>> "$WORK/nfs3d.log" &
  SERVER=$!
  PIDS+=("$SERVER")
  wait_for rpcinfo -n 2049 -t 127.0.0.1 100003 3 || { cat "$WORK/nfs3d.log" >&2; fail "nfs3d not up"; }
}
T="127.0.0.1:$WORK/export"
P=(--port 2049 --mount-port 20048)
start_server

"$TOOL" write "$T" "${P[@]}" --journal "$WORK/journal" --dir c1 --seed 5 --time 600 \
  2> "$WORK/writer.log" &
WRITER=$!
PIDS+=("$WRITER")
for _ in $(seq 1 1200); do  # up to 2 min: slow under sanitizers
  [ "$(cat "$WORK/journal" 2>/dev/null | grep -c '^done')" -ge 200 ] && break  # 0 before the file exists
  sleep 0.1
done
[ "$(grep -c '^done' "$WORK/journal")" -ge 200 ] || { cat "$WORK/writer.log" >&2; fail "writer too slow"; }
kill -KILL "$SERVER"
wait "$SERVER" 2>/dev/null || true
wait "$WRITER" || { cat "$WORK/writer.log" >&2; fail "the writer did not stop cleanly"; }
grep -q "steps acknowledged" "$WORK/writer.log" || fail "the writer gave no summary"
start_server

"$TOOL" check "$T" "${P[@]}" --journal "$WORK/journal" --wait 30 > "$WORK/check" 2> "$WORK/check.err" \
  || { cat "$WORK/check.err" "$WORK/check" >&2; fail "check after kill -9 failed"; }
log "$(cat "$WORK/check")"
grep -q ' stable_bytes_lost=0 .* namespace_lost=0 ' "$WORK/check" || fail "loss reported"
! grep -q '^bytes_verified=0 ' "$WORK/check" || fail "no byte verified"
! grep -q ' namespace_changes=0 ' "$WORK/check" || fail "no namespace change verified"
# Calls sent again with their xid after the restart: the duplicate request
# cache is empty, so a REMOVE runs again (NOENT); an exclusive create finds
# its verifier (OK).
grep -q ' exclusive_failed=0' "$WORK/check" || fail "an exclusive create resent failed"
grep -q ' resent_remove=NFS3ERR_NOENT' "$WORK/check" || fail "no REMOVE resent, or not NOENT"
grep -q ' resent_xcreate=NFS3_OK' "$WORK/check" || fail "no CREATE EXCLUSIVE resent, or not OK"

# Take an acknowledged byte and an acknowledged name away: both reported.
byte=$(od -An -tu1 -j100 -N1 "$WORK/export/c1/d0" | tr -d ' ')
printf "\\$(printf %o $((byte ^ 255)))" | dd of="$WORK/export/c1/d0" bs=1 seek=100 conv=notrunc status=none
# The names the journal says exist now: created, or the target of a rename
# or link, and not renamed or removed since (a create alone is not enough:
# with another workload every created name may have been renamed away). A
# name of the call in flight at the kill is left out: its fate is open.
# (No pipe into a loop that breaks early: awk's SIGPIPE then failed the
# pipeline, and set -e ended the test without a word, now and then.)
live=$(awk '
  $1 == "done" && ($2 == "create" || $2 == "xcreate") { live[$3] = 1 }
  $1 == "done" && $2 == "rename" { delete live[$3]; live[$4] = 1 }
  $1 == "done" && $2 == "link" { live[$4] = 1 }
  $1 == "done" && $2 == "remove" { delete live[$3] }
  $1 == "begin" { open = $0 } $1 == "done" { open = "" }
  END { n = split(open, f, " "); for (i = 3; i <= n; i++) delete live[f[i]]
        for (name in live) if (name ~ /^m/) print name }' "$WORK/journal")
victim=""
for n in $live; do
  if [ -e "$WORK/export/c1/$n" ]; then victim=$n; break; fi
done
[ -n "$victim" ] || fail "no metadata object to remove"
rm "$WORK/export/c1/$victim"
rc=0
"$TOOL" check "$T" "${P[@]}" --journal "$WORK/journal" > "$WORK/check2" 2> "$WORK/check2.err" || rc=$?
[ $rc -eq 1 ] || { cat "$WORK/check2.err" >&2; fail "check of a damaged export exited $rc, want 1"; }
grep -q ' stable_bytes_lost=1 ' "$WORK/check2" || fail "the changed byte was not reported: $(cat "$WORK/check2")"
grep -q "LOST: $victim: missing" "$WORK/check2.err" || fail "the removed name was not reported"
log "PASS"
