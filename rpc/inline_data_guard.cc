#include "rpc/inline_data_guard.h"

#include "absl/time/clock.h"

#include "common/log.h"

namespace nfs3d::rpc {

bool InlineDataGuard::MayRun() {
  if (to_workers_until_ == absl::InfinitePast()) return true;
  if (absl::Now() < to_workers_until_) return false;
  to_workers_until_ = absl::InfinitePast();
  return true;
}

void InlineDataGuard::Note(absl::Duration took) {
  average_ += (took - average_) / kWeight;
  if (average_ <= kSlow) return;
  NFS3D_LOG_DEBUG("%s: READs and WRITEs took %s on average on the io thread; to the workers for %s",
                  transport_, absl::FormatDuration(average_), absl::FormatDuration(kToWorkersFor));
  to_workers_until_ = absl::Now() + kToWorkersFor;
  average_ = absl::ZeroDuration();
}

}  // namespace nfs3d::rpc
