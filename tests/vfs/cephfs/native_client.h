// A second, plain libcephfs client of the test cluster, for what the
// backend does not offer and an administrator does beside it: snapshots,
// quotas, extended attributes, by path.
#ifndef NFS3D_TESTS_VFS_CEPHFS_NATIVE_CLIENT_H_
#define NFS3D_TESTS_VFS_CEPHFS_NATIVE_CLIENT_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace nfs3d::test_support {

class NativeClient {
 public:
  // Mounts file system "cephfs" of the cluster in cluster_dir as client.admin.
  static absl::StatusOr<std::unique_ptr<NativeClient>> Mount(const std::string& cluster_dir);
  ~NativeClient();

  absl::Status MakeSnapshot(const std::string& dir, const std::string& name);
  absl::Status RemoveSnapshot(const std::string& dir, const std::string& name);
  absl::Status SetXattr(const std::string& path, const std::string& name, const std::string& value);
  absl::Status RemoveXattr(const std::string& path, const std::string& name);
  absl::StatusOr<std::string> GetXattr(const std::string& path, const std::string& name);
  absl::Status WriteFile(const std::string& path, const std::string& data);
  // A directory with exactly `mode` (no umask).
  absl::Status Mkdir(const std::string& path, int mode);

 private:
  explicit NativeClient(void* cm) : cm_(cm) {}
  void* cm_;  // ceph_mount_info*
};

}  // namespace nfs3d::test_support

#endif  // NFS3D_TESTS_VFS_CEPHFS_NATIVE_CLIENT_H_
