// PosixBackend: construction, exports, and the operations that only read
// (GETATTR, LOOKUP, ACCESS, ACLs, READLINK, FSSTAT, PATHCONF) plus SETATTR.

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

absl::StatusOr<std::unique_ptr<PosixBackend>> PosixBackend::Create(
    const PosixBackendOptions& options) {
  absl::StatusOr<std::unique_ptr<StateDir>> dir = StateDir::Open(options.state_dir);
  if (!dir.ok()) return dir.status();
  absl::StatusOr<HandleSecret> secret = (*dir)->LoadOrCreateSecret();
  if (!secret.ok()) return secret.status();
  // Room for the caches: each node holds one fd, each I/O entry up to two.
  size_t handle_cache = options.handle_cache_size;
  size_t io_cache = options.io_cache_size;
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
    size_t wanted = handle_cache + 2 * io_cache + 1024;
    if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < wanted) {
      rl.rlim_cur = rl.rlim_max == RLIM_INFINITY ? wanted : std::min<rlim_t>(rl.rlim_max, wanted);
      setrlimit(RLIMIT_NOFILE, &rl);
      getrlimit(RLIMIT_NOFILE, &rl);
    }
    if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < wanted) {
      // Keep half the descriptors for sockets and everything else.
      size_t budget = rl.rlim_cur / 2;
      handle_cache = std::max<size_t>(16, budget / 2);
      io_cache = std::max<size_t>(8, budget / 4);
      NFS3D_LOG_WARNING("RLIMIT_NOFILE %llu: caches shrunk to %zu handles, %zu open files",
                        static_cast<unsigned long long>(rl.rlim_cur), handle_cache, io_cache);
    }
  }
  std::unique_ptr<PosixBackend> backend(new PosixBackend());
  backend->state_dir_ = std::move(*dir);
  backend->impl_ = std::make_unique<Impl>(*secret, handle_cache, io_cache, options.receive_count);
  return backend;
}

PosixBackend::~PosixBackend() = default;

absl::Status PosixBackend::AddExport(uint32_t export_id, const std::string& path,
                                     const ExportSettings& settings) {
  absl::Status added = impl_->AddExport(export_id, path, settings, export_id, nullptr);
  if (!added.ok() || !settings.crossmnt) return added;
  for (const std::string& mount_point : MountPointsBelow(path)) {
    absl::StatusOr<std::shared_ptr<const Export>> sub = impl_->AddSubmount(export_id, mount_point);
    if (!sub.ok())
      NFS3D_LOG_WARNING("export %s: submount %s: %s", path, mount_point, sub.status().message());
  }
  return absl::OkStatus();
}

absl::Status PosixBackend::RefreshExport(uint32_t export_id) {
  std::shared_ptr<const Export> exp = impl_->FindExport(export_id);
  if (!exp) return ErrnoError(ENOENT, absl::StrCat("no export ", export_id));
  struct stat st;
  if (stat(exp->path.c_str(), &st) != 0) return Errno(absl::StrCat("stat export ", exp->path));
  if (st.st_dev == exp->dev && st.st_ino == exp->ino) return absl::OkStatus();
  NFS3D_LOG_INFO(
      "export %s: another directory is there now (a file system was mounted or "
      "unmounted): serving it",
      exp->path);
  return impl_->AddExport(export_id, exp->path, exp->settings, exp->owner, exp->parent,
                          /*replace=*/true);
}

absl::StatusOr<FileHandle> PosixBackend::RootHandle(uint32_t export_id) {
  std::shared_ptr<const Export> exp = impl_->FindExport(export_id);
  if (!exp) return ErrnoError(ENOENT, absl::StrCat("no export ", export_id));
  return exp->root_handle;
}

absl::StatusOr<uint32_t> PosixBackend::ExportOf(const FileHandle& fh) {
  // Which export a handle names does not depend on where its directory is
  // now; the operation that follows resolves the handle again, with the
  // confinement check (one check per call, not two).
  absl::StatusOr<Impl::NodePtr> node = impl_->Resolve(fh, /*recheck_moved=*/false);
  if (!node.ok()) return node.status();
  return (*node)->exp->owner;
}

absl::StatusOr<Attributes> PosixBackend::GetAttr(const Cred& cred, const FileHandle& fh) {
  absl::StatusOr<Impl::NodePtr> node = impl_->Resolve(fh);
  if (!node.ok()) return node.status();
  absl::StatusOr<struct stat> st = impl_->Stat(**node);
  if (!st.ok()) return st.status();
  return impl_->ToAttributes(*st, *(*node)->exp);
}

absl::StatusOr<int> PosixBackend::OpenForLocking(const FileHandle& fh) {
  absl::StatusOr<Impl::NodePtr> node = impl_->Resolve(fh);
  if (!node.ok()) return node.status();
  absl::StatusOr<struct stat> st = impl_->Stat(**node);
  if (!st.ok()) return st.status();
  if (!S_ISREG(st->st_mode)) return ErrnoError(EINVAL, "locks are for regular files");
  const std::string path = ProcPath((*node)->fd.get());
  // Write locks need a descriptor open for writing; a read-only file (or a
  // read-only file system) still takes read locks.
  int fd = open(path.c_str(), O_RDWR | O_CLOEXEC | O_NOCTTY);
  if (fd < 0 && (errno == EACCES || errno == EROFS || errno == ETXTBSY)) {
    fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
  }
  if (fd < 0) return Errno("open for locking");
  return fd;
}

absl::Status PosixBackend::SetAttr(const Cred& cred, const FileHandle& fh,
                                   const SetAttributes& attrs, std::optional<Time> guard_ctime,
                                   Wcc* wcc) {
  absl::StatusOr<Impl::NodePtr> node = impl_->Resolve(fh);
  if (!node.ok()) return node.status();
  const Node& n = **node;
  absl::Status result;
  {
    absl::MutexLock lock(&impl_->Stripe(n));
    absl::StatusOr<struct stat> before = impl_->Stat(n);
    if (!before.ok()) return before.status();
    if (wcc) wcc->before = ToWcc(*before);
    if (guard_ctime && !SameTime(*guard_ctime, ToTime(before->st_ctim))) {
      result = ErrnoError(kErrNotSync, "guard ctime mismatch");
    } else {
      result = impl_->ApplyAttrs(cred, n, *before, attrs, /*skip_mode=*/false);
    }
    if (wcc) wcc->after = impl_->AttrsOrNone(n);
  }
  // The fsync of a sync export changes no attribute: the file's other calls
  // need not wait behind the disk for it.
  if (result.ok()) result = impl_->CommitMetadata(n);
  return result;
}

absl::StatusOr<LookupResult> PosixBackend::Lookup(const Cred& cred, const FileHandle& dir,
                                                  std::string_view name,
                                                  std::optional<Attributes>* dir_attributes) {
  absl::StatusOr<Impl::NodePtr> node = impl_->Resolve(dir);
  if (!node.ok()) return node.status();
  const Impl::NodePtr& d = *node;
  if (dir_attributes == nullptr && name != "." && name != "..") {
    // READDIRPLUS (hundreds of entries per call): attributes and handle come
    // straight from the name, without opening each entry or pushing hot
    // descriptors out of the cache. Search permission is still checked as
    // the caller; a handle that is not a directory gets ENOTDIR from fstatat.
    absl::Status valid = CheckName(name);
    if (!valid.ok()) return valid;
    const std::string n(name);
    struct stat st;
    {
      ScopedCredentials creds(cred);
      if (!creds.status().ok()) return creds.status();
      if (fstatat(d->fd.get(), n.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return Errno("lookup");
    }
    if (st.st_dev != d->exp->dev) return impl_->LookupMount(d->exp, d->fd.get(), name, st);
    absl::StatusOr<FileHandle> fh = impl_->MakeHandle(*d->exp, d->fd.get(), n.c_str());
    if (!fh.ok()) return fh.status();
    return LookupResult{*fh, impl_->ToAttributes(st, *d->exp)};
  }
  absl::StatusOr<struct stat> dst = impl_->Stat(*d);
  if (!dst.ok()) return dst.status();
  if (dir_attributes) *dir_attributes = impl_->ToAttributes(*dst, *d->exp);
  if (!S_ISDIR(dst->st_mode)) return ErrnoError(ENOTDIR, "lookup in non-directory");
  absl::Status valid = CheckName(name);
  if (!valid.ok()) return valid;
  const bool at_root = d->ino == d->exp->ino && d->dev == d->exp->dev;
  // "." and ".." at the export root are the directory itself; the lookup of
  // "." still checks search permission.
  // ".." of a submount's root leads out into the export around it.
  const bool self = name == "." || (name == ".." && at_root && !d->exp->parent);
  if (name != "." && name != "..") return impl_->LookupName(cred, *d, std::string(name));
  UniqueFd fd;
  {
    ScopedCredentials creds(cred);
    if (!creds.status().ok()) return creds.status();
    std::string n = self ? "." : std::string(name);
    int flags = O_PATH | O_NOFOLLOW | O_CLOEXEC | (name == ".." ? O_DIRECTORY : 0);
    fd = UniqueFd(openat(d->fd.get(), n.c_str(), flags));
    if (!fd.valid()) return Errno("lookup");
  }
  if (self) {
    LookupResult result;
    result.handle = d->handle;
    result.attributes = impl_->ToAttributes(*dst, *d->exp);
    return result;
  }
  struct stat st;
  if (fstatat(fd.get(), "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0) return Errno("fstat");
  if (name == ".." && at_root) {  // a submount's root: ".." is in the parent export
    const std::shared_ptr<const Export>& up = d->exp->parent;
    absl::StatusOr<FileHandle> fh = impl_->MakeHandle(*up, fd.get());
    if (!fh.ok()) return fh.status();
    impl_->Adopt(up, std::move(fd), *fh, st);
    return LookupResult{*fh, impl_->ToAttributes(st, *up)};
  }
  if (st.st_dev != d->exp->dev) return impl_->LookupMount(d->exp, d->fd.get(), name, st);
  if (name == "..") {
    // Guards against a directory moved out of the export since it was cached.
    absl::Status inside = impl_->CheckInsideExport(*d->exp, fd.get(), st);
    if (!inside.ok()) return inside;
  }
  absl::StatusOr<FileHandle> fh = impl_->MakeHandle(*d->exp, fd.get());
  if (!fh.ok()) return fh.status();
  impl_->Adopt(d->exp, std::move(fd), *fh, st);
  LookupResult result;
  result.handle = *fh;
  result.attributes = impl_->ToAttributes(st, *d->exp);
  return result;
}

absl::StatusOr<AccessResult> PosixBackend::Access(const Cred& cred, const FileHandle& fh,
                                                  uint32_t requested,
                                                  std::optional<Attributes>* attributes) {
  constexpr uint32_t kRead = 0x01, kLookup = 0x02, kModify = 0x04, kExtend = 0x08, kDelete = 0x10,
                     kExecute = 0x20;
  absl::StatusOr<Impl::NodePtr> node = impl_->Resolve(fh);
  if (!node.ok()) return node.status();
  absl::StatusOr<struct stat> st = impl_->Stat(**node);
  if (!st.ok()) return st.status();
  if (attributes) *attributes = impl_->ToAttributes(*st, *(*node)->exp);
  bool r, w, x;
  {
    ScopedCredentials creds(cred);
    if (!creds.status().ok()) return creds.status();
    const int fd = (*node)->fd.get();
    const int flags = AT_EACCESS | AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW;
    r = faccessat(fd, "", R_OK, flags) == 0;
    w = faccessat(fd, "", W_OK, flags) == 0;
    x = faccessat(fd, "", X_OK, flags) == 0;
  }
  uint32_t granted = 0;
  if (r) granted |= kRead;
  if (S_ISDIR(st->st_mode)) {
    if (x) granted |= kLookup;
    if (w && x) granted |= kModify | kExtend | kDelete;
  } else {
    if (w) granted |= kModify | kExtend;
    if (x) granted |= kExecute;
  }
  return AccessResult{granted & requested};
}

absl::StatusOr<std::optional<Quota>> PosixBackend::GetQuota(uint32_t export_id, QuotaKind kind,
                                                            uint32_t id) {
  std::shared_ptr<const Export> exp = impl_->FindExport(export_id);
  if (exp == nullptr) return ErrnoError(ESTALE, "no such export");
  return FileSystemQuota(exp->mount_fd.get(), kind, id);
}

absl::StatusOr<AclPair> PosixBackend::GetAcl(const Cred& cred, const FileHandle& fh,
                                             std::optional<Attributes>* attributes) {
  (void)cred;  // reading ACLs needs no permission, as GETATTR
  absl::StatusOr<Impl::NodePtr> node = impl_->Resolve(fh);
  if (!node.ok()) return node.status();
  absl::StatusOr<struct stat> st = impl_->Stat(**node);
  if (!st.ok()) return st.status();
  if (attributes) *attributes = impl_->ToAttributes(*st, *(*node)->exp);
  AclPair acls;
  if (!S_ISLNK(st->st_mode)) {  // a symlink's /proc path would lead to its target
    const std::string path = ProcPath((*node)->fd.get());
    absl::StatusOr<Acl> access = ReadAclXattr(path, kAclAccessXattr);
    if (!access.ok()) return access.status();
    acls.access = std::move(*access);
    if (S_ISDIR(st->st_mode)) {
      absl::StatusOr<Acl> default_acl = ReadAclXattr(path, kAclDefaultXattr);
      if (!default_acl.ok()) return default_acl.status();
      acls.default_acl = std::move(*default_acl);
    }
  }
  if (acls.access.empty()) acls.access = AclFromMode(st->st_mode);
  return acls;
}

absl::Status PosixBackend::SetAcl(const Cred& cred, const FileHandle& fh, const Acl* access,
                                  const Acl* default_acl, std::optional<Attributes>* attributes) {
  absl::StatusOr<Impl::NodePtr> node = impl_->Resolve(fh);
  if (!node.ok()) return node.status();
  const Node& n = **node;
  absl::MutexLock lock(&impl_->Stripe(n));
  absl::StatusOr<struct stat> st = impl_->Stat(n);
  if (!st.ok()) return st.status();
  absl::Status result;
  if (S_ISLNK(st->st_mode)) {
    result = ErrnoError(EOPNOTSUPP, "symlinks have no ACLs");
  } else if (default_acl != nullptr && !default_acl->empty() && !S_ISDIR(st->st_mode)) {
    result = ErrnoError(EACCES, "default ACL on a non-directory");
  } else {
    const std::string path = ProcPath(n.fd.get());
    // A set that changes nothing is skipped (see AccessAclUnchanged), but only
    // for whoever may set ACLs at all; the kernel refuses anyone else.
    const bool may_set = cred.uid == 0 || cred.uid == st->st_uid;
    ScopedCredentials creds(cred);
    result = creds.status();
    if (result.ok() && access != nullptr) {
      absl::StatusOr<Acl> stored = ReadAclXattr(path, kAclAccessXattr);
      if (!stored.ok()) {
        result = stored.status();
      } else if (!(may_set && AccessAclUnchanged(*stored, st->st_mode & 07777, *access))) {
        result = WriteAclXattr(path, kAclAccessXattr, *access);
      }
    }
    if (result.ok() && default_acl != nullptr && S_ISDIR(st->st_mode)) {
      result = WriteAclXattr(path, kAclDefaultXattr, *default_acl);
    }
  }
  if (result.ok()) result = impl_->CommitMetadata(n);  // an ACL is an attribute too
  if (attributes) *attributes = impl_->AttrsOrNone(n);
  return result;
}

absl::StatusOr<std::string> PosixBackend::Readlink(const Cred& cred, const FileHandle& fh,
                                                   std::optional<Attributes>* attributes) {
  absl::StatusOr<Impl::NodePtr> node = impl_->Resolve(fh);
  if (!node.ok()) return node.status();
  absl::StatusOr<struct stat> st = impl_->Stat(**node);
  if (!st.ok()) return st.status();
  if (attributes) *attributes = impl_->ToAttributes(*st, *(*node)->exp);
  if (!S_ISLNK(st->st_mode)) return ErrnoError(EINVAL, "not a symlink");
  std::string target(PATH_MAX + 1, '\0');
  ssize_t n = readlinkat((*node)->fd.get(), "", target.data(), target.size());
  if (n < 0) return Errno("readlinkat");
  if (static_cast<size_t>(n) >= target.size()) return ErrnoError(ENAMETOOLONG, "readlink");
  target.resize(static_cast<size_t>(n));
  return target;
}

absl::StatusOr<FsStat> PosixBackend::StatFs(const Cred& cred, const FileHandle& fh,
                                            std::optional<Attributes>* attributes) {
  absl::StatusOr<Impl::NodePtr> node = impl_->Resolve(fh);
  if (!node.ok()) return node.status();
  if (attributes) *attributes = impl_->AttrsOrNone(**node);
  struct statvfs sv;
  if (fstatvfs((*node)->fd.get(), &sv) != 0) return Errno("fstatvfs");
  return ToFsStat(sv);
}

absl::StatusOr<PathConf> PosixBackend::GetPathConf(const Cred& cred, const FileHandle& fh,
                                                   std::optional<Attributes>* attributes) {
  absl::StatusOr<Impl::NodePtr> node = impl_->Resolve(fh);
  if (!node.ok()) return node.status();
  if (attributes) *attributes = impl_->AttrsOrNone(**node);
  struct statfs sfs;
  if (fstatfs((*node)->fd.get(), &sfs) != 0) return Errno("fstatfs");
  PathConf out;
  out.name_max = sfs.f_namelen > 0 ? static_cast<uint32_t>(sfs.f_namelen) : 255;
  long link_max = fpathconf((*node)->fd.get(), _PC_LINK_MAX);
  out.link_max = link_max > 0 ? static_cast<uint32_t>(std::min<long>(link_max, UINT32_MAX)) : 127;
  return out;
}

absl::Status PosixBackend::SyncExports() {
  absl::Status first;
  for (const auto& exp : impl_->AllExports()) {
    if (syncfs(exp->mount_fd.get()) != 0 && first.ok()) {
      first = ErrnoError(errno, absl::StrCat("syncfs ", exp->path));
    }
  }
  return first;
}

SyncStats PosixBackend::sync_stats() const {
  const SyncCounters& c = impl_->sync_counters;
  return {c.requests.load(std::memory_order_relaxed), c.fsyncs.load(std::memory_order_relaxed),
          c.metadata_commits.load(std::memory_order_relaxed),
          c.metadata_syncs.load(std::memory_order_relaxed)};
}

void PosixBackend::AdoptWriteVerifier(uint64_t verifier) { impl_->AdoptVerifier(verifier); }

uint64_t PosixBackend::WriteVerifierValue() const { return impl_->verifier(); }

Verifier PosixBackend::WriteVerifier() const {
  Verifier out;
  uint64_t verf = impl_->verifier();
  std::memcpy(out.data(), &verf, sizeof(verf));
  return out;
}

}  // namespace nfs3d::vfs
