#include "nlm/status_store.h"

#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "gtest/gtest.h"

#include "tests/support/temp_dir.h"

namespace nfs3d::nlm {
namespace {

class StatusStoreTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_FALSE(dir_.empty()); }
  test_support::TempDir tmp_{"nsm_store_test"};
  const std::string dir_ = tmp_.path();
};

TEST_F(StatusStoreTest, StateIsOddAndGrowsWithEveryOpen) {
  int32_t previous = 0;
  for (int i = 0; i < 3; ++i) {
    absl::StatusOr<std::unique_ptr<StatusStore>> s = StatusStore::Open(dir_);
    ASSERT_TRUE(s.ok()) << s.status();
    EXPECT_EQ((*s)->state() % 2, 1);
    EXPECT_GT((*s)->state(), previous);
    previous = (*s)->state();
  }
  EXPECT_EQ(previous, 5);
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/nsm/state.tmp"));
}

TEST_F(StatusStoreTest, EvenStateOnDiskBecomesTheNextOdd) {
  std::filesystem::create_directories(dir_ + "/nsm");
  std::ofstream(dir_ + "/nsm/state") << "10\n";
  absl::StatusOr<std::unique_ptr<StatusStore>> s = StatusStore::Open(dir_);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ((*s)->state(), 11);
}

TEST_F(StatusStoreTest, CorruptStateIsAnError) {
  std::filesystem::create_directories(dir_ + "/nsm");
  std::ofstream(dir_ + "/nsm/state") << "garbage";
  EXPECT_FALSE(StatusStore::Open(dir_).ok());
}

TEST_F(StatusStoreTest, HostsPersistUntilRemoved) {
  {
    auto s = StatusStore::Open(dir_);
    ASSERT_TRUE(s.ok());
    ASSERT_TRUE((*s)->AddHost({"client/with/slashes", "10.1.1.1", "10.1.1.254"}).ok());
    ASSERT_TRUE((*s)->AddHost({"other", "fd00::2", "fd00::1"}).ok());
    ASSERT_TRUE((*s)->AddHost({"other", "fd00::3", "fd00::1"}).ok());  // updated
    EXPECT_FALSE((*s)->AddHost({"bad\nname", "", ""}).ok());
  }
  {
    auto s = StatusStore::Open(dir_);
    ASSERT_TRUE(s.ok());
    std::vector<MonitoredHost> hosts = (*s)->previous_hosts();
    std::sort(hosts.begin(), hosts.end(),
              [](const MonitoredHost& a, const MonitoredHost& b) { return a.name < b.name; });
    ASSERT_EQ(hosts.size(), 2u);
    EXPECT_EQ(hosts[0], (MonitoredHost{"client/with/slashes", "10.1.1.1", "10.1.1.254"}));
    EXPECT_EQ(hosts[1], (MonitoredHost{"other", "fd00::3", "fd00::1"}));
    ASSERT_TRUE((*s)->RemoveHost("other").ok());
    ASSERT_TRUE((*s)->RemoveHost("never-there").ok());
  }
  auto s = StatusStore::Open(dir_);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ((*s)->previous_hosts().size(), 1u);
}

// The client's NSM state is a fourth line; a record an older nfs3d wrote
// (three lines) reads as "not known".
TEST_F(StatusStoreTest, HostRecordsKeepTheClientsNsmState) {
  {
    auto s = StatusStore::Open(dir_);
    ASSERT_TRUE(s.ok());
    ASSERT_TRUE((*s)->AddHost({"client", "10.0.0.2", "10.0.0.1", 7}).ok());
  }
  std::ofstream(dir_ + "/nsm/hosts/0000000000000001") << "old\n10.0.0.3\n10.0.0.1\n";
  auto s = StatusStore::Open(dir_);
  ASSERT_TRUE(s.ok());
  std::vector<MonitoredHost> hosts = (*s)->previous_hosts();
  std::sort(hosts.begin(), hosts.end(),
            [](const MonitoredHost& a, const MonitoredHost& b) { return a.name < b.name; });
  ASSERT_EQ(hosts.size(), 2u);
  EXPECT_EQ(hosts[0], (MonitoredHost{"client", "10.0.0.2", "10.0.0.1", 7}));
  EXPECT_EQ(hosts[1], (MonitoredHost{"old", "10.0.0.3", "10.0.0.1", 0}));
}

// A successor taking over from a running nfs3d is the same NSM instance:
// Open without bump keeps the state; Bump gives the next one when the
// takeover lost the lock state after all.
TEST_F(StatusStoreTest, TakeoverKeepsTheStateUntilBumped) {
  absl::StatusOr<std::unique_ptr<StatusStore>> first = StatusStore::Open(dir_);
  ASSERT_TRUE(first.ok());
  const int32_t state = (*first)->state();
  ASSERT_TRUE((*first)->AddHost({"client", "10.0.0.2", "10.0.0.1"}).ok());
  absl::StatusOr<std::unique_ptr<StatusStore>> successor = StatusStore::Open(dir_, false);
  ASSERT_TRUE(successor.ok());
  EXPECT_EQ((*successor)->state(), state);
  EXPECT_EQ((*successor)->previous_hosts().size(), 1u);
  ASSERT_TRUE((*successor)->Bump().ok());
  EXPECT_EQ((*successor)->state(), state + 2);
  absl::StatusOr<std::unique_ptr<StatusStore>> next = StatusStore::Open(dir_);
  ASSERT_TRUE(next.ok());
  EXPECT_EQ((*next)->state(), state + 4);
}

}  // namespace
}  // namespace nfs3d::nlm
