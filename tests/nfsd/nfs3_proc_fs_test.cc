// FSSTAT, FSINFO, PATHCONF through the table.
#include "tests/nfsd/nfs3_fixture.h"

namespace nfs3d::nfsd::testing {
namespace {

TEST_F(Nfs3Test, Fsstat) {
  n3::FSSTAT3res r = client().Fsstat(Root(kRwId));
  ASSERT_EQ(r.status, n3::NFS3_OK);
  EXPECT_TRUE(r.obj_attributes);
  EXPECT_GT(r.tbytes, 0u);
  EXPECT_LE(r.fbytes, r.tbytes);
  EXPECT_LE(r.abytes, r.fbytes);
}

TEST_F(Nfs3Test, FsinfoDiffersByTransport) {
  n3::FSINFO3res tcp = client().Fsinfo(Root(kRwId));
  ASSERT_EQ(tcp.status, n3::NFS3_OK);
  EXPECT_TRUE(tcp.obj_attributes);
  EXPECT_EQ(tcp.rtmax, 65536u);
  EXPECT_EQ(tcp.rtpref, 32768u);
  EXPECT_EQ(tcp.wtmax, 65536u);
  EXPECT_EQ(tcp.wtpref, 32768u);
  EXPECT_EQ(tcp.rtmult, 4096u);
  EXPECT_EQ(tcp.wtmult, 4096u);
  EXPECT_GT(tcp.dtpref, 0u);
  EXPECT_GT(tcp.maxfilesize, 1ull << 40);
  EXPECT_EQ(tcp.time_delta.seconds, 0u);
  EXPECT_EQ(tcp.time_delta.nseconds, 1u);
  EXPECT_EQ(tcp.properties,
            n3::FSF3_LINK | n3::FSF3_SYMLINK | n3::FSF3_HOMOGENEOUS | n3::FSF3_CANSETTIME);

  client().caller.transport = rpc::Transport::kUdp;
  n3::FSINFO3res udp = client().Fsinfo(Root(kRwId));
  ASSERT_EQ(udp.status, n3::NFS3_OK);
  EXPECT_EQ(udp.rtmax, 32768u);
  EXPECT_EQ(udp.rtpref, 16384u);
  EXPECT_EQ(udp.wtmax, 32768u);
  EXPECT_EQ(udp.wtpref, 16384u);
}

// The default settings: UDP preferred sizes follow the MTU.
using Nfs3AutoUdpTest = Nfs3Test;

TEST_F(Nfs3AutoUdpTest, FsinfoFollowsMtu) {
  client().caller.transport = rpc::Transport::kUdp;
  client().caller.mtu = 1500;
  n3::FSINFO3res standard = client().Fsinfo(Root(kRwId));
  EXPECT_EQ(standard.rtpref, 8192u);
  EXPECT_EQ(standard.wtpref, 8192u);
  EXPECT_EQ(standard.dtpref, 8192u);
  client().caller.mtu = 9000;
  n3::FSINFO3res jumbo = client().Fsinfo(Root(kRwId));
  EXPECT_EQ(jumbo.rtpref, 32768u);
  EXPECT_EQ(jumbo.wtpref, 32768u);
  client().caller.transport = rpc::Transport::kTcp;  // TCP ignores the MTU
  EXPECT_EQ(client().Fsinfo(Root(kRwId)).rtpref, 32768u);
}

TEST_F(Nfs3Test, Pathconf) {
  n3::PATHCONF3res r = client().Pathconf(Root(kRwId));
  ASSERT_EQ(r.status, n3::NFS3_OK);
  EXPECT_TRUE(r.obj_attributes);
  EXPECT_EQ(r.name_max, 255u);
  EXPECT_GT(r.linkmax, 1u);
  EXPECT_TRUE(r.no_trunc);
  EXPECT_TRUE(r.chown_restricted);
  EXPECT_FALSE(r.case_insensitive);
  EXPECT_TRUE(r.case_preserving);
}

}  // namespace
}  // namespace nfs3d::nfsd::testing
