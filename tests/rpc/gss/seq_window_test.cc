#include "rpc/gss/seq_window.h"

#include <random>
#include <set>

#include "gtest/gtest.h"

namespace nfs3d::rpc::gss {
namespace {

TEST(SeqWindowTest, EachNumberOnce) {
  SeqWindow w(8);
  EXPECT_TRUE(w.Accept(10));
  EXPECT_FALSE(w.Accept(10));  // replay
  EXPECT_TRUE(w.Accept(5));    // late
  EXPECT_FALSE(w.Accept(5));
  EXPECT_TRUE(w.Accept(12));
  EXPECT_FALSE(w.Accept(10));  // still remembered after the move
  EXPECT_TRUE(w.Accept(11));
  EXPECT_FALSE(w.Accept(12));
}

// The regression: a call the client sent inside the window (16 in flight of
// 128) waited on the server while 130 later calls ran; it was dropped as
// below the window and never answered. Unseen numbers are accepted as far
// back as the window remembers, far beyond the announced size.
TEST(SeqWindowTest, LateCallOvertakenOnTheServerIsAccepted) {
  SeqWindow w(128);
  for (uint32_t seq = 1; seq <= 140; ++seq) {
    if (seq != 6 && seq != 7) {
      EXPECT_TRUE(w.Accept(seq));
    }
  }
  EXPECT_TRUE(w.Accept(6));
  EXPECT_TRUE(w.Accept(7));
  EXPECT_FALSE(w.Accept(6));  // and still only once
  EXPECT_FALSE(w.Accept(100));
}

TEST(SeqWindowTest, NumbersBeyondTheTrackedReachAreDropped) {
  SeqWindow w(8);
  EXPECT_TRUE(w.Accept(1));
  EXPECT_TRUE(w.Accept(2 + SeqWindow::kTracked));
  EXPECT_FALSE(w.Accept(2));  // age == kTracked: cannot tell whether seen
  EXPECT_TRUE(w.Accept(3));   // age kTracked - 1, unseen
  EXPECT_FALSE(w.Accept(3));
  EXPECT_TRUE(w.Accept(100000));  // a jump forgets everything below
  EXPECT_FALSE(w.Accept(3));
  EXPECT_TRUE(w.Accept(99999));
}

TEST(SeqWindowTest, FirstNumberMayBeZeroAndSizeIsClamped) {
  SeqWindow w(0);
  EXPECT_EQ(w.size(), 1u);
  EXPECT_TRUE(w.Accept(0));
  EXPECT_FALSE(w.Accept(0));
  EXPECT_TRUE(w.Accept(1));
  EXPECT_FALSE(w.Accept(0));
  EXPECT_EQ(SeqWindow(100000).size(), SeqWindow::kMaxSize);
}

TEST(SeqWindowTest, ShiftsBeyondTheBitsetClearIt) {
  SeqWindow w(SeqWindow::kMaxSize);
  EXPECT_TRUE(w.Accept(1));
  EXPECT_TRUE(w.Accept(1 + SeqWindow::kTracked));
  EXPECT_FALSE(w.Accept(1));
  EXPECT_TRUE(w.Accept(2));
  EXPECT_FALSE(w.Accept(2));
}

// The bits are a ring indexed by seq % kTracked: a slot is reused only for a
// number kTracked higher, and the slots of numbers skipped on the way up
// are cleared, not left saying "seen" for the number kTracked below.
TEST(SeqWindowTest, SkippedNumbersReuseRingSlotsAsUnseen) {
  SeqWindow w(8);
  for (uint32_t seq = 1; seq <= SeqWindow::kTracked; ++seq) ASSERT_TRUE(w.Accept(seq));
  const uint32_t top = SeqWindow::kTracked + 100;
  EXPECT_TRUE(w.Accept(top));
  EXPECT_TRUE(w.Accept(SeqWindow::kTracked + 50));  // its slot held kTracked + 50 - kTracked
  EXPECT_FALSE(w.Accept(SeqWindow::kTracked + 50));
  EXPECT_FALSE(w.Accept(100));  // age == kTracked: out of reach
  EXPECT_FALSE(w.Accept(101));  // seen, still within reach
}

// Against a plain model of the rule: a number is accepted once, unless it is
// kTracked or more below the highest accepted so far.
TEST(SeqWindowTest, AgreesWithAModelOnRandomOrders) {
  std::mt19937 rng(20261202);
  for (int round = 0; round < 20; ++round) {
    SeqWindow w(128);
    std::set<uint32_t> accepted;
    uint32_t highest = 0;
    uint32_t next = 1 + rng() % 1000;
    for (int i = 0; i < 20000; ++i) {
      uint32_t seq;
      switch (rng() % 4) {
        case 0:
          seq = next++;
          break;  // in order
        case 1:
          next += rng() % (SeqWindow::kTracked * 2);
          seq = next;
          break;  // jump
        case 2:
          seq = next - std::min<uint32_t>(next, rng() % 300);
          break;  // late
        default:
          seq = next - std::min<uint32_t>(next, rng() % (SeqWindow::kTracked + 50));
      }
      const bool model =
          (accepted.empty() || seq > highest || highest - seq < SeqWindow::kTracked) &&
          accepted.insert(seq).second;
      if (model && seq > highest) highest = seq;
      ASSERT_EQ(w.Accept(seq), model) << "round " << round << " call " << i << " seq " << seq;
    }
  }
}

// Saved in one process and restored in another (a handover): the copy
// accepts and refuses exactly what the original does.
TEST(SeqWindowTest, RestoredWindowAnswersAsTheSavedOne) {
  SeqWindow w(64);
  for (uint32_t seq : {1u, 2u, 5u, 300u, 301u, 4000u, 4100u}) ASSERT_TRUE(w.Accept(seq));
  std::optional<SeqWindow> copy = SeqWindow::Restore(w.Save());
  ASSERT_TRUE(copy.has_value());
  EXPECT_EQ(copy->size(), 64u);
  for (uint32_t seq : {1u, 3u, 5u, 6u, 299u, 300u, 4000u, 4099u, 4100u, 4101u, 9000u}) {
    EXPECT_EQ(copy->Accept(seq), w.Accept(seq)) << seq;
  }
  SeqWindow::Saved bad = w.Save();
  bad.seen.pop_back();
  EXPECT_FALSE(SeqWindow::Restore(bad).has_value());
}

}  // namespace
}  // namespace nfs3d::rpc::gss
