// A Backend serving directories of a CephFS file system through libcephfs's
// low-level (ceph_ll_*) API: objects are Inode references, never paths.
//
//  - Credentials: every call builds a UserPerm from the caller's (squashed)
//    uid/gid/groups, so libcephfs and the MDS check permissions; data I/O
//    goes through a per-file Fh opened once with the mount's identity, after
//    the caller's permission was checked by the POSIX rules
//    (vfs/posix_permission.h), which also say when a write clears setuid.
//  - Handles: the shared codec (vfs/file_handle_codec.h) with handle type
//    kCephHandleType and 16 bytes of body: inode number and snapshot id,
//    big-endian. They survive restarts: an inode not in libcephfs's cache is
//    found again with ceph_ll_lookup_inode (an MDS lookup by number).
//  - Snapshots: .snap directories and their snapshots are served read-only
//    (cephfs_snapshots.h); FSSTAT reports CephFS directory quotas
//    (cephfs_quota.h); POSIX ACLs through NFSACL (cephfs_acl.h).
//  - Write gathering: FILE_SYNC/DATA_SYNC writes and COMMITs of one file
//    share ceph_ll_fsync calls (vfs/sync_group.h); a failed sync changes the
//    write verifier.
//  - EXCLUSIVE create stores the verifier in the xattr user.nfs3d.verifier.
//  - READDIR cookies are libcephfs directory offsets; the cookie verifier is
//    constant (offsets stay valid across changes, as on POSIX).
//  - Timeouts: connecting (monitors) and monitor operations fail after
//    options.timeout_seconds, and libcephfs's "timed out"/"not connected"
//    errors become kErrJukebox. Requests to an MDS or OSD that stops
//    answering wait until it is back: the daemon bounds them by calling this
//    backend through a DeadlineBackend (vfs/deadline_backend.h). Opening a
//    session and ending a previous instance's (at start, and when an evicted
//    session is replaced) wait for the MDS unbounded, as they must finish
//    before anything is served; from the timeout on, the log says what they
//    wait for (stall_report.h).
//  - A session the cluster ended (an eviction: every call of that mount
//    fails from then on) is replaced by a new mount with the same exports
//    and handles (session_watch.h).
//  - Exports: one at the file system root with the [ceph] user shares the
//    backend's mount. A sub-directory export, or one naming a cephx user of
//    its own (CephUser), is a mount of its own rooted at its directory
//    (ceph_mount(path)), as that user: ".." of its root is the root, and the
//    MDS refuses what that user's caps (e.g. `mds 'allow rw path=/dir'`)
//    do not allow. A handle of a directory outside it is refused too.
//  - Several heads ([cluster], CephfsOptions::node_id) share the handle key
//    through the file system, so any head accepts any head's handles.
//  - Restart: a head's CephFS session id is fixed (host, state directory,
//    handle key; or cluster name and node id); a new instance first ends the old instance's session
//    (ceph_start_reclaim with CEPH_RECLAIM_RESET), so files it had open are
//    usable at once instead of after the MDS's session timeout.
//  - Handover (nfs3d --takeover): the successor mounts with the head's other
//    session id beside the running instance; the running one flushes and
//    unmounts (HandOverSessions) before the successor serves, and the
//    successor keeps its write verifier (cephfs_handover.cc).
#ifndef NFS3D_VFS_CEPHFS_CEPHFS_BACKEND_H_
#define NFS3D_VFS_CEPHFS_CEPHFS_BACKEND_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

#include "vfs/backend.h"
#include "vfs/cephfs/cluster_files.h"
#include "vfs/cephfs/session_watch.h"
#include "vfs/cluster_backend.h"
#include "vfs/file_handle_codec.h"
#include "vfs/state_dir.h"

namespace nfs3d::vfs {

// Options and users are the cluster backend's (vfs/cluster_backend.h).
using CephfsOptions = ClusterBackendOptions;
using CephUser = ClusterUser;

class CephfsBackend : public ClusterBackend {
 public:
  // Connects and mounts the file system. Errors name the cluster (conf path,
  // client id, file system) and the step that failed.
  static absl::StatusOr<std::unique_ptr<CephfsBackend>> Create(const CephfsOptions& options);
  ~CephfsBackend() override;

  // Exports the CephFS directory at path ("/" = the file system root).
  // fsid: the file system id reported to clients (0 = derived from the id).
  // A sub-directory, or a user of its own, makes a mount of its own: errors
  // name the user and the path (e.g. caps that do not allow the path).
  absl::Status AddExport(uint32_t export_id, const std::string& path, uint64_t fsid = 0,
                         const CephUser& user = {}) override;

  absl::StatusOr<FileHandle> RootHandle(uint32_t export_id) override;
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
  absl::StatusOr<WriteResult> Write(const Cred& cred, const FileHandle& fh, uint64_t offset,
                                    absl::Span<const uint8_t> data, StableHow stable,
                                    Wcc* wcc) override;
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
  absl::StatusOr<AclPair> GetAcl(const Cred& cred, const FileHandle& fh,
                                 std::optional<Attributes>* attributes) override;
  absl::Status SetAcl(const Cred& cred, const FileHandle& fh, const Acl* access,
                      const Acl* default_acl, std::optional<Attributes>* attributes) override;
  // The exported directory's CephFS quota (ceph.quota.max_bytes/max_files
  // as hard limits, its recursive bytes and entries as usage), the same for
  // every user and group: CephFS quotas limit directory trees, not owners.
  // nullopt when the directory sets no limit.
  absl::StatusOr<std::optional<Quota>> GetQuota(uint32_t export_id, QuotaKind kind,
                                                uint32_t id) override;
  Verifier WriteVerifier() const override;
  // A new write verifier: for a sync whose outcome is unknown (it did not
  // answer in time), so clients resend what they wrote UNSTABLE.
  void ChangeWriteVerifier() override;
  // Names the cluster (conf, client, file system), for messages.
  const std::string& cluster() const override;

  // The [cluster] state the heads share, in shared_dir of the file system
  // (cluster_files.h; every call through `run`). FailedPrecondition on a
  // head without a node id.
  absl::StatusOr<std::unique_ptr<DurableFiles>> SharedFiles(CephCallRunner run) override;
  // The libcephfs client's global id (client.<id>: `ceph tell mds.* session
  // evict id=<id>`), of the session in use.
  uint64_t session_id() const;
  // This head's [cluster] node id; "" = a head of its own.
  const std::string& node_id() const { return node_id_; }

  // Handover (cephfs_handover.cc). In the running instance, once no call
  // runs: flushes what every session wrote and ends the sessions cleanly
  // (their capabilities and locks go); an error means something may not
  // have been flushed, so the successor must not keep the write verifier.
  absl::Status HandOverSessions() override;
  uint64_t WriteVerifierValue() const override { return verifier_.load(); }
  void AdoptWriteVerifier(uint64_t verifier) override { verifier_.store(verifier); }
  // Notes in the state directory which session ids this instance uses, so
  // the next successor takes the others.
  absl::Status RecordSessionInUse() override;
  // In a successor whose predecessor never handed over (it died or hung
  // after the successor was ready): ends the predecessor's sessions, as a
  // plain start would, so their capabilities do not hold files.
  void EndPredecessorSessions() override;

  // NLM locks as CephFS locks (ceph_ll_setlk/getlk), so other CephFS
  // clients see them. owner tells NLM lock owners apart within this client;
  // [first, last] inclusive, last = UINT64_MAX meaning to the end.
  // SetLock: type F_RDLCK, F_WRLCK or F_UNLCK; false when a lock held by
  // someone else conflicts (nothing changed).
  absl::StatusOr<bool> SetLock(const FileHandle& fh, uint64_t owner, uint64_t first, uint64_t last,
                               short type) override;
  // A lock held by someone else that conflicts with owner taking the range.
  absl::StatusOr<std::optional<HeldLock>> TestLock(const FileHandle& fh, uint64_t owner,
                                                   uint64_t first, uint64_t last,
                                                   bool exclusive) override;

  class Impl;

 private:
  CephfsBackend() = default;
  // The backend's own mount (the file system root as the [ceph] user);
  // calls hold a mount for their duration.
  std::shared_ptr<Impl> CurrentImpl() const;
  // The mount serving an export, or a handle's export (the backend's own
  // when it is none of a mount of its own: Resolve then refuses it).
  std::shared_ptr<Impl> ImplForExport(uint32_t export_id) const;
  std::shared_ptr<Impl> ImplFor(const FileHandle& fh) const;
  // Every mount in use: the backend's own first.
  std::vector<std::shared_ptr<Impl>> AllMounts() const;
  // The first session the cluster ended among the mounts (a negative errno),
  // else 0.
  int ProbeSessions();

  // Replaces the sessions the cluster ended with new mounts; the exports
  // and handles stay the same.
  absl::Status ReplaceSession();
  absl::StatusOr<std::shared_ptr<Impl>> Reopen(Impl& old);
  // The session id of a mount: `mount` is "" for the backend's own, else
  // "-export-<id>"; `other`: the set the running instance does not use.
  std::string SessionId(const std::string& mount, bool other = false) const;
  // The session ids to end before mounting `mount` with SessionId(mount).
  std::vector<std::string> SessionIdsToEnd(const std::string& mount) const;

  mutable absl::Mutex impl_mu_;
  std::shared_ptr<Impl> impl_ ABSL_GUARDED_BY(impl_mu_);
  std::map<uint32_t, std::shared_ptr<Impl>> export_mounts_ ABSL_GUARDED_BY(impl_mu_);
  std::vector<std::shared_ptr<Impl>> retired_ ABSL_GUARDED_BY(impl_mu_);
  std::unique_ptr<HandleCodec> codec_;  // which export a handle names
  // One write verifier for every mount: a sync failing on any changes it.
  std::atomic<uint64_t> verifier_{0};
  std::string cluster_;
  CephfsOptions options_;
  std::string uuid_;             // the head's session id, the base of the others
  bool second_set_ = false;      // SessionId: the second set of ids ("-b")
  bool beside_running_ = false;  // CephfsOptions::beside_running_instance
  HandleSecret secret_{};
  std::string node_id_;                  // [cluster]; "" = a head of its own
  std::string shared_dir_;               // [cluster] state in the file system
  std::unique_ptr<SessionWatch> watch_;  // last: stopped before the rest goes
};

}  // namespace nfs3d::vfs

#endif  // NFS3D_VFS_CEPHFS_CEPHFS_BACKEND_H_
