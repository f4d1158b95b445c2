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
// The node knows its type, and a file or directory is synced through its
// cached I/O descriptor (IoFd): no stat, open and close per change (a
// CREATE+SETATTR+REMOVE made 4 of each only for this before).
absl::Status PosixBackend::Impl::CommitMetadata(const Node& node) {
  sync_counters.metadata_commits.fetch_add(1, std::memory_order_relaxed);
  // tmpfs's fsync does nothing (noop_fsync): 3 syscalls of a
  // CREATE+SETATTR+REMOVE saved, with the same guarantee.
  if (node.exp->sync_is_noop) return absl::OkStatus();
  sync_counters.metadata_syncs.fetch_add(1, std::memory_order_relaxed);
  if (S_ISREG(node.type) || S_ISDIR(node.type)) {
    // One fsync covers the inode and, for a file, its data (the descriptor
    // that wrote it when there is one), for a directory its entries.
    absl::StatusOr<std::pair<std::shared_ptr<IoFds>, int>> io = IoFd(node, /*write=*/false);
    if (!io.ok()) return Stat(node).ok() ? io.status() : absl::OkStatus();  // gone: nothing left
    if (fsync(io->second) != 0)
      return Errno(S_ISDIR(node.type) ? "fsync (directory)" : "fsync (metadata)");
    return absl::OkStatus();
  }
  // Symlinks, devices, FIFOs and sockets cannot be opened to fsync them
  // (opening a device or FIFO has effects of its own): the whole file system
  // is synced instead. Such objects are rarely made or changed.
  if (syncfs(node.exp->mount_fd.get()) != 0) return Errno("syncfs (metadata)");
  return absl::OkStatus();
}

}  // namespace nfs3d::vfs
