#include "rpc/spare_cores.h"

#include "gtest/gtest.h"

namespace nfs3d::rpc {
namespace {

TEST(SpareCoresTest, ParsesTheCpuLineOfProcStat) {
  std::optional<CpuTimes> t = ParseProcStat(
      "cpu  100 5 50 800 40 3 2 0 7 0\ncpu0 50 2 25 400 20 1 1 0 0 0\n");
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->idle, 840u);                             // idle + iowait
  EXPECT_EQ(t->total, 100u + 5 + 50 + 800 + 40 + 3 + 2 + 0);  // not guest (in user)
  EXPECT_FALSE(ParseProcStat("cpu0 1 2 3 4 5\n").has_value());
  EXPECT_FALSE(ParseProcStat("cpu 1 2 x 4 5\n").has_value());
  EXPECT_FALSE(ParseProcStat("").has_value());
}

TEST(SpareCoresTest, IdleCoresScaleWithTheCpuCount) {
  CpuTimes before{1000, 4000}, after{1500, 5000};  // half the time idle
  EXPECT_DOUBLE_EQ(IdleCores(before, after, 4), 2.0);
  EXPECT_DOUBLE_EQ(IdleCores(after, after, 4), 0.0);  // no time passed
}

TEST(SpareCoresTest, SpreadingStartsAtOneIdleCoreAndStopsBelowHalf) {
  EXPECT_FALSE(SpareCores::Decide(false, 0.9));
  EXPECT_TRUE(SpareCores::Decide(false, 1.0));
  EXPECT_TRUE(SpareCores::Decide(true, 0.6));  // spreading used some of it
  EXPECT_FALSE(SpareCores::Decide(true, 0.4));
}

TEST(SpareCoresTest, StartsAndStops) {
  SpareCores spare;
  EXPECT_FALSE(spare.available());
  spare.Start();
  spare.Stop();
  EXPECT_FALSE(spare.available());
}

}  // namespace
}  // namespace nfs3d::rpc
