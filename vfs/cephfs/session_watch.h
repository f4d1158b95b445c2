// Watches a CephFS client session and replaces it when the cluster has
// ended it. An MDS evicts a client that stopped answering (a head paused or
// cut off past the session timeout, or an administrator's `session evict`)
// and blocklists it: from then on every call of that libcephfs mount fails
// for good, and only a new mount (a new session) serves again. A thread
// probes the session every period with a call the MDS must answer; when the
// probe reports the session gone, `replace` makes a new one, and is tried
// again at the next probe until it succeeds.
#ifndef NFS3D_VFS_CEPHFS_SESSION_WATCH_H_
#define NFS3D_VFS_CEPHFS_SESSION_WATCH_H_

#include <functional>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace nfs3d::vfs {

// Whether a libcephfs result (negative errno) means the session is gone:
// blocklisted (EBLOCKLISTED is ESHUTDOWN) or no longer connected.
bool CephSessionLost(int rc);

class SessionWatch {
 public:
  // probe: a libcephfs call's result (negative errno); it may block while
  // the cluster does not answer. replace: makes a new session.
  SessionWatch(absl::Duration period, std::function<int()> probe,
               std::function<absl::Status()> replace);
  // Waits for a probe in progress.
  ~SessionWatch();
  SessionWatch(const SessionWatch&) = delete;
  SessionWatch& operator=(const SessionWatch&) = delete;

 private:
  void Loop();

  const absl::Duration period_;
  const std::function<int()> probe_;
  const std::function<absl::Status()> replace_;
  absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace nfs3d::vfs

#endif  // NFS3D_VFS_CEPHFS_SESSION_WATCH_H_
