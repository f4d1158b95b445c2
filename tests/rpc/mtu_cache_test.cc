// MtuCache follows MTU changes as the kernel announces them. The changes are
// made to the loopback device of a network namespace of the test's own
// (needs root, as CI has; skipped otherwise).
#include "rpc/mtu_cache.h"

#include <net/if.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <thread>

#include "gtest/gtest.h"

namespace nfs3d::rpc {
namespace {

bool SetMtu(const char* dev, int mtu) {
  int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  ifreq ifr{};
  std::snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", dev);
  ifr.ifr_mtu = mtu;
  bool ok = fd >= 0 && ioctl(fd, SIOCSIFMTU, &ifr) == 0;
  if (fd >= 0) close(fd);
  return ok;
}

// The cache answers `want` within 10 s: the announcement is queued before the
// change returns, and the listener applies it at once; the bound only keeps a
// broken listener from hanging the test.
bool Becomes(MtuCache& cache, int ifindex, uint32_t want) {
  for (int i = 0; i < 10000; ++i) {
    if (cache.Get(ifindex) == want) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return false;
}

// Runs `body` on a thread of its own inside a new network namespace, so the
// MTU changes never touch the host's devices nor the other tests' threads.
void InPrivateNetns(const std::function<void()>& body) {
  bool entered = false;
  std::thread t([&] {
    if (unshare(CLONE_NEWNET) != 0) return;
    entered = true;
    body();
  });
  t.join();
  if (!entered) GTEST_SKIP() << "unshare(CLONE_NEWNET) needs root";
}

TEST(MtuCacheTest, UnknownInterfacesHaveNoMtu) {
  MtuCache cache;
  EXPECT_EQ(cache.Get(0), 0u);
  EXPECT_EQ(cache.Get(-1), 0u);
  EXPECT_EQ(cache.Get(1 << 30), 0u);
}

TEST(MtuCacheTest, FollowsMtuChangesAtOnce) {
  InPrivateNetns([] {
    const int lo = static_cast<int>(if_nametoindex("lo"));
    ASSERT_GT(lo, 0);
    ASSERT_TRUE(SetMtu("lo", 1500));
    MtuCache cache;
    ASSERT_TRUE(cache.follows_link_changes());
    EXPECT_EQ(cache.Get(lo), 1500u);  // looked up, then kept
    ASSERT_TRUE(SetMtu("lo", 9000));
    EXPECT_TRUE(Becomes(cache, lo, 9000));
    ASSERT_TRUE(SetMtu("lo", 1500));
    EXPECT_TRUE(Becomes(cache, lo, 1500));
    EXPECT_TRUE(cache.follows_link_changes());
  });
}

TEST(MtuCacheTest, LearnsInterfacesCreatedLater) {
  InPrivateNetns([] {
    MtuCache cache;
    const int lo = static_cast<int>(if_nametoindex("lo"));
    ASSERT_TRUE(SetMtu("lo", 4000));  // announced before it was ever asked for
    EXPECT_TRUE(Becomes(cache, lo, 4000));
  });
}

}  // namespace
}  // namespace nfs3d::rpc
