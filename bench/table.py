#!/usr/bin/env python3
"""Prints bench/run.sh's table from its results.jsonl (medians over runs).

argv: results.jsonl iperf.txt nfs3d_peak_rss_kb ganesha_peak_rss_kb ncpu uptime
      [disk_ceiling.jsonl [copy_floor.jsonl [cephfs_ceiling.jsonl]]]
"""
import json
import os
import statistics
import sys
from collections import OrderedDict, defaultdict

# The server in ganesha's slot: ganesha, or another nfs3d (NFS3D_BENCH_PEER_NFS3D).
PEER = os.environ.get("NFS3D_BENCH_PEER_LABEL", "ganesha")
# The copy floor that nfs3d's TCP READ path has here: "read" (pread+send)
# or "sendfile" (bench/run.sh sets it from nfs3d's [tcp] sendfile).
TCP_READ_FLOOR = os.environ.get("TABLE_TCP_READ_FLOOR", "read")
READ_FLOOR_NAMES = {"read": "pread+send", "sendfile": "sendfile"}


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def spread(xs):
    """(max - min) / median of the runs, in percent."""
    xs = [x for x in xs if x is not None]
    if len(xs) < 2 or not statistics.median(xs):
        return None
    return (max(xs) - min(xs)) / statistics.median(xs) * 100


def rate(run, io):
    """A run's MB/s (bulk rows) or calls/s, or None for a run without time."""
    if run["seconds"] <= 0:
        return None
    return run["bytes"] / run["seconds"] / 1e6 if io else run["calls"] / run["seconds"]


def paired_ratio_spread(by, io):
    """Spread of the per-run ratios nfs3d / peer, run i against run i.

    The two servers' runs of one rep follow each other, so a slow spell of
    the machine lowers both: this spread is what is left of the noise once
    the machine's share is out, next to each server's own spread.
    """
    def rates(srv):
        return {r["rep"]: rate(r["r"], io) for r in by.get(srv, []) if not r["r"].get("error")}
    n, g = rates("nfs3d"), rates("ganesha")
    return spread([n[k] / g[k] for k in n if n[k] and g.get(k)])


def fmt(v, digits=0):
    if v is None:
        return "-"
    return f"{v:,.{digits}f}"


def main():
    results, iperf_file, rss_n, rss_g, ncpu, up = sys.argv[1:7]
    ceiling_file = sys.argv[7] if len(sys.argv) > 7 else None
    floor_file = sys.argv[8] if len(sys.argv) > 8 else None
    cephfs_file = sys.argv[9] if len(sys.argv) > 9 else None
    rows = OrderedDict()
    for line in open(results):
        line = line.strip()
        if not line:
            continue
        rec = json.loads(line)
        rows.setdefault(rec["id"], defaultdict(list))[rec["server"]].append(rec)

    iperf = [float(x) for x in open(iperf_file).read().split()]
    iperf_mbs = statistics.median(iperf) / 8 if iperf else None  # MB/s
    floors = copy_floors(floor_file) if floor_file else {}

    head = (f"| workload | nfs3d | {PEER} | ratio | spread (n, g) | ratio spread | nfs3d CPU | {PEER} CPU "
            f"| CPU ratio | nfs3d / iperf3 | nfs3d CPU / copy floor | server cores (n, g) | client CPU (n, g) | calls/fsync (nfs3d, {PEER}) | retrans (n, g) "
            "| UDP rcvbuf drops (n, g) | peak RSS MiB (n, g) | verified |")
    print()
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    for wid, by in rows.items():
        io = "write" in wid or "read" in wid
        stats = {}
        for srv in ("nfs3d", "ganesha"):
            recs = by.get(srv, [])
            good = [r["r"] for r in recs if not r["r"].get("error")]
            st = {"n": len(good), "errors": len(recs) - len(good)}
            runs = [rate(r, io) for r in good]
            if io:
                # seconds of server CPU per GB moved
                st["cpu"] = median([r["server_cpu_sec"] / (r["bytes"] / 1e9) for r in good
                                    if r.get("server_cpu_sec", -1) >= 0 and r["bytes"] > 0])
                st["client_cpu"] = median([r["client_cpu_sec"] / (r["bytes"] / 1e9) for r in good
                                           if r.get("client_cpu_sec", -1) >= 0 and r["bytes"] > 0])
            else:
                # microseconds of server CPU per RPC
                st["cpu"] = median([r["server_cpu_sec"] * 1e6 / r["calls"] for r in good
                                    if r.get("server_cpu_sec", -1) >= 0 and r["calls"] > 0])
                st["client_cpu"] = median([r["client_cpu_sec"] * 1e6 / r["calls"] for r in good
                                           if r.get("client_cpu_sec", -1) >= 0 and r["calls"] > 0])
            st["perf"], st["spread"] = median(runs), spread(runs)
            # cores the server kept busy: CPU seconds per wall second
            st["cores"] = median([r["server_cpu_sec"] / r["seconds"] for r in good
                                  if r.get("server_cpu_sec", -1) >= 0 and r["seconds"] > 0])
            syncs = [(r["r"].get("calls", 0), r["syncs"]) for r in recs
                     if r["syncs"] >= 0 and not r["r"].get("error")]
            st["cps"] = median([c / s for c, s in syncs if s > 0]) if syncs else None
            st["no_sync_calls"] = bool(syncs) and all(s == 0 for _, s in syncs)
            st["retrans"] = sum(r["r"].get("retransmits", 0) for r in recs)
            st["drops"] = sum(r.get("rcvbuf_errors", 0) for r in recs)
            # the highest of the runs' own peaks (VmHWM reset before each run)
            peaks = [r["peak_rss_kb"] for r in recs if r.get("peak_rss_kb", 0) > 0]
            st["peak_mib"] = max(peaks) / 1024 if peaks else None
            st["verified"] = sorted({r["r"].get("verified", "no") for r in recs})
            stats[srv] = st
        n, g = stats["nfs3d"], stats["ganesha"]
        unit = "MB/s" if io else "RPC/s"
        cpu_unit = "s/GB" if io else "µs/RPC"
        ratio = n["perf"] / g["perf"] if n["perf"] and g["perf"] else None
        cpu_ratio = n["cpu"] / g["cpu"] if n["cpu"] and g["cpu"] else None

        def cps(st):
            if st["cps"] is not None:
                return fmt(st["cps"], 1)
            return "no fsync" if st["no_sync_calls"] else "-"

        extra = f"{cps(n)}, {cps(g)}" if "filesync" in wid else ""
        ver = "/".join(f"{k}" for k in n["verified"]) + " , " + "/".join(g["verified"])
        errs = ""
        if n["errors"] or g["errors"]:
            errs = f" (failed runs: nfs3d {n['errors']}, {PEER} {g['errors']})"
        cpu_digits = 2 if io else 1
        # How far a bulk row is from the wire and from the floor of the same
        # direction and path: recv+pwrite under WRITE; under READ sendfile,
        # or pread+send for TCP when nfs3d copies (its [tcp] sendfile = off,
        # or auto for this loopback client; TABLE_TCP_READ_FLOOR says which).
        wire = n["perf"] / iperf_mbs if io and wid.startswith("tcp") and iperf_mbs and n["perf"] else None
        read_floor = TCP_READ_FLOOR if wid.startswith("tcp") else "sendfile"
        floor = floors.get("write" if "write" in wid else read_floor) if io else None
        over_floor = n["cpu"] / floor if floor and n["cpu"] else None
        print(f"| {wid}{errs} | {fmt(n['perf'])} {unit} | {fmt(g['perf'])} {unit} | "
              f"{fmt(ratio, 2)}x | {fmt(n['spread'])} %, {fmt(g['spread'])} % | "
              f"{fmt(paired_ratio_spread(by, io))} % | "
              f"{fmt(n['cpu'], cpu_digits)} {cpu_unit} | "
              f"{fmt(g['cpu'], cpu_digits)} {cpu_unit} | {fmt(cpu_ratio, 2)}x | "
              f"{fmt(wire, 2) + 'x' if wire else ''} | {fmt(over_floor, 2) + 'x' if over_floor else ''} | "
              f"{fmt(n['cores'], 2)}, {fmt(g['cores'], 2)} | "
              f"{fmt(n['client_cpu'], cpu_digits)}, {fmt(g['client_cpu'], cpu_digits)} | {extra} | "
              f"{n['retrans']}, {g['retrans']} | {n['drops']}, {g['drops']} | "
              f"{fmt(n['peak_mib'])}, {fmt(g['peak_mib'])} | {ver} |")
    print()
    if iperf_mbs:
        print(f"loopback TCP baseline (iperf3, median of {len(iperf)}): {iperf_mbs:,.0f} MB/s "
              f"({iperf_mbs * 8 / 1000:.1f} Gbit/s; spread {fmt(spread(iperf))} %)")
    if floor_file:
        print_copy_floor(floor_file)
    if cephfs_file:
        print_cephfs_ceiling(cephfs_file, rows)
    if ceiling_file:
        print_disk_ceiling(ceiling_file, rows.get("tcp-write-filesync-64k-n16-disk"))
    rss_ratio = f" (ratio {int(rss_n) / int(rss_g):.2f}x)" if int(rss_g) else ""
    print(f"peak RSS over the whole table: nfs3d {int(rss_n) / 1024:,.0f} MiB, "
          f"{PEER} {int(rss_g) / 1024:,.0f} MiB{rss_ratio}")
    print(f"medians of the runs per workload; {ncpu} CPUs; {up.strip()}")
    print("CPU = utime+stime of the server process over the timed part (/proc/PID/stat); "
          f"ratio = nfs3d / {PEER}; spread = (max - min) / median of the runs; "
          f"ratio spread = the spread of the runs' own ratios (nfs3d's run i / {PEER}'s run i, "
          "which follows it), the noise left once the machine's share is out; "
          "nfs3d / iperf3 = a TCP bulk row against the loopback baseline below; nfs3d CPU / copy floor = "
          "its CPU per GB against the floor below of its direction (recv+pwrite for WRITE; for READ "
          f"{READ_FLOOR_NAMES[TCP_READ_FLOOR]} over TCP, sendfile over UDP); "
          "server cores = server CPU seconds per second; client CPU = the load client's (nfs3bench), in the same "
          "unit, against each server: client and server share the CPUs")


def read_jsonl_by_mode(path):
    by_mode = defaultdict(list)
    for line in open(path):
        if line.strip():
            rec = json.loads(line)
            by_mode[rec.pop("mode")].append(rec)
    return by_mode


def copy_floors(path):
    """Median server CPU s/GB per copy_floor mode (write, read, sendfile)."""
    return {mode: median([r["server_cpu_s_per_gb"] for r in recs])
            for mode, recs in read_jsonl_by_mode(path).items()}


def print_copy_floor(path):
    """The least server CPU per GB of copying file data over loopback TCP
    (bench/copy_floor.cc): the floor under the table's CPU columns."""
    by_mode = read_jsonl_by_mode(path)
    parts = []
    for mode, what in (("write", "recv+pwrite"), ("read", "pread+send"),
                       ("sendfile", "sendfile")):
        recs = by_mode.get(mode)
        if recs:
            cpu = median([r["server_cpu_s_per_gb"] for r in recs])
            mbs = median([r["mb_per_s"] for r in recs])
            parts.append(f"{what} {cpu:.2f} s/GB at {mbs:,.0f} MB/s")
    if parts:
        print(f"copy floor (one thread, 1 MiB blocks, tmpfs file, loopback TCP, no RPC; median of "
              f"{len(by_mode.get('write', []))}): " + ", ".join(parts))


def print_cephfs_ceiling(path, rows):
    """The same workloads straight on libcephfs, no NFS (bench/cephfs_ceiling.cc):
    the ceiling of an NFS server on the CephFS backend, and each server's share."""
    by_id = defaultdict(list)
    for line in open(path):
        if line.strip():
            rec = json.loads(line)
            by_id[rec["id"]].append(rec)
    if not by_id:
        return
    print("direct libcephfs, no NFS (bench/cephfs_ceiling.cc, same threads as calls in flight; "
          "CPU = that process's, libcephfs included):")
    for wid, recs in by_id.items():
        bulk = "mb_per_s" in recs[0]
        key, cpu_key = ("mb_per_s", "cpu_s_per_gb") if bulk else ("calls_per_s", "cpu_us_per_call")
        rate, cpu = median([r[key] for r in recs]), median([r[cpu_key] for r in recs])
        line = (f"  {wid}: {fmt(rate)} {'MB/s' if bulk else 'calls/s'} (spread {fmt(spread([r[key] for r in recs]))} %), "
                f"CPU {fmt(cpu, 2)} {'s/GB' if bulk else 'µs/call'}")
        row = rows.get(wid, {})
        shares = []
        for srv in ("nfs3d", "ganesha"):
            good = [r["r"] for r in row.get(srv, []) if not r["r"].get("error")]
            per = [(r["bytes"] if bulk else r["calls"]) / r["seconds"] / (1e6 if bulk else 1)
                   for r in good if r["seconds"] > 0]
            v = median(per)
            if v and rate:
                shares.append(f"{srv} {v / rate:.2f}x")
        if shares:
            line += "; " + ", ".join(shares) + " of it"
        print(line)


def print_disk_ceiling(path, filesync_row):
    """The disk's FILE_SYNC ceiling (bench/disk_sync_ceiling.cc), and each
    server's FILE_SYNC figure as a share of the ceiling of its own strategy."""
    by_mode = {mode: [r["mb_per_s"] for r in recs]
               for mode, recs in read_jsonl_by_mode(path).items()}
    gathered, per_call = median(by_mode.get("gathered", [])), median(by_mode.get("per-call", []))
    batch, once = median(by_mode.get("batch", [])), median(by_mode.get("once", []))
    if gathered is None or per_call is None:
        return
    line = (f"disk FILE_SYNC ceiling (64 KiB x 16 writers, no network, median of "
            f"{len(by_mode.get('gathered', []))}): gathered fsyncs {gathered:,.0f} MB/s, one fsync per "
            f"write {per_call:,.0f} MB/s, ratio {gathered / per_call:.2f}x")
    if batch is not None:
        line += f"; all 16 writes in each fsync {batch:,.0f} MB/s"
    if once is not None:
        line += f"; one fsync for the whole file (the disk's bandwidth) {once:,.0f} MB/s"
    n = g = None
    if filesync_row:
        def share(srv):
            good = [r["r"] for r in filesync_row.get(srv, []) if not r["r"].get("error")]
            return median([r["bytes"] / r["seconds"] / 1e6 for r in good if r["seconds"] > 0])
        n, g = share("nfs3d"), share("ganesha")
        if n and g:
            line += (f"; nfs3d reaches {n / gathered:.0%} of the gathered ceiling, "
                     f"{PEER} {g / per_call:.0%} of the one-per-write ceiling")
    print(line)
    if g:
        # With 16 writes in flight no server gathers more than 16 per sync,
        # and none moves data faster than the disk takes it.
        for what, v in (("all 16 writes in each fsync", batch), ("the disk's bandwidth", once)):
            if v is not None:
                print(f"  {what}: {v / g:.2f}x {PEER}'s FILE_SYNC figure")


if __name__ == "__main__":
    main()
