// PosixBackend operations on directory entries: CREATE, MKDIR, SYMLINK,
// MKNOD, REMOVE, RMDIR, RENAME, LINK, READDIR.

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

absl::StatusOr<CreateResult> PosixBackend::Create(const Cred& cred, const FileHandle& dir,
                                                  std::string_view name, CreateMode mode,
                                                  const SetAttributes& attrs,
                                                  const Verifier& verifier, Wcc* dir_wcc) {
  absl::StatusOr<Impl::NodePtr> node = impl_->Resolve(dir);
  if (!node.ok()) return node.status();
  const Impl::NodePtr& d = *node;
  absl::Status valid = CheckNewName(name);
  if (!valid.ok()) return impl_->Refuse(*d, dir_wcc, valid);
  const std::string n(name);
  UniqueFd fd;
  bool created = false;
  struct stat st;
  absl::Status status = impl_->DirOp(cred, *d, dir_wcc, NewInode::kYes, [&]() -> absl::Status {
    const mode_t perm = mode == CreateMode::kExclusive ? 0600 : (attrs.mode.value_or(0600) & 07777);
    if (mknodat(d->fd.get(), n.c_str(), S_IFREG | perm, 0) == 0) {
      created = true;
    } else if (errno != EEXIST || mode == CreateMode::kGuarded) {
      return Errno("create");
    }
    fd = UniqueFd(openat(d->fd.get(), n.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
    if (!fd.valid()) return Errno("open created file");
    if (fstatat(fd.get(), "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0) return Errno("fstat");
    if (!S_ISREG(st.st_mode)) return ErrnoError(EEXIST, "exists and is not a regular file");
    if (mode != CreateMode::kExclusive) return absl::OkStatus();
    const std::string path = ProcPath(fd.get());
    if (created) {
      // Store the verifier: all 8 bytes in an xattr (where supported) and in
      // atime/mtime seconds like knfsd. The client's SETATTR follows.
      if (setxattr(path.c_str(), kVerfXattr, verifier.data(), verifier.size(), 0) != 0 &&
          errno != ENOTSUP) {
        NFS3D_LOG_DEBUG("setxattr %s: errno %d", kVerfXattr, errno);
      }
      struct timespec ts[2] = {{static_cast<time_t>(Be32(verifier.data())), 0},
                               {static_cast<time_t>(Be32(verifier.data() + 4)), 0}};
      if (utimensat(fd.get(), "", ts, AT_EMPTY_PATH) != 0) return Errno("store verifier");
      return absl::OkStatus();
    }
    uint8_t stored[8];
    ssize_t len = getxattr(path.c_str(), kVerfXattr, stored, sizeof(stored));
    bool match;
    if (len >= 0) {
      match = len == 8 && std::memcmp(stored, verifier.data(), 8) == 0;
    } else {
      match = static_cast<uint32_t>(st.st_atim.tv_sec) == Be32(verifier.data()) &&
              static_cast<uint32_t>(st.st_mtim.tv_sec) == Be32(verifier.data() + 4);
    }
    return match ? absl::OkStatus() : ErrnoError(EEXIST, "exclusive create: other verifier");
  });
  if (!status.ok()) return status;
  // UNCHECKED on an existing file applies only the size (knfsd); a new file
  // gets the remaining attributes (the mode was applied by mknodat).
  SetAttributes rest;
  const SetAttributes* apply = nullptr;
  if (mode != CreateMode::kExclusive) {
    if (created) {
      rest = attrs;
      if (rest.size == 0) rest.size.reset();
      apply = &rest;
    } else if (attrs.size) {
      rest.size = attrs.size;
      apply = &rest;
    }
  }
  // EXCLUSIVE changed the times after st was taken.
  return impl_->Finish(cred, d, std::move(fd), apply,
                       mode == CreateMode::kExclusive ? nullptr : &st);
}

absl::StatusOr<CreateResult> PosixBackend::Mkdir(const Cred& cred, const FileHandle& dir,
                                                 std::string_view name, const SetAttributes& attrs,
                                                 Wcc* dir_wcc) {
  absl::StatusOr<Impl::NodePtr> node = impl_->Resolve(dir);
  if (!node.ok()) return node.status();
  const Impl::NodePtr& d = *node;
  absl::Status valid = CheckNewName(name);
  if (!valid.ok()) return impl_->Refuse(*d, dir_wcc, valid);
  const std::string n(name);
  UniqueFd fd;
  absl::Status status = impl_->DirOp(cred, *d, dir_wcc, NewInode::kYes, [&]() -> absl::Status {
    if (mkdirat(d->fd.get(), n.c_str(), attrs.mode.value_or(0700) & 07777) != 0) {
      return Errno("mkdir");
    }
    fd = UniqueFd(openat(d->fd.get(), n.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    return fd.valid() ? absl::OkStatus() : Errno("open new directory");
  });
  if (!status.ok()) return status;
  return impl_->Finish(cred, d, std::move(fd), &attrs);
}

absl::StatusOr<CreateResult> PosixBackend::Symlink(const Cred& cred, const FileHandle& dir,
                                                   std::string_view name, std::string_view target,
                                                   const SetAttributes& attrs, Wcc* dir_wcc) {
  absl::StatusOr<Impl::NodePtr> node = impl_->Resolve(dir);
  if (!node.ok()) return node.status();
  const Impl::NodePtr& d = *node;
  absl::Status valid = CheckNewName(name);
  if (!valid.ok()) return impl_->Refuse(*d, dir_wcc, valid);
  if (target.find('\0') != std::string_view::npos) return ErrnoError(EINVAL, "NUL in target");
  if (target.size() >= PATH_MAX) return ErrnoError(ENAMETOOLONG, "symlink target too long");
  const std::string n(name);
  const std::string t(target);
  UniqueFd fd;
  absl::Status status = impl_->DirOp(cred, *d, dir_wcc, NewInode::kYes, [&]() -> absl::Status {
    if (symlinkat(t.c_str(), d->fd.get(), n.c_str()) != 0) return Errno("symlink");
    fd = UniqueFd(openat(d->fd.get(), n.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
    return fd.valid() ? absl::OkStatus() : Errno("open new symlink");
  });
  if (!status.ok()) return status;
  return impl_->Finish(cred, d, std::move(fd), &attrs);
}

absl::StatusOr<CreateResult> PosixBackend::Mknod(const Cred& cred, const FileHandle& dir,
                                                 std::string_view name, FileType type,
                                                 uint32_t major_num, uint32_t minor_num,
                                                 const SetAttributes& attrs, Wcc* dir_wcc) {
  absl::StatusOr<Impl::NodePtr> node = impl_->Resolve(dir);
  if (!node.ok()) return node.status();
  const Impl::NodePtr& d = *node;
  mode_t fmt;
  dev_t rdev = 0;
  switch (type) {
    case FileType::kChar:
      fmt = S_IFCHR;
      rdev = makedev(major_num, minor_num);
      break;
    case FileType::kBlock:
      fmt = S_IFBLK;
      rdev = makedev(major_num, minor_num);
      break;
    case FileType::kSocket:
      fmt = S_IFSOCK;
      break;
    case FileType::kFifo:
      fmt = S_IFIFO;
      break;
    default:
      return ErrnoError(kErrBadType, "mknod of an unsupported type");
  }
  absl::Status valid = CheckNewName(name);
  if (!valid.ok()) return impl_->Refuse(*d, dir_wcc, valid);
  const std::string n(name);
  UniqueFd fd;
  absl::Status status = impl_->DirOp(cred, *d, dir_wcc, NewInode::kYes, [&]() -> absl::Status {
    if (mknodat(d->fd.get(), n.c_str(), fmt | (attrs.mode.value_or(0600) & 07777), rdev) != 0) {
      return Errno("mknod");
    }
    fd = UniqueFd(openat(d->fd.get(), n.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
    return fd.valid() ? absl::OkStatus() : Errno("open new node");
  });
  if (!status.ok()) return status;
  return impl_->Finish(cred, d, std::move(fd), &attrs);
}

absl::Status PosixBackend::Remove(const Cred& cred, const FileHandle& dir, std::string_view name,
                                  Wcc* dir_wcc) {
  absl::StatusOr<Impl::NodePtr> node = impl_->Resolve(dir);
  if (!node.ok()) return node.status();
  const Impl::NodePtr& d = *node;
  absl::Status valid = CheckName(name);
  if (valid.ok() && IsDotName(name)) valid = ErrnoError(EACCES, "cannot remove . or ..");
  if (!valid.ok()) return impl_->Refuse(*d, dir_wcc, valid);
  const std::string n(name);
  std::optional<std::string> victim;
  absl::Status status = impl_->DirOp(cred, *d, dir_wcc, NewInode::kNo, [&]() -> absl::Status {
    victim = impl_->ChildKey(*d, n);
    if (unlinkat(d->fd.get(), n.c_str(), 0) != 0) return Errno("unlink");
    return absl::OkStatus();
  });
  // Drop cached descriptors so the space of a deleted file is freed.
  if (status.ok()) impl_->ForgetIfUnlinked(victim);
  if (status.ok()) status = impl_->CommitMetadata(*d);
  return status;
}

absl::Status PosixBackend::Rmdir(const Cred& cred, const FileHandle& dir, std::string_view name,
                                 Wcc* dir_wcc) {
  absl::StatusOr<Impl::NodePtr> node = impl_->Resolve(dir);
  if (!node.ok()) return node.status();
  const Impl::NodePtr& d = *node;
  absl::Status valid = CheckName(name);
  if (valid.ok() && name == ".") valid = ErrnoError(EINVAL, "rmdir .");
  if (valid.ok() && name == "..") valid = ErrnoError(ENOTEMPTY, "rmdir ..");
  if (!valid.ok()) return impl_->Refuse(*d, dir_wcc, valid);
  const std::string n(name);
  std::optional<std::string> victim;
  absl::Status status = impl_->DirOp(cred, *d, dir_wcc, NewInode::kNo, [&]() -> absl::Status {
    victim = impl_->ChildKey(*d, n);
    if (unlinkat(d->fd.get(), n.c_str(), AT_REMOVEDIR) != 0) return Errno("rmdir");
    return absl::OkStatus();
  });
  if (status.ok()) impl_->ForgetIfUnlinked(victim);
  if (status.ok()) status = impl_->CommitMetadata(*d);
  return status;
}

absl::Status PosixBackend::Rename(const Cred& cred, const FileHandle& from_dir,
                                  std::string_view from_name, const FileHandle& to_dir,
                                  std::string_view to_name, Wcc* from_wcc, Wcc* to_wcc) {
  absl::StatusOr<Impl::NodePtr> from = impl_->Resolve(from_dir);
  if (!from.ok()) return from.status();
  absl::StatusOr<Impl::NodePtr> to = impl_->Resolve(to_dir);
  if (!to.ok()) return to.status();
  const Node& f = **from;
  const Node& t = **to;
  absl::Status valid = CheckName(from_name);
  if (valid.ok()) valid = CheckName(to_name);
  if (valid.ok() && (IsDotName(from_name) || IsDotName(to_name))) {
    valid = ErrnoError(EINVAL, "rename of . or ..");
  }
  if (valid.ok() && f.exp != t.exp) valid = ErrnoError(EXDEV, "rename across exports");
  if (!valid.ok()) {
    impl_->Refuse(f, from_wcc, valid).IgnoreError();
    return impl_->Refuse(t, to_wcc, valid);
  }
  absl::Status status;
  {
    // The caller's identity is set before the stripes are taken and restored
    // after they are let go, as in DirOp.
    ScopedCredentials creds(cred);
    // Both directories' stripes, in index order so concurrent renames can't
    // deadlock.
    size_t a = impl_->StripeIndex(f), b = impl_->StripeIndex(t);
    absl::Mutex* first = &impl_->Stripe(a <= b ? f : t);
    absl::Mutex* second = a == b ? nullptr : &impl_->Stripe(a <= b ? t : f);
    absl::MutexLock lock1(first);
    std::optional<absl::MutexLock> lock2;
    if (second) lock2.emplace(second);
    absl::StatusOr<struct stat> fb = impl_->Stat(f);
    if (!fb.ok()) return fb.status();
    absl::StatusOr<struct stat> tb = impl_->Stat(t);
    if (!tb.ok()) return tb.status();
    if (from_wcc) from_wcc->before = ToWcc(*fb);
    if (to_wcc) to_wcc->before = ToWcc(*tb);
    std::optional<std::string> victim;
    if (!S_ISDIR(fb->st_mode) || !S_ISDIR(tb->st_mode)) {
      status = ErrnoError(ENOTDIR, "rename: not a directory");
    } else {
      status = creds.status();
      if (status.ok()) {
        const std::string fname(from_name), tname(to_name);
        victim = impl_->ChildKey(t, tname);
        if (renameat(f.fd.get(), fname.c_str(), t.fd.get(), tname.c_str()) != 0) {
          status = Errno("rename");
        } else {
          impl_->NoteIfDirectoryMoved(t, tname);
        }
      }
    }
    if (from_wcc) from_wcc->after = impl_->AttrsOrNone(f);
    if (to_wcc) to_wcc->after = impl_->AttrsOrNone(t);
    if (status.ok()) impl_->ForgetIfUnlinked(victim);
  }
  // The fsyncs of a sync export, outside the stripes (see SetAttr).
  if (status.ok()) status = impl_->CommitMetadata(t);
  if (status.ok() && &f != &t) status = impl_->CommitMetadata(f);
  return status;
}

absl::Status PosixBackend::Link(const Cred& cred, const FileHandle& fh, const FileHandle& dir,
                                std::string_view name, std::optional<Attributes>* file_attributes,
                                Wcc* dir_wcc) {
  absl::StatusOr<Impl::NodePtr> file = impl_->Resolve(fh);
  if (!file.ok()) return file.status();
  absl::StatusOr<Impl::NodePtr> node = impl_->Resolve(dir);
  if (!node.ok()) return node.status();
  const Impl::NodePtr& d = *node;
  absl::Status valid = CheckNewName(name);
  if (valid.ok() && (*file)->exp != d->exp) valid = ErrnoError(EXDEV, "link across exports");
  if (!valid.ok()) {
    if (file_attributes) *file_attributes = impl_->AttrsOrNone(**file);
    return valid;
  }
  const std::string n(name);
  const std::string source = ProcPath((*file)->fd.get());
  absl::Status status = impl_->DirOp(cred, *d, dir_wcc, NewInode::kNo, [&]() -> absl::Status {
    // Following the /proc magic link needs no CAP_DAC_READ_SEARCH, unlike
    // linkat(fd, "", ..., AT_EMPTY_PATH).
    if (linkat(AT_FDCWD, source.c_str(), d->fd.get(), n.c_str(), AT_SYMLINK_FOLLOW) != 0) {
      return Errno("link");
    }
    return absl::OkStatus();
  });
  if (status.ok()) status = impl_->CommitMetadata(**file);  // its link count
  if (status.ok()) status = impl_->CommitMetadata(*d);
  if (file_attributes) *file_attributes = impl_->AttrsOrNone(**file);
  return status;
}

absl::Status PosixBackend::ReadDir(const Cred& cred, const FileHandle& dir, uint64_t cookie,
                                   Verifier* verifier,
                                   const std::function<bool(const DirEntry&)>& emit, bool* eof,
                                   std::optional<Attributes>* dir_attributes) {
  *eof = false;
  absl::StatusOr<Impl::NodePtr> node = impl_->Resolve(dir);
  if (!node.ok()) return node.status();
  const Node& d = **node;
  absl::StatusOr<struct stat> st = impl_->Stat(d);
  if (!st.ok()) return st.status();
  if (dir_attributes) *dir_attributes = impl_->ToAttributes(*st, *d.exp);
  if (!S_ISDIR(st->st_mode)) return ErrnoError(ENOTDIR, "readdir of a non-directory");
  // Constant verifier; any verifier the client sends is accepted.
  if (verifier) verifier->fill(0);
  UniqueFd dfd;
  {
    ScopedCredentials creds(cred);
    if (!creds.status().ok()) return creds.status();
    dfd = UniqueFd(open(ProcPath(d.fd.get()).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!dfd.valid()) return Errno("opendir");
  }
  if (cookie != 0) {
    if (cookie > static_cast<uint64_t>(std::numeric_limits<off_t>::max()) ||
        lseek(dfd.get(), static_cast<off_t>(cookie), SEEK_SET) < 0) {
      return ErrnoError(kErrBadCookie, "seek to cookie");
    }
  }
  const bool at_root = d.ino == d.exp->ino && d.dev == d.exp->dev;
  std::vector<char> buf(kReadDirBuffer);
  for (;;) {
    long n = syscall(SYS_getdents64, dfd.get(), buf.data(), buf.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return Errno("getdents64");
    }
    if (n == 0) {
      *eof = true;
      return absl::OkStatus();
    }
    for (long pos = 0; pos < n;) {
      // struct linux_dirent64: d_ino (8), d_off (8), d_reclen (2), d_type (1), name.
      const char* rec = buf.data() + pos;
      uint64_t ino;
      int64_t off;
      uint16_t reclen;
      std::memcpy(&ino, rec, 8);
      std::memcpy(&off, rec + 8, 8);
      std::memcpy(&reclen, rec + 16, 2);
      std::string_view name(rec + 19);
      pos += reclen;
      DirEntry entry;
      entry.fileid = (at_root && name == "..") ? d.exp->ino : ino;
      entry.name = name;
      entry.cookie = static_cast<uint64_t>(off);
      if (!emit(entry)) return absl::OkStatus();
    }
  }
}

}  // namespace nfs3d::vfs
