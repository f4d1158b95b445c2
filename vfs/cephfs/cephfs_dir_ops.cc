// CephfsBackend: directory changes (CREATE ... LINK) and READDIR.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>

#include <cerrno>

#include "common/log.h"
#include "vfs/backend_helpers.h"
#include "vfs/cephfs/cephfs_acl.h"
#include "vfs/cephfs/cephfs_exclusive_create.h"
#include "vfs/cephfs/cephfs_impl.h"
#include "vfs/cephfs/cephfs_quota.h"
#include "vfs/posix_permission.h"

namespace nfs3d::vfs {

absl::StatusOr<CreateResult> CephfsBackend::Create(const Cred& cred, const FileHandle& dir,
                                                   std::string_view name, CreateMode mode,
                                                   const SetAttributes& attrs,
                                                   const Verifier& verifier, Wcc* dir_wcc) {
  // EXCLUSIVE: the attributes come with the SETATTR the client sends next.
  // Otherwise the mode goes to the create and the rest after it; a size of
  // 0 matters only for an existing file (UNCHECKED).
  SetAttributes rest = attrs;
  if (attrs.size == 0 && mode != CreateMode::kUnchecked) rest.size.reset();
  const SetAttributes* apply = mode == CreateMode::kExclusive ? nullptr : &rest;
  const std::shared_ptr<Impl> impl = ImplFor(dir);
  ceph_mount_info* cm = impl->cm();
  return impl->MakeEntry(
      cred, dir, name, dir_wcc, "create", apply, /*regular=*/true,
      [&](Inode* parent, const char* n, UserPerm* perm, Inode** in) {
        if (mode == CreateMode::kExclusive) {
          return CreateExclusive(cm, parent, n, verifier, cred.uid, perm, in);
        }
        // Always O_EXCL: an existing file is never opened (an open needs read
        // or write permission that the caller may lack, e.g. on a file it may
        // only write, and UNCHECKED asks for neither).
        const int flags = O_CREAT | O_EXCL | O_RDWR;
        const mode_t perms = attrs.mode.value_or(0600);
        Fh* fh = nullptr;
        struct ceph_statx stx;
        int rc = ceph_ll_create(cm, parent, n, perms, flags, in, &fh, &stx, kWantAttrs, 0, perm);
        if (rc == -EEXIST && mode == CreateMode::kUnchecked) {
          // UNCHECKED on an existing regular file applies only the size (as
          // knfsd does): Linux 6.12 opens with O_TRUNC this way. Finish
          // reads rest after this returns.
          rc = ceph_ll_lookup(cm, parent, n, in, &stx, kWantAttrs, AT_SYMLINK_NOFOLLOW, perm);
          if (rc < 0) return rc;
          if (!S_ISREG(stx.stx_mode)) {
            ceph_ll_put(cm, *in);
            return -EEXIST;
          }
          rest = SetAttributes{};
          rest.size = attrs.size;
          return 0;
        }
        if (rc < 0) return rc;
        if (fh) ceph_ll_close(cm, fh);
        return 0;
      });
}

absl::StatusOr<CreateResult> CephfsBackend::Mkdir(const Cred& cred, const FileHandle& dir,
                                                  std::string_view name, const SetAttributes& attrs,
                                                  Wcc* dir_wcc) {
  const std::shared_ptr<Impl> impl = ImplFor(dir);
  ceph_mount_info* cm = impl->cm();
  return impl->MakeEntry(cred, dir, name, dir_wcc, "mkdir", &attrs, /*regular=*/false,
                         [&](Inode* parent, const char* n, UserPerm* perm, Inode** in) {
                           struct ceph_statx stx;
                           return ceph_ll_mkdir(cm, parent, n, attrs.mode.value_or(0700), in, &stx,
                                                kWantAttrs, 0, perm);
                         });
}

absl::StatusOr<CreateResult> CephfsBackend::Symlink(const Cred& cred, const FileHandle& dir,
                                                    std::string_view name, std::string_view target,
                                                    const SetAttributes& attrs, Wcc* dir_wcc) {
  const std::shared_ptr<Impl> impl = ImplFor(dir);
  if (target.empty() || target.find('\0') != std::string_view::npos) {
    return ErrnoError(EINVAL, "symlink target");
  }
  const std::string t(target);
  SetAttributes rest = attrs;
  rest.mode.reset();  // symlinks have no mode of their own
  ceph_mount_info* cm = impl->cm();
  return impl->MakeEntry(cred, dir, name, dir_wcc, "symlink", &rest, /*regular=*/false,
                         [&](Inode* parent, const char* n, UserPerm* perm, Inode** in) {
                           struct ceph_statx stx;
                           return ceph_ll_symlink(cm, parent, n, t.c_str(), in, &stx, kWantAttrs, 0,
                                                  perm);
                         });
}

absl::StatusOr<CreateResult> CephfsBackend::Mknod(const Cred& cred, const FileHandle& dir,
                                                  std::string_view name, FileType type,
                                                  uint32_t major_num, uint32_t minor_num,
                                                  const SetAttributes& attrs, Wcc* dir_wcc) {
  const std::shared_ptr<Impl> impl = ImplFor(dir);
  mode_t kind;
  switch (type) {
    case FileType::kChar:
      kind = S_IFCHR;
      break;
    case FileType::kBlock:
      kind = S_IFBLK;
      break;
    case FileType::kSocket:
      kind = S_IFSOCK;
      break;
    case FileType::kFifo:
      kind = S_IFIFO;
      break;
    default:
      return ErrnoError(kErrBadType, "mknod of an unsupported type");
  }
  const dev_t rdev = (kind == S_IFCHR || kind == S_IFBLK) ? makedev(major_num, minor_num) : 0;
  ceph_mount_info* cm = impl->cm();
  return impl->MakeEntry(cred, dir, name, dir_wcc, "mknod", &attrs, /*regular=*/false,
                         [&](Inode* parent, const char* n, UserPerm* perm, Inode** in) {
                           struct ceph_statx stx;
                           return ceph_ll_mknod(cm, parent, n, kind | attrs.mode.value_or(0600),
                                                rdev, in, &stx, kWantAttrs, 0, perm);
                         });
}

absl::Status CephfsBackend::Remove(const Cred& cred, const FileHandle& dir, std::string_view name,
                                   Wcc* dir_wcc) {
  const std::shared_ptr<Impl> impl = ImplFor(dir);
  absl::StatusOr<Impl::Node> d = impl->Resolve(dir);
  if (!d.ok()) return d.status();
  absl::Status valid = CheckName(name);
  if (valid.ok()) valid = RefuseInSnapshot(d->snap, "remove");
  if (!valid.ok()) return valid;
  const std::string n(name);
  Perm perm(cred);
  return impl->DirOp(*d, dir_wcc, [&]() -> absl::Status {
    Inode* in = nullptr;
    struct ceph_statx stx;
    int rc = ceph_ll_lookup(impl->cm(), d->inode.get(), n.c_str(), &in, &stx, kWantAttrs,
                            AT_SYMLINK_NOFOLLOW, perm.get());
    if (rc < 0) return CephError(rc, "remove lookup");
    ceph_ll_put(impl->cm(), in);
    if (S_ISDIR(stx.stx_mode)) return ErrnoError(EISDIR, "remove of a directory");
    rc = ceph_ll_unlink(impl->cm(), d->inode.get(), n.c_str(), perm.get());
    if (rc < 0) return CephError(rc, "unlink");
    if (stx.stx_nlink <= 1) impl->ForgetFile(stx.stx_ino);
    return absl::OkStatus();
  });
}

absl::Status CephfsBackend::Rmdir(const Cred& cred, const FileHandle& dir, std::string_view name,
                                  Wcc* dir_wcc) {
  const std::shared_ptr<Impl> impl = ImplFor(dir);
  absl::StatusOr<Impl::Node> d = impl->Resolve(dir);
  if (!d.ok()) return d.status();
  if (name == ".") return ErrnoError(EINVAL, "rmdir .");
  if (name == "..") return ErrnoError(ENOTEMPTY, "rmdir ..");
  absl::Status valid = CheckName(name);
  if (valid.ok()) valid = RefuseInSnapshot(d->snap, "rmdir");
  if (!valid.ok()) return valid;
  const std::string n(name);
  Perm perm(cred);
  return impl->DirOp(*d, dir_wcc, [&]() -> absl::Status {
    int rc = ceph_ll_rmdir(impl->cm(), d->inode.get(), n.c_str(), perm.get());
    return rc < 0 ? CephError(rc, "rmdir") : absl::OkStatus();
  });
}

absl::Status CephfsBackend::Rename(const Cred& cred, const FileHandle& from_dir,
                                   std::string_view from_name, const FileHandle& to_dir,
                                   std::string_view to_name, Wcc* from_wcc, Wcc* to_wcc) {
  const std::shared_ptr<Impl> impl = ImplFor(from_dir);
  if (ImplFor(to_dir) != impl) return ErrnoError(EXDEV, "rename across exports");
  absl::StatusOr<Impl::Node> from = impl->Resolve(from_dir);
  if (!from.ok()) return from.status();
  absl::StatusOr<Impl::Node> to = impl->Resolve(to_dir);
  if (!to.ok()) return to.status();
  if (from->exp != to->exp) return ErrnoError(EXDEV, "rename across exports");
  absl::Status valid = CheckName(from_name);
  if (valid.ok()) valid = CheckName(to_name);
  if (valid.ok()) valid = RefuseInSnapshot(from->snap, "rename");
  if (valid.ok()) valid = RefuseInSnapshot(to->snap, "rename");
  if (!valid.ok()) return valid;
  if (IsDotName(from_name) || IsDotName(to_name)) {
    return ErrnoError(EINVAL, "rename of . or ..");
  }
  const std::string f(from_name), t(to_name);
  Perm perm(cred);
  std::optional<Attributes> to_before = impl->AttrsOrNone(*to);
  if (to_wcc && to_before) to_wcc->before = ToWcc(*to_before);
  absl::Status st = impl->DirOp(*from, from_wcc, [&]() -> absl::Status {
    int rc = ceph_ll_rename(impl->cm(), from->inode.get(), f.c_str(), to->inode.get(), t.c_str(),
                            perm.get());
    if (rc < 0) return CephError(rc, "rename");
    // A directory moved to another parent changes both parents' link counts.
    if (from->ino == to->ino) return absl::OkStatus();
    Inode* moved = nullptr;
    struct ceph_statx stx;
    rc = ceph_ll_lookup(impl->cm(), to->inode.get(), t.c_str(), &moved, &stx, CEPH_STATX_MODE,
                        AT_SYMLINK_NOFOLLOW, ceph_mount_perms(impl->cm()));
    if (rc < 0) return absl::OkStatus();  // renamed; only the link counts may lag
    ceph_ll_put(impl->cm(), moved);
    if (!S_ISDIR(stx.stx_mode)) return absl::OkStatus();
    absl::Status refreshed = impl->RefreshDirectory(from->inode.get());
    if (refreshed.ok()) refreshed = impl->RefreshDirectory(to->inode.get());
    if (!refreshed.ok()) {
      NFS3D_LOG_WARNING("%s: refreshing directories after a rename: %s", impl->cluster().c_str(),
                        std::string(refreshed.message()).c_str());
    }
    return absl::OkStatus();
  });
  if (to_wcc) to_wcc->after = impl->AttrsOrNone(*to);
  return st;
}

absl::Status CephfsBackend::Link(const Cred& cred, const FileHandle& fh, const FileHandle& dir,
                                 std::string_view name, std::optional<Attributes>* file_attributes,
                                 Wcc* dir_wcc) {
  const std::shared_ptr<Impl> impl = ImplFor(fh);
  if (ImplFor(dir) != impl) return ErrnoError(EXDEV, "link across exports");
  absl::StatusOr<Impl::Node> node = impl->Resolve(fh);
  if (!node.ok()) return node.status();
  absl::Status st = impl->NewEntry(
      cred, dir, name, dir_wcc, [&](const Impl::Node& d, const char* n, UserPerm* perm) {
        if (node->exp != d.exp) return ErrnoError(EXDEV, "link across exports");
        absl::Status writable = RefuseInSnapshot(node->snap, "link");
        if (!writable.ok()) return writable;
        int rc = ceph_ll_link(impl->cm(), node->inode.get(), d.inode.get(), n, perm);
        return rc < 0 ? CephError(rc, "link") : absl::OkStatus();
      });
  if (file_attributes) *file_attributes = impl->AttrsOrNone(*node);
  return st;
}

absl::Status CephfsBackend::ReadDir(const Cred& cred, const FileHandle& dir, uint64_t cookie,
                                    Verifier* verifier,
                                    const std::function<bool(const DirEntry&)>& emit, bool* eof,
                                    std::optional<Attributes>* dir_attributes) {
  const std::shared_ptr<Impl> impl = ImplFor(dir);
  *eof = false;
  absl::StatusOr<Impl::Node> d = impl->Resolve(dir);
  if (!d.ok()) return d.status();
  std::optional<Attributes> a = impl->AttrsOrNone(*d);
  if (dir_attributes) *dir_attributes = a;
  if (a && a->type != FileType::kDirectory) return ErrnoError(ENOTDIR, "readdir");
  // Constant verifier; any verifier the client sends is accepted.
  if (verifier) verifier->fill(0);
  Perm perm(cred);
  ceph_dir_result* dirp = nullptr;
  int rc = ceph_ll_opendir(impl->cm(), d->inode.get(), &dirp, perm.get());
  if (rc < 0) return CephError(rc, "opendir");
  struct Closer {
    ceph_mount_info* cm;
    ceph_dir_result* dirp;
    ~Closer() { ceph_ll_releasedir(cm, dirp); }
  } closer{impl->cm(), dirp};
  if (cookie != 0) {
    if (cookie > static_cast<uint64_t>(INT64_MAX)) return ErrnoError(kErrBadCookie, "cookie");
    ceph_seekdir(impl->cm(), dirp, static_cast<int64_t>(cookie));
  }
  while (true) {
    struct dirent de;
    rc = ceph_readdir_r(impl->cm(), dirp, &de);
    if (rc < 0) return CephError(rc, "readdir");
    if (rc == 0) break;
    DirEntry entry;
    entry.name = de.d_name;
    entry.fileid = de.d_ino;
    if (entry.name == "." || (entry.name == ".." && d->is_root())) entry.fileid = d->ino;
    entry.cookie = static_cast<uint64_t>(ceph_telldir(impl->cm(), dirp));
    if (!emit(entry)) return absl::OkStatus();
  }
  *eof = true;
  return absl::OkStatus();
}

}  // namespace nfs3d::vfs
