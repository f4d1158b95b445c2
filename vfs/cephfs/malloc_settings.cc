#include "vfs/cephfs/malloc_settings.h"

#include <malloc.h>

#include <cstdlib>
#include <cstring>
#include <mutex>

#include "common/log.h"

namespace nfs3d::vfs {
namespace {

// Above the largest write nfs3d takes (wsize is at most 1 MiB) with room.
constexpr int kMmapThreshold = 8 << 20;
// Free memory at the top of an arena is returned to the kernel only past
// this; what stays is bounded by the peak of writes in flight.
constexpr int kTrimThreshold = 256 << 20;

}  // namespace

void KeepWriteBuffersInMallocArenas() {
  static std::once_flag once;
  std::call_once(once, [] {
    const char* tunables = std::getenv("GLIBC_TUNABLES");
    if (tunables != nullptr && std::strstr(tunables, "glibc.malloc.") != nullptr) {
      NFS3D_LOG_INFO("cephfs: keeping the malloc tunables of GLIBC_TUNABLES");
      return;
    }
    // Setting either also turns off glibc's own adjustment of both.
    if (mallopt(M_MMAP_THRESHOLD, kMmapThreshold) != 1 ||
        mallopt(M_TRIM_THRESHOLD, kTrimThreshold) != 1) {
      NFS3D_LOG_WARNING("cephfs: could not set malloc's mmap and trim thresholds");
    }
  });
}

}  // namespace nfs3d::vfs
