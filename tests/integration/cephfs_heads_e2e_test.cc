// Several nfs3d heads over one CephFS directory of the shared test cluster
// (fixture ceph), as in docs/multi-head.md: heads of one [cluster] share the
// handle key through the file system, so a handle that one head gave out
// works on the others (a client whose head died goes on through the head
// that took over its address), and data written through one head is read
// through another. A head outside the cluster refuses those handles.
#include <unistd.h>

#include <cstdlib>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

#include "stats/metrics_server.h"
#include "stats/prom_text.h"
#include "tests/integration/e2e_harness.h"

namespace nfs3d::e2e {
namespace {

constexpr char kExports[] = "/ceph 127.0.0.1(rw,insecure,no_root_squash,cephfs=/)\n";

class CephfsHeadsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* ceph = std::getenv("NFS3D_CEPH_DIR");
    if (ceph == nullptr) GTEST_SKIP() << "no cluster (run through ctest: fixture ceph)";
    dir_ = fs::path(::testing::TempDir()) / absl::StrCat("nfs3d-cephheads-", getpid());
    fs::remove_all(dir_);
    const std::string ceph_conf = absl::StrCat(
        "\n[ceph]\nconf = ", ceph, "/ceph.conf\nkeyring = ", ceph, "/keyring\nclient_id = admin\n");
    // A shared directory of this run's own: the first head makes the key.
    const std::string cluster =
        absl::StrCat("[cluster]\nname = e2e\nshared_dir = /.nfs3d-e2e-", getpid(), "\n");
    // Heads 0 and 1 form the cluster (state directories of their own);
    // head 2 is a head of its own.
    for (int i = 0; i < 3; ++i) {
      const std::string node = i < 2 ? absl::StrCat(cluster, "node_id = head", i, "\n") : "";
      heads_[i].Configure(dir_ / absl::StrCat("head", i), kExports, ceph_conf + node);
      ASSERT_TRUE(heads_[i].Start()) << heads_[i].Log();
      nfs_[i] = RawClient::Open(heads_[i].port(), {});
      mnt_[i] = RawClient::Open(heads_[i].mount_port(), {});
      ASSERT_NE(nfs_[i], nullptr);
      ASSERT_NE(mnt_[i], nullptr);
    }
  }
  void TearDown() override {
    for (NfsdProcess& head : heads_) head.Stop();
    fs::remove_all(dir_);
  }

  std::string Root(int head) { return Mount(*mnt_[head], "/ceph"); }
  uint32_t Write(int head, const std::string& fh, const std::string& data) {
    return Nfs(*nfs_[head], nfs3::kWrite,
               Args()
                   .Opaque(fh)
                   .U64(0)
                   .U32(static_cast<uint32_t>(data.size()))
                   .U32(nfs3::FILE_SYNC)
                   .Opaque(data)
                   .str())
        .status;
  }
  NfsReply Read(int head, const std::string& fh) {
    return Nfs(*nfs_[head], nfs3::kRead, Args().Opaque(fh).U64(0).U32(64).str());
  }

  // The node_id label of the head's nfs3d_cluster_info; "" without one.
  std::string NodeIdInMetrics(int head) {
    auto page = stats::HttpGet(
        absl::StrCat("unix:", (dir_ / absl::StrCat("head", head) / "state/nfs3d.sock").string()),
        "/metrics");
    EXPECT_TRUE(page.ok()) << page.status();
    if (!page.ok()) return "";
    auto samples = stats::ParsePrometheusText(*page);
    EXPECT_TRUE(samples.ok()) << samples.status();
    if (!samples.ok()) return "";
    for (const stats::Sample& s : *samples) {
      if (s.name == "nfs3d_cluster_info") return s.Label("node_id");
    }
    return "";
  }

  fs::path dir_;
  NfsdProcess heads_[3];
  std::unique_ptr<RawClient> nfs_[3], mnt_[3];
};

TEST_F(CephfsHeadsTest, HandlesFromOneHeadWorkOnTheOtherHeadsOfTheCluster) {
  const std::string root = Root(0);
  ASSERT_FALSE(root.empty());
  EXPECT_EQ(Root(1), root);  // same key, same export id: the same root handle
  const std::string name = absl::StrCat("shared-", getpid());
  const std::string fh = NewHandle(Nfs(*nfs_[0], nfs3::kCreate, CreateArgs(root, name)));
  ASSERT_FALSE(fh.empty());
  ASSERT_EQ(Write(0, fh, "written through head 0"), nfs3::NFS3_OK);

  // Head 1 takes head 0's handles as its own: GETATTR, READ, WRITE.
  uint32_t status = 0;
  std::optional<Fattr> attr = Getattr(*nfs_[1], fh, &status);
  ASSERT_EQ(status, nfs3::NFS3_OK);
  EXPECT_EQ(attr->size, 22u);
  EXPECT_NE(Read(1, fh).results.find("written through head 0"), std::string::npos);
  ASSERT_EQ(Write(1, fh, "WRITTEN"), nfs3::NFS3_OK);
  // And head 0 reads what head 1 wrote (close-to-open: a fresh GETATTR/READ).
  EXPECT_NE(Read(0, fh).results.find("WRITTEN through head 0"), std::string::npos);
  EXPECT_EQ(Lookup(*nfs_[1], root, name).fh, fh);

  // Each head has a write verifier of its own: a client whose UNSTABLE
  // writes went to a head that died sees another verifier from the head that
  // took over its address, and writes them again.
  EXPECT_NE(CommitVerifier(*nfs_[0], fh), CommitVerifier(*nfs_[1], fh));

  // Operators see which node a head is.
  EXPECT_EQ(NodeIdInMetrics(0), "head0");
  EXPECT_EQ(NodeIdInMetrics(1), "head1");
  EXPECT_EQ(NodeIdInMetrics(2), "");

  // A head outside the cluster signs with a key of its own: it refuses them.
  EXPECT_NE(Root(2), root);
  Getattr(*nfs_[2], fh, &status);
  EXPECT_TRUE(status == nfs3::NFS3ERR_STALE || status == nfs3::NFS3ERR_BADHANDLE) << status;

  Nfs(*nfs_[0], nfs3::kRemove, DirOp(root, name));
}

TEST_F(CephfsHeadsTest, AHeadRestartedKeepsTheClusterKey) {
  const std::string root = Root(1);
  ASSERT_FALSE(root.empty());
  heads_[1].Kill9();
  ASSERT_TRUE(heads_[1].Start()) << heads_[1].Log();
  nfs_[1] = RawClient::Open(heads_[1].port(), {});
  mnt_[1] = RawClient::Open(heads_[1].mount_port(), {});
  uint32_t status = 0;
  Getattr(*nfs_[1], root, &status);
  EXPECT_EQ(status, nfs3::NFS3_OK);
  EXPECT_EQ(Root(1), Root(0));
}

}  // namespace
}  // namespace nfs3d::e2e
