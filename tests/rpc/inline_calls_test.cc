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

// An NFSv3 call with a credential of `flavor` and `cred_len` bytes, an
// AUTH_NONE verifier, a handle of `fh_len` bytes, offset, count and
// stable_how (a READ's arguments end after count; the rest is ignored).
std::vector<uint8_t> DataCall(uint32_t proc, uint32_t stable, uint32_t flavor = 1,
                              uint32_t cred_len = 20, uint32_t fh_len = 28) {
  std::vector<uint8_t> out = Call(100003, 3, proc, 0, 2, /*extra=*/0);
  auto word = [&out](uint32_t w) {
    for (int s = 24; s >= 0; s -= 8) out.push_back(static_cast<uint8_t>(w >> s));
  };
  word(flavor);
  word(cred_len);
  out.resize(out.size() + ((cred_len + 3) & ~3u));
  word(0);  // verifier: AUTH_NONE, empty
  word(0);
  word(fh_len);
  out.resize(out.size() + ((fh_len + 3) & ~3u));
  for (uint32_t w : {0u, 0u, 4096u, stable}) word(w);  // offset, count, stable
  return out;
}

TEST(InlineCallsTest, PageCacheCallsAreReadsAndUnstableWrites) {
  EXPECT_TRUE(IsPageCacheCall(DataCall(6, 0)));                         // READ
  EXPECT_TRUE(IsPageCacheCall(DataCall(6, 2)));                         // (no stable_how)
  EXPECT_TRUE(IsPageCacheCall(DataCall(7, 0)));                         // WRITE UNSTABLE
  EXPECT_TRUE(IsPageCacheCall(DataCall(7, 0, /*AUTH_NONE*/ 0, 0, 0)));  // empty cred, handle
  EXPECT_TRUE(IsPageCacheCall(DataCall(7, 0, 1, 400, 64)));             // the largest
  EXPECT_FALSE(IsPageCacheCall(DataCall(7, 1)));                        // DATA_SYNC
  EXPECT_FALSE(IsPageCacheCall(DataCall(7, 2)));                        // FILE_SYNC
  EXPECT_FALSE(IsPageCacheCall(DataCall(7, 3)));                        // no such stable_how
  EXPECT_FALSE(IsPageCacheCall(DataCall(21, 0)));                       // COMMIT
  EXPECT_FALSE(IsPageCacheCall(DataCall(1, 0)));                        // GETATTR
  EXPECT_FALSE(IsPageCacheCall(DataCall(7, 0, /*RPCSEC_GSS*/ 6)));      // may be sealed
  EXPECT_FALSE(IsPageCacheCall(DataCall(7, 0, 1, 401)));                // cred too long
  EXPECT_FALSE(IsPageCacheCall(DataCall(7, 0, 1, 20, 65)));             // handle too long
}

TEST(InlineCallsTest, TruncatedOrForeignCallsAreNotPageCacheCalls) {
  const std::vector<uint8_t> write = DataCall(7, 0);
  for (size_t size = 0; size < write.size(); ++size) {
    const std::vector<uint8_t> cut(write.begin(), write.begin() + size);
    EXPECT_FALSE(IsPageCacheCall(cut)) << size;
  }
  std::vector<uint8_t> huge_cred = DataCall(6, 0);
  huge_cred[31] = 0xff;  // credential length 0x...ff: past the end
  huge_cred[30] = 0xff;
  huge_cred[29] = 0xff;
  huge_cred[28] = 0xff;
  EXPECT_FALSE(IsPageCacheCall(huge_cred));
  std::vector<uint8_t> v2 = DataCall(6, 0);
  v2[19] = 2;  // NFSv2
  EXPECT_FALSE(IsPageCacheCall(v2));
  std::vector<uint8_t> reply = DataCall(6, 0);
  reply[7] = 1;  // a REPLY
  EXPECT_FALSE(IsPageCacheCall(reply));
}

}  // namespace
}  // namespace nfs3d::rpc
