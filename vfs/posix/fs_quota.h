// Disk quotas of a mounted file system, read with quotactl_fd(2) (Linux
// 5.14+) on any descriptor of it, so no block device has to be found.
#ifndef NFS3D_VFS_POSIX_FS_QUOTA_H_
#define NFS3D_VFS_POSIX_FS_QUOTA_H_

#include <cstdint>
#include <optional>

#include "absl/status/statusor.h"

#include "vfs/backend.h"

namespace nfs3d::vfs {

// The quota of user or group `id` on the file system `fd` lives on; nullopt
// when that file system has no quotas of that kind turned on.
absl::StatusOr<std::optional<Quota>> FileSystemQuota(int fd, QuotaKind kind, uint32_t id);

}  // namespace nfs3d::vfs

#endif  // NFS3D_VFS_POSIX_FS_QUOTA_H_
