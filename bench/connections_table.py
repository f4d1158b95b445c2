#!/usr/bin/env python3
"""The table of bench/connections.sh: medians over the runs with min..max.

  connections_table.py RESULTS.jsonl CROWD NPROC UPTIME
"""
import json
import statistics
import sys
from collections import defaultdict


def fmt(values, unit="", digits=0, ratio=False):
    values = [v for v in values if v is not None]
    if not values:
        return "-"
    f = "{:.%df}" % (2 if ratio else digits)
    med = f.format(statistics.median(values))
    if len(values) == 1:
        return med + unit
    return "%s%s (%s..%s)" % (med, unit, f.format(min(values)), f.format(max(values)))


def main():
    path, crowd, nproc, uptime = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    # data[server][test][rep][key] = result dict or value
    data = defaultdict(lambda: defaultdict(lambda: defaultdict(dict)))
    for line in open(path):
        row = json.loads(line)
        data[row["server"]][row["test"]][row["rep"]][row["key"]] = row.get("r", row.get("value"))

    def first_rep(d):
        for srv in data:
            for test in data[srv]:
                reps = data[srv][test]
                if reps and any(reps[r] is d for r in reps):
                    return reps[min(reps)]
        return None

    def per_rep(srv, test, fn):
        out = []
        for rep in sorted(data[srv][test]):
            try:
                out.append(fn(data[srv][test][rep]))
            except (KeyError, TypeError, ZeroDivisionError):
                out.append(None)
        return out

    def ops(r):
        return r["ops_per_sec"] if not r.get("error") or r.get("ops", 0) > 0 else None

    def cpu_us(r):
        return r["server_cpu_sec"] * 1e6 / r["calls"] if r["server_cpu_sec"] >= 0 else None

    def failed(r):
        return r.get("errors", 0) if "ops" in r else None

    rows = [
        ("a", "busy GETATTR/s, 16 conns x 8, alone", lambda d: ops(d["busy_alone"]), "", 0, False),
        ("a", "busy GETATTR/s beside the crowd", lambda d: ops(d["busy_beside_crowd"]), "", 0, False),
        ("a", "  ratio with / without crowd (>= 0.90)",
         lambda d: ops(d["busy_beside_crowd"]) / ops(d["busy_alone"]), "", 0, True),
        ("a", "  busy + crowd calls/s over busy alone",
         lambda d: (ops(d["busy_beside_crowd"]) + crowd) / ops(d["busy_alone"]), "", 0, True),
        ("a", "server CPU per crowd call, us (crowd alone)",
         lambda d: d["crowd_only_cpu_sec_per_sec"] * 1e6 / crowd, "", 1, False),
        ("a", "crowd calls answered", lambda d: d["crowd"]["ops"], "", 0, False),
        ("a", "crowd calls failed (want 0)", lambda d: failed(d["crowd"]), "", 0, False),
        ("a", "busy calls failed beside crowd (want 0)", lambda d: failed(d["busy_beside_crowd"]),
         "", 0, False),
        ("a", "crowd reconnects (server closed)", lambda d: d["crowd"]["reconnects"], "", 0, False),
        ("a", "crowd GETATTR p99 ms", lambda d: d["crowd"]["p99_ms"], "", 2, False),
        ("a", "server RSS with crowd, MiB", lambda d: d["rss_with_crowd_kib"] / 1024, "", 1, False),
        # Only the first crowd meets a server that never held one: later ones
        # reuse the memory the first left to the allocator.
        ("a", "RSS growth per crowd conn, 1st run, KiB (<= 16)",
         lambda d: (d["rss_with_crowd_kib"] - d["rss_before_kib"]) / crowd
         if d is first_rep(d) else None, "", 1, False),
        ("b", "1000 conns x 1 GETATTR, ops/s", lambda d: ops(d["conns1000"]), "", 0, False),
        ("b", "1 conn x 1000 in flight, ops/s", lambda d: ops(d["conn1_inflight1000"]), "", 0, False),
        ("b", "  ratio 1000 conns / 1 conn (>= 0.80)",
         lambda d: ops(d["conns1000"]) / ops(d["conn1_inflight1000"]), "", 0, True),
        ("b", "server CPU per call, us, 1000 conns", lambda d: cpu_us(d["conns1000"]), "", 1, False),
        ("b", "  ... 1 conn x 1000", lambda d: cpu_us(d["conn1_inflight1000"]), "", 1, False),
        ("c", "light client GETATTR p99 ms, alone", lambda d: d["light_alone"]["p99_ms"], "", 3, False),
        ("c", "  ... beside a client with 256 in flight", lambda d: d["light_beside_busy"]["p99_ms"],
         "", 3, False),
        ("c", "  p99 ratio beside / alone (<= 2.00)",
         lambda d: d["light_beside_busy"]["p99_ms"] / d["light_alone"]["p99_ms"], "", 0, True),
        ("c", "  p50 ratio beside / alone",
         lambda d: d["light_beside_busy"]["p50_ms"] / d["light_alone"]["p50_ms"], "", 0, True),
        ("c", "busy client (256 in flight) ops/s", lambda d: ops(d["busy256"]), "", 0, False),
    ]
    servers = [s for s in ("nfs3d", "ganesha") if s in data]
    width = 48
    print("%-*s %s" % (width, "", "".join("%-28s" % s for s in servers)))
    for test, label, fn, unit, digits, ratio in rows:
        if not any(data[s][test] for s in servers):
            continue
        cells = [fmt(per_rep(s, test, fn), unit, digits, ratio) for s in servers]
        print("%-*s %s" % (width, label, "".join("%-28s" % c for c in cells)))
    runs = max((len(data[s][t]) for s in servers for t in data[s]), default=0)
    print("median (min..max) of %d runs per server, interleaved; crowd = %d connections x 1 GETATTR/s;"
          " %s cores; %s" % (runs, crowd, nproc, uptime.strip()))
    errors = [(s, t, rep, k, r["error"]) for s in servers for t in data[s] for rep in data[s][t]
              for k, r in data[s][t][rep].items() if isinstance(r, dict) and r.get("error")]
    for s, t, rep, k, e in errors[:12]:
        print("  %s %s run %d %s: %s" % (s, t, rep, k, e[:160]))


if __name__ == "__main__":
    main()
