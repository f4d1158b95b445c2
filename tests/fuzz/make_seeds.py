#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets in tests/fuzz/corpus/<target>/.

Seeds are small valid (and a few invalid) inputs from which libFuzzer mutates;
regenerate with `tests/fuzz/make_seeds.py` after changing a target's input
format."""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


def u32(v):
    return struct.pack(">I", v & 0xFFFFFFFF)


def u64(v):
    return struct.pack(">Q", v)


def opaque(b):
    if isinstance(b, str):
        b = b.encode()
    return u32(len(b)) + b + b"\0" * ((4 - len(b) % 4) % 4)


def auth_sys(uid=0, gid=0, gids=(), machine="fuzz"):
    body = u32(1) + opaque(machine) + u32(uid) + u32(gid) + u32(len(gids))
    body += b"".join(u32(g) for g in gids)
    return u32(1) + opaque(body)


AUTH_NONE = u32(0) + u32(0)


def call(xid, prog, vers, proc, args=b"", cred=None, verf=AUTH_NONE, rpcvers=2):
    cred = auth_sys() if cred is None else cred
    return u32(xid) + u32(0) + u32(rpcvers) + u32(prog) + u32(vers) + u32(proc) + cred + verf + args


def mark(n, last=True):
    return u32((0x80000000 if last else 0) | n)


def write(target, name, data):
    d = os.path.join(HERE, "corpus", target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


NFS, MOUNT, NFSACL = 100003, 100005, 100227
ROOT, FILE, DIR, EXPO = b"\0\0\0\4ROOT", b"\0\0\0\4FILE", b"\0\0\0\4DIR_", b"\0\0\0\4EXPO"


def nfsacl(entries, flag=0):
    """An NFSACL acl: count, then the (type, id, perm) entries."""
    body = b"".join(u32(t | flag) + u32(i) + u32(p) for t, i, p in entries)
    return u32(len(entries)) + u32(len(entries)) + body


# u::rw-,u:1234:rw-,g::r--,m::rw-,o::---
USER_ACL = nfsacl([(1, 0, 6), (2, 1234, 6), (4, 0, 4), (0x10, 0, 6), (0x20, 0, 0)])
SATTR_MODE = u32(1) + u32(0o644) + u32(0) * 3 + u32(0) + u32(0)

# rpc_call_fuzz: bare call messages.
write("rpc_call_fuzz", "null_sys", call(1, NFS, 3, 0))
write("rpc_call_fuzz", "null_none", call(2, NFS, 3, 0, cred=AUTH_NONE))
write("rpc_call_fuzz", "groups", call(3, NFS, 3, 1, b"\0" * 8, cred=auth_sys(1000, 100, range(16))))
write("rpc_call_fuzz", "rpcvers3", call(4, NFS, 3, 0, rpcvers=3))
write("rpc_call_fuzz", "bad_cred_len", u32(5) + u32(0) + u32(2) + u32(NFS) + u32(3) + u32(0) + u32(1) + u32(401))
write("rpc_call_fuzz", "reply", u32(6) + u32(1) + u32(0))

# record_marker_fuzz: step byte + stream.
c = call(7, NFS, 3, 0)
write("record_marker_fuzz", "one", b"\x07" + mark(len(c)) + c)
write("record_marker_fuzz", "two_frags", b"\x01" + mark(8, False) + c[:8] + mark(len(c) - 8) + c[8:])
write("record_marker_fuzz", "empty_frags", b"\x03" + mark(0, False) * 4 + mark(0))
write("record_marker_fuzz", "too_big", b"\x00" + mark(0x7FFFFFFF))
write("record_marker_fuzz", "pipelined", b"\x3f" + (mark(len(c)) + c) * 3)

# conf_fuzz: 1 = exports, 0 = nfs3d.conf.
with open(os.path.join(REPO, "conf", "exports"), "rb") as f:
    write("conf_fuzz", "exports_example", b"\x01" + f.read())
with open(os.path.join(REPO, "conf", "nfs3d.conf"), "rb") as f:
    write("conf_fuzz", "conf_shipped", b"\x00" + f.read())
write("conf_fuzz", "exports_options",
      b"\x01/srv/a 10.0.0.0/8(rw,no_root_squash,fsid=7) *.example(ro,all_squash,anonuid=1000,anongid=1000)\n"
      b"\"/srv/with space\" -ro,insecure host1 fd00::/8(rw,secure) @netgroup(ro)\n/srv/b\n")
write("conf_fuzz", "conf_sections",
      b"\x00[nfsd]\nport = 2049\nthreads = 4\nlisten = 0.0.0.0,::\n[tcp]\nrsize_max = 1M\n[udp]\nrsize_pref = auto\n")

# dispatcher_fuzz: byte 0 (bit 0 TCP, bit 1 privileged port), then a call.
seeds = {
    "nfs_null": call(10, NFS, 3, 0),
    "getattr": call(11, NFS, 3, 1, ROOT),
    "setattr": call(12, NFS, 3, 2, FILE + SATTR_MODE + u32(0)),
    "lookup": call(13, NFS, 3, 3, ROOT + opaque("file")),
    "lookup_dotdot": call(14, NFS, 3, 3, DIR + opaque("..")),
    "lookup_link": call(15, NFS, 3, 3, ROOT + opaque("link")),
    "access": call(16, NFS, 3, 4, ROOT + u32(0x3F)),
    "read": call(17, NFS, 3, 6, FILE + u64(0) + u32(100)),
    "write": call(18, NFS, 3, 7, FILE + u64(0) + u32(4) + u32(2) + opaque("data")),
    "create": call(19, NFS, 3, 8, ROOT + opaque("new") + u32(1) + SATTR_MODE),
    "mkdir": call(20, NFS, 3, 9, ROOT + opaque("d") + SATTR_MODE),
    "symlink": call(21, NFS, 3, 10, ROOT + opaque("s") + SATTR_MODE + opaque("/etc")),
    "remove": call(22, NFS, 3, 12, ROOT + opaque("file")),
    "rename": call(23, NFS, 3, 14, ROOT + opaque("file") + DIR + opaque("moved")),
    "link": call(24, NFS, 3, 15, FILE + DIR + opaque("l")),
    "readdir": call(25, NFS, 3, 16, ROOT + u64(0) + u64(0) + u32(4096)),
    "readdirplus": call(26, NFS, 3, 17, DIR + u64(0) + u64(0) + u32(4096) + u32(32768)),
    "fsstat": call(27, NFS, 3, 18, ROOT),
    "fsinfo": call(28, NFS, 3, 19, ROOT),
    "pathconf": call(29, NFS, 3, 20, FILE),
    "commit": call(30, NFS, 3, 21, FILE + u64(0) + u32(0)),
    "bad_proc": call(31, NFS, 3, 99),
    "bad_vers": call(32, NFS, 2, 0),
    "bad_prog": call(33, 100021, 4, 0),
    "mnt": call(40, MOUNT, 3, 1, EXPO),
    "mnt1": call(41, MOUNT, 1, 1, EXPO),
    "dump": call(42, MOUNT, 3, 2),
    "umnt": call(43, MOUNT, 3, 3, EXPO),
    "umntall": call(44, MOUNT, 3, 4),
    "export": call(45, MOUNT, 3, 5),
    "mnt_none": call(46, MOUNT, 3, 1, EXPO, cred=AUTH_NONE),
    "getacl": call(50, NFSACL, 3, 1, FILE + u32(0xF)),
    "setacl": call(51, NFSACL, 3, 2, FILE + u32(1) + USER_ACL + u32(0) + u32(0)),
}
for i, (name, data) in enumerate(sorted(seeds.items())):
    write("dispatcher_fuzz", name, bytes([i % 4]) + data)

# nfsacl_fuzz: byte 0 % 3 = GETACL args, SETACL args, xattr value.
FH = opaque(b"\x01" * 32)
write("nfsacl_fuzz", "getacl", b"\x00" + FH + u32(0xF))
write("nfsacl_fuzz", "setacl_file", b"\x01" + FH + u32(1) + USER_ACL + u32(0) + u32(0))
write("nfsacl_fuzz", "setacl_dir", b"\x01" + FH + u32(5) + USER_ACL + nfsacl(
    [(1, 0, 7), (4, 0, 5), (0x10, 0, 5), (0x20, 0, 5)], 0x1000))
write("nfsacl_fuzz", "count_only", b"\x01" + FH + u32(2) + u32(4) + u32(0) + u32(0) + u32(0))
write("nfsacl_fuzz", "xattr", b"\x02" + struct.pack("<I", 2) + b"".join(
    struct.pack("<HHI", t, p, i) for t, p, i in [(1, 6, 0xFFFFFFFF), (2, 6, 1234), (4, 4, 0xFFFFFFFF),
                                                  (0x10, 6, 0xFFFFFFFF), (0x20, 0, 0xFFFFFFFF)]))


class Ops:
    """An input for the stateful targets, which read it with libFuzzer's
    FuzzedDataProvider: integers from the end (as many bytes as the range
    needs, the first read the most significant), raw bytes from the front."""

    def __init__(self):
        self.front = b""
        self.back = []  # in the order read

    def int(self, value, lo, hi):
        span, n = hi - lo, 0
        while n < 8 and (span >> (8 * n)) > 0:
            n += 1
        v = value - lo
        self.back += [(v >> (8 * (n - 1 - i))) & 0xFF for i in range(n)]
        return self

    def bool(self, b):
        return self.int(1 if b else 0, 0, 255)

    def data(self, b):
        self.front += b
        return self

    def bytes(self):
        return self.front + bytes(reversed(self.back))


# tcp_admission_fuzz: limit, per_client, max_connections, max_record_size,
# unfinished_per_client, then ops (0/1 acquire peer, 2 release i other_form,
# 3 add conn peer, 4 remove i, 5 hold i bytes).
def admission(limit, per_client, ops, conns=4, record=4096, unfinished=8192):
    o = Ops().int(limit, 0, 40).int(per_client, 0, 48).int(conns, 1, 16)
    o.int(record, 1, 1 << 16).int(unfinished, 0, 1 << 16)
    for op in ops:
        o.int(op[0], 0, 5)
        if op[0] in (0, 1, 3):
            o.int(op[1], 0, 6)
        elif op[0] == 2:
            o.int(op[1], 0, op[2] - 1).bool(op[3])
        elif op[0] == 4:
            o.int(op[1], 0, op[2] - 1)
        elif op[0] == 5:
            share = max(record, unfinished)
            o.int(op[1], 0, op[3] - 1).int(op[2], 0, 2 * share)
    return o.bytes()


# One host (peer 2) takes its share of 6 of 8 slots; another (peer 0) the rest.
write("tcp_admission_fuzz", "share",
      admission(8, 6, [(0, 2)] * 7 + [(1, 0)] * 3 + [(2, 0, 8, True), (0, 0)]))
# A host's connections fill its unfinished share; another's still hold.
write("tcp_admission_fuzz", "unfinished",
      admission(4, 0, [(3, 2), (3, 2), (3, 0), (5, 0, 8000, 3), (5, 1, 200, 3), (5, 2, 8192, 3),
                       (4, 0, 3), (5, 1, 200, 3)]))

# nlm_identity_fuzz: per call the callback's answer, source (0 192.0.2.1,
# 1 its v4-mapped form, 2 192.0.2.2, 3 2001:db8::1, 4 127.0.0.1), reserved
# port, credential (AUTH_NONE, uid 0, uid 1000), name (host-a, host-b,
# host-c, 192.0.2.2), file, svid, offset, length, exclusive; then the
# operation and what it takes (see nlm_identity_fuzz.cc).
def nlm_call(o, op, src=0, name=0, off=0, length=8, excl=True, answer=0, reserved=False, cred=0,
             extra=()):
    o.int(answer, 0, 2).int(src, 0, 4).bool(reserved).int(cred, 0, 2).int(name, 0, 3)
    o.bool(False).int(1, 1, 2).int(off, 0, 15).int(length, 0, 8).bool(excl).int(op, 0, 6)
    for value, lo, hi in extra:
        o.int(value, lo, hi)
    return o


LOCK_ARGS = ((0, 0, 255), (3, 0, 9), (1, 0, 255))  # no block, state 3, monitored
o = Ops()
nlm_call(o, 0, extra=LOCK_ARGS)                                  # A locks from 192.0.2.1
for op, extra in ((1, ()), (2, ((0, 0, 255),)), (3, ()), (4, ()), (5, ((5, 0, 9),))):
    nlm_call(o, op, src=2, name=0, extra=extra)                  # 192.0.2.2 naming A
nlm_call(o, 0, src=2, name=0, off=100, extra=LOCK_ARGS)          # and LOCK naming A
nlm_call(o, 5, src=1, name=0, extra=((3, 0, 9),))                # A's own state, replayed
nlm_call(o, 5, src=1, name=0, extra=((5, 0, 9),))                # A rebooted
write("nlm_identity_fuzz", "other_address_names_a", o.bytes())
o = Ops()
nlm_call(o, 0, src=2, name=1, extra=LOCK_ARGS)                   # B holds [0, 8)
nlm_call(o, 0, src=0, name=0, extra=((1, 0, 255), (3, 0, 9), (1, 0, 255)))  # A waits
nlm_call(o, 2, src=3, name=0, extra=((1, 0, 255),))              # a stranger cancels A's wait
nlm_call(o, 1, src=2, name=1, answer=1)                          # B unlocks; A refuses GRANTED
nlm_call(o, 5, src=4, name=1, reserved=True, extra=((7, 0, 9),))  # a local statd: B rebooted
write("nlm_identity_fuzz", "waiter_and_statd", o.bytes())


# gss_half_open_fuzz: bounds (or the defaults), then ops: 0 INIT from a peer,
# 1 INIT done in one round (expiry ms), 2 CONTINUE_INIT i (0 done, 1 error,
# 2 again), 3 a call on established i (destroy?), 4 clock += ms, 5 look up
# all (16 junk bytes), 6 clock += s.
def gss(ops, limits=(4, 6, 2, 5000)):
    o = Ops()
    if limits is None:
        o.bool(True)
    else:
        o.bool(False).int(limits[0], 1, 8).int(limits[1], 1, 16).int(limits[2], 1, 8)
        o.int(limits[3], 1, 8000)
    for op in ops:
        o.int(op[0], 0, 6)
        if op[0] == 0:
            o.int(op[1], 0, 4)
        elif op[0] == 1:
            o.int(op[1], 1, 20000)
        elif op[0] == 2:
            o.int(op[1], 0, op[2] - 1).int(op[3], 0, 2)
            if op[3] == 0:
                o.int(op[4], 1, 20000)
        elif op[0] == 3:
            o.int(op[1], 0, op[2] - 1).bool(op[3])
        elif op[0] == 4:
            o.int(op[1], 0, 3000)
        elif op[0] == 5:
            o.data(bytes(16))
        elif op[0] == 6:
            o.int(op[1], 0, 100)
    return o.bytes()


# One address floods INIT; another's half-open context completes and stays.
write("gss_half_open_fuzz", "flood_then_complete",
      gss([(0, 1), (0, 0)] + [(0, 0)] * 4 + [(2, 0, 2, 0, 10000), (1, 8000)] + [(0, 2)] * 6 +
          [(4, 3000), (5,), (4, 3000), (5,), (3, 0, 2, False), (6, 9), (3, 1, 2, True)]))
write("gss_half_open_fuzz", "defaults", gss([(0, i % 5) for i in range(40)] + [(6, 6), (5,)], None))
