#include "vfs/mount_point.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <sstream>

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

namespace {

// mountinfo escapes space, tab, newline and backslash as \ooo.
std::string Unescape(const std::string& field) {
  std::string out;
  for (size_t i = 0; i < field.size(); ++i) {
    if (field[i] == '\\' && i + 3 < field.size()) {
      const std::string octal = field.substr(i + 1, 3);
      if (octal.size() == 3 &&
          std::all_of(octal.begin(), octal.end(), [](char c) { return c >= '0' && c <= '7'; })) {
        out.push_back(static_cast<char>(std::stoi(octal, nullptr, 8)));
        i += 3;
        continue;
      }
    }
    out.push_back(field[i]);
  }
  return out;
}

}  // namespace

std::vector<std::string> MountPointsBelow(const std::string& path) {
  std::vector<std::string> out;
  const std::string prefix = path == "/" ? "/" : path + "/";
  std::ifstream in("/proc/self/mountinfo");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string id, parent, devno, root, mount_point;
    if (!(fields >> id >> parent >> devno >> root >> mount_point)) continue;
    std::string mp = Unescape(mount_point);
    if (mp.size() > prefix.size() && mp.compare(0, prefix.size(), prefix) == 0 &&
        std::find(out.begin(), out.end(), mp) == out.end()) {
      out.push_back(mp);
    }
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const std::string& a, const std::string& b) { return a.size() < b.size(); });
  return out;
}

}  // namespace nfs3d::vfs
