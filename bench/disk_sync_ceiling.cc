// disk_sync_ceiling: what the disk itself allows for FILE_SYNC writes, with no
// network, no client and no RPC. THREADS writers fill one new file with
// BLOCK-sized writes in order; each needs its block on stable storage before
// it writes the next, as an NFS client with THREADS FILE_SYNC writes in flight
// does. Two ways to make them stable:
//   gathered  nfs3d's vfs::SyncGroup: one fsync answers every writer waiting
//   per-call  each write followed by its own fsync (ganesha's way: bench/run.sh
//             counts 1.0 calls per fsync for it)
// and two that bound every strategy:
//   batch     in rounds: every writer writes its block, then one fsync covers
//             them all. A server with THREADS writes in flight cannot gather
//             more per sync: the next writes come only after these replies.
//   once      the same writes with no sync between them, then one fsync for
//             the whole file: the disk's write bandwidth, which no FILE_SYNC
//             server can beat, since every byte must reach the disk before
//             its reply
// bench/run.sh prints them under its table, so the FILE_SYNC row can be read
// against the most each strategy, and any strategy, can reach here.
//
// usage: disk_sync_ceiling DIR gathered|per-call|batch|once [THREADS [BLOCK [FILE_BYTES]]]
// prints: {"mode":"gathered","mb_per_s":1510.2,"calls_per_fsync":8.3}
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"

#include "vfs/sync_group.h"

namespace {

enum class Mode { kGathered, kPerCall, kBatch, kOnce };

// Each mode's name on the command line and in the output, indexed by Mode.
constexpr const char* kModeNames[] = {"gathered", "per-call", "batch", "once"};

struct Options {
  std::string dir;
  Mode mode = Mode::kGathered;
  int threads = 16;
  uint64_t block = 64 << 10;
  uint64_t file_bytes = 64 << 20;
};

bool Parse(int argc, char** argv, Options* o) {
  if (argc < 3 || argc > 6) return false;
  o->dir = argv[1];
  const auto* name = std::find(std::begin(kModeNames), std::end(kModeNames), std::string(argv[2]));
  if (name == std::end(kModeNames)) return false;
  o->mode = static_cast<Mode>(name - std::begin(kModeNames));
  if (argc > 3 && (!absl::SimpleAtoi(argv[3], &o->threads) || o->threads < 1)) return false;
  if (argc > 4 && (!absl::SimpleAtoi(argv[4], &o->block) || o->block == 0)) return false;
  if (argc > 5 && !absl::SimpleAtoi(argv[5], &o->file_bytes)) return false;
  return o->file_bytes >= o->block;
}

int SyncOnce(int fd, std::atomic<uint64_t>* fsyncs) {
  fsyncs->fetch_add(1, std::memory_order_relaxed);
  return fsync(fd) == 0 ? 0 : errno;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  if (!Parse(argc, argv, &opt)) {
    std::fprintf(stderr,
                 "usage: %s DIR gathered|per-call|batch|once [THREADS [BLOCK [FILE_BYTES]]]\n",
                 argv[0]);
    return 2;
  }
  const std::string path = opt.dir + "/disk_sync_ceiling." + std::to_string(getpid());
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) {
    std::perror(path.c_str());
    return 1;
  }
  unlink(path.c_str());  // the descriptor keeps it until we exit
  nfs3d::vfs::SyncGroup group;
  std::atomic<uint64_t> next_offset{0};
  std::atomic<uint64_t> fsyncs{0};
  std::atomic<int> failed{0};
  // Batch rounds are whole: each writer writes one block per round.
  const uint64_t rounds = opt.file_bytes / opt.block / static_cast<uint64_t>(opt.threads);
  const uint64_t blocks = opt.mode == Mode::kBatch ? rounds * static_cast<uint64_t>(opt.threads)
                                                   : opt.file_bytes / opt.block;
  std::barrier round_written(opt.threads, [&]() noexcept {
    if (failed.load() == 0) {
      if (const int err = SyncOnce(fd, &fsyncs); err != 0) failed.store(err);
    }
  });
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> writers;
  for (int t = 0; t < opt.threads; ++t) {
    writers.emplace_back([&, t] {
      std::vector<char> data(opt.block, static_cast<char>('a' + t));
      for (;;) {
        const uint64_t offset = next_offset.fetch_add(opt.block);
        if (offset >= blocks * opt.block) return;
        if (pwrite(fd, data.data(), data.size(), static_cast<off_t>(offset)) !=
            static_cast<ssize_t>(data.size())) {
          failed.store(errno);
          if (opt.mode == Mode::kBatch) round_written.arrive_and_drop();
          return;
        }
        int err = 0;
        if (opt.mode == Mode::kBatch) {
          round_written.arrive_and_wait();  // the last to arrive syncs for all
          if (failed.load() != 0) return;   // every writer sees it after the same round
        } else if (opt.mode == Mode::kGathered) {
          if (!group.Sync([&] { return SyncOnce(fd, &fsyncs); }, [] {}).ok()) err = EIO;
        } else if (opt.mode == Mode::kPerCall) {
          err = SyncOnce(fd, &fsyncs);
        }
        if (err != 0) {
          failed.store(err);
          return;
        }
      }
    });
  }
  for (std::thread& w : writers) w.join();
  if (opt.mode == Mode::kOnce && failed.load() == 0) {
    if (const int err = SyncOnce(fd, &fsyncs); err != 0) failed.store(err);
  }
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  close(fd);
  if (failed.load() != 0) {
    std::fprintf(stderr, "%s: %s\n", path.c_str(), std::strerror(failed.load()));
    return 1;
  }
  std::printf("{\"mode\":\"%s\",\"mb_per_s\":%.1f,\"calls_per_fsync\":%.2f}\n",
              kModeNames[static_cast<int>(opt.mode)],
              static_cast<double>(blocks * opt.block) / secs / 1e6,
              static_cast<double>(blocks) / static_cast<double>(fsyncs.load()));
  return 0;
}
