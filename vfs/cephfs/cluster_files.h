// DurableFiles (common/durable_files.h) in a directory of a mounted CephFS
// file system: the state the heads of a [cluster] share (grace periods, each
// head's status monitor), found again by a head restarted on another machine.
// Every call goes through `run`, which gives it the [ceph] timeout
// (DeadlineBackend::Run): a stalled cluster gives an error, not a hang.
#ifndef NFS3D_VFS_CEPHFS_CLUSTER_FILES_H_
#define NFS3D_VFS_CEPHFS_CLUSTER_FILES_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include "common/durable_files.h"
#include "vfs/cluster_backend.h"

struct ceph_mount_info;

namespace nfs3d::vfs {

using CephCallRunner = ClusterCallRunner;

// The mount to use for a call: the backend's current one (a session the
// cluster ended is replaced); each returned mount outlives the files.
using CephMountSource = std::function<ceph_mount_info*()>;

// The files of `dir` (absolute in the file system), created if missing.
// `cluster` names the cluster in errors.
absl::StatusOr<std::unique_ptr<DurableFiles>> OpenCephFiles(CephMountSource mount,
                                                            const std::string& dir,
                                                            const std::string& cluster,
                                                            CephCallRunner run);

}  // namespace nfs3d::vfs

#endif  // NFS3D_VFS_CEPHFS_CLUSTER_FILES_H_
