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
