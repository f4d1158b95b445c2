#include "rpc/gss/seq_window.h"

#include "gtest/gtest.h"

namespace nfs3d::rpc::gss {
namespace {

TEST(SeqWindowTest, EachNumberOnceWithinTheWindow) {
  SeqWindow w(8);
  EXPECT_TRUE(w.Accept(10));
  EXPECT_FALSE(w.Accept(10));  // replay
  EXPECT_TRUE(w.Accept(5));    // late but inside (10 - 5 < 8)
  EXPECT_FALSE(w.Accept(5));
  EXPECT_FALSE(w.Accept(2));   // 10 - 2 = 8: below the window
  EXPECT_TRUE(w.Accept(12));
  EXPECT_FALSE(w.Accept(10));  // still remembered after the move
  EXPECT_TRUE(w.Accept(11));
  EXPECT_FALSE(w.Accept(4));   // 12 - 4 = 8
  EXPECT_TRUE(w.Accept(1000));  // a jump forgets everything below
  EXPECT_FALSE(w.Accept(12));
  EXPECT_TRUE(w.Accept(999));
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
  EXPECT_TRUE(w.Accept(1 + SeqWindow::kMaxSize));
  EXPECT_FALSE(w.Accept(1));
  EXPECT_TRUE(w.Accept(2));
}

}  // namespace
}  // namespace nfs3d::rpc::gss
