#include "nfsd/managed_gids.h"

#include <utility>

#include "common/unix_accounts.h"

namespace nfs3d::nfsd {
namespace {

std::optional<std::vector<uint32_t>> SystemGroupsOf(uint32_t uid) {
  std::optional<UnixAccount> account = AccountByUid(uid);
  if (!account) return std::nullopt;
  return std::move(account->groups);
}

}  // namespace

ManagedGids::ManagedGids(Lookup lookup, Clock clock)
    : lookup_(lookup ? std::move(lookup) : Lookup(SystemGroupsOf)),
      clock_(clock ? std::move(clock) : Clock(absl::Now)) {}

void ManagedGids::Configure(const Settings& settings) {
  absl::MutexLock lock(&mu_);
  settings_ = settings;
  cache_.clear();
  enabled_.store(settings.enabled, std::memory_order_relaxed);
}

ManagedGids::Groups ManagedGids::GroupsOf(uint32_t uid) {
  const absl::Time now = clock_();
  {
    absl::MutexLock lock(&mu_);
    auto it = cache_.find(uid);
    if (it != cache_.end() && it->second.expires > now) return it->second.groups;
  }
  // An unknown uid runs with no supplementary groups, as with rpc.mountd.
  Groups groups =
      std::make_shared<const std::vector<uint32_t>>(lookup_(uid).value_or(std::vector<uint32_t>{}));
  absl::MutexLock lock(&mu_);
  if (cache_.size() >= settings_.max_entries && !cache_.contains(uid)) {
    // Full: drop what has expired; if that frees nothing, start over (a
    // bound on memory matters more than the lookups a refill costs).
    absl::erase_if(cache_, [now](const auto& kv) { return kv.second.expires <= now; });
    if (cache_.size() >= settings_.max_entries) cache_.clear();
  }
  if (settings_.max_entries > 0) cache_[uid] = Entry{groups, now + settings_.ttl};
  return groups;
}

size_t ManagedGids::cached() const {
  absl::MutexLock lock(&mu_);
  return cache_.size();
}

}  // namespace nfs3d::nfsd
