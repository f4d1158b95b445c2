// Small helpers of the POSIX backend (declared in posix_backend_impl.h).

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <fstream>
#include <list>
#include <sstream>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

#include "common/log.h"
#include "vfs/backend_helpers.h"
#include "vfs/mount_point.h"
#include "vfs/posix/directory_move_watch.h"
#include "vfs/posix/fd_chmod.h"
#include "vfs/posix/fs_quota.h"
#include "vfs/posix/posix_backend_impl.h"
#include "vfs/posix/thread_credentials.h"
#include "vfs/sync_group.h"
#include "vfs/vfs_error.h"

namespace nfs3d::vfs {

absl::Status Errno(std::string_view context) { return ErrnoError(errno, context); }

std::string ProcPath(int fd) { return absl::StrCat("/proc/self/fd/", fd); }

// The path the kernel has for descriptor fd now (follows renames).
bool FdPath(int fd, std::string* out) {
  char buf[PATH_MAX];
  ssize_t n = readlink(ProcPath(fd).c_str(), buf, sizeof(buf));
  if (n <= 0 || static_cast<size_t>(n) >= sizeof(buf)) return false;
  out->assign(buf, static_cast<size_t>(n));
  return true;
}

WccAttr ToWcc(const struct stat& st) {
  return WccAttr{static_cast<uint64_t>(st.st_size), ToTime(st.st_mtim), ToTime(st.st_ctim)};
}

bool SameTime(const Time& a, const Time& b) {
  return a.seconds == b.seconds && a.nseconds == b.nseconds;
}

// Would ApplyAttrs change anything (mode left out when skip_mode)?
bool ChangesAnything(const SetAttributes& attrs, bool skip_mode) {
  return attrs.size || attrs.uid || attrs.gid || (attrs.mode && !skip_mode) ||
         attrs.atime_how != SetTime::kDontChange || attrs.mtime_how != SetTime::kDontChange;
}

// Reads the "root" field of this mount in /proc/self/mountinfo.
std::string MountRoot(int mount_id) {
  std::ifstream in("/proc/self/mountinfo");
  std::string line;
  std::string prefix = absl::StrCat(mount_id, " ");
  while (std::getline(in, line)) {
    if (line.rfind(prefix, 0) != 0) continue;
    std::vector<std::string> fields = absl::StrSplit(line, ' ');
    if (fields.size() > 3) return fields[3];
  }
  return "";
}

uint32_t Be32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}

// One gathered fsync of fd (see SyncGroup), counted for calls-per-sync
// statistics: every request, and the fsyncs made for them. Always a full
// fsync, so FILE_SYNC, DATA_SYNC and COMMIT of one file can share it.
absl::Status SyncGathered(SyncGroup& group, int fd, SyncCounters* counters,
                          absl::FunctionRef<void()> on_failure) {
  counters->requests.fetch_add(1, std::memory_order_relaxed);
  return group.Sync(
      [&] {
        counters->fsyncs.fetch_add(1, std::memory_order_relaxed);
        return fsync(fd) == 0 ? 0 : errno;
      },
      on_failure);
}

}  // namespace nfs3d::vfs
