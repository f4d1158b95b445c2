#include "vfs/posix/fd_chmod.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "gtest/gtest.h"

#include "tests/support/temp_dir.h"

namespace nfs3d::vfs {
namespace {

TEST(ChmodFdTest, ChangesTheModeThroughAnOPathDescriptor) {
  test_support::TempDir dir("fd_chmod_test");
  ASSERT_FALSE(dir.path().empty());
  const std::string file = dir.path() + "/f";
  int created = open(file.c_str(), O_CREAT | O_WRONLY, 0600);
  ASSERT_GE(created, 0);
  close(created);
  int fd = open(file.c_str(), O_PATH | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  for (mode_t mode : {0640, 04755, 0}) {
    ASSERT_EQ(ChmodFd(fd, mode), 0) << errno;
    struct stat st;
    ASSERT_EQ(stat(file.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, mode);
  }
  close(fd);
}

TEST(ChmodFdTest, ABadDescriptorIsAnError) {
  errno = 0;
  EXPECT_EQ(ChmodFd(-1, 0600), -1);
  EXPECT_EQ(errno, EBADF);
}

}  // namespace
}  // namespace nfs3d::vfs
