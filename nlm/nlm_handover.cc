// NlmService's state handed to a successor process and taken over there.
#include "absl/time/clock.h"

#include "common/log.h"
#include "nlm/nlm_service.h"

namespace nfs3d::nlm {

NlmSnapshot NlmService::Snapshot() {
  absl::MutexLock lock(&mu_);
  if (!grace_cleanup_done_ && absl::Now() >= grace_end_) ForgetUnreclaimedLocked();
  NlmSnapshot snapshot;
  snapshot.locks = table_.All();
  snapshot.shares = shares_.All();
  for (const auto& [name, host] : hosts_) {
    snapshot.hosts.push_back({name, host.address, host.local_address, host.recorded, false});
  }
  if (!grace_cleanup_done_) {
    for (NlmSnapshot::HostRecord& h : snapshot.hosts) {
      for (const std::string& name : previous_hosts_) h.previous |= name == h.name;
    }
    const absl::Duration left = grace_end_ - absl::Now();
    snapshot.grace_left_ms = std::max<int64_t>(1, absl::ToInt64Milliseconds(left));
  }
  return snapshot;
}

void NlmService::StartFrom(const NlmSnapshot& snapshot) {
  absl::MutexLock lock(&mu_);
  for (const auto& [file, l] : snapshot.locks) {
    // Into the table only: the adopted descriptors hold the file locks.
    if (table_.Lock(file, l.owner, l.first, l.last, l.exclusive) != LockResult::kGranted) {
      NFS3D_LOG_WARNING("lock manager: a lock of %s did not fit after the handover", l.owner.host);
    }
  }
  for (const auto& [file, share] : snapshot.shares) (void)shares_.Share(file, share);
  for (const NlmSnapshot::HostRecord& h : snapshot.hosts) {
    hosts_[h.name] = {h.address, h.local_address, h.recorded};
    if (h.previous) previous_hosts_.push_back(h.name);
  }
  if (snapshot.grace_left_ms > 0) {
    grace_end_ = absl::Now() + absl::Milliseconds(snapshot.grace_left_ms);
    grace_cleanup_done_ = false;
  } else {
    grace_end_ = absl::InfinitePast();
    grace_cleanup_done_ = true;
  }
  NFS3D_LOG_INFO("lock manager: took over %d locks, %d shares, %d clients (NSM state %d)%s",
                 snapshot.locks.size(), snapshot.shares.size(), snapshot.hosts.size(), nsm_state(),
                 snapshot.grace_left_ms > 0 ? ", in grace period" : "");
}

}  // namespace nfs3d::nlm
