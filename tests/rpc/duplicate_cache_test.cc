#include "rpc/duplicate_cache.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace nfs3d::rpc {
namespace {

TransportInfo Peer4(Transport transport, const char* ip, uint16_t port) {
  TransportInfo t;
  t.transport = transport;
  auto* sin = reinterpret_cast<sockaddr_in*>(&t.peer);
  sin->sin_family = AF_INET;
  sin->sin_port = htons(port);
  inet_pton(AF_INET, ip, &sin->sin_addr);
  t.peer_len = sizeof(sockaddr_in);
  return t;
}

TransportInfo Peer6(Transport transport, const char* ip, uint16_t port) {
  TransportInfo t;
  t.transport = transport;
  auto* sin6 = reinterpret_cast<sockaddr_in6*>(&t.peer);
  sin6->sin6_family = AF_INET6;
  sin6->sin6_port = htons(port);
  inet_pton(AF_INET6, ip, &sin6->sin6_addr);
  t.peer_len = sizeof(sockaddr_in6);
  return t;
}

std::vector<uint8_t> Args(uint8_t fill, size_t n = 16) { return std::vector<uint8_t>(n, fill); }

DrcKey Key(uint32_t xid, uint8_t fill = 1, uint32_t proc = 8) {
  return DuplicateCache::MakeKey(Peer4(Transport::kUdp, "10.0.0.1", 800), xid, 100003, 3, proc,
                                 Args(fill));
}

TEST(DuplicateCacheTest, NewThenInProgressThenReplay) {
  DuplicateCache cache;
  std::string reply;
  DuplicateCache::Begin b = cache.Start(Key(1), &reply);
  ASSERT_EQ(b.outcome, DuplicateCache::Outcome::kNew);
  EXPECT_EQ(cache.Start(Key(1), &reply).outcome, DuplicateCache::Outcome::kInProgress);
  cache.Complete(Key(1), b.token, "reply-bytes");
  ASSERT_EQ(cache.Start(Key(1), &reply).outcome, DuplicateCache::Outcome::kReplay);
  EXPECT_EQ(reply, "reply-bytes");
  DuplicateCacheStats s = cache.stats();
  EXPECT_EQ(s.insertions, 1u);
  EXPECT_EQ(s.in_progress_drops, 1u);
  EXPECT_EQ(s.hits, 1u);
  EXPECT_EQ(s.evictions, 0u);
}

TEST(DuplicateCacheTest, DifferentArgsOrProcReplaceTheEntry) {
  DuplicateCache cache;
  std::string reply;
  DuplicateCache::Begin b = cache.Start(Key(1, 1), &reply);
  cache.Complete(Key(1, 1), b.token, "first");
  DuplicateCache::Begin b2 = cache.Start(Key(1, 2), &reply);
  EXPECT_EQ(b2.outcome, DuplicateCache::Outcome::kNew);
  EXPECT_EQ(cache.size(), 1u);
  // The old call's late completion must not clobber the new entry.
  cache.Complete(Key(1, 1), b.token, "stale");
  EXPECT_EQ(cache.Start(Key(1, 2), &reply).outcome, DuplicateCache::Outcome::kInProgress);
  cache.Complete(Key(1, 2), b2.token, "second");
  ASSERT_EQ(cache.Start(Key(1, 2), &reply).outcome, DuplicateCache::Outcome::kReplay);
  EXPECT_EQ(reply, "second");
  EXPECT_EQ(cache.Start(Key(1, 2, 9), &reply).outcome, DuplicateCache::Outcome::kNew);
}

TEST(DuplicateCacheTest, AbandonLetsTheCallRunAgain) {
  DuplicateCache cache;
  std::string reply;
  DuplicateCache::Begin b = cache.Start(Key(1), &reply);
  cache.Abandon(Key(1), b.token);
  EXPECT_EQ(cache.size(), 0u);
  EXPECT_EQ(cache.Start(Key(1), &reply).outcome, DuplicateCache::Outcome::kNew);
}

TEST(DuplicateCacheTest, EvictsLeastRecentlyUsedAtEntryBound) {
  DuplicateCache cache(DuplicateCacheOptions{.max_entries = 2, .max_bytes = 1 << 20});
  std::string reply;
  for (uint32_t xid = 1; xid <= 2; ++xid) {
    cache.Complete(Key(xid), cache.Start(Key(xid), &reply).token, "r" + std::to_string(xid));
  }
  // Touch xid 1 so xid 2 is the oldest.
  ASSERT_EQ(cache.Start(Key(1), &reply).outcome, DuplicateCache::Outcome::kReplay);
  cache.Complete(Key(3), cache.Start(Key(3), &reply).token, "r3");
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_EQ(cache.stats().evictions, 1u);
  EXPECT_EQ(cache.Start(Key(1), &reply).outcome, DuplicateCache::Outcome::kReplay);
  EXPECT_EQ(cache.Start(Key(3), &reply).outcome, DuplicateCache::Outcome::kReplay);
  EXPECT_EQ(cache.Start(Key(2), &reply).outcome, DuplicateCache::Outcome::kNew);
}

TEST(DuplicateCacheTest, RunningCallsOutliveCompletedOnes) {
  DuplicateCache cache(DuplicateCacheOptions{.max_entries = 2, .max_bytes = 1 << 20});
  std::string reply;
  DuplicateCache::Begin running = cache.Start(Key(1), &reply);  // oldest, still running
  cache.Complete(Key(2), cache.Start(Key(2), &reply).token, "r2");
  cache.Start(Key(3), &reply);  // must evict 2, not the running 1
  EXPECT_EQ(cache.Start(Key(1), &reply).outcome, DuplicateCache::Outcome::kInProgress);
  EXPECT_EQ(cache.Start(Key(2), &reply).outcome, DuplicateCache::Outcome::kNew);
  cache.Complete(Key(1), running.token, "r1");
}

TEST(DuplicateCacheTest, EvictsAtByteBound) {
  DuplicateCache cache(DuplicateCacheOptions{.max_entries = 100, .max_bytes = 100});
  std::string reply;
  cache.Complete(Key(1), cache.Start(Key(1), &reply).token, std::string(60, 'a'));
  cache.Complete(Key(2), cache.Start(Key(2), &reply).token, std::string(60, 'b'));
  EXPECT_EQ(cache.size(), 1u);
  EXPECT_EQ(cache.stats().evictions, 1u);
  EXPECT_EQ(cache.Start(Key(2), &reply).outcome, DuplicateCache::Outcome::kReplay);
  // A reply larger than the whole budget is not kept at all.
  cache.Complete(Key(3), cache.Start(Key(3), &reply).token, std::string(200, 'c'));
  EXPECT_EQ(cache.Start(Key(3), &reply).outcome, DuplicateCache::Outcome::kNew);
}

TEST(DuplicateCacheTest, KeyAddressRules) {
  auto args = Args(1);
  auto key = [&](const TransportInfo& t) {
    return DuplicateCache::MakeKey(t, 7, 100003, 3, 8, args);
  };
  // UDP: the port is part of the identity.
  EXPECT_NE(key(Peer4(Transport::kUdp, "10.0.0.1", 800)).peer,
            key(Peer4(Transport::kUdp, "10.0.0.1", 801)).peer);
  // TCP: a reconnect from a new port is the same client.
  EXPECT_EQ(key(Peer4(Transport::kTcp, "10.0.0.1", 800)).peer,
            key(Peer4(Transport::kTcp, "10.0.0.1", 901)).peer);
  EXPECT_NE(key(Peer4(Transport::kTcp, "10.0.0.1", 800)).peer,
            key(Peer4(Transport::kTcp, "10.0.0.2", 800)).peer);
  EXPECT_NE(key(Peer6(Transport::kTcp, "::1", 800)).peer,
            key(Peer6(Transport::kTcp, "::2", 800)).peer);
  EXPECT_EQ(key(Peer6(Transport::kTcp, "fe80::1", 800)).peer,
            key(Peer6(Transport::kTcp, "fe80::1", 900)).peer);
  // Transports never share entries.
  EXPECT_NE(key(Peer4(Transport::kTcp, "10.0.0.1", 800)).peer,
            key(Peer4(Transport::kUdp, "10.0.0.1", 800)).peer);
  // The checksum follows the argument bytes.
  EXPECT_NE(
      DuplicateCache::MakeKey(Peer4(Transport::kTcp, "10.0.0.1", 1), 7, 1, 1, 1, Args(1)).checksum,
      DuplicateCache::MakeKey(Peer4(Transport::kTcp, "10.0.0.1", 1), 7, 1, 1, 1, Args(2)).checksum);
}

TEST(DuplicateCacheTest, OtherClientNeverGetsTheReply) {
  DuplicateCache cache;
  std::string reply;
  auto args = Args(1);
  DrcKey a =
      DuplicateCache::MakeKey(Peer4(Transport::kUdp, "10.0.0.1", 800), 7, 100003, 3, 8, args);
  DrcKey b =
      DuplicateCache::MakeKey(Peer4(Transport::kUdp, "10.0.0.2", 800), 7, 100003, 3, 8, args);
  cache.Complete(a, cache.Start(a, &reply).token, "for-a");
  EXPECT_EQ(cache.Start(b, &reply).outcome, DuplicateCache::Outcome::kNew);
  ASSERT_EQ(cache.Start(a, &reply).outcome, DuplicateCache::Outcome::kReplay);
  EXPECT_EQ(reply, "for-a");
}

TEST(DuplicateCacheTest, ConcurrentUseStaysBounded) {
  DuplicateCache cache(DuplicateCacheOptions{.max_entries = 32, .max_bytes = 2048});
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&cache, t] {
      std::string reply;
      for (uint32_t i = 0; i < 2000; ++i) {
        DrcKey k = Key(i % 8 + 1000 * t);
        DuplicateCache::Begin b = cache.Start(k, &reply);
        if (b.outcome != DuplicateCache::Outcome::kNew) continue;
        if (i % 7 == 0) {
          cache.Abandon(k, b.token);
        } else {
          cache.Complete(k, b.token, std::string(i % 50, 'x'));
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_LE(cache.size(), 32u);
  EXPECT_GT(cache.stats().hits, 0u);
}

// A successor process imports what its predecessor exported: completed
// entries replay there, running calls are left out, and the checksum of the
// arguments is the same in every process (docs/handover.md).
TEST(DuplicateCacheTest, ExportedEntriesReplayAfterImport) {
  DuplicateCache old_cache;
  std::string reply;
  DuplicateCache::Begin done = old_cache.Start(Key(1), &reply);
  old_cache.Complete(Key(1), done.token, "first");
  DuplicateCache::Begin later = old_cache.Start(Key(2), &reply);
  old_cache.Complete(Key(2), later.token, "second");
  (void)old_cache.Start(Key(3), &reply);  // still running
  std::vector<DuplicateCache::Record> records = old_cache.Export();
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].reply, "first");  // least recently used first

  DuplicateCache successor;
  successor.Import(records);
  EXPECT_EQ(successor.size(), 2u);
  ASSERT_EQ(successor.Start(Key(1), &reply).outcome, DuplicateCache::Outcome::kReplay);
  EXPECT_EQ(reply, "first");
  ASSERT_EQ(successor.Start(Key(2), &reply).outcome, DuplicateCache::Outcome::kReplay);
  EXPECT_EQ(reply, "second");
  EXPECT_EQ(successor.Start(Key(3), &reply).outcome, DuplicateCache::Outcome::kNew);
  // The bounds hold for imported entries too.
  DuplicateCache small(DuplicateCacheOptions{.max_entries = 1, .max_bytes = 1024});
  small.Import(old_cache.Export());
  EXPECT_EQ(small.size(), 1u);
  EXPECT_EQ(small.Start(Key(2), &reply).outcome, DuplicateCache::Outcome::kReplay);
}

// The checksum does not depend on the process (absl::Hash would): a fixed
// input has a fixed value.
TEST(DuplicateCacheTest, ChecksumIsStableAcrossProcesses) {
  const std::vector<uint8_t> args = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  DrcKey a = DuplicateCache::MakeKey(Peer4(Transport::kUdp, "10.0.0.1", 800), 1, 100003, 3, 8,
                                     absl::MakeConstSpan(args));
  DrcKey b = DuplicateCache::MakeKey(Peer4(Transport::kUdp, "10.0.0.1", 800), 1, 100003, 3, 8,
                                     absl::MakeConstSpan(args));
  EXPECT_EQ(a.checksum, b.checksum);
  EXPECT_EQ(a.checksum, 0x1dd363a80873ac4full);
}

}  // namespace
}  // namespace nfs3d::rpc
