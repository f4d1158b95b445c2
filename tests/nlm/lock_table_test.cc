#include "nlm/lock_table.h"

#include <vector>

#include "gtest/gtest.h"

namespace nfs3d::nlm {
namespace {

const LockOwner kA{"hostA", 1, "ohA"};
const LockOwner kA2{"hostA", 2, "ohA2"};  // another process on the same host
const LockOwner kB{"hostB", 1, "ohA"};    // same svid and oh, other host

std::vector<Lock> Sorted(std::vector<Lock> v) {
  std::sort(v.begin(), v.end(), [](const Lock& a, const Lock& b) {
    return a.first != b.first ? a.first < b.first : a.owner.svid < b.owner.svid;
  });
  return v;
}

TEST(NlmRangeTest, LengthZeroRunsToTheEnd) {
  uint64_t first, last;
  NlmRange(10, 0, &first, &last);
  EXPECT_EQ(first, 10u);
  EXPECT_EQ(last, kToEnd);
  NlmRange(10, 5, &first, &last);
  EXPECT_EQ(last, 14u);
  NlmRange(UINT64_MAX - 1, 100, &first, &last);  // overflowing length: clamped
  EXPECT_EQ(last, kToEnd);
  uint64_t offset, len;
  ToNlmRange(10, kToEnd, &offset, &len);
  EXPECT_EQ(len, 0u);
  ToNlmRange(10, 14, &offset, &len);
  EXPECT_EQ(offset, 10u);
  EXPECT_EQ(len, 5u);
}

TEST(LockTableTest, SharedLocksCoexistExclusiveConflicts) {
  LockTable t;
  EXPECT_EQ(t.Lock("f", kA, 0, 99, false), LockResult::kGranted);
  EXPECT_EQ(t.Lock("f", kB, 50, 149, false), LockResult::kGranted);
  Lock conflict;
  EXPECT_EQ(t.Lock("f", kA2, 90, 95, true, &conflict), LockResult::kConflict);
  EXPECT_TRUE(conflict.owner == kA || conflict.owner == kB);
  EXPECT_EQ(t.Lock("f", kA2, 150, 200, true), LockResult::kGranted);   // adjacent, no overlap
  EXPECT_EQ(t.Lock("g", kA2, 0, kToEnd, true), LockResult::kGranted);  // another file
  EXPECT_EQ(t.size(), 4u);
}

TEST(LockTableTest, TestReportsTheConflictingHolder) {
  LockTable t;
  ASSERT_EQ(t.Lock("f", kA, 10, 19, true), LockResult::kGranted);
  std::optional<Lock> c = t.Test("f", kB, 15, 15, false);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->owner, kA);
  EXPECT_EQ(c->first, 10u);
  EXPECT_EQ(c->last, 19u);
  EXPECT_TRUE(c->exclusive);
  EXPECT_FALSE(t.Test("f", kA, 15, 15, true).has_value());  // own locks never conflict
  EXPECT_FALSE(t.Test("f", kB, 20, 30, true).has_value());
}

TEST(LockTableTest, OwnersAreIsolatedByHostSvidAndHandle) {
  LockTable t;
  ASSERT_EQ(t.Lock("f", kA, 0, 9, true), LockResult::kGranted);
  EXPECT_EQ(t.Lock("f", kB, 0, 9, true), LockResult::kConflict);   // same svid/oh, other host
  EXPECT_EQ(t.Lock("f", kA2, 0, 9, true), LockResult::kConflict);  // same host, other process
  LockOwner other_oh{"hostA", 1, "different"};
  EXPECT_EQ(t.Lock("f", other_oh, 0, 9, false), LockResult::kConflict);
  // Unlocking as somebody else does nothing.
  EXPECT_EQ(t.Unlock("f", kB, 0, kToEnd), LockResult::kGranted);
  EXPECT_EQ(t.size(), 1u);
  EXPECT_TRUE(t.Holds("f", kA, 0, 9, true));
}

TEST(LockTableTest, AdjacentAndOverlappingRangesOfOneModeMerge) {
  LockTable t;
  ASSERT_EQ(t.Lock("f", kA, 0, 9, true), LockResult::kGranted);
  ASSERT_EQ(t.Lock("f", kA, 10, 19, true), LockResult::kGranted);  // adjacent
  ASSERT_EQ(t.Lock("f", kA, 15, 29, true), LockResult::kGranted);  // overlapping
  ASSERT_EQ(t.Lock("f", kA, 40, 49, true), LockResult::kGranted);  // a gap stays a gap
  EXPECT_EQ(Sorted(t.LocksOf("f")), (std::vector<Lock>{{kA, 0, 29, true}, {kA, 40, 49, true}}));
  ASSERT_EQ(t.Lock("f", kA, 30, 39, true), LockResult::kGranted);  // fills the gap
  EXPECT_EQ(t.LocksOf("f"), (std::vector<Lock>{{kA, 0, 49, true}}));
  EXPECT_EQ(t.CountOf("hostA"), 1u);
}

TEST(LockTableTest, UnlockInTheMiddleSplits) {
  LockTable t;
  ASSERT_EQ(t.Lock("f", kA, 0, kToEnd, false), LockResult::kGranted);
  ASSERT_EQ(t.Unlock("f", kA, 100, 199), LockResult::kGranted);
  EXPECT_EQ(Sorted(t.LocksOf("f")),
            (std::vector<Lock>{{kA, 0, 99, false}, {kA, 200, kToEnd, false}}));
  EXPECT_EQ(t.Lock("f", kB, 100, 199, true), LockResult::kGranted);  // the hole is free
  EXPECT_EQ(t.Lock("f", kB, 99, 100, true), LockResult::kConflict);
  ASSERT_EQ(t.Unlock("f", kA, 0, kToEnd), LockResult::kGranted);
  EXPECT_EQ(t.LocksOf("f"), (std::vector<Lock>{{kB, 100, 199, true}}));
  EXPECT_EQ(t.size(), 1u);
}

TEST(LockTableTest, UpgradeAndDowngradeReplaceTheMode) {
  LockTable t;
  ASSERT_EQ(t.Lock("f", kA, 0, 99, false), LockResult::kGranted);
  // Upgrade the middle: shared, exclusive, shared.
  ASSERT_EQ(t.Lock("f", kA, 40, 59, true), LockResult::kGranted);
  EXPECT_EQ(Sorted(t.LocksOf("f")),
            (std::vector<Lock>{{kA, 0, 39, false}, {kA, 40, 59, true}, {kA, 60, 99, false}}));
  EXPECT_EQ(t.Lock("f", kB, 50, 50, false), LockResult::kConflict);
  EXPECT_EQ(t.Lock("f", kB, 10, 10, false), LockResult::kGranted);
  // Upgrading a range another owner shares fails and changes nothing.
  EXPECT_EQ(t.Lock("f", kA, 0, 99, true), LockResult::kConflict);
  EXPECT_EQ(t.CountOf("hostA"), 3u);
  // Downgrade back: everything merges into one shared range.
  ASSERT_EQ(t.Lock("f", kA, 40, 59, false), LockResult::kGranted);
  EXPECT_TRUE(t.Holds("f", kA, 0, 99, false));
  EXPECT_EQ(t.CountOf("hostA"), 1u);
}

TEST(LockTableTest, RepeatingALockIsIdempotent) {
  LockTable t;
  for (int i = 0; i < 5; ++i) {
    ASSERT_EQ(t.Lock("f", kA, 0, 0, true), LockResult::kGranted);
  }
  EXPECT_EQ(t.size(), 1u);
  ASSERT_EQ(t.Unlock("f", kA, 0, 0), LockResult::kGranted);
  EXPECT_EQ(t.size(), 0u);
  EXPECT_TRUE(t.LocksOf("f").empty());
  EXPECT_EQ(t.Lock("f", kB, 0, 0, true), LockResult::kGranted);  // nothing left behind
}

TEST(LockTableTest, LimitsPerHostAndTotal) {
  LockTable t(LockLimits{/*max_total=*/5, /*max_per_host=*/3});
  for (uint64_t i = 0; i < 3; ++i) {
    ASSERT_EQ(t.Lock("f", kA, i * 10, i * 10, true), LockResult::kGranted);
  }
  EXPECT_EQ(t.Lock("f", kA, 100, 100, true), LockResult::kNoLocks);
  EXPECT_EQ(t.Lock("f", kA2, 200, 200, true), LockResult::kNoLocks);  // same host
  // Replacing in place does not grow the count.
  EXPECT_EQ(t.Lock("f", kA, 0, 0, false), LockResult::kGranted);
  // Splitting would grow it: refused, nothing changed.
  ASSERT_EQ(t.Unlock("f", kA, 0, kToEnd), LockResult::kGranted);
  ASSERT_EQ(t.Lock("f", kA, 0, 99, true), LockResult::kGranted);
  ASSERT_EQ(t.Unlock("f", kA, 10, 10), LockResult::kGranted);  // 2 records
  ASSERT_EQ(t.Unlock("f", kA, 20, 20), LockResult::kGranted);  // 3 records
  EXPECT_EQ(t.Unlock("f", kA, 30, 30), LockResult::kNoLocks);
  EXPECT_EQ(t.CountOf("hostA"), 3u);
  ASSERT_EQ(t.Lock("g", kB, 0, 0, true), LockResult::kGranted);
  ASSERT_EQ(t.Lock("g", kB, 2, 2, true), LockResult::kGranted);
  EXPECT_EQ(t.Lock("g", kB, 4, 4, true), LockResult::kNoLocks);  // total reached
}

TEST(LockTableTest, ReleaseHostDropsOnlyThatHost) {
  LockTable t;
  ASSERT_EQ(t.Lock("f", kA, 0, 9, true), LockResult::kGranted);
  ASSERT_EQ(t.Lock("g", kA2, 0, 9, false), LockResult::kGranted);
  ASSERT_EQ(t.Lock("g", kB, 0, 9, false), LockResult::kGranted);
  std::vector<std::string> files = t.ReleaseHost("hostA");
  std::sort(files.begin(), files.end());
  EXPECT_EQ(files, (std::vector<std::string>{"f", "g"}));
  EXPECT_EQ(t.size(), 1u);
  EXPECT_EQ(t.CountOf("hostA"), 0u);
  EXPECT_EQ(t.Hosts(), (std::vector<std::string>{"hostB"}));
  EXPECT_EQ(t.Lock("f", kB, 0, kToEnd, true), LockResult::kGranted);
}

}  // namespace
}  // namespace nfs3d::nlm
