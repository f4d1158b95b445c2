// CephfsBackend: attributes, lookup, permissions, FSSTAT/PATHCONF, ACLs.
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

absl::StatusOr<Attributes> CephfsBackend::GetAttr(const Cred& cred, const FileHandle& fh) {
  const std::shared_ptr<Impl> impl = ImplFor(fh);
  (void)cred;  // attributes need no permission
  absl::StatusOr<Impl::Node> node = impl->Resolve(fh);
  if (!node.ok()) return node.status();
  return impl->Attrs(*node);
}

absl::Status CephfsBackend::SetAttr(const Cred& cred, const FileHandle& fh,
                                    const SetAttributes& attrs, std::optional<Time> guard_ctime,
                                    Wcc* wcc) {
  const std::shared_ptr<Impl> impl = ImplFor(fh);
  absl::StatusOr<Impl::Node> node = impl->Resolve(fh);
  if (!node.ok()) return node.status();
  absl::StatusOr<Attributes> before = impl->Attrs(*node);
  if (!before.ok()) return before.status();
  if (wcc) wcc->before = ToWcc(*before);
  absl::Status result;
  if (guard_ctime && (guard_ctime->seconds != before->ctime.seconds ||
                      guard_ctime->nseconds != before->ctime.nseconds)) {
    result = ErrnoError(kErrNotSync, "guard ctime mismatch");
  } else if (attrs.size && before->type == FileType::kDirectory) {
    result = ErrnoError(EISDIR, "truncate of a directory");
  } else if (InSnapshot(node->snap)) {
    result = RefuseInSnapshot(node->snap, "setattr");
  } else {
    // A size change is a write: knfsd's owner override applies, so it is
    // checked here and made with the mount's identity; the rest as cred.
    SetAttributes rest = attrs;
    if (attrs.size) {
      rest.size.reset();
      absl::StatusOr<bool> may = impl->MayIo(cred, *node, *before, true);
      if (!may.ok()) {
        result = may.status();
      } else if (!*may) {
        result = ErrnoError(EACCES, "truncate");
      } else {
        SetAttributes size;
        size.size = attrs.size;
        result = impl->ApplyAttrs(Cred{0, 0, {}}, node->inode.get(), size);
      }
    }
    if (result.ok()) result = impl->ApplyAttrs(cred, node->inode.get(), rest);
    if (result.ok() && attrs.size) {
      absl::StatusOr<Attributes> now = impl->Attrs(*node);
      result = now.ok() ? impl->DropPrivileges(cred, node->inode.get(), *now) : now.status();
    }
    if (result.ok() && (attrs.uid || attrs.gid) && !attrs.mode) {
      result = impl->SetModeAfterChown(cred, *node, *before);
    }
  }
  if (wcc) wcc->after = impl->AttrsOrNone(*node);
  return result;
}

absl::StatusOr<LookupResult> CephfsBackend::Lookup(const Cred& cred, const FileHandle& dir,
                                                   std::string_view name,
                                                   std::optional<Attributes>* dir_attributes) {
  const std::shared_ptr<Impl> impl = ImplFor(dir);
  absl::StatusOr<Impl::Node> d = impl->Resolve(dir);
  if (!d.ok()) return d.status();
  if (dir_attributes) *dir_attributes = impl->AttrsOrNone(*d);
  absl::Status valid = CheckName(name);
  if (!valid.ok()) return valid;
  Perm perm(cred);
  const bool self = name == "." || (name == ".." && d->is_root());
  Inode* in = nullptr;
  struct ceph_statx stx;
  int rc = ceph_ll_lookup(impl->cm(), d->inode.get(), self ? "." : std::string(name).c_str(), &in,
                          &stx, kWantAttrs, AT_SYMLINK_NOFOLLOW, perm.get());
  if (rc < 0) return CephError(rc, "lookup");
  Impl::InodeRef ref(impl->cm(), in);
  if (self) return LookupResult{d->handle, impl->ToAttributes(stx, *d->exp)};
  if (name == ".." && d->snap == kCephSnapDir) {
    // libcephfs answers the file system root; a .snap belongs to its directory.
    absl::StatusOr<FileHandle> live = impl->MakeHandle(*d->exp, d->ino, kNoSnap);
    if (!live.ok()) return live.status();
    absl::StatusOr<Impl::Node> dir_node = impl->Resolve(*live);
    if (!dir_node.ok()) return dir_node.status();
    absl::StatusOr<Attributes> attrs = impl->Attrs(*dir_node);
    if (!attrs.ok()) return attrs.status();
    return LookupResult{*live, *attrs};
  }
  absl::StatusOr<FileHandle> fh = impl->MakeHandle(*d->exp, stx.stx_ino, SnapOf(stx));
  if (!fh.ok()) return fh.status();
  return LookupResult{*fh, impl->ToAttributes(stx, *d->exp)};
}

absl::StatusOr<AccessResult> CephfsBackend::Access(const Cred& cred, const FileHandle& fh,
                                                   uint32_t requested,
                                                   std::optional<Attributes>* attributes) {
  const std::shared_ptr<Impl> impl = ImplFor(fh);
  absl::StatusOr<Impl::Node> node = impl->Resolve(fh);
  if (!node.ok()) return node.status();
  absl::StatusOr<Attributes> a = impl->Attrs(*node);
  if (!a.ok()) return a.status();
  if (attributes) *attributes = *a;
  absl::StatusOr<Acl> acl = impl->AclToCheck(cred, *node, *a);
  if (!acl.ok()) return acl.status();
  const uint32_t bits = PermittedBits(cred, *a, *acl);
  uint32_t granted = AccessBitsFor(a->type, bits);
  if (InSnapshot(node->snap)) granted &= kSnapshotAccessMask;
  return AccessResult{granted & requested};
}

absl::StatusOr<std::string> CephfsBackend::Readlink(const Cred& cred, const FileHandle& fh,
                                                    std::optional<Attributes>* attributes) {
  const std::shared_ptr<Impl> impl = ImplFor(fh);
  absl::StatusOr<Impl::Node> node = impl->Resolve(fh);
  if (!node.ok()) return node.status();
  std::optional<Attributes> a = impl->AttrsOrNone(*node);
  if (attributes) *attributes = a;
  if (a && a->type != FileType::kSymlink) return ErrnoError(EINVAL, "not a symlink");
  std::string target(4096, '\0');
  Perm perm(cred);
  int rc =
      ceph_ll_readlink(impl->cm(), node->inode.get(), target.data(), target.size(), perm.get());
  if (rc < 0) return CephError(rc, "readlink");
  target.resize(static_cast<size_t>(rc));
  return target;
}

absl::StatusOr<FsStat> CephfsBackend::StatFs(const Cred& cred, const FileHandle& fh,
                                             std::optional<Attributes>* attributes) {
  const std::shared_ptr<Impl> impl = ImplFor(fh);
  (void)cred;
  absl::StatusOr<Impl::Node> node = impl->Resolve(fh);
  if (!node.ok()) return node.status();
  std::optional<Attributes> a = impl->AttrsOrNone(*node);
  if (attributes) *attributes = a;
  struct statvfs sv;
  int rc = ceph_ll_statfs(impl->cm(), node->inode.get(), &sv);
  if (rc < 0) return CephError(rc, "statfs");
  // Quotas apply to the directory tree: for a file or a snapshot, the
  // export root's limits.
  const bool from_here = a && a->type == FileType::kDirectory && !InSnapshot(node->snap);
  absl::StatusOr<Impl::Node> start = from_here ? std::move(node) : impl->Root(node->exp->id);
  if (!start.ok()) return start.status();
  absl::StatusOr<CephQuota> quota =
      FindCephQuota(impl->cm(), start->inode.get(), start->exp->root_ino);
  if (!quota.ok()) {
    return CephError(-ErrnoOf(quota.status()), std::string(quota.status().message()));
  }
  return ApplyCephQuota(ToFsStat(sv), *quota);
}

absl::StatusOr<std::optional<Quota>> CephfsBackend::GetQuota(uint32_t export_id, QuotaKind kind,
                                                             uint32_t id) {
  (void)kind, (void)id;  // a directory's quota limits everyone alike
  const std::shared_ptr<Impl> impl = ImplForExport(export_id);
  absl::StatusOr<Impl::Node> root = impl->Root(export_id);
  if (!root.ok()) return root.status();
  absl::StatusOr<CephQuota> quota = DirectoryCephQuota(impl->cm(), root->inode.get());
  if (!quota.ok()) {
    return CephError(-ErrnoOf(quota.status()), std::string(quota.status().message()));
  }
  if (quota->max_bytes == 0 && quota->max_files == 0) return std::optional<Quota>();
  Quota out;
  out.bytes_hard = quota->max_bytes;
  out.bytes_used = quota->used_bytes;
  out.files_hard = quota->max_files;
  out.files_used = quota->used_files;
  return std::optional<Quota>(out);
}

absl::StatusOr<PathConf> CephfsBackend::GetPathConf(const Cred& cred, const FileHandle& fh,
                                                    std::optional<Attributes>* attributes) {
  const std::shared_ptr<Impl> impl = ImplFor(fh);
  (void)cred;
  absl::StatusOr<Impl::Node> node = impl->Resolve(fh);
  if (!node.ok()) return node.status();
  if (attributes) *attributes = impl->AttrsOrNone(*node);
  return PathConf{.link_max = 0xffffffffu, .name_max = 255};
}

absl::StatusOr<AclPair> CephfsBackend::GetAcl(const Cred& cred, const FileHandle& fh,
                                              std::optional<Attributes>* attributes) {
  const std::shared_ptr<Impl> impl = ImplFor(fh);
  (void)cred;  // reading ACLs needs no permission, as GETATTR
  absl::StatusOr<Impl::Node> node = impl->Resolve(fh);
  if (!node.ok()) return node.status();
  absl::StatusOr<Attributes> a = impl->Attrs(*node);
  if (!a.ok()) return a.status();
  if (attributes) *attributes = *a;
  AclPair acls;
  if (a->type != FileType::kSymlink) {
    absl::StatusOr<Acl> access = ReadCephAcl(impl->cm(), node->inode.get(), kAclAccessXattr);
    if (!access.ok()) return access.status();
    acls.access = std::move(*access);
    if (a->type == FileType::kDirectory) {
      absl::StatusOr<Acl> default_acl =
          ReadCephAcl(impl->cm(), node->inode.get(), kAclDefaultXattr);
      if (!default_acl.ok()) return default_acl.status();
      acls.default_acl = std::move(*default_acl);
    }
  }
  if (acls.access.empty()) acls.access = AclFromMode(a->mode);
  return acls;
}

absl::Status CephfsBackend::SetAcl(const Cred& cred, const FileHandle& fh, const Acl* access,
                                   const Acl* default_acl, std::optional<Attributes>* attributes) {
  const std::shared_ptr<Impl> impl = ImplFor(fh);
  absl::StatusOr<Impl::Node> node = impl->Resolve(fh);
  if (!node.ok()) return node.status();
  absl::StatusOr<Attributes> a = impl->Attrs(*node);
  if (!a.ok()) return a.status();
  absl::Status result;
  if (a->type == FileType::kSymlink) {
    result = ErrnoError(EOPNOTSUPP, "symlinks have no ACLs");
  } else if (default_acl != nullptr && !default_acl->empty() && a->type != FileType::kDirectory) {
    result = ErrnoError(EACCES, "default ACL on a non-directory");
  } else if (InSnapshot(node->snap)) {
    result = RefuseInSnapshot(node->snap, "setacl");
  } else {
    Perm perm(cred);
    if (access != nullptr) {
      result = WriteCephAcl(impl->cm(), node->inode.get(), kAclAccessXattr, *access, perm.get());
    }
    if (result.ok() && default_acl != nullptr && a->type == FileType::kDirectory) {
      result =
          WriteCephAcl(impl->cm(), node->inode.get(), kAclDefaultXattr, *default_acl, perm.get());
    }
  }
  if (attributes) *attributes = impl->AttrsOrNone(*node);
  return result;
}

}  // namespace nfs3d::vfs
