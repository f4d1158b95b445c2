// Backend over local POSIX file systems (Linux).
//
// Handles: name_to_handle_at() kernel handles wrapped with an export id and a
// SipHash MAC (file_handle_codec.h); resolved with open_by_handle_at() against
// the export root, so they survive restarts as long as handle.key in the state
// directory is kept.
//
// Credentials: handles are resolved with the server's (root) identity, because
// open_by_handle_at needs CAP_DAC_READ_SEARCH; the operation itself then runs
// under the caller's fsuid/fsgid/groups (ScopedCredentials) relative to the
// resolved O_PATH descriptor, so the kernel checks permissions.
//
// Decisions (details in posix_backend_impl.h and the files it names):
//  - Export containment: a resolved object must be on the export's file system
//    (st_dev and mount id). For an export that is a sub-directory of its file
//    system, directories are also checked by walking ".." up to the export
//    root, and a cached directory is re-checked (its current path must
//    still be below the export root's; if not, the walk decides) before its
//    first use after any directory moved on a watched file system
//    (posix/directory_move_watch.h; on every use where fanotify is unavailable),
//    so moving it or an ancestor out makes its handle stale. Non-directories cannot be walked (a
//    handle carries no parent): a file whose handle was issued inside the export and which was
//    later moved or hard-linked outside stays reachable through that handle (knfsd with
//    no_subtree_check behaves the same). Handles are only ever issued for
//    objects reached from the export root, and the MAC binds them to it.
//  - Mount points below an export are not crossed: LOOKUP of one gives EACCES.
//  - Cached descriptors: resolved O_PATH fds live in a bounded LRU keyed by
//    handle bytes. READ/WRITE/COMMIT/truncate use cached descriptors opened with
//    the server's identity, keyed by handle only; every call first checks the
//    caller's permission (faccessat2 AT_EACCESS under the caller's
//    credentials), so a descriptor opened for one user never lets another
//    bypass permissions. Like knfsd, the owner of a regular file may read and
//    write it even when the mode bits deny it (NFS clients create files with
//    a restrictive mode and then write them), and READ is allowed with execute
//    permission alone. A READ by the owner is allowed on that alone, as knfsd
//    tests the owner first: no credential switch and no faccessat2 (nine
//    syscalls fewer per READ of a non-root caller). A WRITE's data syscall
//    runs under the caller's credentials (so writes clear setuid bits as they
//    should).
//  - Names: "" or names containing '/' give EACCES (like the kernel's
//    lookup_one_len, which knfsd uses); longer than 255 bytes ENAMETOOLONG.
//    CREATE/MKDIR/SYMLINK/MKNOD/LINK of "." or ".." give EEXIST (knfsd),
//    REMOVE of them EACCES (knfsd), RMDIR "." EINVAL and ".." ENOTEMPTY
//    (rmdir(2)), RENAME from/to them EINVAL. Symlinks are never followed.
//  - EXCLUSIVE create stores all 8 verifier bytes in the xattr
//    "user.nfs3d.verf" and also in atime.sec (first 4 bytes) / mtime.sec (last
//    4 bytes) like knfsd; a retry matches on the xattr if present, else on the
//    times. The xattr stays on the file.
//  - READDIR cookies are getdents64 d_off values; "." and ".." come from the
//    file system like any entry. The cookie verifier is all zeros for ever and
//    any verifier is accepted (like knfsd): a changing verifier makes Linux
//    clients fail `rm -rf` on large directories with BAD_COOKIE. kErrBadCookie
//    only if seeking to the cookie fails.
//  - SETATTR order: size (with the write-permission rules above), then
//    uid/gid, then mode (so an explicit mode wins over the setuid bits chown
//    clears), then times. knfsd also truncates first.
//  - Stable WRITEs and COMMIT share ("gather") a full fsync per file: a
//    caller waits for an fsync that started after it arrived, so concurrent
//    FILE_SYNC/DATA_SYNC writes and COMMITs of one file cost one fsync.
//    Stable writes report FILE_SYNC. A failed fsync changes the write
//    verifier and fails every caller it covered. COMMIT syncs the whole file.
//  - Descriptors pin inodes: names removed through the backend drop their
//    cached descriptors at once; files deleted by local processes are freed
//    when their descriptors are evicted or the handle is next used (ESTALE).
//    A writeback error on an evicted descriptor is not seen by later syncs.
//  - ExportOf/any call with a handle of an unknown export id: ESTALE.
//  - The server stores exactly the mode the client sent (the client already
//    applied its umask): directory operations run with an umask of 0 in
//    their thread only (ScopedExactModes), the process keeps its own. When
//    no mode is given, files get 0600 and directories 0700.
//  - Create() raises RLIMIT_NOFILE's soft limit to the hard limit and shrinks
//    the caches if the limit is still too small for them.
#ifndef NFS3D_VFS_POSIX_BACKEND_H_
#define NFS3D_VFS_POSIX_BACKEND_H_

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

#include "vfs/backend.h"
#include "vfs/file_handle_codec.h"
#include "vfs/state_dir.h"

namespace nfs3d::vfs {

// Write gathering, for statistics: requests / fsyncs is the number of
// stable WRITEs and COMMITs one fsync answered on average. Metadata commits
// (CommitMetadata) are counted apart: each namespace or attribute change,
// and the fsync/syncfs calls made for them (none on tmpfs and ramfs).
struct SyncStats {
  uint64_t requests = 0;  // stable WRITEs and COMMITs that needed a sync
  uint64_t fsyncs = 0;    // fsync calls made for them
  uint64_t metadata_commits = 0;
  uint64_t metadata_syncs = 0;
};
struct SyncCounters {
  std::atomic<uint64_t> requests{0};
  std::atomic<uint64_t> fsyncs{0};
  std::atomic<uint64_t> metadata_commits{0};
  std::atomic<uint64_t> metadata_syncs{0};
};

struct PosixBackendOptions {
  std::string state_dir;            // holds handle.key (created if missing)
  size_t handle_cache_size = 4096;  // resolved O_PATH descriptors
  size_t io_cache_size = 1024;      // open read/write descriptors
  // Advanced by the transports after every read from a client socket; lets
  // the check for directories moved out of an export look at fanotify once
  // per read instead of once per call (DirectoryMoveWatch). Null: per call.
  const std::atomic<uint64_t>* receive_count = nullptr;
};

// How an export treats file systems mounted below it (exports(5)).
struct PosixExportSettings {
  std::optional<uint64_t> fsid;  // fsid=: replaces the reported file system id
  // crossmnt: LOOKUP of a mount point below the export enters the mounted
  // file system (and those mounted inside it), each served as a submount
  // export with its own handles and fsid; ExportOf gives this export's id
  // for them, so its options apply. Submounts present now are registered
  // at once (their handles survive restarts: ids derive from export id and
  // path); later mounts when a LOOKUP first reaches them.
  bool crossmnt = false;
  // nohide: an export whose root is a mount point inside another export is
  // entered by LOOKUPs in that export (then its own options apply).
  bool nohide = false;
};

class PosixBackend : public Backend {
 public:
  static absl::StatusOr<std::unique_ptr<PosixBackend>> Create(const PosixBackendOptions& options);
  ~PosixBackend() override;

  using ExportSettings = PosixExportSettings;

  // Exports the directory at path under export_id. Fails if the id is taken,
  // the path is not a directory, or its file system has no file handles.
  // Without crossmnt/nohide, LOOKUP of a mount point below an export gives
  // the directory the mount covers (reached through a clone of the export's
  // mount without its submounts), as knfsd does.
  absl::Status AddExport(uint32_t export_id, const std::string& path,
                         const ExportSettings& settings = {});

  // The state directory (e.g. to assign stable export ids with ExportId()).
  StateDir& state_dir() { return *state_dir_; }

  absl::StatusOr<FileHandle> RootHandle(uint32_t export_id) override;
  absl::Status RefreshExport(uint32_t export_id) override;
  absl::StatusOr<int> OpenForLocking(const FileHandle& fh) override;
  absl::StatusOr<std::optional<Quota>> GetQuota(uint32_t export_id, QuotaKind kind,
                                                uint32_t id) override;
  absl::StatusOr<AclPair> GetAcl(const Cred& cred, const FileHandle& fh,
                                 std::optional<Attributes>* attributes) override;
  absl::Status SetAcl(const Cred& cred, const FileHandle& fh, const Acl* access,
                      const Acl* default_acl, std::optional<Attributes>* attributes) override;
  absl::StatusOr<uint32_t> ExportOf(const FileHandle& fh) override;
  absl::StatusOr<Attributes> GetAttr(const Cred& cred, const FileHandle& fh) override;
  absl::Status SetAttr(const Cred& cred, const FileHandle& fh, const SetAttributes& attrs,
                       std::optional<Time> guard_ctime, Wcc* wcc) override;
  absl::StatusOr<LookupResult> Lookup(const Cred& cred, const FileHandle& dir,
                                      std::string_view name,
                                      std::optional<Attributes>* dir_attributes) override;
  absl::StatusOr<AccessResult> Access(const Cred& cred, const FileHandle& fh, uint32_t requested,
                                      std::optional<Attributes>* attributes) override;
  absl::StatusOr<std::string> Readlink(const Cred& cred, const FileHandle& fh,
                                       std::optional<Attributes>* attributes) override;
  absl::StatusOr<ReadResult> Read(const Cred& cred, const FileHandle& fh, uint64_t offset,
                                  uint32_t count, uint8_t* buf) override;
  absl::StatusOr<FileSlice> ReadSlice(const Cred& cred, const FileHandle& fh, uint64_t offset,
                                      uint32_t count) override;
  absl::StatusOr<WriteResult> Write(const Cred& cred, const FileHandle& fh, uint64_t offset,
                                    absl::Span<const uint8_t> data, StableHow stable,
                                    Wcc* wcc) override;
  absl::StatusOr<WriteResult> WriteSpliced(const Cred& cred, const FileHandle& fh, uint64_t offset,
                                           absl::Span<const uint8_t> data, const PipedBytes& piped,
                                           StableHow stable, Wcc* wcc) override;
  absl::StatusOr<CreateResult> Create(const Cred& cred, const FileHandle& dir,
                                      std::string_view name, CreateMode mode,
                                      const SetAttributes& attrs, const Verifier& verifier,
                                      Wcc* dir_wcc) override;
  absl::StatusOr<CreateResult> Mkdir(const Cred& cred, const FileHandle& dir, std::string_view name,
                                     const SetAttributes& attrs, Wcc* dir_wcc) override;
  absl::StatusOr<CreateResult> Symlink(const Cred& cred, const FileHandle& dir,
                                       std::string_view name, std::string_view target,
                                       const SetAttributes& attrs, Wcc* dir_wcc) override;
  absl::StatusOr<CreateResult> Mknod(const Cred& cred, const FileHandle& dir, std::string_view name,
                                     FileType type, uint32_t major, uint32_t minor,
                                     const SetAttributes& attrs, Wcc* dir_wcc) override;
  absl::Status Remove(const Cred& cred, const FileHandle& dir, std::string_view name,
                      Wcc* dir_wcc) override;
  absl::Status Rmdir(const Cred& cred, const FileHandle& dir, std::string_view name,
                     Wcc* dir_wcc) override;
  absl::Status Rename(const Cred& cred, const FileHandle& from_dir, std::string_view from_name,
                      const FileHandle& to_dir, std::string_view to_name, Wcc* from_wcc,
                      Wcc* to_wcc) override;
  absl::Status Link(const Cred& cred, const FileHandle& fh, const FileHandle& dir,
                    std::string_view name, std::optional<Attributes>* file_attributes,
                    Wcc* dir_wcc) override;
  absl::Status ReadDir(const Cred& cred, const FileHandle& dir, uint64_t cookie, Verifier* verifier,
                       const std::function<bool(const DirEntry&)>& emit, bool* eof,
                       std::optional<Attributes>* dir_attributes) override;
  absl::StatusOr<FsStat> StatFs(const Cred& cred, const FileHandle& fh,
                                std::optional<Attributes>* attributes) override;
  absl::StatusOr<PathConf> GetPathConf(const Cred& cred, const FileHandle& fh,
                                       std::optional<Attributes>* attributes) override;
  absl::StatusOr<Verifier> Commit(const Cred& cred, const FileHandle& fh, uint64_t offset,
                                  uint32_t count, Wcc* wcc) override;
  Verifier WriteVerifier() const override;
  // The write verifier of the process this one takes over from (daemon/
  // handover.h): unstable writes made there need no resend.
  void AdoptWriteVerifier(uint64_t verifier);
  uint64_t WriteVerifierValue() const;

  SyncStats sync_stats() const;
  // syncfs() on the file system of every export (clean shutdown). Returns
  // the first failure; tries them all.
  absl::Status SyncExports();

  // Implementation types, public only so the .cc's helpers can name them.
  struct Export;
  struct Node;
  class Impl;

 private:
  PosixBackend() = default;
  // Write and WriteSpliced (piped null: all of data is in memory).
  absl::StatusOr<WriteResult> WriteFrom(const Cred& cred, const FileHandle& fh, uint64_t offset,
                                        absl::Span<const uint8_t> data, const PipedBytes* piped,
                                        StableHow stable, Wcc* wcc);
  std::unique_ptr<StateDir> state_dir_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace nfs3d::vfs

#endif  // NFS3D_VFS_POSIX_BACKEND_H_
