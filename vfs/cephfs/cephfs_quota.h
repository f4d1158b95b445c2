// CephFS directory quotas as FSSTAT figures. An administrator limits a
// directory tree with the ceph.quota.max_bytes / max_files attributes; a
// client of the export should see the limit and the tree's usage in df,
// not the whole cluster (the kernel client and ganesha do the same). Each
// limit comes from the nearest directory that sets it, from the object's
// directory up to the export's root.
#ifndef NFS3D_VFS_CEPHFS_CEPHFS_QUOTA_H_
#define NFS3D_VFS_CEPHFS_CEPHFS_QUOTA_H_

#include <cstdint>

#include "absl/status/statusor.h"

#include "vfs/backend.h"

struct ceph_mount_info;
struct Inode;

namespace nfs3d::vfs {

struct CephQuota {
  uint64_t max_bytes = 0;   // 0: no limit found
  uint64_t used_bytes = 0;  // ceph.dir.rbytes of the directory with the limit
  uint64_t max_files = 0;
  uint64_t used_files = 0;  // ceph.dir.rentries (files and directories)
};

// The limits on directory `dir` and its ancestors up to the directory
// whose inode number is stop_ino (the export's root) or the file system's
// root. Reads go to the MDS (recursive statistics are not cached).
absl::StatusOr<CephQuota> FindCephQuota(ceph_mount_info* cm, Inode* dir, uint64_t stop_ino);

// The limits directory `dir` sets itself (0: none) and its recursive usage
// (ceph.dir.rbytes, ceph.dir.rentries), with or without limits: RQUOTA's
// figures for an export's root.
absl::StatusOr<CephQuota> DirectoryCephQuota(ceph_mount_info* cm, Inode* dir);

// The cluster's figures with the quota's limits in their place; free space
// never exceeds what the cluster has, when it reports any.
FsStat ApplyCephQuota(const FsStat& cluster, const CephQuota& quota);

}  // namespace nfs3d::vfs

#endif  // NFS3D_VFS_CEPHFS_CEPHFS_QUOTA_H_
