// The reply-header decoder both RPC clients read replies with.
#include "client/rpc_wire.h"

#include <cstdint>
#include <initializer_list>
#include <vector>

#include "gtest/gtest.h"

namespace nfs3d::client {
namespace {

std::vector<uint8_t> Words(std::initializer_list<uint32_t> words) {
  std::vector<uint8_t> out;
  for (uint32_t w : words) {
    for (int shift : {24, 16, 8, 0}) out.push_back(static_cast<uint8_t>(w >> shift));
  }
  return out;
}

TEST(DecodeReplyHeaderTest, AcceptedRepliesPointAtTheResults) {
  // xid, REPLY, MSG_ACCEPTED, verifier AUTH_NONE (empty), SUCCESS, results.
  const std::vector<uint8_t> m = Words({7, 1, 0, 0, 0, 0, 0xabcd});
  ReplyHeader h;
  absl::Span<const uint8_t> results;
  ASSERT_TRUE(DecodeReplyHeader(m, &h, &results));
  EXPECT_EQ(h.xid, 7u);
  EXPECT_EQ(h.reply_stat, 0u);
  EXPECT_EQ(h.accept_stat, 0u);
  ASSERT_EQ(results.size(), 4u);
  EXPECT_EQ(results.data(), m.data() + 24);
  // PROG_MISMATCH: no results, the range served.
  ASSERT_TRUE(DecodeReplyHeader(Words({8, 1, 0, 0, 0, 2, 3, 4}), &h, &results));
  EXPECT_EQ(h.accept_stat, 2u);
  EXPECT_EQ(h.mismatch_low, 3u);
  EXPECT_EQ(h.mismatch_high, 4u);
  EXPECT_TRUE(results.empty());
}

TEST(DecodeReplyHeaderTest, DeniedRepliesSayWhy) {
  ReplyHeader h;
  absl::Span<const uint8_t> results;
  ASSERT_TRUE(DecodeReplyHeader(Words({9, 1, 1, 1, 5}), &h, &results));  // AUTH_ERROR, TOOWEAK
  EXPECT_EQ(h.reply_stat, 1u);
  EXPECT_EQ(h.reject_stat, 1u);
  EXPECT_EQ(h.auth_stat, 5u);
  ReplyHeader g;
  ASSERT_TRUE(DecodeReplyHeader(Words({9, 1, 1, 0, 2, 2}), &g, &results));  // RPC_MISMATCH
  EXPECT_EQ(g.reject_stat, 0u);
  EXPECT_EQ(g.mismatch_low, 2u);
}

TEST(DecodeReplyHeaderTest, MalformedMessagesAreRefused) {
  ReplyHeader h;
  absl::Span<const uint8_t> results;
  EXPECT_FALSE(DecodeReplyHeader(Words({1, 0, 2, 100003}), &h, &results));  // a CALL
  EXPECT_FALSE(DecodeReplyHeader(Words({1, 1, 2}), &h, &results));          // bad reply_stat
  EXPECT_FALSE(DecodeReplyHeader(Words({1, 1, 0, 0}), &h, &results));       // truncated verifier
  EXPECT_FALSE(DecodeReplyHeader(Words({1, 1, 0, 0, 1000, 0}), &h, &results));  // verifier > 400
  EXPECT_FALSE(DecodeReplyHeader(Words({1, 1, 1, 0, 2}), &h, &results));  // truncated mismatch
  EXPECT_FALSE(DecodeReplyHeader({}, &h, &results));
  EXPECT_EQ(h.xid, 0u);
  EXPECT_FALSE(DecodeReplyHeader(Words({42}), &h, &results));
  EXPECT_EQ(h.xid, 42u);  // known as soon as it is there
}

}  // namespace
}  // namespace nfs3d::client
