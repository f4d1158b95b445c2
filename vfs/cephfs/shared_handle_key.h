// The handle key of heads that serve one CephFS file system together
// ([cluster] in nfs3d.conf): kept in the file system itself, so every head
// signs and accepts the same file handles and a client can move from one
// head to another (a floating address taken over by a survivor).
//
// The key is the 32-byte file "handle.key" in a directory of the file system
// (default "/.nfs3d"). The first head to start writes it to a temp file of its
// own, fsyncs it and publishes it with link(2), which never replaces an
// existing file: heads starting together agree on one key, and a reader never
// sees a partly written one.
#ifndef NFS3D_VFS_CEPHFS_SHARED_HANDLE_KEY_H_
#define NFS3D_VFS_CEPHFS_SHARED_HANDLE_KEY_H_

#include <string>

#include "absl/status/statusor.h"

#include "vfs/state_dir.h"  // HandleSecret

struct ceph_mount_info;

namespace nfs3d::vfs {

// Reads dir/handle.key of the mounted file system, creating dir and the key
// if missing. node_id names this head's temp file. Errors name `cluster`
// and the step that failed.
absl::StatusOr<HandleSecret> LoadOrCreateSharedHandleKey(ceph_mount_info* cm,
                                                         const std::string& dir,
                                                         const std::string& node_id,
                                                         const std::string& cluster);

}  // namespace nfs3d::vfs

#endif  // NFS3D_VFS_CEPHFS_SHARED_HANDLE_KEY_H_
