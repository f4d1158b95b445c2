#include "vfs/file_handle_codec.h"

#include <vector>

#include "gtest/gtest.h"

#include "vfs/vfs_error.h"

namespace nfs3d::vfs {
namespace {

HandleSecret Secret(uint8_t seed) {
  HandleSecret s;
  for (size_t i = 0; i < s.size(); ++i) s[i] = static_cast<uint8_t>(seed + i * 7);
  return s;
}

std::vector<uint8_t> KernelBytes(size_t n) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(0xa0 + i);
  return v;
}

TEST(FileHandleCodecTest, RoundTrip) {
  HandleCodec codec(Secret(1));
  auto fh = codec.Encode(42, 0x81, KernelBytes(12));
  ASSERT_TRUE(fh.ok()) << fh.status();
  EXPECT_EQ(fh->len, kHandleHeaderSize + 12 + kHandleMacSize);
  auto decoded = codec.Decode(*fh);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(decoded->export_id, 42u);
  EXPECT_EQ(decoded->handle_type, 0x81);
  EXPECT_EQ(std::vector<uint8_t>(decoded->kernel_bytes().begin(), decoded->kernel_bytes().end()),
            KernelBytes(12));
}

TEST(FileHandleCodecTest, LargestKernelHandleFits) {
  HandleCodec codec(Secret(1));
  auto fh = codec.Encode(1, 1, KernelBytes(kMaxKernelHandle));
  ASSERT_TRUE(fh.ok());
  EXPECT_EQ(fh->len, kMaxHandleSize);
  EXPECT_TRUE(codec.Decode(*fh).ok());
  auto too_long = codec.Encode(1, 1, KernelBytes(kMaxKernelHandle + 1));
  EXPECT_EQ(ErrnoOf(too_long.status()), EOVERFLOW);
}

TEST(FileHandleCodecTest, EveryFlippedBitIsRejected) {
  HandleCodec codec(Secret(1));
  FileHandle fh = *codec.Encode(7, 1, KernelBytes(8));
  for (size_t i = 0; i < fh.len; ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      FileHandle bad = fh;
      bad.data[i] ^= static_cast<uint8_t>(1 << bit);
      EXPECT_EQ(ErrnoOf(codec.Decode(bad).status()), kErrBadHandle) << i << ":" << bit;
    }
  }
}

TEST(FileHandleCodecTest, WrongLengthsAreRejected) {
  HandleCodec codec(Secret(1));
  FileHandle fh = *codec.Encode(7, 1, KernelBytes(8));
  for (uint8_t len = 0; len <= kMaxHandleSize; ++len) {
    if (len == fh.len) continue;
    FileHandle bad = fh;
    bad.len = len;
    EXPECT_EQ(ErrnoOf(codec.Decode(bad).status()), kErrBadHandle) << int{len};
  }
}

TEST(FileHandleCodecTest, OtherSecretOrExportIdIsRejected) {
  HandleCodec codec(Secret(1));
  HandleCodec other(Secret(2));
  FileHandle fh = *codec.Encode(7, 1, KernelBytes(8));
  EXPECT_EQ(ErrnoOf(other.Decode(fh).status()), kErrBadHandle);
  // Rewriting the export id without the secret breaks the MAC.
  FileHandle moved = fh;
  moved.data[4] = 8;
  EXPECT_EQ(ErrnoOf(codec.Decode(moved).status()), kErrBadHandle);
}

TEST(FileHandleTest, FromBytesAndEquality) {
  std::vector<uint8_t> bytes(80, 3);
  FileHandle a = FileHandle::FromBytes(bytes);
  EXPECT_EQ(a.len, kMaxHandleSize);
  FileHandle b = FileHandle::FromBytes(absl::MakeConstSpan(bytes.data(), 64));
  EXPECT_TRUE(a == b);
  b.data[63] = 4;
  EXPECT_FALSE(a == b);
  FileHandle c = FileHandle::FromBytes(absl::MakeConstSpan(bytes.data(), 10));
  EXPECT_FALSE(a == c);
}

}  // namespace
}  // namespace nfs3d::vfs
