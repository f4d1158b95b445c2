#include "vfs/posix/directory_move_watch.h"

#include <fcntl.h>
#include <sys/fanotify.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

#include "vfs/vfs_error.h"

namespace nfs3d::vfs {

DirectoryMoveWatch::~DirectoryMoveWatch() {
  int fd = fanotify_fd_.load();
  if (fd >= 0) close(fd);
}

absl::Status DirectoryMoveWatch::Watch(const std::string& path) {
  int fd;
  {
    absl::MutexLock lock(&init_mu_);
    fd = fanotify_fd_.load(std::memory_order_acquire);
    if (fd < 0) {
      // Directory-id reporting: the only mode in which fanotify reports moves.
      fd = fanotify_init(FAN_CLASS_NOTIF | FAN_CLOEXEC | FAN_NONBLOCK | FAN_REPORT_DFID_NAME,
                         O_RDONLY | O_CLOEXEC);
      if (fd < 0) return ErrnoError(errno, "fanotify_init");
      fanotify_fd_.store(fd, std::memory_order_release);
    }
  }
  if (fanotify_mark(fd, FAN_MARK_ADD | FAN_MARK_FILESYSTEM, FAN_MOVED_FROM | FAN_ONDIR, AT_FDCWD,
                    path.c_str()) != 0) {
    return ErrnoError(errno, absl::StrCat("fanotify_mark ", path));
  }
  return absl::OkStatus();
}

std::optional<uint64_t> DirectoryMoveWatch::Generation() {
  const int fd = fanotify_fd_.load(std::memory_order_acquire);
  if (fd < 0) return std::nullopt;
  // Read before looking, so a look counts only for reads made before it.
  const uint64_t received =
      receive_count_ != nullptr ? receive_count_->load(std::memory_order_acquire) + 1 : 0;
  if (received != 0 && looked_at_.load(std::memory_order_acquire) == received) {
    return generation_.load(std::memory_order_acquire);  // no read since the last look
  }
  int queued = 0;
  if (ioctl(fd, FIONREAD, &queued) != 0) return std::nullopt;
  if (queued > 0) Drain();
  if (received != 0) looked_at_.store(received, std::memory_order_release);
  return generation_.load(std::memory_order_acquire);
}

void DirectoryMoveWatch::Drain() {
  absl::MutexLock lock(&drain_mu_);
  const int fd = fanotify_fd_.load(std::memory_order_acquire);
  char buf[8192];
  bool moved = false;
  for (;;) {
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n <= 0) {
      // EAGAIN: drained. Anything else: nothing more can be read now; count
      // it as a move so that nothing is missed.
      if (n < 0 && errno != EAGAIN && errno != EINTR) moved = true;
      break;
    }
    // Events carry file names, so the kernel does not keep them 8-byte
    // aligned within the buffer: copy each header out before reading it.
    size_t offset = 0;
    struct fanotify_event_metadata event;
    while (offset + sizeof(event) <= static_cast<size_t>(n)) {
      std::memcpy(&event, buf + offset, sizeof(event));
      if (event.event_len < sizeof(event) || event.event_len > static_cast<size_t>(n) - offset) {
        moved = true;  // cannot happen; if it did, assume the worst
        break;
      }
      // File renames are reported too; only directories carry a sub-tree
      // out of an export.
      if ((event.mask & (FAN_ONDIR | FAN_Q_OVERFLOW)) != 0) moved = true;
      offset += event.event_len;
    }
  }
  if (moved) NoteMove();
}

}  // namespace nfs3d::vfs
