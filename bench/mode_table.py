#!/usr/bin/env python3
"""The table of a bench that runs each workload in several modes of one nfs3d
(bench/krb5.sh: security flavors; bench/tls.sh: plain and TLS).

Reads lines "WORKLOAD MODE ROUND JSON" (nfs3bench's result line) on stdin.
As a script: mode_table.py COLUMN BASE_MODE prints the table, each rate also
as a ratio to the same workload's BASE_MODE rate. As a module: read_rows,
med and print_table for a bench that prints more from the same rows.
"""
import json
import statistics
import sys


def read_rows(lines):
    rows = {}
    for line in lines:
        w, mode, _, js = line.split(" ", 3)
        rows.setdefault((w, mode), []).append(json.loads(js))
    return rows


def med(runs, f):
    return statistics.median(f(r) for r in runs)


def print_table(rows, column, base_mode):
    print("| workload | %s | rate | vs %s | server CPU | client CPU | runs |" % (column, base_mode))
    print("|---|---|---|---|---|---|---|")
    for (w, mode), runs in rows.items():
        bulk = w != "getattr"
        rate = med(runs, lambda r: r["MBps"] if bulk else r["calls_per_sec"])
        base_runs = rows.get((w, base_mode))
        base = med(base_runs, lambda r: r["MBps"] if bulk else r["calls_per_sec"]) if base_runs else 0
        if bulk:
            cpu = med(runs, lambda r: r["server_cpu_sec"] / max(r["bytes"], 1) * 1e9)
            ccpu = med(runs, lambda r: r["client_cpu_sec"] / max(r["bytes"], 1) * 1e9)
            unit, rate_s = "s/GB", "%.0f MB/s" % rate
        else:
            cpu = med(runs, lambda r: r["server_cpu_sec"] / max(r["calls"], 1) * 1e6)
            ccpu = med(runs, lambda r: r["client_cpu_sec"] / max(r["calls"], 1) * 1e6)
            unit, rate_s = "us/call", "%.0f calls/s" % rate
        ratio = "%.2fx" % (rate / base) if base else "-"
        bad = sum(1 for r in runs if r.get("error") or r.get("verified") == "bad")
        print("| %s | %s | %s | %s | %.2f %s | %.2f %s | %d%s |" % (
            w, mode, rate_s, ratio, cpu, unit, ccpu, unit, len(runs),
            ", %d failed" % bad if bad else ""))


if __name__ == "__main__":
    print_table(read_rows(sys.stdin), sys.argv[1], sys.argv[2])
