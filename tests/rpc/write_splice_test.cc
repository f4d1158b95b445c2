#include "rpc/write_splice.h"

#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace nfs3d::rpc {
namespace {

class Bytes {
 public:
  Bytes& U32(uint32_t v) {
    for (int s = 24; s >= 0; s -= 8) b_.push_back(static_cast<uint8_t>(v >> s));
    return *this;
  }
  Bytes& Opaque(size_t n) {
    U32(static_cast<uint32_t>(n));
    b_.insert(b_.end(), (n + 3) & ~size_t{3}, 0xab);
    return *this;
  }
  std::vector<uint8_t>& bytes() { return b_; }

 private:
  std::vector<uint8_t> b_;
};

// A WRITE call's head: RPC header (AUTH_SYS body of cred_len bytes), file
// handle, offset, count, stable, data length.
Bytes WriteHead(uint32_t proc = 7, size_t cred_len = 20, size_t fh_len = 28,
                uint32_t count = 1 << 20, uint32_t data_len = 1 << 20, uint32_t stable = 2) {
  Bytes b;
  b.U32(0x1234).U32(0).U32(2).U32(100003).U32(3).U32(proc);
  b.U32(1).Opaque(cred_len).U32(0).Opaque(0);
  b.Opaque(fh_len).U32(0).U32(4096).U32(count).U32(stable).U32(data_len);
  return b;
}

TEST(PeekWriteTest, FindsTheData) {
  std::vector<uint8_t> head = WriteHead().bytes();
  WriteLayout w;
  ASSERT_EQ(PeekWrite(head, &w), WritePeek::kWrite);
  EXPECT_EQ(w.args_begin, 24u + 8 + 20 + 8);
  EXPECT_EQ(w.data_begin, head.size());
  EXPECT_EQ(w.data_len, 1u << 20);
  // Data bytes after the head change nothing.
  head.resize(head.size() + 1000, 7);
  WriteLayout again;
  ASSERT_EQ(PeekWrite(head, &again), WritePeek::kWrite);
  EXPECT_EQ(again.data_begin, w.data_begin);
}

TEST(PeekWriteTest, EveryShorterHeadNeedsMore) {
  const std::vector<uint8_t> head = WriteHead().bytes();
  for (size_t n = 0; n < head.size(); ++n) {
    WriteLayout w;
    EXPECT_EQ(PeekWrite(absl::MakeConstSpan(head.data(), n), &w), WritePeek::kNeedMore) << n;
  }
}

TEST(PeekWriteTest, OnlyPlainWrites) {
  WriteLayout w;
  EXPECT_EQ(PeekWrite(WriteHead(/*proc=*/6).bytes(), &w), WritePeek::kNotWrite);  // READ
  EXPECT_EQ(PeekWrite(WriteHead(7, /*cred_len=*/404).bytes(), &w), WritePeek::kNotWrite);
  EXPECT_EQ(PeekWrite(WriteHead(7, 20, /*fh_len=*/65).bytes(), &w), WritePeek::kNotWrite);
  // A data length other than count is for the decoder to judge.
  EXPECT_EQ(PeekWrite(WriteHead(7, 20, 28, 1000, 2000).bytes(), &w), WritePeek::kNotWrite);
  // A stable_how out of range: once the longest head could be there, and
  // the data's first bytes are, it is not a WRITE to splice.
  std::vector<uint8_t> bad_stable = WriteHead(7, 20, 28, 1 << 20, 1 << 20, 3).bytes();
  EXPECT_EQ(PeekWrite(bad_stable, &w), WritePeek::kNeedMore);
  bad_stable.resize(bad_stable.size() + 64, 7);
  EXPECT_EQ(PeekWrite(bad_stable, &w), WritePeek::kNotWrite);
  std::vector<uint8_t> reply = WriteHead().bytes();
  reply[7] = 1;  // REPLY, not CALL
  EXPECT_EQ(PeekWrite(reply, &w), WritePeek::kNotWrite);
  std::vector<uint8_t> v2 = WriteHead().bytes();
  v2[19] = 2;  // NFS version 2
  EXPECT_EQ(PeekWrite(v2, &w), WritePeek::kNotWrite);
}

}  // namespace
}  // namespace nfs3d::rpc
