#include "vfs/posix/posix_backend.h"

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
#include "vfs/posix/directory_move_watch.h"
#include "vfs/posix/fd_chmod.h"
#include "vfs/mount_point.h"
#include "vfs/sync_group.h"
#include "vfs/posix/thread_credentials.h"
#include "vfs/vfs_error.h"

namespace nfs3d::vfs {
namespace {

constexpr char kVerfXattr[] = "user.nfs3d.verf";
constexpr int kMaxWalkDepth = 4096;
constexpr size_t kLockStripes = 256;
constexpr size_t kReadDirBuffer = 32 * 1024;

// Owns one file descriptor.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& o) noexcept {
    if (this != &o) {
      Reset();
      fd_ = std::exchange(o.fd_, -1);
    }
    return *this;
  }
  ~UniqueFd() { Reset(); }
  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  void Reset() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

absl::Status Errno(std::string_view context) { return ErrnoError(errno, context); }

std::string ProcPath(int fd) { return absl::StrCat("/proc/self/fd/", fd); }

// The path the kernel has for descriptor fd now (follows renames).
bool FdPath(int fd, std::string* out) {
  char buf[PATH_MAX];
  ssize_t n = readlink(ProcPath(fd).c_str(), buf, sizeof(buf));
  if (n <= 0 || static_cast<size_t>(n) >= sizeof(buf)) return false;
  out->assign(buf, static_cast<size_t>(n));
  return true;
}

WccAttr ToWcc(const struct stat& st) {
  return WccAttr{static_cast<uint64_t>(st.st_size), ToTime(st.st_mtim), ToTime(st.st_ctim)};
}

bool SameTime(const Time& a, const Time& b) {
  return a.seconds == b.seconds && a.nseconds == b.nseconds;
}

// Would ApplyAttrs change anything (mode left out when skip_mode)?
bool ChangesAnything(const SetAttributes& attrs, bool skip_mode) {
  return attrs.size || attrs.uid || attrs.gid || (attrs.mode && !skip_mode) ||
         attrs.atime_how != SetTime::kDontChange || attrs.mtime_how != SetTime::kDontChange;
}

// A bounded least-recently-used map from handle bytes to shared values.
// Evicted values are released outside the lock; holders keep them alive.
template <typename V>
class LruCache {
 public:
  explicit LruCache(size_t capacity) : capacity_(std::max<size_t>(capacity, 1)) {}

  std::shared_ptr<V> Get(absl::string_view key) {
    absl::MutexLock lock(&mu_);
    auto it = index_.find(key);
    if (it == index_.end()) return nullptr;
    order_.splice(order_.begin(), order_, it->second);
    return it->second->second;
  }

  // Inserts value unless key is present; returns the cached value.
  std::shared_ptr<V> Insert(const std::string& key, std::shared_ptr<V> value) {
    std::shared_ptr<V> evicted;
    std::shared_ptr<V> result;
    {
      absl::MutexLock lock(&mu_);
      auto it = index_.find(key);
      if (it != index_.end()) {
        order_.splice(order_.begin(), order_, it->second);
        return it->second->second;
      }
      order_.emplace_front(key, std::move(value));
      index_[key] = order_.begin();
      result = order_.front().second;
      if (order_.size() > capacity_) {
        evicted = std::move(order_.back().second);
        index_.erase(order_.back().first);
        order_.pop_back();
      }
    }
    return result;
  }

  void Erase(absl::string_view key) {
    std::shared_ptr<V> evicted;
    absl::MutexLock lock(&mu_);
    auto it = index_.find(key);
    if (it == index_.end()) return;
    evicted = std::move(it->second->second);
    order_.erase(it->second);
    index_.erase(it);
  }

 private:
  const size_t capacity_;
  absl::Mutex mu_;
  std::list<std::pair<std::string, std::shared_ptr<V>>> order_ ABSL_GUARDED_BY(mu_);
  // Looked up by string_view: no key string built per call.
  absl::flat_hash_map<std::string, typename std::list<std::pair<std::string, std::shared_ptr<V>>>::iterator>
      index_ ABSL_GUARDED_BY(mu_);
};

struct KernelHandle {
  struct file_handle header;
  unsigned char bytes[MAX_HANDLE_SZ];
};

// Reads the "root" field of this mount in /proc/self/mountinfo.
std::string MountRoot(int mount_id) {
  std::ifstream in("/proc/self/mountinfo");
  std::string line;
  std::string prefix = absl::StrCat(mount_id, " ");
  while (std::getline(in, line)) {
    if (line.rfind(prefix, 0) != 0) continue;
    std::vector<std::string> fields = absl::StrSplit(line, ' ');
    if (fields.size() > 3) return fields[3];
  }
  return "";
}

uint32_t Be32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}

}  // namespace

struct PosixBackend::Export {
  uint32_t id = 0;
  std::string path;
  UniqueFd root_fd;   // O_PATH | O_DIRECTORY
  UniqueFd mount_fd;  // O_RDONLY: open_by_handle_at refuses O_PATH mount fds
  dev_t dev = 0;
  ino_t ino = 0;
  int mount_id = -1;
  bool walk_check = true;  // sub-directory export: verify directories by walking ".."
  // walk_check and fanotify watches its file system for directory moves:
  // a cached directory is re-checked only after one (DirectoryMoveWatch).
  bool moves_watched = false;
  uint64_t fsid = 0;
  FileHandle root_handle;
  ExportSettings settings;  // as added, to add it again (RefreshExport)
  uint32_t owner = 0;  // the configured export whose options apply (see AddExport)
  bool crossmnt = false;
  bool nohide = false;
  std::shared_ptr<const Export> parent;  // submounts: the export around the mount point
  // The export's own mount cloned without the mounts below it (open_tree):
  // where the directories those mounts cover are still reachable, for
  // LOOKUPs that may not enter a mount. Invalid if the clone failed.
  UniqueFd covered_root;
  int covered_mount_id = -1;
};

// A resolved handle: an O_PATH descriptor of the object.
struct PosixBackend::Node {
  UniqueFd fd;
  std::shared_ptr<const Export> exp;
  FileHandle handle;
  std::string key;  // handle bytes, the cache key
  dev_t dev = 0;
  ino_t ino = 0;
  bool is_dir = false;
  // DirectoryMoveWatch generation this directory was last found inside its
  // export at; 0 = not checked since cached.
  std::atomic<uint64_t> checked_generation{0};
};

namespace {

// One gathered fsync of fd (see SyncGroup), counted for calls-per-sync
// statistics: every request, and the fsyncs made for them. Always a full
// fsync, so FILE_SYNC, DATA_SYNC and COMMIT of one file can share it.
absl::Status SyncGathered(SyncGroup& group, int fd, SyncCounters* counters,
                          absl::FunctionRef<void()> on_failure) {
  counters->requests.fetch_add(1, std::memory_order_relaxed);
  return group.Sync(
      [&] {
        counters->fsyncs.fetch_add(1, std::memory_order_relaxed);
        return fsync(fd) == 0 ? 0 : errno;
      },
      on_failure);
}

// Descriptors for data I/O on one regular file, opened with the server's
// identity; callers check the user's permission before each use. All writes
// and syncs of the file go through rw, so fsync sees their writeback errors.
struct IoFds {
  absl::Mutex mu;
  UniqueFd ro ABSL_GUARDED_BY(mu);
  UniqueFd rw ABSL_GUARDED_BY(mu);
  SyncGroup sync;
};

}  // namespace

class PosixBackend::Impl {
 public:
  using NodePtr = std::shared_ptr<Node>;

  Impl(const HandleSecret& secret, size_t handle_cache, size_t io_cache,
       const std::atomic<uint64_t>* receive_count)
      : codec_(secret),
        moves_(receive_count),
        nodes_(handle_cache),
        io_(io_cache),
        verifier_(RandomU64()) {}

  std::shared_ptr<const Export> FindExport(uint32_t id) {
    absl::ReaderMutexLock lock(&exports_mu_);
    auto it = exports_.find(id);
    return it == exports_.end() ? nullptr : it->second;
  }

  // `owner`: the configured export whose options apply (id itself, or the
  // export a submount was found below); `parent`: for submounts, the export
  // holding the mount point (where ".." of the submount's root leads).
  // `replace`: the id may be taken (RefreshExport).
  absl::Status AddExport(uint32_t id, const std::string& path, const ExportSettings& settings,
                         uint32_t owner, std::shared_ptr<const Export> parent,
                         bool replace = false);
  // Registers (or finds) the submount at `mount_point` below configured
  // export `owner`, under an id derived from both.
  absl::StatusOr<std::shared_ptr<const Export>> AddSubmount(uint32_t owner,
                                                            const std::string& mount_point);
  // The export a LOOKUP enters at a mount point: `st` is the mounted root
  // found as `name` in directory `dir_fd` of export `from`; nullptr when
  // neither crossmnt (on `from`) nor nohide (on an export there) allows it.
  absl::StatusOr<std::shared_ptr<const Export>> EnterMount(const Export& from, int dir_fd,
                                                           std::string_view name,
                                                           const struct stat& st);
  // LOOKUP's answer for a mount point: the entered export's root, or (when
  // no option lets it enter) the directory the mount covers, as knfsd.
  absl::StatusOr<LookupResult> LookupMount(const std::shared_ptr<const Export>& from, int dir_fd,
                                           std::string_view name, const struct stat& st) {
    absl::StatusOr<std::shared_ptr<const Export>> sub = EnterMount(*from, dir_fd, name, st);
    if (!sub.ok()) return sub.status();
    if (*sub) return LookupResult{(*sub)->root_handle, ToAttributes(st, **sub)};
    return LookupCovered(from, dir_fd, name);
  }
  absl::StatusOr<LookupResult> LookupCovered(const std::shared_ptr<const Export>& exp, int dir_fd,
                                             std::string_view name);
  // recheck_moved: a cached directory of a sub-directory export is checked
  // again if a directory moved since its last check (see Export::moves_watched).
  absl::StatusOr<NodePtr> Resolve(const FileHandle& fh, bool recheck_moved = true);
  // Handle of fd itself, or of `name` in directory fd (not following a
  // final symlink) when name is given.
  absl::StatusOr<FileHandle> MakeHandle(const Export& exp, int fd, const char* name = nullptr);
  NodePtr Adopt(std::shared_ptr<const Export> exp, UniqueFd fd, const FileHandle& handle,
                const struct stat& st);
  // The LOOKUP of an ordinary name (not "." or "..") in directory d.
  absl::StatusOr<LookupResult> LookupName(const Cred& cred, const Node& d, const std::string& name);
  // fstat of the object; ESTALE (and the node dropped from the caches) once
  // it has no links left.
  absl::StatusOr<struct stat> Stat(const Node& node);
  Attributes ToAttributes(const struct stat& st, const Export& exp) const;
  std::optional<Attributes> AttrsOrNone(const Node& node) {
    absl::StatusOr<struct stat> st = Stat(node);
    if (!st.ok()) return std::nullopt;
    return ToAttributes(*st, *node.exp);
  }
  // A request refused before touching dir: its current attributes only.
  absl::Status Refuse(const Node& dir, Wcc* wcc, absl::Status status) {
    if (wcc) wcc->after = AttrsOrNone(dir);
    return status;
  }
  void Forget(const std::string& key) {
    nodes_.Erase(key);
    io_.Erase(key);
  }
  // The handle key of name in dir, if the name exists (taken before the name
  // is removed, so the object's cached descriptors can be dropped after).
  std::optional<std::string> ChildKey(const Node& dir, const std::string& name);
  // Drops the cached descriptors of key once the object has no links left,
  // so a deleted file's space is freed. Nothing cached: nothing to do.
  void ForgetIfUnlinked(const std::optional<std::string>& key);

  // An I/O descriptor for a regular file (read-write if write, else any).
  absl::StatusOr<std::pair<std::shared_ptr<IoFds>, int>> IoFd(const Node& node, bool write);
  // Under the caller's credentials: may the caller read/write this regular
  // file (with knfsd's owner override and read-if-execute)?
  absl::Status CheckIo(const Cred& cred, const Node& node, const struct stat& st, bool write);
  struct ReadAccess;
  absl::StatusOr<ReadAccess> OpenForRead(const Cred& cred, const FileHandle& fh, uint64_t offset);

  absl::Mutex& Stripe(const Node& n) { return stripes_[StripeIndex(n)]; }
  size_t StripeIndex(const Node& n) const {
    return (static_cast<size_t>(n.ino) * 0x9E3779B97F4A7C15ULL ^ static_cast<size_t>(n.dev)) %
           kLockStripes;
  }

  // Applies attrs to node under the caller's credentials (no locking, no
  // guard). st is the current state.
  absl::Status ApplyAttrs(const Cred& cred, const Node& node, const struct stat& st,
                          const SetAttributes& attrs, bool skip_mode);
  // The atime/mtime part of ApplyAttrs.
  absl::Status SetTimes(const Cred& cred, const Node& node, const struct stat& st,
                        const SetAttributes& attrs);

  // Runs op (under the caller's credentials) on directory dir with its wcc
  // taken around it under the directory's stripe lock.
  absl::Status DirOp(const Cred& cred, const Node& dir, Wcc* wcc,
                     const std::function<absl::Status()>& op);

  // Common tail of CREATE/MKDIR/SYMLINK/MKNOD: the handle of a new object.
  // `known` is the object's stat when the caller already took it (saves an
  // fstat per CREATE).
  absl::StatusOr<CreateResult> Finish(const Cred& cred, const NodePtr& dir, UniqueFd fd,
                                      const SetAttributes* attrs_to_apply,
                                      const struct stat* known = nullptr);

  uint64_t verifier() const { return verifier_.load(); }
  SyncCounters sync_counters;
  std::vector<std::shared_ptr<const Export>> AllExports() {
    absl::ReaderMutexLock lock(&exports_mu_);
    std::vector<std::shared_ptr<const Export>> out;
    for (const auto& [id, exp] : exports_) out.push_back(exp);
    return out;
  }
  void RotateVerifier() {
    uint64_t old = verifier_.load();
    uint64_t next = RandomU64();
    if (next == old) ++next;
    verifier_.store(next);
    NFS3D_LOG_WARNING("sync failed: write verifier changed");
  }

  // ESTALE unless the object is on the export's file system and, for a
  // directory of a sub-directory export, below the export root.
  absl::Status CheckInsideExport(const Export& exp, int fd, const struct stat& st);
  // For a cached directory: CheckInsideExport, made cheap in the usual case.
  absl::Status StillInsideExport(const Node& node);
  // After a rename into dir as name: if a directory moved, cached
  // directories must be checked again before their next use.
  void NoteIfDirectoryMoved(const Node& dir, const std::string& name) {
    struct stat st;
    if (fstatat(dir.fd.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || S_ISDIR(st.st_mode)) {
      moves_.NoteMove();  // a directory, or it cannot tell
    }
  }

 private:

  HandleCodec codec_;
  absl::Mutex exports_mu_;
  std::map<uint32_t, std::shared_ptr<const Export>> exports_ ABSL_GUARDED_BY(exports_mu_);
  absl::Mutex submount_mu_;  // serialises AddSubmount
  DirectoryMoveWatch moves_;
  LruCache<Node> nodes_;
  LruCache<IoFds> io_;
  absl::Mutex stripes_[kLockStripes];
  std::atomic<uint64_t> verifier_;
};

// ---------------------------------------------------------------------------
// Impl helpers

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
  // Whole-file-system export: the export root is a mount root showing the
  // file system's own root. Anything else needs the ".." walk.
  struct statx stx;
  bool mount_root = false;
  if (statx(exp->root_fd.get(), "", AT_EMPTY_PATH, STATX_BASIC_STATS, &stx) == 0 &&
      (stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT)) {
    mount_root = (stx.stx_attributes & STATX_ATTR_MOUNT_ROOT) != 0;
  }
  exp->walk_check = !(mount_root && MountRoot(exp->mount_id) == "/");
  exp->covered_root = UniqueFd(open_tree(AT_FDCWD, path.c_str(), OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC));
  if (exp->covered_root.valid()) {
    KernelHandle ch;
    ch.header.handle_bytes = MAX_HANDLE_SZ;
    if (name_to_handle_at(exp->covered_root.get(), "", &ch.header, &exp->covered_mount_id,
                          AT_EMPTY_PATH) != 0) {
      exp->covered_root = UniqueFd();
    }
  }
  absl::StatusOr<FileHandle> root = codec_.Encode(
      id, kh.header.handle_type, {kh.header.f_handle, kh.header.handle_bytes});
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
      NFS3D_LOG_WARNING("export %s: directory moves not watched (%s): cached directories are "
                        "re-checked on every use, which costs CPU per call",
                        path, watched.message());
    }
  }
  NFS3D_LOG_INFO("export %u: %s (subtree walk %s)", id, path,
                 !exp->walk_check ? "off" : exp->moves_watched ? "after directory moves" : "every use");
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
    if (err == EMFILE || err == ENFILE || err == ENOMEM) return ErrnoError(kErrJukebox, "open_by_handle_at");
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

absl::Status PosixBackend::Impl::CheckIo(const Cred& cred, const Node& node,
                                         const struct stat& st, bool write) {
  const int flags = AT_EACCESS | AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW;
  if (faccessat(node.fd.get(), "", write ? W_OK : R_OK, flags) == 0) return absl::OkStatus();
  int err = errno;
  if (err != EACCES) return ErrnoError(err, "access check");
  if (st.st_uid == cred.uid) return absl::OkStatus();  // knfsd's owner override
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
  {
    ScopedCredentials creds(cred);
    if (!creds.status().ok()) return creds.status();
    if (attrs.uid || attrs.gid) {
      uid_t uid = attrs.uid ? *attrs.uid : static_cast<uid_t>(-1);
      gid_t gid = attrs.gid ? *attrs.gid : static_cast<gid_t>(-1);
      if (fchownat(fd, "", uid, gid, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0) {
        return Errno("fchownat");
      }
    }
    if (attrs.mode && !skip_mode && !S_ISLNK(st.st_mode)) {
      if (ChmodFd(fd, *attrs.mode & 07777) != 0) return Errno("chmod");
    }
  }
  if (attrs.atime_how == SetTime::kDontChange && attrs.mtime_how == SetTime::kDontChange) {
    return absl::OkStatus();
  }
  return SetTimes(cred, node, st, attrs);
}

absl::Status PosixBackend::Impl::SetTimes(const Cred& cred, const Node& node,
                                          const struct stat& st, const SetAttributes& attrs) {
  const int fd = node.fd.get();
  struct timespec ts[2];
  auto fill = [](SetTime how, const Time& t, struct timespec* out) {
    out->tv_sec = 0;
    out->tv_nsec = how == SetTime::kDontChange ? UTIME_OMIT
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
                                       const std::function<absl::Status()>& op) {
  absl::MutexLock lock(&Stripe(dir));
  absl::StatusOr<struct stat> before = Stat(dir);
  if (!before.ok()) return before.status();
  if (wcc) wcc->before = ToWcc(*before);
  absl::Status result;
  if (!S_ISDIR(before->st_mode)) {
    result = ErrnoError(ENOTDIR, "not a directory");
  } else {
    ScopedCredentials creds(cred);
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
  CreateResult result;
  result.handle = *fh;
  // Nothing applied: the stat taken above is still the object's.
  result.attributes = changed ? AttrsOrNone(*node) : ToAttributes(st, *dir->exp);
  return result;
}

// ---------------------------------------------------------------------------
// PosixBackend

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
  umask(0);  // modes are stored exactly as the client sent them
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
    if (!sub.ok()) NFS3D_LOG_WARNING("export %s: submount %s: %s", path, mount_point, sub.status().message());
  }
  return absl::OkStatus();
}

absl::Status PosixBackend::RefreshExport(uint32_t export_id) {
  std::shared_ptr<const Export> exp = impl_->FindExport(export_id);
  if (!exp) return ErrnoError(ENOENT, absl::StrCat("no export ", export_id));
  struct stat st;
  if (stat(exp->path.c_str(), &st) != 0) return Errno(absl::StrCat("stat export ", exp->path));
  if (st.st_dev == exp->dev && st.st_ino == exp->ino) return absl::OkStatus();
  NFS3D_LOG_INFO("export %s: another directory is there now (a file system was mounted or "
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
  absl::MutexLock lock(&impl_->Stripe(n));
  absl::StatusOr<struct stat> before = impl_->Stat(n);
  if (!before.ok()) return before.status();
  if (wcc) wcc->before = ToWcc(*before);
  absl::Status result;
  if (guard_ctime && !SameTime(*guard_ctime, ToTime(before->st_ctim))) {
    result = ErrnoError(kErrNotSync, "guard ctime mismatch");
  } else {
    result = impl_->ApplyAttrs(cred, n, *before, attrs, /*skip_mode=*/false);
  }
  if (wcc) wcc->after = impl_->AttrsOrNone(n);
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
  constexpr uint32_t kRead = 0x01, kLookup = 0x02, kModify = 0x04, kExtend = 0x08,
                     kDelete = 0x10, kExecute = 0x20;
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

// What READ and ReadSlice share: the file resolved, checked to be a regular
// file the caller may read, and a descriptor to read it with.
struct PosixBackend::Impl::ReadAccess {
  NodePtr node;
  struct stat st;
  std::shared_ptr<IoFds> keep;  // keeps fd open
  int fd;
};

absl::StatusOr<PosixBackend::Impl::ReadAccess> PosixBackend::Impl::OpenForRead(
    const Cred& cred, const FileHandle& fh, uint64_t offset) {
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
  {
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
  result.eof = offset + done >= static_cast<uint64_t>(st.st_size);
  return result;
}

absl::StatusOr<FileSlice> PosixBackend::ReadSlice(const Cred& cred, const FileHandle& fh,
                                                  uint64_t offset, uint32_t count) {
  absl::StatusOr<Impl::ReadAccess> access = impl_->OpenForRead(cred, fh, offset);
  if (!access.ok()) return access.status();
  const uint64_t size = static_cast<uint64_t>(access->st.st_size);
  FileSlice slice;
  slice.count = offset >= size ? 0 : static_cast<uint32_t>(std::min<uint64_t>(count, size - offset));
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
                                                    uint64_t offset,
                                                    absl::Span<const uint8_t> data,
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
  absl::Status status = impl_->DirOp(cred, *d, dir_wcc, [&]() -> absl::Status {
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
  absl::Status status = impl_->DirOp(cred, *d, dir_wcc, [&]() -> absl::Status {
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
  absl::Status status = impl_->DirOp(cred, *d, dir_wcc, [&]() -> absl::Status {
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
    case FileType::kChar: fmt = S_IFCHR; rdev = makedev(major_num, minor_num); break;
    case FileType::kBlock: fmt = S_IFBLK; rdev = makedev(major_num, minor_num); break;
    case FileType::kSocket: fmt = S_IFSOCK; break;
    case FileType::kFifo: fmt = S_IFIFO; break;
    default: return ErrnoError(kErrBadType, "mknod of an unsupported type");
  }
  absl::Status valid = CheckNewName(name);
  if (!valid.ok()) return impl_->Refuse(*d, dir_wcc, valid);
  const std::string n(name);
  UniqueFd fd;
  absl::Status status = impl_->DirOp(cred, *d, dir_wcc, [&]() -> absl::Status {
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
  absl::Status status = impl_->DirOp(cred, *d, dir_wcc, [&]() -> absl::Status {
    victim = impl_->ChildKey(*d, n);
    if (unlinkat(d->fd.get(), n.c_str(), 0) != 0) return Errno("unlink");
    return absl::OkStatus();
  });
  // Drop cached descriptors so the space of a deleted file is freed.
  if (status.ok()) impl_->ForgetIfUnlinked(victim);
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
  absl::Status status = impl_->DirOp(cred, *d, dir_wcc, [&]() -> absl::Status {
    victim = impl_->ChildKey(*d, n);
    if (unlinkat(d->fd.get(), n.c_str(), AT_REMOVEDIR) != 0) return Errno("rmdir");
    return absl::OkStatus();
  });
  if (status.ok()) impl_->ForgetIfUnlinked(victim);
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
  absl::Status status;
  std::optional<std::string> victim;
  if (!S_ISDIR(fb->st_mode) || !S_ISDIR(tb->st_mode)) {
    status = ErrnoError(ENOTDIR, "rename: not a directory");
  } else {
    const std::string fname(from_name), tname(to_name);
    ScopedCredentials creds(cred);
    status = creds.status();
    if (status.ok()) {
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
  absl::Status status = impl_->DirOp(cred, *d, dir_wcc, [&]() -> absl::Status {
    // Following the /proc magic link needs no CAP_DAC_READ_SEARCH, unlike
    // linkat(fd, "", ..., AT_EMPTY_PATH).
    if (linkat(AT_FDCWD, source.c_str(), d->fd.get(), n.c_str(), AT_SYMLINK_FOLLOW) != 0) {
      return Errno("link");
    }
    return absl::OkStatus();
  });
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
  out.link_max = link_max > 0 ? static_cast<uint32_t>(std::min<long>(link_max, UINT32_MAX))
                              : 127;
  return out;
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
  return {impl_->sync_counters.requests.load(std::memory_order_relaxed),
          impl_->sync_counters.fsyncs.load(std::memory_order_relaxed)};
}

Verifier PosixBackend::WriteVerifier() const {
  Verifier out;
  uint64_t verf = impl_->verifier();
  std::memcpy(out.data(), &verf, sizeof(verf));
  return out;
}

}  // namespace nfs3d::vfs
