// The file system backend: a narrow, NFS-shaped interface that the protocol
// layer (nfsd) calls exactly once per procedure. Every operation takes the
// caller's (already squashed) credential and runs with it, so the kernel
// checks permissions. Results carry the attributes NFS needs for wcc_data and
// post-op attributes so the protocol layer never stats files itself.
#ifndef NFS3D_VFS_BACKEND_H_
#define NFS3D_VFS_BACKEND_H_

#include <array>
#include <cerrno>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"

#include "vfs/posix_acl.h"
#include "vfs/vfs_error.h"

namespace nfs3d::vfs {

inline constexpr size_t kMaxHandleSize = 64;

// An opaque, stable file handle: carries the export, survives restarts and
// cannot be forged (the backend authenticates it).
struct FileHandle {
  uint8_t len = 0;
  uint8_t data[kMaxHandleSize] = {};
  absl::Span<const uint8_t> bytes() const { return {data, len}; }
  static FileHandle FromBytes(absl::Span<const uint8_t> bytes);  // truncates beyond 64
  friend bool operator==(const FileHandle& a, const FileHandle& b);
};

// Caller identity applied to the worker thread for the duration of a call.
struct Cred {
  uint32_t uid = 65534;
  uint32_t gid = 65534;
  std::vector<uint32_t> groups;
};

enum class FileType : uint8_t { kRegular, kDirectory, kBlock, kChar, kSymlink, kSocket, kFifo };

struct Time {
  uint32_t seconds = 0;
  uint32_t nseconds = 0;
};

struct Attributes {
  FileType type = FileType::kRegular;
  uint32_t mode = 0;  // permission bits only (07777)
  uint32_t nlink = 1;
  uint32_t uid = 0;
  uint32_t gid = 0;
  uint64_t size = 0;
  uint64_t used = 0;  // bytes allocated
  uint32_t rdev_major = 0;
  uint32_t rdev_minor = 0;
  uint64_t fsid = 0;    // identifies the export's file system
  uint64_t fileid = 0;  // unique within fsid
  Time atime;
  Time mtime;
  Time ctime;
};

// The subset of attributes a wcc pre-op check uses (RFC 1813 wcc_attr).
struct WccAttr {
  uint64_t size = 0;
  Time mtime;
  Time ctime;
};

// Before/after attributes of an object changed by an operation. before is set
// only when it truly is the state right before the change.
struct Wcc {
  std::optional<WccAttr> before;
  std::optional<Attributes> after;
};

enum class SetTime : uint8_t { kDontChange, kServerTime, kClientTime };

struct SetAttributes {
  std::optional<uint32_t> mode;
  std::optional<uint32_t> uid;
  std::optional<uint32_t> gid;
  std::optional<uint64_t> size;
  SetTime atime_how = SetTime::kDontChange;
  Time atime;
  SetTime mtime_how = SetTime::kDontChange;
  Time mtime;
};

enum class CreateMode : uint8_t { kUnchecked, kGuarded, kExclusive };
enum class StableHow : uint8_t { kUnstable = 0, kDataSync = 1, kFileSync = 2 };

using Verifier = std::array<uint8_t, 8>;

struct LookupResult {
  FileHandle handle;
  Attributes attributes;
};

// Result of CREATE, MKDIR, SYMLINK, MKNOD. On error the Status is returned
// and dir_wcc is lost; operations that must report dir wcc on failure return
// it through the out-parameter instead (see below).
struct CreateResult {
  FileHandle handle;
  std::optional<Attributes> attributes;
};

struct ReadResult {
  uint32_t count = 0;
  bool eof = false;
  std::optional<Attributes> attributes;
};

// A READ answered by reference: count bytes of the open file fd from offset,
// which owner keeps open. The caller sends them later (sendfile).
struct FileSlice {
  std::shared_ptr<const void> owner;
  int fd = -1;
  uint32_t count = 0;
  bool eof = false;
  std::optional<Attributes> attributes;
};

// WRITE data partly left in a kernel pipe (spliced from the socket, see
// rpc/write_splice.h): bytes [offset, offset + size) of the data are not in
// memory but, in order, in the pipe whose read end is pipe_fd; `memory` is
// where they belong in the data span, for a backend that wants them there.
struct PipedBytes {
  size_t offset = 0;
  size_t size = 0;
  int pipe_fd = -1;
  uint8_t* memory = nullptr;
};

// Reads n bytes from a pipe into out (PipedBytes into memory).
absl::Status ReadPipeInto(int pipe_fd, uint8_t* out, size_t n);

struct WriteResult {
  uint32_t count = 0;
  StableHow committed = StableHow::kUnstable;
  Verifier verifier{};
};

struct AccessResult {
  uint32_t granted = 0;  // ACCESS3_* bits
};

struct DirEntry {
  uint64_t fileid = 0;
  std::string_view name;
  uint64_t cookie = 0;  // resumes the listing after this entry
};

struct FsStat {
  uint64_t total_bytes = 0, free_bytes = 0, avail_bytes = 0;
  uint64_t total_files = 0, free_files = 0, avail_files = 0;
};

struct PathConf {
  uint32_t link_max = 0;
  uint32_t name_max = 255;
};

// A user's or group's disk quota on an export's file system (RQUOTA).
enum class QuotaKind : uint8_t { kUser, kGroup };
struct Quota {
  uint64_t bytes_hard = 0, bytes_soft = 0, bytes_used = 0;  // limits: 0 = none
  uint64_t files_hard = 0, files_soft = 0, files_used = 0;
  // Seconds of grace left once over a soft limit; 0 when not over it.
  uint64_t bytes_grace_left = 0, files_grace_left = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;

  // Handle of an export's root directory. Export ids are assigned by the
  // caller (stable per export path).
  virtual absl::StatusOr<FileHandle> RootHandle(uint32_t export_id) = 0;
  // If the export's path now names another directory than when it was added
  // (a file system was mounted there since: exports with `mountpoint`), serve
  // that one from now on. Backends without paths keep the default.
  virtual absl::Status RefreshExport(uint32_t export_id) {
    (void)export_id;
    return absl::OkStatus();
  }
  // Which export a handle belongs to; kErrBadHandle if it is not authentic.
  virtual absl::StatusOr<uint32_t> ExportOf(const FileHandle& fh) = 0;

  // All operations below: errors carry an errno (vfs_error.h). `wcc` /
  // `dir_wcc` out-parameters are filled as far as known even on error, because
  // NFS reports them in failure replies too.
  virtual absl::StatusOr<Attributes> GetAttr(const Cred& cred, const FileHandle& fh) = 0;
  // guard_ctime: fail with kErrNotSync unless the current ctime equals it.
  virtual absl::Status SetAttr(const Cred& cred, const FileHandle& fh, const SetAttributes& attrs,
                               std::optional<Time> guard_ctime, Wcc* wcc) = 0;
  // ".." of an export root is the root itself; "." is the directory.
  // dir_attributes may be nullptr (READDIRPLUS looks up entries that way).
  virtual absl::StatusOr<LookupResult> Lookup(const Cred& cred, const FileHandle& dir,
                                              std::string_view name,
                                              std::optional<Attributes>* dir_attributes) = 0;
  // Lookup of each name in dir (READDIRPLUS: its entries' handles and
  // attributes); element i answers names[i]. Overridden where one call for
  // all is cheaper (DeadlineBackend: one thread hand-off instead of one each).
  virtual std::vector<absl::StatusOr<LookupResult>> LookupEach(
      const Cred& cred, const FileHandle& dir, absl::Span<const std::string_view> names) {
    std::vector<absl::StatusOr<LookupResult>> results;
    results.reserve(names.size());
    for (std::string_view name : names) results.push_back(Lookup(cred, dir, name, nullptr));
    return results;
  }
  virtual absl::StatusOr<AccessResult> Access(const Cred& cred, const FileHandle& fh,
                                              uint32_t requested,
                                              std::optional<Attributes>* attributes) = 0;
  virtual absl::StatusOr<std::string> Readlink(const Cred& cred, const FileHandle& fh,
                                               std::optional<Attributes>* attributes) = 0;
  // Reads up to count bytes into buf (which holds at least count bytes).
  virtual absl::StatusOr<ReadResult> Read(const Cred& cred, const FileHandle& fh, uint64_t offset,
                                          uint32_t count, uint8_t* buf) = 0;
  // Like Read, with the same checks and errors, but reads nothing: returns
  // the descriptor and how many bytes from offset (clipped at end of file)
  // the reply should carry. Backends without descriptors keep this default,
  // and callers then use Read.
  virtual absl::StatusOr<FileSlice> ReadSlice(const Cred& cred, const FileHandle& fh,
                                              uint64_t offset, uint32_t count) {
    (void)cred, (void)fh, (void)offset, (void)count;
    return absl::UnimplementedError("no file slices");
  }
  virtual absl::StatusOr<WriteResult> Write(const Cred& cred, const FileHandle& fh, uint64_t offset,
                                            absl::Span<const uint8_t> data, StableHow stable,
                                            Wcc* wcc) = 0;
  // Write with `piped` bytes of data in a pipe; same results as Write. A
  // backend with file descriptors splices them into the file (no copy in
  // user space); this default reads them into memory and calls Write.
  virtual absl::StatusOr<WriteResult> WriteSpliced(const Cred& cred, const FileHandle& fh,
                                                   uint64_t offset, absl::Span<const uint8_t> data,
                                                   const PipedBytes& piped, StableHow stable,
                                                   Wcc* wcc) {
    absl::Status in_memory = ReadPipeInto(piped.pipe_fd, piped.memory, piped.size);
    if (!in_memory.ok()) return in_memory;
    return Write(cred, fh, offset, data, stable, wcc);
  }
  // EXCLUSIVE: verifier is stored with the file (all 8 bytes); a retransmitted
  // create with the same verifier succeeds and returns the same file.
  virtual absl::StatusOr<CreateResult> Create(const Cred& cred, const FileHandle& dir,
                                              std::string_view name, CreateMode mode,
                                              const SetAttributes& attrs, const Verifier& verifier,
                                              Wcc* dir_wcc) = 0;
  virtual absl::StatusOr<CreateResult> Mkdir(const Cred& cred, const FileHandle& dir,
                                             std::string_view name, const SetAttributes& attrs,
                                             Wcc* dir_wcc) = 0;
  virtual absl::StatusOr<CreateResult> Symlink(const Cred& cred, const FileHandle& dir,
                                               std::string_view name, std::string_view target,
                                               const SetAttributes& attrs, Wcc* dir_wcc) = 0;
  // type: kChar, kBlock (with major/minor), kSocket, kFifo; others kErrBadType.
  virtual absl::StatusOr<CreateResult> Mknod(const Cred& cred, const FileHandle& dir,
                                             std::string_view name, FileType type, uint32_t major,
                                             uint32_t minor, const SetAttributes& attrs,
                                             Wcc* dir_wcc) = 0;
  virtual absl::Status Remove(const Cred& cred, const FileHandle& dir, std::string_view name,
                              Wcc* dir_wcc) = 0;
  virtual absl::Status Rmdir(const Cred& cred, const FileHandle& dir, std::string_view name,
                             Wcc* dir_wcc) = 0;
  virtual absl::Status Rename(const Cred& cred, const FileHandle& from_dir,
                              std::string_view from_name, const FileHandle& to_dir,
                              std::string_view to_name, Wcc* from_wcc, Wcc* to_wcc) = 0;
  virtual absl::Status Link(const Cred& cred, const FileHandle& fh, const FileHandle& dir,
                            std::string_view name, std::optional<Attributes>* file_attributes,
                            Wcc* dir_wcc) = 0;
  // Lists dir from cookie (0 = start). `verifier` in: the client's cookie
  // verifier (ignored when cookie == 0), out: the current one; a stale
  // verifier gives kErrBadCookie. `emit` is called per entry in order and
  // returns false to stop (reply full); *eof is true when the listing ended
  // without emit refusing. "." and ".." are included.
  virtual absl::Status ReadDir(const Cred& cred, const FileHandle& dir, uint64_t cookie,
                               Verifier* verifier, const std::function<bool(const DirEntry&)>& emit,
                               bool* eof, std::optional<Attributes>* dir_attributes) = 0;
  virtual absl::StatusOr<FsStat> StatFs(const Cred& cred, const FileHandle& fh,
                                        std::optional<Attributes>* attributes) = 0;
  virtual absl::StatusOr<PathConf> GetPathConf(const Cred& cred, const FileHandle& fh,
                                               std::optional<Attributes>* attributes) = 0;
  // Flushes [offset, offset+count) (count 0: to the end) to stable storage.
  virtual absl::StatusOr<Verifier> Commit(const Cred& cred, const FileHandle& fh, uint64_t offset,
                                          uint32_t count, Wcc* wcc) = 0;
  // The current write verifier: fixed for a server instance, changes when a
  // sync fails so clients resend uncommitted data.
  virtual Verifier WriteVerifier() const = 0;
  // A new open file description of the regular file fh, read-write where
  // the file allows it, else read-only; the caller owns the descriptor. The
  // lock manager holds byte-range (OFD) locks on it, so processes on the
  // server see NLM locks. No permission check: the caller has done it.
  virtual absl::StatusOr<int> OpenForLocking(const FileHandle& fh) {
    return absl::UnimplementedError("no file locks on this backend");
  }
  // The quota of a user or group on the file system of export `export_id`;
  // nullopt when that file system keeps no such quotas (quotas off, or a
  // backend without them). Errors carry an errno.
  virtual absl::StatusOr<std::optional<Quota>> GetQuota(uint32_t export_id, QuotaKind kind,
                                                        uint32_t id) {
    (void)export_id, (void)kind, (void)id;
    return std::nullopt;
  }
  // POSIX ACLs (NFSACL). GetAcl: the access ACL (from the mode bits when
  // the object has none) and, for directories, the default ACL; no
  // permission is needed, as for attributes. SetAcl: each non-null ACL
  // replaces the object's (an empty one removes it), as the caller, so the
  // kernel lets only the owner do it; `attributes` gets the attributes after.
  // Backends without ACLs keep these defaults (EOPNOTSUPP: NFS3ERR_NOTSUPP).
  virtual absl::StatusOr<AclPair> GetAcl(const Cred& cred, const FileHandle& fh,
                                         std::optional<Attributes>* attributes) {
    (void)cred, (void)fh, (void)attributes;
    return ErrnoError(EOPNOTSUPP, "no ACLs on this backend");
  }
  virtual absl::Status SetAcl(const Cred& cred, const FileHandle& fh, const Acl* access,
                              const Acl* default_acl, std::optional<Attributes>* attributes) {
    (void)cred, (void)fh, (void)access, (void)default_acl, (void)attributes;
    return ErrnoError(EOPNOTSUPP, "no ACLs on this backend");
  }
};

}  // namespace nfs3d::vfs

#endif  // NFS3D_VFS_BACKEND_H_
