#include "vfs/posix/thread_credentials.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <filesystem>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"

namespace nfs3d::vfs {
namespace {

uid_t CurrentFsuid() { return static_cast<uid_t>(setfsuid(static_cast<uid_t>(-1))); }
gid_t CurrentFsgid() { return static_cast<gid_t>(setfsgid(static_cast<gid_t>(-1))); }
std::vector<gid_t> ThreadGroups() {
  gid_t groups[64];
  long n = syscall(SYS_getgroups, 64, groups);
  return n < 0 ? std::vector<gid_t>{} : std::vector<gid_t>(groups, groups + n);
}

class ThreadCredentialsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root";
    char tmpl[] = "/tmp/nfs3d_cred_test.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    chmod(root_.c_str(), 0755);
  }
  void TearDown() override {
    if (!root_.empty()) std::filesystem::remove_all(root_);
  }
  std::string root_;
};

TEST_F(ThreadCredentialsTest, AppliesAndRestores) {
  {
    ScopedCredentials creds(Cred{1000, 1001, {5, 6}});
    ASSERT_TRUE(creds.status().ok()) << creds.status();
    EXPECT_EQ(CurrentFsuid(), 1000u);
    EXPECT_EQ(CurrentFsgid(), 1001u);
    EXPECT_EQ(ThreadGroups(), (std::vector<gid_t>{5, 6}));
  }
  EXPECT_EQ(CurrentFsuid(), 0u);
  EXPECT_EQ(CurrentFsgid(), 0u);
  EXPECT_TRUE(ThreadGroups().empty());
}

TEST_F(ThreadCredentialsTest, OtherThreadsAreUnaffected) {
  absl::Notification applied, checked;
  std::thread worker([&] {
    ScopedCredentials creds(Cred{1000, 1000, {7}});
    applied.Notify();
    checked.WaitForNotification();
  });
  applied.WaitForNotification();
  EXPECT_EQ(CurrentFsuid(), 0u);
  EXPECT_TRUE(ThreadGroups().empty());
  checked.Notify();
  worker.join();
}

TEST_F(ThreadCredentialsTest, KernelChecksPermissionsWithFsuid) {
  std::string secret = root_ + "/secret";
  int fd = open(secret.c_str(), O_CREAT | O_WRONLY, 0600);
  ASSERT_GE(fd, 0);
  close(fd);
  chmod(secret.c_str(), 0600);
  {
    ScopedCredentials creds(Cred{1000, 1000, {}});
    errno = 0;
    EXPECT_LT(open(secret.c_str(), O_RDONLY), 0);
    EXPECT_EQ(errno, EACCES);
  }
  fd = open(secret.c_str(), O_RDONLY);
  EXPECT_GE(fd, 0);
  close(fd);
  // Group access through the supplementary list.
  ASSERT_EQ(chown(secret.c_str(), 0, 4242), 0);
  ASSERT_EQ(chmod(secret.c_str(), 0640), 0);
  {
    ScopedCredentials creds(Cred{1000, 1000, {4242}});
    fd = open(secret.c_str(), O_RDONLY);
    EXPECT_GE(fd, 0);
    if (fd >= 0) close(fd);
  }
}

// Clients' modes are kept exactly in the scope, in its thread only: the
// process's other threads keep their umask meanwhile.
TEST(ScopedExactModesTest, UmaskIsZeroInTheScopeOfItsThreadOnly) {
  char dir[] = "/tmp/exact_modes_test.XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string sub = std::string(dir) + "/d";
  const mode_t saved = umask(022);
  mode_t made = 0;
  absl::Notification in_scope, checked;
  std::thread worker([&] {
    ScopedExactModes modes;
    mkdir(sub.c_str(), 0777);
    struct stat st;
    if (stat(sub.c_str(), &st) == 0) made = st.st_mode & 07777;
    in_scope.Notify();
    checked.WaitForNotification();
  });
  in_scope.WaitForNotification();
  const mode_t here = umask(022);
  checked.Notify();
  worker.join();
  umask(saved);
  EXPECT_EQ(made, 0777u);
  EXPECT_EQ(here, 022u);
  rmdir(sub.c_str());
  rmdir(dir);
}

}  // namespace
}  // namespace nfs3d::vfs
