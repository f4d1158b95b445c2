// CephfsBackend: file data (READ, WRITE, COMMIT) and NLM locks.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>

#include <cerrno>

#include "common/log.h"
#include "vfs/backend_helpers.h"
#include "vfs/cephfs/cephfs_acl.h"
#include "vfs/cephfs/cephfs_impl.h"
#include "vfs/cephfs/cephfs_quota.h"
#include "vfs/posix_permission.h"

namespace nfs3d::vfs {

absl::StatusOr<ReadResult> CephfsBackend::Read(const Cred& cred, const FileHandle& fh,
                                               uint64_t offset, uint32_t count, uint8_t* buf) {
  const std::shared_ptr<Impl> impl = ImplFor(fh);
  absl::StatusOr<Impl::Node> node = impl->Resolve(fh);
  if (!node.ok()) return node.status();
  absl::StatusOr<Attributes> a = impl->Attrs(*node);
  if (!a.ok()) return a.status();
  if (a->type == FileType::kDirectory) return ErrnoError(EISDIR, "read of a directory");
  if (a->type != FileType::kRegular) return ErrnoError(EINVAL, "read of a special file");
  absl::StatusOr<bool> may = impl->MayIo(cred, *node, *a, false);
  if (!may.ok()) return may.status();
  if (!*may) return ErrnoError(EACCES, "read");
  absl::StatusOr<std::shared_ptr<Impl::OpenFile>> file = impl->File(*node);
  if (!file.ok()) return file.status();
  int64_t n = ceph_ll_read(impl->cm(), (*file)->fh, static_cast<int64_t>(offset), count,
                           reinterpret_cast<char*>(buf));
  if (n < 0) return CephError(static_cast<int>(n), "read");
  ReadResult result;
  result.count = static_cast<uint32_t>(n);
  result.attributes = impl->AttrsOrNone(*node);
  const uint64_t size = result.attributes ? result.attributes->size : a->size;
  result.eof = ReadReachedEnd(offset, count, result.count, size);
  return result;
}

absl::StatusOr<WriteResult> CephfsBackend::Write(const Cred& cred, const FileHandle& fh,
                                                 uint64_t offset, absl::Span<const uint8_t> data,
                                                 StableHow stable, Wcc* wcc) {
  const std::shared_ptr<Impl> impl = ImplFor(fh);
  absl::StatusOr<Impl::Node> node = impl->Resolve(fh);
  if (!node.ok()) return node.status();
  absl::StatusOr<Attributes> a = impl->Attrs(*node);
  if (!a.ok()) return a.status();
  if (wcc) wcc->before = ToWcc(*a);
  if (a->type == FileType::kDirectory) return ErrnoError(EISDIR, "write to a directory");
  if (a->type != FileType::kRegular) return ErrnoError(EINVAL, "write to a special file");
  if (InSnapshot(node->snap)) return RefuseInSnapshot(node->snap, "write");
  absl::StatusOr<bool> may = impl->MayIo(cred, *node, *a, true);
  if (!may.ok()) return may.status();
  if (!*may) return ErrnoError(EACCES, "write");
  absl::StatusOr<std::shared_ptr<Impl::OpenFile>> file = impl->File(*node);
  if (!file.ok()) return file.status();
  WriteResult result;
  // Read before writing: if a sync fails after this write, the client sees
  // another verifier at COMMIT and resends.
  result.verifier = ToVerifier(impl->verifier());
  // A WRITE of no bytes is legal; libcephfs 16.2 aborts the process on it
  // (ceph_assert in Striper::file_to_extents), so it never gets one.
  int n = data.empty() ? 0
                       : ceph_ll_write(impl->cm(), (*file)->fh, static_cast<int64_t>(offset),
                                       data.size(), reinterpret_cast<const char*>(data.data()));
  absl::Status status = n < 0 ? CephError(n, "write") : absl::OkStatus();
  if (status.ok()) {
    result.count = static_cast<uint32_t>(n);
    result.committed = StableHow::kUnstable;
    if (n > 0) status = impl->DropPrivileges(cred, node->inode.get(), *a);
    if (status.ok() && stable != StableHow::kUnstable) {
      status = impl->Sync(**file);
      result.committed = StableHow::kFileSync;
    }
  }
  if (wcc) wcc->after = impl->AttrsOrNone(*node);
  if (!status.ok()) return status;
  return result;
}

absl::StatusOr<Verifier> CephfsBackend::Commit(const Cred& cred, const FileHandle& fh,
                                               uint64_t offset, uint32_t count, Wcc* wcc) {
  const std::shared_ptr<Impl> impl = ImplFor(fh);
  (void)cred, (void)offset, (void)count;  // a whole-file fsync answers every range
  absl::StatusOr<Impl::Node> node = impl->Resolve(fh);
  if (!node.ok()) return node.status();
  absl::StatusOr<Attributes> a = impl->Attrs(*node);
  if (!a.ok()) return a.status();
  if (a->type != FileType::kRegular) {
    if (wcc) wcc->after = *a;
    return ErrnoError(a->type == FileType::kDirectory ? EISDIR : EINVAL, "commit");
  }
  // Read before syncing: a sync failing meanwhile changes the verifier, and
  // the client must then resend.
  const Verifier out = ToVerifier(impl->verifier());
  // No pre-op attributes: writes may land while the sync runs.
  absl::StatusOr<std::shared_ptr<Impl::OpenFile>> file = impl->File(*node);
  absl::Status st = file.ok() ? impl->Sync(**file) : file.status();
  if (wcc) wcc->after = impl->AttrsOrNone(*node);
  if (!st.ok()) return st;
  return out;
}

Verifier CephfsBackend::WriteVerifier() const { return ToVerifier(verifier_.load()); }

void CephfsBackend::ChangeWriteVerifier() { CurrentImpl()->RotateVerifier("sync outcome unknown"); }

namespace {

constexpr uint64_t kMaxOffset = static_cast<uint64_t>(INT64_MAX);

struct flock ToFlock(uint64_t first, uint64_t last, short type) {
  struct flock fl = {};
  fl.l_type = type;
  fl.l_whence = SEEK_SET;
  fl.l_start = static_cast<off_t>(std::min(first, kMaxOffset));
  fl.l_len = last >= kMaxOffset ? 0 : static_cast<off_t>(last - first + 1);
  return fl;
}

}  // namespace

absl::StatusOr<bool> CephfsBackend::SetLock(const FileHandle& fh, uint64_t owner, uint64_t first,
                                            uint64_t last, short type) {
  const std::shared_ptr<Impl> impl = ImplFor(fh);
  absl::StatusOr<Impl::Node> node = impl->Resolve(fh);
  if (!node.ok()) return node.status();
  absl::StatusOr<std::shared_ptr<Impl::OpenFile>> file = impl->File(*node);
  if (!file.ok()) return file.status();
  struct flock fl = ToFlock(first, last, type);
  int rc = ceph_ll_setlk(impl->cm(), (*file)->fh, &fl, owner, 0);
  if (rc == -EAGAIN || rc == -EACCES || rc == -EWOULDBLOCK) return false;
  if (rc < 0) return CephError(rc, "setlk");
  return true;
}

absl::StatusOr<std::optional<CephfsBackend::HeldLock>> CephfsBackend::TestLock(
    const FileHandle& fh, uint64_t owner, uint64_t first, uint64_t last, bool exclusive) {
  const std::shared_ptr<Impl> impl = ImplFor(fh);
  absl::StatusOr<Impl::Node> node = impl->Resolve(fh);
  if (!node.ok()) return node.status();
  absl::StatusOr<std::shared_ptr<Impl::OpenFile>> file = impl->File(*node);
  if (!file.ok()) return file.status();
  struct flock fl = ToFlock(first, last, exclusive ? F_WRLCK : F_RDLCK);
  int rc = ceph_ll_getlk(impl->cm(), (*file)->fh, &fl, owner);
  if (rc < 0) return CephError(rc, "getlk");
  if (fl.l_type == F_UNLCK) return std::optional<HeldLock>();
  HeldLock held;
  held.first = static_cast<uint64_t>(fl.l_start);
  held.last = fl.l_len == 0 ? UINT64_MAX : static_cast<uint64_t>(fl.l_start + fl.l_len - 1);
  held.exclusive = fl.l_type == F_WRLCK;
  held.pid = fl.l_pid;
  return std::optional<HeldLock>(held);
}

}  // namespace nfs3d::vfs
