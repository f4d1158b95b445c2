#include "vfs/cephfs/cephfs_acl.h"

#include <cephfs/libcephfs.h>

#include <cerrno>
#include <string>

#include "vfs/vfs_error.h"

namespace nfs3d::vfs {

absl::StatusOr<Acl> ReadCephAcl(ceph_mount_info* cm, Inode* in, const char* name) {
  std::string value(4 + 32 * 8, '\0');
  for (int tries = 0;; ++tries) {
    int rc = ceph_ll_getxattr(cm, in, name, value.data(), value.size(), ceph_mount_perms(cm));
    if (rc >= 0) {
      value.resize(static_cast<size_t>(rc));
      break;
    }
    if (rc == -ENODATA || rc == -EOPNOTSUPP) return Acl{};
    if (rc != -ERANGE || tries == 3) return ErrnoError(-rc, name);
    rc = ceph_ll_getxattr(cm, in, name, nullptr, 0, ceph_mount_perms(cm));  // its size
    if (rc < 0) return ErrnoError(-rc, name);
    value.resize(static_cast<size_t>(rc) + 8);
  }
  std::optional<Acl> acl = DecodeAclXattr(value);
  if (!acl) return ErrnoError(EIO, std::string("malformed ") + name);
  return *acl;
}

absl::Status WriteCephAcl(ceph_mount_info* cm, Inode* in, const char* name, const Acl& acl,
                          const UserPerm* perm) {
  if (acl.empty()) {
    int rc = ceph_ll_removexattr(cm, in, name, perm);
    if (rc < 0 && rc != -ENODATA) return ErrnoError(-rc, name);
    return absl::OkStatus();
  }
  const std::string value = EncodeAclXattr(acl);
  int rc = ceph_ll_setxattr(cm, in, name, value.data(), value.size(), 0, perm);
  return rc < 0 ? ErrnoError(-rc, name) : absl::OkStatus();
}

}  // namespace nfs3d::vfs
