#include "vfs/cephfs/object_cache_settings.h"

#include <algorithm>

namespace nfs3d::vfs {

std::vector<std::pair<std::string, std::string>> ObjectCacheSettings(uint64_t cache_bytes) {
  if (cache_bytes == 0) return {};
  // libcephfs's own ratio (100 of 200 MiB dirty); its 8 MiB target for
  // starting write-back, unless that would not fit below the dirty bound.
  const uint64_t max_dirty = cache_bytes / 2;
  const uint64_t target_dirty = std::min<uint64_t>(8 << 20, max_dirty / 2);
  return {
      {"client_oc_size", std::to_string(cache_bytes)},
      {"client_oc_max_dirty", std::to_string(max_dirty)},
      {"client_oc_target_dirty", std::to_string(target_dirty)},
  };
}

}  // namespace nfs3d::vfs
