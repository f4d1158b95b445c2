// nfs3powercut's journal replay: what the server must hold after a cut.
#include <cstdio>
#include <fstream>
#include <string>

#include "gtest/gtest.h"

#include "tools/nfs3powercut/model.h"

namespace nfs3d::powercut {
namespace {

std::vector<Line> Lines(const std::vector<std::string>& text) {
  std::vector<Line> out;
  for (const std::string& t : text) {
    Line l;
    size_t start = 0;
    while (start < t.size()) {
      size_t end = t.find(' ', start);
      if (end == std::string::npos) end = t.size();
      l.push_back(t.substr(start, end - start));
      start = end + 1;
    }
    out.push_back(l);
  }
  return out;
}

TEST(PowercutModelTest, CommitWithTheWritesVerifierMakesThemStable) {
  absl::StatusOr<Replay> r = ReplayJournal(
      Lines({"seed 7", "dir c1", "done create d2 644 12 abcd", "ready",
             "done write d2 0 100 0 aaaa", "done write d2 100 50 0 aaaa", "done commit d2 aaaa",
             "done write d2 150 10 0 aaaa", "begin commit d2"}));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->seed, 7u);
  EXPECT_EQ(r->dir, "c1");
  EXPECT_TRUE(r->ready);
  const DataFile& f = r->acked.data.at("d2");
  EXPECT_EQ(f.stable_bytes(), 150u);
  ASSERT_EQ(f.uncommitted.size(), 1u);  // the COMMIT in flight proves nothing
  EXPECT_EQ(f.uncommitted[0].range.offset, 150u);
  EXPECT_EQ(r->last_verf, "aaaa");
}

TEST(PowercutModelTest, CommitWithAnotherVerifierLeavesWritesUncommitted) {
  absl::StatusOr<Replay> r =
      ReplayJournal(Lines({"done create d2 644 12 abcd", "done write d2 0 100 0 aaaa",
                           "done commit d2 bbbb", "done write d0 0 10 2 bbbb"}));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->acked.data.at("d2").stable_bytes(), 0u);
  EXPECT_EQ(r->acked.data.at("d2").uncommitted.size(), 1u);
  EXPECT_EQ(r->acked.data.at("d0").stable_bytes(), 10u);  // FILE_SYNC
}

TEST(PowercutModelTest, NamespaceChangesAndTheOneInFlight) {
  absl::StatusOr<Replay> r = ReplayJournal(Lines(
      {"done create m0 640 20 aa", "done link m0 m1", "done rename m0 m2", "done chmod m2 600",
       "done create m3 640 21 bb", "done remove m3", "begin rename m1 m4"}));
  ASSERT_TRUE(r.ok()) << r.status();
  const Model& m = r->acked;
  EXPECT_EQ(m.namespace_changes, 6u);
  EXPECT_EQ(m.names.count("m0"), 0u);
  EXPECT_EQ(m.names.at("m1"), "m0");
  EXPECT_EQ(m.names.at("m2"), "m0");
  EXPECT_EQ(m.LinkCount("m0"), 2u);
  EXPECT_EQ(m.objects.at("m0").mode, 0600u);
  EXPECT_EQ(m.names.count("m3"), 0u);
  ASSERT_TRUE(r->with_pending.has_value());
  EXPECT_EQ(r->with_pending->names.count("m1"), 0u);
  EXPECT_EQ(r->with_pending->names.at("m4"), "m0");
  EXPECT_EQ(r->all_names, (std::vector<std::string>{"m0", "m1", "m2", "m3", "m4"}));
}

TEST(PowercutModelTest, CreateInFlightHasNoKnownFileid) {
  absl::StatusOr<Replay> r = ReplayJournal(Lines({"begin create m0 640"}));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->acked.names.empty());
  ASSERT_TRUE(r->with_pending.has_value());
  EXPECT_EQ(r->with_pending->objects.at("m0").fileid, 0u);
}

// Each namespace call's "sent" line (xid, procedure, arguments) goes with
// the call begun before it: kept for an acknowledged call, and for the one
// in flight.
TEST(PowercutModelTest, SentLinesGoWithTheirCalls) {
  absl::StatusOr<Replay> r = ReplayJournal(
      Lines({"begin xcreate m0 600 0102030405060708", "sent 77 8 00aa",
             "done xcreate m0 600 20 aa 0102030405060708", "begin link m0 m1", "sent 78 15 00bb",
             "done link m0 m1", "begin remove m1", "sent 79 12 00cc"}));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->acked.objects.at("m0").exclusive);
  EXPECT_EQ(r->acked.objects.at("m0").fileid, 20u);
  ASSERT_EQ(r->acked_calls.size(), 2u);
  EXPECT_EQ(r->acked_calls[0].op, "xcreate");
  EXPECT_EQ(r->acked_calls[0].name, "m0");
  EXPECT_EQ(r->acked_calls[0].xid, 77u);
  EXPECT_EQ(r->acked_calls[0].proc, 8u);
  EXPECT_EQ(r->acked_calls[0].args, "00aa");
  EXPECT_EQ(r->acked_calls[1].to, "m1");
  ASSERT_TRUE(r->in_flight_call.has_value());
  EXPECT_EQ(r->in_flight_call->op, "remove");
  EXPECT_EQ(r->in_flight_call->xid, 79u);
  // A sent line needs its call's begin line.
  EXPECT_FALSE(ReplayJournal(Lines({"sent 1 12 00"})).ok());
}

TEST(PowercutModelTest, MalformedLinesAreErrors) {
  EXPECT_FALSE(ReplayJournal(Lines({"done write d2 0 x 0 aaaa"})).ok());
  EXPECT_FALSE(ReplayJournal(Lines({"done rename m0 m1"})).ok());  // no m0
  EXPECT_FALSE(ReplayJournal(Lines({"done create m0 999 1 aa"})).ok());
  EXPECT_FALSE(ReplayJournal(Lines({"whatever"})).ok());
}

TEST(PowercutModelTest, ALineCutShortByTheWriterIsDropped) {
  const std::string path = ::testing::TempDir() + "/powercut_journal";
  {
    std::ofstream out(path);
    out << "seed 3\ndone create d0 644 5 aa\ndone write d0 0 10 2 ab";
  }
  absl::StatusOr<std::vector<Line>> lines = ReadJournal(path);
  ASSERT_TRUE(lines.ok()) << lines.status();
  EXPECT_EQ(lines->size(), 2u);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace nfs3d::powercut
