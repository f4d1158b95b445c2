#include "vfs/backend_helpers.h"

#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "vfs/vfs_error.h"

namespace nfs3d::vfs {

FileType FileTypeOf(uint32_t mode) {
  switch (mode & S_IFMT) {
    case S_IFDIR:
      return FileType::kDirectory;
    case S_IFBLK:
      return FileType::kBlock;
    case S_IFCHR:
      return FileType::kChar;
    case S_IFLNK:
      return FileType::kSymlink;
    case S_IFSOCK:
      return FileType::kSocket;
    case S_IFIFO:
      return FileType::kFifo;
    default:
      return FileType::kRegular;
  }
}

absl::Status ReadPipeInto(int pipe_fd, uint8_t* out, size_t n) {
  size_t done = 0;
  while (done < n) {
    const ssize_t got = read(pipe_fd, out + done, n - done);
    if (got < 0 && errno == EINTR) continue;
    // The pipe holds all n bytes; less is a transport bug, not a client's.
    if (got <= 0) return ErrnoError(got < 0 ? errno : EIO, "read spliced data");
    done += static_cast<size_t>(got);
  }
  return absl::OkStatus();
}

absl::Status CheckName(std::string_view name) {
  if (name.empty() || name.find('/') != std::string_view::npos ||
      name.find('\0') != std::string_view::npos) {
    return ErrnoError(EACCES, "invalid name");
  }
  if (name.size() > kNameMax) return ErrnoError(ENAMETOOLONG, "name too long");
  return absl::OkStatus();
}

absl::Status CheckNewName(std::string_view name) {
  absl::Status st = CheckName(name);
  if (!st.ok()) return st;
  if (IsDotName(name)) return ErrnoError(EEXIST, "cannot create . or ..");
  return absl::OkStatus();
}

FsStat ToFsStat(const struct statvfs& sv) {
  FsStat st;
  st.total_bytes = static_cast<uint64_t>(sv.f_blocks) * sv.f_frsize;
  st.free_bytes = static_cast<uint64_t>(sv.f_bfree) * sv.f_frsize;
  st.avail_bytes = static_cast<uint64_t>(sv.f_bavail) * sv.f_frsize;
  st.total_files = sv.f_files;
  st.free_files = sv.f_ffree;
  st.avail_files = sv.f_favail;
  return st;
}

uint64_t RandomU64() {
  uint64_t v = 0;
  if (getrandom(&v, sizeof(v), 0) != sizeof(v)) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    v = (static_cast<uint64_t>(ts.tv_sec) << 32) ^ static_cast<uint64_t>(ts.tv_nsec) ^
        static_cast<uint64_t>(getpid());
  }
  return v;
}

}  // namespace nfs3d::vfs
