// The CephFS backend's mount (CephfsBackend::Impl): one libcephfs mount
// and the exports served from it, with what the operations share: handle
// resolution, attributes, permission checks, open files, and the helpers
// that wrap directory-changing calls. Private to vfs/cephfs/.
#ifndef NFS3D_VFS_CEPHFS_CEPHFS_IMPL_H_
#define NFS3D_VFS_CEPHFS_CEPHFS_IMPL_H_

#include <cephfs/libcephfs.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"
#include "absl/synchronization/mutex.h"

#include "vfs/backend_helpers.h"
#include "vfs/cephfs/cephfs_backend.h"
#include "vfs/cephfs/cephfs_snapshots.h"
#include "vfs/file_handle_codec.h"
#include "vfs/posix_acl.h"
#include "vfs/sync_group.h"

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

inline constexpr uint64_t kNoSnap = kCephNoSnap;
inline constexpr char kVerifierXattr[] = "user.nfs3d.verifier";
inline constexpr unsigned kWantAttrs = CEPH_STATX_BASIC_STATS;

// A libcephfs result (negative errno) as a Status. Errors meaning the
// cluster did not answer in time become kErrJukebox (try later).
absl::Status CephError(int rc, std::string_view context);

inline WccAttr ToWcc(const Attributes& a) { return WccAttr{a.size, a.mtime, a.ctime}; }

// The snapshot an inode belongs to: libcephfs reports it as the device.
inline uint64_t SnapOf(const struct ceph_statx& stx) { return stx.stx_dev; }

inline Verifier ToVerifier(uint64_t v) {
  Verifier out;
  std::memcpy(out.data(), &v, sizeof(v));
  return out;
}

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

  // What a mount is: its root directory and cephx user.
  struct MountSpec {
    std::string root = "/";
    CephUser user;
  };

  // verifier: the backend's write verifier, shared by its mounts.
  Impl(ceph_mount_info* cm, const HandleSecret& secret, std::string cluster, MountSpec spec,
       std::atomic<uint64_t>* verifier)
      : cm_(cm),
        codec_(secret),
        cluster_(std::move(cluster)),
        spec_(std::move(spec)),
        verifier_(verifier) {}
  ~Impl();

  // This mount's session was ended by the cluster; a new one replaces it.
  void MarkDead() { dead_.store(true); }
  // Flushes what this session wrote (ceph_sync_fs) and ends it cleanly,
  // releasing its capabilities and locks: a handover, where a successor's
  // session serves the files next. No call may use the mount afterwards.
  absl::Status SyncAndUnmount();

  // The exports, to serve them from a new session: id, path, fsid.
  std::vector<std::tuple<uint32_t, std::string, uint64_t>> ExportList();

  // A call the MDS must answer (directory statistics are never served from
  // the cache): its result tells whether the session is still alive.
  int ProbeSession();

  ceph_mount_info* cm() const { return cm_; }
  const std::string& cluster() const { return cluster_; }
  const MountSpec& spec() const { return spec_; }

  absl::Status AddExport(uint32_t id, const std::string& path, uint64_t fsid);

  const Export* FindExport(uint32_t id);

  absl::StatusOr<FileHandle> MakeHandle(const Export& exp, uint64_t ino, uint64_t snap) const;

  // The export a handle belongs to, with its inode number and snapshot.
  absl::StatusOr<std::tuple<const Export*, uint64_t, uint64_t>> Decode(const FileHandle& fh);

  // Finds the handle's inode: in libcephfs's cache, else by number from the
  // MDS (after a restart). ESTALE once the inode is gone.
  absl::StatusOr<Node> Resolve(const FileHandle& fh);

  absl::StatusOr<Node> Root(uint32_t export_id);

  // OK when the directory in lies under the export's root (walking ".."
  // up, once per inode: later calls find it in inside_); ESTALE otherwise.
  // Only a mount rooted below the file system root needs it. A file's
  // parent is unknown to libcephfs: the MDS's path caps of the export's
  // cephx user confine files.
  absl::Status CheckUnderRoot(const Export& exp, Inode* in, uint64_t ino);

  Attributes ToAttributes(const struct ceph_statx& stx, const Export& exp) const;

  absl::StatusOr<struct ceph_statx> StatX(Inode* in);

  absl::StatusOr<Attributes> Attrs(const Node& node);

  std::optional<Attributes> AttrsOrNone(const Node& node);

  // Permission to read or write a file's data as cred: data I/O runs with
  // the mount's identity, so the POSIX rules are checked here.
  absl::StatusOr<bool> MayIo(const Cred& cred, const Node& node, const Attributes& a, bool write);

  // The access ACL that decides what cred may do to the object; empty when
  // only the mode bits matter (root, the owner, no ACL).
  absl::StatusOr<Acl> AclToCheck(const Cred& cred, const Node& node, const Attributes& a);

  // After cred wrote to or truncated the file whose attributes were a: the
  // setuid/setgid bits the kernel would clear. Cleared with the mount's
  // identity, since the caller may not own the file.
  absl::Status DropPrivileges(const Cred& cred, Inode* in, const Attributes& a);

  // After a chown: the MDS clears setuid/setgid by its own rule, which
  // differs from Linux's for setgid without group-execute.
  absl::Status SetModeAfterChown(const Cred& cred, const Node& node, const Attributes& before);

  // Fetches a directory's attributes from the MDS: its link count counts
  // its subdirectories, which libcephfs's cache does not follow when one
  // moves away, and ll_getattr cannot be forced to ask. Reading a
  // directory-statistics xattr makes libcephfs ask the MDS.
  absl::Status RefreshDirectory(Inode* in);

  // The file's I/O handle, opened on first use.
  absl::StatusOr<std::shared_ptr<OpenFile>> File(const Node& node);

  void ForgetFile(uint64_t ino);

  // One gathered fsync of the file; a failure changes the verifier.
  absl::Status Sync(OpenFile& file);

  // Applies attrs as cred (libcephfs and the MDS check permissions), in
  // the MDS before it returns (SetattrDurably).
  absl::Status ApplyAttrs(const Cred& cred, Inode* in, const SetAttributes& attrs);
  // ceph_ll_setattr, then the change flushed to the MDS.
  absl::Status SetattrDurably(Inode* in, struct ceph_statx* stx, int mask, UserPerm* perm,
                              const char* what);

  // Runs a directory-changing op with wcc around it.
  absl::Status DirOp(const Node& dir, Wcc* wcc, const std::function<absl::Status()>& op);

  // Handle and attributes of a new object (takes over the reference on in);
  // applies what attrs the create did not (uid/gid, times; the size of a
  // regular file) as cred. Like the POSIX backend, a change that fails
  // fails the call.
  absl::StatusOr<CreateResult> Finish(const Cred& cred, const Node& dir, Inode* in,
                                      const SetAttributes* attrs, bool regular);

  // CREATE, MKDIR, SYMLINK, MKNOD, LINK: resolves dir, checks the new name
  // and runs op(dir, name, the caller's identity) with wcc around it.
  using EntryOp = std::function<absl::Status(const Node& dir, const char* name, UserPerm* perm)>;
  absl::Status NewEntry(const Cred& cred, const FileHandle& dir, std::string_view name,
                        Wcc* dir_wcc, const EntryOp& op);

  // NewEntry for a call that makes an object: make (a ceph_ll_* call)
  // returns a negative errno, or 0 with a reference on the new inode in *in;
  // the object is then finished with attrs.
  using MakeFn = std::function<int(Inode* dir, const char* name, UserPerm* perm, Inode** in)>;
  absl::StatusOr<CreateResult> MakeEntry(const Cred& cred, const FileHandle& dir,
                                         std::string_view name, Wcc* dir_wcc, const char* what,
                                         const SetAttributes* attrs, bool regular,
                                         const MakeFn& make);

  uint64_t verifier() const { return verifier_->load(); }
  void RotateVerifier(const char* why = "sync failed");

 private:
  ceph_mount_info* const cm_;
  std::atomic<bool> dead_{false};
  bool unmounted_ = false;  // SyncAndUnmount ran
  const HandleCodec codec_;
  const std::string cluster_;
  const MountSpec spec_;
  std::atomic<uint64_t>* const verifier_;
  absl::Mutex exports_mu_;
  std::map<uint32_t, std::unique_ptr<Export>> exports_ ABSL_GUARDED_BY(exports_mu_);
  absl::Mutex inside_mu_;
  absl::flat_hash_set<uint64_t> inside_ ABSL_GUARDED_BY(inside_mu_);
  absl::Mutex files_mu_;
  // Open files by inode and snapshot (a snapshot's inodes have the live
  // inode numbers).
  using FileKey = std::pair<uint64_t, uint64_t>;
  std::unordered_map<FileKey, std::shared_ptr<OpenFile>, absl::Hash<FileKey>> files_
      ABSL_GUARDED_BY(files_mu_);
};

}  // namespace nfs3d::vfs

#endif  // NFS3D_VFS_CEPHFS_CEPHFS_IMPL_H_
