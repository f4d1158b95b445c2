// MOUNT v1/v3 codec tests: byte layouts of every result, dirpath limits.
#include "xdr/mount3_codec.h"

#include <cstdio>
#include <string>

#include "gtest/gtest.h"

namespace nfs3d::mount3 {
namespace {

using xdr::BufferChain;
using xdr::Decoder;
using xdr::Encoder;

std::string Hex(const std::string& s) {
  std::string out;
  char buf[3];
  for (unsigned char c : s) {
    std::snprintf(buf, sizeof(buf), "%02x", c);
    out += buf;
  }
  return out;
}

template <typename T>
std::string EncodeHex(const T& v) {
  BufferChain chain;
  Encoder e(&chain);
  Encode(e, v);
  return Hex(chain.Flatten());
}

std::string StringArg(const std::string& s) {
  BufferChain chain;
  Encoder e(&chain);
  e.String(s);
  return chain.Flatten();
}

bool DecodeDirpath(const std::string& wire, DirpathArgs* a) {
  Decoder d(reinterpret_cast<const uint8_t*>(wire.data()), wire.size());
  return Decode(d, a) && d.ok() && d.remaining() == 0;
}

TEST(MountArgsTest, Dirpath) {
  DirpathArgs a;
  std::string wire = StringArg("/export/home");
  ASSERT_TRUE(DecodeDirpath(wire, &a));
  EXPECT_EQ(a.dirpath, "/export/home");
  std::string max = StringArg(std::string(kMntPathLen, 'p'));
  ASSERT_TRUE(DecodeDirpath(max, &a));
  EXPECT_EQ(a.dirpath.size(), kMntPathLen);
  EXPECT_FALSE(DecodeDirpath(StringArg(std::string(kMntPathLen + 1, 'p')), &a));
  for (size_t n = 0; n < wire.size(); ++n) {
    EXPECT_FALSE(DecodeDirpath(wire.substr(0, n), &a)) << n;
  }
}

TEST(MountResTest, Mnt3Ok) {
  MountRes3 r;
  r.fhandle.len = 5;
  for (int i = 0; i < 5; ++i) r.fhandle.data[i] = static_cast<uint8_t>(0xf0 + i);
  r.auth_flavors = {1, 0};
  EXPECT_EQ(EncodeHex(r),
            "00000000"
            "00000005"
            "f0f1f2f3f4000000"
            "00000002"
            "00000001"
            "00000000");
}

TEST(MountResTest, Mnt3Error) {
  MountRes3 r;
  r.status = MNT3ERR_ACCES;
  r.fhandle.len = 5;
  r.auth_flavors = {1};
  EXPECT_EQ(EncodeHex(r), "0000000d");
}

TEST(MountResTest, Mnt1) {
  MountRes1 r;
  for (int i = 0; i < 32; ++i) r.fhandle[i] = static_cast<uint8_t>(i);
  EXPECT_EQ(EncodeHex(r),
            "00000000"
            "000102030405060708090a0b0c0d0e0f"
            "101112131415161718191a1b1c1d1e1f");
  r.status = 2;
  EXPECT_EQ(EncodeHex(r), "00000002");
}

TEST(MountResTest, DumpList) {
  EXPECT_EQ(EncodeHex(MountList{}), "00000000");
  MountList l;
  l.entries = {{"host1", "/a"}, {"h", "/export"}};
  EXPECT_EQ(EncodeHex(l),
            "00000001"
            "00000005"
            "686f737431000000"
            "00000002"
            "2f610000"
            "00000001"
            "00000001"
            "68000000"
            "00000007"
            "2f6578706f7274"
            "00"
            "00000000");
}

TEST(MountResTest, ExportList) {
  EXPECT_EQ(EncodeHex(ExportList{}), "00000000");
  ExportList l;
  l.entries = {{"/srv", {"*"}}, {"/pub", {}}, {"/x", {"10.0.0.0/8", "a"}}};
  EXPECT_EQ(EncodeHex(l),
            "00000001"
            "00000004"
            "2f737276"  // /srv
            "00000001"
            "00000001"
            "2a000000"
            "00000000"  // groups: *
            "00000001"
            "00000004"
            "2f707562"  // /pub
            "00000000"  // no groups
            "00000001"
            "00000002"
            "2f780000"  // /x
            "00000001"
            "0000000a"
            "31302e302e302e302f380000"
            "00000001"
            "00000001"
            "61000000"
            "00000000"
            "00000000");  // end of exports
}

}  // namespace
}  // namespace nfs3d::mount3
