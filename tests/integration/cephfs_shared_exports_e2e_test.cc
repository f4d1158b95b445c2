// One exports file for the heads of a [cluster] ([cluster] shared_exports):
// two heads over the shared test cluster (fixture ceph) follow
// shared_dir/exports in CephFS. The first head seeds it from its local file
// and the second, whose local file is empty, serves what it says; a change
// written there (from another CephFS client, as an admin would) is in force
// on both heads without SIGHUP; a file that does not parse is refused by both,
// which keep serving their exports. `nfs3d exports add|remove|list` on one
// head's configuration edits the shared file through that head's control
// socket, and both heads serve the change.
#include <cephfs/libcephfs.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"

#include "tests/integration/e2e_harness.h"

namespace nfs3d::e2e {
namespace {

class CephfsSharedExportsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* ceph = std::getenv("NFS3D_CEPH_DIR");
    if (ceph == nullptr) GTEST_SKIP() << "no cluster (run through ctest: fixture ceph)";
    ASSERT_EQ(ceph_create(&cm_, "admin"), 0);
    ASSERT_EQ(ceph_conf_read_file(cm_, absl::StrCat(ceph, "/ceph.conf").c_str()), 0);
    ASSERT_EQ(ceph_conf_set(cm_, "keyring", absl::StrCat(ceph, "/keyring").c_str()), 0);
    ASSERT_EQ(ceph_mount(cm_, "/"), 0);
    tag_ = absl::StrCat("sx-", getpid());
    for (const char* sub : {"a", "b"}) {
      ASSERT_EQ(ceph_mkdirs(cm_, absl::StrCat("/", tag_, "/", sub).c_str(), 0777), 0);
    }
    dir_ = fs::path(::testing::TempDir()) / absl::StrCat("nfs3d-", tag_);
    fs::remove_all(dir_);
    const std::string conf = absl::StrCat(
        "\n[ceph]\nconf = ", ceph, "/ceph.conf\nkeyring = ", ceph,
        "/keyring\nclient_id = admin\n[cluster]\nname = e2e\nshared_dir = ", SharedDir(),
        "\nshared_exports = on\nexports_poll = 1\n");
    // Head 0 starts first and seeds the shared file with its local one;
    // head 1's local file is empty: what it serves comes from the cluster.
    for (int i = 0; i < 2; ++i) {
      heads_[i].Configure(dir_ / absl::StrCat("head", i), i == 0 ? Line("a") : "",
                          conf + absl::StrCat("node_id = head", i, "\n"));
      ASSERT_TRUE(heads_[i].Start()) << heads_[i].Log();
    }
  }
  void TearDown() override {
    for (NfsdProcess& head : heads_) head.Stop();
    fs::remove_all(dir_);
    if (cm_) ceph_shutdown(cm_);
  }

  std::string SharedDir() { return absl::StrCat("/.nfs3d-", tag_); }
  std::string Line(const std::string& sub) {
    return absl::StrCat("/", tag_, "-", sub, " 127.0.0.1(rw,insecure,cephfs=/", tag_, "/", sub,
                        ")\n");
  }

  // Replaces shared_dir/exports as an admin would: a temp file renamed over it.
  void WriteShared(const std::string& text) {
    const std::string tmp = absl::StrCat(SharedDir(), "/exports.new");
    int fd = ceph_open(cm_, tmp.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(ceph_write(cm_, fd, text.data(), static_cast<int64_t>(text.size()), 0),
              static_cast<int>(text.size()));
    ASSERT_EQ(ceph_fsync(cm_, fd, 0), 0);
    ASSERT_EQ(ceph_close(cm_, fd), 0);
    ASSERT_EQ(ceph_rename(cm_, tmp.c_str(), absl::StrCat(SharedDir(), "/exports").c_str()), 0);
  }

  uint32_t Mnt(int head, const std::string& sub) {
    auto client = RawClient::Open(heads_[head].mount_port());
    EXPECT_NE(client, nullptr);
    uint32_t status = 999;
    Mount(*client, absl::StrCat("/", tag_, "-", sub), &status);
    return status;
  }

  // Waits up to 15 s until MNT of sub succeeds (ok) or fails (!ok) on both
  // heads; returns how long that took, or nullopt.
  std::optional<absl::Duration> BothHeads(const std::string& sub, bool ok) {
    const absl::Time start = absl::Now();
    while (absl::Now() - start < absl::Seconds(15)) {
      if (((Mnt(0, sub) == 0) == ok) && ((Mnt(1, sub) == 0) == ok)) return absl::Now() - start;
      absl::SleepFor(absl::Milliseconds(100));
    }
    return std::nullopt;
  }

  ceph_mount_info* cm_ = nullptr;
  std::string tag_;
  fs::path dir_;
  NfsdProcess heads_[2];
};

TEST_F(CephfsSharedExportsTest, EveryHeadFollowsTheSharedExports) {
  // Seeded from head 0's file, served by both.
  EXPECT_EQ(Mnt(0, "a"), 0u) << heads_[0].Log();
  EXPECT_EQ(Mnt(1, "a"), 0u) << heads_[1].Log();
  EXPECT_NE(Mnt(1, "b"), 0u);

  WriteShared(Line("a") + Line("b"));
  std::optional<absl::Duration> in_force = BothHeads("b", true);
  ASSERT_TRUE(in_force) << heads_[0].Log() << heads_[1].Log();
  std::printf("a new export was in force on both heads after %s\n",
              absl::FormatDuration(*in_force).c_str());

  WriteShared(Line("b"));
  ASSERT_TRUE(BothHeads("a", false)) << heads_[1].Log();
  EXPECT_EQ(Mnt(0, "b"), 0u);
}

TEST_F(CephfsSharedExportsTest, NfsExportsCommandEditsTheSharedFileForEveryHead) {
  std::string out;
  const std::string b = Line("b");  // "PATH CLIENT(OPTIONS)\n"
  const size_t space = b.find(' ');
  ASSERT_EQ(
      heads_[1].Command(
          "exports", {"add", b.substr(0, space), b.substr(space + 1, b.size() - space - 2)}, &out),
      0)
      << out;
  EXPECT_NE(out.find("in force on this head"), std::string::npos) << out;
  // The head asked serves it at once; the other one follows.
  EXPECT_EQ(Mnt(1, "b"), 0u) << heads_[1].Log();
  ASSERT_TRUE(BothHeads("b", true)) << heads_[0].Log();

  ASSERT_EQ(heads_[0].Command("exports", {"remove", absl::StrCat("/", tag_, "-a")}, &out), 0)
      << out;
  ASSERT_TRUE(BothHeads("a", false)) << heads_[1].Log();
  ASSERT_EQ(heads_[1].Command("exports", {"list"}, &out), 0) << out;
  EXPECT_NE(out.find(tag_ + "-b"), std::string::npos) << out;
  EXPECT_EQ(out.find(tag_ + "-a"), std::string::npos) << out;
  // Each head logged who made the change it applied.
  EXPECT_NE(heads_[1].Log().find(": remove /" + tag_ + "-a"), std::string::npos) << heads_[1].Log();

  // A bad line is refused by the head and the shared file keeps its text.
  EXPECT_NE(heads_[0].Command("exports", {"add", "/x", "127.0.0.1(bogus_option)"}, &out), 0);
  EXPECT_NE(out.find("bogus_option"), std::string::npos) << out;
  EXPECT_NE(heads_[0].Command("exports", {"remove", "/not-exported"}, &out), 0);
  EXPECT_EQ(Mnt(0, "b"), 0u);
}

TEST_F(CephfsSharedExportsTest, ABrokenSharedFileIsRefusedByEveryHead) {
  WriteShared(Line("a") + "/" + tag_ + "-b 127.0.0.1(rw,bogus_option)\n");
  for (NfsdProcess& head : heads_) {
    bool refused = false;
    for (int i = 0; i < 150 && !refused; ++i) {
      refused = head.Log().find("refused, keeping the exports in force") != std::string::npos;
      if (!refused) absl::SleepFor(absl::Milliseconds(100));
    }
    EXPECT_TRUE(refused) << head.Log();
    EXPECT_NE(head.Log().find("bogus_option"), std::string::npos) << head.Log();
  }
  EXPECT_EQ(Mnt(0, "a"), 0u);
  EXPECT_EQ(Mnt(1, "a"), 0u);
  EXPECT_NE(Mnt(1, "b"), 0u);
}

}  // namespace
}  // namespace nfs3d::e2e
