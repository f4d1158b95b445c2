// Tests of the core XDR layer: Decoder, Encoder and BufferChain.
#include <sys/uio.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"

#include "xdr/buffer_chain.h"
#include "xdr/decoder.h"
#include "xdr/describe.h"
#include "xdr/encoder.h"

namespace nfs3d::xdr {
namespace {

std::string Bytes(std::initializer_list<uint8_t> b) { return std::string(b.begin(), b.end()); }

Decoder MakeDecoder(const std::string& s) {
  return Decoder(reinterpret_cast<const uint8_t*>(s.data()), s.size());
}

absl::Span<const uint8_t> AsSpan(const std::string& s) {
  return absl::Span<const uint8_t>(reinterpret_cast<const uint8_t*>(s.data()), s.size());
}

std::string ToString(absl::Span<const uint8_t> s) {
  return std::string(reinterpret_cast<const char*>(s.data()), s.size());
}

TEST(XdrEncoderTest, PrimitivesAreBigEndian) {
  BufferChain chain;
  Encoder e(&chain);
  e.U32(0x01020304);
  e.I32(-2);
  e.U64(0x0102030405060708ull);
  e.I64(-1);
  e.Bool(true);
  e.Bool(false);
  EXPECT_EQ(chain.Flatten(),
            Bytes({1,    2,    3,    4,    0xff, 0xff, 0xff, 0xfe, 1, 2, 3, 4, 5, 6, 7, 8,
                   0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 1, 0, 0, 0, 0}));
  EXPECT_EQ(chain.size(), 32u);
}

TEST(XdrRoundTripTest, EveryPrimitive) {
  BufferChain chain;
  Encoder e(&chain);
  const uint32_t u32s[] = {0, 1, 0x7fffffff, 0x80000000, 0xffffffff};
  const int32_t i32s[] = {0, -1, std::numeric_limits<int32_t>::min(),
                          std::numeric_limits<int32_t>::max()};
  const uint64_t u64s[] = {0, 1, 0xffffffffull, 0x100000000ull, ~0ull};
  const int64_t i64s[] = {0, -1, std::numeric_limits<int64_t>::min(),
                          std::numeric_limits<int64_t>::max()};
  for (uint32_t v : u32s) e.U32(v);
  for (int32_t v : i32s) e.I32(v);
  for (uint64_t v : u64s) e.U64(v);
  for (int64_t v : i64s) e.I64(v);
  e.Bool(true);
  e.Bool(false);
  e.String("");
  e.String("a");
  e.String("abcd");
  e.String("hello");
  const std::string fixed = "xyz";
  e.FixedOpaque(AsSpan(fixed));
  e.Opaque(AsSpan(std::string("\0\1\2\3\4\5", 6)));

  std::string wire = chain.Flatten();
  Decoder d = MakeDecoder(wire);
  for (uint32_t v : u32s) EXPECT_EQ(d.U32(), v);
  for (int32_t v : i32s) EXPECT_EQ(d.I32(), v);
  for (uint64_t v : u64s) EXPECT_EQ(d.U64(), v);
  for (int64_t v : i64s) EXPECT_EQ(d.I64(), v);
  EXPECT_TRUE(d.Bool());
  EXPECT_FALSE(d.Bool());
  EXPECT_EQ(d.String(100), "");
  EXPECT_EQ(d.String(100), "a");
  EXPECT_EQ(d.String(100), "abcd");
  EXPECT_EQ(d.String(100), "hello");
  EXPECT_EQ(ToString(d.FixedOpaque(3)), "xyz");
  EXPECT_EQ(ToString(d.Opaque(6)), std::string("\0\1\2\3\4\5", 6));
  EXPECT_TRUE(d.ok());
  EXPECT_EQ(d.remaining(), 0u);
  EXPECT_EQ(d.position(), wire.size());
}

TEST(XdrDecoderTest, BoolRejectsOtherValues) {
  std::string wire = Bytes({0, 0, 0, 2});
  Decoder d = MakeDecoder(wire);
  d.Bool();
  EXPECT_FALSE(d.ok());
}

TEST(XdrDecoderTest, ReadPastEndFailsAndIsSticky) {
  std::string wire = Bytes({0, 0, 0, 7, 0, 0});
  Decoder d = MakeDecoder(wire);
  EXPECT_EQ(d.U32(), 7u);
  EXPECT_TRUE(d.ok());
  EXPECT_EQ(d.remaining(), 2u);
  EXPECT_EQ(d.U32(), 0u);  // only 2 bytes left
  EXPECT_FALSE(d.ok());
  EXPECT_EQ(d.remaining(), 0u);
  EXPECT_TRUE(d.Rest().empty());
  // Everything after the failure reads as zero / empty.
  EXPECT_EQ(d.U64(), 0u);
  EXPECT_TRUE(d.Opaque(100).empty());
  EXPECT_EQ(d.String(100), "");
  EXPECT_EQ(d.ArrayLength(100), 0u);
  EXPECT_FALSE(d.ok());
}

TEST(XdrDecoderTest, StickyAfterExplicitFail) {
  std::string wire = Bytes({0, 0, 0, 1});
  Decoder d = MakeDecoder(wire);
  d.Fail();
  EXPECT_EQ(d.U32(), 0u);
  EXPECT_FALSE(d.ok());
}

TEST(XdrDecoderTest, U64NeedsEightBytes) {
  std::string wire = Bytes({0, 0, 0, 1, 0, 0, 0});
  Decoder d = MakeDecoder(wire);
  d.U64();
  EXPECT_FALSE(d.ok());
  EXPECT_EQ(d.U64(), 0u);
}

// KNOWN BUG in decoder.cc (reported to the lead): a U64 whose high word fits
// but low word does not returns high << 32 instead of 0. Harmless for codecs
// that check ok() before using values; enable once fixed.
TEST(XdrDecoderTest, FailedU64ReturnsZero) {
  std::string wire = Bytes({0, 0, 0, 1, 0, 0, 0});
  Decoder d = MakeDecoder(wire);
  EXPECT_EQ(d.U64(), 0u);
  EXPECT_FALSE(d.ok());
}

TEST(XdrDecoderTest, EmptyBuffer) {
  Decoder d(nullptr, 0);
  EXPECT_EQ(d.remaining(), 0u);
  EXPECT_TRUE(d.ok());
  d.U32();
  EXPECT_FALSE(d.ok());
}

TEST(XdrDecoderTest, RestIsTheUndecodedTail) {
  std::string wire = Bytes({0, 0, 0, 1, 9, 8, 7});
  Decoder d = MakeDecoder(wire);
  d.U32();
  EXPECT_EQ(ToString(d.Rest()), Bytes({9, 8, 7}));
}

TEST(XdrDecoderTest, OpaqueMax) {
  BufferChain chain;
  Encoder e(&chain);
  e.Opaque(AsSpan(std::string(8, 'x')));
  std::string wire = chain.Flatten();
  {
    Decoder d = MakeDecoder(wire);
    EXPECT_EQ(d.Opaque(8).size(), 8u);
    EXPECT_TRUE(d.ok());
  }
  {
    Decoder d = MakeDecoder(wire);
    EXPECT_TRUE(d.Opaque(7).empty());
    EXPECT_FALSE(d.ok());
  }
  {
    Decoder d = MakeDecoder(wire);
    EXPECT_EQ(d.String(7), "");
    EXPECT_FALSE(d.ok());
  }
}

TEST(XdrDecoderTest, OpaqueLengthBeyondBufferFails) {
  std::string wire = Bytes({0xff, 0xff, 0xff, 0xff, 1, 2, 3, 4});
  Decoder d = MakeDecoder(wire);
  d.Opaque(std::numeric_limits<uint32_t>::max());
  EXPECT_FALSE(d.ok());
}

TEST(XdrDecoderTest, FixedOpaqueHugeLengthReturnsNothing) {
  std::string wire = Bytes({1, 2, 3, 4});
  Decoder d = MakeDecoder(wire);
  EXPECT_TRUE(d.FixedOpaque(std::numeric_limits<size_t>::max()).empty());
  EXPECT_TRUE(d.FixedOpaque(std::numeric_limits<size_t>::max() - 2).empty());
}

// KNOWN BUG in decoder.cc (reported to the lead): when PadTo4(len) overflows
// (len > SIZE_MAX - 3) FixedOpaque returns empty without marking the decoder
// failed. Unreachable through Opaque() (lengths are u32), so only direct
// callers with absurd lengths are affected; enable once fixed.
TEST(XdrDecoderTest, FixedOpaqueOverflowFails) {
  std::string wire = Bytes({1, 2, 3, 4});
  Decoder d = MakeDecoder(wire);
  d.FixedOpaque(std::numeric_limits<size_t>::max());
  EXPECT_FALSE(d.ok());
}

TEST(XdrPaddingTest, EncoderPadsWithZeros) {
  for (size_t n = 0; n <= 9; ++n) {
    BufferChain chain;
    Encoder e(&chain);
    e.Opaque(AsSpan(std::string(n, '\xaa')));
    std::string wire = chain.Flatten();
    ASSERT_EQ(wire.size(), 4 + PadTo4(n)) << n;
    EXPECT_EQ(static_cast<uint8_t>(wire[3]), n);
    for (size_t i = 4 + n; i < wire.size(); ++i) EXPECT_EQ(wire[i], 0) << n;

    BufferChain fixed;
    Encoder f(&fixed);
    f.FixedOpaque(AsSpan(std::string(n, '\xaa')));
    EXPECT_EQ(fixed.size(), PadTo4(n));
  }
}

TEST(XdrPaddingTest, DecoderSkipsPaddingAndRequiresIt) {
  // opaque of 5 bytes: length + 5 + 3 padding, then a u32.
  std::string wire = Bytes({0, 0, 0, 5, 1, 2, 3, 4, 5, 0, 0, 0, 0, 0, 0, 9});
  Decoder d = MakeDecoder(wire);
  EXPECT_EQ(ToString(d.Opaque(10)), Bytes({1, 2, 3, 4, 5}));
  EXPECT_EQ(d.U32(), 9u);
  EXPECT_TRUE(d.ok());

  // The padding itself missing is a truncation.
  std::string cut = wire.substr(0, 10);
  Decoder t = MakeDecoder(cut);
  t.Opaque(10);
  EXPECT_FALSE(t.ok());
}

TEST(XdrPaddingTest, PadTo4) {
  EXPECT_EQ(PadTo4(0), 0u);
  EXPECT_EQ(PadTo4(1), 4u);
  EXPECT_EQ(PadTo4(4), 4u);
  EXPECT_EQ(PadTo4(5), 8u);
  EXPECT_EQ(PadTo4(64), 64u);
}

TEST(XdrArrayLengthTest, AcceptsPlausibleCounts) {
  std::string wire = Bytes({0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 2});
  Decoder d = MakeDecoder(wire);
  EXPECT_EQ(d.ArrayLength(10), 2u);
  EXPECT_TRUE(d.ok());
}

TEST(XdrArrayLengthTest, RejectsOverMax) {
  std::string wire = Bytes({0, 0, 0, 3, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3});
  Decoder d = MakeDecoder(wire);
  EXPECT_EQ(d.ArrayLength(2), 0u);
  EXPECT_FALSE(d.ok());
}

TEST(XdrArrayLengthTest, RejectsHostileCounts) {
  // Claims 2^32-1 elements with 4 bytes left.
  std::string wire = Bytes({0xff, 0xff, 0xff, 0xff, 0, 0, 0, 1});
  Decoder d = MakeDecoder(wire);
  EXPECT_EQ(d.ArrayLength(std::numeric_limits<uint32_t>::max()), 0u);
  EXPECT_FALSE(d.ok());

  // Two elements of at least 8 bytes cannot fit in 12 bytes.
  std::string wire2 = Bytes({0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});
  Decoder d2 = MakeDecoder(wire2);
  EXPECT_EQ(d2.ArrayLength(100, 8), 0u);
  EXPECT_FALSE(d2.ok());
  Decoder d3 = MakeDecoder(wire2);
  EXPECT_EQ(d3.ArrayLength(100, 6), 2u);
  EXPECT_TRUE(d3.ok());
}

TEST(XdrArrayLengthTest, ZeroMinElementSizeOnlyChecksMax) {
  std::string wire = Bytes({0, 0, 0, 50});
  Decoder d = MakeDecoder(wire);
  EXPECT_EQ(d.ArrayLength(100, 0), 50u);
  EXPECT_TRUE(d.ok());
}

TEST(XdrArrayLengthTest, TruncatedCount) {
  std::string wire = Bytes({0, 0});
  Decoder d = MakeDecoder(wire);
  EXPECT_EQ(d.ArrayLength(100), 0u);
  EXPECT_FALSE(d.ok());
}

TEST(XdrReserveOpaqueTest, CommitWritesLengthBodyAndPadding) {
  BufferChain chain;
  Encoder e(&chain);
  e.U32(0xdeadbeef);
  uint8_t* p = e.ReserveOpaque(100);
  std::memset(p, 0xaa, 100);  // garbage beyond the committed length must not leak
  std::memcpy(p, "hello", 5);
  e.CommitOpaque(5);
  e.U32(7);
  EXPECT_EQ(chain.Flatten(), Bytes({0xde, 0xad, 0xbe, 0xef, 0, 0, 0, 5, 'h', 'e',
                                    'l',  'l',  'o',  0,    0, 0, 0, 0, 0,   7}));
  EXPECT_EQ(chain.size(), 20u);
}

TEST(XdrReserveOpaqueTest, CommitZeroAndFull) {
  BufferChain chain;
  Encoder e(&chain);
  e.ReserveOpaque(16);
  e.CommitOpaque(0);
  uint8_t* p = e.ReserveOpaque(3);
  std::memcpy(p, "abc", 3);
  e.CommitOpaque(3);
  EXPECT_EQ(chain.Flatten(), Bytes({0, 0, 0, 0, 0, 0, 0, 3, 'a', 'b', 'c', 0}));
}

TEST(XdrReserveOpaqueTest, LargerThanABlock) {
  BufferChain chain;
  Encoder e(&chain);
  e.U32(1);
  const size_t n = 100000 + 1;
  uint8_t* p = e.ReserveOpaque(n);
  for (size_t i = 0; i < n; ++i) p[i] = static_cast<uint8_t>(i);
  e.CommitOpaque(n);
  e.U32(2);
  std::string wire = chain.Flatten();
  ASSERT_EQ(wire.size(), 4 + 4 + PadTo4(n) + 4);
  Decoder d = MakeDecoder(wire);
  EXPECT_EQ(d.U32(), 1u);
  absl::Span<const uint8_t> body = d.Opaque(n);
  ASSERT_EQ(body.size(), n);
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(body[i], static_cast<uint8_t>(i));
  EXPECT_EQ(d.U32(), 2u);
  EXPECT_TRUE(d.ok());
  EXPECT_EQ(d.remaining(), 0u);
}

TEST(BufferChainTest, AppendAcrossBlocks) {
  BufferChain chain;
  std::string expected;
  for (int i = 0; i < 3000; ++i) {
    std::string piece = std::to_string(i) + ",";
    chain.Append(piece.data(), piece.size());
    expected += piece;
  }
  EXPECT_EQ(chain.size(), expected.size());
  EXPECT_EQ(chain.Flatten(), expected);

  std::vector<iovec> iov;
  chain.AppendIovecs(&iov);
  size_t total = 0;
  std::string joined;
  for (const iovec& v : iov) {
    total += v.iov_len;
    joined.append(static_cast<const char*>(v.iov_base), v.iov_len);
  }
  EXPECT_EQ(total, expected.size());
  EXPECT_EQ(joined, expected);
  // Contiguous appends share a segment: far fewer iovecs than appends.
  EXPECT_LT(iov.size(), 10u);
}

TEST(BufferChainTest, AppendExternalIsNotCopied) {
  auto data = std::make_shared<std::string>("external-bytes");
  std::weak_ptr<std::string> watch = data;
  const uint8_t* raw = reinterpret_cast<const uint8_t*>(data->data());
  {
    BufferChain chain;
    chain.Append("ab", 2);
    chain.AppendExternal(data, raw, data->size());
    chain.Append("cd", 2);
    data.reset();
    EXPECT_FALSE(watch.expired());  // the chain keeps the owner alive

    std::vector<iovec> iov;
    chain.AppendIovecs(&iov);
    ASSERT_EQ(iov.size(), 3u);
    EXPECT_EQ(iov[1].iov_base, raw);
    EXPECT_EQ(iov[1].iov_len, 14u);
    EXPECT_EQ(chain.Flatten(), "abexternal-bytescd");
    EXPECT_EQ(chain.size(), 18u);

    BufferChain moved = std::move(chain);
    EXPECT_FALSE(watch.expired());
    EXPECT_EQ(moved.Flatten(), "abexternal-bytescd");
  }
  EXPECT_TRUE(watch.expired());
}

TEST(BufferChainTest, AppendExternalEmptyAddsNothing) {
  BufferChain chain;
  chain.AppendExternal(nullptr, nullptr, 0);
  EXPECT_TRUE(chain.empty());
  std::vector<iovec> iov;
  chain.AppendIovecs(&iov);
  EXPECT_TRUE(iov.empty());
}

TEST(BufferChainTest, AppendIovecsAppends) {
  BufferChain chain;
  chain.Append("xyz", 3);
  std::vector<iovec> iov(1, iovec{nullptr, 0});
  chain.AppendIovecs(&iov);
  ASSERT_EQ(iov.size(), 2u);
  EXPECT_EQ(iov[1].iov_len, 3u);
}

TEST(BufferChainTest, ClearEmpties) {
  BufferChain chain;
  chain.Append("xyz", 3);
  chain.AppendExternal(std::make_shared<int>(1), reinterpret_cast<const uint8_t*>("q"), 1);
  chain.Clear();
  EXPECT_TRUE(chain.empty());
  EXPECT_EQ(chain.Flatten(), "");
  chain.Append("a", 1);
  EXPECT_EQ(chain.Flatten(), "a");
}

TEST(BufferChainTest, ResizeRangeGrowsAndShrinksInPlace) {
  BufferChain chain;
  chain.Append("head--tail", 10);
  uint8_t* at = chain.ResizeRange(4, 2, 5);
  ASSERT_NE(at, nullptr);
  std::memcpy(at, "12345", 5);
  EXPECT_EQ(chain.Flatten(), "head12345tail");
  EXPECT_EQ(chain.size(), 13u);
  at = chain.ResizeRange(0, 4, 0);
  ASSERT_NE(at, nullptr);
  EXPECT_EQ(chain.Flatten(), "12345tail");
  at = chain.ResizeRange(9, 0, 2);  // at the very end
  ASSERT_NE(at, nullptr);
  std::memcpy(at, "!!", 2);
  EXPECT_EQ(chain.Flatten(), "12345tail!!");
  EXPECT_EQ(chain.segments().size(), 1u);
  chain.Append("more", 4);  // still appends after the moved bytes
  EXPECT_EQ(chain.Flatten(), "12345tail!!more");
}

TEST(BufferChainTest, ResizeRangeRefusesChainsItCannotChangeInPlace) {
  BufferChain chain;
  chain.Append("abcdef", 6);
  EXPECT_EQ(chain.ResizeRange(4, 3, 1), nullptr);  // past the end
  EXPECT_EQ(chain.ResizeRange(7, 0, 1), nullptr);
  EXPECT_EQ(chain.ResizeRange(0, 0, 1 << 20), nullptr);  // no room in the block
  chain.AppendExternal(std::make_shared<int>(1), reinterpret_cast<const uint8_t*>("q"), 1);
  EXPECT_EQ(chain.ResizeRange(0, 1, 2), nullptr);  // two segments
  EXPECT_EQ(chain.Flatten(), "abcdefq");
  BufferChain empty;
  EXPECT_EQ(empty.ResizeRange(0, 0, 4), nullptr);
}

TEST(XdrEncodeIntoTest, WritesWhatTheEncoderWrites) {
  struct Sample {
    uint32_t a = 7;
    uint64_t b = 0x0102030405060708;
    bool c = true;
    std::string s = "hello";
    absl::Span<const uint8_t> o = absl::MakeConstSpan(reinterpret_cast<const uint8_t*>("xyz"), 3);
  } x;
  auto describe = [](auto& v, const Sample& y) {
    v(y.a, y.b, y.c, Bounded(y.s, 64), Bounded(y.o, 64));
  };
  BufferChain chain;
  Encoder e(&chain);
  WriteVisitor<Encoder> ve(e);
  describe(ve, x);
  std::string patched(Measure(x, describe), '\xee');
  SpanWriter w(absl::MakeSpan(reinterpret_cast<uint8_t*>(patched.data()), patched.size()));
  WriteVisitor<SpanWriter> vw(w);
  describe(vw, x);
  EXPECT_EQ(patched, chain.Flatten());
  EXPECT_EQ(patched.size(), 4u + 8u + 4u + (4u + 8u) + (4u + 4u));
}

TEST(BufferChainTest, ReserveCommit) {
  BufferChain chain;
  chain.Append("12", 2);
  uint8_t* p = chain.Reserve(10);
  std::memcpy(p, "3456", 4);
  chain.Commit(4);
  chain.Append("7", 1);
  EXPECT_EQ(chain.Flatten(), "1234567");
  EXPECT_EQ(chain.size(), 7u);
}

// Appends bytes [offset, offset + len) of a file holding `content` as a file
// segment; the chain's owner closes the (unlinked) file.
void AppendFileBytes(BufferChain* chain, const std::string& content, uint64_t offset, size_t len) {
  char path[] = "/tmp/buffer_chain_testXXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  unlink(path);
  ASSERT_EQ(write(fd, content.data(), content.size()), static_cast<ssize_t>(content.size()));
  auto owner = std::shared_ptr<const int>(new int(fd), [](const int* f) {
    close(*f);
    delete f;
  });
  chain->AppendFile(owner, fd, offset, len);
}

TEST(BufferChainTest, CopyToTakesAnyRangeAcrossSegmentsAndFiles) {
  BufferChain chain;
  chain.Append("abc", 3);
  AppendFileBytes(&chain, "FILEDATA", 2, 4);  // "LEDA"
  const std::string ext = "xyz";
  chain.AppendExternal(nullptr, reinterpret_cast<const uint8_t*>(ext.data()), 3);
  std::string out(6, '.');
  chain.CopyTo(2, 6, reinterpret_cast<uint8_t*>(out.data()));
  EXPECT_EQ(out, "cLEDAx");
  EXPECT_EQ(chain.Flatten(), "abcLEDAxyz");
}

TEST(BufferChainTest, AppendChainMovesBytesWithoutCopyingThem) {
  const std::string big(4000, 'b');
  BufferChain other;
  other.Append("head", 4);
  other.AppendExternal(nullptr, reinterpret_cast<const uint8_t*>(big.data()), big.size());
  BufferChain chain;
  chain.Append("<", 1);
  chain.AppendChain(std::move(other), 2);
  EXPECT_EQ(chain.Flatten(), "<ad" + big);
  // The external bytes are referenced, not copied.
  bool referenced = false;
  for (const BufferChain::Segment& s : chain.segments()) {
    referenced |= s.data == reinterpret_cast<const uint8_t*>(big.data());
  }
  EXPECT_TRUE(referenced);
}

TEST(BufferChainTest, AppendChainKeepsTheOtherChainsBlocksAlive) {
  BufferChain chain;
  {
    BufferChain other;
    other.Append(std::string(3000, 'o').data(), 3000);  // past the small-copy size
    chain.AppendChain(std::move(other));
  }
  EXPECT_EQ(chain.Flatten(), std::string(3000, 'o'));
}

TEST(BufferChainTest, AppendChainKeepsFileSegmentsAndReadFileSegmentsReadsThem) {
  BufferChain other;
  other.Append("hd", 2);
  AppendFileBytes(&other, "0123456789", 3, 5);  // "34567"
  BufferChain chain;
  chain.AppendChain(std::move(other), 1);
  EXPECT_TRUE(chain.has_file_segments());
  EXPECT_EQ(chain.size(), 6u);
  chain.ReadFileSegments();
  EXPECT_FALSE(chain.has_file_segments());
  for (const BufferChain::Segment& s : chain.segments()) EXPECT_LT(s.fd, 0);
  EXPECT_EQ(chain.Flatten(), "d34567");
}

}  // namespace
}  // namespace nfs3d::xdr
