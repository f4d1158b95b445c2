#include "rpc/spare_cores.h"

#include "gtest/gtest.h"

namespace nfs3d::rpc {
namespace {

TEST(SpareCoresTest, ParsesTheCpuLineOfProcStat) {
  std::optional<CpuTimes> t =
      ParseProcStat("cpu  100 5 50 800 40 3 2 0 7 0\ncpu0 50 2 25 400 20 1 1 0 0 0\n");
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->idle, 840u);                                   // idle + iowait
  EXPECT_EQ(t->total, 100u + 5 + 50 + 800 + 40 + 3 + 2 + 0);  // not guest (in user)
  EXPECT_FALSE(ParseProcStat("cpu0 1 2 3 4 5\n").has_value());
  EXPECT_FALSE(ParseProcStat("cpu 1 2 x 4 5\n").has_value());
  EXPECT_FALSE(ParseProcStat("").has_value());
}

TEST(SpareCoresTest, ParsesTheProcessTicks) {
  EXPECT_EQ(ParseProcessTicks("4242 (nfs3d) S 1 4242 4242 0 -1 4194560 500 0 0 0 "
                              "1234 567 0 0 20 0 27 0 100 123456789 3000\n"),
            1234u + 567u);
  // The command name may hold spaces and parentheses.
  EXPECT_EQ(ParseProcessTicks("7 (a) b (c) S 1 7 7 0 -1 0 0 0 0 0 10 20 0 0 20 0 1 0\n"), 30u);
  EXPECT_FALSE(ParseProcessTicks("7 (a) S 1 7").has_value());
  EXPECT_FALSE(ParseProcessTicks("no parenthesis").has_value());
}

TEST(SpareCoresTest, CoresScaleWithTheCpuCount) {
  CpuTimes before{1000, 4000, 100}, after{1500, 5000, 350};  // half idle, a quarter ours
  EXPECT_DOUBLE_EQ(IdleCores(before, after, 4), 2.0);
  EXPECT_DOUBLE_EQ(ServerCores(before, after, 4), 1.0);
  EXPECT_DOUBLE_EQ(IdleCores(after, after, 4), 0.0);  // no time passed
}

// Decide, then the samples in which the window still holds the old state.
SpareCores::State Settled(SpareCores::State state, double idle_cores, double server_cores) {
  state = SpareCores::Decide(state, idle_cores, server_cores);
  for (int i = 0; i < SpareCores::kWindow; ++i) {
    const bool before = state.available;
    state = SpareCores::Decide(state, 0.0, 0.0);  // ignored while settling
    EXPECT_EQ(state.available, before);
  }
  return state;
}

TEST(SpareCoresTest, SpreadingStartsAtOneIdleCoreAndStopsBelowHalf) {
  using State = SpareCores::State;
  EXPECT_FALSE(SpareCores::Decide(State{}, 0.9, 1.0).available);
  const State on = Settled(State{}, 1.0, 1.0);
  EXPECT_TRUE(on.available);
  EXPECT_TRUE(SpareCores::Decide(on, 0.6, 1.5).available);  // spreading used some of it
  EXPECT_FALSE(SpareCores::Decide(on, 0.4, 1.5).available);
}

// Idle cores count only while this server is busy: an idle machine says
// nothing about the load that comes next.
TEST(SpareCoresTest, AnIdleMachineWithAnIdleServerDoesNotStartSpreading) {
  EXPECT_FALSE(SpareCores::Decide({}, 2.0, 0.1).available);
  EXPECT_TRUE(SpareCores::Decide({}, 2.0, 0.9).available);
}

// Spreading is judged again without spreading every 2 s: it goes on again
// only if a core is idle without it.
TEST(SpareCoresTest, SpreadingPausesForAWindowEveryTwoSeconds) {
  SpareCores::State state = Settled({}, 1.1, 0.9);  // a fluke
  for (int i = 1; i < SpareCores::kProbeEvery; ++i) {
    state = SpareCores::Decide(state, 0.7, 1.0);
    ASSERT_TRUE(state.available) << "sample " << i;
  }
  state = Settled(state, 0.7, 1.0);
  EXPECT_FALSE(state.available);                                // the probe
  EXPECT_FALSE(SpareCores::Decide(state, 0.7, 0.9).available);  // 2 CPUs: stays off
  EXPECT_TRUE(SpareCores::Decide(state, 1.6, 0.9).available);   // a bigger machine: on again
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
