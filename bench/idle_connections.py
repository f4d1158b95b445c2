#!/usr/bin/env python3
"""Memory per TCP connection of a running nfs3d: opens N connections to it,
sends one NULL call on each (so each holds its read buffer, as a mount that
calls now and then does), and reports the server's RSS growth per connection.

  idle_connections.py PID HOST PORT N
"""
import resource
import socket
import struct
import sys
import time


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def null_call(xid):
    body = struct.pack(">IIIIII", xid, 0, 2, 100003, 3, 0) + struct.pack(">IIII", 0, 0, 0, 0)
    return struct.pack(">I", 0x80000000 | len(body)) + body


def main():
    pid, host, port, n = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, n + 1024), hard))
    before = rss_kib(pid)
    socks = []
    for i in range(n):
        s = socket.create_connection((host, port))
        s.sendall(null_call(i + 1))
        socks.append(s)
    answered = 0
    for s in socks:
        s.settimeout(10)
        data = s.recv(64)
        answered += len(data) >= 28
    time.sleep(1)
    after = rss_kib(pid)
    per = (after - before) * 1024 / n
    print(f"{n} connections, {answered} answered: server RSS {before} -> {after} KiB, "
          f"{per / 1024:.1f} KiB per connection")
    for s in socks:
        s.close()
    return 0 if answered == n else 1


if __name__ == "__main__":
    sys.exit(main())
