#!/usr/bin/python3
"""In the lab guest, for tests/chaos/enospc_probe.sh: on a full export,
write(2) past the end of FILE, ftruncate, read the range back and fsync,
printing what each returned (what fsx_lite.py's model must allow)."""
import os
import sys

fd = os.open(sys.argv[1], os.O_RDWR)
off = 2 << 20
print(f"pwrite of 65536 bytes past the end returned {os.pwrite(fd, b'B' * 65536, off)}")
try:
    os.ftruncate(fd, off + 32768)
    print("ftruncate returned 0")
except OSError as e:
    print(f"ftruncate: {e}")
data = os.pread(fd, 32768, off)
print(f"read back {len(data)} bytes, {data.count(b'B')} of them as written")
try:
    os.fsync(fd)
    print("fsync returned 0")
except OSError as e:
    print(f"fsync: {e}")
