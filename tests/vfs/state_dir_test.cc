#include "vfs/state_dir.h"

#include <dirent.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <string>

#include "gtest/gtest.h"

#include "tests/support/temp_dir.h"

namespace nfs3d::vfs {
namespace {

class StateDirTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_FALSE(root_.empty()); }

  // Names in the state dir (to check no temp files are left behind).
  std::vector<std::string> Entries() {
    std::vector<std::string> out;
    for (const auto& e : std::filesystem::directory_iterator(path_)) {
      out.push_back(e.path().filename().string());
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  test_support::TempDir tmp_{"nfs3d_state_test"};
  const std::string root_ = tmp_.path();
  const std::string path_ = root_ + "/state";
};

TEST_F(StateDirTest, RefusesADirectoryOthersMayWrite) {
  ASSERT_EQ(mkdir(path_.c_str(), 0700), 0);
  ASSERT_EQ(chmod(path_.c_str(), 01777), 0);
  auto dir = StateDir::Open(path_);
  ASSERT_FALSE(dir.ok());
  EXPECT_EQ(dir.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_NE(dir.status().message().find(path_), std::string::npos) << dir.status();
  EXPECT_NE(dir.status().message().find("mode 1777"), std::string::npos) << dir.status();
  ASSERT_EQ(chmod(path_.c_str(), 0755), 0);  // others may read: allowed
  EXPECT_TRUE(StateDir::Open(path_).ok());
}

TEST_F(StateDirTest, SecretIsCreatedOnceWithMode0600) {
  auto dir = StateDir::Open(path_);
  ASSERT_TRUE(dir.ok()) << dir.status();
  struct stat st;
  ASSERT_EQ(stat(path_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  auto secret = (*dir)->LoadOrCreateSecret();
  ASSERT_TRUE(secret.ok()) << secret.status();
  ASSERT_EQ(stat((path_ + "/handle.key").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(st.st_size, 32);
  HandleSecret zero{};
  EXPECT_NE(*secret, zero);

  auto again = StateDir::Open(path_);
  ASSERT_TRUE(again.ok());
  auto secret2 = (*again)->LoadOrCreateSecret();
  ASSERT_TRUE(secret2.ok());
  EXPECT_EQ(*secret, *secret2);
  EXPECT_EQ(Entries(), std::vector<std::string>{"handle.key"});
}

TEST_F(StateDirTest, CorruptSecretIsAnError) {
  auto dir = StateDir::Open(path_);
  ASSERT_TRUE(dir.ok());
  ASSERT_TRUE((*dir)->WriteFileAtomic("handle.key", "short").ok());
  EXPECT_FALSE((*dir)->LoadOrCreateSecret().ok());
}

TEST_F(StateDirTest, ExportIdsAreStable) {
  auto dir = StateDir::Open(path_);
  ASSERT_TRUE(dir.ok());
  EXPECT_EQ(*(*dir)->ExportId("/srv/a"), 1u);
  EXPECT_EQ(*(*dir)->ExportId("/srv/b"), 2u);
  EXPECT_EQ(*(*dir)->ExportId("/srv/a"), 1u);
  auto reopened = StateDir::Open(path_);
  ASSERT_TRUE(reopened.ok());
  EXPECT_EQ(*(*reopened)->ExportId("/srv/b"), 2u);
  EXPECT_EQ(*(*reopened)->ExportId("/srv/c d"), 3u);
  EXPECT_FALSE((*reopened)->ExportId("").ok());
  struct stat st;
  ASSERT_EQ(stat((path_ + "/exports.ids").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(Entries(), std::vector<std::string>{"exports.ids"});
}

TEST_F(StateDirTest, AtomicWriteReplacesAndReads) {
  auto dir = StateDir::Open(path_);
  ASSERT_TRUE(dir.ok());
  auto missing = (*dir)->ReadFile("x");
  ASSERT_TRUE(missing.ok());
  EXPECT_FALSE(missing->has_value());
  ASSERT_TRUE((*dir)->WriteFileAtomic("x", "one").ok());
  ASSERT_TRUE((*dir)->WriteFileAtomic("x", "two").ok());
  EXPECT_EQ(**(*dir)->ReadFile("x"), "two");
  EXPECT_EQ(Entries(), std::vector<std::string>{"x"});
}

TEST_F(StateDirTest, OpenFailsOnAFile) {
  auto dir = StateDir::Open(path_);
  ASSERT_TRUE(dir.ok());
  ASSERT_TRUE((*dir)->WriteFileAtomic("f", "").ok());
  EXPECT_FALSE(StateDir::Open(path_ + "/f").ok());
}

}  // namespace
}  // namespace nfs3d::vfs
