#include "tests/vfs/cephfs/native_client.h"

#include <cephfs/libcephfs.h>
#include <fcntl.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace nfs3d::test_support {
namespace {

absl::Status Check(int rc, const std::string& what) {
  if (rc >= 0) return absl::OkStatus();
  return absl::InternalError(absl::StrCat(what, ": ", std::strerror(-rc)));
}

ceph_mount_info* Cm(void* p) { return static_cast<ceph_mount_info*>(p); }

}  // namespace

absl::StatusOr<std::unique_ptr<NativeClient>> NativeClient::Mount(const std::string& cluster_dir) {
  ceph_mount_info* cm = nullptr;
  absl::Status st = Check(ceph_create(&cm, "admin"), "ceph_create");
  if (!st.ok()) return st;
  std::unique_ptr<NativeClient> client(new NativeClient(cm));
  st = Check(ceph_conf_read_file(cm, (cluster_dir + "/ceph.conf").c_str()), "conf");
  if (st.ok())
    st = Check(ceph_conf_set(cm, "keyring", (cluster_dir + "/keyring").c_str()), "keyring");
  if (st.ok()) st = Check(ceph_init(cm), "ceph_init");
  if (st.ok()) st = Check(ceph_select_filesystem(cm, "cephfs"), "select fs");
  if (st.ok()) st = Check(ceph_mount(cm, "/"), "ceph_mount");
  if (!st.ok()) return st;
  return client;
}

NativeClient::~NativeClient() {
  ceph_unmount(Cm(cm_));
  ceph_release(Cm(cm_));
}

absl::Status NativeClient::MakeSnapshot(const std::string& dir, const std::string& name) {
  return Check(ceph_mksnap(Cm(cm_), dir.c_str(), name.c_str(), 0755, nullptr, 0), "mksnap");
}

absl::Status NativeClient::RemoveSnapshot(const std::string& dir, const std::string& name) {
  return Check(ceph_rmsnap(Cm(cm_), dir.c_str(), name.c_str()), "rmsnap");
}

absl::Status NativeClient::SetXattr(const std::string& path, const std::string& name,
                                    const std::string& value) {
  return Check(ceph_setxattr(Cm(cm_), path.c_str(), name.c_str(), value.data(), value.size(), 0),
               absl::StrCat("setxattr ", name));
}

absl::Status NativeClient::RemoveXattr(const std::string& path, const std::string& name) {
  return Check(ceph_removexattr(Cm(cm_), path.c_str(), name.c_str()),
               absl::StrCat("removexattr ", name));
}

absl::StatusOr<std::string> NativeClient::GetXattr(const std::string& path,
                                                   const std::string& name) {
  std::string value(65536, '\0');
  int rc = ceph_getxattr(Cm(cm_), path.c_str(), name.c_str(), value.data(), value.size());
  absl::Status st = Check(rc, absl::StrCat("getxattr ", name));
  if (!st.ok()) return st;
  value.resize(static_cast<size_t>(rc));
  return value;
}

absl::Status NativeClient::WriteFile(const std::string& path, const std::string& data) {
  int fd = ceph_open(Cm(cm_), path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  absl::Status st = Check(fd, absl::StrCat("open ", path));
  if (!st.ok()) return st;
  int n = ceph_write(Cm(cm_), fd, data.data(), static_cast<int64_t>(data.size()), 0);
  st = Check(n, "write");
  ceph_close(Cm(cm_), fd);
  return st;
}

absl::Status NativeClient::Mkdir(const std::string& path, int mode) {
  absl::Status st = Check(ceph_mkdir(Cm(cm_), path.c_str(), mode), absl::StrCat("mkdir ", path));
  if (!st.ok()) return st;
  return Check(ceph_chmod(Cm(cm_), path.c_str(), mode), absl::StrCat("chmod ", path));
}

}  // namespace nfs3d::test_support
