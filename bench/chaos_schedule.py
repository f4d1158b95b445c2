#!/usr/bin/python3
"""The chaos soak's fault schedule (bench/chaos.sh), a pure function of the
seed, the length and the event types: one line per action,
  OFFSET_S ACTION ARG
OFFSET_S from the start of the soak. Actions: kill9 DOWN_S (kill -9 nfs3d,
restart it DOWN_S later), takeover, netem-on SPEC (SPEC with '_' for spaces),
netem-off, enospc-on, enospc-off, reboot (the client VM killed while it holds
a lock, booted again), pause-on mds|osd, pause-off (a Ceph daemon stopped),
failover-on, failover-off (head1's machine killed, and booted again 20-45 s
later). First each type alone, in the order given, with quiet time around
it; then, until a minute before the end, the types mixed: a new event every
10-40 s, netem and ENOSPC lasting 20-90 s, pauses 10-40 s, failovers 20-45 s,
so that kills, handovers and reboots fall into them.
usage: chaos_schedule.py SEED SECONDS TYPES(comma-separated)
"""
import random
import sys

NETEM = ["loss_3%", "loss_10%", "duplicate_10%", "delay_3ms_reorder_25%_50%",
         "delay_1ms_loss_2%_duplicate_5%_reorder_10%"]
# How long a type keeps the soak busy when alone (seconds after its start
# before the next one may come), and its weight when mixed.
ALONE_GAP = {"kill9": 40, "takeover": 60, "netem": 80, "enospc": 60, "reboot": 180, "pause": 70,
             "failover": 120}
WEIGHT = {"kill9": 3, "takeover": 3, "netem": 2, "enospc": 1, "reboot": 1, "pause": 2,
          "failover": 1}
DURATION = {"netem": (20, 90), "enospc": (15, 45), "pause": (10, 40), "failover": (20, 45)}
MIN_REBOOT_GAP = 300  # a reboot costs a boot of the emulated VM


def main():
    seed, seconds, types = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3].split(",")
    rng = random.Random(seed)
    plan = []
    busy_until = {"netem": -1.0, "enospc": -1.0, "pause": -1.0, "failover": -1.0}
    last_reboot = -1e9

    def add(t, kind):
        nonlocal last_reboot
        if kind == "kill9":
            plan.append((t, "kill9", f"{rng.uniform(0.5, 3):.1f}"))
        elif kind in ("takeover", "reboot"):
            plan.append((t, kind, "-"))
            if kind == "reboot":
                last_reboot = t
        else:
            dur = rng.uniform(*DURATION[kind])
            arg = "-"
            if kind == "netem":
                arg = rng.choice(NETEM)
            elif kind == "pause":
                arg = rng.choice(["mds", "osd"])
            plan.append((t, f"{kind}-on", arg))
            plan.append((t + dur, f"{kind}-off", "-"))
            busy_until[kind] = t + dur

    t = 30.0
    for kind in types:  # each alone
        add(t, kind)
        t += ALONE_GAP[kind]
    end = seconds - 60
    while True:
        t += rng.uniform(10, 40)
        if t >= end:
            break
        kinds = [k for k in types
                 if busy_until.get(k, -1) < t and (k != "reboot" or t - last_reboot >= MIN_REBOOT_GAP)]
        if not kinds:
            continue
        add(t, rng.choices(kinds, [WEIGHT[k] for k in kinds])[0])
    for kind in busy_until:  # nothing left on at the end
        plan = [(min(at, end), a, arg) if a == f"{kind}-off" else (at, a, arg) for at, a, arg in plan]
    for at, action, arg in sorted(plan, key=lambda p: p[0]):
        print(f"{at:.1f} {action} {arg}")


if __name__ == "__main__":
    main()
