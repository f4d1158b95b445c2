#include "xdr/nfsacl_codec.h"

#include <string>

#include "gtest/gtest.h"

#include "xdr/encode_to_string.h"

namespace nfs3d::nfsacl {
namespace {

using xdr::EncodeToString;

std::string U32s(std::initializer_list<uint32_t> words) {
  std::string out;
  for (uint32_t w : words) {
    for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>(w >> shift));
  }
  return out;
}

template <typename T>
bool DecodeBytes(const std::string& bytes, T* out) {
  xdr::Decoder d(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  return Decode(d, out) && d.ok() && d.remaining() == 0;
}

nfs3::nfs_fh3 Fh() {
  nfs3::nfs_fh3 fh;
  fh.len = 4;
  fh.data[0] = 7;
  return fh;
}

TEST(NfsAclCodecTest, SetaclArgsAsLinuxSendsThem) {
  // fh, mask ACL, access ACL of 4 entries, empty default ACL.
  std::string wire =
      U32s({4, 0x07000000, 1, 4, 4, 1, 10, 6, 4, 20, 4, 0x10, 0, 4, 0x20, 0, 0, 0, 0});
  SETACL3args a;
  ASSERT_TRUE(DecodeBytes(wire, &a));
  EXPECT_EQ(a.mask, kAcl);
  EXPECT_EQ(a.access.count, 4u);
  ASSERT_EQ(a.access.entries.size(), 4u);
  EXPECT_EQ(a.access.entries[1], (aclent{4, 20, 4}));
  EXPECT_EQ(a.default_acl.count, 0u);
  EXPECT_EQ(EncodeToString(a), wire);
}

TEST(NfsAclCodecTest, MalformedArgsAreRefused) {
  SETACL3args a;
  // Unknown mask bits.
  EXPECT_FALSE(DecodeBytes(U32s({4, 0x07000000, 0x10, 0, 0, 0, 0}), &a));
  // More entries than the count.
  EXPECT_FALSE(DecodeBytes(U32s({4, 0x07000000, 1, 1, 2, 1, 0, 6, 4, 0, 4, 0, 0}), &a));
  // Set, but the count says more than is there.
  EXPECT_FALSE(DecodeBytes(U32s({4, 0x07000000, 1, 2, 1, 1, 0, 6, 0, 0}), &a));
  // ... which is fine when only the count was meant (mask without kAcl).
  EXPECT_TRUE(DecodeBytes(U32s({4, 0x07000000, 2, 2, 1, 1, 0, 6, 0, 0}), &a));
  // Over the entry limit, and a huge count with no entries behind it.
  EXPECT_FALSE(DecodeBytes(U32s({4, 0x07000000, 1, kMaxEntries + 1, 0, 0, 0}), &a));
  EXPECT_FALSE(DecodeBytes(U32s({4, 0x07000000, 1, kMaxEntries, kMaxEntries}), &a));
  // Truncated.
  EXPECT_FALSE(DecodeBytes(U32s({4, 0x07000000, 1, 1, 1, 1}), &a));
  GETACL3args g;
  EXPECT_FALSE(DecodeBytes(U32s({4, 0x07000000}), &g));
  EXPECT_FALSE(DecodeBytes(U32s({65, 0}), &g));  // handle too long
}

TEST(NfsAclCodecTest, GetaclReply) {
  GETACL3res r;
  r.status = nfs3::NFS3ERR_STALE;
  EXPECT_EQ(EncodeToString(r), U32s({70, 0}));
  r.status = nfs3::NFS3_OK;
  r.mask = kAcl | kDfAclCnt;
  r.access = {4, {{1, 10, 6}, {4, 20, 4}, {0x10, 0, 4}, {0x20, 0, 0}}};
  r.default_acl = {5, {}};
  EXPECT_EQ(EncodeToString(r),
            U32s({0, 0, 9, 4, 4, 1, 10, 6, 4, 20, 4, 0x10, 0, 4, 0x20, 0, 0, 5, 0}));
  GETACL3args g{Fh(), kAcl | kDfAcl};
  GETACL3args back;
  ASSERT_TRUE(DecodeBytes(EncodeToString(g), &back));
  EXPECT_EQ(back.mask, kAcl | kDfAcl);
  EXPECT_EQ(back.fh.len, 4);
}

}  // namespace
}  // namespace nfs3d::nfsacl
