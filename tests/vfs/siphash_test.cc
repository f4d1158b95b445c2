#include "vfs/siphash.h"

#include <vector>

#include "gtest/gtest.h"

namespace nfs3d::vfs {
namespace {

SipKey PaperKey() {
  SipKey key;
  for (size_t i = 0; i < key.size(); ++i) key[i] = static_cast<uint8_t>(i);
  return key;
}

std::vector<uint8_t> Counting(size_t n) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(i);
  return v;
}

// Appendix A of the SipHash paper: key 00..0f, message 00..0e.
TEST(SipHashTest, PaperAppendixVector) {
  EXPECT_EQ(SipHash24(PaperKey(), Counting(15)), 0xa129ca6149be45e5ULL);
}

// From the reference implementation's test vectors (key 00..0f, message
// 00..len-1), stored as little-endian byte strings there.
TEST(SipHashTest, ReferenceVectors) {
  EXPECT_EQ(SipHash24(PaperKey(), Counting(0)), 0x726fdb47dd0e0e31ULL);
  EXPECT_EQ(SipHash24(PaperKey(), Counting(1)), 0x74f839c593dc67fdULL);
  EXPECT_EQ(SipHash24(PaperKey(), Counting(8)), 0x93f5f5799a932462ULL);
  EXPECT_EQ(SipHash24(PaperKey(), Counting(63)), 0x958a324ceb064572ULL);
}

TEST(SipHashTest, KeyAndMessageMatter) {
  SipKey other = PaperKey();
  other[15] ^= 1;
  EXPECT_NE(SipHash24(PaperKey(), Counting(15)), SipHash24(other, Counting(15)));
  std::vector<uint8_t> msg = Counting(15);
  msg[3] ^= 0x80;
  EXPECT_NE(SipHash24(PaperKey(), Counting(15)), SipHash24(PaperKey(), msg));
}

}  // namespace
}  // namespace nfs3d::vfs
