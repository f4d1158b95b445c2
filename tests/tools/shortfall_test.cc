// The lab's explanation of rows below 90 % of the wire.
#include "tools/nfs3bench/shortfall.h"

#include "gtest/gtest.h"

namespace nfs3d::bench {
namespace {

// 1 Gbit/s link; `mbit` moved by calls of 32 KiB, 16 in flight.
RunResult Row(double mbit) {
  RunResult r;
  r.workload = "read";
  r.xfer = 32768;
  r.outstanding = 16;
  r.wire_mbps = 1000;
  r.seconds = 1;
  r.bytes = static_cast<uint64_t>(mbit * 1e6 / 8);
  r.calls = r.bytes / r.xfer;
  r.server_cpu_sec = 0.3;
  r.client_cpu_sec = 0.2;
  r.machine_cpu_sec = 0.6;  // of 2 cores: 30 % busy
  return r;
}

RunResult StopAndWait(double msec_per_call) {
  RunResult r = Row(100);
  r.outstanding = 1;
  r.msec_per_call = msec_per_call;
  return r;
}

TEST(ShortfallTest, NothingToExplainNearTheWire) {
  EXPECT_EQ(ExplainShortfall(Row(950), nullptr, 2), "");
  EXPECT_EQ(ExplainShortfall(Row(900), nullptr, 2), "");
  RunResult no_wire = Row(10);
  no_wire.wire_mbps = 0;
  EXPECT_EQ(ExplainShortfall(no_wire, nullptr, 2), "");
  RunResult metadata = Row(10);
  metadata.xfer = 0;
  EXPECT_EQ(ExplainShortfall(metadata, nullptr, 2), "");
}

TEST(ShortfallTest, WindowWhenCallsInFlightCannotFillTheLink) {
  // 16 x 32 KiB per 5 ms round trip = 839 Mbit/s < 900.
  RunResult slow = StopAndWait(5);
  std::string why = ExplainShortfall(Row(800), &slow, 2);
  EXPECT_EQ(why, "in flight x round trip: 16 x 32k / 5.000 ms = 839 Mbit/s");
  // A stop-and-wait row explains itself.
  RunResult single = Row(300);
  single.outstanding = 1;
  EXPECT_EQ(ExplainShortfall(single, &slow, 2).rfind("in flight x round trip: 1 x 32k", 0), 0u);
}

TEST(ShortfallTest, LossBeforeCpu) {
  RunResult fast = StopAndWait(0.5);  // window 8.4 Gbit/s: not the limit
  RunResult r = Row(780);
  r.retransmits = 14;
  r.server_cpu_sec = 0.95;
  EXPECT_EQ(ExplainShortfall(r, &fast, 2), "loss: 14 retransmits in 2975 calls");
  EXPECT_EQ(ExplainShortfall(r, &fast, 2, "server qdisc 3"),
            "loss: 14 retransmits in 2975 calls; dropped at: server qdisc 3");
}

TEST(ShortfallTest, CpuOfEitherSideOrTheWholeMachine) {
  RunResult r = Row(500);
  r.server_cpu_sec = 0.97;
  EXPECT_EQ(ExplainShortfall(r, nullptr, 2),
            "CPU: server 97%, client 20% of a core, machine 30% busy");
  r.server_cpu_sec = 0.8;
  r.client_cpu_sec = 0.9;
  EXPECT_EQ(ExplainShortfall(r, nullptr, 2),
            "CPU: server 80%, client 90% of a core, machine 30% busy");
  // Other processes took the cores.
  r.client_cpu_sec = 0.5;
  r.machine_cpu_sec = 1.8;
  EXPECT_EQ(ExplainShortfall(r, nullptr, 2),
            "CPU: server 80%, client 50% of a core, machine 90% busy");
  EXPECT_EQ(ExplainShortfall(r, nullptr, 4).rfind("unexplained", 0), 0u);
}

TEST(ShortfallTest, UnexplainedNamesWhatWasChecked) {
  RunResult r = Row(500);
  r.server_cpu_sec = -1;  // not measured
  EXPECT_EQ(ExplainShortfall(r, nullptr, 2),
            "unexplained: server ?, client 20% of a core, machine 30% busy, window unknown "
            "(no qd 1 run)");
  RunResult fast = StopAndWait(0.5);
  EXPECT_EQ(ExplainShortfall(Row(500), &fast, 2),
            "unexplained: server 30%, client 20% of a core, machine 30% busy, window 8389 Mbit/s");
}

}  // namespace
}  // namespace nfs3d::bench
