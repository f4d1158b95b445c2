// The lock grace period of heads that serve one CephFS file system together
// ([cluster]): while any head's clients may still reclaim locks, no head
// grants a new one. Each head that enters a grace period (a restart, whose
// CephFS session reset released the locks its previous instance held)
// records its end in its own file, shared_dir/grace.<node_id>, replaced
// atomically (rename); a head checking before a new lock reads them all and
// takes the latest end. One file per head: heads never write the same file.
#ifndef NFS3D_VFS_CEPHFS_SHARED_GRACE_H_
#define NFS3D_VFS_CEPHFS_SHARED_GRACE_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

struct ceph_mount_info;

namespace nfs3d::vfs {

// Records that node_id's grace period ends at `until`.
absl::Status RecordGraceEnd(ceph_mount_info* cm, const std::string& dir,
                            const std::string& node_id, absl::Time until);

// The latest grace end any head recorded in dir (InfinitePast: none).
absl::StatusOr<absl::Time> LatestGraceEnd(ceph_mount_info* cm, const std::string& dir);

}  // namespace nfs3d::vfs

#endif  // NFS3D_VFS_CEPHFS_SHARED_GRACE_H_
