// PosixBackend data operations: READ, WRITE (from memory or spliced from a
// pipe), COMMIT.

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

// What READ and ReadSlice share: the file resolved, checked to be a regular
// file the caller may read, and a descriptor to read it with.
struct PosixBackend::Impl::ReadAccess {
  NodePtr node;
  struct stat st;
  std::shared_ptr<IoFds> keep;  // keeps fd open
  int fd;
};

absl::StatusOr<PosixBackend::Impl::ReadAccess> PosixBackend::Impl::OpenForRead(const Cred& cred,
                                                                               const FileHandle& fh,
                                                                               uint64_t offset) {
  absl::StatusOr<NodePtr> node = Resolve(fh);
  if (!node.ok()) return node.status();
  absl::StatusOr<struct stat> st = Stat(**node);
  if (!st.ok()) return st.status();
  if (S_ISDIR(st->st_mode)) return ErrnoError(EISDIR, "read of a directory");
  if (!S_ISREG(st->st_mode)) return ErrnoError(EINVAL, "read of a special file");
  if (offset > static_cast<uint64_t>(std::numeric_limits<off_t>::max())) {
    return ErrnoError(EINVAL, "offset too large");
  }
  auto io = IoFd(**node, /*write=*/false);
  if (!io.ok()) return io.status();
  // The owner override tested first, as knfsd's nfsd_permission does: an
  // owner's READ needs neither the credential switch (up to 8 syscalls) nor
  // the access check. (A write meets EROFS and ETXTBSY in CheckIo first.)
  if (!IsOwner(cred, *st)) {
    ScopedCredentials creds(cred);
    if (!creds.status().ok()) return creds.status();
    absl::Status allowed = CheckIo(cred, **node, *st, /*write=*/false);
    if (!allowed.ok()) return allowed;
  }
  return ReadAccess{*std::move(node), *st, std::move(io->first), io->second};
}

absl::StatusOr<ReadResult> PosixBackend::Read(const Cred& cred, const FileHandle& fh,
                                              uint64_t offset, uint32_t count, uint8_t* buf) {
  absl::StatusOr<Impl::ReadAccess> access = impl_->OpenForRead(cred, fh, offset);
  if (!access.ok()) return access.status();
  const Node& n = *access->node;
  // The descriptor was opened with the server's identity and the caller's
  // permission is checked: the pread itself needs no credential switch.
  size_t done = 0;
  while (done < count) {
    ssize_t got = pread(access->fd, buf + done, count - done, static_cast<off_t>(offset + done));
    if (got < 0) {
      if (errno == EINTR) continue;
      if (done > 0) break;  // report what was read
      return Errno("pread");
    }
    if (got == 0) break;
    done += static_cast<size_t>(got);
  }
  ReadResult result;
  absl::StatusOr<struct stat> after = impl_->Stat(n);
  const struct stat& st = after.ok() ? *after : access->st;
  result.attributes = impl_->ToAttributes(st, *n.exp);
  result.count = static_cast<uint32_t>(done);
  result.eof = ReadReachedEnd(offset, count, done, static_cast<uint64_t>(st.st_size));
  return result;
}

absl::StatusOr<FileSlice> PosixBackend::ReadSlice(const Cred& cred, const FileHandle& fh,
                                                  uint64_t offset, uint32_t count) {
  absl::StatusOr<Impl::ReadAccess> access = impl_->OpenForRead(cred, fh, offset);
  if (!access.ok()) return access.status();
  const uint64_t size = static_cast<uint64_t>(access->st.st_size);
  FileSlice slice;
  slice.count =
      offset >= size ? 0 : static_cast<uint32_t>(std::min<uint64_t>(count, size - offset));
  slice.eof = offset + slice.count >= size;
  slice.attributes = impl_->ToAttributes(access->st, *access->node->exp);
  slice.fd = access->fd;
  slice.owner = std::move(access->keep);
  return slice;
}

namespace {
// Writes the next bytes of a WRITE's data, those from `done` on, at offset +
// done: from memory, or by splice from the pipe for the piped range.
ssize_t PutSome(int fd, uint64_t offset, absl::Span<const uint8_t> data, const PipedBytes* piped,
                size_t done) {
  size_t end = data.size();
  if (piped != nullptr && piped->size > 0) {
    const size_t piped_end = piped->offset + piped->size;
    if (done >= piped->offset && done < piped_end) {
      loff_t at = static_cast<loff_t>(offset + done);
      return splice(piped->pipe_fd, nullptr, fd, &at, piped_end - done, SPLICE_F_MOVE);
    }
    if (done < piped->offset) end = piped->offset;
  }
  return pwrite(fd, data.data() + done, end - done, static_cast<off_t>(offset + done));
}
}  // namespace

absl::StatusOr<WriteResult> PosixBackend::Write(const Cred& cred, const FileHandle& fh,
                                                uint64_t offset, absl::Span<const uint8_t> data,
                                                StableHow stable, Wcc* wcc) {
  return WriteFrom(cred, fh, offset, data, nullptr, stable, wcc);
}

absl::StatusOr<WriteResult> PosixBackend::WriteSpliced(const Cred& cred, const FileHandle& fh,
                                                       uint64_t offset,
                                                       absl::Span<const uint8_t> data,
                                                       const PipedBytes& piped, StableHow stable,
                                                       Wcc* wcc) {
  return WriteFrom(cred, fh, offset, data, &piped, stable, wcc);
}

absl::StatusOr<WriteResult> PosixBackend::WriteFrom(const Cred& cred, const FileHandle& fh,
                                                    uint64_t offset, absl::Span<const uint8_t> data,
                                                    const PipedBytes* piped, StableHow stable,
                                                    Wcc* wcc) {
  absl::StatusOr<Impl::NodePtr> node = impl_->Resolve(fh);
  if (!node.ok()) return node.status();
  const Node& n = **node;
  if (offset > static_cast<uint64_t>(std::numeric_limits<off_t>::max()) - data.size()) {
    return ErrnoError(EFBIG, "offset too large");
  }
  // Read the verifier before writing: if a sync fails after this write, the
  // client sees a different verifier at COMMIT and resends.
  WriteResult result;
  uint64_t verf = impl_->verifier();
  std::memcpy(result.verifier.data(), &verf, sizeof(verf));
  int fd = -1;
  std::shared_ptr<IoFds> keep;
  size_t done = 0;
  {
    absl::MutexLock lock(&impl_->Stripe(n));
    absl::StatusOr<struct stat> before = impl_->Stat(n);
    if (!before.ok()) return before.status();
    if (wcc) wcc->before = ToWcc(*before);
    absl::Status status;
    if (S_ISDIR(before->st_mode)) {
      status = ErrnoError(EISDIR, "write to a directory");
    } else if (!S_ISREG(before->st_mode)) {
      status = ErrnoError(EINVAL, "write to a special file");
    } else {
      auto io = impl_->IoFd(n, /*write=*/true);
      if (!io.ok()) {
        status = io.status();
      } else {
        keep = io->first;
        fd = io->second;
        ScopedCredentials creds(cred);
        status = creds.status();
        if (status.ok()) status = impl_->CheckIo(cred, n, *before, /*write=*/true);
        while (status.ok() && done < data.size()) {
          ssize_t put = PutSome(fd, offset, data, piped, done);
          if (put <= 0) {
            if (put < 0 && errno == EINTR) continue;
            // (0 only from an emptied pipe, which the transport never hands over)
            if (done == 0) status = put < 0 ? Errno("write") : ErrnoError(EIO, "write: no data");
            break;  // a short write is reported as such
          }
          done += static_cast<size_t>(put);
        }
      }
    }
    if (wcc) wcc->after = impl_->AttrsOrNone(n);
    if (!status.ok()) return status;
  }
  result.count = static_cast<uint32_t>(done);
  result.committed = StableHow::kUnstable;
  if (stable != StableHow::kUnstable) {
    absl::Status synced =
        SyncGathered(keep->sync, fd, &impl_->sync_counters, [this] { impl_->RotateVerifier(); });
    if (!synced.ok()) return synced;
    result.committed = StableHow::kFileSync;  // a full fsync was done
  }
  return result;
}

absl::StatusOr<Verifier> PosixBackend::Commit(const Cred& cred, const FileHandle& fh,
                                              uint64_t offset, uint32_t count, Wcc* wcc) {
  absl::StatusOr<Impl::NodePtr> node = impl_->Resolve(fh);
  if (!node.ok()) return node.status();
  const Node& n = **node;
  absl::StatusOr<struct stat> st = impl_->Stat(n);
  if (!st.ok()) return st.status();
  if (!S_ISREG(st->st_mode)) {
    if (wcc) wcc->after = impl_->ToAttributes(*st, *n.exp);
    return ErrnoError(S_ISDIR(st->st_mode) ? EISDIR : EINVAL, "commit of a non-regular file");
  }
  Verifier out;
  uint64_t verf = impl_->verifier();
  std::memcpy(out.data(), &verf, sizeof(verf));
  // Syncing the descriptor writes went through sees their writeback errors
  // (an evicted descriptor's unreported errors are lost: a fresh descriptor
  // only sees errors that happen after it was opened).
  auto io = impl_->IoFd(n, /*write=*/true);
  if (!io.ok()) io = impl_->IoFd(n, /*write=*/false);  // e.g. read-only file system
  if (!io.ok()) return io.status();
  // No pre-op attributes: the sync runs unlocked, so they could be stale.
  // The whole file is synced whatever the range (fsync has no cheaper
  // durable range variant).
  absl::Status synced = SyncGathered(io->first->sync, io->second, &impl_->sync_counters,
                                     [this] { impl_->RotateVerifier(); });
  if (wcc) wcc->after = impl_->AttrsOrNone(n);
  if (!synced.ok()) return synced;
  return out;
}

}  // namespace nfs3d::vfs
