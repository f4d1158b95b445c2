// cephfs_ceiling: what libcephfs itself does on a cluster, with no NFS at all:
// the ceiling for an NFS server on the CephFS backend (bench/run.sh --ceph).
// The same libcephfs calls nfs3d's CephFS backend makes (ceph_ll_*, one
// mount, many threads), shaped like nfs3bench's workloads:
//   prepare  mkdir -p each DIR (mode 0777): the exports' CephFS directories
//   write    THREADS threads write BLOCK-sized pieces at consecutive offsets of
//            one file, wrapping at 64 MiB (as nfs3bench's timed writes do), for
//            SECONDS, then one fsync (timed too, as nfs3bench's COMMIT is)
//   read     a 256 MiB file is written and synced first (not timed), then
//            THREADS threads read it in BLOCK-sized pieces, wrapping around
//   getattr  THREADS threads ceph_ll_getattr one directory
//   lookup   THREADS threads ceph_ll_lookup 16 names of one directory
//   createsetattr  create + setattr(mode, mtime) + unlink of a fresh name: 3 calls
// Prints one JSON line with the rate and this process's CPU (utime+stime,
// libcephfs's threads included) per GB or per call, to be read against the
// NFS servers' server CPU.
//
// usage: cephfs_ceiling CEPH_CONF prepare DIR...
//        cephfs_ceiling CEPH_CONF MODE DIR SECONDS THREADS [BLOCK]
// (client.admin; the keyring comes from CEPH_CONF)
#include <cephfs/libcephfs.h>
#include <fcntl.h>
#include <sys/resource.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace {

constexpr uint64_t kReadFileBytes = 256ull << 20;
constexpr uint64_t kWriteWrapBytes = 64ull << 20;  // nfs3bench --file-size's default
constexpr int kLookupNames = 16;

[[noreturn]] void Die(const std::string& what, int rc) {
  std::fprintf(stderr, "cephfs_ceiling: %s: %s\n", what.c_str(), std::strerror(rc < 0 ? -rc : rc));
  std::exit(1);
}

void Check(int rc, const std::string& what) {
  if (rc < 0) Die(what, rc);
}

double ProcessCpuSeconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  auto secs = [](const timeval& tv) { return tv.tv_sec + tv.tv_usec / 1e6; };
  return secs(ru.ru_utime) + secs(ru.ru_stime);
}

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct Mount {
  ceph_mount_info* cm = nullptr;
  UserPerm* perms = nullptr;

  explicit Mount(const char* conf) {
    Check(ceph_create(&cm, nullptr), "ceph_create");
    Check(ceph_conf_read_file(cm, conf), "reading ceph.conf");
    Check(ceph_mount(cm, "/"), "ceph_mount");
    perms = ceph_mount_perms(cm);
  }
  ~Mount() { ceph_shutdown(cm); }

  Inode* Walk(const std::string& path) {
    Inode* in = nullptr;
    struct ceph_statx stx;
    Check(ceph_ll_walk(cm, path.c_str(), &in, &stx, CEPH_STATX_INO, 0, perms), "walk " + path);
    return in;
  }
  Fh* Create(Inode* dir, const std::string& name, Inode** out) {
    Fh* fh = nullptr;
    struct ceph_statx stx;
    Check(ceph_ll_create(cm, dir, name.c_str(), 0644, O_RDWR | O_CREAT | O_TRUNC, out, &fh, &stx,
                         CEPH_STATX_INO, 0, perms),
          "create " + name);
    return fh;
  }
};

// Runs `op(thread, i)` on `threads` threads until `seconds` pass; returns
// the operations done and the wall seconds.
std::pair<uint64_t, double> RunFor(int threads, double seconds,
                                   const std::function<void(int, uint64_t)>& op) {
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> done{0};
  std::vector<std::thread> pool;
  const double start = Now();
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      for (uint64_t i = 0; !stop.load(std::memory_order_relaxed); ++i) {
        op(t, i);
        done.fetch_add(1, std::memory_order_relaxed);
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop = true;
  for (auto& th : pool) th.join();
  return {done.load(), Now() - start};
}

void PrintBytes(const char* mode, uint64_t bytes, double secs, double cpu) {
  std::printf("{\"mode\":\"%s\",\"mb_per_s\":%.1f,\"cpu_s_per_gb\":%.3f}\n", mode,
              bytes / secs / 1e6, cpu / (bytes / 1e9));
}

void PrintCalls(const char* mode, uint64_t calls, double secs, double cpu) {
  std::printf("{\"mode\":\"%s\",\"calls_per_s\":%.0f,\"cpu_us_per_call\":%.2f}\n", mode,
              calls / secs, cpu * 1e6 / calls);
}

int Usage() {
  std::fprintf(stderr,
               "usage: cephfs_ceiling CEPH_CONF prepare DIR...\n"
               "       cephfs_ceiling CEPH_CONF write|read|getattr|lookup|createsetattr DIR "
               "SECONDS THREADS [BLOCK]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) return Usage();
  Mount m(argv[1]);
  const std::string mode = argv[2];
  if (mode == "prepare") {
    for (int i = 3; i < argc; ++i) {
      int rc = ceph_mkdirs(m.cm, argv[i], 0777);
      if (rc < 0 && rc != -EEXIST) Die(absl::StrCat("mkdirs ", argv[i]), rc);
      Check(ceph_chmod(m.cm, argv[i], 0777), absl::StrCat("chmod ", argv[i]));
    }
    return 0;
  }
  double seconds = 0;
  int threads = 0;
  uint64_t block = 1 << 20;
  if (argc < 6 || !absl::SimpleAtod(argv[4], &seconds) || !absl::SimpleAtoi(argv[5], &threads) ||
      threads < 1 || (argc > 6 && !absl::SimpleAtoi(argv[6], &block)) || block == 0) {
    return Usage();
  }
  Inode* dir = m.Walk(argv[3]);

  if (mode == "write" || mode == "read") {
    const std::string name = absl::StrCat("ceiling.", getpid());
    Inode* file = nullptr;
    Fh* fh = m.Create(dir, name, &file);
    std::string data(block, 'c');
    if (mode == "read") {
      for (uint64_t off = 0; off < kReadFileBytes; off += block) {
        Check(ceph_ll_write(m.cm, fh, off, block, data.data()), "write");
      }
      Check(ceph_ll_fsync(m.cm, fh, 0), "fsync");
    }
    std::atomic<uint64_t> next{0};
    const double cpu0 = ProcessCpuSeconds();
    const double t0 = Now();
    std::vector<std::string> bufs(threads, std::string(block, '\0'));
    auto [ops, secs] = RunFor(threads, seconds, [&](int t, uint64_t) {
      const uint64_t off = next.fetch_add(block);
      if (mode == "write") {
        Check(ceph_ll_write(m.cm, fh, off % kWriteWrapBytes, block, data.data()), "write");
      } else {
        Check(ceph_ll_read(m.cm, fh, off % kReadFileBytes, block, bufs[t].data()), "read");
      }
    });
    if (mode == "write") Check(ceph_ll_fsync(m.cm, fh, 0), "fsync");
    secs = Now() - t0;
    PrintBytes(mode.c_str(), ops * block, secs, ProcessCpuSeconds() - cpu0);
    ceph_ll_close(m.cm, fh);
    ceph_ll_unlink(m.cm, dir, name.c_str(), m.perms);
    return 0;
  }

  uint64_t calls_per_op = 1;
  std::function<void(int, uint64_t)> op;
  if (mode == "getattr") {
    op = [&](int, uint64_t) {
      struct ceph_statx stx;
      Check(ceph_ll_getattr(m.cm, dir, &stx, CEPH_STATX_BASIC_STATS, 0, m.perms), "getattr");
    };
  } else if (mode == "lookup") {
    for (int i = 0; i < kLookupNames; ++i) {
      Inode* in = nullptr;
      Fh* fh = m.Create(dir, absl::StrCat("l.", i), &in);
      ceph_ll_close(m.cm, fh);
      ceph_ll_put(m.cm, in);
    }
    op = [&](int, uint64_t i) {
      Inode* in = nullptr;
      struct ceph_statx stx;
      const std::string name = absl::StrCat("l.", i % kLookupNames);
      Check(ceph_ll_lookup(m.cm, dir, name.c_str(), &in, &stx, CEPH_STATX_BASIC_STATS, 0, m.perms),
            "lookup " + name);
      ceph_ll_put(m.cm, in);
    };
  } else if (mode == "createsetattr") {
    calls_per_op = 3;
    op = [&](int t, uint64_t i) {
      const std::string name = absl::StrCat("c.", getpid(), ".", t, ".", i);
      Inode* in = nullptr;
      Fh* fh = m.Create(dir, name, &in);
      ceph_ll_close(m.cm, fh);
      struct ceph_statx stx {};
      stx.stx_mode = 0600;
      Check(ceph_ll_setattr(m.cm, in, &stx, CEPH_SETATTR_MODE | CEPH_SETATTR_MTIME_NOW, m.perms),
            "setattr " + name);
      ceph_ll_put(m.cm, in);
      Check(ceph_ll_unlink(m.cm, dir, name.c_str(), m.perms), "unlink " + name);
    };
  } else {
    return Usage();
  }
  const double cpu0 = ProcessCpuSeconds();
  auto [ops, secs] = RunFor(threads, seconds, op);
  PrintCalls(mode.c_str(), ops * calls_per_op, secs, ProcessCpuSeconds() - cpu0);
  return 0;
}
