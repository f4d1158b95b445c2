// The lab's drop counters, read from the kernel's own texts.
#include "tools/nfs3bench/lab_drops.h"

#include "gtest/gtest.h"

namespace nfs3d::bench {
namespace {

constexpr char kSnmp[] =
    "Ip: Forwarding DefaultTTL InReceives InHdrErrors InAddrErrors ForwDatagrams "
    "InUnknownProtos InDiscards InDelivers OutRequests OutDiscards OutNoRoutes ReasmTimeout "
    "ReasmReqds ReasmOKs ReasmFails FragOKs FragFails FragCreates OutTransmits\n"
    "Ip: 1 64 100 0 0 0 0 0 100 90 0 0 7 60 10 9 5 0 30 95\n"
    "Icmp: InMsgs InErrors\n"
    "Icmp: 0 0\n"
    "Udp: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors InCsumErrors "
    "IgnoredMulti MemErrors\n"
    "Udp: 50 0 4 40 4 2 0 0 0\n";

TEST(LabDropsTest, ParsesSnmp) {
  DropCounts c;
  ASSERT_TRUE(ParseSnmp(kSnmp, "server", &c));
  EXPECT_EQ(c["server rcvbuf"], 4u);
  EXPECT_EQ(c["server sndbuf"], 2u);
  EXPECT_EQ(c["server reassembly"], 9u);
  EXPECT_EQ(c["server reassembly timeouts"], 7u);
  EXPECT_FALSE(ParseSnmp("Udp: x\nUdp: 1\n", "server", &c));
}

TEST(LabDropsTest, SumsSocketDrops) {
  const char text[] =
      "   sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  "
      "timeout inode ref pointer drops\n"
      "  1: 00000000:0801 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        "
      "0 123 2 0000000000000000 17\n"
      "  2: 00000000:4E50 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        "
      "0 124 2 0000000000000000 3\n";
  uint64_t drops = 0;
  ASSERT_TRUE(ParseSocketDrops(text, &drops));
  EXPECT_EQ(drops, 20u);
  EXPECT_FALSE(ParseSocketDrops("", &drops));
}

TEST(LabDropsTest, SumsQdiscDrops) {
  const char text[] =
      "qdisc netem 1: root refcnt 2 limit 1000\n"
      " Sent 1000 bytes 10 pkt (dropped 2, overlimits 0 requeues 0)\n"
      "qdisc tbf 2: parent 1: rate 1Gbit burst 128Kb lat 20ms\n"
      " Sent 900 bytes 8 pkt (dropped 40, overlimits 12 requeues 0)\n";
  uint64_t drops = 0;
  ASSERT_TRUE(ParseQdiscDrops(text, &drops));
  EXPECT_EQ(drops, 42u);
  EXPECT_FALSE(ParseQdiscDrops("Cannot find device", &drops));
}

TEST(LabDropsTest, ReadsOneDevice) {
  const char text[] =
      "Inter-|   Receive                            |  Transmit\n"
      " face |bytes packets errs drop fifo frame compressed multicast|bytes packets errs drop "
      "fifo colls carrier compressed\n"
      "    lo: 10 1 0 0 0 0 0 0 10 1 0 0 0 0 0 0\n"
      "  nbs0: 500 5 0 3 0 0 0 0 600 6 0 4 0 0 0 0\n";
  uint64_t drops = 0;
  ASSERT_TRUE(ParseDevDrops(text, "nbs0", &drops));
  EXPECT_EQ(drops, 7u);
  EXPECT_FALSE(ParseDevDrops(text, "nbc0", &drops));
}

TEST(LabDropsTest, DeltaAndDescriptionFollowThePath) {
  DropCounts before = {{"server qdisc", 5},
                       {"client reassembly", 1},
                       {"client reassembly timeouts", 1},
                       {"client rcvbuf", 2}};
  DropCounts after = {{"server qdisc", 17},
                      {"client reassembly", 13},
                      {"client reassembly timeouts", 13},
                      {"client rcvbuf", 2}};
  DropCounts delta = DropDelta(before, after);
  EXPECT_EQ(delta.count("client rcvbuf"), 0u);
  EXPECT_EQ(DescribeDrops(delta), "server qdisc 12, client reassembly 12 (timeouts 12)");
  EXPECT_EQ(DescribeDrops({}), "");
}

}  // namespace
}  // namespace nfs3d::bench
