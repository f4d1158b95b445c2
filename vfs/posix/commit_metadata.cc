// PosixBackend::Impl::CommitMetadata: a namespace or attribute change is
// made durable before nfs3d replies. RFC 1813 (like RFC 1094 before it)
// lets a client take a reply to CREATE, MKDIR, REMOVE, RENAME, LINK,
// SETATTR, ... as the change being on stable storage; only WRITE may be
// UNSTABLE. knfsd does the same (commit_metadata on "sync" exports).
// Without it a power cut of the server's machine lost acknowledged creates,
// renames and removes on ext4 and XFS (bench/powercut.sh, docs/durability.md).

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "vfs/posix/posix_backend_impl.h"
#include "vfs/vfs_error.h"

namespace nfs3d::vfs {

// Runs with the server's own identity (outside ScopedCredentials): the
// caller may hold write and search permission on a directory without read.
absl::Status PosixBackend::Impl::CommitMetadata(const Node& node) {
  absl::StatusOr<struct stat> st = Stat(node);
  if (!st.ok()) return absl::OkStatus();  // gone: nothing left to make durable
  if (S_ISREG(st->st_mode)) {
    // The cached I/O descriptor: one fsync covers the inode and its data.
    absl::StatusOr<std::pair<std::shared_ptr<IoFds>, int>> io = IoFd(node, /*write=*/false);
    if (!io.ok()) return io.status();
    if (fsync(io->second) != 0) return Errno("fsync (metadata)");
    return absl::OkStatus();
  }
  if (S_ISDIR(st->st_mode)) {
    UniqueFd dir(open(ProcPath(node.fd.get()).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!dir.valid()) return Errno("open directory for fsync");
    if (fsync(dir.get()) != 0) return Errno("fsync (directory)");
    return absl::OkStatus();
  }
  // Symlinks, devices, FIFOs and sockets cannot be opened to fsync them
  // (opening a device or FIFO has effects of its own): the whole file system
  // is synced instead. Such objects are rarely made or changed.
  if (syncfs(node.exp->mount_fd.get()) != 0) return Errno("syncfs (metadata)");
  return absl::OkStatus();
}

}  // namespace nfs3d::vfs
