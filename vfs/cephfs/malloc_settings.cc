#include "vfs/cephfs/malloc_settings.h"

#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "common/log.h"

namespace nfs3d::vfs {
namespace {

// wsize and rsize are at most 1 MiB.
constexpr size_t kMaxTransfer = 1 << 20;

}  // namespace

MallocLimits MallocLimitsFor(size_t max_transfer, int cores) {
  MallocLimits limits;
  // libcephfs's copy of a write, its read buffers and its cache's merged
  // extents: a transfer plus headers, up to a few of them. 8 MiB for 1 MiB
  // transfers, at least glibc's own 128 KiB floor and at most its 32 MiB cap.
  limits.mmap_threshold = std::clamp<size_t>(max_transfer * 8, 128 << 10, 32 << 20);
  // Room for one burst of 16 transfers each way in flight, free at the top
  // of an arena, without a trim and a fresh round of page faults after it.
  limits.trim_threshold = std::max<size_t>(max_transfer * 32, 1 << 20);
  // glibc makes up to 8 per core; few are enough for buffers that cycle
  // between worker threads and libcephfs's own.
  limits.arena_max = std::clamp(cores, 2, 8);
  return limits;
}

bool TunablesSetMalloc(const char* glibc_tunables) {
  return glibc_tunables != nullptr && std::strstr(glibc_tunables, "glibc.malloc.") != nullptr;
}

void KeepWriteBuffersInMallocArenas() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (TunablesSetMalloc(std::getenv("GLIBC_TUNABLES"))) {
      NFS3D_LOG_INFO("cephfs: keeping the malloc tunables of GLIBC_TUNABLES");
      return;
    }
    const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    const MallocLimits limits =
        MallocLimitsFor(kMaxTransfer, cpus > 0 ? static_cast<int>(cpus) : 1);
    // Setting either threshold also turns off glibc's own adjustment of both.
    if (mallopt(M_MMAP_THRESHOLD, static_cast<int>(limits.mmap_threshold)) != 1 ||
        mallopt(M_TRIM_THRESHOLD, static_cast<int>(limits.trim_threshold)) != 1 ||
        mallopt(M_ARENA_MAX, limits.arena_max) != 1) {
      NFS3D_LOG_WARNING("cephfs: could not set malloc's thresholds and arena count");
    }
  });
}

}  // namespace nfs3d::vfs
