// `[nfsd] manage_gids`: the server looks up the supplementary groups of an
// AUTH_SYS caller itself instead of trusting the list in the credential,
// which RFC 5531 caps at 16 groups (users in more groups lose access through
// the rest). knfsd sites get this from `rpc.mountd --manage-gids`; as there,
// the uid and primary gid of the credential stay, the list is replaced by
// the groups the server's name service gives the uid (none for a uid it does
// not know), and lookups are cached.
#ifndef NFS3D_NFSD_MANAGED_GIDS_H_
#define NFS3D_NFSD_MANAGED_GIDS_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace nfs3d::nfsd {

class ManagedGids {
 public:
  // The groups of a uid; nullopt for a uid the name service does not know.
  using Lookup = std::function<std::optional<std::vector<uint32_t>>(uint32_t uid)>;
  using Clock = std::function<absl::Time()>;

  struct Settings {
    bool enabled = false;
    absl::Duration ttl = absl::Minutes(30);  // rpc.mountd's cache lifetime
    size_t max_entries = 65536;
    bool operator==(const Settings&) const = default;
  };

  // Defaults: the server's name service (getpwuid_r + getgrouplist), the
  // real clock.
  explicit ManagedGids(Lookup lookup = nullptr, Clock clock = nullptr);

  // New settings forget every cached entry (SIGHUP: group changes take
  // effect at once).
  void Configure(const Settings& settings);
  bool enabled() const { return enabled_.load(std::memory_order_relaxed); }

  // The groups `uid` runs with: cached for the TTL, looked up (outside the
  // lock: a directory service may be slow) when absent or expired. Shared
  // with the cache, so a call does not copy a long list.
  using Groups = std::shared_ptr<const std::vector<uint32_t>>;
  Groups GroupsOf(uint32_t uid);

  size_t cached() const;

 private:
  struct Entry {
    Groups groups;
    absl::Time expires;
  };

  const Lookup lookup_;
  const Clock clock_;
  std::atomic<bool> enabled_{false};
  mutable absl::Mutex mu_;
  Settings settings_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<uint32_t, Entry> cache_ ABSL_GUARDED_BY(mu_);
};

}  // namespace nfs3d::nfsd

#endif  // NFS3D_NFSD_MANAGED_GIDS_H_
