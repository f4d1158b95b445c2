#include "rpc/record_marker.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace nfs3d::rpc {
namespace {

using Result = RecordReassembler::Result;

void AppendFragment(std::vector<uint8_t>* out, const std::string& body, bool last) {
  uint8_t mark[4];
  EncodeRecordMark(static_cast<uint32_t>(body.size()), last, mark);
  out->insert(out->end(), mark, mark + 4);
  out->insert(out->end(), body.begin(), body.end());
}

// Feeds `chunks` in order and collects every record.
std::vector<std::string> FeedAll(RecordReassembler* r,
                                 const std::vector<std::vector<uint8_t>>& chunks, bool* error) {
  std::vector<std::string> records;
  *error = false;
  for (const auto& chunk : chunks) {
    size_t off = 0;
    while (true) {
      size_t used = 0;
      Result res = r->Feed(absl::MakeConstSpan(chunk.data() + off, chunk.size() - off), &used);
      off += used;
      if (res == Result::kError) {
        *error = true;
        return records;
      }
      if (res == Result::kNeedMore) {
        EXPECT_EQ(off, chunk.size());
        break;
      }
      std::vector<uint8_t> rec = r->TakeRecord();
      records.emplace_back(rec.begin(), rec.end());
    }
  }
  return records;
}

TEST(RecordMarkTest, Encode) {
  uint8_t m[4];
  EncodeRecordMark(0x12345, true, m);
  EXPECT_EQ(m[0], 0x80);
  EXPECT_EQ(m[1], 0x01);
  EXPECT_EQ(m[2], 0x23);
  EXPECT_EQ(m[3], 0x45);
  EncodeRecordMark(7, false, m);
  EXPECT_EQ(m[0], 0);
  EXPECT_EQ(m[3], 7);
}

TEST(RecordReassemblerTest, MultiFragmentSplitAtEveryByte) {
  std::vector<uint8_t> stream;
  AppendFragment(&stream, "hello", false);
  AppendFragment(&stream, "", false);  // zero-length, not last: ignored
  AppendFragment(&stream, " wor", false);
  AppendFragment(&stream, "ld", true);
  AppendFragment(&stream, "second", true);
  AppendFragment(&stream, "", true);  // an empty record
  const std::vector<std::string> want = {"hello world", "second", ""};

  for (size_t split = 0; split <= stream.size(); ++split) {
    RecordReassembler r(1024);
    std::vector<std::vector<uint8_t>> chunks = {
        std::vector<uint8_t>(stream.begin(), stream.begin() + split),
        std::vector<uint8_t>(stream.begin() + split, stream.end())};
    bool error;
    EXPECT_EQ(FeedAll(&r, chunks, &error), want) << "split at " << split;
    EXPECT_FALSE(error);
    EXPECT_TRUE(r.idle());
  }
  // And one byte at a time.
  RecordReassembler r(1024);
  std::vector<std::vector<uint8_t>> bytes;
  for (uint8_t b : stream) bytes.push_back({b});
  bool error;
  EXPECT_EQ(FeedAll(&r, bytes, &error), want);
  EXPECT_FALSE(error);
}

TEST(RecordReassemblerTest, EverySplitPairOfThreeChunks) {
  std::vector<uint8_t> stream;
  AppendFragment(&stream, "ab", false);
  AppendFragment(&stream, "cdefg", true);
  for (size_t i = 0; i <= stream.size(); ++i) {
    for (size_t j = i; j <= stream.size(); ++j) {
      RecordReassembler r(64);
      std::vector<std::vector<uint8_t>> chunks = {
          std::vector<uint8_t>(stream.begin(), stream.begin() + i),
          std::vector<uint8_t>(stream.begin() + i, stream.begin() + j),
          std::vector<uint8_t>(stream.begin() + j, stream.end())};
      bool error;
      EXPECT_EQ(FeedAll(&r, chunks, &error), std::vector<std::string>{"abcdefg"});
      EXPECT_FALSE(error);
    }
  }
}

// A connection handed to another process at any byte of the stream: the
// first reassembler's unfinished record, then the rest of the stream, give
// the second one the records the stream holds after the cut.
TEST(RecordReassemblerTest, UnfinishedRecordCarriesOverAtEveryByte) {
  std::vector<uint8_t> stream;
  AppendFragment(&stream, "one", true);
  AppendFragment(&stream, "hello", false);
  AppendFragment(&stream, "", false);
  AppendFragment(&stream, " wor", false);
  AppendFragment(&stream, "ld", true);
  AppendFragment(&stream, "", true);
  AppendFragment(&stream, "last", true);
  const std::vector<std::string> want = {"one", "hello world", "", "last"};
  for (size_t cut = 0; cut <= stream.size(); ++cut) {
    RecordReassembler first(1024);
    bool error;
    std::vector<std::string> got =
        FeedAll(&first, {std::vector<uint8_t>(stream.begin(), stream.begin() + cut)}, &error);
    ASSERT_FALSE(error);
    std::string carried;
    first.AppendUnfinished(&carried);
    std::vector<uint8_t> rest(carried.begin(), carried.end());
    rest.insert(rest.end(), stream.begin() + cut, stream.end());
    RecordReassembler second(1024);
    for (std::string& rec : FeedAll(&second, {rest}, &error)) got.push_back(std::move(rec));
    EXPECT_FALSE(error);
    EXPECT_EQ(got, want) << "cut at " << cut;
    EXPECT_TRUE(second.idle());
  }
}

// The carried-over record keeps its size bound: a fragment that would make
// it too big fails in the second reassembler as it would have in the first.
TEST(RecordReassemblerTest, UnfinishedRecordKeepsTheBound) {
  std::vector<uint8_t> stream;
  AppendFragment(&stream, std::string(40, 'a'), false);
  AppendFragment(&stream, std::string(30, 'b'), true);
  RecordReassembler first(64);
  bool error;
  FeedAll(&first, {std::vector<uint8_t>(stream.begin(), stream.begin() + 46)}, &error);
  ASSERT_FALSE(error);
  std::string carried;
  first.AppendUnfinished(&carried);
  std::vector<uint8_t> rest(carried.begin(), carried.end());
  rest.insert(rest.end(), stream.begin() + 46, stream.end());
  RecordReassembler second(64);
  FeedAll(&second, {rest}, &error);
  EXPECT_TRUE(error);
}

TEST(RecordReassemblerTest, PartialRecordIsNotIdle) {
  std::vector<uint8_t> stream;
  AppendFragment(&stream, "abc", true);
  RecordReassembler r(64);
  size_t used;
  EXPECT_EQ(r.Feed(absl::MakeConstSpan(stream.data(), 2), &used), Result::kNeedMore);
  EXPECT_EQ(used, 2u);
  EXPECT_FALSE(r.idle());
}

TEST(RecordReassemblerTest, RecordExactlyAtCapIsAccepted) {
  std::vector<uint8_t> stream;
  AppendFragment(&stream, "12345", false);
  AppendFragment(&stream, "67890", true);
  RecordReassembler r(10);
  bool error;
  EXPECT_EQ(FeedAll(&r, {stream}, &error), std::vector<std::string>{"1234567890"});
  EXPECT_FALSE(error);
}

TEST(RecordReassemblerTest, SingleFragmentOverCapFails) {
  std::vector<uint8_t> stream;
  AppendFragment(&stream, "12345678901", true);
  RecordReassembler r(10);
  bool error;
  EXPECT_TRUE(FeedAll(&r, {stream}, &error).empty());
  EXPECT_TRUE(error);
  EXPECT_FALSE(r.error().empty());
  // Sticky.
  size_t used;
  EXPECT_EQ(r.Feed(absl::MakeConstSpan(stream), &used), Result::kError);
}

TEST(RecordReassemblerTest, FragmentsAddingUpOverCapFail) {
  std::vector<uint8_t> stream;
  AppendFragment(&stream, "123456", false);
  AppendFragment(&stream, "78901", true);
  RecordReassembler r(10);
  bool error;
  FeedAll(&r, {stream}, &error);
  EXPECT_TRUE(error);
}

TEST(RecordReassemblerTest, HugeLengthFailsOnTheHeaderAlone) {
  // Only the 4-byte header: 2 GiB - 1 claimed. Must fail at once, before any
  // body arrives (and so without reserving it).
  uint8_t mark[4];
  EncodeRecordMark(kMaxFragmentLength, true, mark);
  RecordReassembler r(1 << 20);
  size_t used;
  EXPECT_EQ(r.Feed(absl::MakeConstSpan(mark, 4), &used), Result::kError);
  EXPECT_EQ(used, 4u);
}

TEST(RecordReassemblerTest, ManyZeroLengthFragments) {
  std::vector<uint8_t> stream;
  for (int i = 0; i < 100; ++i) AppendFragment(&stream, "", false);
  AppendFragment(&stream, "x", false);
  AppendFragment(&stream, "", true);
  RecordReassembler r(4);
  bool error;
  EXPECT_EQ(FeedAll(&r, {stream}, &error), std::vector<std::string>{"x"});
  EXPECT_FALSE(error);
}

}  // namespace
}  // namespace nfs3d::rpc

namespace nfs3d::rpc {
namespace {

// Big fragment bodies can be read straight into the record: DirectSpan
// hands out where the next bytes go, CommitDirect accounts for them.
TEST(RecordReassemblerTest, DirectReadOfABigFragment) {
  const size_t body = 1500 << 10;  // > one 1 MiB direct chunk
  std::vector<uint8_t> stream(4 + body);
  EncodeRecordMark(static_cast<uint32_t>(body), /*last=*/true, stream.data());
  for (size_t i = 0; i < body; ++i) stream[4 + i] = static_cast<uint8_t>(i * 7 + 3);
  RecordReassembler r(2 << 20);
  EXPECT_TRUE(r.DirectSpan().empty());  // no fragment yet
  size_t used = 0;
  // The header and a little of the body come through Feed.
  ASSERT_EQ(r.Feed(absl::MakeConstSpan(stream.data(), 4 + 1000), &used),
            RecordReassembler::Result::kNeedMore);
  EXPECT_EQ(used, 4 + 1000u);
  size_t pos = 4 + 1000;
  RecordReassembler::Result result = RecordReassembler::Result::kNeedMore;
  while (result == RecordReassembler::Result::kNeedMore) {
    absl::Span<uint8_t> span = r.DirectSpan();
    if (span.empty()) {  // under 64 KiB left: back to Feed
      result = r.Feed(absl::MakeConstSpan(stream.data() + pos, stream.size() - pos), &used);
      pos += used;
      break;
    }
    EXPECT_LE(span.size(), 1u << 20);
    EXPECT_LE(span.size(), stream.size() - pos);       // never past the fragment
    size_t n = std::min(span.size(), size_t{100000});  // a short read
    std::copy_n(stream.data() + pos, n, span.data());
    pos += n;
    result = r.CommitDirect(n);
  }
  ASSERT_EQ(result, RecordReassembler::Result::kRecord);
  EXPECT_EQ(pos, stream.size());
  std::vector<uint8_t> rec = r.TakeRecord();
  ASSERT_EQ(rec.size(), body);
  EXPECT_TRUE(std::equal(rec.begin(), rec.end(), stream.begin() + 4));
  EXPECT_TRUE(r.idle());
  // The next record starts clean, even in a reused buffer.
  uint8_t small[8];
  EncodeRecordMark(4, true, small);
  small[4] = 'a';
  small[5] = 'b';
  small[6] = 'c';
  small[7] = 'd';
  ASSERT_EQ(r.Feed(absl::MakeConstSpan(small, 8), &used), RecordReassembler::Result::kRecord);
  EXPECT_EQ(r.TakeRecord(), std::vector<uint8_t>({'a', 'b', 'c', 'd'}));
}

// A transport splicing a WRITE's data elsewhere: body bytes accounted with
// CommitElsewhere, fragment headers fed alone (header_needed), across
// fragments; the record has the full length, the bytes around the hole.
TEST(RecordReassemblerTest, BodyBytesElsewhereAcrossFragments) {
  RecordReassembler r(1 << 20);
  std::vector<uint8_t> stream;
  AppendFragment(&stream, std::string(100, 'h') + std::string(50000, 'x'), false);
  AppendFragment(&stream, std::string(30000, 'y') + "tail", true);
  size_t used = 0;
  EXPECT_EQ(r.header_needed(), 4u);
  ASSERT_EQ(r.Feed(absl::MakeConstSpan(stream.data(), 4 + 100), &used), Result::kNeedMore);
  EXPECT_EQ(r.header_needed(), 0u);
  EXPECT_EQ(r.size(), 100u);
  EXPECT_EQ(r.body_left(), 50000u);
  ASSERT_EQ(r.CommitElsewhere(50000), Result::kNeedMore);  // the rest of fragment 1
  EXPECT_EQ(r.body_left(), 0u);
  ASSERT_EQ(r.header_needed(), 4u);
  size_t pos = 4 + 100 + 50000;
  ASSERT_EQ(r.Feed(absl::MakeConstSpan(stream.data() + pos, 3), &used), Result::kNeedMore);
  ASSERT_EQ(r.header_needed(), 1u);  // a header may come in pieces
  ASSERT_EQ(r.Feed(absl::MakeConstSpan(stream.data() + pos + 3, 1), &used), Result::kNeedMore);
  EXPECT_EQ(r.body_left(), 30004u);
  ASSERT_EQ(r.CommitElsewhere(30000), Result::kNeedMore);
  pos += 4 + 30000;
  ASSERT_EQ(r.Feed(absl::MakeConstSpan(stream.data() + pos, 4), &used), Result::kRecord);
  std::vector<uint8_t> rec = r.TakeRecord();
  ASSERT_EQ(rec.size(), 100u + 50000 + 30000 + 4);
  EXPECT_EQ(std::string(rec.begin(), rec.begin() + 100), std::string(100, 'h'));
  EXPECT_EQ(std::string(rec.end() - 4, rec.end()), "tail");
  EXPECT_TRUE(r.idle());
}

TEST(RecordReassemblerTest, BodyElsewhereCanEndTheRecord) {
  RecordReassembler r(1 << 20);
  std::vector<uint8_t> stream;
  AppendFragment(&stream, std::string(70000, 'z'), true);
  size_t used = 0;
  ASSERT_EQ(r.Feed(absl::MakeConstSpan(stream.data(), 4), &used), Result::kNeedMore);
  ASSERT_EQ(r.CommitElsewhere(100000), Result::kRecord);  // never past the fragment
  EXPECT_EQ(r.TakeRecord().size(), 70000u);
}

TEST(RecordReassemblerTest, DirectSpanCap) {
  RecordReassembler r(1 << 20);
  std::vector<uint8_t> stream;
  AppendFragment(&stream, std::string(100000, 'q'), true);
  size_t used = 0;
  ASSERT_EQ(r.Feed(absl::MakeConstSpan(stream.data(), 4), &used), Result::kNeedMore);
  EXPECT_EQ(r.DirectSpan(4096).size(), 4096u);
  EXPECT_EQ(r.DirectSpan().size(), 100000u);
}

}  // namespace
}  // namespace nfs3d::rpc
