// POSIX ACLs on CephFS: the system.posix_acl_access / _default extended
// attributes through libcephfs (client_acl_type = posix_acl, which the
// backend sets, so libcephfs also checks them on namespace operations,
// applies default ACLs to new objects and keeps the mode bits in step).
// Data I/O does not go through libcephfs's checks, so the backend reads the
// access ACL for its own (vfs/posix_permission.h).
#ifndef NFS3D_VFS_CEPHFS_CEPHFS_ACL_H_
#define NFS3D_VFS_CEPHFS_CEPHFS_ACL_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include "vfs/posix_acl.h"

struct ceph_mount_info;
struct Inode;
struct UserPerm;

namespace nfs3d::vfs {

// The ACL attribute `name` of in (kAclAccessXattr or kAclDefaultXattr);
// empty when there is none. Needs no permission.
absl::StatusOr<Acl> ReadCephAcl(ceph_mount_info* cm, Inode* in, const char* name);

// Sets (non-empty acl) or removes (empty) it as perm: libcephfs lets only
// the owner (or root) do it.
absl::Status WriteCephAcl(ceph_mount_info* cm, Inode* in, const char* name, const Acl& acl,
                          const UserPerm* perm);

}  // namespace nfs3d::vfs

#endif  // NFS3D_VFS_CEPHFS_CEPHFS_ACL_H_
