#include "rpc/inline_calls.h"

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"

namespace nfs3d::rpc {
namespace {

// xid, CALL, rpcvers, prog, vers, proc, then `extra` bytes of credentials etc.
std::vector<uint8_t> Call(uint32_t prog, uint32_t vers, uint32_t proc, uint32_t mtype = 0,
                          uint32_t rpcvers = 2, size_t extra = 16) {
  std::vector<uint8_t> out;
  for (uint32_t w : {0x1234u, mtype, rpcvers, prog, vers, proc}) {
    for (int s = 24; s >= 0; s -= 8) out.push_back(static_cast<uint8_t>(w >> s));
  }
  out.resize(out.size() + extra);
  return out;
}

TEST(InlineCallsTest, NullAndNfsGetattrRunInline) {
  EXPECT_TRUE(RunsInline(Call(100003, 3, 0)));
  EXPECT_TRUE(RunsInline(Call(100005, 3, 0)));  // MOUNT NULL
  EXPECT_TRUE(RunsInline(Call(100003, 3, 1)));  // GETATTR
  EXPECT_TRUE(RunsInline(Call(100003, 3, 3)));  // LOOKUP
  EXPECT_TRUE(RunsInline(Call(100003, 3, 4)));  // ACCESS
}

TEST(InlineCallsTest, EverythingElseGoesToWorkers) {
  EXPECT_FALSE(RunsInline(Call(100003, 3, 6)));               // READ
  EXPECT_FALSE(RunsInline(Call(100003, 3, 7)));               // WRITE
  EXPECT_FALSE(RunsInline(Call(100003, 3, 8)));               // CREATE
  EXPECT_FALSE(RunsInline(Call(100003, 2, 1)));               // v2 GETATTR
  EXPECT_FALSE(RunsInline(Call(100005, 3, 1)));               // MNT
  EXPECT_FALSE(RunsInline(Call(100003, 3, 1, /*mtype=*/1)));  // a REPLY
  EXPECT_FALSE(RunsInline(Call(100003, 3, 0, 0, /*rpcvers=*/3)));
  EXPECT_FALSE(RunsInline(Call(100003, 3, 1, 0, 2, /*extra=*/4096)));  // too big to be one
  std::vector<uint8_t> truncated = Call(100003, 3, 0, 0, 2, 0);
  truncated.resize(20);
  EXPECT_FALSE(RunsInline(truncated));
  EXPECT_FALSE(RunsInline({}));
}

TEST(InlineBudgetTest, ABusyReadSpillsGetattrsToThePoolButNeverNull) {
  InlineBudget budget;
  const std::vector<uint8_t> getattr = Call(100003, 3, 1), null = Call(100003, 3, 0);
  for (size_t i = 0; i < InlineBudget::kInlineCallsPerRead; ++i) {
    EXPECT_TRUE(budget.RunHere(getattr, /*can_spread=*/true)) << i;
  }
  EXPECT_FALSE(budget.RunHere(getattr, true));  // spilled
  EXPECT_TRUE(budget.RunHere(null, true));
  EXPECT_TRUE(budget.RunHere(getattr, /*can_spread=*/false));  // no pool: stays
  EXPECT_FALSE(budget.RunHere(Call(100003, 3, 6), true));      // READ never runs inline
  budget.Reset();
  EXPECT_TRUE(budget.RunHere(getattr, true));
}

TEST(InlineCallsTest, OnlyCommitWaitsForSync) {
  EXPECT_TRUE(WaitsForSync(Call(100003, 3, 21)));
  EXPECT_FALSE(WaitsForSync(Call(100003, 3, 7)));
  EXPECT_FALSE(WaitsForSync(Call(100005, 3, 21)));
  EXPECT_FALSE(WaitsForSync(Call(100003, 3, 21, /*mtype=*/1)));
  EXPECT_FALSE(WaitsForSync({}));
}

TEST(InlineCallsTest, NfsMetadataCallsAreEverythingButData) {
  for (uint32_t proc : {3u, 4u, 8u, 9u, 12u, 13u, 14u, 16u, 17u, 19u}) {
    EXPECT_TRUE(IsNfsMetadataCall(Call(100003, 3, proc))) << proc;
  }
  for (uint32_t proc : {6u, 7u, 21u}) {  // READ, WRITE, COMMIT
    EXPECT_FALSE(IsNfsMetadataCall(Call(100003, 3, proc))) << proc;
  }
  EXPECT_FALSE(IsNfsMetadataCall(Call(100005, 3, 1)));  // MOUNT
  EXPECT_FALSE(IsNfsMetadataCall(Call(100021, 4, 2)));  // NLM
  EXPECT_FALSE(IsNfsMetadataCall(Call(100003, 2, 4)));  // not v3
  EXPECT_FALSE(IsNfsMetadataCall(Call(100003, 3, 8, /*mtype=*/1)));
  EXPECT_FALSE(IsNfsMetadataCall({}));
}

}  // namespace
}  // namespace nfs3d::rpc
