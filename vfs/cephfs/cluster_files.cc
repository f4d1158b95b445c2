#include "vfs/cephfs/cluster_files.h"

#include <cephfs/libcephfs.h>
#include <dirent.h>
#include <fcntl.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"

namespace nfs3d::vfs {
namespace {

class CephFiles : public DurableFiles {
 public:
  CephFiles(CephMountSource mount, std::string dir, std::string cluster, CephCallRunner run)
      : mount_(std::move(mount)),
        dir_(std::move(dir)),
        cluster_(std::move(cluster)),
        run_(std::move(run)) {}

  const std::string& where() const override { return dir_; }

  absl::StatusOr<std::optional<std::string>> Read(const std::string& name) override {
    auto out = std::make_shared<std::optional<std::string>>();
    absl::Status s = run_([cm = mount_(), path = Path(name), out, this_cluster = cluster_] {
      absl::StatusOr<std::optional<std::string>> contents = ReadFile(cm, path, this_cluster);
      if (!contents.ok()) return contents.status();
      *out = std::move(*contents);
      return absl::OkStatus();
    });
    if (!s.ok()) return s;
    return std::move(*out);
  }

  absl::Status Write(const std::string& name, const std::string& contents) override {
    return run_([cm = mount_(), path = Path(name), contents, this_cluster = cluster_] {
      const std::string temp = path + kTempSuffix;
      const int fd = ceph_open(cm, temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      if (fd < 0) return Failed(this_cluster, "creating " + temp, fd);
      // No write of nothing: libcephfs 16.2 asserts on a zero-length write.
      int rc = contents.empty()
                   ? 0
                   : ceph_write(cm, fd, contents.data(), static_cast<int64_t>(contents.size()), 0);
      if (rc >= 0 && rc != static_cast<int>(contents.size())) rc = -EIO;
      if (rc >= 0) rc = ceph_fsync(cm, fd, 0);
      ceph_close(cm, fd);
      if (rc < 0) return Failed(this_cluster, "writing " + temp, rc);
      rc = ceph_rename(cm, temp.c_str(), path.c_str());
      if (rc < 0) return Failed(this_cluster, "renaming " + temp, rc);
      return absl::OkStatus();
    });
  }

  absl::Status Remove(const std::string& name) override {
    return run_([cm = mount_(), path = Path(name), this_cluster = cluster_] {
      const int rc = ceph_unlink(cm, path.c_str());
      if (rc < 0 && rc != -ENOENT) return Failed(this_cluster, "removing " + path, rc);
      return absl::OkStatus();
    });
  }

  absl::StatusOr<std::vector<std::string>> List() override {
    auto names = std::make_shared<std::vector<std::string>>();
    absl::Status s = run_([cm = mount_(), dir = dir_, names, this_cluster = cluster_] {
      return ForEachEntry(cm, dir, this_cluster, [&](const dirent& entry) {
        if (Listed(entry.d_name)) names->emplace_back(entry.d_name);
        return absl::OkStatus();
      });
    });
    if (!s.ok()) return s;
    return std::move(*names);
  }

  absl::StatusOr<std::map<std::string, std::string>> ReadAll(const std::string& prefix) override {
    auto files = std::make_shared<std::map<std::string, std::string>>();
    absl::Status s = run_([cm = mount_(), dir = dir_, prefix, files, this_cluster = cluster_] {
      return ForEachEntry(cm, dir, this_cluster, [&](const dirent& entry) {
        if (!ReadByReadAll(entry.d_name, entry.d_type, prefix)) return absl::OkStatus();
        absl::StatusOr<std::optional<std::string>> contents =
            ReadFile(cm, absl::StrCat(dir, "/", entry.d_name), this_cluster);
        if (!contents.ok()) return contents.status();
        if (contents->has_value()) files->emplace(entry.d_name, std::move(**contents));
        return absl::OkStatus();
      });
    });
    if (!s.ok()) return s;
    return std::move(*files);
  }

  absl::StatusOr<std::unique_ptr<DurableFiles>> Sub(const std::string& name) override {
    return OpenCephFiles(mount_, Path(name), cluster_, run_);
  }

  static absl::Status Failed(const std::string& cluster, const std::string& step, int rc) {
    return absl::UnavailableError(
        absl::StrCat(cluster, ": ", step, " failed: ", std::strerror(rc < 0 ? -rc : rc)));
  }

 private:
  // These make libcephfs calls: only inside run_.
  static absl::StatusOr<std::optional<std::string>> ReadFile(ceph_mount_info* cm,
                                                             const std::string& path,
                                                             const std::string& cluster) {
    const int fd = ceph_open(cm, path.c_str(), O_RDONLY, 0);
    if (fd == -ENOENT) return std::nullopt;
    if (fd < 0) return Failed(cluster, "opening " + path, fd);
    std::string contents;
    char buf[4096];
    for (;;) {
      const int n = ceph_read(cm, fd, buf, sizeof(buf), static_cast<int64_t>(contents.size()));
      if (n < 0) {
        ceph_close(cm, fd);
        return Failed(cluster, "reading " + path, n);
      }
      if (n == 0) break;
      contents.append(buf, static_cast<size_t>(n));
    }
    ceph_close(cm, fd);
    return contents;
  }

  static absl::Status ForEachEntry(ceph_mount_info* cm, const std::string& dir,
                                   const std::string& cluster,
                                   const std::function<absl::Status(const dirent&)>& visit) {
    ceph_dir_result* listing = nullptr;
    const int rc = ceph_opendir(cm, dir.c_str(), &listing);
    if (rc < 0) return Failed(cluster, "listing " + dir, rc);
    absl::Status status;
    while (status.ok()) {
      const dirent* entry = ceph_readdir(cm, listing);
      if (entry == nullptr) break;
      status = visit(*entry);
    }
    ceph_closedir(cm, listing);
    return status;
  }

  std::string Path(const std::string& name) const { return absl::StrCat(dir_, "/", name); }

  const CephMountSource mount_;  // the mount in use, asked at each call
  const std::string dir_;
  const std::string cluster_;
  const CephCallRunner run_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<DurableFiles>> OpenCephFiles(CephMountSource mount,
                                                            const std::string& dir,
                                                            const std::string& cluster,
                                                            CephCallRunner run) {
  absl::Status made = run([cm = mount(), dir, cluster] {
    const int rc = ceph_mkdirs(cm, dir.c_str(), 0700);
    if (rc < 0 && rc != -EEXIST) return CephFiles::Failed(cluster, "creating " + dir, rc);
    return absl::OkStatus();
  });
  if (!made.ok()) return made;
  return std::make_unique<CephFiles>(std::move(mount), dir, cluster, std::move(run));
}

}  // namespace nfs3d::vfs
