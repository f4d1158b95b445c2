// Write gathering for one file: concurrent callers that each need their
// completed writes on stable storage share syncs. A caller is answered by a
// sync that started after it arrived; while one runs, everybody arriving
// meanwhile waits for the next, which one of them (the first) starts.
//
// Waiting uses absl::Mutex conditions, so a sync's end wakes only the
// callers it answers and the one that starts the next sync. With a plain
// condition variable every waiter woke at every sync's end, and those
// waiting for the next sync went back to sleep: perf of FILE_SYNC 64 KiB
// writes at 16 in flight spent 19% of all CPU in futex wakeups and context
// switches.
#ifndef NFS3D_VFS_SYNC_GROUP_H_
#define NFS3D_VFS_SYNC_GROUP_H_

#include <cstdint>

#include "absl/base/thread_annotations.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"

namespace nfs3d::vfs {

class SyncGroup {
 public:
  // Returns once a sync_once() that started after this call has finished.
  // sync_once returns 0 or an errno; on_failure runs once per failed sync,
  // before any caller it answers returns. A failed sync fails every caller
  // that was waiting while it ran: the kernel reports a writeback error to
  // one fsync only, so the sync that answers a caller may not see it.
  absl::Status Sync(absl::FunctionRef<int()> sync_once, absl::FunctionRef<void()> on_failure);

 private:
  struct Waiter;

  absl::Mutex mu_;
  bool running_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t started_ ABSL_GUARDED_BY(mu_) = 0;    // syncs begun
  uint64_t finished_ ABSL_GUARDED_BY(mu_) = 0;   // the last sync that ended
  uint64_t leader_of_ ABSL_GUARDED_BY(mu_) = 0;  // the sync a waiter will start
  uint64_t last_failed_ ABSL_GUARDED_BY(mu_) = 0;
  int last_errno_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace nfs3d::vfs

#endif  // NFS3D_VFS_SYNC_GROUP_H_
