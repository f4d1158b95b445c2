#include "common/fd_channel.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace nfs3d {
namespace {

std::pair<FdChannel, FdChannel> Pair() {
  int sv[2];
  EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  return {FdChannel(OwnedFd(sv[0])), FdChannel(OwnedFd(sv[1]))};
}

TEST(FdChannelTest, FramesCarryPayloadAndDescriptors) {
  auto [a, b] = Pair();
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  OwnedFd read_end(pipe_fds[0]), write_end(pipe_fds[1]);
  const std::string big(300000, 'x');  // more than one socket buffer's worth
  std::thread sender([&a = a, &big, fd = write_end.get()] {
    ASSERT_TRUE(a.Send("first", {fd}).ok());
    ASSERT_TRUE(a.Send(big).ok());
    ASSERT_TRUE(a.Send("").ok());
  });
  absl::StatusOr<FdFrame> first = b.Receive(1 << 20);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->payload, "first");
  ASSERT_EQ(first->fds.size(), 1u);
  // The received descriptor is the same pipe.
  ASSERT_EQ(write(first->fds[0].get(), "!", 1), 1);
  char c = 0;
  ASSERT_EQ(read(read_end.get(), &c, 1), 1);
  EXPECT_EQ(c, '!');
  absl::StatusOr<FdFrame> second = b.Receive(1 << 20);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->payload, big);
  EXPECT_TRUE(second->fds.empty());
  absl::StatusOr<FdFrame> empty = b.Receive(1 << 20);
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->payload.empty());
  sender.join();
}

TEST(FdChannelTest, OversizedFrameAndClosedPeerAreErrors) {
  auto [a, b] = Pair();
  ASSERT_TRUE(a.Send(std::string(100, 'y')).ok());
  EXPECT_FALSE(b.Receive(99).ok());
  auto [c, d] = Pair();
  { FdChannel gone = std::move(c); }
  EXPECT_FALSE(d.Receive(100).ok());
}

// The socket file is 0600 from bind on, whatever the umask (here none).
TEST(FdChannelTest, ListenerIsNeverLooserThanOwnerOnly) {
  char dir[] = "/tmp/fd_channel_test.XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string path = std::string(dir) + "/s.sock";
  const mode_t saved = umask(0);
  absl::StatusOr<OwnedFd> listener = ListenUnixStream(path);
  umask(saved);
  ASSERT_TRUE(listener.ok()) << listener.status();
  struct stat st;
  ASSERT_EQ(lstat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  unlink(path.c_str());
  rmdir(dir);
}

}  // namespace
}  // namespace nfs3d
