#include "vfs/cephfs/object_cache_settings.h"

#include <gtest/gtest.h>

namespace nfs3d::vfs {
namespace {

using Settings = std::vector<std::pair<std::string, std::string>>;

TEST(ObjectCacheSettingsTest, HalfDirtyWithLibcephfsWriteBackTarget) {
  const Settings expected = {{"client_oc_size", "67108864"},
                             {"client_oc_max_dirty", "33554432"},
                             {"client_oc_target_dirty", "8388608"}};
  EXPECT_EQ(ObjectCacheSettings(64 << 20), expected);
}

TEST(ObjectCacheSettingsTest, SmallCacheKeepsTargetBelowDirtyBound) {
  const Settings expected = {{"client_oc_size", "8388608"},
                             {"client_oc_max_dirty", "4194304"},
                             {"client_oc_target_dirty", "2097152"}};
  EXPECT_EQ(ObjectCacheSettings(8 << 20), expected);
}

TEST(ObjectCacheSettingsTest, ZeroLeavesCephSettings) {
  EXPECT_TRUE(ObjectCacheSettings(0).empty());
}

}  // namespace
}  // namespace nfs3d::vfs
