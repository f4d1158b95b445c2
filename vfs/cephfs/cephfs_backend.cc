#include "vfs/cephfs/cephfs_backend.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <map>
#include <unordered_map>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/log.h"
#include "vfs/backend_helpers.h"
#include "vfs/cephfs/cephfs_acl.h"
#include "vfs/cephfs/cephfs_quota.h"
#include "vfs/cephfs/cephfs_snapshots.h"
#include "vfs/cephfs/malloc_settings.h"
#include "vfs/cephfs/session_watch.h"
#include "vfs/cephfs/shared_handle_key.h"
#include "vfs/file_handle_codec.h"
#include "vfs/posix_permission.h"
#include "vfs/siphash.h"
#include "vfs/state_dir.h"
#include "vfs/sync_group.h"

#include <cephfs/libcephfs.h>

// libcephfs.h declares these only for its own C++ build; its C definitions
// (plain structs of 64-bit numbers) are what the ABI passes.
struct inodeno_t {
  uint64_t val;
};
struct vinodeno_t {
  inodeno_t ino;
  struct {
    uint64_t val;
  } snapid;
};

namespace nfs3d::vfs {
namespace {

constexpr uint64_t kNoSnap = kCephNoSnap;
constexpr size_t kHandleBody = 16;               // inode number, snapshot id
constexpr size_t kOpenFileCache = 1024;
constexpr char kVerifierXattr[] = "user.nfs3d.verifier";
constexpr unsigned kWantAttrs = CEPH_STATX_BASIC_STATS;

// A libcephfs result (negative errno) as a Status. Errors meaning the
// cluster did not answer in time become kErrJukebox (try later).
absl::Status CephError(int rc, std::string_view context) {
  int err = -rc;
  if (err == ETIMEDOUT || err == ENOTCONN || err == ESHUTDOWN || err == ECONNREFUSED) {
    err = kErrJukebox;
  }
  return ErrnoError(err, context);
}

void PutBe64(uint8_t* p, uint64_t v) {
  for (int i = 7; i >= 0; --i, v >>= 8) p[i] = static_cast<uint8_t>(v);
}
uint64_t GetBe64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | p[i];
  return v;
}

WccAttr ToWcc(const Attributes& a) { return WccAttr{a.size, a.mtime, a.ctime}; }

// The snapshot an inode belongs to: libcephfs reports it as the device.
uint64_t SnapOf(const struct ceph_statx& stx) { return stx.stx_dev; }

// The caller's identity for one call. ceph_userperm_new keeps the pointer
// to the group list, not a copy: the list lives as long as the UserPerm.
class Perm {
 public:
  explicit Perm(const Cred& cred) : groups_(cred.groups.begin(), cred.groups.end()) {
    perm_ = ceph_userperm_new(cred.uid, cred.gid, static_cast<int>(groups_.size()),
                              groups_.empty() ? nullptr : groups_.data());
  }
  ~Perm() { ceph_userperm_destroy(perm_); }
  Perm(const Perm&) = delete;
  Perm& operator=(const Perm&) = delete;
  UserPerm* get() const { return perm_; }

 private:
  std::vector<gid_t> groups_;
  UserPerm* perm_;
};

}  // namespace

class CephfsBackend::Impl {
 public:
  // One reference on a libcephfs inode, released when it goes.
  class InodeRef {
   public:
    InodeRef() = default;
    InodeRef(ceph_mount_info* cm, Inode* in) : cm_(cm), in_(in) {}
    InodeRef(InodeRef&& o) noexcept : cm_(o.cm_), in_(std::exchange(o.in_, nullptr)) {}
    InodeRef& operator=(InodeRef&& o) noexcept {
      Reset();
      cm_ = o.cm_;
      in_ = std::exchange(o.in_, nullptr);
      return *this;
    }
    ~InodeRef() { Reset(); }
    Inode* get() const { return in_; }

   private:
    void Reset() {
      if (in_) ceph_ll_put(cm_, in_);
      in_ = nullptr;
    }
    ceph_mount_info* cm_ = nullptr;
    Inode* in_ = nullptr;
  };

  struct Export {
    uint32_t id = 0;
    std::string path;
    uint64_t root_ino = 0;
    uint64_t fsid = 0;
  };

  // A resolved handle: its export, inode and where it came from.
  struct Node {
    const Export* exp = nullptr;
    uint64_t ino = 0;
    uint64_t snap = kNoSnap;
    InodeRef inode;
    FileHandle handle;
    bool is_root() const { return ino == exp->root_ino && snap == kNoSnap; }
  };

  // An open file for data I/O (opened with the mount's identity).
  struct OpenFile {
    ceph_mount_info* cm = nullptr;
    Fh* fh = nullptr;
    SyncGroup sync;
    ~OpenFile() {
      if (fh) ceph_ll_close(cm, fh);
    }
  };

  Impl(ceph_mount_info* cm, const HandleSecret& secret, std::string cluster)
      : cm_(cm), codec_(secret), cluster_(std::move(cluster)), verifier_(RandomU64()) {}
  ~Impl() {
    {
      absl::MutexLock lock(&files_mu_);
      files_.clear();
    }
    // A session the cluster ended cannot flush anything: drop it.
    if (dead_.load()) {
      ceph_abort_conn(cm_);
    } else {
      ceph_unmount(cm_);
    }
    ceph_release(cm_);
  }

  // This mount's session was ended by the cluster; a new one replaces it.
  void MarkDead() { dead_.store(true); }

  // The exports, to serve them from a new session: id, path, fsid.
  std::vector<std::tuple<uint32_t, std::string, uint64_t>> ExportList() {
    std::vector<std::tuple<uint32_t, std::string, uint64_t>> list;
    absl::ReaderMutexLock lock(&exports_mu_);
    for (const auto& [id, exp] : exports_) list.emplace_back(id, exp->path, exp->fsid);
    return list;
  }

  // A call the MDS must answer (directory statistics are never served from
  // the cache): its result tells whether the session is still alive.
  int ProbeSession() {
    Inode* root = nullptr;
    int rc = ceph_ll_lookup_root(cm_, &root);
    if (rc < 0) return rc;
    char value[32];
    rc = ceph_ll_getxattr(cm_, root, "ceph.dir.rentries", value, sizeof(value),
                          ceph_mount_perms(cm_));
    ceph_ll_put(cm_, root);
    return rc;
  }

  ceph_mount_info* cm() const { return cm_; }
  const std::string& cluster() const { return cluster_; }

  absl::Status AddExport(uint32_t id, const std::string& path, uint64_t fsid) {
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

  const Export* FindExport(uint32_t id) {
    absl::ReaderMutexLock lock(&exports_mu_);
    auto it = exports_.find(id);
    return it == exports_.end() ? nullptr : it->second.get();
  }

  absl::StatusOr<FileHandle> MakeHandle(const Export& exp, uint64_t ino, uint64_t snap) const {
    uint8_t body[kHandleBody];
    PutBe64(body, ino);
    PutBe64(body + 8, snap);
    return codec_.Encode(exp.id, kCephHandleType, {body, kHandleBody});
  }

  // The export a handle belongs to, with its inode number and snapshot.
  absl::StatusOr<std::tuple<const Export*, uint64_t, uint64_t>> Decode(const FileHandle& fh) {
    absl::StatusOr<DecodedHandle> d = codec_.Decode(fh);
    if (!d.ok()) return d.status();
    if (d->handle_type != kCephHandleType || d->kernel_len != kHandleBody) {
      return ErrnoError(kErrBadHandle, "not a CephFS handle");
    }
    const Export* exp = FindExport(d->export_id);
    if (exp == nullptr) return ErrnoError(ESTALE, "unknown export");
    return std::make_tuple(exp, GetBe64(d->kernel), GetBe64(d->kernel + 8));
  }

  // Finds the handle's inode: in libcephfs's cache, else by number from the
  // MDS (after a restart). ESTALE once the inode is gone.
  absl::StatusOr<Node> Resolve(const FileHandle& fh) {
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
    if (rc < 0) return CephError(rc, "lookup inode");
    node.inode = InodeRef(cm_, in);
    return node;
  }

  absl::StatusOr<Node> Root(uint32_t export_id) {
    const Export* exp = FindExport(export_id);
    if (exp == nullptr) return ErrnoError(ESTALE, "unknown export");
    absl::StatusOr<FileHandle> fh = MakeHandle(*exp, exp->root_ino, kNoSnap);
    if (!fh.ok()) return fh.status();
    return Resolve(*fh);
  }

  Attributes ToAttributes(const struct ceph_statx& stx, const Export& exp) const {
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

  absl::StatusOr<struct ceph_statx> StatX(Inode* in) {
    struct ceph_statx stx;
    int rc = ceph_ll_getattr(cm_, in, &stx, kWantAttrs, 0, ceph_mount_perms(cm_));
    if (rc < 0) return CephError(rc, "getattr");
    return stx;
  }

  absl::StatusOr<Attributes> Attrs(const Node& node) {
    absl::StatusOr<struct ceph_statx> stx = StatX(node.inode.get());
    if (!stx.ok()) return stx.status();
    // libcephfs keeps a removed inode while it holds capabilities on it;
    // for NFS its handle is stale.
    if (stx->stx_nlink == 0) return ErrnoError(ESTALE, "removed");
    return ToAttributes(*stx, *node.exp);
  }

  std::optional<Attributes> AttrsOrNone(const Node& node) {
    absl::StatusOr<Attributes> a = Attrs(node);
    return a.ok() ? std::optional<Attributes>(*a) : std::nullopt;
  }

  // Permission to read or write a file's data as cred: data I/O runs with
  // the mount's identity, so the POSIX rules are checked here.
  absl::StatusOr<bool> MayIo(const Cred& cred, const Node& node, const Attributes& a,
                             bool write) {
    absl::StatusOr<Acl> acl = AclToCheck(cred, node, a);
    if (!acl.ok()) return acl.status();
    return MayReadOrWrite(cred, a, *acl, write);
  }

  // The access ACL that decides what cred may do to the object; empty when
  // only the mode bits matter (root, the owner, no ACL).
  absl::StatusOr<Acl> AclToCheck(const Cred& cred, const Node& node, const Attributes& a) {
    if (cred.uid == 0 || cred.uid == a.uid || a.type == FileType::kSymlink) return Acl();
    absl::StatusOr<Acl> acl = ReadCephAcl(cm_, node.inode.get(), kAclAccessXattr);
    if (!acl.ok()) return CephError(-ErrnoOf(acl.status()), "reading the access ACL");
    return acl;
  }

  // After cred wrote to or truncated the file whose attributes were a: the
  // setuid/setgid bits the kernel would clear. Cleared with the mount's
  // identity, since the caller may not own the file.
  absl::Status DropPrivileges(const Cred& cred, Inode* in, const Attributes& a) {
    const uint32_t mode = ModeAfterWrite(cred, a);
    if (mode == a.mode) return absl::OkStatus();
    struct ceph_statx stx = {};
    stx.stx_mode = static_cast<uint16_t>(mode);
    int rc = ceph_ll_setattr(cm_, in, &stx, CEPH_SETATTR_MODE, ceph_mount_perms(cm_));
    return rc < 0 ? CephError(rc, "clearing setuid/setgid") : absl::OkStatus();
  }

  // After a chown: the MDS clears setuid/setgid by its own rule, which
  // differs from Linux's for setgid without group-execute.
  absl::Status SetModeAfterChown(const Cred& cred, const Node& node, const Attributes& before) {
    absl::StatusOr<Attributes> now = Attrs(node);
    if (!now.ok()) return now.status();
    const uint32_t mode = ModeAfterChown(cred, before);
    if (now->mode == mode) return absl::OkStatus();
    struct ceph_statx stx = {};
    stx.stx_mode = static_cast<uint16_t>(mode);
    int rc = ceph_ll_setattr(cm_, node.inode.get(), &stx, CEPH_SETATTR_MODE, ceph_mount_perms(cm_));
    return rc < 0 ? CephError(rc, "setting the mode after chown") : absl::OkStatus();
  }

  // Fetches a directory's attributes from the MDS: its link count counts
  // its subdirectories, which libcephfs's cache does not follow when one
  // moves away, and ll_getattr cannot be forced to ask. Reading a
  // directory-statistics xattr makes libcephfs ask the MDS.
  absl::Status RefreshDirectory(Inode* in) {
    char value[32];
    int rc = ceph_ll_getxattr(cm_, in, "ceph.dir.subdirs", value, sizeof(value),
                              ceph_mount_perms(cm_));
    return rc < 0 ? CephError(rc, "refreshing directory statistics") : absl::OkStatus();
  }

  // The file's I/O handle, opened on first use.
  absl::StatusOr<std::shared_ptr<OpenFile>> File(const Node& node) {
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

  void ForgetFile(uint64_t ino) {
    std::shared_ptr<OpenFile> gone;
    absl::MutexLock lock(&files_mu_);
    auto it = files_.find({ino, kNoSnap});
    if (it == files_.end()) return;
    gone = std::move(it->second);
    files_.erase(it);
  }

  // One gathered fsync of the file; a failure changes the verifier.
  absl::Status Sync(OpenFile& file) {
    return file.sync.Sync([&] { return -ceph_ll_fsync(cm_, file.fh, 0); },
                          [this] { RotateVerifier(); });
  }

  // Applies attrs as cred (libcephfs and the MDS check permissions).
  absl::Status ApplyAttrs(const Cred& cred, Inode* in, const SetAttributes& attrs) {
    struct ceph_statx stx = {};
    int mask = 0;
    if (attrs.mode) stx.stx_mode = static_cast<uint16_t>(*attrs.mode & 07777), mask |= CEPH_SETATTR_MODE;
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
    int rc = ceph_ll_setattr(cm_, in, &stx, mask, perm.get());
    return rc < 0 ? CephError(rc, "setattr") : absl::OkStatus();
  }

  // Runs a directory-changing op with wcc around it.
  absl::Status DirOp(const Node& dir, Wcc* wcc, const std::function<absl::Status()>& op) {
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

  // Handle and attributes of a new object (takes over the reference on in);
  // applies what attrs the create did not (uid/gid, times; the size of a
  // regular file) as cred. Like the POSIX backend, a change that fails
  // fails the call.
  absl::StatusOr<CreateResult> Finish(const Cred& cred, const Node& dir, Inode* in,
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

  // CREATE, MKDIR, SYMLINK, MKNOD, LINK: resolves dir, checks the new name
  // and runs op(dir, name, the caller's identity) with wcc around it.
  using EntryOp = std::function<absl::Status(const Node& dir, const char* name, UserPerm* perm)>;
  absl::Status NewEntry(const Cred& cred, const FileHandle& dir, std::string_view name,
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

  // NewEntry for a call that makes an object: make (a ceph_ll_* call)
  // returns a negative errno, or 0 with a reference on the new inode in *in;
  // the object is then finished with attrs.
  using MakeFn = std::function<int(Inode* dir, const char* name, UserPerm* perm, Inode** in)>;
  absl::StatusOr<CreateResult> MakeEntry(const Cred& cred, const FileHandle& dir,
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

  uint64_t verifier() const { return verifier_.load(); }
  void RotateVerifier(const char* why = "sync failed") {
    uint64_t old = verifier_.load();
    uint64_t next = RandomU64();
    if (next == old) ++next;
    verifier_.store(next);
    NFS3D_LOG_WARNING("%s: %s: write verifier changed", cluster_.c_str(), why);
  }

 private:
  ceph_mount_info* const cm_;
  std::atomic<bool> dead_{false};
  const HandleCodec codec_;
  const std::string cluster_;
  std::atomic<uint64_t> verifier_;
  absl::Mutex exports_mu_;
  std::map<uint32_t, std::unique_ptr<Export>> exports_ ABSL_GUARDED_BY(exports_mu_);
  absl::Mutex files_mu_;
  // Open files by inode and snapshot (a snapshot's inodes have the live
  // inode numbers).
  using FileKey = std::pair<uint64_t, uint64_t>;
  std::unordered_map<FileKey, std::shared_ptr<OpenFile>, absl::Hash<FileKey>> files_
      ABSL_GUARDED_BY(files_mu_);
};

namespace {

Verifier ToVerifier(uint64_t v) {
  Verifier out;
  std::memcpy(out.data(), &v, sizeof(v));
  return out;
}

}  // namespace

namespace {

// A libcephfs handle configured from options and connected to the monitors
// (ceph_init); errors name the step that failed.
absl::StatusOr<ceph_mount_info*> Connect(const CephfsOptions& options, const std::string& cluster) {
  auto fail = [&](int rc, std::string_view step) {
    return absl::UnavailableError(absl::StrCat(cluster, ": ", std::string(step), " failed: ",
                                               std::string(std::strerror(rc < 0 ? -rc : rc))));
  };
  ceph_mount_info* cm = nullptr;
  int rc = ceph_create(&cm, options.client_id.empty() ? nullptr : options.client_id.c_str());
  if (rc < 0) return fail(rc, "ceph_create");
  auto bail = [&](int rc, std::string_view step) {
    ceph_release(cm);
    return fail(rc, step);
  };
  rc = ceph_conf_read_file(cm, options.conf_path.empty() ? nullptr : options.conf_path.c_str());
  if (rc < 0) return bail(rc, "reading ceph.conf");
  if (!options.keyring.empty()) {
    rc = ceph_conf_set(cm, "keyring", options.keyring.c_str());
    if (rc < 0) return bail(rc, "setting keyring");
  }
  const std::string timeout = std::to_string(options.timeout_seconds);
  for (const char* opt : {"client_mount_timeout", "rados_mon_op_timeout", "rados_osd_op_timeout"}) {
    rc = ceph_conf_set(cm, opt, timeout.c_str());
    if (rc < 0) return bail(rc, absl::StrCat("setting ", opt));
  }
  // POSIX ACLs, as on a POSIX export: libcephfs then checks and inherits them.
  rc = ceph_conf_set(cm, "client_acl_type", "posix_acl");
  if (rc < 0) return bail(rc, "setting client_acl_type");
  // Modes come from the NFS client, which applied its umask already.
  ceph_umask(cm, 0);
  rc = ceph_init(cm);
  if (rc < 0) return bail(rc, "connecting to the monitors (ceph_init)");
  if (!options.fs_name.empty()) {
    rc = ceph_select_filesystem(cm, options.fs_name.c_str());
    if (rc < 0) {
      ceph_shutdown(cm);
      return fail(rc, "selecting the file system");
    }
  }
  return cm;
}

// This head's CephFS session id: the same after a restart (host name, state
// directory and its secret), another for every other head, also for heads
// that share the handle key.
std::string SessionUuid(const HandleSecret& secret, const std::string& state_dir) {
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  SipKey key;
  std::memcpy(key.data(), secret.data(), key.size());
  const std::string label = absl::StrCat("nfs3d cephfs session ", state_dir);
  const uint64_t id =
      SipHash24(key, {reinterpret_cast<const uint8_t*>(label.data()), label.size()});
  return absl::StrCat("nfs3d-", host, "-", absl::Hex(id, absl::kZeroPad16));
}

// A new mount with session id uuid, after ending the session an earlier
// instance with that id left behind.
absl::StatusOr<ceph_mount_info*> OpenSession(const CephfsOptions& options,
                                             const std::string& cluster,
                                             const std::string& uuid) {
  // End the session an earlier instance of this head left behind: after a
  // crash the MDS would keep its capabilities until the session times out,
  // and calls on the files it had open would wait that long.
  absl::StatusOr<ceph_mount_info*> reclaimer = Connect(options, cluster);
  if (!reclaimer.ok()) return reclaimer.status();
  int rc = ceph_start_reclaim(*reclaimer, uuid.c_str(), CEPH_RECLAIM_RESET);
  if (rc == 0) {
    ceph_finish_reclaim(*reclaimer);
    NFS3D_LOG_INFO("%s: ended the session of the previous instance (%s)", cluster.c_str(),
                   uuid.c_str());
  } else if (rc != -ENOENT) {
    NFS3D_LOG_WARNING("%s: could not end the previous instance's session: %s", cluster.c_str(),
                      std::strerror(-rc));
  }
  ceph_shutdown(*reclaimer);

  absl::StatusOr<ceph_mount_info*> cm = Connect(options, cluster);
  if (!cm.ok()) return cm.status();
  ceph_set_uuid(*cm, uuid.c_str());
  rc = ceph_mount(*cm, "/");
  if (rc < 0) {
    ceph_shutdown(*cm);
    return absl::UnavailableError(absl::StrCat(cluster, ": mounting the file system (ceph_mount) failed: ",
                                               std::string(std::strerror(-rc))));
  }
  return *cm;
}

}  // namespace

absl::StatusOr<std::unique_ptr<CephfsBackend>> CephfsBackend::Create(const CephfsOptions& options) {
  const std::string cluster = absl::StrCat(
      "ceph cluster ", options.conf_path.empty() ? "(default ceph.conf)" : options.conf_path,
      " as client.", options.client_id.empty() ? "admin" : options.client_id, ", file system ",
      options.fs_name.empty() ? "(default)" : options.fs_name);
  absl::StatusOr<std::unique_ptr<StateDir>> dir = StateDir::Open(options.state_dir);
  if (!dir.ok()) return dir.status();
  absl::StatusOr<HandleSecret> secret = (*dir)->LoadOrCreateSecret();
  if (!secret.ok()) return secret.status();
  KeepWriteBuffersInMallocArenas();
  const bool clustered = !options.node_id.empty();
  const std::string uuid =
      clustered ? absl::StrCat("nfs3d-", options.cluster_name, "-", options.node_id)
                : SessionUuid(*secret, options.state_dir);

  absl::StatusOr<ceph_mount_info*> cm = OpenSession(options, cluster, uuid);
  if (!cm.ok()) return cm.status();
  if (clustered) {
    secret = LoadOrCreateSharedHandleKey(*cm, options.shared_dir, options.node_id, cluster);
    if (!secret.ok()) {
      ceph_unmount(*cm);
      ceph_shutdown(*cm);
      return secret.status();
    }
    NFS3D_LOG_INFO("%s: node %s of cluster %s, handle key from %s/handle.key", cluster.c_str(),
                   options.node_id.c_str(), options.cluster_name.c_str(),
                   options.shared_dir.c_str());
  }
  std::unique_ptr<CephfsBackend> backend(new CephfsBackend());
  {
    absl::MutexLock lock(&backend->impl_mu_);
    backend->impl_ = std::make_shared<Impl>(*cm, *secret, cluster);
  }
  backend->cluster_ = cluster;
  backend->options_ = options;
  backend->uuid_ = uuid;
  backend->secret_ = *secret;
  if (clustered) {
    backend->node_id_ = options.node_id;
    backend->shared_dir_ = options.shared_dir;
  }
  if (options.session_check_seconds > 0) {
    CephfsBackend* b = backend.get();
    backend->watch_ = std::make_unique<SessionWatch>(
        absl::Seconds(options.session_check_seconds),
        [b] { return b->CurrentImpl()->ProbeSession(); }, [b] { return b->ReplaceSession(); });
  }
  return backend;
}

absl::Status CephfsBackend::ReplaceSession() {
  const std::shared_ptr<Impl> old = CurrentImpl();
  absl::StatusOr<ceph_mount_info*> cm = OpenSession(options_, cluster_, uuid_);
  if (!cm.ok()) return cm.status();
  auto fresh = std::make_shared<Impl>(*cm, secret_, cluster_);
  for (const auto& [id, path, fsid] : old->ExportList()) {
    absl::Status added = fresh->AddExport(id, path, fsid);
    if (!added.ok()) return added;
  }
  old->MarkDead();
  {
    absl::MutexLock lock(&impl_mu_);
    retired_.push_back(old);  // calls may still hold it, files may use its mount
    impl_ = std::move(fresh);
  }
  NFS3D_LOG_WARNING("%s: the cluster ended this head's session (evicted); serving from a new one",
                    cluster_.c_str());
  return absl::OkStatus();
}

uint64_t CephfsBackend::session_id() const { return ceph_get_instance_id(CurrentImpl()->cm()); }

CephfsBackend::~CephfsBackend() { watch_.reset(); }

std::shared_ptr<CephfsBackend::Impl> CephfsBackend::CurrentImpl() const {
  absl::MutexLock lock(&impl_mu_);
  return impl_;
}

absl::Status CephfsBackend::AddExport(uint32_t export_id, const std::string& path,
                                      uint64_t fsid) {
  const std::shared_ptr<Impl> impl = CurrentImpl();
  return impl->AddExport(export_id, path, fsid);
}

absl::StatusOr<FileHandle> CephfsBackend::RootHandle(uint32_t export_id) {
  const std::shared_ptr<Impl> impl = CurrentImpl();
  absl::StatusOr<Impl::Node> root = impl->Root(export_id);
  if (!root.ok()) return root.status();
  return root->handle;
}

absl::StatusOr<uint32_t> CephfsBackend::ExportOf(const FileHandle& fh) {
  const std::shared_ptr<Impl> impl = CurrentImpl();
  auto decoded = impl->Decode(fh);
  if (!decoded.ok()) return decoded.status();
  return std::get<0>(*decoded)->id;
}

absl::StatusOr<Attributes> CephfsBackend::GetAttr(const Cred& cred, const FileHandle& fh) {
  const std::shared_ptr<Impl> impl = CurrentImpl();
  (void)cred;  // attributes need no permission
  absl::StatusOr<Impl::Node> node = impl->Resolve(fh);
  if (!node.ok()) return node.status();
  return impl->Attrs(*node);
}

absl::Status CephfsBackend::SetAttr(const Cred& cred, const FileHandle& fh,
                                    const SetAttributes& attrs, std::optional<Time> guard_ctime,
                                    Wcc* wcc) {
  const std::shared_ptr<Impl> impl = CurrentImpl();
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
  const std::shared_ptr<Impl> impl = CurrentImpl();
  absl::StatusOr<Impl::Node> d = impl->Resolve(dir);
  if (!d.ok()) return d.status();
  if (dir_attributes) *dir_attributes = impl->AttrsOrNone(*d);
  absl::Status valid = CheckName(name);
  if (!valid.ok()) return valid;
  Perm perm(cred);
  const bool self = name == "." || (name == ".." && d->is_root());
  Inode* in = nullptr;
  struct ceph_statx stx;
  int rc = ceph_ll_lookup(impl->cm(), d->inode.get(), self ? "." : std::string(name).c_str(),
                          &in, &stx, kWantAttrs, AT_SYMLINK_NOFOLLOW, perm.get());
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
  const std::shared_ptr<Impl> impl = CurrentImpl();
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
  const std::shared_ptr<Impl> impl = CurrentImpl();
  absl::StatusOr<Impl::Node> node = impl->Resolve(fh);
  if (!node.ok()) return node.status();
  std::optional<Attributes> a = impl->AttrsOrNone(*node);
  if (attributes) *attributes = a;
  if (a && a->type != FileType::kSymlink) return ErrnoError(EINVAL, "not a symlink");
  std::string target(4096, '\0');
  Perm perm(cred);
  int rc = ceph_ll_readlink(impl->cm(), node->inode.get(), target.data(), target.size(),
                            perm.get());
  if (rc < 0) return CephError(rc, "readlink");
  target.resize(static_cast<size_t>(rc));
  return target;
}

absl::StatusOr<ReadResult> CephfsBackend::Read(const Cred& cred, const FileHandle& fh,
                                               uint64_t offset, uint32_t count, uint8_t* buf) {
  const std::shared_ptr<Impl> impl = CurrentImpl();
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
  result.eof = offset + result.count >= size;
  return result;
}

absl::StatusOr<WriteResult> CephfsBackend::Write(const Cred& cred, const FileHandle& fh,
                                                 uint64_t offset, absl::Span<const uint8_t> data,
                                                 StableHow stable, Wcc* wcc) {
  const std::shared_ptr<Impl> impl = CurrentImpl();
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
  const std::shared_ptr<Impl> impl = CurrentImpl();
  ceph_mount_info* cm = impl->cm();
  return impl->MakeEntry(
      cred, dir, name, dir_wcc, "create", apply, /*regular=*/true,
      [&](Inode* parent, const char* n, UserPerm* perm, Inode** in) {
        const int flags = O_CREAT | O_RDWR | (mode == CreateMode::kUnchecked ? 0 : O_EXCL);
        const mode_t perms = mode == CreateMode::kExclusive ? 0600 : attrs.mode.value_or(0600);
        Fh* fh = nullptr;
        struct ceph_statx stx;
        int rc = ceph_ll_create(cm, parent, n, perms, flags, in, &fh, &stx, kWantAttrs, 0, perm);
        if (rc == -EEXIST && mode == CreateMode::kExclusive) {
          // A retransmission finds its own verifier: same file, success.
          rc = ceph_ll_lookup(cm, parent, n, in, &stx, kWantAttrs, AT_SYMLINK_NOFOLLOW, perm);
          if (rc < 0) return rc;
          uint8_t stored[8];
          int len = ceph_ll_getxattr(cm, *in, kVerifierXattr, stored, sizeof(stored),
                                     ceph_mount_perms(cm));
          if (len == 8 && std::memcmp(stored, verifier.data(), 8) == 0) return 0;
          ceph_ll_put(cm, *in);
          return -EEXIST;
        }
        if (rc < 0) return rc;
        if (fh) ceph_ll_close(cm, fh);
        if (mode != CreateMode::kExclusive) return 0;
        rc = ceph_ll_setxattr(cm, *in, kVerifierXattr, verifier.data(), verifier.size(), 0,
                              ceph_mount_perms(cm));
        if (rc < 0) ceph_ll_put(cm, *in);
        return rc;
      });
}

absl::StatusOr<CreateResult> CephfsBackend::Mkdir(const Cred& cred, const FileHandle& dir,
                                                  std::string_view name,
                                                  const SetAttributes& attrs, Wcc* dir_wcc) {
  const std::shared_ptr<Impl> impl = CurrentImpl();
  ceph_mount_info* cm = impl->cm();
  return impl->MakeEntry(cred, dir, name, dir_wcc, "mkdir", &attrs, /*regular=*/false,
                          [&](Inode* parent, const char* n, UserPerm* perm, Inode** in) {
                            struct ceph_statx stx;
                            return ceph_ll_mkdir(cm, parent, n, attrs.mode.value_or(0700), in,
                                                 &stx, kWantAttrs, 0, perm);
                          });
}

absl::StatusOr<CreateResult> CephfsBackend::Symlink(const Cred& cred, const FileHandle& dir,
                                                    std::string_view name,
                                                    std::string_view target,
                                                    const SetAttributes& attrs, Wcc* dir_wcc) {
  const std::shared_ptr<Impl> impl = CurrentImpl();
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
                            return ceph_ll_symlink(cm, parent, n, t.c_str(), in, &stx, kWantAttrs,
                                                   0, perm);
                          });
}

absl::StatusOr<CreateResult> CephfsBackend::Mknod(const Cred& cred, const FileHandle& dir,
                                                  std::string_view name, FileType type,
                                                  uint32_t major_num, uint32_t minor_num,
                                                  const SetAttributes& attrs, Wcc* dir_wcc) {
  const std::shared_ptr<Impl> impl = CurrentImpl();
  mode_t kind;
  switch (type) {
    case FileType::kChar: kind = S_IFCHR; break;
    case FileType::kBlock: kind = S_IFBLK; break;
    case FileType::kSocket: kind = S_IFSOCK; break;
    case FileType::kFifo: kind = S_IFIFO; break;
    default: return ErrnoError(kErrBadType, "mknod of an unsupported type");
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
  const std::shared_ptr<Impl> impl = CurrentImpl();
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
  const std::shared_ptr<Impl> impl = CurrentImpl();
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
  const std::shared_ptr<Impl> impl = CurrentImpl();
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
                                 std::string_view name,
                                 std::optional<Attributes>* file_attributes, Wcc* dir_wcc) {
  const std::shared_ptr<Impl> impl = CurrentImpl();
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
  const std::shared_ptr<Impl> impl = CurrentImpl();
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

absl::StatusOr<FsStat> CephfsBackend::StatFs(const Cred& cred, const FileHandle& fh,
                                             std::optional<Attributes>* attributes) {
  const std::shared_ptr<Impl> impl = CurrentImpl();
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

absl::StatusOr<PathConf> CephfsBackend::GetPathConf(const Cred& cred, const FileHandle& fh,
                                                    std::optional<Attributes>* attributes) {
  const std::shared_ptr<Impl> impl = CurrentImpl();
  (void)cred;
  absl::StatusOr<Impl::Node> node = impl->Resolve(fh);
  if (!node.ok()) return node.status();
  if (attributes) *attributes = impl->AttrsOrNone(*node);
  return PathConf{.link_max = 0xffffffffu, .name_max = 255};
}

absl::StatusOr<Verifier> CephfsBackend::Commit(const Cred& cred, const FileHandle& fh,
                                               uint64_t offset, uint32_t count, Wcc* wcc) {
  const std::shared_ptr<Impl> impl = CurrentImpl();
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

absl::StatusOr<AclPair> CephfsBackend::GetAcl(const Cred& cred, const FileHandle& fh,
                                               std::optional<Attributes>* attributes) {
  const std::shared_ptr<Impl> impl = CurrentImpl();
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
  const std::shared_ptr<Impl> impl = CurrentImpl();
  absl::StatusOr<Impl::Node> node = impl->Resolve(fh);
  if (!node.ok()) return node.status();
  absl::StatusOr<Attributes> a = impl->Attrs(*node);
  if (!a.ok()) return a.status();
  absl::Status result;
  if (a->type == FileType::kSymlink) {
    result = ErrnoError(EOPNOTSUPP, "symlinks have no ACLs");
  } else if (default_acl != nullptr && !default_acl->empty() &&
             a->type != FileType::kDirectory) {
    result = ErrnoError(EACCES, "default ACL on a non-directory");
  } else if (InSnapshot(node->snap)) {
    result = RefuseInSnapshot(node->snap, "setacl");
  } else {
    Perm perm(cred);
    if (access != nullptr) {
      result = WriteCephAcl(impl->cm(), node->inode.get(), kAclAccessXattr, *access, perm.get());
    }
    if (result.ok() && default_acl != nullptr && a->type == FileType::kDirectory) {
      result = WriteCephAcl(impl->cm(), node->inode.get(), kAclDefaultXattr, *default_acl,
                            perm.get());
    }
  }
  if (attributes) *attributes = impl->AttrsOrNone(*node);
  return result;
}

Verifier CephfsBackend::WriteVerifier() const { return ToVerifier(CurrentImpl()->verifier()); }

void CephfsBackend::ChangeWriteVerifier() { CurrentImpl()->RotateVerifier("sync outcome unknown"); }

const std::string& CephfsBackend::cluster() const { return cluster_; }

absl::StatusOr<std::unique_ptr<DurableFiles>> CephfsBackend::SharedFiles(CephCallRunner run) {
  const std::shared_ptr<Impl> impl = CurrentImpl();
  if (node_id_.empty()) return absl::FailedPreconditionError("not a [cluster] head");
  // Retired mounts live as long as this backend, so a mount handed out stays valid.
  return OpenCephFiles([this] { return CurrentImpl()->cm(); }, shared_dir_, impl->cluster(),
                       std::move(run));
}

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
  const std::shared_ptr<Impl> impl = CurrentImpl();
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
  const std::shared_ptr<Impl> impl = CurrentImpl();
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
