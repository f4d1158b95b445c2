#include "vfs/cephfs/cephfs_impl.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>

#include <cerrno>

#include "absl/strings/str_cat.h"

#include "common/log.h"
#include "vfs/backend_helpers.h"
#include "vfs/cephfs/cephfs_acl.h"
#include "vfs/posix_permission.h"

namespace nfs3d::vfs {
namespace {

constexpr size_t kHandleBody = 16;  // inode number, snapshot id
constexpr size_t kOpenFileCache = 1024;
constexpr size_t kInsideCache = 65536;  // directories known to be in the export

void PutBe64(uint8_t* p, uint64_t v) {
  for (int i = 7; i >= 0; --i, v >>= 8) p[i] = static_cast<uint8_t>(v);
}
uint64_t GetBe64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | p[i];
  return v;
}

}  // namespace

absl::Status CephError(int rc, std::string_view context) {
  int err = -rc;
  if (err == ETIMEDOUT || err == ENOTCONN || err == ESHUTDOWN || err == ECONNREFUSED) {
    err = kErrJukebox;
  }
  return ErrnoError(err, context);
}

using Impl = CephfsBackend::Impl;
using Export = Impl::Export;
using Node = Impl::Node;
using OpenFile = Impl::OpenFile;

CephfsBackend::Impl::~Impl() {
  {
    absl::MutexLock lock(&files_mu_);
    files_.clear();
  }
  // A session the cluster ended cannot flush anything: drop it.
  if (dead_.load()) {
    ceph_abort_conn(cm_);
  } else if (!unmounted_) {
    ceph_unmount(cm_);
  }
  ceph_release(cm_);
}

absl::Status Impl::SyncAndUnmount() {
  const int synced = ceph_sync_fs(cm_);
  {
    absl::MutexLock lock(&files_mu_);
    files_.clear();
  }
  const int unmounted = ceph_unmount(cm_);
  unmounted_ = true;
  if (synced < 0) return ErrnoError(-synced, absl::StrCat(cluster_, ": ceph_sync_fs"));
  if (unmounted < 0) return ErrnoError(-unmounted, absl::StrCat(cluster_, ": ceph_unmount"));
  return absl::OkStatus();
}

std::vector<std::tuple<uint32_t, std::string, uint64_t>> Impl::ExportList() {
  std::vector<std::tuple<uint32_t, std::string, uint64_t>> list;
  absl::ReaderMutexLock lock(&exports_mu_);
  for (const auto& [id, exp] : exports_) list.emplace_back(id, exp->path, exp->fsid);
  return list;
}

int Impl::ProbeSession() {
  Inode* root = nullptr;
  int rc = ceph_ll_lookup_root(cm_, &root);
  if (rc < 0) return rc;
  char value[32];
  rc =
      ceph_ll_getxattr(cm_, root, "ceph.dir.rentries", value, sizeof(value), ceph_mount_perms(cm_));
  ceph_ll_put(cm_, root);
  return rc;
}

absl::Status Impl::AddExport(uint32_t id, const std::string& path, uint64_t fsid) {
  Inode* in = nullptr;
  struct ceph_statx stx;
  int rc = ceph_ll_walk(cm_, path.c_str(), &in, &stx, kWantAttrs, 0, ceph_mount_perms(cm_));
  if (rc < 0) return CephError(rc, absl::StrCat(cluster_, ": export ", path));
  InodeRef ref(cm_, in);
  if (!S_ISDIR(stx.stx_mode)) return ErrnoError(ENOTDIR, absl::StrCat("export ", path));
  auto exp = std::make_unique<Export>();
  exp->id = id;
  exp->path = path;
  exp->root_ino = stx.stx_ino;
  exp->fsid = fsid != 0 ? fsid : (uint64_t{0xCE9F} << 48) | id;
  absl::MutexLock lock(&exports_mu_);
  if (exports_.count(id)) return ErrnoError(EEXIST, absl::StrCat("export id ", id, " taken"));
  exports_[id] = std::move(exp);
  return absl::OkStatus();
}

const Export* Impl::FindExport(uint32_t id) {
  absl::ReaderMutexLock lock(&exports_mu_);
  auto it = exports_.find(id);
  return it == exports_.end() ? nullptr : it->second.get();
}

absl::StatusOr<FileHandle> Impl::MakeHandle(const Export& exp, uint64_t ino, uint64_t snap) const {
  uint8_t body[kHandleBody];
  PutBe64(body, ino);
  PutBe64(body + 8, snap);
  return codec_.Encode(exp.id, kCephHandleType, {body, kHandleBody});
}

absl::StatusOr<std::tuple<const Export*, uint64_t, uint64_t>> Impl::Decode(const FileHandle& fh) {
  absl::StatusOr<DecodedHandle> d = codec_.Decode(fh);
  if (!d.ok()) return d.status();
  if (d->handle_type != kCephHandleType || d->kernel_len != kHandleBody) {
    return ErrnoError(kErrBadHandle, "not a CephFS handle");
  }
  const Export* exp = FindExport(d->export_id);
  if (exp == nullptr) return ErrnoError(ESTALE, "unknown export");
  return std::make_tuple(exp, GetBe64(d->kernel), GetBe64(d->kernel + 8));
}

absl::StatusOr<Node> Impl::Resolve(const FileHandle& fh) {
  auto decoded = Decode(fh);
  if (!decoded.ok()) return decoded.status();
  Node node;
  std::tie(node.exp, node.ino, node.snap) = *decoded;
  node.handle = fh;
  Inode* in = nullptr;
  vinodeno_t vino{{node.ino}, {node.snap}};
  int rc = ceph_ll_lookup_vino(cm_, vino, &in);
  if (rc < 0 && node.snap == kNoSnap) rc = ceph_ll_lookup_inode(cm_, inodeno_t{node.ino}, &in);
  if (rc == -ENOENT || rc == -ESTALE) return ErrnoError(ESTALE, "inode gone");
  // The MDS refuses an inode outside the paths the mount's user may reach.
  if (rc == -EACCES || rc == -EPERM) return ErrnoError(ESTALE, "outside the export");
  if (rc < 0) return CephError(rc, "lookup inode");
  node.inode = InodeRef(cm_, in);
  if (spec_.root != "/" && node.snap == kNoSnap) {
    absl::Status inside = CheckUnderRoot(*node.exp, in, node.ino);
    if (!inside.ok()) return inside;
  }
  return node;
}

absl::Status Impl::CheckUnderRoot(const Export& exp, Inode* in, uint64_t ino) {
  {
    absl::ReaderMutexLock lock(&inside_mu_);
    if (inside_.contains(ino)) return absl::OkStatus();
  }
  const uint64_t checked = ino;
  auto remember = [&] {
    absl::MutexLock lock(&inside_mu_);
    if (inside_.size() >= kInsideCache) inside_.clear();
    inside_.insert(checked);
    return absl::OkStatus();
  };
  struct ceph_statx stx;
  int rc = ceph_ll_getattr(cm_, in, &stx, CEPH_STATX_MODE, 0, ceph_mount_perms(cm_));
  if (rc < 0) return CephError(rc, "getattr");
  // libcephfs knows no parent of a file: the MDS's path caps confine files.
  if (!S_ISDIR(stx.stx_mode)) return remember();
  constexpr int kMaxDepth = 4096;
  InodeRef held;  // the reference on `at` once it is an ancestor
  Inode* at = in;
  for (int depth = 0; depth < kMaxDepth; ++depth) {
    if (ino == exp.root_ino) return remember();
    Inode* parent = nullptr;
    rc = ceph_ll_lookup(cm_, at, "..", &parent, &stx, CEPH_STATX_INO, 0, ceph_mount_perms(cm_));
    if (rc == -EACCES || rc == -EPERM || rc == -ENOENT) break;
    if (rc < 0) return CephError(rc, "lookup ..");
    InodeRef next(cm_, parent);
    if (stx.stx_ino == ino) break;  // the file system root: its own parent
    ino = stx.stx_ino;
    at = parent;
    held = std::move(next);
  }
  return ErrnoError(ESTALE, "outside the export");
}

absl::StatusOr<Node> Impl::Root(uint32_t export_id) {
  const Export* exp = FindExport(export_id);
  if (exp == nullptr) return ErrnoError(ESTALE, "unknown export");
  absl::StatusOr<FileHandle> fh = MakeHandle(*exp, exp->root_ino, kNoSnap);
  if (!fh.ok()) return fh.status();
  return Resolve(*fh);
}

Attributes Impl::ToAttributes(const struct ceph_statx& stx, const Export& exp) const {
  Attributes a;
  a.type = FileTypeOf(stx.stx_mode);
  a.mode = stx.stx_mode & 07777;
  a.nlink = stx.stx_nlink == 0 ? 1 : stx.stx_nlink;
  a.uid = stx.stx_uid;
  a.gid = stx.stx_gid;
  a.size = stx.stx_size;
  a.used = stx.stx_blocks * 512;
  a.rdev_major = major(stx.stx_rdev);
  a.rdev_minor = minor(stx.stx_rdev);
  a.fsid = SnapshotFsid(exp.fsid, SnapOf(stx));
  a.fileid = stx.stx_ino;
  a.atime = ToTime(stx.stx_atime);
  a.mtime = ToTime(stx.stx_mtime);
  a.ctime = ToTime(stx.stx_ctime);
  return a;
}

absl::StatusOr<struct ceph_statx> Impl::StatX(Inode* in) {
  struct ceph_statx stx;
  int rc = ceph_ll_getattr(cm_, in, &stx, kWantAttrs, 0, ceph_mount_perms(cm_));
  if (rc < 0) return CephError(rc, "getattr");
  return stx;
}

absl::StatusOr<Attributes> Impl::Attrs(const Node& node) {
  absl::StatusOr<struct ceph_statx> stx = StatX(node.inode.get());
  if (!stx.ok()) return stx.status();
  // libcephfs keeps a removed inode while it holds capabilities on it;
  // for NFS its handle is stale.
  if (stx->stx_nlink == 0) return ErrnoError(ESTALE, "removed");
  return ToAttributes(*stx, *node.exp);
}

std::optional<Attributes> Impl::AttrsOrNone(const Node& node) {
  absl::StatusOr<Attributes> a = Attrs(node);
  return a.ok() ? std::optional<Attributes>(*a) : std::nullopt;
}

absl::StatusOr<bool> Impl::MayIo(const Cred& cred, const Node& node, const Attributes& a,
                                 bool write) {
  absl::StatusOr<Acl> acl = AclToCheck(cred, node, a);
  if (!acl.ok()) return acl.status();
  return MayReadOrWrite(cred, a, *acl, write);
}

absl::StatusOr<Acl> Impl::AclToCheck(const Cred& cred, const Node& node, const Attributes& a) {
  if (cred.uid == 0 || cred.uid == a.uid || a.type == FileType::kSymlink) return Acl();
  absl::StatusOr<Acl> acl = ReadCephAcl(cm_, node.inode.get(), kAclAccessXattr);
  if (!acl.ok()) return CephError(-ErrnoOf(acl.status()), "reading the access ACL");
  return acl;
}

absl::Status Impl::DropPrivileges(const Cred& cred, Inode* in, const Attributes& a) {
  const uint32_t mode = ModeAfterWrite(cred, a);
  if (mode == a.mode) return absl::OkStatus();
  struct ceph_statx stx = {};
  stx.stx_mode = static_cast<uint16_t>(mode);
  int rc = ceph_ll_setattr(cm_, in, &stx, CEPH_SETATTR_MODE, ceph_mount_perms(cm_));
  return rc < 0 ? CephError(rc, "clearing setuid/setgid") : absl::OkStatus();
}

absl::Status Impl::SetModeAfterChown(const Cred& cred, const Node& node, const Attributes& before) {
  absl::StatusOr<Attributes> now = Attrs(node);
  if (!now.ok()) return now.status();
  const uint32_t mode = ModeAfterChown(cred, before);
  if (now->mode == mode) return absl::OkStatus();
  struct ceph_statx stx = {};
  stx.stx_mode = static_cast<uint16_t>(mode);
  return SetattrDurably(node.inode.get(), &stx, CEPH_SETATTR_MODE, ceph_mount_perms(cm_),
                        "setting the mode after chown");
}

absl::Status Impl::SetattrDurably(Inode* in, struct ceph_statx* stx, int mask, UserPerm* perm,
                                  const char* what) {
  int rc = ceph_ll_setattr(cm_, in, stx, mask, perm);
  if (rc < 0) return CephError(rc, what);
  // libcephfs keeps a change it holds the capability for (the mode under
  // Ax, times under Fx) in its cache and tells the MDS later: this
  // machine's crash before then would lose a change the reply called done
  // (the power-cut matrix lost a chmod so). Flush it and wait for the MDS.
  rc = ceph_ll_sync_inode(cm_, in, 0);
  return rc < 0 ? CephError(rc, absl::StrCat(what, ": flushing it to the MDS")) : absl::OkStatus();
}

absl::Status Impl::RefreshDirectory(Inode* in) {
  char value[32];
  int rc =
      ceph_ll_getxattr(cm_, in, "ceph.dir.subdirs", value, sizeof(value), ceph_mount_perms(cm_));
  return rc < 0 ? CephError(rc, "refreshing directory statistics") : absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<OpenFile>> Impl::File(const Node& node) {
  {
    absl::MutexLock lock(&files_mu_);
    auto it = files_.find({node.ino, node.snap});
    if (it != files_.end()) return it->second;
  }
  auto file = std::make_shared<OpenFile>();
  file->cm = cm_;
  const int flags = InSnapshot(node.snap) ? O_RDONLY : O_RDWR;
  int rc = ceph_ll_open(cm_, node.inode.get(), flags, &file->fh, ceph_mount_perms(cm_));
  if (rc < 0) return CephError(rc, "open");
  absl::MutexLock lock(&files_mu_);
  auto [it, inserted] = files_.emplace(FileKey{node.ino, node.snap}, file);
  if (inserted && files_.size() > kOpenFileCache) {
    // Evict another entry; users still holding it keep it open.
    auto victim = files_.begin();
    if (victim == it) ++victim;
    files_.erase(victim);
  }
  return it->second;
}

void Impl::ForgetFile(uint64_t ino) {
  std::shared_ptr<OpenFile> gone;
  absl::MutexLock lock(&files_mu_);
  auto it = files_.find({ino, kNoSnap});
  if (it == files_.end()) return;
  gone = std::move(it->second);
  files_.erase(it);
}

absl::Status Impl::Sync(OpenFile& file) {
  return file.sync.Sync([&] { return -ceph_ll_fsync(cm_, file.fh, 0); },
                        [this] { RotateVerifier(); });
}

absl::Status Impl::ApplyAttrs(const Cred& cred, Inode* in, const SetAttributes& attrs) {
  struct ceph_statx stx = {};
  int mask = 0;
  if (attrs.mode)
    stx.stx_mode = static_cast<uint16_t>(*attrs.mode & 07777), mask |= CEPH_SETATTR_MODE;
  if (attrs.uid) stx.stx_uid = *attrs.uid, mask |= CEPH_SETATTR_UID;
  if (attrs.gid) stx.stx_gid = *attrs.gid, mask |= CEPH_SETATTR_GID;
  if (attrs.size) stx.stx_size = *attrs.size, mask |= CEPH_SETATTR_SIZE;
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  auto set_time = [&](SetTime how, const Time& t, struct timespec* out, int flag, int now_flag) {
    if (how == SetTime::kDontChange) return;
    mask |= flag;
    if (how == SetTime::kServerTime) {
      *out = now;
      mask |= now_flag;
    } else {
      out->tv_sec = t.seconds;
      out->tv_nsec = t.nseconds;
    }
  };
  set_time(attrs.atime_how, attrs.atime, &stx.stx_atime, CEPH_SETATTR_ATIME,
           CEPH_SETATTR_ATIME_NOW);
  set_time(attrs.mtime_how, attrs.mtime, &stx.stx_mtime, CEPH_SETATTR_MTIME,
           CEPH_SETATTR_MTIME_NOW);
  if (mask == 0) return absl::OkStatus();
  Perm perm(cred);
  return SetattrDurably(in, &stx, mask, perm.get(), "setattr");
}

absl::Status Impl::DirOp(const Node& dir, Wcc* wcc, const std::function<absl::Status()>& op) {
  std::optional<Attributes> before = AttrsOrNone(dir);
  if (wcc && before) wcc->before = ToWcc(*before);
  if (before && before->type != FileType::kDirectory) {
    if (wcc) wcc->after = before;
    return ErrnoError(ENOTDIR, "not a directory");
  }
  absl::Status st = op();
  if (wcc) wcc->after = AttrsOrNone(dir);
  return st;
}

absl::StatusOr<CreateResult> Impl::Finish(const Cred& cred, const Node& dir, Inode* in,
                                          const SetAttributes* attrs, bool regular) {
  InodeRef ref(cm_, in);
  if (attrs) {
    SetAttributes rest = *attrs;
    rest.mode.reset();
    if (!regular) rest.size.reset();
    absl::Status applied = ApplyAttrs(cred, in, rest);
    if (!applied.ok()) return applied;
  }
  absl::StatusOr<struct ceph_statx> stx = StatX(in);
  if (!stx.ok()) return stx.status();
  absl::StatusOr<FileHandle> fh = MakeHandle(*dir.exp, stx->stx_ino, kNoSnap);
  if (!fh.ok()) return fh.status();
  return CreateResult{*fh, ToAttributes(*stx, *dir.exp)};
}

absl::Status Impl::NewEntry(const Cred& cred, const FileHandle& dir, std::string_view name,
                            Wcc* dir_wcc, const EntryOp& op) {
  absl::StatusOr<Node> d = Resolve(dir);
  if (!d.ok()) return d.status();
  absl::Status valid = CheckNewName(name);
  if (valid.ok()) valid = RefuseInSnapshot(d->snap, "new entry");
  if (!valid.ok()) return valid;
  const std::string n(name);
  Perm perm(cred);
  return DirOp(*d, dir_wcc, [&] { return op(*d, n.c_str(), perm.get()); });
}

absl::StatusOr<CreateResult> Impl::MakeEntry(const Cred& cred, const FileHandle& dir,
                                             std::string_view name, Wcc* dir_wcc, const char* what,
                                             const SetAttributes* attrs, bool regular,
                                             const MakeFn& make) {
  absl::StatusOr<CreateResult> result = ErrnoError(EIO, what);
  absl::Status st = NewEntry(cred, dir, name, dir_wcc,
                             [&](const Node& d, const char* n, UserPerm* perm) -> absl::Status {
                               Inode* in = nullptr;
                               int rc = make(d.inode.get(), n, perm, &in);
                               if (rc < 0) return CephError(rc, what);
                               result = Finish(cred, d, in, attrs, regular);
                               return result.status();
                             });
  if (!st.ok()) return st;
  return result;
}

void Impl::RotateVerifier(const char* why) {
  uint64_t old = verifier_->load();
  uint64_t next = RandomU64();
  if (next == old) ++next;
  verifier_->store(next);
  NFS3D_LOG_WARNING("%s: %s: write verifier changed", cluster_.c_str(), why);
}

}  // namespace nfs3d::vfs
