#include "vfs/cephfs/shared_handle_key.h"

#include <cephfs/libcephfs.h>
#include <fcntl.h>
#include <sys/random.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace nfs3d::vfs {
namespace {

constexpr int kAttempts = 3;  // a racing head may publish between our read and link

std::string Failed(const std::string& cluster, const std::string& step, int rc) {
  return absl::StrCat(cluster, ": ", step, " failed: ", std::strerror(rc < 0 ? -rc : rc));
}

// The key at path; NotFound if there is none.
absl::StatusOr<HandleSecret> ReadKey(ceph_mount_info* cm, const std::string& path,
                                     const std::string& cluster) {
  const int fd = ceph_open(cm, path.c_str(), O_RDONLY, 0);
  if (fd == -ENOENT) return absl::NotFoundError(path);
  if (fd < 0) return absl::UnavailableError(Failed(cluster, "opening " + path, fd));
  HandleSecret key;
  const int n = ceph_read(cm, fd, reinterpret_cast<char*>(key.data()), key.size(), 0);
  ceph_close(cm, fd);
  if (n < 0) return absl::UnavailableError(Failed(cluster, "reading " + path, n));
  if (static_cast<size_t>(n) != key.size()) {
    return absl::DataLossError(
        absl::StrCat(cluster, ": ", path, " holds ", n, " bytes, not a 32-byte handle key"));
  }
  return key;
}

// Writes a fresh key to a temp file and links it to path (EEXIST: another
// head was first, which is fine).
absl::Status PublishNewKey(ceph_mount_info* cm, const std::string& path, const std::string& node_id,
                           const std::string& cluster) {
  HandleSecret key;
  if (getrandom(key.data(), key.size(), 0) != static_cast<ssize_t>(key.size())) {
    return absl::InternalError("getrandom failed");
  }
  const std::string temp = absl::StrCat(path, ".", node_id, ".new");
  ceph_unlink(cm, temp.c_str());  // left by a crash of this head
  const int fd = ceph_open(cm, temp.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
  if (fd < 0) return absl::UnavailableError(Failed(cluster, "creating " + temp, fd));
  int rc = ceph_write(cm, fd, reinterpret_cast<const char*>(key.data()), key.size(), 0);
  if (rc == static_cast<int>(key.size())) rc = ceph_fsync(cm, fd, 0);
  ceph_close(cm, fd);
  if (rc < 0) {
    ceph_unlink(cm, temp.c_str());
    return absl::UnavailableError(Failed(cluster, "writing " + temp, rc));
  }
  rc = ceph_link(cm, temp.c_str(), path.c_str());
  ceph_unlink(cm, temp.c_str());
  if (rc < 0 && rc != -EEXIST) {
    return absl::UnavailableError(Failed(cluster, "publishing " + path, rc));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<HandleSecret> LoadOrCreateSharedHandleKey(ceph_mount_info* cm,
                                                         const std::string& dir,
                                                         const std::string& node_id,
                                                         const std::string& cluster) {
  int rc = ceph_mkdirs(cm, dir.c_str(), 0700);
  if (rc < 0 && rc != -EEXIST) {
    return absl::UnavailableError(Failed(cluster, "creating " + dir, rc));
  }
  const std::string path = dir + "/handle.key";
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    absl::StatusOr<HandleSecret> key = ReadKey(cm, path, cluster);
    if (!absl::IsNotFound(key.status())) return key;
    if (absl::Status published = PublishNewKey(cm, path, node_id, cluster); !published.ok()) {
      return published;
    }
  }
  return absl::UnavailableError(absl::StrCat(cluster, ": ", path, " vanished while read"));
}

}  // namespace nfs3d::vfs
