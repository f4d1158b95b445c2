// glibc malloc settings for a process that writes through libcephfs.
//
// libcephfs copies every write into a buffer it allocates for that write
// and frees once the OSD has it: a 1 MiB NFS WRITE is a 1 MiB malloc inside
// libcephfs, which nfs3d cannot hand a buffer of its own (its READ blocks
// and TCP records are pooled already, xdr/buffer_pool.h). With glibc's
// defaults such a block is mmap'ed and unmapped each time, or trimmed back
// to the kernel soon after, so the copy into it page-faults on every 4 KiB.
// Keeping blocks up to a few MiB in malloc's arenas makes them reusable;
// bounding what each arena keeps free and how many arenas there are keeps
// peak memory near what is in use. Unbounded (a 256 MiB trim threshold and
// glibc's 8 arenas per core) each worker thread's arena kept its own peak,
// and the peak RSS of a CephFS export reached 1.3-1.7x nfs-ganesha's.
#ifndef NFS3D_VFS_CEPHFS_MALLOC_SETTINGS_H_
#define NFS3D_VFS_CEPHFS_MALLOC_SETTINGS_H_

#include <cstddef>

namespace nfs3d::vfs {

struct MallocLimits {
  // Blocks at least this big are mmap'ed (M_MMAP_THRESHOLD).
  size_t mmap_threshold = 0;
  // Free memory at the top of an arena beyond this goes back to the kernel
  // (M_TRIM_THRESHOLD).
  size_t trim_threshold = 0;
  // Arenas malloc may make (M_ARENA_MAX): a buffer freed by a libcephfs
  // thread is reused by any worker, not kept in the arena of the one that
  // made it.
  int arena_max = 0;
};

// The limits for transfers of up to max_transfer bytes on `cores` CPUs.
MallocLimits MallocLimitsFor(size_t max_transfer, int cores);

// Whether a GLIBC_TUNABLES value sets any malloc tunable (the administrator's
// choice, which nfs3d then keeps). Null: not set.
bool TunablesSetMalloc(const char* glibc_tunables);

// Applies MallocLimitsFor(1 MiB, online CPUs) process-wide, once, unless
// GLIBC_TUNABLES sets malloc tunables. Call before any thread starts:
// arenas made before stay, and glibc stops reading the cap once it has
// settled its arena limit.
void KeepWriteBuffersInMallocArenas();

}  // namespace nfs3d::vfs

#endif  // NFS3D_VFS_CEPHFS_MALLOC_SETTINGS_H_
