#include "common/durable_files.h"

#include <fstream>

#include "gtest/gtest.h"

#include "tests/support/durable_files_contract.h"
#include "tests/support/temp_dir.h"

namespace nfs3d {
namespace {

TEST(LocalFilesTest, KeepsTheContract) {
  test_support::TempDir dir("nfs3d-durable");
  absl::StatusOr<std::unique_ptr<DurableFiles>> files = OpenLocalFiles(dir.path() + "/new");
  ASSERT_TRUE(files.ok()) << files.status();  // the directory is made
  EXPECT_EQ((*files)->where(), dir.path() + "/new");
  test_support::CheckDurableFilesContract(**files);
}

TEST(LocalFilesTest, TempFileLeftByACrashIsNotListed) {
  test_support::TempDir dir("nfs3d-durable");
  std::ofstream(dir.path() + "/state.tmp") << "half";
  auto files = OpenLocalFiles(dir.path());
  ASSERT_TRUE(files.ok());
  EXPECT_TRUE((*files)->List().value().empty());
}

TEST(LocalFilesTest, UnusableDirectoryIsAnError) {
  EXPECT_FALSE(OpenLocalFiles("/proc/no/such/dir").ok());
}

}  // namespace
}  // namespace nfs3d
