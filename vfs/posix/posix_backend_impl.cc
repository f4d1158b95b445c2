// PosixBackend::Impl: exports and submounts, handle resolution and the
// containment checks, and the steps the operations share.

#include "vfs/posix/posix_backend_impl.h"

#include <fcntl.h>
#include <linux/magic.h>
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
#include "vfs/posix/thread_credentials.h"
#include "vfs/sync_group.h"
#include "vfs/vfs_error.h"

namespace nfs3d::vfs {

absl::Status PosixBackend::Impl::AddExport(uint32_t id, const std::string& path,
                                           const ExportSettings& settings, uint32_t owner,
                                           std::shared_ptr<const Export> parent, bool replace) {
  auto exp = std::make_shared<Export>();
  exp->settings = settings;
  exp->id = id;
  exp->path = path;
  exp->owner = owner;
  exp->crossmnt = settings.crossmnt;
  exp->nohide = settings.nohide;
  exp->parent = std::move(parent);
  const std::optional<uint64_t>& fsid_option = settings.fsid;
  exp->root_fd = UniqueFd(open(path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!exp->root_fd.valid()) return Errno(absl::StrCat("open export ", path));
  exp->mount_fd = UniqueFd(open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!exp->mount_fd.valid()) return Errno(absl::StrCat("open export ", path));
  struct stat st;
  if (fstat(exp->root_fd.get(), &st) != 0) return Errno("fstat export root");
  exp->dev = st.st_dev;
  exp->ino = st.st_ino;
  KernelHandle kh;
  kh.header.handle_bytes = MAX_HANDLE_SZ;
  if (name_to_handle_at(exp->root_fd.get(), "", &kh.header, &exp->mount_id, AT_EMPTY_PATH) != 0) {
    return Errno(absl::StrCat("name_to_handle_at ", path, " (file system without handles?)"));
  }
  struct statfs sfs;
  if (fstatfs(exp->root_fd.get(), &sfs) != 0) return Errno("fstatfs export root");
  uint64_t fsid = 0;
  static_assert(sizeof(sfs.f_fsid) == sizeof(fsid));
  std::memcpy(&fsid, &sfs.f_fsid, sizeof(fsid));
  exp->fsid = fsid_option ? *fsid_option : fsid != 0 ? fsid : static_cast<uint64_t>(st.st_dev);
  exp->sync_is_noop = sfs.f_type == TMPFS_MAGIC || sfs.f_type == RAMFS_MAGIC;
  // Whole-file-system export: the export root is a mount root showing the
  // file system's own root. Anything else needs the ".." walk.
  struct statx stx;
  bool mount_root = false;
  if (statx(exp->root_fd.get(), "", AT_EMPTY_PATH, STATX_BASIC_STATS, &stx) == 0 &&
      (stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT)) {
    mount_root = (stx.stx_attributes & STATX_ATTR_MOUNT_ROOT) != 0;
  }
  exp->walk_check = !(mount_root && MountRoot(exp->mount_id) == "/");
  exp->covered_root =
      UniqueFd(open_tree(AT_FDCWD, path.c_str(), OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC));
  if (exp->covered_root.valid()) {
    KernelHandle ch;
    ch.header.handle_bytes = MAX_HANDLE_SZ;
    if (name_to_handle_at(exp->covered_root.get(), "", &ch.header, &exp->covered_mount_id,
                          AT_EMPTY_PATH) != 0) {
      exp->covered_root = UniqueFd();
    }
  }
  absl::StatusOr<FileHandle> root =
      codec_.Encode(id, kh.header.handle_type, {kh.header.f_handle, kh.header.handle_bytes});
  if (!root.ok()) return root.status();
  exp->root_handle = *root;
  absl::MutexLock lock(&exports_mu_);
  if (exports_.count(id) && !replace) {
    return absl::AlreadyExistsError(absl::StrCat("export id ", id, " in use"));
  }
  if (exp->walk_check) {
    absl::Status watched = moves_.Watch(path);
    exp->moves_watched = watched.ok();
    if (!watched.ok()) {
      NFS3D_LOG_WARNING(
          "export %s: directory moves not watched (%s): cached directories are "
          "re-checked on every use, which costs CPU per call",
          path, watched.message());
    }
  }
  NFS3D_LOG_INFO("export %u: %s (subtree walk %s)", id, path,
                 !exp->walk_check     ? "off"
                 : exp->moves_watched ? "after directory moves"
                                      : "every use");
  exports_[id] = std::move(exp);
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<const PosixBackend::Export>> PosixBackend::Impl::AddSubmount(
    uint32_t owner, const std::string& mount_point) {
  // One registration at a time: LOOKUPs racing to the same new mount point
  // must get the same export, not two ids for one path.
  absl::MutexLock registering(&submount_mu_);
  std::shared_ptr<const Export> parent;
  {
    absl::ReaderMutexLock lock(&exports_mu_);
    for (const auto& [id, e] : exports_) {
      if (e->path == mount_point) return e;
      // The innermost export around the mount point is where ".." leads.
      const bool around = mount_point.size() > e->path.size() &&
                          mount_point.compare(0, e->path.size(), e->path) == 0 &&
                          (e->path == "/" || mount_point[e->path.size()] == '/');
      if (around && (!parent || e->path.size() > parent->path.size())) parent = e;
    }
  }
  // Stable across restarts: the owner's id and the path, never 0 and never
  // an id already taken.
  uint32_t id = owner;
  for (unsigned char c : mount_point) id = (id ^ c) * 16777619u;
  for (;; ++id) {
    if (id == 0 || FindExport(id)) continue;
    break;
  }
  ExportSettings settings;
  settings.crossmnt = true;  // crossmnt reaches the mounts inside submounts too
  absl::Status added = AddExport(id, mount_point, settings, owner, parent);
  if (!added.ok()) return added;
  return FindExport(id);
}

absl::StatusOr<std::shared_ptr<const PosixBackend::Export>> PosixBackend::Impl::EnterMount(
    const Export& from, int dir_fd, std::string_view name, const struct stat& st) {
  {
    absl::ReaderMutexLock lock(&exports_mu_);
    for (const auto& [id, e] : exports_) {
      if (e->dev == st.st_dev && e->ino == st.st_ino && (e->nohide || from.crossmnt)) return e;
    }
  }
  if (!from.crossmnt) return nullptr;  // the covered directory, then
  std::string dir;
  if (!FdPath(dir_fd, &dir)) return ErrnoError(EACCES, "mount point below export: no path");
  return AddSubmount(from.owner, (dir == "/" ? "" : dir) + "/" + std::string(name));
}

absl::StatusOr<LookupResult> PosixBackend::Impl::LookupCovered(
    const std::shared_ptr<const Export>& exp, int dir_fd, std::string_view name) {
  // The same path, relative to the export root, in the clone without mounts.
  std::string dir, root;
  if (!exp->covered_root.valid() || !FdPath(dir_fd, &dir) || !FdPath(exp->root_fd.get(), &root) ||
      dir.compare(0, root.size(), root) != 0) {
    return ErrnoError(EACCES, "mount point below export: covered directory unreachable");
  }
  std::string rel = dir.substr(root == "/" ? 1 : root.size());
  while (!rel.empty() && rel.front() == '/') rel.erase(0, 1);
  rel += (rel.empty() ? "" : "/") + std::string(name);
  UniqueFd fd(openat(exp->covered_root.get(), rel.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid()) return Errno("lookup of a covered directory");
  struct stat st;
  if (fstatat(fd.get(), "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0) return Errno("fstat");
  if (st.st_dev != exp->dev) return ErrnoError(EACCES, "covered directory on another device");
  absl::StatusOr<FileHandle> fh = MakeHandle(*exp, fd.get());
  if (!fh.ok()) return fh.status();
  Adopt(exp, std::move(fd), *fh, st);
  return LookupResult{*fh, ToAttributes(st, *exp)};
}

absl::Status PosixBackend::Impl::CheckInsideExport(const Export& exp, int fd,
                                                   const struct stat& st) {
  if (st.st_dev != exp.dev) return ErrnoError(ESTALE, "handle outside export file system");
  if (!exp.walk_check || !S_ISDIR(st.st_mode)) return absl::OkStatus();
  // Walk up until the export root (inside) or the top of the file system or
  // mount (outside).
  UniqueFd cur;
  int cur_fd = fd;
  struct stat cur_st = st;
  for (int depth = 0; depth < kMaxWalkDepth; ++depth) {
    if (cur_st.st_ino == exp.ino && cur_st.st_dev == exp.dev) return absl::OkStatus();
    UniqueFd parent(openat(cur_fd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!parent.valid()) return ErrnoError(ESTALE, "walking to export root");
    struct stat pst;
    if (fstat(parent.get(), &pst) != 0) return ErrnoError(ESTALE, "walking to export root");
    if (pst.st_dev != exp.dev || (pst.st_ino == cur_st.st_ino && pst.st_dev == cur_st.st_dev)) {
      return ErrnoError(ESTALE, "handle outside export");
    }
    cur = std::move(parent);
    cur_fd = cur.get();
    cur_st = pst;
  }
  return ErrnoError(ESTALE, "directory too deep");
}

absl::Status PosixBackend::Impl::StillInsideExport(const Node& node) {
  // The kernel tracks each descriptor's current path: a directory still
  // below the export root's path is inside. Anything else (moved out, or a
  // path the check cannot judge, e.g. across bind mounts) gets the walk.
  std::string dir, root;
  if (FdPath(node.fd.get(), &dir) && FdPath(node.exp->root_fd.get(), &root) &&
      dir.compare(0, root.size(), root) == 0 &&
      (dir.size() == root.size() || dir[root.size()] == '/' || root == "/")) {
    return absl::OkStatus();
  }
  struct stat st;
  if (fstatat(node.fd.get(), "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0) {
    return ErrnoError(ESTALE, "fstat of a cached directory");
  }
  return CheckInsideExport(*node.exp, node.fd.get(), st);
}

absl::StatusOr<PosixBackend::Impl::NodePtr> PosixBackend::Impl::Resolve(const FileHandle& fh,
                                                                        bool recheck_moved) {
  const absl::string_view key(reinterpret_cast<const char*>(fh.data), fh.len);
  if (NodePtr hit = nodes_.Get(key)) {
    // A directory of a sub-directory export may have been moved out of the
    // export (itself or an ancestor) since it was checked.
    // Free unless a directory moved since this one was last checked; the
    // export root itself is inside by definition.
    const bool is_root = hit->ino == hit->exp->ino && hit->dev == hit->exp->dev;
    if (recheck_moved && hit->is_dir && hit->exp->walk_check && !is_root) {
      const std::optional<uint64_t> generation =
          hit->exp->moves_watched ? moves_.Generation() : std::nullopt;
      if (!generation || hit->checked_generation.load(std::memory_order_acquire) != *generation) {
        absl::Status inside = StillInsideExport(*hit);
        if (!inside.ok()) {
          nodes_.Erase(key);
          return inside;
        }
        if (generation) hit->checked_generation.store(*generation, std::memory_order_release);
      }
    }
    return hit;
  }
  // Taken before the check below, so a move during it is not missed.
  const std::optional<uint64_t> generation = moves_.Generation();
  absl::StatusOr<DecodedHandle> decoded = codec_.Decode(fh);
  if (!decoded.ok()) return decoded.status();
  std::shared_ptr<const Export> exp = FindExport(decoded->export_id);
  if (!exp) return ErrnoError(ESTALE, "handle of an unknown export");
  KernelHandle kh;
  kh.header.handle_bytes = decoded->kernel_len;
  kh.header.handle_type = decoded->handle_type;
  std::memcpy(kh.header.f_handle, decoded->kernel, decoded->kernel_len);
  UniqueFd fd(open_by_handle_at(exp->mount_fd.get(), &kh.header, O_PATH | O_CLOEXEC));
  if (!fd.valid()) {
    int err = errno;
    if (err == EMFILE || err == ENFILE || err == ENOMEM)
      return ErrnoError(kErrJukebox, "open_by_handle_at");
    return ErrnoError(ESTALE, absl::StrCat("open_by_handle_at: errno ", err));
  }
  struct stat st;
  if (fstatat(fd.get(), "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0) {
    return ErrnoError(ESTALE, "fstat after open_by_handle_at");
  }
  if (st.st_nlink == 0) return ErrnoError(ESTALE, "object deleted");
  absl::Status inside = CheckInsideExport(*exp, fd.get(), st);
  if (!inside.ok()) return inside;
  NodePtr node = Adopt(std::move(exp), std::move(fd), fh, st);
  if (generation) node->checked_generation.store(*generation, std::memory_order_release);
  return node;
}

PosixBackend::Impl::NodePtr PosixBackend::Impl::Adopt(std::shared_ptr<const Export> exp,
                                                      UniqueFd fd, const FileHandle& handle,
                                                      const struct stat& st) {
  auto node = std::make_shared<Node>();
  node->fd = std::move(fd);
  node->exp = std::move(exp);
  node->handle = handle;
  node->key.assign(reinterpret_cast<const char*>(handle.data), handle.len);
  node->dev = st.st_dev;
  node->ino = st.st_ino;
  node->is_dir = S_ISDIR(st.st_mode);
  node->type = st.st_mode & S_IFMT;
  return nodes_.Insert(node->key, node);
}

absl::StatusOr<FileHandle> PosixBackend::Impl::MakeHandle(const Export& exp, int fd,
                                                          const char* name) {
  KernelHandle kh;
  kh.header.handle_bytes = MAX_HANDLE_SZ;
  int mount_id = -1;
  if (name_to_handle_at(fd, name ? name : "", &kh.header, &mount_id, name ? 0 : AT_EMPTY_PATH) !=
      0) {
    return Errno("name_to_handle_at");
  }
  if (mount_id != exp.mount_id && mount_id != exp.covered_mount_id) {
    return ErrnoError(EACCES, "object on another mount");
  }
  return codec_.Encode(exp.id, kh.header.handle_type, {kh.header.f_handle, kh.header.handle_bytes});
}

absl::StatusOr<LookupResult> PosixBackend::Impl::LookupName(const Cred& cred, const Node& d,
                                                            const std::string& name) {
  // Kernel clients look the same names up again and again to revalidate
  // them. By name first: an object whose handle is cached already needs no
  // open (two system calls instead of five).
  struct stat st;
  {
    ScopedCredentials creds(cred);
    if (!creds.status().ok()) return creds.status();
    if (fstatat(d.fd.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return Errno("lookup");
  }
  if (st.st_dev != d.exp->dev) return LookupMount(d.exp, d.fd.get(), name, st);
  absl::StatusOr<FileHandle> fh = MakeHandle(*d.exp, d.fd.get(), name.c_str());
  if (!fh.ok()) return fh.status();
  const absl::string_view key(reinterpret_cast<const char*>(fh->data), fh->len);
  if (NodePtr hit = nodes_.Get(key); hit && hit->ino == st.st_ino && hit->dev == st.st_dev) {
    return LookupResult{*fh, ToAttributes(st, *d.exp)};
  }
  // Not cached: open it, keeping the descriptor for the calls that follow.
  UniqueFd fd;
  {
    ScopedCredentials creds(cred);
    if (!creds.status().ok()) return creds.status();
    fd = UniqueFd(openat(d.fd.get(), name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
    if (!fd.valid()) return Errno("lookup");
  }
  struct stat opened;
  if (fstatat(fd.get(), "", &opened, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0) {
    return Errno("fstat");
  }
  // The name may have been replaced in between: then the handle is made
  // again from the descriptor, so that handle and descriptor are one object.
  if (opened.st_ino != st.st_ino || opened.st_dev != st.st_dev ||
      opened.st_ctim.tv_sec != st.st_ctim.tv_sec || opened.st_ctim.tv_nsec != st.st_ctim.tv_nsec) {
    if (opened.st_dev != d.exp->dev) return LookupMount(d.exp, d.fd.get(), name, opened);
    fh = MakeHandle(*d.exp, fd.get());
    if (!fh.ok()) return fh.status();
  }
  Adopt(d.exp, std::move(fd), *fh, opened);
  return LookupResult{*fh, ToAttributes(opened, *d.exp)};
}

absl::StatusOr<struct stat> PosixBackend::Impl::Stat(const Node& node) {
  struct stat st;
  if (fstatat(node.fd.get(), "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0) {
    return Errno("fstat");
  }
  if (st.st_nlink == 0) {
    Forget(node.key);
    return ErrnoError(ESTALE, "object deleted");
  }
  return st;
}

Attributes PosixBackend::Impl::ToAttributes(const struct stat& st, const Export& exp) const {
  Attributes a;
  a.type = FileTypeOf(st.st_mode);
  a.mode = st.st_mode & 07777;
  a.nlink = st.st_nlink == 0 ? 1 : static_cast<uint32_t>(st.st_nlink);
  a.uid = st.st_uid;
  a.gid = st.st_gid;
  a.size = static_cast<uint64_t>(st.st_size);
  a.used = static_cast<uint64_t>(st.st_blocks) * 512;
  a.rdev_major = major(st.st_rdev);
  a.rdev_minor = minor(st.st_rdev);
  a.fsid = exp.fsid;
  a.fileid = st.st_ino;
  a.atime = ToTime(st.st_atim);
  a.mtime = ToTime(st.st_mtim);
  a.ctime = ToTime(st.st_ctim);
  return a;
}

std::optional<std::string> PosixBackend::Impl::ChildKey(const Node& dir, const std::string& name) {
  // By name, without opening it: name_to_handle_at does not follow a final
  // symlink, and an object on another mount gets no key (MakeHandle).
  absl::StatusOr<FileHandle> fh = MakeHandle(*dir.exp, dir.fd.get(), name.c_str());
  if (!fh.ok()) return std::nullopt;
  return std::string(reinterpret_cast<const char*>(fh->data), fh->len);
}

void PosixBackend::Impl::ForgetIfUnlinked(const std::optional<std::string>& key) {
  if (!key) return;
  // Any cached descriptor of the object tells its link count.
  struct stat st;
  int rc = -1;
  if (NodePtr node = nodes_.Get(*key)) {
    rc = fstatat(node->fd.get(), "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW);
  } else if (std::shared_ptr<IoFds> io = io_.Get(*key)) {
    absl::MutexLock lock(&io->mu);
    const int fd = io->rw.valid() ? io->rw.get() : io->ro.get();
    if (fd >= 0) rc = fstat(fd, &st);
  }
  if (rc == 0 && st.st_nlink == 0) Forget(*key);
}

absl::StatusOr<std::pair<std::shared_ptr<IoFds>, int>> PosixBackend::Impl::IoFd(const Node& node,
                                                                                bool write) {
  std::shared_ptr<IoFds> fds = io_.Get(node.key);
  if (!fds) fds = io_.Insert(node.key, std::make_shared<IoFds>());
  absl::MutexLock lock(&fds->mu);
  if (fds->rw.valid()) return std::make_pair(fds, fds->rw.get());
  if (!write && fds->ro.valid()) return std::make_pair(fds, fds->ro.get());
  std::string path = ProcPath(node.fd.get());
  UniqueFd fd(open(path.c_str(), (write ? O_RDWR : O_RDONLY) | O_CLOEXEC));
  if (!fd.valid()) return Errno("open for I/O");
  int raw = fd.get();
  (write ? fds->rw : fds->ro) = std::move(fd);
  return std::make_pair(fds, raw);
}

absl::Status PosixBackend::Impl::CheckIo(const Cred& cred, const Node& node, const struct stat& st,
                                         bool write) {
  const int flags = AT_EACCESS | AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW;
  if (faccessat(node.fd.get(), "", write ? W_OK : R_OK, flags) == 0) return absl::OkStatus();
  int err = errno;
  if (err != EACCES) return ErrnoError(err, "access check");
  if (IsOwner(cred, st)) return absl::OkStatus();
  if (!write && faccessat(node.fd.get(), "", X_OK, flags) == 0) return absl::OkStatus();
  return ErrnoError(EACCES, "permission denied");
}

absl::Status PosixBackend::Impl::ApplyAttrs(const Cred& cred, const Node& node,
                                            const struct stat& st, const SetAttributes& attrs,
                                            bool skip_mode) {
  int fd = node.fd.get();
  if (attrs.size) {
    if (S_ISDIR(st.st_mode)) return ErrnoError(EISDIR, "truncate directory");
    if (!S_ISREG(st.st_mode)) return ErrnoError(EINVAL, "truncate non-regular file");
    if (*attrs.size > static_cast<uint64_t>(std::numeric_limits<off_t>::max())) {
      return ErrnoError(EFBIG, "size too large");
    }
    auto io = IoFd(node, /*write=*/true);
    if (!io.ok()) return io.status();
    ScopedCredentials creds(cred);
    if (!creds.status().ok()) return creds.status();
    absl::Status allowed = CheckIo(cred, node, st, /*write=*/true);
    if (!allowed.ok()) return allowed;
    if (ftruncate(io->second, static_cast<off_t>(*attrs.size)) != 0) return Errno("ftruncate");
  }
  const bool owner = attrs.uid || attrs.gid;
  const bool mode = attrs.mode && !skip_mode && !S_ISLNK(st.st_mode);
  // The caller's identity only around a change that needs it: a switch and
  // back are up to 8 syscalls, and a CREATE's attributes (the mode already
  // applied) or a SETATTR of the times alone have nothing here.
  if (owner || mode) {
    ScopedCredentials creds(cred);
    if (!creds.status().ok()) return creds.status();
    if (owner) {
      uid_t uid = attrs.uid ? *attrs.uid : static_cast<uid_t>(-1);
      gid_t gid = attrs.gid ? *attrs.gid : static_cast<gid_t>(-1);
      if (fchownat(fd, "", uid, gid, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0) {
        return Errno("fchownat");
      }
    }
    if (mode && ChmodFd(fd, *attrs.mode & 07777) != 0) return Errno("chmod");
  }
  if (attrs.atime_how == SetTime::kDontChange && attrs.mtime_how == SetTime::kDontChange) {
    return absl::OkStatus();
  }
  return SetTimes(cred, node, st, attrs);
}

absl::Status PosixBackend::Impl::SetTimes(const Cred& cred, const Node& node, const struct stat& st,
                                          const SetAttributes& attrs) {
  const int fd = node.fd.get();
  struct timespec ts[2];
  auto fill = [](SetTime how, const Time& t, struct timespec* out) {
    out->tv_sec = 0;
    out->tv_nsec = how == SetTime::kDontChange   ? UTIME_OMIT
                   : how == SetTime::kServerTime ? UTIME_NOW
                                                 : 0;
    if (how == SetTime::kClientTime) {
      out->tv_sec = static_cast<time_t>(t.seconds);
      out->tv_nsec = std::min<long>(t.nseconds, 999999999L);
    }
  };
  fill(attrs.atime_how, attrs.atime, &ts[0]);
  fill(attrs.mtime_how, attrs.mtime, &ts[1]);
  // Times set to the server's clock need write permission only, as touch(1)
  // and knfsd allow; a time the client chose needs ownership. The Linux
  // client sends mtime = server time (atime unchanged) with every O_TRUNC
  // open, also from users who may write a file they do not own, but
  // utimensat waives ownership only when both times are set to now. So a
  // caller who is not the owner and may write has the times set by the server
  // once the kernel has said it may write (symlinks keep the kernel's rule).
  const bool server_clock_only =
      attrs.atime_how != SetTime::kClientTime && attrs.mtime_how != SetTime::kClientTime;
  bool as_server = false;
  {
    ScopedCredentials creds(cred);
    if (!creds.status().ok()) return creds.status();
    if (server_clock_only && cred.uid != 0 && cred.uid != st.st_uid && !S_ISLNK(st.st_mode)) {
      const int flags = AT_EACCESS | AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW;
      if (faccessat(fd, "", W_OK, flags) != 0) return Errno("set times");
      as_server = true;
    } else if (utimensat(fd, "", ts, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0) {
      return Errno("utimensat");
    }
  }
  if (as_server && utimensat(fd, "", ts, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0) {
    return Errno("utimensat");
  }
  return absl::OkStatus();
}

absl::Status PosixBackend::Impl::DirOp(const Cred& cred, const Node& dir, Wcc* wcc,
                                       NewInode new_inode,
                                       const std::function<absl::Status()>& op) {
  // The caller's identity and the umask are set before the directory's
  // stripe is taken and restored after it is let go: up to 8 syscalls fewer
  // where the other operations on the directory wait (a CREATE in a busy
  // directory spent its wait in futex sleeps). Stat of a descriptor checks
  // no permission, so the caller's identity changes nothing there.
  ScopedCredentials creds(cred);
  std::optional<ScopedExactModes> modes;
  if (new_inode == NewInode::kYes) modes.emplace();  // the client's modes as sent
  absl::MutexLock lock(&Stripe(dir));
  absl::StatusOr<struct stat> before = Stat(dir);
  if (!before.ok()) return before.status();
  if (wcc) wcc->before = ToWcc(*before);
  absl::Status result;
  if (!S_ISDIR(before->st_mode)) {
    result = ErrnoError(ENOTDIR, "not a directory");
  } else {
    result = creds.status().ok() ? op() : creds.status();
  }
  absl::StatusOr<struct stat> after = Stat(dir);
  if (wcc && after.ok()) wcc->after = ToAttributes(*after, *dir.exp);
  return result;
}

absl::StatusOr<CreateResult> PosixBackend::Impl::Finish(const Cred& cred, const NodePtr& dir,
                                                        UniqueFd fd,
                                                        const SetAttributes* attrs_to_apply,
                                                        const struct stat* known) {
  struct stat st;
  if (known != nullptr) {
    st = *known;
  } else if (fstatat(fd.get(), "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0) {
    return Errno("fstat");
  }
  absl::StatusOr<FileHandle> fh = MakeHandle(*dir->exp, fd.get());
  if (!fh.ok()) return fh.status();
  NodePtr node = Adopt(dir->exp, std::move(fd), *fh, st);
  bool changed = false;
  if (attrs_to_apply) {
    SetAttributes attrs = *attrs_to_apply;
    if (!S_ISREG(st.st_mode)) attrs.size.reset();
    changed = ChangesAnything(attrs, /*skip_mode=*/true);
    absl::Status applied = ApplyAttrs(cred, *node, st, attrs, /*skip_mode=*/true);
    if (!applied.ok()) return applied;
  }
  // The new object (with the attributes just applied) and its name.
  if (absl::Status st = CommitMetadata(*node); !st.ok()) return st;
  if (absl::Status st = CommitMetadata(*dir); !st.ok()) return st;
  CreateResult result;
  result.handle = *fh;
  // Nothing applied: the stat taken above is still the object's.
  result.attributes = changed ? AttrsOrNone(*node) : ToAttributes(st, *dir->exp);
  return result;
}

}  // namespace nfs3d::vfs
