#!/usr/bin/python3
"""Load for the per-origin views: from a given source address, as a given uid,
mounts an export (MOUNT v3 over TCP) and sends GETATTRs on its root (and a
few LOOKUPs of a missing name, which fail with NOENT) until the time is up.

usage: origin_load.py SOURCE_ADDR NFS_PORT MOUNT_PORT EXPORT UID SECONDS [CALLS_PER_S]
"""
import socket
import struct
import sys
import time


def auth_sys(uid):
    machine = b"loadgen"
    body = struct.pack(">II", 0, len(machine)) + machine + b"\0" * (-len(machine) % 4)
    body += struct.pack(">III", uid, uid, 0)
    return struct.pack(">II", 1, len(body)) + body + struct.pack(">II", 0, 0)


class Conn:
    def __init__(self, src, port):
        self.s = socket.socket()
        self.s.bind((src, 0))
        self.s.connect(("127.0.0.1", port))
        self.xid = 1

    def call(self, prog, vers, proc, cred, args):
        self.xid += 1
        msg = struct.pack(">6I", self.xid, 0, 2, prog, vers, proc) + cred + args
        self.s.sendall(struct.pack(">I", 0x80000000 | len(msg)) + msg)
        mark = struct.unpack(">I", self.recv(4))[0] & 0x7FFFFFFF
        reply = self.recv(mark)
        # xid, REPLY, MSG_ACCEPTED, verifier (flavor, len 0), accept_stat
        return reply[24:]

    def recv(self, n):
        data = b""
        while len(data) < n:
            chunk = self.s.recv(n - len(data))
            if not chunk:
                raise EOFError
            data += chunk
        return data


def xdr_string(b):
    return struct.pack(">I", len(b)) + b + b"\0" * (-len(b) % 4)


def main():
    src, nfs_port, mount_port, export, uid, seconds = sys.argv[1:7]
    per_second = float(sys.argv[7]) if len(sys.argv) > 7 else 0
    cred = auth_sys(int(uid))
    mnt = Conn(src, int(mount_port))
    res = mnt.call(100005, 3, 1, cred, xdr_string(export.encode()))
    status, fh_len = struct.unpack(">II", res[:8])
    if status != 0:
        sys.exit("MNT %s: status %d" % (export, status))
    fh = res[8:8 + fh_len]
    nfs = Conn(src, int(nfs_port))
    end = time.time() + float(seconds)
    n = 0
    while time.time() < end:
        if n % 10 == 9:
            nfs.call(100003, 3, 3, cred, xdr_string(fh) + xdr_string(b"no-such-file"))
        else:
            nfs.call(100003, 3, 1, cred, xdr_string(fh))
        n += 1
        if per_second:
            time.sleep(1 / per_second)
    print("%s: %d calls" % (src, n))


main()
