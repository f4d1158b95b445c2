#include "vfs/posix/directory_move_watch.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "gtest/gtest.h"

#include "tests/support/temp_dir.h"

namespace nfs3d::vfs {
namespace {

// The watch covers a whole file system, so directories that other tests
// (run in parallel) move under /tmp would move the generation too. Each test
// gets a tmpfs of its own, mounted in a mount namespace of its own.
class DirectoryMoveWatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.path().empty());
    if (unshare(CLONE_NEWNS) != 0 ||
        mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
        mount("tmpfs", dir_.path().c_str(), "tmpfs", 0, "size=1m") != 0) {
      GTEST_SKIP() << "a private tmpfs needs CAP_SYS_ADMIN (as fanotify does): " << strerror(errno);
    }
    mounted_ = true;
    absl::Status watched = watch_.Watch(dir_.path());
    if (!watched.ok()) GTEST_SKIP() << "fanotify unavailable here: " << watched;
  }
  void TearDown() override {
    if (mounted_) umount2(dir_.path().c_str(), MNT_DETACH);  // so TempDir can remove it
  }
  std::string Path(const std::string& name) const { return dir_.path() + "/" + name; }

  test_support::TempDir dir_{"directory_move_watch_test"};
  bool mounted_ = false;
  DirectoryMoveWatch watch_;
};

TEST_F(DirectoryMoveWatchTest, ADirectoryMovedByAnyProcessMovesTheGeneration) {
  ASSERT_EQ(mkdir(Path("a").c_str(), 0755), 0);
  ASSERT_EQ(mkdir(Path("b").c_str(), 0755), 0);
  std::optional<uint64_t> before = watch_.Generation();
  ASSERT_TRUE(before.has_value());
  EXPECT_NE(*before, 0u);
  ASSERT_EQ(rename(Path("a").c_str(), Path("b/a").c_str()), 0);
  // Queued before rename(2) returned: seen by the very next call.
  std::optional<uint64_t> after = watch_.Generation();
  ASSERT_TRUE(after.has_value());
  EXPECT_NE(*after, *before);
  EXPECT_EQ(watch_.Generation(), after);  // nothing new
}

// Names of every length modulo 8: the events carry them, so in the buffer
// most events start off 8-byte alignment (UBSan caught a read that assumed it).
TEST_F(DirectoryMoveWatchTest, FileRenamesLeaveTheGenerationAlone) {
  int fd = open(Path("f").c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0);
  close(fd);
  std::optional<uint64_t> before = watch_.Generation();
  std::string name = "f";
  for (int i = 0; i < 100; ++i) {
    std::string next(1 + (i + 1) % 9, static_cast<char>('f' + (i + 1) % 2));
    ASSERT_EQ(rename(Path(name).c_str(), Path(next).c_str()), 0);
    name = next;
  }
  EXPECT_EQ(watch_.Generation(), before);
}

TEST_F(DirectoryMoveWatchTest, ADirectoryMovedAmongFileRenamesIsSeen) {
  ASSERT_EQ(mkdir(Path("d").c_str(), 0755), 0);
  int fd = open(Path("f").c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0);
  close(fd);
  std::optional<uint64_t> before = watch_.Generation();
  ASSERT_EQ(rename(Path("f").c_str(), Path("fff").c_str()), 0);
  ASSERT_EQ(rename(Path("d").c_str(), Path("ddddd").c_str()), 0);
  ASSERT_EQ(rename(Path("fff").c_str(), Path("f").c_str()), 0);
  EXPECT_NE(watch_.Generation(), before);
}

TEST_F(DirectoryMoveWatchTest, NoteMoveMovesTheGeneration) {
  std::optional<uint64_t> before = watch_.Generation();
  watch_.NoteMove();
  EXPECT_NE(watch_.Generation(), before);
}

TEST(DirectoryMoveWatchUnwatchedTest, WithoutAWatchTheCallerMustCheck) {
  DirectoryMoveWatch watch;
  EXPECT_FALSE(watch.Generation().has_value());
}

// With a receive counter the queue is looked at once per read from a client
// socket: a move is seen by the first call read after it, and calls of a
// read made before the move keep the generation they had.
TEST(DirectoryMoveWatchReceiveCountTest, LooksOncePerRead) {
  test_support::TempDir dir("directory_move_watch_test");
  ASSERT_FALSE(dir.path().empty());
  std::atomic<uint64_t> reads{0};
  DirectoryMoveWatch watch(&reads);
  absl::Status watched = watch.Watch(dir.path());
  if (!watched.ok()) GTEST_SKIP() << "fanotify unavailable here: " << watched;
  const std::string a = dir.path() + "/a", b = dir.path() + "/b";
  ASSERT_EQ(mkdir(a.c_str(), 0755), 0);
  ASSERT_EQ(mkdir(b.c_str(), 0755), 0);
  reads.fetch_add(1);
  std::optional<uint64_t> before = watch.Generation();
  ASSERT_TRUE(before.has_value());
  ASSERT_EQ(rename(a.c_str(), (b + "/a").c_str()), 0);
  EXPECT_EQ(watch.Generation(), before);  // same read: not looked at again
  reads.fetch_add(1);                     // a call sent after the move arrives
  std::optional<uint64_t> after = watch.Generation();
  ASSERT_TRUE(after.has_value());
  EXPECT_NE(*after, *before);
  // A move by this server counts at once, read or not.
  watch.NoteMove();
  EXPECT_NE(watch.Generation(), after);
}

}  // namespace
}  // namespace nfs3d::vfs
