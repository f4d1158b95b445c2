// What the daemon asks of a backend that is a cluster's file system (CephFS
// today) beyond vfs::Backend: its exports, the state the heads of a cluster
// share, its sessions across a handover, and NLM locks held as the cluster's
// own locks. Such a backend lives in a plugin (vfs/backend_plugin.h), so the
// core is compiled and linked the same way whether the plugin is installed
// or not; the daemon only ever sees this interface.
#ifndef NFS3D_VFS_CLUSTER_BACKEND_H_
#define NFS3D_VFS_CLUSTER_BACKEND_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include "common/durable_files.h"
#include "vfs/backend.h"

namespace nfs3d::vfs {

// handle_type of CephFS handles in the codec (ASCII "CEPH"): the router sends
// handles of this type to the cluster backend.
inline constexpr int32_t kCephHandleType = 0x43455048;

// Runs a call (which owns what it uses) and returns its status.
using ClusterCallRunner = std::function<absl::Status(std::function<absl::Status()>)>;

struct ClusterBackendOptions {
  std::string state_dir;     // holds handle.key (shared with the POSIX backend)
  std::string conf_path;     // ceph.conf ("" = libcephfs's default search)
  std::string client_id;     // cephx name without "client.", e.g. "admin"
  std::string keyring;       // "" = as ceph.conf says
  std::string fs_name;       // "" = the cluster's default file system
  int timeout_seconds = 30;  // bound on a call the cluster does not answer
  // libcephfs's object cache of each mount (object_cache_settings.h); 0:
  // as ceph.conf says.
  uint64_t cache_bytes = 96 << 20;
  // [cluster]: heads serving this file system together. With a node id the
  // handle key is the file system's shared_dir/handle.key (shared_handle_key.h),
  // not the state directory's, and the CephFS session id is cluster_name and
  // node_id: the same for this node on any host. Empty: a head of its own.
  std::string node_id;
  std::string cluster_name = "nfs3d";
  std::string shared_dir = "/.nfs3d";
  // How often the session is checked; one the cluster ended (evicted) is
  // replaced by a new one. 0: never.
  int session_check_seconds = 5;
  // A [cluster] head: called with shared_dir's files as soon as the session
  // of this node's previous instance is ended (which releases its locks;
  // before that, its capabilities would make any access wait for the
  // session to time out). The lock manager records its grace period there
  // at once, so other heads stop granting locks that the previous
  // instance's clients have yet to reclaim within milliseconds, not after
  // the rest of the start.
  std::function<void(DurableFiles& shared)> after_ending_previous_session;
  // A successor beside a running instance of this head (nfs3d --takeover):
  // its sessions must not end the running one's, which still serves until
  // it hands over. A head has two sets of session ids and uses the one the
  // running instance does not (state_dir/cephfs-session says which is in
  // use; RecordSessionInUse once the successor serves). A plain start ends
  // the sessions of both.
  bool beside_running_instance = false;
};

// The cephx identity an export mounts as; empty fields: the [ceph] section's.
struct ClusterUser {
  std::string client_id;  // without "client."
  std::string keyring;    // "" = as ceph.conf says
};

class ClusterBackend : public Backend {
 public:
  // Exports the directory at path ("/" = the file system root). fsid: the
  // file system id reported to clients (0 = derived from the id). A
  // sub-directory, or a user of its own, makes a mount of its own: errors
  // name the user and the path.
  virtual absl::Status AddExport(uint32_t export_id, const std::string& path, uint64_t fsid,
                                 const ClusterUser& user) = 0;
  // A new write verifier: for a sync whose outcome is unknown (it did not
  // answer in time), so clients resend what they wrote UNSTABLE.
  virtual void ChangeWriteVerifier() = 0;
  // Names the cluster (conf, client, file system), for messages.
  virtual const std::string& cluster() const = 0;

  // The [cluster] state the heads share, in shared_dir of the file system
  // (every call through `run`). FailedPrecondition on a head without a
  // node id.
  virtual absl::StatusOr<std::unique_ptr<DurableFiles>> SharedFiles(ClusterCallRunner run) = 0;

  // Handover. In the running instance, once no call runs: flushes what
  // every session wrote and ends the sessions cleanly (their capabilities
  // and locks go); an error means something may not have been flushed, so
  // the successor must not keep the write verifier.
  virtual absl::Status HandOverSessions() = 0;
  virtual uint64_t WriteVerifierValue() const = 0;
  virtual void AdoptWriteVerifier(uint64_t verifier) = 0;
  // Notes in the state directory which session ids this instance uses, so
  // the next successor takes the others.
  virtual absl::Status RecordSessionInUse() = 0;
  // In a successor whose predecessor never handed over (it died or hung
  // after the successor was ready): ends the predecessor's sessions, as a
  // plain start would, so their capabilities do not hold files.
  virtual void EndPredecessorSessions() = 0;

  // NLM locks as the cluster's locks, so its other clients see them. owner
  // tells NLM lock owners apart within this client; [first, last]
  // inclusive, last = UINT64_MAX meaning to the end. SetLock: type F_RDLCK,
  // F_WRLCK or F_UNLCK; false when a lock held by someone else conflicts
  // (nothing changed).
  virtual absl::StatusOr<bool> SetLock(const FileHandle& fh, uint64_t owner, uint64_t first,
                                       uint64_t last, short type) = 0;
  struct HeldLock {
    uint64_t first = 0;
    uint64_t last = 0;
    bool exclusive = false;
    int64_t pid = 0;
  };
  // A lock held by someone else that conflicts with owner taking the range.
  virtual absl::StatusOr<std::optional<HeldLock>> TestLock(const FileHandle& fh, uint64_t owner,
                                                           uint64_t first, uint64_t last,
                                                           bool exclusive) = 0;
};

}  // namespace nfs3d::vfs

#endif  // NFS3D_VFS_CLUSTER_BACKEND_H_
