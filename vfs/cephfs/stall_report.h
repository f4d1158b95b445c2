// Says in the log, while a libcephfs call that waits for the MDS has not
// returned, what it waits for. Opening a session (ceph_mount) and ending a
// previous instance's one (ceph_start_reclaim) have no timeout: they wait
// for as long as the MDS cannot answer, e.g. while it is stopped or cannot
// write its journal to the metadata pool. They finish by themselves once
// it can (a new attempt would wait on the same MDS, and the reclaim must
// not be skipped), so the call is left running and the log says why
// nothing is served meanwhile.
#ifndef NFS3D_VFS_CEPHFS_STALL_REPORT_H_
#define NFS3D_VFS_CEPHFS_STALL_REPORT_H_

#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace nfs3d::vfs {

class StallReport {
 public:
  // Until destroyed: a warning "<cluster>: still waiting after N s for
  // <what>" after `first`, then every `every`. If it warned, its
  // destruction logs how long the wait took.
  StallReport(std::string cluster, std::string what, absl::Duration first, absl::Duration every);
  ~StallReport();
  StallReport(const StallReport&) = delete;
  StallReport& operator=(const StallReport&) = delete;

 private:
  void Loop();

  const std::string cluster_;
  const std::string what_;
  const absl::Duration first_;
  const absl::Duration every_;
  const absl::Time start_;
  absl::Mutex mu_;
  bool done_ ABSL_GUARDED_BY(mu_) = false;
  bool warned_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace nfs3d::vfs

#endif  // NFS3D_VFS_CEPHFS_STALL_REPORT_H_
