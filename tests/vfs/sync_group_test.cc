// SyncGroup: every caller is answered by a sync that started after it
// arrived, syncs never overlap, concurrent callers share them, and a failed
// sync fails the callers that were waiting while it ran.
#include "vfs/sync_group.h"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"

namespace nfs3d::vfs {
namespace {

TEST(SyncGroupTest, CallersShareSyncsThatStartedAfterThem) {
  SyncGroup group;
  std::atomic<uint64_t> epoch{0};    // bumped by each caller's "write"
  std::atomic<uint64_t> covered{0};  // highest epoch a finished sync saw at its start
  std::atomic<int> running{0};
  std::atomic<int> syncs{0};
  std::atomic<int> overlaps{0};
  std::atomic<int> uncovered{0};
  auto fake_sync = [&] {
    if (running.fetch_add(1) != 0) ++overlaps;
    ++syncs;
    const uint64_t start = epoch.load();
    std::this_thread::sleep_for(std::chrono::microseconds(300));
    uint64_t seen = covered.load();
    while (seen < start && !covered.compare_exchange_weak(seen, start)) {
    }
    running.fetch_sub(1);
    return 0;
  };
  constexpr int kThreads = 8;
  constexpr int kCalls = 40;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kCalls; ++i) {
        const uint64_t mine = ++epoch;
        EXPECT_TRUE(group.Sync(fake_sync, [] {}).ok());
        if (covered.load() < mine) ++uncovered;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(uncovered.load(), 0);
  EXPECT_EQ(overlaps.load(), 0);
  EXPECT_LT(syncs.load(), kThreads * kCalls);  // gathered
  EXPECT_GT(syncs.load(), 0);
}

TEST(SyncGroupTest, FailureReachesCallersWaitingWhileItRan) {
  SyncGroup group;
  absl::Notification first_started, release_first;
  std::atomic<int> calls{0};
  std::atomic<int> failures_reported{0};
  auto fake_sync = [&] {
    if (++calls == 1) {
      first_started.Notify();
      release_first.WaitForNotification();
      return EIO;  // the first sync fails; later ones succeed
    }
    return 0;
  };
  auto on_failure = [&] { ++failures_reported; };
  absl::Status first, second;
  std::thread a([&] { first = group.Sync(fake_sync, on_failure); });
  first_started.WaitForNotification();
  // Arrives while the failing sync runs: answered by the next, which
  // succeeds, but the failed one may have consumed its writeback error.
  std::thread b([&] { second = group.Sync(fake_sync, on_failure); });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  release_first.Notify();
  a.join();
  b.join();
  EXPECT_FALSE(first.ok());
  EXPECT_FALSE(second.ok());
  EXPECT_EQ(calls.load(), 2);
  EXPECT_EQ(failures_reported.load(), 1);
  // A caller arriving after the failure is unaffected.
  EXPECT_TRUE(group.Sync(fake_sync, on_failure).ok());
}

}  // namespace
}  // namespace nfs3d::vfs
