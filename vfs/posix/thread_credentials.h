// Per-thread file-system credentials. setfsuid/setfsgid act on the calling
// thread only; glibc's setgroups() changes every thread of the process, so the
// group list is set with the raw SYS_setgroups syscall, which is per-thread.
// While fsuid != 0 the kernel drops the file capabilities (CAP_DAC_OVERRIDE,
// CAP_DAC_READ_SEARCH, CAP_FOWNER, CAP_CHOWN, ...) from the thread, so do
// privileged work such as open_by_handle_at() before switching.
#ifndef NFS3D_VFS_THREAD_CREDENTIALS_H_
#define NFS3D_VFS_THREAD_CREDENTIALS_H_

#include <sys/types.h>

#include "absl/status/status.h"

#include "vfs/backend.h"

namespace nfs3d::vfs {

// Applies cred to the current thread for the lifetime of the object, then
// restores the server's identity (fsuid 0, fsgid 0, no supplementary groups).
// Not nestable; the server must run as root. The server's own identity
// (0/0/no groups) is a no-op: the thread already has it.
class ScopedCredentials {
 public:
  explicit ScopedCredentials(const Cred& cred);
  ~ScopedCredentials();
  ScopedCredentials(const ScopedCredentials&) = delete;
  ScopedCredentials& operator=(const ScopedCredentials&) = delete;

  // Non-OK if the credentials could not be applied; callers must not proceed.
  const absl::Status& status() const { return status_; }

 private:
  absl::Status status_;
  bool active_ = false;
};

// The calling thread's umask is 0 for the lifetime of the object, so that
// CREATE/MKDIR/MKNOD store exactly the mode the client sent (its umask is
// applied already) and a default ACL of the parent still applies as the
// kernel does it, while the process keeps its own umask for every file and
// socket nfs3d makes (issue 48, finding 6). The thread gets an umask of its
// own with unshare(CLONE_FS), once; where that is refused (a seccomp filter)
// the process umask becomes 0 instead, logged once: nfs3d's own files and
// sockets are created with explicit modes either way.
class ScopedExactModes {
 public:
  ScopedExactModes();
  ~ScopedExactModes();
  ScopedExactModes(const ScopedExactModes&) = delete;
  ScopedExactModes& operator=(const ScopedExactModes&) = delete;

 private:
  bool active_ = false;
  mode_t saved_ = 0;
};

// Sets the calling thread's fsuid/fsgid/groups; used by ScopedCredentials.
absl::Status SetThreadCredentials(uint32_t uid, uint32_t gid, const std::vector<uint32_t>& groups);

}  // namespace nfs3d::vfs

#endif  // NFS3D_VFS_THREAD_CREDENTIALS_H_
