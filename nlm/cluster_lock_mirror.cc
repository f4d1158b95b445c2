#include "nlm/cluster_lock_mirror.h"

#include <fcntl.h>

#include <vector>

#include "common/log.h"
#include "vfs/siphash.h"

namespace nfs3d::nlm {

uint64_t ClusterLockMirror::OwnerId(const LockOwner& owner) {
  // Distinct owners must get distinct ids; a fixed key is enough for that.
  std::string bytes = owner.host;
  bytes.push_back('\0');
  for (int i = 0; i < 4; ++i) bytes.push_back(static_cast<char>(owner.svid >> (8 * i)));
  bytes += owner.oh;
  constexpr vfs::SipKey kKey = {'n', 'l', 'm', '-', 'c', 'l', 'u', 's',
                                't', 'e', 'r', '-', 'o', 'w', 'n', 'r'};
  return vfs::SipHash24(kKey, {reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()});
}

bool ClusterLockMirror::Set(const std::string& file, const LockOwner& owner, uint64_t first,
                            uint64_t last, std::optional<bool> exclusive) {
  const short type = !exclusive ? F_UNLCK : *exclusive ? F_WRLCK : F_RDLCK;
  const Key key{owner.host, owner.svid, owner.oh, file};
  if (!exclusive && held_.count(key) == 0) return true;  // nothing held
  absl::StatusOr<bool> set = set_(file, OwnerId(owner), first, last, type);
  if (!set.ok()) {
    // Not mirrored (e.g. the cluster is unreachable): the lock table still
    // holds the lock between NLM clients.
    NFS3D_LOG_WARNING("lock manager: cluster lock not set: %s", set.status().ToString());
    return true;
  }
  if (*set && exclusive) held_.insert(key);
  return *set;
}

std::optional<Lock> ClusterLockMirror::Conflict(const std::string& file, const LockOwner& owner,
                                                uint64_t first, uint64_t last, bool exclusive) {
  absl::StatusOr<std::optional<Held>> held = test_(file, OwnerId(owner), first, last, exclusive);
  if (!held.ok() || !*held) return std::nullopt;
  Lock lock;
  lock.owner.host = "(cluster)";
  lock.owner.svid = static_cast<int32_t>((*held)->pid);
  lock.first = (*held)->first;
  lock.last = (*held)->last;
  lock.exclusive = (*held)->exclusive;
  return lock;
}

void ClusterLockMirror::Forget(const std::string& file, const LockOwner& owner) {
  const Key key{owner.host, owner.svid, owner.oh, file};
  if (held_.erase(key) == 0) return;
  (void)set_(file, OwnerId(owner), 0, UINT64_MAX, F_UNLCK);
}

void ClusterLockMirror::ForgetHost(const std::string& host) {
  std::vector<Key> gone;
  for (const Key& key : held_) {
    if (std::get<0>(key) == host) gone.push_back(key);
  }
  for (const Key& key : gone) {
    held_.erase(key);
    const LockOwner owner{std::get<0>(key), std::get<1>(key), std::get<2>(key)};
    (void)set_(std::get<3>(key), OwnerId(owner), 0, UINT64_MAX, F_UNLCK);
  }
}

}  // namespace nfs3d::nlm
