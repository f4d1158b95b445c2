#!/usr/bin/python3
"""The chaos soak's table (bench/chaos.sh OUT): events with the longest pause
a client saw, and per client the calls, bytes verified, application errors,
ENOSPC errors while the export was full, interrupted nfs3bench runs and
retransmissions. Exit status 1 on any application error or verification
failure (also: ENOSPC outside a full window, a failed handover, a lock not
freed after a client reboot, a lock not reclaimed after a head failover or
failback, the VM run failing).

A client's progress marks: fsx_lite's progress lines (every 0.5 s or after
the next operation), every line of the tree copy loop (one per file copied,
checked or removed), the end of every good nfs3bench run (8 MiB written,
read back and read again). An event's pause is the longest gap between two
marks of one client that overlaps the event (from its start to 5 s after its
end); gaps across a client reboot count only for the reboot (from the kill to
fsx's first progress line in the new boot). The "alone" columns take only the
events whose window overlaps no other event's, and only pauses that began at
most 3 s before the event: what that fault alone costs.
"""
import glob
import json
import os
import re
import sys

SLACK = 5.0        # an event's window reaches this far past its end
ENOSPC_GRACE = 30  # write-back reports an error at the next fsync or close


def read_params(out):
    p = {}
    for line in open(f"{out}/params"):
        k, _, v = line.rstrip("\n").partition("\t")
        p[k] = v
    return p


def read_events(out):
    ev = []
    for line in open(f"{out}/events.tsv"):
        kind, s, e, detail = line.rstrip("\n").split("\t")
        ev.append({"type": kind, "start": float(s), "end": float(e), "detail": detail})
    return ev


def overlaps(a, b, s, e):
    return b > s and a < e


class Guest:
    """Counts and marks from the stamped console logs of every boot."""

    def __init__(self, out):
        self.marks = {}  # client -> [times], per boot
        self.fsx = dict(ops=0, bytes_verified=0, errors=0, enospc=0, mismatches=0)
        self.tree = dict(iterations=0, bytes=0, errors=0, enospc=0, verify_failed=0)
        self.enospc_times, self.error_lines, self.first_fsx = [], [], {}
        self.calls = self.retrans = 0
        for log in sorted(glob.glob(f"{out}/guest*.log"), key=lambda f: int(f[len(out) + 6:-4])):
            boot = int(log[len(out) + 6:-4])
            self.read_boot(log, boot)
            rpc = f"{out}/boot{boot}/rpc-nfs"
            if os.path.exists(rpc):
                f = open(rpc).read().split()
                if len(f) >= 3 and f[0] == "rpc":
                    self.calls += int(f[1])
                    self.retrans += int(f[2])

    def read_boot(self, log, boot):
        last = None
        for line in open(log, errors="replace"):
            t, _, text = line.rstrip("\n").partition(" ")
            try:
                t = float(t)
            except ValueError:
                continue
            if text.startswith("FSX"):
                self.marks.setdefault(f"fsx#{boot}", []).append(t)
                self.first_fsx.setdefault(boot, t)
                m = re.match(r"FSX (DONE )?ops=(\d+) bytes_verified=(\d+) errors=(\d+) "
                             r"enospc=(\d+) mismatches=(\d+)", text)
                if m:
                    last = [int(x) for x in m.groups()[1:]]
                elif text.startswith("FSX ENOSPC"):
                    self.enospc_times.append((t, f"boot {boot}: {text}"))
                elif text.startswith(("FSX ERROR", "FSX MISMATCH")):
                    self.error_lines.append(f"boot {boot}: {text}")
            elif text.startswith("TREE"):
                self.marks.setdefault(f"tree#{boot}", []).append(t)
                if text.startswith("TREE ITER"):
                    self.tree["iterations"] += 1
                    self.tree["bytes"] += int(text.rsplit("=", 1)[1])
                elif text.startswith("TREE ENOSPC"):
                    self.tree["enospc"] += 1
                    self.enospc_times.append((t, f"boot {boot}: {text}"))
                elif text.startswith("TREE ERROR"):
                    self.tree["errors"] += 1
                    self.error_lines.append(f"boot {boot}: {text}")
                elif text.startswith("TREE VERIFY-FAILED"):
                    self.tree["verify_failed"] += 1
                    self.error_lines.append(f"boot {boot}: {text}")
            elif text.startswith("NETEM") and "failed" in text:
                self.error_lines.append(f"boot {boot}: {text} (netem not applied)")
        if last:
            for k, v in zip(("ops", "bytes_verified", "errors", "enospc", "mismatches"), last):
                self.fsx[k] += v


class Streams:
    """nfs3bench runs: whole, ended by NFS3ERR_NOSPC (or a short WRITE) while
    the export was full, interrupted by a kill -9, or failed."""

    def __init__(self, out, events):
        self.by = {}
        self.marks = {}
        path = f"{out}/streams.tsv"
        for line in open(path) if os.path.exists(path) else []:
            s, e, proto, n, rc = line.split()
            s, e = float(s), float(e)
            st = self.by.setdefault(proto, dict(runs=0, ok=0, interrupted=0, enospc=0, errors=0,
                                                verify_failed=0, calls=0, bytes=0, retrans=0,
                                                error_lines=[]))
            st["runs"] += 1
            results = []
            for ln in open(f"{out}/streams/{proto}.{n}.out", errors="replace"):
                if ln.startswith("{"):
                    try:
                        results.append(json.loads(ln))
                    except ValueError:
                        pass
            for r in results:
                st["calls"] += r["calls"]
                st["retrans"] += r["retransmits"]
                if r["verified"] == "ok":
                    st["bytes"] += r["bytes"]
            errors = [r["error"] for r in results if r["error"]]
            if any(r["verified"] == "FAILED" for r in results):
                st["verify_failed"] += 1
                st["error_lines"].append(f"{proto} run {n}: verification FAILED: {errors}")
            elif rc == "0" and not errors and len(results) == 2:
                st["ok"] += 1
                self.marks.setdefault(f"nfs3bench-{proto}", []).append(e)
            else:
                why = errors or [open(f"{out}/streams/{proto}.{n}.out", errors="replace")
                                 .read().strip().splitlines()[-1:]]
                near = {ev["type"] for ev in events
                        if overlaps(s, e, ev["start"] - 2, ev["end"] + SLACK)}
                # Near a full export a WRITE may also be short (RFC 1813
                # allows it; nfs3bench does not send the rest).
                if "enospc" in near and ("NOSPC" in str(why) or "short write" in str(why)):
                    st["enospc"] += 1
                elif "kill9" in near or "failover" in near:
                    st["interrupted"] += 1
                elif "pause" in near and "MOUNT port" in str(why) and "no reply" in str(why):
                    # nfs3bench gives its MNT 10 s (its setup limit); the
                    # MDS was stopped longer: the run never began.
                    st["interrupted"] += 1
                elif "pause" in near and "JUKEBOX" in str(why):
                    # The cluster did not answer within the [ceph] timeout:
                    # nfs3d says "try later", as designed; the kernel client
                    # retries it, nfs3bench ends its run.
                    st["interrupted"] += 1
                else:
                    st["errors"] += 1
                    st["error_lines"].append(f"{proto} run {n} (rc {rc}, during {sorted(near)}): "
                                             f"{why}")


def longest_gap(marks, s, e, kernel, since=None):
    """The longest gap between two marks of one client (kernel client's or
    nfs3bench's) that overlaps [s, e] (and starts after `since`):
    (seconds, client)."""
    best = (0.0, "-")
    for client, ts in marks.items():
        if client.startswith("nfs3bench") == kernel:
            continue
        for a, b in zip(ts, ts[1:]):
            if since is not None and a < since:
                continue
            if overlaps(a, b, s, e) and b - a > best[0]:
                best = (b - a, client.split("#")[0])
    return best


def pauses(events, marks, first_fsx):
    """Per event type: count, details, and the longest pause of the kernel
    client's workloads and of the nfs3bench streams."""
    longest = {}
    for ev in events:
        s, e = ev["start"], ev["end"] + SLACK
        alone = not any(o is not ev and overlaps(o["start"], o["end"] + SLACK, s, e)
                        for o in events)
        kernel = longest_gap(marks, s, e, True)
        if ev["type"] == "reboot":
            after = [t for t in first_fsx.values() if t > ev["start"]]
            if after:
                kernel = (min(after) - ev["start"], "boot")
        streams = longest_gap(marks, s, e, False)
        cur = longest.setdefault(ev["type"], dict(n=0, details=[], kernel=(0.0, "-"),
                                                  streams=(0.0, "-"), alone=0,
                                                  alone_kernel=0.0, alone_streams=0.0))
        cur["n"] += 1
        if alone:  # and only pauses that began at most 3 s before it
            cur["alone"] += 1
            since = s - 3
            k = kernel[0] if ev["type"] == "reboot" else longest_gap(marks, s, e, True, since)[0]
            cur["alone_kernel"] = max(cur["alone_kernel"], k)
            cur["alone_streams"] = max(cur["alone_streams"],
                                       longest_gap(marks, s, e, False, since)[0])
        cur["details"].append(ev["detail"])
        cur["kernel"] = max(cur["kernel"], kernel)
        cur["streams"] = max(cur["streams"], streams)
    return longest


def failover_notes(details):
    """The failover rows' notes (how long keepalived and the heads took,
    whether the guest's lock was reclaimed each time) and their problems."""
    def secs(what):
        return [float(m.group(1)) for d in details for m in [re.search(what + r" ([0-9.]+) s", d)] if m]

    def span(v):
        return f"{min(v):.1f}-{max(v):.1f} s" if v else "-"

    bad = [f"failover: {d}" for d in details
           if d.startswith("FAILED") or re.search(r"lock after failover: (?!held|none yet)", d)
           or re.search(r"after failback: (?!held|none yet)", d)]
    held = sum("after failover: held" in d for d in details)
    held_back = sum("after failback: held" in d for d in details)
    n = len(details)
    notes = (f"{n - sum(d.startswith('FAILED') for d in details)} completed; serving after "
             f"failover {span(secs('failover'))}, failback {span(secs('failback'))}; the guest's "
             f"lock reclaimed after failover {held}/{n}, after failback {held_back}/{n}")
    return notes, bad


def main():
    out = sys.argv[1]
    p = read_params(out)
    events = read_events(out)
    g = Guest(out)
    st = Streams(out, events)
    marks = dict(g.marks)
    marks.update(st.marks)
    longest = pauses(events, marks, g.first_fsx)
    t0, t1 = float(p["t0"]), float(p["t1"])
    problems = list(g.error_lines)

    print(f"chaos soak: {p['minutes']} min ({(t1 - t0) / 60:.1f} measured), seed {p['seed']}, "
          f"events {p['events']}, {p['boots']} boot(s) of the client VM")
    print(f"replay: bench/chaos.sh {p['args']}")
    print()
    print(f"{'':<16} {'longest pause s, all':>31}  {'alone':>17}")
    print(f"{'event':<10} {'count':>5}  {'kernel client':>16}  {'nfs3bench':>12}  {'count':>5} "
          f"{'kernel':>6} {'nfs3b.':>6}  notes")
    for kind in ("kill9", "takeover", "netem", "enospc", "pause", "reboot", "failover"):
        if kind not in longest:
            continue
        ev = longest[kind]
        n, details = ev["n"], ev["details"]
        notes = ""
        if kind == "takeover":
            bad = [d for d in details if d.startswith("FAILED")]
            problems += [f"takeover {d}" for d in bad]
            notes = f"{n - len(bad)} completed, {len(bad)} failed"
        elif kind == "netem":
            notes = "; ".join(sorted(set(details)))
        elif kind == "pause":
            notes = ", ".join(f"{d} {details.count(d)}" for d in sorted(set(details)))
        elif kind == "reboot":
            held = sum("before: 1 " in d for d in details)
            secs = [float(m.group(1)) for d in details
                    for m in [re.search(r"another host ([0-9.]+) s", d)] if m]
            notes = (f"lock held at the kill {held}/{n}, free for another host after the new "
                     f"boot {len(secs)}/{n}"
                     + (f" ({min(secs):.1f}-{max(secs):.1f} s after its clients started)" if secs else ""))
            problems += [f"reboot: {d}" for d in details
                         if "free for another host none" in d or "before: 1 " not in d]
        elif kind == "failover":
            notes, bad = failover_notes(details)
            problems += bad
        k, st_ = ev["kernel"], ev["streams"]
        print(f"{kind:<10} {n:>5}  {k[0]:>8.1f} ({k[1]:>5})  {st_[0]:>6.1f} ({st_[1][10:]:>3})  "
              f"{ev['alone']:>5} {ev['alone_kernel']:>6.1f} {ev['alone_streams']:>6.1f}  {notes}")
    print()

    windows = [(ev["start"], ev["end"] + ENOSPC_GRACE) for ev in events if ev["type"] == "enospc"]
    outside = [w for t, w in g.enospc_times if not any(a <= t <= b for a, b in windows)]
    problems += [f"ENOSPC outside a full window: {w}" for w in outside]
    print(f"{'client':<24} {'calls':>10} {'bytes verified':>15} {'app errors':>10} "
          f"{'ENOSPC (full)':>13} {'interrupted':>11} {'retrans':>8}")
    f, tr = g.fsx, g.tree
    print(f"{'kernel: fsx_lite':<24} {'-':>10} {f['bytes_verified']:>15} "
          f"{f['errors'] + f['mismatches']:>10} {f['enospc']:>13} {'-':>11} {'-':>8}"
          f"   {f['ops']} ops, {f['mismatches']} mismatches (bytes: every read compared)")
    print(f"{'kernel: tree copy':<24} {'-':>10} {tr['bytes']:>15} "
          f"{tr['errors'] + tr['verify_failed']:>10} {tr['enospc']:>13} {'-':>11} {'-':>8}"
          f"   {tr['iterations']} copies checked, {tr['verify_failed']} failed md5sum -c")
    print(f"{'kernel: RPC (all boots)':<24} {g.calls:>10} {'':>15} {'':>10} {'':>13} {'':>11} "
          f"{g.retrans:>8}")
    total_bytes = f["bytes_verified"] + tr["bytes"]
    total_errors = f["errors"] + f["mismatches"] + tr["errors"] + tr["verify_failed"]
    total_calls = g.calls
    for proto, s in sorted(st.by.items()):
        print(f"{'nfs3bench ' + proto:<24} {s['calls']:>10} {s['bytes']:>15} "
              f"{s['errors'] + s['verify_failed']:>10} {s['enospc']:>13} {s['interrupted']:>11} "
              f"{s['retrans']:>8}   {s['ok']}/{s['runs']} runs whole")
        total_bytes += s["bytes"]
        total_calls += s["calls"]
        total_errors += s["errors"] + s["verify_failed"]
        problems += s["error_lines"]
    print(f"{'total':<24} {total_calls:>10} {total_bytes:>15} {total_errors:>10}")
    print()
    if p.get("vm_rc", "0") != "0":
        problems.append(f"the last VM run exited {p['vm_rc']}")
    if problems:
        print("PROBLEMS:")
        for line in problems:
            print(f"  {line}")
        return 1
    print("no application errors, no verification failures")
    return 0


if __name__ == "__main__":
    sys.exit(main())
