#include "vfs/mount_point.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>

#include "vfs/vfs_error.h"

namespace nfs3d::vfs {

absl::StatusOr<bool> IsMountPoint(const std::string& path) {
  struct statx stx {};
  if (statx(AT_FDCWD, path.c_str(), 0, STATX_BASIC_STATS, &stx) != 0) {
    return ErrnoError(errno, path);
  }
  if (stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) {
    return (stx.stx_attributes & STATX_ATTR_MOUNT_ROOT) != 0;
  }
  // Older kernels: a mount root sits on another device than its parent (a
  // bind mount of a directory of the same file system is not seen).
  struct statx parent {};
  if (statx(AT_FDCWD, (path + "/..").c_str(), 0, STATX_BASIC_STATS, &parent) != 0) {
    return ErrnoError(errno, path + "/..");
  }
  return stx.stx_dev_major != parent.stx_dev_major || stx.stx_dev_minor != parent.stx_dev_minor ||
         stx.stx_ino == parent.stx_ino;
}

}  // namespace nfs3d::vfs
