// Finding 10 of issue 48: an nfs3d started as root must not keep root's
// whole capability set. Whoever subverts it (a bug reachable by any NFS
// client) gets only what serving needs: no CAP_SYS_MODULE, CAP_SYS_RAWIO,
// CAP_SYS_PTRACE, CAP_NET_ADMIN, CAP_KILL, ...; no_new_privs stops an exec from
// gaining more, and CAP_NET_RAW belongs to [cluster] heads only. A
// `--takeover` successor keeps the same set, and still serves.
#include <linux/capability.h>

#include <cstdint>
#include <fstream>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

#include "daemon/privileges.h"
#include "tests/integration/e2e_harness.h"

namespace nfs3d::e2e {
namespace {

// A field of /proc/PID/status ("CapEff", "NoNewPrivs"), as text.
std::string StatusField(const std::string& pid, const std::string& name) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/status"));
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(name + ":", 0) == 0) {
      size_t start = line.find_first_not_of(" \t", name.size() + 1);
      return start == std::string::npos ? "" : line.substr(start);
    }
  }
  return "";
}

uint64_t CapMask(const std::string& pid, const std::string& name) {
  uint64_t mask = 0;
  EXPECT_TRUE(absl::SimpleHexAtoi(StatusField(pid, name), &mask)) << name;
  return mask;
}

uint64_t Bit(int cap) { return uint64_t{1} << cap; }

// What a server that is no cluster head serves with, written from what it
// does: per-call fsuid/fsgid/groups, open_by_handle_at, root callers' file
// powers, MKNOD, covered directories and directory-move watches
// (open_tree, fanotify: CAP_SYS_ADMIN), ports below 1024.
constexpr uint64_t kServing = (uint64_t{1} << CAP_SETUID) | (uint64_t{1} << CAP_SETGID) |
                              (uint64_t{1} << CAP_DAC_READ_SEARCH) |
                              (uint64_t{1} << CAP_DAC_OVERRIDE) | (uint64_t{1} << CAP_FOWNER) |
                              (uint64_t{1} << CAP_CHOWN) | (uint64_t{1} << CAP_FSETID) |
                              (uint64_t{1} << CAP_MKNOD) | (uint64_t{1} << CAP_SYS_ADMIN) |
                              (uint64_t{1} << CAP_NET_BIND_SERVICE);

class PrivilegeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root: nfs3d drops privileges only as root";
    dir_ = fs::path(::testing::TempDir()) /
           absl::StrCat("privilege-", getpid(), "-",
                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "export");
    server_.Configure(dir_, ExportLine(dir_, "127.0.0.0/8(rw,insecure,no_root_squash)"));
    ASSERT_TRUE(server_.Start()) << server_.Log();
    // This test may itself run without some (a container's bounding set):
    // nfs3d cannot keep what it never had.
    expected_ = kServing & CapMask("self", "CapBnd");
  }
  void TearDown() override { server_.Stop(); }

  // Every thread of the running nfs3d holds exactly `expected_`, with
  // nothing inheritable or ambient, none beyond it in the bounding set,
  // and no_new_privs set.
  void ExpectLeastPrivilege() {
    const std::string pid = absl::StrCat(server_.pid());
    EXPECT_EQ(StatusField(pid, "NoNewPrivs"), "1");
    EXPECT_EQ(CapMask(pid, "CapInh"), 0u);
    EXPECT_EQ(CapMask(pid, "CapAmb"), 0u);
    EXPECT_EQ(CapMask(pid, "CapBnd") & ~expected_, 0u)
        << std::hex << "bounding set " << CapMask(pid, "CapBnd");
    int threads = 0;
    for (const auto& task : fs::directory_iterator(absl::StrCat("/proc/", pid, "/task"))) {
      const std::string tid = absl::StrCat(pid, "/task/", task.path().filename().string());
      EXPECT_EQ(CapMask(tid, "CapPrm"), expected_) << std::hex << "thread " << tid;
      // A worker in a call runs with the caller's fsuid and fewer effective.
      EXPECT_EQ(CapMask(tid, "CapEff") & ~expected_, 0u) << "thread " << tid;
      ++threads;
    }
    EXPECT_GT(threads, 1);
    EXPECT_EQ(CapMask(pid, "CapEff"), expected_) << std::hex << "main thread";
    EXPECT_EQ(
        CapMask(pid, "CapEff") & (Bit(CAP_SYS_MODULE) | Bit(CAP_SYS_RAWIO) | Bit(CAP_NET_RAW) |
                                  Bit(CAP_NET_ADMIN) | Bit(CAP_SYS_PTRACE) | Bit(CAP_KILL)),
        0u);
  }

  fs::path dir_;
  NfsdProcess server_;
  uint64_t expected_ = 0;
};

TEST_F(PrivilegeTest, RootServerKeepsOnlyWhatServingNeeds) {
  ExpectLeastPrivilege();
  EXPECT_NE(server_.Log().find("capabilities kept: "), std::string::npos) << server_.Log();
  // Root callers (no_root_squash) still have root's file powers: a file
  // created by root, given away, is still root's to write.
  auto c = RawClient::Open(server_.port());
  ASSERT_TRUE(c);
  const std::string root = Mount(*c, (dir_ / "export").string());
  ASSERT_FALSE(root.empty());
  NfsReply created = Nfs(*c, nfs3::kCreate, CreateArgs(root, "f"));
  ASSERT_EQ(created.status, nfs3::NFS3_OK);
  const std::string fh = NewHandle(created);
  ASSERT_FALSE(fh.empty());
  // SETATTR uid/gid 4242 and mode 0600 (CAP_CHOWN), then WRITE as root
  // (CAP_DAC_OVERRIDE).
  NfsReply chowned = Nfs(*c, nfs3::kSetattr,
                         Args()
                             .Opaque(fh)
                             .Bool(true)
                             .U32(0600)
                             .Bool(true)
                             .U32(4242)
                             .Bool(true)
                             .U32(4242)
                             .Bool(false)
                             .U32(0)
                             .U32(0)
                             .Bool(false)
                             .str());
  EXPECT_EQ(chowned.status, nfs3::NFS3_OK);
  WriteVerifier(*c, fh, 0, "root may", nfs3::FILE_SYNC);
  struct stat st {};
  ASSERT_EQ(stat((dir_ / "export" / "f").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 4242u);
  EXPECT_EQ(st.st_size, 8);
}

TEST_F(PrivilegeTest, TakeoverSuccessorKeepsTheSameSetAndServes) {
  ASSERT_TRUE(server_.TakeOver()) << server_.Log();
  ExpectLeastPrivilege();
}

// CAP_NET_RAW (raw TCP segments: tickle ACKs, but also spoofed packets) is
// kept by cluster heads only.
TEST(PrivilegeSetTest, NetRawOnlyForClusterHeads) {
  auto has_net_raw = [](const conf::ServerConfig& c) {
    for (const daemon::Capability& cap : daemon::NeededCapabilities(c)) {
      if (cap.number == CAP_NET_RAW) return true;
    }
    return false;
  };
  conf::ServerConfig single;
  EXPECT_FALSE(has_net_raw(single));
  conf::ServerConfig head;
  head.cluster_node_id = "head1";
  EXPECT_TRUE(has_net_raw(head));
  uint64_t kept = 0;
  for (const daemon::Capability& cap : daemon::NeededCapabilities(single)) kept |= Bit(cap.number);
  EXPECT_EQ(kept, kServing);
}

}  // namespace
}  // namespace nfs3d::e2e
