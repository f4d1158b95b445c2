#include "vfs/cephfs/shared_grace.h"

#include <dirent.h>
#include <fcntl.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"

#include <cephfs/libcephfs.h>

namespace nfs3d::vfs {
namespace {

constexpr absl::string_view kPrefix = "grace.";

absl::Status Failed(const std::string& step, int rc) {
  return absl::UnavailableError(absl::StrCat(step, " failed: ", std::strerror(rc < 0 ? -rc : rc)));
}

// The end recorded in one grace file (Unix seconds, decimal).
absl::StatusOr<absl::Time> ReadEnd(ceph_mount_info* cm, const std::string& path) {
  const int fd = ceph_open(cm, path.c_str(), O_RDONLY, 0);
  if (fd == -ENOENT) return absl::InfinitePast();  // replaced while listed
  if (fd < 0) return Failed("opening " + path, fd);
  char buf[32] = {};
  const int n = ceph_read(cm, fd, buf, sizeof(buf) - 1, 0);
  ceph_close(cm, fd);
  if (n < 0) return Failed("reading " + path, n);
  int64_t seconds = 0;
  if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(absl::string_view(buf, n)), &seconds)) {
    return absl::DataLossError(absl::StrCat(path, " does not hold a time"));
  }
  return absl::FromUnixSeconds(seconds);
}

}  // namespace

absl::Status RecordGraceEnd(ceph_mount_info* cm, const std::string& dir,
                            const std::string& node_id, absl::Time until) {
  const std::string path = absl::StrCat(dir, "/", kPrefix, node_id);
  const std::string temp = path + ".new";
  // Rounded up: a reader must not see the period end early.
  const std::string text =
      absl::StrCat(absl::ToUnixSeconds(until + absl::Seconds(1) - absl::Nanoseconds(1)), "\n");
  const int fd = ceph_open(cm, temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (fd < 0) return Failed("creating " + temp, fd);
  int rc = ceph_write(cm, fd, text.data(), text.size(), 0);
  if (rc == static_cast<int>(text.size())) rc = ceph_fsync(cm, fd, 0);
  ceph_close(cm, fd);
  if (rc < 0) return Failed("writing " + temp, rc);
  rc = ceph_rename(cm, temp.c_str(), path.c_str());
  if (rc < 0) return Failed("renaming " + temp, rc);
  return absl::OkStatus();
}

absl::StatusOr<absl::Time> LatestGraceEnd(ceph_mount_info* cm, const std::string& dir) {
  ceph_dir_result* listing = nullptr;
  int rc = ceph_opendir(cm, dir.c_str(), &listing);
  if (rc == -ENOENT) return absl::InfinitePast();
  if (rc < 0) return Failed("listing " + dir, rc);
  absl::Time latest = absl::InfinitePast();
  absl::Status status;
  while (dirent* entry = ceph_readdir(cm, listing)) {
    absl::string_view name(entry->d_name);
    if (!absl::ConsumePrefix(&name, kPrefix) || absl::EndsWith(name, ".new")) continue;
    absl::StatusOr<absl::Time> end = ReadEnd(cm, absl::StrCat(dir, "/", entry->d_name));
    if (!end.ok()) {
      status = end.status();
      break;
    }
    latest = std::max(latest, *end);
  }
  ceph_closedir(cm, listing);
  if (!status.ok()) return status;
  return latest;
}

}  // namespace nfs3d::vfs
