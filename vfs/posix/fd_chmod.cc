#include "vfs/posix/fd_chmod.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>

#include "absl/strings/str_cat.h"

#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452  // the same number on every architecture
#endif

namespace nfs3d::vfs {
namespace {

// Cleared once the kernel shows it lacks fchmodat2 or its AT_EMPTY_PATH.
std::atomic<bool> have_fchmodat2{true};

int ChmodProcPath(int fd, mode_t mode) {
  return chmod(absl::StrCat("/proc/self/fd/", fd).c_str(), mode);
}

}  // namespace

int ChmodFd(int fd, mode_t mode) {
  if (have_fchmodat2.load(std::memory_order_relaxed)) {
    if (syscall(SYS_fchmodat2, fd, "", mode, AT_EMPTY_PATH) == 0) return 0;
    // ENOSYS: no such call; EINVAL: a kernel that takes no AT_EMPTY_PATH
    // there. Any other error is the answer.
    if (errno != ENOSYS && errno != EINVAL) return -1;
    have_fchmodat2.store(false, std::memory_order_relaxed);
  }
  return ChmodProcPath(fd, mode);
}

}  // namespace nfs3d::vfs
