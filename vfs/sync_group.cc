#include "vfs/sync_group.h"

#include "vfs/vfs_error.h"

namespace nfs3d::vfs {

// What a waiting caller waits for: its sync to have ended, or -- for the
// caller that starts the next sync -- no sync running.
struct SyncGroup::Waiter {
  const SyncGroup* group;
  uint64_t needed;
  bool leads;
  bool Ready() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(group->mu_) {
    return group->finished_ >= needed || (leads && !group->running_);
  }
};

absl::Status SyncGroup::Sync(absl::FunctionRef<int()> sync_once,
                             absl::FunctionRef<void()> on_failure) {
  absl::MutexLock lock(&mu_);
  const uint64_t needed = started_ + 1;  // the first sync to start from now on
  // A sync running now may already have written back (and failed on) our
  // data, consuming the error the one that answers us would have seen.
  const uint64_t fails_us_from = running_ ? started_ : needed;
  while (finished_ < needed) {
    if (!running_) {
      // Start the sync ourselves: it began after we arrived, so it covers us
      // and everybody waiting for it.
      running_ = true;
      const uint64_t seq = ++started_;
      mu_.Unlock();
      const int err = sync_once();
      if (err != 0) on_failure();
      mu_.Lock();
      running_ = false;
      finished_ = seq;
      if (err != 0) {
        last_failed_ = seq;
        last_errno_ = err;
      }
      continue;
    }
    // One waiter per sync-to-be wakes when the running one ends, to start it.
    Waiter w{this, needed, /*leads=*/leader_of_ < needed};
    if (w.leads) leader_of_ = needed;
    mu_.Await(absl::Condition(&w, &Waiter::Ready));
  }
  if (last_failed_ >= fails_us_from) return ErrnoError(last_errno_, "fsync");
  return absl::OkStatus();
}

}  // namespace nfs3d::vfs
