// NLM locks on a CephFS export, end to end through two nfs3d heads serving
// the same CephFS directory of the shared test cluster (fixture ceph): a lock
// granted by one head is a CephFS lock, so the other head (another CephFS
// client) refuses a conflicting NLM lock and reports the holder to TEST,
// until the first is released. The NLM client is tests/nlm/nlm_lock_tool.
#include <sys/wait.h>

#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

#include "tests/integration/e2e_harness.h"
#include "tests/support/build_paths.h"

namespace nfs3d::e2e {
namespace {

class CephfsLockTest : public ::testing::Test {
 protected:
  // [nlm] grace_period, and more configuration of head i.
  virtual int GracePeriod() const { return 0; }
  virtual std::string HeadConf(int head) const { return ""; }

  void SetUp() override {
    const char* ceph = std::getenv("NFS3D_CEPH_DIR");
    if (ceph == nullptr) GTEST_SKIP() << "no cluster (run through ctest: fixture ceph)";
    dir_ = fs::path(::testing::TempDir()) / absl::StrCat("nfs3d-cephlock-", getpid());
    fs::remove_all(dir_);
    const std::string ceph_conf = absl::StrCat(
        "\n[nlm]\nenable = on\ngrace_period = ", GracePeriod(), "\n[ceph]\nconf = ", ceph,
        "/ceph.conf\nkeyring = ", ceph, "/keyring\nclient_id = admin\n");
    // Two heads, each with a state directory (and so a CephFS session) of
    // its own.
    for (int i = 0; i < 2; ++i) {
      heads_[i].Configure(dir_ / absl::StrCat("head", i),
                          "/ceph 127.0.0.1(rw,insecure,no_root_squash,cephfs=/)\n",
                          ceph_conf + HeadConf(i));
      ASSERT_TRUE(heads_[i].Start()) << heads_[i].Log();
    }
  }
  void TearDown() override {
    for (NfsdProcess& head : heads_) head.Stop();
    fs::remove_all(dir_);
  }

  // nlm_lock_tool's exit status against head i: 0 granted/free/unlocked,
  // 1 denied/held, 3 refused in a grace period. flags: e.g. --wait-grace.
  int Tool(int i, const std::string& name, const char* op, const char* flags = "") {
    const std::string cmd =
        absl::StrCat(test_support::NlmLockTool(), " 127.0.0.1:", heads_[i].port(), " /ceph ", name,
                     " ", op, " ", flags);
    int status = std::system(cmd.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  fs::path dir_;
  NfsdProcess heads_[2];
};

TEST_F(CephfsLockTest, LockOnOneHeadIsRefusedOnTheOther) {
  auto c = RawClient::Open(heads_[0].port(), {});
  auto mnt = RawClient::Open(heads_[0].mount_port(), {});
  const std::string root = Mount(*mnt, "/ceph");
  ASSERT_FALSE(root.empty());
  const std::string name = absl::StrCat("locked-", getpid());
  ASSERT_FALSE(NewHandle(Nfs(*c, nfs3::kCreate, CreateArgs(root, name))).empty());

  EXPECT_EQ(Tool(0, name, "lock"), 0);  // granted by head 0: a CephFS lock
  EXPECT_EQ(Tool(1, name, "test"), 1);  // head 1 sees it held
  EXPECT_EQ(Tool(1, name, "lock"), 1);  // and refuses the conflicting lock
  EXPECT_EQ(Tool(0, name, "unlock"), 0);
  EXPECT_EQ(Tool(1, name, "lock"), 0);  // free now
  EXPECT_EQ(Tool(0, name, "test"), 1);  // and the other way round
  EXPECT_EQ(Tool(1, name, "unlock"), 0);
  Nfs(*c, nfs3::kRemove, DirOp(root, name));
}

// A handover (nfs3d --takeover) of a head serving CephFS: the successor
// mounts beside the running process without ending its session (which
// would lose what it had not flushed), the running one flushes and ends its
// session before the successor serves, so UNSTABLE data written before is
// on the cluster and the verifier stays the same (no client resends); the
// NLM lock's CephFS lock moves to the successor's session: the other head
// refuses a conflicting lock after each handover, and gets it once the
// holder unlocks.
TEST_F(CephfsLockTest, HandoverKeepsDataVerifierAndCephfsLocks) {
  auto c = RawClient::Open(heads_[0].port(), {});
  auto mnt = RawClient::Open(heads_[0].mount_port(), {});
  const std::string root = Mount(*mnt, "/ceph");
  ASSERT_FALSE(root.empty());
  const std::string name = absl::StrCat("handover-", getpid());
  const std::string fh = NewHandle(Nfs(*c, nfs3::kCreate, CreateArgs(root, name)));
  ASSERT_FALSE(fh.empty());
  ASSERT_EQ(Tool(0, name, "lock"), 0);
  std::string data;
  for (int round = 0; round < 2; ++round) {
    data = absl::StrCat("written before handover ", round);
    auto writer = RawClient::Open(heads_[0].port(), {});  // connections end at a handover
    const std::string verifier = WriteVerifier(*writer, fh, 0, data, nfs3::UNSTABLE);
    ASSERT_TRUE(heads_[0].TakeOver()) << heads_[0].Log();
    // Read by the successor, whose session is new (the predecessor's ended):
    // the data reached the cluster.
    auto again = RawClient::Open(heads_[0].port(), {});
    NfsReply rd = Nfs(*again, nfs3::kRead, Args().Opaque(fh).U64(0).U32(64).str());
    EXPECT_NE(rd.results.find(data), std::string::npos) << "round " << round;
    EXPECT_EQ(CommitVerifier(*again, fh), verifier) << "round " << round;
    EXPECT_EQ(Tool(1, name, "lock"), 1) << "round " << round;  // still held
  }
  const std::string log = heads_[0].Log();
  EXPECT_EQ(log.find("ended the session of the previous instance", log.find("taking over")),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("sessions flushed and ended for the successor"), std::string::npos) << log;
  EXPECT_NE(log.find("CephFS locks taken on this process's sessions"), std::string::npos) << log;
  EXPECT_EQ(Tool(0, name, "unlock"), 0);
  EXPECT_EQ(Tool(1, name, "lock"), 0);
  EXPECT_EQ(Tool(1, name, "unlock"), 0);
  auto last = RawClient::Open(heads_[0].port(), {});
  Nfs(*last, nfs3::kRemove, DirOp(root, name));
}

// Heads of one [cluster] share the lock grace period (docs/multi-head.md):
// after head 1 restarts, its clients may reclaim the locks its previous
// instance held (released with that instance's CephFS session), so head 0
// grants no new lock until head 1's grace period is over.
class CephfsClusterGraceTest : public CephfsLockTest {
 protected:
  int GracePeriod() const override { return 10; }
  std::string HeadConf(int head) const override {
    // A shared directory of the test's own: a head restarted in the next
    // test of this process would find its clients and start a grace period.
    return absl::StrCat("[cluster]\nname = grace\nshared_dir = /.nfs3d-grace-", getpid(), "-",
                        ::testing::UnitTest::GetInstance()->current_test_info()->name(),
                        "\nnode_id = head", head, "\n");
  }
};

TEST_F(CephfsClusterGraceTest, AHeadsGracePeriodHoldsBackNewLocksOnEveryHead) {
  auto c = RawClient::Open(heads_[0].port(), {});
  auto mnt = RawClient::Open(heads_[0].mount_port(), {});
  const std::string root = Mount(*mnt, "/ceph");
  ASSERT_FALSE(root.empty());
  const std::string held = absl::StrCat("held-", getpid()), other = absl::StrCat("new-", getpid());
  for (const std::string& name : {held, other}) {
    ASSERT_FALSE(NewHandle(Nfs(*c, nfs3::kCreate, CreateArgs(root, name))).empty());
  }
  ASSERT_EQ(Tool(1, held, "lock"), 0);  // head 1 now has a client to tell after a restart
  heads_[1].Kill9();
  ASSERT_TRUE(heads_[1].Start()) << heads_[1].Log();
  EXPECT_EQ(Tool(0, other, "lock"), 3) << "head 0 granted a new lock in head 1's grace period";
  EXPECT_EQ(Tool(0, other, "lock", "--wait-grace"), 0);  // granted once it is over
  EXPECT_EQ(Tool(0, other, "unlock"), 0);
  for (const std::string& name : {held, other}) Nfs(*c, nfs3::kRemove, DirOp(root, name));
}

// A handover in a [cluster]: while the CephFS lock changes sessions the
// other heads hold back new locks, and the successor ends that as soon as
// it holds the lock: right after the handover the other head refuses the
// held lock (DENIED, not a grace period) and grants a new one, and so does
// the successor (at once: the period is recorded as over, not as ending at
// the next whole second).
TEST_F(CephfsClusterGraceTest, HandoverLeavesNoGracePeriodOnAnyHead) {
  auto c = RawClient::Open(heads_[0].port(), {});
  auto mnt = RawClient::Open(heads_[0].mount_port(), {});
  const std::string root = Mount(*mnt, "/ceph");
  ASSERT_FALSE(root.empty());
  const std::string held = absl::StrCat("held-", getpid()), other = absl::StrCat("new-", getpid()),
                    third = absl::StrCat("third-", getpid());
  for (const std::string& name : {held, other, third}) {
    ASSERT_FALSE(NewHandle(Nfs(*c, nfs3::kCreate, CreateArgs(root, name))).empty());
  }
  ASSERT_EQ(Tool(0, held, "lock"), 0);
  ASSERT_TRUE(heads_[0].TakeOver()) << heads_[0].Log();
  EXPECT_EQ(Tool(1, held, "lock"), 1) << heads_[0].Log() << heads_[1].Log();
  EXPECT_EQ(Tool(1, other, "lock"), 0);
  EXPECT_EQ(Tool(0, third, "lock"), 0);
  for (const std::string& name : {held, third}) EXPECT_EQ(Tool(0, name, "unlock"), 0);
  EXPECT_EQ(Tool(1, other, "unlock"), 0);
  auto last = RawClient::Open(heads_[0].port(), {});
  for (const std::string& name : {held, other, third}) Nfs(*last, nfs3::kRemove, DirOp(root, name));
}

}  // namespace
}  // namespace nfs3d::e2e
