// [nfsd] manage_gids: the per-uid group cache (TTL, bound, reload) and what
// Authorize makes of an AUTH_SYS credential with it on and off.
#include "nfsd/managed_gids.h"

#include <map>
#include <vector>

#include "gtest/gtest.h"

namespace nfs3d::nfsd {
namespace {

class ManagedGidsTest : public ::testing::Test {
 protected:
  ManagedGids gids_{[this](uint32_t uid) -> std::optional<std::vector<uint32_t>> {
                      ++lookups_[uid];
                      if (uid == 404) return std::nullopt;
                      return std::vector<uint32_t>{uid, uid + 1, uid + 2};
                    },
                    [this] { return now_; }};
  std::map<uint32_t, int> lookups_;
  absl::Time now_ = absl::FromUnixSeconds(1000000);
};

TEST_F(ManagedGidsTest, CachesForTheTtl) {
  gids_.Configure({.enabled = true, .ttl = absl::Seconds(60), .max_entries = 10});
  EXPECT_TRUE(gids_.enabled());
  EXPECT_EQ(*gids_.GroupsOf(7), (std::vector<uint32_t>{7, 8, 9}));
  now_ += absl::Seconds(59);
  EXPECT_EQ(*gids_.GroupsOf(7), (std::vector<uint32_t>{7, 8, 9}));
  EXPECT_EQ(lookups_[7], 1);
  now_ += absl::Seconds(2);
  gids_.GroupsOf(7);
  EXPECT_EQ(lookups_[7], 2);
}

TEST_F(ManagedGidsTest, UnknownUidHasNoGroups) {
  gids_.Configure({.enabled = true});
  EXPECT_TRUE(gids_.GroupsOf(404)->empty());
  EXPECT_TRUE(gids_.GroupsOf(404)->empty());
  EXPECT_EQ(lookups_[404], 1);  // the miss is cached too
}

TEST_F(ManagedGidsTest, StaysWithinItsBound) {
  gids_.Configure({.enabled = true, .ttl = absl::Seconds(60), .max_entries = 100});
  for (uint32_t uid = 0; uid < 1000; ++uid) {
    gids_.GroupsOf(uid);
    ASSERT_LE(gids_.cached(), 100u);
  }
  gids_.Configure({.enabled = true, .max_entries = 0});
  gids_.GroupsOf(1);
  EXPECT_EQ(gids_.cached(), 0u);
}

TEST_F(ManagedGidsTest, ConfigureForgetsEverything) {
  gids_.Configure({.enabled = true});
  gids_.GroupsOf(7);
  EXPECT_EQ(gids_.cached(), 1u);
  gids_.Configure({.enabled = true});  // SIGHUP
  EXPECT_EQ(gids_.cached(), 0u);
  gids_.GroupsOf(7);
  EXPECT_EQ(lookups_[7], 2);
  gids_.Configure({.enabled = false});
  EXPECT_FALSE(gids_.enabled());
}

}  // namespace
}  // namespace nfs3d::nfsd
