// Whether a directory is the root of a mounted file system. The exports
// option `mountpoint` serves a directory only while this holds, so an
// unmounted disk is never replaced by the empty directory beneath it.
#ifndef NFS3D_VFS_MOUNT_POINT_H_
#define NFS3D_VFS_MOUNT_POINT_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace nfs3d::vfs {

// True if `path` is a mount point ("/" always is). Errors carry an errno
// (e.g. ENOENT).
absl::StatusOr<bool> IsMountPoint(const std::string& path);

// The mount points strictly below `path` in this mount namespace (from
// /proc/self/mountinfo), shortest first, so a mount comes before the mounts
// inside it.
std::vector<std::string> MountPointsBelow(const std::string& path);

}  // namespace nfs3d::vfs

#endif  // NFS3D_VFS_MOUNT_POINT_H_
