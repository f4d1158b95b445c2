#include "tools/nfs3bench/pattern.h"

#include <cstring>
#include <vector>

#include "gtest/gtest.h"

namespace nfs3d::bench {
namespace {

TEST(PatternTest, PiecesAgreeWithTheWhole) {
  Pattern p(7);
  std::vector<uint8_t> whole(3 << 20);
  p.Fill(0, absl::MakeSpan(whole));
  // Unaligned pieces give the same bytes as one big fill.
  for (uint64_t off : {0ull, 1ull, 4095ull, 4096ull, 4100ull, (1ull << 20) - 3, 2000000ull}) {
    std::vector<uint8_t> piece(70001);
    p.Fill(off, absl::MakeSpan(piece));
    ASSERT_EQ(0, std::memcmp(piece.data(), whole.data() + off, piece.size())) << off;
    EXPECT_FALSE(p.Verify(off, piece).has_value());
  }
}

TEST(PatternTest, AppendedChainHoldsTheFilledBytes) {
  xdr::BufferChain chain;
  std::vector<uint8_t> want;
  {
    Pattern p(9);
    for (uint64_t off : {0ull, 3ull, 4092ull, (1ull << 20) - 5, 5000000ull}) {
      for (size_t len : {size_t{1}, size_t{6}, size_t{4096}, size_t{70001}, size_t{1} << 20}) {
        std::vector<uint8_t> piece(len);
        p.Fill(off, absl::MakeSpan(piece));
        want.insert(want.end(), piece.begin(), piece.end());
        p.AppendTo(off, len, &chain);
      }
    }
  }  // the chain keeps the pattern's bytes alive
  ASSERT_EQ(chain.size(), want.size());
  const std::string got = chain.Flatten();
  EXPECT_EQ(0, std::memcmp(got.data(), want.data(), want.size()));
}

TEST(PatternTest, VerifyFindsTheFirstBadByte) {
  Pattern p(1);
  std::vector<uint8_t> data(10000);
  p.Fill(12345, absl::MakeSpan(data));
  data[777] ^= 1;
  data[9000] ^= 1;
  auto bad = p.Verify(12345, data);
  ASSERT_TRUE(bad.has_value());
  EXPECT_EQ(*bad, 12345u + 777);
}

TEST(PatternTest, BlocksOnePeriodApartDifferAndSeedsDiffer) {
  Pattern p(1), q(2);
  std::vector<uint8_t> a(4096), b(4096), c(4096);
  p.Fill(0, absl::MakeSpan(a));
  p.Fill(1 << 20, absl::MakeSpan(b));
  q.Fill(0, absl::MakeSpan(c));
  EXPECT_NE(a, b);  // the block stamp differs
  EXPECT_NE(a, c);
  // Data shifted by one block does not verify.
  EXPECT_TRUE(p.Verify(4096, a).has_value());
}

}  // namespace
}  // namespace nfs3d::bench
