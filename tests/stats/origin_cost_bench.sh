#!/bin/bash
# Not a test: what per-origin accounting costs. GETATTR with 32 calls in
# flight over loopback TCP against one nfs3d binary with the accounting on
# ([metrics] top_clients = 128, the default) and off (top_clients = 0),
# alternated run by run so machine noise hits both alike. Prints server CPU
# per call (utime+stime of nfs3d over the timed part, from nfs3bench
# --server-pid) and calls/s, each run, then medians and spreads.
# usage: origin_cost_bench.sh NFS3D NFS3BENCH [RUNS] [SECONDS] [BASELINE_NFS3D]
# With BASELINE_NFS3D (a build without the accounting code at all), a third
# column runs that binary too.
nfs3d_bin=$1
bench=$2
runs=${3:-8}
secs=${4:-4}
baseline=${5:-}
nfs3d=$nfs3d_bin
. "$(dirname "$0")/origin_env.sh"
trap cleanup_env EXIT
set +e
modes="on off"
[ -n "$baseline" ] && modes="on off base"
results="$dir/results"
: >"$results"
one_run() {  # MODE
  local bin=$nfs3d_bin top=128
  [ "$1" = off ] && top=0
  [ "$1" = base ] && bin=$baseline
  sed -i '/^top_clients/d' "$dir/nfs3d.conf"
  [ "$1" = base ] || sed -i "s/^\[metrics\]$/[metrics]\ntop_clients = $top/" "$dir/nfs3d.conf"
  nfs3d=$bin
  start_nfs3d || return 1
  json=$("$bench" "127.0.0.1:$dir/alpha" --port "$port" --mount-port "$mport" --workload getattr \
         --outstanding 32 --time "$secs" --server-pid "$pid" 2>/dev/null | grep '^{')
  kill "$pid"; wait "$pid" 2>/dev/null; pid=
  echo "$json" | $py -c '
import json, sys
r = json.load(sys.stdin)
print(sys.argv[1], r["server_cpu_sec"] / r["calls"] * 1e6, r["calls_per_sec"])' "$1" >>"$results"
  tail -1 "$results"
}
for i in $(seq "$runs"); do
  for m in $modes; do one_run "$m"; done
done
$py - "$results" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
by = {}
for mode, cpu, rate in rows:
    by.setdefault(mode, []).append((float(cpu), float(rate)))
print("%-5s %4s %22s %22s" % ("mode", "runs", "server us/call median", "calls/s median"))
for mode, v in by.items():
    cpu = [c for c, _ in v]
    rate = [r for _, r in v]
    print("%-5s %4d %10.3f (%.3f-%.3f) %10.0f (%.0f-%.0f)" % (
        mode, len(v), statistics.median(cpu), min(cpu), max(cpu),
        statistics.median(rate), min(rate), max(rate)))
if "on" in by and "off" in by:
    on = statistics.median(c for c, _ in by["on"])
    off = statistics.median(c for c, _ in by["off"])
    print("accounting on / off, server CPU per call: %.3f (%+.1f %%)" % (on / off, (on / off - 1) * 100))
if "on" in by and "base" in by:
    on = statistics.median(c for c, _ in by["on"])
    base = statistics.median(c for c, _ in by["base"])
    print("accounting on / build without it: %.3f (%+.1f %%)" % (on / base, (on / base - 1) * 100))
PY
