#!/usr/bin/python3
"""fsx_lite: a seeded fsx-style checker of one file (bench/chaos.sh).

Random pwrite, truncate, read, fsync, close-and-reopen and O_DIRECT reads of
one file, against an in-memory shadow copy; every read is compared with the
shadow. Debian 12 has no fsx package; this is the part of fsx the chaos soak
needs. The operations follow from --seed (their timing does not).

Prints a progress line at most every --every seconds (bench/chaos.sh
timestamps them to measure pauses) and one DONE line:
  FSX ops=N bytes_verified=B errors=E enospc=X mismatches=M
ENOSPC is counted apart from other errors: the soak fills the export on
purpose. After any error the file is rewritten from the shadow copy (the
page cache may hold writes the server refused). A write(2) into the page
cache succeeds even if the server later refuses the WRITE with NFS3ERR_NOSPC:
the Linux client then drops its cached pages (a read shows the server's
older data) and reports ENOSPC at the next fsync or close. So a mismatch
followed by an fsync that fails with ENOSPC counts as ENOSPC (the write was
refused, not lost); any other mismatch stops the run, writes the last
operations to --log, and exits 1; other errors exit 1 at the end.
"""
import argparse
import errno
import mmap
import os
import random
import sys
import time


class Fsx:
    def __init__(self, args):
        self.a = args
        self.rng = random.Random(args.seed)
        self.shadow = bytearray()
        self.fd = -1
        self.ops = self.verified = self.errors = self.enospc = self.mismatches = 0
        self.history = []
        self.last_print = 0.0
        self.mismatch = ""

    def open(self):
        self.fd = os.open(self.a.path, os.O_RDWR | os.O_CREAT, 0o644)

    def note(self, what):
        self.history.append(what)
        del self.history[:-200]

    def progress(self, final=False):
        now = time.monotonic()
        if not final and now - self.last_print < self.a.every:
            return
        self.last_print = now
        tag = "FSX DONE" if final else "FSX"
        print(f"{tag} ops={self.ops} bytes_verified={self.verified} errors={self.errors} "
              f"enospc={self.enospc} mismatches={self.mismatches}", flush=True)

    def compare(self, offset, data, what):
        want = bytes(self.shadow[offset:offset + len(data)])
        if len(data) != len(want) or data != want:
            bad = next((i for i in range(min(len(data), len(want))) if data[i] != want[i]),
                       min(len(data), len(want)))
            self.note(f"MISMATCH {what} offset={offset} len={len(data)} want_len={len(want)} "
                      f"first_bad={offset + bad}")
            self.mismatch = (f"{what} offset={offset} got={len(data)} bytes want={len(want)} "
                             f"first difference at file offset {offset + bad}")
            return False
        self.verified += len(data)
        return True

    def op_write(self):
        off = self.rng.randrange(self.a.max_size)
        n = self.rng.randrange(1, self.a.max_io + 1)
        n = min(n, self.a.max_size - off) or 1
        data = self.rng.randbytes(n)
        self.note(f"write {off} {n}")
        done = os.pwrite(self.fd, data, off)
        if done != n:
            raise OSError(errno.EIO, f"short write {done} of {n}")
        if off > len(self.shadow):
            self.shadow.extend(bytes(off - len(self.shadow)))
        self.shadow[off:off + n] = data

    def op_truncate(self):
        size = self.rng.randrange(self.a.max_size + 1)
        self.note(f"truncate {size}")
        os.ftruncate(self.fd, size)
        if size < len(self.shadow):
            del self.shadow[size:]
        else:
            self.shadow.extend(bytes(size - len(self.shadow)))

    def op_read(self):
        if not self.shadow:
            return True
        off = self.rng.randrange(len(self.shadow))
        n = self.rng.randrange(1, self.a.max_io + 1)
        self.note(f"read {off} {n}")
        return self.compare(off, os.pread(self.fd, n, off), "read")

    def op_fsync(self):
        self.note("fsync")
        os.fsync(self.fd)

    def op_reopen(self):
        # Close-to-open: close flushes and the open revalidates; then the
        # whole file is read back and compared.
        self.note("close+open")
        fd, self.fd = self.fd, -1
        os.close(fd)
        self.open()
        size = os.fstat(self.fd).st_size
        if size != len(self.shadow):
            self.mismatch = f"size after reopen {size}, want {len(self.shadow)}"
            return False
        return self.compare(0, os.pread(self.fd, size + 1, 0), "reopen-read")

    def op_direct(self):
        # O_DIRECT reads go to the server, past the page cache.
        self.note("direct-read")
        os.fsync(self.fd)
        fd = os.open(self.a.path, os.O_RDONLY | os.O_DIRECT)
        try:
            size = len(self.shadow)
            buf = mmap.mmap(-1, max(4096, (size + 4096) // 4096 * 4096))
            got = os.preadv(fd, [buf], 0)
            return self.compare(0, bytes(buf[:got]), "direct-read")
        finally:
            os.close(fd)

    def refused_write(self):
        """After a mismatch: whether fsync reports that the server refused a
        write (ENOSPC), which explains it."""
        try:
            os.fsync(self.fd)
        except OSError as e:
            if e.errno in (errno.ENOSPC, errno.EDQUOT):
                return True
            self.note(f"fsync after the mismatch: {e}")
        return False

    def resync(self):
        # After an error the page cache may hold data the server refused:
        # truncate (drops it) and write the shadow again, until it works.
        while True:
            try:
                if self.fd < 0:
                    self.open()
                os.ftruncate(self.fd, 0)
                view = memoryview(self.shadow)
                off = 0
                while off < len(view):
                    off += os.pwrite(self.fd, view[off:off + (1 << 20)], off)
                os.fsync(self.fd)
                return
            except OSError as e:
                self.note(f"resync failed: {e}")
                print(f"FSX resync failed ({e.strerror}), again in 1 s", flush=True)
                if self.fd >= 0:
                    try:
                        os.close(self.fd)
                    except OSError:
                        pass
                    self.fd = -1
                if os.path.exists(self.a.stop):
                    return
                time.sleep(1)

    def run(self):
        self.open()
        os.ftruncate(self.fd, 0)
        ops = [(self.op_write, 40), (self.op_read, 30), (self.op_truncate, 5),
               (self.op_fsync, 10), (self.op_reopen, 3), (self.op_direct, 2)]
        funcs = [f for f, _ in ops]
        weights = [w for _, w in ops]
        while not os.path.exists(self.a.stop) and (self.a.ops == 0 or self.ops < self.a.ops):
            op = self.rng.choices(funcs, weights)[0]
            self.ops += 1
            try:
                if op() is False:
                    if not self.refused_write():
                        self.mismatches += 1
                        print(f"FSX MISMATCH op={self.ops} {self.mismatch}", flush=True)
                        return self.finish()
                    self.enospc += 1
                    print(f"FSX ENOSPC op={self.ops} {self.history[-1]}: mismatch ({self.mismatch})"
                          " after a write the server refused (fsync: ENOSPC)", flush=True)
                    self.resync()
            except OSError as e:
                if e.errno in (errno.ENOSPC, errno.EDQUOT):
                    self.enospc += 1
                    print(f"FSX ENOSPC op={self.ops} {self.history[-1]}", flush=True)
                else:
                    self.errors += 1
                    print(f"FSX ERROR op={self.ops} {self.history[-1]}: {e}", flush=True)
                self.resync()
            self.progress()
        return self.finish()

    def finish(self):
        self.progress(final=True)
        if self.a.log:
            with open(self.a.log, "w") as f:
                f.write("\n".join(self.history) + "\n")
        return 1 if self.mismatches or self.errors else 0


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("path")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--ops", type=int, default=0, help="stop after N operations (0: no limit)")
    p.add_argument("--stop", default="/lab/stop", help="stop once this file exists")
    p.add_argument("--max-size", type=int, default=4 << 20)
    p.add_argument("--max-io", type=int, default=256 << 10)
    p.add_argument("--every", type=float, default=0.5, help="seconds between progress lines")
    p.add_argument("--log", help="write the last operations here at the end")
    sys.exit(Fsx(p.parse_args()).run())


if __name__ == "__main__":
    main()
