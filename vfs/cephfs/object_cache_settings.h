// libcephfs's object cache (ObjectCacher) settings for one CephFS mount.
//
// Each libcephfs mount caches file data up to client_oc_size, 200 MiB by
// default, and libcephfs keeps a write's copy alive while its flush is in
// flight, also after a newer write replaced it in the cache. Under 1 MiB
// NFS WRITEs of 16 clients this held ~460 MiB of write copies at nfs3d's
// peak (heaptrack, 2026-12-04), more than the whole of nfs-ganesha. A
// smaller cache bounds that and keeps readahead and write-behind.
#ifndef NFS3D_VFS_CEPHFS_OBJECT_CACHE_SETTINGS_H_
#define NFS3D_VFS_CEPHFS_OBJECT_CACHE_SETTINGS_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace nfs3d::vfs {

// The libcephfs options (name, value) that give a mount an object cache of
// cache_bytes, at most half of it dirty. 0: none (ceph.conf's or
// libcephfs's own settings stay).
std::vector<std::pair<std::string, std::string>> ObjectCacheSettings(uint64_t cache_bytes);

}  // namespace nfs3d::vfs

#endif  // NFS3D_VFS_CEPHFS_OBJECT_CACHE_SETTINGS_H_
