// The inside of PosixBackend, shared by the files that implement it
// (posix_backend.cc: exports, attributes, lookups; posix_backend_impl.cc:
// handle resolution and the helpers the operations share; posix_io.cc:
// READ, WRITE, COMMIT; posix_directory_ops.cc: the operations that change a
// directory, and READDIR). Not for use outside vfs/posix/.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

#include "common/log.h"
#include "vfs/backend_helpers.h"
#include "vfs/posix/directory_move_watch.h"
#include "vfs/posix/lru_cache.h"
#include "vfs/posix/posix_backend.h"
#include "vfs/posix/unique_fd.h"
#include "vfs/sync_group.h"

namespace nfs3d::vfs {

inline constexpr char kVerfXattr[] = "user.nfs3d.verf";
inline constexpr int kMaxWalkDepth = 4096;
inline constexpr size_t kLockStripes = 256;
inline constexpr size_t kReadDirBuffer = 32 * 1024;

absl::Status Errno(std::string_view context);

std::string ProcPath(int fd);

// The path the kernel has for descriptor fd now (follows renames).
bool FdPath(int fd, std::string* out);

WccAttr ToWcc(const struct stat& st);

bool SameTime(const Time& a, const Time& b);

// Would ApplyAttrs change anything (mode left out when skip_mode)?
bool ChangesAnything(const SetAttributes& attrs, bool skip_mode);

// Reads the "root" field of this mount in /proc/self/mountinfo.
std::string MountRoot(int mount_id);

uint32_t Be32(const uint8_t* p);

// One gathered fsync of fd (see SyncGroup), counted for calls-per-sync
// statistics: every request, and the fsyncs made for them. Always a full
// fsync, so FILE_SYNC, DATA_SYNC and COMMIT of one file can share it.
absl::Status SyncGathered(SyncGroup& group, int fd, SyncCounters* counters,
                          absl::FunctionRef<void()> on_failure);

struct KernelHandle {
  struct file_handle header;
  unsigned char bytes[MAX_HANDLE_SZ];
};

struct PosixBackend::Export {
  uint32_t id = 0;
  std::string path;
  UniqueFd root_fd;   // O_PATH | O_DIRECTORY
  UniqueFd mount_fd;  // O_RDONLY: open_by_handle_at refuses O_PATH mount fds
  dev_t dev = 0;
  ino_t ino = 0;
  int mount_id = -1;
  // tmpfs and ramfs: fsync is a no-op there (their data is memory and
  // nothing more stable exists), so CommitMetadata skips the syscall.
  bool sync_is_noop = false;
  bool walk_check = true;  // sub-directory export: verify directories by walking ".."
  // walk_check and fanotify watches its file system for directory moves:
  // a cached directory is re-checked only after one (DirectoryMoveWatch).
  bool moves_watched = false;
  uint64_t fsid = 0;
  FileHandle root_handle;
  ExportSettings settings;  // as added, to add it again (RefreshExport)
  uint32_t owner = 0;       // the configured export whose options apply (see AddExport)
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
// Whether a directory operation makes a new inode (CREATE, MKDIR, SYMLINK,
// MKNOD), which gets the client's mode exactly (ScopedExactModes: two umask
// calls), or changes names only (REMOVE, RMDIR, LINK), which needs no umask.
enum class NewInode { kNo, kYes };

struct PosixBackend::Node {
  UniqueFd fd;
  std::shared_ptr<const Export> exp;
  FileHandle handle;
  std::string key;  // handle bytes, the cache key
  dev_t dev = 0;
  ino_t ino = 0;
  bool is_dir = false;
  mode_t type = 0;  // the S_IFMT bits: an inode's type never changes
  // DirectoryMoveWatch generation this directory was last found inside its
  // export at; 0 = not checked since cached.
  std::atomic<uint64_t> checked_generation{0};
};

// Descriptors for data I/O on one regular file, opened with the server's
// identity; callers check the user's permission before each use. All writes
// and syncs of the file go through rw, so fsync sees their writeback errors.
// A directory gets a read-only one too, to fsync its entries (CommitMetadata).
struct IoFds {
  absl::Mutex mu;
  UniqueFd ro ABSL_GUARDED_BY(mu);
  UniqueFd rw ABSL_GUARDED_BY(mu);
  SyncGroup sync;
};

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

  // An I/O descriptor for a regular file (read-write if write, else any), or
  // a read-only one for a directory.
  absl::StatusOr<std::pair<std::shared_ptr<IoFds>, int>> IoFd(const Node& node, bool write);
  // knfsd's owner override: the owner of a regular file may read and write it
  // whatever its mode bits say.
  static bool IsOwner(const Cred& cred, const struct stat& st) { return st.st_uid == cred.uid; }
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
  absl::Status DirOp(const Cred& cred, const Node& dir, Wcc* wcc, NewInode new_inode,
                     const std::function<absl::Status()>& op);

  // Common tail of CREATE/MKDIR/SYMLINK/MKNOD: the handle of a new object.
  // `known` is the object's stat when the caller already took it (saves an
  // fstat per CREATE).
  absl::StatusOr<CreateResult> Finish(const Cred& cred, const NodePtr& dir, UniqueFd fd,
                                      const SetAttributes* attrs_to_apply,
                                      const struct stat* known = nullptr);

  // Makes node's inode (its attributes; for a directory, its entries)
  // durable before a reply acknowledges a change to it (commit_metadata.cc).
  // Call it outside ScopedCredentials, after the change.
  absl::Status CommitMetadata(const Node& node);

  uint64_t verifier() const { return verifier_.load(); }
  void AdoptVerifier(uint64_t v) { verifier_.store(v); }
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

}  // namespace nfs3d::vfs
