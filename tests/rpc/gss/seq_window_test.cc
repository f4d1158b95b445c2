#include "rpc/gss/seq_window.h"

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
    if (seq != 6 && seq != 7) EXPECT_TRUE(w.Accept(seq));
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

}  // namespace
}  // namespace nfs3d::rpc::gss
