// The backend-independent permission contract (tests/support/
// permission_contract.h) on the POSIX backend: a sub-directory export of the
// file system /tmp lives on, as users export it.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>

#include "gtest/gtest.h"

#include "tests/support/permission_contract.h"
#include "tests/support/temp_dir.h"
#include "vfs/posix/posix_backend.h"

namespace nfs3d::vfs {
namespace {

constexpr uint32_t kExport = 1;

class PosixPermissionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root (runs calls as other users)";
    ASSERT_FALSE(tmp_.path().empty());
    chmod(tmp_.path().c_str(), 0755);
    const std::string export_path = tmp_.path() + "/export";
    ASSERT_EQ(mkdir(export_path.c_str(), 0777), 0);
    ASSERT_EQ(chmod(export_path.c_str(), 0777), 0);
    auto backend = PosixBackend::Create(PosixBackendOptions{tmp_.path() + "/state"});
    ASSERT_TRUE(backend.ok()) << backend.status();
    backend_ = std::move(*backend);
    ASSERT_TRUE(backend_->AddExport(kExport, export_path).ok());
    auto root = backend_->RootHandle(kExport);
    ASSERT_TRUE(root.ok()) << root.status();
    scratch_ = *root;
  }

  test_support::TempDir tmp_{"nfs3d_permission_test"};
  std::unique_ptr<PosixBackend> backend_;
  FileHandle scratch_;
};

TEST_F(PosixPermissionTest, ModeBitsMatrix) {
  test_support::CheckModeBitsMatrix(*backend_, scratch_);
}

TEST_F(PosixPermissionTest, AclMatrix) { test_support::CheckAclMatrix(*backend_, scratch_); }

TEST_F(PosixPermissionTest, SetgidInheritance) {
  test_support::CheckSetgidInheritance(*backend_, scratch_);
}

TEST_F(PosixPermissionTest, WriteClearsSetuid) {
  test_support::CheckWriteClearsSetuid(*backend_, scratch_);
}

TEST_F(PosixPermissionTest, ChownToOwnGroups) {
  test_support::CheckChownToOwnGroups(*backend_, scratch_);
}

TEST_F(PosixPermissionTest, CreateOfExistingFile) {
  test_support::CheckCreateOfExistingFile(*backend_, scratch_);
}

TEST_F(PosixPermissionTest, RenameMovesDirectoryLinks) {
  test_support::CheckRenameMovesDirectoryLinks(*backend_, scratch_);
}

}  // namespace
}  // namespace nfs3d::vfs
