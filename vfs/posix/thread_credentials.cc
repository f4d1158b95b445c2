#include "vfs/posix/thread_credentials.h"

#include <sched.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <vector>

#include "common/log.h"
#include "vfs/vfs_error.h"

namespace nfs3d::vfs {

absl::Status SetThreadCredentials(uint32_t uid, uint32_t gid, const std::vector<uint32_t>& groups) {
  // Order: groups and fsgid first, while fsuid may still be 0; setgroups and
  // setfsgid need CAP_SETGID, which a non-zero fsuid does not drop, but keep the
  // order obvious anyway.
  static_assert(sizeof(gid_t) == sizeof(uint32_t));
  if (syscall(SYS_setgroups, groups.size(), groups.empty() ? nullptr : groups.data()) != 0) {
    return ErrnoError(errno, "setgroups");
  }
  // setfsgid/setfsuid return the previous value and report no error; read the
  // value back (an invalid id leaves it unchanged) to verify.
  setfsgid(gid);
  if (static_cast<uint32_t>(setfsgid(static_cast<gid_t>(-1))) != gid) {
    return ErrnoError(EPERM, "setfsgid");
  }
  setfsuid(uid);
  if (static_cast<uint32_t>(setfsuid(static_cast<uid_t>(-1))) != uid) {
    return ErrnoError(EPERM, "setfsuid");
  }
  return absl::OkStatus();
}

ScopedCredentials::ScopedCredentials(const Cred& cred) {
  // Root with group 0 is the server's own identity: fsuid 0 keeps every file
  // capability, so its supplementary groups change no permission check (and
  // clients send root with groups such as {0}). No syscalls on this path.
  if (cred.uid == 0 && cred.gid == 0) return;
  active_ = true;
  status_ = SetThreadCredentials(cred.uid, cred.gid, cred.groups);
}

ScopedCredentials::~ScopedCredentials() {
  if (!active_) return;
  // fsuid first: back to 0 restores the file capabilities.
  setfsuid(0);
  setfsgid(0);
  if (syscall(SYS_setgroups, 0, nullptr) != 0) {
    NFS3D_LOG_ERROR("restoring server groups failed: errno %d", errno);
  }
}

ScopedExactModes::ScopedExactModes() {
  // Threads share one umask unless they unshare their file-system
  // attributes (root, cwd, umask); nfs3d changes no root or cwd after start.
  thread_local const bool own_umask = [] {
    if (unshare(CLONE_FS) == 0) return true;
    static std::once_flag logged;
    const int err = errno;
    std::call_once(logged, [err] {
      umask(0);
      NFS3D_LOG_WARNING(
          "unshare(CLONE_FS): %s; the process umask is 0 so that clients' modes are kept",
          std::strerror(err));
    });
    return false;
  }();
  if (!own_umask) return;
  active_ = true;
  saved_ = umask(0);
}

ScopedExactModes::~ScopedExactModes() {
  if (active_) umask(saved_);
}

}  // namespace nfs3d::vfs
