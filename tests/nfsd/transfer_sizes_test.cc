#include "nfsd/transfer_sizes.h"

#include <netinet/in.h>

#include "gtest/gtest.h"

namespace nfs3d::nfsd {
namespace {

TEST(TransferSizesTest, AutoUdpPreferredFollowsMtu) {
  constexpr uint32_t kRead = kReadReplyOverhead;
  EXPECT_EQ(AutoUdpPreferred(1500, false, 6, 32768, kRead), 8192u);
  EXPECT_EQ(AutoUdpPreferred(9000, false, 6, 32768, kRead), 32768u);
  EXPECT_EQ(AutoUdpPreferred(9000, false, 6, 16384, kRead), 16384u);  // never above max
  EXPECT_EQ(AutoUdpPreferred(1500, true, 6, 32768, kRead), 8192u);
  EXPECT_EQ(AutoUdpPreferred(1500, false, 1, 32768, kRead), 1024u);
  EXPECT_EQ(AutoUdpPreferred(0, false, 6, 32768, kRead), 32768u);  // MTU unknown
  EXPECT_EQ(AutoUdpPreferred(576, false, 6, 32768, kRead), 2048u);
}

TEST(TransferSizesTest, WriteCallsGetTheSameFragmentBudget) {
  constexpr uint32_t kWrite = kWriteCallOverhead;
  for (bool ipv6 : {false, true}) {
    EXPECT_EQ(AutoUdpPreferred(1500, ipv6, 6, 32768, kWrite), 8192u);
    EXPECT_EQ(AutoUdpPreferred(9000, ipv6, 6, 32768, kWrite), 32768u);
  }
  // The larger header of a WRITE call can cost a size step where a READ
  // reply would just fit: 4 fragments at MTU 9000 carry 35,872 bytes.
  EXPECT_EQ(AutoUdpPreferred(9000, false, 4, 65536, kReadReplyOverhead), 32768u);
  EXPECT_EQ(AutoUdpPreferred(8000, false, 5, 65536, kReadReplyOverhead), 32768u);
}

TEST(TransferSizesTest, TcpAndUdpDiffer) {
  TransferSettings settings;
  rpc::TransportInfo tcp;
  tcp.transport = rpc::Transport::kTcp;
  rpc::TransportInfo udp;
  udp.transport = rpc::Transport::kUdp;
  conf::TransferSizes t = SizesFor(settings, tcp);
  conf::TransferSizes u = SizesFor(settings, udp);
  EXPECT_EQ(t.rsize_max, kMaxTransfer);
  EXPECT_EQ(t.wsize_pref, kMaxTransfer);
  EXPECT_EQ(u.rsize_max, 32768u);
  EXPECT_EQ(u.wsize_max, 32768u);
  EXPECT_EQ(u.rsize_pref, 32768u);  // auto, but the MTU is unknown
}

TEST(TransferSizesTest, ClampsToHardLimits) {
  TransferSettings settings;
  settings.tcp = {64u << 20, 64u << 20, 64u << 20, 64u << 20};
  settings.udp = {1u << 20, 1u << 20, 1u << 20, 512};
  rpc::TransportInfo tcp;
  rpc::TransportInfo udp;
  udp.transport = rpc::Transport::kUdp;
  EXPECT_EQ(SizesFor(settings, tcp).rsize_max, kMaxTransfer);
  conf::TransferSizes u = SizesFor(settings, udp);
  EXPECT_EQ(u.rsize_max, kMaxUdpTransfer);
  EXPECT_EQ(u.rsize_pref, kMaxUdpTransfer);
  EXPECT_EQ(u.wsize_pref, 1024u);
}

TEST(TransferSizesTest, UdpAutoUsesTransportMtu) {
  TransferSettings settings;
  rpc::TransportInfo udp;
  udp.transport = rpc::Transport::kUdp;
  udp.peer.ss_family = AF_INET;
  udp.mtu = 1500;
  conf::TransferSizes s = SizesFor(settings, udp);
  EXPECT_EQ(s.rsize_pref, 8192u);
  EXPECT_EQ(s.wsize_pref, 8192u);
  EXPECT_EQ(s.rsize_max, 32768u);
  udp.mtu = 9000;
  EXPECT_EQ(SizesFor(settings, udp).rsize_pref, 32768u);
  udp.mtu = 0;  // unknown: the configured preference
  EXPECT_EQ(SizesFor(settings, udp).rsize_pref, 32768u);
}

TEST(TransferSizesTest, FixedUdpPreferencesIgnoreMtu) {
  TransferSettings settings;
  settings.udp = {32768, 16384, 32768, 4096, /*rsize_pref_auto=*/false, /*wsize_pref_auto=*/true};
  rpc::TransportInfo udp;
  udp.transport = rpc::Transport::kUdp;
  udp.peer.ss_family = AF_INET;
  udp.mtu = 9000;
  conf::TransferSizes s = SizesFor(settings, udp);
  EXPECT_EQ(s.rsize_pref, 16384u);  // fixed
  EXPECT_EQ(s.wsize_pref, 32768u);  // still auto
  settings.udp.wsize_pref_auto = false;
  EXPECT_EQ(SizesFor(settings, udp).wsize_pref, 4096u);
}

}  // namespace
}  // namespace nfs3d::nfsd
