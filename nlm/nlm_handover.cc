// NlmService's state handed to a successor process and taken over there.
#include "absl/time/clock.h"

#include "common/log.h"
#include "nlm/nlm_service.h"
#include "nlm/peer_caller.h"

namespace nfs3d::nlm {

NlmSnapshot NlmService::Snapshot() {
  absl::MutexLock lock(&mu_);
  if (!grace_cleanup_done_ && absl::Now() >= grace_end_) ForgetUnreclaimedLocked();
  NlmSnapshot snapshot;
  snapshot.locks = table_.All();
  snapshot.shares = shares_.All();
  SnapshotWaitersLocked(&snapshot);
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
  // The NSM states the clients' LOCKs gave come from the store (the handover
  // format does not carry them): an old SM_NOTIFY stays refused here too.
  if (store_ != nullptr) {
    for (const MonitoredHost& m : store_->previous_hosts()) {
      auto it = hosts_.find(m.name);
      if (it != hosts_.end() && it->second.address == m.address) {
        it->second.nsm_state = m.nsm_state;
      }
    }
  }
  StartWaitersLocked(snapshot);
  if (snapshot.grace_left_ms > 0) {
    grace_end_ = absl::Now() + absl::Milliseconds(snapshot.grace_left_ms);
    grace_cleanup_done_ = false;
  } else {
    grace_end_ = absl::InfinitePast();
    grace_cleanup_done_ = true;
  }
  NFS3D_LOG_INFO(
      "lock manager: took over %d locks, %d shares, %d clients, %d waiters (NSM state %d)%s",
      snapshot.locks.size(), snapshot.shares.size(), snapshot.hosts.size(), snapshot.waiters.size(),
      nsm_state(), snapshot.grace_left_ms > 0 ? ", in grace period" : "");
}

void NlmService::SnapshotWaitersLocked(NlmSnapshot* snapshot) {
  auto add = [&](const Blocked& b, bool granted) {
    snapshot->waiters.push_back({b.file, b.alock, b.exclusive, b.cookie, AddressString(b.peer),
                                 b.transport, b.vers, granted});
  };
  // A confirmed grant owes no callback: its owner asked again and knows.
  for (const auto& [id, grant] : grants_) {
    if (!grant.confirmed) add(grant, true);
  }
  for (const Blocked& b : blocked_) add(b, false);
}

void NlmService::StartWaitersLocked(const NlmSnapshot& snapshot) {
  std::vector<std::string> files;
  for (const NlmSnapshot::Waiter& w : snapshot.waiters) {
    Blocked b;
    b.file = w.file;
    b.owner = LockOwner{w.alock.caller_name, w.alock.svid, w.alock.oh};
    NlmRange(w.alock.l_offset, w.alock.l_len, &b.first, &b.last);
    b.exclusive = w.exclusive;
    b.alock = w.alock;
    b.cookie = w.cookie;
    b.transport = w.transport;
    b.vers = w.vers;
    const bool known_vers = b.vers == kVersion1 || b.vers == kVersion3 || b.vers == kVersion4;
    if (!ParseAddress(w.address, &b.peer) || !known_vers) {
      // Nowhere to call back: the client's next poll (LOCK again) is answered.
      NFS3D_LOG_WARNING("lock manager: a waiter of %s (%s) cannot be called back; it will poll",
                        b.owner.host, w.address);
      continue;
    }
    if (w.granted) {
      // Only a lock that came over is announced as granted.
      bool held = false;
      for (const nlm::Lock& l : table_.LocksOf(b.file)) {
        held |= l.owner == b.owner && l.first <= b.first && b.last <= l.last;
      }
      if (!held) continue;
      const uint64_t id = next_grant_id_++;
      static_cast<Blocked&>(grants_[id]) = b;
      PostGranted(id, b);
    } else if (blocked_.size() < options_.max_blocked) {
      files.push_back(b.file);
      blocked_.push_back(std::move(b));
    }
  }
  // Normally none: each waiter still conflicts with a lock taken over.
  for (const std::string& file : files) GrantWaiters(file);
}

}  // namespace nfs3d::nlm
